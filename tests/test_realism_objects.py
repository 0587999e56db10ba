"""Kubernetes objects and tool limits of the simulated cluster (issue 14, items 3 and 8).

Per app, what an operator sees for each new fault type, in the components' own words:

* a missing ConfigMap or Secret key: the new pod ``Pending`` with its container waiting in
  ``CreateContainerConfigError`` and the kubelet's message, a ``Failed`` warning ``Error: ...``;
* a memory request no node holds: the pod ``Pending`` (not ``ContainerCreating``), a
  ``FailedScheduling`` warning in the default scheduler's format;
* a Service whose selector matches no pod (or whose targetPort nobody listens on): no (or
  wrong-port) endpoints, and the callers' requests refused;
* a Secret rotation: pods started before it fail until restarted;

and the tool limits: ``kubectl_get`` of endpoints, endpointslices, configmaps and secrets
(keys, never values), events by last timestamp with the newest kept, and ``limit`` /
``continue`` paging that yields every object exactly once.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from engine.kubectl.describe import describe
from engine.kubectl.printers import get
from engine.run.orchestrator import Orchestrator
from engine.sim.k8s import EPOCH, WITHHELD
from engine.sim.simulator import Simulator
from faults.generator import generate
from faults.spec import FaultSpec, load_catalog

APPS = ["online-boutique", "astronomy-shop", "train-ticket"]
_SIMS: dict[tuple[str, str], Simulator] = {}


def _fault(app: str, fault_id: str) -> FaultSpec:
    return next(f for f in load_catalog(app).faults if f.id == fault_id)


def _with_fault(app: str, fault_id: str, seconds: float = 120.0) -> Simulator:
    """A fresh simulator (seed 0) with one catalog fault injected ``seconds`` ago."""
    key = (app, fault_id)
    if key not in _SIMS:
        sim = Simulator(app, seed=0)
        sim.apply_fault(_fault(app, fault_id))
        sim.advance(sim.now + seconds)
        _SIMS[key] = sim
    return _SIMS[key]


def _now(sim: Simulator) -> Any:
    return EPOCH + timedelta(seconds=sim.now)


def _events(sim: Simulator, pod: str) -> list[dict[str, Any]]:
    return [e for e in sim.events() if e["involvedObject"]["name"] == pod]


# ----------------------------------------------------------------- CreateContainerConfigError

CONFIG_KEY = {
    "astronomy-shop": ("as-product-catalog-configmap-key", "product-catalog",
                       "couldn't find key reload-interval in ConfigMap otel-demo/product-catalog-products"),
    "train-ticket": ("tt-voucher-secret-key", "ts-voucher-service",
                     "couldn't find key mysql-password in Secret train-ticket/ts-voucher-mysql"),
}


@pytest.mark.parametrize("app", sorted(CONFIG_KEY))
def test_missing_config_key_is_create_container_config_error(app: str) -> None:
    fault_id, service, message = CONFIG_KEY[app]
    sim = _with_fault(app, fault_id)
    new = [p for p in sim.cluster.pods.values() if p.service == service and p.template.config_refs
           and any(r.key in ("reload-interval", "mysql-password") for r in p.template.config_refs)]
    assert new, "the rollout created a pod of the new template"
    pod = new[0]
    obj = next(o for o in sim.objects("Pod") if o["metadata"]["name"] == pod.name)
    state = obj["status"]["containerStatuses"][0]["state"]
    assert state == {"waiting": {"reason": "CreateContainerConfigError", "message": message}}
    assert obj["status"]["phase"] == "Pending"
    failed = [e for e in _events(sim, pod.name) if e["reason"] == "Failed"]
    assert failed and failed[-1]["type"] == "Warning" and failed[-1]["message"] == f"Error: {message}"
    assert failed[-1]["count"] >= 2, "the kubelet retries and the recorder aggregates"
    table = get("Pod", sim.objects("Pod"), now=_now(sim), name=pod.name)
    assert re.search(rf"{pod.name}\s+0/1\s+CreateContainerConfigError\s+0\s", table), table
    # The env reference is in the pod spec as a real one would be.
    env = obj["spec"]["containers"][0]["env"]
    assert any("valueFrom" in e for e in env)
    # The old pods keep serving: the rollout waits (maxUnavailable 0 with 1-2 replicas).
    assert sum(1 for p in sim.cluster.pods.values() if p.service == service and p.ready) >= 1


def test_online_boutique_has_no_configmaps_or_secrets() -> None:
    """The release manifest defines none, so none are invented."""
    sim = Simulator("online-boutique", seed=0)
    for kind in ("ConfigMap", "Secret"):
        assert sim.objects(kind) == []
        assert get(kind, [], now=_now(sim), namespace="online-boutique") == \
            "No resources found in online-boutique namespace.\n"


def test_missing_configmap_volume_keeps_the_pod_container_creating() -> None:
    """A volume whose ConfigMap is gone: kubelet volume set-up fails (FailedMount), no container."""
    sim = Simulator("astronomy-shop", seed=0)
    del sim.cluster.config_objects[("ConfigMap", "flagd-config")]
    pod = sorted(p.name for p in sim.cluster.pods.values() if p.service == "flagd")[0]
    sim.restart_pod(pod)
    sim.advance(sim.now + 60)
    fresh = [p for p in sim.cluster.pods.values() if p.service == "flagd" and not p.running and not p.terminating]
    assert fresh
    mounts = [e for e in _events(sim, fresh[0].name) if e["reason"] == "FailedMount"]
    assert mounts and mounts[-1]["message"] == \
        'MountVolume.SetUp failed for volume "config-ro" : configmap "flagd-config" not found'
    assert fresh[0].status_text() == "ContainerCreating"


# ----------------------------------------------------------------- scheduling

MEMORY = {
    "online-boutique": ("ob-recommendation-memory-request", "recommendationservice"),
    "astronomy-shop": ("as-recommendation-memory-request", "recommendation"),
    "train-ticket": ("tt-travel-memory-request", "ts-travel-service"),
}


@pytest.mark.parametrize("app", APPS)
def test_memory_request_beyond_every_node_is_pending_with_failed_scheduling(app: str) -> None:
    fault_id, service = MEMORY[app]
    sim = _with_fault(app, fault_id, seconds=90.0)
    n = len(sim.cluster.nodes)
    pending = [p for p in sim.cluster.pods.values() if p.service == service and p.node is None]
    assert len(pending) == 1
    pod = pending[0]
    expected = (f"0/{n} nodes are available: {n} Insufficient memory. preemption: 0/{n} nodes are available: "
                f"{n} No preemption victims found for incoming pod..")
    events = [e for e in _events(sim, pod.name) if e["reason"] == "FailedScheduling"]
    assert events and events[-1]["message"] == expected
    assert events[-1]["type"] == "Warning" and events[-1]["source"]["component"] == "default-scheduler"
    obj = next(o for o in sim.objects("Pod") if o["metadata"]["name"] == pod.name)
    assert obj["status"]["phase"] == "Pending"
    assert obj["status"]["conditions"] == [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                            "message": expected}]
    assert "containerStatuses" not in obj["status"] or obj["status"]["containerStatuses"] is None
    table = get("Pod", sim.objects("Pod"), now=_now(sim), name=pod.name)
    assert re.search(rf"{pod.name}\s+0/1\s+Pending\s+0\s", table), table
    assert "ContainerCreating" not in table
    text = describe("Pod", obj, sim.events(), now=_now(sim), pods=sim.objects("Pod"),
                    replicasets=sim.objects("ReplicaSet"))
    assert "FailedScheduling" in text and "Insufficient memory" in text


def test_scheduler_counts_memory_already_requested() -> None:
    """A request that fits a node's allocatable but not what is left of it is refused too."""
    sim = Simulator("online-boutique", seed=0)
    cl = sim.cluster
    pod = next(p for p in cl.pods.values() if p.service == "adservice")
    used = {n.name: (0.0, n.memory - 2**30) for n in cl.nodes}  # 1 GiB left on every node
    node, msg = cl.fit_error(pod, used)
    assert node is not None  # adservice requests far less than 1 GiB
    big = pod.template.replace(resources=pod.template.resources.model_copy(update={
        "requests": pod.template.resources.requests.model_copy(update={"memory": "2Gi"})}))
    pod.template = big
    node, msg = cl.fit_error(pod, used)
    n = len(cl.nodes)
    assert node is None and msg.startswith(f"0/{n} nodes are available: {n} Insufficient memory.")


