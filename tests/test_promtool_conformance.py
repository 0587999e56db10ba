"""The embedded evaluator against Prometheus itself (``promtool`` 2.42).

Simulator runs with several overlapping faults are recorded, the embedded evaluator's
firing alerts (labels and annotations) at every 15-second evaluation and its pending
alerts (as ``ALERTS{alertstate="pending"}``) are written as a ``promtool test rules``
file over the exact samples, and promtool must pass it -- for the SRE-Marathon pack and
for the ``kubernetes-apps`` group of the real kube-prometheus rules. A negative control
checks that promtool does fail when one expected alert is removed.

Without promtool the tests skip, except in CI (``CI`` set), where they fail.
"""

from __future__ import annotations

import collections
from pathlib import Path

import pytest
import yaml

from alerts.evaluator import AlertEvaluator
from alerts.promtool import RecordedRun, record_run, run_promtool, staggered, unit_test_yaml
from alerts.rules import PACK_PATH, load_rule_file
from engine.sim.effects import Effect
from engine.sim.simulator import Simulator
from tests.conftest import SHARED_DATA
from tests.conftest import need_promtool as _need_promtool

KUBE_RULES = SHARED_DATA / "prometheus-rules" / "kubernetesControlPlane-prometheusRule.yaml"
BAD_IMAGE = "us-central1-docker.pkg.dev/google-samples/microservices-demo/cartservice:v9.9.9"


def _faulted_online_boutique(seed: int, minutes: float, *, scale_to_zero: bool = True) -> Simulator:
    """Online Boutique with overlapping faults: a 100 % error route, added latency, a bad
    image rollout, a deployment scaled to 0 (currencyservice: the frontend's calls fail),
    a service whose pods all fail readiness, a memory leak (OOMKilled), a crash on start,
    one pod failing readiness; all but the rollout reverted after 15 minutes."""
    sim = Simulator("online-boutique", seed)
    sim.advance(60)
    pods = sorted(sim.cluster.pods)
    sim.inject(Effect(id="err-route", service="frontend", operations=("POST /cart",), error_rate=1.0))
    sim.inject(Effect(id="slow", service="productcatalogservice", latency_add_s=4.0))
    sim.deploy_change("cartservice", image=BAD_IMAGE, summary="bad image", author="test")
    if scale_to_zero:
        sim.scale("currencyservice", 0)
    sim.inject(Effect(id="unready", service="adservice", readiness_fails=True))
    sim.inject(Effect(id="leak", service="recommendationservice", memory_leak_bps=2e6))
    sim.inject(Effect(id="crash", service="shippingservice", crash_on_start=True))
    sim.restart_pod(next(p for p in pods if p.startswith("shippingservice")))
    sim.inject(Effect(id="notready", service="emailservice", readiness_fails=True,
                      pod=next(p for p in pods if p.startswith("emailservice"))))
    sim.advance(900)
    for eff in ("err-route", "slow", "leak", "crash", "notready", "unready"):
        sim.revert(eff)
    if scale_to_zero:
        sim.scale("currencyservice", 2)
    sim.advance(minutes * 60)
    return sim


def _embedded(sim: Simulator, rules: object) -> tuple[AlertEvaluator, RecordedRun]:
    """The run's samples on promtool's grid, behind :func:`staggered`'s creation prefix (so
    promtool adds in the embedded series order: its own is random per run), evaluated at
    every step from the prefix on."""
    ev = AlertEvaluator(rules)  # type: ignore[arg-type]
    for scrape in sim.store.scrapes:
        if scrape.t % 15 == 0:  # promtool's input grid; the first warm-up scrape is off it
            ev.ingest(scrape, sim.store.info)
    ev = staggered(ev)
    st = ev.storage
    run = record_run(ev, int(st.ts[0]), int(st.ts[st.n_rows - 1]), 15_000)
    return ev, run


def _check(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    res = run_promtool("test", "rules", str(path))
    assert res.returncode == 0, f"promtool disagrees with the embedded evaluator:\n{res.stdout[-6000:]}{res.stderr}"


def _counts(run: RecordedRun) -> collections.Counter[tuple[str, str]]:
    return collections.Counter((a.rule, a.state) for snap in run.alerts for a in snap)


def test_promtool_check_rules_pack() -> None:
    _need_promtool()
    res = run_promtool("check", "rules", *map(str, sorted(PACK_PATH.parent.glob("*.yaml"))))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "SUCCESS" in res.stdout


def test_pack_agrees_with_promtool(tmp_path: Path) -> None:
    _need_promtool()
    sim = _faulted_online_boutique(seed=3, minutes=35)
    ev, run = _embedded(sim, None)
    assert not ev.rule_errors()
    counts = _counts(run)
    fired = {rule for rule, state in counts if state == "firing"}
    expected = {"HighRequestErrorRate", "HighRequestLatency", "EndpointErrorRate", "PodStatusError",
                "DeploymentNotReady", "DeploymentReplicasUnavailable", "DeploymentGenerationMismatch",
                "ContainerOOMKilled", "PodNotReady"}
    assert expected <= fired, f"rules that never fired: {expected - fired}"
    text = unit_test_yaml(ev, run, PACK_PATH)
    _check(tmp_path, "pack_test.yml", text)

    # Negative control: drop one expected firing alert; promtool must now fail.
    doc = yaml.safe_load(text)
    case = next(c for c in doc["tests"][0]["alert_rule_test"] if c["exp_alerts"])
    case["exp_alerts"] = case["exp_alerts"][1:]
    bad = tmp_path / "pack_test_broken.yml"
    bad.write_text(yaml.safe_dump(doc, sort_keys=False, width=1 << 20))
    res = run_promtool("test", "rules", str(bad))
    assert res.returncode != 0 and "FAILED" in res.stdout + res.stderr


def test_kubernetes_apps_group_agrees_with_promtool(tmp_path: Path) -> None:
    _need_promtool()
    if not KUBE_RULES.is_file():
        pytest.skip(f"kube-prometheus rules not found at {KUBE_RULES}")
    source = yaml.safe_load(KUBE_RULES.read_text())
    groups = [g for g in source["spec"]["groups"] if g["name"] == "kubernetes-apps"]
    rule_file = tmp_path / "kubernetes-apps.rules.yaml"
    rule_file.write_text(yaml.safe_dump({"groups": groups}, sort_keys=False))
    rules = load_rule_file(rule_file)
    sim = _faulted_online_boutique(seed=5, minutes=70, scale_to_zero=False)
    ev, run = _embedded(sim, rules)
    assert not ev.rule_errors()
    counts = _counts(run)
    # The rules whose series the simulator exports: these must fire (or at least go pending).
    for rule in ("KubePodCrashLooping", "KubePodNotReady", "KubeDeploymentRolloutStuck",
                 "KubeDeploymentReplicasMismatch"):
        assert (rule, "firing") in counts, f"{rule} never fired: {counts}"
    assert ("KubeContainerWaiting", "pending") in counts
    _check(tmp_path, "kubernetes_apps_test.yml", unit_test_yaml(ev, run, rule_file))
