"""Saturation, delay and closed-loop load have the shapes of real incidents (issue 14, items 1 and 2).

Real recordings of these apps show: a pod pinned at its CPU limit keeps 100 % success while
latency climbs by one to two orders of magnitude (a throttled product catalog: success 1.0,
p95 x70); pod network delay on checkout drops checkout's own success (client deadlines cancel
its work) while the closed-loop load generator's users wait, so every service's request rate
falls, and entry latency quantiles pass 10 s. Each test runs a faulted simulator next to a
fault-free one of the same seed (so the slow diurnal swing cancels out of every ratio) and
asserts direction and rough size.
"""

from __future__ import annotations

import math

import pytest

from engine.sim.effects import EdgeEffect
from engine.sim.simulator import Simulator
from engine.substrate import ServiceHealth
from faults.spec import load_catalog

WARM_S = 300.0
"""Seconds of healthy traffic before the fault."""
FAULT_S = 480.0
"""Seconds the fault runs before the measurement window ends."""
WINDOW_S = 240.0
"""Measurement window, seconds (the end of the fault's run)."""

# (app, catalog CPU-pressure fault): the target keeps serving successfully, only slowly.
CPU_CASES = [
    ("online-boutique", "ob-productcatalog-cpu-hog"),
    ("online-boutique", "ob-frontend-cpu-hog"),
    ("astronomy-shop", "as-cart-cpu-hog"),
    ("train-ticket", "tt-cpu-hog-ts-station-service"),
]

# (app, service whose pod network is delayed, added delay per packet path in seconds).
DELAY_CASES = [
    ("online-boutique", "checkoutservice", 1.2),
    ("astronomy-shop", "checkout", 1.5),
    ("train-ticket", "ts-travel-service", 4.0),
]


def _health(sim: Simulator, window: float = WINDOW_S) -> dict[str, ServiceHealth]:
    return {h.service: h for h in sim.service_health(window)}


def _pair(app: str) -> tuple[Simulator, Simulator]:
    faulted, control = Simulator(app, seed=3), Simulator(app, seed=3)
    faulted.advance(WARM_S)
    control.advance(WARM_S)
    return faulted, control


def _entry(sim: Simulator) -> str:
    return sim.app.routes[0].entry.service


def _pod_delay(sim: Simulator, service: str, delay_s: float) -> None:
    """Delay every call into and out of ``service``: what ``tc netem delay`` on its pods does
    (egress to its callers' replies and to its own downstream calls)."""
    f = sim.forest
    names = f.services
    me = names.index(service)
    edges = set()
    for caller, callee in zip(f.caller_svc.tolist(), f.svc.tolist(), strict=True):
        if caller >= 0 and (callee == me or caller == me):
            edges.add((names[caller], names[callee]))
    for i, (caller, callee) in enumerate(sorted(edges)):
        sim.inject(EdgeEffect(id=f"netem-{i}", caller=caller, callee=callee, delay_s=delay_s))


@pytest.mark.parametrize(("app", "fault_id"), CPU_CASES, ids=[c[1] for c in CPU_CASES])
def test_cpu_saturation_is_latency_not_errors(app: str, fault_id: str) -> None:
    spec = next(f for f in load_catalog(app).faults if f.id == fault_id)
    sim, control = _pair(app)
    before = _health(sim)
    sim.apply_fault(spec)
    sim.advance(WARM_S + FAULT_S)
    control.advance(WARM_S + FAULT_S)
    after, ctl = _health(sim), _health(control)
    target = spec.target
    # Success stays ~1.0 at the target and on the probed route's entry.
    assert after[target].error_share < 0.01, (target, after[target])
    route = spec.probe.route
    assert route is not None
    route_err = {r.route: r.error_share for r in sim.route_health(WINDOW_S)}[route]
    assert route_err < 0.02, (route, route_err)
    # Latency rises by an order of magnitude at the target (histogram p95, as Prometheus reads it)...
    p0, p1 = before[target].p95_ms, after[target].p95_ms
    assert p0 is not None and p1 is not None
    assert p1 >= 10.0 * p0, (target, p0, p1)
    # ... and on the user's request, by far more than the route's SLO.
    probe = sim.probe_route(route)
    slo = next(r.slo.latency_p95_ms for r in sim.app.routes if r.name == route)
    assert probe.quantile_ms(0.95) > 3.0 * slo
    # Users wait, so the request rate at the entry falls well below the fault-free run's.
    entry = _entry(sim)
    assert after[entry].rps < 0.9 * ctl[entry].rps, (after[entry].rps, ctl[entry].rps)
    # The target is pinned at its limit: cAdvisor's usage is capped there and CFS throttles
    # most periods (kube-prometheus' CPUThrottlingHigh fires above 25 %).
    _assert_throttled(sim, control, target)


