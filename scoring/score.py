"""Marathon-Score from a run's recorded events (DESIGN section 8).

Per injected fault, ordered stages, each judged inside the fault's active window
(injection to revert, or the end of the events):

* **correlation** -- an incident report groups alerts that support the fault
  (:mod:`scoring.attribution`). Each incident is *about* at most one fault
  (:func:`assign_incidents`): among the faults live when it was reported that at least half
  of its alerts support, the one its latest root-cause report names (made while that fault
  was live); without such a report, the one most of its alerts could have been caused by
  (they became active after its injection), then the one most of them support (ties: a
  direct alert beats a propagated one, then the most recently injected fault, then the id). A fault
  is correlated by the best incident about it (the one that also localizes it, else the
  earliest); every other incident about it is a **duplicate**, and an incident about no
  fault is **spurious**. Both are counted and lower the incident precision.
* **localization** -- the latest RCA on that incident made before the fault's window ends
  names the faulted service exactly (later RCAs replace earlier ones). Its time, for MTTL and
  for the order of stages, is when that service was first named in the final run of RCAs
  naming it, so re-filing the same answer does not delay it. Category and artifact matches
  are reported as accuracies, not required for credit.
* **repair** -- every gate of :mod:`scoring.gates` holds for a recovery of the fault's
  symptom probe after an executed act on its service or artifact that followed
  localization. MTTR is measured to the recovery (the first passing sample).

Risk is the share of executed actions whose target set held no service of a live fault
(a fault's ``artifact_services``). A **false declaration** is a ``resolve_incident`` on an
incident about a fault that is still live and has no repair credited by then. Degradation is
the user-facing SLO-violation time (route-samples whose error share or p95 breaks the
route's SLO, from ``health.sample``) relative to the no-op run of the same schedule, in
percent (100 = no better than doing nothing).

Two formulas (:data:`FORMULAS`), both computed for every run:

* ``marathon-score/1`` (SRE-Marathon's, paper-comparable):
  ``100 x mean over faults of (corr + loc + rep) / 3 x (1 - risk)``;
* ``marathon-score/2`` (the default): ``marathon-score/1 x precision x max(0, 1 - FD / N)``,
  where precision = correlating incidents / incidents reported (1 when none), FD the false
  declarations and N the faults injected.

Without a counterfactual (``counterfactual=None``) the counterfactual, blast-radius and data
gates cannot be judged: repair credit is then *provisional* (``RunScore.provisional``) and a
leaderboard must not rank it.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from engine.bundle.events import Event
from scoring.attribution import FaultWindow, candidates
from scoring.counterfactual import Counterfactual, route_violations, store_generations
from scoring.gates import BLAST_TOLERANCE_SAMPLES, BLAST_TOLERANCE_SHARE, GATES, held_until

FORMULA_V1 = "marathon-score/1"
FORMULA_V2 = "marathon-score/2"
FORMULAS = (FORMULA_V1, FORMULA_V2)
FORMULA_VERSION = FORMULA_V2
"""The default formula."""
PURITY = 0.5
"""An incident can be about a fault only if at least this share of its alerts support it."""
OUTCOMES = ("handled", "repaired", "acted on", "located", "correlated only", "missed", "open")
"""Per-fault outcome classes (DESIGN section 8): ``handled`` earned all three stages;
``repaired`` -- the probe recovered after an act on the fault, but repair was not credited
(``repair_denied`` says which gate failed); ``acted on`` -- an act targeted it, no recovery;
``located``, ``correlated only``, ``missed``; ``open`` -- still live where the events stop."""


@dataclass
class FaultScore:
    """Stages, outcome and evidence trail of one injected fault.

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
    credit_t: float | None = None
    category_match: bool | None = None
    artifact_match: bool | None = None
    acted_on: bool = False
    probe_recovered: bool = False
    repair_denied: str | None = None
    gates: dict[str, bool | None] = field(default_factory=dict)
    duplicates: list[str] = field(default_factory=list)
    services: list[str] = field(default_factory=list)
    """The services an act must target to work on the fault (its ``artifact_services``)."""
    alerts: int = 0
    outcome: str = "missed"
    evidence: list[str] = field(default_factory=list)

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
class IncidentRecord:
    """One reported incident and what the scorer made of it.

    Attributes:
        role: ``credited`` (it correlates ``fault``), ``duplicate`` (about a fault another
            incident correlates) or ``spurious`` (about no fault).
    """

    incident: str
    t: float
    alerts: list[str]
    rcas: list[tuple[float, str, str, str]] = field(default_factory=list)
    """(t, service, category, artifact) in report order."""
    resolves: list[float] = field(default_factory=list)
    fault: str | None = None
    role: str = "spurious"
    false_declarations: int = 0


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
    incidents: int
    credited_incidents: int
    duplicate_incidents: int
    spurious_incidents: int
    precision: float
    declarations: int
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
    scores: dict[str, float] = field(default_factory=dict)
    provisional: bool = False
    oracle: bool = False
    rule_pack: str | None = None
    outcomes: dict[str, int] = field(default_factory=dict)
    action_log: list[ActionRecord] = field(default_factory=list)
    incident_log: list[IncidentRecord] = field(default_factory=list)
    integrity: str = "sealed"
    engine: str | None = None
    """Which engine sealed the run: ``<version>+<code digest prefix>`` from ``run.start``."""
    replayed: str | None = None
    """``verified`` or ``diverged``: what ``marathon verify --replay`` found for this bundle
    (recorded per bundle digest), or None when it was not replayed."""
    custom_schedule: bool = False
    """The run's schedule is not the one the engine generates for its app, regime and seed
    (``--schedule FILE``): ranked apart, never averaged with the seeded runs."""

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
    per_route = route_violations(events, slos)
    counts: dict[float, int] = {}
    first = True
    for ev in events:
        if ev.kind == "health.sample":
            if first:
                first = False
                continue
            counts.setdefault(ev.t, 0)
    for times in per_route.values():
        for t in times:
            counts[t] = counts.get(t, 0) + 1
    series = sorted(counts.items())
    return sum(n for _, n in series) * interval_s, series


