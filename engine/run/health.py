"""Service and route health for ``health.sample`` events, from the substrate's health windows.

Per service: ready/desired pods, request rate, 5xx share and p95 latency computed the way
an SRE's dashboard computes them from Prometheus series -- counter increases between two
samples (:meth:`engine.substrate.Substrate.health_window` takes them, with counter resets
handled as ``increase()`` does) and ``histogram_quantile`` over the bucket increases. Per
route: the load generator's view (rate, errors, p50/p95). This module only turns a window
into rates, shares and quantiles, rounded for the event.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from alerts.promql.functions import bucket_quantiles
from engine.substrate import Substrate


class HealthSampler:
    """Successive health samples of one substrate (module docstring).

    Args:
        substrate: the cluster sampled; the sampler keeps its own window mark.
    """

    def __init__(self, substrate: Substrate) -> None:
        self.substrate = substrate
        self._mark: object | None = None

    def sample(self) -> dict[str, Any]:
        """Health since the previous sample (the first sample covers nothing and reports 0 rates).

        Returns:
            ``{"services": [{service, ready, desired, rps, error_share, p95_ms, restarts,
            status}], "routes": [{route, rps, error_share, p50_ms, p95_ms}], "stores":
            {store: data generation}}`` -- rates per second, latencies in ms (None without
            requests); a store's data generation counts the times it lost its data.
        """
        window = self.substrate.health_window(self._mark)
        self._mark = window.mark
        span = window.span_s
        buckets = np.array([s.latency_buckets for s in window.services], dtype=np.float64)
        p95 = bucket_quantiles(0.95, np.asarray(window.le), buckets.reshape(len(window.services), len(window.le)),
                               nonmonotonic="bisect", divide_first=False)
        services = []
        for i, s in enumerate(window.services):
            total = s.requests
            services.append({
                "service": s.service,
                "ready": s.ready,
                "desired": s.desired,
                "rps": round(float(total / span), 3) if span else 0.0,
                "error_share": round(float(s.errors / total), 5) if total else 0.0,
                "p95_ms": None if math.isnan(p95[i]) else round(1000.0 * float(p95[i]), 1),
                "restarts": s.restarts,
                "status": s.status,
            })
        routes = [{"route": r.route, "rps": round(r.rps, 3), "error_share": round(r.error_share, 5),
                   "p50_ms": round(r.p50_ms, 1), "p95_ms": round(r.p95_ms, 1)}
                  for r in window.routes]
        return {"services": services, "routes": routes, "stores": dict(window.stores)}
