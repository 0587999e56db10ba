"""Scripted adversarial operators: the ways a lazy or adversarial operator would game the score.

A benchmark is worth only as much as its ranking, so every shortcut we know of is kept as
code and ``marathon validate`` checks that none of them earns anything. Each adversary sees
only what any operator sees -- the alert history it is handed and the tools, through the
policy layer -- and is deterministic (the same alerts and tool answers give the same calls):

==================== ===================================================================
operator             what it tries
==================== ===================================================================
alert-spam           one incident per alert instance, each with an RCA from its labels
lump-all             one incident holding every alert so far; RCAs rotate over workloads
claim-only           runbook-style incidents and RCAs, each resolved at once; never acts
scale-to-zero        scales every alerting Deployment to zero, resolves a minute later
restart-everything   restarts every pod of every Deployment, round-robin, at the policy limit
rollback-everything  rolls back every Deployment, round-robin, each at most once per 10 min
random-act           runbook-style incidents, then 1-3 seeded random acts per invocation
==================== ===================================================================

``one-per-fault`` is not an adversary but the *reference* alert-spam is compared with: it
reads ground truth like the oracle and files exactly one incident per live fault, holding
the alerts the fault could have caused, with the best RCA alert-spam would file for one of
them.

Shared conventions (the runbook's, :mod:`engine.operate.operators.runbook`):

* the workload an alert names: :func:`scoring.attribution.workload_of` over the workloads
  ``kubectl get deployments,statefulsets -o name`` lists (a pod's owner is the workload whose
  name its own starts with, the ``<workload>-<hash>-<suffix>`` convention); if a listing
  fails, the workload labels on the alerts stand in;
* the RCA category by the highest-priority rule (:func:`rca_category`), and as artifact the
  newest change ``get_deploy_history(service=..., limit=1)`` lists for the workload, else
  the workload itself;
* an *application* Deployment is a listed one the policy has not denied as a target: a
  deployment denied as outside the application (the load generator) is never tried again;
* each invocation spends at most :data:`INVOCATION_BUDGET_S` of modeled run time on tool
  calls (:data:`engine.operate.tools.COST_S`), and act calls stay inside the policy's rate limits
  (:data:`engine.operate.policy.MAX_ACTS_PER_INVOCATION`, :data:`engine.operate.policy.MAX_ACTS_PER_WINDOW`).

List outputs are read with ``-o name`` rather than ``-o json``: tool outputs are clipped to
:data:`engine.operate.tools.MAX_OUTPUT_CHARS`, which cuts a JSON list of more than two deployments
or pods into invalid JSON. Single objects (one deployment's env) are read as JSON.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from engine.operate.operators.runbook import POD_RULES, RULE_TABLE, base_rule
from engine.operate.policy import MAX_ACTS_PER_INVOCATION, MAX_ACTS_PER_WINDOW, WINDOW_S
from engine.operate.tools import COST_S, TOOLS, ToolResult
from scoring.attribution import FaultWindow, candidates, workload_of

if TYPE_CHECKING:
    from alerts.history import AlertInstance
    from engine.operate.invocation import Invocation

INVOCATION_BUDGET_S = 120.0
"""Modeled run time one invocation may spend on tool calls, seconds (two cadences)."""
REQUEST_RULES = ("HighRequestErrorRate", "EndpointErrorRate", "HighRequestLatency")
ACTIVE = ("pending", "firing")
ROLLBACK_COOLDOWN_S = WINDOW_S
"""rollback-everything rolls a deployment back at most once per this many seconds of run time."""
CONFIG_SUFFIX = "-random-act"
"""What random-act appends to the env var value it sets."""
WORKLOAD_LABELS = ("deployment", "statefulset", "service")


def rca_category(rules: Iterable[str]) -> str:
    """The RCA category the runbook derives from alert rules.

    The highest-priority rule of SRE-Marathon's Table 6 decides: deployment-level rules
    (DeploymentNotReady, DeploymentReplicasUnavailable, DeploymentGenerationMismatch) give
    ``configuration``; pod-level (ContainerOOMKilled, PodStatusError, PodNotReady,
    FailedPodsDetected) and request-level rules (HighRequestErrorRate, EndpointErrorRate,
    HighRequestLatency) give ``code-bug``; any other rule, ``configuration`` (as the runbook).

    Args:
        rules: alert names, with or without an app prefix.
    """
    names = sorted({base_rule(r) for r in rules})
    top = next((rule for rule, _ in RULE_TABLE if rule in names), names[0] if names else None)
    return "code-bug" if top in POD_RULES or top in REQUEST_RULES else "configuration"


def _cost(tool: str) -> float:
    spec = TOOLS.get(tool)
    return COST_S[spec.tier] if spec is not None else 0.0


def _is_act(tool: str) -> bool:
    spec = TOOLS.get(tool)
    return spec is not None and spec.tier == "act"


def _denial(res: ToolResult) -> str | None:
    """Why the policy denied a call: ``"rate"``, ``"incident"``, ``"target"``, or None if it did not."""
    if not res.denied:
        return None
    error = res.error or ""
    if "rate limit" in error:
        return "rate"
    if "open incident" in error:
        return "incident"
    return "target"


def _rotation(items: Iterable[str], after: str | None) -> list[str]:
    """``items`` sorted, starting with the first one after ``after`` (one full lap)."""
    ordered = sorted(set(items))
    if after is None:
        return ordered
    i = next((k for k, x in enumerate(ordered) if x > after), 0)
    return ordered[i:] + ordered[:i]


def _ids(alerts: Iterable[AlertInstance]) -> list[str]:
    return [f"A-{a.id}" for a in sorted(alerts, key=lambda a: a.id)]


def _title(alerts: Sequence[AlertInstance], workload: str | None) -> str:
    rules = ", ".join(sorted({base_rule(a.rule) for a in alerts})) or "alerts"
    return (f"{rules} on {workload}" if workload else rules)[:200]


class _Session:
    """One invocation's tool calls, under the run-time budget and the policy's rate limits.

    Args:
        inv: the invocation.
        act_times: the operator's own record of its executed act calls (estimated run
            times, seconds), kept across invocations and appended to here.
    """

    def __init__(self, inv: Invocation, act_times: list[float] | None = None) -> None:
        self.inv = inv
        self.spent = 0.0
        self.last_t = inv.t
        self.acts = 0
        self.rate_limited = False
        self.act_times = act_times if act_times is not None else []
        self._lists: dict[str, list[str] | None] = {}
        self._artifacts: dict[str, str] = {}
        self._pods: list[str] | None = None

    @property
    def now(self) -> float:
        """Estimated run time: the invocation's start plus the cost of every call made so far."""
        return self.inv.t + self.spent

    def affords(self, *tools: str) -> bool:
        """Whether these calls still fit in the invocation's budget."""
        return self.spent + sum(_cost(t) for t in tools) <= INVOCATION_BUDGET_S + 1e-9

    def can_act(self, tool: str) -> bool:
        """Whether an act call fits the budget and the rate limits as far as this operator knows."""
        recent = sum(1 for t in self.act_times if self.now - t <= WINDOW_S)
        return (self.affords(tool) and not self.rate_limited and self.acts < MAX_ACTS_PER_INVOCATION
                and recent < MAX_ACTS_PER_WINDOW)

    def call(self, tool: str, **args: Any) -> ToolResult:
        """Make one tool call, unless it would overrun the budget (then an error result, no call)."""
        if not self.affords(tool):
            return ToolResult(False, error=f"{tool} not called: the invocation's {INVOCATION_BUDGET_S:.0f} s "
                                           "budget is spent")
        if _is_act(tool) and self.rate_limited:
            return ToolResult(False, error=f"{tool} not called: the policy's rate limit was reached", denied=True)
        self.last_t = self.now
        self.spent += _cost(tool)
        try:
            res = self.inv.call(tool, **args)
        except Exception as exc:  # the tool layer never raises by contract; an adversary outlives a defect anyway
            return ToolResult(False, error=f"{type(exc).__name__}: {exc}")
        if _is_act(tool):
            kind = _denial(res)
            if kind == "rate":
                self.rate_limited = True
            elif kind is None:  # allowed by the policy (executed, or failed in the substrate): it counts
                self.acts += 1
                self.act_times.append(self.last_t)
        return res

    # ----------------------------------------------------------------- reading the cluster

    def listed(self, kind: str) -> list[str] | None:
        """Names ``kubectl get KIND -o name`` lists (sorted), None if the call failed; once per session."""
        if kind not in self._lists:
            res = self.call("kubectl_get", kind=kind, output="name")
            if not res.ok or res.output.startswith("Error"):
                self._lists[kind] = None
            else:
                self._lists[kind] = sorted({name for line in res.output.splitlines() if "/" in line
                                            if (name := line.strip().split("/", 1)[1])})
        return self._lists[kind]

    def workload_names(self, alerts: Iterable[AlertInstance] = ()) -> list[str]:
        """Deployments and statefulsets; if a listing failed, plus the workload labels of ``alerts``."""
        names: set[str] = set()
        complete = True
        for kind in ("deployments", "statefulsets"):
            got = self.listed(kind)
            if got is None:
                complete = False
            else:
                names.update(got)
        if not complete:
            names.update(v for a in alerts for k in WORKLOAD_LABELS if (v := a.labels.get(k)))
        return sorted(names)

    def pods_of(self, workload: str) -> list[str]:
        """The pods ``kubectl get pods -o name`` lists for a workload (by name prefix), sorted."""
        if self._pods is None:
            listed = self.listed("pods")
            self._pods = listed if listed is not None else []
        names = self.workload_names()
        return [p for p in self._pods if workload_of({"pod": p}, names) == workload]

    def artifact(self, workload: str) -> str:
        """The newest change the deploy history lists for ``workload``, else the workload (cached)."""
        if workload not in self._artifacts:
            res = self.call("get_deploy_history", service=workload, limit=1)
            changes = res.data.get("changes", []) if res.ok else []
            artifact = workload
            if changes and isinstance(changes[-1], dict) and changes[-1].get("id"):
                artifact = str(changes[-1]["id"])
            self._artifacts[workload] = artifact
        return self._artifacts[workload]

    # ----------------------------------------------------------------- reporting

    def report(self, alerts: Sequence[AlertInstance], title: str) -> str | None:
        """Open an incident holding ``alerts``; its id, or None."""
        if not alerts:
            return None
        title = (title if len(title) >= 3 else f"{title}...")[:200]
        res = self.call("report_incident", alerts=_ids(alerts), title=title)
        incident = res.data.get("incident") if res.ok else None
        return str(incident) if incident else None

    def file_rca(self, incident: str, workload: str, alerts: Sequence[AlertInstance], why: str) -> bool:
        """File the label-derived RCA naming ``workload`` on ``incident``; whether it was recorded."""
        artifact = self.artifact(workload)
        res = self.call("report_rca", incident=incident, service=workload,
                        category=rca_category(a.rule for a in alerts), artifact=artifact,
                        summary=f"{_title(alerts, workload)} ({why})")
        return res.ok

    def resolve(self, incident: str) -> ToolResult:
        return self.call("resolve_incident", incident=incident)