# ---------------------------------------------------------------------------------------------- the run's facts


@dataclass
class _Fault:
    window: FaultWindow
    payload: dict[str, Any]
    services: frozenset[str]
    probes: list[tuple[float, bool]] = field(default_factory=list)
    checks: dict[float, tuple[bool, str]] = field(default_factory=dict)


@dataclass
class _Alert:
    id: str
    labels: dict[str, str]
    active_at: float
    ended_at: float | None = None
    support: dict[str, str] = field(default_factory=dict)


@dataclass
class _Act:
    t: float
    tool: str
    targets: frozenset[str]
    operator: str


@dataclass
class _Run:
    """What the scorer reads from one event stream."""

    meta: dict[str, Any]
    faults: dict[str, _Fault]
    alerts: dict[str, _Alert]
    incidents: list[IncidentRecord]
    acts: list[_Act]
    health: list[Event]
    ended: bool
    end_t: float
    risky_acts: list[float] = field(default_factory=list)
    """Run times of executed acts whose target set held no service of a live fault."""
    assignments: dict[str, _Assignment] = field(default_factory=dict)
    """Incident id -> what :func:`assign_incidents` made of it (read by :mod:`scoring.explain`)."""
    attempts: dict[str, list[_Attempt]] = field(default_factory=dict)
    """Fault id -> the recoveries :func:`_repair_stage` judged (read by :mod:`scoring.explain`)."""


@dataclass
class _Assignment:
    """How :func:`assign_incidents` decided what one incident is about.

    Attributes:
        alerts: how many of its alerts the run recorded (the purity rule's denominator).
        support, direct, causal: fault id -> how many of them support it (faults live when it
            was reported), directly, and became active after its injection.
        eligible: the faults at least :data:`PURITY` of its alerts support.
        chosen: the fault it is about (None: none).
        rca: the root-cause report ``(t, service)`` that decided it (None: its alerts did).
    """

    alerts: int
    support: dict[str, int]
    direct: dict[str, int]
    causal: dict[str, int]
    eligible: frozenset[str]
    chosen: str | None
    rca: tuple[float, str] | None = None


@dataclass
class _Attempt:
    """One recovery :func:`_repair_stage` judged: the streak's first passing sample, the sample
    taken as its start, every gate there, the qualifying acts, and the credit time if credited."""

    streak_start: float
    t_pass: float
    gates: dict[str, bool | None]
    acts: list[_Act]
    credited: bool
    t_credit: float | None = None


