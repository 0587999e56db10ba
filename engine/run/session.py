"""One run from start to bundle: :class:`RunSession`, and the one place run directories are named.

A session builds the run (:class:`~engine.run.orchestrator.Orchestrator` on a substrate from
:func:`engine.run.substrates.open_substrate`), drives it with the one pacing loop
(:func:`engine.run.clock.drive`: virtual, or paced against the wall clock; pausable,
re-speedable), serialises tool calls from other threads with the loop (``run.lock``), and
at the end seals the run directory into a bundle -- as is when the run finished, with
``recover`` (marked incomplete) when it was stopped early. ``marathon run``, ``watch``,
``play`` and ``serve`` all run through it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.bundle.events import Event
from engine.operate.invocation import Operator
from engine.operate.tools import ToolResult
from engine.run.clock import MAX_SLICE_S, Pace, drive
from engine.run.orchestrator import AlertSource, Orchestrator, run_name
from engine.substrate import Substrate
from faults.schedule import Schedule

RUNS_DIR = "runs"
"""Where runs are recorded by default (relative to the working directory)."""


def fresh_run_dir(name: str, root: str | Path = RUNS_DIR) -> Path:
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


class RunSession:
    """One run and its pacing (module docstring).

    Args:
        schedule: the schedule to run.
        operator: the operator (an agent, or the human at the terminal).
        run_dir: record here and seal at the end; ``"auto"`` for :func:`fresh_run_dir` of the
            run's name; None keeps the event stream in memory only.
        speed: run-time seconds per wall second; None runs as fast as possible.
        seed: the simulation seed (default: the schedule's).
        spend_time: whether tool calls cost modeled run time (False for a human on a wall
            clock, whose real time is the cost).
        rules: the alert rule pack (``paper``, ``extended`` or a rule file).
        alert_source: ``embedded`` (default), ``prometheus=URL``, an alert source, or None.
        subscribers: called with every event, in emission order.
        substrate: the cluster to run on (default: the schedule's app on the embedded
            simulator; :func:`engine.run.substrates.open_substrate` opens the others).

    Raises:
        ValueError: ``speed`` not > 0; an unknown alert source; Prometheus without a wall clock.
    """

    def __init__(self, schedule: Schedule, *, operator: Operator, run_dir: str | Path | None = None,
                 speed: float | None = None, seed: int | None = None, spend_time: bool = True,
                 rules: str = "paper", alert_source: AlertSource | str | None = "embedded",
                 subscribers: tuple[Callable[[Event], None], ...] = (),
                 substrate: Substrate | None = None) -> None:
        self.pace = Pace(speed)
        seed = schedule.seed if seed is None else seed
        if run_dir == "auto":
            run_dir = fresh_run_dir(run_name(schedule, seed, operator.name))
        self.run_dir = Path(run_dir) if run_dir is not None else None
        self.run = Orchestrator(schedule, seed=seed, operator=operator, run_dir=self.run_dir,
                                clock="virtual" if speed is None else "wall", speed=speed or 1.0,
                                alert_source=alert_source, subscribers=subscribers, rules=rules,
                                substrate=substrate)
        self.run.tools.spend_time = spend_time
        self.counterfactual: dict[str, Any] | None = None
        """The no-op counterfactual computed before the run (:func:`engine.run.sealinputs.counterfactual_first`),
        written into the run directory only as it is sealed: while the run goes it would be an
        answer key on disk (its no-op probe and alert history follows the faults)."""
        self._stop = threading.Event()
        self._closed: SealOutcome | None = None
        self._close_lock = threading.Lock()

    def subscribe(self, fn: Callable[[Event], None], *, past: bool = False) -> None:
        """Call ``fn`` with every event from now on (a UI's feed), in emission order; with
        ``past``, first with every event emitted so far (none is missed or repeated)."""
        with self.run.lock:
            if past:
                for ev in list(self.run.stream.events):
                    fn(ev)
            self.run.stream.subscribe(fn)

    # ------------------------------------------------------------------ pacing

    @property
    def speed(self) -> float | None:
        """Run-time seconds per wall second (None: as fast as possible)."""
        return self.pace.speed

    def set_speed(self, speed: float | None) -> None:
        """Change the pace from now on (the clock does not jump).

        Raises:
            ValueError: ``speed`` not > 0.
        """
        self.pace.set_speed(speed, self.run.now)

    @property
    def paused(self) -> bool:
        return self.pace.paused

    def set_paused(self, paused: bool) -> None:
        """Pause or resume the run clock (resuming does not make up the paused time)."""
        self.pace.set_paused(paused, self.run.now)

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

    @property
    def dt(self) -> float:
        """The simulation tick, seconds."""
        return self.run.dt

    def drive(self, cancelled: Callable[[], bool] = lambda: False,
              before_end: Callable[[], None] | None = None, *, yield_s: float = 0.0) -> bool:
        """Run until the end of the schedule, paced; returns True when the run finished.

        Returns early (False) when ``cancelled()`` turns true or :meth:`stop` was called.
        ``before_end`` is called (in this thread) one tick before the run ends, when a last
        tool call can still be recorded before ``run.end`` (the player's unsaved notes).
        ``yield_s`` is slept after each virtual-clock slice (a UI thread takes the
        interpreter meanwhile). Call from any thread but the one tool calls come from.
        """
        self.start()

        def stopped() -> bool:
            return cancelled() or self._stop.is_set()

        if before_end is not None:
            if not drive(self, self.pace, slice_s=MAX_SLICE_S, until=self.run.end_t - self.run.dt,
                         cancelled=stopped, idle=self._flush, yield_s=yield_s):
                return False
            if not self.run.finished:
                before_end()
        return drive(self, self.pace, slice_s=MAX_SLICE_S, cancelled=stopped, idle=self._flush, yield_s=yield_s) \
            and self.run.finished

    def _flush(self) -> None:
        """Flush the recorder while waiting (:meth:`Orchestrator.flush_recorder`), serialised with tool calls."""
        with self.run.lock:
            self.run.flush_recorder()

    def call_tool(self, name: str, args: dict[str, Any]) -> ToolResult:
        """Call an operator tool through the policy layer, serialised with the run loop.

        After the run has ended no call is made (it would land after ``run.end``).
        """
        with self.run.lock:
            if self.run.finished:
                return ToolResult(False, error="the run has ended: no more tool calls")
            return self.run.tools.call(name, args)

    # ------------------------------------------------------------------ the end

    def close(self, *, detach: bool = False) -> SealOutcome:
        """Close the recorder and seal the run directory (idempotent; thread-safe).

        A finished run is sealed as is; a run stopped early is sealed with ``recover`` and
        marked incomplete. ``detach`` first unsubscribes the recorder, for a loop thread that
        may still emit (``marathon serve`` giving up on a wedged run): nothing more is
        written, and the run counts as incomplete. Sealing problems are returned, not raised.
        """
        with self._close_lock:
            if self._closed is None:
                self._closed = self._seal(detach)
            return self._closed

    def _seal(self, detach: bool) -> SealOutcome:
        from engine.bundle.format import BundleError, NotARunError
        from engine.run.sealinputs import seal_run, write_counterfactual

        run = self.run
        error: str | None = None
        if detach and run.recorder is not None:
            with contextlib.suppress(ValueError):
                run.stream.unsubscribe(run.recorder)
        try:
            if detach:
                run.close()
            else:
                with run.lock:
                    run.close()
        except Exception as exc:  # sealing recovers the flushed prefix
            error = f"closing the recorder failed: {exc}"
        complete = bool(run.finished) and not detach
        if self.run_dir is None:
            return SealOutcome(None, complete, error)
        try:
            if self.counterfactual is not None:
                write_counterfactual(self.run_dir, self.counterfactual)
            bundle = seal_run(self.run_dir, recover=not complete)
        except (BundleError, NotARunError, OSError) as exc:
            return SealOutcome(None, complete, error or str(exc))
        return SealOutcome(bundle, complete, error)
