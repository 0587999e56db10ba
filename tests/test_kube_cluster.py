"""``marathon cluster``: the simulated world behind the Kubernetes API (engine.sim.world), the
administrator's Mutator (engine.kube.admin), and the standalone process."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from engine.apps.model import load_app
from engine.kube.admin import AdminMutator
from engine.kube.protocol import ApiError, DeploymentChange, NodeChange, Requester
from engine.sim.effects import EdgeEffect, Effect
from engine.sim.simulator import Simulator
from engine.sim.world import SimWorld
from faults.images import change_id, change_image, default_repository, resolve_image, split_image
from faults.spec import FaultSpec, load_catalog

APP = "online-boutique"
CATALOG = load_catalog(APP)
NAMESPACE = load_app(APP).namespace
REPO = default_repository(APP)


def _fault(fault_id: str) -> FaultSpec:
    return next(s for s in CATALOG.faults if s.id == fault_id)


def _req(user: str = "admin", incident: str | None = None, body: str = "") -> Requester:
    return Requester(user=user, incident=incident, method="PATCH", path="/apis/apps/v1/x", body=body)


@pytest.fixture
def cluster() -> tuple[Simulator, SimWorld, AdminMutator]:
    sim = Simulator(APP, seed=3)
    world = SimWorld(sim, CATALOG)
    return sim, world, AdminMutator(sim, world)


def _symptom(sim: Simulator, spec: FaultSpec) -> bool:
    """True when the fault's symptom probe fails now."""
    return not sim.probe(spec.probe, spec.probe_anchor).ok


# ----------------------------------------------------------------- faults/images.py


def test_change_image_is_opaque_and_resolves_back() -> None:
    spec = next(s for s in CATALOG.faults if s.mechanism == "code-change")
    assert spec.change is not None
    image = change_image(REPO + "/", spec.target, spec)
    assert image == f"registry.sre-marathon.local/{APP}/{spec.target}:{change_id(spec)}"
    assert len(change_id(spec)) == 12 and spec.id not in image
    assert resolve_image(CATALOG, image) is spec
    assert resolve_image(CATALOG, image, repository=REPO) is spec
    assert resolve_image(CATALOG, image, repository="ghcr.io/someone") is None
    # the tag of another service, an unknown tag, a digest
    assert resolve_image(CATALOG, f"{REPO}/frontend:{change_id(spec)}") is None or spec.target == "frontend"
    assert resolve_image(CATALOG, f"{REPO}/{spec.target}:000000000000") is None
    assert split_image(f"{REPO}/x@sha256:abc") is None
    other = next(s for s in CATALOG.faults if s.mechanism != "code-change")
    with pytest.raises(ValueError, match="not a code change"):
        change_id(other)


# ----------------------------------------------------------------- images


def test_catalog_image_ships_the_defect_and_rollback_repairs_it(
        cluster: tuple[Simulator, SimWorld, AdminMutator]) -> None:
    sim, _, admin = cluster
    spec = _fault("ob-currency-jpy-truncated-nanos")
    assert spec.change is not None
    image = change_image(REPO, spec.target, spec)
    sim.advance(30)
    assert not _symptom(sim, spec)
    admin.change_deployment(DeploymentChange(spec.target, image=image), _req(incident="alice"))
    rec = sim.deploy_history(spec.target)[-1]
    assert (rec.kind, rec.image, rec.author, rec.status) == ("image", image, "alice", "deployed")
    assert sim.workload(spec.target).image == image
    assert spec.change.defect_marker() in sim.source_files(spec.target)[spec.change.file]
    sim.advance(300)
    assert _symptom(sim, spec)
    admin.change_deployment(DeploymentChange(spec.target, rollback_to=1), _req())
    sim.advance(600)
    assert not _symptom(sim, spec)
    assert spec.change.defect_marker() not in sim.source_files(spec.target)[spec.change.file]


