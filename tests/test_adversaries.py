"""Scripted adversarial operators and the one-per-fault reference (issue 11, item 8).

Each operator runs once on a short schedule (shared, module-scoped) and the tests check it
does what its definition says; a scripted tool layer then drives the adversaries through
tool errors, policy denials, garbage outputs, vanishing deployments and alerts without
workload labels, and checks the rollback cooldown over a long stretch of run time.
"""

from __future__ import annotations

import ast
import inspect
import itertools
import json
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from alerts.history import AlertInstance
from engine.bundle.events import Event
from engine.operate.operators import ADVERSARIES, BUILTIN, REFERENCE_OPERATORS, adversaries, make_operator
from engine.operate.policy import MAX_ACTS_PER_INVOCATION, MAX_ACTS_PER_WINDOW, WINDOW_S
from engine.operate.tools import COST_S, TOOLS, ToolResult
from engine.run.orchestrator import Orchestrator
from faults.generator import generate
from scoring.attribution import FaultWindow, candidates, workload_of

OPERATORS = ADVERSARIES + REFERENCE_OPERATORS
ACT_TOOLS = {name for name, spec in TOOLS.items() if spec.tier == "act"}


def _run(name: str, **kwargs: Any) -> Orchestrator:
    op = make_operator(name) if not kwargs else adversaries.RandomActOperator(**kwargs)
    run = Orchestrator(generate("online-boutique", 1, "short-5"), operator=op)
    run.run()
    return run


@pytest.fixture(scope="module")
def runs() -> dict[str, Orchestrator]:
    return {name: _run(name) for name in OPERATORS}


def _events(run: Orchestrator, kind: str) -> list[Event]:
    return [e for e in run.stream.events if e.kind == kind]


def _calls(run: Orchestrator, tool: str | None = None) -> list[dict[str, Any]]:
    return [e.payload for e in _events(run, "tool.call") if tool is None or e.payload["tool"] == tool]


def _services(run: Orchestrator) -> list[str]:
    return [s.name for s in run.sim.app.services]


def _alert_ids(refs: list[str]) -> set[int]:
    return {int(r.removeprefix("A-")) for r in refs}


# --------------------------------------------------------------------------- registry and source


def test_registry_builds_every_operator_by_its_name() -> None:
    assert len(ADVERSARIES) == 7 and len(set(ADVERSARIES)) == 7
    assert REFERENCE_OPERATORS == ("one-per-fault",)
    assert not set(ADVERSARIES) & set(REFERENCE_OPERATORS) and not set(OPERATORS) & set(BUILTIN)
    for name in OPERATORS:
        assert make_operator(name).name == name
    with pytest.raises(ValueError) as err:
        make_operator("no-such-operator")
    assert all(name in str(err.value) for name in OPERATORS)


def test_only_the_reference_operator_reads_ground_truth() -> None:
    tree = ast.parse(inspect.getsource(adversaries))
    reference = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "OnePerFaultOperator")
    inside = {id(n) for n in ast.walk(reference)}
    behind = {"tools", "run", "sim", "faults", "store", "alert_history", "truth", "channel"}
    reached = [(n.lineno, n.attr) for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in behind]
    assert [r for r in reached if r[1] == "truth"], "the reference reads ground truth through inv.truth"
    outside = [(n.lineno, n.attr) for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in behind
               and id(n) not in inside]
    assert not outside, f"adversaries reach behind the tools at {outside}"
    classes = {adversaries.AlertSpamOperator, adversaries.LumpAllOperator, adversaries.ClaimOnlyOperator,
               adversaries.ScaleToZeroOperator, adversaries.RestartEverythingOperator,
               adversaries.RollbackEverythingOperator, adversaries.RandomActOperator}
    assert {c().name for c in classes} == set(ADVERSARIES)
    for cls in classes:
        assert "truth" not in inspect.getsource(cls) and not getattr(cls, "ground_truth", False)


# --------------------------------------------------------------------------- every operator


