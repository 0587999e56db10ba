"""The leaderboard: one row per operator, averaging its runs (SRE-Marathon Table 2's shape).

Columns: runs, Corr, Loc, Rep (mean stage rates), MTTD, MTTL, MTTR (mean of the runs'
medians, seconds), degradation (percent of the no-op run's SLO-violation time), incident
precision, false declarations (mean per run), risk with its denominator (risky acts of all
acts, summed over the runs), tokens, cost (USD) and the Marathon-Score of the chosen formula.
With two or more runs, every numeric cell also shows a 95 % bootstrap interval over runs
(:func:`bootstrap_interval`: percentile interval of the mean, 2,000 resamples, fixed seed, so
the same bundles always give the same interval).

The oracle is for qualification and validation only (DESIGN section 7): :func:`leaderboard`
never ranks its runs. JSON output is canonical (sorted keys, fixed number formatting), so
scoring the same bundles twice gives byte-identical output.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from scoring.score import FORMULA_VERSION, RunScore

if TYPE_CHECKING:
    from scoring.explain import FaultTrail

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20261201
Interval = tuple[float, float]


def bootstrap_interval(values: Sequence[float], *, level: float = 0.95) -> Interval | None:
    """Percentile bootstrap interval of the mean of ``values`` (None with fewer than two).

    Deterministic: resamples are drawn from a generator seeded with :data:`BOOTSTRAP_SEED`.
    """
    if len(values) < 2:
        return None
    data = np.asarray(values, dtype=np.float64)
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    means = data[rng.integers(0, data.size, size=(BOOTSTRAP_RESAMPLES, data.size))].mean(axis=1)
    lo, hi = np.quantile(means, [(1.0 - level) / 2.0, 1.0 - (1.0 - level) / 2.0])
    return round(float(lo), 4), round(float(hi), 4)


@dataclass(frozen=True)
class Row:
    operator: str
    runs: int
    corr: float
    loc: float
    rep: float
    mttd: float | None
    mttl: float | None
    mttr: float | None
    degradation: float | None
    precision: float
    false_declarations: float
    risk: float
    risky_actions: int
    actions: int
    tokens: float
    cost_usd: float
    score: float
    apps: tuple[str, ...]
    formula: str = FORMULA_VERSION
    replayed: int = 0
    """Runs whose bundle ``marathon verify --replay`` re-executed clean on this machine."""
    engines: tuple[str, ...] = ()
    """The engines (``<version>+<code digest prefix>``) that sealed the runs."""
    intervals: dict[str, Interval] = field(default_factory=dict)
    """Column -> 95 % bootstrap interval of its mean over runs (only with two or more runs)."""


def _mean(values: Sequence[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return round(sum(vals) / len(vals), 4) if vals else None


COLUMNS: dict[str, Callable[[RunScore], float | None]] = {
    "corr": lambda r: r.corr,
    "loc": lambda r: r.loc,
    "rep": lambda r: r.rep,
    "mttd": lambda r: r.mttd,
    "mttl": lambda r: r.mttl,
    "mttr": lambda r: r.mttr,
    "degradation": lambda r: r.degradation,
    "precision": lambda r: r.precision,
    "false_declarations": lambda r: float(r.false_declarations),
    "risk": lambda r: r.risk,
    "tokens": lambda r: float(r.tokens),
    "cost_usd": lambda r: r.cost_usd,
}


def leaderboard(scores: Sequence[RunScore], per_app: bool = False, formula: str = FORMULA_VERSION) -> list[Row]:
    """Rows sorted by score (descending), then operator name; with ``per_app``, one row per
    (app, operator), sorted by app first. Oracle runs are never ranked; runs on a schedule the
    engine does not generate for their seed (``--schedule FILE``) get their own row, labelled
    ``<operator> [custom schedule]``.

    Raises:
        KeyError: a run has no score under ``formula``.
    """
    by_op: dict[tuple[str, str], list[RunScore]] = {}
    for s in scores:
        if s.oracle:
            continue
        label = f"{s.operator} [custom schedule]" if s.custom_schedule else s.operator
        by_op.setdefault((s.app if per_app else "", label), []).append(s)
    rows = []
    for (_, op), runs in by_op.items():
        values = {col: [fn(r) for r in runs] for col, fn in COLUMNS.items()}
        values["score"] = [r.scores[formula] for r in runs]
        intervals = {}
        for col, vals in values.items():
            present = [v for v in vals if v is not None]
            iv = bootstrap_interval(present) if len(present) == len(vals) else None
            if iv is not None:
                intervals[col] = iv
        rows.append(Row(
            operator=op,
            runs=len(runs),
            corr=_mean(values["corr"]) or 0.0,
            loc=_mean(values["loc"]) or 0.0,
            rep=_mean(values["rep"]) or 0.0,
            mttd=_mean(values["mttd"]),
            mttl=_mean(values["mttl"]),
            mttr=_mean(values["mttr"]),
            degradation=_mean(values["degradation"]),
            precision=_mean(values["precision"]) or 0.0,
            false_declarations=_mean(values["false_declarations"]) or 0.0,
            risk=_mean(values["risk"]) or 0.0,
            risky_actions=sum(r.risky_actions for r in runs),
            actions=sum(r.actions for r in runs),
            tokens=_mean(values["tokens"]) or 0.0,
            cost_usd=_mean(values["cost_usd"]) or 0.0,
            score=_mean(values["score"]) or 0.0,
            apps=tuple(sorted({r.app for r in runs})),
            formula=formula,
            intervals=intervals,
            replayed=sum(1 for r in runs if r.replayed == "verified"),
            engines=tuple(sorted({r.engine or "unrecorded" for r in runs})),
        ))
    if per_app:
        return sorted(rows, key=lambda r: (r.apps, -r.score, r.operator))
    return sorted(rows, key=lambda r: (-r.score, r.operator))


def _f(v: float | None, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def _cell(row: Row, col: str, value: float | None, spec: str) -> str:
    text = _f(value, spec)
    iv = row.intervals.get(col)
    if iv is not None and value is not None:
        text += f" [{format(iv[0], spec)},{format(iv[1], spec)}]"
    return text


def format_table(rows: Sequence[Row], per_app: bool = False) -> str:
    """The leaderboard as a plain-text table (an APP column first with ``per_app``); the score
    column is headed by the formula's version (``SCORE/2``: ``marathon-score/2``); REPLAY counts
    the runs whose bundles replayed clean (``marathon verify --replay``), ENGINE names the
    engines that sealed them."""
    formula = rows[0].formula if rows else FORMULA_VERSION
    head = ["OPERATOR", "RUNS", "CORR", "LOC", "REP", "MTTD", "MTTL", "MTTR", "DEGR%", "PREC", "FD", "RISK",
            "ACTS", "TOKENS", "COST$", f"SCORE/{formula.rsplit('/', 1)[-1]}", "REPLAY", "ENGINE"]
    body = [[r.operator, str(r.runs), _cell(r, "corr", r.corr, ".3f"), _cell(r, "loc", r.loc, ".3f"),
             _cell(r, "rep", r.rep, ".3f"), _cell(r, "mttd", r.mttd, ".0f"), _cell(r, "mttl", r.mttl, ".0f"),
             _cell(r, "mttr", r.mttr, ".0f"), _cell(r, "degradation", r.degradation, ".1f"),
             _cell(r, "precision", r.precision, ".2f"), _cell(r, "false_declarations", r.false_declarations, ".1f"),
             _cell(r, "risk", r.risk, ".3f"), f"{r.risky_actions}/{r.actions}", f"{r.tokens:.0f}",
             f"{r.cost_usd:.4f}", _cell(r, "score", r.score, ".1f"), f"{r.replayed}/{r.runs}",
             ",".join(r.engines)] for r in rows]
    if per_app:
        head = ["APP", *head]
        body = [[",".join(r.apps), *line] for r, line in zip(rows, body, strict=True)]
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
    text_cols = 2 if per_app else 1
    last = len(head) - 1  # ENGINE: text, left-aligned
    lines = ["  ".join(c.rjust(w) if text_cols <= i < last else c.ljust(w)
                       for i, (c, w) in enumerate(zip(line, widths, strict=True))).rstrip()
             for line in [head, *body]]
    return "\n".join(lines)


def format_faults(score: RunScore) -> str:
    """Per-fault detail of one run, with why repair was denied where it was."""
    head = ["FAULT", "TARGET", "CATEGORY", "ALERTS", "CORR", "LOC", "REP", "T-DET", "T-LOC", "T-REP", "OUTCOME",
            "WHY"]
    body = []
    for f in score.faults:
        body.append([f.fault, f.target, f.category, str(f.alerts), "x" if f.correlated else ".",
                     "x" if f.localized else ".", "x" if f.repaired else ".", _f(f.detect_after, ".0f"),
                     _f(f.localize_after, ".0f"), _f(f.repair_after, ".0f"), f.outcome,
                     (f.repair_denied or "")[:120]])
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in [head, *body]]
    lines.append(f"incidents: {score.incidents} ({score.credited_incidents} correlating, {score.duplicate_incidents} "
                 f"duplicate, {score.spurious_incidents} spurious: precision {score.precision:.2f}); declarations: "
                 f"{score.declarations} ({score.false_declarations} false); acts: {score.actions} "
                 f"({score.risky_actions} on no faulty service)")
    return "\n".join(lines)


def format_trails(trails: Iterable[FaultTrail]) -> str:
    """Every fault's evidence trail (:func:`scoring.explain.trail_lines`), one block per fault."""
    from scoring.explain import trail_lines

    blocks = ["\n".join("  " + line for line in trail_lines(t)) for t in trails]
    return "\nevidence trail, per fault:\n" + "\n\n".join(blocks) if blocks else ""


def to_json(scores: Sequence[RunScore], rows: Sequence[Row], formula: str = FORMULA_VERSION) -> str:
    """Canonical JSON of the leaderboard and every run's score."""
    doc: dict[str, Any] = {
        "formula": formula,
        "leaderboard": [r.__dict__ | {"apps": list(r.apps), "intervals": {k: list(v) for k, v in r.intervals.items()}}
                        for r in rows],
        "runs": [s.to_dict() for s in sorted(scores, key=lambda s: (s.operator, s.app, s.seed, s.run_id))],
    }
    return json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