def test_setting_the_release_image_again_repairs(cluster: tuple[Simulator, SimWorld, AdminMutator]) -> None:
    sim, world, _ = cluster
    spec = _fault("ob-currency-jpy-truncated-nanos")
    release = sim.workload(spec.target).image
    world.roll_out(spec.target, image=change_image(REPO, spec.target, spec), summary="s", author="admin")
    sim.advance(300)
    assert _symptom(sim, spec)
    world.roll_out(spec.target, image=release, summary="back to the release", author="admin")
    sim.advance(600)
    assert not _symptom(sim, spec)
    assert sim.workload(spec.target).image == release
    assert sim.commits_ahead(spec.target) == 1  # the change's commit stays on the branch


def test_unknown_tag_in_the_repository_fails_to_pull(cluster: tuple[Simulator, SimWorld, AdminMutator]) -> None:
    sim, _, admin = cluster
    bad = f"{REPO}/currencyservice:0123456789ab"
    admin.change_deployment(DeploymentChange("currencyservice", image=bad), _req())
    sim.advance(120)
    statuses = {p.status for p in sim.pods("currencyservice")}
    assert statuses & {"ErrImagePull", "ImagePullBackOff"}
    assert "Running" in statuses  # the old ReplicaSet keeps serving
    messages = [e["message"] for e in sim.events() if e.get("reason") == "Failed"]
    assert any(f'{bad}: not found' in m for m in messages)


# ----------------------------------------------------------------- env


def test_catalog_env_value_brings_the_defect_and_resetting_repairs(
        cluster: tuple[Simulator, SimWorld, AdminMutator]) -> None:
    sim, world, admin = cluster
    spec = _fault("ob-productcatalog-extra-latency")
    assert spec.config is not None and spec.config.env is not None
    sim.advance(30)
    assert not _symptom(sim, spec)
    admin.change_deployment(DeploymentChange(spec.target, env=dict(spec.config.env)), _req())
    admin.change_deployment(DeploymentChange(spec.target, env=dict(spec.config.env)), _req())  # idempotent
    assert world.registered == {f"world:{spec.id}"}
    sim.advance(300)
    assert _symptom(sim, spec)
    admin.change_deployment(DeploymentChange(spec.target, env=dict.fromkeys(spec.config.env)), _req())
    sim.advance(600)
    assert not _symptom(sim, spec)


# ----------------------------------------------------------------- Chaos Mesh


def _stress(name: str, service: str, workers: int, load: int, **extra: object) -> dict[str, object]:
    return {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "StressChaos",
            "metadata": {"name": name, "namespace": NAMESPACE},
            "spec": {"mode": "all", "selector": {"namespaces": [NAMESPACE], "labelSelectors": {"app": service}},
                     "stressors": {"cpu": {"workers": workers, "load": load}}, **extra}}


def _strip(eff: Effect | EdgeEffect) -> dict[str, object]:
    return {k: v for k, v in dataclasses.asdict(eff).items() if k not in ("id", "started_before")}


def test_stress_chaos_is_the_catalog_cpu_fault_and_deleting_ends_it(
        cluster: tuple[Simulator, SimWorld, AdminMutator]) -> None:
    sim, _, admin = cluster
    spec = _fault("ob-productcatalog-cpu-hog")
    assert spec.runtime is not None and spec.runtime.cpu_cores == pytest.approx(0.182)
    sim.advance(30)
    ns = sim.app.namespace
    obj = _stress("hog", spec.target, 1, 18)
    stored = admin.create_custom("chaos-mesh.org", "v1alpha1", "stresschaos", ns, obj, _req())
    assert stored["status"]["experiment"]["desiredPhase"] == "Run"
    (eff,) = sim.effects.values()
    embedded = Simulator(APP, seed=3)
    embedded.advance(30)
    embedded.apply_fault(spec)
    (expected,) = embedded.effects.values()
    assert isinstance(eff, Effect) and _strip(eff) == _strip(expected)
    assert eff.started_before == pytest.approx(30.0, abs=1e-3)
    sim.advance(400)
    assert _symptom(sim, spec)
    admin.delete_custom("chaos-mesh.org", "v1alpha1", "stresschaos", ns, "hog", _req())
    assert not sim.effects
    sim.advance(700)
    assert not _symptom(sim, spec)


