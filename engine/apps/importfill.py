"""Fill what manifests cannot tell, so that an imported app model loads and runs as it is.

:func:`engine.apps.importer.import_manifests` reads what the manifests say; this module gives
every unknown an explicit, documented default and records it in ``imported.defaults`` (an
:class:`engine.apps.model.ImportNote` each), so that ``marathon app check`` can list the defaults
still in use. The rules (``engine/apps/FORMAT.md``, *Imported models*):

* **language** :data:`engine.apps.importer.DEFAULT_LANGUAGE` when the image, env and command name
  no runtime; **protocol** ``http`` for a service whose probes and port names do not tell;
* **resources**: a memory request of :data:`DEFAULT_MEMORY` when the manifest sets none;
  **memory_idle** :data:`MEMORY_IDLE_SHARE` of the memory limit (else request);
* **one operation per service**: ``GET /`` (HTTP), ``/<service>/Handle`` (gRPC), the engine's
  command for a store (:data:`STORE_OPERATIONS`), ``consume`` for a broker consumer that serves no
  port; its cost is the median over the shipped models' operations (:data:`APP_CPU_MS` ...);
* **calls**: the operation calls each dependency's operation once, in dependency order (a reverse
  proxy -- nginx, Envoy, or a ``*-proxy``/``*-gateway`` name -- forwards each request to one of
  its ``n`` backends: ``times`` 1/n each); calls to
  etcd, consul or zookeeper are optional (clients cache what they read); a broker's operation
  delivers to each consumer asynchronously; calls to monitoring and the load generator are not
  made (the dependency stays); a call that would close a cycle is left out (warned);
* **routes**: one per entry point (``imported.entry_points``), uniform shares, each with an SLO of
  :data:`SLO_ERROR_SHARE` errors and a p95 of ``max(SLO_MIN_P95_MS, SLO_MEDIAN_FACTOR x`` the
  route's healthy median``)``; with no entry point, the app services no other service calls;
* **load**: the manifests' load generator, else an added Locust one; ``base_rps``
  :data:`DEFAULT_BASE_RPS`, lowered until every service stays below :data:`MAX_UTILISATION`.

Errors: :class:`engine.apps.model.AppModelError` if the completed model still does not validate,
which is a defect of the importer (the message names the field).
"""

from __future__ import annotations

import math
import re
from typing import Any

from engine.apps.model import AppModel, parse_app
from engine.kubectl.quantity import parse_quantity

APP_CPU_MS = 1.2
"""CPU ms per request of an imported app operation: the median of the 232 app operations of the
three shipped models (``engine/apps/*.yaml``)."""
APP_LATENCY_MS = 7.0
"""Own latency ms of an imported app operation: the median over the same 232 operations."""
STORE_CPU_MS = 0.125
"""CPU ms per command of an imported store: the median of the shipped models' 58 store operations."""
STORE_LATENCY_MS = 1.1
"""Own latency ms of a store command: the median over the same 58 operations."""
DEFAULT_BASE_RPS = 10.0
"""Entry requests per second of an imported app (the manifests give users, not a rate)."""
MAX_UTILISATION = 0.45
"""Highest CPU utilisation any service may have at ``base_rps * (1 + swing)`` (FORMAT.md: below 0.5)."""
DEFAULT_PORT = 8080
"""Container port given to the entry service when no workload declares one."""
DEFAULT_MEMORY = "128Mi"
"""Memory request of a container whose manifest sets neither request nor limit."""
MEMORY_IDLE_SHARE = 0.4
"""Idle working set as a share of the memory limit (else request): FORMAT.md asks below 60 %."""
SLO_MIN_P95_MS = 500.0
"""Smallest p95 latency objective of an imported route, ms (a web request's few hundred ms)."""
SLO_MEDIAN_FACTOR = 4.0
"""p95 objective over the route's healthy median (FORMAT.md asks at least 3x)."""
SLO_ERROR_SHARE = 0.01
"""Error share objective of an imported route (the schema's default)."""

STORE_OPERATIONS: dict[str, str] = {
    "redis": "GET", "valkey": "GET", "memcached": "get", "mongodb": "find", "mysql": "SELECT",
    "postgresql": "SELECT", "kafka": "produce", "rabbitmq": "publish",
}  # fmt: skip
"""The one command an imported store serves, by engine."""
BROKERS = frozenset({"kafka", "rabbitmq"})

