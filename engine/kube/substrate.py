"""A substrate over a real cluster: :class:`KubeSubstrate`, through the official ``kubernetes`` client.

The run loop, tools, policy, recorder and scorer are the same code on both substrates; this
module answers the :class:`~engine.substrate.Substrate` interface from a cluster the user
points at (a kind or k3s cluster, or ``marathon cluster``, the simulated cluster behind a
Kubernetes API server):

* **state** -- objects, events and logs through the API (``kubernetes`` 36.x, the last
  release on the classic generated models; 37 is a pydantic rewrite), as raw API dicts
  (``_preload_content=False``: what ``kubectl get -o json`` prints, with ``kind`` and
  ``apiVersion`` filled in on list items as kubectl fills them);
* **series** -- a Prometheus the user runs (``prometheus-api-client``, instant queries):
  health windows are the counter arithmetic of :mod:`engine.sim.health` (``increase()``
  per series between two windows' ends) over the counters Prometheus last scraped;
  alerts come from that Prometheus too (the orchestrator's ``alert_source="prometheus=URL"``),
  so :attr:`store` is None;
* **the clock** -- on ``marathon cluster`` the harness clock ``GET /marathon/v1/clock``
  (``{"now", "speed", "dt"}``; started with ``POST /marathon/v1/clock/start`` at attach, so a
  ``--hold`` cluster starts at run time 0 with the run); on a real cluster, wall seconds
  since attach (speed 1). :attr:`now` is the cluster's time when the last :meth:`advance`
  returned (whole seconds): at or past the target, so a run loop that falls behind the
  cluster's pace sees and stamps things when they happen;
* **writes** -- PATCHes as kubectl sends them (strategic merge of the Deployment's pod
  template with a ``kubernetes.io/change-cause`` annotation, ``deployments/scale``,
  JSON patch of ``spec.template`` for ``rollout undo``, pod deletes, Service patches);
* **builds** -- on ``marathon cluster`` every source edit (a fault's commit, a benign commit,
  a revert, an operator's patch) is built by the cluster's CI (``POST /marathon/v1/builds``)
  into ``<release repository>:<release tag>-<commit>``, the form the embedded pipeline's builds
  take, so a fault's rollout looks like any other; on a real cluster only a catalog change
  deploys, as the image ``<repository>/<service>:<change id>`` (:func:`faults.images.change_image`)
  your build system provides -- and there the benign commits, which nobody builds, are
  skipped, so the code rollouts an operator sees are the faults' (README "Real cluster");
* **faults** (ground truth) -- catalog faults as Kubernetes mutations: a code change is a
  build (above); env, resources,
  probes, image and replicas as patches; a Service edit; ``cpu-pressure`` and
  ``network-delay`` as Chaos Mesh ``StressChaos``/``NetworkChaos`` objects where the cluster
  serves ``chaos-mesh.org``; a store restart as deleting the store's pods. Anything else is
  :class:`~engine.substrate.FaultSkipped` (the run records it as skipped, not missed);
* **probes** -- HTTP requests (aiohttp) through the API server's service proxy: on
  ``marathon cluster`` its ``X-Marathon-Success`` / ``X-Marathon-P95-Ms`` headers give the
  model's numbers (a documented simulator shortcut); on a real cluster both are estimated
  from :attr:`probe_samples` requests.

Not supported (each raises :class:`~engine.substrate.SubstrateError` with the reason): on a
real cluster, building a patch of source files that is not exactly a catalog change (that
needs your build system), ``tag_image`` (needs your registry), ``fork`` (a cluster cannot be copied: the
orchestrator's restart gate then judges the repair by the template, see
:func:`engine.run.orchestrator.restart_survives`), load bursts on a real cluster (no load
generator of ours runs there), deploying the app (``deploy=True``: attach to an app you
deployed from ``../shared/data``'s manifests).

Why ``kubernetes`` is a default dependency and not an extra: the substrate is one of the two
the product names on its card, the wheel is pure Python (about 2 MB), and a ``[kube]`` extra
would make ``marathon run --substrate kube`` fail on a plain install with an import error.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import copy
import hashlib
import json
import math
import re
import threading
import time
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from engine.apps.model import AppModel, Probe, ResourceList, Resources, load_app, probe_spec, source_root
from engine.substrate import (
    ChangeRecord,
    EdgeStats,
    FaultInstance,
    FaultSkipped,
    HealthWindow,
    PodView,
    ProbeResult,
    RouteHealth,
    Sample,
    ServiceHealth,
    ServiceWindow,
    Substrate,
    SubstrateError,
    WorkloadView,
)
from faults.images import change_image, default_repository

if TYPE_CHECKING:
    from faults.spec import FaultSpec, ProbeSpec

LE: tuple[float, ...] = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, math.inf)
"""Latency bucket bounds a health window always has, seconds: the simulator's
(:data:`engine.sim.health.LE`; the Prometheus client defaults plus 30 s and 60 s), so windows
from ``marathon cluster`` equal the embedded ones bucket for bucket (a bound a service's
histogram lacks counts 0, as in the simulator). Bounds a real app's histograms add are merged in."""

NODE_TTL_S = 30.0
"""Run seconds a Node list is reused (nodes give pods their zone; their labels do not move)."""
CHAOS_GROUP, CHAOS_VERSION = "chaos-mesh.org", "v1alpha1"
CHANGE_CAUSE = "kubernetes.io/change-cause"
AUTHOR_ANNOTATION = "sre-marathon.io/author"
PROBE_SAMPLES = 20
"""Requests per symptom probe on a real cluster (success and p95 are estimated from them)."""
_KINDS: dict[str, tuple[str, str, str]] = {
    # kind -> (API path prefix, plural, apiVersion); "" prefix marks cluster scope.
    "Node": ("/api/v1", "nodes", "v1"),
    "Pod": ("/api/v1/namespaces/{ns}", "pods", "v1"),
    "Service": ("/api/v1/namespaces/{ns}", "services", "v1"),
    "Event": ("/api/v1/namespaces/{ns}", "events", "v1"),
    "Endpoints": ("/api/v1/namespaces/{ns}", "endpoints", "v1"),
    "ConfigMap": ("/api/v1/namespaces/{ns}", "configmaps", "v1"),
    "Secret": ("/api/v1/namespaces/{ns}", "secrets", "v1"),
    "Deployment": ("/apis/apps/v1/namespaces/{ns}", "deployments", "apps/v1"),
    "StatefulSet": ("/apis/apps/v1/namespaces/{ns}", "statefulsets", "apps/v1"),
    "ReplicaSet": ("/apis/apps/v1/namespaces/{ns}", "replicasets", "apps/v1"),
    "EndpointSlice": ("/apis/discovery.k8s.io/v1/namespaces/{ns}", "endpointslices", "discovery.k8s.io/v1"),
}


def probe_from_api(d: dict[str, Any] | None) -> Probe | None:
    """A Kubernetes probe dict as a :class:`~engine.apps.model.Probe` (None for None)."""
    if not d:
        return None
    delay, period = float(d.get("initialDelaySeconds", 0)), float(d.get("periodSeconds", 10))
    timeout, threshold = float(d.get("timeoutSeconds", 1)), int(d.get("failureThreshold", 3))

    def make(kind: Literal["http", "grpc", "tcp", "exec"], handler: dict[str, Any], path: str | None = None) -> Probe:
        port = handler.get("port")
        return Probe(type=kind, port=port if isinstance(port, int) else None, path=path, initial_delay_s=delay,
                     period_s=period, timeout_s=timeout, failure_threshold=threshold)

    if "httpGet" in d:
        return make("http", d["httpGet"], d["httpGet"].get("path"))
    if "grpc" in d:
        return make("grpc", d["grpc"])
    if "tcpSocket" in d:
        return make("tcp", d["tcpSocket"])
    cmd = (d.get("exec") or {}).get("command") or []
    return make("exec", {}, str(cmd[-1]) if cmd else None)


def resources_from_api(d: dict[str, Any] | None) -> Resources:
    """A container's ``resources`` dict as :class:`~engine.apps.model.Resources`."""
    d = d or {}

    def rl(x: dict[str, Any] | None) -> ResourceList:
        x = x or {}
        cpu, mem = x.get("cpu"), x.get("memory")
        return ResourceList(cpu=None if cpu is None else str(cpu), memory=None if mem is None else str(mem))

    return Resources(requests=rl(d.get("requests")), limits=rl(d.get("limits")))


def resources_to_api(r: Resources) -> dict[str, Any]:
    """:class:`~engine.apps.model.Resources` as a container's ``resources`` dict."""
    out: dict[str, Any] = {}
    for side, rl in (("requests", r.requests), ("limits", r.limits)):
        vals = {k: v for k, v in (("cpu", rl.cpu), ("memory", rl.memory)) if v is not None}
        if vals:
            out[side] = vals
    return out


def parse_time(text: str | None) -> float | None:
    """An RFC 3339 API timestamp as Unix seconds (None for None or garbage)."""
    if not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def series_increase(now: dict[tuple[tuple[str, str], ...], float],
                    before: dict[tuple[tuple[str, str], ...], float]) -> dict[tuple[tuple[str, str], ...], float]:
    """Per series, the counter increase between two readings, as PromQL's ``increase()`` over
    the window's two ends takes it (the arithmetic of :mod:`engine.sim.health`): a decrease is
    a counter reset (the new process counted from zero), a series new since ``before``
    counts from zero, a series gone by ``now`` counts nothing."""
    out = {}
    for key, v in now.items():
        prev = before.get(key, 0.0)
        out[key] = v if v < prev else v - prev
    return out


_Answer = tuple[bool, float, "tuple[float, float] | None"]
"""One probe request's answer: (ok, latency ms, the simulated cluster's (success, p95 ms) hint)."""