# ----------------------------------------------------------------- Services and endpoints

SELECTOR = {
    "online-boutique": ("ob-cart-service-selector", "cartservice", "frontend"),
    "astronomy-shop": ("as-cart-service-selector", "cart", "frontend"),
    "train-ticket": ("tt-station-service-selector", "ts-station-service", None),
}


@pytest.mark.parametrize("app", APPS)
def test_service_selector_mismatch_leaves_no_endpoints_and_callers_refused(app: str) -> None:
    fault_id, service, caller = SELECTOR[app]
    sim = _with_fault(app, fault_id, seconds=90.0)
    ep = next(o for o in sim.objects("Endpoints") if o["metadata"]["name"] == service)
    assert "subsets" not in ep
    es = next(o for o in sim.objects("EndpointSlice")
              if o["metadata"]["labels"]["kubernetes.io/service-name"] == service)
    assert not es.get("endpoints")
    table = get("Endpoints", sim.objects("Endpoints"), now=_now(sim), name=service)
    assert re.search(rf"^{service}\s+<none>\s+\S+$", table.splitlines()[1]), table
    # The pods themselves are fine: 1/1 Running and ready.
    assert all(p.ready for p in sim.cluster.pods.values() if p.service == service and not p.terminating)
    edges = [e for e in sim.topology(60) if e.callee == service]
    assert edges and all(e.error_share > 0.95 for e in edges)
    fault = _fault(app, fault_id)
    assert sim.probe(fault.probe, fault.probe_anchor).ok is False
    if caller is not None:
        pod = sorted(p.name for p in sim.cluster.pods.values() if p.service == caller)[0]
        # A Service with no endpoints is rejected by kube-proxy at its ClusterIP: the
        # caller's client names the address it dialed, not the Service's DNS name.
        ip = sim.cluster.services[service].cluster_ip
        # Go says "connection refused", Node's grpc-js "ECONNREFUSED".
        assert any(("connection refused" in line or "ECONNREFUSED" in line) and ip in line
                   for line in sim.logs(pod))


