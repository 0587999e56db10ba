"""The operator's Kubernetes API as an admission step (issue 15 part 3, :mod:`engine.run.kubeapi`).

Each write reaching :class:`engine.run.kubeapi.OperatorMutator` is one act call through the run's
policy layer, recorded with its raw request; these tests are the adversaries (writes without an
incident, with a resolved one, on harness objects, Nodes, chaos objects, a delete loop against
the rate limit) and the equivalence proof: the same act through the typed tool and through the
API records the same events and earns the same score, and a bundle with API writes replays.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from engine.apps.model import Probe, ResourceList, Resources
from engine.kube.protocol import ApiError, DeploymentChange, NodeChange, Requester
from engine.operate.policy import MAX_ACTS_PER_INVOCATION
from engine.operate.toolargs import MARKER_KEY, bound_request
from engine.run.kubeapi import INCIDENT_ANNOTATION, OperatorMutator, request_record, write_modes
from engine.run.orchestrator import Orchestrator
from engine.run.replay import replay
from engine.run.sealinputs import seal_run
from engine.run.session import RunSession
from faults.generator import generate
from scoring.score import score_events
from tests import test_serve
from tui.human import HumanOperator

NS = "online-boutique"
SEED = 2
server = test_serve.server  # the tool server's fixtures: ``marathon serve`` in a subprocess, the oracle's calls
reference = test_serve.reference


def _run(tmp_path: Path | None = None, name: str = "run", until: float = 150.0) -> Orchestrator:
    run = Orchestrator(generate("online-boutique", SEED, "short-5"), operator=HumanOperator(),
                       run_dir=None if tmp_path is None else tmp_path / name)
    run.start()
    run.advance_to(until)
    return run


def _incident(run: Orchestrator, title: str = "frontend rollout stuck") -> str:
    alerts = run.alert_history.instances if run.alert_history else []
    assert alerts, "the run raised alerts by now"
    res = run.tools.call("report_incident", {"alerts": [f"A-{alerts[0].id}"], "title": title})
    assert res.ok, res.error
    return str(res.data["incident"])


def _req(incident: str | None, path: str, method: str = "PATCH", body: str = "",
         content_type: str = "application/strategic-merge-patch+json") -> Requester:
    return Requester("operator", incident, method, path, content_type, body)


def _deploy_path(name: str, sub: str = "") -> str:
    return f"/apis/apps/v1/namespaces/{NS}/deployments/{name}{sub}"


def _pod(run: Orchestrator, service: str) -> str:
    return next(p["metadata"]["name"] for p in run.sim.objects("Pod") if p["metadata"]["labels"]["app"] == service)


def _calls(run: Orchestrator) -> list[dict[str, Any]]:
    return [e.payload for e in run.stream.events if e.kind == "tool.call"]


def _actions(run: Orchestrator) -> list[dict[str, Any]]:
    return [e.payload for e in run.stream.events if e.kind == "action.executed"]


def _raises(code: int, fn: Any, *args: Any) -> ApiError:
    with pytest.raises(ApiError) as info:
        fn(*args)
    assert info.value.code == code, info.value.message
    return info.value


# --------------------------------------------------------------------- incidents


def test_a_write_without_an_incident_is_forbidden_says_how_and_is_recorded() -> None:
    run = _run()
    inc = _incident(run)
    mut = OperatorMutator(run)
    err = _raises(403, mut.change_deployment, DeploymentChange("frontend", replicas=3),
                  _req(None, _deploy_path("frontend", "/scale")))
    assert err.reason == "Forbidden"
    assert err.message.startswith('deployments.apps "frontend" is forbidden: ')
    for how in ("--as=<incident>", "fieldManager", INCIDENT_ANNOTATION, inc):
        assert how in err.message, how
    assert err.details == {"name": "frontend", "group": "apps", "kind": "deployments"}
    call = _calls(run)[-1]
    # Recorded as the typed call without an incident is: invalid arguments, with the raw request.
    assert call["tool"] == "scale_deployment" and not call["allowed"] and call["reason"] == "invalid arguments"
    assert call["request"]["path"] == _deploy_path("frontend", "/scale") and call["request"]["method"] == "PATCH"
    assert not _actions(run) and run.sim.workload("frontend").replicas != 3
    # kubectl's own default field manager (kubectl set image sends fieldManager=kubectl-set) names none.
    err = _raises(403, mut.change_deployment, DeploymentChange("frontend", image="x:1"),
                  _req("kubectl-set", _deploy_path("frontend") + "?fieldManager=kubectl-set"))
    assert "must name the open incident" in err.message
    assert _calls(run)[-1]["reason"] == "invalid arguments" and "incident" not in _calls(run)[-1]["args"]


def test_a_resolved_or_unknown_incident_is_denied_by_the_policy() -> None:
    run = _run()
    inc = _incident(run)
    assert run.tools.call("resolve_incident", {"incident": inc}).ok
    mut = OperatorMutator(run)
    for named in (inc, "INC-9999"):
        err = _raises(403, mut.delete_pod, _pod(run, "frontend"), _req(named, f"/api/v1/namespaces/{NS}/pods/x",
                                                                         "DELETE"))
        assert "must name an open incident" in err.message and "--as=<incident>" in err.message
        call = _calls(run)[-1]
        assert call["tool"] == "restart_pod" and call["args"]["incident"] == named and not call["allowed"]
        assert call["targets"] == ["frontend"]
    assert not _actions(run)


# --------------------------------------------------------------------- the act table


def test_each_write_is_the_typed_act_it_is() -> None:
    run = _run()
    inc = _incident(run)
    mut = OperatorMutator(run)
    rev = run.sim.workload("frontend").revision
    writes: list[tuple[Any, tuple[Any, ...], str, dict[str, Any]]] = [
        (mut.change_deployment, (DeploymentChange("adservice", replicas=3),), "scale_deployment",
         {"deployment": "adservice", "replicas": 3}),
        (mut.delete_pod, (_pod(run, "cartservice"),), "restart_pod", {"pod": _pod(run, "cartservice")}),
        (mut.change_deployment, (DeploymentChange("emailservice", restart=True),), "rollout_restart",
         {"deployment": "emailservice"}),
        (mut.change_deployment, (DeploymentChange("currencyservice", env={"LOG_LEVEL": "debug"}),), "set_config",
         {"service": "currencyservice", "key": "LOG_LEVEL", "value": "debug"}),
        (mut.change_deployment, (DeploymentChange("currencyservice", env={"LOG_LEVEL": None}),), "set_config",
         {"service": "currencyservice", "key": "LOG_LEVEL", "value": None}),
        (mut.change_deployment, (DeploymentChange("frontend", rollback_to=rev - 1),), "rollback",
         {"deployment": "frontend", "revision": rev - 1}),
        (mut.patch_service, ("adservice", {"app": "adservice"}, 9555), "patch_service",
         {"service": "adservice", "selector": {"app": "adservice"}, "target_port": 9555}),
        (mut.scale_statefulset, ("redis-cart", 1), "scale_deployment", {"deployment": "redis-cart", "replicas": 1}),
    ]
    resources = Resources(requests=ResourceList(cpu="150m", memory="96Mi"), limits=ResourceList(memory="192Mi"))
    writes.append((mut.change_deployment, (DeploymentChange("adservice", resources=resources),), "set_resources",
                   {"deployment": "adservice", "resources": resources.model_dump()}))
    probe = Probe(type="http", port=8080, path="/_healthz", period_s=5)
    writes.append((mut.change_deployment, (DeploymentChange("checkoutservice", liveness_probe=probe),), "set_probe",
                   {"deployment": "checkoutservice", "probe": "liveness", "spec": probe.model_dump()}))
    writes.append((mut.change_deployment, (DeploymentChange("checkoutservice", readiness_probe=None),), "set_probe",
                   {"deployment": "checkoutservice", "probe": "readiness", "spec": None}))
    image = run.sim.workload("shippingservice").image
    writes.append((mut.change_deployment, (DeploymentChange("shippingservice", image=image),), "set_image",
                   {"deployment": "shippingservice", "image": image}))
    for i, (fn, args, tool, want) in enumerate(writes):
        run.tools.policy.new_invocation()  # the per-invocation rate limit is not what this test checks
        fn(*args, _req(inc, f"/path/{i}", body=json.dumps({"i": i})))
        call = _calls(run)[-1]
        assert (call["tool"], call["allowed"], call["ok"]) == (tool, True, True), call
        assert call["args"] == {**want, "incident": inc}, call["args"]
        assert call["request"] == bound_request(request_record(_req(inc, f"/path/{i}", body=json.dumps({"i": i}))))
        action = _actions(run)[-1]
        assert action["tool"] == tool and action["args"] == call["args"] and action["targets"] == call["targets"]
    assert run.sim.workload("adservice").replicas == 3
    assert run.sim.workload("frontend").revision == rev + 1  # the old template is the newest revision
    assert run.sim.deploy_history("emailservice")[-1].kind == "restart"
    assert run.sim.workload("adservice").resources == resources
    checkout = run.sim.workload("checkoutservice")
    assert checkout.liveness_probe == probe and checkout.readiness_probe is None


def test_writes_that_are_no_single_act_are_refused_and_not_recorded() -> None:
    run = _run()
    inc = _incident(run)
    mut = OperatorMutator(run)
    before = len(run.stream.events)
    _raises(422, mut.change_deployment, DeploymentChange("frontend", image="x:1", env={"A": "1"}),
            _req(inc, _deploy_path("frontend")))
    _raises(422, mut.change_deployment, DeploymentChange("frontend", env={"A": "1", "B": "2"}),
            _req(inc, _deploy_path("frontend")))
    _raises(422, mut.change_deployment, DeploymentChange("frontend", other=("spec.template.spec.hostNetwork",)),
            _req(inc, _deploy_path("frontend")))
    _raises(422, mut.change_deployment, DeploymentChange("frontend", readiness_probe=None, liveness_probe=None),
            _req(inc, _deploy_path("frontend")))
    err = _raises(403, mut.change_deployment, DeploymentChange("flagd", env={"X": "1"}),
                  _req(inc, _deploy_path("flagd")))
    assert "set_config" in err.message
    err = _raises(422, mut.patch_service, "frontend", None, "http", _req(inc, f"/api/v1/namespaces/{NS}/services/x"))
    assert err.reason == "Invalid"
    mut.change_deployment(DeploymentChange("frontend"), _req(inc, _deploy_path("frontend")))  # empty: a no-op
    assert len(run.stream.events) == before


# --------------------------------------------------------------------- adversaries


def test_harness_objects_nodes_chaos_and_other_namespaces_are_forbidden() -> None:
    run = _run()
    inc = _incident(run)
    mut = OperatorMutator(run)
    # The load generator is in the app's namespace but outside the application: the policy denies it.
    err = _raises(403, mut.change_deployment, DeploymentChange("loadgenerator", replicas=0),
                  _req(inc, _deploy_path("loadgenerator", "/scale")))
    assert "outside the application" in err.message
    call = _calls(run)[-1]
    assert call["tool"] == "scale_deployment" and call["targets"] == ["loadgenerator"] and not call["allowed"]
    recorded = len(run.stream.events)
    # A harness namespace, a Node, a chaos object: refused before admission, as RBAC would.
    err = _raises(403, mut.delete_pod, "prometheus-0",
                  _req(inc, "/api/v1/namespaces/monitoring/pods/prometheus-0", "DELETE"))
    assert 'namespace "monitoring"' in err.message and "harness" in err.message
    node = run.sim.objects("Node")[0]["metadata"]["name"]
    err = _raises(403, mut.change_node, NodeChange(node, unschedulable=True), _req(inc, f"/api/v1/nodes/{node}"))
    assert err.message.startswith(f'nodes "{node}" is forbidden')
    chaos = {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "StressChaos", "metadata": {"name": "x"}}
    err = _raises(404, mut.create_custom, "chaos-mesh.org", "v1alpha1", "stresschaos", NS, chaos,
                  _req(inc, f"/apis/chaos-mesh.org/v1alpha1/namespaces/{NS}/stresschaos", "POST"))
    assert err.reason == "NotFound"
    _raises(404, mut.delete_custom, "chaos-mesh.org", "v1alpha1", "stresschaos", NS, "x",
            _req(inc, f"/apis/chaos-mesh.org/v1alpha1/namespaces/{NS}/stresschaos/x", "DELETE"))
    assert len(run.stream.events) == recorded
    # A pod that does not exist: NotFound, recorded as the typed call (no target).
    err = _raises(404, mut.delete_pod, "frontend-nope", _req(inc, f"/api/v1/namespaces/{NS}/pods/frontend-nope",
                                                             "DELETE"))
    assert err.message == 'pods "frontend-nope" not found'
    assert _calls(run)[-1]["tool"] == "restart_pod" and _calls(run)[-1]["targets"] == []


def test_a_delete_loop_hits_the_rate_limit_like_the_typed_tool() -> None:
    run = _run()
    inc = _incident(run)
    mut = OperatorMutator(run)
    run.tools.spend_time = False  # as in marathon play: every delete lands in the same invocation
    run.tools.policy.new_invocation()
    outcomes = []
    for _ in range(MAX_ACTS_PER_INVOCATION + 3):
        try:
            mut.delete_pod(_pod(run, "frontend"), _req(inc, f"/api/v1/namespaces/{NS}/pods/p", "DELETE"))
            outcomes.append("deleted")
        except ApiError as exc:
            assert exc.code == 403 and "rate limit" in exc.message, exc.message
            outcomes.append("denied")
    assert outcomes == ["deleted"] * MAX_ACTS_PER_INVOCATION + ["denied"] * 3
    calls = [c for c in _calls(run) if c["tool"] == "restart_pod"]
    assert [c["allowed"] for c in calls] == [o == "deleted" for o in outcomes]
    assert len([a for a in _actions(run) if a["tool"] == "restart_pod"]) == MAX_ACTS_PER_INVOCATION


def test_a_read_only_api_refuses_every_write_without_recording_it() -> None:
    run = _run()
    inc = _incident(run)
    mut = OperatorMutator(run, writes=write_modes("watch"))
    before = len(run.stream.events)
    err = _raises(403, mut.change_deployment, DeploymentChange("adservice", replicas=3),
                  _req(inc, _deploy_path("adservice", "/scale")))
    assert "read-only" in err.message and "marathon serve --kube-api" in err.message
    _raises(403, mut.delete_pod, _pod(run, "frontend"), _req(inc, f"/api/v1/namespaces/{NS}/pods/p", "DELETE"))
    assert len(run.stream.events) == before
    assert write_modes("run") == "read-only" and write_modes("play") == "always"
    assert write_modes("serve") == "invocation"


def test_serve_accepts_writes_only_inside_an_open_invocation(tmp_path: Path) -> None:
    """An external agent's kubectl writes land inside its invocation, on the API server's thread,
    while the engine waits without the run lock; outside one they are 409 Conflict."""
    open_now = threading.Event()
    seen: list[tuple[int, str]] = []

    class KubectlAgent:
        name = "kubectl-agent"

        def invoke(self, inv: Any) -> None:
            if inv.number == 3:
                alerts = inv.alerts
                inv.call("report_incident", alerts=[f"A-{alerts[0].id}"], title="kubectl agent")
            if inv.number < 3:
                return
            open_now.set()
            # The write comes from another thread, as the API server's would.
            worker = threading.Thread(target=write, args=(inv.number,))
            worker.start()
            worker.join(30)
            open_now.clear()

    def write(number: int) -> None:
        try:
            with session.run.lock:  # the API server holds the run lock for every write
                mut.change_deployment(DeploymentChange("adservice", replicas=2 + number % 2),
                                      _req("INC-0001", _deploy_path("adservice", "/scale")))
            seen.append((number, "ok"))
        except ApiError as exc:
            seen.append((number, f"{exc.code}"))

    session = RunSession(generate("online-boutique", SEED, "short-5"), operator=KubectlAgent(),
                         run_dir=tmp_path / "run")
    mut = OperatorMutator(session.run, writes="invocation", invocation_open=open_now.is_set)
    session.start()
    session.advance_to(30)
    err = _raises(409, mut.delete_pod, _pod(session.run, "frontend"),
                  _req("INC-0001", f"/api/v1/namespaces/{NS}/pods/p", "DELETE"))
    assert "no invocation is open" in err.message
    session.advance_to(330)
    assert seen and all(r == "ok" for _, r in seen), seen
    inside = [c for c in _calls(session.run) if c["tool"] == "scale_deployment"]
    assert inside and all(c["in_invocation"] and c["allowed"] and "request" in c for c in inside)
    session.run.close()
    bundle = seal_run(tmp_path / "run", recover=True)
    report = replay(bundle)
    assert report.ok, report.format()


# --------------------------------------------------------------------- equivalence and replay


def _repair_script(run: Orchestrator, act: Any) -> None:
    """Report the frontend and payment faults, name their services, and roll each back with ``act``."""
    plan = {180.0: ("frontend", "frontend readiness"), 420.0: ("paymentservice", "payment errors")}
    for t, (service, title) in plan.items():
        run.advance_to(t)
        alerts = [a for a in (run.alert_history.instances if run.alert_history else [])
                  if service in json.dumps(a.labels)] or list(run.alert_history.instances if run.alert_history
                                                             else [])
        inc = run.tools.call("report_incident", {"alerts": [f"A-{alerts[-1].id}"], "title": title}).data["incident"]
        run.tools.call("report_rca", {"incident": inc, "service": service, "category": "code-bug",
                                      "artifact": "the last change", "summary": f"{service} broke after a change"})
        act(run, service, inc, run.sim.workload(service).revision - 1)
    run.advance_to(run.end_t)


def _typed(run: Orchestrator, service: str, inc: str, revision: int) -> None:
    assert run.tools.call("rollback", {"deployment": service, "revision": revision, "incident": inc}).ok


def _kubectl(run: Orchestrator, service: str, inc: str, revision: int) -> None:
    body = json.dumps([{"op": "replace", "path": "/spec/template", "value": {}}])
    OperatorMutator(run).change_deployment(DeploymentChange(service, rollback_to=revision),
                                           _req(inc, _deploy_path(service), body=body,
                                                content_type="application/json-patch+json"))


def _without_requests(run: Orchestrator) -> list[tuple[float, str, dict[str, Any]]]:
    return [(e.t, e.kind, {k: v for k, v in e.payload.items() if k != "request"}) for e in run.stream.events]


def test_the_same_act_typed_and_through_the_api_records_and_scores_the_same() -> None:
    typed, api = _run(until=0), _run(until=0)
    _repair_script(typed, _typed)
    _repair_script(api, _kubectl)
    assert typed.finished and api.finished
    assert _without_requests(typed) == _without_requests(api)
    rollbacks = [c for c in _calls(api) if c["tool"] == "rollback"]
    assert len(rollbacks) == 2 and rollbacks[0]["request"]["content_type"] == "application/json-patch+json"
    assert not any("request" in c for c in _calls(typed))
    a, b = score_events(typed.stream.events), score_events(api.stream.events)
    assert a.score == b.score and a.scores == b.scores
    assert [f.__dict__ for f in a.faults] == [f.__dict__ for f in b.faults]
    assert any(f.repaired for f in b.faults), "the rollbacks earned repair credit"


def test_a_bundle_with_api_writes_replays_clean(tmp_path: Path) -> None:
    run = _run(tmp_path)
    inc = _incident(run)
    mut = OperatorMutator(run)
    mut.change_deployment(DeploymentChange("adservice", replicas=3), _req(inc, _deploy_path("adservice", "/scale")))
    run.advance_to(200)
    with pytest.raises(ApiError):
        mut.change_deployment(DeploymentChange("loadgenerator", replicas=0), _req(inc, _deploy_path("loadgenerator")))
    with pytest.raises(ApiError):
        mut.delete_pod(_pod(run, "frontend"), _req(None, f"/api/v1/namespaces/{NS}/pods/p", "DELETE"))
    run.advance_to(260)
    mut.change_deployment(DeploymentChange("emailservice", restart=True),
                          _req(inc, _deploy_path("emailservice"), body="x" * 70_000 + "\x00"))
    assert _calls(run)[-1]["request"]["body"][MARKER_KEY]["bytes"] == 70_001
    run.advance_to(400)
    run.close()
    bundle = seal_run(tmp_path / "run", recover=True)
    report = replay(bundle)
    assert report.ok, report.format()


# --------------------------------------------------------------------- recording and ground truth


def test_bound_request_is_idempotent_and_marks_what_it_cannot_keep() -> None:
    raw = {"user": "operator", "method": "PATCH", "path": "/apis/apps/v1/x?fieldManager=INC-1",
           "content_type": "application/merge-patch+json", "body": '{"a":\n1}'}
    rec = bound_request(raw)
    assert rec == raw and bound_request(rec) == rec
    odd = bound_request({"method": 5, "path": "p\x01", "body": "b" * 70_000, "extra": "dropped"})
    assert set(odd) == {"user", "method", "path", "content_type", "body"} and odd["user"] == ""
    assert all(MARKER_KEY in odd[k] for k in ("method", "path", "body"))
    assert bound_request(odd) == odd
    assert bound_request("not a request") == bound_request({})


def test_the_served_objects_carry_no_ground_truth() -> None:
    """Nothing the API serves names a fault, the schedule or the harness: the faults' changes read
    like ordinary rollouts (their change-cause is a commit subject) and no object is annotated."""
    run = _run(until=900)
    injected = [rec for rec in run.faults.values() if rec.instance is not None]
    assert len(injected) >= 4
    kinds = ("Node", "Pod", "Deployment", "StatefulSet", "ReplicaSet", "Service", "Event", "ConfigMap", "Secret",
             "Endpoints", "EndpointSlice")
    text = json.dumps([run.sim.objects(k) for k in kinds]).lower()
    for rec in injected:
        assert rec.spec.id.lower() not in text, rec.spec.id
        assert rec.spec.title.lower() not in text, rec.spec.title
    for word in ("chaos-mesh", "sre-marathon", r"\bfaults?\b", r"\binject", "orchestrator", r"\bschedule\b"):
        assert not re.search(word, text), word
    namespaces = {o["metadata"].get("namespace") for k in kinds for o in run.sim.objects(k)} - {None}
    assert namespaces == {NS}


# --------------------------------------------------------------------- real kubectl through --kube-api


def _kubectl_run(tmp_path: Path) -> tuple[Orchestrator, Any, Any]:
    """A play-mode run (as ``marathon play --kube-api``) with its API started, and a kubectl runner."""
    pytest.importorskip("engine.kube.apiserver", reason="the API server (issue 15 part 1) is not merged yet")
    from engine.run.kubeapi import start_kube_api
    from tests.test_kubectl import _require, find_kubectl

    kubectl, why = find_kubectl()
    _require(kubectl is not None, why)
    run = _run(tmp_path)
    run.tools.spend_time = False  # marathon play: the player's own time is the cost
    kube = start_kube_api(run, command="play")

    def k(*argv: str) -> Any:
        import subprocess

        assert kubectl is not None
        return subprocess.run([kubectl, "--kubeconfig", str(kube.kubeconfig), *argv], capture_output=True,
                              text=True, timeout=120)

    return run, kube, k


def test_real_kubectl_delete_pod_is_an_act_named_by_its_incident(tmp_path: Path) -> None:
    run, kube, k = _kubectl_run(tmp_path)
    try:
        assert kube.kubeconfig == tmp_path / "run.kubeconfig"  # beside the run directory, not in the bundle
        assert not (tmp_path / "run" / "kubeconfig").exists()
        pod = _pod(run, "cartservice")
        denied = k("delete", "pod", pod, "--wait=false")
        assert denied.returncode == 1
        assert denied.stderr.startswith(f'Error from server (Forbidden): pods "{pod}" is forbidden: an operator '
                                        "write must name the open incident")
        inc = _incident(run)
        done = k("--as", inc, "delete", "pod", pod, "--wait=false")
        assert done.returncode == 0, done.stderr
        assert f'pod "{pod}" deleted' in done.stdout
        calls = [c for c in _calls(run) if c["tool"] == "restart_pod"]
        assert [c["allowed"] for c in calls] == [False, True]
        assert calls[1]["request"]["method"] == "DELETE" and pod in calls[1]["request"]["path"]
        assert _actions(run)[-1] == {"tool": "restart_pod", "args": {"pod": pod, "incident": inc},
                                     "targets": ["cartservice"], "operator": "human"}
    finally:
        kube.stop()
    assert not kube.kubeconfig.exists()


def test_real_kubectl_scale_set_image_rollout_restart_undo_and_set_env(tmp_path: Path) -> None:
    pytest.importorskip("engine.kube.patching", reason="patch parsing (issue 15 part 2) is not merged yet")
    run, kube, k = _kubectl_run(tmp_path)
    try:
        inc = _incident(run)
        rev = run.sim.workload("frontend").revision
        old_image = run.sim.workload("shippingservice").image
        for argv in (("scale", "deployment/adservice", "--replicas=3"),
                     ("rollout", "restart", "deployment/emailservice"),
                     ("set", "image", "deployment/shippingservice", f"server={old_image.rpartition(':')[0]}:v0.10.5"),
                     ("rollout", "undo", "deployment/frontend"),
                     ("set", "env", "deployment/currencyservice", "LOG_LEVEL=debug")):
            run.tools.policy.new_invocation()
            res = k("--as", inc, *argv)
            assert res.returncode == 0, (argv, res.stderr)
        tools = [(c["tool"], c["allowed"]) for c in _calls(run) if c["tier"] == "act"]
        assert tools == [("scale_deployment", True), ("rollout_restart", True), ("set_image", True),
                         ("rollback", True), ("set_config", True)]
        assert run.sim.workload("adservice").replicas == 3
        assert run.sim.workload("frontend").revision == rev + 1
        assert next(c for c in _calls(run) if c["tool"] == "rollback")["args"]["revision"] == rev - 1
        denied = k("--as", inc, "scale", "deployment/loadgenerator", "--replicas=0")
        assert denied.returncode == 1 and "outside the application" in denied.stderr
        node = run.sim.objects("Node")[0]["metadata"]["name"]
        cordon = k("--as", inc, "cordon", node)
        # (kubectl cordon reports a refused patch on stderr but exits 0)
        assert f'nodes "{node}" is forbidden' in cordon.stderr, cordon.stderr
        assert not next(n for n in run.sim.objects("Node") if n["metadata"]["name"] == node)["spec"].get(
            "unschedulable")
    finally:
        kube.stop()


def test_kube_api_is_a_flag_of_run_watch_play_and_serve() -> None:
    from engine.cli import build_parser

    parser = build_parser()
    for command in ("run", "watch", "play", "serve"):
        assert parser.parse_args([command]).kube_api is None, command
        assert parser.parse_args([command, "--kube-api"]).kube_api == 0, command  # any free port
        assert parser.parse_args([command, "--kube-api", "16443"]).kube_api == 16443, command
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "--kube-api", "70000"])


class _ThroughTheAPI:
    """An invocation whose restart and scale calls go out as Kubernetes API writes (from the
    operator's thread, as an API server's thread would make them); every other call is typed."""

    def __init__(self, inner: Any, mutator: OperatorMutator) -> None:
        self._inner = inner
        self._mutator = mutator

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def call(self, tool: str, **args: Any) -> Any:
        return self.call_tool(tool, args)

    def call_tool(self, tool: str, args: Any = None, *, tokens: Any = 0) -> Any:
        mut = self._mutator
        if tool == "restart_pod":
            path = f"/api/v1/namespaces/{NS}/pods/{args['pod']}"
            write: Any = lambda: mut.delete_pod(args["pod"], _req(args.get("incident"), path, "DELETE"))  # noqa: E731
        elif tool == "scale_deployment":
            change = DeploymentChange(args["deployment"], replicas=args["replicas"])
            write = lambda: mut.change_deployment(  # noqa: E731
                change, _req(args.get("incident"), _deploy_path(args["deployment"], "/scale")))
        else:
            return self._inner.call_tool(tool, args, tokens=tokens)
        mut.last_result = None
        with contextlib.suppress(ApiError):  # the Status says what the result says
            write()
        assert mut.last_result is not None
        return mut.last_result


class _KubectlOnly:
    """A scripted adversary whose acts reach the run only through the Kubernetes API."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.mutator: OperatorMutator | None = None

    def invoke(self, inv: Any) -> None:
        assert self.mutator is not None
        self.inner.invoke(_ThroughTheAPI(inv, self.mutator))


