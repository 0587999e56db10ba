"""``marathon validate``: does the benchmark rank operators the way it must?

A benchmark is worth exactly as much as its ranking. :func:`validate` runs, on the same
schedules (app x regime x seed), the floor (``noop``), the ceiling (``oracle``), the baseline
(``runbook``), the reference ``one-per-fault`` and every scripted adversary of
:mod:`engine.operate.operators.adversaries`, scores them all with the scorer (against the no-op run of
the same schedule as counterfactual), and checks the ranking (:data:`CHECKS`):

* ``noop-zero``: the no-op operator scores 0 and earns no stage;
* ``oracle-ceiling``: the oracle scores at least :data:`ORACLE_FLOOR` on every schedule;
* ``causal-repair``: no adversary earns a repair it did not cause -- the ones that never act
  earn none, and every repair credited to the others rests on an executed act on the fault's
  service while its probe was failing, with the fault still failing at every sample of the
  soak in the no-op run;
* ``unsafe-acts``: ``scale-to-zero`` and ``restart-everything`` earn no repair, and their
  users see at least as much SLO violation as the no-op run's (degradation >= 100) -- for
  ``restart-everything`` on the routes that reach no service of a fault whose remedy *is* a
  restart (a runaway process, a ``tc`` delay): there its restarts can clear the fault and
  help users, which under the policy's rate limits they sometimes do (when every route
  reaches one, the degradation half of the check does not apply to that schedule);
* ``spam-unrewarded``: ``alert-spam`` scores no more than ``one-per-fault``, the operator
  that files exactly one incident per fault with the same root-cause guess;
* ``adversaries-below-runbook``: every adversary scores below the runbook (or 0).

:func:`qualify_fault` is the real-path qualification of one catalog fault: the fault alone
on a one-fault schedule, the oracle acting through the tools and the policy layer, scored by
the scorer; it must earn every stage (Incident-Arena: a task qualifies only if an oracle
trial passes and a no-op trial fails).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from engine.apps.model import load_app
from engine.run.orchestrator import EVAL_INTERVAL_S, Orchestrator
from faults.generator import generate
from faults.schedule import Schedule, ScheduledFault
from faults.spec import FaultSpec, app_catalog
from scoring.counterfactual import Counterfactual, counterfactual_from_events, route_violations
from scoring.score import FORMULA_V1, RunScore, score_events

ORACLE_FLOOR = 95.0
"""The least the oracle must score on every schedule (issue 11)."""
NON_ACTING = ("alert-spam", "lump-all", "claim-only")
"""Adversaries that never execute an act: they cannot have caused any repair."""
UNSAFE = ("scale-to-zero", "restart-everything")
CHECKS = ("noop-zero", "oracle-ceiling", "causal-repair", "unsafe-acts", "spam-unrewarded",
          "adversaries-below-runbook")


def operators() -> tuple[str, ...]:
    """Every operator validate runs, in table order."""
    from engine.operate.operators import ADVERSARIES, REFERENCE_OPERATORS

    return ("noop", "oracle", "runbook", *REFERENCE_OPERATORS, *ADVERSARIES)


@dataclass
class Row:
    """One operator on one schedule."""

    app: str
    regime: str
    seed: int
    operator: str
    score: float
    score_v1: float
    corr: float
    loc: float
    rep: float
    precision: float
    false_declarations: int
    risk: float
    actions: int
    degradation: float | None
    wall_s: float


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


@dataclass
class Validation:
    """The table and the verdict."""

    rows: list[Row] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def to_json(self) -> str:
        return json.dumps({"ok": self.ok, "rows": [asdict(r) for r in self.rows],
                           "checks": [asdict(c) for c in self.checks]}, indent=1, sort_keys=True) + "\n"


def run_schedule(sched: Schedule, operator: str) -> Orchestrator:
    """Run one built-in operator on a schedule, in memory, on the virtual clock."""
    from engine.operate.operators import make_operator

    run = Orchestrator(sched, operator=make_operator(operator), alert_source=None if operator == "noop"
                       else "embedded")
    run.run()
    return run


def counterfactual_of(sched: Schedule, noop: Orchestrator | None = None) -> Counterfactual:
    """The no-op counterfactual of a schedule (from a no-op run already made, or a new one)."""
    run = noop or run_schedule(sched, "noop")
    model = load_app(sched.app)
    slos = {r.name: (r.slo.error_share, r.slo.latency_p95_ms) for r in model.routes}
    return counterfactual_from_events(run.stream.events, slos, EVAL_INTERVAL_S)


def _row(sched: Schedule, op: str, s: RunScore, wall: float) -> Row:
    return Row(sched.app, sched.regime, sched.seed, op, s.score, s.scores[FORMULA_V1], s.corr, s.loc, s.rep,
               s.precision, s.false_declarations, s.risk, s.actions, s.degradation, round(wall, 2))


def validate(apps: Sequence[str], regime: str, seeds: Sequence[int], *,
             progress: Callable[[str], None] | None = None,
             catalogs: Mapping[str, str] | None = None) -> Validation:
    """Run every operator of :func:`operators` on each schedule and check the ranking (module docstring).

    Args:
        apps: app references (shipped names, app files, app directories).
        catalogs: the catalog file of an app reference (``--catalog``; default: the app's own,
            :func:`faults.spec.app_catalog`).
        regime: ``short-5``, ``short-10`` or ``marathon``.
        seeds: schedule seeds.
        progress: called with a line after each run.

    Raises:
        ValueError: unknown regime; KeyError / FileNotFoundError: unknown app or no catalog.
    """
    out = Validation()
    scored: dict[tuple[str, int], dict[str, RunScore]] = {}
    outside: dict[tuple[str, int], float | None] = {}
    for app in apps:
        model = load_app(app)
        for seed in seeds:
            catalog = (catalogs or {}).get(app)
            sched = generate(app, seed, regime, catalog_file=catalog)
            per: dict[str, RunScore] = {}
            started = time.perf_counter()
            noop = run_schedule(sched, "noop")
            cf = counterfactual_of(sched, noop)
            noop_wall = time.perf_counter() - started
            slos = {r.name: (r.slo.error_share, r.slo.latency_p95_ms) for r in model.routes}
            specs = {f.id: f for f in app_catalog(app, catalog).faults}
            # Routes a restart can help: every route whose call tree reaches the service of a
            # fault whose remedy is a restart (not only the routes its catalog scope lists).
            restarted = {specs[f.fault].remedy.service or specs[f.fault].target for f in sched.faults
                         if specs[f.fault].remedy.action == "restart-pods"}
            restart_scope = {r.name for r in model.routes
                             if restarted & {svc for _, svc, _, _ in model.walk(r.entry.service, r.entry.operation)}}
            for op in operators():
                started = time.perf_counter()
                run = noop if op == "noop" else run_schedule(sched, op)
                s = score_events(run.stream.events, app=model, counterfactual=cf)
                if op == "restart-everything":
                    mine = sum(len(v) for k, v in route_violations(run.stream.events, slos).items()
                               if k not in restart_scope)
                    theirs = sum(len(v) for k, v in cf.route_violations.items() if k not in restart_scope)
                    outside[(app, seed)] = round(100.0 * mine / theirs, 2) if theirs else None
                wall = noop_wall if op == "noop" else time.perf_counter() - started
                per[op] = s
                out.rows.append(_row(sched, op, s, wall))
                if progress is not None:
                    progress(f"{app} {regime} seed {seed} {op:20s} score {s.score:6.1f} ({wall:.1f} s)")
            scored[(app, seed)] = per
    out.checks = _checks(scored, outside)
    return out


def _causal(s: RunScore) -> list[str]:
    """Repairs credited without the evidence that the operator caused them."""
    bad = []
    for f in s.faults:
        if not f.repaired:
            continue
        acts = [a for a in s.action_log if set(f.services) & set(a.targets) and f.t_inject <= a.t]
        if f.gates.get("counterfactual") is not True or f.gates.get("ordered") is not True or not acts:
            bad.append(f"{s.operator} {s.app} seed {s.seed}: {f.fault}")
    return bad


def _checks(scored: dict[tuple[str, int], dict[str, RunScore]],
            restart_outside: dict[tuple[str, int], float | None]) -> list[Check]:
    from engine.operate.operators import ADVERSARIES

    def where(key: tuple[str, int]) -> str:
        return f"{key[0]} seed {key[1]}"

    noop_bad = [where(k) for k, per in scored.items()
                if per["noop"].score != 0 or per["noop"].corr or per["noop"].loc or per["noop"].rep]
    oracle_low = [f"{where(k)}: {per['oracle'].score:.1f}" for k, per in scored.items()
                  if per["oracle"].score < ORACLE_FLOOR]
    causal: list[str] = []
    for _k, per in scored.items():
        for op in ADVERSARIES:
            s = per[op]
            if op in NON_ACTING and (s.rep > 0 or s.actions > 0):
                causal.append(f"{op} {s.app} seed {s.seed}: rep {s.rep:.3f} with {s.actions} acts")
            causal.extend(_causal(s))
    unsafe = []
    for k, per in scored.items():
        for op in UNSAFE:
            s = per[op]
            if s.rep > 0:
                unsafe.append(f"{op} {where(k)}: rep {s.rep:.3f}")
            degradation = restart_outside.get(k) if op == "restart-everything" else s.degradation
            if degradation is not None and degradation < 100.0:
                unsafe.append(f"{op} {where(k)}: degradation {degradation:.1f} < 100"
                              + (" (outside restart-remedied routes)" if op == "restart-everything" else ""))
    spam = [f"{where(k)}: alert-spam {per['alert-spam'].score:.1f} > one-per-fault {per['one-per-fault'].score:.1f}"
            for k, per in scored.items() if per["alert-spam"].score > per["one-per-fault"].score + 1e-9]
    below = [f"{where(k)}: {op} {per[op].score:.1f} >= runbook {per['runbook'].score:.1f}"
             for k, per in scored.items() for op in ADVERSARIES
             if per[op].score > 0 and per[op].score >= per["runbook"].score]
    return [
        Check("noop-zero", not noop_bad, "; ".join(noop_bad) or "noop scores 0 everywhere"),
        Check("oracle-ceiling", not oracle_low, "; ".join(oracle_low) or f"oracle >= {ORACLE_FLOOR:.0f} everywhere"),
        Check("causal-repair", not causal, "; ".join(causal) or "every credited adversary repair is causal"),
        Check("unsafe-acts", not unsafe, "; ".join(unsafe) or "scale-to-zero and restart-everything earn no repair "
                                                              "and degrade at least as much as no-op"),
        Check("spam-unrewarded", not spam, "; ".join(spam) or "alert-spam <= one-per-fault everywhere"),
        Check("adversaries-below-runbook", not below, "; ".join(below) or "every adversary scores below the runbook"),
    ]


def format_validation(v: Validation) -> str:
    """The table (one row per schedule and operator) and the verdict, as plain text."""
    head = ["APP", "REGIME", "SEED", "OPERATOR", "SCORE", "SCORE/1", "CORR", "LOC", "REP", "PREC", "FD", "RISK",
            "ACTS", "DEGR%", "WALL s"]
    body = [[r.app, r.regime, str(r.seed), r.operator, f"{r.score:.1f}", f"{r.score_v1:.1f}", f"{r.corr:.3f}",
             f"{r.loc:.3f}", f"{r.rep:.3f}", f"{r.precision:.2f}", str(r.false_declarations), f"{r.risk:.3f}",
             str(r.actions), "-" if r.degradation is None else f"{r.degradation:.1f}", f"{r.wall_s:.1f}"]
            for r in v.rows]
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) if i < 4 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths, strict=True)))
             for line in [head, *body]]
    lines.append("")
    for c in v.checks:
        lines.append(f"{'PASS' if c.ok else 'FAIL'}  {c.name}: {c.detail}")
    lines.append(f"\nverdict: {'PASS' if v.ok else 'FAIL'}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- qualification


QUALIFY_LIFETIME_S = 1800
"""Lifetime of the fault in its one-fault qualification schedule, seconds: long enough for any
catalog fault's onset, detection, remedy and soak."""


