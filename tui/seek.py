"""Fast seeking in a recorded run: keyframes of the view model over its events.

:class:`ReplayIndex` walks a bundle's events once, keeping a snapshot of the
:class:`~tui.model.RunModel` every :data:`KEYFRAME_EVERY` events. Seeking to any run
time restores the nearest earlier keyframe and applies at most that many events, so a
seek costs the same anywhere in a 90-minute marathon (``benchmarks/bench_tui.py``
measures it; the target is under 100 ms). It also indexes the times of faults, firing
alerts and operator actions for the replay's jump keys.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from engine.bundle.events import Event
from tui.model import RunModel

KEYFRAME_EVERY = 200
"""Events between keyframes: a seek applies at most this many (about 5 ms of reducing)."""

JUMP_KINDS: dict[str, tuple[str, ...]] = {
    "fault": ("fault.inject",),
    "alert": ("alert.firing",),
    "action": ("tool.call",),
}
"""What the replay's "next fault / alert / action" keys jump between. Actions are the
operator's report and act calls (``tool.call`` of tier ``report`` or ``act``), allowed
or denied."""


def _is_mark(kind: str, ev: Event) -> bool:
    if ev.kind not in JUMP_KINDS[kind]:
        return False
    return kind != "action" or ev.payload.get("tier") in ("act", "report")


class ReplayIndex:
    """Keyframes and jump marks over one run's events (module docstring).

    Args:
        events: the run's events in order (``run.start`` first); a trailing ``seal`` is fine.
        every: events between keyframes.
    """

    def __init__(self, events: Sequence[Event], every: int = KEYFRAME_EVERY) -> None:
        if every < 1:
            raise ValueError("every must be >= 1")
        self.events = list(events)
        self.every = every
        self.times = [e.t for e in self.events]
        self.marks: dict[str, list[float]] = {k: [] for k in JUMP_KINDS}
        self._key_at: list[int] = []
        self._keys: list[RunModel] = []
        model = RunModel()
        for i, ev in enumerate(self.events):
            if i % every == 0:
                self._key_at.append(i)
                self._keys.append(model.snapshot())
            model.apply(ev)
            for kind in JUMP_KINDS:
                if _is_mark(kind, ev):
                    self.marks[kind].append(ev.t)
        self.final = model
        last = self.times[-1] if self.times else 0.0
        self.complete = any(e.kind == "run.end" for e in self.events)
        # A run that stopped early (quit, killed) ends at its last recorded event: nothing
        # after it is known, so the playhead does not run on to the schedule's end.
        self.end_t = max(model.duration_s, last) if self.complete else last

    def count_at(self, t: float) -> int:
        """How many events happened at or before run time ``t``."""
        return bisect.bisect_right(self.times, t + 1e-9)

    def model_after(self, n: int) -> RunModel:
        """A fresh model with the first ``n`` events applied."""
        n = max(0, min(n, len(self.events)))
        k = bisect.bisect_right(self._key_at, n) - 1
        model = self._keys[k].snapshot()
        model.apply_many(self.events[self._key_at[k]:n])
        return model

    def model_at(self, t: float) -> RunModel:
        """A fresh model of the run as it stood at run time ``t`` (its clock set to ``t``)."""
        model = self.model_after(self.count_at(t))
        model.advance_clock(t)
        return model

    def next_mark(self, kind: str, t: float) -> float | None:
        """Run time of the first ``kind`` mark (fault, alert, action) strictly after ``t``, or None."""
        marks = self.marks[kind]
        i = bisect.bisect_right(marks, t + 1e-6)
        return marks[i] if i < len(marks) else None

    def prev_mark(self, kind: str, t: float) -> float | None:
        """Run time of the last ``kind`` mark strictly before ``t``, or None."""
        marks = self.marks[kind]
        i = bisect.bisect_left(marks, t - 1e-6)
        return marks[i - 1] if i > 0 else None
