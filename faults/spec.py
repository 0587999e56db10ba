"""Fault specs: what a catalog file says about one fault, validated on load.

A catalog is one YAML file per application (``faults/catalog/<app>.yaml``) holding a list
of fault specs (see ``faults/catalog/FORMAT.md``). Each spec names the fault's category
and defect subtype, its injection mechanism, the target service and the routes it hurts,
the symptom probe (a request and what a correct answer is), the responsible artifact, the
reference remedy and the alerts it should raise. The mechanism-specific section
(``change``, ``config``, ``runtime``) carries what the orchestrator injects.

Loading raises :class:`CatalogError`, naming the file, the fault id (or index) and the
field, and -- for references into the app (services, routes, operations, source files,
the text a change replaces) -- what exists instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from engine.apps.model import (
    APP_DIR_CATALOG,
    APP_DIR_MODEL,
    MAX_REPLICAS,
    AppModel,
    ConfigRef,
    Probe,
    Resources,
    app_model_path,
    is_shipped_app,
    load_app,
    source_root,
)
from engine.inputs.binding import bound
from engine.inputs.safeyaml import YamlInputError, read_yaml

Category = Literal["code-bug", "configuration", "runtime", "infrastructure"]
Subtype = Literal[
    "feature-logic",
    "constant-flag",
    "component-incompatibility",
    "type-validation",
    "backward-incompatibility",
]
"""Code-bug subtypes of SRE-Marathon's Table 3."""

Mechanism = Literal[
    "code-change",
    "config-patch",
    "feature-flag",
    "scale",
    "resource-limit",
    "image",
    "readiness-probe",
    "config-ref",
    "service-change",
    "liveness-probe",
    "cpu-pressure",
    "network-delay",
    "store-restart",
    "zone-outage",
    "secret-rotation",
    "kubelet-stop",
    "node-network",
]
"""How the orchestrator injects a fault. The first ten ship through the build pipeline
or the API as a change a person could have made (``config-ref``: the Deployment's pod
template now reads an env var from a ConfigMap or Secret key; ``service-change``: a
Service's selector or targetPort is edited); the rest are runtime and infrastructure
events (``secret-rotation``: a Secret's values are rotated while running pods keep the
values they read at start)."""

CHANGE_MECHANISMS = ("code-change", "config-patch", "feature-flag", "scale", "resource-limit", "image",
                     "readiness-probe", "liveness-probe", "config-ref", "service-change")

NODE_MECHANISMS = ("kubelet-stop", "node-network")
"""Faults of one node: ``runtime.node``, or by default the node that runs the target's first
pod (by name) at injection."""

RemedyAction = Literal["rollback", "revert-patch", "set-config", "set-flag", "scale", "restart-pods",
                       "patch-service"]


class _Strict(BaseModel):
    # strict: YAML already types its scalars, so "3" is not an int nor "false" a bool.
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, strict=True, allow_inf_nan=False)


class CodeChange(_Strict):
    """A real diff to one file of the target's deployed source: ``find`` becomes ``replace``."""

    file: str
    find: str = Field(min_length=1)
    replace: str
    summary: str = Field(min_length=3, description="commit subject, as the author wrote it")
    author: str = Field(min_length=1)
    marker: str | None = Field(default=None, description="a line only the defective code has; default: the "
                                                          "first added line")

    def defect_marker(self) -> str:
        """The text whose presence in the deployed file means the defect is deployed."""
        if self.marker:
            return self.marker
        before = {line.strip() for line in self.find.splitlines()}
        for line in self.replace.splitlines():
            if line.strip() and line.strip() not in before:
                return line.strip()
        raise ValueError("replace adds no line that find lacks; set marker")


class FlagChange(_Strict):
    """Turn a flagd feature flag to a variant (Astronomy Shop's demo.flagd.json)."""

    name: str
    variant: str = "on"
    service: str = "flagd"
    file: str = "demo.flagd.json"


