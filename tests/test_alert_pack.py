"""The frozen SRE-Marathon rule pack: exactly the paper's rules, silent on healthy runs, each rule
fires on a fault made for it; the opt-in extended pack adds ServiceErrorRate and kube-prometheus'
background-noise rules on top of it.

The healthy runs print their noise level (the highest 5xx shares and p95 latencies the
rules saw), so the margin to every threshold is visible in the test output.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from alerts.evaluator import AlertEvaluator, AlertTransition
from alerts.promql import instant_query
from alerts.promql.engine import SelectorNode, walk
from alerts.rules import (
    EXTENDED_PATH,
    KUBE_PROMETHEUS_PATH,
    PACK_PATH,
    PACKS,
    RuleFileError,
    load_pack,
    load_rule_text,
    pack_identity,
)
from engine.apps.model import builtin_apps, load_app
from engine.sim.effects import Effect
from engine.sim.simulator import Simulator

PACK_RULES = ["HighRequestErrorRate", "EndpointErrorRate", "HighRequestLatency", "PodStatusError",
              "FailedPodsDetected", "DeploymentNotReady", "DeploymentReplicasUnavailable",
              "DeploymentGenerationMismatch", "ContainerOOMKilled", "PodNotReady"]
"""SRE-Marathon Table 4 (the first six) and Table 6 (the runbook's other four)."""

ENTRY_RULES = ("HighRequestErrorRate", "EndpointErrorRate")


def test_pack_has_the_design_rules_with_table_4_settings() -> None:
    rs = load_pack()
    assert [r.name for r in rs.rules] == [r.name for r in rs.alerts], "the paper pack has no recording rule"
    alerts = {r.name: r for r in rs.alerts}
    assert sorted(alerts) == sorted(PACK_RULES) and len(rs.alerts) == len(PACK_RULES)
    hre = alerts["HighRequestErrorRate"]
    assert hre.labels["severity"] == "critical" and hre.for_s == 60.0 and "> 0.10" in hre.expr
    assert "> 0.50" in alerts["EndpointErrorRate"].expr
    assert "> 3" in alerts["HighRequestLatency"].expr
    for rule in alerts.values():
        assert {"summary", "description"} <= set(rule.annotations), rule.name
        assert "severity" in rule.labels, rule.name


def test_entry_services_in_the_pack_match_the_app_models() -> None:
    expected = set()
    for name in builtin_apps():
        app = load_app(name)
        expected |= {(app.namespace, route.entry.service) for route in app.routes}
    rules = {r.name: r for r in load_pack().alerts}
    for rule_name in ENTRY_RULES:
        pairs = set()
        for node in walk(rules[rule_name].node):
            if isinstance(node, SelectorNode):
                m = {x.name: x.value for x in node.matchers if x.op == "="}
                if "namespace" in m:
                    pairs.add((m["namespace"], m["service"]))
        assert pairs == expected, rule_name


NOISE_RULES = ["Watchdog", "KubeClientCertificateExpiration", "KubeClientCertificateExpiration", "KubeClientErrors",
               "CPUThrottlingHigh"]
"""kube-prometheus' rules for a cluster's background noise, in the extended pack only."""


def test_extended_pack_is_the_paper_pack_plus_service_error_rate_and_noise_rules() -> None:
    paper, extended = load_pack("paper"), load_pack("extended")
    assert [r.name for r in extended.alerts] == [r.name for r in paper.alerts] + ["ServiceErrorRate", *NOISE_RULES]
    assert [r.expr for r in extended.alerts][:len(PACK_RULES)] == [r.expr for r in paper.alerts]
    assert extended.sources == [str(PACK_PATH), str(EXTENDED_PATH), str(KUBE_PROMETHEUS_PATH)]
    assert not set(NOISE_RULES) & {r.name for r in paper.alerts}
    assert load_pack(PACK_PATH).sources == [str(PACK_PATH)]  # a path is a rule file


def test_pack_identity_names_the_version_and_the_file_digests(tmp_path: Path) -> None:
    import hashlib

    def sha(p: Path) -> str:
        return hashlib.sha256(p.read_bytes()).hexdigest()

    assert pack_identity() == pack_identity("paper") == {
        "pack": "paper", "id": PACKS["paper"].id, "files": {"sre-marathon.rules.yaml": sha(PACK_PATH)}}
    assert PACKS["paper"].id.startswith("sre-marathon-paper/")
    ext = pack_identity("extended")
    assert ext["pack"] == "extended" and ext["id"] != PACKS["paper"].id
    assert ext["files"] == {"sre-marathon.rules.yaml": sha(PACK_PATH), "extended.rules.yaml": sha(EXTENDED_PATH),
                            "kube-prometheus.rules.yaml": sha(KUBE_PROMETHEUS_PATH)}
    mine = tmp_path / "mine.rules.yaml"
    mine.write_text("groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up == 0\n")
    assert pack_identity(str(mine)) == {"pack": "file", "id": "file:mine.rules.yaml",
                                        "files": {"mine.rules.yaml": sha(mine)}}
    with pytest.raises(RuleFileError, match=r"no such rule pack or rule file.*paper, extended"):
        pack_identity("papr")
    with pytest.raises(RuleFileError, match="no such rule pack"):
        load_pack("nosuch")


_PAPER_SHA = "a931f6100f9118de2fff632bbbde87f9f72e4d8e61ad12d1c1614c3e0cb6bddd"
_EXTENDED_SHA = "de95f31a47287c8add7d6a2090cdea4c915aa516e75a5b7ca46730002a075992"
_EXTENDED_SHA_2 = "f18acb32ad6235be25d92c7e05e67feaddab76731f82cfeaf9f2f5b22594c96a"
_KUBE_PROMETHEUS_SHA = "e43d9b6afe9f33032d69dd53c48381f19174e2a8afcae63eba09148b7d15c0ea"
FROZEN = {
    "sre-marathon-paper/2": {"sre-marathon.rules.yaml": _PAPER_SHA},
    "sre-marathon-extended/1": {"sre-marathon.rules.yaml": _PAPER_SHA, "extended.rules.yaml": _EXTENDED_SHA},
    "sre-marathon-extended/2": {"sre-marathon.rules.yaml": _PAPER_SHA, "extended.rules.yaml": _EXTENDED_SHA_2,
                                "kube-prometheus.rules.yaml": _KUBE_PROMETHEUS_SHA},
}
"""The file digests each pack version was released with: editing a pack file means a new id."""


def test_pack_versions_are_frozen() -> None:
    for name in PACKS:
        ident = pack_identity(name)
        assert FROZEN.get(ident["id"]) == ident["files"], (
            f"pack {name!r} changed but its id {ident['id']!r} did not: bump the version in alerts.rules.PACKS "
            f"(and in the file header), then record the new digests here")


def test_prometheus_config_copies_the_chosen_packs_files(tmp_path: Path) -> None:
    import shutil
    import subprocess

    import yaml

    from alerts.live import write_prometheus_config

    for name, files in (("paper", [PACK_PATH]), ("extended", [PACK_PATH, EXTENDED_PATH, KUBE_PROMETHEUS_PATH])):
        out = tmp_path / name
        cfg = yaml.safe_load(write_prometheus_config(out, ["127.0.0.1:9464"], rules=name).read_text())
        assert cfg["rule_files"] == [f.name for f in files]
        for f in files:
            assert (out / f.name).read_bytes() == f.read_bytes()
        if shutil.which("promtool"):
            res = subprocess.run(["promtool", "check", "config", str(out / "prometheus.yml")],
                                 capture_output=True, text=True, check=False)
            assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.parametrize("app", ["online-boutique", "astronomy-shop", "train-ticket"])
def test_pack_silent_on_a_healthy_30_minute_run(app: str, capsys: pytest.CaptureFixture[str]) -> None:
    sim = Simulator(app, seed=11)
    sim.advance(1800)
    ev = AlertEvaluator()
    transitions = ev.step(sim.store, 1800)
    assert ev.rule_errors() == {}
    assert transitions == [], [(t.t, t.rule, t.labels) for t in transitions]

    def worst(expr: str) -> tuple[str, float]:
        best = ("-", 0.0)
        for t in range(120, 1801, 60):
            r = instant_query(expr, ev.storage, t * 1000)
            for lid, v in zip(r.lids.tolist(), r.vals.tolist(), strict=True):  # type: ignore[union-attr]
                if v > best[1]:
                    best = (ev.storage.labels.format(lid), v)
        return best

    errors = 'rate(http_requests_total{entry="true", code=~"5.."}[2m])'
    requests = 'rate(http_requests_total{entry="true"}[2m])'
    share = worst(f"sum by (service) ({errors}) / sum by (service) ({requests})")
    route = worst(f"sum by (handler) ({errors}) / sum by (handler) ({requests})")
    p95 = worst("histogram_quantile(0.95, sum by (service, le) (rate(http_request_duration_seconds_bucket[5m])))")
    with capsys.disabled():
        print(f"\n[{app}] healthy noise: entry 5xx share max {100 * share[1]:.3f}% ({share[0]}; threshold 10%), "
              f"route 5xx share max {100 * route[1]:.2f}% ({route[0]}; threshold 50%), "
              f"p95 max {p95[1]:.2f} s ({p95[0]}; threshold 3 s)")
    assert share[1] < 0.10 and route[1] < 0.5 and p95[1] < 3.0


def _fired(transitions: list[AlertTransition]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for tr in transitions:
        if tr.to_state == "firing":
            target = tr.labels.get("service") or tr.labels.get("deployment") or tr.labels.get("pod", "")
            out.setdefault(tr.rule, set()).add(target)
    return out


def test_each_rule_fires_on_its_fault() -> None:
    sim = Simulator("online-boutique", seed=3)
    ev = AlertEvaluator()
    sim.advance(60)
    assert ev.step(sim.store, 60) == []
    pods = sorted(sim.cluster.pods)
    sim.inject(Effect(id="err-all", service="frontend", error_rate=0.3))
    sim.inject(Effect(id="err-route", service="frontend", operations=("POST /cart",), error_rate=1.0))
    sim.inject(Effect(id="slow", service="productcatalogservice", latency_add_s=4.0))
    sim.deploy_change("cartservice", image="us-central1-docker.pkg.dev/google-samples/microservices-demo/"
                      "cartservice:v9.9.9", summary="bad image", author="test")
    sim.inject(Effect(id="unready-all", service="adservice", readiness_fails=True))
    one = next(p for p in pods if p.startswith("emailservice"))
    sim.inject(Effect(id="unready-one", service="emailservice", readiness_fails=True, pod=one))
    sim.inject(Effect(id="leak", service="recommendationservice", memory_leak_bps=2e6))
    sim.inject(Effect(id="crash", service="shippingservice", crash_on_start=True))
    sim.restart_pod(next(p for p in pods if p.startswith("shippingservice")))
    sim.advance(900)
    fired = _fired(ev.step(sim.store, 900))
    assert "frontend" in fired["HighRequestErrorRate"]
    assert "frontend" in fired["EndpointErrorRate"]
    assert "productcatalogservice" in fired["HighRequestLatency"]
    assert any(p.startswith("cartservice") for p in fired["PodStatusError"])  # ImagePullBackOff
    assert any(p.startswith("shippingservice") for p in fired["PodStatusError"])  # CrashLoopBackOff
    assert "adservice" in fired["DeploymentNotReady"]
    assert "emailservice" in fired["DeploymentReplicasUnavailable"]
    assert "cartservice" in fired["DeploymentGenerationMismatch"]
    assert any(p.startswith("recommendationservice") for p in fired["ContainerOOMKilled"])
    assert one in fired["PodNotReady"]
    assert ev.history is not None and ev.history.firing()


def test_service_error_rate_only_in_the_extended_pack() -> None:
    """A defect failing half of an optional call (ads: the frontend renders the page without
    them) is invisible to the paper's entry-point rules and pages only through the extended
    pack's per-operation ServiceErrorRate."""
    sim = Simulator("online-boutique", seed=3)
    sim.advance(60)
    sim.inject(Effect(id="ads-half", service="adservice", error_rate=0.5))
    sim.advance(720)
    paper = _fired(AlertEvaluator(load_pack("paper")).step(sim.store, 720))
    extended = _fired(AlertEvaluator(load_pack("extended")).step(sim.store, 720))
    assert paper == {}, paper
    # Watchdog is always firing (vector(1)); nothing else of the noise rules without noise series.
    assert extended == {"ServiceErrorRate": {"adservice"}, "Watchdog": {""}}, extended


def test_failed_pods_detected_on_a_failed_pod() -> None:
    """The simulator has no mechanism that leaves a pod in phase Failed (yet), so the
    series a kube-state-metrics would export for an evicted pod are fed directly."""
    ev = AlertEvaluator()
    base = {"__name__": "kube_pod_status_phase", "job": "kube-state-metrics", "namespace": "shop", "pod": "web-1",
            "uid": "u1"}
    out: list[AlertTransition] = []
    for k in range(8):
        failed = 1.0 if k >= 2 else 0.0
        ev.ingest_samples(15.0 * k, [({**base, "phase": "Running"}, 1.0 - failed),
                                     ({**base, "phase": "Failed"}, failed)])
        out += ev.evaluate(15.0 * k)
    fired = [t for t in out if t.rule == "FailedPodsDetected" and t.to_state == "firing"]
    assert len(fired) == 1 and fired[0].t == 30.0 and fired[0].labels["pod"] == "web-1"
    assert fired[0].annotations["summary"] == "Pod shop/web-1 failed"


@pytest.mark.parametrize(("expr", "message", "token"), [
    ("sum(rate(x[5m])", "could not parse expression: unclosed left parenthesis", None),
    ("rate(x[5m]) + nosuchfn(x)", "unknown function with name 'nosuchfn'", "nosuchfn"),
    ("sort_by_label(x, \"a\")", "unsupported by the embedded evaluator: function sort_by_label", "sort_by_label"),
    ("x + fill(0) y", "fill() modifier", "fill"),
])
def test_bad_rule_file_names_file_rule_and_position(tmp_path: Path, expr: str, message: str,
                                                     token: str | None) -> None:
    text = ("groups:\n  - name: g1\n    rules:\n      - alert: Fine\n        expr: up == 0\n"
            f"      - alert: Broken\n        expr: '{expr}'\n")
    path = tmp_path / "bad.rules.yaml"
    path.write_text(text)
    with pytest.raises(RuleFileError) as info:
        from alerts.rules import load_rule_file

        load_rule_file(path)
    err = info.value
    assert err.group == "g1" and err.rule == "Broken" and err.line == 7 and err.column == 15
    assert str(path) in str(err) and message in str(err) and ":7:15:" in str(err)
    assert err.expr_offset == (expr.index(token) if token else None)


def test_structural_errors_name_the_field() -> None:
    with pytest.raises(RuleFileError, match=r'group "g", rule 1, "A": for: Value error|for: not a valid duration'):
        load_rule_text("groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    for: 5 minutes\n", "x.yaml")
    with pytest.raises(RuleFileError, match="exactly one of 'alert' or 'record'"):
        load_rule_text("groups:\n- name: g\n  rules:\n  - expr: up\n", "x.yaml")
    with pytest.raises(RuleFileError, match=r'annotations\.d: template: __alert_A:1: function "nosuch" not defined'):
        load_rule_text("groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    annotations:\n"
                       "      d: '{{ nosuch \"up\" }}'\n", "x.yaml")


def test_pack_file_is_where_the_docs_say() -> None:
    assert PACK_PATH.name == "sre-marathon.rules.yaml" and PACK_PATH.is_file()
