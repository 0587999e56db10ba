"""The running score pane and the scorecard's parts, all from :func:`scoring.score.score_events`.

:class:`ScorePane` shows the Marathon-Score of the events so far (recomputed by the
screens, throttled, in a worker). :func:`summary_text`, :func:`fault_rows` and
:func:`stage_chart` draw the scorecard: the run's numbers, per-fault outcomes (the
columns of ``marathon score --faults``) and stage-wise success over time.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import Static

from scoring.score import OUTCOMES, RunScore
from tui.model import fmt_clock
from tui.scorecalc import STAGES, stage_success_series
from tui.widgets.pane import Pane, ViewContext
from tui.widgets.spark import BLOCKS, bar

OUTCOME_STYLE = {"handled": "bold green", "repaired": "green", "acted on": "yellow", "located": "cyan",
                 "correlated only": "blue", "missed": "red", "open": "dim"}
STAGE_LABEL = {"corr": "Correlation", "loc": "Localization", "rep": "Repair"}


def _s(v: float | None, unit: str = "s") -> str:
    return "-" if v is None else f"{v:.0f}{unit}"


def summary_text(score: RunScore, *, width: int = 60) -> Text:
    """The run's numbers: Marathon-Score, stage rates with bars, MTTx, risk, outcomes (fits 36 columns)."""
    out = Text()
    out.append("Score ", style="bold")
    out.append(f"{score.score:.1f} ", style="bold cyan")
    formula = f" · {score.formula}" if width >= 56 else ""
    out.append(f"of 100{formula} · {len(score.faults)} faults\n", style="dim")
    bw = max(6, min(30, width - 14))
    for key, label in (("corr", "Corr"), ("loc", "Loc"), ("rep", "Rep")):
        v = float(getattr(score, key))
        out.append(f"{label:<5}{v:4.2f} ")
        out.append(bar(v, bw), style="green")
        out.append("\n")
    out.append(f"MTTD {_s(score.mttd)} · MTTL {_s(score.mttl)} · MTTR {_s(score.mttr)}\n")
    out.append(f"risk {score.risk:.2f} ({score.risky_actions}/{score.actions} acts) · precision "
               f"{score.precision:.2f} · false decl {score.false_declarations}")
    if score.provisional:
        out.append("\nrepair credit provisional (no counterfactual yet)", style="dim italic")
    if width >= 60:
        out.append("\n")
        parts = [(o, n) for o, n in score.outcomes.items() if n]
        for i, (o, n) in enumerate(parts):
            if i:
                out.append("· ")
            out.append(f"{o} {n} ", style=OUTCOME_STYLE.get(o, ""))
    if score.integrity != "sealed":
        out.append(f"\n{score.integrity}", style="bold red")
    return out


def fault_rows(score: RunScore) -> list[tuple[str, tuple[Any, ...]]]:
    """Per-fault rows: fault, target, category, alerts, C L R, times to each stage, outcome."""
    rows = []
    for f in score.faults:
        def x(ok: bool) -> Text:
            return Text("✓", style="bold green") if ok else Text("·", style="dim")
        rows.append((f.fault, (Text(f.fault), Text(f.target), Text(f.category), Text(str(f.alerts)),
                               x(f.correlated), x(f.localized), x(f.repaired), Text(_s(f.detect_after)),
                               Text(_s(f.localize_after)), Text(_s(f.repair_after)),
                               Text(f.outcome, style=OUTCOME_STYLE.get(f.outcome, "")))))
    return rows


FAULT_COLUMNS: list[tuple[str, str, int | None]] = [
    ("fault", "FAULT", None), ("target", "TARGET", 22), ("category", "CATEGORY", 14), ("alerts", "ALERTS", 6),
    ("c", "C", 1), ("l", "L", 1), ("r", "R", 1), ("tdet", "T-DET", 6), ("tloc", "T-LOC", 6), ("trep", "T-REP", 6),
    ("outcome", "OUTCOME", 15)]


def stage_chart(score: RunScore, end_t: float, width: int) -> Text:
    """Stage-wise success over time: per stage, the share of faults injected so far that had
    reached it, as an 8-level strip from run start to ``end_t``, with the final share."""
    points = max(10, width - 18)
    series = stage_success_series(score, end_t, points)
    out = Text()
    for stage in STAGES:
        vals = series[stage]
        out.append(f"{STAGE_LABEL[stage]:<13}", style="bold")
        for v in vals:
            out.append(" " if v <= 0 else BLOCKS[min(7, int(v * 7 + 0.5))],
                       style={"corr": "blue", "loc": "cyan", "rep": "green"}[stage])
        out.append(f" {100 * (vals[-1] if vals else 0):3.0f}%\n")
    axis = [" "] * points
    for c in range(0, points - 5, max(10, points // 6)):
        label = fmt_clock(end_t * c / points)
        axis[c:c + len(label)] = list(label)
    out.append(f"{'run time':<13}" + "".join(axis)[:points], style="dim")
    return out


class ScorePane(Pane):
    """The running score (module docstring)."""

    PANE_ID = "score"
    TITLE = "Score so far"

    def compose(self) -> ComposeResult:
        yield Static(Text("scoring...", style="dim"), id="score-body")

    def key(self, ctx: ViewContext) -> Any:
        return (ctx.score_seq, ctx.reveal, self.size.width)

    def render_view(self, ctx: ViewContext) -> None:
        body = self.query_one("#score-body", Static)
        if not ctx.reveal:
            body.update(Text("hidden until the run ends", style="dim italic"))
            return
        if ctx.score is None:
            body.update(Text("scoring...", style="dim"))
            return
        body.update(summary_text(ctx.score.score, width=self.size.width or 40))
        self.set_subtitle(f"as of {fmt_clock(ctx.score.t)}")


__all__ = ["FAULT_COLUMNS", "OUTCOMES", "ScorePane", "fault_rows", "stage_chart", "summary_text"]
