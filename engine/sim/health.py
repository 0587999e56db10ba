"""Health windows of the embedded cluster: what
:meth:`Simulator.health_window <engine.sim.simulator.Simulator.health_window>` computes.

Per service: the increases of ``http_requests_total`` (all codes and 5xx) and of the
``http_request_duration_seconds_bucket`` series between two windows' ends, taken per series
the way ``increase()`` takes them (a decrease is a counter reset, a series gone by the end
counts nothing), and the pods at the end. Per route: the load generator's view. Per store: its
data generation.

Vectorised over all series, so that a window every 15 s of a 90-minute Train Ticket run
stays cheap: the registry's series are classified once (it only ever appends), and a window's
mark holds the counter values at its end.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from engine.sim.traffic import BUCKETS
from engine.substrate import HealthWindow, ServiceWindow, SubstrateError

if TYPE_CHECKING:
    from alerts.series import SeriesRegistry
    from engine.sim.simulator import Simulator

LE: tuple[float, ...] = (*BUCKETS, math.inf)
"""The latency histogram's bucket upper bounds, seconds (:attr:`HealthWindow.le`)."""

_OTHER, _OK, _5XX, _BUCKET = 0, 1, 2, 3


@dataclass(frozen=True)
class _Mark:
    """A window's end: run time, seconds, and the (whole) counter values then."""

    t: float
    values: npt.NDArray[np.float64]


class SeriesClasses:
    """Which service, kind and bucket each registry series is, grown as the registry grows.

    Args:
        services: the app's services, in model order.
    """

    def __init__(self, services: list[str]) -> None:
        self._svc = {n: i for i, n in enumerate(services)}
        self.n = 0
        self.svc_of = np.zeros(0, dtype=np.int64)
        self.kind = np.zeros(0, dtype=np.int64)
        self.le = np.zeros(0, dtype=np.int64)

    def update(self, registry: SeriesRegistry) -> None:
        """Classify the series added to ``registry`` since the last call."""
        info = registry.info
        n = len(info)
        if n == self.n:
            return
        svc = np.full(n, -1, dtype=np.int64)
        kind = np.zeros(n, dtype=np.int64)
        le = np.zeros(n, dtype=np.int64)
        svc[: self.n] = self.svc_of
        kind[: self.n] = self.kind
        le[: self.n] = self.le
        for sid in range(self.n, n):
            si = info[sid]
            if si.name == "http_requests_total":
                svc[sid] = self._svc.get(si.label("service") or "", -1)
                kind[sid] = _5XX if (si.label("code") or "").startswith("5") else _OK
            elif si.name == "http_request_duration_seconds_bucket":
                svc[sid] = self._svc.get(si.label("service") or "", -1)
                kind[sid] = _BUCKET
                raw = si.label("le") or "+Inf"
                le[sid] = len(BUCKETS) if raw == "+Inf" else BUCKETS.index(float(raw))
        self.svc_of, self.kind, self.le = svc, kind, le
        self.n = n


def health_window(sim: Simulator, classes: SeriesClasses, since: object | None) -> HealthWindow:
    """The health of ``sim`` since the window whose mark is ``since`` (None: from zero).

    Raises:
        SubstrateError: ``since`` is not a mark of a simulator's window.
    """
    if since is not None and not isinstance(since, _Mark):
        raise SubstrateError(f"not a health window mark: {since!r}")
    sim.traffic.flush()
    registry = sim.registry
    classes.update(registry)
    n = classes.n
    values = np.floor(registry.values[:n] + 1e-9)
    prev = np.zeros(n)
    if since is not None:
        prev[: since.values.shape[0]] = since.values
    delta = values - prev
    delta = np.where(delta < 0, values, delta)  # a reset: the new process counted from zero
    delta[~registry.live[:n]] = 0.0
    span = 0.0 if since is None else sim.now - since.t
    services = [s.name for s in sim.app.services]
    S = len(services)
    mask = classes.svc_of >= 0
    ok_mask = mask & (classes.kind == _OK)
    bad_mask = mask & (classes.kind == _5XX)
    req = np.bincount(classes.svc_of[ok_mask], weights=delta[ok_mask], minlength=S)
    bad = np.bincount(classes.svc_of[bad_mask], weights=delta[bad_mask], minlength=S)
    bm = mask & (classes.kind == _BUCKET)
    buckets = np.zeros((S, len(LE)))
    np.add.at(buckets, (classes.svc_of[bm], classes.le[bm]), delta[bm])
    out = []
    for i, name in enumerate(services):
        wl = sim.cluster.workloads[name]
        pods = [p for p in wl.all_pods() if not p.terminating]
        statuses = [p.status_text() for p in pods] or ["-"]
        out.append(ServiceWindow(
            service=name,
            ready=wl.status_ready,
            desired=wl.replicas,
            requests=float(req[i] + bad[i]),
            errors=float(bad[i]),
            latency_buckets=tuple(buckets[i].tolist()),
            restarts=sum(p.container.restart_count for p in pods),
            status=next((s for s in statuses if s != "Running"), statuses[0]),
        ))
    routes = tuple(sim.route_health(max(span, sim.dt)))
    stores = {svc.name: int(sim.store_state(svc.name)["generation"]) for svc in sim.app.services if svc.store}
    return HealthWindow(t=sim.now, span_s=span, le=LE, services=tuple(out), routes=routes, stores=stores,
                        mark=_Mark(sim.now, values))
