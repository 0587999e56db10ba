"""Kubernetes objects as an API server serves them, and the lookups kubectl does on them.

* :func:`served` -- an object as a real API server would return it: ``null`` fields
  omitted and the defaults kubectl's printers read filled in (probe thresholds and scheme,
  port protocols, ``podIPs``/``hostIPs``, Service ``clusterIPs``/IP families/session
  affinity, Deployment strategy). Sources: ``pkg/apis/core/v1/defaults.go``,
  ``pkg/apis/apps/v1/defaults.go``, ``pkg/apis/core/v1/conversion.go`` (``podIP`` <->
  ``podIPs``). Idempotent on objects read from a real cluster.
* :func:`link` -- fills the references the simulator's objects lack and a real cluster's
  carry (owner and involved-object UIDs, a ReplicaSet's selector and full pod template,
  node events outside the app namespace); see its docstring for each.
* label and field selectors (``k8s.io/apimachinery/pkg/labels``, ``.../fields``), with
  kubectl's string forms (``FormatLabels``, ``FormatLabelSelector``).
* :func:`endpoint_slices` -- the EndpointSlices the endpointslice controller would write for
  a Service, from its pods.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]

# ----------------------------------------------------------------- kinds and resources


@dataclass(frozen=True)
class Resource:
    """One API resource: where it lives and how kubectl names it."""

    kind: str
    plural: str
    group: str
    version: str
    namespaced: bool
    short_names: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()


RESOURCES: tuple[Resource, ...] = (
    Resource("Pod", "pods", "", "v1", True, ("po",)),
    Resource("Service", "services", "", "v1", True, ("svc",)),
    Resource("Event", "events", "", "v1", True, ("ev",)),
    Resource("Node", "nodes", "", "v1", False, ("no",)),
    Resource("Namespace", "namespaces", "", "v1", False, ("ns",)),
    Resource("Deployment", "deployments", "apps", "v1", True, ("deploy",)),
    Resource("ReplicaSet", "replicasets", "apps", "v1", True, ("rs",)),
    Resource("StatefulSet", "statefulsets", "apps", "v1", True, ("sts",)),
    Resource("EndpointSlice", "endpointslices", "discovery.k8s.io", "v1", True, ()),
    Resource("Endpoints", "endpoints", "", "v1", True, ("ep",)),
    Resource("ConfigMap", "configmaps", "", "v1", True, ("cm",)),
    Resource("Secret", "secrets", "", "v1", True, ()),
    Resource("Lease", "leases", "coordination.k8s.io", "v1", True, ()),
)
_BY_NAME: dict[str, Resource] = {}
for _r in RESOURCES:
    for _n in (_r.kind.lower(), _r.plural, _r.singular, *_r.short_names):
        _BY_NAME[_n] = _r
    _BY_NAME[f"{_r.plural}.{_r.group}"] = _r
    _BY_NAME[f"{_r.singular}.{_r.group}"] = _r


def resource_for(kind: str) -> Resource:
    """The resource for a kind or any name kubectl accepts for it (``pods``, ``po``, ``Pod``, ``deploy``).

    Raises:
        KeyError: with kubectl's message for an unknown resource type.
    """
    r = _BY_NAME.get(kind.lower()) or _BY_NAME.get(kind.lower().rstrip("."))
    if r is None:
        raise KeyError(f'error: the server doesn\'t have a resource type "{kind}"')
    return r


# ----------------------------------------------------------------- served form and defaults


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _default_probe(probe: Obj) -> None:
    # pkg/apis/core/v1/defaults.go SetDefaults_Probe and SetDefaults_HTTPGetAction;
    # GRPCAction.service has +default="" (zz_generated.defaults.go).
    probe.setdefault("timeoutSeconds", 1)
    probe.setdefault("periodSeconds", 10)
    probe.setdefault("successThreshold", 1)
    probe.setdefault("failureThreshold", 3)
    if "httpGet" in probe:
        probe["httpGet"].setdefault("scheme", "HTTP")
        probe["httpGet"].setdefault("path", "/")
    if "grpc" in probe:
        probe["grpc"].setdefault("service", "")


def _default_pod_spec(spec: Obj) -> None:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        for c in spec.get(key) or []:
            for port in c.get("ports") or []:
                port.setdefault("protocol", "TCP")
            for probe_key in ("livenessProbe", "readinessProbe", "startupProbe"):
                if isinstance(c.get(probe_key), dict):
                    _default_probe(c[probe_key])
            for env in c.get("env") or []:
                field_ref = (env.get("valueFrom") or {}).get("fieldRef")
                if isinstance(field_ref, dict):
                    field_ref.setdefault("apiVersion", "v1")


def served(obj: Mapping[str, Any]) -> Obj:
    """A deep copy of ``obj`` as a real API server would serve it (see module docstring)."""
    out: Obj = _drop_nulls(copy.deepcopy(dict(obj)))
    kind = out.get("kind")
    spec = out.get("spec")
    status = out.get("status")
    if kind == "Pod":
        if isinstance(spec, dict):
            _default_pod_spec(spec)
        if isinstance(status, dict):
            # ContainerStatus requires name, ready, restartCount, image and imageID (imageID is
            # "" until the image is pulled): the official client refuses a status without them.
            for key in ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"):
                for cs in status.get(key) or []:
                    if isinstance(cs, dict):
                        cs.setdefault("ready", False)
                        cs.setdefault("restartCount", 0)
                        cs.setdefault("image", "")
                        cs.setdefault("imageID", "")
            if status.get("podIP") and not status.get("podIPs"):
                status["podIPs"] = [{"ip": status["podIP"]}]
            if status.get("hostIP") and not status.get("hostIPs"):
                status["hostIPs"] = [{"ip": status["hostIP"]}]
    elif kind in ("Deployment", "ReplicaSet", "StatefulSet"):
        if isinstance(spec, dict):
            spec.setdefault("replicas", 1)
            template_spec = (spec.get("template") or {}).get("spec")
            if isinstance(template_spec, dict):
                _default_pod_spec(template_spec)
            if kind == "Deployment":
                # pkg/apis/apps/v1/defaults.go SetDefaults_Deployment
                strategy = spec.setdefault("strategy", {"type": "RollingUpdate"})
                if strategy.get("type", "RollingUpdate") == "RollingUpdate":
                    strategy.setdefault("type", "RollingUpdate")
                    rolling = strategy.setdefault("rollingUpdate", {})
                    rolling.setdefault("maxUnavailable", "25%")
                    rolling.setdefault("maxSurge", "25%")
                spec.setdefault("revisionHistoryLimit", 10)
                spec.setdefault("progressDeadlineSeconds", 600)
            if kind == "StatefulSet":
                # SetDefaults_StatefulSet (StatefulSetAutoDeletePVC is GA since 1.32)
                spec.setdefault("podManagementPolicy", "OrderedReady")
                spec.setdefault("updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
                spec.setdefault("revisionHistoryLimit", 10)
                retention = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
                retention.setdefault("whenDeleted", "Retain")
                retention.setdefault("whenScaled", "Retain")
    elif kind == "Service" and isinstance(spec, dict):
        # SetDefaults_Service
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        for port in spec.get("ports") or []:
            port.setdefault("protocol", "TCP")
            port.setdefault("targetPort", port.get("port"))
        cluster_ip = spec.get("clusterIP")
        if cluster_ip and not spec.get("clusterIPs"):
            spec["clusterIPs"] = [cluster_ip]
        if cluster_ip and cluster_ip != "None":
            spec.setdefault("ipFamilies", ["IPv6" if ":" in cluster_ip else "IPv4"])
            spec.setdefault("ipFamilyPolicy", "SingleStack")
        if spec["type"] in ("ClusterIP", "NodePort", "LoadBalancer"):
            spec.setdefault("internalTrafficPolicy", "Cluster")
    return out


# ----------------------------------------------------------------- selectors


@dataclass(frozen=True)
class Requirement:
    """One label-selector requirement (``k8s.io/apimachinery/pkg/labels.Requirement``)."""

    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!"
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        has = self.key in labels
        value = labels.get(self.key)
        if self.op in ("=", "==", "in"):
            return has and value in self.values
        if self.op in ("!=", "notin"):
            return not has or value not in self.values
        if self.op == "exists":
            return has
        return not has

    def __str__(self) -> str:
        if self.op == "exists":
            return self.key
        if self.op == "!":
            return "!" + self.key
        if self.op in ("in", "notin"):
            return f"{self.key} {self.op} ({','.join(sorted(self.values))})"
        return f"{self.key}{'=' if self.op == '==' else self.op}{self.values[0]}"


_SET_REQ = re.compile(r"^\s*([^\s!=(),]+)\s+(in|notin)\s+\(([^)]*)\)\s*")
_EQ_REQ = re.compile(r"^\s*([^\s!=(),]+)\s*(==|!=|=)\s*([^\s,]*)\s*")
_EXISTS_REQ = re.compile(r"^\s*(!?)\s*([^\s!=(),]+)\s*")


def parse_label_selector(text: str | Mapping[str, str] | None) -> list[Requirement]:
    """Parse ``app=frontend,tier in (a,b),!canary`` (or a ``{key: value}`` dict) into requirements.

    Raises:
        ValueError: malformed selector.
    """
    if text is None:
        return []
    if isinstance(text, Mapping):
        return [Requirement(k, "=", (v,)) for k, v in sorted(text.items())]
    reqs: list[Requirement] = []
    rest = text.strip()
    while rest:
        m = _SET_REQ.match(rest)
        if m:
            values = tuple(v.strip() for v in m.group(3).split(",") if v.strip())
            reqs.append(Requirement(m.group(1), m.group(2), values))
        else:
            m = _EQ_REQ.match(rest)
            if m:
                reqs.append(Requirement(m.group(1), "=" if m.group(2) == "==" else m.group(2), (m.group(3),)))
            else:
                m = _EXISTS_REQ.match(rest)
                if not m or not m.group(2):
                    raise ValueError(f"unable to parse requirement: {rest!r}")
                reqs.append(Requirement(m.group(2), "!" if m.group(1) else "exists"))
        rest = rest[m.end():]
        if rest.startswith(","):
            rest = rest[1:]
        elif rest:
            raise ValueError(f"found '{rest[0]}', expected: ',' or 'end of string'")
    return reqs


def labels_match(labels: Mapping[str, str] | None, reqs: Iterable[Requirement]) -> bool:
    """True when every requirement holds for ``labels``."""
    lab = labels or {}
    return all(r.matches(lab) for r in reqs)


def selector_requirements(selector: Mapping[str, Any] | None) -> list[Requirement] | None:
    """``metav1.LabelSelectorAsSelector``: requirements of a LabelSelector; None for "nothing" (nil)."""
    if selector is None:
        return None
    reqs = [Requirement(k, "=", (str(v),)) for k, v in (selector.get("matchLabels") or {}).items()]
    ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}
    for expr in selector.get("matchExpressions") or []:
        reqs.append(Requirement(expr["key"], ops[expr["operator"]], tuple(expr.get("values") or ())))
    return sorted(reqs, key=lambda r: r.key)


def selector_string(selector: Mapping[str, Any] | None) -> str:
    """``LabelSelectorAsSelector(s).String()``: ``app=frontend``; empty for nil or empty selectors."""
    reqs = selector_requirements(selector)
    return ",".join(str(r) for r in reqs or [])


def format_label_selector(selector: Mapping[str, Any] | None) -> str:
    """``metav1.FormatLabelSelector``: like :func:`selector_string` but ``<none>`` when empty."""
    return selector_string(selector) or "<none>"


def format_labels(labels: Mapping[str, str] | None) -> str:
    """``labels.FormatLabels``: ``a=1,b=2`` sorted by key, ``<none>`` when empty."""
    if not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def field_value(obj: Mapping[str, Any], path: str) -> str:
    """The string value of a dotted field path (``involvedObject.uid``), ``""`` when absent."""
    value: Any = obj
    for part in path.split("."):
        if not isinstance(value, Mapping):
            return ""
        value = value.get(part)
    if value is None:
        return ""
    if value is True or value is False:
        return "true" if value else "false"
    return str(value)


def parse_field_selector(text: str | None) -> list[tuple[str, str, str]]:
    """Parse ``a=b,c!=d`` into ``(path, op, value)`` terms (``fields.ParseSelector``).

    Raises:
        ValueError: a term without an operator.
    """
    terms: list[tuple[str, str, str]] = []
    for term in (text or "").split(","):
        if not term:
            continue
        for op in ("!=", "==", "="):
            if op in term:
                key, _, value = term.partition(op)
                terms.append((key.strip(), "!=" if op == "!=" else "=", value.strip()))
                break
        else:
            raise ValueError(f"invalid selector: '{text}'; can't understand '{term}'")
    return terms


def fields_match(obj: Mapping[str, Any], terms: Iterable[tuple[str, str, str]]) -> bool:
    """True when every field-selector term holds for ``obj``."""
    return all((field_value(obj, path) == value) == (op == "=") for path, op, value in terms)


# ----------------------------------------------------------------- references


def controller_of(obj: Mapping[str, Any]) -> Obj | None:
    """The ownerReference with ``controller: true`` (``metav1.GetControllerOf``), or None."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return dict(ref)
    return None


