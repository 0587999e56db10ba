"""Injecting and reverting catalog faults on the embedded cluster: what
:meth:`Simulator.apply_fault <engine.sim.simulator.Simulator.apply_fault>`,
:meth:`~engine.sim.simulator.Simulator.revert_fault` and
:meth:`~engine.sim.simulator.Simulator.finish_revert` do.

:func:`inject` turns a :class:`~faults.spec.FaultSpec` into what a person or an outage
would have done: a commit shipped through the build pipeline, an env or resource change
rolled out, a flag turned on, a deployment scaled, a runaway process, a ``tc`` delay, a
store pod restarted, a zone lost. It returns a :class:`~engine.substrate.FaultInstance` that
remembers what it changed (change ids, the revision before, original values) so that
:func:`revert` (the orchestrator, at the end of the fault's lifetime) undoes it only where it
is still in place -- if an operator already fixed it, nothing is shipped. The reference
remedy, which works on any substrate, is :mod:`engine.sim.remedy`.

Effects of code changes are conditioned on the defect's *marker line* being in the
deployed source, so rolling back or shipping a patch that removes the line repairs the
fault by construction; nothing else in the simulator knows which fault is which.

File edits are computed on the repository *head* (:meth:`Simulator.head_files`), as a
person edits the tip of the branch, not the revision the pods happen to run: a fault's
change, a benign change and another fault's change to the same service compose, and a
revert reverse-applies only its own change.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from engine.apps.model import ConfigRef
from engine.sim.effects import EdgeEffect, Effect, EnvEquals, FlagEquals, LogHint, SourceContains
from engine.sim.remedy import fault_node, head_flag_variant, set_flag, undo_edit
from engine.substrate import ChangeRecord, FaultInstance, SubstrateError
from faults.people import revert_author, revert_subject
from faults.spec import NODE_MECHANISMS, EffectSpec, FaultSpec

if TYPE_CHECKING:
    from engine.sim.simulator import Simulator


def fault_effect(spec: FaultSpec, es: EffectSpec, eid: str, **extra: Any) -> Effect:
    """The simulator's :class:`Effect` for catalog effect ``es`` of ``spec`` under id ``eid``
    (``extra``: ``when``, ``started_before``...); the log hint names the change's file."""
    log = es.log
    file = spec.change.file if spec.change else ""
    hint = LogHint(message=log.message, exception=log.exception, file=file, function=log.function,
                   line=log.line, where=log.where) if log else LogHint(message="internal error")
    return Effect(
        id=eid,
        service=es.service or spec.target,
        operations=es.operations,
        error_rate=es.error_rate,
        latency_add_s=es.latency_ms / 1000.0,
        latency_factor=es.latency_factor,
        cpu_cores=es.cpu_cores,
        memory_leak_bps=es.memory_leak_mib_per_min * 2**20 / 60.0,
        memory_bytes=es.memory_mib * 2**20,
        crash_on_start=es.crash_on_start,
        exit_code=es.exit_code,
        readiness_fails=es.readiness_fails,
        liveness_fails=es.liveness_fails,
        match=tuple(sorted(es.match.items())),
        share=es.share,
        log=hint,
        **extra,
    )