def _read(events: Sequence[Event], model: Any) -> _Run:
    start = next((e for e in events if e.kind == "run.start"), None)
    if start is None:
        raise ValueError("not a run: no run.start event")
    meta = dict(start.payload)
    reverts = {str(e.payload["fault"]): e.t for e in events if e.kind == "fault.revert"}
    faults: dict[str, _Fault] = {}
    for ev in events:
        if ev.kind == "fault.inject" and not ev.payload.get("error"):
            fid = str(ev.payload["fault"])
            services = frozenset(str(s) for s in ev.payload.get("artifact_services", [ev.payload["target"]]))
            w = FaultWindow(fid, str(ev.payload["target"]), ev.t, reverts.get(fid), tuple(ev.payload["scope"]),
                            services)
            faults[fid] = _Fault(w, dict(ev.payload), services | {w.target})
    alerts: dict[str, _Alert] = {}
    incidents: dict[str, IncidentRecord] = {}
    acts: list[_Act] = []
    health: list[Event] = []
    for ev in events:
        p = ev.payload
        if ev.kind == "alert.pending" and p.get("id") and p["id"] not in alerts:
            alerts[p["id"]] = _Alert(str(p["id"]), dict(p["labels"]), float(p.get("active_at", ev.t)))
        elif ev.kind == "alert.resolved" and p.get("id") in alerts:
            alerts[p["id"]].ended_at = ev.t
        elif ev.kind == "probe.result" and p.get("fault") in faults:
            faults[p["fault"]].probes.append((ev.t, bool(p["ok"])))
        elif ev.kind == "repair.check" and p.get("fault") in faults:
            faults[p["fault"]].checks[float(p["recovered_at"])] = (bool(p["ok"]), str(p.get("detail", "")))
        elif ev.kind == "report.incident":
            incidents[str(p["incident"])] = IncidentRecord(str(p["incident"]), ev.t, [str(a) for a in p["alerts"]])
        elif ev.kind == "report.rca" and p.get("incident") in incidents:
            incidents[p["incident"]].rcas.append((ev.t, str(p["service"]), str(p["category"]), str(p["artifact"])))
        elif ev.kind == "report.resolved" and p.get("incident") in incidents:
            incidents[p["incident"]].resolves.append(ev.t)
        elif ev.kind == "action.executed":
            acts.append(_Act(ev.t, str(p["tool"]), frozenset(str(t) for t in p.get("targets", [])),
                             str(p.get("operator", ""))))
        elif ev.kind == "health.sample":
            health.append(ev)
    names = [s.name for s in model.services]
    edges = [tuple(e) for e in meta.get("edges", model.edges())]
    route_of_handler = {(r.entry.service, r.entry.operation): r.name for r in model.routes}
    windows = [f.window for f in faults.values()]
    for a in alerts.values():
        a.support = candidates(a.labels, a.active_at, a.ended_at, windows, names, edges, route_of_handler)
    ended = any(e.kind == "run.end" for e in events)
    run = _Run(meta, faults, alerts, sorted(incidents.values(), key=lambda i: (i.t, i.incident)), acts, health,
               ended, events[-1].t if events else 0.0)
    run.risky_acts = [a.t for a in acts if not any(_live(f, a.t) and f.services & a.targets for f in faults.values())]
    return run


def _end(f: _Fault, run: _Run) -> float:
    """The end of a fault's judging window: its revert, or where the events stop."""
    return f.window.t_revert if f.window.t_revert is not None else run.end_t


def _live(f: _Fault, t: float) -> bool:
    return f.window.t_inject <= t and (f.window.t_revert is None or t < f.window.t_revert)


# ---------------------------------------------------------------------------------------------- incidents


def assign_incidents(run: _Run) -> dict[str, IncidentRecord]:
    """Decide what each incident is about and which one correlates each fault (module docstring).

    Returns:
        fault id -> the incident that correlates it. Every incident's ``fault`` and
        ``role`` are set.
    """
    about: dict[str, list[IncidentRecord]] = {}
    for inc in run.incidents:
        refs = [run.alerts[a] for a in inc.alerts if a in run.alerts]
        if not refs:
            run.assignments[inc.incident] = _Assignment(0, {}, {}, {}, frozenset(), None)
            continue
        support: dict[str, int] = {}
        direct: dict[str, int] = {}
        causal: dict[str, int] = {}
        for a in refs:
            for fid, how in a.support.items():
                if fid in run.faults and _live(run.faults[fid], inc.t):
                    support[fid] = support.get(fid, 0) + 1
                    direct[fid] = direct.get(fid, 0) + (how == "direct")
                    causal[fid] = causal.get(fid, 0) + (a.active_at >= run.faults[fid].window.t_inject)
        eligible = {fid for fid, n in support.items() if n >= PURITY * len(refs)}
        note = _Assignment(len(refs), support, direct, causal, frozenset(eligible), None)
        run.assignments[inc.incident] = note
        if not eligible:
            continue
        chosen = None
        for t, service, _c, _a in reversed(inc.rcas):
            named = [fid for fid in eligible if run.faults[fid].window.target == service
                     and t <= _end(run.faults[fid], run)]
            if named:
                chosen = max(named, key=lambda fid: (support[fid], run.faults[fid].window.t_inject, fid))
                note.rca = (t, service)
                break
        if chosen is None:
            chosen = max(eligible, key=lambda fid: (causal[fid], support[fid], direct[fid],
                                                     run.faults[fid].window.t_inject, fid))
        inc.fault = chosen
        note.chosen = chosen
        about.setdefault(chosen, []).append(inc)
    credited: dict[str, IncidentRecord] = {}
    for fid, incs in about.items():
        f = run.faults[fid]
        best = min(incs, key=lambda i: (_localization(f, i, run) is None, i.t, i.incident))
        credited[fid] = best
        for inc in incs:
            inc.role = "credited" if inc is best else "duplicate"
    return credited