PORT = {
    "online-boutique": ("ob-currency-service-port", "currencyservice"),
    "astronomy-shop": ("as-currency-service-port", "currency"),
}


@pytest.mark.parametrize("app", sorted(PORT))
def test_service_port_mismatch_points_endpoints_at_the_wrong_port(app: str) -> None:
    fault_id, service = PORT[app]
    sim = _with_fault(app, fault_id, seconds=90.0)
    ep = next(o for o in sim.objects("Endpoints") if o["metadata"]["name"] == service)
    assert ep["subsets"][0]["ports"][0]["port"] == 7001
    table = get("Endpoints", sim.objects("Endpoints"), now=_now(sim), name=service)
    assert ":7001" in table
    edges = [e for e in sim.topology(60) if e.callee == service]
    assert edges and all(e.error_share > 0.95 for e in edges)


@pytest.mark.parametrize("app", APPS)
def test_healthy_endpoints_list_every_ready_pod(app: str) -> None:
    sim = Simulator(app, seed=0)
    for ep in sim.objects("Endpoints"):
        name = ep["metadata"]["name"]
        ready = sorted(p.ip for p in sim.cluster.pods.values() if p.service == name and p.ready)
        got = sorted(a["ip"] for s in ep.get("subsets", []) for a in s.get("addresses", []))
        assert got == ready, name
        port = sim.cluster.services[name].target_port
        assert all(pt["port"] == port for s in ep.get("subsets", []) for pt in s["ports"])


