"""The series behind a schedule's background alert noise (:mod:`faults.noise`).

Each scrape, :meth:`NoiseSeries.update` advances the counters a real cluster would expose
for the noise the plan describes, so the extended pack's rules fire on series, the way they
do on a real Prometheus, and ``/metrics`` shows the evidence:

* ``apiserver_client_certificate_expiration_seconds`` (histogram, the API server's buckets
  from ``k8s.io/apiserver/pkg/authentication/request/x509/x509.go``): every
  certificate-authenticated request observes its certificate's remaining lifetime; the
  plan's expiring certificate is :attr:`faults.noise.CertExpiry.share` of them, the rest
  are kubeadm's one-year certificates half-way through their life (assumption).
* ``rest_client_requests_total{code, host, method}`` of the API server's own (loopback)
  client, with 503s on :attr:`faults.noise.ClientErrors.share` of them in its window.
* ``container_cpu_cfs_periods_total`` and ``container_cpu_cfs_throttled_periods_total``
  (cAdvisor) of the throttled monitoring sidecar only: a pod outside the app namespace,
  which the traffic model does not cover (it models the pods of the app's namespace only).
* For the flaky service: extra ``http_requests_total{code="500"}`` on its handler (and
  fast failures in its latency histogram) in each episode -- the failed attempts its
  callers' client libraries retry, ``share / (1 - share)`` per successful request, so the
  handler's 5xx share is the episode's ``share`` while no caller sees an error.

Departures from reality (simulator): the flaky attempts add no load, log no line and cost no
CPU; the monitoring stack's pods are not objects of the simulated cluster (``kubectl`` is
scoped to the app's namespace); the API server's request rates are constants
(:data:`CERT_RPS`, :data:`CLIENT_RPS`, assumptions of a small cluster's steady state).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from alerts.series import SeriesRegistry
from faults.noise import MONITORING_NAMESPACE, BackgroundNoise

if TYPE_CHECKING:
    from engine.sim.calltree import CallForest
    from engine.sim.cluster import Cluster

CERT_BUCKETS = (0.0, 1800.0, 3600.0, 7200.0, 21600.0, 43200.0, 86400.0, 172800.0, 345600.0, 604800.0,
                2592000.0, 7776000.0, 15552000.0, 31104000.0)
"""``apiserver_client_certificate_expiration_seconds`` buckets, seconds
(``k8s.io/apiserver/pkg/authentication/request/x509/x509.go``)."""
LONG_LIVED_S = 182.5 * 86_400
"""Remaining lifetime of every other client certificate, seconds: kubeadm issues them for
one year; half-way (assumption)."""
CERT_RPS = 20.0
"""Certificate-authenticated requests per second at the API server (assumption: kubelets,
controllers and the scheduler of a small cluster)."""
CLIENT_RPS = 5.0
"""Requests per second of the API server's loopback client (assumption)."""
CFS_PERIOD_S = 0.1
"""CFS period, seconds (the kernel's and the kubelet's default ``cpu.cfs_period_us`` 100000)."""
RUNNABLE_SHARE = 0.8
"""Share of periods in which the throttled sidecar has work (assumption: it serves
kube-state-metrics' /metrics to every scrape and proxies the kubelet's requests)."""
APISERVER = {"job": "apiserver", "instance": "10.0.0.2:6443", "namespace": "default", "service": "kubernetes",
             "endpoint": "https"}
"""Target labels of the API server's scrape (kube-prometheus' ServiceMonitor of the
``default/kubernetes`` service; the address is an assumption: the control-plane node)."""
FAST_FAIL_S = 0.002
"""Duration of a failed flaky attempt, seconds (it fails before any work: assumption)."""


def _le(v: float) -> str:
    return "+Inf" if math.isinf(v) else repr(float(v)) if v < 1 else f"{v:.1f}"