def _localization(f: _Fault, inc: IncidentRecord, run: _Run) -> float | None:
    """When the incident's RCAs localized the fault (module docstring), or None."""
    end = _end(f, run)
    rcas = [r for r in inc.rcas if r[0] <= end]
    if not rcas or rcas[-1][1] != f.window.target:
        return None
    t_loc = rcas[-1][0]
    for r in reversed(rcas):
        if r[1] != f.window.target:
            break
        t_loc = r[0]
    return t_loc


# ---------------------------------------------------------------------------------------------- repair


def _sample_at(samples: Sequence[tuple[float, bool]], t: float) -> bool | None:
    """The latest sample at or before ``t`` (None: none yet)."""
    last = None
    for ts, ok in samples:
        if ts > t + 1e-9:
            break
        last = ok
    return last


def _health_at(run: _Run, t: float) -> Event | None:
    return next((ev for ev in run.health if abs(ev.t - t) < 1e-6), None)


def _route_services(model: Any, route: str) -> frozenset[str]:
    """Every service a route's call tree reaches, its entry service included."""
    r = next((x for x in model.routes if x.name == route), None)
    if r is None:
        return frozenset()
    return frozenset(svc for _, svc, _, _ in model.walk(r.entry.service, r.entry.operation))


def _slo_gate(f: _Fault, run: _Run, model: Any, t_pass: float, t_credit: float) -> bool:
    """The route probe's route: error share and p95 over the soak inside the route's SLO.

    Aggregated over the soak (request-weighted), not per sample, so that one failed request
    in a quiet 15 s does not fail it; samples at which another fault that has the route in
    its scope or targets a service on the route is live (or was reverted less than
    :data:`scoring.attribution.GRACE_S` ago, its effect still rolling back) are left out.
    """
    route = (f.payload.get("probe") or {}).get("route")
    if not route:
        return True
    slo = next((r.slo for r in model.routes if r.name == route), None)
    if slo is None:
        return True
    on_route = _route_services(model, route)
    others = [g.window for g in run.faults.values()
              if g is not f and (route in g.window.scope or g.window.target in on_route)]
    requests = errors = latency = 0.0
    for ev in run.health:
        if ev.t <= t_pass + 1e-9 or ev.t > t_credit + 1e-9:
            continue  # a sample covers the interval before it: the one at t_pass straddles the recovery
        if any(g.covers(ev.t) for g in others):
            continue
        for r in ev.payload.get("routes", []):
            if r["route"] == route and r.get("rps", 0) > 0:
                requests += float(r["rps"])
                errors += float(r["rps"]) * float(r["error_share"])
                latency += float(r["rps"]) * float(r["p95_ms"])
    if requests <= 0:
        return True
    return bool(errors / requests <= slo.error_share and latency / requests <= slo.latency_p95_ms)


def _replicas_gate(f: _Fault, run: _Run, cf: Counterfactual | None, t_credit: float) -> bool:
    """At credit time the target asks for at least its pre-fault replica count and has that many
    ready -- fewer only where the no-op run, asking for as many, had fewer ready too (another
    fault, such as a zone outage, holding them down)."""
    health = _health_at(run, t_credit)
    before = int(f.payload.get("replicas_before", 1))
    svc = None if health is None else next(
        (s for s in health.payload.get("services", []) if s["service"] == f.window.target), None)
    if svc is None or int(svc["desired"]) < before:
        return False
    need = before
    noop = cf.replicas_at(f.window.target, t_credit) if cf is not None else None
    if noop is not None and noop[1] >= before:
        need = min(before, noop[0])
    return int(svc["ready"]) >= max(1, need)


def _count_between(times: Sequence[float], lo: float, hi: float) -> int:
    return sum(1 for t in times if lo - 1e-9 <= t <= hi + 1e-9)


