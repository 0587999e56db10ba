"""A healthy 30-minute run of each app: background errors only, plausible latency, stable
pods, well-formed series; and determinism for a seed."""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import pytest
from prometheus_client.parser import text_string_to_metric_families

from engine.apps.model import load_app
from engine.sim.calltree import compile_forest
from engine.sim.simulator import Simulator
from engine.sim.traffic import BACKGROUND_ERROR

APPS = ["online-boutique", "astronomy-shop", "train-ticket"]
HEALTHY_S = 1800.0


@pytest.fixture(scope="module", params=APPS)
def healthy(request: pytest.FixtureRequest) -> Simulator:
    sim = Simulator(request.param, seed=11)
    sim.advance(HEALTHY_S)
    return sim


def calls_per_request(app_name: str) -> dict[str, float]:
    """Expected operations invoked per request of each route (for the background error bound)."""
    app = load_app(app_name)
    forest = compile_forest(app)
    totals: dict[str, float] = defaultdict(float)
    for n in range(forest.size):
        if forest.required[n] or forest.parent[n] < 0:
            totals[app.routes[int(forest.route[n])].name] += float(forest.weight[n])
    return totals


def subtree_calls(app_name: str) -> dict[str, float]:
    """Largest expected number of required calls below (and including) any node of each service."""
    app = load_app(app_name)
    f = compile_forest(app)
    below = np.ones(f.size)
    for level in f.levels:
        for n in level.tolist():
            p = int(f.parent[n])
            if p >= 0 and f.required[n]:
                below[p] += f.times[n] * below[n]
    out: dict[str, float] = defaultdict(float)
    for n in range(f.size):
        name = f.services[int(f.svc[n])]
        out[name] = max(out[name], float(below[n]))
    return out


def test_routes_fail_only_at_the_background_rate(healthy: Simulator) -> None:
    bound = calls_per_request(healthy.app.name)
    window = list(healthy.traffic.route_window)
    for r, route in enumerate(healthy.app.routes):
        requests = sum(float(w.route_requests[r]) for w in window)
        failed = sum(float(w.route_failed[r]) for w in window)
        # n required calls at 2e-5 each; allow a Poisson upper tail on the failure count.
        expected = requests * BACKGROUND_ERROR * bound[route.name]
        assert failed <= expected + 3 * math.sqrt(expected) + 2, (route.name, failed, requests, expected)


def test_route_latency_within_slo(healthy: Simulator) -> None:
    slo = {r.name: r.slo.latency_p95_ms for r in healthy.app.routes}
    for r in healthy.route_health(HEALTHY_S):
        assert 0 < r.p50_ms < r.p95_ms < slo[r.route], r


def test_services_are_ready_and_stable(healthy: Simulator) -> None:
    bound = subtree_calls(healthy.app.name)
    for h in healthy.service_health(HEALTHY_S - 60):
        assert h.ready == h.desired, h
        assert h.restarts == 0, h
        assert h.status == "Running", h
        if h.rps:
            # Deep call trees (Train Ticket's travel plans make ~300 calls) add up background errors.
            assert h.error_share <= 3 * BACKGROUND_ERROR * bound[h.service] + 1e-3, h
            assert h.p95_ms is not None and h.p95_ms < 3000, h


def test_no_warning_events_in_a_healthy_run(healthy: Simulator) -> None:
    warnings = [e for e in healthy.events(since=0.0) if e["type"] == "Warning"]
    assert warnings == []


def test_exposition_parses_and_histograms_are_consistent(healthy: Simulator) -> None:
    families = {f.name: f for f in text_string_to_metric_families(healthy.exposition())}
    assert {"http_requests", "http_request_duration_seconds", "kube_pod_status_phase",
            "kube_deployment_status_replicas_available", "container_cpu_usage_seconds"} <= set(families)
    hist = families["http_request_duration_seconds"]
    buckets: dict[str, list[tuple[float, float]]] = defaultdict(list)
    counts: dict[str, float] = {}
    for s in hist.samples:
        if s.name.endswith("_bucket"):
            buckets[s.labels["pod"]].append((float(s.labels["le"]), s.value))
        elif s.name.endswith("_count"):
            counts[s.labels["pod"]] = s.value
    assert buckets
    for pod, bs in buckets.items():
        bs.sort()
        values = [v for _, v in bs]
        assert values == sorted(values), f"{pod}: buckets not cumulative"
        assert math.isinf(bs[-1][0]) and values[-1] == counts[pod]
    for s in families["http_requests"].samples:
        assert s.value == int(s.value)


def test_counters_never_decrease_between_scrapes(healthy: Simulator) -> None:
    store = healthy.store
    first, last = store.scrapes[-40], store.scrapes[-1]
    common, i1, i2 = np.intersect1d(first.ids, last.ids, return_indices=True)
    names = [store.info[i].name for i in common]
    counters = np.asarray([n.endswith(("_total", "_bucket", "_count", "_sum")) for n in names])
    assert counters.any()
    assert (last.values[i2][counters] >= first.values[i1][counters]).all()


def test_series_carry_the_target_labels(healthy: Simulator) -> None:
    samples = healthy.scrape()
    http = [s for s in samples if s.name == "http_requests_total"]
    assert http and all({"namespace", "service", "pod", "handler", "method", "code", "job"} <= set(s.labels)
                        for s in http)
    ksm = [s for s in samples if s.name.startswith("kube_")]
    assert all(s.labels["job"] == "kube-state-metrics" for s in ksm)
    phases = [s for s in samples if s.name == "kube_pod_status_phase" and s.value == 1]
    assert {s.labels["phase"] for s in phases} == {"Running"}


def test_topology_matches_the_call_graph(healthy: Simulator) -> None:
    edges = {(e.caller, e.callee): e for e in healthy.topology(300)}
    declared = set(healthy.app.edges())
    traced = {k for k, e in edges.items() if e.rps > 0 and k[0] != healthy.app.load.generator}
    assert traced <= declared
    assert all(e.error_share < 0.01 for e in edges.values())


def test_same_seed_same_series_and_different_seed_differs() -> None:
    def run(seed: int) -> str:
        sim = Simulator("online-boutique", seed=seed)
        sim.advance(300)
        victim = sorted(sim.cluster.pods)[4]
        sim.restart_pod(victim)
        sim.scale("adservice", 3)
        sim.advance(900)
        return sim.store.digest()

    assert run(3) == run(3)
    assert run(3) != run(4)


def test_determinism_covers_logs_and_events() -> None:
    def run() -> tuple[list[str], list[str]]:
        sim = Simulator("train-ticket", seed=5)
        sim.advance(120)
        sim.scale("ts-order-service", 0)
        sim.advance(300)
        pod = sorted(p for p in sim.cluster.pods if p.startswith("ts-travel-service"))[0]
        return sim.logs(pod), [f"{e['lastTimestamp']} {e['reason']} {e['message']}" for e in sim.events()]

    assert run() == run()
