"""Application models: one YAML file per application, validated on load.

An app model describes what the embedded cluster runs: the services with their
language, image, ports, replicas, resources, probes and environment; the operations
each service serves with their cost and the calls they make downstream (the call
trees); the entry routes that the load generator drives, with their share of traffic;
and the stateful stores. The shipped models live in ``engine/apps/*.yaml`` and were
written from the real manifests and facts in ``shared/data`` (see each file's
``provenance``).

Loading raises :class:`AppModelError` whose message names the file, the field (as a
dotted path such as ``services[3].operations[0].calls[1].operation``) and what is wrong.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from engine.inputs.binding import bound
from engine.inputs.safeyaml import YamlInputError, read_yaml
from engine.kubectl.quantity import parse_quantity

APPS_PACKAGE = "engine.apps"

_DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"

Role = Literal["app", "store", "loadgenerator", "monitoring"]
"""What a workload is for. Only ``app`` and ``store`` workloads are part of the
application that operators may act on; ``loadgenerator`` and ``monitoring`` are not."""

Language = Literal[
    "go",
    "java",
    "kotlin",
    "csharp",
    "nodejs",
    "typescript",
    "python",
    "cpp",
    "ruby",
    "php",
    "rust",
    "elixir",
    "envoy",
    "nginx",
    "redis",
    "valkey",
    "mongodb",
    "mysql",
    "postgresql",
    "kafka",
    "opensearch",
    "memcached",
    "rabbitmq",
]


MAX_REPLICAS = 100
"""Most replicas a workload may ask for (the shipped apps run 1 or 2): more is a typo that
would have the simulator schedule that many pods."""
MAX_NODES_PER_ZONE = 50


class _Strict(BaseModel):
    # strict: YAML already types its scalars, so "3" is not an int nor "false" a bool.
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, strict=True, allow_inf_nan=False)


def _check_quantity(value: Any) -> str:
    text = str(value)
    parse_quantity(text)
    return text


QuantityStr = Annotated[str, Field(description="Kubernetes quantity, e.g. '100m' or '64Mi'")]


class ResourceList(_Strict):
    cpu: QuantityStr | None = None
    memory: QuantityStr | None = None

    @field_validator("cpu", "memory", mode="before")
    @classmethod
    def _quantity(cls, value: Any) -> Any:
        return None if value is None else _check_quantity(value)

    def cpu_cores(self) -> float | None:
        """CPU in cores, or None when unset."""
        return None if self.cpu is None else parse_quantity(self.cpu)

    def memory_bytes(self) -> float | None:
        """Memory in bytes, or None when unset."""
        return None if self.memory is None else parse_quantity(self.memory)


class Resources(_Strict):
    requests: ResourceList = ResourceList()
    limits: ResourceList = ResourceList()


class Probe(_Strict):
    """A Kubernetes readiness or liveness probe, with the kubelet's defaults."""

    type: Literal["http", "grpc", "tcp", "exec"]
    port: int | None = Field(default=None, ge=1, le=65535)
    path: str | None = None
    initial_delay_s: float = Field(default=0, ge=0)
    period_s: float = Field(default=10, gt=0)
    timeout_s: float = Field(default=1, gt=0)
    failure_threshold: int = Field(default=3, ge=1)


def probe_spec(probe: Probe) -> dict[str, Any]:
    """``probe`` as a container's probe in a Kubernetes object (kubelet field names; a zero
    ``initialDelaySeconds`` left out, as the API server's ``omitempty`` does): what the simulator
    serves and what the kube substrate patches."""
    handler: dict[str, Any]
    if probe.type == "http":
        handler = {"httpGet": {"path": probe.path or "/", "port": probe.port}}
    elif probe.type == "grpc":
        handler = {"grpc": {"port": probe.port}}
    elif probe.type == "tcp":
        handler = {"tcpSocket": {"port": probe.port}}
    else:
        handler = {"exec": {"command": ["/bin/sh", "-c", probe.path or "true"]}}
    out: dict[str, Any] = dict(handler)
    if int(probe.initial_delay_s):  # omitempty: the API server leaves a zero delay out
        out["initialDelaySeconds"] = int(probe.initial_delay_s)
    out.update(periodSeconds=int(probe.period_s), timeoutSeconds=int(probe.timeout_s),
               failureThreshold=probe.failure_threshold)
    return out


