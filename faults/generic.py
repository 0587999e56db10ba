"""A generic fault catalog for any app model: ``marathon faults generate``.

A shipped catalog is written by hand from an app's source and manifests (code bugs with real
diffs, misconfigurations with the app's own env names). A user's app has only its model, so
this module derives, from the model alone, the faults every Kubernetes app can suffer through
mechanisms the simulator implements (``engine/sim/faults.py``; ``faults/catalog/FORMAT.md``,
"How mechanisms behave"):

==========================  ==================  ===============================================
fault (id suffix)           mechanism           what changes
==========================  ==================  ===============================================
``scaled-to-zero``          scale               replicas 0
``image-tag-missing``       image               the image's tag bumped to one never pushed
``image-registry-dns``      image               the image moved to a registry host that does
                                                not resolve (ImagePullBackOff)
``memory-limit``            resource-limit      memory request and limit half of the idle
                                                working set (``memory_idle``): OOMKilled
``cpu-hog``                 cpu-pressure        a runaway thread burning 92 % of the CPU limit
``config-unparsable``       config-patch        a numeric env var gets the ``tcp://IP:PORT``
                                                value a Kubernetes service link injects; the
                                                process exits at start (crash on start)
``readiness-wrong-port``    readiness-probe     the readiness probe on a port nothing serves
``liveness-wrong-port``     liveness-probe      the liveness probe on a port nothing serves,
                                                3 s period, 2 failures: killed before ready
``<dep>-address``           config-patch        a dependency address env var on the wrong port
                                                (or, without a port, a host name that does
                                                not resolve)
``missing-secret``          config-ref          the pod template reads an env var from a
                                                Secret key that does not exist (a key of an
                                                existing reference renamed, or a Secret the
                                                namespace does not hold)
``service-selector``        service-change      the Service selects a label no pod carries
``<callee>-delay``          network-delay       2.5 s added on one caller -> callee edge
``<callee>-packet-loss``    network-delay       30 % loss and 200 ms on one edge
``node-kubelet-stop``       kubelet-stop        the node of a single-replica service loses
                                                its kubelet (node loss), when no other
                                                single-replica service shares the node
``zone-<z>-outage``         zone-outage         a zone holding exactly one single-replica
                                                service goes dark
==========================  ==================  ===============================================

Left out, and why (each generated file's header repeats it):

* **store restart with data loss**: the simulator restarts the store's pods, but what the
  lost data does to requests is an ``effect`` the catalog must state (Train Ticket's
  services seed their collections at start-up, so reads fail until the owner restarts).
  The model does not say which service seeds a store, and inventing that behaviour would
  make a fault the app does not have; a cache or cart that simply starts empty fails no
  request, so no probe could judge it (Online Boutique's catalog header says the same).
* **secret rotation**: what stale credentials do is again an effect the model cannot tell.
* **code changes** of a service without source: they need its tree (``--source SERVICE=PATH``
  or ``src/<service>/`` in the app directory); with one, :mod:`faults.codegen` adds
  mutation-style code-change faults.

Every fault's symptom probe is a route of the model whose call tree reaches the target
through calls the callers need (not optional, not asynchronous): the route with the largest
share of traffic, ties broken by name; its scope is every such route. Faults whose new pods
never serve while the old ones keep answering (image, memory limit, crash on start, probes,
config references) add ``rollout: <target>`` (FORMAT.md, "Probes"). A service no route needs
gets no fault: its failure is invisible to users and to the paper's rules.

The output is deterministic: services, dependencies and edges in sorted order, no random
draw. A generated fault is a candidate: ``marathon faults qualify`` (or ``generate
--qualify``) runs the no-op, oracle and revert trials of :mod:`engine.run.qualify` and keeps
only the faults that pass them, so a fault whose probe never fails, that heals by itself
within the no-op window, that no paper rule sees, or that the reference remedy does not
repair never reaches a schedule.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.apps.model import AppModel, Operation, Probe, Service

GENERATOR = "generic-1"
"""Version of the generic catalog's rules (recorded in each file's header)."""

CPU_HOG_SHARE = 0.92
"""Share of a pod's CPU limit the runaway thread burns: the shipped CPU hogs burn 0.91-0.99 of
their limits (faults/catalog/*.yaml), which leaves requests too little CPU and CFS throttling
queues them."""
DELAY_MS = 2500.0
"""Added delay of an edge delay fault, ms (the shipped frontend edge delays: 2.5 s)."""
LOSS_DROP = 0.3
LOSS_DELAY_MS = 200.0
"""Loss and delay of an edge loss fault (the shipped recommendation -> catalog loss: 30 %, 200 ms)."""
OOM_SHARE = 0.5
"""The memory limit of a memory-limit fault as a share of the idle working set: below it the
container is OOMKilled at start (FORMAT.md, resource-limit)."""

LEFT_OUT = (
    "store restart with data loss: what the lost data does to requests is an effect the model does not state "
    "(which service seeds a store at start-up); a store that simply starts empty fails no request",
    "secret rotation: what stale credentials do is an effect the model does not state",
    "code changes, for services without a source tree: they need the service's source (faults generate "
    "--source SERVICE=PATH, or src/SERVICE/ in the app directory; faults/codegen.py)",
)

_EXPECTED = {
    "scale": ("EndpointErrorRate", "HighRequestErrorRate"),
    "image": ("PodStatusError", "PodNotReady", "DeploymentGenerationMismatch"),
    "resource-limit": ("ContainerOOMKilled", "PodStatusError", "PodNotReady", "DeploymentGenerationMismatch"),
    "cpu-pressure": ("HighRequestLatency",),
    "crash": ("PodStatusError", "PodNotReady", "DeploymentGenerationMismatch"),
    "readiness-probe": ("PodNotReady", "DeploymentGenerationMismatch"),
    "liveness-probe": ("PodStatusError", "PodNotReady", "DeploymentGenerationMismatch"),
    "address": ("EndpointErrorRate", "HighRequestErrorRate"),
    "config-ref": ("PodStatusError", "DeploymentGenerationMismatch"),
    "service-change": ("EndpointErrorRate", "HighRequestErrorRate"),
    "delay": ("HighRequestLatency",),
    "loss": ("EndpointErrorRate", "HighRequestErrorRate", "HighRequestLatency"),
    "kubelet-stop": ("DeploymentNotReady", "EndpointErrorRate", "HighRequestErrorRate", "PodNotReady"),
    "zone-outage": ("DeploymentNotReady", "DeploymentReplicasUnavailable", "EndpointErrorRate",
                    "HighRequestErrorRate", "PodNotReady"),
}
"""Rules of the paper pack the shipped catalogs' faults of the same mechanism raise (a
starting point: qualification replaces them by the rules that fired in the no-op trial)."""


@dataclass
class GenericCatalog:
    """A generated catalog: the data (``{"app", "faults"}``, :func:`faults.spec.parse_catalog`'s
    input) and what was skipped (service or edge, reason)."""

    data: dict[str, Any]
    skipped: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class _Reach:
    """Per route: services reached through required calls, and the required edges."""

    services: set[str] = field(default_factory=set)
    edges: set[tuple[str, str]] = field(default_factory=set)


def _walk(app: AppModel, service: str, op: Operation, out: _Reach) -> None:
    out.services.add(service)
    for call in op.calls:
        if call.optional or call.is_async:
            continue
        out.edges.add((service, call.service))
        _walk(app, call.service, app.service(call.service).operation(call.operation), out)


def required_reach(app: AppModel) -> dict[str, _Reach]:
    """Route name -> the services and (caller, callee) edges its request needs: reached from
    the entry operation through calls that are neither optional nor asynchronous."""
    out: dict[str, _Reach] = {}
    for route in app.routes:
        reach = _Reach()
        _walk(app, route.entry.service, app.service(route.entry.service).operation(route.entry.operation), reach)
        out[route.name] = reach
    return out


def _dns(text: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")


def _fid(*parts: str) -> str:
    return _dns("-".join(("gen", *parts)))[:80].rstrip("-")


def _mib(value: float) -> str:
    return f"{max(4, math.floor(value / 2**20))}Mi"


def _bumped_tag(image: str) -> tuple[str, str]:
    """(repository, tag never pushed): a numeric last part of the tag bumped, else ``-next``."""
    name, tag = image, "latest"
    last = image.rsplit("/", 1)[-1]
    if ":" in last:
        name, _, tag = image.rpartition(":")
    m = re.match(r"^(.*?)(\d+)$", tag)
    new = f"{m.group(1)}{int(m.group(2)) + 1}" if m else f"{tag}-next"
    return name, new


def _image_path(image: str) -> str:
    """``path:tag`` of an image reference without its registry host (containerd's rule: the
    first component is a host when it has a dot or a port, or is localhost)."""
    first, _, rest = image.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return rest
    return image


def _wrong_port(svc: Service) -> int | None:
    """A port the container does not listen on: the conventional admin port 8081, or the next
    one above the container port when that is 8081."""
    if svc.port is None:
        return None
    return 8081 if svc.port != 8081 else 8082


def _probe(base: Probe | None, port: int, **extra: Any) -> dict[str, Any]:
    kind = base.type if base is not None and base.type != "exec" else "tcp"
    out: dict[str, Any] = {"type": kind, "port": port}
    if kind == "http":
        out["path"] = base.path if base is not None and base.path else "/"
    out.update(extra)
    return out


def generic_catalog(app: AppModel, placement: Mapping[str, Sequence[str]] | None = None,
                    source: Path | None = None) -> GenericCatalog:
    """The generic catalog of ``app`` (module docstring).

    Args:
        app: the app model.
        placement: node names of each service's pods at warm start (service -> nodes, from
            the simulator: placement does not depend on the seed); node faults and zone
            outages need it and are left out without it. Nodes are named
            ``node-<zone letter>-<n>`` (zone ``a`` is the app's first zone).
        source: the app's source root (``source/<service>/...``, :func:`engine.apps.model.source_root`),
            or None: with it, each service with a tree gets code-change faults
            (:func:`faults.codegen.code_faults`, after the service faults).

    Returns:
        The catalog data, faults in a stable order (per service in name order: its
        template and runtime faults, its dependencies' address faults; then edges sorted;
        then node and zone faults), and the skipped services or edges with the reason.
    """
    reach = required_reach(app)
    share = {r.name: r.share for r in app.routes}
    faults: list[dict[str, Any]] = []
    skipped: list[tuple[str, str]] = []

    def routes_to(service: str) -> list[str]:
        return sorted((name for name, rc in reach.items() if service in rc.services),
                      key=lambda n: (-share[n], n))

    def routes_via(edge: tuple[str, str]) -> list[str]:
        return sorted((name for name, rc in reach.items() if edge in rc.edges), key=lambda n: (-share[n], n))

    def add(fid: str, title: str, category: str, mechanism: str, target: str, scope: list[str],
            artifact: tuple[str, str], remedy: dict[str, Any], alerts: str, *, rollout: bool = False,
            **sections: Any) -> None:
        probe: dict[str, Any] = {"route": scope[0]}
        if rollout:
            probe["rollout"] = target
        entry: dict[str, Any] = {"id": fid, "title": title, "category": category, "mechanism": mechanism,
                                 "target": target, "scope": sorted(scope)}
        entry.update(sections)
        entry.update({"probe": probe, "artifact": {"kind": artifact[0], "ref": artifact[1]}, "remedy": remedy,
                      "expected_alerts": list(_EXPECTED[alerts])})
        faults.append(entry)

    config_objects = {(o.kind, o.name) for o in app.config_objects}
    for svc in sorted(app.services, key=lambda s: s.name):
        if not svc.in_application:
            continue
        if svc.workload != "Deployment":
            skipped.append((svc.name, f"a {svc.workload}: the template faults are written for Deployments"))
            continue
        scope = routes_to(svc.name)
        if not scope:
            skipped.append((svc.name, "no route needs it (reached by no route, or only through optional or "
                                      "asynchronous calls): its failure is invisible to users"))
            continue
        s = svc.name
        add(_fid(s, "scaled-to-zero"), f"{s} scaled to zero by a cost-saving job that matched the wrong label",
            "configuration", "scale", s, scope, ("replicas", s), {"action": "scale", "replicas": max(1, svc.replicas)},
            "scale", config={"replicas": 0, "summary": "chore: scale idle deployments to zero at night",
                             "author": "finops-bot"})
        repo, tag = _bumped_tag(svc.image)
        image = f"{repo}:{tag}"
        add(_fid(s, "image-tag-missing"), f"{s} rolled to image tag {tag}, which was never pushed", "configuration",
            "image", s, scope, ("image", image), {"action": "rollback"}, "image", rollout=True,
            config={"image": image, "summary": f"release: {s} {tag}", "author": "release-bot"})
        mirror = f"registry.{app.namespace}.internal/{_image_path(svc.image)}"
        add(_fid(s, "image-registry-dns"), f"{s} image moved to the internal registry mirror, whose name the nodes "
                                           "cannot resolve", "configuration", "image", s, scope, ("image", mirror),
            {"action": "rollback"}, "image", rollout=True,
            config={"image": mirror, "summary": "deploy: pull images from the internal registry mirror",
                    "author": "platform-team"})
        idle = float(_quantity(svc.memory_idle))
        limit = _mib(idle * OOM_SHARE)
        res: dict[str, Any] = {"requests": {"memory": limit}, "limits": {"memory": limit}}
        if svc.resources.requests.cpu:
            res["requests"] = {"cpu": svc.resources.requests.cpu, "memory": limit}
        if svc.resources.limits.cpu:
            res["limits"] = {"cpu": svc.resources.limits.cpu, "memory": limit}
        add(_fid(s, "memory-limit"), f"{s} memory limit cut to {limit}, below its {svc.memory_idle} working set",
            "configuration", "resource-limit", s, scope, ("resources", s), {"action": "rollback"}, "resource-limit",
            rollout=True, config={"resources": res, "summary": f"chore: right-size {s} memory from last week's p50",
                                  "author": "finops-bot"})
        cores = svc.resources.limits.cpu_cores()
        if cores:
            burn = round(CPU_HOG_SHARE * cores, 3)
            add(_fid(s, "cpu-hog"), f"A runaway thread burns {burn:g} of the {svc.resources.limits.cpu} CPU limit of "
                                    f"every {s} pod", "runtime", "cpu-pressure", s, scope, ("process", s),
                {"action": "restart-pods"}, "cpu-pressure", runtime={"cpu_cores": burn}, intermittent=True,
                notes="Intermittent: the throttling latency depends on the load (closed-loop users slow down until "
                      "the CPU the hog leaves suffices).")
        else:
            skipped.append((f"{s} cpu-hog", "no CPU limit: a runaway thread would take idle node CPU and throttle "
                                            "nothing"))
        numeric = sorted(k for k, v in svc.env.items() if v.strip().isdigit())
        if numeric:
            key = "PORT" if "PORT" in numeric else numeric[0]
            bad = f"tcp://10.96.0.{10 + len(s) % 200}:{svc.env[key].strip()}"
            add(_fid(s, "config-unparsable"), f"{s}'s {key} set to a service-link URL; the process cannot parse it "
                                              "and exits at start", "configuration", "config-patch", s, scope,
                ("config-key", key), {"action": "set-config", "key": key, "value": svc.env[key]}, "crash",
                rollout=True, config={"env": {key: bad}, "summary": f"config({s}): take {key} from the service "
                                                                    "environment", "author": "platform-team"},
                effect={"crash_on_start": True, "exit_code": 1,
                        "log": {"message": f"invalid value {bad!r} for {key}: expected an integer",
                                "function": "main"}})
        else:
            skipped.append((f"{s} config-unparsable", "no env var with a numeric value to break"))
        wrong = _wrong_port(svc)
        if wrong is not None:
            ready = _probe(svc.readiness_probe, wrong, initial_delay_s=5.0)
            add(_fid(s, "readiness-wrong-port"), f"{s} readiness probe moved to port {wrong}, where nothing listens",
                "configuration", "readiness-probe", s, scope, ("probe", s), {"action": "rollback"}, "readiness-probe",
                rollout=True, config={"readiness_probe": ready, "summary": f"deploy: probe readiness on the admin "
                                                                          f"port {wrong}", "author": "platform-team"})
            live = _probe(svc.liveness_probe or svc.readiness_probe, wrong, period_s=3.0, failure_threshold=2)
            add(_fid(s, "liveness-wrong-port"), f"{s} liveness probe moved to port {wrong} with a 3 s period; the "
                                                "kubelet kills every new pod", "configuration", "liveness-probe", s,
                scope, ("probe", s), {"action": "rollback"}, "liveness-probe", rollout=True,
                config={"liveness_probe": live, "summary": f"deploy: faster liveness detection on port {wrong}",
                        "author": "platform-team"})
        else:
            skipped.append((f"{s} probes", "no container port: a probe on a wrong port is not defined"))
        refs = sorted((r for r in svc.config_refs if r.env and r.key), key=lambda r: str(r.env))
        if refs:
            r = refs[0]
            ref = {"kind": r.kind, "name": r.name, "key": f"{r.key}-v2", "env": r.env}
            title = f"{s} reads {r.env} from key {r.key}-v2 of {r.kind} {r.name}, which has no such key"
        else:
            name = f"{s}-credentials"
            while ("Secret", name) in config_objects:
                name += "-v2"
            env = f"{_dns(s).upper().replace('-', '_')}_API_TOKEN"
            ref = {"kind": "Secret", "name": name, "key": "token", "env": env}
            title = f"{s} reads {env} from Secret {name}, which the namespace does not hold"
        add(_fid(s, "missing-secret"), title, "configuration", "config-ref", s, scope, ("config-key", str(ref["env"])),
            {"action": "rollback"}, "config-ref", rollout=True,
            config={"config_ref": ref, "summary": f"chore({s}): read credentials from a Secret",
                    "author": "platform-bot"})
        if svc.service_port is not None:
            add(_fid(s, "service-selector"), f"{s}'s Service selects app={s}-v2 after a label rename; it has no "
                                             "endpoints", "configuration", "service-change", s, scope,
                ("service", s), {"action": "patch-service"}, "service-change",
                service_change={"selector": {"app": f"{s}-v2"}, "summary": f"refactor(k8s): select the {s}-v2 "
                                                                           "pods", "author": "platform-bot"})
        for dep in sorted(svc.dependencies, key=lambda d: (d.service, d.env or "")):
            if dep.env is None or dep.env not in svc.env:
                continue
            via = routes_via((s, dep.service))
            if not via:
                skipped.append((f"{s} -> {dep.service} address", "no route needs that call"))
                continue
            value = svc.env[dep.env]
            m = re.search(r":(\d+)(?=/|$)", value)
            if m:
                bad = f"{value[:m.start(1)]}{int(m.group(1)) + 1}{value[m.end(1):]}"
                what = f"port {int(m.group(1)) + 1}"
            else:
                host = re.sub(r"^[a-z]+://", "", value).split("/")[0].split(".")[0]
                bad = value.replace(host, f"{host}-v2", 1)
                what = f"host {host}-v2, which does not resolve"
            add(_fid(s, dep.service, "address"), f"{s}'s {dep.env} points at {dep.service} on {what}",
                "configuration", "config-patch", s, via, ("config-key", dep.env),
                {"action": "set-config", "key": dep.env, "value": value}, "address",
                config={"env": {dep.env: bad}, "summary": f"config({s}): move {dep.service} to the new address",
                        "author": "ops@" + app.namespace + ".example"})
    edges = sorted({e for rc in reach.values() for e in rc.edges})
    for caller, callee in edges:
        if not app.service(callee).in_application or not app.service(caller).in_application:
            continue
        via = routes_via((caller, callee))
        add(_fid(caller, callee, "delay"), f"{DELAY_MS / 1000:g} s of added latency on {caller} -> {callee} (a stale "
                                           "tc rule from a chaos drill)", "runtime", "network-delay", callee, via,
            ("network", f"{caller}->{callee}"), {"action": "restart-pods"}, "delay",
            runtime={"caller": caller, "delay_ms": DELAY_MS})
        add(_fid(caller, callee, "packet-loss"), f"{LOSS_DROP:.0%} packet loss and {LOSS_DELAY_MS:g} ms delay on "
                                                 f"{caller} -> {callee}", "runtime", "network-delay", callee, via,
            ("network", f"{caller}->{callee}"), {"action": "restart-pods"}, "loss",
            runtime={"caller": caller, "delay_ms": LOSS_DELAY_MS, "drop": LOSS_DROP})
    if source is not None:
        from faults.codegen import code_faults

        code, code_skipped = code_faults(app, source, {s.name: routes_to(s.name) for s in app.services
                                                       if s.in_application and s.workload == "Deployment"})
        faults.extend(code)
        skipped.extend(code_skipped)
    if placement is None:
        skipped.append(("node and zone faults", "no pod placement given"))
        return GenericCatalog({"app": app.name, "faults": faults}, skipped)
    single = sorted(s.name for s in app.services if s.in_application and s.workload == "Deployment"
                    and s.replicas == 1 and routes_to(s.name) and len(placement.get(s.name, ())) == 1)
    def alone(s: str, nodes: Sequence[str]) -> bool:
        # Restarting the target (the remedy) repairs the probe only when no other single-replica
        # service is stranded with it: their pods would stay unready in the target's call tree.
        return not any(o != s and placement[o][0] in nodes for o in single)

    for s in single:
        if not alone(s, placement[s]):
            skipped.append((f"{s} node-kubelet-stop", f"another single-replica service shares its node "
                                                      f"{placement[s][0]}: restarting {s} would not repair it"))
            continue
        add(_fid(s, "node-kubelet-stop"), f"the kubelet on {s}'s node stops; the node goes Unknown and the single {s} "
                                          "replica drops out of its endpoints", "infrastructure", "kubelet-stop", s,
            routes_to(s), ("node", s), {"action": "restart-pods"}, "kubelet-stop", runtime={})
    for zi, zone in enumerate(app.cluster.zones):
        prefix = f"node-{'abcdefgh'[zi]}-"
        here = [s for s in single if placement[s][0].startswith(prefix)]
        if len(here) != 1:
            skipped.append((f"{zone} outage", "no single-replica service runs there: every service keeps a replica "
                                              "in the other zone" if not here else
                            f"{len(here)} single-replica services run there: restarting one would not repair it"))
            continue
        s = here[0]
        add(_fid(zone, "outage", s), f"{zone} goes dark; the single {s} replica is lost with it", "infrastructure",
            "zone-outage", s, routes_to(s), ("zone", zone), {"action": "restart-pods"}, "zone-outage",
            runtime={"zone": zone})
    return GenericCatalog({"app": app.name, "faults": faults}, skipped)


def _quantity(text: str) -> float:
    from engine.kubectl.quantity import parse_quantity

    return float(parse_quantity(text))


def header(app: AppModel, skipped: Sequence[tuple[str, str]], excluded: Sequence[tuple[str, str]] = ()) -> str:
    """The comment block a generated catalog file starts with: what it is, what was left out
    and why, and (after qualification) the faults excluded with the trial that failed."""
    lines = [f"Generic fault catalog of {app.name} ({app.title}), generated from its app model by `marathon faults "
             f"generate` ({GENERATOR}).",
             "Format: faults/catalog/FORMAT.md. Mechanisms and probes: faults/generic.py.",
             "",
             "Not generated, for any app:"]
    lines += [f"  * {why}" for why in LEFT_OUT]
    if skipped:
        lines += ["", "Skipped for this app:"]
        lines += [f"  * {what}: {why}" for what, why in skipped]
    if excluded:
        lines += ["", "Excluded by qualification (marathon faults qualify):"]
        lines += [f"  * {fid}: {why}" for fid, why in excluded]
    return "".join(f"# {line}".rstrip() + "\n" for line in lines)