def inject(sim: Simulator, spec: FaultSpec) -> FaultInstance:
    """Inject ``spec`` into ``sim`` now; returns what was done.

    Raises:
        SubstrateError: the change does not apply to the repository head or the current state.
        KeyError: the spec's target is not a workload of the simulation.
    """
    inst = FaultInstance(spec=spec, t_inject=sim.now)
    target = spec.target
    wl = sim.cluster.workloads[target]
    inst.revision_before = wl.revision
    m = spec.mechanism
    eid = f"fault:{spec.id}:{int(sim.now)}"
    if m == "code-change":
        ch = spec.change
        assert ch is not None and spec.effect is not None
        text = sim.head_files(target).get(ch.file)
        if text is None or ch.find not in text:
            raise SubstrateError(f"{spec.id}: {ch.file} at the repository head no longer contains the text to "
                                 "replace")
        rec = sim.deploy_change(target, files={ch.file: text.replace(ch.find, ch.replace, 1)}, summary=ch.summary,
                                author=ch.author)
        inst.changes.append(rec)
        # The defect lives in the target's source; when its symptom shows in another service (the
        # caller that trips over a silent wrong answer), the condition still reads the target's file.
        owner = target if spec.effect.service not in (None, target) else None
        sim.inject(fault_effect(spec, spec.effect, eid,
                           when=SourceContains(path=ch.file, text=ch.defect_marker(), service=owner)))
        inst.effect_ids.append(eid)
        return inst
    if m in OBJECT_MECHANISMS:
        _inject_object_fault(sim, spec, inst, eid)
        return inst
    cfg = spec.config
    if m in ("config-patch", "feature-flag", "scale", "resource-limit", "image", "readiness-probe", "liveness-probe"):
        assert cfg is not None
        tpl = wl.template
        if cfg.flag is not None:
            fl = cfg.flag
            inst.original["flag"] = head_flag_variant(sim, fl.service, fl.file, fl.name)
            inst.changes.append(set_flag(sim, fl.service, fl.file, fl.name, fl.variant, cfg.summary, cfg.author))
            if spec.effect is not None:
                sim.inject(fault_effect(spec, spec.effect, eid,
                                        when=FlagEquals(fl.service, fl.file, fl.name, fl.variant)))
                inst.effect_ids.append(eid)
            return inst
        if cfg.replicas is not None:
            inst.original["replicas"] = wl.replicas
            sim.scale(target, cfg.replicas, summary=cfg.summary, author=cfg.author)
            inst.changes.append(sim.deploy_history(target)[-1])
            return inst
        kwargs: dict[str, Any] = {}
        if cfg.env:
            env = tpl.env_dict()
            inst.original["env"] = {k: env.get(k) for k in cfg.env}
            kwargs["env"] = dict(cfg.env)
        if cfg.image is not None:
            inst.original["image"] = tpl.image
            kwargs["image"] = cfg.image
        if cfg.resources is not None:
            inst.original["resources"] = tpl.resources
            kwargs["resources"] = cfg.resources
        if cfg.readiness_probe is not None:
            inst.original["readiness_probe"] = tpl.readiness_probe
            kwargs["readiness_probe"] = cfg.readiness_probe
        if cfg.liveness_probe is not None:
            inst.original["liveness_probe"] = tpl.liveness_probe
            kwargs["liveness_probe"] = cfg.liveness_probe
        inst.changes.append(sim.deploy_change(target, summary=cfg.summary, author=cfg.author, **kwargs))
        if spec.effect is not None and cfg.env:
            key, value = next(iter(cfg.env.items()))
            sim.inject(fault_effect(spec, spec.effect, eid, when=EnvEquals(key=key, value=value)))
            inst.effect_ids.append(eid)
        return inst
    rt = spec.runtime
    assert rt is not None
    if m == "cpu-pressure":
        assert rt.cpu_cores is not None
        es = spec.effect or EffectSpec()
        sim.inject(fault_effect(spec, es.model_copy(update={"cpu_cores": rt.cpu_cores}), eid,
                                started_before=sim.now + 1e-6))
        inst.effect_ids.append(eid)
    elif m == "network-delay":
        assert rt.caller is not None and rt.delay_ms is not None
        sim.inject(EdgeEffect(id=eid, caller=rt.caller, callee=target, delay_s=rt.delay_ms / 1000.0, drop=rt.drop,
                              started_before=sim.now + 1e-6))
        inst.effect_ids.append(eid)
    elif m == "store-restart":
        assert rt.store is not None
        store_pods = sorted(p.name for p in sim.cluster.pods.values() if p.service == rt.store and not p.terminating)
        for name in store_pods:
            sim.restart_pod(name)
        inst.original["store_pods"] = store_pods
        if spec.effect is not None:
            sim.inject(fault_effect(spec, spec.effect, eid, started_before=sim.now + 1e-6))
            inst.effect_ids.append(eid)
    elif m == "zone-outage":
        assert rt.zone is not None
        inst.original["nodes"] = sim.zone_nodes(rt.zone)
        for node in inst.original["nodes"]:
            sim.set_node_ready(node, False)
        if spec.effect is not None:
            sim.inject(fault_effect(spec, spec.effect, eid))
            inst.effect_ids.append(eid)
    elif m in NODE_MECHANISMS:
        _inject_node_fault(sim, spec, inst, eid)
    return inst


OBJECT_MECHANISMS = ("config-ref", "service-change", "secret-rotation")
"""Faults in the Kubernetes objects around a workload: its ConfigMap/Secret references, its
Service, its Secret's values."""


def with_ref(refs: tuple[ConfigRef, ...], ref: ConfigRef) -> tuple[ConfigRef, ...]:
    """``refs`` with ``ref`` in place of the reference of the same env var (or volume), or
    appended."""
    out: list[ConfigRef] = []
    replaced = False
    for r in refs:
        if (ref.env is not None and r.env == ref.env) or (ref.volume is not None and r.volume == ref.volume):
            if not replaced:
                out.append(ref)
                replaced = True
        else:
            out.append(r)
    if not replaced:
        out.append(ref)
    return tuple(out)