class ConfigChange(_Strict):
    """A change to the target's Deployment that is not code: env, replicas, resources, image, probe, flag."""

    env: dict[str, str] | None = None
    replicas: int | None = Field(default=None, ge=0, le=MAX_REPLICAS)
    resources: Resources | None = None
    image: str | None = None
    readiness_probe: Probe | None = None
    liveness_probe: Probe | None = Field(default=None, description="liveness-probe: the container's new "
                                                                     "liveness probe (the kubelet restarts the "
                                                                     "container after failureThreshold misses)")
    flag: FlagChange | None = None
    config_ref: ConfigRef | None = Field(default=None, description="config-ref: the reference the template "
                                                                   "gets (it replaces a reference, or a plain env "
                                                                   "var, of the same env or volume name)")
    summary: str = Field(min_length=3)
    author: str = Field(min_length=1)


class ServiceChange(_Strict):
    """service-change: an edit of the target's Service (``kubectl apply`` of a changed manifest)."""

    selector: dict[str, str] | None = None
    target_port: int | None = Field(default=None, ge=1, le=65535)
    summary: str = Field(min_length=3)
    author: str = Field(min_length=1)

    @model_validator(mode="after")
    def _something(self) -> ServiceChange:
        if self.selector is None and self.target_port is None:
            raise ValueError("a service change needs a selector or a target_port")
        return self


class RuntimeSpec(_Strict):
    """Parameters of runtime and infrastructure faults."""

    cpu_cores: float | None = Field(default=None, gt=0, description="cpu-pressure: cores burned per pod")
    caller: str | None = Field(default=None, description="network-delay: the calling service")
    delay_ms: float | None = Field(default=None, gt=0, description="network-delay: added one-way delay, ms")
    drop: float = Field(default=0.0, ge=0, le=1, description="network-delay: share of calls lost")
    store: str | None = Field(default=None, description="store-restart: the store whose pod restarts")
    zone: str | None = Field(default=None, description="zone-outage: the zone whose nodes stop reporting")
    secret: str | None = Field(default=None, description="secret-rotation: the Secret whose values are rotated")
    node: str | None = Field(default=None, description="kubelet-stop / node-network: the node (default: the "
                                                        "node running the target's first pod at injection)")


class LogSpec(_Strict):
    """What the defective code logs, and where the failure becomes a log line.

    ``where`` follows what the code would do: ``self`` (default; the faulty service throws
    or logs, so its own log has the error, as a stack trace where the runtime prints one,
    and its callers log the error answer they get), ``caller`` (the faulty service returns
    an error status or a wrong value without logging: a Go gRPC handler returning
    ``status.Errorf``, an inverted condition; only callers log, with ``message`` as the
    error they see), ``none`` (no service logs it: the wrong value is served as a success).
    """

    message: str
    exception: str = ""
    function: str = ""
    line: int = Field(default=0, ge=0)
    where: Literal["self", "caller", "none"] = "self"


class EffectSpec(_Strict):
    """Behaviour while the fault is active (see :class:`engine.sim.effects.Effect`)."""

    service: str | None = Field(default=None, description="default: the fault's target")
    operations: tuple[str, ...] = Field(default=(), strict=False)
    error_rate: float = Field(default=0.0, ge=0, le=1)
    latency_ms: float = Field(default=0.0, ge=0)
    latency_factor: float = Field(default=1.0, gt=0)
    cpu_cores: float = Field(default=0.0, ge=0)
    memory_leak_mib_per_min: float = Field(default=0.0, ge=0)
    memory_mib: float = Field(default=0.0, ge=0)
    crash_on_start: bool = False
    exit_code: int = 1
    readiness_fails: bool = False
    liveness_fails: bool = False
    match: dict[str, str] = Field(default_factory=dict)
    share: float = Field(default=1.0, gt=0, le=1)
    log: LogSpec | None = None