def test_stress_chaos_modes_duration_and_refusals(cluster: tuple[Simulator, SimWorld, AdminMutator]) -> None:
    sim, world, admin = cluster
    ns = sim.app.namespace
    sim.advance(10)
    one = _stress("one", "frontend", 2, 50, mode="one", duration="30s")
    world.create_chaos("stresschaos", ns, one)
    effs = list(sim.effects.values())
    assert len(effs) == 1 and effs[0].pod == sorted(p.name for p in sim.pods("frontend"))[0]
    assert effs[0].cpu_cores == pytest.approx(1.0)
    sim.advance(45)
    world.step()
    assert not sim.effects  # the duration passed
    with pytest.raises(ApiError) as err:
        admin.create_custom("chaos-mesh.org", "v1alpha1", "stresschaos", ns,
                            {"metadata": {"name": "x"}, "spec": {"mode": "random-max-percent", "value": "50",
                                                                 "selector": {"labelSelectors": {"app": "frontend"}},
                                                                 "stressors": {"cpu": {"workers": 1}}}}, _req())
    assert err.value.code == 422 and "random-max-percent" in err.value.message
    with pytest.raises(ApiError) as err:
        admin.create_custom("chaos-mesh.org", "v1alpha1", "stresschaos", ns,
                            {"metadata": {"name": "y"}, "spec": {"mode": "all", "selector": {"labelSelectors":
                                                                                             {"app": "nope"}},
                                                                 "stressors": {"cpu": {"workers": 1}}}}, _req())
    assert err.value.code == 422 and "no pod" in err.value.message


@pytest.mark.parametrize("orientation", ["caller-selects", "callee-selects"])
def test_network_chaos_is_the_catalog_edge_effect(cluster: tuple[Simulator, SimWorld, AdminMutator],
                                                  orientation: str) -> None:
    sim, _, admin = cluster
    spec = _fault("ob-recommendation-catalog-packet-loss")
    rt = spec.runtime
    assert rt is not None and rt.caller is not None
    ns = sim.app.namespace
    a, b = (rt.caller, spec.target) if orientation == "caller-selects" else (spec.target, rt.caller)
    obj = {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "NetworkChaos", "metadata": {"name": "lag"},
           "spec": {"action": "netem", "mode": "all", "direction": "to",
                    "selector": {"namespaces": [ns], "labelSelectors": {"app": a}},
                    "target": {"mode": "all", "selector": {"namespaces": [ns], "labelSelectors": {"app": b}}},
                    "delay": {"latency": "200ms"}, "loss": {"loss": "30"}}}
    sim.advance(20)
    admin.create_custom("chaos-mesh.org", "v1alpha1", "networkchaos", ns, obj, _req())
    (eff,) = sim.edge_effects.values()
    embedded = Simulator(APP, seed=3)
    embedded.advance(20)
    embedded.apply_fault(spec)
    (expected,) = embedded.edge_effects.values()
    assert _strip(eff) == _strip(expected)
    sim.advance(200)
    assert _symptom(sim, spec)
    admin.delete_custom("chaos-mesh.org", "v1alpha1", "networkchaos", ns, "lag", _req())
    assert not sim.edge_effects


def test_network_chaos_refusals(cluster: tuple[Simulator, SimWorld, AdminMutator]) -> None:
    sim, _, admin = cluster
    ns = sim.app.namespace
    base = {"action": "delay", "mode": "all", "selector": {"labelSelectors": {"app": "frontend"}},
            "delay": {"latency": "100ms"}}
    cases = [({**base, "action": "partition"}, "partition"),
             ({**base, "direction": "both"}, "targets is empty"),
             ({**base, "delay": {"latency": "fast"}}, "invalid duration"),
             ({**base, "target": {"mode": "all", "selector": {"labelSelectors": {"app": "redis-cart"}}}},
              "no call to each other")]
    for body, words in cases:
        with pytest.raises(ApiError) as err:
            admin.create_custom("chaos-mesh.org", "v1alpha1", "networkchaos", ns,
                                {"metadata": {"name": "n"}, "spec": body}, _req())
        assert err.value.code == 422 and words in err.value.message
    with pytest.raises(ApiError) as err:
        admin.create_custom("example.com", "v1", "widgets", ns, {"metadata": {"name": "n"}}, _req())
    assert err.value.code == 404


