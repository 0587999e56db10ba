"""Injecting, reverting and remedying catalog faults on the embedded cluster.

:func:`inject` turns a :class:`~faults.spec.FaultSpec` into what a person or an outage
would have done: a commit shipped through the build pipeline, an env or resource change
rolled out, a flag turned on, a deployment scaled, a runaway process, a ``tc`` delay, a
store pod restarted, a zone lost. It returns a :class:`FaultInstance` that remembers what
it changed (change ids, the revision before, original values) so that:

* :func:`revert` (the orchestrator, at the end of the fault's lifetime) undoes it only
  where it is still in place -- if an operator already fixed it, nothing is shipped;
* :func:`remedy_steps` gives the reference remedy as operator tool calls, which the oracle
  operator makes through the tools and the policy layer.

Effects of code changes are conditioned on the defect's *marker line* being in the
deployed source, so rolling back or shipping a patch that removes the line repairs the
fault by construction; nothing else in the simulator knows which fault is which.

File edits are computed on the repository *head* (:meth:`Simulator.head_files`), as a
person edits the tip of the branch, not the revision the pods happen to run: a fault's
change, a benign change and another fault's change to the same service compose, and a
revert reverse-applies only its own change. Only :func:`defect_deployed` reads the
deployed source.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from typing import Any

from engine.sim.effects import EdgeEffect, Effect, EnvEquals, FlagEquals, LogHint, SourceContains
from engine.sim.simulator import Simulator
from engine.substrate import ChangeRecord, SubstrateError
from faults.people import revert_author, revert_subject
from faults.spec import EffectSpec, FaultSpec


@dataclass
class FaultInstance:
    """A fault as injected into one run.

    Attributes:
        spec: the catalog entry.
        t_inject: run time of injection, seconds.
        changes: change records the injection shipped (code, config, flag).
        revision_before: the target Deployment's revision before injection.
        original: values the injection replaced (env, replicas, image, resources, flag).
        effect_ids: behaviour effects registered in the simulator.
        t_revert: run time the orchestrator reverted it, or None while active.
        revert_changes: change records of the revert.
    """

    spec: FaultSpec
    t_inject: float
    changes: list[ChangeRecord] = field(default_factory=list)
    revision_before: int | None = None
    original: dict[str, Any] = field(default_factory=dict)
    effect_ids: list[str] = field(default_factory=list)
    t_revert: float | None = None
    revert_changes: list[ChangeRecord] = field(default_factory=list)

    @property
    def active(self) -> bool:
        return self.t_revert is None

    @property
    def change_ids(self) -> list[str]:
        return [c.id for c in self.changes]

    def artifact_refs(self) -> list[str]:
        """Every string an RCA may name as the artifact: change ids, commits, the spec's ref."""
        refs = [self.spec.artifact.ref]
        for c in self.changes:
            refs.append(c.id)
            if c.commit:
                refs.extend([c.commit, c.commit[:7]])
            if c.image:
                refs.append(c.image)
        return refs


def _effect(spec: FaultSpec, es: EffectSpec, eid: str, **extra: Any) -> Effect:
    log = es.log
    file = spec.change.file if spec.change else ""
    hint = LogHint(message=log.message, exception=log.exception, file=file, function=log.function,
                   line=log.line) if log else LogHint(message=f"{spec.title}")
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


def _head_flag_variant(sim: Simulator, service: str, path: str, flag: str) -> str | None:
    """The ``defaultVariant`` of a flagd flag in the repository head's flag file, or None."""
    try:
        doc = json.loads(sim.head_files(service).get(path, "{}"))
        return str(doc["flags"][flag]["defaultVariant"])
    except (ValueError, KeyError, TypeError):
        return None


