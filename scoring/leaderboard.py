"""The leaderboard: one row per operator, averaging its runs (SRE-Marathon Table 2's shape).

Columns: runs, Corr, Loc, Rep (mean stage rates), MTTD, MTTL, MTTR (mean of the runs'
medians, seconds), degradation (percent of the no-op run's SLO-violation time), tokens,
cost (USD), risk, Marathon-Score. JSON output is canonical (sorted keys, fixed number
formatting), so scoring the same bundles twice gives byte-identical output.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scoring.score import FORMULA_VERSION, RunScore


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
    tokens: float
    cost_usd: float
    risk: float
    score: float
    apps: tuple[str, ...]


def _mean(values: Sequence[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return round(sum(vals) / len(vals), 4) if vals else None


def leaderboard(scores: Sequence[RunScore], per_app: bool = False) -> list[Row]:
    """Rows sorted by score (descending), then operator name; with ``per_app``, one row per
    (app, operator), sorted by app first."""
    by_op: dict[tuple[str, str], list[RunScore]] = {}
    for s in scores:
        by_op.setdefault((s.app if per_app else "", s.operator), []).append(s)
    rows = []
    for (_, op), runs in by_op.items():
        rows.append(Row(
            operator=op,
            runs=len(runs),
            corr=_mean([r.corr for r in runs]) or 0.0,
            loc=_mean([r.loc for r in runs]) or 0.0,
            rep=_mean([r.rep for r in runs]) or 0.0,
            mttd=_mean([r.mttd for r in runs]),
            mttl=_mean([r.mttl for r in runs]),
            mttr=_mean([r.mttr for r in runs]),
            degradation=_mean([r.degradation for r in runs]),
            tokens=_mean([float(r.tokens) for r in runs]) or 0.0,
            cost_usd=_mean([r.cost_usd for r in runs]) or 0.0,
            risk=_mean([r.risk for r in runs]) or 0.0,
            score=_mean([r.score for r in runs]) or 0.0,
            apps=tuple(sorted({r.app for r in runs})),
        ))
    if per_app:
        return sorted(rows, key=lambda r: (r.apps, -r.score, r.operator))
    return sorted(rows, key=lambda r: (-r.score, r.operator))


def _f(v: float | None, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def format_table(rows: Sequence[Row], per_app: bool = False) -> str:
    """The leaderboard as a plain-text table (an APP column first with ``per_app``)."""
    head = ["OPERATOR", "RUNS", "CORR", "LOC", "REP", "MTTD", "MTTL", "MTTR", "DEGR%", "TOKENS", "COST$", "RISK",
            "SCORE"]
    body = [[r.operator, str(r.runs), f"{r.corr:.3f}", f"{r.loc:.3f}", f"{r.rep:.3f}", _f(r.mttd, ".0f"),
             _f(r.mttl, ".0f"), _f(r.mttr, ".0f"), _f(r.degradation, ".1f"), f"{r.tokens:.0f}", f"{r.cost_usd:.4f}",
             f"{r.risk:.3f}", f"{r.score:.1f}"] for r in rows]
    if per_app:
        head = ["APP", *head]
        body = [[",".join(r.apps), *line] for r, line in zip(rows, body, strict=True)]
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
    text_cols = 2 if per_app else 1
    lines = ["  ".join(c.rjust(w) if i >= text_cols else c.ljust(w)
                       for i, (c, w) in enumerate(zip(line, widths, strict=True)))
             for line in [head, *body]]
    return "\n".join(lines)


def format_faults(score: RunScore) -> str:
    """Per-fault detail of one run."""
    head = ["FAULT", "TARGET", "CATEGORY", "ALERTS", "CORR", "LOC", "REP", "T-DET", "T-LOC", "T-REP", "OUTCOME"]
    body = []
    for f in score.faults:
        body.append([f.fault, f.target, f.category, str(f.alerts), "x" if f.correlated else ".",
                     "x" if f.localized else ".", "x" if f.repaired else ".", _f(f.detect_after, ".0f"),
                     _f(f.localize_after, ".0f"), _f(f.repair_after, ".0f"), f.outcome])
    widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
                     for line in [head, *body])


def to_json(scores: Sequence[RunScore], rows: Sequence[Row]) -> str:
    """Canonical JSON of the leaderboard and every run's score."""
    doc: dict[str, Any] = {
        "formula": FORMULA_VERSION,
        "leaderboard": [r.__dict__ | {"apps": list(r.apps)} for r in rows],
        "runs": [s.to_dict() for s in sorted(scores, key=lambda s: (s.operator, s.app, s.seed, s.run_id))],
    }
    return json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False) + "\n"
