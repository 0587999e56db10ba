"""The control plane and kubelets of the simulated cluster.

Controllers follow the real ones closely enough that ``kubectl`` output, events and
kube-state-metrics tell the story an SRE expects:

* **Deployment controller** (``pkg/controller/deployment/rolling.go``): rolling updates
  with ``maxSurge`` 25 % (rounded up) and ``maxUnavailable`` 25 % (rounded down, and 1
  if both would be 0). With 1 or 2 replicas that means one surge pod and no unavailable
  pod: the new revision's pod is created first and an old pod is removed only once a new
  one is available, so a revision that never becomes available (bad image, crash loop,
  failing readiness) leaves the old pods serving. A rollout that makes no progress for
  ``progressDeadlineSeconds`` (600 s) gets ``Progressing=False/ProgressDeadlineExceeded``.
  Rollback re-applies an old ReplicaSet's template, which becomes the newest revision.
* **ReplicaSet controller**: creates or deletes pods to match ``replicas``; deletes
  unscheduled, then pending, then not-ready, then newest pods first.
* **StatefulSet controller**: ordinal pod names, ``OrderedReady`` creation, rolling
  update from the highest ordinal; a deleted pod comes back with the same name.
* **Scheduler**: filters nodes on taints (a node that stopped reporting) and on CPU and
  memory requests against allocatable minus what is already requested, then spreads a
  workload's pods over zones and nodes; an unschedulable pod stays ``Pending`` with the
  default scheduler's ``FailedScheduling`` message (:meth:`Cluster.fit_error`).
* **Kubelet, config**: ConfigMap and Secret references are resolved as the kubelet does:
  a missing volume source keeps the pod ``ContainerCreating`` with ``FailedMount``; a
  missing env source or key gives ``CreateContainerConfigError`` (:meth:`Cluster._config_failure`).
* **Endpoints**: a Service's endpoints are the ready pods its selector matches, on its
  targetPort (:meth:`Cluster.endpoint_addresses`).
* **Kubelet**: image pull (cached per node, ``ErrImagePull`` then ``ImagePullBackOff`` for
  an image the registry lacks), container start, application start-up time, readiness
  and liveness probes, restarts with the kubelet's back-off (10 s doubling to 300 s,
  reset after 10 min of running), ``CrashLoopBackOff``, ``OOMKilled``, graceful deletion.
* **Node lifecycle** (``pkg/controller/nodelifecycle``, ``pkg/controller/tainteviction``): a
  node whose kubelet stops renewing its lease keeps its pods ``1/1 Running`` until the
  controller's next 5 s monitor pass after the grace period (40 s after the last renewal);
  then all its conditions turn ``Unknown`` (``NodeStatusUnknown``, ``Kubelet stopped posting
  node status.``, the last heartbeat kept), it gets ``node.kubernetes.io/unreachable``
  ``NoSchedule`` and ``NoExecute`` taints, and its pods get ``Ready=False`` (the containers
  still read ready: only the kubelet writes those) and a ``NodeNotReady`` warning. 300 s
  later (the ``tolerationSeconds`` DefaultTolerationSeconds injects) the taint eviction
  controller deletes them; they stay ``Terminating`` on the lost node and their owners
  create replacements elsewhere. Departure: the scheduler here also avoids a node in its
  grace period (the real one may still bind pods to it, which then never start).
"""

from __future__ import annotations

import hashlib
import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from alerts.series import SeriesRegistry
from engine.apps.model import AppModel, Probe, Service
from engine.kubectl.quantity import parse_quantity
from engine.sim import probetext
from engine.sim.effects import Effect
from engine.sim.k8s import (
    NODE_CONDITIONS,
    NODE_CREATED_T,
    NODE_KERNEL,
    NODE_KUBELET,
    NODE_OS_IMAGE,
    NODE_RUNTIME,
    UNREACHABLE_TAINT,
    UNSCHEDULABLE_TAINT,
    Condition,
    ConfigObjectState,
    ContainerStatus,
    EndpointAddress,
    Event,
    Node,
    Pod,
    PodTemplate,
    ReplicaSet,
    ServiceObject,
    Workload,
    container_spec,
    encode_hash,
    template_metadata,
    timestamp,
    unix_time,
)

NODE_GRACE_S = 40.0
"""kube-controller-manager ``--node-monitor-grace-period`` default in Kubernetes v1.30, the
version the simulated cluster runs (``cmd/kube-controller-manager/app/options``; 50 s from v1.32)."""
NODE_MONITOR_PERIOD_S = 5.0
"""kube-controller-manager ``--node-monitor-period`` default: how often node health is checked."""
EVICTION_S = 300.0
"""Default tolerationSeconds of node.kubernetes.io/unreachable (DefaultTolerationSeconds)."""
TOLERATED_KEYS = (UNREACHABLE_TAINT, "node.kubernetes.io/not-ready")
"""NoExecute taint keys every pod tolerates for :data:`EVICTION_S` (DefaultTolerationSeconds)."""
TAINT_EVICTION_SOURCE = "taint-eviction-controller"
"""Event source of the taint eviction controller (its own controller since v1.29)."""
BACKOFF_INITIAL_S = 10.0
BACKOFF_MAX_S = 300.0
BACKOFF_RESET_S = 600.0
"""Kubelet crash back-off: 10 s doubling to 5 min; reset after 10 min of running."""
TERMINATION_S = 2.0
"""Time an application takes to exit after SIGTERM (well inside the 30 s grace period)."""
CRASH_AFTER_S = 1.5
"""Time from container start to exit for a process that fails at start-up (outside the JVM)."""
JVM_CRASH_SHARE = 0.9
"""Share of its start-up time a JVM application runs before a start-up failure ends it."""


def crash_after_s(language: str, startup_s: float, exception: str = "", *, spring: bool = True) -> float:
    """Seconds from container start to the exit of a process that fails at start-up.

    A Spring Boot application (``spring``: the HTTP Java services of Train Ticket) fails where
    its context refresh fails: after the JVM has started and most beans are built, so nearly
    a whole start-up (``JVM_CRASH_SHARE`` of ``startup_s``; Train Ticket's 25 s Spring Boot
    start-up gives about 19-27 s per attempt). A plain Java or Kotlin ``main`` (the demos'
    gRPC ad service, the Kafka fraud detector) throws while reading its settings. Native and scripting
    runtimes read their configuration first and exit within ``CRASH_AFTER_S``, and so does a
    JVM that cannot start at all (``exception`` from the java launcher, ``Error: Could not
    create the Java Virtual Machine.``). Source: assumption, from the apps' start-up times in
    the app model.
    """
    if language in ("java", "kotlin") and spring and not exception.startswith("Error:"):
        return max(CRASH_AFTER_S, JVM_CRASH_SHARE * startup_s)
    return CRASH_AFTER_S


def container_id(pod_uid: str, attempt: int) -> str:
    """The CRI container id of one attempt of a pod's container: ``containerd://`` and 64
    hex digits, as containerd names containers (deterministic here: a digest of the pod uid
    and the attempt)."""
    return "containerd://" + hashlib.sha256(f"{pod_uid}/{attempt}".encode()).hexdigest()


def image_id(image: str) -> str:
    """The repo digest the runtime reports as ``imageID`` (``repo@sha256:<64 hex>``; the
    digest is a stand-in computed from the image reference)."""
    name, sep, tag = image.rpartition(":")
    repo = name if sep and "/" not in tag else image
    return f"{repo}@sha256:" + hashlib.sha256(image.encode()).hexdigest()


DEFAULT_TOLERATION_S = 300
"""DefaultTolerationSeconds admission plugin: --default-not-ready-toleration-seconds and
--default-unreachable-toleration-seconds both default to 300
(plugin/pkg/admission/defaulttolerationseconds/admission.go)."""


def admitted_pod_fields(out: dict[str, Any], pod: Pod) -> None:
    """Add to a pod object what admission and the kubelet add to every real pod.

    * ServiceAccount admission: ``serviceAccountName: default`` and the projected
      ``kube-api-access-<5 chars>`` volume (token with expirationSeconds 3607, the
      ``kube-root-ca.crt`` ConfigMap and the namespace from the downward API) mounted
      read-only at ``/var/run/secrets/kubernetes.io/serviceaccount``
      (plugin/pkg/admission/serviceaccount/admission.go).
    * DefaultTolerationSeconds admission: ``node.kubernetes.io/not-ready`` and
      ``node.kubernetes.io/unreachable`` NoExecute tolerations for 300 s.
    * The kubelet's container status: ``containerID`` (``containerd://<64 hex>``) once a
      container attempt has been created, and ``imageID`` once it has started.
    """
    spec, status = out["spec"], out["status"]
    suffix = encode_hash(pod.uid + "/kube-api-access", 5)
    vol = f"kube-api-access-{suffix}"
    spec.setdefault("serviceAccountName", "default")
    spec.setdefault("serviceAccount", "default")
    if spec.get("volumes") is None:
        spec["volumes"] = []  # no ConfigMap or Secret volume
    spec["volumes"].append({"name": vol, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1",
                                                                     "fieldPath": "metadata.namespace"}}]}},
    ]}})
    for c in spec.get("containers") or []:
        c.setdefault("volumeMounts", []).append(
            {"name": vol, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True})
    tolerations = spec.setdefault("tolerations", [])
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
        if not any(tol.get("key") == key for tol in tolerations):
            tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                                "tolerationSeconds": DEFAULT_TOLERATION_S})
    c = pod.container
    attempt = c.restart_count
    for st in status.get("containerStatuses") or []:
        if c.started_t is not None:
            st["containerID"] = container_id(pod.uid, attempt)
            st["imageID"] = image_id(st.get("image") or pod.template.image)
        last = (st.get("lastState") or {}).get("terminated")
        if last is not None:
            last["containerID"] = container_id(pod.uid, attempt if c.state != "running" else attempt - 1)
        term = (st.get("state") or {}).get("terminated")
        if term is not None:
            term["containerID"] = container_id(pod.uid, attempt)


_SIGTERM_HANDLED_EXIT = {"java": 143, "kotlin": 143}
"""Runtimes whose process installs a SIGTERM handler and exits 128 + 15 (the JVM's
shutdown hooks)."""
_SIGTERM_CLEAN_EXIT = {"redis", "valkey", "nginx", "envoy", "postgresql", "mysql", "mongodb", "kafka", "opensearch",
                       "memcached", "rabbitmq"}
