"""Kubernetes objects of the simulated cluster, rendered as Kubernetes API JSON.

The objects carry exactly the state that ``kubectl``, kube-state-metrics and the
controllers need: nodes in two zones; Deployments (spec replicas, generation, observed
generation, conditions, revision history) and StatefulSets; ReplicaSets; pods with phase,
container state and reason, restart count and readiness; events. ``to_k8s()`` renders
each as the dict the API server would return (camelCase, RFC 3339 times), so tools can
format simulated and real clusters with the same code.
"""

from __future__ import annotations

import hashlib
import math
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from engine.apps.model import ConfigRef, Probe, Resources, probe_spec
from engine.kubectl.quantity import format_cpu, format_memory

EPOCH = datetime(2026, 1, 5, 9, 0, 0, tzinfo=UTC)
"""Wall-clock time of run time 0 in the simulated cluster (a Monday morning, UTC)."""

_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
"""The alphabet Kubernetes uses for generated name suffixes (k8s.io/apimachinery rand)."""


def timestamp(t: float) -> str:
    """RFC 3339 UTC timestamp of run time ``t`` seconds, as the API server writes it."""
    return (EPOCH + timedelta(seconds=int(t))).strftime("%Y-%m-%dT%H:%M:%SZ")


def micro_timestamp(t: float) -> str:
    """RFC 3339 UTC timestamp with microseconds (a ``MicroTime``, e.g. a Lease's renewTime)."""
    return (EPOCH + timedelta(seconds=t)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def unix_time(t: float) -> float:
    """Unix time (seconds) of run time ``t``."""
    return EPOCH.timestamp() + t


def encode_hash(data: str, length: int = 10) -> str:
    """A deterministic name fragment over the Kubernetes suffix alphabet."""
    digest = int.from_bytes(hashlib.sha256(data.encode()).digest()[:8], "big")
    out = []
    for _ in range(length):
        digest, rem = divmod(digest, len(_NAME_ALPHABET))
        out.append(_NAME_ALPHABET[rem])
    return "".join(out)


@dataclass(frozen=True)
class PodTemplate:
    """The pod template of one revision: what a rollout changes.

    ``commit`` is the source commit the image was built from (code faults live there).
    """

    image: str
    env: tuple[tuple[str, str], ...]
    resources: Resources
    readiness_probe: Probe | None
    liveness_probe: Probe | None
    commit: str
    change_cause: str = ""
    config_refs: tuple[ConfigRef, ...] = ()
    """ConfigMap and Secret references (env ``valueFrom``, ``envFrom``, volumes)."""
    restarted_at: str = ""
    """The template's ``kubectl.kubernetes.io/restartedAt`` annotation (RFC 3339), set by
    ``kubectl rollout restart``; empty when never restarted."""

    def env_dict(self) -> dict[str, str]:
        return dict(self.env)

    def template_hash(self) -> str:
        """The ``pod-template-hash`` label value (10 characters, deterministic)."""
        key: tuple[Any, ...] = (self.image, self.env, self.resources, self.readiness_probe, self.liveness_probe,
                                self.commit)
        if self.config_refs:  # templates without refs keep the hashes they always had
            key = (*key, self.config_refs)
        if self.restarted_at:  # likewise templates never restarted
            key = (*key, ("restartedAt", self.restarted_at))
        return encode_hash(repr(key))

    def replace(self, **changes: Any) -> PodTemplate:
        from dataclasses import replace

        return replace(self, **changes)


NODE_STATUS_REPORT_S = 300.0
"""Kubelet ``nodeStatusReportFrequency`` default (5 m): with node leases, a healthy kubelet
re-posts an unchanged node status (and so its conditions' ``lastHeartbeatTime``) this often
(``pkg/kubelet/apis/config/v1beta1/defaults.go``)."""
NODE_LEASE_RENEW_S = 10.0
"""Kubelet lease renewal interval: ``nodeLeaseDurationSeconds`` 40 s times the renew-interval
fraction 0.25 (``pkg/kubelet/nodelease``); the node lifecycle controller's health probe
timestamp is the last renewal."""
NODE_CREATED_T = -86400.0 * 30
"""Run time the worker nodes joined the cluster (30 days before run time 0; assumption)."""
NODE_OS_IMAGE = "Ubuntu 24.04.1 LTS"
NODE_KERNEL = "6.8.0-41-generic"
NODE_RUNTIME = "containerd://1.7.20"
NODE_KUBELET = "v1.30.4"
"""System info of the simulated workers: a kubeadm cluster (Kubernetes v1.30.4) on Ubuntu
24.04.1 hosts with their 6.8 GA kernel and containerd 1.7.20 -- an assumption for a
kubeadm-built cluster of mid-2024, not measured from one."""
NODE_CONDITIONS = (
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
)
"""A healthy kubelet's node conditions in the order it posts them (type, status, reason,
message), from ``pkg/kubelet/nodestatus/setters.go``."""
UNSCHEDULABLE_TAINT = "node.kubernetes.io/unschedulable"
"""The taint the node lifecycle controller puts on a cordoned node (TaintNodesByCondition)."""
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
"""The taint the node lifecycle controller puts on a node whose Ready condition is Unknown
(``NoSchedule`` and ``NoExecute``; ``pkg/controller/nodelifecycle``)."""


def _stable_hex(seed: str, n: int = 32) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:n]


