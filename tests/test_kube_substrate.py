"""KubeSubstrate against the simulated cluster's Kubernetes API, in process.

The cluster is a Simulator behind :class:`engine.kube.apiserver.KubeAPIServer` (TLS, bearer
token) with the administrator's Mutator and the simulated world (:class:`engine.sim.world.SimWorld`:
change images resolved to catalog changes, Chaos Mesh objects to effects), a harness clock,
and a service proxy answering from the simulator's probe model with the ``X-Marathon-*``
headers; a small Prometheus stand-in answers instant queries from the same simulator's scrape.

Conformance is against the simulator itself: the kube substrate's typed views (workload,
pods, rollout status), its logs and its health windows -- computed from API objects and
Prometheus series -- must equal what the Simulator computes from its own state, and the
faults it injects as API writes must land in the simulator as the embedded injection does.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from engine.kube.admin import AdminMutator
from engine.kube.apiserver import KubeAPIServer
from engine.kube.kubeconfig import write_kubeconfig
from engine.kube.substrate import KubeSubstrate, series_increase
from engine.sim.k8s import EPOCH
from engine.sim.simulator import Simulator
from engine.sim.world import SimWorld
from engine.substrate import FaultSkipped, SubstrateError
from faults.images import change_image
from faults.spec import ProbeSpec, load_catalog

NS = "online-boutique"
TOKEN = "t0ken"
CATALOG = load_catalog("online-boutique")


class Cluster:
    """A simulator behind the API server, with a harness clock, a proxy and a Prometheus stand-in."""

    def __init__(self, *, clock: bool = True, chaos: bool = True, seed: int = 3) -> None:
        self.sim = Simulator("online-boutique", seed=seed)
        self.sim.advance(120)
        self.lock = threading.RLock()
        self.world = SimWorld(self.sim, CATALOG)
        self.started = False
        self.queries: list[str] = []
        routes = []
        if clock:
            routes = [("GET", "/marathon/v1/clock", self._clock), ("POST", "/marathon/v1/clock/start", self._start),
                      ("POST", "/marathon/v1/builds", self._build)]
        self.server = KubeAPIServer(self.sim, lock=self.lock, mutator=AdminMutator(self.sim, self.world), token=TOKEN,
                                    proxy=self._proxy, extra_routes=routes, epoch=EPOCH, chaos=chaos)

    async def _clock(self, _: web.Request) -> web.Response:
        return web.json_response({"now": self.sim.now, "speed": 20.0, "dt": 1.0})

    async def _build(self, request: web.Request) -> web.Response:  # marathon cluster's CI
        doc = await request.json()
        with self.lock:
            return web.json_response({"image": self.world.build(doc["service"], doc["files"], doc["commit"])})

    async def _start(self, _: web.Request) -> web.Response:
        self.started = True
        return web.json_response({"now": self.sim.now})

    def _proxy(self, ns: str, service: str, port: str | None, path: str, method: str, query: Any,
               body: bytes) -> tuple[int, dict[str, str], bytes]:
        answer = self.world.model_request(service, path, query, method)  # what marathon cluster's proxy answers
        if answer is None:
            return 404, {}, b"404 page not found"
        return answer.status, {"X-Marathon-Success": f"{answer.success:.6f}",
                               "X-Marathon-P95-Ms": f"{answer.p95_ms:.1f}"}, b"{}"

    def advance(self, t: float) -> None:
        with self.lock:
            self.sim.advance(t)
            self.world.step()
            self.server.observe()

    def prometheus(self) -> web.Application:
        async def query(request: web.Request) -> web.Response:
            q = request.query["query"]
            self.queries.append(q)
            name = q.split("{", 1)[0]
            with self.lock:
                rows = [{"metric": {"__name__": s.name, **s.labels}, "value": [0, str(s.value)]}
                        for s in self.sim.scrape() if s.name == name and s.labels.get("namespace") == NS]
            return web.json_response({"status": "success", "data": {"resultType": "vector", "result": rows}})

        app = web.Application()
        app.router.add_get("/api/v1/query", query)
        return app


def _serve(app: web.Application) -> tuple[str, asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    url: list[str] = []

    async def setup() -> None:
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        url.append(f"http://127.0.0.1:{runner.addresses[0][1]}")

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(setup())
        ready.set()
        loop.run_forever()

    threading.Thread(target=run, daemon=True).start()
    ready.wait(10)
    return url[0], loop


@pytest.fixture()
def cluster(tmp_path: Path) -> Iterator[tuple[Cluster, KubeSubstrate]]:
    c = Cluster()
    url = c.server.start()
    prom, loop = _serve(c.prometheus())
    kc = write_kubeconfig(tmp_path / "kc", url, TOKEN, NS, certificate_authority=c.server.certificate)
    sub = KubeSubstrate("online-boutique", seed=3, kubeconfig=str(kc), prometheus=prom)
    try:
        yield c, sub
    finally:
        sub.close()
        c.server.stop()
        loop.call_soon_threadsafe(loop.stop)


def _tick(c: Cluster, sub: KubeSubstrate, dt: float = 15.0) -> None:
    c.advance(c.sim.now + dt)
    sub.advance(c.sim.now)


def test_attach_starts_the_held_clock_and_reads_objects_as_kubectl_prints_them(cluster: Any) -> None:
    c, sub = cluster
    assert c.started and sub.now == c.sim.now == 120.0 and sub.speed == 20.0 and sub.namespace == NS
    pods = sub.objects("Pod")
    assert sorted(p["metadata"]["name"] for p in pods) == sorted(p["metadata"]["name"] for p in c.sim.objects("Pod"))
    assert all(p["kind"] == "Pod" and p["apiVersion"] == "v1" for p in pods)
    with pytest.raises(SubstrateError, match="unknown kind"):
        sub.objects("Widget")


def test_typed_views_and_logs_equal_the_simulators(cluster: Any) -> None:
    c, sub = cluster
    sim = c.sim
    for svc in sim.app.services:
        assert sub.workload(svc.name) == sim.workload(svc.name), svc.name
        assert sub.rollout_status(svc.name).ok == sim.rollout_status(svc.name).ok
    mine = [(p.name, p.uid, p.service, p.node, p.zone, p.ready, p.status, p.restarts) for p in sub.pods()]
    theirs = [(p.name, p.uid, p.service, p.node, p.zone, p.ready, p.status, p.restarts) for p in sim.pods()]
    assert mine == sorted(theirs)
    zone = sim.pods()[0].zone
    assert zone is not None and sub.zone_nodes(zone) == sim.zone_nodes(zone)
    pod = sim.pods("frontend")[0].name
    assert sub.logs(pod, tail=5) == sim.logs(pod, tail=5)
    with pytest.raises(SubstrateError):
        sub.workload("no-such-service")
    with pytest.raises(KeyError):
        sub.rollout_status("no-such-service")


def test_health_windows_count_as_the_simulators(cluster: Any) -> None:
    c, sub = cluster
    first, theirs = sub.health_window(), c.sim.health_window()
    _tick(c, sub)
    second, theirs2 = sub.health_window(first.mark), c.sim.health_window(theirs.mark)
    for mine, ref in ((first, theirs), (second, theirs2)):
        assert (mine.t, mine.span_s, mine.le) == (ref.t, ref.span_s, ref.le)
        for a, b in zip(mine.services, ref.services, strict=True):
            assert (a.service, a.requests, a.errors, a.ready, a.desired, a.restarts, a.status) == \
                (b.service, b.requests, b.errors, b.ready, b.desired, b.restarts, b.status)
            assert a.latency_buckets == pytest.approx(b.latency_buckets)
        assert mine.stores == ref.stores
    assert second.services[0].requests > 0
    # routes: rate and errors from the entry service's counters by handler, p95 the model's (probe header)
    for a, b in zip(second.routes, theirs2.routes, strict=True):
        assert a.route == b.route and a.rps == pytest.approx(b.rps, rel=0.25) and a.p95_ms == pytest.approx(b.p95_ms,
                                                                                                             rel=0.25)
    with pytest.raises(SubstrateError, match="not a health window mark"):
        sub.health_window(object())


def test_counter_increase_handles_resets_new_and_gone_series() -> None:
    a, b, c = (("pod", "a"),), (("pod", "b"),), (("pod", "c"),)
    assert series_increase({a: 10.0, b: 3.0, c: 5.0}, {a: 4.0, b: 7.0}) == {a: 6.0, b: 3.0, c: 5.0}
    assert series_increase({}, {a: 1.0}) == {}


def test_a_code_fault_is_a_build_like_any_other_and_the_cluster_runs_the_defect(cluster: Any) -> None:
    """On ``marathon cluster`` a fault's commit, a benign commit and the fault's revert are all
    builds of the cluster's CI, ``<release repository>:<release tag>-<commit>``: image tags do
    not tell the fault apart (the review's leak: change images marked faults' rollouts)."""
    c, sub = cluster
    spec = next(f for f in CATALOG.faults if f.mechanism == "code-change" and f.target == "currencyservice")
    assert spec.change is not None
    release = c.sim.app.service(spec.target).image
    inst = sub.apply_fault(spec)
    image = inst.changes[0].image
    assert image is not None and image.startswith(release + "-") and spec.id not in image
    assert image == f"{release}-{inst.changes[0].commit[:7]}"  # type: ignore[index]
    assert c.sim.workload(spec.target).image == image
    assert spec.change.replace in c.sim.source_files(spec.target)[spec.change.file]  # the tree the CI built
    assert spec.change.replace in sub.head_files(spec.target)[spec.change.file]
    assert sub.source_files(spec.target)[spec.change.file] == c.sim.source_files(spec.target)[spec.change.file]
    assert sub.commits_ahead(spec.target) == 0
    _tick(c, sub, 60)
    assert not c.sim.probe(spec.probe, spec.probe_anchor).ok  # the defect runs
    other = sub.head_files(spec.target)[spec.change.file] + "\n"  # a benign edit: built the same way
    benign = sub.deploy_change(spec.target, files={spec.change.file: other}, summary="tidy", author="dev")
    assert benign.image is not None and benign.image.startswith(release + "-") and benign.image != image
    assert sub.fault_in_template(inst) == [f"the defect in {spec.change.file} (image {benign.image})"]
    reverted = sub.revert_fault(inst)
    assert reverted and all(r.image is not None and r.image.startswith(release + "-") for r in reverted)
    _tick(c, sub, 90)
    assert spec.change.defect_marker() not in c.sim.source_files(spec.target)[spec.change.file]
    assert c.sim.probe(spec.probe, spec.probe_anchor).ok and sub.fault_in_template(inst) == []


def test_on_a_real_cluster_a_code_fault_is_its_change_image(tmp_path: Path) -> None:
    """Without the simulated CI (a real cluster), only a catalog change deploys, as the image
    ``<repository>/<service>:<change id>`` the user's build system provides."""
    c = Cluster(clock=False)
    url = c.server.start()
    try:
        kc = write_kubeconfig(tmp_path / "kc", url, TOKEN, NS, certificate_authority=c.server.certificate)
        sub = KubeSubstrate("online-boutique", seed=3, kubeconfig=str(kc), probe_samples=3)
        spec = next(f for f in CATALOG.faults if f.mechanism == "code-change" and f.target == "currencyservice")
        assert spec.change is not None
        inst = sub.apply_fault(spec)
        image = change_image(sub.repository, spec.target, spec)
        assert spec.id not in image and inst.changes[0].image == image and inst.changes[0].commit
        assert c.sim.workload(spec.target).image == image
        assert spec.change.replace in c.sim.source_files(spec.target)[spec.change.file]  # the world resolved it
        with pytest.raises(SubstrateError, match="needs your build system"):
            sub.deploy_change(spec.target, files={spec.change.file: "something else"}, summary="x y z", author="me")
        assert sub.fault_in_template(inst) == [f"image {image}"]
        sub.revert_fault(inst)
        assert c.sim.workload(spec.target).image == inst.original["image"] and sub.fault_in_template(inst) == []
        assert sub.commits_ahead(spec.target) == 0
        sub.close()
    finally:
        c.server.stop()