@pytest.mark.parametrize("name", OPERATORS)
def test_invocations_stay_within_budget_and_rate_limits(runs: dict[str, Orchestrator], name: str) -> None:
    run = runs[name]
    start = {e.payload["invocation"]: e.t for e in _events(run, "agent.invoke")}
    spans: dict[int, float] = defaultdict(float)
    acts: Counter[int] = Counter()
    for call in _events(run, "tool.call"):
        p = call.payload
        assert p["operator"] == name
        spans[p["invocation"]] = max(spans[p["invocation"]], call.t + COST_S[p["tier"]] - start[p["invocation"]])
        if p["tier"] == "act" and p["allowed"]:
            acts[p["invocation"]] += 1
        assert "rate limit" not in p["reason"], "the operator tracks the policy's limits itself"
    assert max(spans.values(), default=0.0) <= adversaries.INVOCATION_BUDGET_S
    assert max(acts.values(), default=0) <= MAX_ACTS_PER_INVOCATION
    assert not [p for p in _calls(run) if p["tool"] in ACT_TOOLS and "outside the application" in p["reason"]
                and p["targets"] == ["loadgenerator"]][1:], "a denied target is never tried again"


@pytest.mark.parametrize("name", OPERATORS)
def test_same_alerts_give_the_same_calls(runs: dict[str, Orchestrator], name: str) -> None:
    again = _run(name)
    assert _calls(again) == _calls(runs[name])


# --------------------------------------------------------------------------- each adversary


def _seen_alerts(run: Orchestrator) -> set[int]:
    """Alert instances pending or firing at the start of some invocation."""
    history = run.alert_history
    assert history is not None
    times = [e.t for e in _events(run, "agent.invoke")]
    return {a.id for t in times for a in history.instances if a.active_at <= t and a.state_at(t) in ("pending",
                                                                                                     "firing")}


def test_alert_spam_opens_one_incident_per_alert_and_never_acts(runs: dict[str, Orchestrator]) -> None:
    run = runs["alert-spam"]
    incidents = _events(run, "report.incident")
    held = [e.payload["alerts"] for e in incidents]
    assert all(len(alerts) == 1 for alerts in held)
    ids = [alerts[0] for alerts in held]
    assert len(ids) == len(set(ids)) and _alert_ids(ids) == _seen_alerts(run) and len(ids) >= 5
    assert not _events(run, "action.executed") and not _events(run, "report.resolved")
    assert not [p for p in _calls(run) if p["tier"] == "act"]
    history = run.alert_history
    assert history is not None
    by_id = {f"A-{a.id}": a for a in history.instances}
    rcas = {e.payload["incident"]: e.payload for e in _events(run, "report.rca")}
    for e in incidents:
        alert = by_id[e.payload["alerts"][0]]
        assert rcas[e.payload["incident"]]["service"] == workload_of(alert.labels, _services(run))
        assert rcas[e.payload["incident"]]["category"] == adversaries.rca_category([alert.rule])


def test_lump_all_incidents_hold_every_alert_so_far(runs: dict[str, Orchestrator]) -> None:
    run = runs["lump-all"]
    services = _services(run)
    history = run.alert_history
    assert history is not None
    labels = {f"A-{a.id}": a.labels for a in history.instances}
    seen: set[str] = set()
    previous: set[str] = set()
    newest: str | None = None
    named: list[str] = []
    incidents = 0
    at_invoke: set[str] = set()
    fired: set[str] = set()
    fired_at_invoke: set[str] = set()
    for e in run.stream.events:
        if e.kind.startswith("alert.") and e.payload["id"]:
            seen.add(e.payload["id"])
            if e.kind == "alert.firing":
                fired.add(e.payload["id"])
        elif e.kind == "agent.invoke":
            # the history the invocation was handed: alerts may fire during it, and a pending
            # alert that never fired may have left the history
            at_invoke, fired_at_invoke = set(seen), set(fired)
        elif e.kind == "report.incident":
            incidents += 1
            held = set(e.payload["alerts"])
            assert fired_at_invoke <= held <= at_invoke and held > previous
            previous, newest = held, e.payload["incident"]
        elif e.kind == "report.rca":
            assert e.payload["incident"] == newest
            workloads = sorted({w for a in previous if (w := workload_of(labels[a], services)) is not None})
            expected = next((w for w in workloads if not named or w > named[-1]), workloads[0])
            assert e.payload["service"] == expected
            named.append(e.payload["service"])
    assert incidents >= 3 and len(set(named)) >= 3
    rca_invocations = [p["invocation"] for p in _calls(run, "report_rca")]
    assert len(rca_invocations) == len(set(rca_invocations)), "one RCA per invocation"
    first = min(p["invocation"] for p in _calls(run, "report_incident"))
    # every invocation files one, except one the end of the run cuts off (its calls cost run time)
    assert set(rca_invocations) == {e.payload["invocation"] for e in _events(run, "agent.invoke")
                                    if e.payload["invocation"] >= first and e.t + 30 < run.end_t}
    assert not [p for p in _calls(run) if p["tier"] == "act"] and not _events(run, "report.resolved")