@dataclass
class Node:
    """A worker node in one zone, as its kubelet and the node lifecycle controller report it.

    ``ready`` is whether the kubelet posts status and renews its lease; ``reachable`` whether
    the node's network carries traffic (a zone outage takes both away; a stopped kubelet only
    the first: its containers keep running and answering). ``condition`` is the Ready
    condition the node lifecycle controller shows: ``True``, or ``Unknown`` once it has heard
    nothing for the grace period.
    """

    name: str
    zone: str
    cpu: float
    memory: float
    uid: str
    index: int = 0
    ready: bool = True
    reachable: bool = True
    condition: str = "True"
    """Ready condition as the node controller reports it: True, False or Unknown."""
    down_since: float | None = None
    unknown_at: float | None = None
    """Run time the node lifecycle controller will mark (or marked) the node Unknown."""
    frozen_heartbeat: float | None = None
    """The last status post before the kubelet stopped reporting (None while it reports)."""
    heartbeat_origin: float = NODE_CREATED_T + 20.0
    """Run time of a status post; the kubelet re-posts every :data:`NODE_STATUS_REPORT_S`."""
    transition_t: float = NODE_CREATED_T + 20.0
    """lastTransitionTime of the conditions (they all change together here)."""
    taints: list[tuple[str, str, float]] = field(default_factory=list)
    """(key, effect, time added) of the node controller's taints."""
    kubelet_started_t: float = NODE_CREATED_T
    images: set[str] = field(default_factory=set)
    unschedulable: bool = False
    """``spec.unschedulable`` (``kubectl cordon``)."""
    cordoned_t: float = 0.0
    """Run time of the cordon (the ``node.kubernetes.io/unschedulable`` taint's time)."""
    admin_taints: list[tuple[str, str, str, float]] = field(default_factory=list)
    """(key, value, effect, time added) of the taints an administrator set (``kubectl taint``)."""

    @property
    def internal_ip(self) -> str:
        return f"10.128.0.{self.index + 10}"

    def lease_renewed_before(self, t: float) -> float:
        """The last lease renewal at or before run time ``t`` (renewals every 10 s, phase per node)."""
        phase = float((self.index * 3) % int(NODE_LEASE_RENEW_S))
        return phase + math.floor((t - phase) / NODE_LEASE_RENEW_S) * NODE_LEASE_RENEW_S

    def heartbeat(self, now: float) -> float:
        """``lastHeartbeatTime`` of the conditions at run time ``now``."""
        if self.frozen_heartbeat is not None:
            return self.frozen_heartbeat
        o = self.heartbeat_origin
        return o + math.floor((now - o) / NODE_STATUS_REPORT_S) * NODE_STATUS_REPORT_S

    def to_k8s(self, now: float = 0.0) -> dict[str, Any]:
        """The Node as the API server serves it at run time ``now``."""
        hb, tr = timestamp(self.heartbeat(now)), timestamp(self.transition_t)
        conditions = []
        for type_, status, reason, message in NODE_CONDITIONS:
            if self.condition == "Unknown":
                status, reason, message = "Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status."
            conditions.append({"type": type_, "status": status, "lastHeartbeatTime": hb, "lastTransitionTime": tr,
                               "reason": reason, "message": message})
        spec: dict[str, Any] = {}
        taints: list[dict[str, Any]] = [{"key": k, "effect": e, "timeAdded": timestamp(t)} for k, e, t in self.taints]
        for k, v, e, t in self.admin_taints:
            taint: dict[str, Any] = {"key": k, "effect": e}
            if v:
                taint["value"] = v
            if e == "NoExecute":  # the API server stamps timeAdded on NoExecute taints only
                taint["timeAdded"] = timestamp(t)
            taints.append(taint)
        if self.unschedulable:
            spec["unschedulable"] = True
            taints.append({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule", "timeAdded": timestamp(self.cordoned_t)})
        if taints:
            spec["taints"] = taints
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": self.name,
                "uid": self.uid,
                "labels": {
                    "beta.kubernetes.io/arch": "amd64",
                    "beta.kubernetes.io/os": "linux",
                    "kubernetes.io/arch": "amd64",
                    "kubernetes.io/hostname": self.name,
                    "kubernetes.io/os": "linux",
                    "node-role.kubernetes.io/worker": "",
                    "topology.kubernetes.io/zone": self.zone,
                },
                "annotations": {
                    "kubeadm.alpha.kubernetes.io/cri-socket": "unix:///var/run/containerd/containerd.sock",
                    "node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                },
                "creationTimestamp": timestamp(NODE_CREATED_T),
            },
            "spec": spec,
            "status": {
                "capacity": {"cpu": format_cpu(self.cpu), "memory": format_memory(self.memory), "pods": "110"},
                "allocatable": {"cpu": format_cpu(self.cpu), "memory": format_memory(self.memory), "pods": "110"},
                "conditions": conditions,
                "addresses": [{"type": "InternalIP", "address": self.internal_ip},
                              {"type": "Hostname", "address": self.name}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "nodeInfo": {
                    "machineID": _stable_hex(f"{self.uid}/machine-id"),
                    "systemUUID": str(uuid.UUID(_stable_hex(f"{self.uid}/system-uuid"))),
                    "bootID": str(uuid.UUID(_stable_hex(f"{self.uid}/boot-id"))),
                    "kernelVersion": NODE_KERNEL,
                    "osImage": NODE_OS_IMAGE,
                    "containerRuntimeVersion": NODE_RUNTIME,
                    "kubeletVersion": NODE_KUBELET,
                    "kubeProxyVersion": NODE_KUBELET,
                    "operatingSystem": "linux",
                    "architecture": "amd64",
                },
            },
        }

    def lease_k8s(self, now: float) -> dict[str, Any]:
        """The node's Lease in ``kube-node-lease`` at run time ``now`` (renewTime: the last renewal)."""
        renew = self.lease_renewed_before(self.down_since if self.down_since is not None else now)
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": "kube-node-lease",
                         "creationTimestamp": timestamp(NODE_CREATED_T)},
            "spec": {"holderIdentity": self.name, "leaseDurationSeconds": 40,
                     "renewTime": micro_timestamp(renew)},
        }