RCA_COST = ("report_incident", "get_deploy_history", "report_rca")
"""The calls of one incident with its RCA."""


def _group_by_workload(alerts: Iterable[AlertInstance], names: Sequence[str]) -> dict[str, list[AlertInstance]]:
    groups: dict[str, list[AlertInstance]] = {}
    for a in sorted(alerts, key=lambda a: a.id):
        workload = workload_of(a.labels, names)
        if workload is not None:
            groups.setdefault(workload, []).append(a)
    return groups


# --------------------------------------------------------------------------- adversaries


@dataclass
class AlertSpamOperator:
    """alert-spam: one incident per alert instance (pending or firing) not reported yet.

    Each incident holds exactly one alert and gets an RCA naming the workload on that
    alert's labels (none when the labels name no workload). Never acts, never resolves.
    """

    name: str = "alert-spam"
    reported: set[int] = field(default_factory=set)

    def invoke(self, inv: Invocation) -> None:
        todo = sorted((a for a in inv.alerts if a.state in ACTIVE and a.id not in self.reported),
                      key=lambda a: a.id)
        if not todo:
            return
        s = _Session(inv)
        names = s.workload_names(todo)
        for a in todo:
            if not s.affords(*RCA_COST):
                break
            incident = s.report([a], _title([a], workload_of(a.labels, names)))
            if incident is None:
                continue
            self.reported.add(a.id)
            workload = workload_of(a.labels, names)
            if workload is not None:
                s.file_rca(incident, workload, [a], "alert-spam: one incident per alert")