"""Servers that shut down cleanly on SIGTERM and exit 0 (reason Completed)."""


def liveness_kill_exit(language: str) -> tuple[str, int]:
    """(reason, exit code) the runtime reports for a container the kubelet killed after a
    failed liveness probe (SIGTERM, then SIGKILL after the 30 s grace period).

    The JVM handles SIGTERM (shutdown hooks) and exits 143; servers that handle it (Redis,
    nginx, Envoy, the databases) exit 0 and show ``Completed``. A Go, Node.js, Python, .NET,
    Ruby, PHP, Rust or C++ process running as PID 1 without its own handler ignores
    SIGTERM (the kernel does not apply default signal actions to a namespace's init), so
    the kubelet's SIGKILL ends it: 137. Sources: signal(7) and pid_namespaces(7); the
    kubelet's killContainer (pkg/kubelet/kuberuntime/kuberuntime_container.go).
    Departure: the simulator ends the container at once instead of after the grace period.
    """
    if language in _SIGTERM_HANDLED_EXIT:
        return "Error", _SIGTERM_HANDLED_EXIT[language]
    if language in _SIGTERM_CLEAN_EXIT:
        return "Completed", 0
    return "Error", 137

_PULL_S = {
    "java": 14.0,
    "kotlin": 12.0,
    "csharp": 8.0,
    "python": 7.0,
    "typescript": 9.0,
    "nodejs": 6.0,
    "ruby": 7.0,
    "php": 6.0,
    "elixir": 6.0,
    "opensearch": 25.0,
    "kafka": 12.0,
    "mysql": 10.0,
    "mongodb": 9.0,
    "postgresql": 6.0,
}
"""Image pull time on a cold node, seconds (image size over ~50 MB/s; Go/Rust/C++ and
small images default to 3 s)."""


PUBLIC_REGISTRIES = frozenset({"docker.io", "ghcr.io", "quay.io", "registry.k8s.io", "gcr.io", "public.ecr.aws",
                               "us-docker.pkg.dev", "europe-docker.pkg.dev", "asia-docker.pkg.dev",
                               "us-central1-docker.pkg.dev", "mcr.microsoft.com"})
"""Registry hosts that resolve in DNS besides those of the app's own images."""
NODE_RESOLVER = "127.0.0.53:53"
"""The nodes' DNS resolver: systemd-resolved's stub on an Ubuntu host (containerd resolves
registry names on the node, not through cluster DNS)."""


def normalize_image(image: str) -> tuple[str, str, str, str]:
    """containerd's reference normalisation: (full reference, registry host, repository path, tag).

    ``codewisdom/ts-order-service:1.0`` is ``docker.io/codewisdom/ts-order-service:1.0``;
    a one-component name gets ``library/``; no tag means ``latest``.
    """
    name, tag = image, "latest"
    last = image.rsplit("/", 1)[-1]
    if ":" in last:
        name, _, tag = image.rpartition(":")
    first, _, rest = name.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        host, path = first, rest
    else:
        host, path = "docker.io", name if rest else f"library/{name}"
    return f"{host}/{path}:{tag}", host, path, tag


def pull_error(image: str, registry: set[str]) -> str:
    """What containerd 1.7 answers the kubelet when ``image`` cannot be pulled, as the kubelet
    prints it after ``Failed to pull image "IMAGE": `` (the CRI error, with the gRPC status
    prefix the simulator's kubelet has always printed).

    * the registry host does not resolve (a typo, a registry that is gone): ``dial tcp:
      lookup HOST on 127.0.0.53:53: no such host``;
    * Docker Hub has no such repository, or it is private and the pod has no pull secret:
      ``pull access denied, repository does not exist or may require authorization: server
      message: insufficient_scope: authorization failed`` (Docker Hub answers 401 for both);
    * the repository exists but not the tag: ``REF: not found``.

    Args:
        image: the reference in the pod spec.
        registry: every image reference the registry holds.
    """
    ref, host, path, tag = normalize_image(image)
    known = [normalize_image(i) for i in sorted(registry)]
    head = f'failed to pull and unpack image "{ref}": failed to resolve reference "{ref}": '
    if host not in PUBLIC_REGISTRIES and host not in {k[1] for k in known}:
        api = "registry-1.docker.io" if host == "docker.io" else host
        return (f"rpc error: code = Unknown desc = {head}failed to do request: Head "
                f'"https://{api}/v2/{path}/manifests/{tag}": dial tcp: lookup {host} on {NODE_RESOLVER}: '
                "no such host")
    if host == "docker.io" and (host, path) not in {(k[1], k[2]) for k in known}:
        return (f"rpc error: code = Unknown desc = {head}pull access denied, repository does not exist or may "
                "require authorization: server message: insufficient_scope: authorization failed")
    return f"rpc error: code = NotFound desc = {head}{ref}: not found"


