"""A substrate alone, paced against the wall clock, its series served at ``/metrics`` for a real Prometheus.

The live mode without a run loop (no schedule, no operator): tests point a real Prometheus
(Debian's 2.42) at :class:`LiveSimulation` and compare its alerts with the embedded
evaluator's. Pacing is the run's own loop (:func:`engine.run.clock.drive`), on a worker thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from alerts.live import MetricsServer
from engine.run.clock import Pace, SubstrateLoop, drive
from engine.substrate import Substrate


class LiveSimulation(MetricsServer):
    """A substrate advanced on the wall clock, its series served at ``http://host:port/metrics``.

    Args:
        sim: the cluster (:func:`engine.run.substrates.open_substrate`); its run time
            continues from ``sim.now``.
        host: listen address; loopback by default.
        port: listen port; 0 picks a free one (see :attr:`port` after :meth:`start`).
        speed: simulated seconds per wall second.
        tick_s: how often the simulation is advanced, wall seconds.
        paused: start with the run clock stopped (:attr:`pace`'s ``set_paused`` resumes it).

    Raises:
        ValueError: ``speed`` not > 0.
    """

    thread_name = "marathon-live-sim"

    def __init__(self, sim: Substrate, *, host: str = "127.0.0.1", port: int = 0, speed: float = 1.0,
                 tick_s: float = 0.25, paused: bool = False) -> None:
        if not speed > 0:
            raise ValueError("speed must be > 0")
        super().__init__(sim.exposition, threading.RLock(), host=host, port=port)
        self.sim = sim
        self.speed = speed
        self.tick_s = tick_s
        self.pace = Pace(speed)
        """The wall pace the simulation runs at (pause and resume it here)."""
        if paused:
            self.pace.set_paused(True, sim.now)
        self.on_tick: Callable[[Substrate], None] | None = None
        """Called (holding :attr:`lock`) after each advance, e.g. to feed an embedded evaluator."""

    def _headers(self) -> dict[str, str]:
        return {"X-Marathon-Run-Time": f"{self.sim.now:.0f}"}

    async def _serve(self, stop: asyncio.Event) -> None:
        loop = SubstrateLoop(self.sim, lock=self.lock, after=self._tick)
        await asyncio.to_thread(drive, loop, self.pace, slice_s=max(self.sim.dt, self.tick_s * self.speed),
                                cancelled=stop.is_set)

    def _tick(self, sim: Substrate) -> None:
        if self.on_tick is not None:
            self.on_tick(sim)