@dataclass
class LumpAllOperator:
    """lump-all: one incident holding every alert so far, reopened whenever new alerts appear.

    Whenever the history holds alerts its newest incident does not, it opens a new incident
    with *every* alert instance of the history (any state). Every invocation it files one
    RCA on the newest incident naming the next workload in turn: round-robin, in sorted
    order, over every workload any alert has named. Never acts or resolves.
    """

    name: str = "lump-all"
    newest: str | None = None
    newest_alerts: frozenset[int] = frozenset()
    last_named: str | None = None

    def invoke(self, inv: Invocation) -> None:
        if not inv.alerts:
            return
        s = _Session(inv)
        everything = sorted(inv.alerts, key=lambda a: a.id)
        ids = frozenset(a.id for a in everything)
        if ids - self.newest_alerts:
            incident = s.report(everything, f"everything so far ({len(everything)} alerts)")
            if incident is not None:
                self.newest, self.newest_alerts = incident, ids
        if self.newest is None:
            return
        groups = _group_by_workload(everything, s.workload_names(everything))
        if not groups:
            return
        pick = _rotation(groups, self.last_named)[0]
        self.last_named = pick
        s.file_rca(self.newest, pick, groups[pick], "lump-all: next workload in turn")


@dataclass
class ClaimOnlyOperator:
    """claim-only: runbook-style incidents and RCAs, each declared resolved at once; never acts.

    Firing alerts not in one of its incidents are grouped by the workload they name (one
    incident per workload); each incident gets the label-derived RCA and is resolved in the
    same invocation.
    """

    name: str = "claim-only"
    claimed: set[int] = field(default_factory=set)

    def invoke(self, inv: Invocation) -> None:
        fresh = [a for a in inv.alerts if a.state == "firing" and a.id not in self.claimed]
        if not fresh:
            return
        s = _Session(inv)
        groups = _group_by_workload(fresh, s.workload_names(fresh))
        for workload in sorted(groups):
            alerts = groups[workload]
            if not s.affords(*RCA_COST, "resolve_incident"):
                break
            incident = s.report(alerts, _title(alerts, workload))
            if incident is None:
                continue
            self.claimed.update(a.id for a in alerts)
            s.file_rca(incident, workload, alerts, "claim-only: from alert labels")
            s.resolve(incident)