def test_claim_only_resolves_every_incident_at_once_and_never_acts(runs: dict[str, Orchestrator]) -> None:
    run = runs["claim-only"]
    opened = {p["result"].split(":")[0].removeprefix("opened "): p["invocation"]
              for p in _calls(run, "report_incident") if p["ok"]}
    resolved = {p["args"]["incident"]: p["invocation"] for p in _calls(run, "resolve_incident") if p["ok"]}
    rca = {p["args"]["incident"] for p in _calls(run, "report_rca") if p["ok"]}
    assert len(opened) >= 2 and opened == resolved and set(opened) == rca
    assert not [p for p in _calls(run) if p["tier"] == "act"] and not _events(run, "action.executed")


def test_scale_to_zero_only_scales_to_zero_and_resolves_next_invocation(runs: dict[str, Orchestrator]) -> None:
    run = runs["scale-to-zero"]
    executed = _events(run, "action.executed")
    assert executed and all(e.payload["tool"] == "scale_deployment" and e.payload["args"]["replicas"] == 0
                            for e in executed)
    opened = {p["result"].split(":")[0].removeprefix("opened "): p["invocation"]
              for p in _calls(run, "report_incident") if p["ok"]}
    resolved = {p["args"]["incident"]: p["invocation"] for p in _calls(run, "resolve_incident")}
    assert opened and all(resolved[i] == n + 1 for i, n in opened.items())
    scaled = {e.payload["args"]["incident"] for e in executed}
    assert scaled == set(opened)


def _app_deployments(run: Orchestrator) -> list[str]:
    return sorted(s.name for s in run.sim.app.services if s.in_application)


def test_restart_everything_restarts_every_pod_of_every_deployment_in_turn(runs: dict[str, Orchestrator]) -> None:
    run = runs["restart-everything"]
    executed = [e for e in _events(run, "action.executed")]
    assert executed and all(e.payload["tool"] == "restart_pod" for e in executed)
    order = [e.payload["targets"][0] for e in executed]
    app = _app_deployments(run)
    # deployments in round-robin order, each visit restarting all of its pods at once
    visits = [d for i, d in enumerate(order) if i == 0 or order[i - 1] != d]
    assert len(set(visits)) >= 8 and set(visits) <= set(app)
    steps = [(app.index(b) - app.index(a)) % len(app) for a, b in itertools.pairwise(visits)]
    assert all(step >= 1 for step in steps), "round-robin over the application's deployments"
    pods = [e.payload["args"]["pod"] for e in executed]
    first = visits[0]
    assert len({p for p, d in zip(pods, order, strict=True) if d == first}) >= 2, "every pod of a deployment"
    window = [e.t for e in executed]
    counts = [sum(1 for u in window if t - WINDOW_S < u <= t) for t in window]
    assert max(counts) == MAX_ACTS_PER_WINDOW, "as many as the policy allows"
    assert len(_events(run, "report.incident")) >= 1