def _generation_increase(stores: Sequence[tuple[float, dict[str, int]]], lo: float, hi: float) -> dict[str, int]:
    before: dict[str, int] = {}
    after: dict[str, int] = {}
    for t, gens in stores:
        if t <= lo + 1e-9:
            before = gens
        if t <= hi + 1e-9:
            after = gens
    return {s: after.get(s, 0) - before.get(s, after.get(s, 0)) for s in after}


def _repair_stage(f: _Fault, fs: FaultScore, t_loc: float | None, run: _Run, model: Any, cf: Counterfactual | None,
                  run_violations: Mapping[str, list[float]],
                  run_stores: Sequence[tuple[float, dict[str, int]]]) -> None:
    """Repair: judge the repair stage of one fault (gates of :mod:`scoring.gates`); fills ``fs``.

    A recovery is a passing probe sample right after a failing one, following an act on the
    fault. When a gate other than the soak fails for it (a restart's last errors still in the
    route's SLIs, say), later samples of the same passing streak are tried as its start, so
    the credit and MTTR move to the first moment every gate holds; the restart check of the
    streak (keyed by its first sample) stands for all of them.
    """
    w = f.window
    end = _end(f, run)
    on_target = [a for a in run.acts if a.targets & f.services and w.t_inject <= a.t < end]
    fs.acted_on = bool(on_target)
    samples = f.probes
    starts = [i for i in range(1, len(samples)) if samples[i][1] and not samples[i - 1][1]
              and any(a.t < samples[i][0] for a in on_target)]
    if not starts:
        return
    fs.probe_recovered = True
    denied: list[str] = []
    attempts = run.attempts.setdefault(f.window.key, [])
    for i in starts:
        streak_start = samples[i][0]
        first: tuple[dict[str, bool | None], list[str]] | None = None
        for j in range(i, len(samples)):
            if not samples[j][1]:
                break
            t_pass = samples[j][0]
            gates, acts = _gates(f, t_pass, streak_start, t_loc, on_target, run, model, cf, run_violations, run_stores)
            failed = [g for g in GATES if gates[g] is False]
            if first is None:
                first = (gates, failed)
                if failed:
                    attempts.append(_Attempt(streak_start, t_pass, gates, acts, False,
                                             held_until(samples, t_pass, w.t_revert)))
            if gates["soak"] is False or gates["ordered"] is False:
                break  # later starts hold no better
            if not failed:
                fs.gates = gates
                fs.repaired = True
                fs.repair_after = round(t_pass - w.t_inject, 3)
                fs.credit_t = held_until(samples, t_pass, w.t_revert)
                attempts.append(_Attempt(streak_start, t_pass, gates, acts, True, fs.credit_t))
                fs.evidence.append(f"recovered at {t_pass:.0f}s after {acts[-1].tool} at {acts[-1].t:.0f}s; soak "
                                   f"held to {fs.credit_t:.0f}s; every gate passed"
                                   + ("" if cf is not None else " (counterfactual gates not judged: provisional)"))
                return
        assert first is not None
        fs.gates = first[0]
        denied.append(f"recovery at {streak_start:.0f}s: " + ", ".join(_why(g, first[0], t_loc) for g in first[1]))
    fs.repair_denied = "; ".join(denied)
    fs.evidence.append(f"repair denied: {fs.repair_denied}")


def _gates(f: _Fault, t_pass: float, streak_start: float, t_loc: float | None, on_target: Sequence[_Act],
           run: _Run, model: Any, cf: Counterfactual | None, run_violations: Mapping[str, list[float]],
           run_stores: Sequence[tuple[float, dict[str, int]]]) -> tuple[dict[str, bool | None], list[_Act]]:
    """Every gate for a recovery taken to start at ``t_pass`` (None: not judged), and the qualifying acts."""
    w = f.window
    samples = f.probes
    gates: dict[str, bool | None] = dict.fromkeys(GATES)
    acts = [a for a in on_target if a.t < t_pass and _sample_at(samples, a.t) is False]
    gates["ordered"] = t_loc is not None and any(a.t >= t_loc for a in acts)
    t_credit = held_until(samples, t_pass, w.t_revert)
    gates["soak"] = t_credit is not None
    if t_credit is None:
        return gates, acts
    gates["slo"] = _slo_gate(f, run, model, t_pass, t_credit)
    gates["replicas"] = _replicas_gate(f, run, cf, t_credit)
    check = next((v for k, v in f.checks.items() if abs(k - streak_start) < 1e-6), None)
    gates["restart"] = check is not None and check[0]
    if cf is None:
        return gates, acts
    noop = [ok for t, ok in cf.probes.get(w.key, []) if t_pass - 1e-9 <= t <= t_credit + 1e-9]
    intermittent = bool(f.payload.get("intermittent"))
    gates["counterfactual"] = bool(noop) and (not all(noop) if intermittent else not any(noop))
    n_samples = max(1, int((t_credit - w.t_inject) / float(run.meta.get("eval_interval_s", 15.0))))
    tolerance = BLAST_TOLERANCE_SAMPLES + int(BLAST_TOLERANCE_SHARE * n_samples)
    unjustified = any(w.t_inject <= t <= t_credit for t in run.risky_acts)
    gates["blast_radius"] = not unjustified or all(
        _count_between(times, w.t_inject, t_credit)
        <= _count_between(cf.route_violations.get(route, []), w.t_inject, t_credit) + tolerance
        for route, times in run_violations.items() if route not in w.scope)
    mine = _generation_increase(run_stores, w.t_inject, t_credit)
    theirs = _generation_increase(cf.stores, w.t_inject, float("inf"))
    gates["data"] = all(n <= theirs.get(store, 0) for store, n in mine.items() if store not in f.services)
    return gates, acts