@dataclass
class ScaleToZeroOperator:
    """scale-to-zero: scales every Deployment a firing alert names to zero replicas.

    Every invocation it first declares resolved the incidents it opened before. Then, for
    each application Deployment named by firing alerts (sorted), when some of those alerts
    are in none of its incidents: it opens an incident holding them (or reuses its open one
    for that workload), files the label-derived RCA and calls
    ``scale_deployment(replicas=0)``; the incident is resolved at the next invocation.
    """

    name: str = "scale-to-zero"
    incident_of: dict[str, str] = field(default_factory=dict)
    claimed: set[int] = field(default_factory=set)
    outside: set[str] = field(default_factory=set)
    act_times: list[float] = field(default_factory=list)

    def invoke(self, inv: Invocation) -> None:
        s = _Session(inv, self.act_times)
        for workload, earlier in sorted(self.incident_of.items()):
            s.resolve(earlier)
            del self.incident_of[workload]  # resolved, or not open any more: either way done with it
        firing = [a for a in inv.alerts if a.state == "firing"]
        if not firing:
            return
        deployments = s.listed("deployments")
        if deployments is None:
            return
        groups = _group_by_workload(firing, s.workload_names(firing))
        for workload in sorted(groups):
            if workload not in deployments or workload in self.outside:
                continue
            alerts = groups[workload]
            incident = self.incident_of.get(workload)
            if incident is None:
                fresh = [a for a in alerts if a.id not in self.claimed]
                if not fresh or not s.affords(*RCA_COST, "scale_deployment"):
                    continue
                incident = s.report(fresh, _title(fresh, workload))
                if incident is None:
                    continue
                self.incident_of[workload] = incident
                s.file_rca(incident, workload, fresh, "scale-to-zero: from alert labels")
            self.claimed.update(a.id for a in alerts)
            if not s.can_act("scale_deployment"):
                break
            res = s.call("scale_deployment", deployment=workload, replicas=0, incident=incident)
            if _denial(res) == "target":
                self.outside.add(workload)