@dataclass(frozen=True)
class _Mark:
    """A health window's end: run time, seconds, and the counters Prometheus held then."""

    t: float
    requests: dict[tuple[tuple[str, str], ...], float]
    buckets: dict[tuple[tuple[str, str], ...], float]


class KubeSubstrate(Substrate):
    """A running application on a Kubernetes cluster (module docstring).

    Args:
        app: the app model (a shipped app's name, a model file, or a loaded model): its
            services, routes and call graph (topology without a trace backend).
        seed: the run's seed (recorded; the cluster has its own randomness).
        kubeconfig: path of the kubeconfig to use.
        context: its context (default: the current one).
        namespace: the app's namespace (default: the context's namespace, else the model's).
        prometheus: base URL of the Prometheus that scrapes the app (with the rule pack
            loaded: ``marathon prometheus-config``); None leaves health and series empty.
        image_repository: where code-change images live (default
            ``registry.sre-marathon.local/<app>``).
        probe_samples: requests per symptom probe on a real cluster.
        deploy: deploy the shipped app first -- not supported yet (raises).
        timeout_s: API and Prometheus request timeout, seconds.

    Raises:
        SubstrateError: the kubeconfig does not load, the cluster does not answer, the
            namespace holds none of the app's workloads, or ``deploy`` was asked for.
    """

    kind: ClassVar[str] = "kube"

    def __init__(self, app: str | AppModel, *, seed: int, kubeconfig: str, context: str | None = None,
                 namespace: str | None = None, prometheus: str | None = None, image_repository: str | None = None,
                 probe_samples: int = PROBE_SAMPLES, deploy: bool = False, timeout_s: float = 10.0) -> None:
        from kubernetes import client, config

        if deploy:
            raise SubstrateError("deploying the app is not supported yet: deploy it from the manifests in "
                                 "../shared/data (kubectl apply -f) and attach to its namespace")
        self.app = app if isinstance(app, AppModel) else load_app(app)
        self.seed = seed
        self.dt = 1.0
        self.store = None
        self.timeout_s = timeout_s
        self.probe_samples = probe_samples
        try:
            self.api = config.new_client_from_config(config_file=kubeconfig, context=context, persist_config=False)
            if namespace is None:
                contexts, active = config.list_kube_config_contexts(kubeconfig)
                chosen = next((c for c in contexts if c["name"] == context), active) if context else active
                namespace = (chosen or {}).get("context", {}).get("namespace")
        except (OSError, config.ConfigException) as exc:
            raise SubstrateError(f"kubeconfig {kubeconfig}: {exc}") from None
        self.namespace = namespace or self.app.namespace
        self.core = client.CoreV1Api(self.api)
        self.apps = client.AppsV1Api(self.api)
        self.custom = client.CustomObjectsApi(self.api)
        self.repository = (image_repository or default_repository(self.app.name)).rstrip("/")
        self.prometheus_url = prometheus.rstrip("/") if prometheus else None
        self._prom: Any = None
        if prometheus:
            from prometheus_api_client import PrometheusConnect

            self._prom = PrometheusConnect(url=self.prometheus_url or "", disable_ssl=True,
                                           timeout=math.ceil(timeout_s))
        self.changes: list[ChangeRecord] = []
        self._n_changes = 0
        self._head: dict[str, dict[str, str]] = {}
        self._commits: dict[str, list[tuple[str, dict[str, str], str | None]]] = {}
        """Per service, the commits this substrate shipped: (commit id, files, image)."""
        self._images: dict[str, dict[str, str]] = {}
        """Image reference -> the source files it was built from (the shipped ones, then ours)."""
        self._store_uids: dict[str, set[str]] = {}
        self._chaos: bool | None = None
        self._ports: dict[str, int | str] = {}
        self._cache: dict[str, list[dict[str, Any]]] = {}
        self._cache_t: float | None = None
        self._nodes_t = -math.inf
        self._statefulsets = any(svc.workload == "StatefulSet" for svc in self.app.services)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._session: Any = None
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="kube-substrate-prom")
        try:
            self._sim_clock = self._clock_start()
        except Exception as exc:
            raise SubstrateError(f"the cluster at {self.api.configuration.host} does not answer: {exc}") from None
        self._wall0 = time.monotonic()
        self._epoch0 = time.time()
        self.speed = float(self._sim_clock["speed"]) if self._sim_clock else 1.0
        """Run-time seconds per wall second: the simulated cluster's, 1 on a real cluster."""
        self._t = float(math.floor(self._cluster_now()))
        names = {d["metadata"]["name"] for k in ("Deployment", "StatefulSet") for d in self._list(k)}
        if not names & set(self.app.service_names()):
            raise SubstrateError(f"namespace {self.namespace!r} holds none of {self.app.name}'s workloads; "
                                 "deploy the app there or pass --namespace")
        self._epoch = self._sim_clock.get("epoch") if self._sim_clock else None
        for svc in self.app.services:
            if svc.store is not None:
                self._store_uids[svc.name] = {p.uid for p in self.pods(svc.name)} if svc.name in names else set()
        self._store_base = {s: len(u) for s, u in self._store_uids.items()}
        self._store_restarts: dict[str, int] = {p.uid: p.restarts for p in self.pods() if p.service in self._store_uids}
        self._store_base_restarts = {s: sum(self._store_restarts.get(uid, 0) for uid in u)
                                     for s, u in self._store_uids.items()}

    # ----------------------------------------------------------------- raw API

    def _call(self, method: str, path: str, *, query: dict[str, Any] | None = None, body: Any = None,
              content_type: str | None = None) -> Any:
        """One API request through the client's ApiClient (auth, TLS and host from the
        kubeconfig); the JSON answer, or None for an empty body.

        Raises:
            kubernetes.client.ApiException: any non-2xx answer.
        """
        if method != "GET":
            self._cache.clear()  # a write: the next read lists again
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        resp = self.api.call_api(path, method, query_params=list((query or {}).items()), header_params=headers,
                                 body=body, auth_settings=["BearerToken"], _preload_content=False,
                                 _return_http_data_only=True, _request_timeout=self.timeout_s)
        data = resp.data
        return json.loads(data) if data else None

    def _clock_start(self) -> dict[str, Any]:
        """Start the simulated cluster's held clock and return its reading; {} on a real cluster."""
        from kubernetes.client import ApiException

        try:
            clock = self._call("GET", "/marathon/v1/clock")
        except ApiException as exc:
            if exc.status in (404, 403, 405):
                self._call("GET", "/version")  # a real cluster: it must still answer
                return {}
            raise
        if not isinstance(clock, dict) or "now" not in clock:
            return {}
        try:
            self._call("POST", "/marathon/v1/clock/start", body={})
        except ApiException as exc:
            if exc.status not in (404, 405, 409):
                raise
        return dict(self._call("GET", "/marathon/v1/clock"))

    def _cluster_now(self) -> float:
        if self._sim_clock:
            return float(self._call("GET", "/marathon/v1/clock")["now"])
        return time.monotonic() - self._wall0

    def _path(self, kind: str, name: str | None = None, sub: str | None = None) -> str:
        try:
            prefix, plural, _ = _KINDS[kind]
        except KeyError:
            raise SubstrateError(f"unknown kind {kind!r}; kinds: {', '.join(_KINDS)}") from None
        path = f"{prefix.format(ns=self.namespace)}/{plural}"
        if name is not None:
            path += f"/{urllib.parse.quote(name)}"
        if sub is not None:
            path += f"/{sub}"
        return path

    def _get(self, kind: str, name: str) -> dict[str, Any] | None:
        from kubernetes.client import ApiException

        try:
            obj = self._call("GET", self._path(kind, name))
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise SubstrateError(f"get {kind} {name}: {exc.status} {exc.reason}") from None
        return dict(obj)

    def _patch(self, kind: str, name: str, body: Any, content_type: str = "application/strategic-merge-patch+json",
               sub: str | None = None, author: str | None = None) -> dict[str, Any]:
        """One PATCH; ``author`` goes as the ``fieldManager`` (who made the change: what
        ``marathon cluster``'s pipeline log records, and a real cluster's managedFields).

        Raises:
            SubstrateError: the API refuses it (its Status message).
        """
        from kubernetes.client import ApiException

        query = {"fieldManager": _field_manager(author)} if author else None
        try:
            return dict(self._call("PATCH", self._path(kind, name, sub), query=query, body=body,
                                   content_type=content_type))
        except ApiException as exc:
            raise SubstrateError(f"patch {kind} {name}: {exc.status} {_api_message(exc)}") from None

    # ----------------------------------------------------------------- clock

    @property
    def now(self) -> float:
        """The cluster's run time as the last :meth:`advance` found it, whole seconds: the
        cluster's clock is the run's clock (read once per advance, not per question)."""
        return float(self._t)

    def advance(self, until: float) -> None:
        """Wait until the cluster's clock reaches ``until`` (run seconds; polled at most every
        0.2 wall seconds). :attr:`now` becomes the cluster's time then, in whole seconds --
        ``until``, or later when the cluster ran ahead of a run loop that fell behind it (the
        loop then skips the evaluations it missed, as Prometheus does, and stamps what it sees
        with the time it saw it)."""
        while True:
            c = self._cluster_now()
            if c >= until - 1e-9:
                break
            time.sleep(min(max((until - c) / self.speed, 0.01), 0.2))
        self._t = max(self._t, until, float(math.floor(c + 1e-9)))

    def _run_time(self, timestamp: str | None) -> float | None:
        """An API timestamp as run time: against the simulated cluster's epoch when its clock
        says one, else against the wall clock at attach."""
        ts = parse_time(timestamp)
        if ts is None:
            return None
        if self._epoch is not None:
            return ts - float(self._epoch)
        return (ts - self._epoch0) * self.speed

    # ----------------------------------------------------------------- state

    def objects(self, kind: str) -> list[dict[str, Any]]:
        """Objects of one kind as ``kubectl get -o json`` lists them (see :meth:`_list`)."""
        return copy.deepcopy(self._list(kind))

    def _list(self, kind: str) -> list[dict[str, Any]]:
        """One LIST of ``kind`` in the namespace (Nodes: the cluster's), items with ``kind`` and
        ``apiVersion`` as kubectl fills them in. A snapshot per run-loop tick: lists are read
        once per :attr:`now` (the simulator's state is per tick too; Nodes every
        :data:`NODE_TTL_S`; StatefulSets not at all when the app model has none) and again
        after any write this substrate makes -- so an evaluation interval's probes, health and deploy history
        cost a handful of requests, not one per question. The cached dicts are shared: copy
        before changing one.

        Raises:
            SubstrateError: unknown kind, or the API refusing the list.
        """
        from kubernetes.client import ApiException

        if self._cache_t != self._t:
            nodes = self._cache.get("Node")
            self._cache.clear()
            self._cache_t = self._t
            if nodes is not None and self._t - self._nodes_t < NODE_TTL_S:
                self._cache["Node"] = nodes
        if kind in self._cache:
            return self._cache[kind]
        if kind == "StatefulSet" and not self._statefulsets:
            self._cache[kind] = []  # the model has none: not worth a request per tick
            return self._cache[kind]
        if kind == "Node":
            self._nodes_t = self._t
        path = self._path(kind)
        try:
            items = list(self._call("GET", path).get("items") or [])
        except ApiException as exc:
            raise SubstrateError(f"list {kind}: {exc.status} {exc.reason}") from None
        api_version = _KINDS[kind][2]
        out = [{"apiVersion": api_version, "kind": kind, **it} for it in items]  # kubectl fills these in on items
        self._cache[kind] = out
        return out

    def events(self, since: float | None = None) -> list[dict[str, Any]]:
        evs = self.objects("Event")

        def last(e: dict[str, Any]) -> str:
            return str(e.get("lastTimestamp") or e.get("eventTime") or e["metadata"].get("creationTimestamp") or "")

        evs.sort(key=last)
        if since is None:
            return evs
        return [e for e in evs if (self._run_time(last(e)) or -math.inf) > since]

    def logs(self, pod: str, *, tail: int | None = None, previous: bool = False,
             since: float | None = None, timestamps: bool = False) -> list[str]:
        """``GET pods/<pod>/log`` of the app container (``tailLines``, ``previous``,
        ``sinceSeconds`` from run time via the cluster's speed, ``timestamps``).

        Raises:
            SubstrateError: unknown pod, or the kubelet's refusal (its message).
        """
        from kubernetes.client import ApiException

        obj = self._get("Pod", pod)
        if obj is None:
            raise SubstrateError(f'pods "{pod}" not found')
        query: dict[str, Any] = {"container": self._container_name(obj["spec"]), "previous": str(previous).lower()}
        if tail is not None:
            query["tailLines"] = tail
        if timestamps:
            query["timestamps"] = "true"
        if since is not None:
            query["sinceSeconds"] = max(1, math.ceil((self.now - since) / self.speed))
        try:
            resp = self.api.call_api(self._path("Pod", pod, "log"), "GET", query_params=list(query.items()),
                                     header_params={"Accept": "text/plain"}, auth_settings=["BearerToken"],
                                     _preload_content=False, _return_http_data_only=True,
                                     _request_timeout=self.timeout_s)
        except ApiException as exc:
            raise SubstrateError(_api_message(exc)) from None
        return [str(line) for line in resp.data.decode("utf-8", "replace").splitlines()]

    def _container_name(self, pod_spec: dict[str, Any]) -> str:
        containers = pod_spec.get("containers") or [{}]
        names = [c.get("name") for c in containers]
        for svc in self.app.services:
            if svc.container in names:
                return svc.container
        return str(names[0])

    def _workload_obj(self, name: str) -> dict[str, Any]:
        """The Deployment or StatefulSet ``name`` from this tick's lists (shared: do not change it).

        Raises:
            SubstrateError: no such workload.
        """
        for kind in ("Deployment", "StatefulSet"):
            obj = next((o for o in self._list(kind) if o["metadata"]["name"] == name), None)
            if obj is not None:
                return obj
        raise SubstrateError(f"no workload {name!r} in namespace {self.namespace}")

    def workload(self, name: str) -> WorkloadView:
        obj = self._workload_obj(name)
        meta, spec, status = obj["metadata"], obj.get("spec", {}), obj.get("status", {})
        c = self._container(obj)
        revision = int((meta.get("annotations") or {}).get("deployment.kubernetes.io/revision",
                                                          meta.get("generation", 1)))
        return WorkloadView(
            name=meta["name"], kind=obj.get("kind") or ("StatefulSet" if "serviceName" in spec else "Deployment"),
            replicas=int(spec.get("replicas", 1)), revision=revision, generation=int(meta.get("generation", 1)),
            observed_generation=int(status.get("observedGeneration", 0)),
            ready_replicas=int(status.get("readyReplicas", 0)), image=str(c.get("image", "")),
            env={e["name"]: e["value"] for e in c.get("env") or [] if "value" in e},
            resources=resources_from_api(c.get("resources")), readiness_probe=probe_from_api(c.get("readinessProbe")),
            liveness_probe=probe_from_api(c.get("livenessProbe")))

    def _container(self, workload: dict[str, Any]) -> dict[str, Any]:
        pod_spec = workload["spec"]["template"]["spec"]
        name = self._container_name(pod_spec)
        return next(c for c in pod_spec["containers"] if c.get("name") == name)

    def pods(self, service: str | None = None) -> list[PodView]:
        if service is not None:
            self._workload_obj(service)
        zones = {n["metadata"]["name"]: (n["metadata"].get("labels") or {}).get("topology.kubernetes.io/zone")
                 for n in self._list("Node")}
        out = []
        for p in sorted(self._list("Pod"), key=lambda p: p["metadata"]["name"]):
            app = (p["metadata"].get("labels") or {}).get("app")
            if service is not None and app != service:
                continue
            node = p.get("spec", {}).get("nodeName")
            out.append(PodView(name=p["metadata"]["name"], uid=p["metadata"].get("uid", ""), service=str(app or ""),
                               node=node, zone=zones.get(node) if node else None, ready=_pod_ready(p),
                               terminating=bool(p["metadata"].get("deletionTimestamp")), status=pod_status(p),
                               restarts=sum(int(s.get("restartCount", 0))
                                            for s in p.get("status", {}).get("containerStatuses") or [])))
        return out

    def zone_nodes(self, zone: str) -> list[str]:
        return [n["metadata"]["name"] for n in self._list("Node")
                if (n["metadata"].get("labels") or {}).get("topology.kubernetes.io/zone") == zone]

    def rollout_status(self, deployment: str) -> ProbeResult:
        """As ``kubectl rollout status`` judges it (generation observed, updated replicas =
        spec, no old replicas left, all updated available), plus none of its pods waiting
        other than being created.

        Raises:
            KeyError: no such workload.
        """
        try:
            obj = self._workload_obj(deployment)
        except SubstrateError:
            raise KeyError(deployment) from None
        spec, status, meta = obj.get("spec", {}), obj.get("status", {}), obj["metadata"]
        want = int(spec.get("replicas", 1))
        updated = int(status.get("updatedReplicas", status.get("updatedReplicas", 0)) or 0)
        total = int(status.get("replicas", 0) or 0)
        available = int(status.get("availableReplicas", status.get("readyReplicas", 0)) or 0)
        waiting = sorted({str((cs.get("state") or {}).get("waiting", {}).get("reason"))
                          for p in self._list("Pod") if (p["metadata"].get("labels") or {}).get("app") == deployment
                          and not p["metadata"].get("deletionTimestamp")
                          for cs in p.get("status", {}).get("containerStatuses") or []
                          if "waiting" in (cs.get("state") or {})
                          and (cs["state"]["waiting"].get("reason") or "") not in ("", "ContainerCreating")})
        ok = (int(status.get("observedGeneration", 0)) >= int(meta.get("generation", 1)) and updated >= want
              and total <= updated and available >= updated and not waiting)
        detail = (f"deployment {deployment}: {min(updated, available)}/{want} updated and available, {total} pods"
                  + (f", waiting: {', '.join(waiting)}" if waiting else ""))
        return ProbeResult(ok, 1.0 if ok else 0.0, 0.0, detail)

    # ----------------------------------------------------------------- series (Prometheus)

    def _query(self, promql: str) -> list[dict[str, Any]]:
        if self._prom is None:
            return []
        try:
            return list(self._prom.custom_query(promql))
        except Exception as exc:
            raise SubstrateError(f"Prometheus at {self.prometheus_url}: {promql}: {exc}") from None

    def _counters(self, metric: str) -> dict[tuple[tuple[str, str], ...], float]:
        out: dict[tuple[tuple[str, str], ...], float] = {}
        for r in self._query(f'{metric}{{namespace="{self.namespace}"}}'):
            labels = {k: v for k, v in r["metric"].items() if k != "__name__"}
            out[tuple(sorted(labels.items()))] = float(math.floor(float(r["value"][1]) + 1e-9))
        return out

    def scrape(self) -> list[Sample]:
        """Every series of the app's namespace as Prometheus last scraped it (an instant query);
        empty without a Prometheus."""
        out = []
        for r in self._query(f'{{namespace="{self.namespace}"}}'):
            labels = dict(r["metric"])
            name = labels.pop("__name__", "")
            out.append(Sample(name, labels, float(r["value"][1])))
        return out

    def exposition(self) -> str:
        """:meth:`scrape` in the Prometheus text format."""
        lines = []
        for s in sorted(self.scrape(), key=lambda s: (s.name, sorted(s.labels.items()))):
            lab = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(s.labels.items()))
            lines.append(f"{s.name}{{{lab}}} {s.value:g}")
        return "\n".join(lines) + ("\n" if lines else "")

    def health_window(self, since: object | None = None) -> HealthWindow:
        """See :meth:`Substrate.health_window`; counters from Prometheus' last scrape (so a
        window's counts lag its ends by up to one scrape interval), pods from the API.

        Routes: rate and 5xx share from the entry service's ``http_requests_total`` of the
        route's handler, latency quantiles from the entry service's histogram (its series with
        ``entry="true"``; on ``marathon cluster`` the p95 is the route probe's
        ``X-Marathon-P95-Ms``, the model's, as the embedded load generator reports it).
        Stores: the data generation is the number of incarnations of a store without
        persistence seen since attach (new pod uids and container restarts).

        Raises:
            SubstrateError: ``since`` is not a mark of this substrate; Prometheus fails.
        """
        if since is not None and not isinstance(since, _Mark):
            raise SubstrateError(f"not a health window mark: {since!r}")
        # The three sources answer concurrently: route probes (their own loop), Prometheus
        # (a worker thread), the API (here) -- a window costs the slowest, not the sum.
        probing = self._route_probes_start()
        counting = self._pool.submit(lambda: (self._counters("http_requests_total"),
                                              self._counters("http_request_duration_seconds_bucket")))
        pods = self.pods()
        workloads = {o["metadata"]["name"]: o for k in ("Deployment", "StatefulSet") for o in self._list(k)}
        req_now, bkt_now = counting.result()
        req = series_increase(req_now, since.requests if since else {})
        bkt = series_increase(bkt_now, since.buckets if since else {})
        span = 0.0 if since is None else self.now - since.t
        le = tuple(sorted(set(LE) | set(_bounds(bkt))))
        services = []
        for svc in self.app.services:
            lab = dict
            wl = workloads.get(svc.name, {})
            total = sum(v for k, v in req.items() if lab(k).get("service") == svc.name)
            errors = sum(v for k, v in req.items() if lab(k).get("service") == svc.name
                         and lab(k).get("code", "").startswith("5"))
            services.append(ServiceWindow(
                service=svc.name, ready=int((wl.get("status") or {}).get("readyReplicas", 0) or 0),
                desired=int((wl.get("spec") or {}).get("replicas", 1)) if wl else 0,
                requests=float(total), errors=float(errors),
                latency_buckets=_buckets(bkt, le, service=svc.name),
                restarts=sum(p.restarts for p in pods if p.service == svc.name and not p.terminating),
                status=_worst([p.status for p in pods if p.service == svc.name and not p.terminating])))
        routes = tuple(self._route_windows(req, bkt, le, max(span, self.dt), probing))
        stores = self._store_generations(pods)
        return HealthWindow(t=self.now, span_s=span, le=le, services=tuple(services), routes=routes, stores=stores,
                            mark=_Mark(self.now, req_now, bkt_now))

    def _ready(self, name: str) -> int:
        try:
            return self.workload(name).ready_replicas
        except SubstrateError:
            return 0

    def _desired(self, name: str) -> int:
        try:
            return self.workload(name).replicas
        except SubstrateError:
            return 0

    def _route_probes_start(self) -> Any:
        """On ``marathon cluster``: one probe per entry route, started (a future of
        :meth:`_send_many`'s answers, in the model's route order); None elsewhere."""
        if not self._sim_clock:
            return None
        from faults.spec import ProbeSpec

        asks = [self._probe_targets(ProbeSpec(route=r.name), None)[0] for r in self.app.routes]
        return self._send_many([(*a, 1) for a in asks], wait=False)

    def _route_windows(self, req: dict[Any, float], bkt: dict[Any, float], le: tuple[float, ...],
                       span: float, probing: Any = None) -> list[RouteHealth]:
        import numpy as np

        from alerts.promql.functions import bucket_quantiles

        rows = []
        for r in self.app.routes:
            sel = [(dict(k), v) for k, v in req.items() if dict(k).get("service") == r.entry.service
                   and dict(k).get("handler") == r.entry.operation]
            total = sum(v for _, v in sel)
            errors = sum(v for k, v in sel if k.get("code", "").startswith("5"))
            hist = np.asarray([_buckets(bkt, le, service=r.entry.service, entry="true")], dtype=np.float64)
            q = [bucket_quantiles(x, np.asarray(le), hist, nonmonotonic="bisect", divide_first=False)[0]
                 for x in (0.5, 0.95)]
            rows.append([r.name, total, errors, *(0.0 if math.isnan(x) else 1000.0 * float(x) for x in q)])
        if probing is not None:  # the load generator's model view of each route, as the embedded one reports it
            try:
                answers = probing.result(self.timeout_s * 4)
            except SubstrateError:
                answers = []
            for row, ans in zip(rows, answers, strict=False):
                if ans and ans[0][2] is not None and row[1]:
                    row[4] = ans[0][2][1]
        return [RouteHealth(str(name), float(total) / span, float(errors) / float(total) if total else 0.0,
                            float(p50), float(p95)) for name, total, errors, p50, p95 in rows]

    def _store_generations(self, pods: list[PodView]) -> dict[str, int]:
        """Per store, its data generation as the API shows it: for a store without persistence,
        the incarnations seen since attach -- new pods (uids) plus container restarts (each
        pod's highest restart count seen, so a replaced pod's restarts still count); 0 for a
        persistent store. The simulator counts a loss only when the store had served requests
        since the last one; an idle store's restart counts here too."""
        out = {}
        for name, seen in self._store_uids.items():
            svc = self.app.service(name)
            mine = [p for p in pods if p.service == name]
            seen.update(p.uid for p in mine)
            for p in mine:
                self._store_restarts[p.uid] = max(self._store_restarts.get(p.uid, 0), p.restarts)
            if svc.store is not None and svc.store.persistent:
                out[name] = 0
                continue
            base = self._store_base.get(name, 0)
            restarts = sum(self._store_restarts.get(uid, 0) for uid in seen) - self._store_base_restarts.get(name, 0)
            out[name] = len(seen) - base + restarts
        return out

    def service_health(self, window_s: float = 60.0) -> list[ServiceHealth]:
        """Per-service health over the last ``window_s`` run seconds (``rate`` and
        ``histogram_quantile`` over Prometheus' series, the window in wall seconds)."""
        w = max(1, round(window_s / self.speed))
        ns = self.namespace
        rps = _by(self._query(f'sum by (service) (rate(http_requests_total{{namespace="{ns}"}}[{w}s]))'))
        err = _by(self._query(f'sum by (service) (rate(http_requests_total{{namespace="{ns}",code=~"5.."}}[{w}s]))'))
        p95 = _by(self._query(f'histogram_quantile(0.95, sum by (service, le) '
                              f'(rate(http_request_duration_seconds_bucket{{namespace="{ns}"}}[{w}s])))'))
        pods = self.pods()
        out = []
        for svc in self.app.services:
            mine = [p for p in pods if p.service == svc.name and not p.terminating]
            r = rps.get(svc.name, 0.0) / self.speed
            q = p95.get(svc.name)
            out.append(ServiceHealth(svc.name, self._ready(svc.name), self._desired(svc.name), r,
                                     err.get(svc.name, 0.0) / self.speed / r if r else 0.0,
                                     None if q is None or math.isnan(q) else 1000.0 * q,
                                     sum(p.restarts for p in mine), _worst([p.status for p in mine])))
        return out

    def route_health(self, window_s: float = 60.0) -> list[RouteHealth]:
        """Each entry route over the last ``window_s`` run seconds, from the entry service's
        series (see :meth:`health_window`)."""
        w = max(1, round(window_s / self.speed))
        ns = self.namespace
        rows = self._query(f'sum by (service, handler, code) (increase(http_requests_total'
                           f'{{namespace="{ns}",entry="true"}}[{w}s]))')
        q = {q50: _by(self._query(f'histogram_quantile({q50}, sum by (service, le) (rate('
                                  f'http_request_duration_seconds_bucket{{namespace="{ns}",entry="true"}}[{w}s])))'))
             for q50 in (0.5, 0.95)}
        out = []
        for r in self.app.routes:
            sel = [x for x in rows if x["metric"].get("service") == r.entry.service
                   and x["metric"].get("handler") == r.entry.operation]
            total = sum(float(x["value"][1]) for x in sel)
            errors = sum(float(x["value"][1]) for x in sel if x["metric"].get("code", "").startswith("5"))
            p50, p95 = (q[k].get(r.entry.service, math.nan) for k in (0.5, 0.95))
            out.append(RouteHealth(r.name, total / window_s, errors / total if total else 0.0,
                                   0.0 if math.isnan(p50) else 1000 * p50, 0.0 if math.isnan(p95) else 1000 * p95))
        return out

    def topology(self, window_s: float = 300.0) -> list[EdgeStats]:
        """The app model's call graph with each callee's request rate, 5xx share and mean
        latency from Prometheus over the window, split among its callers by the model's call
        weights (no trace backend is read: the series have no caller label)."""
        w = max(1, round(window_s / self.speed))
        ns = self.namespace
        rps = _by(self._query(f'sum by (service) (rate(http_requests_total{{namespace="{ns}"}}[{w}s]))'))
        err = _by(self._query(f'sum by (service) (rate(http_requests_total{{namespace="{ns}",code=~"5.."}}[{w}s]))'))
        lat = _by(self._query(f'sum by (service) (rate(http_request_duration_seconds_sum{{namespace="{ns}"}}[{w}s]))'
                              f' / sum by (service) (rate(http_request_duration_seconds_count{{namespace="{ns}"}}'
                              f'[{w}s]))'))
        weight: dict[tuple[str, str], float] = {}
        for r in self.app.routes:
            weight[(self.app.load.generator, r.entry.service)] = weight.get(
                (self.app.load.generator, r.entry.service), 0.0) + r.share
            for _depth, service, op, _call in self.app.walk(r.entry.service, r.entry.operation):
                for c in op.calls:
                    weight[(service, c.service)] = weight.get((service, c.service), 0.0) + r.share * c.times
        into: dict[str, float] = {}
        for (_, callee), wgt in weight.items():
            into[callee] = into.get(callee, 0.0) + wgt
        out = []
        for (caller, callee), wgt in sorted(weight.items()):
            share = wgt / into[callee] if into[callee] else 0.0
            total = rps.get(callee, 0.0) / self.speed
            m = lat.get(callee, math.nan)
            out.append(EdgeStats(caller, callee, total * share, err.get(callee, 0.0) / self.speed / total
                                 if total else 0.0, 0.0 if math.isnan(m) else 1000.0 * m))
        return out

    def load_rate(self) -> float:
        """Entry requests per second over the last minute, from Prometheus (0 without one)."""
        w = max(1, round(60.0 / self.speed))
        rows = self._query(f'sum(rate(http_requests_total{{namespace="{self.namespace}",entry="true"}}[{w}s]))')
        return float(rows[0]["value"][1]) / self.speed if rows else 0.0

    # ----------------------------------------------------------------- source and pipeline

    def _shipped(self, service: str) -> dict[str, str]:
        if service not in self.app.service_names():
            raise SubstrateError(f"unknown service {service!r}")
        if service not in self._head:
            files: dict[str, str] = {}
            root = source_root(self.app.name) / service
            if root.is_dir():
                for path in sorted(root.rglob("*")):
                    if path.is_file() and "__pycache__" not in path.parts:
                        try:
                            files[path.relative_to(root).as_posix()] = path.read_text(encoding="utf-8")
                        except UnicodeDecodeError:
                            continue
            self._head[service] = files
            self._commits[service] = []
        return self._head[service]

    def source_files(self, service: str) -> dict[str, str]:
        """The files the pods run: those of the image this substrate built, else the shipped source."""
        head = self._shipped(service)
        image = self.workload(service).image
        for _, files, img in reversed(self._commits[service]):
            if img == image:
                return dict(files)
        return dict(self._images.get(f"initial:{service}", head))

    def head_files(self, service: str) -> dict[str, str]:
        return dict(self._shipped(service))

    def commits_ahead(self, service: str) -> int:
        """Commits this substrate shipped that the pods do not run (0 when they run the head)."""
        self._shipped(service)
        commits = self._commits[service]
        if not commits:
            return 0
        image = self.workload(service).image
        idx = next((i for i in range(len(commits) - 1, -1, -1) if commits[i][2] == image), None)
        return len(commits) - 1 - idx if idx is not None else len(commits)

    def deploy_history(self, service: str | None = None) -> list[ChangeRecord]:
        """This substrate's own log, then the cluster's other rollouts as its ReplicaSets record
        them (one record per revision this substrate did not make: ``kubernetes.io/change-cause``
        as the summary, the template's image), oldest first."""
        mine = {(c.service, c.revision) for c in self.changes if c.revision is not None}
        out = list(self.changes)
        for rs in self._list("ReplicaSet"):
            meta = rs["metadata"]
            owner = next((o["name"] for o in meta.get("ownerReferences") or [] if o.get("kind") == "Deployment"), None)
            ann = meta.get("annotations") or {}
            if owner is None or "deployment.kubernetes.io/revision" not in ann:
                continue
            rev = int(ann["deployment.kubernetes.io/revision"])
            if rev <= 1 or (owner, rev) in mine or (service is not None and owner != service):
                continue
            c = next(iter(rs["spec"]["template"]["spec"].get("containers") or [{}]))
            t = self._run_time(meta.get("creationTimestamp")) or 0.0
            out.append(ChangeRecord(id=f"{owner}-rev{rev}", service=owner, kind="rollout",
                                    summary=str(ann.get(CHANGE_CAUSE, f"revision {rev}")),
                                    author=str(ann.get(AUTHOR_ANNOTATION, "unknown")), t_submitted=t, t_deployed=t,
                                    image=c.get("image"), revision=rev, status="deployed"))
        out.sort(key=lambda c: (c.t_submitted, c.id))
        return [c for c in out if service is None or c.service == service]

    def _record(self, service: str, kind: str, summary: str, author: str, *, image: str | None = None,
                commit: str | None = None, detail: str = "") -> ChangeRecord:
        self._n_changes += 1
        rev = None
        with contextlib.suppress(SubstrateError):
            rev = self.workload(service).revision
        ch = ChangeRecord(id=f"chg-{self._n_changes:04d}", service=service, kind=kind, summary=summary,
                          author=author, t_submitted=self.now, t_deployed=self.now, commit=commit, image=image,
                          revision=rev, status="deployed", detail=detail)
        self.changes.append(ch)
        return ch

    def deploy_change(self, service: str, *, files: dict[str, str] | None = None,
                      env: dict[str, str | None] | None = None, image: str | None = None,
                      resources: Resources | None = None, readiness_probe: Probe | Literal["keep"] | None = "keep",
                      liveness_probe: Probe | Literal["keep"] | None = "keep", build: bool | None = None,
                      summary: str, author: str) -> ChangeRecord:
        """One strategic-merge PATCH of the workload's pod template (``kubectl set image/env/
        resources``), annotated with ``kubernetes.io/change-cause: <summary>`` and the author.

        ``files`` are built by ``marathon cluster``'s CI (:meth:`_cluster_build`); on a real
        cluster only when they are exactly a catalog code change to the head (or the revert of
        one this substrate shipped): the image is then ``<repository>/<service>:<change id>``.
        Any other source edit needs your build system.

        Raises:
            SubstrateError: unknown service, nothing to change, a source edit that is not a
                catalog change ("building a patch needs your build system: not supported on
                the kube substrate yet"), or the API refusing the patch.
        """
        self._workload_obj(service)
        commit = None
        kind = "image" if image else "config" if env else "resources" if resources else "probe"
        if files:
            if image:
                raise SubstrateError("an image together with files that need a build: the build makes the image")
            image, commit = self._build(service, files)
            kind = "code"
        container: dict[str, Any] = {"name": self._container(self._workload_obj(service))["name"]}
        if image:
            container["image"] = image
        if env:
            container["env"] = [{"name": k, "value": v} if v is not None else {"name": k, "$patch": "delete"}
                                for k, v in env.items()]
        if resources is not None:
            container["resources"] = {**resources_to_api(resources), "$patch": "replace"}
        if readiness_probe != "keep":
            container["readinessProbe"] = probe_spec(readiness_probe) if isinstance(readiness_probe, Probe) else None
        if liveness_probe != "keep":
            container["livenessProbe"] = probe_spec(liveness_probe) if isinstance(liveness_probe, Probe) else None
        if len(container) == 1:
            raise SubstrateError(f"{service}: nothing to change")
        body = {"metadata": {"annotations": {CHANGE_CAUSE: summary, AUTHOR_ANNOTATION: author}},
                "spec": {"template": {"spec": {"containers": [container]}}}}
        self._patch(self._workload_obj(service)["kind"] or "Deployment", service, body, author=author)
        return self._record(service, kind, summary, author, image=image, commit=commit)

    def _build(self, service: str, files: dict[str, str]) -> tuple[str, str]:
        """The image and commit for a source edit: a catalog change's image, or the image the
        pods ran before a change this substrate shipped when ``files`` revert it."""
        from faults.spec import load_catalog

        head = self._shipped(service)
        new = {**head, **files}
        new = {k: v for k, v in new.items() if v != ""}
        if self._sim_clock:
            return self._cluster_build(service, new)
        commits = self._commits[service]
        for i, (cid, cfiles, img) in enumerate(commits):
            del cid, img
            before = commits[i - 1][1] if i else self._images.get(f"initial:{service}")
            if before is not None and new == before and cfiles == head:
                image = commits[i - 1][2] if i else self._images.get(f"initial-image:{service}", {}).get("ref")
                if image:
                    return str(image), self._commit(service, new, str(image))
        try:
            catalog: tuple[FaultSpec, ...] = tuple(load_catalog(self.app.name).faults)
        except Exception:  # an app without a catalog has no catalog changes
            catalog = ()
        for spec in catalog:
            ch = spec.change
            if ch is None or spec.target != service or ch.file not in head or set(files) != {ch.file}:
                continue
            if head[ch.file].replace(ch.find, ch.replace, 1) == files[ch.file] and ch.find in head[ch.file]:
                image = change_image(self.repository, service, spec)
                return image, self._commit(service, new, image)
        raise SubstrateError("building a patch needs your build system: not supported on the kube substrate yet "
                             "(only a catalog change, whose image <repository>/<service>:<change id> you provide, "
                             "or its revert, can be deployed)")

    def _cluster_build(self, service: str, new: dict[str, str]) -> tuple[str, str]:
        """A build by the simulated cluster's CI (``POST /marathon/v1/builds``): every source
        edit -- a fault's commit, a benign commit, a revert, an operator's patch -- becomes an
        image of the form the embedded pipeline builds, so rollouts of faults look like any
        other (a real cluster's build system plays this part; without one only catalog changes
        deploy)."""
        if f"initial:{service}" not in self._images:
            self._images[f"initial:{service}"] = dict(self._head[service])
            self._images[f"initial-image:{service}"] = {"ref": self.workload(service).image}
        release = self._images[f"initial:{service}"]
        parent = self._commits[service][-1][0] if self._commits[service] else ""
        cid = _commit_id(parent, new)
        delta = {path: text for path, text in new.items() if release.get(path) != text}
        delta.update({path: "" for path in release if path not in new})
        try:
            answer = self._call("POST", "/marathon/v1/builds", body={"service": service, "files": delta,
                                                                    "commit": cid})
        except Exception as exc:
            raise SubstrateError(f"the cluster's build of {service} failed: {_api_message(exc)}") from None
        image = str(answer["image"])
        return image, self._commit(service, new, image)

    def _commit(self, service: str, files: dict[str, str], image: str) -> str:
        head = self._head[service]
        if f"initial:{service}" not in self._images:
            self._images[f"initial:{service}"] = dict(head)
            self._images[f"initial-image:{service}"] = {"ref": self.workload(service).image}
        parent = self._commits[service][-1][0] if self._commits[service] else ""
        cid = _commit_id(parent, files)
        self._commits[service].append((cid, dict(files), image))
        self._head[service] = dict(files)
        return cid

    def restart_pod(self, pod: str) -> None:
        """Delete a pod (its controller replaces it).

        Raises:
            SubstrateError: no such pod.
        """
        from kubernetes.client import ApiException

        try:
            self._call("DELETE", self._path("Pod", pod))
        except ApiException as exc:
            raise SubstrateError(f"delete pod {pod}: {exc.status} {_api_message(exc)}") from None

    def scale(self, service: str, replicas: int, *, summary: str | None = None, author: str = "operator") -> None:
        """PATCH ``deployments/<service>/scale`` (``statefulsets/.../scale``), logged as a ``scale`` change."""
        if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
            raise SubstrateError(f"replicas must be a non-negative integer, not {replicas!r}")
        obj = self._workload_obj(service)
        self._patch(obj.get("kind") or "Deployment", service, {"spec": {"replicas": replicas}},
                    "application/merge-patch+json", sub="scale", author=author)
        self._record(service, "scale", summary or f"scale to {replicas} replicas", author)

    def rollback(self, service: str, revision: int | None = None) -> ChangeRecord:
        """As ``kubectl rollout undo``: the pod template of the ReplicaSet of ``revision`` (default:
        the newest revision before the current one) replaces the Deployment's (a JSON patch of
        ``spec.template`` and the change-cause annotation, as kubectl sends it).

        Raises:
            SubstrateError: no such Deployment, or no such (or no previous) revision.
        """
        obj = self._workload_obj(service)
        current = int((obj["metadata"].get("annotations") or {}).get("deployment.kubernetes.io/revision", 0))
        owned = []
        for rs in self._list("ReplicaSet"):
            meta = rs["metadata"]
            owners = meta.get("ownerReferences") or []
            if any(o.get("kind") == "Deployment" and o.get("name") == service for o in owners):
                rev = int((meta.get("annotations") or {}).get("deployment.kubernetes.io/revision", 0))
                owned.append((rev, rs))
        if revision is None:
            older = [x for x in owned if x[0] < current]
            if not older:
                raise SubstrateError(f"no rollout history found for deployment {service!r}")
            rev, rs = max(older, key=lambda x: x[0])
        else:
            match = [x for x in owned if x[0] == revision]
            if not match:
                raise SubstrateError(f"unable to find the specified revision {revision} of {service!r}")
            rev, rs = match[0]
        template = json.loads(json.dumps(rs["spec"]["template"]))
        (template.get("metadata", {}).get("labels") or {}).pop("pod-template-hash", None)
        annotations = dict(obj["metadata"].get("annotations") or {})
        for key, val in (rs["metadata"].get("annotations") or {}).items():
            if key in (CHANGE_CAUSE, AUTHOR_ANNOTATION):
                annotations[key] = val
        annotations.setdefault(CHANGE_CAUSE, f"rollback to revision {rev}")
        body = [{"op": "replace", "path": "/spec/template", "value": template},
                {"op": "replace", "path": "/metadata/annotations", "value": annotations}]
        self._patch("Deployment", service, body, "application/json-patch+json")
        c = next(iter(template["spec"].get("containers") or [{}]))
        return self._record(service, "rollback", f"rollback to revision {rev}", "operator", image=c.get("image"))

    def patch_service(self, service: str, *, selector: dict[str, str] | None = None,
                      target_port: int | str | None = None, summary: str | None = None,
                      author: str = "operator") -> ChangeRecord:
        """JSON patch of the Service's ``spec.selector`` and its first port's ``targetPort``."""
        svc = self._get("Service", service)
        if svc is None:
            raise SubstrateError(f'services "{service}" not found')
        ops: list[dict[str, Any]] = []
        if selector is not None:
            ops.append({"op": "replace", "path": "/spec/selector", "value": selector})
        if target_port is not None:
            ops.append({"op": "replace", "path": "/spec/ports/0/targetPort", "value": target_port})
        if not ops:
            raise SubstrateError(f"{service}: nothing to change")
        self._patch("Service", service, ops, "application/json-patch+json", author=author)
        self._ports.pop(service, None)
        parts = [f"selector {selector}" if selector is not None else "", f"targetPort {target_port}"
                 if target_port is not None else ""]
        return self._record(service, "service", summary or "patch service: " + ", ".join(p for p in parts if p),
                            author)

    def tag_image(self, service: str, tag: str) -> str:
        """Not supported: tagging an image needs your registry.

        Raises:
            SubstrateError: always.
        """
        raise SubstrateError("tagging an image needs your registry: not supported on the kube substrate")

    def set_load_factor(self, factor: float) -> None:
        """Scale the load: ``POST /marathon/v1/load {"factor": x}`` on ``marathon cluster``.

        Raises:
            SubstrateError: ``factor`` not > 0, or a cluster without that endpoint (a real
                cluster: no load generator of ours runs there).
        """
        from kubernetes.client import ApiException

        if not factor > 0:
            raise SubstrateError("the load factor must be > 0")
        if not self._sim_clock:
            raise SubstrateError("load bursts need a load generator the run controls: not supported on a real cluster")
        try:
            self._call("POST", "/marathon/v1/load", body={"factor": factor})
        except ApiException as exc:
            raise SubstrateError(f"this cluster does not take load factors ({exc.status})") from None

    # ----------------------------------------------------------------- ground truth

    def _chaos_served(self) -> bool:
        if self._chaos is None:
            from kubernetes.client import ApiException

            try:
                self._call("GET", f"/apis/{CHAOS_GROUP}/{CHAOS_VERSION}")
                self._chaos = True
            except ApiException:
                self._chaos = False
        return self._chaos

    def apply_fault(self, spec: FaultSpec) -> FaultInstance:
        """Inject ``spec`` as Kubernetes mutations (module docstring).

        Raises:
            FaultSkipped: a mechanism the API cannot express here (see the message).
            SubstrateError: the API refuses the mutation.
            KeyError: the spec names a workload the app does not have.
        """
        if spec.target not in self.app.service_names():
            raise KeyError(spec.target)
        m = spec.mechanism
        inst = FaultInstance(spec=spec, t_inject=self.now)
        wl = self.workload(spec.target) if m != "store-restart" else None
        inst.revision_before = wl.revision if wl else None
        if m == "code-change" and spec.change is not None:
            assert wl is not None
            head = self._shipped(spec.target)
            text = head.get(spec.change.file)
            if text is None or spec.change.find not in text:
                raise SubstrateError(f"{spec.id}: the change does not apply to the head of {spec.target}")
            inst.original["image"] = wl.image
            new = text.replace(spec.change.find, spec.change.replace, 1)
            ch = self.deploy_change(spec.target, files={spec.change.file: new}, summary=spec.change.summary,
                                    author=spec.change.author)
            inst.original["fault_image"] = ch.image
            inst.original["file"] = (spec.change.file, text)
            inst.changes.append(ch)
        elif m in ("config-patch", "scale", "resource-limit", "image", "readiness-probe", "liveness-probe") \
                and spec.config is not None:
            assert wl is not None
            cfg = spec.config
            if cfg.flag is not None or cfg.config_ref is not None:
                raise FaultSkipped(f"{spec.id}: flag and config-reference faults are not injected on the kube "
                                   "substrate yet")
            if cfg.replicas is not None:
                inst.original["replicas"] = wl.replicas
                self.scale(spec.target, cfg.replicas, summary=cfg.summary, author=cfg.author)
                inst.changes.append(self.changes[-1])
            kw: dict[str, Any] = {}
            if cfg.env:
                inst.original["env"] = {k: wl.env.get(k) for k in cfg.env}
                kw["env"] = dict(cfg.env)
            if cfg.image:
                inst.original["image"] = wl.image
                kw["image"] = cfg.image
            if cfg.resources is not None:
                inst.original["resources"] = wl.resources
                kw["resources"] = cfg.resources
            if cfg.readiness_probe is not None:
                inst.original["readiness_probe"] = wl.readiness_probe
                kw["readiness_probe"] = cfg.readiness_probe
            if cfg.liveness_probe is not None:
                inst.original["liveness_probe"] = wl.liveness_probe
                kw["liveness_probe"] = cfg.liveness_probe
            if kw:
                inst.changes.append(self.deploy_change(spec.target, summary=cfg.summary, author=cfg.author, **kw))
            inst.original["fault"] = {k: v for k, v in kw.items()}
        elif m == "service-change" and spec.service_change is not None:
            sc = spec.service_change
            svc = self._get("Service", spec.target)
            if svc is None:
                raise SubstrateError(f'services "{spec.target}" not found')
            ports = svc.get("spec", {}).get("ports") or [{}]
            inst.original["selector"] = dict(svc.get("spec", {}).get("selector") or {})
            inst.original["target_port"] = ports[0].get("targetPort")
            inst.changes.append(self.patch_service(spec.target, selector=sc.selector, target_port=sc.target_port,
                                                   summary=sc.summary, author=sc.author))
        elif m in ("cpu-pressure", "network-delay") and spec.runtime is not None:
            if not self._chaos_served():
                raise FaultSkipped(f"{spec.id}: {m} needs Chaos Mesh (group {CHAOS_GROUP}), which this cluster does "
                                   "not serve")
            inst.effect_ids.append(self._create_chaos(spec))
        elif m == "store-restart" and spec.runtime is not None:
            store = spec.runtime.store or spec.target
            pods = [p.name for p in self.pods(store) if not p.terminating]
            inst.original["store_pods"] = pods
            for name in pods:
                self.restart_pod(name)
        else:
            raise FaultSkipped(f"{spec.id}: {m} faults have no Kubernetes API expression on the kube substrate "
                               "(skipped, not scored)")
        return inst

    def _create_chaos(self, spec: FaultSpec) -> str:
        from kubernetes.client import ApiException

        rt = spec.runtime
        assert rt is not None
        name = f"marathon-{hashlib.sha256(f'{spec.id}{self.now}'.encode()).hexdigest()[:10]}"
        selector = {"namespaces": [self.namespace], "labelSelectors": {"app": spec.target}}
        if spec.mechanism == "cpu-pressure":
            plural, kind = "stresschaos", "StressChaos"
            cores = rt.cpu_cores or 1.0
            body_spec: dict[str, Any] = {"mode": "all", "selector": selector,
                                         "stressors": {"cpu": {"workers": max(1, math.ceil(cores)),
                                                               "load": min(100, round(100 * cores /
                                                                                      max(1, math.ceil(cores))))}}}
        else:
            plural, kind = "networkchaos", "NetworkChaos"
            caller = rt.caller or spec.target
            body_spec = {"action": "delay", "mode": "all",
                         "selector": {"namespaces": [self.namespace], "labelSelectors": {"app": caller}},
                         "direction": "to", "delay": {"latency": f"{int(rt.delay_ms or 100)}ms"},
                         "target": {"mode": "all", "selector": selector}}
            if rt.drop:
                body_spec["loss"] = {"loss": f"{100 * rt.drop:g}"}
        body = {"apiVersion": f"{CHAOS_GROUP}/{CHAOS_VERSION}", "kind": kind,
                "metadata": {"name": name, "namespace": self.namespace}, "spec": body_spec}
        self._cache.clear()
        try:
            self.custom.create_namespaced_custom_object(CHAOS_GROUP, CHAOS_VERSION, self.namespace, plural, body,
                                                        _request_timeout=self.timeout_s)
        except ApiException as exc:
            raise SubstrateError(f"create {kind} {name}: {exc.status} {_api_message(exc)}") from None
        return f"{plural}/{name}"

    def revert_fault(self, fault: FaultInstance) -> list[ChangeRecord]:
        """Ship the inverse of what the injection still has in place (only where the template
        still has the fault's value, so an operator's repair is never undone); delete chaos objects."""
        from kubernetes.client import ApiException

        spec, orig = fault.spec, fault.original
        fault.t_revert = self.now
        out: list[ChangeRecord] = []
        try:
            wl = self.workload(spec.target)
        except SubstrateError:
            wl = None
        ch = spec.change
        head_text = self.head_files(spec.target).get(ch.file, "") if ch is not None and wl is not None else ""
        if (self._sim_clock and spec.mechanism == "code-change" and ch is not None and ch.replace in head_text
                and ch.defect_marker() in head_text):
            # The cluster's CI builds any commit: reverse-apply the change on the repository
            # head, as the embedded pipeline's revert does, whatever was committed on top.
            out.append(self.deploy_change(spec.target, files={ch.file: head_text.replace(ch.replace, ch.find, 1)},
                                          summary=f'Revert "{ch.summary}"', author=ch.author))
        elif (not self._sim_clock and spec.mechanism == "code-change" and wl is not None
              and wl.image == orig.get("fault_image")):
            path, text = orig["file"]
            assert spec.change is not None
            out.append(self.deploy_change(spec.target, files={path: text}, summary=f'Revert "{spec.change.summary}"',
                                          author=spec.change.author))
        elif "fault" in orig and wl is not None:
            kw: dict[str, Any] = {}
            env = {k: orig["env"][k] for k, v in (orig["fault"].get("env") or {}).items() if wl.env.get(k) == v}
            if env:
                kw["env"] = env
            for key, attr in (("image", "image"), ("resources", "resources"), ("readiness_probe", "readiness_probe"),
                              ("liveness_probe", "liveness_probe")):
                if key in orig["fault"] and getattr(wl, attr) == orig["fault"][key]:
                    kw[key] = orig[key]
            summary = f"revert: {spec.config.summary}" if spec.config else "revert"
            author = spec.config.author if spec.config else "ci-bot"
            if kw:
                out.append(self.deploy_change(spec.target, summary=summary, author=author, **kw))
            if "replicas" in orig and spec.config is not None and wl.replicas == spec.config.replicas:
                self.scale(spec.target, int(orig["replicas"]), summary=summary, author=author)
                out.append(self.changes[-1])
        elif spec.mechanism == "service-change" and spec.service_change is not None:
            svc = self._get("Service", spec.target) or {}
            sel = (svc.get("spec") or {}).get("selector")
            port = ((svc.get("spec") or {}).get("ports") or [{}])[0].get("targetPort")
            sc = spec.service_change
            kw2: dict[str, Any] = {}
            if sc.selector is not None and sel == sc.selector:
                kw2["selector"] = orig["selector"]
            if sc.target_port is not None and port == sc.target_port:
                kw2["target_port"] = orig["target_port"]
            if kw2:
                out.append(self.patch_service(spec.target, summary=f"revert: {sc.summary}", author=sc.author, **kw2))
        for ref in fault.effect_ids:
            plural, _, name = ref.partition("/")
            self._cache.clear()
            try:
                self.custom.delete_namespaced_custom_object(CHAOS_GROUP, CHAOS_VERSION, self.namespace, plural, name,
                                                            _request_timeout=self.timeout_s)
            except ApiException as exc:
                if exc.status != 404:
                    raise SubstrateError(f"delete {ref}: {exc.status} {_api_message(exc)}") from None
        fault.revert_changes.extend(out)
        return out

    def finish_revert(self, fault: FaultInstance) -> bool:
        """True: a revert here is a rollout or a deleted chaos object, nothing lingers on our side."""
        fault.effect_ids.clear()
        return True

    def _probe_targets(self, probe: ProbeSpec, target: str | None) -> list[tuple[str, str, str, dict[str, str]]]:
        """The ``(service, method, path, query)`` requests a probe makes (the plan's probe
        convention; the query is the probe's attributes):

        * an operation probe: ``/<operation>`` on its service, with the operation's HTTP method
          (``GET /cart``) or POST (an RPC);
        * a route probe: the route's method and path on the entry service; with a target other
          than the entry service, on ``marathon cluster`` the route's path on the target (the
          simulated cluster's proxy judges the route's request where it reaches the target,
          exactly as the embedded probe), on a real cluster each of the target's operations the
          route reaches (a real service does not serve the route's path; the worst answer
          judges it, as the embedded probe takes the worst call).

        Raises:
            SubstrateError: an unknown route.
        """
        if probe.operation is not None:
            op_service, op_name = probe.operation
            op = next((o for o in self.app.service(op_service).operations if o.name == op_name), None) \
                if op_service in self.app.service_names() else None
            return [(op_service, _op_method(op_name, op.method if op else "POST"), _op_path(op_name),
                     dict(probe.attributes))]
        route = next((r for r in self.app.routes if r.name == probe.route), None)
        if route is None:
            raise SubstrateError(f"unknown route {probe.route!r}; routes: {', '.join(r.name for r in self.app.routes)}")
        here = (route.method.upper(), route.path.lstrip("/"), dict(probe.attributes))
        if target is not None and target != route.entry.service and target in self.app.service_names():
            if self._sim_clock:
                return [(target, *here)]
            asks: list[tuple[str, str, str, dict[str, str]]] = []
            for _, service, op, _call in self.app.walk(route.entry.service, route.entry.operation):
                ask = (target, _op_method(op.name, op.method), _op_path(op.name), dict(probe.attributes))
                if service == target and ask not in asks:
                    asks.append(ask)
            if asks:
                return asks
        return [(route.entry.service, *here)]

    def _service_port(self, service: str) -> int | str:
        """The Service's first port (cached: a probe must not cost an extra request; a
        :meth:`patch_service` forgets it)."""
        if service not in self._ports:
            svc = self._get("Service", service)
            ports = ((svc or {}).get("spec") or {}).get("ports") or []
            m = self.app.service(service) if service in self.app.service_names() else None
            self._ports[service] = int(ports[0].get("port")) if ports else \
                (m.service_port or m.port or 80) if m is not None else 80
        return self._ports[service]

    def _send_many(self, requests: list[tuple[str, str, str, dict[str, str], int]], wait: bool = True) -> Any:
        """Probe requests through the service proxy, one list of answers per ``(service, method,
        path, query, n)``: ``n`` requests each (the lists concurrently, each list's requests one
        after the other), every answer ``(ok, latency ms, (success, p95 ms) from the simulated cluster's
        X-Marathon-* headers or None)``; ok is a status below 500. With ``wait=False``, a
        :class:`concurrent.futures.Future` of that list instead.

        Raises:
            SubstrateError: the proxy refuses the credentials (401/403).
        """
        import aiohttp

        cfg = self.api.configuration
        base = f"{cfg.host.rstrip('/')}/api/v1/namespaces/{self.namespace}/services"
        urls = [f"{base}/{service}:{self._service_port(service)}/proxy/{urllib.parse.quote(path)}"
                for service, _, path, _, _ in requests]
        auth = str(cfg.api_key.get("authorization") or cfg.api_key.get("BearerToken") or "")
        if not auth and getattr(cfg, "access_token", None):
            auth = f"Bearer {cfg.access_token}"
        if auth and not auth.lower().startswith("bearer "):
            auth = f"Bearer {auth}"
        headers = {"Authorization": auth} if auth else {}
        ssl: Any = None
        if base.startswith("https"):
            import ssl as ssl_mod

            ctx = (ssl_mod.create_default_context(cafile=cfg.ssl_ca_cert) if cfg.verify_ssl
                   else ssl_mod._create_unverified_context())
            if cfg.cert_file and cfg.key_file:
                ctx.load_cert_chain(cfg.cert_file, cfg.key_file)
            ssl = ctx

        async def one(session: aiohttp.ClientSession, method: str, url: str, query: dict[str, str],
                      n: int) -> list[_Answer]:
            out: list[_Answer] = []
            for _ in range(n):
                t0 = time.perf_counter()
                try:
                    async with session.request(method, url, params=query, ssl=ssl) as resp:
                        await resp.read()
                        if resp.status in (401, 403):
                            raise SubstrateError(f"the service proxy refused the probe: {resp.status}")
                        ms = _server_timing(resp.headers.get("Server-Timing")) or 1000.0 * (time.perf_counter() - t0)
                        hint = None
                        if "X-Marathon-Success" in resp.headers:
                            hint = (float(resp.headers["X-Marathon-Success"]),
                                    float(resp.headers.get("X-Marathon-P95-Ms", "0")))
                        out.append((resp.status < 500, ms, hint))
                except (TimeoutError, aiohttp.ClientError):
                    out.append((False, 1000.0 * self.timeout_s, None))
            return out

        async def run() -> list[list[_Answer]]:
            if self._session is None or self._session.closed:
                self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout_s),
                                                      headers=headers)
            return list(await asyncio.gather(*(one(self._session, m, url, q, n)
                                               for url, (_, m, _, q, n) in zip(urls, requests, strict=True))))

        future = self._on_loop(run())
        if not wait:
            return future
        answers: list[list[_Answer]] = future.result(self.timeout_s * 4)
        return answers

    def _on_loop(self, coro: Any) -> concurrent.futures.Future[Any]:
        """Schedule ``coro`` on the substrate's own event loop thread (started on first use), so
        the probe session's connections -- and their TLS handshakes -- are kept between probes."""
        if self._loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="kube-substrate-http", daemon=True).start()
            self._loop = loop
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def close(self) -> None:
        """Close the probe session and stop its event loop thread (idempotent)."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        session, self._session = self._session, None

        async def shut() -> None:
            if session is not None:
                await session.close()

        asyncio.run_coroutine_threadsafe(shut(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)

    def probe(self, probe: ProbeSpec, target: str | None = None) -> ProbeResult:
        """Probe requests through the service proxy (module docstring): on ``marathon cluster``
        one request whose headers carry the model's success probability and p95; on a real
        cluster :attr:`probe_samples` requests, success = the share answered below 500, p95
        from their latencies (``Server-Timing`` when the app sends it).

        Raises:
            SubstrateError: an unknown route or operation.
            KeyError: ``probe.rollout`` names no workload.
        """
        asks = self._probe_targets(probe, target)
        n = 1 if self._sim_clock else self.probe_samples
        judged = []
        for (service, _, path, _), samples in zip(asks, self._send_many([(*a, n) for a in asks]), strict=True):
            hint = samples[0][2]
            if hint is not None:
                success, p95 = hint
            else:
                success = sum(1 for ok, _, _ in samples if ok) / len(samples)
                lat = sorted(ms for _, ms, _ in samples)
                p95 = lat[min(len(lat) - 1, math.ceil(0.95 * len(lat)) - 1)]
            judged.append((success, -p95, service, path))
        success, neg_p95, service, path = min(judged)
        p95 = -neg_p95
        limit = probe.latency_p95_ms
        if limit is None:
            route = next((r for r in self.app.routes if r.name == probe.route), None)
            limit = route.slo.latency_p95_ms if route is not None else 2000.0
        ok = success >= 1.0 - probe.max_error and p95 <= limit
        detail = f"{service}/{path}: success {success:.3f}, p95 {p95:.0f} ms (limit {limit:.0f} ms)"
        if probe.rollout is not None:
            ro = self.rollout_status(probe.rollout)
            ok = ok and ro.ok
            detail += f"; {ro.detail}"
        return ProbeResult(ok, success, p95, detail)

    def fault_in_template(self, fault: FaultInstance) -> list[str]:
        """See :meth:`Substrate.fault_in_template`: compares the workload (and Service) now with
        the values the injection set."""
        spec, orig = fault.spec, fault.original
        try:
            wl = self.workload(spec.target)
        except SubstrateError:
            return []
        left = []
        if orig.get("fault_image") and wl.image == orig["fault_image"]:
            left.append(f"image {wl.image}")
        elif spec.change is not None and spec.mechanism == "code-change":
            marker = spec.change.defect_marker()  # a later build can still carry the defect
            if marker in self.source_files(spec.target).get(spec.change.file, ""):
                left.append(f"the defect in {spec.change.file} (image {wl.image})")
        done = orig.get("fault") or {}
        left += [f"env {k}={v}" for k, v in (done.get("env") or {}).items() if wl.env.get(k) == v]
        left += [key.replace("_", " ") for key in ("image", "resources", "readiness_probe", "liveness_probe")
                 if key in done and getattr(wl, key) == done[key]]
        if "replicas" in orig and spec.config is not None and wl.replicas == spec.config.replicas:
            left.append(f"replicas {wl.replicas}")
        if spec.service_change is not None:
            svc = (self._get("Service", spec.target) or {}).get("spec") or {}
            if spec.service_change.selector is not None and svc.get("selector") == spec.service_change.selector:
                left.append("service selector")
            port = (svc.get("ports") or [{}])[0].get("targetPort")
            if spec.service_change.target_port is not None and port == spec.service_change.target_port:
                left.append("service targetPort")
        return left

    def fork(self, *, drop_pending_builds: bool = False) -> Substrate:
        """A cluster cannot be copied.

        Raises:
            SubstrateError: always (the orchestrator's restart gate then judges the repair by
                the template: :func:`engine.run.orchestrator.restart_survives`).
        """
        raise SubstrateError("a real cluster cannot be forked")


def _commit_id(parent: str, files: Mapping[str, str]) -> str:
    """A commit's id: SHA-1 of its parent's id and its files (path, NUL, text, NUL, sorted by path)."""
    h = hashlib.sha1(parent.encode())
    for path in sorted(files):
        h.update(path.encode() + b"\0" + files[path].encode() + b"\0")
    return h.hexdigest()


def _api_message(exc: Any) -> str:
    try:
        return str(json.loads(exc.body).get("message") or exc.reason)
    except (TypeError, ValueError, AttributeError):
        return str(exc.reason)


def _field_manager(author: str) -> str:
    """``author`` as a valid ``fieldManager`` (printable ASCII, at most 128 characters)."""
    text = "".join(ch if 32 < ord(ch) < 127 else "-" for ch in author)
    return text[:128] or "sre-marathon"


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _by(rows: list[dict[str, Any]], label: str = "service") -> dict[str, float]:
    return {str(r["metric"].get(label, "")): float(r["value"][1]) for r in rows}


def _bounds(bkt: dict[tuple[tuple[str, str], ...], float]) -> tuple[float, ...]:
    les = {float("inf") if dict(k).get("le") == "+Inf" else float(dict(k).get("le", "inf")) for k in bkt}
    return tuple(sorted(les))


def _buckets(bkt: dict[tuple[tuple[str, str], ...], float], le: tuple[float, ...], **match: str) -> tuple[float, ...]:
    sums = [0.0] * len(le)
    index = {b: i for i, b in enumerate(le)}
    for k, v in bkt.items():
        labels = dict(k)
        if any(labels.get(a) != b for a, b in match.items()):
            continue
        raw = labels.get("le", "+Inf")
        i = index.get(math.inf if raw == "+Inf" else float(raw))
        if i is not None:
            sums[i] += v
    return tuple(sums)


def _op_method(op: str, default: str) -> str:
    """An operation's HTTP method: the one its name starts with (``GET /cart``), else ``default``."""
    head, sep, _ = op.partition(" ")
    return head.upper() if sep and head.isalpha() else default.upper()


def _op_path(op: str) -> str:
    """An operation name as a proxy path: ``GET /cart`` -> ``cart``; ``/pkg.Svc/Method`` -> ``pkg.Svc/Method``."""
    return op.split(" ", 1)[-1].lstrip("/")


def _server_timing(header: str | None) -> float | None:
    m = re.search(r"dur=([0-9.]+)", header or "")
    return float(m.group(1)) if m else None


def _pod_ready(p: dict[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in p.get("status", {}).get("conditions") or [])


def pod_status(p: dict[str, Any]) -> str:
    """The STATUS column kubectl prints for a pod (terminating, waiting or terminated reason, phase)."""
    if p["metadata"].get("deletionTimestamp"):
        return "Terminating"
    st = p.get("status", {})
    for cs in st.get("containerStatuses") or []:
        state = cs.get("state") or {}
        if state.get("waiting", {}).get("reason"):
            return str(state["waiting"]["reason"])
        if state.get("terminated", {}).get("reason"):
            return str(state["terminated"]["reason"])
    return str(st.get("reason") or st.get("phase") or "Unknown")


def _worst(statuses: list[str]) -> str:
    if not statuses:
        return "-"
    return next((s for s in statuses if s != "Running"), statuses[0])
