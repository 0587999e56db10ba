"""Event sources for the terminal app: an in-process run, a tailed run directory, a bundle.

Nothing here imports ``textual``: the screens drive these from workers (threads) and
drain their :class:`EventFeed` on the UI's refresh cycle.

* :class:`LiveSession` hosts an :class:`~engine.run.orchestrator.Orchestrator` in-process:
  paced on the virtual clock (as fast as possible) or a wall clock at a speed, pausable,
  with tool calls from another thread serialised with the run loop by ``run.lock``. It
  records into a run directory and seals it into a bundle at the end (or, when stopped
  early, seals what was recorded with ``recover``, as ``marathon run`` does on Ctrl-C).
* :class:`FollowTail` tails another process's ``events.jsonl`` (``marathon watch --follow``).
* :func:`load_bundle` reads and verifies a sealed bundle for replay.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.bundle.events import Event
from engine.bundle.layout import EVENTS_FILE
from engine.operate.tools import ToolResult
from engine.run.orchestrator import Operator, Orchestrator
from faults.schedule import Schedule

MAX_SLICE_S = 15.0
"""Run time advanced per slice on the virtual clock: one evaluation interval, so the stop
and pause flags are checked often even in a Train Ticket marathon (~70 ms per slice)."""
MAX_CATCH_UP_S = 60.0
"""On a wall clock, the run never jumps more than this far in one slice after a stall."""


class EventFeed:
    """A thread-safe queue of events from a source to the UI (drained whole, in order)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[Event] = []
        self.total = 0

    def push(self, ev: Event) -> None:
        """Append one event (called from the engine's thread or a tool call's)."""
        with self._lock:
            self._items.append(ev)
            self.total += 1

    def extend(self, events: list[Event]) -> None:
        with self._lock:
            self._items.extend(events)
            self.total += len(events)

    def drain(self) -> list[Event]:
        """Every event pushed since the last drain, in order."""
        with self._lock:
            items, self._items = self._items, []
        return items

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)


def fresh_run_dir(name: str, root: str | Path = "runs") -> Path:
    """``runs/<name>``, or ``runs/<name>-2``, ... when taken (a directory or its bundle)."""
    base = Path(root) / name
    candidate, n = base, 1
    while candidate.exists() or candidate.with_name(candidate.name + ".marathon").exists():
        n += 1
        candidate = base.with_name(f"{name}-{n}")
    return candidate


@dataclass
class SealOutcome:
    """What closing a session produced: the bundle, or why there is none."""

    bundle: Path | None
    complete: bool
    error: str | None = None


