"""Node loss and the node/kubelet/runtime fault types look as they do in Kubernetes (issue 14, items 3 and 4).

The node lifecycle timeline (pods ``1/1 Running`` through the grace period, every condition
``Unknown`` with the last heartbeat kept, the unreachable taints, ``NodeNotReady`` on each pod,
``TaintManagerEviction`` 300 s after the taint), ``kubectl get nodes -o wide`` and ``describe
node``, and, per app, the statuses, events and kubectl text of every catalog fault of the new
mechanisms (kubelet stop, node network, registry DNS and auth failures, liveness probes).
Texts are the real components': ``pkg/controller/util/node/controller_utils.go``,
``pkg/controller/tainteviction/taint_eviction.go``, ``pkg/probe/{http,tcp,grpc}``, containerd 1.7.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest

from engine.kubectl import describe, printers
from engine.sim.cluster import EVICTION_S, NODE_GRACE_S, NODE_MONITOR_PERIOD_S, normalize_image, pull_error
from engine.sim.k8s import EPOCH, NODE_STATUS_REPORT_S, timestamp
from engine.sim.simulator import Simulator
from faults.spec import FaultSpec, load_catalog


def _now(sim: Simulator) -> Any:
    return EPOCH + timedelta(seconds=sim.now)


def _pods_on(sim: Simulator, node: str) -> list[dict[str, Any]]:
    return [p for p in sim.objects("Pod") if p["spec"]["nodeName"] == node]


def _cond(obj: dict[str, Any], type_: str) -> dict[str, Any]:
    return next(c for c in obj["status"]["conditions"] if c["type"] == type_)


def _node(sim: Simulator, name: str) -> dict[str, Any]:
    return next(n for n in sim.objects("Node") if n["metadata"]["name"] == name)


def _events(sim: Simulator, name: str, reason: str | None = None) -> list[dict[str, Any]]:
    return [e for e in sim.events() if e["involvedObject"]["name"] == name
            and (reason is None or e["reason"] == reason)]


def _sample(sim: Simulator, name: str, labels: dict[str, str]) -> float | None:
    for s in sim.scrape():
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
            return s.value
    return None


@pytest.fixture
def ob() -> Simulator:
    sim = Simulator("online-boutique", seed=7)
    sim.advance(60)
    return sim


# ----------------------------------------------------------------- node lifecycle


def test_node_loss_timeline_matches_the_node_lifecycle_and_taint_eviction_controllers(ob: Simulator) -> None:
    name = "node-a-1"
    t0 = ob.now
    node_obj = ob.cluster.node(name)
    last_hb = node_obj.heartbeat(t0)
    ob.set_node_ready(name, False)
    victims = sorted(p["metadata"]["name"] for p in _pods_on(ob, name))
    assert victims
    due = node_obj.lease_renewed_before(t0) + NODE_GRACE_S
    unknown_at = (due // NODE_MONITOR_PERIOD_S + 1) * NODE_MONITOR_PERIOD_S
    assert t0 + 30 <= unknown_at <= t0 + NODE_GRACE_S + NODE_MONITOR_PERIOD_S

    # Grace period: nothing changes in the API; the pods just stop answering.
    ob.advance(unknown_at - 1)
    table = printers.get("pods", _pods_on(ob, name), now=_now(ob))
    assert all(re.search(r"\s1/1\s+Running\s", line) for line in table.splitlines()[1:]), table
    assert _cond(_node(ob, name), "Ready")["status"] == "True"
    assert "taints" not in _node(ob, name)["spec"]
    assert all(_cond(p, "Ready")["status"] == "True" for p in _pods_on(ob, name))
    assert not _events(ob, victims[0], "NodeNotReady")
    assert max(r.error_share for r in ob.route_health(15)) > 0.05, "calls to the lost node's pods time out"

    # The controller's monitor pass: every condition Unknown, the last heartbeat kept, taints.
    ob.advance(unknown_at)
    node = _node(ob, name)
    assert [c["type"] for c in node["status"]["conditions"]] == ["MemoryPressure", "DiskPressure", "PIDPressure",
                                                                 "Ready"]
    for c in node["status"]["conditions"]:
        assert (c["status"], c["reason"], c["message"]) == ("Unknown", "NodeStatusUnknown",
                                                            "Kubelet stopped posting node status.")
        assert c["lastHeartbeatTime"] == timestamp(last_hb)
        assert c["lastTransitionTime"] == timestamp(unknown_at)
    assert t0 - NODE_STATUS_REPORT_S < last_hb <= t0
    assert sorted((t["key"], t["effect"]) for t in node["spec"]["taints"]) == [
        ("node.kubernetes.io/unreachable", "NoExecute"), ("node.kubernetes.io/unreachable", "NoSchedule")]
    assert printers.get("nodes", [node], now=_now(ob)).splitlines()[1].split()[1] == "NotReady"
    assert _sample(ob, "kube_node_spec_taint", {"node": name, "effect": "NoExecute"}) == 1.0
    assert _sample(ob, "kube_node_status_condition", {"node": name, "condition": "Ready", "status": "unknown"}) == 1.0
    for pod in _pods_on(ob, name):
        pname = pod["metadata"]["name"]
        assert _cond(pod, "Ready")["status"] == "False"
        assert _cond(pod, "ContainersReady")["status"] == "True"  # only the kubelet writes container status
        assert pod["status"]["phase"] == "Running"
        ev = _events(ob, pname, "NodeNotReady")
        assert [(e["type"], e["message"], e["source"]["component"]) for e in ev] == [
            ("Warning", "Node is not ready", "node-controller")]
        assert _sample(ob, "kube_pod_status_ready", {"pod": pname, "condition": "false"}) == 1.0
    table = printers.get("pods", _pods_on(ob, name), now=_now(ob))
    assert all(re.search(r"\s1/1\s+Running\s", line) for line in table.splitlines()[1:]), table
    node_events = _events(ob, name, "NodeNotReady")
    assert [e["message"] for e in node_events] == [f"Node {name} status is now: NodeNotReady"]

    # DefaultTolerationSeconds: 300 s after the NoExecute taint the pods are marked for deletion.
    ob.advance(unknown_at + EVICTION_S - 1)
    assert not _events(ob, victims[0], "TaintManagerEviction")
    ob.advance(unknown_at + EVICTION_S + 1)
    ns = ob.app.namespace
    for pname in victims:
        ev = _events(ob, pname, "TaintManagerEviction")
        assert [(e["type"], e["message"], e["source"]["component"]) for e in ev] == [
            ("Normal", f"Marking for deletion Pod {ns}/{pname}", "taint-eviction-controller")]
    table = printers.get("pods", _pods_on(ob, name), now=_now(ob))
    assert all(re.search(r"\s1/1\s+Terminating\s", line) for line in table.splitlines()[1:]), table
    pod = _pods_on(ob, name)[0]
    assert _cond(pod, "DisruptionTarget")["reason"] == "DeletionByTaintManager"
    assert "deletionTimestamp" in pod["metadata"]
    assert not any(e["reason"] == "Killing" for e in _events(ob, victims[0])), "no kubelet to stop the container"
    # Replacements run elsewhere for every Deployment that had a pod there.
    ob.advance(ob.now + 120)
    for p in _pods_on(ob, name):
        svc = p["metadata"]["labels"]["app"]
        live = [q for q in ob.objects("Pod") if q["metadata"]["labels"]["app"] == svc
                and "deletionTimestamp" not in q["metadata"]]
        assert live and all(q["spec"]["nodeName"] != name for q in live), svc


def test_a_node_back_before_the_eviction_cancels_it(ob: Simulator) -> None:
    name = "node-b-1"
    ob.set_node_ready(name, False)
    victims = sorted(p["metadata"]["name"] for p in _pods_on(ob, name))
    ob.advance(ob.now + 120)
    assert _cond(_node(ob, name), "Ready")["status"] == "Unknown"
    ob.set_node_ready(name, True)
    ob.advance(ob.now + 1)
    node = _node(ob, name)
    assert _cond(node, "Ready")["status"] == "True" and "taints" not in node["spec"]
    ns = ob.app.namespace
    for pname in victims:
        assert [e["message"] for e in _events(ob, pname, "TaintManagerEviction")] == [
            f"Cancelling deletion of Pod {ns}/{pname}"]
    assert [e["message"] for e in _events(ob, name, "NodeReady")] == [f"Node {name} status is now: NodeReady"]
    ob.advance(ob.now + 60)
    assert all(_cond(p, "Ready")["status"] == "True" for p in _pods_on(ob, name))


def test_a_stopped_kubelet_keeps_its_pods_serving_until_the_controller_acts(ob: Simulator) -> None:
    name = "node-b-2"  # redis-cart's node: the single replica
    ob.set_node_ready(name, False, network=False)
    ob.advance(ob.now + 25)
    errors = {r.route: r.error_share for r in ob.route_health(20)}
    assert errors["view-cart"] < 0.01, "containers keep answering while only the kubelet is down"
    ob.advance(ob.now + 60)
    errors = {r.route: r.error_share for r in ob.route_health(15)}
    assert errors["view-cart"] > 0.9, "no redis-cart endpoint once its pod is marked not ready"
    ob.set_node_ready(name, True, network=False)
    ob.advance(ob.now + 1)
    assert [e["message"] for e in _events(ob, name, "Starting")] == ["Starting kubelet."]


# ----------------------------------------------------------------- kubectl views of nodes


def test_get_nodes_wide_shows_addresses_os_kernel_and_runtime(ob: Simulator) -> None:
    text = printers.get("nodes", ob.objects("Node"), output="wide", now=_now(ob))
    lines = text.splitlines()
    assert lines[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE",
                                "KERNEL-VERSION", "CONTAINER-RUNTIME"]
    for i, line in enumerate(lines[1:]):
        assert re.fullmatch(rf"node-[ab]-\d\s+Ready\s+worker\s+30d\s+v1\.30\.4\s+10\.128\.0\.{10 + i}\s+<none>\s+"
                            r"Ubuntu 24\.04\.1 LTS\s+6\.8\.0-41-generic\s+containerd://1\.7\.20", line), line


def test_describe_node_shows_taints_conditions_addresses_and_system_info(ob: Simulator) -> None:
    name = "node-a-2"
    n = ob.cluster.node(name)
    text = describe.describe("Node", _node(ob, name), ob.events(), now=_now(ob), pods=ob.objects("Pod"),
                             lease=n.lease_k8s(ob.now))
    hb = (EPOCH + timedelta(seconds=n.heartbeat(ob.now))).strftime("%a, %d %b %Y %H:%M:%S +0000")
    assert "Taints:             <none>" in text
    assert re.search(rf"Ready\s+True\s+{re.escape(hb)}\s+.+\s+KubeletReady\s+kubelet is posting ready status", text)
    assert re.search(rf"MemoryPressure\s+False\s+{re.escape(hb)}\s+.+KubeletHasSufficientMemory", text)
    assert "InternalIP:  10.128.0.11" in text and "Hostname:    node-a-2" in text
    for field in ("Kernel Version:             6.8.0-41-generic", "OS Image:                   Ubuntu 24.04.1 LTS",
                  "Container Runtime Version:  containerd://1.7.20", "Kubelet Version:            v1.30.4"):
        assert field in text
    assert "HolderIdentity:  node-a-2" in text


# ----------------------------------------------------------------- image pull texts


def test_pull_error_texts_follow_the_reference() -> None:
    registry = {"us-central1-docker.pkg.dev/online-boutique-ci/microservices-demo/cartservice:v0.10.6",
                "codewisdom/ts-price-service:0.0.4"}
    assert normalize_image("codewisdom/ts-price-service:0.0.4") == (
        "docker.io/codewisdom/ts-price-service:0.0.4", "docker.io", "codewisdom/ts-price-service", "0.0.4")
    assert normalize_image("redis") == ("docker.io/library/redis:latest", "docker.io", "library/redis", "latest")
    dns = pull_error("registry.boutique.internal/microservices-demo/cartservice:v0.10.6", registry)
    assert dns.endswith('failed to do request: Head "https://registry.boutique.internal/v2/microservices-demo/'
                        'cartservice/manifests/v0.10.6": dial tcp: lookup registry.boutique.internal on '
                        "127.0.0.53:53: no such host")
    auth = pull_error("trainticket-ci/ts-price-service:0.0.4", registry)
    assert auth == ('rpc error: code = Unknown desc = failed to pull and unpack image '
                    '"docker.io/trainticket-ci/ts-price-service:0.0.4": failed to resolve reference '
                    '"docker.io/trainticket-ci/ts-price-service:0.0.4": pull access denied, repository does not '
                    "exist or may require authorization: server message: insufficient_scope: authorization failed")
    missing = pull_error("codewisdom/ts-price-service:0.0.5", registry)
    assert missing.endswith('"docker.io/codewisdom/ts-price-service:0.0.5": docker.io/codewisdom/ts-price-service:'
                            "0.0.5: not found")


# ----------------------------------------------------------------- catalog faults of the new mechanisms

APPS = ("online-boutique", "astronomy-shop", "train-ticket")
NEW = ("kubelet-stop", "node-network", "liveness-probe")
CASES = [(app, f) for app in APPS for f in load_catalog(app).faults
         if f.mechanism in NEW or (f.mechanism == "image" and "registry" in f.id)]


def test_every_app_has_the_new_fault_types() -> None:
    for app in APPS:
        kinds = {f.mechanism if f.mechanism != "image" else f.id.rsplit("-", 1)[-1]
                 for a, f in CASES if a == app}
        assert {"kubelet-stop", "node-network", "dns", "auth"} <= kinds, (app, kinds)
    assert {a for a, f in CASES if f.mechanism == "liveness-probe"} == {"online-boutique", "train-ticket"}


def _injected(app: str, spec: FaultSpec, settle: float) -> tuple[Simulator, list[str]]:
    sim = Simulator(app, seed=3)
    sim.advance(60)
    inst = sim.apply_fault(spec)
    sim.advance(sim.now + settle)
    return sim, list(inst.original.get("nodes", []))


@pytest.mark.parametrize("case", CASES, ids=[f.id for _, f in CASES])
def test_new_fault_types_show_the_real_statuses_events_and_texts(case: tuple[str, FaultSpec]) -> None:
    app, spec = case
    target = spec.target
    if spec.mechanism == "kubelet-stop":
        sim, nodes = _injected(app, spec, 90)
        node = _node(sim, nodes[0])
        assert _cond(node, "Ready")["reason"] == "NodeStatusUnknown"
        pods = [p for p in _pods_on(sim, nodes[0]) if p["metadata"]["labels"]["app"] == target]
        assert pods and all(_cond(p, "Ready")["status"] == "False" for p in pods)
        table = printers.get("pods", pods, now=_now(sim))
        assert re.search(r"\s1/1\s+Running\s", table.splitlines()[1]), table
        assert _events(sim, pods[0]["metadata"]["name"], "NodeNotReady")
        assert not sim.probe(spec.probe, spec.probe_anchor).ok
        return
    if spec.mechanism == "node-network":
        before = Simulator(app, seed=3)
        before.advance(150)
        sim, nodes = _injected(app, spec, 90)
        assert nodes
        result = sim.probe(spec.probe, spec.probe_anchor)
        assert not result.ok, result.detail
        rt = spec.runtime
        assert rt is not None
        if rt.delay_ms:
            # The delayed replica's share shows in the target's p95: far above the healthy one.
            slow = {r.route: r.p95_ms for r in sim.route_health(60)}
            fast = {r.route: r.p95_ms for r in before.route_health(60)}
            assert spec.probe.route is not None
            assert slow[spec.probe.route] > fast[spec.probe.route] + 0.5 * rt.delay_ms
        else:
            errors = {r.route: r.error_share for r in sim.route_health(60)}
            assert spec.probe.route is not None and errors[spec.probe.route] > 0.05
        # Nothing in the API says so: the pods are Running and Ready.
        on_node = [p for p in _pods_on(sim, nodes[0]) if p["metadata"]["labels"]["app"] == target]
        assert on_node and all(_cond(p, "Ready")["status"] == "True" for p in on_node)
        return
    if spec.mechanism == "image":
        sim, _ = _injected(app, spec, 120)
        assert spec.config is not None and spec.config.image is not None
        image = spec.config.image
        new = [p for p in sim.objects("Pod") if p["metadata"]["labels"]["app"] == target
               and p["spec"]["containers"][0]["image"] == image]
        assert new
        state = new[0]["status"]["containerStatuses"][0]["state"]
        assert state["waiting"]["reason"] in ("ErrImagePull", "ImagePullBackOff")
        msgs = [e["message"] for e in _events(sim, new[0]["metadata"]["name"], "Failed")]
        ref = normalize_image(image)[0]
        head = f'Failed to pull image "{image}": rpc error: code = Unknown desc = failed to pull and unpack image ' \
               f'"{ref}": failed to resolve reference "{ref}": '
        if spec.id.endswith("dns"):
            host = normalize_image(image)[1]
            assert any(m.startswith(head + "failed to do request: Head") and
                       m.endswith(f"dial tcp: lookup {host} on 127.0.0.53:53: no such host") for m in msgs), msgs
        else:
            assert head + ("pull access denied, repository does not exist or may require authorization: server "
                           "message: insufficient_scope: authorization failed") in msgs, msgs
        assert "Error: ErrImagePull" in msgs and "Error: ImagePullBackOff" in msgs
        table = printers.get("pods", new, now=_now(sim))
        assert re.search(r"\s0/1\s+(ErrImagePull|ImagePullBackOff)\s", table.splitlines()[1]), table
        return
    # liveness-probe: the kubelet kills the container after failureThreshold misses, restarts climb.
    assert spec.config is not None and spec.config.liveness_probe is not None
    lp = spec.config.liveness_probe
    sim, _ = _injected(app, spec, 600)
    new = [p for p in sim.objects("Pod") if p["metadata"]["labels"]["app"] == target
           and p["spec"]["containers"][0].get("livenessProbe", {}).get("periodSeconds") == int(lp.period_s)
           and "deletionTimestamp" not in p["metadata"]]
    assert new
    pod = new[0]
    name, ip = pod["metadata"]["name"], pod["status"]["podIP"]
    cs = pod["status"]["containerStatuses"][0]
    assert cs["restartCount"] >= 3
    msgs = {e["message"] for e in _events(sim, name, "Unhealthy")}
    if lp.type == "grpc":
        want = f'Liveness probe failed: timeout: failed to connect service "{ip}:{lp.port}" within 1s: ' \
               "context deadline exceeded"
    elif lp.type == "http":
        want = "Liveness probe failed: HTTP probe failed with statuscode: 404"
    else:
        want = f"Liveness probe failed: dial tcp {ip}:{lp.port}: connect: connection refused"
    assert want in msgs, msgs
    kills = [e for e in _events(sim, name, "Killing")
             if e["message"] == f"Container {cs['name']} failed liveness probe, will be restarted"]
    assert kills and kills[0]["count"] >= 2
    assert any(e["reason"] == "BackOff" for e in _events(sim, name))
    sim.advance(sim.now + 5)
    statuses = set()
    for _ in range(40):
        sim.advance(sim.now + 5)
        p = next(q for q in sim.objects("Pod") if q["metadata"]["name"] == name)
        statuses.add(printers.pod_status(p)[2])
    assert "CrashLoopBackOff" in statuses, statuses
    assert not sim.probe(spec.probe, spec.probe_anchor).ok


def test_the_describe_tool_shows_the_node_lease(tmp_path: Any) -> None:
    from engine.run.orchestrator import Orchestrator
    from faults.generator import generate

    run = Orchestrator(generate("online-boutique", 3, "short-5"), run_dir=tmp_path / "run")
    run.start()
    run.advance_to(120)
    run.tools.spend_time = False
    res = run.tools.call("kubectl_describe", {"kind": "nodes", "name": "node-a-1"})
    assert res.ok, res.text()
    assert "HolderIdentity:  node-a-1" in res.output and "Failed to get lease" not in res.output
    assert "Taints:             <none>" in res.output