LOADGEN_IMAGE = "locustio/locust:2.20.0"
"""Image of the load generator added to an app whose manifests deploy none (Locust, as in the
Online Boutique and OpenTelemetry demos)."""


class _Notes:
    def __init__(self, imported: dict[str, Any]) -> None:
        self.defaults: list[dict[str, Any]] = imported["defaults"]
        self.guesses: list[dict[str, Any]] = imported["guesses"]
        self.warnings: list[str] = imported["warnings"]

    def default(self, service: str | None, path: str, value: Any, why: str) -> None:
        self.defaults.append({"service": service, "field": path, "value": value, "evidence": why})

    def guess(self, service: str | None, path: str, value: Any, why: str) -> None:
        self.guesses.append({"service": service, "field": path, "value": value, "evidence": why})


def _mebibytes(value: float) -> str:
    return f"{max(1, math.floor(value / 2**20))}Mi"


def _label(text: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")[:63].strip("-") or "route"


def _service_defaults(svc: dict[str, Any], notes: _Notes) -> None:
    from engine.apps.importer import DEFAULT_LANGUAGE, STARTUP_S

    name = svc["name"]
    if "language" not in svc and svc["role"] == "loadgenerator":
        svc["language"], svc["startup_s"] = "python", STARTUP_S["python"]
        notes.default(name, "language", "python", "a load generator: Locust (Python), as in the shipped demos")
    if "language" not in svc:
        svc["language"] = DEFAULT_LANGUAGE
        notes.default(name, "language", DEFAULT_LANGUAGE, "no image word, env var or command names the runtime")
        if "startup_s" not in svc:
            svc["startup_s"] = STARTUP_S[DEFAULT_LANGUAGE]
            notes.default(name, "startup_s", svc["startup_s"], f"start-up of the default language {DEFAULT_LANGUAGE}")
    if "protocol" not in svc:
        svc["protocol"] = "http"
        notes.default(name, "protocol", "http", "no probe, port name or http:// address tells the protocol")
    resources = svc.setdefault("resources", {})
    limit = resources.get("limits", {}).get("memory")
    request = resources.get("requests", {}).get("memory")
    if limit is None and request is None:
        resources.setdefault("requests", {})["memory"] = request = DEFAULT_MEMORY
        notes.default(name, "resources.requests.memory", DEFAULT_MEMORY, "the manifest sets no memory request or limit")
    basis = parse_quantity(str(limit if limit is not None else request))
    svc["memory_idle"] = _mebibytes(MEMORY_IDLE_SHARE * basis)
    notes.default(name, "memory_idle", svc["memory_idle"],
                  f"{MEMORY_IDLE_SHARE:.0%} of the memory {'limit' if limit is not None else 'request'}")


def _operation(svc: dict[str, Any], consumer: bool) -> dict[str, Any]:
    store = svc.get("store")
    if store is not None:
        return {"name": STORE_OPERATIONS[store["engine"]], "method": "POST", "cpu_ms": STORE_CPU_MS,
                "latency_ms": STORE_LATENCY_MS}
    if consumer:
        return {"name": "consume", "method": "CONSUME", "cpu_ms": APP_CPU_MS, "latency_ms": APP_LATENCY_MS}
    if svc["protocol"] == "grpc":
        return {"name": f"/{svc['name']}/Handle", "method": "POST", "cpu_ms": APP_CPU_MS, "latency_ms": APP_LATENCY_MS}
    return {"name": "GET /", "method": "GET", "cpu_ms": APP_CPU_MS, "latency_ms": APP_LATENCY_MS}


def _is_proxy(svc: dict[str, Any]) -> bool:
    """A reverse proxy or gateway: an nginx or Envoy image, or a name saying so."""
    return svc["language"] in ("nginx", "envoy") or bool(re.search(r"(?:^|-)(?:proxy|gateway|ingress)(?:-|$)",
                                                                     svc["name"]))


def _loadgen(services: list[dict[str, Any]], notes: _Notes) -> dict[str, Any]:
    names = {s["name"] for s in services}
    name = next(n for n in ("loadgenerator", "marathon-loadgenerator", "imported-loadgenerator") if n not in names)
    svc: dict[str, Any] = {
        "name": name, "role": "loadgenerator", "workload": "Deployment", "language": "python", "image": LOADGEN_IMAGE,
        "container": "main", "protocol": "http", "replicas": 1, "startup_s": 5,
        "resources": {"requests": {"cpu": "300m", "memory": "256Mi"}, "limits": {"cpu": "500m", "memory": "512Mi"}},
        "memory_idle": "96Mi", "env": {}, "dependencies": [], "operations": [],
    }  # fmt: skip
    notes.default(name, "role", "loadgenerator", "the manifests deploy no load generator: a Locust one was added "
                                                 "(resources as Online Boutique's loadgenerator)")
    services.append(svc)
    return svc


def _drop_cycles(services: list[dict[str, Any]], notes: _Notes) -> None:
    """Leave out each call that closes a cycle (depth-first, in file order), with a warning."""
    ops = {(s["name"], op["name"]): op for s in services for op in s["operations"]}
    state: dict[tuple[str, str], int] = {}
    # Iterative depth-first walk (a chain of thousands of services would overflow Python's
    # recursion): each frame is (node, index of its next call, the calls kept so far).
    for root in ops:
        if root in state:
            continue
        state[root] = 1
        stack: list[tuple[tuple[str, str], int, list[dict[str, Any]]]] = [(root, 0, [])]
        while stack:
            node, i, kept = stack.pop()
            calls = ops[node]["calls"]
            if i == len(calls):
                ops[node]["calls"] = kept
                state[node] = 2
                continue
            call = calls[i]
            nxt = (call["service"], call["operation"])
            if state.get(nxt) == 1:
                notes.warnings.append(f"{node[0]} -> {nxt[0]}: the call would close a cycle; left out "
                                      "(the dependency stays)")
                stack.append((node, i + 1, kept))
                continue
            kept.append(call)
            stack.append((node, i + 1, kept))
            if nxt not in state:
                state[nxt] = 1
                stack.append((nxt, 0, []))


def complete_model(model: dict[str, Any], imported: dict[str, Any], infrastructure: set[str]) -> None:
    """Give ``model`` (an imported app model as a dict) its operations, calls, routes and load,
    and every unknown field a default recorded in ``imported["defaults"]`` (module docstring).

    Args:
        model: ``name``, ``services`` (importer entries), ``routes`` (empty) and ``load`` (empty);
            changed in place.
        imported: the ``imported`` section being built: reads ``entry_points``, appends to
            ``defaults`` and ``warnings``.
        infrastructure: names of the etcd, consul or zookeeper services (their calls are optional).

    Raises:
        AppModelError: the completed model does not validate (a defect of the importer).
    """
    notes = _Notes(imported)
    services: list[dict[str, Any]] = model["services"]
    by_name = {s["name"]: s for s in services}
    for svc in services:
        _service_defaults(svc, notes)
    brokers = {s["name"] for s in services if (s.get("store") or {}).get("engine") in BROKERS}
    consumers = {s["name"] for s in services if s["role"] == "app" and "port" not in s
                 and any(d["service"] in brokers for d in s["dependencies"])}
    for svc in services:
        serves = svc["role"] in ("app", "store") and ("port" in svc or svc["name"] in consumers)
        if not serves:
            continue
        if svc["name"] in consumers and svc["protocol"] != "kafka":
            svc["protocol"] = "kafka"  # the schema's one portless protocol: a consumer of a broker
        op = _operation(svc, svc["name"] in consumers)
        op["calls"] = []
        svc["operations"] = [op]
        notes.default(svc["name"], "operations[0]", {k: op[k] for k in ("name", "cpu_ms", "latency_ms")},
                      "one generic operation per service; cost: the median of the shipped models' "
                      + ("store" if svc.get("store") else "app") + " operations")
    for svc in services:
        if not svc["operations"]:
            continue
        op = svc["operations"][0]
        if svc["name"] in brokers:
            for consumer in sorted(c for c in consumers if any(d["service"] == svc["name"]
                                                                 for d in by_name[c]["dependencies"])):
                op["calls"].append({"service": consumer, "operation": "consume", "async": True})
        for dep in svc["dependencies"]:
            callee = by_name[dep["service"]]
            if not callee["operations"] or callee["role"] not in ("app", "store"):
                continue
            if svc["name"] in consumers and dep["service"] in brokers:
                continue  # the broker delivers to its consumers
            call: dict[str, Any] = {"service": callee["name"], "operation": callee["operations"][0]["name"]}
            if callee["name"] in infrastructure:
                call["optional"] = True
            op["calls"].append(call)
        forwarded = [c for c in op["calls"] if not c.get("async") and not c.get("optional")]
        if _is_proxy(svc) and len(forwarded) > 1:
            for call in forwarded:
                call["times"] = round(1.0 / len(forwarded), 6)
            notes.default(svc["name"], "operations[0].calls[*].times", round(1.0 / len(forwarded), 6),
                          f"a reverse proxy forwards each request to one of its {len(forwarded)} backends")
    _drop_cycles(services, notes)
    _routes(model, imported, notes)
    _load(model, notes)


def _routes(model: dict[str, Any], imported: dict[str, Any], notes: _Notes) -> None:
    services: list[dict[str, Any]] = model["services"]
    by_name = {s["name"]: s for s in services}
    entries: dict[str, str] = {}
    for point in imported["entry_points"]:
        svc = by_name.get(point["service"])
        if svc is None or svc["role"] != "app" or not svc["operations"] or svc["protocol"] == "kafka":
            notes.warnings.append(f"entry point {point['service']} ({point['via']}) is not an app service that "
                                  "serves requests: no route")
            continue
        entries.setdefault(svc["name"], point.get("path") or "/")
    if entries:
        vias = {name: [p["via"] for p in imported["entry_points"] if p["service"] == name] for name in entries}
        notes.guess(None, "routes", sorted(entries), "entry points: " + "; ".join(
            f"{name} ({', '.join(v)})" for name, v in vias.items()))
    else:
        called = {c["service"] for s in services for op in s["operations"] for c in op["calls"]}
        roots = [s["name"] for s in services if s["role"] == "app" and s["operations"] and s["protocol"] != "kafka"
                 and s["name"] not in called]
        first = [s["name"] for s in services if s["role"] == "app" and s["operations"] and s["protocol"] != "kafka"]
        for name in roots or first[:1]:
            entries[name] = "/"
        if entries:
            notes.default(None, "routes", sorted(entries), "no LoadBalancer/NodePort Service, Ingress, HTTPRoute or "
                                                          "load-generator address: the services no other one calls")
    if not entries:
        portless = next((s for s in services if s["role"] == "app" and not s["operations"]), None)
        if portless is None:
            raise ValueError("no app service: nothing for the load generator to send requests to")
        portless["port"] = DEFAULT_PORT
        notes.default(portless["name"], "port", DEFAULT_PORT, "no workload declares a container port: the first "
                                                              "app service is given one so that it can serve")
        op = _operation(portless, False)
        op["calls"] = []
        portless["operations"] = [op]
        notes.default(portless["name"], "operations[0]", {k: op[k] for k in ("name", "cpu_ms", "latency_ms")},
                      "one generic operation per service")
        entries[portless["name"]] = "/"
    share = 1.0 / len(entries)
    routes = []
    for i, (name, path) in enumerate(entries.items()):
        op = by_name[name]["operations"][0]
        last = i == len(entries) - 1
        routes.append({
            "name": _label(name), "title": f"{name} (imported entry point)", "method": op["method"],
            "path": path if by_name[name]["protocol"] == "http" else op["name"],
            "share": round(1.0 - share * (len(entries) - 1), 12) if last else share,
            "entry": {"service": name, "operation": op["name"]},
            "slo": {"latency_p95_ms": SLO_MIN_P95_MS, "error_share": SLO_ERROR_SHARE},
        })  # fmt: skip
    notes.default(None, "routes[*].share", round(share, 6), f"uniform over the {len(entries)} entry point(s)")
    model["routes"] = routes


def profile(app: AppModel, rate: float) -> tuple[dict[str, float], dict[str, float]]:
    """(CPU utilisation per service, healthy median ms per route) at ``rate`` entry requests/s.

    The same steady-state sums as ``engine.sim.calltree.static_profile`` (which ``engine.apps``
    may not import): each operation's rate is its callers' rate times ``times``, async calls
    included; a route's median is the entry operation's own latency plus ``times`` x each
    blocking call's median. A pod's CPU is its limit, else request, else one core.
    """
    order: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()

    for route in app.routes:  # iterative post-order (callees first): chains may be thousands deep
        root = (route.entry.service, route.entry.operation)
        if root in seen:
            continue
        seen.add(root)
        stack: list[tuple[tuple[str, str], int]] = [(root, 0)]
        while stack:
            node, i = stack.pop()
            calls = app.service(node[0]).operation(node[1]).calls
            if i == len(calls):
                order.append(node)
                continue
            stack.append((node, i + 1))
            nxt = (calls[i].service, calls[i].operation)
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, 0))
    median: dict[tuple[str, str], float] = {}
    for svc, name in order:
        op = app.service(svc).operation(name)
        median[(svc, name)] = op.latency_ms + sum(c.times * median[(c.service, c.operation)]
                                                  for c in op.calls if not c.is_async)
    rps: dict[tuple[str, str], float] = dict.fromkeys(order, 0.0)
    for route in app.routes:
        rps[(route.entry.service, route.entry.operation)] += route.share * rate
    cpu: dict[str, float] = {}
    for svc, name in reversed(order):  # callers first
        op = app.service(svc).operation(name)
        cpu[svc] = cpu.get(svc, 0.0) + rps[(svc, name)] * op.cpu_ms / 1000.0
        for call in op.calls:
            rps[(call.service, call.operation)] += rps[(svc, name)] * call.times
    util = {}
    for svc, used in cpu.items():
        res = app.service(svc).resources
        cores = res.limits.cpu_cores() or res.requests.cpu_cores() or 1.0
        util[svc] = used / (cores * max(app.service(svc).replicas, 1))
    routes = {r.name: median[(r.entry.service, r.entry.operation)] for r in app.routes}
    return util, routes