def _why(gate: str, gates: Mapping[str, bool | None], t_loc: float | None) -> str:
    return {
        "ordered": "no act on the fault after localization while its probe was failing" if t_loc is not None
        else "not localized before the act",
        "soak": "the probe did not hold through the soak",
        "slo": "the route's SLIs stayed outside the SLO",
        "counterfactual": "the fault healed on its own in the no-op run",
        "replicas": "fewer replicas ready than before the fault",
        "blast_radius": "another route got worse than in the no-op run",
        "data": "a store lost its data",
        "restart": "the repair did not survive a restart of the target's pods",
    }[gate]


# ---------------------------------------------------------------------------------------------- the stages


def _fault_score(fid: str, f: _Fault, run: _Run) -> FaultScore:
    """A fault's score before any stage is judged: what it was, and how many alerts support it."""
    p = f.payload
    w = f.window
    return FaultScore(fid, str(p.get("title", "")), w.target, str(p["category"]), str(p["mechanism"]), w.t_inject,
                      w.t_revert, alerts=sum(1 for a in run.alerts.values() if fid in a.support),
                      services=sorted(f.services))


def _correlation_stage(fs: FaultScore, f: _Fault, inc: IncidentRecord, run: _Run) -> None:
    """Correlation: the incident :func:`assign_incidents` credited for the fault correlates it;
    time to detection, and the other incidents about the same fault (duplicates). Fills ``fs``."""
    fs.incident = inc.incident
    fs.correlated = True
    fs.detect_after = round(inc.t - f.window.t_inject, 3)
    fs.evidence.append(f"correlated by {inc.incident} at {inc.t:.0f}s ({len(inc.alerts)} alerts)")
    fs.duplicates = sorted(i.incident for i in run.incidents if i.fault == fs.fault and i is not inc)


def _localization_stage(fs: FaultScore, f: _Fault, inc: IncidentRecord, run: _Run) -> float | None:
    """Localization: the latest RCA on the correlating incident inside the fault's window names
    its target (:func:`_localization`); category and artifact matches of that RCA are recorded
    as accuracies. Fills ``fs``.

    Returns:
        The run time of localization (seconds), or None when the fault is not localized.
    """
    w = f.window
    p = f.payload
    rcas = [r for r in inc.rcas if r[0] <= _end(f, run)]
    if rcas:
        last = rcas[-1]
        fs.category_match = last[2] == p["category"]
        refs = {str(x) for x in p.get("artifact_refs", [p["artifact"]["ref"]])}
        fs.artifact_match = last[3] in refs
    t_loc = _localization(f, inc, run)
    if t_loc is not None:
        fs.localized = True
        fs.localize_after = round(t_loc - w.t_inject, 3)
        fs.evidence.append(f"localized to {w.target} by the RCA at {t_loc:.0f}s")
    elif rcas:
        fs.evidence.append(f"latest RCA names {rcas[-1][1]}, not {w.target}")
    return t_loc


def _judge_fault(fid: str, f: _Fault, inc: IncidentRecord | None, run: _Run, model: Any, cf: Counterfactual | None,
                 run_violations: Mapping[str, list[float]],
                 run_stores: Sequence[tuple[float, dict[str, int]]]) -> FaultScore:
    """Every stage of one fault in order -- correlation, localization, repair -- and its outcome class.

    Args:
        fid: the fault id.
        f: the fault as read from the run.
        inc: the incident that correlates it (:func:`assign_incidents`), or None.
        run: the run's facts.
        model: the app model.
        cf: the no-op counterfactual, or None (provisional repair credit).
        run_violations: route -> run times of the samples at which it violated its SLO.
        run_stores: ``[(t, {store: data generation})]`` of the run.
    """
    fs = _fault_score(fid, f, run)
    t_loc = None
    if inc is not None:
        _correlation_stage(fs, f, inc, run)
        t_loc = _localization_stage(fs, f, inc, run)
    _repair_stage(f, fs, t_loc, run, model, cf, run_violations, run_stores)
    fs.outcome = _outcome(fs, run)
    return fs