def test_operator_writes_are_the_kubectl_requests(cluster: Any) -> None:
    c, sub = cluster
    spec = next(f for f in CATALOG.faults if f.mechanism == "code-change" and f.target == "currencyservice")
    before = c.sim.workload(spec.target).image
    sub.apply_fault(spec)
    _tick(c, sub)
    rec = sub.rollback(spec.target)  # kubectl rollout undo: the previous ReplicaSet's template
    assert c.sim.workload(spec.target).image == before and rec.kind == "rollback"
    assert sub.source_files(spec.target) == c.sim.source_files(spec.target)  # the pods run the old source again
    assert sub.commits_ahead(spec.target) == 1  # the head still has the change
    with pytest.raises(SubstrateError, match="revision 99"):
        sub.rollback(spec.target, 99)
    sub.scale("frontend", 3, summary="more frontends", author="alice")
    assert c.sim.workload("frontend").replicas == 3 and sub.deploy_history("frontend")[-1].kind == "scale"
    assert c.sim.deploy_history("frontend")[-1].author == "alice"  # the fieldManager names the author
    with pytest.raises(SubstrateError, match="non-negative"):
        sub.scale("frontend", -1)
    sub.deploy_change("adservice", env={"EXTRA": "1"}, summary="env", author="bob")
    assert c.sim.workload("adservice").env["EXTRA"] == "1"
    sub.deploy_change("adservice", env={"EXTRA": None}, summary="env", author="bob")
    assert "EXTRA" not in c.sim.workload("adservice").env
    probe = c.sim.workload("adservice").readiness_probe
    assert probe is not None
    sub.deploy_change("adservice", readiness_probe=probe.model_copy(update={"failure_threshold": 5}),
                      summary="probe", author="bob")
    ready = c.sim.workload("adservice").readiness_probe
    assert ready is not None and ready.failure_threshold == 5
    with pytest.raises(SubstrateError, match="nothing to change"):
        sub.deploy_change("adservice", summary="nothing", author="bob")
    pod = sorted(p.name for p in c.sim.pods("cartservice"))[0]
    sub.restart_pod(pod)
    assert any(p.name == pod and p.terminating for p in c.sim.pods("cartservice")) or \
        pod not in {p.name for p in c.sim.pods("cartservice")}
    with pytest.raises(SubstrateError):
        sub.restart_pod("no-such-pod")
    port = c.sim.objects("Service")[0]["spec"]["ports"][0]["targetPort"]
    name = c.sim.objects("Service")[0]["metadata"]["name"]
    rec = sub.patch_service(name, target_port=port, summary="same port", author="carol")
    assert (rec.kind, rec.author) == ("service", "carol")


