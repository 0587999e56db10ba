"""The extended pack's own rules (sre-marathon-extended/3): each is silent on long healthy runs of
the three apps and fires on the fault it is for; the paper pack reads none of the series they
added to the simulator (node-exporter's and the store exporters', :mod:`engine.sim.exporters`).

The healthy runs print the margin of every new rule (the value its threshold is compared with,
at its worst), the numbers the rule files' comments quote.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from alerts.evaluator import AlertEvaluator, AlertTransition
from alerts.promql import instant_query
from alerts.promql.engine import SelectorNode, walk
from alerts.promql.storage import Storage
from alerts.rules import PACKS, Rule, load_pack
from engine.sim.effects import EdgeEffect, Effect
from engine.sim.exporters import CPU_MODES, SYSTEM_CORES
from engine.sim.simulator import Simulator
from engine.substrate import SubstrateError

NEW_RULES = ("ServiceRequestsStopped", "StoreOperationsStopped", "KubePodCrashLooping", "NodeCPUHighUsage")
"""Added in sre-marathon-extended/3 (ServiceErrorRate and CPUThrottlingHigh were in /2 and are
qualified here too)."""
QUALIFIED = (*NEW_RULES, "ServiceErrorRate", "CPUThrottlingHigh")
EXPORTER_FAMILIES = {"node_cpu_seconds_total", "redis_commands_total", "mongodb_op_counters_total",
                     "mysql_global_status_innodb_row_ops_total", "pg_stat_database_xact_commit"}
HEALTHY_S = 7200
"""Two hours: twice the load generator's swing period and longer than every rule's window."""

_COMPARISON = re.compile(r"(?s)(.*\S)\s*(>=|>)\s*([^<>=]+)$")


def margin(rule: Rule, storage: Storage) -> tuple[str, str, float]:
    """What ``rule``'s threshold compares, taken from the rule's own expression: (expression,
    ``max`` or ``min`` -- which extreme is the worst case --, threshold).

    * ``A > t unless on (namespace, service) B > 0`` (the stop rules): B where A holds, worst at
      its minimum (0 would fire);
    * ``(ratio) > t and on (...) rate > r`` (ServiceErrorRate): the ratio where the rate holds;
    * ``X > t`` or ``X >= t``: X, worst at its maximum.
    """
    expr = rule.expr.strip()
    if "unless on (namespace, service)" in expr:
        watched, now = expr.split("unless on (namespace, service)")
        now = now.strip()
        assert now.endswith("> 0"), rule.name
        return f"({now[:-3]}) and on (namespace, service) ({watched.strip()})", "min", 0.0
    if "\nand on (" in expr:
        head, tail = expr.split("\nand on (", 1)
        m = _COMPARISON.match(head)
        assert m, rule.name
        return f"{m.group(1)} and on ({tail}", "max", float(m.group(3))
    m = _COMPARISON.match(expr)
    assert m, rule.name
    r = instant_query(f"vector({m.group(3)})", storage, 0)
    return m.group(1), "max", float(r.vals[0])  # type: ignore[union-attr]


def test_new_rules_are_in_the_extended_pack_only_with_a_definition() -> None:
    assert PACKS["extended"].id == "sre-marathon-extended/3"
    extended = {r.name: r for r in load_pack("extended").alerts}
    paper = {r.name for r in load_pack("paper").alerts}
    for name in QUALIFIED:
        rule = extended[name]
        assert name not in paper
        assert {"summary", "description", "definition"} <= set(rule.annotations), name
        assert "severity" in rule.labels, name
    assert extended["KubePodCrashLooping"].for_s == 900 and extended["NodeCPUHighUsage"].for_s == 900
    # kube-prometheus' expressions as shipped (manifests at 4d719f1dea88).
    assert extended["KubePodCrashLooping"].expr.strip() == (
        'max_over_time(kube_pod_container_status_waiting_reason{reason="CrashLoopBackOff", '
        'job="kube-state-metrics"}[5m]) >= 1')
    assert extended["NodeCPUHighUsage"].expr.strip() == (
        'sum without(mode) (avg without (cpu) (rate(node_cpu_seconds_total{job="node-exporter", '
        'mode!~"idle|iowait"}[2m]))) * 100 > 90')


def test_the_paper_pack_reads_none_of_the_exporter_series() -> None:
    """The exporters' series are new in the scrape; the leaderboard's pack cannot see them."""
    for rule in load_pack("paper").alerts:
        for node in walk(rule.node):
            if isinstance(node, SelectorNode):
                names = {m.value for m in node.matchers if m.name == "__name__"} | {node.name or ""}
                assert not names & EXPORTER_FAMILIES, rule.name


def _fired(transitions: list[AlertTransition]) -> dict[str, dict[str, float]]:
    """Per rule, per target (service, instance or pod), the first firing time."""
    out: dict[str, dict[str, float]] = {}
    for tr in transitions:
        if tr.to_state == "firing" and tr.rule in QUALIFIED:
            target = tr.labels.get("instance") or tr.labels.get("pod") if tr.rule in (
                "NodeCPUHighUsage", "KubePodCrashLooping", "CPUThrottlingHigh") else tr.labels.get("service", "")
            out.setdefault(tr.rule, {}).setdefault(target or "", tr.t)
    return out


@pytest.mark.parametrize("app", ["online-boutique", "astronomy-shop", "train-ticket"])
def test_new_rules_silent_on_a_healthy_two_hour_run(app: str, capsys: pytest.CaptureFixture[str]) -> None:
    sim = Simulator(app, seed=11)
    sim.advance(HEALTHY_S)
    ev = AlertEvaluator(load_pack("extended"))
    transitions = ev.step(sim.store, HEALTHY_S)
    assert ev.rule_errors() == {}
    assert {t.rule for t in transitions} == {"Watchdog"}, sorted({(t.rule, str(t.labels)) for t in transitions})
    lines = []
    rules = {r.name: r for r in load_pack("extended").alerts}
    for rule in QUALIFIED:
        expr, worst, threshold = margin(rules[rule], ev.storage)
        best: tuple[str, float] | None = None
        for t in range(420, HEALTHY_S + 1, 60):
            r = instant_query(expr, ev.storage, t * 1000)
            for lid, v in zip(r.lids.tolist(), r.vals.tolist(), strict=True):  # type: ignore[union-attr]
                if best is None or (v > best[1] if worst == "max" else v < best[1]):
                    best = (ev.storage.labels.format(lid), v)
        if best is None:
            lines.append(f"{rule}: no series")
            continue
        lines.append(f"{rule}: {worst} {best[1]:.4g} (threshold {threshold:g}; {best[0]})")
        assert best[1] < threshold if worst == "max" else best[1] > threshold, (rule, best)
    with capsys.disabled():
        print(f"\n[{app}] healthy margins over {HEALTHY_S} s:\n  " + "\n  ".join(lines))


def _pods(sim: Simulator, prefix: str) -> list[str]:
    return sorted(p for p in sim.cluster.pods if p.startswith(prefix))


def _crash_loop(sim: Simulator) -> None:
    sim.inject(Effect(id="crash", service="shippingservice", crash_on_start=True))
    sim.restart_pod(_pods(sim, "shippingservice")[0])


FAULTS: list[tuple[str, str, Callable[[Simulator], None], str, str]] = [
    # (case, app, fault, rule, target that must fire)
    ("scale-to-zero", "online-boutique", lambda s: s.scale("paymentservice", 0), "ServiceRequestsStopped",
     "paymentservice"),
    ("wrong-dependency-address", "online-boutique",
     lambda s: s.deploy_change("frontend", env={"AD_SERVICE_ADDR": "adservice-v2:9555"}, summary="rename",
                               author="test"), "ServiceRequestsStopped", "adservice"),
    ("redis-scaled-to-zero", "online-boutique", lambda s: s.scale("redis-cart", 0), "StoreOperationsStopped",
     "redis-cart"),
    ("redis-clients-cut-off", "online-boutique",
     lambda s: s.deploy_change("cartservice", env={"REDIS_ADDR": "redis-cart-old:6379"}, summary="move",
                               author="test"), "StoreOperationsStopped", "redis-cart"),
    ("redis-network-loss", "online-boutique",
     lambda s: s.inject(EdgeEffect(id="loss", caller="cartservice", callee="redis-cart", drop=1.0)),
     "StoreOperationsStopped", "redis-cart"),
    ("postgresql-scaled-to-zero", "astronomy-shop", lambda s: s.scale("postgresql", 0), "StoreOperationsStopped",
     "postgresql"),
    ("mongodb-scaled-to-zero", "train-ticket", lambda s: s.scale("ts-payment-mongo", 0), "StoreOperationsStopped",
     "ts-payment-mongo"),
    ("mysql-scaled-to-zero", "train-ticket", lambda s: s.scale("ts-voucher-mysql", 0), "StoreOperationsStopped",
     "ts-voucher-mysql"),
    ("crash-loop", "online-boutique", _crash_loop, "KubePodCrashLooping", "shippingservice"),
    ("host-cpu-load", "online-boutique", lambda s: s.set_host_load("node-a-1", 7.6), "NodeCPUHighUsage", "node-a-1"),
    ("container-cpu-pressure", "online-boutique",
     lambda s: s.inject(Effect(id="cpu", service="currencyservice", cpu_cores=2.0)), "CPUThrottlingHigh",
     "currencyservice"),
    ("one-operation-failing", "online-boutique",
     lambda s: s.inject(Effect(id="ads", service="adservice", error_rate=0.5)), "ServiceErrorRate", "adservice"),
]
INJECT_AT, WATCH_S = 600, 1500


@pytest.mark.parametrize(("case", "app", "fault", "rule", "target"), FAULTS, ids=[f[0] for f in FAULTS])
def test_each_rule_fires_on_its_fault(case: str, app: str, fault: Callable[[Simulator], None], rule: str,
                                      target: str, capsys: pytest.CaptureFixture[str]) -> None:
    sim = Simulator(app, seed=3)
    sim.advance(INJECT_AT)
    fault(sim)
    sim.advance(INJECT_AT + WATCH_S)
    ev = AlertEvaluator(load_pack("extended"))
    fired = _fired(ev.step(sim.store, INJECT_AT + WATCH_S))
    assert ev.rule_errors() == {}
    hits = {k: t for k, t in fired.get(rule, {}).items() if k.startswith(target)}
    assert hits, (rule, fired)
    with capsys.disabled():
        print(f"\n[{case}] {rule} fires on {sorted(hits)} {min(hits.values()) - INJECT_AT:.0f} s after injection; "
              f"also firing: {sorted(r for r in fired if r != rule)}")


def test_a_stopped_service_stays_alerted_through_the_hour() -> None:
    """max_over_time keeps a stopped service watched for an hour after the stop, whatever its
    rate (an hour-long average would let a quiet service's alert resolve minutes after the stop)."""
    sim = Simulator("online-boutique", seed=3)
    sim.advance(600)
    sim.scale("emailservice", 0)
    sim.advance(600 + 3300)
    ev = AlertEvaluator(load_pack("extended"))
    states = [t for t in ev.step(sim.store, 600 + 3300) if t.rule == "ServiceRequestsStopped"
              and t.labels.get("service") == "emailservice"]
    assert [t.to_state for t in states] == ["pending", "firing"], [(t.t, t.to_state) for t in states]
    sim.scale("emailservice", 1)
    sim.advance(600 + 3300 + 300)
    later = [t for t in ev.step(sim.store, 600 + 3300 + 300) if t.rule == "ServiceRequestsStopped"
             and t.labels.get("service") == "emailservice"]
    assert [t.to_state for t in later] == ["resolved"], [(t.t, t.to_state) for t in later]


def test_store_counters_restart_with_the_store_and_go_stale_without_it() -> None:
    sim = Simulator("online-boutique", seed=3)
    sim.advance(300)
    pod = _pods(sim, "redis-cart")[0]
    sid = sim.registry.lookup("redis_commands_total", {"job": "redis-exporter", "namespace": "online-boutique",
                                                      "service": "redis-cart", "pod": pod, "cmd": "hget"})
    assert sid is not None and sim.registry.live[sid] and sim.registry.values[sid] > 1000
    sim.restart_pod(pod)
    sim.advance(330)
    new_pod = _pods(sim, "redis-cart")[0]
    new_sid = sim.registry.lookup("redis_commands_total", {"job": "redis-exporter", "namespace": "online-boutique",
                                                          "service": "redis-cart", "pod": new_pod, "cmd": "hget"})
    assert new_sid is not None and sim.registry.live[new_sid] and sim.registry.values[new_sid] < 1000
    # A restart (here with data loss: redis-cart keeps its data in an emptyDir) is no silence:
    # the operations resume within seconds and the reset counter is a counter reset to rate().
    sim.advance(900)
    quiet = AlertEvaluator(load_pack("extended")).step(sim.store, 900)
    assert not [t for t in quiet if t.rule in ("StoreOperationsStopped", "ServiceRequestsStopped")]
    sim.scale("redis-cart", 0)
    sim.advance(1300)
    assert not sim.registry.live[new_sid]


def test_node_cpu_counters_add_up_to_the_nodes_cores() -> None:
    sim = Simulator("online-boutique", seed=3)
    sim.advance(60)
    node = sim.cluster.nodes[0]

    def totals() -> dict[str, float]:
        out = dict.fromkeys(CPU_MODES, 0.0)
        for info, v in zip(sim.registry.info, sim.registry.values.tolist(), strict=False):
            if info.name == "node_cpu_seconds_total" and info.label("instance") == node.name:
                out[str(info.label("mode"))] += v
        return out

    before = totals()
    sim.set_host_load(node.name, 3.0)
    sim.advance(660)
    after = totals()
    spent = {m: after[m] - before[m] for m in CPU_MODES}
    assert sum(spent.values()) == pytest.approx(600 * node.cpu, rel=1e-9)  # every CPU-second in one mode
    busy = sum(v for m, v in spent.items() if m not in ("idle", "iowait")) / 600
    assert 3.0 + SYSTEM_CORES < busy < 3.0 + SYSTEM_CORES + 1.0
    assert np.count_nonzero([i.name == "node_cpu_seconds_total" and i.label("instance") == node.name
                             for i in sim.registry.info]) == node.cpu * len(CPU_MODES)
    with pytest.raises(SubstrateError, match="unknown node 'node-z-9'"):
        sim.set_host_load("node-z-9", 1.0)
    with pytest.raises(SubstrateError, match="finite number of cores"):
        sim.set_host_load(node.name, -1.0)


@pytest.mark.parametrize("rule_file", ["extended.rules.yaml", "kube-prometheus.rules.yaml"])
def test_new_rules_agree_with_promtool_while_firing(rule_file: str, tmp_path: Path) -> None:
    """Prometheus itself (promtool 2.42) fires the new rules on the same series, at the same
    evaluations, with the same labels and annotations (recording rules, `unless` and
    max_over_time of recorded series included)."""
    from alerts.promtool import promtool_path, record_run, run_promtool, unit_test_yaml
    from alerts.rules import PACK_DIR, load_rule_file

    if promtool_path() is None:
        if os.environ.get("CI", "").lower() not in ("", "0", "false"):
            pytest.fail("promtool is required in CI (apt-get install prometheus)")
        pytest.skip("promtool not installed (apt-get install prometheus)")
    sim = Simulator("online-boutique", 3)
    sim.advance(60)
    sim.set_host_load("node-a-1", 7.6)
    _crash_loop(sim)
    sim.advance(300)
    sim.scale("redis-cart", 0)
    sim.advance(1320)
    path = PACK_DIR / rule_file
    ev = AlertEvaluator(load_rule_file(path))
    for scrape in sim.store.scrapes:
        if scrape.t % 15 == 0:  # promtool's input grid
            ev.ingest(scrape, sim.store.info)
    st = ev.storage
    run = record_run(ev, int(st.ts[0]), int(st.ts[st.n_rows - 1]), 15_000)
    assert not ev.rule_errors()
    fired = {a.rule for snap in run.alerts for a in snap if a.state == "firing"}
    assert fired >= ({"KubePodCrashLooping", "NodeCPUHighUsage"} if rule_file.startswith("kube")
                     else {"ServiceRequestsStopped", "StoreOperationsStopped"}), fired
    test = tmp_path / "firing_test.yml"
    test.write_text(unit_test_yaml(ev, run, path))
    res = run_promtool("test", "rules", str(test))
    assert res.returncode == 0, f"promtool disagrees with the embedded evaluator:\n{res.stdout[-6000:]}{res.stderr}"


def test_marathon_run_with_the_extended_pack_scores_with_its_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """``marathon run --rules extended`` runs and seals end to end; ``marathon score`` names the
    pack's version (JSON and text) and says the run is not comparable with the paper's numbers;
    without ``--rules`` the run uses the paper pack and the note is absent."""
    import json

    from engine.cli import main

    monkeypatch.setenv("SRE_MARATHON_STATE", str(tmp_path / "state"))
    for name, extra in (("extended", ["--rules", "extended"]), ("default", [])):
        assert main(["run", "--app", "online-boutique", "--seed", "1", "--regime", "short-5", "--agent", "runbook",
                     "--run-dir", str(tmp_path / name), *extra]) == 0
    capsys.readouterr()
    bundles = {name: str(tmp_path / f"{name}.marathon") for name in ("extended", "default")}
    assert main(["score", "--json", "--no-degradation", bundles["extended"], bundles["default"]]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted(r["rule_pack"] for r in doc["runs"]) == ["sre-marathon-extended/3", "sre-marathon-paper/2"]
    assert main(["score", "--no-degradation", bundles["extended"]]) == 0
    out = capsys.readouterr().out
    assert "rule pack sre-marathon-extended/3, not the paper's sre-marathon-paper/2: not comparable" in out
    assert main(["score", "--no-degradation", bundles["default"]]) == 0
    assert "rule pack" not in capsys.readouterr().out


@pytest.mark.parametrize("name", ["KubePodCrashLooping", "CPUThrottlingHigh", "KubeClientErrors"])
def test_kube_prometheus_rules_are_upstreams_but_for_the_documented_departures(name: str) -> None:
    """Expression, ``for``, severity, summary, description and runbook as kube-prometheus ships
    them (../shared/data/prometheus-rules, the commit SOURCES.md names), once the departures the
    file's header lists are applied: no ``cluster`` label, and CPUThrottlingHigh without the
    kubelet's job and metrics_path matchers."""
    from alerts.rules import KUBE_PROMETHEUS_PATH, load_rule_file
    from tests.conftest import SHARED_DATA

    upstream = {r.name: r for r in load_rule_file(
        SHARED_DATA / "prometheus-rules" / "kubernetesControlPlane-prometheusRule.yaml",
        only_groups={"kubernetes-apps", "kubernetes-resources", "kubernetes-system"}).alerts}[name]
    ours = {r.name: r for r in load_rule_file(KUBE_PROMETHEUS_PATH).alerts}[name]

    def departures(text: str) -> str:
        text = text.replace('job="kubelet", metrics_path="/metrics/cadvisor", ', "").replace("cluster, ", "")
        text = text.replace(" on cluster {{ $labels.cluster }}", "")
        return " ".join(text.replace(", }", "}").split())  # the trailing comma left by the removal

    assert " ".join(ours.expr.split()) == departures(upstream.expr)
    assert (ours.for_s, ours.labels) == (upstream.for_s, upstream.labels)
    for key in ("summary", "description", "runbook_url"):
        assert " ".join(ours.annotations[key].split()) == departures(upstream.annotations[key]), key


def test_each_store_engine_has_its_exporters_counter() -> None:
    """The mapping of a store operation to its exporter's counter, for every engine of the
    shipped models."""
    from engine.apps.model import load_app
    from engine.sim.exporters import exporter_overhead, store_counter

    tt, shop, ob = load_app("train-ticket"), load_app("astronomy-shop"), load_app("online-boutique")
    mysql = tt.service("ts-voucher-mysql")
    assert [(c.family, c.label, c.value) for c in (store_counter(mysql, "SELECT voucher"),
                                                   store_counter(mysql, "INSERT voucher")) if c] == [
        ("mysql_global_status_innodb_row_ops_total", "operation", "read"),
        ("mysql_global_status_innodb_row_ops_total", "operation", "inserted")]
    assert exporter_overhead(mysql) is None  # its queries read information_schema, not InnoDB rows
    mongo = tt.service("ts-order-mongo")
    assert [getattr(store_counter(mongo, op), "value", None) for op in
            ("find orders", "insert orders", "update orders", "remove orders", "aggregate orders")] == \
        ["query", "insert", "update", "delete", "command"]
    assert store_counter(shop.service("postgresql"), "INSERT orders") is not None
    assert getattr(store_counter(shop.service("postgresql"), "INSERT orders"), "value", None) == "otel"
    assert getattr(store_counter(ob.service("redis-cart"), "HGET"), "value", None) == "hget"
    assert store_counter(shop.service("kafka"), "produce orders") is None
    assert store_counter(ob.service("frontend"), "GET /") is None