# ---------------------------------------------------------------------------------------------- the score


def score_events(events: Sequence[Event], *, app: Any = None, counterfactual: Counterfactual | None = None,
                 integrity: str = "sealed", formula: str = FORMULA_VERSION) -> RunScore:
    """Score one run from its events.

    Args:
        events: the run's event stream (run.start first).
        app: the app model (default: loaded from ``run.start``'s app).
        counterfactual: the no-op run of the same schedule (:mod:`scoring.counterfactual`);
            None: degradation is not computed and repair credit is provisional.
        integrity: how the bundle verified (``sealed``, or a warning shown with the score).
        formula: which of :data:`FORMULAS` ``RunScore.score`` reports (both are in ``scores``).

    Raises:
        ValueError: no ``run.start`` event, or an unknown formula.
    """
    return _score(events, _app_of(events, app, formula), counterfactual, integrity, formula)[0]


def _app_of(events: Sequence[Event], app: Any, formula: str) -> Any:
    """The app model to score ``events`` with (``app``, else the one ``run.start`` names), after
    checking the formula and that the events are a run.

    Raises:
        ValueError: no ``run.start`` event, or an unknown formula.
    """
    from engine.apps.model import load_app

    if formula not in FORMULAS:
        raise ValueError(f"unknown formula {formula!r}; formulas: {', '.join(FORMULAS)}")
    start = next((e for e in events if e.kind == "run.start"), None)
    if start is None:
        raise ValueError("not a run: no run.start event")
    return app or load_app(str(start.payload["app"]))


@dataclass
class _Judged:
    """What one scoring pass used, besides its :class:`RunScore` (for :mod:`scoring.explain`)."""

    run: _Run
    model: Any
    counterfactual: Counterfactual | None
    credited: dict[str, IncidentRecord]


def _score(events: Sequence[Event], model: Any, counterfactual: Counterfactual | None, integrity: str,
           formula: str) -> tuple[RunScore, _Judged]:
    """The one scoring pass (:func:`score_events`), returning what it read and decided too."""
    run = _read(events, model)
    credited = assign_incidents(run)
    slos = {r.name: (r.slo.error_share, r.slo.latency_p95_ms) for r in model.routes}
    run_violations = route_violations(events, slos)
    run_stores = store_generations(events)
    scores = [_judge_fault(fid, f, credited.get(fid), run, model, counterfactual, run_violations, run_stores)
              for fid, f in sorted(run.faults.items(), key=lambda kv: (kv[1].window.t_inject, kv[0]))]
    score = _run_score(events, run, scores, run_violations, counterfactual, integrity, formula)
    return score, _Judged(run, model, counterfactual, credited)


def _declarations(run: _Run, scores: Sequence[FaultScore]) -> tuple[int, int]:
    """Resolutions of incidents about a fault, and the false ones among them: the fault still
    live and no repair credited by then. Sets each incident's ``false_declarations``.

    Returns:
        (declarations, false declarations).
    """
    repaired_at = {fs.fault: fs.credit_t for fs in scores if fs.repaired}
    declarations = 0
    false_decl = 0
    for inc in run.incidents:
        if inc.fault is None:
            continue
        f = run.faults[inc.fault]
        for t_r in inc.resolves:
            declarations += 1
            credit_t = repaired_at.get(inc.fault)
            if _live(f, t_r) and (credit_t is None or credit_t > t_r + 1e-9):
                inc.false_declarations += 1
                false_decl += 1
    return declarations, false_decl


def _action_log(run: _Run) -> list[ActionRecord]:
    """Every executed act with the services of live faults its target set held (none: risky)."""
    actions: list[ActionRecord] = []
    for a in run.acts:
        live = sorted({s for f in run.faults.values() if _live(f, a.t) for s in f.services & a.targets})
        actions.append(ActionRecord(a.t, a.tool, sorted(a.targets), live, a.operator))
    return actions