def test_config_scale_and_store_faults_are_api_writes(cluster: Any) -> None:
    c, sub = cluster
    env = next(f for f in CATALOG.faults if f.mechanism == "config-patch" and f.config and f.config.env)
    inst = sub.apply_fault(env)
    assert env.config is not None and env.config.env is not None
    assert all(c.sim.workload(env.target).env.get(k) == v for k, v in env.config.env.items())
    sub.revert_fault(inst)
    assert not any(c.sim.workload(env.target).env.get(k) == v for k, v in env.config.env.items())
    scale = next(f for f in CATALOG.faults if f.mechanism == "scale")
    assert scale.config is not None
    inst = sub.apply_fault(scale)
    assert c.sim.workload(scale.target).replicas == scale.config.replicas
    assert sub.fault_in_template(inst) == [f"replicas {scale.config.replicas}"]
    store = next((s.name for s in c.sim.app.services if s.store is not None), None)
    assert store is not None
    before = {p.uid for p in c.sim.pods(store)}
    sub.restart_pod(sorted(p.name for p in c.sim.pods(store))[0])
    _tick(c, sub, 30)
    assert {p.uid for p in c.sim.pods(store) if not p.terminating} != before


def test_chaos_faults_are_chaos_mesh_objects_the_cluster_turns_into_effects(cluster: Any) -> None:
    c, sub = cluster
    cpu = next(f for f in CATALOG.faults if f.mechanism == "cpu-pressure")
    inst = sub.apply_fault(cpu)
    assert inst.effect_ids and inst.effect_ids[0].startswith("stresschaos/")
    assert any(cpu.target in eid for eid in c.sim.effects)  # the world took it for the catalog fault
    sub.revert_fault(inst)
    assert not any(cpu.target in eid and "stress" in eid for eid in c.sim.effects)