@dataclass
class ContainerStatus:
    """State of the single application container of a pod."""

    name: str
    image: str
    state: str = "waiting"
    """waiting, running or terminated."""
    reason: str = "ContainerCreating"
    message: str = ""
    exit_code: int = 0
    started_t: float | None = None
    finished_t: float | None = None
    restart_count: int = 0
    ready: bool = False
    last_state: dict[str, Any] | None = None

    def to_k8s(self) -> dict[str, Any]:
        state: dict[str, Any]
        if self.state == "running":
            state = {"running": {"startedAt": timestamp(self.started_t or 0.0)}}
        elif self.state == "terminated":
            state = {
                "terminated": {
                    "exitCode": self.exit_code,
                    "reason": self.reason,
                    "startedAt": timestamp(self.started_t or 0.0),
                    "finishedAt": timestamp(self.finished_t or 0.0),
                }
            }
        else:
            state = {"waiting": {"reason": self.reason, **({"message": self.message} if self.message else {})}}
        out: dict[str, Any] = {
            "name": self.name,
            "image": self.image,
            "ready": self.ready,
            "restartCount": self.restart_count,
            "started": self.state == "running",
            "state": state,
        }
        if self.last_state is not None:
            out["lastState"] = {"terminated": self.last_state}
        return out


@dataclass
class Pod:
    """A pod of one workload (single application container)."""

    name: str
    uid: str
    namespace: str
    service: str
    owner_kind: str
    owner_name: str
    template: PodTemplate
    template_hash: str
    revision: int
    created_t: float
    container: ContainerStatus
    ip: str
    node: str | None = None
    zone: str | None = None
    phase: str = "Pending"
    scheduled_t: float | None = None
    ready: bool = False
    ready_t: float | None = None
    serving_since: float | None = None
    """Run time the application starts answering (container start + start-up time)."""
    deletion_t: float | None = None
    status_reason: str | None = None
    marked_not_ready: bool = False
    """The node lifecycle controller set the pod's Ready condition to False (its node went
    Unknown); the container statuses, which only the kubelet writes, still say ready."""
    disruption_t: float | None = None
    """When the taint eviction controller added ``DisruptionTarget`` before deleting the pod."""
    backoff_s: float = 0.0
    backoff_until: float = 0.0
    next_action_t: float = 0.0
    next_action: str = "schedule"
    probe_failures: int = 0
    liveness_failures: int = 0
    next_probe_t: float | None = None
    next_liveness_t: float | None = None
    slot: int = -1
    series: dict[str, int] = field(default_factory=dict)
    unschedulable: str = ""
    """The scheduler's last FitError message while the pod cannot be placed ("" otherwise)."""
    retry_s: float = 0.0
    """Back-off of scheduling and config retries, seconds (apart from the crash back-off)."""

    @property
    def terminating(self) -> bool:
        return self.deletion_t is not None

    @property
    def running(self) -> bool:
        return self.container.state == "running"

    def serving(self, t: float) -> bool:
        """True when the application in the container answers requests at run time ``t``."""
        return self.running and self.serving_since is not None and t >= self.serving_since

    def status_text(self) -> str:
        """The STATUS column of ``kubectl get pods``."""
        if self.terminating:
            return "Terminating"
        if self.status_reason:
            return self.status_reason
        if self.node is None:
            return self.phase  # not scheduled: no container status yet (kubectl prints Pending)
        c = self.container
        if c.state == "waiting":
            return c.reason
        if c.state == "terminated":
            return c.reason
        return self.phase

    def to_k8s(self, labels: dict[str, str]) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "name": self.name,
            "namespace": self.namespace,
            "uid": self.uid,
            "labels": {**labels, "pod-template-hash": self.template_hash}
            if self.owner_kind == "ReplicaSet"
            else {**labels, "controller-revision-hash": f"{self.owner_name}-{self.template_hash}"},
            "creationTimestamp": timestamp(self.created_t),
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": self.owner_kind,
                    "name": self.owner_name,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        }
        if self.deletion_t is not None:
            meta["deletionTimestamp"] = timestamp(self.deletion_t)
            meta["deletionGracePeriodSeconds"] = 30
        container = container_spec(self.container.name, self.template)
        ready = "True" if self.ready else "False"
        scheduled: dict[str, Any] = {"type": "PodScheduled", "status": "True" if self.node else "False"}
        if self.node is None and self.unschedulable:
            scheduled.update(reason="Unschedulable", message=self.unschedulable)
        containers_ready = "True" if self.container.ready else "False"
        conditions = [
            scheduled,
            {"type": "Initialized", "status": "True" if self.node else "False"},
            {"type": "ContainersReady", "status": containers_ready},
            {"type": "Ready", "status": ready},
        ] if self.node or not self.unschedulable else [scheduled]  # an unschedulable pod has only PodScheduled
        if self.disruption_t is not None:
            # tainteviction.addConditionAndDeletePod
            conditions.insert(0, {"type": "DisruptionTarget", "status": "True",
                                  "lastTransitionTime": timestamp(self.disruption_t),
                                  "reason": "DeletionByTaintManager",
                                  "message": "Taint manager: deleting due to NoExecute taint"})
        status: dict[str, Any] = {
            "phase": self.phase,
            "conditions": conditions,
            "podIP": self.ip if self.node else None,
            "hostIP": None,
            "startTime": timestamp(self.scheduled_t) if self.scheduled_t is not None else None,
            "containerStatuses": [self.container.to_k8s()] if self.node else None,
            "qosClass": qos_class(self.template.resources),
        }
        if self.status_reason:
            status["reason"] = self.status_reason
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": {
                "nodeName": self.node,
                "containers": [container],
                "restartPolicy": "Always",
                "terminationGracePeriodSeconds": 30,
                "tolerations": [dict(t) for t in DEFAULT_TOLERATIONS],
                "volumes": volume_specs(self.template) or None,
            },
            "status": status,
        }