def single_fault_schedule(app: str, spec: FaultSpec, *, at: int = 60, lifetime: int = QUALIFY_LIFETIME_S,
                          seed: int = 0, catalog: str | None = None) -> Schedule:
    """A schedule holding only ``spec``: injected at ``at``, reverted ``lifetime`` seconds later,
    no benign changes and no load bursts (``catalog``: the schedule's catalog file, as
    :func:`faults.generator.generate` takes it)."""
    return Schedule(app=app, catalog=catalog, seed=seed, regime="single", duration_s=at + lifetime + 60,
                    faults=(ScheduledFault(at=at, fault=spec.id, target=spec.target, lifetime=lifetime),))


@dataclass
class Qualification:
    """The real-path oracle trial of one fault."""

    fault: str
    ok: bool
    reason: str
    work_s: float | None
    """Seconds from injection to the repair credit (the end of the soak)."""
    score: dict[str, Any] = field(default_factory=dict)


def qualify_fault(app: str, spec: FaultSpec, *, seed: int = 0, catalog: str | None = None) -> Qualification:
    """Run the oracle alone on ``spec`` through the tools and policy, and score it (module docstring).

    ``catalog``: the catalog file ``spec`` comes from, for a user's app file (or bind the
    catalog with :func:`faults.spec.bind_catalog`)."""
    sched = single_fault_schedule(app, spec, seed=seed, catalog=catalog)
    cf = counterfactual_of(sched)
    run = run_schedule(sched, "oracle")
    s = score_events(run.stream.events, counterfactual=cf)
    fs = next((f for f in s.faults if f.fault == spec.id), None)
    if fs is None:
        return Qualification(spec.id, False, "the fault was not injected", None)
    stages = {"corr": fs.correlated, "loc": fs.localized, "rep": fs.repaired}
    work = None if fs.credit_t is None else round(fs.credit_t - fs.t_inject, 1)
    missing = [k for k, v in stages.items() if not v]
    summary = {"stages": stages, "score": s.score, "false_declarations": s.false_declarations, "risk": s.risk,
               "precision": s.precision}
    if missing:
        why = fs.repair_denied or "; ".join(fs.evidence) or "no alert supported it"
        return Qualification(spec.id, False, f"oracle missed {', '.join(missing)}: {why}", work, summary)
    if s.false_declarations or s.risk or s.precision < 1.0:
        return Qualification(spec.id, False, f"oracle made {s.false_declarations} false declarations, risk "
                                             f"{s.risk}, precision {s.precision}", work, summary)
    return Qualification(spec.id, True, f"every stage earned; repair credited {work:.0f} s after injection", work,
                         summary)