def _inject_object_fault(sim: Simulator, spec: FaultSpec, inst: FaultInstance, eid: str) -> None:
    """``config-ref``: roll out the target's template with the fault's ConfigMap/Secret reference
    (a plain env var of the same name moves into the reference); new pods meet the kubelet's
    ``CreateContainerConfigError`` when the key or object does not exist, old pods keep
    serving while the rollout waits for them.

    ``service-change``: apply the target's Service with the fault's selector or targetPort;
    its endpoints empty (or point at a port nobody listens on) and every caller's connections
    are refused.

    ``secret-rotation``: new values under the Secret's keys, as a credential rotation does,
    with the backend already switched to them; pods that read the Secret into env vars at start
    keep the old value until they restart (env from a Secret is resolved once, at container
    creation), so the effect -- what the target does with stale credentials, e.g. an
    authentication error from its database -- holds on pods started before the rotation.
    """
    target = spec.target
    wl = sim.cluster.workloads[target]
    if spec.mechanism == "config-ref":
        cfg = spec.config
        assert cfg is not None and cfg.config_ref is not None
        tpl = wl.template
        inst.original["config_refs"] = tpl.config_refs
        ref = cfg.config_ref
        env: dict[str, str | None] = {}
        if ref.env is not None and ref.env in tpl.env_dict():
            inst.original["env"] = {ref.env: tpl.env_dict()[ref.env]}
            env = {ref.env: None}  # the plain env var moves into the reference
        inst.changes.append(sim.deploy_config_refs(target, with_ref(tpl.config_refs, ref), env=env,
                                                   summary=cfg.summary, author=cfg.author))
        return
    if spec.mechanism == "service-change":
        sc = spec.service_change
        assert sc is not None
        svc = sim.cluster.services[target]
        inst.original["selector"] = dict(svc.selector)
        inst.original["target_port"] = svc.target_port
        inst.changes.append(sim.patch_service(target, selector=sc.selector, target_port=sc.target_port,
                                              summary=sc.summary, author=sc.author))
        return
    rt = spec.runtime
    assert rt is not None and rt.secret is not None and spec.effect is not None
    inst.original["secret"] = rt.secret
    inst.changes.append(sim.rotate_config_object("Secret", rt.secret, service=target,
                                                 summary=f"rotate credentials in Secret {rt.secret}",
                                                 author="secrets-rotation"))
    sim.inject(fault_effect(spec, spec.effect, eid, started_before=sim.now + 1e-6))
    inst.effect_ids.append(eid)


def _revert_object_fault(sim: Simulator, inst: FaultInstance, summary: str, author: str) -> list[ChangeRecord]:
    """Undo an object fault where it is still in place: the template's references (and the env
    var moved into one) come back, the Service's selector and targetPort come back; a rotation
    ends (its effect is removed by the caller: the stale pods are replaced, or the old
    credentials are accepted again)."""
    spec = inst.spec
    target = spec.target
    out: list[ChangeRecord] = []
    if spec.mechanism == "config-ref":
        cfg = spec.config
        assert cfg is not None and cfg.config_ref is not None
        wl = sim.cluster.workloads[target]
        if cfg.config_ref in wl.template.config_refs:
            out.append(sim.deploy_config_refs(target, tuple(inst.original["config_refs"]),
                                              env=dict(inst.original.get("env") or {}), summary=summary,
                                              author=author))
    elif spec.mechanism == "service-change":
        sc = spec.service_change
        assert sc is not None
        svc = sim.cluster.services[target]
        if (sc.selector is None or svc.selector == sc.selector) and \
                (sc.target_port is None or svc.target_port == sc.target_port):
            out.append(sim.patch_service(target, selector=dict(inst.original["selector"]),
                                         target_port=inst.original["target_port"], summary=summary, author=author))
    return out


def _inject_node_fault(sim: Simulator, spec: FaultSpec, inst: FaultInstance, eid: str) -> None:
    """``kubelet-stop`` and ``node-network`` on one node (``runtime.node`` or the node of the
    target's first pod now, :func:`engine.sim.remedy.fault_node`).

    * ``kubelet-stop``: the kubelet stops (``systemctl stop kubelet``): the node stops
      reporting, its containers keep running and answering until the node lifecycle
      controller marks them not ready (then they leave the endpoints) and evicts them.
    * ``node-network``: a ``tc netem`` delay (and loss) on the veth of every pod on the node
      now: each request such a pod serves takes ``delay_ms`` longer, and ``drop`` of them are
      lost. Pods started later get fresh veths and are unaffected, so restarting the pods
      (on any node) ends it. Departure: lost calls count as errors of the serving pod at once
      (the simulator has no per-pod timeout share), and the delay is added to what a pod
      serves, not to the calls it makes.

    Raises:
        SubstrateError: the target has no scheduled pod to find the node by.
    """
    rt = spec.runtime
    assert rt is not None
    node = fault_node(sim, spec)
    if node is None:
        raise SubstrateError(f"{spec.id}: {spec.target} has no pod on a node to find the node by")
    inst.original["nodes"] = [node]
    if spec.mechanism == "kubelet-stop":
        sim.set_node_ready(node, False, network=False)
        return
    services = sorted({p.service for p in sim.pods() if p.node == node and not p.terminating})
    hint = LogHint(message=spec.effect.log.message if spec.effect and spec.effect.log else
                   "i/o timeout", exception="context deadline exceeded")
    for service in services:
        sid = f"{eid}:{service}"
        sim.inject(Effect(id=sid, service=service, node=node, latency_add_s=(rt.delay_ms or 0.0) / 1000.0,
                          error_rate=rt.drop, started_before=sim.now + 1e-6, log=hint))
        inst.effect_ids.append(sid)