def test_patch_service_restores_the_endpoints() -> None:
    sim = Simulator("online-boutique", seed=0)
    inst = sim.apply_fault(_fault("online-boutique", "ob-cart-service-selector"))
    sim.advance(sim.now + 60)
    sim.patch_service("cartservice", selector=dict(inst.original["selector"]))
    sim.advance(sim.now + 60)
    ep = next(o for o in sim.objects("Endpoints") if o["metadata"]["name"] == "cartservice")
    assert len(ep["subsets"][0]["addresses"]) == 2
    assert all(e.error_share < 0.05 for e in sim.topology(30) if e.callee == "cartservice")
    assert [c.kind for c in sim.deploy_history("cartservice")][-2:] == ["service", "service"]


# ----------------------------------------------------------------- secret rotation

def test_secret_rotation_breaks_pods_started_before_until_restarted() -> None:
    fault = _fault("train-ticket", "tt-voucher-secret-rotation")
    sim = Simulator("train-ticket", seed=0)
    sim.apply_fault(fault)
    sim.advance(sim.now + 60)
    secret = next(o for o in sim.objects("Secret") if o["metadata"]["name"] == "ts-voucher-mysql")
    assert secret["metadata"]["resourceVersion"] == "1002"
    assert sim.probe(fault.probe, fault.probe_anchor).ok is False
    pod = sorted(p.name for p in sim.cluster.pods.values() if p.service == "ts-voucher-service")[0]
    assert any("Access denied for user" in line for line in sim.logs(pod))
    for name in sorted(p.name for p in sim.cluster.pods.values() if p.service == "ts-voucher-service"):
        sim.restart_pod(name)
    sim.advance(sim.now + 300)
    assert sim.probe(fault.probe, fault.probe_anchor).ok is True


# ----------------------------------------------------------------- kubectl_get: kinds, events, paging

@pytest.fixture(scope="module", params=APPS)
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Orchestrator:
    app = str(request.param)
    r = Orchestrator(generate(app, 3, "short-5"), run_dir=Path(tmp_path_factory.mktemp(app)) / "run")
    r.start()
    r.advance_to(180)
    r.tools.spend_time = False
    return r


def _get(run: Orchestrator, **args: Any) -> Any:
    res = run.tools.call("kubectl_get", args)
    assert res.ok, res.error
    return res


def test_kubectl_get_secrets_shows_keys_never_values(run: Orchestrator) -> None:
    model = run.sim.app
    secrets = [o for o in model.config_objects if o.kind == "Secret"]
    table = _get(run, kind="secrets").output
    if not secrets:
        assert table == f"No resources found in {model.namespace} namespace.\n"
        return
    assert table.splitlines()[0].split() == ["NAME", "TYPE", "DATA", "AGE"]
    for s in secrets:
        assert re.search(rf"^{s.name}\s+{s.type}\s+{len(s.keys)}\s", table, re.M), table
    text = _get(run, kind="secrets", output="yaml").output
    for s in secrets:
        for key in s.keys:
            assert f"{key}: {WITHHELD}" in text
    assert "YWRtaW4=" not in text  # the manifest's base64 grafana value never appears


def test_kubectl_get_configmaps_counts_data(run: Orchestrator) -> None:
    model = run.sim.app
    cms = [o for o in model.config_objects if o.kind == "ConfigMap"]
    table = _get(run, kind="configmaps").output
    if not cms:
        assert table.startswith("No resources found")
        return
    for cm in cms:
        assert re.search(rf"^{re.escape(cm.name)}\s+{len(cm.keys)}\s", table, re.M), cm.name


def test_kubectl_get_endpoints_and_endpointslices(run: Orchestrator) -> None:
    sim = run.sim
    services = sorted(s.name for s in sim.app.services if s.service_port is not None)
    names = [ln.split()[0] for ln in _get(run, kind="endpoints", limit=500).output.splitlines()[1:]]
    assert names == services
    ep_table = _get(run, kind="endpoints", name=services[0]).output
    ready = sorted(p.ip for p in sim.cluster.pods.values() if p.service == services[0] and p.ready)
    for ip in ready[:3]:
        assert ip in ep_table
    slices = _get(run, kind="endpointslices", limit=500).output.splitlines()
    assert slices[0].split() == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    assert len(slices) - 1 == len(services)