def is_controlled_by(obj: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    """``metav1.IsControlledBy``, by UID; by kind and name when either side lacks a UID."""
    ref = controller_of(obj)
    if ref is None:
        return False
    meta = owner.get("metadata") or {}
    if ref.get("uid") and meta.get("uid"):
        return bool(ref["uid"] == meta["uid"])
    return bool(ref.get("kind") == owner.get("kind") and ref.get("name") == meta.get("name"))


def link(objects: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, list[Obj]]:
    """Fill the references a real cluster's objects carry and the simulator's lack.

    Works on copies, keyed by kind. Each fill happens only where the field is missing:

    * ``metadata.ownerReferences[].uid`` from the owner of that kind and name;
    * an event's ``involvedObject.uid`` and ``apiVersion`` from the object of that kind
      and name; node events moved out of the app namespace (``involvedObject.namespace``
      removed, event in ``default``), as the node controller and kubelet record them;
    * a Deployment-owned ReplicaSet's ``spec.selector`` (the Deployment's plus
      ``pod-template-hash``, as the deployment controller writes it), and, for the
      ReplicaSet of the Deployment's current revision, the full pod template (the
      simulator renders only container names and images for ReplicaSets).

    Without these, ``kubectl describe`` finds no events for an object (it selects them by
    ``involvedObject.uid``) and no ReplicaSets for a Deployment (it matches controller UIDs).
    """
    out: dict[str, list[Obj]] = {kind: [copy.deepcopy(dict(o)) for o in objs] for kind, objs in objects.items()}
    index: dict[tuple[str, str, str], Obj] = {}
    for kind, objs in out.items():
        for o in objs:
            meta = o.get("metadata") or {}
            index[(kind, meta.get("namespace", ""), meta.get("name", ""))] = o

    def find(kind: str, namespace: str, name: str) -> Obj | None:
        return index.get((kind, namespace, name)) or index.get((kind, "", name))

    for kind, objs in out.items():
        if kind == "Event":
            continue
        for o in objs:
            meta = o.get("metadata") or {}
            for ref in meta.get("ownerReferences") or []:
                owner = find(ref.get("kind", ""), meta.get("namespace", ""), ref.get("name", ""))
                if owner is not None and not ref.get("uid") and (owner.get("metadata") or {}).get("uid"):
                    ref["uid"] = owner["metadata"]["uid"]
    for ev in out.get("Event", []):
        inv = ev.setdefault("involvedObject", {})
        target = find(inv.get("kind", ""), inv.get("namespace", ""), inv.get("name", ""))
        if target is not None:
            if not inv.get("uid") and (target.get("metadata") or {}).get("uid"):
                inv["uid"] = target["metadata"]["uid"]
            inv.setdefault("apiVersion", target.get("apiVersion", "v1"))
            if inv.get("kind") == "Node":
                inv.pop("namespace", None)
                ev.setdefault("metadata", {})["namespace"] = "default"
    for rs in out.get("ReplicaSet", []):
        ref = controller_of(rs)
        if ref is None or ref.get("kind") != "Deployment":
            continue
        meta = rs.get("metadata") or {}
        deploy = find("Deployment", meta.get("namespace", ""), ref.get("name", ""))
        if deploy is None:
            continue
        spec = rs.setdefault("spec", {})
        tmpl_hash = (meta.get("labels") or {}).get("pod-template-hash")
        d_spec = deploy.get("spec") or {}
        if "selector" not in spec and d_spec.get("selector") is not None:
            selector = copy.deepcopy(d_spec["selector"])
            if tmpl_hash:
                selector.setdefault("matchLabels", {})["pod-template-hash"] = tmpl_hash
            spec["selector"] = selector
        d_rev = ((deploy.get("metadata") or {}).get("annotations") or {}).get("deployment.kubernetes.io/revision")
        rs_rev = (meta.get("annotations") or {}).get("deployment.kubernetes.io/revision")
        template = spec.get("template") or {}
        if d_rev is not None and d_rev == rs_rev and "metadata" not in template and d_spec.get("template"):
            full = copy.deepcopy(d_spec["template"])
            if tmpl_hash:
                full.setdefault("metadata", {}).setdefault("labels", {})["pod-template-hash"] = tmpl_hash
            spec["template"] = full
    return out


# ----------------------------------------------------------------- EndpointSlices


def _pod_ready(pod: Mapping[str, Any]) -> bool:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return bool(cond.get("status") == "True")
    return False


def _target_port(port: Mapping[str, Any], pod: Mapping[str, Any]) -> int | None:
    target = port.get("targetPort", port.get("port"))
    if isinstance(target, int):
        return target
    for c in (pod.get("spec") or {}).get("containers") or []:
        for cp in c.get("ports") or []:
            if cp.get("name") == target:
                return int(cp["containerPort"])
    return None


def endpoint_slices(service: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> list[Obj]:
    """The EndpointSlice the endpointslice controller keeps for ``service`` over ``pods``.

    One IPv4 slice: an endpoint per pod that matches the selector and has an IP (sorted by
    pod name), ``ready`` when the pod is Ready and not terminating; ports from the
    Service's ports resolved against the pods. No slice for a Service without a selector.
    """
    spec = service.get("spec") or {}
    selector = spec.get("selector")
    meta = service.get("metadata") or {}
    if not selector:
        return []
    reqs = parse_label_selector(selector)
    members = sorted(
        (p for p in pods
         if (p.get("metadata") or {}).get("namespace") == meta.get("namespace")
         and labels_match((p.get("metadata") or {}).get("labels"), reqs)
         and (p.get("status") or {}).get("podIP")),
        key=lambda p: p["metadata"]["name"],
    )
    endpoints = []
    for pod in members:
        terminating = bool((pod.get("metadata") or {}).get("deletionTimestamp"))
        ready = _pod_ready(pod) and not terminating
        endpoint: Obj = {
            "addresses": [pod["status"]["podIP"]],
            "conditions": {"ready": ready, "serving": _pod_ready(pod), "terminating": terminating},
            "targetRef": {"kind": "Pod", "name": pod["metadata"]["name"],
                          "namespace": pod["metadata"].get("namespace", ""), "uid": pod["metadata"].get("uid", "")},
        }
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            endpoint["nodeName"] = node
        endpoints.append(endpoint)
    ports = []
    for port in spec.get("ports") or []:
        number = _target_port(port, members[0]) if members else None
        entry: Obj = {"name": port.get("name", ""), "protocol": port.get("protocol", "TCP")}
        if number is not None:
            entry["port"] = number
        ports.append(entry)
    name = meta.get("name", "")
    return [{
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": f"{name}-{_suffix(name)}",
            "namespace": meta.get("namespace", ""),
            "labels": {"kubernetes.io/service-name": name, "endpointslice.kubernetes.io/managed-by":
                       "endpointslice-controller.k8s.io"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": name, "uid": meta.get("uid", ""),
                                 "controller": True, "blockOwnerDeletion": True}],
            "creationTimestamp": meta.get("creationTimestamp"),
        },
        "addressType": "IPv4",
        "endpoints": endpoints,
        "ports": ports,
    }]


def _suffix(name: str) -> str:
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    h = 0
    for ch in name:
        h = (h * 131 + ord(ch)) % (27**5)
    out = []
    for _ in range(5):
        h, r = divmod(h, 27)
        out.append(alphabet[r])
    return "".join(out)
