"""The simulator's build pipeline keeps every change it was given (issue 11, item 6).

Hand-made scenarios on one :class:`~engine.sim.simulator.Simulator`: commits are based on
the repository head, builds of one service are serialized and land in commit order, and
a landing build moves only the commit (and its image) on the *current* pod template, so a
fault's change survives whatever else the pipeline ships meanwhile.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.apps.builds import build_seconds
from engine.run.orchestrator import Orchestrator, _add_comment
from engine.sim.k8s import PodTemplate
from engine.sim.simulator import Simulator
from engine.substrate import ChangeRecord, FaultInstance
from faults.generator import generate
from faults.spec import FaultSpec, load_catalog

BAD_IMAGE = "us-central1-docker.pkg.dev/online-boutique-ci/microservices-demo/productcatalogservice:v0.10.7-rc1"
SETTLE_S = 240.0
"""Build (at most 45 s here) plus a rolling update of two replicas, with room to spare, seconds."""


@pytest.fixture(scope="module")
def catalog() -> dict[str, FaultSpec]:
    return {f.id: f for f in load_catalog("online-boutique").faults}


@pytest.fixture
def sim() -> Simulator:
    s = Simulator("online-boutique", seed=11)
    s.advance(60)
    return s


def _template(sim: Simulator, service: str) -> PodTemplate:
    return sim.cluster.workloads[service].template


def _benign(sim: Simulator, service: str, path: str, note: str) -> ChangeRecord:
    """A documentation commit as the orchestrator ships it: a comment on top of ``path``."""
    text = sim.head_files(service)[path]
    return sim.deploy_change(service, files={path: _add_comment(path, text, note)}, summary=f"docs: {note}",
                             author="alice@corp.example")


def _settle(sim: Simulator, seconds: float = SETTLE_S, *insts: FaultInstance) -> None:
    """Advance in 15 s steps (the orchestrator's evaluation interval), finishing reverts."""
    end = sim.now + seconds
    while sim.now < end:
        sim.advance(min(end, sim.now + 15.0))
        for inst in insts:
            sim.finish_revert(inst)


def _fully_rolled_out(sim: Simulator, service: str) -> bool:
    wl = sim.cluster.workloads[service]
    pods = [p for p in wl.all_pods() if not p.terminating]
    return len(pods) == wl.replicas and all(p.template == wl.template and p.ready for p in pods)


def test_config_fault_applied_during_a_benign_build_survives_its_landing(sim: Simulator,
                                                                         catalog: dict[str, FaultSpec]) -> None:
    """(a) A benign code build is in flight; a config fault rolls out; the build lands on top."""
    spec = catalog["ob-productcatalog-extra-latency"]
    service = spec.target
    doc = _benign(sim, service, "server.go", "Deadlines are propagated from the incoming context.")
    assert doc.status == "building"
    sim.advance(sim.now + 10)
    sim.apply_fault(spec)
    _settle(sim)
    assert doc.status == "deployed"
    tpl = _template(sim, service)
    assert tpl.env_dict().get("EXTRA_LATENCY") == "1s", "the landing build re-applied the template it started from"
    assert tpl.commit == doc.commit
    assert "Deadlines are propagated" in sim.source_files(service)["server.go"]
    assert _fully_rolled_out(sim, service)
    res = sim.probe(spec.probe, spec.probe_anchor)
    assert not res.ok, f"the fault vanished when the benign build landed: {res.detail}"


def test_benign_commit_during_a_fault_build_composes_with_it(sim: Simulator, catalog: dict[str, FaultSpec]) -> None:
    """(b) A fault's commit is building; a benign commit to another file of the service follows."""
    spec = catalog["ob-currency-jpy-truncated-nanos"]
    service = spec.target
    assert spec.change is not None
    inst = sim.apply_fault(spec)
    sim.advance(sim.now + 10)
    doc = _benign(sim, service, "server.js", "Retries are the caller's job; this handler must stay idempotent.")
    assert sim.repos[service].head.parent == inst.changes[0].commit, "the benign commit is based on the head"
    _settle(sim)
    assert inst.changes[0].status == doc.status == "deployed"
    deployed = sim.source_files(service)
    assert spec.change.defect_marker() in deployed[spec.change.file], "the benign commit dropped the fault's change"
    assert "Retries are the caller's job" in deployed["server.js"]
    assert _template(sim, service).commit == sim.repos[service].head.id
    res = sim.probe(spec.probe, spec.probe_anchor)
    assert not res.ok, f"the fault vanished when the benign build landed: {res.detail}"


def test_revert_removes_only_its_own_change(sim: Simulator, catalog: dict[str, FaultSpec]) -> None:
    """(c) Fault A is live; a benign change and fault B (same file) are building; A is reverted."""
    spec_a, spec_b = catalog["ob-currency-jpy-truncated-nanos"], catalog["ob-currency-units-bigint"]
    assert spec_a.change is not None and spec_b.change is not None and spec_a.change.file == spec_b.change.file
    path = spec_a.change.file
    service = spec_a.target
    a = sim.apply_fault(spec_a)
    _settle(sim)
    assert spec_a.change.defect_marker() in sim.source_files(service)[path]
    doc = _benign(sim, service, path, "Money stays in units and nanos end to end.")
    sim.advance(sim.now + 5)
    b = sim.apply_fault(spec_b)
    sim.advance(sim.now + 5)
    shipped = sim.revert_fault(a)
    assert shipped and shipped[0].status == "building"
    _settle(sim, SETTLE_S + 2 * build_seconds("nodejs"), a)
    assert doc.status == b.changes[0].status == shipped[0].status == "deployed"
    deployed = sim.source_files(service)[path]
    assert spec_a.change.defect_marker() not in deployed, "the revert did not remove A"
    assert spec_b.change.defect_marker() in deployed, "the revert of A also dropped B"
    assert "Money stays in units and nanos end to end." in deployed, "the revert of A also dropped the benign change"
    assert sim.head_files(service)[path] == deployed
    assert not a.effect_ids, "A's effects are gone once its revert is deployed"
    res = sim.probe(spec_b.probe, spec_b.probe_anchor)
    assert not res.ok, f"fault B vanished with A's revert: {res.detail}"


def test_builds_of_one_service_land_in_submit_order(sim: Simulator) -> None:
    """(d) Two code commits and a config commit (no build) to one service, seconds apart."""
    service = "currencyservice"
    seconds = build_seconds(sim.app.service(service).language)
    first = _benign(sim, service, "money.js", "This path is hot: avoid allocations in the loop below.")
    sim.advance(sim.now + 5)
    second = _benign(sim, service, "server.js", "Errors are wrapped once, at the boundary.")
    assert f"queued behind {first.id}" in second.detail
    sim.advance(sim.now + 5)
    data = sorted(p for p in sim.head_files(service) if p.endswith(".json"))[0]
    config = sim.deploy_change(service, files={data: sim.head_files(service)[data].rstrip("\n") + "\n\n"},
                               summary="data: trailing newline", author="bob@corp.example", build=False)
    assert config.status == "building" and f"queued behind {second.id}" in config.detail, \
        "a commit without a build still waits for the builds before it"
    _settle(sim, SETTLE_S + 2 * seconds)
    recs = [first, second, config]
    assert all(r.status == "deployed" and r.t_deployed is not None for r in recs)
    landed = [r.t_deployed for r in recs]
    assert landed == sorted(landed) and len(set(landed[:2])) == 2, f"out of submit order: {landed}"
    assert (second.t_deployed or 0) - (first.t_deployed or 0) >= seconds - 1, "the second build started early"
    assert [r.revision for r in recs] == sorted(r.revision or 0 for r in recs)
    deployed = sim.source_files(service)
    assert _template(sim, service).commit == config.commit == sim.repos[service].head.id
    assert "avoid allocations" in deployed["money.js"] and "wrapped once" in deployed["server.js"]
    assert deployed[data].endswith("\n\n")


def test_image_set_during_a_build_is_kept(sim: Simulator) -> None:
    """(e) ``kubectl set image`` (or an image fault) while a code build runs: the build moves only the commit."""
    service = "productcatalogservice"
    rec = _benign(sim, service, "server.go", "Metrics labels stay low-cardinality: never put ids in them.")
    sim.advance(sim.now + 10)
    sim.deploy_change(service, image=BAD_IMAGE, summary="bump catalog", author="ci-bot")
    _settle(sim)
    assert rec.status == "deployed"
    tpl = _template(sim, service)
    assert tpl.image == BAD_IMAGE, "the landing build replaced the image set while it ran"
    assert tpl.commit == rec.commit
    assert "kept" in rec.detail and BAD_IMAGE in rec.detail
    waiting = {p.container.reason for p in sim.cluster.workloads[service].all_pods() if p.template == tpl}
    assert waiting & {"ErrImagePull", "ImagePullBackOff"}


def test_build_landing_after_a_rollback_deploys_the_head(sim: Simulator) -> None:
    """After a rollback, a build that lands deploys the head and its image, as a CD pipeline would."""
    service = "currencyservice"
    before = _template(sim, service)
    first = _benign(sim, service, "money.js", "Validation happens before any downstream call.")
    _settle(sim)
    second = _benign(sim, service, "server.js", "Keep the request log line short.")
    sim.advance(sim.now + 10)
    sim.rollback(service)
    assert _template(sim, service).commit == before.commit and _template(sim, service).image == before.image
    _settle(sim)
    tpl = _template(sim, service)
    assert tpl.commit == second.commit == sim.repos[service].head.id and tpl.image == second.image
    assert "Validation happens" in sim.source_files(service)["money.js"], "the head still has the first change"
    assert first.status == "deployed"


def test_deploy_patch_applies_to_the_head_and_says_when_it_is_ahead(tmp_path: Path) -> None:
    """``deploy_patch`` diffs apply to the repository head; a stale diff's error says the head moved."""
    run = Orchestrator(generate("online-boutique", 3, "short-5"), run_dir=tmp_path / "run")
    run.start()
    run.advance_to(420)
    run.tools.spend_time = False
    alerts = run.alert_history.instances if run.alert_history else []
    assert alerts
    res = run.tools.call("report_incident", {"alerts": [f"A-{alerts[0].id}"], "title": "test incident"})
    assert res.ok, res.error
    incident = str(res.data["incident"])
    service, path = "currencyservice", "server.js"
    run.sim.advance(run.sim.now + 240)  # whatever the schedule shipped has landed
    deployed = run.sim.source_files(service)[path]
    first = deployed.split("\n")[0]
    _benign(run.sim, service, path, "Deadlines are propagated from the incoming context.")
    head_first = run.sim.head_files(service)[path].split("\n")[0]
    stale = f"--- a/{path}\n+++ b/{path}\n@@ -1,1 +1,1 @@\n-{first}\n+{first} // reviewed\n"
    res = run.tools.call("deploy_patch", {"service": service, "diff": stale, "summary": "fix", "incident": incident})
    assert not res.ok and "does not apply" in (res.error or "")
    assert "1 commit ahead of the deployed revision" in (res.error or "") and "get_deploy_history" in (res.error or "")
    fresh = f"--- a/{path}\n+++ b/{path}\n@@ -1,1 +1,1 @@\n-{head_first}\n+{head_first} // reviewed\n"
    res = run.tools.call("deploy_patch", {"service": service, "diff": fresh, "summary": "fix", "incident": incident})
    assert res.ok, res.error
    run.sim.advance(run.sim.now + SETTLE_S)
    text = run.sim.source_files(service)[path]
    assert text.split("\n")[0] == f"{head_first} // reviewed" and "Deadlines are propagated" in text