def test_kubectl_get_events_is_sorted_by_last_timestamp_and_keeps_the_newest(run: Orchestrator) -> None:
    sim = run.sim
    events = sim.events()
    res = _get(run, kind="events")
    lines = res.output.splitlines()
    assert lines[0].split()[:2] == ["LAST", "SEEN"]
    newest = max(events, key=lambda e: (e["lastTimestamp"], e["metadata"]["name"]))
    newest_obj = f"{newest['involvedObject']['kind'].lower()}/{newest['involvedObject']['name']}"
    body = [ln for ln in lines[1:] if not ln.startswith("-- ")]
    assert newest_obj in body[-1] or any(newest_obj in ln for ln in body[-5:])
    if res.data.get("continue"):
        assert "older not shown" in lines[-1] and res.data["continue"] in lines[-1]
        oldest = min(events, key=lambda e: (e["lastTimestamp"], e["metadata"]["name"]))
        assert oldest["metadata"]["name"] not in res.output
    assert len(res.output) <= 12_000


def _follow(run: Orchestrator, kind: str, limit: int | None) -> list[str]:
    names: list[str] = []
    token: str | None = None
    for _ in range(200):
        args: dict[str, Any] = {"kind": kind, "output": "json"}
        if limit is not None:
            args["limit"] = limit
        if token:
            args["continue"] = token
        res = _get(run, **args)
        doc = json.loads(res.output)
        names += [f"{o['metadata']['name']}" for o in doc["items"]]
        token = res.data.get("continue")
        assert doc["metadata"].get("continue") == token
        if not token:
            return names
    raise AssertionError("paging did not end")


@pytest.mark.parametrize("kind,api", [("pods", "Pod"), ("events", "Event"), ("endpoints", "Endpoints")])
def test_paging_with_continue_tokens_yields_every_object_once(run: Orchestrator, kind: str, api: str) -> None:
    expected = sorted(o["metadata"]["name"] for o in run.sim.objects(api))
    got = _follow(run, kind, limit=7)
    assert len(got) == len(set(got)) and sorted(got) == expected


def test_train_ticket_pod_list_never_cuts_the_faulty_pod_silently(tmp_path: Path) -> None:
    r = Orchestrator(generate("train-ticket", 3, "short-5"), run_dir=tmp_path / "run")
    r.start()
    r.advance_to(60)
    r.tools.spend_time = False
    r.sim.apply_fault(_fault("train-ticket", "tt-travel-memory-request"))
    r.sim.advance(r.sim.now + 60)
    pending = sorted(p.name for p in r.sim.cluster.pods.values() if p.node is None)
    assert pending
    res = _get(r, kind="pods")
    token = res.data.get("continue")
    seen = res.output
    while token:
        assert f"continue={token}" in res.output  # a cut list says so and how to go on
        res = _get(r, kind="pods", **{"continue": token})
        seen += res.output
        token = res.data.get("continue")
    for name in pending:
        assert re.search(rf"{name}\s+0/1\s+Pending", seen)


def test_bad_continue_token_is_an_api_error(run: Orchestrator) -> None:
    res = run.tools.call("kubectl_get", {"kind": "pods", "continue": "not-a-token"})
    assert not res.ok and "continue key is not valid" in (res.error or "")
    pods_token = _get(run, kind="pods", limit=1).data["continue"]
    res = run.tools.call("kubectl_get", {"kind": "events", "continue": pods_token})
    assert not res.ok and "continue key is not valid" in (res.error or "")


def test_tool_schema_lists_the_new_arguments() -> None:
    from engine.operate.tools import tool_schemas

    schema = next(t["function"]["parameters"] for t in tool_schemas() if t["function"]["name"] == "kubectl_get")
    assert {"limit", "continue"} <= set(schema["properties"])
    kinds = set(schema["properties"]["kind"]["enum"])
    assert {"endpoints", "endpointslices", "configmaps", "secrets"} <= kinds
    names = {t["function"]["name"] for t in tool_schemas()}
    assert "patch_service" in names