def _remove_effects(sim: Simulator, inst: FaultInstance) -> None:
    for eid in inst.effect_ids:
        with contextlib.suppress(SubstrateError):  # already gone
            sim.revert(eid)
    inst.effect_ids = []


def revert(sim: Simulator, inst: FaultInstance) -> list[ChangeRecord]:
    """Undo what the injection still has in place (the orchestrator's end-of-life revert).

    Code and config changes are reverted by shipping the inverse change, as a person would
    (``Revert "<subject>"``, by a member of the service's team: :mod:`faults.people`);
    runtime and infrastructure faults end (effects removed, nodes back). A code change is
    reverse-applied on the repository head -- only its own hunk, so changes made since stay
    -- and shipped only while the head still has the defect's marker (an operator's patch
    may have removed it already); a flag is reset only while the head's flag file still
    has the fault's variant. Returns the changes shipped. Behaviour effects tied to a
    defect stay registered until the inverse change is deployed (see :func:`finish_revert`).
    """
    spec = inst.spec
    target = spec.target
    out: list[ChangeRecord] = []
    summary = revert_subject(inst.changes[0].summary if inst.changes else spec.title)
    author = revert_author(sim.app.name, spec, sim.now)
    m = spec.mechanism
    if m in OBJECT_MECHANISMS:
        out.extend(_revert_object_fault(sim, inst, summary, author))
    elif m == "code-change":
        ch = spec.change
        assert ch is not None
        text = sim.head_files(target).get(ch.file, "")
        if ch.defect_marker() in text:
            out.append(sim.deploy_change(target, files={ch.file: undo_edit(ch.find, ch.replace, ch.defect_marker(),
                                                                           text)},
                                         summary=summary, author=author))
    elif spec.config is not None:
        cfg = spec.config
        wl = sim.cluster.workloads[target]
        if cfg.flag is not None:
            fl = cfg.flag
            if head_flag_variant(sim, fl.service, fl.file, fl.name) == fl.variant:
                out.append(set_flag(sim, fl.service, fl.file, fl.name, str(inst.original.get("flag") or "off"),
                                    summary, author))
        elif cfg.replicas is not None:
            if wl.replicas == cfg.replicas:
                sim.scale(target, int(inst.original["replicas"]), summary=summary, author=author)
                out.append(sim.deploy_history(target)[-1])
        else:
            tpl = wl.template
            kwargs: dict[str, Any] = {}
            if cfg.env:
                env = tpl.env_dict()
                still = {k: v for k, v in cfg.env.items() if env.get(k) == v}
                if still:
                    kwargs["env"] = {k: inst.original["env"].get(k) for k in still}
            if cfg.image is not None and tpl.image == cfg.image:
                kwargs["image"] = inst.original["image"]
            if cfg.resources is not None and tpl.resources == cfg.resources:
                kwargs["resources"] = inst.original["resources"]
            if cfg.readiness_probe is not None and tpl.readiness_probe == cfg.readiness_probe:
                kwargs["readiness_probe"] = inst.original["readiness_probe"]
            if cfg.liveness_probe is not None and tpl.liveness_probe == cfg.liveness_probe:
                kwargs["liveness_probe"] = inst.original["liveness_probe"]
            if kwargs:
                out.append(sim.deploy_change(target, summary=summary, author=author, **kwargs))
    elif m == "zone-outage":
        for node in inst.original.get("nodes", []):
            sim.set_node_ready(node, True)
    elif m == "kubelet-stop":
        for node in inst.original.get("nodes", []):
            sim.set_node_ready(node, True, network=False)  # systemctl start kubelet
    inst.t_revert = sim.now
    inst.revert_changes = out
    if not any(c.status == "building" for c in out):
        _remove_effects(sim, inst)
    return out


def finish_revert(sim: Simulator, inst: FaultInstance) -> bool:
    """Unregister a reverted fault's effects once its inverse change is deployed; True when done."""
    if not inst.effect_ids:
        return True
    if any(c.status == "building" for c in inst.revert_changes):
        return False
    _remove_effects(sim, inst)
    return True