@pytest.mark.parametrize(("adversary", "min_acts", "denied"), [("restart-everything", 10, True),
                                                               ("scale-to-zero", 1, False)])
def test_an_adversary_acting_through_kubectl_is_recorded_exactly_like_the_typed_one(adversary: str, min_acts: int,
                                                                                  denied: bool) -> None:
    """The scripted adversaries (restart everything, scale to zero: the policy's rate limits and
    harness denials do the work) give the same run, event for event, whether their acts are typed
    calls or API writes; only the raw request is added."""
    from engine.operate.operators import make_operator

    sched = generate("online-boutique", SEED, "short-5")
    typed = Orchestrator(sched, operator=make_operator(adversary))
    typed.run()
    wrapper = _KubectlOnly(make_operator(adversary))
    api = Orchestrator(sched, operator=wrapper)  # type: ignore[arg-type]
    wrapper.mutator = OperatorMutator(api)
    api.run()
    acts = [c for c in _calls(api) if c["tier"] == "act"]
    assert len(acts) >= min_acts and all("request" in c for c in acts)
    assert any(not c["allowed"] for c in acts) == denied, "the policy's rate limit stopped the sweep"
    assert _without_requests(typed) == _without_requests(api)


def test_reads_from_outside_leave_the_run_unchanged() -> None:
    """The API server reads the cluster (objects, events, ``kubectl top``'s scrape) between any two
    steps; none of it may change a seeded run, or a ``--kube-api`` bundle would not replay."""
    from engine.substrate import OBJECT_KINDS

    def stream(read: bool) -> list[tuple[str, float, Any]]:
        run = Orchestrator(generate("online-boutique", SEED, "short-5"))
        run.start()
        t = 0.0
        while t < 420:
            t += 7
            run.advance_to(t)
            if read:
                for kind in OBJECT_KINDS:
                    run.sim.objects(kind)
                run.sim.events()
                run.sim.scrape()
                run.sim.exposition()
        return [(e.kind, e.t, e.payload) for e in run.stream.events]

    assert stream(True) == stream(False)