def _degradation(violation_s: float,
                 cf: Counterfactual | None) -> tuple[float | None, float | None, str | None]:
    """Degradation against the no-op run: the run's SLO-violation seconds in percent of the
    no-op run's (100 when the no-op run violated nothing).

    Returns:
        (degradation, the no-op run's violation seconds, its reference); all None without ``cf``.
    """
    if cf is None:
        return None, None, None
    noop_violation = float(cf.violation_s)
    degradation = round(100.0 * violation_s / noop_violation, 2) if noop_violation > 0 else 100.0
    return degradation, noop_violation, cf.reference


def _usage(events: Sequence[Event]) -> tuple[int, float]:
    """Tokens (tool calls and model calls) and model cost in US dollars."""
    tokens = sum(int(e.payload.get("tokens", 0) or 0) for e in events if e.kind in ("tool.call", "llm.call"))
    cost = sum(float(e.payload.get("cost_usd", 0.0) or 0.0) for e in events if e.kind == "llm.call")
    return tokens, cost


def _run_score(events: Sequence[Event], run: _Run, scores: list[FaultScore], run_violations: Mapping[str, list[float]],
               cf: Counterfactual | None, integrity: str, formula: str) -> RunScore:
    """Assemble the :class:`RunScore` from the judged faults: stage rates and medians, risk,
    incident precision, declarations, degradation, usage and both formulas (module docstring)."""
    meta = run.meta
    declarations, false_decl = _declarations(run, scores)
    actions = _action_log(run)
    violation = sum(len(v) for v in run_violations.values()) * float(meta.get("eval_interval_s", 15.0))
    degradation, noop_violation, reference = _degradation(violation, cf)
    tokens, cost = _usage(events)

    n = len(scores)
    corr = sum(f.correlated for f in scores) / n if n else 0.0
    loc = sum(f.localized for f in scores) / n if n else 0.0
    rep = sum(f.repaired for f in scores) / n if n else 0.0
    risky = sum(1 for a in actions if a.risky)
    risk = risky / len(actions) if actions else 0.0
    mean_credit = sum(f.credit for f in scores) / n if n else 0.0
    n_inc = len(run.incidents)
    n_cred = sum(1 for i in run.incidents if i.role == "credited")
    precision = n_cred / n_inc if n_inc else 1.0
    v1 = 100.0 * mean_credit * (1.0 - risk)
    v2 = v1 * precision * max(0.0, 1.0 - false_decl / n) if n else 0.0
    both = {FORMULA_V1: round(v1, 4), FORMULA_V2: round(v2, 4)}
    with_rca = [f for f in scores if f.category_match is not None]
    pack = meta.get("rule_pack")
    return RunScore(
        run_id=str(meta["run_id"]),
        operator=str(meta["operator"]),
        app=str(meta["app"]),
        seed=int(meta["seed"]),
        regime=str(meta["regime"]),
        formula=formula,
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
        incidents=n_inc,
        credited_incidents=n_cred,
        duplicate_incidents=sum(1 for i in run.incidents if i.role == "duplicate"),
        spurious_incidents=sum(1 for i in run.incidents if i.role == "spurious"),
        precision=round(precision, 6),
        declarations=declarations,
        false_declarations=false_decl,
        category_accuracy=round(sum(bool(f.category_match) for f in with_rca) / len(with_rca), 6) if with_rca
        else None,
        artifact_accuracy=round(sum(bool(f.artifact_match) for f in with_rca) / len(with_rca), 6) if with_rca
        else None,
        degradation=degradation,
        violation_s=round(violation, 3),
        noop_violation_s=noop_violation,
        noop_reference=reference,
        tokens=tokens,
        cost_usd=round(cost, 6),
        score=both[formula],
        scores=both,
        provisional=cf is None,
        oracle=bool(meta.get("oracle")) or str(meta.get("operator")) == "oracle",
        rule_pack=str(pack.get("id")) if isinstance(pack, dict) else (str(pack) if pack else None),
        outcomes={o: sum(1 for f in scores if f.outcome == o) for o in OUTCOMES},
        action_log=actions,
        incident_log=list(run.incidents),
        integrity=integrity,
        engine=_engine_label(meta.get("engine")),
    )


def _engine_label(engine: Any) -> str | None:
    if not isinstance(engine, dict):
        return None
    return f"{engine.get('version', '?')}+{str(engine.get('code_sha256', ''))[:8]}"


def _outcome(fs: FaultScore, run: _Run) -> str:
    if fs.repaired:
        return "handled"
    if fs.probe_recovered:
        return "repaired"
    if fs.acted_on:
        return "acted on"
    if fs.localized:
        return "located"
    if fs.correlated:
        return "correlated only"
    if fs.t_revert is None and not run.ended:
        return "open"  # still live where the events stop (a run scored mid-way)
    return "missed"