def test_rollback_everything_never_rolls_one_deployment_back_twice_in_ten_minutes(
        runs: dict[str, Orchestrator]) -> None:
    run = runs["rollback-everything"]
    attempts = [(e.t, e.payload["args"]["deployment"]) for e in _events(run, "tool.call")
                if e.payload["tool"] == "rollback" and e.payload["allowed"]]
    executed = _events(run, "action.executed")
    assert executed and all(e.payload["tool"] == "rollback" for e in executed)
    assert {d for _, d in attempts} == set(_app_deployments(run))
    by_deployment: dict[str, list[float]] = defaultdict(list)
    for t, d in attempts:
        by_deployment[d].append(t)
    for times in by_deployment.values():
        assert all(b - a >= WINDOW_S for a, b in itertools.pairwise(times))


def test_random_act_is_seeded(runs: dict[str, Orchestrator]) -> None:
    run = runs["random-act"]

    def stream(r: Orchestrator) -> list[tuple[float, str, Any]]:
        return [(e.t, e.kind, e.payload) for e in r.stream.events]

    assert stream(_run("random-act", seed=0)) == stream(run)
    assert stream(_run("random-act", seed=1)) != stream(run)
    acts = [p for p in _calls(run) if p["tier"] == "act"]
    per_invocation = Counter(p["invocation"] for p in acts)
    assert acts and max(per_invocation.values()) <= 3
    assert {p["tool"] for p in acts} <= {"restart_pod", "scale_deployment", "rollback", "set_config"}
    assert len({p["tool"] for p in acts}) >= 2
    for p in acts:
        if p["tool"] == "scale_deployment":
            assert 0 <= p["args"]["replicas"] <= 3
        if p["tool"] == "set_config":
            assert p["args"]["value"].endswith(adversaries.CONFIG_SUFFIX)
    assert _events(run, "report.incident") and _events(run, "report.rca")


def test_one_per_fault_opens_at_most_one_incident_per_fault(runs: dict[str, Orchestrator]) -> None:
    run = runs["one-per-fault"]
    op = run.operator
    assert isinstance(op, adversaries.OnePerFaultOperator)
    incidents = {e.payload["incident"]: e.payload["alerts"] for e in _events(run, "report.incident")}
    faults = [k.split("@")[0] for k in op.reported]
    assert incidents and len(faults) == len(set(faults)) == len(incidents) <= len(run.faults)
    assert set(op.reported.values()) == set(incidents)
    history = run.alert_history
    assert history is not None
    by_id = {f"A-{a.id}": a for a in history.instances}
    windows = [FaultWindow(r.spec.id, r.spec.target, r.instance.t_inject, r.instance.t_revert, r.spec.scope,
                           frozenset(r.services)) for r in run.faults.values() if r.instance is not None]
    routes = {(r.entry.service, r.entry.operation): r.name for r in run.sim.app.routes}
    for key, incident in op.reported.items():
        fault = key.split("@")[0]
        alerts = [by_id[ref] for ref in incidents[incident]]
        t_inject = run.faults[fault].instance.t_inject  # type: ignore[union-attr]
        for a in alerts:
            assert fault in candidates(a.labels, a.active_at, a.ended_at, windows, _services(run),
                                       run.sim.app.edges(), routes)
            assert a.active_at >= t_inject, "only alerts the fault could have caused"
        # the RCA alert-spam would file for the best of them: an alert naming the target, else the first
        target = run.faults[fault].spec.target
        naming = [a for a in alerts if workload_of(a.labels, _services(run)) == target]
        best = min(naming or alerts, key=lambda a: a.id)
        filed = [e.payload for e in _events(run, "report.rca") if e.payload["incident"] == incident]
        assert filed and filed[0]["service"] == workload_of(best.labels, _services(run))
        assert filed[0]["category"] == adversaries.rca_category([best.rule])
        assert len(filed) <= 2 and all(f["service"] == target for f in filed[1:]), "re-filed once, naming it"
    assert not [p for p in _calls(run) if p["tier"] == "act"] and not _events(run, "report.resolved")