# ----------------------------------------------------------------- nodes


def test_cordon_and_noexecute_taint(cluster: tuple[Simulator, SimWorld, AdminMutator]) -> None:
    sim, _, admin = cluster
    sim.advance(10)
    node = next(p.node for p in sim.pods("frontend") if p.node)
    assert node is not None
    admin.change_node(NodeChange(node, unschedulable=True), _req())
    obj = next(n for n in sim.objects("Node") if n["metadata"]["name"] == node)
    assert obj["spec"]["unschedulable"] is True
    cordon_taint = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
    assert cordon_taint.items() <= obj["spec"]["taints"][0].items()
    on_node = {p.name for p in sim.pods() if p.node == node}
    assert on_node  # a cordon evicts nothing
    sim.advance(20)
    assert on_node <= {p.name for p in sim.pods() if p.node == node}
    admin.change_node(NodeChange(node, taints=({"key": "example.com/maintenance", "value": "now",
                                                "effect": "NoExecute"},)), _req())
    sim.advance(120)
    assert not [p for p in sim.pods() if p.node == node and not p.terminating]
    assert any(e.get("reason") == "TaintManagerEviction" for e in sim.events())
    frontend = [p for p in sim.pods("frontend") if not p.terminating]
    assert frontend and all(p.node != node for p in frontend)
    admin.change_node(NodeChange(node, unschedulable=False, taints=()), _req())
    obj = next(n for n in sim.objects("Node") if n["metadata"]["name"] == node)
    assert "unschedulable" not in obj["spec"] and "taints" not in obj["spec"]
    with pytest.raises(ApiError) as err:
        admin.change_node(NodeChange("node-z-9", unschedulable=True), _req())
    assert err.value.code == 404


# ----------------------------------------------------------------- the Mutator


def test_admin_mutator_writes_and_errors(cluster: tuple[Simulator, SimWorld, AdminMutator]) -> None:
    sim, _, admin = cluster
    body = '{"metadata":{"annotations":{"kubernetes.io/change-cause":"scale up for the sale"}}}'
    admin.change_deployment(DeploymentChange("frontend", replicas=3), _req(incident="kubectl-scale", body=body))
    rec = sim.deploy_history("frontend")[-1]
    assert (rec.kind, rec.summary, rec.author) == ("scale", "scale up for the sale", "admin")
    assert sim.workload("frontend").replicas == 3
    with pytest.raises(ApiError) as err:
        admin.change_deployment(DeploymentChange("nope", replicas=1), _req())
    assert err.value.code == 404 and err.value.reason == "NotFound"
    with pytest.raises(ApiError) as err:
        admin.change_deployment(DeploymentChange("frontend", other=("spec.strategy.type",)), _req())
    assert err.value.code == 422 and err.value.details["causes"][0]["field"] == "spec.strategy.type"
    with pytest.raises(ApiError) as err:
        admin.delete_pod("nope", _req())
    assert err.value.code == 404
    pods = [p.name for p in sim.pods("cartservice")]
    admin.change_deployment(DeploymentChange("cartservice", restart=True), _req())
    # The simulator's own rolling restart (Substrate.rollout_restart): a new ReplicaSet replaces every pod.
    assert sim.deploy_history("cartservice")[-1].kind == "restart"
    sim.advance(sim.now + 300)
    assert not {p.name for p in sim.pods("cartservice")} & set(pods)
    admin.patch_service("cartservice", None, 7071, _req(incident="bob"))
    rec = sim.deploy_history("cartservice")[-1]
    assert (rec.kind, rec.author) == ("service", "bob")


# ----------------------------------------------------------------- the process