class Dependency(_Strict):
    """A downstream service this service connects to, and the env var holding its address."""

    service: str
    env: str | None = Field(default=None, description="env var whose value is the address, e.g. CART_SERVICE_ADDR")


class Call(_Strict):
    """One downstream call made while serving an operation."""

    service: str
    operation: str
    times: float = Field(default=1.0, gt=0, description="expected calls per invocation (may be fractional)")
    optional: bool = Field(default=False, description="the caller tolerates this call failing")
    is_async: bool = Field(
        default=False,
        alias="async",
        description="fire-and-forget (e.g. through Kafka): neither its latency nor its failure reaches the caller",
    )
    timeout_s: float | None = Field(default=None, gt=0, description="the caller's deadline for this call, seconds")


class Operation(_Strict):
    """An endpoint a service serves (an HTTP route or an RPC method)."""

    name: str = Field(description="'GET /cart' for HTTP, '/hipstershop.CartService/GetCart' for gRPC")
    method: str = "POST"
    cpu_ms: float = Field(gt=0, description="CPU time per request, milliseconds")
    latency_ms: float = Field(gt=0, description="median own processing time, excluding downstream calls, ms")
    latency_sigma: float = Field(default=0.35, gt=0, le=2, description="log-normal shape of the own latency")
    handler: str | None = Field(default=None, description="'path/in/source:function' that implements it")
    calls: tuple[Call, ...] = Field(default=(), strict=False)


class Store(_Strict):
    """A stateful store and whether its data survives a pod restart."""

    engine: Literal["redis", "valkey", "mongodb", "mysql", "postgresql", "kafka", "memcached",
                     "rabbitmq"]
    persistent: bool = Field(
        description="False when the data lives in the pod (emptyDir or memory) and a restart loses it"
    )


class ConfigRef(_Strict):
    """One reference from a service's pod template to a ConfigMap or Secret, in one of the
    three shapes a pod spec has (``k8s.io/api/core/v1`` Container and Volume):

    * ``env`` and ``key`` set: ``env[].valueFrom.configMapKeyRef`` / ``secretKeyRef`` (one key
      into one env var);
    * neither ``env``, ``key`` nor ``volume``: ``envFrom[].configMapRef`` / ``secretRef`` (every
      key as an env var);
    * ``volume`` (and ``mount_path``) set: a ``configMap`` / ``secret`` volume mounted at
      ``mount_path``; with ``key`` set, the volume projects only that key (``items``).

    ``optional`` is the ref's ``optional`` field: a missing object or key is then skipped, as
    the kubelet does.
    """

    kind: Literal["ConfigMap", "Secret"]
    name: str = Field(pattern=_DNS_LABEL)
    key: str | None = None
    env: str | None = Field(default=None, description="env var name (valueFrom)")
    volume: str | None = Field(default=None, pattern=_DNS_LABEL, description="volume name")
    mount_path: str | None = None
    optional: bool = False


class ConfigObject(_Strict):
    """A ConfigMap or Secret in the app's namespace: its name and keys (values are never
    modelled: a Secret's values must never reach an operator, and no behaviour here reads a
    ConfigMap's content). ``source`` names where in ``shared/data`` the object comes from, or
    says it is an assumption."""

    kind: Literal["ConfigMap", "Secret"]
    name: str = Field(pattern=_DNS_LABEL)
    type: str = Field(default="Opaque", description="a Secret's type (ConfigMaps have none)")
    keys: tuple[str, ...] = Field(strict=False)
    labels: dict[str, str] = Field(default_factory=dict)
    source: str = ""