class NoiseSeries:
    """The noise's series in ``registry``, advanced at each scrape (module docstring).

    Args:
        plan: the schedule's noise.
        namespace: the app's namespace.
        registry: the simulator's series registry.
        cluster: the simulated cluster (pods of the flaky service, nodes).
        forest: the app's call forest (operation index of the flaky handler).
    """

    def __init__(self, plan: BackgroundNoise, namespace: str, registry: SeriesRegistry, cluster: Cluster,
                 forest: CallForest) -> None:
        self.plan = plan
        self.namespace = namespace
        self.registry = registry
        self.cluster = cluster
        self.last_t: float | None = None
        reg = registry
        self._cert = [reg.add("apiserver_client_certificate_expiration_seconds_bucket", {**APISERVER, "le": _le(b)},
                              0.0, integer=True) for b in (*CERT_BUCKETS, math.inf)]
        self._cert_sum = reg.add("apiserver_client_certificate_expiration_seconds_sum", APISERVER, 0.0)
        self._cert_count = reg.add("apiserver_client_certificate_expiration_seconds_count", APISERVER, 0.0,
                                   integer=True)
        client = {**APISERVER, "host": "[::1]:6443", "method": "GET"}
        self._client = {code: reg.add("rest_client_requests_total", {**client, "code": code}, 0.0, integer=True)
                        for code in ("200", "503")}
        nodes = sorted(n.name for n in cluster.nodes)
        self.node = nodes[0] if nodes else ""
        cad = {"job": "cadvisor", "namespace": MONITORING_NAMESPACE, "pod": plan.throttling.pod,
               "container": plan.throttling.container, "node": self.node}
        self._cfs = reg.add("container_cpu_cfs_periods_total", cad, 0.0, integer=True)
        self._cfs_throttled = reg.add("container_cpu_cfs_throttled_periods_total", cad, 0.0, integer=True)
        self._op = -1
        if plan.flaky is not None:
            key = (plan.flaky.service, plan.flaky.handler)
            self._op = forest.ops.index(key) if key in forest.ops else -1
        self._ok_seen: dict[int, float] = {}
        """Per 200-series id of the flaky handler, its value at the last update."""

    def update(self, t: float) -> None:
        """Advance every noise series to run time ``t`` (seconds; called at each scrape)."""
        last = self.last_t
        self.last_t = t
        if last is None or t <= last:
            self._flaky(t, 0.0, last)
            return
        dt = t - last
        reg = self.registry
        cert = self.plan.cert
        n = CERT_RPS * dt
        left = max(cert.expires_in_s - t, 0.0)
        for value, count in ((left, n * cert.share), (LONG_LIVED_S, n * (1 - cert.share))):
            for sid, b in zip(self._cert, (*CERT_BUCKETS, math.inf), strict=True):
                if value <= b:
                    reg.inc(sid, count)
            reg.inc(self._cert_sum, value * count)
            reg.inc(self._cert_count, count)
        ce = self.plan.client_errors
        bad = max(0.0, min(t, ce.until) - max(last, ce.at)) / dt * ce.share
        m = CLIENT_RPS * dt
        reg.inc(self._client["503"], m * bad)
        reg.inc(self._client["200"], m * (1 - bad))
        node = next((nd for nd in self.cluster.nodes if nd.name == self.node), None)
        live = node is None or node.ready  # a NotReady node's kubelet is not scraped
        reg.live[self._cfs] = live
        reg.live[self._cfs_throttled] = live
        if live:
            th = self.plan.throttling
            share = th.share + th.swing * math.sin(2 * math.pi * t / th.period_s)
            periods = dt / CFS_PERIOD_S * RUNNABLE_SHARE
            reg.inc(self._cfs, periods)
            reg.inc(self._cfs_throttled, periods * min(max(share, 0.0), 1.0))
        self._flaky(t, dt, last)

    def _flaky(self, t: float, dt: float, last: float | None) -> None:
        fl = self.plan.flaky
        if fl is None or self._op < 0:
            return
        reg = self.registry
        frac_share = 0.0
        if last is not None and dt > 0:
            for ep in fl.episodes:
                overlap = max(0.0, min(t, ep.end) - max(last, ep.at))
                if overlap > 0:
                    frac_share += overlap / dt * ep.share / (1 - ep.share)
        for name in sorted(self.cluster.pods):
            pod = self.cluster.pods[name]
            if pod.service != fl.service:
                continue
            s = pod.series
            ok = s.get(f"req:{self._op}:200")
            bad = s.get(f"req:{self._op}:500")
            if ok is None or bad is None or not reg.live[ok]:
                continue
            now = float(reg.values[ok])
            before = self._ok_seen.get(ok, 0.0)
            self._ok_seen[ok] = now
            served = now - before if now >= before else now  # a restarted container starts from 0
            extra = served * frac_share
            if extra <= 0:
                continue
            reg.inc(bad, extra)
            for key in s:
                if key.startswith("hist:") and key not in ("hist:sum", "hist:count"):
                    reg.inc(s[key], extra)
            if "hist:count" in s:
                reg.inc(s["hist:count"], extra)
                reg.inc(s["hist:sum"], extra * FAST_FAIL_S)