KUBECTL = Path(sys.executable).with_name("kubectl")


def _kubectl(kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(KUBECTL), "--kubeconfig", str(kubeconfig), *args], capture_output=True, text=True,
                          timeout=60)


def _wait(predicate: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def _get(kubeconfig: Path, path: str) -> tuple[int, dict[str, str]]:
    """GET ``path`` from the kubeconfig's server with its token and CA: (status, headers)."""
    cfg = yaml.safe_load(kubeconfig.read_text())
    cluster, user = cfg["clusters"][0]["cluster"], cfg["users"][0]["user"]
    ctx = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
    req = urllib.request.Request(cluster["server"] + path, headers={"Authorization": f"Bearer {user['token']}"})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=20) as resp:
            return resp.status, dict(resp.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers)


@pytest.mark.skipif(not KUBECTL.exists(), reason="the pinned kubectl is not installed in the venv")
def test_marathon_cluster_process(tmp_path: Path) -> None:
    """`marathon cluster` as a user runs it: kubeconfig, the held clock started, kubectl reads and a catalog
    image rollout, the probe proxy, /metrics, and a clean stop on SIGINT."""
    kubeconfig = tmp_path / "kc" / "kubeconfig"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "cluster", "--app", APP, "--speed", "20", "--hold",
                             "--port", "0", "--metrics-port", "0", "--kubeconfig", str(kubeconfig), "--seed", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        assert proc.stdout is not None
        banner = [proc.stdout.readline() for _ in range(6)]
        assert "serving the Kubernetes API at https://127.0.0.1:" in banner[0], banner
        assert f"kubectl --kubeconfig {kubeconfig} get pods" in "".join(banner)
        metrics = next(line.split()[1] for line in banner if line.strip().startswith("metrics"))
        assert kubeconfig.is_file() and (kubeconfig.stat().st_mode & 0o777) == 0o600

        def clock() -> dict[str, Any]:
            out = _kubectl(kubeconfig, "get", "--raw", "/marathon/v1/clock")
            assert out.returncode == 0, out.stderr
            return dict(json.loads(out.stdout))

        held = clock()
        assert held["speed"] == 20 and held["held"] is True and held["now"] == 0
        time.sleep(1.0)
        assert clock()["now"] == 0
        started = _kubectl(kubeconfig, "create", "--raw", "/marathon/v1/clock/start", "-f", os.devnull)
        assert started.returncode == 0, started.stderr
        first = json.loads(started.stdout)
        assert first["held"] is False and first["now"] < 5
        _wait(lambda: clock()["now"] >= first["now"] + 20, 20, "the clock to advance")

        pods = _kubectl(kubeconfig, "get", "pods", "-o", "wide")
        assert pods.returncode == 0, pods.stderr
        assert "currencyservice-" in pods.stdout and "Running" in pods.stdout and "node-" in pods.stdout

        spec = _fault("ob-currency-jpy-truncated-nanos")
        image = change_image(REPO, spec.target, spec)
        container = load_app(APP).service(spec.target).container
        out = _kubectl(kubeconfig, "set", "image", f"deployment/{spec.target}", f"{container}={image}")
        assert out.returncode == 0, out.stderr

        def rolled_out(to: str) -> bool:
            got = _kubectl(kubeconfig, "get", "pods", "-l", f"app={spec.target}", "-o",
                           "jsonpath={range .items[*]}{.spec.containers[0].image} {.status.phase}{'\\n'}{end}")
            lines = [line.split() for line in got.stdout.splitlines() if line.strip()]
            return bool(lines) and all(line[0] == to and line[1] == "Running" for line in lines)

        _wait(lambda: rolled_out(image), 40, "the catalog image to roll out")
        assert spec.probe.route is not None and spec.probe.attributes
        route = next(r for r in load_app(APP).routes if r.name == spec.probe.route)
        query = "&".join(f"{k}={v}" for k, v in spec.probe.attributes.items())
        # The route's request judged where it reaches the defective service: it fails, and the
        # simulator's shortcut headers say how likely (as the embedded probe judges it).
        status, headers = _get(kubeconfig, f"/api/v1/namespaces/{NAMESPACE}/services/{spec.target}/proxy"
                                           f"{route.path}?{query}")
        assert status == 503 and float(headers["X-Marathon-Success"]) < 0.01
        assert headers["Server-Timing"].startswith("app;dur=") and float(headers["X-Marathon-P95-Ms"]) > 0
        status, headers = _get(kubeconfig, f"/api/v1/namespaces/{NAMESPACE}/services/frontend:80/proxy/")
        assert status == 200 and float(headers["X-Marathon-Success"]) > 0.99
        assert _get(kubeconfig, f"/api/v1/namespaces/{NAMESPACE}/services/frontend/proxy/no/such/path")[0] == 404
        history = _kubectl(kubeconfig, "rollout", "history", f"deployment/{spec.target}")
        assert history.returncode == 0 and "2" in history.stdout, history.stderr
        undo = _kubectl(kubeconfig, "rollout", "undo", f"deployment/{spec.target}")
        assert undo.returncode == 0, undo.stderr
        _wait(lambda: rolled_out(load_app(APP).service(spec.target).image), 40, "the rollback")
        status, headers = _get(kubeconfig, f"/api/v1/namespaces/{NAMESPACE}/services/{spec.target}/proxy"
                                           f"{route.path}?{query}")
        assert float(headers["X-Marathon-Success"]) > 0.99

        with urllib.request.urlopen(f"http://{metrics.split('//', 1)[-1].split('/')[0]}/metrics", timeout=10) as r:
            assert b"kube_deployment_spec_replicas" in r.read()
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
        err = proc.stderr.read() if proc.stderr else ""
    assert code == 0, err
    assert "stopping" in err


