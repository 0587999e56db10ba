"""``marathon report``: a self-contained HTML report of one scored run, with plots.

Four figures (matplotlib, embedded as PNG data URIs so the HTML is one file):

* the run timeline -- every fault from injection to revert, with its correlation,
  localization and repair marks, and the operator's actions beneath (SRE-Marathon fig. 1);
* stage-wise success over time -- the share of faults correlated, localised and repaired
  within t minutes of injection (fig. 5);
* one outcome per fault (fig. 9);
* executed actions by what they touched: a target with a live fault, or not (fig. 8).

After the per-fault table, each fault's evidence trail (:mod:`scoring.explain`) when given.
"""

from __future__ import annotations

import base64
import html
import io
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from engine.bundle.events import Event
from scoring.leaderboard import format_faults
from scoring.score import OUTCOMES, RunScore

if TYPE_CHECKING:
    from scoring.explain import FaultTrail

CATEGORY_COLOURS = {"code-bug": "#d62728", "configuration": "#ff7f0e", "runtime": "#1f77b4",
                    "infrastructure": "#9467bd"}
OUTCOME_COLOURS = {"handled": "#2ca02c", "repaired": "#98df8a", "acted on": "#ffbb78", "located": "#aec7e8",
                   "correlated only": "#c7c7c7", "missed": "#7f7f7f", "open": "#dbdb8d"}


def _png_bytes(fig: object) -> bytes:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})  # type: ignore[attr-defined]
    plt.close(fig)  # type: ignore[arg-type]
    return buf.getvalue()


def timeline_figure(score: RunScore, events: Sequence[Event]) -> object:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    faults = score.faults
    end = max((e.t for e in events), default=0.0) / 60.0
    n = len(faults)
    fig, (ax, axa) = plt.subplots(2, 1, figsize=(11, 0.32 * n + 2.6), sharex=True,
                                  gridspec_kw={"height_ratios": [max(n, 1), 2.2]})
    for i, f in enumerate(faults):
        y = n - i - 1
        stop = (f.t_revert if f.t_revert is not None else end * 60.0) / 60.0
        ax.barh(y, stop - f.t_inject / 60.0, left=f.t_inject / 60.0, height=0.6,
                color=CATEGORY_COLOURS.get(f.category, "#888"), alpha=0.75)
        for after, marker, colour in ((f.detect_after, "o", "black"), (f.localize_after, "s", "navy"),
                                      (f.repair_after, "*", "gold")):
            if after is not None:
                ax.plot((f.t_inject + after) / 60.0, y, marker=marker, color=colour, markersize=6,
                        markeredgecolor="black")
    ax.set_yticks(range(n), [f.fault[:38] for f in reversed(faults)], fontsize=7)
    ax.set_title(f"{score.run_id}: faults (bars, by category) with correlation o, localization s, repair *")
    from matplotlib.patches import Rectangle

    handles = [Rectangle((0, 0), 1, 1, color=c) for c in CATEGORY_COLOURS.values()]
    ax.legend(handles, list(CATEGORY_COLOURS), loc="upper right", fontsize=7)
    live = [a for a in score.action_log if not a.risky]
    risky = [a for a in score.action_log if a.risky]
    axa.scatter([a.t / 60.0 for a in live], [1] * len(live), marker="|", s=200, color="#2ca02c",
                label="action on a live fault")
    axa.scatter([a.t / 60.0 for a in risky], [0] * len(risky), marker="|", s=200, color="#d62728",
                label="action elsewhere (risk)")
    axa.set_yticks([0, 1], ["other", "live fault"], fontsize=8)
    axa.set_ylim(-0.6, 1.6)
    axa.set_xlabel("run time (min)")
    axa.legend(loc="upper right", fontsize=7)
    axa.set_xlim(0, max(end, 1.0))
    return fig


def stages_figure(score: RunScore) -> object:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.6))
    n = max(len(score.faults), 1)
    horizon = 30
    xs = list(range(horizon + 1))
    for label, attr, colour in (("correlation", "detect_after", "#1f77b4"), ("localization", "localize_after",
                                                                             "#ff7f0e"),
                                ("repair", "repair_after", "#2ca02c")):
        times = [getattr(f, attr) for f in score.faults if getattr(f, attr) is not None]
        ys = [sum(1 for t in times if t <= x * 60.0) / n for x in xs]
        ax.step(xs, ys, where="post", label=label, color=colour)
    ax.set_xlabel("minutes since injection")
    ax.set_ylabel("share of faults")
    ax.set_ylim(0, 1.02)
    ax.set_title("stage-wise success over time")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def outcomes_figure(score: RunScore) -> object:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    counts = Counter(f.outcome for f in score.faults)
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.bar(list(OUTCOMES), [counts.get(o, 0) for o in OUTCOMES], color=[OUTCOME_COLOURS[o] for o in OUTCOMES])
    ax.set_ylabel("faults")
    ax.set_title("outcome per fault")
    ax.tick_params(axis="x", labelsize=8)
    return fig