class ProbeSpec(_Strict):
    """The symptom probe: user-visible requests through the fault's scope (DESIGN section 8:
    "probes judge user-visible requests, never rollout status alone").

    Exactly one of ``route`` (a user request along an entry route, judged where it reaches
    the fault's target) or ``operation`` (a direct call to one service operation, as its
    busiest caller makes it). ``rollout`` is an optional *additional* condition: the named
    Deployment (normally the target) must also be fully rolled out -- for faults whose new
    pods never serve while old ones keep the requests succeeding (a bad image, a memory
    limit or a failing readiness probe on a multi-replica Deployment). It is never a probe by
    itself: 0/0 replicas is "fully rolled out", so a rollout-only probe would count scaling
    the service to zero as a repair.
    """

    route: str | None = None
    operation: tuple[str, str] | None = Field(default=None, strict=False, description="(service, operation name)")
    rollout: str | None = Field(default=None, description="also require this Deployment to be fully rolled out "
                                                           "(only together with route or operation)")
    attributes: dict[str, str] = Field(default_factory=dict)
    max_error: float = Field(default=0.01, gt=0, lt=1, description="largest acceptable failure probability")
    latency_p95_ms: float | None = Field(default=None, gt=0, description="default: the route's SLO, or 2000 ms")

    @model_validator(mode="after")
    def _one_kind(self) -> ProbeSpec:
        if (self.route is None) == (self.operation is None):
            if self.route is None and self.rollout is not None:
                raise ValueError("rollout alone is not a probe (it passes at 0/0 replicas): give a route or an "
                                 "operation through the fault's target, and keep rollout as an extra condition")
            raise ValueError("give exactly one of route or operation (rollout is only an extra condition)")
        return self


class Artifact(_Strict):
    """The responsible artifact an RCA should name."""

    kind: Literal["change", "config-key", "image", "flag", "replicas", "resources", "probe", "process", "network",
                  "store", "zone", "service", "secret", "node"]
    ref: str


class Remedy(_Strict):
    """The reference remedy: what a correct operator does (applied by the oracle)."""

    action: RemedyAction
    key: str | None = None
    value: str | None = None
    replicas: int | None = Field(default=None, ge=0, le=MAX_REPLICAS)
    service: str | None = Field(default=None, description="default: the fault's target")
    zone: str | None = Field(default=None, description="restart-pods: only pods in this zone")