DEFAULT_TOLERATIONS: list[dict[str, Any]] = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
]
"""What the DefaultTolerationSeconds admission plugin adds to every pod that has no
toleration of its own for these taints (``plugin/pkg/admission/defaulttolerationseconds``:
``--default-not-ready-toleration-seconds`` and ``--default-unreachable-toleration-seconds``,
both 300)."""


def qos_class(resources: Resources) -> str:
    """The pod QoS class Kubernetes derives from requests and limits."""
    req, lim = resources.requests, resources.limits
    if lim.cpu and lim.memory and (req.cpu in (None, lim.cpu)) and (req.memory in (None, lim.memory)):
        return "Guaranteed"
    if req.cpu or req.memory or lim.cpu or lim.memory:
        return "Burstable"
    return "BestEffort"


def volume_specs(template: PodTemplate) -> list[dict[str, Any]]:
    """The ``configMap`` and ``secret`` volumes of a pod template (``spec.volumes``)."""
    out: list[dict[str, Any]] = []
    for ref in template.config_refs:
        if ref.volume is None:
            continue
        source: dict[str, Any] = {"name": ref.name} if ref.kind == "ConfigMap" else {"secretName": ref.name}
        if ref.key is not None:
            source["items"] = [{"key": ref.key, "path": ref.key}]
        if ref.optional:
            source["optional"] = True
        out.append({"name": ref.volume, "configMap" if ref.kind == "ConfigMap" else "secret": source})
    return out


RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
"""The pod-template annotation ``kubectl rollout restart`` sets (``kubectl/pkg/polymorphichelpers``)."""


def template_metadata(labels: dict[str, str], template: PodTemplate) -> dict[str, Any]:
    """A pod template's ``metadata``: the workload's labels and, after ``kubectl rollout restart``,
    its ``kubectl.kubernetes.io/restartedAt`` annotation."""
    meta: dict[str, Any] = {"labels": dict(labels)}
    if template.restarted_at:
        meta["annotations"] = {RESTARTED_AT: template.restarted_at}
    return meta


def container_spec(name: str, template: PodTemplate, port: int | None = None) -> dict[str, Any]:
    """The container of a pod template as a Kubernetes container dict."""
    res: dict[str, Any] = {}
    for kind, rl in (("requests", template.resources.requests), ("limits", template.resources.limits)):
        values = {k: v for k, v in (("cpu", rl.cpu), ("memory", rl.memory)) if v is not None}
        if values:
            res[kind] = values
    env: list[dict[str, Any]] = [{"name": k, "value": v} for k, v in template.env]
    env_from: list[dict[str, Any]] = []
    mounts: list[dict[str, Any]] = []
    for ref in template.config_refs:
        ref_key = "configMapKeyRef" if ref.kind == "ConfigMap" else "secretKeyRef"
        obj_ref = "configMapRef" if ref.kind == "ConfigMap" else "secretRef"
        opt = {"optional": True} if ref.optional else {}
        if ref.volume is not None:
            mounts.append({"name": ref.volume, "mountPath": ref.mount_path, "readOnly": True})
        elif ref.env is not None and ref.key is not None:
            env.append({"name": ref.env, "valueFrom": {ref_key: {"name": ref.name, "key": ref.key, **opt}}})
        else:
            env_from.append({obj_ref: {"name": ref.name, **opt}})
    spec: dict[str, Any] = {
        "name": name,
        "image": template.image,
        "env": env,
        "resources": res,
    }
    if env_from:
        spec["envFrom"] = env_from
    if mounts:
        spec["volumeMounts"] = mounts
    if port is not None:
        spec["ports"] = [{"containerPort": port, "protocol": "TCP"}]
    if template.readiness_probe is not None:
        spec["readinessProbe"] = probe_spec(template.readiness_probe)
    if template.liveness_probe is not None:
        spec["livenessProbe"] = probe_spec(template.liveness_probe)
    return spec