def test_proxy_model_equals_the_embedded_probe(cluster: tuple[Simulator, SimWorld, AdminMutator]) -> None:
    sim, world, _ = cluster
    spec = _fault("ob-currency-jpy-truncated-nanos")
    world.roll_out(spec.target, image=change_image(REPO, spec.target, spec), summary="s", author="admin")
    sim.advance(300)
    app = load_app(APP)
    route = next(r for r in app.routes if r.name == spec.probe.route)
    # the route's path on the entry service: the whole route
    whole = world.model_request(route.entry.service, route.path, spec.probe.attributes)
    embedded = sim.probe(spec.probe)
    assert whole is not None and whole.what == f"route {route.name}"
    assert (whole.success, whole.p95_ms) == pytest.approx((embedded.success, embedded.p95_ms))
    # the route's path on the fault's target: the route judged there (the probe with a target)
    at = world.model_request(spec.target, route.path, spec.probe.attributes)
    judged = sim.probe(spec.probe, spec.probe_anchor)
    assert at is not None and (at.success, at.p95_ms) == pytest.approx((judged.success, judged.p95_ms))
    assert at.success < 0.01 and at.status == 503
    # an operation's path on its service
    op = app.service("cartservice").operations[0]
    call = world.model_request("cartservice", op.name.split(" ", 1)[-1], {})
    assert call is not None and call.what == f"cartservice {op.name}" and call.status == 200
    assert world.model_request("cartservice", "/no/such/path", {}) is None
    # path parameters are any one segment; the method picks between routes of one path
    product = world.model_request("frontend", "/product/OLJCESPC7Z", {})
    assert product is not None and product.what == "route browse-product"
    assert world.model_request("frontend", "/product/a/b", {}) is None
    posted = world.model_request("frontend", "/cart", {}, method="POST")
    got = world.model_request("frontend", "/cart", {})
    assert posted is not None and got is not None
    assert (posted.what, got.what) == ("route add-to-cart", "route view-cart")
    assert world.model_request("nope", "/", {}) is None


