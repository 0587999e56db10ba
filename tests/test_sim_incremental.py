"""The simulator's incremental caches never serve stale state (issue 17, item 1).

Each test builds the cached thing, changes the state it depends on, and checks the cached
path against the same computation from scratch (caches emptied), bit for bit.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

from engine.sim.effects import Effect, EnvEquals, LogHint
from engine.sim.simulator import Simulator
from engine.sim.traffic import PodTable


@pytest.fixture
def ob() -> Simulator:
    sim = Simulator("online-boutique", seed=7)
    sim.advance(30)
    return sim


def incremental_table(sim: Simulator) -> PodTable:
    return sim._pod_table(sim._placed_pods())[0]


def scratch_table(sim: Simulator) -> PodTable:
    """The pod table of the current state with every per-pod cache emptied first."""
    sim._row_cache.clear()
    sim._slot_cache = None
    sim._pod_rows.clear()
    sim._op_blocks.clear()
    return sim._pod_table(sim._placed_pods())[0]


def assert_same_table(a: PodTable, b: PodTable) -> None:
    for f in dataclasses.fields(PodTable):
        if f.name == "classes":
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes(), f.name
        else:
            assert x == y, f.name


def pods_of(sim: Simulator, service: str) -> list[Any]:
    return sorted((p for p in sim.cluster.pods.values() if p.service == service), key=lambda p: p.name)


def test_pod_state_change_right_after_a_cached_build_shows_in_the_table(ob: Simulator) -> None:
    before = incremental_table(ob)
    assert_same_table(incremental_table(ob), before)  # all rows cached: the same table
    pod = pods_of(ob, "cartservice")[0]
    pod.ready = False  # as a failed readiness probe leaves it
    after = incremental_table(ob)
    i = after.names.index(pod.name)
    assert after.weight[i] == 0.0 and before.weight[i] > 0.0
    assert_same_table(after, scratch_table(ob))


def test_node_outage_and_restart_show_in_the_table(ob: Simulator) -> None:
    incremental_table(ob)
    node = pods_of(ob, "frontend")[0].node
    assert node is not None
    ob.set_node_ready(node, False)
    ob.advance(ob.t + 60)
    inc = incremental_table(ob)
    assert_same_table(inc, scratch_table(ob))
    ob.set_node_ready(node, True)
    ob.advance(ob.t + 90)
    assert_same_table(incremental_table(ob), scratch_table(ob))


def test_effect_on_one_service_changes_its_rows_only_and_matches_scratch(ob: Simulator) -> None:
    before = incremental_table(ob)
    ob.inject(Effect(id="e1", service="currencyservice", error_rate=0.4, log=LogHint("boom")))
    after = incremental_table(ob)
    svc = ob.traffic.svc_index["currencyservice"]
    mine = after.svc[after.k_pod] == svc
    assert (after.k_err[mine] > 0.3).all()
    assert after.k_err[~mine].tobytes() == before.k_err[~mine].tobytes()
    assert_same_table(after, scratch_table(ob))
    ob.revert("e1")
    assert_same_table(incremental_table(ob), before)


def test_conditional_effect_follows_another_services_template(ob: Simulator) -> None:
    # An effect on paymentservice that bites while checkoutservice has a given env var: a
    # change of checkoutservice's template (not of any paymentservice pod) turns it on.
    ob.inject(Effect(id="cond", service="paymentservice", error_rate=0.5,
                     when=EnvEquals("FEATURE_X", "on", service="checkoutservice"), log=LogHint("boom")))
    off = incremental_table(ob)
    svc = ob.traffic.svc_index["paymentservice"]
    assert not (off.k_err[off.svc[off.k_pod] == svc] > 0.4).any()
    ob.deploy_change("checkoutservice", env={"FEATURE_X": "on"}, summary="flag on", author="test")
    ob.advance(ob.t + 5)
    on = incremental_table(ob)
    assert (on.k_err[on.svc[on.k_pod] == svc] > 0.4).all()
    assert_same_table(on, scratch_table(ob))


def test_container_restart_gives_the_row_its_new_start_and_series(ob: Simulator) -> None:
    incremental_table(ob)
    pod = pods_of(ob, "productcatalogservice")[0]
    old_start = pod.container.started_t
    ob.inject(Effect(id="hang", service="productcatalogservice", pod=pod.name, liveness_fails=True))
    for _ in range(240):
        ob.advance(ob.t + 1)
        if pod.container.restart_count > 0 and pod.running:
            break
    assert pod.container.restart_count > 0
    inc = incremental_table(ob)
    i = inc.names.index(pod.name)
    assert inc.started[i] == pod.container.started_t != old_start
    assert inc.cpu_sid[i] == pod.series["cpu"] and inc.running[i]
    assert_same_table(inc, scratch_table(ob))


def test_probe_memo_is_dropped_when_the_flow_changes(ob: Simulator) -> None:
    route = ob.app.routes[0].name
    first = ob.probe_route(route)
    assert ob.probe_route(route) == first  # same flow: the memo
    service = ob.app.routes[0].entry.service
    ob.inject(Effect(id="slow", service=service, error_rate=0.3, latency_add_s=0.5, log=LogHint("boom")))
    ob.advance(ob.t + 1)
    now = ob.probe_route(route)
    assert now.success < first.success - 0.1
    roots = np.asarray([int(ob.traffic.roots[0])], dtype=np.int64)
    assert ob.traffic._probe_uncached(roots, None) == [now]


def test_service_fail_share_follows_each_tick(ob: Simulator) -> None:
    ob.inject(Effect(id="err", service="currencyservice", error_rate=0.3, log=LogHint("boom")))
    shares = []
    for _ in range(3):
        ob.advance(ob.t + 1)
        got = ob._service_fail_share("currencyservice")
        tab, last = ob.traffic.table, ob.traffic.last
        assert tab is not None and last is not None
        sel = tab.svc[tab.k_pod] == ob.traffic.svc_index["currencyservice"]
        assert got == float(last.slot_fail[sel].sum()) / float(last.slot_calls[sel].sum())
        shares.append(got)
    assert len(set(shares)) > 1  # a fresh value every tick, not the first one kept


def test_batched_fold_rows_are_each_class_folded_alone(ob: Simulator) -> None:
    ob.inject(Effect(id="jpy", service="currencyservice", error_rate=1.0, match=(("currency", "JPY"),), share=0.2,
                     log=LogHint("boom")))
    ob.advance(ob.t + 2)
    tm = ob.traffic
    tab, pi = tm.table, tm._probe_inputs
    assert tab is not None and pi is not None and tab.classes
    inputs = [tm._op_inputs(tab.k_err_base, tab.k_latfac_base, tab.k_latadd_base)]
    inputs += [tm._op_inputs(c.err, c.latfac, c.latadd) for c in tab.classes]
    classes = [(x.op_err, x.op_mean, x.op_var) for x in inputs]
    batched = tm._fold_many(tm.level_info, classes, pi.reach_n, pi.slow_n, pi.e_delay)
    for cls, fold in zip(classes, batched, strict=True):
        alone = tm._fold(tm.level_info, *cls, pi.reach_n, pi.slow_n, pi.e_delay)
        for f in dataclasses.fields(fold):
            assert getattr(fold, f.name).tobytes() == getattr(alone, f.name).tobytes(), f.name
    assert batched[0].succ.tobytes() != batched[1].succ.tobytes()