@dataclass
class ReplicaSet:
    """One revision of a Deployment."""

    name: str
    uid: str
    deployment: str
    template: PodTemplate
    template_hash: str
    revision: int
    created_t: float
    replicas: int = 0
    pods: list[Pod] = field(default_factory=list)
    series: dict[str, int] = field(default_factory=dict)

    def active_pods(self) -> list[Pod]:
        return [p for p in self.pods if not p.terminating]


@dataclass
class Condition:
    """A Deployment condition (Available, Progressing)."""

    type: str
    status: str
    reason: str
    message: str
    last_update_t: float
    last_transition_t: float


@dataclass
class Workload:
    """A Deployment or a StatefulSet (same controller state, different pod naming)."""

    kind: str
    name: str
    uid: str
    namespace: str
    service: str
    container: str
    port: int | None
    replicas: int
    template: PodTemplate
    created_t: float
    generation: int = 1
    observed_generation: int = 1
    revision: int = 1
    max_surge: str = "25%"
    max_unavailable: str = "25%"
    progress_deadline_s: float = 600.0
    revision_history_limit: int = 10
    replicasets: list[ReplicaSet] = field(default_factory=list)
    sts_pods: dict[int, Pod] = field(default_factory=dict)
    conditions: dict[str, Condition] = field(default_factory=dict)
    series: dict[str, int] = field(default_factory=dict)
    status_replicas: int = 0
    status_updated: int = 0
    status_ready: int = 0
    status_available: int = 0
    status_unavailable: int = 0

    def labels(self) -> dict[str, str]:
        return {"app": self.service}

    def current_rs(self) -> ReplicaSet | None:
        for rs in self.replicasets:
            if rs.template == self.template:
                return rs
        return None

    def all_pods(self) -> list[Pod]:
        if self.kind == "StatefulSet":
            return list(self.sts_pods.values())
        return [p for rs in self.replicasets for p in rs.pods]

    def to_k8s(self) -> dict[str, Any]:
        annotations = {"deployment.kubernetes.io/revision": str(self.revision)} if self.kind == "Deployment" else {}
        spec: dict[str, Any] = {
            "replicas": self.replicas,
            "selector": {"matchLabels": self.labels()},
            "template": {
                "metadata": template_metadata(self.labels(), self.template),
                "spec": {"containers": [container_spec(self.container, self.template, self.port)]},
            },
        }
        if self.kind == "Deployment":
            spec["strategy"] = {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": self.max_surge, "maxUnavailable": self.max_unavailable},
            }
            spec["progressDeadlineSeconds"] = int(self.progress_deadline_s)
            spec["revisionHistoryLimit"] = self.revision_history_limit
        else:
            spec["serviceName"] = self.name
            spec["updateStrategy"] = {"type": "RollingUpdate"}
        status: dict[str, Any] = {
            "observedGeneration": self.observed_generation,
            "replicas": self.status_replicas,
            "updatedReplicas": self.status_updated,
            "readyReplicas": self.status_ready,
            "availableReplicas": self.status_available,
        }
        if self.kind == "Deployment":
            status["unavailableReplicas"] = self.status_unavailable
            status["conditions"] = [
                {
                    "type": c.type,
                    "status": c.status,
                    "reason": c.reason,
                    "message": c.message,
                    "lastUpdateTime": timestamp(c.last_update_t),
                    "lastTransitionTime": timestamp(c.last_transition_t),
                }
                for c in self.conditions.values()
            ]
        return {
            "apiVersion": "apps/v1",
            "kind": self.kind,
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                "uid": self.uid,
                "generation": self.generation,
                "labels": self.labels(),
                "annotations": annotations,
                "creationTimestamp": timestamp(self.created_t),
            },
            "spec": spec,
            "status": status,
        }


