"""The runbook baseline: SRE-Marathon's Table 6 on the paper's alert pack, with deterministic incident merging.

Every invocation the runbook operator:

1. takes the firing alerts not yet in one of its incidents and merges them by the
   workload they name (the ``service``/``deployment``/``statefulset`` label, or the owner of
   the ``pod`` label -- the workload ``kubectl get deployments,statefulsets -o name`` lists
   whose name the pod's name starts with), as Alertmanager groups notifications: an alert
   joins its workload's open incident when it became active within :data:`MERGE_WINDOW_S` of
   that incident's first alert, and opens a new incident otherwise (a new burst on a
   workload whose old alerts still fire is a new incident, not more of the old one);
2. reports each new incident (title: the alert names and the workload) and its root
   cause *from the alert labels alone*: the workload the alerts name, a category by the
   highest-priority rule (deployment-level rules -> ``configuration``, pod-level and
   request-level rules -> ``code-bug``), and as artifact the latest change the deploy
   history lists for that workload (else the workload itself);
3. acts once per incident by the rule table, in priority order (rule names match with
   or without an app prefix):

   ==============================  =========================  ===========
   alert                           action                     target
   ==============================  =========================  ===========
   DeploymentNotReady              scale to 2 (if below)      deployment
   DeploymentReplicasUnavailable   scale to 2 (if below)      deployment
   DeploymentGenerationMismatch    rollback                   deployment
   ContainerOOMKilled              restart pod                pod
   PodStatusError                  restart pod                pod
   PodNotReady                     restart pod                pod
   ==============================  =========================  ===========

4. declares an incident resolved once none of its alerts has fired for :data:`QUIET_S` (an
   alert that stops firing while the fault is still there -- a crash-looping pod between
   restarts, an error rate dipping under its threshold -- does not yet mean it is fixed).

Request-level alerts (error rates, latency) are correlated and reported but have no
runbook action, which is why the baseline localises often and repairs rarely. It sees the
system only through the operator tools (workload names from ``kubectl_get``, replica counts
from ``kubectl_get -o json`` of one deployment), like any operator.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scoring.attribution import workload_of

if TYPE_CHECKING:
    from alerts.history import AlertInstance
    from engine.operate.invocation import Invocation

RULE_TABLE: tuple[tuple[str, str], ...] = (
    ("DeploymentNotReady", "scale"),
    ("DeploymentReplicasUnavailable", "scale"),
    ("DeploymentGenerationMismatch", "rollback"),
    ("ContainerOOMKilled", "restart"),
    ("PodStatusError", "restart"),
    ("PodNotReady", "restart"),
)
"""SRE-Marathon Table 6, in priority order."""
SCALE_TO = 2
QUIET_S = 600.0
"""An incident is declared resolved once none of its alerts has fired for 10 minutes."""
MERGE_WINDOW_S = 120.0
"""Alerts of one workload that became active within 2 minutes of the incident's first are one incident
(one burst: a fault's alerts turn pending within a rate window of each other)."""
POD_RULES = ("ContainerOOMKilled", "PodStatusError", "PodNotReady", "FailedPodsDetected")
DEPLOYMENT_RULES = ("DeploymentNotReady", "DeploymentReplicasUnavailable", "DeploymentGenerationMismatch")
REQUEST_RULES = ("HighRequestErrorRate", "EndpointErrorRate", "HighRequestLatency")


def base_rule(name: str) -> str:
    """The pack rule a (possibly app-prefixed) alert name instantiates."""
    for rule in (*DEPLOYMENT_RULES, *POD_RULES, *REQUEST_RULES):
        if name.endswith(rule):
            return rule
    return name


@dataclass
class _Incident:
    """One of the runbook's incidents: its id once reported, its first alert's activation, its alerts."""

    id: str
    first: float
    alerts: list[int] = field(default_factory=list)
    pending: list[AlertInstance] = field(default_factory=list)
    """Alerts grouped into it this invocation, not yet acted on."""


@dataclass
class RunbookOperator:
    """See module docstring."""

    name: str = "runbook"
    open_incidents: dict[tuple[str, str], list[_Incident]] = field(default_factory=dict)
    """Open incidents per group (workload, ""), oldest first."""
    acted: set[str] = field(default_factory=set)
    claimed: set[int] = field(default_factory=set)
    workloads: list[str] = field(default_factory=list)
    """Workload names as ``kubectl get -o name`` lists them (refreshed when an alert names an unknown one)."""

    def invoke(self, inv: Invocation) -> None:
        firing = [a for a in inv.alerts if a.state == "firing"]
        if firing and (not self.workloads or any(self._owner(a) is None for a in firing)):
            self._list_workloads(inv)
        groups: dict[tuple[str, str], list[AlertInstance]] = {}
        for a in firing:
            workload = self._owner(a)
            if workload is None or a.id in self.claimed:
                continue
            groups.setdefault((workload, ""), []).append(a)
        for key in sorted(groups):
            workload = key[0]
            for a in sorted(groups[key], key=lambda a: (a.active_at, a.id)):
                incident = next((i for i in reversed(self.open_incidents.get(key, []))
                                 if a.active_at - i.first <= MERGE_WINDOW_S), None)
                if incident is None:
                    incident = _Incident("", a.active_at)
                    self.open_incidents.setdefault(key, []).append(incident)
                incident.pending.append(a)
                self.claimed.add(a.id)
            for incident in self.open_incidents.get(key, []):
                if not incident.pending:
                    continue
                if not incident.id:
                    reported = self._report(inv, workload, incident.pending)
                    if reported is None:
                        continue
                    incident.id = reported
                incident.alerts.extend(a.id for a in incident.pending)
                if incident.id not in self.acted:
                    self._act(inv, incident.id, workload, incident.pending)
                incident.pending = []
        by_id = {a.id: a for a in inv.alerts}
        for _workload, incidents in sorted(self.open_incidents.items()):
            for incident in list(incidents):
                if incident.id and all(self._quiet(by_id.get(a), inv.t) for a in incident.alerts):
                    inv.call("resolve_incident", incident=incident.id)
                    incidents.remove(incident)
                elif not incident.id and not incident.pending:
                    incidents.remove(incident)

    @staticmethod
    def _quiet(alert: AlertInstance | None, now: float) -> bool:
        """Whether an alert has not fired for :data:`QUIET_S` (it ended that long ago)."""
        if alert is None:
            return True
        if alert.state in ("pending", "firing"):
            return False
        ended = alert.ended_at
        return ended is None or now - ended >= QUIET_S

    def _owner(self, alert: AlertInstance) -> str | None:
        return workload_of(alert.labels, self.workloads)

    def _list_workloads(self, inv: Invocation) -> None:
        names: set[str] = set()
        for kind in ("deployments", "statefulsets"):
            res = inv.call("kubectl_get", kind=kind, output="name")
            if res.ok:
                names.update(line.split("/", 1)[-1].strip() for line in res.output.splitlines() if "/" in line)
        if names:
            self.workloads = sorted(names)

    def _report(self, inv: Invocation, workload: str, alerts: list[AlertInstance]) -> str | None:
        rules = sorted({base_rule(a.rule) for a in alerts})
        res = inv.call("report_incident", alerts=[f"A-{a.id}" for a in alerts],
                       title=f"{', '.join(rules)} on {workload}")
        if not res.ok:
            return None
        incident = str(res.data["incident"])
        top = self._top_rule(alerts)
        category = "configuration" if top in DEPLOYMENT_RULES else "code-bug"
        hist = inv.call("get_deploy_history", service=workload, limit=1)
        changes: list[dict[str, Any]] = hist.data.get("changes", []) if hist.ok else []
        artifact = changes[-1]["id"] if changes else workload
        inv.call("report_rca", incident=incident, service=workload, category=category, artifact=artifact,
                 summary=f"{', '.join(rules)} firing on {workload} (runbook: from alert labels)")
        return incident

    @staticmethod
    def _top_rule(alerts: list[AlertInstance]) -> str | None:
        names = {base_rule(a.rule) for a in alerts}
        for rule, _ in RULE_TABLE:
            if rule in names:
                return rule
        return next(iter(sorted(names)), None)

    def _act(self, inv: Invocation, incident: str, workload: str, alerts: list[AlertInstance]) -> None:
        top = self._top_rule(alerts)
        action = dict(RULE_TABLE).get(top or "")
        if action is None:
            return
        self.acted.add(incident)
        if action == "scale":
            # "Scale to 2" means at least two replicas: a deployment already asking for two or
            # more is left alone (scaling it to its own size would change nothing).
            res = inv.call("kubectl_get", kind="deployments", name=workload, output="json")
            try:
                wanted = int(json.loads(res.output)["spec"].get("replicas", 0)) if res.ok else 0
            except (ValueError, KeyError, TypeError, AttributeError):
                wanted = 0
            if wanted < SCALE_TO:
                inv.call("scale_deployment", deployment=workload, replicas=SCALE_TO, incident=incident)
        elif action == "rollback":
            inv.call("rollback", deployment=workload, incident=incident)
        else:
            pods = sorted({a.labels["pod"] for a in alerts if base_rule(a.rule) == top and "pod" in a.labels})
            for pod in pods[:2]:
                inv.call("restart_pod", pod=pod, incident=incident)
