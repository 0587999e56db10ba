"""The oracle: knows the ground truth and applies each fault's reference remedy.

For qualification and score validation only -- never on a leaderboard (its runs are
marked ``"oracle": true`` in ``run.start``). Every invocation, for each active fault it has
not handled yet and whose alerts have started (attributed with the scorer's own rules,
:mod:`scoring.attribution`), it reports an incident holding exactly those alerts, files
the exact root cause (target, category, responsible artifact) and performs the reference
remedy (:func:`faults.inject.remedy_steps`) through the same tools and policy layer as
any operator. It declares an incident resolved once the fault's symptom probe passes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from faults.inject import defect_deployed, remedy_steps
from faults.probes import evaluate_probe
from scoring.attribution import FaultWindow, attribute

if TYPE_CHECKING:
    from alerts.history import AlertInstance
    from engine.orchestrator import FaultRecord, Invocation


@dataclass
class OracleOperator:
    """See module docstring."""

    name: str = "oracle"
    handled: dict[str, str] = field(default_factory=dict)
    """Fault id -> incident id."""
    resolved: set[str] = field(default_factory=set)
    claimed: set[int] = field(default_factory=set)

    def invoke(self, inv: Invocation) -> None:
        run = inv.tools.run
        sim = run.sim
        records = [r for r in run.faults.values() if r.instance is not None]
        windows = [FaultWindow(r.spec.id, r.spec.target, r.instance.t_inject, r.instance.t_revert, r.spec.scope)
                   for r in records if r.instance is not None]
        services = [s.name for s in sim.app.services]
        edges = sim.app.edges()
        owner: dict[int, str | None] = {}
        for a in inv.alerts:
            owner[a.id] = attribute(a.labels, a.active_at, windows, services, edges)
        for rec in sorted(records, key=lambda r: r.scheduled.at):
            inst = rec.instance
            assert inst is not None
            fid = rec.spec.id
            if fid in self.handled:
                self._maybe_resolve(inv, rec)
                continue
            if not inst.active or not _bites(inv, rec):
                continue
            mine = [a for a in inv.alerts if owner.get(a.id) == fid and a.id not in self.claimed
                    and a.state in ("pending", "firing")]
            if not mine:
                continue
            self._handle(inv, rec, mine)

    def _handle(self, inv: Invocation, rec: FaultRecord, alerts: list[AlertInstance]) -> None:
        spec = rec.spec
        inst = rec.instance
        assert inst is not None
        ids = [f"A-{a.id}" for a in alerts]
        res = inv.call("report_incident", alerts=ids, title=f"{spec.title} ({spec.target})")
        if not res.ok:
            return
        incident = str(res.data["incident"])
        self.handled[spec.id] = incident
        self.claimed.update(a.id for a in alerts)
        artifact = inst.change_ids[0] if inst.change_ids and spec.artifact.kind == "change" else spec.artifact.ref
        inv.call("report_rca", incident=incident, service=spec.target, category=spec.category, artifact=artifact,
                 summary=f"{spec.title}. Remedy: {spec.remedy.action}.")
        for step in remedy_steps(inv.tools.run.sim, inst):
            inv.tools.call(step.tool, {**step.args, "incident": incident})

    def _maybe_resolve(self, inv: Invocation, rec: FaultRecord) -> None:
        fid = rec.spec.id
        if fid in self.resolved:
            return
        if evaluate_probe(inv.tools.run.sim, rec.spec.probe, rec.spec.probe_anchor).ok:
            inv.call("resolve_incident", incident=self.handled[fid])
            self.resolved.add(fid)


def _bites(inv: Invocation, rec: FaultRecord) -> bool:
    """Whether the fault's change has reached the cluster (a rollback before then is a no-op)."""
    inst = rec.instance
    assert inst is not None
    if rec.spec.mechanism == "code-change":
        return defect_deployed(inv.tools.run.sim, inst)
    return all(c.status == "deployed" for c in inst.changes)