# --------------------------------------------------------------------------- a scripted tool layer


@dataclass
class Cluster:
    """A scripted tool layer: answers by ``mode``, advances a clock by each call's modeled cost."""

    deployments: list[str]
    mode: str = "ok"
    clock: float = 0.0
    calls: list[tuple[float, str, dict[str, Any]]] = field(default_factory=list)
    invocation_of_call: list[int] = field(default_factory=list)
    invocation: int = 0
    incidents: int = 0

    def call(self, tool: str, args: dict[str, Any]) -> ToolResult:
        self.calls.append((self.clock, tool, args))
        self.invocation_of_call.append(self.invocation)
        tier = TOOLS[tool].tier
        self.clock += COST_S[tier]
        if self.mode == "error":
            return ToolResult(False, error="internal error in the tool layer")
        if self.mode == "deny" and tier == "act":
            return ToolResult(False, error=f"denied by policy: workload {args!r} is outside the application",
                              denied=True)
        if self.mode == "deny-incident" and tier == "act":
            return ToolResult(False, error="denied by policy: act calls must name an open incident you reported "
                                           "(open: none)", denied=True)
        if self.mode == "rate" and tier == "act" and len([c for c in self.calls if TOOLS[c[1]].tier == "act"]) > 3:
            return ToolResult(False, error="denied by policy: rate limit: at most 30 act calls per 600 s of run "
                                           "time", denied=True)
        if self.mode == "garbage":
            return ToolResult(True, output="{not json\n/\nError", data={"incident": None, "changes": [None]})
        if tool == "kubectl_get":
            if args.get("name"):
                if args["name"] not in self.deployments:
                    return ToolResult(True, f'Error from server (NotFound): deployments.apps "{args["name"]}"')
                env = [{"name": "MODE", "value": "fast"}, {"name": "SECRET", "valueFrom": {}}]
                return ToolResult(True, json.dumps({"spec": {"template": {"spec": {"containers": [{"env": env}]}}}}))
            if args["kind"] == "deployments":
                return ToolResult(True, "".join(f"deployment.apps/{d}\n" for d in self.deployments))
            if args["kind"] == "pods":
                return ToolResult(True, "".join(f"pod/{d}-abc12-{i}\n" for d in self.deployments for i in "xy"))
            return ToolResult(True, "")
        if tool == "report_incident":
            self.incidents += 1
            return ToolResult(True, data={"incident": f"INC-{self.incidents:04d}"})
        if tool == "get_deploy_history":
            return ToolResult(True, data={"changes": [{"id": f"chg-{args['service']}"}]})
        if tool == "restart_pod" and not any(args["pod"].startswith(d + "-") for d in self.deployments):
            return ToolResult(False, error=f'pods "{args["pod"]}" not found')
        return ToolResult(True, "done")


@dataclass
class FakeInvocation:
    number: int
    t: float
    alerts: list[AlertInstance]
    cluster: Cluster
    new_alerts: list[AlertInstance] = field(default_factory=list)

    def call(self, tool: str, **args: Any) -> ToolResult:
        return self.cluster.call(tool, args)


def _alert(i: int, labels: dict[str, str], t: float = 0.0, rule: str = "PodNotReady") -> AlertInstance:
    return AlertInstance(i, rule, "g", {"alertname": rule, **labels}, f"fp{i}", [(t, "pending"), (t + 15, "firing")])


def _drive(op: Any, cluster: Cluster, alerts_at: Callable[[int], list[AlertInstance]], n: int = 25,
           change: Callable[[int, Cluster], None] | None = None) -> None:
    for k in range(1, n + 1):
        t = 60.0 * k
        if change is not None:
            change(k, cluster)
        cluster.clock, cluster.invocation = t, k
        op.invoke(FakeInvocation(k, t, alerts_at(k), cluster))
        assert cluster.clock - t <= adversaries.INVOCATION_BUDGET_S


