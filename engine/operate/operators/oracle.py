"""The oracle: knows the ground truth and applies each fault's reference remedy.

For qualification and score validation only -- never on a leaderboard (its runs are
marked ``"oracle": true`` in ``run.start``, and ``marathon score`` leaves them out). It shows
what a perfect operator earns through the same tools, policy and scorer as everyone else.
Every invocation, for each live fault whose symptom probe is failing:

1. **correlate**: once alerts support the fault (:func:`scoring.attribution.candidates`, the
   scorer's own rule: the alert names the target or a caller of it, and was active during
   the fault's window), it reports one incident holding exactly those alerts -- an alert
   already used for another fault's incident may be used again, since under overlap one
   alert can be evidence of two faults;
2. **localize**: it files the exact root cause (target, category, responsible artifact);
3. **repair**: it performs the reference remedy (:func:`engine.sim.remedy.remedy_steps`) through
   the tools and the policy layer -- a restart as a rolling restart, as an SRE does it: one
   ready pod at a time, the next once every other pod of the service is ready again (pods
   that are not ready anyway, such as those stranded on a lost node, at once); if the probe
   is still failing once the remedy's time to take effect
   (:func:`faults.timing.remedy_grace_seconds`) has passed, it applies the remedy again,
   computed from the state then. Once the rollback of a code change has rolled out, it also
   reverts the commit on the repository head (:func:`engine.sim.remedy.revert_commit_step`), so
   that the next build from the head does not deploy the defect again (shipped earlier, the
   revert's rollout would supersede the rollback's halfway and keep a defective pod serving);
4. **declare**: it resolves the incident only once the repair is durable -- the probe has
   passed through the whole outcome soak (:data:`scoring.gates.SOAK_S`) and
   :data:`RESOLVE_MARGIN_S` more -- or the fault has been reverted, so it never makes a
   false declaration.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from engine.sim.remedy import defect_deployed, remedy_steps, revert_commit_step
from faults.timing import remedy_grace_seconds
from scoring.attribution import FaultWindow, candidates
from scoring.gates import SOAK_S

if TYPE_CHECKING:
    from alerts.history import AlertInstance
    from engine.operate.invocation import GroundTruth, Invocation

FaultRecord = Any
"""The run's record of one fault (:class:`engine.run.orchestrator.FaultRecord`), read through
:attr:`engine.operate.invocation.Invocation.truth`; operators never import the run."""


RESOLVE_MARGIN_S = 180.0
"""How long past a full soak the oracle waits before declaring a repair: the scorer may credit
the recovery from a later sample than its first (a restart's last errors in the route's SLIs)."""


@dataclass
class OracleOperator:
    """See module docstring."""

    name: str = "oracle"
    ground_truth: ClassVar[bool] = True
    """Receives :attr:`engine.operate.invocation.Invocation.truth` (the only operators that do)."""
    handled: dict[str, str] = field(default_factory=dict)
    """Fault id -> incident id."""
    remedied_at: dict[str, float] = field(default_factory=dict)
    """Fault id -> run time of its latest remedy."""
    resolved: set[str] = field(default_factory=set)
    restarts: dict[str, list[str]] = field(default_factory=dict)
    """Fault id -> pods of its rolling restart not restarted yet."""
    revert_pending: set[str] = field(default_factory=set)
    """Code-change faults rolled back whose commit is still to be reverted on the head."""

    def invoke(self, inv: Invocation) -> None:
        truth = _truth(inv)
        records = [r for r in truth.faults.values() if r.instance is not None]
        windows = [FaultWindow(r.spec.id, r.spec.target, r.instance.t_inject, r.instance.t_revert, r.spec.scope,
                               frozenset(r.services))
                   for r in records if r.instance is not None]
        services = [s.name for s in inv.app.services]
        edges = inv.app.edges()
        routes = {(r.entry.service, r.entry.operation): r.name for r in inv.app.routes}
        support: dict[int, dict[str, str]] = {
            a.id: candidates(a.labels, a.active_at, a.ended_at, windows, services, edges, routes) for a in inv.alerts}
        for rec in sorted(records, key=lambda r: r.scheduled.at):
            inst = rec.instance
            assert inst is not None
            fid = rec.spec.id
            if fid in self.handled:
                self._follow_up(inv, rec)
                continue
            if not inst.active or not _failing(rec) or not _bites(inv, rec):
                continue
            mine = [a for a in inv.alerts if fid in support[a.id]]
            if mine:
                self._handle(inv, rec, mine)

    def _handle(self, inv: Invocation, rec: FaultRecord, alerts: list[AlertInstance]) -> None:
        spec = rec.spec
        inst = rec.instance
        assert inst is not None
        res = inv.call("report_incident", alerts=[f"A-{a.id}" for a in alerts], title=f"{spec.title} ({spec.target})")
        if not res.ok:
            return
        incident = str(res.data["incident"])
        self.handled[spec.id] = incident
        artifact = inst.change_ids[0] if inst.change_ids and spec.artifact.kind == "change" else spec.artifact.ref
        inv.call("report_rca", incident=incident, service=spec.target, category=spec.category, artifact=artifact,
                 summary=f"{spec.title}. Remedy: {spec.remedy.action}.")
        self._remedy(inv, rec, incident)

    def _remedy(self, inv: Invocation, rec: FaultRecord, incident: str) -> None:
        inst = rec.instance
        assert inst is not None
        self.remedied_at[rec.spec.id] = inv.now
        steps = remedy_steps(_truth(inv).cluster, inst)
        if steps and all(step.tool == "restart_pod" for step in steps):
            self.restarts[rec.spec.id] = [str(step.args["pod"]) for step in steps]
            self._roll(inv, rec, incident)
            return
        for step in steps:
            inv.call_tool(step.tool, {**step.args, "incident": incident})
        if rec.spec.mechanism == "code-change" and rec.spec.remedy.action == "rollback":
            self.revert_pending.add(rec.spec.id)

    def _roll(self, inv: Invocation, rec: FaultRecord, incident: str) -> None:
        """Restart the fault's pending pods: stuck ones at once, healthy ones one at a time."""
        pending = self.restarts.get(rec.spec.id, [])
        cluster = _truth(inv).cluster
        while pending:
            pods = {p.name: p for p in cluster.pods() if not p.terminating}
            name = pending[0]
            pod = pods.get(name)
            if pod is None:
                pending.pop(0)  # gone already (evicted, or replaced)
                continue
            others = [p for p in pods.values() if p.service == pod.service and p.name != name]
            if pod.ready and not all(p.ready for p in others):
                return  # wait until the previous replacement is ready
            inv.call_tool("restart_pod", {"pod": name, "incident": incident})
            pending.pop(0)
            # Read again: a restart carried out has taken the pod out of service already.
            if any(p.uid == pod.uid and p.ready for p in cluster.pods()):
                return  # one healthy pod per invocation

    def _follow_up(self, inv: Invocation, rec: FaultRecord) -> None:
        fid = rec.spec.id
        if fid in self.resolved:
            return
        inst = rec.instance
        assert inst is not None
        truth = _truth(inv)
        now = inv.now
        incident = self.handled[fid]
        if not inst.active:
            inv.call("resolve_incident", incident=incident)
            self.resolved.add(fid)
            return
        if rec.streak_start is not None and now - rec.streak_start >= SOAK_S + RESOLVE_MARGIN_S:
            inv.call("resolve_incident", incident=incident)
            self.resolved.add(fid)
            return
        if self.restarts.get(fid):
            self._roll(inv, rec, incident)
            self.remedied_at[fid] = inv.now
            return
        if fid in self.revert_pending and truth.cluster.rollout_status(rec.spec.target).ok:
            self.revert_pending.discard(fid)
            revert = revert_commit_step(truth.cluster, inst)
            if revert is not None:
                inv.call_tool(revert.tool, {**revert.args, "incident": incident})
            return
        grace = remedy_grace_seconds(inv.app, rec.spec)
        if _failing(rec) and now - self.remedied_at.get(fid, now) >= grace:
            self._remedy(inv, rec, incident)


def _failing(rec: FaultRecord) -> bool:
    """Whether the fault's latest probe sample failed."""
    return bool(rec.probes) and not rec.probes[-1][1]


def _bites(inv: Invocation, rec: FaultRecord) -> bool:
    """Whether the fault's change has reached the cluster (a rollback before then is a no-op)."""
    inst = rec.instance
    assert inst is not None
    if rec.spec.mechanism == "code-change":
        return defect_deployed(_truth(inv).cluster, inst)
    return all(c.status == "deployed" for c in inst.changes)


def _truth(inv: Invocation) -> GroundTruth:
    """The run's ground truth, which the run hands only to operators declaring ``ground_truth``."""
    if inv.truth is None:
        raise RuntimeError("the oracle needs the run's ground truth (Invocation.truth), which this run withholds")
    return inv.truth