def test_play_and_watch_serve_the_api_while_the_app_runs(tmp_path: Path) -> None:
    """``marathon play --kube-api``: the app is built with the operator API started (its writes
    are the player's acts); ``watch --kube-api`` serves it read-only."""
    pytest.importorskip("engine.kube.apiserver")
    from engine.cli import build_parser
    from tui.cli import build_play, build_watch

    parser = build_parser()
    for command, build, mode in (("play", build_play, "always"), ("watch", build_watch, "read-only")):
        args = parser.parse_args([command, "--kube-api", "--run-dir", str(tmp_path / command)])
        app = build(args)
        kube = app.kube_api
        try:
            assert kube.url.startswith("https://127.0.0.1:") and kube.mutator.writes == mode
            assert kube.kubeconfig == tmp_path / f"{command}.kubeconfig" and kube.kubeconfig.is_file()
            import yaml

            config = yaml.safe_load(kube.kubeconfig.read_text())
            assert [u["name"] for u in config["users"]] == ["operator"]
            assert config["contexts"][0]["context"]["namespace"] == NS
            assert any(kube.url in note for note in app.exit_notes)
        finally:
            kube.stop()
        assert not kube.kubeconfig.exists()


def test_an_external_agent_acting_through_kubectl_scores_like_the_tool_server(server: Any, reference: Any) -> None:
    """``marathon serve --kube-api``: the oracle's recorded calls, replayed by an external agent
    that sends every act kubectl can say exactly (delete pod, scale, rollout undo --to-revision,
    set env, set image) through the Kubernetes API and the rest through the HTTP tool server,
    give the tool server's acts with the same answers, plus the reads kubectl made (each a
    recorded ``kube_read`` costing 5 s, so never a better score) -- and the bundle replays."""
    import subprocess

    pytest.importorskip("engine.kube.patching")
    from tests.test_kubectl import _require, find_kubectl
    from tests.test_serve import _bundle_of, _http, _score, _tool_events

    kubectl, why = find_kubectl()
    _require(kubectl is not None, why)
    assert kubectl is not None
    proc, ready, run_dir = server("--mcp", "none", "--kube-api")
    base, config = ready["http"], ready["kubeconfig"]
    assert config == str(run_dir.with_name(run_dir.name + ".kubeconfig"))

    def k(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([kubectl, "--kubeconfig", config, *argv], capture_output=True, text=True, timeout=120)

    def as_kubectl(tool: str, args: dict[str, Any]) -> tuple[str, ...] | None:
        inc = ("--as", str(args.get("incident")))
        if tool == "restart_pod":
            return (*inc, "delete", "pod", args["pod"], "--wait=false")
        if tool == "scale_deployment":
            return (*inc, "scale", f"deployment/{args['deployment']}", f"--replicas={args['replicas']}")
        if tool == "rollback" and args.get("revision") is not None:
            return (*inc, "rollout", "undo", f"deployment/{args['deployment']}", f"--to-revision={args['revision']}")
        if tool == "set_config" and args["service"] != "flagd":
            value = f"{args['key']}-" if args["value"] is None else f"{args['key']}={args['value']}"
            return (*inc, "set", "env", f"deployment/{args['service']}", value)
        return None

    through_kubectl: list[str] = []
    recorded_calls = iter(reference.tool_events)  # (t, invocation, tool, args, allowed, ok, ...), in call order
    finished: dict[str, Any] = {}
    while not finished:
        status, nxt = _http(base, "POST", "/invocations/next", {"timeout_s": 30})
        assert status == 200
        if nxt["finished"]:
            finished = nxt
            break
        inv = nxt["invocation"]
        if inv is None:
            continue
        n = inv["number"]
        for tool, args in reference.calls.get(n, []):
            _, _, _, _, allowed, ok, *_ = next(recorded_calls)
            # kubectl checks some writes itself (rollout undo of a revision it cannot find): those
            # never reach the server, so only acts that executed or that the policy denied go out so.
            argv = as_kubectl(tool, args) if isinstance(args, dict) and (ok or not allowed) else None
            if argv is None:
                status, _ = _http(base, "POST", f"/invocations/{n}/tools/{tool}", {"args": args})
                assert status == 200
                continue
            k(*argv)  # a denial is a Status on stderr; the record says what the tool server would have
            through_kubectl.append(tool)
        _http(base, "POST", f"/invocations/{n}/done", {"note": "kubectl"})
    assert proc.wait(60) == 0 and finished["complete"]
    assert through_kubectl, "some of the oracle's acts went through kubectl"
    bundle = _bundle_of(run_dir)
    # kubectl reads the object before it writes it (a GET of the Deployment before set env, scale
    # reads nothing): each such read is a recorded kube_read costing a typed read's 5 s, so the
    # acts are the same calls with the same answers, only later by the reads before them.
    events = _tool_events(bundle)
    reads = [e for e in events if e[2] == "kube_read"]
    assert reads and all(e[4] and e[5] and e[6] == "read-only" for e in reads)
    acts = [e[1:] for e in events if e[2] != "kube_read"]
    assert [a[:5] for a in acts] == [e[1:6] for e in reference.tool_events]
    assert all(e[0] >= r[0] for e, r in zip([e for e in events if e[2] != "kube_read"], reference.tool_events,
                                            strict=True))
    # Scored from its own events like any bundle: the same acts, later by the reads kubectl made,
    # never score better than the typed calls made without them.
    got = _score(bundle)
    assert got["score"] <= reference.score["score"]
    assert {k: got[k] for k in ("actions", "risky_actions", "false_declarations")} == \
        {k: reference.score[k] for k in ("actions", "risky_actions", "false_declarations")}
    recorded = [e.payload for e in open_bundle_events(bundle) if e.kind == "tool.call" and "request" in e.payload
                and e.payload["tool"] != "kube_read"]
    assert [p["tool"] for p in recorded] == through_kubectl
    assert not Path(config).exists(), "the kubeconfig goes with the run"
    report = replay(bundle)
    assert report.ok, report.format()


def open_bundle_events(bundle: Path) -> list[Any]:
    from engine.bundle.format import open_bundle

    return list(open_bundle(bundle).events)



# --------------------------------------------------------------------- reads cost what typed reads cost


def test_api_reads_are_recorded_charged_and_replay(tmp_path: Path) -> None:
    """On ``play`` and ``serve`` every resource read through the API is a ``kube_read`` call with
    its raw request, charged a typed read's 5 s; discovery is not a read; the bundle replays."""
    from engine.operate.tools import API_TOOLS, TOOLS, tool_schemas
    from engine.run.kubeapi import OperatorReads

    assert "kube_read" not in TOOLS and "kube_read" in API_TOOLS  # the API's accounting, not an operator tool
    assert all(s["function"]["name"] != "kube_read" for s in tool_schemas())
    run = _run(tmp_path)
    refused = run.tools.call("kube_read", {"verb": "list", "resource": "pods"})  # no request: not callable
    assert not refused.ok and "unknown tool 'kube_read'" in (refused.error or "")
    reads = OperatorReads(OperatorMutator(run))
    before = run.now
    reads("list", "pods", _req(None, f"/api/v1/namespaces/{NS}/pods?limit=500", "GET"))
    reads("log", "pods/frontend-x", _req(None, f"/api/v1/namespaces/{NS}/pods/frontend-x/log", "GET"))
    calls = [c for c in _calls(run) if c["tool"] == "kube_read" and "request" in c]
    assert [c["args"] for c in calls] == [{"verb": "list", "resource": "pods"},
                                          {"verb": "log", "resource": "pods/frontend-x"}]
    assert calls[0]["request"]["method"] == "GET" and calls[0]["request"]["path"].endswith("pods?limit=500")
    assert run.now == pytest.approx(before + 10.0)  # two reads, 5 s each, as two typed reads
    run.advance_to(300)
    run.close()
    report = replay(seal_run(tmp_path / "run", recover=True))
    assert report.ok, report.format()


def test_serve_refuses_api_reads_outside_the_invocation() -> None:
    from engine.run.kubeapi import OperatorReads

    run = _run()
    reads = OperatorReads(OperatorMutator(run, writes="invocation", invocation_open=lambda: False))
    err = _raises(409, reads, "list", "pods", _req(None, f"/api/v1/namespaces/{NS}/pods", "GET"))
    assert err.reason == "Conflict" and "no invocation is open" in err.message
    assert not [c for c in _calls(run) if c["tool"] == "kube_read"]


def test_real_kubectl_reads_through_play_are_kube_read_calls(tmp_path: Path) -> None:
    run, kube, k = _kubectl_run(tmp_path)
    try:
        got = k("get", "pods", "-o", "wide")
        assert got.returncode == 0, got.stderr
        assert "cartservice-" in got.stdout
        described = k("describe", "deployment", "cartservice")
        assert described.returncode == 0, described.stderr
        reads = [c for c in _calls(run) if c["tool"] == "kube_read"]
        assert {"verb": "list", "resource": "pods"} in [c["args"] for c in reads]
        assert any(c["args"]["resource"] == "deployments.apps/cartservice" for c in reads)
        assert all(c["request"]["method"] == "GET" for c in reads)
        assert not any(c["request"]["path"] == "/api" or c["request"]["path"].startswith("/apis?") for c in reads)
    finally:
        kube.stop()


def test_api_answers_without_a_false_symptom_or_a_hidden_reason(tmp_path: Path) -> None:
    """The operator's API has no service proxy: 403 as RBAC answers, never a 503 "no endpoints"
    that reads like a symptom; a refused write's reason reaches kubectl as the Status's cause;
    a read that cannot be recorded is a 400, not a 409."""
    from engine.run.kubeapi import OperatorReads

    run, kube, k = _kubectl_run(tmp_path)
    try:
        proxied = k("get", "--raw", f"/api/v1/namespaces/{NS}/services/frontend/proxy/")
        assert proxied.returncode == 1 and "(Forbidden)" in proxied.stderr and "503" not in proxied.stderr
        inc = _incident(run)
        two = k("--as", inc, "patch", "deployment", "frontend", "-p",
                '{"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"server","image":"x"}]}}}}')
        assert two.returncode == 1 and "one write is one act" in two.stderr, two.stderr
    finally:
        kube.stop()
    reads = OperatorReads(OperatorMutator(run))
    err = _raises(400, reads, "get", "pods/" + "x" * 400, _req(None, f"/api/v1/namespaces/{NS}/pods/x", "GET"))
    assert err.reason == "BadRequest"


def test_a_watch_paid_inside_an_invocation_ends_when_it_closes() -> None:
    """On ``serve`` one ``kube_read`` buys a watch for the invocation it was made in, not a free
    live feed through the gap until the next (the review's finding): the server ends it."""
    import http.client
    import ssl
    import time

    from engine.kube.apiserver import KubeAPIServer
    from engine.run.kubeapi import OperatorReads
    from engine.sim.k8s import EPOCH

    run = _run()
    is_open = [True]
    mutator = OperatorMutator(run, writes="invocation", invocation_open=lambda: is_open[0])
    reads = OperatorReads(mutator)
    run._in_invocation = True  # as the run is while the external agent's invocation is open
    assert reads.streaming()
    server = KubeAPIServer(run.sim, lock=run.lock, mutator=mutator, token="t", user="operator", epoch=EPOCH,
                           reads=reads)
    url = server.start()
    try:
        host, port = url.removeprefix("https://").split(":")
        conn = http.client.HTTPSConnection(host, int(port), timeout=20, context=ssl._create_unverified_context())
        conn.request("GET", f"/api/v1/namespaces/{NS}/pods?watch=1&timeoutSeconds=600",
                     headers={"Authorization": "Bearer t"})
        resp = conn.getresponse()
        assert resp.status == 200
        assert b'"type":"ADDED"' in resp.readline()
        t0 = time.monotonic()
        is_open[0] = False  # the invocation closes
        assert not reads.streaming()
        resp.read()  # the stream ends (EOF), long before its 600 s timeout
        assert time.monotonic() - t0 < 10
        conn.close()
    finally:
        server.stop()
        run._in_invocation = False
