"""Marathon-Score from a run's recorded events (DESIGN section 8).

Per injected fault, ordered stages, each inside the fault's active window (injection to
revert):

* **correlation** -- an incident report groups alerts attributable to the fault
  (:mod:`scoring.attribution`). An incident counts for at most one fault: the one most of
  its alerts belong to (ties: the earliest injected);
* **localization** -- after correlation, an RCA report on that incident names the
  faulted service exactly. Category and artifact matches are reported as separate
  accuracies, not required for credit;
* **repair** -- after localization, the symptom probe passes and holds (see
  :data:`HOLD_SAMPLES`, :data:`HOLD_SHARE`) after an executed action whose target set
  includes the fault's target.

MTTD, MTTL, MTTR are medians over faults of the seconds from injection to each stage.
Risk is the share of executed actions whose target set held no service with a live
fault. A false declaration is a ``resolve_incident`` on an incident whose fault's probe
still fails at the next sample. Degradation is the user-facing SLO-violation time
(route-intervals whose error share or p95 breaks the route's SLO, from ``health.sample``)
relative to the no-op run of the same schedule and seed, in percent (100 = no better
than doing nothing).

``Marathon-Score = 100 x mean over faults of (corr + loc + rep) / 3 x (1 - risk)``,
formula version :data:`FORMULA_VERSION`.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from engine.events import Event
from scoring.attribution import FaultWindow, attribute

FORMULA_VERSION = "marathon-score/1"
HOLD_SAMPLES = 3
HOLD_SHARE = 0.9
"""A probe "passes and holds" from a sample when that and the next two samples pass
(45 s at the 15 s evaluation interval) and at least 90 % of the samples from then to the
fault's revert pass: a rollout's brief glitch does not void a repair, a relapse does."""
OUTCOMES = ("handled", "fixed, unlocalized", "acted on", "located", "correlated only", "missed", "open")


@dataclass
class FaultScore:
    """Stages and outcome of one injected fault.

    Times are seconds of run time; ``*_after`` are seconds from injection.
    """

    fault: str
    title: str
    target: str
    category: str
    mechanism: str
    t_inject: float
    t_revert: float | None
    incident: str | None = None
    correlated: bool = False
    localized: bool = False
    repaired: bool = False
    detect_after: float | None = None
    localize_after: float | None = None
    repair_after: float | None = None
    category_match: bool | None = None
    artifact_match: bool | None = None
    acted_on: bool = False
    probe_recovered: bool = False
    alerts: int = 0
    outcome: str = "missed"

    @property
    def credit(self) -> float:
        return (int(self.correlated) + int(self.localized) + int(self.repaired)) / 3.0


@dataclass
class ActionRecord:
    t: float
    tool: str
    targets: list[str]
    live_fault_targets: list[str]
    operator: str

    @property
    def risky(self) -> bool:
        return not self.live_fault_targets


@dataclass
class RunScore:
    """The scored run (module docstring). Rates are 0..1; times in seconds."""

    run_id: str
    operator: str
    app: str
    seed: int
    regime: str
    formula: str
    faults: list[FaultScore]
    corr: float
    loc: float
    rep: float
    mttd: float | None
    mttl: float | None
    mttr: float | None
    risk: float
    actions: int
    risky_actions: int
    false_declarations: int
    category_accuracy: float | None
    artifact_accuracy: float | None
    degradation: float | None
    violation_s: float
    noop_violation_s: float | None
    noop_reference: str | None
    tokens: int
    cost_usd: float
    score: float
    outcomes: dict[str, int] = field(default_factory=dict)
    action_log: list[ActionRecord] = field(default_factory=list)
    integrity: str = "sealed"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for f, fs in zip(data["faults"], self.faults, strict=True):
            f["credit"] = round(fs.credit, 6)
        return data


def _median(values: Sequence[float]) -> float | None:
    return round(float(statistics.median(values)), 3) if values else None


def route_violation_seconds(events: Sequence[Event], slos: Mapping[str, tuple[float, float]],
                            interval_s: float) -> tuple[float, list[tuple[float, int]]]:
    """Seconds of SLO violation summed over routes, and the per-sample violating-route counts.

    Args:
        events: the run's events (``health.sample`` ones are read).
        slos: route -> (max error share, max p95 ms).
        interval_s: seconds each sample covers.
    """
    total = 0.0
    series: list[tuple[float, int]] = []
    first = True
    for ev in events:
        if ev.kind != "health.sample":
            continue
        if first:
            first = False  # the baseline sample covers no interval
            continue
        bad = 0
        for r in ev.payload.get("routes", []):
            slo = slos.get(r["route"])
            if slo is None or r.get("rps", 0) <= 0:
                continue
            if r["error_share"] > slo[0] or r["p95_ms"] > slo[1]:
                bad += 1
        series.append((ev.t, bad))
        total += bad * interval_s
    return total, series


def score_events(events: Sequence[Event], *, app: Any = None, noop: Mapping[str, Any] | None = None,
                 integrity: str = "sealed") -> RunScore:
    """Score one run from its events.

    Args:
        events: the run's event stream (run.start first).
        app: the app model (default: loaded from ``run.start``'s app).
        noop: the no-op counterfactual ``{"violation_s": float, "reference": str}`` for
            degradation (None: degradation is not computed).
        integrity: how the bundle verified (``sealed``, or a warning shown with the score).

    Raises:
        ValueError: no ``run.start`` event.
    """
    from engine.appmodel import load_app

    start = next((e for e in events if e.kind == "run.start"), None)
    if start is None:
        raise ValueError("not a run: no run.start event")
    meta = start.payload
    model = app or load_app(str(meta["app"]))
    services = [s.name for s in model.services]
    edges = [tuple(e) for e in meta.get("edges", model.edges())]
    interval = float(meta.get("eval_interval_s", 15.0))
    route_of_handler = {(r.entry.service, r.entry.operation): r.name for r in model.routes}

    injects = {e.payload["fault"]: e for e in events if e.kind == "fault.inject" and not e.payload.get("error")}
    reverts = {e.payload["fault"]: e.t for e in events if e.kind == "fault.revert"}
    windows = [FaultWindow(fid, str(ev.payload["target"]), ev.t, reverts.get(fid), tuple(ev.payload["scope"]))
               for fid, ev in injects.items()]
    win = {w.key: w for w in windows}
    ended = any(e.kind == "run.end" for e in events)

    # Alert instances -> fault.
    alert_owner: dict[str, str | None] = {}
    alert_count: Counter[str] = Counter()
    for ev in events:
        if ev.kind == "alert.pending" and ev.payload.get("id") and ev.payload["id"] not in alert_owner:
            owner = attribute(ev.payload["labels"], float(ev.payload.get("active_at", ev.t)), windows, services,
                              edges, route_of_handler)
            alert_owner[ev.payload["id"]] = owner
            if owner:
                alert_count[owner] += 1

    # Incidents -> fault.
    incident_fault: dict[str, str] = {}
    incident_time: dict[str, float] = {}
    claimed: set[str] = set()
    for ev in events:
        if ev.kind != "report.incident":
            continue
        votes: Counter[str] = Counter()
        for ref in ev.payload["alerts"]:
            owner = alert_owner.get(ref)
            if owner is not None:
                votes[owner] += 1
        if not votes:
            continue
        best = max(votes.items(), key=lambda kv: (kv[1], -win[kv[0]].t_inject))[0]
        w = win[best]
        if best in claimed or not w.covers(ev.t, grace=0.0):
            continue
        incident_fault[ev.payload["incident"]] = best
        incident_time[ev.payload["incident"]] = ev.t
        claimed.add(best)
    fault_incident = {f: i for i, f in incident_fault.items()}

    probes: dict[str, list[tuple[float, bool]]] = {}
    for ev in events:
        if ev.kind == "probe.result":
            probes.setdefault(ev.payload["fault"], []).append((ev.t, bool(ev.payload["ok"])))

    # Actions.
    actions: list[ActionRecord] = []
    for ev in events:
        if ev.kind != "action.executed":
            continue
        targets = [str(t) for t in ev.payload.get("targets", [])]
        live = sorted({w.target for w in windows if w.covers(ev.t, grace=0.0) and w.target in targets})
        actions.append(ActionRecord(ev.t, str(ev.payload["tool"]), targets, live, str(ev.payload.get("operator", ""))))

    scores: list[FaultScore] = []
    for fid, ev in sorted(injects.items(), key=lambda kv: (kv[1].t, kv[0])):
        p = ev.payload
        w = win[fid]
        end = w.t_revert if w.t_revert is not None else float("inf")
        fs = FaultScore(fid, str(p.get("title", "")), w.target, str(p["category"]), str(p["mechanism"]), w.t_inject,
                        w.t_revert, alerts=alert_count.get(fid, 0))
        incident = fault_incident.get(fid)
        if incident is not None:
            fs.incident = incident
            fs.correlated = True
            fs.detect_after = round(incident_time[incident] - w.t_inject, 3)
            rca = next((e for e in events if e.kind == "report.rca" and e.payload["incident"] == incident
                        and w.t_inject <= e.t <= end), None)
            if rca is not None:
                fs.category_match = rca.payload["category"] == p["category"]
                refs = {str(x) for x in p.get("artifact_refs", [p["artifact"]["ref"]])}
                fs.artifact_match = str(rca.payload["artifact"]) in refs
                if rca.payload["service"] == w.target:
                    fs.localized = True
                    fs.localize_after = round(rca.t - w.t_inject, 3)
        on_target = [a for a in actions if w.target in a.targets and w.t_inject <= a.t <= end]
        fs.acted_on = bool(on_target)
        samples = probes.get(fid, [])
        if on_target:
            t_act = on_target[0].t
            after = [(t, ok) for t, ok in samples if t > t_act]
            for i, (t, _ok) in enumerate(after):
                rest = after[i:]
                first = rest[:HOLD_SAMPLES]
                if (len(first) == HOLD_SAMPLES and all(o for _, o in first)
                        and sum(o for _, o in rest) >= HOLD_SHARE * len(rest)):
                    fs.probe_recovered = True
                    if fs.localized:
                        fs.repaired = True
                        fs.repair_after = round(t - w.t_inject, 3)
                    break
        if fs.repaired:
            fs.outcome = "handled"
        elif fs.probe_recovered:
            fs.outcome = "fixed, unlocalized"  # the probe recovered, but no repair credit without localization
        elif fs.acted_on:
            fs.outcome = "acted on"
        elif fs.localized:
            fs.outcome = "located"
        elif fs.correlated:
            fs.outcome = "correlated only"
        elif w.t_revert is None and not ended:
            fs.outcome = "open"  # still live where the events stop (a run scored mid-way)
        scores.append(fs)

    false_decl = 0
    for ev in events:
        if ev.kind != "report.resolved":
            continue
        fid = incident_fault.get(ev.payload["incident"])
        if fid is None:
            continue
        nxt = next(((t, ok) for t, ok in probes.get(fid, []) if t >= ev.t), None)
        if nxt is not None and not nxt[1]:
            false_decl += 1

    slos = {r.name: (r.slo.error_share, r.slo.latency_p95_ms) for r in model.routes}
    violation, _ = route_violation_seconds(events, slos, interval)
    degradation = None
    noop_violation = None
    reference = None
    if noop is not None:
        noop_violation = float(noop["violation_s"])
        reference = str(noop.get("reference"))
        degradation = round(100.0 * violation / noop_violation, 2) if noop_violation > 0 else 100.0
    tokens = sum(int(e.payload.get("tokens", 0) or 0) for e in events if e.kind in ("tool.call", "llm.call"))
    cost = sum(float(e.payload.get("cost_usd", 0.0) or 0.0) for e in events if e.kind == "llm.call")

    n = len(scores)
    corr = sum(f.correlated for f in scores) / n if n else 0.0
    loc = sum(f.localized for f in scores) / n if n else 0.0
    rep = sum(f.repaired for f in scores) / n if n else 0.0
    risky = sum(1 for a in actions if a.risky)
    risk = risky / len(actions) if actions else 0.0
    mean_credit = sum(f.credit for f in scores) / n if n else 0.0
    rcas = [f for f in scores if f.category_match is not None]
    return RunScore(
        run_id=str(meta["run_id"]),
        operator=str(meta["operator"]),
        app=str(meta["app"]),
        seed=int(meta["seed"]),
        regime=str(meta["regime"]),
        formula=FORMULA_VERSION,
        faults=scores,
        corr=round(corr, 6),
        loc=round(loc, 6),
        rep=round(rep, 6),
        mttd=_median([f.detect_after for f in scores if f.detect_after is not None]),
        mttl=_median([f.localize_after for f in scores if f.localize_after is not None]),
        mttr=_median([f.repair_after for f in scores if f.repair_after is not None]),
        risk=round(risk, 6),
        actions=len(actions),
        risky_actions=risky,
        false_declarations=false_decl,
        category_accuracy=round(sum(bool(f.category_match) for f in rcas) / len(rcas), 6) if rcas else None,
        artifact_accuracy=round(sum(bool(f.artifact_match) for f in rcas) / len(rcas), 6) if rcas else None,
        degradation=degradation,
        violation_s=round(violation, 3),
        noop_violation_s=noop_violation,
        noop_reference=reference,
        tokens=tokens,
        cost_usd=round(cost, 6),
        score=round(100.0 * mean_credit * (1.0 - risk), 4),
        outcomes={o: sum(1 for f in scores if f.outcome == o) for o in OUTCOMES},
        action_log=actions,
        integrity=integrity,
    )
