"""Scaling a fault's target to zero never satisfies its probe (DESIGN section 8: "probes judge
user-visible requests, never rollout status alone"; "scaling to zero never repairs").

For every catalog fault of every app, on a fresh simulation with no fault injected, the
target Deployment is scaled to 0 replicas and the fault's symptom probe is evaluated once
its pods are gone: with nothing serving the target, a user request through the fault's
scope cannot succeed, so the probe must fail. A probe that judges only rollout status
(every replica updated and ready -- trivially true at 0/0) would pass here, and an operator
could "repair" the fault by deleting the service.
"""

from __future__ import annotations

import pytest

from engine.sim.simulator import Simulator
from faults.spec import FaultSpec, load_catalog

APPS = ["online-boutique", "astronomy-shop", "train-ticket"]
CASES = [(app, fault) for app in APPS for fault in load_catalog(app).faults]
SCALE_AT_S = 60.0
GONE_WITHIN_S = 300.0
"""Termination grace (30 s by default) plus the kubelet's teardown; ~60-90 s in practice."""
SETTLE_S = 15.0
"""One evaluation interval after the last pod is gone, so traffic flows without it."""


@pytest.mark.parametrize("case", CASES, ids=[c[1].id for c in CASES])
def test_probe_fails_with_the_target_scaled_to_zero(case: tuple[str, FaultSpec]) -> None:
    app, spec = case
    sim = Simulator(app, seed=0)
    sim.advance(SCALE_AT_S)
    sim.scale(spec.target, 0)
    workload = sim.cluster.workloads[spec.target]
    while workload.all_pods():
        assert sim.now < SCALE_AT_S + GONE_WITHIN_S, (
            f"{spec.target}: pods {[p.name for p in workload.all_pods()]} still there after {GONE_WITHIN_S:.0f} s")
        sim.advance(sim.now + 5.0)
    sim.advance(sim.now + SETTLE_S)
    result = sim.probe(spec.probe, spec.probe_anchor)
    assert not result.ok, f"{spec.id}: probe passes with {spec.target} at 0 replicas: {result.detail}"