def test_faults_without_an_api_expression_are_skipped(tmp_path: Path) -> None:
    c = Cluster(chaos=False)
    url = c.server.start()
    try:
        kc = write_kubeconfig(tmp_path / "kc", url, TOKEN, NS, certificate_authority=c.server.certificate)
        sub = KubeSubstrate("online-boutique", seed=3, kubeconfig=str(kc))
        cpu = next(f for f in CATALOG.faults if f.mechanism == "cpu-pressure")
        with pytest.raises(FaultSkipped, match="Chaos Mesh"):
            sub.apply_fault(cpu)
        node = next(f for f in CATALOG.faults if f.mechanism == "kubelet-stop")
        with pytest.raises(FaultSkipped, match="skipped"):
            sub.apply_fault(node)
        with pytest.raises(SubstrateError, match="cannot be forked"):
            sub.fork()
        with pytest.raises(SubstrateError, match="needs your registry"):
            sub.tag_image("frontend", "v2")
        sub.close()
    finally:
        c.server.stop()


def test_probes_are_the_models_judgement_through_the_proxy(cluster: Any) -> None:
    c, sub = cluster
    ads = c.sim.app.service("adservice").operations[0].name
    for probe in [ProbeSpec(route=r.name) for r in c.sim.app.routes] + [ProbeSpec(operation=("adservice", ads))]:
        mine, ref = sub.probe(probe), c.sim.probe(probe)
        assert mine.ok == ref.ok and mine.success == pytest.approx(ref.success, abs=1e-6), probe
        assert mine.p95_ms == pytest.approx(ref.p95_ms, abs=0.05), probe  # the header has 0.1 ms
    for spec in [f for f in CATALOG.faults if f.probe.route][:6]:  # at a target: its operations, worst judges
        mine = sub.probe(spec.probe, spec.probe_anchor)
        assert 0.0 <= mine.success <= 1.0 and mine.p95_ms >= 0.0 and spec.probe_anchor in mine.detail