def _counter_delta(sim: Simulator, name: str, pod: str, window: float) -> float:
    scrapes = sim.store.scrapes
    end = scrapes[-1]
    start = next(sc for sc in reversed(scrapes) if end.t - sc.t >= window)
    sid = next(i for i, si in enumerate(sim.registry.info) if si.name == name and si.label("pod") == pod)
    v0 = dict(zip(start.ids.tolist(), start.values.tolist(), strict=True)).get(sid, 0.0)
    v1 = dict(zip(end.ids.tolist(), end.values.tolist(), strict=True))[sid]
    return float(v1 - v0)


def _assert_throttled(sim: Simulator, control: Simulator, target: str) -> None:
    pods = [p for p in sim.pods(target) if p.status == "Running"]
    assert pods
    limited = sim.app.service(target).resources.limits.cpu_cores()
    for pod in pods:
        used = _counter_delta(sim, "container_cpu_usage_seconds_total", pod.name, WINDOW_S) / WINDOW_S
        if limited:
            assert used <= limited * 1.001
            assert used >= 0.95 * limited
            periods = _counter_delta(sim, "container_cpu_cfs_periods_total", pod.name, WINDOW_S)
            throttled = _counter_delta(sim, "container_cpu_cfs_throttled_periods_total", pod.name, WINDOW_S)
            assert periods == pytest.approx(WINDOW_S / 0.1, rel=0.05)
            assert throttled / periods > 0.9
    if limited:
        for pod in [p for p in control.pods(target) if p.status == "Running"]:
            periods = _counter_delta(control, "container_cpu_cfs_periods_total", pod.name, WINDOW_S)
            throttled = _counter_delta(control, "container_cpu_cfs_throttled_periods_total", pod.name, WINDOW_S)
            assert periods > 0 and throttled / periods < 0.25  # healthy: no CPUThrottlingHigh


def test_pods_without_a_cpu_limit_export_no_cfs_counters() -> None:
    sim = Simulator("astronomy-shop", seed=1)
    sim.advance(60)
    names = {(si.name, si.label("pod")) for si in sim.registry.info}
    for svc in sim.app.services:
        for pod in sim.pods(svc.name):
            has = ("container_cpu_cfs_periods_total", pod.name) in names
            assert has == bool(svc.resources.limits.cpu_cores()), (svc.name, pod.name)