def resolve_int_or_percent(value: str, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent: '25%' of total, or an absolute int."""
    if value.endswith("%"):
        raw = float(value[:-1]) * total / 100.0
        return math.ceil(raw) if round_up else math.floor(raw)
    return int(value)


def _name_uid(name: str) -> str:
    """A uid derived from an object's kind and name (a UUID's shape, hex digits)."""
    h = hashlib.sha256(name.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"


@dataclass
class Workset:
    """Per-pod effects resolved for the kubelet (computed by the simulator)."""

    crash: Effect | None = None
    readiness_fails: bool = False
    liveness_fails: bool = False


class Cluster:
    """Nodes, workloads, pods and events of one app, with the controllers that drive them.

    Args:
        app: the app model.
        registry: where kube-state-metrics gauges are written.
        rng: randomness for names, uids and jitter (a dedicated stream).
        registry_images: image references that exist in the registry (pull succeeds).
        pod_effects: callback giving the kubelet-relevant effects of a pod.
        on_log: callback(pod, line_kind, detail) for lifecycle log lines.
    """

    def __init__(
        self,
        app: AppModel,
        registry: SeriesRegistry,
        rng: np.random.Generator,
        registry_images: set[str],
        pod_effects: Callable[[Pod], Workset],
        on_log: Callable[[Pod, str, dict[str, Any]], None],
    ) -> None:
        self.app = app
        self.ns = app.namespace
        self.registry = registry
        self.rng = rng
        self.images = registry_images
        self.pod_effects = pod_effects
        self.on_log = on_log
        self.t = 0.0
        self.version = 0
        self.nodes: list[Node] = []
        self.workloads: dict[str, Workload] = {}
        self.pods: dict[str, Pod] = {}
        self.events: list[Event] = []
        self._event_index: dict[tuple[str, str, str, str], Event] = {}
        self._queue: list[tuple[float, int, str, str]] = []
        self._seq = 0
        self._dirty: set[str] = set()
        self._free_slots: list[int] = []
        self._next_slot = 0
        self._ip = 0
        self._removed: list[Pod] = []
        self._probes: list[tuple[float, int, str, str]] = []
        self._ksm_common = {"job": "kube-state-metrics", "namespace": self.ns}
        self.svc = {s.name: s for s in app.services}
        self._build_nodes()
        self.config_objects: dict[tuple[str, str], ConfigObjectState] = {}
        self.services: dict[str, ServiceObject] = {}
        self._objects_stamped = False
        self._build_objects()

    # ----------------------------------------------------------------- helpers

    def _uid(self) -> str:
        b = self.rng.integers(0, 256, size=16, dtype=np.uint8).tobytes()
        h = b.hex()
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"

    def _suffix(self, n: int = 5) -> str:
        alphabet = "bcdfghjklmnpqrstvwxz2456789"
        idx = self.rng.integers(0, len(alphabet), size=n)
        return "".join(alphabet[i] for i in idx)

    def _push(self, t: float, pod: Pod, action: str) -> None:
        pod.next_action_t = t
        pod.next_action = action
        self._seq += 1
        heapq.heappush(self._queue, (t, self._seq, pod.name, action))

    def event(self, kind: str, name: str, type_: str, reason: str, message: str, source: str = "kubelet") -> None:
        """Record an event, aggregating repeats of the same (object, reason, message)."""
        key = (kind, name, reason, message)
        ev = self._event_index.get(key)
        if ev is not None and self.t - ev.last_t < 600:
            ev.count += 1
            ev.last_t = self.t
            return
        ev = Event(self._uid(), type_, reason, kind, name, message, source, self.t, self.t)
        self.events.append(ev)
        self._event_index[key] = ev

    def _ksm(self, name: str, labels: dict[str, str], value: float) -> int:
        return self.registry.add(name, {**self._ksm_common, **labels}, value)

    def _bump(self) -> None:
        self.version += 1

    # ----------------------------------------------------------------- setup

    def _build_nodes(self) -> None:
        spec = self.app.cluster
        cpu = parse_quantity(spec.node_cpu)
        mem = parse_quantity(spec.node_memory)
        for zi, zone in enumerate(spec.zones):
            for i in range(spec.nodes_per_zone):
                index = len(self.nodes)
                # Each kubelet posts its status on its own phase of the 5-minute report period.
                node = Node(f"node-{'abcdefgh'[zi]}-{i + 1}", zone, cpu, mem, self._uid(), index=index,
                            heartbeat_origin=NODE_CREATED_T + 20.0 + 37.0 * index)
                self.nodes.append(node)
                base = {"node": node.name}
                self._ksm("kube_node_info", {
                    **base, "container_runtime_version": NODE_RUNTIME, "internal_ip": node.internal_ip,
                    "kernel_version": NODE_KERNEL, "kubelet_version": NODE_KUBELET, "kubeproxy_version": NODE_KUBELET,
                    "os_image": NODE_OS_IMAGE, "pod_cidr": "", "provider_id": "", "system_uuid": ""}, 1)
                self._ksm("kube_node_spec_unschedulable", base, 0)
                for cond, healthy, _, _ in NODE_CONDITIONS:
                    for status in ("true", "false", "unknown"):
                        self._ksm("kube_node_status_condition", {**base, "condition": cond, "status": status},
                                  1.0 if status == healthy.lower() else 0.0)

    def node(self, name: str) -> Node:
        for node in self.nodes:
            if node.name == name:
                return node
        raise KeyError(f"no node {name!r}")

    def add_workload(self, svc: Service, template: PodTemplate) -> Workload:
        """Create the Deployment or StatefulSet of a service at run time 0."""
        wl = Workload(
            kind=svc.workload,
            name=svc.name,
            uid=self._uid(),
            namespace=self.ns,
            service=svc.name,
            container=svc.container,
            port=svc.port,
            replicas=svc.replicas,
            template=template,
            created_t=self.t,
        )
        self._stamp_objects()
        self.workloads[wl.name] = wl
        self._init_workload_series(wl)
        self._dirty.add(wl.name)
        return wl

    # ----------------------------------------------------------------- spec changes

    def set_template(self, name: str, template: PodTemplate) -> None:
        wl = self.workloads[name]
        if template == wl.template:
            return
        wl.template = template
        wl.generation += 1
        self._dirty.add(name)

    def scale(self, name: str, replicas: int) -> None:
        wl = self.workloads[name]
        if replicas == wl.replicas:
            return
        wl.replicas = replicas
        wl.generation += 1
        self._dirty.add(name)  # the controller records ScalingReplicaSet when it acts

    def delete_pod(self, name: str, reason: str = "") -> Pod:
        """Delete a pod gracefully (``kubectl delete pod``); its owner replaces it.

        Raises:
            KeyError: no such pod.
        """
        pod = self.pods[name]
        if pod.terminating:
            return pod
        self._start_termination(pod, reason)
        return pod

    # ----------------------------------------------------------------- the loop

    def step(self, t: float) -> None:
        """Advance controllers and kubelets to run time ``t`` (seconds)."""
        self.t = t
        self._node_lifecycle(t)
        for _ in range(3):
            if not self._dirty:
                break
            dirty, self._dirty = self._dirty, set()
            for name in sorted(dirty):
                wl = self.workloads[name]
                if wl.kind == "Deployment":
                    self._reconcile_deployment(wl)
                else:
                    self._reconcile_statefulset(wl)
        while self._queue and self._queue[0][0] <= t:
            _, _, pod_name, action = heapq.heappop(self._queue)
            pod = self.pods.get(pod_name)
            if pod is None or pod.next_action != action or pod.next_action_t > t:
                continue
            node = self.node(pod.node) if pod.node else None
            if node is not None and not node.ready and action not in ("schedule",):
                # The kubelet is unreachable: nothing happens on this node until it returns.
                self._push(t + 5.0, pod, action)
                continue
            getattr(self, f"_do_{action}")(pod, t)
        if int(t) % 10 == 0:
            for wl in self.workloads.values():
                if wl.kind == "Deployment" and wl.conditions.get("Progressing") and \
                        wl.conditions["Progressing"].reason == "ReplicaSetUpdated":
                    self._dirty.add(wl.name)

    def probe(self, t: float) -> None:
        """Run the readiness and liveness probes that are due at ``t`` (a time-ordered heap)."""
        heap = self._probes
        while heap and heap[0][0] <= t:
            when, _, name, kind = heapq.heappop(heap)
            pod = self.pods.get(name)
            if pod is None:
                continue
            if kind == "r" and pod.next_probe_t == when:
                if pod.node is not None and not self.node(pod.node).ready:
                    self._schedule_probe(pod, "r", when + 5.0)  # kubelet unreachable
                else:
                    self._readiness(pod, t)
            elif kind == "l" and pod.next_liveness_t == when:
                if pod.node is not None and not self.node(pod.node).ready:
                    self._schedule_probe(pod, "l", when + 5.0)
                else:
                    self._liveness(pod, t)

    def _schedule_probe(self, pod: Pod, kind: str, when: float | None) -> None:
        """Set a pod's next readiness ("r") or liveness ("l") probe time (None: no more)."""
        if kind == "r":
            pod.next_probe_t = when
        else:
            pod.next_liveness_t = when
        if when is not None:
            self._seq += 1
            heapq.heappush(self._probes, (when, self._seq, pod.name, kind))

    def drain_removed(self) -> list[Pod]:
        out, self._removed = self._removed, []
        return out

    # ----------------------------------------------------------------- deployment controller

    def _available(self, rs: ReplicaSet) -> int:
        return sum(1 for p in rs.pods if p.ready and not p.terminating)

    def _reconcile_deployment(self, wl: Workload) -> None:
        t = self.t
        new_rs = wl.current_rs()
        if new_rs is None:
            revision = max((rs.revision for rs in wl.replicasets), default=0) + 1
            th = wl.template.template_hash()
            new_rs = ReplicaSet(f"{wl.name}-{th}", self._uid(), wl.name, wl.template, th, revision, t)
            wl.replicasets.append(new_rs)
            self._init_rs_series(wl, new_rs)
            wl.revision = revision
            if len(wl.replicasets) > 1:
                self._set_condition(wl, "Progressing", "True", "NewReplicaSetCreated",
                                    f'Created new replica set "{new_rs.name}"')
        elif wl.revision != new_rs.revision and new_rs is not max(wl.replicasets, key=lambda r: r.revision):
            # Rollback to an old template: the old ReplicaSet becomes the newest revision.
            new_rs.revision = max(rs.revision for rs in wl.replicasets) + 1
            wl.revision = new_rs.revision
            self._set_condition(wl, "Progressing", "True", "FoundNewReplicaSet",
                                f'Found new replica set "{new_rs.name}"')
        wl.revision = new_rs.revision
        old = [rs for rs in wl.replicasets if rs is not new_rs]
        replicas = wl.replicas
        surge = resolve_int_or_percent(wl.max_surge, replicas, True)
        unavail = resolve_int_or_percent(wl.max_unavailable, replicas, False)
        if surge == 0 and unavail == 0:
            unavail = 1
        all_count = sum(rs.replicas for rs in wl.replicasets)
        if not any(rs.replicas for rs in old):
            self._scale_rs(wl, new_rs, replicas)
        elif new_rs.replicas < replicas:
            up = min(replicas + surge - all_count, replicas - new_rs.replicas)
            if up > 0:
                self._scale_rs(wl, new_rs, new_rs.replicas + up)
        elif new_rs.replicas > replicas:
            self._scale_rs(wl, new_rs, replicas)
        all_count = sum(rs.replicas for rs in wl.replicasets)
        min_available = replicas - unavail
        new_unavailable = new_rs.replicas - self._available(new_rs)
        max_down = all_count - min_available - new_unavailable
        if max_down > 0 and old:
            old_sorted = sorted(old, key=lambda r: r.created_t)
            for rs in old_sorted:
                if max_down <= 0:
                    break
                unhealthy = rs.replicas - self._available(rs)
                down = min(max_down, unhealthy)
                if down > 0:
                    self._scale_rs(wl, rs, rs.replicas - down)
                    max_down -= down
            available_all = sum(self._available(rs) for rs in wl.replicasets)
            total_down = min(available_all - min_available, max_down)
            for rs in old_sorted:
                if total_down <= 0:
                    break
                down = min(rs.replicas, total_down)
                if down > 0:
                    self._scale_rs(wl, rs, rs.replicas - down)
                    total_down -= down
        for rs in wl.replicasets:
            self._reconcile_rs(wl, rs)
        stale = [rs for rs in sorted(old, key=lambda r: r.revision) if rs.replicas == 0 and not rs.pods]
        while len(stale) > wl.revision_history_limit:
            gone = stale.pop(0)
            wl.replicasets.remove(gone)
            self.registry.kill(gone.series.values())
        self._deployment_status(wl, new_rs, old, unavail)

    def _scale_rs(self, wl: Workload, rs: ReplicaSet, replicas: int) -> None:
        if rs.replicas == replicas:
            return
        direction = "up" if replicas > rs.replicas else "down"
        self.event("Deployment", wl.name, "Normal", "ScalingReplicaSet",
                   f"Scaled {direction} replica set {rs.name} to {replicas} from {rs.replicas}",
                   "deployment-controller")
        rs.replicas = replicas
        self.registry.set(rs.series["spec"], replicas)

    def _deployment_status(self, wl: Workload, new_rs: ReplicaSet, old: list[ReplicaSet], unavail: int) -> None:
        t = self.t
        pods = [p for p in wl.all_pods() if not p.terminating]
        before = (wl.status_replicas, wl.status_updated, wl.status_ready, wl.status_available)
        wl.status_replicas = len(pods)
        wl.status_updated = sum(1 for p in new_rs.pods if not p.terminating)
        wl.status_ready = sum(1 for p in pods if p.ready)
        wl.status_available = wl.status_ready
        wl.status_unavailable = max(wl.replicas - wl.status_available, 0)
        wl.observed_generation = wl.generation
        if wl.status_available >= wl.replicas - unavail:
            self._set_condition(wl, "Available", "True", "MinimumReplicasAvailable",
                                "Deployment has minimum availability.")
        else:
            self._set_condition(wl, "Available", "False", "MinimumReplicasUnavailable",
                                "Deployment does not have minimum availability.")
        complete = (
            wl.status_updated == wl.replicas
            and self._available(new_rs) == wl.replicas
            and not any(rs.pods for rs in old)
        )
        progressing = wl.conditions.get("Progressing")
        if complete:
            self._set_condition(wl, "Progressing", "True", "NewReplicaSetAvailable",
                                f'ReplicaSet "{new_rs.name}" has successfully progressed.')
        elif progressing is None:
            self._set_condition(wl, "Progressing", "True", "ReplicaSetUpdated",
                                f'ReplicaSet "{new_rs.name}" is progressing.')
        elif before != (wl.status_replicas, wl.status_updated, wl.status_ready, wl.status_available) \
                or progressing.reason in ("NewReplicaSetAvailable", "NewReplicaSetCreated", "FoundNewReplicaSet"):
            self._set_condition(wl, "Progressing", "True", "ReplicaSetUpdated",
                                f'ReplicaSet "{new_rs.name}" is progressing.', touch=True)
        elif progressing.reason == "ReplicaSetUpdated" and t - progressing.last_update_t > wl.progress_deadline_s:
            self._set_condition(wl, "Progressing", "False", "ProgressDeadlineExceeded",
                                f'ReplicaSet "{new_rs.name}" has timed out progressing.')
            self.event("Deployment", wl.name, "Warning", "ProgressDeadlineExceeded",
                       f'Deployment "{wl.name}" has timed out progressing.', "deployment-controller")
        self._sync_workload_series(wl)

    def _set_condition(self, wl: Workload, type_: str, status: str, reason: str, message: str,
                       touch: bool = False) -> None:
        cond = wl.conditions.get(type_)
        if cond is None:
            wl.conditions[type_] = Condition(type_, status, reason, message, self.t, self.t)
            return
        if cond.status != status:
            cond.last_transition_t = self.t
        if cond.status != status or cond.reason != reason or touch:
            cond.last_update_t = self.t
        cond.status, cond.reason, cond.message = status, reason, message

    # ----------------------------------------------------------------- replica sets

    def _reconcile_rs(self, wl: Workload, rs: ReplicaSet) -> None:
        active = rs.active_pods()
        if len(active) < rs.replicas:
            for _ in range(rs.replicas - len(active)):
                pod = self._new_pod(wl, rs.template, rs.template_hash, rs.revision, "ReplicaSet", rs.name,
                                    f"{rs.name}-{self._suffix()}")
                rs.pods.append(pod)
                self.event("ReplicaSet", rs.name, "Normal", "SuccessfulCreate", f"Created pod: {pod.name}",
                           "replicaset-controller")
        elif len(active) > rs.replicas:
            phase_rank = {"Pending": 0, "Unknown": 1, "Running": 2}
            victims = sorted(
                active,
                key=lambda p: (p.node is not None, phase_rank.get(p.phase, 3), p.ready,
                               -p.container.restart_count, -p.created_t),
            )
            for pod in victims[: len(active) - rs.replicas]:
                self._start_termination(pod, "")
                self.event("ReplicaSet", rs.name, "Normal", "SuccessfulDelete", f"Deleted pod: {pod.name}",
                           "replicaset-controller")
        ready = sum(1 for p in rs.pods if p.ready and not p.terminating)
        self.registry.set(rs.series["ready"], ready)

    # ----------------------------------------------------------------- stateful sets

    def _reconcile_statefulset(self, wl: Workload) -> None:
        th = wl.template.template_hash()
        for ordinal in range(wl.replicas):
            pod = wl.sts_pods.get(ordinal)
            if pod is None:
                if all(self._sts_ready(wl, i) for i in range(ordinal)):
                    pod = self._new_pod(wl, wl.template, th, wl.generation, "StatefulSet", wl.name,
                                        f"{wl.name}-{ordinal}")
                    wl.sts_pods[ordinal] = pod
                    self.event("StatefulSet", wl.name, "Normal", "SuccessfulCreate",
                               f"create Pod {pod.name} in StatefulSet {wl.name} successful", "statefulset-controller")
                break
        for ordinal in sorted(wl.sts_pods, reverse=True):
            pod = wl.sts_pods[ordinal]
            if ordinal >= wl.replicas and not pod.terminating:
                self._start_termination(pod, "")
                break
        else:
            for ordinal in sorted(wl.sts_pods, reverse=True):
                pod = wl.sts_pods[ordinal]
                others_ready = all(self._sts_ready(wl, i) for i in wl.sts_pods if i != ordinal)
                if pod.template_hash != th and not pod.terminating and others_ready:
                    self._start_termination(pod, "")
                    break
        pods = [p for p in wl.sts_pods.values() if not p.terminating]
        wl.status_replicas = len(pods)
        wl.status_ready = sum(1 for p in pods if p.ready)
        wl.status_available = wl.status_ready
        wl.status_updated = sum(1 for p in pods if p.template_hash == th)
        wl.status_unavailable = max(wl.replicas - wl.status_available, 0)
        wl.observed_generation = wl.generation
        self._sync_workload_series(wl)

    def _sts_ready(self, wl: Workload, ordinal: int) -> bool:
        pod = wl.sts_pods.get(ordinal)
        return pod is not None and pod.ready and not pod.terminating

    # ----------------------------------------------------------------- pods

    def _new_pod(self, wl: Workload, template: PodTemplate, th: str, revision: int, owner_kind: str,
                 owner_name: str, name: str) -> Pod:
        self._ip += 1
        pod = Pod(
            name=name,
            uid=self._uid(),
            namespace=self.ns,
            service=wl.service,
            owner_kind=owner_kind,
            owner_name=owner_name,
            template=template,
            template_hash=th,
            revision=revision,
            created_t=self.t,
            container=ContainerStatus(wl.container, template.image),
            ip=f"10.8.{(self._ip // 250) % 250}.{self._ip % 250 + 2}",
        )
        if self._free_slots:
            pod.slot = self._free_slots.pop()
        else:
            pod.slot = self._next_slot
            self._next_slot += 1
        self.pods[name] = pod
        self._init_pod_series(pod)
        self._push(self.t, pod, "schedule")
        self._bump()
        return pod

    def _do_schedule(self, pod: Pod, t: float) -> None:
        """Bind ``pod`` to a node (:meth:`fit_error` filters), spreading a workload's pods over
        zones, then nodes, then the least requested; an unschedulable pod stays ``Pending``
        with a ``FailedScheduling`` warning and is retried after 10 s doubling to 5 min (the
        scheduling queue's back-off and its periodic flush of unschedulable pods; assumption
        for the exact times)."""
        used: dict[str, tuple[float, float]] = {n.name: (0.0, 0.0) for n in self.nodes}
        same_zone: dict[str, int] = {z: 0 for z in self.app.cluster.zones}
        same_node = {n.name: 0 for n in self.nodes}
        for other in self.pods.values():
            if other.node is None or other is pod:
                continue
            cpu, mem = self._pod_requests(other.template)
            u = used[other.node]
            used[other.node] = (u[0] + cpu, u[1] + mem)
            if other.service == pod.service and not other.terminating:
                same_node[other.node] += 1
                if other.zone:
                    same_zone[other.zone] += 1
        first, msg = self.fit_error(pod, used)
        if first is None:
            pod.unschedulable = msg
            self.event("Pod", pod.name, "Warning", "FailedScheduling", msg, "default-scheduler")
            self._sync_pod_series(pod)
            self._push(t + self._config_retry_s(pod), pod, "schedule")
            return
        need_cpu, need_mem = self._pod_requests(pod.template)
        candidates = [n for n in self.nodes if self._node_taint_reason(n) is None
                      and not (need_cpu > 0 and need_cpu > n.cpu - used[n.name][0] + 1e-9)
                      and not (need_mem > 0 and need_mem > n.memory - used[n.name][1] + 0.5)]
        best = min(candidates, key=lambda n: (same_zone[n.zone], same_node[n.name], used[n.name][0], n.name))
        pod.node, pod.zone, pod.scheduled_t = best.name, best.zone, t
        pod.unschedulable = ""
        pod.retry_s = 0.0
        self.event("Pod", pod.name, "Normal", "Scheduled",
                   f"Successfully assigned {self.ns}/{pod.name} to {best.name}", "default-scheduler")
        self._sync_pod_series(pod)
        self._push(t + 1.0, pod, "pull")

    def _do_pull(self, pod: Pod, t: float) -> None:
        if self._blocked_on_volumes(pod, t):
            return
        node = self.node(pod.node or "")
        image = pod.template.image
        c = pod.container
        if image in node.images:
            self.event("Pod", pod.name, "Normal", "Pulled",
                       f'Container image "{image}" already present on machine')
            self._push(t + 1.0, pod, "start")
            return
        if image in self.images:
            lang = self.svc[pod.service].language
            seconds = _PULL_S.get(lang, 3.0) * float(self.rng.uniform(0.8, 1.25))
            self.event("Pod", pod.name, "Normal", "Pulling", f'Pulling image "{image}"')
            node.images.add(image)
            self._push(t + seconds, pod, "pulled")
            return
        msg = f'Failed to pull image "{image}": {pull_error(image, self.images)}'
        self.event("Pod", pod.name, "Warning", "Failed", msg)
        self.event("Pod", pod.name, "Warning", "Failed", "Error: ErrImagePull")
        c.state, c.reason, c.message = "waiting", "ErrImagePull", msg
        self._sync_pod_series(pod)
        pod.backoff_s = BACKOFF_INITIAL_S if pod.backoff_s == 0 else min(pod.backoff_s * 2, BACKOFF_MAX_S)
        self._push(t + 2.0, pod, "pullbackoff")

    def _do_pullbackoff(self, pod: Pod, t: float) -> None:
        c = pod.container
        c.state, c.reason = "waiting", "ImagePullBackOff"
        c.message = f'Back-off pulling image "{pod.template.image}"'
        self.event("Pod", pod.name, "Normal", "BackOff", c.message)
        self.event("Pod", pod.name, "Warning", "Failed", "Error: ImagePullBackOff")
        self._sync_pod_series(pod)
        self._push(t + pod.backoff_s, pod, "pull")

    def _do_pulled(self, pod: Pod, t: float) -> None:
        seconds = t - (pod.scheduled_t or t) - 1.0
        self.event("Pod", pod.name, "Normal", "Pulled",
                   f'Successfully pulled image "{pod.template.image}" in {seconds:.3f}s')
        self._do_start(pod, t)

    def _do_start(self, pod: Pod, t: float) -> None:
        if self._blocked_on_env(pod, t):
            return
        c = pod.container
        svc = self.svc[pod.service]
        self.event("Pod", pod.name, "Normal", "Created", f"Created container {c.name}")
        self.event("Pod", pod.name, "Normal", "Started", f"Started container {c.name}")
        c.state, c.reason, c.message, c.started_t = "running", "", "", t
        c.exit_code = 0
        pod.phase = "Running"
        pod.probe_failures = 0
        pod.liveness_failures = 0
        work = self.pod_effects(pod)
        startup = svc.startup_s * float(self.rng.uniform(0.85, 1.2))
        pod.serving_since = t + startup
        crash_s = (crash_after_s(svc.language, startup, work.crash.log.exception, spring=svc.protocol == "http")
                   if work.crash is not None else None)
        self.on_log(pod, "start", {"startup_s": startup, "crash_after_s": crash_s})
        if crash_s is not None:
            pod.serving_since = None
            self._push(t + crash_s, pod, "crash")
        rp = pod.template.readiness_probe
        if rp is None:
            self._set_ready(pod, True)
            self._schedule_probe(pod, "r", None)
        else:
            self._schedule_probe(pod, "r", t + rp.initial_delay_s)
        lp = pod.template.liveness_probe
        self._schedule_probe(pod, "l", None if lp is None else t + lp.initial_delay_s)
        self._sync_pod_series(pod)
        self._bump()

    def _do_crash(self, pod: Pod, t: float) -> None:
        work = self.pod_effects(pod)
        code = work.crash.exit_code if work.crash else 1
        self.on_log(pod, "crash", {"effect": work.crash})
        self._terminate_container(pod, t, "Error", code)

    def _do_restart(self, pod: Pod, t: float) -> None:
        pod.container.restart_count += 1
        self.registry.set(pod.series["restarts"], pod.container.restart_count)
        self._do_start(pod, t)

    def _do_remove(self, pod: Pod, t: float) -> None:
        self.pods.pop(pod.name, None)
        wl = self.workloads.get(pod.service)
        if wl is not None:
            for rs in wl.replicasets:
                if pod in rs.pods:
                    rs.pods.remove(pod)
            for ordinal, p in list(wl.sts_pods.items()):
                if p is pod:
                    del wl.sts_pods[ordinal]
            self._dirty.add(wl.name)
        self.registry.kill(pod.series.values())
        self._free_slots.append(pod.slot)
        self._removed.append(pod)
        self._bump()

    def oom_kill(self, pod: Pod) -> None:
        """The kernel's OOM killer ends the container (working set above its memory limit)."""
        if pod.running and not pod.terminating:
            self.on_log(pod, "oom", {})
            self._terminate_container(pod, self.t, "OOMKilled", 137)

    def _terminate_container(self, pod: Pod, t: float, reason: str, code: int) -> None:
        c = pod.container
        ran = t - (c.started_t or t)
        c.last_state = {
            "exitCode": code,
            "reason": reason,
            "startedAt": timestamp(c.started_t or t),
            "finishedAt": timestamp(t),
        }
        c.state, c.reason, c.exit_code, c.finished_t = "terminated", reason, code, t
        pod.serving_since = None
        pod.next_probe_t = None
        pod.next_liveness_t = None
        self._set_ready(pod, False)
        self._set_last_terminated(pod, reason)
        if pod.terminating:
            self._sync_pod_series(pod)
            return
        if ran >= BACKOFF_RESET_S:
            pod.backoff_s = 0.0
        # The first restart is immediate; later ones wait 10 s, 20 s, ... up to 5 min.
        delay = pod.backoff_s
        pod.backoff_s = BACKOFF_INITIAL_S if pod.backoff_s == 0 else min(pod.backoff_s * 2, BACKOFF_MAX_S)
        if delay == 0:
            self._push(t + 1.0, pod, "restart")
        else:
            pod.backoff_until = t + delay
            self._push(t + 1.0, pod, "crashloop")
        self._sync_pod_series(pod)
        self._bump()

    def _do_crashloop(self, pod: Pod, t: float) -> None:
        c = pod.container
        c.state, c.reason = "waiting", "CrashLoopBackOff"
        wait = int(pod.backoff_until - (c.finished_t or t))
        c.message = f"back-off {wait}s restarting failed container={c.name} pod={pod.name}_{self.ns}({pod.uid})"
        self.event("Pod", pod.name, "Warning", "BackOff", "Back-off restarting failed container "
                   f"{c.name} in pod {pod.name}_{self.ns}({pod.uid})")
        self._sync_pod_series(pod)
        self._push(max(pod.backoff_until, t + 1.0), pod, "restart")

    def _start_termination(self, pod: Pod, reason: str) -> None:
        t = self.t
        pod.deletion_t = t
        pod.next_probe_t = None
        pod.next_liveness_t = None
        self._set_ready(pod, False)
        node = self.node(pod.node) if pod.node else None
        wl = self.workloads.get(pod.service)
        if wl is not None:
            self._dirty.add(wl.name)
        if node is not None and not node.ready:
            # No kubelet to act on it: the pod stays Terminating, its container running (and
            # reading ready), until the node returns (set_node_ready) or forever.
            pod.container.ready = pod.running
            self._sync_pod_series(pod)
            self._bump()
            return
        if pod.node:
            self.event("Pod", pod.name, "Normal", "Killing", f"Stopping container {pod.container.name}")
        self.on_log(pod, "stop", {"reason": reason})
        self._push(t + (TERMINATION_S if pod.running else 0.0), pod, "remove")
        self._sync_pod_series(pod)
        self._bump()

    def _set_ready(self, pod: Pod, ready: bool) -> None:
        if pod.ready == ready:
            return
        pod.ready = ready
        pod.container.ready = ready
        pod.ready_t = self.t if ready else None
        wl = self.workloads.get(pod.service)
        if wl is not None:
            self._dirty.add(wl.name)
        self._bump()

    # ----------------------------------------------------------------- probes

    def probe_ok(self, pod: Pod, probe: Probe, model_probe: Probe | None, t: float) -> tuple[bool, str]:
        """Outcome of one probe and the kubelet prober's failure message.

        Messages are the prober's own (``pkg/probe/http``, ``pkg/probe/tcp``,
        ``pkg/probe/grpc``): an HTTP probe reports the Go client's error (``Get "URL": dial
        tcp IP:PORT: connect: connection refused``) or ``HTTP probe failed with statuscode:
        404``; a TCP probe the dial error; a gRPC probe, which dials with ``WithBlock`` and so
        retries a refused connection until its timeout, ``timeout: failed to connect service
        "IP:PORT" within 1s: context deadline exceeded``.
        """
        svc = self.svc[pod.service]
        port = svc.port
        same_as_model = model_probe is not None and (probe.type, probe.port, probe.path) == (
            model_probe.type, model_probe.port, model_probe.path)
        target_port = probe.port or port
        if same_as_model:
            pass  # the manifest's own probe targets a port and path the process serves
        elif probe.type != "exec" and probe.port is not None and port is not None and probe.port != port:
            return False, probetext.refused(probe, pod.ip, probe.port)
        elif probe.type == "http" and model_probe is not None and probe.path != model_probe.path:
            return False, probetext.unhealthy(probe, 404)
        if not pod.serving(t):
            return False, probetext.refused(probe, pod.ip, target_port or 8080)
        return True, ""

    def _readiness(self, pod: Pod, t: float) -> None:
        probe = pod.template.readiness_probe
        if probe is None or not pod.running or pod.terminating:
            pod.next_probe_t = None
            return
        self._schedule_probe(pod, "r", t + probe.period_s)
        ok, msg = self.probe_ok(pod, probe, self.svc[pod.service].readiness_probe, t)
        if ok and self.pod_effects(pod).readiness_fails:
            ok = False
            msg = probetext.unhealthy(probe, 503)
        if ok:
            pod.probe_failures = 0
            if not pod.ready:
                self._set_ready(pod, True)
                self._sync_pod_series(pod)
            return
        pod.probe_failures += 1
        if (pod.serving_since is not None and t >= pod.serving_since) or pod.probe_failures >= probe.failure_threshold:
            self.event("Pod", pod.name, "Warning", "Unhealthy", f"Readiness probe failed: {msg}")
        if pod.probe_failures >= probe.failure_threshold and pod.ready:
            self._set_ready(pod, False)
            self._sync_pod_series(pod)

    def _liveness(self, pod: Pod, t: float) -> None:
        probe = pod.template.liveness_probe
        if probe is None or not pod.running or pod.terminating:
            pod.next_liveness_t = None
            return
        self._schedule_probe(pod, "l", t + probe.period_s)
        # What the process serves: the manifest's liveness probe, else its readiness probe.
        svc = self.svc[pod.service]
        ok, msg = self.probe_ok(pod, probe, svc.liveness_probe or svc.readiness_probe, t)
        if ok and self.pod_effects(pod).liveness_fails:
            ok, msg = False, probetext.hung(probe, pod.ip, probe.port or self.svc[pod.service].port or 8080)
        if ok:
            pod.liveness_failures = 0
            return
        pod.liveness_failures += 1
        self.event("Pod", pod.name, "Warning", "Unhealthy", f"Liveness probe failed: {msg}")
        if pod.liveness_failures >= probe.failure_threshold:
            self.event("Pod", pod.name, "Normal", "Killing",
                       f"Container {pod.container.name} failed liveness probe, will be restarted")
            self.on_log(pod, "killed", {})
            self._terminate_container(pod, t, *liveness_kill_exit(self.svc[pod.service].language))

    # ----------------------------------------------------------------- config objects, services, endpoints

    def _build_objects(self) -> None:
        """The namespace's ConfigMaps, Secrets and Services, from the app model.

        UIDs are derived from names (not drawn from ``rng``), so adding objects leaves every
        pod name and uid of a seed as it was.
        """
        for obj in self.app.config_objects:
            self.config_objects[(obj.kind, obj.name)] = ConfigObjectState(
                obj.kind, obj.name, self.ns, _name_uid(f"{obj.kind}/{obj.name}"), list(obj.keys), obj.type,
                dict(obj.labels), self.t)
        for index, svc in enumerate(self.app.services):
            if svc.service_port is None:
                continue
            self.services[svc.name] = ServiceObject(
                svc.name, self.ns, _name_uid(f"Service/{svc.name}"),
                f"10.96.{index // 200}.{index % 200 + 10}", svc.service_port,
                svc.port if svc.port is not None else svc.service_port, svc.protocol, {"app": svc.name}, self.t)

    def _stamp_objects(self) -> None:
        """Objects are applied with the app: they take the creation time of its first workload."""
        if self._objects_stamped:
            return
        self._objects_stamped = True
        for obj in self.config_objects.values():
            obj.created_t = self.t
        for svc in self.services.values():
            svc.created_t = self.t

    def patch_service(self, name: str, *, selector: dict[str, str] | None = None,
                      target_port: int | str | None = None) -> ServiceObject:
        """Change a Service's selector and/or targetPort (``kubectl patch service``).

        Raises:
            KeyError: no such Service.
        """
        svc = self.services[name]
        if selector is not None:
            svc.selector = dict(selector)
        if target_port is not None:
            svc.target_port = target_port
        svc.resource_version += 1
        self._bump()
        return svc

    def set_config_keys(self, kind: str, name: str, keys: list[str]) -> ConfigObjectState:
        """Replace the key set of a ConfigMap or Secret (an edit that adds or drops keys).

        Raises:
            KeyError: no such object.
        """
        obj = self.config_objects[(kind, name)]
        obj.keys = list(keys)
        obj.revision += 1
        self._bump()
        return obj

    def rotate(self, kind: str, name: str) -> ConfigObjectState:
        """New values under the same keys (a credential rotation); returns the object.

        Raises:
            KeyError: no such object.
        """
        obj = self.config_objects[(kind, name)]
        obj.revision += 1
        obj.rotated_t = self.t
        self._bump()
        return obj

    def pod_labels(self, pod: Pod) -> dict[str, str]:
        """A pod's labels as its controller sets them (see :meth:`Pod.to_k8s`)."""
        wl = self.workloads[pod.service]
        if pod.owner_kind == "ReplicaSet":
            return {**wl.labels(), "pod-template-hash": pod.template_hash}
        return {**wl.labels(), "controller-revision-hash": f"{pod.owner_name}-{pod.template_hash}"}

    def endpoint_addresses(self, name: str) -> list[EndpointAddress]:
        """The pods a Service selects that have an IP (scheduled), by pod name, with the port its
        targetPort resolves to on them (None for a port name: the simulated containers' one port
        is unnamed).

        Raises:
            KeyError: no such Service.
        """
        svc = self.services[name]
        if not svc.selector:
            return []  # a Service without a selector gets no managed endpoints
        port = svc.target_port if isinstance(svc.target_port, int) else None
        out = []
        for pod in sorted(self.pods.values(), key=lambda p: p.name):
            if pod.node is None:
                continue
            labels = self.pod_labels(pod)
            if all(labels.get(k) == v for k, v in svc.selector.items()):
                out.append(EndpointAddress(pod.name, pod.uid, pod.ip, port, pod.node, pod.ready, pod.terminating))
        return out

    def service_reaches_pods(self, name: str) -> bool:
        """Whether connections to Service ``name`` reach a serving container: some ready endpoint
        whose port is the container port the workload listens on. A Service whose selector
        matches no pod, or whose targetPort is a port no container listens on, reaches nothing
        (kube-proxy rejects connections to a Service without endpoints; a wrong port is refused
        by the pod), so callers see ``connection refused``."""
        svc = self.services.get(name)
        model = self.svc.get(name)
        if svc is None or model is None:
            return True
        if svc.selector == {"app": name} and svc.target_port == (model.port or model.service_port):
            return True  # the manifest's own Service: its pods' readiness decides, as before
        return any(a.ready and not a.terminating and a.port == model.port for a in self.endpoint_addresses(name))

    def _config_failure(self, pod: Pod, volumes: bool) -> str | None:
        """Why the kubelet cannot set up ``pod``'s volumes (``volumes``) or container env, or None.

        Texts are the kubelet's: volume set-up (``pkg/volume/configmap``, ``pkg/volume/secret``:
        ``configmap "x" not found``, ``configmap references non-existent config key: k``,
        ``secret references non-existent secret key: k``) under ``MountVolume.SetUp failed for
        volume "v" :``; env (``pkg/kubelet/kubelet_pods.go`` makeEnvironmentVariables, envFrom
        first, then env): the API's ``configmap "x" not found`` / ``secret "x" not found`` and
        ``couldn't find key k in ConfigMap ns/x`` / ``couldn't find key k in Secret ns/x``.
        Optional references are skipped, as the kubelet does.
        """
        refs = pod.template.config_refs
        if not refs:
            return None
        if volumes:
            for ref in refs:
                if ref.volume is None:
                    continue
                obj = self.config_objects.get((ref.kind, ref.name))
                what = ref.kind.lower()
                if obj is None:
                    if not ref.optional:
                        return f'MountVolume.SetUp failed for volume "{ref.volume}" : {what} "{ref.name}" not found'
                elif ref.key is not None and ref.key not in obj.keys and not ref.optional:
                    detail = ("configmap references non-existent config key" if ref.kind == "ConfigMap"
                              else "secret references non-existent secret key")
                    return f'MountVolume.SetUp failed for volume "{ref.volume}" : {detail}: {ref.key}'
            return None
        ordered = [r for r in refs if r.volume is None and r.env is None] + \
                  [r for r in refs if r.volume is None and r.env is not None]
        for ref in ordered:
            obj = self.config_objects.get((ref.kind, ref.name))
            if obj is None:
                if not ref.optional:
                    return f'{ref.kind.lower()} "{ref.name}" not found'
                continue
            if ref.key is not None and ref.key not in obj.keys and not ref.optional:
                return f"couldn't find key {ref.key} in {ref.kind} {self.ns}/{ref.name}"
        return None

    def _config_retry_s(self, pod: Pod) -> float:
        """The next retry of a pod blocked on its config: 10 s doubling to 300 s (assumption,
        shaped like the kubelet's pod-worker and volume-manager back-off)."""
        pod.retry_s = BACKOFF_INITIAL_S if pod.retry_s == 0 else min(pod.retry_s * 2, BACKOFF_MAX_S)
        return pod.retry_s

    def _blocked_on_volumes(self, pod: Pod, t: float) -> bool:
        """The kubelet waits for volumes before it pulls and creates containers: a missing
        ConfigMap or Secret (or key of an ``items`` list) keeps the pod ``ContainerCreating``
        with ``FailedMount`` warnings until it appears."""
        msg = self._config_failure(pod, volumes=True)
        if msg is None:
            return False
        c = pod.container
        c.state, c.reason, c.message = "waiting", "ContainerCreating", ""
        self.event("Pod", pod.name, "Warning", "FailedMount", msg)
        self._sync_pod_series(pod)
        self._push(t + self._config_retry_s(pod), pod, "pull")
        return True

    def _blocked_on_env(self, pod: Pod, t: float) -> bool:
        """``CreateContainerConfigError``: the container cannot be created because an env
        reference does not resolve (kuberuntime ``startContainer``: the container status is
        ``Waiting`` with that reason and the error as message, and a ``Failed`` warning
        ``Error: <message>``); the kubelet retries on its next sync of the pod."""
        msg = self._config_failure(pod, volumes=False)
        if msg is None:
            return False
        c = pod.container
        c.state, c.reason, c.message = "waiting", "CreateContainerConfigError", msg
        self.event("Pod", pod.name, "Warning", "Failed", f"Error: {msg}")
        self._sync_pod_series(pod)
        self._push(t + self._config_retry_s(pod), pod, "pull")
        self._bump()
        return True

    # ----------------------------------------------------------------- scheduler

    def _pod_requests(self, template: PodTemplate) -> tuple[float, float]:
        """CPU cores and memory bytes the scheduler counts for a pod: its requests, or its
        limits where a request is unset (``SetDefaults_Pod`` copies limits into unset requests,
        ``pkg/apis/core/v1/defaults.go``)."""
        req, lim = template.resources.requests, template.resources.limits
        cpu = req.cpu_cores() if req.cpu is not None else lim.cpu_cores()
        mem = req.memory_bytes() if req.memory is not None else lim.memory_bytes()
        return float(cpu or 0.0), float(mem or 0.0)

    def _node_taint_reason(self, node: Node) -> str | None:
        """The first filter's reason for a node no pod of the app can go to, or None: the
        NodeUnschedulable filter (a cordoned node), then TaintToleration (the node controller's
        unreachable taint; an administrator's ``NoSchedule`` taint, or ``NoExecute`` one other
        than the unreachable and not-ready keys every pod tolerates for a while)."""
        if node.unschedulable:
            return "node(s) were unschedulable"
        if not node.ready or node.condition != "True":
            return "node(s) had untolerated taint {node.kubernetes.io/unreachable: }"
        for key, value, effect, _ in node.admin_taints:
            if effect == "NoSchedule" or (effect == "NoExecute" and key not in TOLERATED_KEYS):
                return f"node(s) had untolerated taint {{{key}: {value}}}"
        return None

    def set_node_spec(self, name: str, *, unschedulable: bool | None = None,
                      taints: list[tuple[str, str, str]] | None = None) -> None:
        """An administrator's write of a Node's ``spec.unschedulable`` and ``spec.taints``.

        Args:
            name: the node.
            unschedulable: cordon (True) or uncordon (False); None: unchanged.
            taints: the node's new taints as (key, value, effect); the node controller's own
                (``node.kubernetes.io/unreachable`` while the node is down, and the
                ``node.kubernetes.io/unschedulable`` taint of a cordon) are the controller's
                and kept as it has them; None: unchanged.

        A ``NoExecute`` taint evicts the node's pods (:meth:`_node_lifecycle`); pods left
        ``Pending`` by a cordon or taint are retried by the scheduler's back-off.

        Raises:
            KeyError: no such node.
        """
        node = self.node(name)
        t = self.t
        if unschedulable is not None and unschedulable != node.unschedulable:
            node.unschedulable = unschedulable
            node.cordoned_t = t
            sid = self.registry.lookup("kube_node_spec_unschedulable", {**self._ksm_common, "node": name})
            if sid is not None:
                self.registry.set(sid, float(unschedulable))
            self.event("Node", name, "Normal", "NodeNotSchedulable" if unschedulable else "NodeSchedulable",
                       f"Node {name} status is now: {'NodeNotSchedulable' if unschedulable else 'NodeSchedulable'}",
                       "kubelet")
        if taints is not None:
            controller = {(k, e) for k, e, _ in node.taints}
            before = {(k, v, e): at for k, v, e, at in node.admin_taints}
            kept: list[tuple[str, str, str, float]] = []
            for key, value, effect in taints:
                if (key, effect) in controller or key == UNSCHEDULABLE_TAINT:
                    continue
                if any((k, v, e) == (key, value, effect) for k, v, e, _ in kept):
                    continue
                kept.append((key, value, effect, before.get((key, value, effect), t)))
            for k, v, e, _ in node.admin_taints:
                labels = {**self._ksm_common, "node": name, "key": k, "value": v, "effect": e}
                sid = self.registry.lookup("kube_node_spec_taint", labels)
                if sid is not None:
                    self.registry.kill([sid])
            node.admin_taints = kept
            for k, v, e, _ in kept:
                self._ksm("kube_node_spec_taint", {"node": name, "key": k, "value": v, "effect": e}, 1)
        self._bump()
        self._evict_tainted(t)

    def fit_error(self, pod: Pod, used: dict[str, tuple[float, float]]) -> tuple[Node | None, str]:
        """Filter the nodes for ``pod`` as the default scheduler does (TaintToleration, then
        NodeResourcesFit on CPU and memory requests against allocatable minus what the pods
        bound to the node request): the feasible nodes' best, or the FitError message.

        The message is ``FitError.Error()`` (``pkg/scheduler/framework/types.go``) with the
        default preemption plugin's PostFilter message, as v1.30 writes it: ``0/6 nodes are
        available: 6 Insufficient memory. preemption: 0/6 nodes are available: 6 No preemption
        victims found for incoming pod..`` -- reason counts sorted as strings; the doubled final
        period is real (the preemption message ends in one and ``SeparatorFormat`` " %v." adds
        another). Nodes rejected by a taint are UnschedulableAndUnresolvable, so preemption
        reports ``Preemption is not helpful for scheduling`` for them; no pod of these apps has
        a PriorityClass, so no pod is ever a preemption victim.
        """
        need_cpu, need_mem = self._pod_requests(pod.template)
        reasons: dict[str, int] = {}
        preempt: dict[str, int] = {}
        feasible: list[Node] = []
        for node in self.nodes:
            taint = self._node_taint_reason(node)
            if taint is not None:
                reasons[taint] = reasons.get(taint, 0) + 1
                why = "Preemption is not helpful for scheduling"
                preempt[why] = preempt.get(why, 0) + 1
                continue
            cpu_used, mem_used = used.get(node.name, (0.0, 0.0))
            short = []
            if need_cpu > 0 and need_cpu > node.cpu - cpu_used + 1e-9:
                short.append("Insufficient cpu")
            if need_mem > 0 and need_mem > node.memory - mem_used + 0.5:
                short.append("Insufficient memory")
            if not short:
                feasible.append(node)
                continue
            for r in short:
                reasons[r] = reasons.get(r, 0) + 1
            why = "No preemption victims found for incoming pod"
            preempt[why] = preempt.get(why, 0) + 1
        if feasible:
            return feasible[0], ""
        n = len(self.nodes)

        def histogram(counts: dict[str, int]) -> str:
            return ", ".join(sorted(f"{v} {k}" for k, v in counts.items()))

        post = f"preemption: 0/{n} nodes are available: {histogram(preempt)}."
        return None, f"0/{n} nodes are available: {histogram(reasons)}. {post}."

    # ----------------------------------------------------------------- nodes

    def set_node_ready(self, name: str, ready: bool, network: bool = True) -> None:
        """Take a node's kubelet away (it stops reporting) or bring it back.

        Args:
            name: the node.
            ready: False: the kubelet stops posting status and renewing its lease; True: it
                reports again (a restarted kubelet first records ``Starting``).
            network: the node's network goes (and comes back) with it, as in a zone outage:
                its pods stop answering. False: only the kubelet stops (its containers keep
                running and answering until the controller takes them out of the endpoints).

        Raises:
            KeyError: no such node.
        """
        node = self.node(name)
        if node.ready == ready:
            return
        t = self.t
        node.ready = ready
        if not ready:
            node.reachable = not network
            node.down_since = t
            node.frozen_heartbeat = node.heartbeat(t)
            # nodelifecycle.monitorNodeHealth: Unknown at the first monitor pass after the
            # grace period has passed since the last lease renewal.
            due = node.lease_renewed_before(t) + NODE_GRACE_S
            node.unknown_at = math.floor(due / NODE_MONITOR_PERIOD_S) * NODE_MONITOR_PERIOD_S + NODE_MONITOR_PERIOD_S
            self._bump()
            return
        restarted = not network and node.reachable
        node.reachable = True
        node.down_since = node.unknown_at = node.frozen_heartbeat = None
        if restarted:
            node.kubelet_started_t = t
            self.event("Node", name, "Normal", "Starting", "Starting kubelet.", "kubelet")
        if node.condition == "Unknown":
            node.condition = "True"
            node.transition_t = node.heartbeat_origin = t
            had_noexecute = any(e == "NoExecute" for _, e, _ in node.taints)
            node.taints = []
            self._sync_node_series(node)
            for pod in sorted(self.pods.values(), key=lambda p: p.name):
                if pod.node != name:
                    continue
                if had_noexecute and not pod.terminating:
                    self.event("Pod", pod.name, "Normal", "TaintManagerEviction",
                               f"Cancelling deletion of Pod {self.ns}/{pod.name}", TAINT_EVICTION_SOURCE)
                pod.marked_not_ready = False
            self.event("Node", name, "Normal", "NodeReady", f"Node {name} status is now: NodeReady", "kubelet")
        else:
            node.heartbeat_origin = t if restarted else node.heartbeat_origin
        # The kubelet resumes: it finishes deletions the API server asked for meanwhile and
        # re-probes its running containers.
        for pod in sorted(self.pods.values(), key=lambda p: p.name):
            if pod.node != name:
                continue
            if pod.terminating:
                self.event("Pod", pod.name, "Normal", "Killing", f"Stopping container {pod.container.name}")
                self.on_log(pod, "stop", {"reason": "evicted"})
                self._push(t + (TERMINATION_S if pod.running else 0.0), pod, "remove")
            elif pod.running and pod.template.readiness_probe is not None:
                self._schedule_probe(pod, "r", t)
                lp = pod.template.liveness_probe
                if lp is not None:
                    self._schedule_probe(pod, "l", t + lp.period_s)
            elif pod.running:
                self._set_ready(pod, True)
                self._sync_pod_series(pod)
        self._bump()

    def _evict_tainted(self, t: float) -> None:
        """The taint eviction controller for administrators' ``NoExecute`` taints: a pod goes
        at once, or -- for the unreachable and not-ready keys, which every pod tolerates for
        :data:`EVICTION_S` -- that long after the taint (or the pod's binding, if later)."""
        for node in self.nodes:
            noexec = [(k, at) for k, _, e, at in node.admin_taints if e == "NoExecute"]
            if not noexec:
                continue
            for pod in sorted(self.pods.values(), key=lambda p: p.name):
                if pod.node != node.name or pod.terminating:
                    continue
                bound = pod.scheduled_t if pod.scheduled_t is not None else t
                due = min(max(at, bound) + (EVICTION_S if k in TOLERATED_KEYS else 0.0) for k, at in noexec)
                if t + 1e-9 >= due:
                    self.event("Pod", pod.name, "Normal", "TaintManagerEviction",
                               f"Marking for deletion Pod {self.ns}/{pod.name}", TAINT_EVICTION_SOURCE)
                    pod.disruption_t = t
                    self._start_termination(pod, "evicted")

    def _node_lifecycle(self, t: float) -> None:
        """The node lifecycle and taint eviction controllers (module docstring)."""
        self._evict_tainted(t)
        for node in self.nodes:
            if node.ready or node.unknown_at is None:
                continue
            if node.condition == "True" and t >= node.unknown_at:
                at = node.unknown_at
                node.condition = "Unknown"
                node.transition_t = at
                node.taints = [(UNREACHABLE_TAINT, "NoSchedule", at), (UNREACHABLE_TAINT, "NoExecute", at)]
                self._sync_node_series(node)
                self.event("Node", node.name, "Normal", "NodeNotReady",
                           f"Node {node.name} status is now: NodeNotReady", "node-controller")
                for pod in sorted(self.pods.values(), key=lambda p: p.name):
                    if pod.node == node.name and not pod.marked_not_ready:
                        # controller_utils.MarkPodsNotReady: only the pod's Ready condition.
                        pod.marked_not_ready = True
                        self.event("Pod", pod.name, "Warning", "NodeNotReady", "Node is not ready",
                                   "node-controller")
                        if pod.ready:
                            pod.ready = False
                            pod.ready_t = None
                            self._dirty.add(pod.service)
                        self._sync_pod_series(pod)
                self._bump()
            if node.condition == "Unknown" and t >= node.unknown_at + EVICTION_S:
                for pod in sorted(self.pods.values(), key=lambda p: p.name):
                    if pod.node == node.name and not pod.terminating:
                        self.event("Pod", pod.name, "Normal", "TaintManagerEviction",
                                   f"Marking for deletion Pod {self.ns}/{pod.name}", TAINT_EVICTION_SOURCE)
                        pod.disruption_t = t
                        self._start_termination(pod, "evicted")

    # ----------------------------------------------------------------- kube-state-metrics

    def _init_workload_series(self, wl: Workload) -> None:
        if wl.kind == "Deployment":
            base = {"deployment": wl.name}
            p = "kube_deployment_"
            s = wl.series
            s["spec"] = self._ksm(p + "spec_replicas", base, wl.replicas)
            s["gen"] = self._ksm(p + "metadata_generation", base, wl.generation)
            s["obs"] = self._ksm(p + "status_observed_generation", base, wl.observed_generation)
            s["replicas"] = self._ksm(p + "status_replicas", base, 0)
            s["available"] = self._ksm(p + "status_replicas_available", base, 0)
            s["unavailable"] = self._ksm(p + "status_replicas_unavailable", base, 0)
            s["updated"] = self._ksm(p + "status_replicas_updated", base, 0)
            s["ready"] = self._ksm(p + "status_replicas_ready", base, 0)
            s["surge"] = self._ksm(p + "spec_strategy_rollingupdate_max_surge", base, 1)
            s["unavail"] = self._ksm(p + "spec_strategy_rollingupdate_max_unavailable", base, 0)
            for cond in ("Available", "Progressing"):
                for status in ("true", "false", "unknown"):
                    s[f"cond:{cond}:{status}"] = -1
        else:
            base = {"statefulset": wl.name}
            p = "kube_statefulset_"
            s = wl.series
            s["spec"] = self._ksm(p + "replicas", base, wl.replicas)
            s["gen"] = self._ksm(p + "metadata_generation", base, wl.generation)
            s["obs"] = self._ksm(p + "status_observed_generation", base, wl.observed_generation)
            s["replicas"] = self._ksm(p + "status_replicas", base, 0)
            s["available"] = self._ksm(p + "status_replicas_available", base, 0)
            s["updated"] = self._ksm(p + "status_replicas_updated", base, 0)
            s["ready"] = self._ksm(p + "status_replicas_ready", base, 0)
            s["current"] = self._ksm(p + "status_replicas_current", base, 0)

    def _sync_workload_series(self, wl: Workload) -> None:
        s, reg = wl.series, self.registry
        reg.set(s["spec"], wl.replicas)
        reg.set(s["gen"], wl.generation)
        reg.set(s["obs"], wl.observed_generation)
        reg.set(s["replicas"], wl.status_replicas)
        reg.set(s["available"], wl.status_available)
        reg.set(s["updated"], wl.status_updated)
        reg.set(s["ready"], wl.status_ready)
        if wl.kind == "StatefulSet":
            reg.set(s["current"], wl.status_replicas)
            return
        reg.set(s["unavailable"], wl.status_unavailable)
        reg.set(s["surge"], resolve_int_or_percent(wl.max_surge, wl.replicas, True))
        reg.set(s["unavail"], resolve_int_or_percent(wl.max_unavailable, wl.replicas, False))
        for cond in wl.conditions.values():
            for status in ("true", "false", "unknown"):
                key = f"cond:{cond.type}:{status}"
                value = 1.0 if cond.status.lower() == status else 0.0
                labels = {"deployment": wl.name, "condition": cond.type, "status": status, "reason": cond.reason}
                old = s.get(key, -1)
                if old >= 0 and self.registry.info[old].label("reason") != cond.reason:
                    self.registry.kill([old])
                    old = -1
                if old < 0:
                    s[key] = self._ksm("kube_deployment_status_condition", labels, value)
                else:
                    reg.set(old, value)

    def _init_rs_series(self, wl: Workload, rs: ReplicaSet) -> None:
        base = {"replicaset": rs.name}
        rs.series["spec"] = self._ksm("kube_replicaset_spec_replicas", base, rs.replicas)
        rs.series["ready"] = self._ksm("kube_replicaset_status_ready_replicas", base, 0)
        rs.series["owner"] = self._ksm(
            "kube_replicaset_owner", {**base, "owner_kind": "Deployment", "owner_name": wl.name,
                                      "owner_is_controller": "true"}, 1)

    def _init_pod_series(self, pod: Pod) -> None:
        base = {"pod": pod.name, "uid": pod.uid}
        cbase = {**base, "container": pod.container.name}
        s = pod.series
        s["owner"] = self._ksm("kube_pod_owner", {**base, "owner_kind": pod.owner_kind, "owner_name": pod.owner_name,
                                                  "owner_is_controller": "true"}, 1)
        s["created"] = self._ksm("kube_pod_created", base, unix_time(pod.created_t))
        for phase in ("Pending", "Running", "Succeeded", "Failed", "Unknown"):
            s[f"phase:{phase}"] = self._ksm("kube_pod_status_phase", {**base, "phase": phase}, 0)
        for cond in ("true", "false", "unknown"):
            s[f"ready:{cond}"] = self._ksm("kube_pod_status_ready", {**base, "condition": cond}, 0)
        for cond in ("true", "false"):
            s[f"scheduled:{cond}"] = self._ksm("kube_pod_status_scheduled", {**base, "condition": cond}, 0)
        s["restarts"] = self._ksm("kube_pod_container_status_restarts_total", cbase, 0)
        s["waiting"] = self._ksm("kube_pod_container_status_waiting", cbase, 1)
        s["running"] = self._ksm("kube_pod_container_status_running", cbase, 0)
        s["terminated"] = self._ksm("kube_pod_container_status_terminated", cbase, 0)
        s["cready"] = self._ksm("kube_pod_container_status_ready", cbase, 0)
        res = pod.template.resources
        for kind, rl in (("requests", res.requests), ("limits", res.limits)):
            if rl.cpu is not None:
                s[f"{kind}:cpu"] = self._ksm(f"kube_pod_container_resource_{kind}",
                                             {**cbase, "node": "", "resource": "cpu", "unit": "core"},
                                             rl.cpu_cores() or 0.0)
            if rl.memory is not None:
                s[f"{kind}:memory"] = self._ksm(f"kube_pod_container_resource_{kind}",
                                                {**cbase, "node": "", "resource": "memory", "unit": "byte"},
                                                rl.memory_bytes() or 0.0)
        self._sync_pod_series(pod)

    def _set_last_terminated(self, pod: Pod, reason: str) -> None:
        s = pod.series
        old = s.get("lastterm")
        if old is not None:
            if self.registry.info[old].label("reason") == reason:
                return
            self.registry.kill([old])
        s["lastterm"] = self._ksm("kube_pod_container_status_last_terminated_reason",
                                  {"pod": pod.name, "uid": pod.uid, "container": pod.container.name,
                                   "reason": reason}, 1)

    def _sync_pod_series(self, pod: Pod) -> None:
        s, reg = pod.series, self.registry
        phase = pod.phase
        for p in ("Pending", "Running", "Succeeded", "Failed", "Unknown"):
            reg.set(s[f"phase:{p}"], 1.0 if p == phase else 0.0)
        ready_cond = "true" if pod.ready else "false"
        for cond in ("true", "false", "unknown"):
            reg.set(s[f"ready:{cond}"], 1.0 if cond == ready_cond else 0.0)
        reg.set(s["scheduled:true"], 1.0 if pod.node else 0.0)
        reg.set(s["scheduled:false"], 0.0 if pod.node else 1.0)
        c = pod.container
        reg.set(s["waiting"], 1.0 if c.state == "waiting" else 0.0)
        reg.set(s["running"], 1.0 if c.state == "running" else 0.0)
        reg.set(s["terminated"], 1.0 if c.state == "terminated" else 0.0)
        reg.set(s["cready"], 1.0 if c.ready else 0.0)
        # Series that exist only while a reason is set (kube-state-metrics v2 semantics).
        self._reason_series(pod, "waitreason", "kube_pod_container_status_waiting_reason",
                            c.reason if c.state == "waiting" and pod.node else None)
        self._reason_series(pod, "termreason", "kube_pod_container_status_terminated_reason",
                            c.reason if c.state == "terminated" else None)
        if "info" not in s and pod.node:
            s["info"] = self._ksm("kube_pod_info", {
                "pod": pod.name, "uid": pod.uid, "node": pod.node, "pod_ip": pod.ip, "host_ip": "",
                "created_by_kind": pod.owner_kind, "created_by_name": pod.owner_name,
                "priority_class": "", "host_network": "false"}, 1)
        if "start" not in s and pod.scheduled_t is not None:
            s["start"] = self._ksm("kube_pod_start_time", {"pod": pod.name, "uid": pod.uid},
                                   unix_time(pod.scheduled_t))
        self._reason_series(pod, "statusreason", "kube_pod_status_reason",
                            pod.status_reason if pod.status_reason else None, container=False)
        if pod.deletion_t is not None and "deletion" not in s:
            s["deletion"] = self._ksm("kube_pod_deletion_timestamp", {"pod": pod.name, "uid": pod.uid},
                                      unix_time(pod.deletion_t))

    def _reason_series(self, pod: Pod, key: str, metric: str, reason: str | None, container: bool = True) -> None:
        s = pod.series
        old = s.get(key)
        if old is not None:
            if reason is not None and self.registry.info[old].label("reason") == reason:
                return
            self.registry.kill([old])
            del s[key]
        if reason:
            labels = {"pod": pod.name, "uid": pod.uid, "reason": reason}
            if container:
                labels["container"] = pod.container.name
            s[key] = self._ksm(metric, labels, 1)

    def _sync_node_series(self, node: Node) -> None:
        for cond, healthy, _, _ in NODE_CONDITIONS:
            now = healthy.lower() if node.condition == "True" else "unknown"
            for status in ("true", "false", "unknown"):
                sid = self.registry.lookup("kube_node_status_condition", {
                    **self._ksm_common, "node": node.name, "condition": cond, "status": status})
                if sid is not None:
                    self.registry.set(sid, 1.0 if now == status else 0.0)
        for _, effect in ((UNREACHABLE_TAINT, "NoSchedule"), (UNREACHABLE_TAINT, "NoExecute")):
            labels = {**self._ksm_common, "node": node.name, "key": UNREACHABLE_TAINT, "value": "", "effect": effect}
            sid = self.registry.lookup("kube_node_spec_taint", labels)
            tainted = any(k == UNREACHABLE_TAINT and e == effect for k, e, _ in node.taints)
            if tainted and sid is None:
                self.registry.add("kube_node_spec_taint", labels, 1)
            elif not tainted and sid is not None:
                self.registry.kill([sid])

    # ----------------------------------------------------------------- views

    def k8s_pod(self, pod: Pod) -> dict[str, Any]:
        wl = self.workloads[pod.service]
        out = pod.to_k8s(wl.labels())
        node = self.node(pod.node) if pod.node else None
        if node is not None:
            out["status"]["hostIP"] = node.internal_ip
        admitted_pod_fields(out, pod)
        return out

    def rs_k8s(self, wl: Workload, rs: ReplicaSet) -> dict[str, Any]:
        pods = rs.active_pods()
        return {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": rs.name,
                "namespace": self.ns,
                "uid": rs.uid,
                "labels": {**wl.labels(), "pod-template-hash": rs.template_hash},
                "annotations": {"deployment.kubernetes.io/revision": str(rs.revision),
                                **({"kubernetes.io/change-cause": rs.template.change_cause}
                                   if rs.template.change_cause else {})},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": wl.name, "uid": wl.uid,
                                     "controller": True, "blockOwnerDeletion": True}],
                "creationTimestamp": timestamp(rs.created_t),
            },
            # Every revision's full pod template and selector, as the deployment controller
            # writes them: `kubectl rollout undo` patches the Deployment back to this template.
            "spec": {"replicas": rs.replicas,
                     "selector": {"matchLabels": {**wl.labels(), "pod-template-hash": rs.template_hash}},
                     "template": {"metadata": template_metadata({**wl.labels(), "pod-template-hash": rs.template_hash},
                                                                rs.template),
                                  "spec": {"containers": [container_spec(wl.container, rs.template, wl.port)]}}},
            "status": {
                "replicas": len(pods),
                "readyReplicas": sum(1 for p in pods if p.ready),
                "availableReplicas": sum(1 for p in pods if p.ready),
            },
        }

    def template_id(self, svc: str, template: PodTemplate) -> str:
        return f"{svc}-{encode_hash(repr(template))}"