def _set_flag(sim: Simulator, service: str, path: str, flag: str, variant: str, summary: str,
              author: str) -> ChangeRecord:
    """Commit the flag file of the repository head with ``flag`` set to ``variant`` (no build).

    Raises:
        SubstrateError: the flag is not defined in the head's flag file.
    """
    files = sim.head_files(service)
    doc = json.loads(files[path])
    if flag not in doc.get("flags", {}):
        raise SubstrateError(f"flag {flag!r} is not defined in {service}:{path}")
    doc["flags"][flag]["defaultVariant"] = variant
    return sim.deploy_change(service, files={path: json.dumps(doc, indent=2) + "\n"}, summary=summary,
                             author=author, build=False)


def inject(sim: Simulator, spec: FaultSpec) -> FaultInstance:
    """Inject ``spec`` into ``sim`` now; returns what was done.

    Raises:
        SubstrateError: the change does not apply to the repository head or the current state.
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
        sim.inject(_effect(spec, spec.effect, eid, when=SourceContains(path=ch.file, text=ch.defect_marker())))
        inst.effect_ids.append(eid)
        return inst
    cfg = spec.config
    if m in ("config-patch", "feature-flag", "scale", "resource-limit", "image", "readiness-probe"):
        assert cfg is not None
        tpl = wl.template
        if cfg.flag is not None:
            fl = cfg.flag
            inst.original["flag"] = _head_flag_variant(sim, fl.service, fl.file, fl.name)
            inst.changes.append(_set_flag(sim, fl.service, fl.file, fl.name, fl.variant, cfg.summary, cfg.author))
            if spec.effect is not None:
                sim.inject(_effect(spec, spec.effect, eid, when=FlagEquals(fl.service, fl.file, fl.name, fl.variant)))
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
        inst.changes.append(sim.deploy_change(target, summary=cfg.summary, author=cfg.author, **kwargs))
        if spec.effect is not None and cfg.env:
            key, value = next(iter(cfg.env.items()))
            sim.inject(_effect(spec, spec.effect, eid, when=EnvEquals(key=key, value=value)))
            inst.effect_ids.append(eid)
        return inst
    rt = spec.runtime
    assert rt is not None
    if m == "cpu-pressure":
        assert rt.cpu_cores is not None
        es = spec.effect or EffectSpec()
        sim.inject(_effect(spec, es.model_copy(update={"cpu_cores": rt.cpu_cores}), eid, started_before=sim.now + 1e-6))
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
            sim.inject(_effect(spec, spec.effect, eid, started_before=sim.now + 1e-6))
            inst.effect_ids.append(eid)
    elif m == "zone-outage":
        assert rt.zone is not None
        inst.original["nodes"] = sim.zone_nodes(rt.zone)
        for node in inst.original["nodes"]:
            sim.set_node_ready(node, False)
        if spec.effect is not None:
            sim.inject(_effect(spec, spec.effect, eid))
            inst.effect_ids.append(eid)
    return inst


def _remove_effects(sim: Simulator, inst: FaultInstance) -> None:
    for eid in inst.effect_ids:
        with contextlib.suppress(SubstrateError):  # already gone
            sim.revert(eid)
    inst.effect_ids = []


def defect_deployed(sim: Simulator, inst: FaultInstance) -> bool:
    """Whether a code-change fault's defective line is in the deployed source."""
    ch = inst.spec.change
    if ch is None:
        return False
    return ch.defect_marker() in sim.source_files(inst.spec.target).get(ch.file, "")


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
    if m == "code-change":
        ch = spec.change
        assert ch is not None
        text = sim.head_files(target).get(ch.file, "")
        if ch.defect_marker() in text:
            out.append(sim.deploy_change(target, files={ch.file: _undo(ch.find, ch.replace, ch.defect_marker(), text)},
                                         summary=summary, author=author))
    elif spec.config is not None:
        cfg = spec.config
        wl = sim.cluster.workloads[target]
        if cfg.flag is not None:
            fl = cfg.flag
            if _head_flag_variant(sim, fl.service, fl.file, fl.name) == fl.variant:
                out.append(_set_flag(sim, fl.service, fl.file, fl.name, str(inst.original.get("flag") or "off"),
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
            if kwargs:
                out.append(sim.deploy_change(target, summary=summary, author=author, **kwargs))
    elif m == "zone-outage":
        for node in inst.original.get("nodes", []):
            sim.set_node_ready(node, True)
    inst.t_revert = sim.now
    inst.revert_changes = out
    if not any(c.status == "building" for c in out):
        _remove_effects(sim, inst)
    return out


def _undo(find: str, replace: str, marker: str, text: str) -> str:
    """``text`` with an injected ``find`` -> ``replace`` edit reverse-applied (its first
    occurrence, where the injection put it); when someone edited the hunk since and
    ``replace`` is no longer there, the lines holding the defect's ``marker`` are dropped."""
    if replace in text:
        return text.replace(replace, find, 1)
    return "\n".join(line for line in text.split("\n") if marker not in line)


def finish_revert(sim: Simulator, inst: FaultInstance) -> bool:
    """Unregister a reverted fault's effects once its inverse change is deployed; True when done."""
    if not inst.effect_ids:
        return True
    if any(c.status == "building" for c in inst.revert_changes):
        return False
    _remove_effects(sim, inst)
    return True


@dataclass(frozen=True)
class RemedyStep:
    """One operator action of a reference remedy, in the operator tools' vocabulary."""

    tool: str
    args: dict[str, Any]


def remedy_steps(sim: Simulator, inst: FaultInstance) -> list[RemedyStep]:
    """The reference remedy as operator tool calls (``rollback``, ``deploy_patch``, ``set_config``,
    ``scale_deployment``, ``restart_pod``), computed from the current state; a
    ``deploy_patch`` diff is made against the repository head, where the tool applies it."""
    spec = inst.spec
    r = spec.remedy
    service = r.service or spec.target
    if r.action == "rollback":
        revision = inst.revision_before
        if spec.config is not None and spec.config.flag is not None:
            service = spec.config.flag.service
            revision = None
        args: dict[str, Any] = {"deployment": service}
        if revision is not None:
            args["revision"] = revision
        return [RemedyStep("rollback", args)]
    if r.action == "revert-patch":
        step = revert_commit_step(sim, inst)
        return [step] if step is not None else []
    if r.action == "set-config":
        assert r.key is not None
        return [RemedyStep("set_config", {"service": service, "key": r.key, "value": r.value})]
    if r.action == "set-flag":
        assert spec.config is not None and spec.config.flag is not None
        fl = spec.config.flag
        return [RemedyStep("set_config", {"service": fl.service, "key": fl.name,
                                          "value": r.value or str(inst.original.get("flag") or "off")})]
    if r.action == "scale":
        replicas = r.replicas if r.replicas is not None else int(inst.original.get("replicas", 2))
        return [RemedyStep("scale_deployment", {"deployment": service, "replicas": replicas})]
    pods = sorted(p.name for p in sim.cluster.pods.values()
                  if p.service == service and not p.terminating and (r.zone is None or p.zone == r.zone))
    return [RemedyStep("restart_pod", {"pod": name}) for name in pods]


def revert_commit_step(sim: Simulator, inst: FaultInstance) -> RemedyStep | None:
    """A ``deploy_patch`` that removes a code-change fault's defect from the repository head
    (what ``git revert`` of its commit does), or None when the head no longer has it.

    After a rollback, this is what keeps the pipeline from deploying the defect again with the
    next build from the head."""
    ch = inst.spec.change
    if ch is None:
        return None
    service = inst.spec.remedy.service or inst.spec.target
    text = sim.head_files(service).get(ch.file, "")
    if ch.defect_marker() not in text:
        return None
    return RemedyStep("deploy_patch", {"service": service, "diff": unified_diff(
        ch.file, text, _undo(ch.find, ch.replace, ch.defect_marker(), text)), "summary": f"fix: undo {ch.summary}"})


def unified_diff(path: str, before: str, after: str) -> str:
    """A unified diff of one file (``a/`` and ``b/`` prefixes, as git writes it)."""
    import difflib

    lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                 fromfile=f"a/{path}", tofile=f"b/{path}")
    return "".join(lines)