class LiveSession:
    """One in-process run and its pacing (module docstring).

    Args:
        schedule: the schedule to run.
        operator: the operator (an agent, or :class:`tui.human.HumanOperator`).
        run_dir: record here and seal at the end (None: in memory only).
        speed: run-time seconds per wall second; None runs as fast as possible.
        seed: the simulation seed (default: the schedule's).
        spend_time: whether tool calls cost modeled run time (False for a human on a wall
            clock, whose real time is the cost).
        rules: the alert rule pack (``paper``, ``extended`` or a rule file).
    """

    def __init__(self, schedule: Schedule, *, operator: Operator, run_dir: str | Path | None = None,
                 speed: float | None = None, seed: int | None = None, spend_time: bool = True,
                 rules: str = "paper") -> None:
        if speed is not None and speed <= 0:
            raise ValueError("speed must be > 0 (or None: as fast as possible)")
        self.feed = EventFeed()
        self.run_dir = Path(run_dir) if run_dir is not None else None
        self.run = Orchestrator(schedule, seed=seed, operator=operator, run_dir=self.run_dir,
                                clock="virtual" if speed is None else "wall", speed=speed or 1.0,
                                subscribers=(self.feed.push,), rules=rules)
        self.run.tools.spend_time = spend_time
        self._speed = speed
        self._pace_lock = threading.Lock()
        self._anchor = (time.monotonic(), 0.0)
        self._paused = False
        self._stop = threading.Event()
        self._closed: SealOutcome | None = None
        self._close_lock = threading.Lock()
        self._last_flush = 0.0

    # ------------------------------------------------------------------ pacing

    @property
    def speed(self) -> float | None:
        """Run-time seconds per wall second (None: as fast as possible)."""
        return self._speed

    def set_speed(self, speed: float | None) -> None:
        """Change the pace from now on (the clock does not jump)."""
        if speed is not None and speed <= 0:
            raise ValueError("speed must be > 0")
        with self._pace_lock:
            self._speed = speed
            self._anchor = (time.monotonic(), self.run.now)

    @property
    def paused(self) -> bool:
        return self._paused

    def set_paused(self, paused: bool) -> None:
        """Pause or resume the run clock (resuming does not make up the paused time)."""
        with self._pace_lock:
            self._paused = paused
            self._anchor = (time.monotonic(), self.run.now)

    @property
    def now(self) -> float:
        """The run clock, seconds."""
        return self.run.now

    @property
    def finished(self) -> bool:
        return self.run.finished

    def stop(self) -> None:
        """Ask :meth:`drive` to return after its current slice."""
        self._stop.set()

    # ------------------------------------------------------------------ running

    def start(self) -> None:
        """Emit ``run.start`` (idempotent)."""
        with self.run.lock:
            self.run.start()

    def advance_to(self, t: float) -> None:
        """Run the loop to run time ``t`` (whole ticks), holding the run lock for the slice."""
        with self.run.lock:
            self.run.advance_to(t)

    def drive(self, cancelled: Callable[[], bool] = lambda: False,
              before_end: Callable[[], None] | None = None) -> bool:
        """Run until the end of the schedule, paced; returns True when the run finished.

        Returns early (False) when ``cancelled()`` turns true or :meth:`stop` was called.
        ``before_end`` is called (in this thread) one tick before the run ends, when a last
        tool call can still be recorded before ``run.end`` (the player's unsaved notes).
        Call from a worker thread.
        """
        self.start()
        with self._pace_lock:
            self._anchor = (time.monotonic(), self.run.now)
        dt = self.run.sim.dt
        last_tick = self.run.end_t - dt
        while not self.run.finished:
            if before_end is not None and self.run.now >= last_tick - 1e-9:
                hook, before_end = before_end, None
                hook()
            if cancelled() or self._stop.is_set():
                return False
            with self._pace_lock:
                paused, speed, (wall0, t0) = self._paused, self._speed, self._anchor
            if paused:
                self._flush()
                time.sleep(0.05)
                continue
            if speed is None:
                target = self.run.now + MAX_SLICE_S
                self.advance_to(min(target, last_tick) if before_end else target)
                time.sleep(0.002)  # let the UI thread take the GIL between slices
                continue
            due = t0 + (time.monotonic() - wall0) * speed
            if due < self.run.now + dt - 1e-9:
                self._flush()
                time.sleep(min(0.05, max(0.001, (self.run.now + dt - due) / speed)))
                continue
            target = min(due, self.run.now + MAX_CATCH_UP_S)
            self.advance_to(min(target, last_tick) if before_end else target)
        return True

    def _flush(self) -> None:
        """Flush the recorder while waiting (at most once a second), so a follower sees events promptly."""
        rec = self.run.recorder
        now = time.monotonic()
        if rec is not None and now - self._last_flush >= 1.0:
            self._last_flush = now
            with self.run.lock:
                rec.flush()

    def call_tool(self, name: str, args: dict[str, Any]) -> ToolResult:
        """Call an operator tool through the policy layer, serialised with the run loop.

        After the run has ended no call is made (it would land after ``run.end``).
        """
        with self.run.lock:
            if self.run.finished:
                return ToolResult(False, error="the run has ended: no more tool calls")
            return self.run.tools.call(name, args)

    def close(self) -> SealOutcome:
        """Close the recorder and seal the run directory (idempotent).

        A finished run is sealed as is; a run stopped early is sealed with ``recover`` and
        marked incomplete. Sealing problems are returned, not raised.
        """
        with self._close_lock:
            return self._close()

    def _close(self) -> SealOutcome:
        if self._closed is not None:
            return self._closed
        with self.run.lock:
            self.run.close()
        if self.run_dir is None:
            self._closed = SealOutcome(None, self.run.finished)
            return self._closed
        from engine.bundle.format import BundleError, NotARunError
        from engine.run.sealinputs import seal_run

        try:
            bundle = seal_run(self.run_dir, recover=not self.run.finished)
            self._closed = SealOutcome(bundle, self.run.finished)
        except (BundleError, NotARunError, OSError) as exc:
            self._closed = SealOutcome(None, self.run.finished, str(exc))
        return self._closed