@pytest.mark.parametrize(("app", "service", "delay_s"), DELAY_CASES, ids=[c[0] for c in DELAY_CASES])
def test_network_delay_is_felt_by_the_delayed_server_and_by_the_load(app: str, service: str, delay_s: float) -> None:
    sim, control = _pair(app)
    _pod_delay(sim, service, delay_s)
    sim.advance(WARM_S + FAULT_S)
    control.advance(WARM_S + FAULT_S)
    after, ctl = _health(sim), _health(control)
    # The delayed server's own success drops: its callers' deadlines expire while it works
    # (its downstream calls are delayed too) and it records the cancellations.
    assert after[service].error_share > 0.5, after[service]
    assert ctl[service].error_share < 0.01
    # Its rate falls, and so does every busy service's: the users are waiting.
    assert after[service].rps < 0.95 * ctl[service].rps
    others = [s for s, h in ctl.items() if s != service and h.rps > 1.0]
    falls = [1.0 - after[s].rps / ctl[s].rps for s in others]
    assert others and min(falls) > 0.03, dict(zip(others, falls, strict=True))
    assert sum(falls) / len(falls) > 0.05
    # The routes through it take longer than 10 s at the entry.
    f = sim.forest
    me = f.services.index(service)
    routes = sorted({sim.app.routes[int(r)].name for r, s in zip(f.route.tolist(), f.svc.tolist(), strict=True)
                     if s == me})
    slowest = max(sim.probe_route(r).quantile_ms(0.9) for r in routes)
    assert slowest > 10_000.0, (routes, slowest)


def test_cancelled_requests_carry_the_protocols_cancellation_code() -> None:
    sim = Simulator("online-boutique", seed=5)
    sim.advance(120)
    sim.traffic.flush()
    start = sim.registry.values.copy()
    _pod_delay(sim, "checkoutservice", 1.2)
    sim.advance(420)
    sim.traffic.flush()
    codes: dict[str, float] = {}
    for sid, si in enumerate(sim.registry.info):
        if si.name == "http_requests_total" and si.label("service") == "checkoutservice":
            code = si.label("code") or ""
            was = start[sid] if sid < start.size else 0.0
            codes[code] = codes.get(code, 0.0) + float(sim.registry.values[sid] - was)
    # checkoutservice is gRPC: DEADLINE_EXCEEDED, mapped to HTTP 504 like its other statuses.
    assert set(codes) == {"200", "500", "504"}
    assert codes["504"] > codes["200"]
    frontend_codes = {si.label("code") for si in sim.registry.info
                      if si.name == "http_requests_total" and si.label("service") == "frontend"}
    assert frontend_codes == {"200", "500", "499"}  # HTTP: the client closed the request


def test_closed_loop_rate_is_users_over_think_plus_response() -> None:
    sim = Simulator("online-boutique", seed=2)
    sim.advance(120)
    tr = sim.traffic
    lo, hi = sim.app.load.think_time_s
    assert (lo, hi) == (1.0, 10.0)  # Locust's wait_time = between(1, 10)
    healthy = sim.load_rate()
    assert healthy == pytest.approx(tr.users(sim.now) / (5.5 + tr._resp_s))
    # Healthy, the rate is the app's base rate (within the swing).
    swing = 1.0 + sim.app.load.swing * math.sin(2 * math.pi * sim.now / sim.app.load.period_s)
    assert healthy == pytest.approx(sim.app.load.base_rps * swing, rel=0.03)
    # load_factor scales the users, and so the rate.
    sim.set_load_factor(2.0)
    assert sim.load_rate() == pytest.approx(2.0 * healthy, rel=1e-6)


def test_histograms_reach_the_tail_where_the_runtime_exposes_it() -> None:
    sim = Simulator("astronomy-shop", seed=1)
    sim.advance(30)
    tt = Simulator("train-ticket", seed=1)
    tt.advance(30)

    def bounds(s: Simulator, service: str) -> list[str]:
        return sorted({si.label("le") or "" for si in s.registry.info
                       if si.name == "http_request_duration_seconds_bucket" and si.label("service") == service},
                      key=lambda le: math.inf if le == "+Inf" else float(le))

    assert bounds(sim, "frontend-proxy")[-3:] == ["30.0", "60.0", "+Inf"]  # Envoy's default buckets
    assert bounds(sim, "checkout")[-2:] == ["10.0", "+Inf"]  # Go: client_golang / OpenTelemetry defaults
    assert bounds(tt, "ts-travel-service")[-2:] == ["30.0", "+Inf"]  # Spring Boot: Micrometer, up to 30 s