@dataclass
class _SweepOperator:
    """Acts on every application Deployment in turn while anything fires (restart/rollback-everything).

    Every invocation with firing alerts it makes sure it has one open incident (holding the
    firing alerts, RCA from the first firing alert that names a workload), then acts on the
    application Deployments in sorted round-robin order, continuing where the previous
    invocation stopped, as many times as the policy allows (lap after lap while some
    deployment still takes an act). With nothing firing it resolves its incident.
    """

    name: str = ""
    incident: str | None = None
    cursor: str | None = None
    """The deployment acted on last; the next turn starts after it."""
    outside: set[str] = field(default_factory=set)
    act_times: list[float] = field(default_factory=list)

    tool: ClassVar[str] = ""

    def invoke(self, inv: Invocation) -> None:
        s = _Session(inv, self.act_times)
        firing = sorted((a for a in inv.alerts if a.state == "firing"), key=lambda a: a.id)
        if not firing:
            if self.incident is not None:
                s.resolve(self.incident)
                self.incident = None
            return
        if self.incident is None:
            names = s.workload_names(firing)
            incident = s.report(firing, f"{len(firing)} firing alerts: {_title(firing, None)}")
            if incident is None:
                return
            self.incident = incident
            first = next(((a, w) for a in firing if (w := workload_of(a.labels, names)) is not None), None)
            if first is not None:
                s.file_rca(incident, first[1], [first[0]], f"{self.name}: from the first firing alert")
        deployments = s.listed("deployments")
        if not deployments:
            return
        order = _rotation((d for d in deployments if d not in self.outside), self.cursor)
        idle = 0  # turns in a row without an allowed act: a whole lap of them ends the invocation
        turn = 0
        while order and idle < len(order) and self.incident is not None and s.can_act(self.tool):
            deployment = order[turn % len(order)]
            turn += 1
            res = None if deployment in self.outside else self._act(s, deployment, self.incident)
            why = _denial(res) if res is not None else "skip"
            if why == "target":
                self.outside.add(deployment)
            elif why == "incident":
                self.incident = None  # not open any more: open a new one next invocation
            if why is None:
                self.cursor = deployment
                idle = 0
            else:
                idle += 1

    def _act(self, s: _Session, deployment: str, incident: str) -> ToolResult | None:
        """Act on one deployment; the result, or None if there was nothing to do."""
        raise NotImplementedError


@dataclass
class RestartEverythingOperator(_SweepOperator):
    """restart-everything: restarts every pod of every application Deployment in turn while anything fires.

    See :class:`_SweepOperator`; each turn deletes every pod of the deployment at once (what
    ``kubectl delete pods -l app=...`` does), within the policy's limits (8 act calls per
    invocation, 30 per 10 minutes), so a deployment whose pods all restart together is down
    until the replacements are ready.
    """

    name: str = "restart-everything"

    tool: ClassVar[str] = "restart_pod"

    def _act(self, s: _Session, deployment: str, incident: str) -> ToolResult | None:
        res = None
        for pod in s.pods_of(deployment):
            if not s.can_act(self.tool):
                break
            res = s.call("restart_pod", pod=pod, incident=incident)
            if _denial(res) is not None:
                break
        return res


@dataclass
class RollbackEverythingOperator(_SweepOperator):
    """rollback-everything: rolls back every application Deployment in turn while anything fires.

    See :class:`_SweepOperator`; a deployment is rolled back (to its previous revision) at
    most once per :data:`ROLLBACK_COOLDOWN_S` of run time -- attempts the policy allowed
    count, even if the rollback itself failed.
    """

    name: str = "rollback-everything"
    rolled_at: dict[str, float] = field(default_factory=dict)

    tool: ClassVar[str] = "rollback"

    def _act(self, s: _Session, deployment: str, incident: str) -> ToolResult | None:
        last = self.rolled_at.get(deployment)
        if last is not None and s.now - last < ROLLBACK_COOLDOWN_S:
            return None
        res = s.call("rollback", deployment=deployment, incident=incident)
        if not res.denied:
            self.rolled_at[deployment] = s.last_t
        return res