class Service(_Strict):
    """One workload (Deployment or StatefulSet) with its ClusterIP Service."""

    name: str = Field(pattern=_DNS_LABEL)
    role: Role = "app"
    workload: Literal["Deployment", "StatefulSet"] = "Deployment"
    language: Language
    image: str
    container: str = Field(default="server", pattern=_DNS_LABEL)
    port: int | None = Field(default=None, ge=1, le=65535, description="container port")
    service_port: int | None = Field(default=None, ge=1, le=65535, description="ClusterIP Service port")
    protocol: Literal["http", "grpc", "tcp", "kafka"] = "grpc"
    replicas: int = Field(default=1, ge=0, le=MAX_REPLICAS)
    resources: Resources = Resources()
    readiness_probe: Probe | None = None
    liveness_probe: Probe | None = None
    env: dict[str, str] = Field(default_factory=dict)
    dependencies: tuple[Dependency, ...] = Field(default=(), strict=False)
    startup_s: float = Field(default=5.0, ge=0, le=3600, description="container start to serving, seconds")
    memory_idle: QuantityStr = Field(default="64Mi", description="working set of an idle container")
    operations: tuple[Operation, ...] = Field(default=(), strict=False)
    store: Store | None = None
    config_refs: tuple[ConfigRef, ...] = Field(default=(), strict=False,
                                               description="ConfigMap and Secret references of the pod template")

    @field_validator("memory_idle", mode="before")
    @classmethod
    def _quantity(cls, value: Any) -> Any:
        return _check_quantity(value)

    @field_validator("env", mode="before")
    @classmethod
    def _env_strings(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {str(k): str(v) for k, v in value.items()}
        return value

    def operation(self, name: str) -> Operation:
        """Return the operation called ``name``.

        Raises:
            KeyError: no such operation.
        """
        for op in self.operations:
            if op.name == name:
                return op
        raise KeyError(f"{self.name} has no operation {name!r}")

    @property
    def in_application(self) -> bool:
        """True for workloads operators may act on (role ``app`` or ``store``)."""
        return self.role in ("app", "store")


class ClusterSpec(_Strict):
    """Nodes of the simulated cluster: two zones, identical nodes."""

    zones: tuple[str, str] = Field(default=("zone-a", "zone-b"), strict=False)
    nodes_per_zone: int = Field(default=2, ge=1, le=MAX_NODES_PER_ZONE)
    node_cpu: QuantityStr = "8"
    node_memory: QuantityStr = "32Gi"


class LoadSpec(_Strict):
    """The load generator: a closed-loop pool of virtual users with think time, sized to a
    healthy request rate, with a slow diurnal-style swing (see :mod:`engine.sim.traffic`).

    ``think_time_s`` defaults to Locust's ``wait_time = between(1, 10)``, the setting of the
    Online Boutique and OpenTelemetry demo locustfiles. ``request_timeout_s`` is how long a
    user waits for an answer: Locust's ``HttpUser`` (python-requests) sets no timeout, so the
    bound is an assumption, 60 s (the default ``network_timeout`` of Locust's ``FastHttpUser``).
    """

    generator: str = Field(description="name of the load-generator workload")
    base_rps: float = Field(gt=0, description="entry requests per second of the healthy app (sizes the user pool)")
    swing: float = Field(default=0.15, ge=0, lt=1, description="relative amplitude of the slow sine swing")
    period_s: float = Field(default=3600.0, gt=0, description="period of the swing, seconds")
    think_time_s: tuple[float, float] = Field(default=(1.0, 10.0), strict=False,
                                              description="a user's wait between requests, uniform (min, max) s")
    request_timeout_s: float = Field(default=60.0, gt=0, description="a user's timeout for one request, seconds")

    @model_validator(mode="after")
    def _think_order(self) -> LoadSpec:
        lo, hi = self.think_time_s
        if not 0 <= lo <= hi:
            raise ValueError(f"think_time_s must be (min, max) with 0 <= min <= max, got {self.think_time_s}")
        return self


class EntryRef(_Strict):
    service: str
    operation: str


class RouteSLO(_Strict):
    """User-facing objective of one entry route (used by degradation scoring)."""

    latency_p95_ms: float = Field(gt=0)
    error_share: float = Field(default=0.01, gt=0, lt=1)


class Route(_Strict):
    """An entry route the load generator drives, with its share of the traffic."""

    name: str = Field(pattern=_DNS_LABEL)
    title: str
    method: str
    path: str
    share: float = Field(gt=0, le=1)
    entry: EntryRef
    slo: RouteSLO


class ImportNote(_Strict):
    """One value ``marathon app import`` chose that the manifests do not state: a *guess* (read
    from evidence such as an image name, an env var or a port) or a *default* (nothing said it).

    ``service`` names the service the value belongs to (None for app-level values such as
    ``load.base_rps`` or ``routes[0].share``); ``field`` is the dotted path inside that service
    (``language``, ``operations[0].cpu_ms``) or inside the document. ``value`` is what the importer
    wrote there, so ``marathon app check`` can tell a default still in use from one the user
    replaced. ``evidence`` says what suggested a guess, or which rule gave a default.
    """

    service: str | None = None
    field: str
    value: Any = None
    evidence: str


class ImportSection(_Strict):
    """What ``marathon app import`` found and chose (the ``imported`` key of an imported model).

    The simulator ignores it; ``marathon app check`` reads it. ``guesses`` and ``defaults`` are
    :class:`ImportNote` lists; the other lists are free-form records described in
    ``engine/apps/FORMAT.md`` (*Imported models*): ``dangling`` references to names the inputs do
    not define, ``udp`` ports the model cannot carry, ``entry_points``, ``infrastructure``
    (etcd, consul), ``evidence`` (every edge with the env var, argument or ConfigMap key that
    shows it), ``telemetry``, ``kubernetes_services``, ``extra_containers``, ``compose_only``,
    ``compose_edges_to_compose_only`` and ``warnings`` (strings).
    """

    tool: str = "marathon app import"
    sources: tuple[str, ...] = Field(default=(), strict=False)
    guesses: tuple[ImportNote, ...] = Field(default=(), strict=False)
    defaults: tuple[ImportNote, ...] = Field(default=(), strict=False)
    entry_points: tuple[dict[str, Any], ...] = Field(default=(), strict=False)
    dangling: tuple[dict[str, Any], ...] = Field(default=(), strict=False)
    udp: tuple[dict[str, Any], ...] = Field(default=(), strict=False)
    infrastructure: tuple[dict[str, Any], ...] = Field(default=(), strict=False)
    evidence: tuple[dict[str, Any], ...] = Field(default=(), strict=False)
    telemetry: tuple[dict[str, Any], ...] = Field(default=(), strict=False)
    kubernetes_services: tuple[dict[str, Any], ...] = Field(default=(), strict=False)
    extra_containers: tuple[dict[str, Any], ...] = Field(default=(), strict=False)
    compose_only: tuple[dict[str, Any], ...] = Field(default=(), strict=False)
    compose_edges_to_compose_only: tuple[dict[str, Any], ...] = Field(default=(), strict=False)
    traces: tuple[dict[str, Any], ...] = Field(default=(), strict=False)
    warnings: tuple[str, ...] = Field(default=(), strict=False)


class AppModel(_Strict):
    """A whole application: see the module docstring."""

    name: str = Field(pattern=_DNS_LABEL)
    title: str
    namespace: str = Field(pattern=_DNS_LABEL)
    description: str = ""
    provenance: tuple[str, ...] = Field(default=(), strict=False)
    cluster: ClusterSpec = ClusterSpec()
    load: LoadSpec
    services: tuple[Service, ...] = Field(strict=False)  # YAML lists; their items stay strict
    routes: tuple[Route, ...] = Field(strict=False)
    config_objects: tuple[ConfigObject, ...] = Field(default=(), strict=False,
                                                     description="ConfigMaps and Secrets of the namespace")
    imported: ImportSection | None = Field(default=None, description="what `marathon app import` found and chose")

    def config_object(self, kind: str, name: str) -> ConfigObject | None:
        """The ConfigMap or Secret called ``name``, or None."""
        for obj in self.config_objects:
            if obj.kind == kind and obj.name == name:
                return obj
        return None

    def service(self, name: str) -> Service:
        """Return the service called ``name``.

        Raises:
            KeyError: no such service.
        """
        for svc in self.services:
            if svc.name == name:
                return svc
        raise KeyError(f"{self.name} has no service {name!r}")

    def service_names(self) -> list[str]:
        return [svc.name for svc in self.services]

    def edges(self) -> list[tuple[str, str]]:
        """Distinct (caller, callee) service pairs over all operations, in file order."""
        seen: dict[tuple[str, str], None] = {}
        for svc in self.services:
            for op in svc.operations:
                for call in op.calls:
                    seen.setdefault((svc.name, call.service), None)
        return list(seen)

    def walk(self, service: str, operation: str) -> Iterator[tuple[int, str, Operation, Call | None]]:
        """Depth-first walk of the call tree under one operation.

        Yields:
            (depth, service name, operation, the call that reached it or None at the root).
        """
        stack: list[tuple[int, str, str, Call | None]] = [(0, service, operation, None)]
        while stack:
            depth, svc_name, op_name, call = stack.pop()
            op = self.service(svc_name).operation(op_name)
            yield depth, svc_name, op, call
            for child in reversed(op.calls):
                stack.append((depth + 1, child.service, child.operation, child))


class AppModelError(ValueError):
    """A malformed app file: ``problems`` lists (field path, message)."""

    def __init__(self, source: str, problems: list[tuple[str, str]]) -> None:
        self.source = source
        self.problems = problems
        lines = [f"{source}: {loc or '<top>'}: {msg}" for loc, msg in problems]
        super().__init__("invalid app model\n  " + "\n  ".join(lines))


def _loc(parts: tuple[int | str, ...]) -> str:
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _cross_check(app: AppModel) -> list[tuple[str, str]]:
    """Checks that need the whole model: references, cycles, shares."""
    problems: list[tuple[str, str]] = []
    src = source_root(app.name) if app.name in builtin_apps() else None
    names = app.service_names()
    index = {name: i for i, name in enumerate(names)}
    for name in {n for n in names if names.count(n) > 1}:
        problems.append((f"services[{names.index(name)}].name", f"duplicate service name {name!r}"))
    if app.cluster.zones[0] == app.cluster.zones[1]:
        problems.append(("cluster.zones", f"the two zones must differ (both {app.cluster.zones[0]!r})"))
    if app.load.generator not in index:
        problems.append(("load.generator", f"unknown service {app.load.generator!r}"))
    elif app.service(app.load.generator).role != "loadgenerator":
        problems.append(("load.generator", f"service {app.load.generator!r} must have role 'loadgenerator'"))
    for i, svc in enumerate(app.services):
        where = f"services[{i}]"
        ops = [op.name for op in svc.operations]
        for op_name in {o for o in ops if ops.count(o) > 1}:
            problems.append((f"{where}.operations", f"duplicate operation {op_name!r}"))
        if svc.role == "store" and svc.store is None:
            problems.append((f"{where}.store", "a service with role 'store' needs a store section"))
        if svc.operations and svc.port is None and svc.protocol != "kafka":
            problems.append((f"{where}.port", "a service that serves operations needs a container port "
                                              "(only Kafka consumers have none)"))
        if svc.resources.limits.memory is None and svc.resources.requests.memory is None:
            problems.append((f"{where}.resources", "set a memory request or limit"))
        limit = svc.resources.limits.memory_bytes()
        if limit is not None and parse_quantity(svc.memory_idle) >= limit:
            problems.append((f"{where}.memory_idle", f"{svc.memory_idle} is not below the memory limit "
                                                     f"{svc.resources.limits.memory}: every pod would be OOMKilled"))
        for j, ref in enumerate(svc.config_refs):
            rwhere = f"{where}.config_refs[{j}]"
            obj = app.config_object(ref.kind, ref.name)
            if obj is None and not ref.optional:
                problems.append((f"{rwhere}.name", f"no {ref.kind} {ref.name!r} in config_objects"))
            elif obj is not None and ref.key is not None and ref.key not in obj.keys and not ref.optional:
                problems.append((f"{rwhere}.key", f"{ref.kind} {ref.name!r} has no key {ref.key!r} "
                                                  f"(keys: {', '.join(obj.keys)})"))
            if (ref.env is None) != (ref.key is None) and ref.volume is None:
                problems.append((rwhere, "an env ref needs both env and key; envFrom needs neither"))
            if (ref.volume is None) != (ref.mount_path is None):
                problems.append((rwhere, "a volume ref needs both volume and mount_path"))
        deps = {d.service for d in svc.dependencies}
        for j, dep in enumerate(svc.dependencies):
            if dep.service not in index:
                problems.append((f"{where}.dependencies[{j}].service", f"unknown service {dep.service!r}"))
            if dep.env is not None and dep.env not in svc.env:
                problems.append((f"{where}.dependencies[{j}].env", f"{dep.env!r} is not in this service's env"))
        for k, op in enumerate(svc.operations):
            if op.handler is not None and not re.match(r"^[^:]+:[A-Za-z_][\w.]*$", op.handler):
                problems.append((f"{where}.operations[{k}].handler", "expected 'path/to/file:function'"))
            elif op.handler is not None and src is not None and (src / svc.name).is_dir() \
                    and not (src / svc.name / op.handler.split(":")[0]).is_file():
                problems.append((f"{where}.operations[{k}].handler",
                                 f"{op.handler.split(':')[0]!r} is not in {svc.name}'s source"))
            for m, call in enumerate(op.calls):
                cwhere = f"{where}.operations[{k}].calls[{m}]"
                if call.service not in index:
                    problems.append((f"{cwhere}.service", f"unknown service {call.service!r}"))
                    continue
                callee = app.services[index[call.service]]
                if call.operation not in {o.name for o in callee.operations}:
                    known = ", ".join(o.name for o in callee.operations) or "none"
                    problems.append(
                        (f"{cwhere}.operation",
                         f"unknown operation {call.operation!r} of {call.service!r} (known: {known})")
                    )
                if call.service not in deps and not call.is_async:
                    problems.append(
                        (f"{cwhere}.service", f"{call.service!r} is not listed in {svc.name}'s dependencies")
                    )
    if not problems:  # the cycle walk needs every call to resolve
        problems.extend(_cycles(app))
    total = sum(r.share for r in app.routes)
    if abs(total - 1.0) > 1e-6:
        problems.append(("routes", f"shares sum to {total:.6f}, expected 1"))
    route_names = [r.name for r in app.routes]
    for name in {n for n in route_names if route_names.count(n) > 1}:
        problems.append((f"routes[{route_names.index(name)}].name", f"duplicate route {name!r}"))
    for i, route in enumerate(app.routes):
        if route.entry.service not in index:
            problems.append((f"routes[{i}].entry.service", f"unknown service {route.entry.service!r}"))
        elif route.entry.operation not in {o.name for o in app.service(route.entry.service).operations}:
            problems.append((f"routes[{i}].entry.operation", f"unknown operation {route.entry.operation!r}"))
    return problems


def _cycles(app: AppModel) -> list[tuple[str, str]]:
    graph: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for svc in app.services:
        for op in svc.operations:
            graph[(svc.name, op.name)] = [(c.service, c.operation) for c in op.calls]
    state: dict[tuple[str, str], int] = {}
    problems: list[tuple[str, str]] = []

    # Iterative depth-first walk (a chain of thousands of services would overflow Python's
    # recursion); ``path`` is the chain of open nodes, each with the index of its next call.
    for root in graph:
        if root in state:
            continue
        state[root] = 1
        path: list[tuple[tuple[str, str], int]] = [(root, 0)]
        while path:
            node, i = path[-1]
            if i == len(graph[node]):
                state[node] = 2
                path.pop()
                continue
            path[-1] = (node, i + 1)
            nxt = graph[node][i]
            if state.get(nxt) == 1:
                cycle = " -> ".join(f"{s}:{o}" for s, o in [*(n for n, _ in path), nxt])
                problems.append(("services", f"call cycle {cycle}"))
            elif nxt not in state:
                state[nxt] = 1
                path.append((nxt, 0))
    return problems


def parse_app(data: Any, source: str = "<app>") -> AppModel:
    """Validate parsed YAML data as an app model.

    Raises:
        AppModelError: naming ``source``, each bad field and what is wrong.
    """
    if not isinstance(data, dict):
        raise AppModelError(source, [("", f"expected a mapping at the top level, got {type(data).__name__}")])
    try:
        app = AppModel.model_validate(data)
    except ValidationError as exc:
        problems = [(_loc(tuple(err["loc"])), err["msg"]) for err in exc.errors()]
        raise AppModelError(source, problems) from None
    problems = _cross_check(app)
    if problems:
        raise AppModelError(source, problems)
    return app


def load_app_file(path: str | Path) -> AppModel:
    """Load and validate an app model from a YAML file.

    Raises:
        AppModelError: malformed YAML or model; the message names the file and field.
        FileNotFoundError: no such file.
    """
    path = Path(path)
    if not path.is_file():
        raise AppModelError(str(path), [("", "not a file")])
    try:
        data = read_yaml(path)
    except YamlInputError as exc:
        raise AppModelError(str(path), [(exc.where, exc.problem)]) from None
    except OSError as exc:
        raise AppModelError(str(path), [("", f"cannot be read ({exc.strerror or exc})")]) from None
    return parse_app(data, str(path))


def builtin_apps() -> list[str]:
    """Names of the app models shipped with the package, sorted."""
    root = resources.files(APPS_PACKAGE)
    return sorted(p.name[: -len(".yaml")] for p in root.iterdir() if p.name.endswith(".yaml"))


def builtin_app_path(name: str) -> Path:
    """Path of a shipped app model file.

    Raises:
        KeyError: no shipped app of that name.
    """
    path = Path(str(resources.files(APPS_PACKAGE).joinpath(f"{name}.yaml")))
    if not path.is_file():
        raise KeyError(f"unknown app {name!r}; shipped apps: {', '.join(builtin_apps())}")
    return path


APP_DIR_MODEL = "app.yaml"
"""The app model file of an app directory (``--app DIR``)."""
APP_DIR_CATALOG = "catalog.yaml"
"""The fault catalog file of an app directory (``--app DIR``; :func:`faults.spec.app_catalog`)."""
APP_DIR_SOURCE = "src"
"""The source trees of an app directory's services: ``src/<service>/`` beside ``app.yaml``
(:func:`source_root`; ``marathon faults generate --source SERVICE=PATH`` copies them there)."""

_SOURCES: dict[str, Path] = {}
"""User apps' source roots by model name, registered as their ``app.yaml`` loads."""
_BOUND_SOURCES: dict[str, Path] = {}
"""Source roots bound by :func:`bind_source` (a bundle's replay), by model name."""

_CACHE: dict[str, AppModel] = {}
_BOUND: dict[str, AppModel] = {}


def app_model_path(ref: str) -> Path:
    """The app model file an app reference names: a shipped app's file (by name), the
    ``app.yaml`` of an app directory, or the file itself. A path (one with a separator or a
    YAML suffix, or an existing file) is a path; a bare name is a shipped app unless no
    shipped app has it and a directory of that name exists.

    Raises:
        KeyError: neither a shipped app nor an existing file or app directory (the message
            lists the shipped apps), or a directory without ``app.yaml``.
    """
    candidate = Path(ref)
    if candidate.suffix in (".yaml", ".yml") or os.sep in ref or candidate.is_file() \
            or (candidate.is_dir() and ref not in builtin_apps()):
        if not candidate.is_dir():
            return candidate
        inner = candidate / APP_DIR_MODEL
        if not inner.is_file():
            raise KeyError(f"{ref}: an app directory holds {APP_DIR_MODEL} (the app model) and {APP_DIR_CATALOG} "
                           f"(its fault catalog); there is no {inner}")
        return inner
    return builtin_app_path(ref)


def is_shipped_app(ref: str) -> bool:
    """Whether the app reference ``ref`` names a shipped app (:func:`app_model_path` resolves it
    to the package's own model file), as opposed to a user's file or directory."""
    try:
        return app_model_path(ref) == builtin_app_path(ref)
    except KeyError:
        return False


def load_app(name_or_path: str) -> AppModel:
    """Load an app by reference: a shipped app by name (``online-boutique``), an app file by
    path, or an app directory (its ``app.yaml``, :data:`APP_DIR_MODEL`). A model bound to the
    reference (:func:`bind_app`) comes first.

    Raises:
        KeyError: neither a shipped app nor an existing file or app directory.
        AppModelError: the file is malformed.
    """
    if name_or_path in _BOUND:
        return _BOUND[name_or_path]
    if name_or_path in _CACHE:
        return _CACHE[name_or_path]
    path = app_model_path(name_or_path)
    app = load_app_file(path)
    _CACHE[name_or_path] = app
    _register_source(path, app)
    return app


def _register_source(path: Path, app: AppModel) -> None:
    if path.name == APP_DIR_MODEL and (path.parent / APP_DIR_SOURCE).is_dir() and app.name not in builtin_apps():
        _SOURCES[app.name] = path.parent / APP_DIR_SOURCE


def register_source(ref: str) -> None:
    """Take note of the ``src/`` an app directory gained after its model loaded (``faults
    generate --source`` writes it), for :func:`source_root`.

    Raises:
        KeyError, AppModelError: as :func:`load_app`.
    """
    _register_source(app_model_path(ref), load_app(ref))


@contextmanager
def bind_app(ref: str, model: AppModel) -> Iterator[None]:
    """Make :func:`load_app` answer ``model`` for ``ref`` inside the block, whatever the file
    system holds: a bundle's replay runs the app model the bundle carries (the user's file may
    be gone or changed since). Nested bindings of the same reference restore the outer one."""
    with bound(_BOUND, ref, model):
        yield


@contextmanager
def bind_source(app: str, root: Path) -> Iterator[None]:
    """Make :func:`source_root` answer ``root`` for the app named ``app`` inside the block: a
    bundle's replay runs the source tree the bundle carries (``src/<service>/``), whatever the
    user's directory now holds or whether it still exists."""
    with bound(_BOUND_SOURCES, app, root):
        yield


def source_root(app: str) -> Path:
    """Directory holding the initial source tree of each service (``<root>/<service>/``).

    ``app`` is a model name or an app reference (a user's file or directory: its model's
    name). In order: a root bound by
    :func:`bind_source`; for a user's app, the ``src/`` directory beside the ``app.yaml`` it
    was loaded from (:data:`APP_DIR_SOURCE`; registered by :func:`load_app`); else the shipped
    app's tree in the package (a directory that does not exist for a user's app without
    source: its services then have no files).
    """
    if app in _BOUND_SOURCES:
        return _BOUND_SOURCES[app]
    if app in _SOURCES:
        return _SOURCES[app]
    if app not in builtin_apps() and (app in _BOUND or os.sep in app or Path(app).suffix in (".yaml", ".yml")
                                      or Path(app).is_dir()):
        try:  # a user's app reference (file or directory): its model's name keys the tree
            name = load_app(app).name
            beside = app_model_path(app).parent / APP_DIR_SOURCE
        except (KeyError, AppModelError):
            name, beside = app, None
        if name not in _BOUND_SOURCES and beside is not None and beside.is_dir() \
                and app_model_path(app).name == APP_DIR_MODEL:
            return beside  # the directory's own tree, whether or not its model loaded before it had one
        if name != app:
            return source_root(name)
    return Path(str(resources.files(APPS_PACKAGE).joinpath("src", app)))


def app_source_root(ref: str) -> Path | None:
    """The source root of the app reference ``ref`` when it is a user's app with a source tree
    (``src/`` beside its ``app.yaml``), else None (shipped apps' trees are in the package).

    Raises:
        KeyError, AppModelError: as :func:`load_app`.
    """
    if is_shipped_app(ref):
        return None
    name = load_app(ref).name
    root = _BOUND_SOURCES.get(name) or _SOURCES.get(name)
    return root if root is not None and root.is_dir() else None