@dataclass
class Event:
    """A Kubernetes event, deduplicated as the event recorder does (count, first/last time)."""

    uid: str
    type: str
    reason: str
    kind: str
    name: str
    message: str
    source: str
    first_t: float
    last_t: float
    count: int = 1

    def to_k8s(self, namespace: str) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"{self.name}.{self.uid[:16]}", "namespace": namespace, "uid": self.uid},
            "involvedObject": {"kind": self.kind, "name": self.name, "namespace": namespace},
            "type": self.type,
            "reason": self.reason,
            "message": self.message,
            "source": {"component": self.source},
            "count": self.count,
            "firstTimestamp": timestamp(self.first_t),
            "lastTimestamp": timestamp(self.last_t),
        }


WITHHELD = "(withheld)"
"""What a Secret's value reads as in every operator-visible rendering: values never leave the
simulator (it does not model them); only key names do."""


@dataclass
class ConfigObjectState:
    """A ConfigMap or Secret in the namespace: its keys, and a revision that a rotation bumps.

    Values are not modelled: in API dicts every key's value reads :data:`WITHHELD` for both
    kinds (departure from a real API server, which returns ConfigMap values and base64 Secret
    values), so nothing pretends to be real content and no Secret value can leak.

    Attributes:
        kind: ``ConfigMap`` or ``Secret``.
        keys: key names, in the manifest's order.
        revision: bumped by every change to the data (a key dropped or added, a rotation);
            it is the object's ``resourceVersion`` suffix.
        rotated_t: run time of the last value rotation (None: never rotated), seconds.
    """

    kind: str
    name: str
    namespace: str
    uid: str
    keys: list[str]
    type: str
    labels: dict[str, str]
    created_t: float
    revision: int = 1
    rotated_t: float | None = None

    def to_k8s(self) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "name": self.name,
            "namespace": self.namespace,
            "uid": self.uid,
            "resourceVersion": str(1000 + self.revision),
            "creationTimestamp": timestamp(self.created_t),
        }
        if self.labels:
            meta["labels"] = dict(self.labels)
        out: dict[str, Any] = {"apiVersion": "v1", "kind": self.kind, "metadata": meta,
                               "data": {k: WITHHELD for k in self.keys}}
        if self.kind == "Secret":
            out["type"] = self.type
        return out


@dataclass
class ServiceObject:
    """A ClusterIP Service: its selector and port, which a Service change can break.

    ``target_port`` is an int (a container port number) or a port name; the simulated
    containers declare one unnamed port, so a name never resolves (as a named targetPort
    that no container port carries does not in Kubernetes).
    """

    name: str
    namespace: str
    uid: str
    cluster_ip: str
    port: int
    target_port: int | str
    port_name: str
    selector: dict[str, str]
    created_t: float
    resource_version: int = 1

    def to_k8s(self) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": self.name, "namespace": self.namespace, "uid": self.uid,
                         "labels": {"app": self.name}, "resourceVersion": str(1000 + self.resource_version),
                         "creationTimestamp": timestamp(self.created_t)},
            "spec": {
                "type": "ClusterIP",
                "clusterIP": self.cluster_ip,
                "selector": dict(self.selector),
                "ports": [{"name": self.port_name, "port": self.port, "targetPort": self.target_port,
                           "protocol": "TCP"}],
            },
        }