@pytest.mark.parametrize("app", ["online-boutique", "astronomy-shop", "train-ticket"])
def test_every_catalog_image_carries_its_defect(app: str) -> None:
    """Each code change of each shipped catalog, as an image: the pods' source has the defect's
    marker, the template has the image, and the release image again takes the marker away."""
    sim = Simulator(app, seed=1)
    world = SimWorld(sim, load_catalog(app))
    assert world.change_images
    for image, spec in world.change_images.items():
        assert spec.change is not None and spec.id not in image
        release = sim.app.service(spec.target).image
        world.roll_out(spec.target, image=image, summary="s", author="admin")
        assert sim.workload(spec.target).image == image
        assert spec.change.defect_marker() in sim.source_files(spec.target)[spec.change.file], spec.id
        world.roll_out(spec.target, image=release, summary="s", author="admin")
        assert spec.change.defect_marker() not in sim.source_files(spec.target).get(spec.change.file, ""), spec.id


def test_pod_chaos_kills_a_store_as_the_catalog_store_restart() -> None:
    catalog = load_catalog("train-ticket")
    spec = next(s for s in catalog.faults if s.id == "tt-route-mongo-data-loss")
    assert spec.runtime is not None and spec.runtime.store is not None
    sim = Simulator("train-ticket", seed=4)
    world = SimWorld(sim, catalog)
    admin = AdminMutator(sim, world)
    ns = sim.app.namespace
    sim.advance(20)
    before = {p.name for p in sim.pods(spec.runtime.store) if not p.terminating}
    obj = {"metadata": {"name": "kill"}, "spec": {"action": "pod-kill", "mode": "all", "selector": {
        "namespaces": [ns], "labelSelectors": {"app": spec.runtime.store}}}}
    admin.create_custom("chaos-mesh.org", "v1alpha1", "podchaos", ns, obj, _req())
    assert before and all(p.terminating for p in sim.pods(spec.runtime.store) if p.name in before)
    (eff,) = sim.effects.values()
    embedded = Simulator("train-ticket", seed=4)
    embedded.advance(20)
    embedded.apply_fault(spec)
    (expected,) = embedded.effects.values()
    assert _strip(eff) == _strip(expected)
    admin.delete_custom("chaos-mesh.org", "v1alpha1", "podchaos", ns, "kill", _req())
    assert not sim.effects
    with pytest.raises(ApiError) as err:
        admin.create_custom("chaos-mesh.org", "v1alpha1", "podchaos", ns,
                            {"metadata": {"name": "f"}, "spec": {**obj["spec"], "action": "pod-failure"}}, _req())
    assert err.value.code == 422 and "pod-kill" in err.value.message


def test_the_clusters_ci_builds_any_tree_into_an_ordinary_image(
        cluster: tuple[Simulator, SimWorld, AdminMutator]) -> None:
    """``POST /marathon/v1/builds`` (:meth:`SimWorld.build`): a tree holding a catalog defect and
    one without it both become ``<release>-<commit>`` images; rolling out the first brings the
    defect, the second repairs it; bad input is a SubstrateError (the route's 422)."""
    from engine.substrate import SubstrateError

    sim, world, mutator = cluster
    spec = next(f for f in CATALOG.faults if f.mechanism == "code-change" and f.target == "currencyservice")
    assert spec.change is not None
    release_text = sim.source_files(spec.target)[spec.change.file]
    bad = world.build(spec.target, {spec.change.file: release_text.replace(spec.change.find, spec.change.replace, 1)},
                      "ab" * 20)
    good = world.build(spec.target, {spec.change.file: release_text + "\n"}, "cd" * 20)
    release = sim.app.service(spec.target).image
    assert (bad, good) == (f"{release}-abababa", f"{release}-cdcdcdc")
    mutator.change_deployment(DeploymentChange(spec.target, image=bad), _req())
    sim.advance(sim.now + 120)
    assert _symptom(sim, spec)
    mutator.change_deployment(DeploymentChange(spec.target, image=good), _req())
    sim.advance(sim.now + 120)
    assert not _symptom(sim, spec)
    for service, commit in (("nope", "ab" * 20), (spec.target, "not-hex!"), (spec.target, "abc")):
        with pytest.raises(SubstrateError):
            world.build(service, {}, commit)
