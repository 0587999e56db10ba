"""The tool output pane: what the player's read tools returned, newest last.

Each call is a heading (run time, the exact call) followed by the tool's text output, as
an agent would read it; errors and policy denials are red. A ``query_metrics`` answer is
drawn from its Prometheus body (:func:`query_plot`): a range as the tool's table, then one
sparkline per series across the pane with its latest value, min and max (last, so the
newest lines the pane scrolls to are the plots); an instant vector as a bar per series
with its value.
"""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import RichLog

from engine.operate.promquery import grid, series_name, short_number, sparkline
from tui.model import fmt_clock
from tui.widgets.pane import Pane, ViewContext
from tui.widgets.spark import bar

MAX_LINES = 4000
PLOT_SERIES = 8
"""Series of a range drawn as sparklines (the table below lists up to 20)."""
BAR_SERIES = 20
"""Series of an instant vector drawn as bars."""


def _num(text: str) -> str:
    try:
        return short_number(float(text))
    except ValueError:
        return text


def query_plot(body: dict[str, Any], text: str, width: int) -> list[Text]:
    """Lines drawing a ``query_metrics`` answer ``width`` characters wide (module docstring).

    Args:
        body: the answer's Prometheus body (``ToolResult.data``).
        text: the tool's text (its table, shown above a range's sparklines).
        width: the pane's width, characters.
    """
    data = body.get("data", {})
    kind = data.get("resultType")
    result = data.get("result", [])
    lines: list[Text] = []
    head = text.splitlines()[0] if text else ""
    if kind == "matrix" and result:
        lines.append(Text(head, style="bold"))
        lines.append(Text("\n".join(text.splitlines()[1:])))
        first = min(int(s["values"][0][0] * 1000) for s in result)
        last = max(int(s["values"][-1][0] * 1000) for s in result)
        spark_w = max(10, min(width - 2, 200) - 2)
        for s in result[:PLOT_SERIES]:
            ts = [int(p[0] * 1000) for p in s["values"]]
            vs = [float(p[1]) for p in s["values"]]
            finite = [v for v in vs if v == v and abs(v) != float("inf")]
            steps = sorted(b - a for a, b in pairwise(ts))
            line = Text(series_name(s["metric"]), style="bold")
            line.append(f"   last {_num(s['values'][-1][1])}", style="bold yellow")
            if finite:
                line.append(f"  min {short_number(min(finite))}  max {short_number(max(finite))}", style="dim")
            lines.append(line)
            hold = int(1.5 * steps[len(steps) // 2]) if steps else 0  # a gap of more than 1.5 steps shows
            lines.append(Text("  " + sparkline(grid(ts, vs, first, last, spark_w, hold_ms=hold), spark_w),
                              style="green"))
        if len(result) > PLOT_SERIES:
            lines.append(Text(f"  ... {len(result) - PLOT_SERIES} more series in the table above", style="dim"))
        return lines
    if kind == "vector" and result:
        lines.append(Text(head, style="bold"))
        values = [float(r["value"][1]) for r in result]
        finite = [abs(v) for v in values if v == v and abs(v) != float("inf")]
        top = max(finite, default=0.0)
        for r, v in zip(result[:BAR_SERIES], values, strict=False):
            line = Text(bar(abs(v) / top if top > 0 and v == v and abs(v) != float("inf") else 0.0, 20),
                        style="green" if v >= 0 else "red")
            line.append(f" {_num(r['value'][1]):>12}  ", style="bold yellow")
            line.append(series_name(r["metric"]))
            lines.append(line)
        rest = [ln for ln in text.splitlines() if ln.startswith(("... ", "warning: "))]
        lines.extend(Text(ln, style="dim") for ln in rest)
        return lines
    return [Text(text)]


def call_text(tool: str, args: dict[str, Any]) -> str:
    """The exact call as text: ``tool {"arg": value, ...}`` (canonical JSON, keys sorted)."""
    return f"{tool} {json.dumps(args, sort_keys=True, ensure_ascii=False)}"


class OutputPane(Pane):
    """See module docstring."""

    PANE_ID = "output"
    TITLE = "Tool output"

    def __init__(self, number: int, **kwargs: Any) -> None:
        super().__init__(number, **kwargs)
        self.calls = 0

    def compose(self) -> ComposeResult:
        yield RichLog(id="output-log", max_lines=MAX_LINES, wrap=False, markup=False, highlight=False)

    @property
    def log_widget(self) -> RichLog:
        return self.query_one(RichLog)

    def key(self, ctx: ViewContext) -> Any:
        return None

    def render_view(self, ctx: ViewContext) -> None:
        return None

    def show(self, t: float, tool: str, args: dict[str, Any], ok: bool, text: str,
             data: dict[str, Any] | None = None) -> None:
        """Append one call's output (``data``: a ``query_metrics`` answer's body, drawn as a plot)."""
        self.calls += 1
        log = self.log_widget
        log.write(Text(f"── {fmt_clock(t)}  {call_text(tool, args)}", style="bold cyan"))
        if ok and tool == "query_metrics" and data:
            for line in query_plot(data, text, log.size.width or 80):
                log.write(line)
        else:
            log.write(Text(text, style="" if ok else "bold red"))
        self.set_subtitle(f"{self.calls} calls · last: {tool}")
