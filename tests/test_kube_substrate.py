"""KubeSubstrate against a fake cluster: a simulator's objects behind the read-only fake API
server (extended here with the harness clock, writes, pod logs, the service proxy and a
Prometheus instant-query endpoint answering from the same simulator).

Conformance is against the simulator itself: the typed views (workload, pods, rollout status)
and the health window's counter arithmetic the kube substrate computes from API objects and
Prometheus series must equal what the Simulator computes from its own state. Writes are
checked as the request bodies kubectl would send.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web

from engine.kube.substrate import KubeSubstrate, change_image, series_increase
from engine.kubectl.fakeapi import FakeKubeAPI
from engine.sim.simulator import Simulator
from engine.substrate import OBJECT_KINDS, FaultSkipped, SubstrateError
from faults.spec import load_catalog

NS = "online-boutique"
TOKEN = "t0ken"


class FakeCluster(FakeKubeAPI):
    """The fake API server plus what a KubeSubstrate needs of ``marathon cluster``."""

    def __init__(self, sim: Simulator, *, clock: bool = True, chaos: bool = False) -> None:
        super().__init__({k: sim.objects(k) for k in OBJECT_KINDS})
        self.sim = sim
        self.clock = clock
        self.chaos = chaos
        self.started = False
        self.writes: list[tuple[str, str, str, Any]] = []
        """(method, path, content type, JSON body) of every write."""

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{path:.*}", self._dispatch)
        return app

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        if request.path == "/api/v1/query":  # the Prometheus, on the same port for brevity (no token)
            return web.json_response(self._query(request.query["query"]))
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            return web.json_response({"kind": "Status", "code": 401, "reason": "Unauthorized"}, status=401)
        path = request.path
        if path == "/marathon/v1/clock" and self.clock:
            return web.json_response({"now": self.sim.now, "speed": 20.0, "dt": 1.0})
        if path == "/marathon/v1/clock/start" and self.clock:
            self.started = True
            return web.json_response({"now": self.sim.now})
        if path == "/apis/chaos-mesh.org/v1alpha1" and self.chaos:
            return web.json_response({"kind": "APIResourceList", "groupVersion": "chaos-mesh.org/v1alpha1",
                                      "resources": []})
        if "/proxy/" in path:
            return web.Response(text="ok", headers={"X-Marathon-Success": "0.9", "X-Marathon-P95-Ms": "321",
                                                    "Server-Timing": "app;dur=12"}, status=200)
        if path.endswith("/log"):
            pod = path.split("/")[-2]
            tail = request.query.get("tailLines")
            lines = self.sim.logs(pod, tail=int(tail) if tail else None, previous=request.query.get("previous")
                                  == "true")
            return web.Response(text="\n".join(lines) + "\n")
        if request.method in ("PATCH", "POST", "DELETE"):
            body = await request.text()
            self.writes.append((request.method, path, request.headers.get("Content-Type", ""),
                                json.loads(body) if body else None))
            kind = "Deployment" if "/deployments/" in path else "Service" if "/services/" in path else "Pod"
            name = path.split("/")[6] if len(path.split("/")) > 6 else ""
            obj = next((o for o in self.objects.get(kind, []) if o["metadata"]["name"] == name), {})
            return web.json_response(obj)
        return await self._handle(request)

    def _query(self, query: str) -> dict[str, Any]:
        name = query.split("{", 1)[0]
        result = [{"metric": {"__name__": s.name, **s.labels}, "value": [0, str(s.value)]}
                  for s in self.sim.scrape() if s.name == name and s.labels.get("namespace") == NS]
        return {"status": "success", "data": {"resultType": "vector", "result": result}}


def kubeconfig(path: Path, url: str, namespace: str | None = NS) -> str:
    ctx: dict[str, Any] = {"cluster": "c", "user": "admin"}
    if namespace:
        ctx["namespace"] = namespace
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": url}}],
        "contexts": [{"name": "c", "context": ctx}],
        "users": [{"name": "admin", "user": {"token": TOKEN}}]}))
    return str(path)


@pytest.fixture(scope="module")
def sim() -> Simulator:
    s = Simulator("online-boutique", seed=3)
    s.advance(120)
    return s


@pytest.fixture()
def cluster(sim: Simulator, tmp_path: Path) -> Any:
    fake = FakeCluster(sim)
    with fake.running() as url:
        sub = KubeSubstrate("online-boutique", seed=3, kubeconfig=kubeconfig(tmp_path / "kc", url),
                            prometheus=url)
        yield fake, sub


def test_attach_starts_the_held_clock_and_reads_objects_as_kubectl_prints_them(cluster: Any, sim: Simulator) -> None:
    fake, sub = cluster
    assert fake.started and sub.now == sim.now and sub.speed == 20.0 and sub.namespace == NS
    pods = sub.objects("Pod")
    assert sorted(p["metadata"]["name"] for p in pods) == sorted(p["metadata"]["name"] for p in sim.objects("Pod"))
    assert all(p["kind"] == "Pod" and p["apiVersion"] == "v1" for p in pods)
    with pytest.raises(SubstrateError, match="unknown kind"):
        sub.objects("Widget")


def test_typed_views_equal_the_simulators(cluster: Any, sim: Simulator) -> None:
    _, sub = cluster
    for svc in sim.app.services:
        mine, theirs = sub.workload(svc.name), sim.workload(svc.name)
        assert mine == theirs, svc.name
        assert sub.rollout_status(svc.name).ok == sim.rollout_status(svc.name).ok
    assert [(p.name, p.service, p.node, p.zone, p.ready, p.status, p.restarts) for p in sub.pods()] == \
        [(p.name, p.service, p.node, p.zone, p.ready, p.status, p.restarts) for p in
         sorted(sim.pods(), key=lambda p: p.name)]
    zone = sim.pods()[0].zone
    assert zone is not None and sub.zone_nodes(zone) == sim.zone_nodes(zone)
    pod = sim.pods("frontend")[0].name
    assert sub.logs(pod, tail=5) == sim.logs(pod, tail=5)
    with pytest.raises(SubstrateError):
        sub.workload("no-such-service")


def test_health_window_counts_as_the_simulator_does(cluster: Any, sim: Simulator) -> None:
    _, sub = cluster
    first = sub.health_window()
    theirs = sim.health_window()
    for a, b in zip(first.services, theirs.services, strict=True):
        assert (a.service, a.requests, a.errors, a.ready, a.desired, a.restarts, a.status) == \
            (b.service, b.requests, b.errors, b.ready, b.desired, b.restarts, b.status)
        assert a.latency_buckets == pytest.approx(b.latency_buckets)
    assert first.le == theirs.le
    # routes: the entry service's counters by handler; the model's p95 from the probe header
    by_route = {r.route: r for r in first.routes}
    assert set(by_route) == {r.name for r in sim.app.routes}
    assert all(r.p95_ms == 321.0 for r in first.routes if r.rps > 0)
    with pytest.raises(SubstrateError, match="not a health window mark"):
        sub.health_window(object())


def test_counter_increase_handles_resets_new_and_gone_series() -> None:
    a, b, c = (("pod", "a"),), (("pod", "b"),), (("pod", "c"),)
    assert series_increase({a: 10.0, b: 3.0, c: 5.0}, {a: 4.0, b: 7.0}) == {a: 6.0, b: 3.0, c: 5.0}
    assert series_increase({}, {a: 1.0}) == {}


def test_code_fault_is_the_change_image_patched_with_a_change_cause(cluster: Any) -> None:
    fake, sub = cluster
    spec = next(f for f in load_catalog("online-boutique").faults if f.mechanism == "code-change")
    inst = sub.apply_fault(spec)
    method, path, ctype, body = fake.writes[-1]
    assert (method, ctype) == ("PATCH", "application/strategic-merge-patch+json")
    assert path == f"/apis/apps/v1/namespaces/{NS}/deployments/{spec.target}"
    image = change_image(sub.repository, spec.target, spec)
    assert image.startswith(f"registry.sre-marathon.local/online-boutique/{spec.target}:")
    assert spec.id not in image
    assert body["spec"]["template"]["spec"]["containers"][0]["image"] == image
    assert body["metadata"]["annotations"]["kubernetes.io/change-cause"] == spec.change.summary
    assert inst.changes[0].image == image and inst.changes[0].commit
    assert spec.change.replace in sub.head_files(spec.target)[spec.change.file]
    assert sub.deploy_history(spec.target)[-1].kind == "code"
    with pytest.raises(SubstrateError, match="needs your build system"):
        sub.deploy_change(spec.target, files={spec.change.file: "something else"}, summary="x y z", author="me")


def test_config_scale_service_and_store_faults_are_api_writes(cluster: Any) -> None:
    fake, sub = cluster
    cat = load_catalog("online-boutique").faults
    env = next(f for f in cat if f.mechanism == "config-patch" and f.config and f.config.env)
    sub.apply_fault(env)
    body = fake.writes[-1][3]
    sent = body["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {e["name"]: e["value"] for e in sent} == dict(env.config.env)
    scale = next((f for f in cat if f.mechanism == "scale"), None)
    if scale is not None:
        sub.apply_fault(scale)
        method, path, ctype, body = fake.writes[-1]
        assert (method, ctype) == ("PATCH", "application/merge-patch+json")
        assert path.endswith(f"/deployments/{scale.target}/scale")
        assert body == {"spec": {"replicas": scale.config.replicas}}
    store = next((f for f in cat if f.mechanism == "store-restart"), None)
    if store is not None:
        n = len(fake.writes)
        sub.apply_fault(store)
        assert fake.writes[n:] and all(w[0] == "DELETE" and "/pods/" in w[1] for w in fake.writes[n:])


def test_faults_without_an_api_expression_are_skipped(cluster: Any) -> None:
    _, sub = cluster
    cat = load_catalog("online-boutique").faults
    cpu = next(f for f in cat if f.mechanism == "cpu-pressure")
    with pytest.raises(FaultSkipped, match="Chaos Mesh"):
        sub.apply_fault(cpu)
    node = next((f for f in cat if f.mechanism in ("kubelet-stop", "zone-outage", "node-network")), None)
    if node is not None:
        with pytest.raises(FaultSkipped, match="skipped"):
            sub.apply_fault(node)
    with pytest.raises(SubstrateError, match="cannot be forked"):
        sub.fork()


def test_chaos_faults_become_chaos_mesh_objects_where_served(sim: Simulator, tmp_path: Path) -> None:
    fake = FakeCluster(sim, chaos=True)
    with fake.running() as url:
        sub = KubeSubstrate("online-boutique", seed=3, kubeconfig=kubeconfig(tmp_path / "kc", url))
        cpu = next(f for f in load_catalog("online-boutique").faults if f.mechanism == "cpu-pressure")
        inst = sub.apply_fault(cpu)
        method, path, _, body = fake.writes[-1]
        assert method == "POST" and path == f"/apis/chaos-mesh.org/v1alpha1/namespaces/{NS}/stresschaos"
        assert body["kind"] == "StressChaos" and body["spec"]["mode"] == "all"
        assert body["spec"]["selector"] == {"namespaces": [NS], "labelSelectors": {"app": cpu.target}}
        assert body["spec"]["stressors"]["cpu"]["workers"] >= 1
        sub.revert_fault(inst)
        assert fake.writes[-1][0] == "DELETE" and fake.writes[-1][1].endswith(inst.effect_ids[0].split("/")[1])


def test_probe_reads_the_simulated_clusters_model_headers(cluster: Any) -> None:
    _, sub = cluster
    spec = next(f for f in load_catalog("online-boutique").faults if f.probe.route)
    res = sub.probe(spec.probe, spec.probe_anchor)
    assert (res.success, res.p95_ms) == (0.9, 321.0) and not res.ok


def test_a_real_cluster_runs_on_wall_seconds_and_estimates_probes(sim: Simulator, tmp_path: Path) -> None:
    fake = FakeCluster(sim, clock=False)
    with fake.running() as url:
        sub = KubeSubstrate("online-boutique", seed=3, kubeconfig=kubeconfig(tmp_path / "kc", url, None),
                            probe_samples=3)
        assert sub.speed == 1.0 and sub.now == 0.0 and sub.namespace == NS  # the model's namespace
        spec = next(f for f in load_catalog("online-boutique").faults if f.probe.route)
        # The fake proxy still sends the model headers; a real app would not: the samples decide then.
        assert sub.probe(spec.probe).success == 0.9
        with pytest.raises(SubstrateError, match="real cluster"):
            sub.set_load_factor(2.0)
        assert sub.health_window().services[0].requests == 0.0  # no Prometheus: no counters


class _NoChaosSim(Simulator):
    """The embedded cluster standing in for a substrate without Chaos Mesh and without forks."""

    kind = "kube"

    def apply_fault(self, spec: Any) -> Any:
        if spec.mechanism == "cpu-pressure":
            raise FaultSkipped(f"{spec.id}: cpu-pressure needs Chaos Mesh")
        return super().apply_fault(spec)

    def fork(self, *, drop_pending_builds: bool = False) -> Simulator:
        raise SubstrateError("a real cluster cannot be forked")

    def fault_in_template(self, fault: Any) -> list[str]:
        return ["env X=1"] if fault.spec.mechanism == "config-patch" else []


def test_a_skipped_fault_is_recorded_counted_and_not_scored() -> None:
    from engine.run.orchestrator import Orchestrator
    from faults.schedule import parse_schedule
    from scoring.score import _read

    cat = load_catalog("online-boutique").faults
    cpu = next(f for f in cat if f.mechanism == "cpu-pressure")
    env = next(f for f in cat if f.mechanism == "config-patch" and f.config and f.config.env)
    sched = parse_schedule({"app": "online-boutique", "seed": 1, "regime": "short-5", "duration_s": 300,
                            "faults": [{"at": 30, "fault": cpu.id, "target": cpu.target, "lifetime": 200},
                                       {"at": 60, "fault": env.id, "target": env.target, "lifetime": 200}]},
                           "<test>")
    run = Orchestrator(sched, substrate=_NoChaosSim("online-boutique", seed=1), hide_truth=False)
    run.run()
    events = run.stream.events
    inject = {e.payload["fault"]: e.payload for e in events if e.kind == "fault.inject"}
    assert inject[cpu.id]["skipped"] is True and "Chaos Mesh" in inject[cpu.id]["error"]
    assert "skipped" not in inject[env.id]
    end = next(e.payload for e in events if e.kind == "run.end")
    assert (end["faults_skipped"], end["faults_failed_to_inject"], end["faults_injected"]) == (1, 0, 1)
    assert events[0].payload["substrate"] == "kube"
    assert "1 fault(s) skipped" in run.summary()
    from engine.apps.model import load_app

    assert set(_read(events, load_app("online-boutique")).faults) == {env.id}  # the skipped one is not scored


def test_restart_gate_without_a_fork_judges_the_template() -> None:
    from engine.run.orchestrator import restart_survives

    sim = _NoChaosSim("online-boutique", seed=1)
    sim.advance(30)
    cat = load_catalog("online-boutique").faults
    env = next(f for f in cat if f.mechanism == "config-patch" and f.config and f.config.env)
    inst = sim.apply_fault(env)
    ok, detail = restart_survives(sim, env, inst)
    assert not ok and "still has the fault's env X=1" in detail
    scale = next(f for f in cat if f.mechanism == "scale")
    inst = sim.apply_fault(scale)
    ok, detail = restart_survives(sim, scale, inst)
    assert "judged by the template" in detail and ok == sim.probe(scale.probe, scale.probe_anchor).ok
    assert restart_survives(sim, scale)[0] is False  # nothing to judge by