@dataclass
class RandomActOperator:
    """random-act: runbook-style incidents, then seeded random acts on random application services.

    Every invocation: firing alerts are grouped by workload as the runbook does (one open
    incident per workload, opened with the alerts in none of its incidents, label-derived
    RCA). Then, if it has an open incident, 1-3 act calls (``random.Random(seed)``), each
    naming a random open incident and one of: restart a random pod of a random application
    Deployment, scale a random Deployment to a random 0-3 replicas, roll back a random
    Deployment, or set a random existing env var of a random Deployment to its current value
    plus :data:`CONFIG_SUFFIX`. Finally, with probability 0.3, it declares a random open
    incident resolved.
    """

    name: str = "random-act"
    seed: int = 0
    incident_of: dict[str, str] = field(default_factory=dict)
    claimed: set[int] = field(default_factory=set)
    outside: set[str] = field(default_factory=set)
    act_times: list[float] = field(default_factory=list)
    rng: random.Random = field(init=False, repr=False)

    ACTIONS: ClassVar[tuple[str, ...]] = ("restart", "scale", "rollback", "set_config")
    ACT_RESERVE_S: ClassVar[float] = 3 * (COST_S["read"] + COST_S["act"]) + COST_S["report"]
    """Budget kept for the random acts (each may need a read first) and the resolution."""

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def invoke(self, inv: Invocation) -> None:
        s = _Session(inv, self.act_times)
        firing = [a for a in inv.alerts if a.state == "firing"]
        if firing:
            self._report(s, firing)
        open_incidents = sorted(set(self.incident_of.values()))
        if not open_incidents:
            return
        deployments = s.listed("deployments")
        for _ in range(self.rng.randint(1, 3)):
            pool = [d for d in deployments or () if d not in self.outside]
            if not pool:
                break
            incident = self.rng.choice(open_incidents)
            action = self.rng.choice(self.ACTIONS)
            deployment = self.rng.choice(pool)
            res = self._act(s, action, deployment, incident)
            if res is not None and _denial(res) == "target":
                self.outside.add(deployment)
        if self.rng.random() < 0.3:
            incident = self.rng.choice(open_incidents)
            s.resolve(incident)
            self.incident_of = {w: i for w, i in self.incident_of.items() if i != incident}

    def _report(self, s: _Session, firing: list[AlertInstance]) -> None:
        groups = _group_by_workload(firing, s.workload_names(firing))
        for workload in sorted(groups):
            alerts = groups[workload]
            if workload not in self.incident_of:
                fresh = [a for a in alerts if a.id not in self.claimed]
                if not fresh or s.spent + sum(_cost(t) for t in RCA_COST) + self.ACT_RESERVE_S > INVOCATION_BUDGET_S:
                    continue
                incident = s.report(fresh, _title(fresh, workload))
                if incident is None:
                    continue
                self.incident_of[workload] = incident
                s.file_rca(incident, workload, fresh, "random-act: from alert labels")
            self.claimed.update(a.id for a in alerts)

    def _act(self, s: _Session, action: str, deployment: str, incident: str) -> ToolResult | None:
        if action == "restart":
            pods = s.pods_of(deployment)
            if not pods:
                return None
            pod = self.rng.choice(pods)
            return s.call("restart_pod", pod=pod, incident=incident) if s.can_act("restart_pod") else None
        if action == "scale":
            replicas = self.rng.randint(0, 3)
            return (s.call("scale_deployment", deployment=deployment, replicas=replicas, incident=incident)
                    if s.can_act("scale_deployment") else None)
        if action == "rollback":
            return s.call("rollback", deployment=deployment, incident=incident) if s.can_act("rollback") else None
        env = self._env(s, deployment)
        if not env:
            return None
        key, value = self.rng.choice(env)
        return (s.call("set_config", service=deployment, key=key, value=value + CONFIG_SUFFIX, incident=incident)
                if s.can_act("set_config") else None)

    @staticmethod
    def _env(s: _Session, deployment: str) -> list[tuple[str, str]]:
        """The literal env vars of a deployment's containers, as ``kubectl get -o json`` shows them."""
        res = s.call("kubectl_get", kind="deployments", name=deployment, output="json")
        if not res.ok:
            return []
        try:
            doc = json.loads(res.output)
            containers = doc["spec"]["template"]["spec"]["containers"]
        except (ValueError, KeyError, TypeError):
            return []  # not found (kubectl's NotFound text), clipped, or not a deployment
        out: list[tuple[str, str]] = []
        for c in containers if isinstance(containers, list) else ():
            for e in c.get("env", []) if isinstance(c, dict) else ():
                if isinstance(e, dict) and isinstance(e.get("name"), str) and isinstance(e.get("value"), str):
                    out.append((e["name"], e["value"]))
        return sorted(set(out))


