"""One clock, two paces: the run loop on the virtual clock or paced against the wall clock.

As SimPy splits ``Environment`` from ``RealtimeEnvironment`` (whose only difference is a
``step()`` that sleeps until the wall clock catches up), a run here is always the same loop,
:func:`drive`, advancing the orchestrator slice by slice; a :class:`Pace` decides only how far
each slice may go:

* virtual (``speed=None``): as far as the slice allows, at once -- as fast as the engine goes;
* wall (``speed=x``): no further than ``x`` run-time seconds per wall second since the pace
  was last anchored, never more than :data:`MAX_CATCH_UP_S` in one slice after a stall.

A pace can be paused (the run clock stops; resuming does not make up the paused time) and
re-speeded (the run clock does not jump). Every driver -- ``marathon run``, ``watch``,
``play``, ``serve``, the live /metrics simulation -- uses this one loop.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from engine.substrate import Substrate

MAX_SLICE_S = 15.0
"""Run time advanced per slice: one evaluation interval, so stop and pause requests are seen
often even in a Train Ticket marathon (~70 ms of wall time per slice on the virtual clock)."""
MAX_CATCH_UP_S = 60.0
"""On a wall clock, the run never jumps more than this far in one slice after a stall."""
IDLE_SLEEP_S = 0.05
"""Longest wall-clock sleep between checks of the stop flag, the pause and the speed."""


class Steppable(Protocol):
    """What :func:`drive` advances: a run loop (the orchestrator) or a bare substrate."""

    @property
    def now(self) -> float:
        """Run time, seconds."""
        ...

    @property
    def finished(self) -> bool:
        """True once the run has ended."""
        ...

    @property
    def dt(self) -> float:
        """The loop's tick, seconds: targets are rounded down to whole ticks."""
        ...

    def advance_to(self, target: float) -> None:
        """Run the loop to run time ``target``."""
        ...


class Pace:
    """How fast run time may pass against the wall clock (module docstring).

    Args:
        speed: run-time seconds per wall second; None for the virtual clock.

    Raises:
        ValueError: ``speed`` not > 0.
    """

    def __init__(self, speed: float | None = None) -> None:
        if speed is not None and not speed > 0:
            raise ValueError("speed must be > 0 (or None: as fast as possible)")
        self._speed = speed
        self._paused = False
        self._lock = threading.Lock()
        self._anchor = (time.monotonic(), 0.0)

    @property
    def speed(self) -> float | None:
        """Run-time seconds per wall second (None: as fast as possible)."""
        return self._speed

    @property
    def paused(self) -> bool:
        return self._paused

    def anchor(self, now: float) -> None:
        """Count wall time from here: run time ``now`` is due at this wall instant."""
        with self._lock:
            self._anchor = (time.monotonic(), now)

    def set_speed(self, speed: float | None, now: float) -> None:
        """Change the pace from run time ``now`` on (the clock does not jump).

        Raises:
            ValueError: ``speed`` not > 0.
        """
        if speed is not None and not speed > 0:
            raise ValueError("speed must be > 0")
        with self._lock:
            self._speed = speed
            self._anchor = (time.monotonic(), now)

    def set_paused(self, paused: bool, now: float) -> None:
        """Pause or resume at run time ``now`` (resuming does not make up the paused time)."""
        with self._lock:
            self._paused = paused
            self._anchor = (time.monotonic(), now)

    def reachable(self, now: float, target: float) -> float | None:
        """How far the run may go towards ``target`` now: ``target`` on the virtual clock, the
        run time due on the wall clock (at most :data:`MAX_CATCH_UP_S` ahead of ``now``), or
        None while paused."""
        with self._lock:
            paused, speed, (wall0, t0) = self._paused, self._speed, self._anchor
        if paused:
            return None
        if speed is None:
            return target
        due = t0 + (time.monotonic() - wall0) * speed
        return min(target, due, now + MAX_CATCH_UP_S)

    def wait_s(self, now: float, step: float) -> float:
        """Wall seconds to sleep before run time ``now + step`` is due (0 on the virtual clock)."""
        with self._lock:
            paused, speed, (wall0, t0) = self._paused, self._speed, self._anchor
        if paused:
            return IDLE_SLEEP_S
        if speed is None:
            return 0.0
        due_at = wall0 + (now + step - t0) / speed
        return min(IDLE_SLEEP_S, max(0.001, due_at - time.monotonic()))


class SubstrateLoop:
    """A bare substrate as a :class:`Steppable` (``marathon sim``, the live /metrics simulation).

    Args:
        substrate: the cluster; its run time continues from ``substrate.now``.
        end: the run time to stop at, seconds (None: never finished).
        lock: held while advancing (a /metrics server reads under it), or None.
        after: called (holding ``lock``) after each advance with the substrate.
    """

    def __init__(self, substrate: Substrate, *, end: float | None = None, lock: threading.RLock | None = None,
                 after: Callable[[Substrate], None] | None = None) -> None:
        self.substrate = substrate
        self.end = end
        self.lock = lock
        self.after = after

    @property
    def now(self) -> float:
        return float(self.substrate.now)

    @property
    def dt(self) -> float:
        return float(self.substrate.dt)

    @property
    def finished(self) -> bool:
        return self.end is not None and self.substrate.now >= self.end - 1e-9

    def advance_to(self, target: float) -> None:
        dt = self.dt
        target = math.floor(target / dt + 1e-9) * dt
        if self.end is not None:
            target = min(target, self.end)
        if self.lock is None:
            self._advance(target)
            return
        with self.lock:
            self._advance(target)

    def _advance(self, target: float) -> None:
        if target > self.substrate.now + 1e-9:
            self.substrate.advance(target)
        if self.after is not None:
            self.after(self.substrate)


def drive(loop: Steppable, pace: Pace, *, slice_s: float = MAX_SLICE_S, until: float | None = None,
          cancelled: Callable[[], bool] = lambda: False, idle: Callable[[], None] | None = None,
          yield_s: float = 0.0) -> bool:
    """Advance ``loop`` slice by slice at ``pace``: the one pacing loop (module docstring).

    Args:
        loop: what to advance.
        pace: the virtual or wall pace (may change while driving: pause, speed).
        slice_s: the longest slice, run-time seconds.
        until: stop at this run time (rounded down to a whole tick) instead of the end.
        cancelled: checked between slices and while waiting; True stops the drive.
        idle: called while waiting for the wall clock or paused (e.g. to flush a recorder),
            from this thread.
        yield_s: wall seconds to sleep after each virtual-clock slice (so another thread,
            such as a UI, gets the interpreter between slices).

    Returns:
        True when the loop finished or reached ``until``; False when cancelled.
    """
    pace.anchor(loop.now)
    dt = loop.dt
    while not loop.finished:
        if until is not None and loop.now > until - dt + 1e-9:
            return True
        if cancelled():
            return False
        target = loop.now + slice_s
        if until is not None:
            target = min(target, until)
        reach = pace.reachable(loop.now, target)
        if reach is None or reach < loop.now + dt - 1e-9:
            if idle is not None:
                idle()
            time.sleep(pace.wait_s(loop.now, dt))
            continue
        loop.advance_to(reach)
        if pace.speed is None and yield_s > 0:
            time.sleep(yield_s)
    return True