def _load(model: dict[str, Any], notes: _Notes) -> None:
    services: list[dict[str, Any]] = model["services"]
    generators = [s for s in services if s["role"] == "loadgenerator"]
    gen = generators[0] if generators else _loadgen(services, notes)
    if len(generators) > 1:
        notes.warnings.append(f"several load generators ({', '.join(g['name'] for g in generators)}); "
                              f"{gen['name']} drives the routes")
    for route in model["routes"]:
        target = route["entry"]["service"]
        if all(d["service"] != target for d in gen["dependencies"]):
            gen["dependencies"].append({"service": target, "env": None})
    model["load"] = {"generator": gen["name"], "base_rps": DEFAULT_BASE_RPS}
    app = parse_app(model, f"<import of {model['name']}>")
    util, medians = profile(app, DEFAULT_BASE_RPS * (1 + app.load.swing))
    worst = max(util.values(), default=0.0)
    rate = DEFAULT_BASE_RPS
    if worst > MAX_UTILISATION:
        rate = math.floor(DEFAULT_BASE_RPS * MAX_UTILISATION / worst * 100) / 100 or 0.01
    model["load"]["base_rps"] = rate
    notes.default(None, "load.base_rps", rate, f"{DEFAULT_BASE_RPS:g} req/s" + (
        "" if rate == DEFAULT_BASE_RPS else f", lowered so that no service exceeds {MAX_UTILISATION:.0%} CPU"))
    for i, route in enumerate(model["routes"]):
        p95 = max(SLO_MIN_P95_MS, math.ceil(SLO_MEDIAN_FACTOR * medians[route["name"]] / 10) * 10)
        route["slo"]["latency_p95_ms"] = float(p95)
        notes.default(None, f"routes[{i}].slo", dict(route["slo"]),
                      f"p95 max({SLO_MIN_P95_MS:g} ms, {SLO_MEDIAN_FACTOR:g} x the healthy median "
                      f"{medians[route['name']]:.1f} ms), errors {SLO_ERROR_SHARE:.0%}")
    parse_app(model, f"<import of {model['name']}>")