class FaultSpec(_Strict):
    """One catalog fault (module docstring)."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=80)
    title: str = Field(min_length=5)
    category: Category
    subtype: Subtype | None = None
    mechanism: Mechanism
    target: str
    scope: tuple[str, ...] = Field(min_length=1, strict=False, description="entry routes the fault hurts")
    probe: ProbeSpec
    artifact: Artifact
    remedy: Remedy
    expected_alerts: tuple[str, ...] = Field(default=(), strict=False)
    change: CodeChange | None = None
    config: ConfigChange | None = None
    service_change: ServiceChange | None = None
    runtime: RuntimeSpec | None = None
    effect: EffectSpec | None = None
    intermittent: bool = Field(default=False, description="the symptom comes and goes while the fault is live, "
                                                            "so its probe may pass at some samples between onset "
                                                            "and revert (say why in notes)")
    notes: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> FaultSpec:
        if (self.category == "code-bug") != (self.subtype is not None):
            raise ValueError("code-bug faults need a subtype; other categories must not have one")
        need = {
            "code-change": "change",
            "config-patch": "config",
            "feature-flag": "config",
            "scale": "config",
            "resource-limit": "config",
            "image": "config",
            "readiness-probe": "config",
            "config-ref": "config",
            "service-change": "service_change",
            "secret-rotation": "runtime",
            "liveness-probe": "config",
            "cpu-pressure": "runtime",
            "network-delay": "runtime",
            "store-restart": "runtime",
            "zone-outage": "runtime",
            "kubelet-stop": "runtime",
            "node-network": "runtime",
        }[self.mechanism]
        if getattr(self, need) is None:
            raise ValueError(f"mechanism {self.mechanism} needs a {need} section")
        if self.mechanism == "code-change" and self.effect is None:
            raise ValueError("a code-change fault needs an effect (what the defect does when deployed)")
        if self.category == "code-bug" and self.mechanism != "code-change":
            raise ValueError("code-bug faults are injected as code-change")
        if self.mechanism == "config-ref" and (self.config is None or self.config.config_ref is None):
            raise ValueError("a config-ref fault needs config.config_ref")
        if self.mechanism == "secret-rotation" and self.effect is None:
            raise ValueError("a secret-rotation fault needs an effect (what the stale credentials do)")
        return self

    @property
    def probe_anchor(self) -> str:
        """Where a route probe judges this fault: the call to the target, or for a delay on
        one edge the call to its caller (which makes every delayed call of the route)."""
        if self.mechanism == "network-delay" and self.runtime is not None and self.runtime.caller:
            return self.runtime.caller
        return self.target


class Catalog(_Strict):
    app: str
    faults: tuple[FaultSpec, ...] = Field(strict=False)  # a YAML list; its items stay strict


class CatalogError(ValueError):
    """A malformed catalog: ``problems`` lists (where, message)."""

    def __init__(self, source: str, problems: list[tuple[str, str]]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("invalid fault catalog\n  " + "\n  ".join(f"{source}: {w}: {m}" for w, m in problems))


def _where(data: Any, loc: tuple[Any, ...]) -> str:
    if len(loc) >= 2 and loc[0] == "faults" and isinstance(loc[1], int):
        fid = None
        if isinstance(data, dict) and isinstance(data.get("faults"), list) and loc[1] < len(data["faults"]):
            entry = data["faults"][loc[1]]
            fid = entry.get("id") if isinstance(entry, dict) else None
        head = f"fault {fid!r}" if fid else f"faults[{loc[1]}]"
        rest = ".".join(str(p) for p in loc[2:])
        return f"{head}{': ' + rest if rest else ''}"
    return ".".join(str(p) for p in loc) or "<top>"


def _substitute(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        for key, sub in names.items():
            value = value.replace("{" + key + "}", sub)
        return value
    if isinstance(value, list):
        return [_substitute(v, names) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, names) for k, v in value.items()}
    return value


def expand_templates(data: dict[str, Any], source: str) -> dict[str, Any]:
    """Expand ``for_each`` entries: ``for_each: {service: [a, b]}`` instantiates the entry once
    per value, replacing ``{service}`` in every string (ids must stay unique).

    Raises:
        CatalogError: a malformed ``for_each``.
    """
    faults = data.get("faults")
    if not isinstance(faults, list):
        return data
    out: list[Any] = []
    for i, entry in enumerate(faults):
        if not isinstance(entry, dict) or "for_each" not in entry:
            out.append(entry)
            continue
        spec = entry["for_each"]
        if not isinstance(spec, dict) or len(spec) != 1:
            raise CatalogError(source, [(f"faults[{i}].for_each", "expected one key mapping to a list of values")])
        (key, values), = spec.items()
        if not isinstance(key, str) or not key:
            raise CatalogError(source, [(f"faults[{i}].for_each", f"the placeholder name {key!r} is not a string")])
        if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
            raise CatalogError(source, [(f"faults[{i}].for_each.{key}", "expected a non-empty list of strings")])
        body = {k: v for k, v in entry.items() if k != "for_each"}
        out.extend(_substitute(body, {key: v}) for v in values)
    return {**data, "faults": out}


def parse_catalog(data: Any, source: str, app: AppModel | None = None) -> Catalog:
    """Validate catalog data and its references into the app.

    Raises:
        CatalogError: naming ``source``, the fault and the field.
    """
    if not isinstance(data, dict):
        raise CatalogError(source, [("<top>", f"expected a mapping with app and faults, got {type(data).__name__}")])
    data = expand_templates(data, source)
    try:
        catalog = Catalog.model_validate(data)
    except ValidationError as exc:
        raise CatalogError(source, [(_where(data, tuple(e["loc"])), e["msg"]) for e in exc.errors()]) from None
    try:
        model = app or load_app(catalog.app)
    except KeyError as exc:
        raise CatalogError(source, [("app", str(exc))]) from None
    except (ValueError, OSError) as exc:  # AppModelError names the app file and its problems
        raise CatalogError(source, [("app", f"{catalog.app!r} cannot be loaded: {exc}")]) from None
    problems: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    for i, fault in enumerate(catalog.faults):
        if fault.id in seen:
            problems.append((f"faults[{i}].id", f"duplicate id {fault.id!r} (also faults[{seen[fault.id]}])"))
        seen.setdefault(fault.id, i)
        problems.extend((f"fault {fault.id!r}: {w}", m) for w, m in check_references(fault, model))
    if problems:
        raise CatalogError(source, problems)
    return catalog


def check_references(fault: FaultSpec, app: AppModel) -> list[tuple[str, str]]:
    """Problems with a fault's references to services, routes, operations and source text."""
    out: list[tuple[str, str]] = []
    services = {s.name: s for s in app.services}
    routes = [r.name for r in app.routes]

    def known_service(field: str, name: str | None) -> bool:
        if name is None:
            return True
        if name not in services:
            out.append((field, f"unknown service {name!r}"))
            return False
        return True

    if known_service("target", fault.target) and not services[fault.target].in_application:
        out.append(("target", f"{fault.target!r} is not part of the application (role "
                              f"{services[fault.target].role})"))
    for r in fault.scope:
        if r not in routes:
            out.append(("scope", f"unknown route {r!r}; routes: {', '.join(routes)}"))
    p = fault.probe
    if p.route is not None and p.route not in routes:
        out.append(("probe.route", f"unknown route {p.route!r}"))
    if p.operation is not None and known_service("probe.operation", p.operation[0]):
        ops = [o.name for o in services[p.operation[0]].operations]
        if p.operation[1] not in ops:
            out.append(("probe.operation", f"unknown operation {p.operation[1]!r} of {p.operation[0]}"))
    known_service("probe.rollout", p.rollout)
    known_service("remedy.service", fault.remedy.service)
    if fault.effect is not None:
        svc_name = fault.effect.service or fault.target
        if known_service("effect.service", svc_name):
            ops = [o.name for o in services[svc_name].operations]
            for op in fault.effect.operations:
                if op not in ops:
                    out.append(("effect.operations", f"unknown operation {op!r} of {svc_name}"))
    if fault.change is not None and fault.target in services:
        path = source_root(app.name) / fault.target / fault.change.file
        parts = fault.change.file.split("/")
        if "\0" in fault.change.file or fault.change.file.startswith("/") or ".." in parts:
            out.append(("change.file", f"{fault.change.file!r} is not a relative path inside {fault.target}'s source"))
        elif not path.is_file():
            out.append(("change.file", f"{fault.change.file!r} is not in {fault.target}'s source"))
        else:
            text = path.read_text(encoding="utf-8")
            if text.count(fault.change.find) != 1:
                out.append(("change.find", f"the text to replace occurs {text.count(fault.change.find)} times in "
                                           f"{fault.change.file} (must be exactly once)"))
            try:
                marker = fault.change.defect_marker()
            except ValueError as exc:
                out.append(("change.replace", str(exc)))
            else:
                if marker in text:
                    out.append(("change.marker", f"the defect marker {marker!r} already occurs in the healthy source"))
    rt = fault.runtime
    if rt is not None:
        known_service("runtime.caller", rt.caller)
        known_service("runtime.store", rt.store)
        if rt.zone is not None and rt.zone not in app.cluster.zones:
            out.append(("runtime.zone", f"unknown zone {rt.zone!r}"))
        need = {"cpu-pressure": "cpu_cores", "network-delay": "delay_ms", "store-restart": "store",
                "zone-outage": "zone", "secret-rotation": "secret"}.get(fault.mechanism)
        if rt.secret is not None and app.config_object("Secret", rt.secret) is None:
            out.append(("runtime.secret", f"no Secret {rt.secret!r} in the app's config_objects"))
        if need and getattr(rt, need) is None:
            out.append((f"runtime.{need}", f"required for {fault.mechanism}"))
        if fault.mechanism == "network-delay" and rt.caller is None:
            out.append(("runtime.caller", "required for network-delay"))
        if fault.mechanism == "node-network" and rt.delay_ms is None and rt.drop == 0:
            out.append(("runtime.delay_ms", "node-network needs delay_ms or drop"))
        nodes = [f"node-{'abcdefgh'[zi]}-{i + 1}" for zi in range(len(app.cluster.zones))
                 for i in range(app.cluster.nodes_per_zone)]
        if rt.node is not None and rt.node not in nodes:
            out.append(("runtime.node", f"unknown node {rt.node!r}; nodes: {', '.join(nodes)}"))
    if fault.mechanism == "liveness-probe" and (fault.config is None or fault.config.liveness_probe is None):
        out.append(("config.liveness_probe", "required for liveness-probe"))
    cfg = fault.config
    if cfg is not None and cfg.flag is not None:
        known_service("config.flag.service", cfg.flag.service)
    if fault.mechanism == "service-change" and fault.target in services and \
            services[fault.target].service_port is None:
        out.append(("target", f"{fault.target!r} has no Service"))
    return out