@dataclass(frozen=True)
class EndpointAddress:
    """One pod behind a Service: its IP, the resolved port (None: the targetPort name does not
    resolve on the pod), node and readiness."""

    pod: str
    uid: str
    ip: str
    port: int | None
    node: str | None
    ready: bool
    terminating: bool


def endpoints_k8s(svc: ServiceObject, addrs: list[EndpointAddress]) -> dict[str, Any]:
    """The ``v1/Endpoints`` object the endpoints controller writes for ``svc``
    (``pkg/controller/endpoint/endpoints_controller.go``): one subset with the ready pods in
    ``addresses`` and the not-ready ones in ``notReadyAddresses``; terminating pods and pods on
    which the port does not resolve are left out; no subset at all when nothing is left."""
    # RepackSubsets sorts addresses by IP (as a string), then uid (pkg/api/v1/endpoints).
    usable = sorted((a for a in addrs if a.port is not None and not a.terminating), key=lambda a: (a.ip, a.uid))

    def addr(a: EndpointAddress) -> dict[str, Any]:
        out: dict[str, Any] = {"ip": a.ip, "targetRef": {"kind": "Pod", "name": a.pod, "namespace": svc.namespace,
                                                         "uid": a.uid}}
        if a.node:
            out["nodeName"] = a.node
        return out

    subsets: list[dict[str, Any]] = []
    if usable:
        subset: dict[str, Any] = {}
        ready = [addr(a) for a in usable if a.ready]
        not_ready = [addr(a) for a in usable if not a.ready]
        if ready:
            subset["addresses"] = ready
        if not_ready:
            subset["notReadyAddresses"] = not_ready
        subset["ports"] = [{"name": svc.port_name, "port": usable[0].port, "protocol": "TCP"}]
        subsets.append(subset)
    out: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": svc.name, "namespace": svc.namespace, "labels": {"app": svc.name},
                     "creationTimestamp": timestamp(svc.created_t)},
    }
    if subsets:
        out["subsets"] = subsets
    return out


def endpoint_slice_k8s(svc: ServiceObject, addrs: list[EndpointAddress]) -> dict[str, Any]:
    """The EndpointSlice the endpointslice controller keeps for ``svc``
    (``pkg/controller/endpointslice``): every selected pod with an IP, with ``ready`` (Ready
    and not terminating), ``serving`` and ``terminating`` conditions; the port is the resolved
    targetPort (``port`` absent when the name does not resolve)."""
    name = f"{svc.name}-{encode_hash(svc.name, 5)}"
    port: dict[str, Any] = {"name": svc.port_name, "protocol": "TCP"}
    resolved = [a.port for a in addrs if a.port is not None]
    if resolved:
        port["port"] = resolved[0]
    endpoints = []
    for a in addrs:
        ep: dict[str, Any] = {
            "addresses": [a.ip],
            "conditions": {"ready": a.ready and not a.terminating, "serving": a.ready, "terminating": a.terminating},
            "targetRef": {"kind": "Pod", "name": a.pod, "namespace": svc.namespace, "uid": a.uid},
        }
        if a.node:
            ep["nodeName"] = a.node
        endpoints.append(ep)
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": name,
            "namespace": svc.namespace,
            "labels": {"kubernetes.io/service-name": svc.name,
                       "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": svc.name, "uid": svc.uid,
                                 "controller": True, "blockOwnerDeletion": True}],
            "creationTimestamp": timestamp(svc.created_t),
        },
        "addressType": "IPv4",
        "endpoints": endpoints or None,
        "ports": [port],
    }