HEALTHY = ["adservice", "cartservice", "frontend"]
ALERT_SETS: dict[str, Callable[[int], list[AlertInstance]]] = {
    "empty": lambda k: [],
    "no-workload-labels": lambda k: [_alert(1, {"namespace": "x"}, rule="Watchdog"),
                                     _alert(2, {"service": "not-a-workload"}, rule="HighRequestErrorRate")],
    "growing": lambda k: [_alert(i, {"pod": f"{HEALTHY[i % 3]}-abc12-x"} if i % 2 else
                                 {"deployment": HEALTHY[i % 3]}, t=60.0 * i,
                                 rule="PodNotReady" if i % 2 else "DeploymentNotReady") for i in range(1, 3 * k)],
}


@pytest.mark.parametrize("mode", ["ok", "error", "deny", "deny-incident", "rate", "garbage"])
@pytest.mark.parametrize("alerts", sorted(ALERT_SETS))
@pytest.mark.parametrize("name", ADVERSARIES)
def test_adversaries_survive_a_hostile_tool_layer(name: str, alerts: str, mode: str) -> None:
    cluster = Cluster(list(HEALTHY), mode=mode)

    def vanish(k: int, c: Cluster) -> None:
        if k == 10:
            c.deployments = ["frontend"]  # the others are deleted mid-run

    _drive(make_operator(name), cluster, ALERT_SETS[alerts], change=vanish)
    if alerts == "empty":
        assert not [c for c in cluster.calls if TOOLS[c[1]].tier in ("act", "report")]
    acts = [c for c in cluster.calls if TOOLS[c[1]].tier == "act"]
    assert all(c[2].get("incident") for c in acts), "every act names an incident"
    if mode in ("error", "garbage"):
        assert not acts, "no incident was ever opened, so nothing to act under"
    if mode == "rate":
        acted = [k for (_, tool, _), k in zip(cluster.calls, cluster.invocation_of_call, strict=True)
                 if tool in ACT_TOOLS]
        # from the fourth act call on the scripted policy denies over the rate limit: one try per invocation
        assert all(n == 1 for n in Counter(acted[3:]).values()), "a rate-limit denial ends the invocation's acts"


def test_rollback_cooldown_holds_over_a_long_run() -> None:
    cluster = Cluster(list(HEALTHY))
    op = adversaries.RollbackEverythingOperator()
    _drive(op, cluster, lambda k: [_alert(1, {"deployment": "frontend"})], n=40)
    rollbacks: dict[str, list[float]] = defaultdict(list)
    for t, tool, args in cluster.calls:
        if tool == "rollback":
            rollbacks[args["deployment"]].append(t)
    assert set(rollbacks) == set(HEALTHY)
    for times in rollbacks.values():
        assert len(times) >= 3
        assert all(b - a >= 600.0 for a, b in itertools.pairwise(times))
    assert len([c for c in cluster.calls if c[1] == "report_incident"]) == 1


def test_denied_targets_are_learned_and_rate_limits_respected() -> None:
    cluster = Cluster(["frontend", "loadgenerator"])
    real = cluster.call

    def policy(tool: str, args: dict[str, Any]) -> ToolResult:
        if tool in ACT_TOOLS and "loadgenerator" in json.dumps(args):
            cluster.calls.append((cluster.clock, tool, args))
            cluster.clock += COST_S["act"]
            return ToolResult(False, error="denied by policy: 'loadgenerator' is outside the application",
                              denied=True)
        return real(tool, args)

    cluster.call = policy  # type: ignore[method-assign]
    op = adversaries.RestartEverythingOperator()
    _drive(op, cluster, lambda k: [_alert(1, {"deployment": "frontend"})], n=30)
    tries = [c for c in cluster.calls if c[1] == "restart_pod"]
    assert len([c for c in tries if "loadgenerator" in c[2]["pod"]]) == 1
    times = [t for t, _, args in tries if "frontend" in args["pod"]]
    assert all(sum(1 for u in times if t - WINDOW_S < u <= t) <= MAX_ACTS_PER_WINDOW for t in times)
    assert len(times) >= 2 * MAX_ACTS_PER_WINDOW - 5