def actions_figure(score: RunScore) -> object:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tools = sorted({a.tool for a in score.action_log}) or ["(none)"]
    live = [sum(1 for a in score.action_log if a.tool == t and not a.risky) for t in tools]
    risky = [sum(1 for a in score.action_log if a.tool == t and a.risky) for t in tools]
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.bar(tools, live, color="#2ca02c", label="touched a live fault")
    ax.bar(tools, risky, bottom=live, color="#d62728", label="touched no live fault")
    ax.set_ylabel("executed actions")
    ax.set_title("executed actions by what they touched")
    ax.legend(fontsize=8)
    return fig


def _trails_html(trails: Mapping[str, FaultTrail] | None) -> str:
    if not trails:
        return ""
    from scoring.explain import trail_lines

    blocks = []
    for t in trails.values():
        lines = trail_lines(t)
        blocks.append(f"<details><summary>{html.escape(lines[0])}</summary>\n"
                      f"<pre>{html.escape(chr(10).join(lines[1:]))}</pre></details>")
    return "<h2>Evidence trail, per fault</h2>\n" + "\n".join(blocks)


def write_report(score: RunScore, events: Sequence[Event], out_dir: str | Path,
                 trails: Mapping[str, FaultTrail] | None = None) -> Path:
    """Write ``index.html`` (self-contained: figures embedded) into ``out_dir``, and each
    figure as a PNG beside it; returns the HTML's path. With ``trails`` (fault id ->
    :class:`scoring.explain.FaultTrail` of the same scoring pass) each fault's evidence trail
    follows the per-fault table, one collapsible block per fault."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    raw = [("Run timeline", "timeline.png", _png_bytes(timeline_figure(score, events))),
           ("Stage-wise success over time", "stages.png", _png_bytes(stages_figure(score))),
           ("Outcome per fault", "outcomes.png", _png_bytes(outcomes_figure(score))),
           ("Executed actions", "actions.png", _png_bytes(actions_figure(score)))]
    for _, name, data in raw:
        (out / name).write_bytes(data)  # also as files, for documents that embed one figure
    figs = [(title, "data:image/png;base64," + base64.b64encode(data).decode()) for title, _, data in raw]

    def fmt(v: float | None, spec: str = ".0f") -> str:
        return "-" if v is None else format(v, spec)

    summary = [("Operator", score.operator), ("App / regime / seed", f"{score.app} / {score.regime} / {score.seed}"),
               ("Marathon-Score", f"{score.score:.1f} ({score.formula})"),
               ("Correlation / Localization / Repair", f"{score.corr:.3f} / {score.loc:.3f} / {score.rep:.3f}"),
               ("MTTD / MTTL / MTTR (s)", f"{fmt(score.mttd)} / {fmt(score.mttl)} / {fmt(score.mttr)}"),
               ("Risk", f"{score.risk:.3f} ({score.risky_actions} of {score.actions} actions touched no live fault)"),
               ("False declarations", str(score.false_declarations)),
               ("Category / artifact accuracy", f"{fmt(score.category_accuracy, '.2f')} / "
                                                f"{fmt(score.artifact_accuracy, '.2f')}"),
               ("Degradation", f"{fmt(score.degradation, '.1f')} % of the no-op run"),
               ("Tokens / cost", f"{score.tokens} / ${score.cost_usd:.4f}"),
               ("Bundle integrity", score.integrity)]
    rows = "\n".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in summary)
    images = "\n".join(f'<h2>{html.escape(t)}</h2>\n<img alt="{html.escape(t)}" src="{src}">' for t, src in figs)
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>SRE-Marathon report: {html.escape(score.run_id)}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;color:#222}}
th{{text-align:left;padding-right:1.5em}}img{{max-width:100%}}pre{{background:#f5f5f5;padding:1em;overflow:auto}}</style>
</head><body>
<h1>SRE-Marathon run report</h1>
<table>{rows}</table>
{images}
<h2>Faults</h2>
<pre>{html.escape(format_faults(score))}</pre>
{_trails_html(trails)}
</body></html>
"""
    path = out / "index.html"
    path.write_text(page, encoding="utf-8")
    return path
