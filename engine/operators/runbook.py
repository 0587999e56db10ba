"""The runbook baseline: SRE-Marathon's Table 6, with deterministic incident merging.

Every invocation the runbook operator:

1. takes the firing alerts not yet in one of its incidents and merges them by the
   workload they name (the ``service``/``deployment``/``statefulset`` label, or the pod's
   owner as ``kubectl get pods`` shows it); one incident per workload while it is open;
2. reports each new incident (title: the alert names and the workload) and its root
   cause *from the alert labels alone*: the workload the alerts name, a category by the
   highest-priority rule (pod-level rules -> ``code-bug``, deployment-level rules ->
   ``configuration``, request-level rules -> ``code-bug``), and as artifact the latest
   change the deploy history lists for that workload (else the workload itself);
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

4. declares an incident resolved once none of its workload's alerts is firing.

Request-level alerts (error rates, latency) are correlated and reported but have no
runbook action, which is why the baseline localises often and repairs rarely.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scoring.attribution import workload_of

if TYPE_CHECKING:
    from alerts.history import AlertInstance
    from engine.orchestrator import Invocation

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
POD_RULES = ("ContainerOOMKilled", "PodStatusError", "PodNotReady", "FailedPodsDetected")
DEPLOYMENT_RULES = ("DeploymentNotReady", "DeploymentReplicasUnavailable", "DeploymentGenerationMismatch")


def base_rule(name: str) -> str:
    """The pack rule a (possibly app-prefixed) alert name instantiates."""
    for rule, _ in RULE_TABLE:
        if name.endswith(rule):
            return rule
    for rule in ("HighRequestErrorRate", "EndpointErrorRate", "HighRequestLatency", "FailedPodsDetected"):
        if name.endswith(rule):
            return rule
    return name


@dataclass
class RunbookOperator:
    """See module docstring."""

    name: str = "runbook"
    incident_of: dict[str, str] = field(default_factory=dict)
    """Open incident per workload."""
    acted: set[str] = field(default_factory=set)
    claimed: set[int] = field(default_factory=set)

    def invoke(self, inv: Invocation) -> None:
        firing = [a for a in inv.alerts if a.state == "firing"]
        services = [s.name for s in inv.tools.run.sim.app.services]
        owners = self._pod_owners(inv) if any("pod" in a.labels for a in firing) else {}
        groups: dict[str, list[AlertInstance]] = {}
        for a in firing:
            workload = owners.get(a.labels.get("pod", "")) or workload_of(a.labels, services)
            if workload is None:
                continue
            groups.setdefault(workload, []).append(a)
        for workload in sorted(groups):
            alerts = sorted(groups[workload], key=lambda a: a.id)
            incident = self.incident_of.get(workload)
            if incident is None:
                fresh = [a for a in alerts if a.id not in self.claimed]
                if not fresh:
                    continue
                incident = self._report(inv, workload, fresh)
                if incident is None:
                    continue
            self.claimed.update(a.id for a in alerts)
            if incident not in self.acted:
                self._act(inv, incident, workload, alerts)
        for workload, incident in sorted(self.incident_of.items()):
            if workload not in groups:
                inv.call("resolve_incident", incident=incident)
                del self.incident_of[workload]

    def _pod_owners(self, inv: Invocation) -> dict[str, str]:
        res = inv.call("kubectl_get", kind="pods", output="json")
        if not res.ok:
            return {}
        import json

        try:
            items = json.loads(res.output).get("items", [])
        except ValueError:
            return {}
        return {p["metadata"]["name"]: p["metadata"].get("labels", {}).get("app", "") for p in items}

    def _report(self, inv: Invocation, workload: str, alerts: list[AlertInstance]) -> str | None:
        rules = sorted({base_rule(a.rule) for a in alerts})
        res = inv.call("report_incident", alerts=[f"A-{a.id}" for a in alerts],
                       title=f"{', '.join(rules)} on {workload}")
        if not res.ok:
            return None
        incident = str(res.data["incident"])
        self.incident_of[workload] = incident
        top = self._top_rule(alerts)
        if top in POD_RULES or top in ("HighRequestErrorRate", "EndpointErrorRate", "HighRequestLatency"):
            category = "code-bug"
        else:
            category = "configuration"
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
                import json

                wanted = int(json.loads(res.output)["spec"].get("replicas", 0)) if res.ok else 0
            except (ValueError, KeyError, TypeError):
                wanted = 0
            if wanted < SCALE_TO:
                inv.call("scale_deployment", deployment=workload, replicas=SCALE_TO, incident=incident)
        elif action == "rollback":
            inv.call("rollback", deployment=workload, incident=incident)
        else:
            pods = sorted({a.labels["pod"] for a in alerts if base_rule(a.rule) == top and "pod" in a.labels})
            for pod in pods[:2]:
                inv.call("restart_pod", pod=pod, incident=incident)