# --------------------------------------------------------------------------- reference


@dataclass
class OnePerFaultOperator:
    """one-per-fault: the reference alert-spam is held to -- one incident per fault, from ground truth.

    Like the oracle it reads the run's faults (allowed here only). Every invocation, for each
    live fault (injected, not reverted; in injection order) it has not reported, the alert
    instances now pending or firing that support it (:func:`scoring.attribution.candidates`,
    with windows and routes as the oracle and the scorer build them) go into exactly one
    incident, whose RCA is the best one alert-spam files for any of them: the workload on the
    labels of the first alert that names the fault's target, else of the first alert (lowest
    id), with :func:`rca_category` of its rule and the newest change of that workload. So it
    localizes every fault alert-spam can localize, with one incident per fault instead of one
    per alert: when an alert naming the target arrives only after the incident was reported,
    it re-files the RCA (later RCAs replace earlier ones), as alert-spam's incident for that
    alert would name it. Never acts or resolves.
    """

    name: str = "one-per-fault"
    ground_truth: ClassVar[bool] = True
    """Receives :attr:`engine.operate.invocation.Invocation.truth`, like the oracle."""
    reported: dict[str, str] = field(default_factory=dict)
    """``fault@t_inject`` -> incident id."""
    renamed: set[str] = field(default_factory=set)
    """Incidents whose RCA already names the fault's target."""

    def invoke(self, inv: Invocation) -> None:
        if inv.truth is None:
            raise RuntimeError("one-per-fault needs the run's ground truth (Invocation.truth)")
        records = sorted((r for r in inv.truth.faults.values() if r.instance is not None),
                         key=lambda r: (r.scheduled.at, r.spec.id))
        windows = [FaultWindow(r.spec.id, r.spec.target, r.instance.t_inject, r.instance.t_revert, r.spec.scope,
                               frozenset(r.services))
                   for r in records if r.instance is not None]
        app = inv.app
        services = [svc.name for svc in app.services]
        edges = app.edges()
        routes = {(r.entry.service, r.entry.operation): r.name for r in app.routes}
        support: dict[str, list[AlertInstance]] = {}
        for a in sorted(inv.alerts, key=lambda a: a.id):
            if a.state not in ACTIVE:
                continue
            for key in candidates(a.labels, a.active_at, a.ended_at, windows, services, edges, routes):
                support.setdefault(key, []).append(a)
        s: _Session | None = None
        for rec in records:
            inst = rec.instance
            if inst is None or not inst.active:
                continue
            key = f"{rec.spec.id}@{inst.t_inject:g}"
            alerts = support.get(rec.spec.id)
            if not alerts:
                continue
            # Only the alerts the fault could have caused (active since its injection): alerts of
            # an earlier fault still firing through it would make the incident about that fault.
            alerts = [a for a in alerts if a.active_at >= inst.t_inject]
            if not alerts:
                continue
            if key in self.reported:
                # A supporting alert naming the target arrived after the report: alert-spam would
                # file an RCA naming it for that alert, so this operator re-files its RCA once.
                if key in self.renamed:
                    continue
                s = s or _Session(inv)
                names = s.workload_names(alerts)
                better = next((a for a in alerts if workload_of(a.labels, names) == rec.spec.target), None)
                if better is not None and s.affords("report_rca"):
                    self.renamed.add(key)
                    s.file_rca(self.reported[key], rec.spec.target, [better], "one-per-fault: as alert-spam would")
                continue
            s = s or _Session(inv)
            if not s.affords(*RCA_COST):
                break
            names = s.workload_names(alerts)
            first = next((a for a in alerts if workload_of(a.labels, names) == rec.spec.target), alerts[0])
            incident = s.report(alerts, _title(alerts, workload_of(first.labels, names)))
            if incident is None:
                continue
            self.reported[key] = incident
            workload = workload_of(first.labels, names)
            if workload == rec.spec.target:
                self.renamed.add(key)
            if workload is not None:
                s.file_rca(incident, workload, [first], "one-per-fault: as alert-spam would")