CATALOG_DIR = Path(__file__).resolve().parent / "catalog"


def catalog_path(app: str) -> Path:
    return CATALOG_DIR / f"{app}.yaml"


def load_catalog(app_or_path: str | Path, app: AppModel | None = None) -> Catalog:
    """Load the shipped catalog of an app (by name) or a catalog file (by path).

    Args:
        app_or_path: a shipped app's name or a catalog file.
        app: the app model to check the catalog against (default: the app its ``app:`` field
            names, a shipped one); with ``app``, ``app:`` must be that model's name.

    Raises:
        CatalogError: malformed file, naming file, fault and field.
        FileNotFoundError: no such catalog.
    """
    path = Path(app_or_path)
    if not (path.suffix in (".yaml", ".yml") and path.is_file()):
        if os.sep in str(app_or_path) or path.suffix in (".yaml", ".yml"):
            raise FileNotFoundError(f"no fault catalog file {str(app_or_path)!r}")
        path = catalog_path(str(app_or_path))
        if not path.is_file():
            shipped = ", ".join(sorted(p.stem for p in CATALOG_DIR.glob("*.yaml")))
            raise FileNotFoundError(f"no fault catalog for app {str(app_or_path)!r}; apps with a catalog: {shipped} "
                                    "(or give a catalog file; format: faults/catalog/FORMAT.md)")
    try:
        data = read_yaml(path)
    except YamlInputError as exc:
        raise CatalogError(str(path), [(exc.where, exc.problem)]) from None
    except OSError as exc:
        raise CatalogError(str(path), [("<file>", f"cannot be read ({exc.strerror or exc})")]) from None
    if isinstance(data, dict) and "services" in data and "faults" not in data:
        raise CatalogError(str(path), [("<file>", "this is an app model, not a fault catalog: schedules and runs "
                                                  "need a fault catalog for the app (faults/catalog/FORMAT.md)")])
    if app is not None and isinstance(data, dict) and data.get("app") != app.name:
        raise CatalogError(str(path), [("app", f"the catalog is for app {data.get('app')!r}, the app model is "
                                               f"{app.name!r}")])
    return parse_catalog(data, str(path), app)