class FollowTail:
    """Reads the events another process records in ``<run_dir>`` (its journal, then ``events.jsonl``).

    Only complete lines are parsed; a torn last line waits for its newline.

    Args:
        run_dir: the run directory being recorded.

    Raises:
        FileNotFoundError: ``run_dir`` is not a directory.
    """

    def __init__(self, run_dir: str | Path) -> None:
        self.dir = Path(run_dir)
        if not self.dir.is_dir():
            raise FileNotFoundError(f"{run_dir}: no such run directory (start the run with --run-dir first)")
        self.path = self.dir / EVENTS_FILE
        self._offset = 0
        self._partial = b""
        self._seen = 0
        from engine.bundle.journal import JournalTail

        self._journal = JournalTail(self.dir)
        self.sealed = False
        self.ended = False

    def poll(self) -> list[Event]:
        """The events appended since the last poll: from the encrypted journal while the run
        records into one (:mod:`engine.bundle.journal`), then from ``events.jsonl`` once it is sealed
        (skipping the events already read).

        Raises:
            ValueError: a line that is not an event, or a journal that cannot be read.
        """
        from engine.bundle.journal import has_journal

        if has_journal(self.dir) and not self.path.is_file():
            data = self._journal.poll()
        elif self.path.is_file():
            with self.path.open("rb") as fh:
                fh.seek(self._offset)
                data = fh.read()
            self._offset += len(data)
        else:
            return []
        if not data:
            return []
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        out = []
        for line in lines:
            if line.strip():
                ev = Event.from_dict(json.loads(line))
                if ev.seq < self._seen:
                    continue  # read from the journal already
                self._seen = ev.seq + 1
                out.append(ev)
                self.ended = self.ended or ev.kind == "run.end"
                self.sealed = self.sealed or ev.kind == "seal"
        return out

    def follow(self, feed: EventFeed, cancelled: Callable[[], bool], interval_s: float = 0.25,
               linger_s: float = 10.0) -> None:
        """Poll into ``feed`` until the run is sealed, or has ended and stayed quiet for ``linger_s``."""
        quiet_since = time.monotonic()
        while not cancelled():
            events = self.poll()
            if events:
                feed.extend(events)
                quiet_since = time.monotonic()
            if self.sealed or (self.ended and time.monotonic() - quiet_since > linger_s):
                return
            time.sleep(interval_s)


@dataclass
class LoadedBundle:
    """A bundle read for replay: its events, what was run, and whether it verified."""

    path: Path
    events: list[Event]
    meta: dict[str, Any]
    integrity: str
    schedule_text: str = ""
    """The schedule the run replayed (for its no-op counterfactual); empty if the bundle lacks it."""
    counterfactual: Any = None
    """The no-op counterfactual the bundle carries (:class:`scoring.counterfactual.Counterfactual`), or None."""
    app_model: Any = None
    """The app model the bundle carries (``app.yaml``), or None (the installed one of the same name)."""


def load_bundle(path: str | Path) -> LoadedBundle:
    """Open and verify a bundle (or run directory) for replay.

    A bundle that does not verify is still replayed, with its first problem as the
    integrity note shown in the header.

    Raises:
        engine.bundle.format.NotARunError, engine.bundle.format.BundleError: not a readable run.
    """
    from engine.bundle.format import BundleError, open_bundle, verify

    report = verify(path)
    bundle = open_bundle(path)
    events = bundle.events
    meta = bundle.meta
    if report.ok and report.sealed:
        integrity = "sealed"
    elif report.ok:
        integrity = "unsealed"
    else:
        integrity = f"DOES NOT VERIFY: {report.problems[0]}"
    try:
        schedule_text = bundle.schedule_text
    except (BundleError, KeyError, OSError, UnicodeDecodeError):
        schedule_text = ""
    from scoring.cli import ScoreError, bundle_app_model, bundle_counterfactual

    try:
        counterfactual = bundle_counterfactual(bundle, path)
        app_model = bundle_app_model(bundle, path)
    except ScoreError:  # a damaged input: replayed with the installed model, scores provisional
        counterfactual = app_model = None
    return LoadedBundle(Path(path), events, meta, integrity, schedule_text, counterfactual, app_model)