def test_a_real_cluster_runs_on_wall_seconds(tmp_path: Path) -> None:
    c = Cluster(clock=False)
    url = c.server.start()
    try:
        kc = write_kubeconfig(tmp_path / "kc", url, TOKEN, NS, certificate_authority=c.server.certificate)
        sub = KubeSubstrate("online-boutique", seed=3, kubeconfig=str(kc), probe_samples=3)
        assert sub.speed == 1.0 and sub.now == 0.0
        with pytest.raises(SubstrateError, match="real cluster"):
            sub.set_load_factor(2.0)
        assert sub.health_window().services[0].requests == 0.0  # no Prometheus: no counters
        probe = ProbeSpec(operation=("adservice", c.sim.app.service("adservice").operations[0].name))
        res = sub.probe(probe)  # three requests; the proxy's headers still carry the model here
        assert res.success == pytest.approx(c.sim.probe(probe).success)
        sub.close()
    finally:
        c.server.stop()


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


API_MECHANISMS = ("code-change", "config-patch", "image", "resource-limit", "readiness-probe", "liveness-probe",
                  "scale", "service-change")


@pytest.mark.parametrize("mechanism", API_MECHANISMS)
def test_a_fault_through_the_api_lands_as_the_embedded_injection(mechanism: str, tmp_path: Path) -> None:
    """The template (env, resources, probes, replicas; the image where no build is involved)
    and the Service after injecting through the API equal those after the embedded injection."""
    spec = next(f for f in CATALOG.faults if f.mechanism == mechanism)
    c = Cluster()
    url = c.server.start()
    try:
        kc = write_kubeconfig(tmp_path / "kc", url, TOKEN, NS, certificate_authority=c.server.certificate)
        sub = KubeSubstrate("online-boutique", seed=3, kubeconfig=str(kc))
        ref = Simulator("online-boutique", seed=3)
        ref.advance(120)
        ref.apply_fault(spec)
        sub.apply_fault(spec)
        ref.advance(150)
        c.advance(150)
        mine, theirs = c.sim.workload(spec.target), ref.workload(spec.target)
        assert (mine.env, mine.resources, mine.readiness_probe, mine.liveness_probe, mine.replicas) == \
            (theirs.env, theirs.resources, theirs.readiness_probe, theirs.liveness_probe, theirs.replicas)
        if mechanism != "code-change":
            assert mine.image == theirs.image
        else:
            assert spec.change is not None and spec.change.replace in c.sim.source_files(spec.target)[spec.change.file]
        svc = next(o for o in c.sim.objects("Service") if o["metadata"]["name"] == spec.target)["spec"]
        ref_svc = next(o for o in ref.objects("Service") if o["metadata"]["name"] == spec.target)["spec"]
        assert (svc.get("selector"), svc["ports"]) == (ref_svc.get("selector"), ref_svc["ports"])
        sub.close()
    finally:
        c.server.stop()


def test_marathon_cluster_attach_starts_the_clock_and_takes_load_factors(tmp_path: Path) -> None:
    from engine.run.cluster import SimulatedCluster

    cluster = SimulatedCluster("online-boutique", seed=1, speed=20.0, hold=True)
    cluster.start()
    try:
        kc = cluster.write_kubeconfig(tmp_path / "kc")
        assert cluster.held
        sub = KubeSubstrate("online-boutique", seed=1, kubeconfig=str(kc))
        assert not cluster.held and sub.speed == 20.0 and sub.now < 5
        base = cluster.sim.load_rate()
        sub.set_load_factor(2.5)
        assert cluster.sim.load_rate() == pytest.approx(2.5 * base, rel=0.05)
        with pytest.raises(SubstrateError, match="> 0"):
            sub.set_load_factor(0)
        sub.advance(sub.now + 10)
        assert cluster.sim.now >= sub.now
        sub.close()
    finally:
        cluster.stop()