_BOUND: dict[str, Catalog] = {}


def app_catalog(app: str, catalog: str | Path | None = None) -> Catalog:
    """The fault catalog of an app reference (:func:`engine.apps.model.load_app`), checked
    against that app's model.

    In order: a catalog bound to ``app`` (:func:`bind_catalog`); the ``catalog`` file; the
    shipped catalog of a shipped app; the ``catalog.yaml`` of an app directory
    (:data:`engine.apps.model.APP_DIR_CATALOG`).

    Raises:
        CatalogError: the catalog is malformed or does not fit the app.
        FileNotFoundError: no catalog (the message says how to give or generate one).
        KeyError, engine.apps.model.AppModelError: the app does not load.
    """
    if app in _BOUND:
        return _BOUND[app]
    model = load_app(app)
    if catalog is not None:
        return load_catalog(catalog, model)
    if is_shipped_app(app):
        return load_catalog(app)
    model_file = app_model_path(app)
    if model_file.name == APP_DIR_MODEL and Path(app).is_dir():
        inner = model_file.parent / APP_DIR_CATALOG
        if inner.is_file():
            return load_catalog(inner, model)
        raise FileNotFoundError(f"{app}: the app directory has no {APP_DIR_CATALOG} (write one with `marathon faults "
                                f"generate --app {app} -o {inner}`, then qualify it)")
    raise FileNotFoundError(f"no fault catalog for the app file {app!r}: give --catalog FILE, or put the model and "
                            f"the catalog in one directory as {APP_DIR_MODEL} and {APP_DIR_CATALOG} and give --app DIR "
                            f"(a generic catalog: `marathon faults generate --app {app} -o catalog.yaml`)")


@contextmanager
def bind_catalog(app: str, catalog: Catalog) -> Iterator[None]:
    """Make :func:`app_catalog` answer ``catalog`` for ``app`` inside the block (a bundle's
    replay runs the catalog entries it carries; qualification runs a catalog not yet written
    to a file). Nested bindings of the same reference restore the outer one."""
    with bound(_BOUND, app, catalog):
        yield
