"""A catalog fault's reference remedy, and the edits a person makes to cause or undo one.

The remedy of a :class:`~faults.spec.FaultSpec` (``rollback``, ``revert-patch``,
``set-config``, ``set-flag``, ``scale``, ``restart``, ``patch-service``) becomes operator tool calls
(:func:`remedy_steps`), computed from the cluster's state now; the oracle operator makes them
through the tools and the policy layer. Everything here reads and writes the cluster through
:class:`~engine.substrate.Substrate` only, so it holds for any substrate; how a substrate
injects and reverts a fault is its own (the simulator's: :mod:`engine.sim.faults`).

File edits are computed on the repository *head* (:meth:`Substrate.head_files`), as a person
edits the tip of the branch, not the revision the pods happen to run: a fault's change, a
benign change and another fault's change to the same service compose, and an undo
reverse-applies only its own hunk. Only :func:`defect_deployed` reads the deployed source.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any

from engine.substrate import ChangeRecord, FaultInstance, Substrate, SubstrateError
from faults.spec import FaultSpec


@dataclass(frozen=True)
class RemedyStep:
    """One operator action of a reference remedy, in the operator tools' vocabulary."""

    tool: str
    args: dict[str, Any]


def head_flag_variant(sub: Substrate, service: str, path: str, flag: str) -> str | None:
    """The ``defaultVariant`` of a flagd flag in the repository head's flag file, or None when
    the file or the flag is missing or the file does not parse."""
    try:
        doc = json.loads(sub.head_files(service).get(path, "{}"))
        return str(doc["flags"][flag]["defaultVariant"])
    except (ValueError, KeyError, TypeError):
        return None


def set_flag(sub: Substrate, service: str, path: str, flag: str, variant: str, summary: str,
             author: str) -> ChangeRecord:
    """Commit the flag file of the repository head with ``flag`` set to ``variant`` (no build:
    a flag file rolls out as a ConfigMap change).

    Raises:
        SubstrateError: the flag is not defined in the head's flag file.
        KeyError: the head has no file at ``path``.
    """
    files = sub.head_files(service)
    doc = json.loads(files[path])
    if flag not in doc.get("flags", {}):
        raise SubstrateError(f"flag {flag!r} is not defined in {service}:{path}")
    doc["flags"][flag]["defaultVariant"] = variant
    return sub.deploy_change(service, files={path: json.dumps(doc, indent=2) + "\n"}, summary=summary,
                             author=author, build=False)


def undo_edit(find: str, replace: str, marker: str, text: str) -> str:
    """``text`` with an injected ``find`` -> ``replace`` edit reverse-applied (its first
    occurrence, where the injection put it); when someone edited the hunk since and
    ``replace`` is no longer there, the lines holding the defect's ``marker`` are dropped."""
    if replace in text:
        return text.replace(replace, find, 1)
    return "\n".join(line for line in text.split("\n") if marker not in line)


def defect_deployed(sub: Substrate, inst: FaultInstance) -> bool:
    """Whether a code-change fault's defective line is in the deployed source."""
    ch = inst.spec.change
    if ch is None:
        return False
    return ch.defect_marker() in sub.source_files(inst.spec.target).get(ch.file, "")


def remedy_steps(sub: Substrate, inst: FaultInstance) -> list[RemedyStep]:
    """The reference remedy as operator tool calls (``rollback``, ``deploy_patch``, ``set_config``,
    ``scale_deployment``, ``restart_pod``), computed from the current state; a
    ``deploy_patch`` diff is made against the repository head, where the tool applies it.

    A restart names every pod of the remedy's service not terminating (in the remedy's zone,
    when it names one), by name.
    """
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
        step = revert_commit_step(sub, inst)
        return [step] if step is not None else []
    if r.action == "set-config":
        assert r.key is not None
        return [RemedyStep("set_config", {"service": service, "key": r.key, "value": r.value})]
    if r.action == "set-flag":
        assert spec.config is not None and spec.config.flag is not None
        fl = spec.config.flag
        return [RemedyStep("set_config", {"service": fl.service, "key": fl.name,
                                          "value": r.value or str(inst.original.get("flag") or "off")})]
    if r.action == "patch-service":
        # Re-apply the Service as the app's manifest has it (the selector and targetPort the
        # fault's edit replaced).
        args = {"service": service}
        if "selector" in inst.original:
            args["selector"] = dict(inst.original["selector"])
        if isinstance(inst.original.get("target_port"), int):
            args["target_port"] = inst.original["target_port"]
        return [RemedyStep("patch_service", args)]
    if r.action == "scale":
        replicas = r.replicas if r.replicas is not None else int(inst.original.get("replicas", 2))
        return [RemedyStep("scale_deployment", {"deployment": service, "replicas": replicas})]
    pods = sorted(p.name for p in sub.pods(service) if not p.terminating and (r.zone is None or p.zone == r.zone))
    return [RemedyStep("restart_pod", {"pod": name}) for name in pods]


def fault_node(sub: Substrate, spec: FaultSpec) -> str | None:
    """The node a node fault (``kubelet-stop``, ``node-network``) hits: ``runtime.node`` while
    one of the target's pods runs there (warm-start placement does not depend on the seed), else
    the node running the target's first pod by name (not terminating), so the fault always hits
    its target; None when the target has no scheduled pod."""
    pods = sorted((p for p in sub.pods(spec.target) if p.node is not None and not p.terminating),
                  key=lambda p: p.name)
    if spec.runtime is not None and spec.runtime.node is not None and any(p.node == spec.runtime.node for p in pods):
        return spec.runtime.node
    return pods[0].node if pods else None


def revert_commit_step(sub: Substrate, inst: FaultInstance) -> RemedyStep | None:
    """A ``deploy_patch`` that removes a code-change fault's defect from the repository head
    (what ``git revert`` of its commit does), or None when the head no longer has it.

    After a rollback, this is what keeps the pipeline from deploying the defect again with the
    next build from the head."""
    ch = inst.spec.change
    if ch is None:
        return None
    service = inst.spec.remedy.service or inst.spec.target
    text = sub.head_files(service).get(ch.file, "")
    if ch.defect_marker() not in text:
        return None
    return RemedyStep("deploy_patch", {"service": service, "diff": unified_diff(
        ch.file, text, undo_edit(ch.find, ch.replace, ch.defect_marker(), text)), "summary": f"fix: undo {ch.summary}"})


def unified_diff(path: str, before: str, after: str) -> str:
    """A unified diff of one file (``a/`` and ``b/`` prefixes, as git writes it)."""
    lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                 fromfile=f"a/{path}", tofile=f"b/{path}")
    return "".join(lines)
