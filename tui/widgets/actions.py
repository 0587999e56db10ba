"""The actions pane: every tool call of the operator, by whom, with its arguments, the
policy's decision and the result (a k9s-style log of every action taken).

Act calls are highlighted (executed: green; denied by the policy: red); read and
workspace calls are dimmed so the acts stand out. The newest call is at the bottom and
the table follows it while the cursor sits on the last row.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.app import ComposeResult

from tui.model import CallView, RunModel, fmt_clock
from tui.widgets.pane import Pane, ViewContext
from tui.widgets.table import KeyedTable, matches

MAX_ROWS = 200
"""Calls kept in the table, newest (a marathon's runbook makes ~500; the filter searches them all).
The oldest are dropped :data:`TRIM` at a time, so a busy run does not pay for one removal per call."""
TRIM = 100


def compact_args(args: Any, limit: int = 60) -> str:
    """Arguments as ``k=v`` pairs, Nones left out, long values shortened."""
    if not isinstance(args, dict):
        return str(args)[:limit]
    parts = []
    for k, v in args.items():
        if v is None or v == "" or (k in ("output",) and v == "table"):
            continue
        text = json.dumps(v, ensure_ascii=False) if not isinstance(v, str) else v
        if len(text) > 24:
            text = text[:21] + "..."
        parts.append(f"{k}={text}")
    out = " ".join(parts)
    return out if len(out) <= limit else out[: limit - 3] + "..."


def decision(c: CallView) -> Text:
    """The policy's decision as the operator reads it."""
    if c.tier == "act":
        if not c.allowed:
            return Text(f"DENIED {c.reason}", style="bold red")
        if c.executed:
            return Text("executed", style="bold green")
        return Text("allowed, failed", style="red")
    if not c.ok:
        return Text(f"{c.tier}: error", style="red")
    return Text(c.tier, style="dim")


def call_cells(c: CallView) -> tuple[Any, ...]:
    style = {"act": "bold", "report": "cyan"}.get(c.tier, "dim")
    result = c.result.splitlines()[0] if c.result else ""
    targets = ",".join(c.targets) if c.targets else "-"
    return (Text(f"#{c.seq}", style="dim"), Text(fmt_clock(c.t)), Text(c.operator, style="dim"),
            Text(c.tool, style=style), Text(compact_args(c.args), style=style if c.tier != "read" else "dim"),
            Text(targets, style=style), decision(c), Text(result[:80], style="dim" if c.ok else "red"))


class ActionsPane(Pane):
    """See module docstring."""

    PANE_ID = "actions"
    TITLE = "Actions & tool calls"

    def compose(self) -> ComposeResult:
        yield KeyedTable([("seq", "#", 5), ("t", "TIME", 5), ("who", "WHO", 8), ("tool", "TOOL", 18),
                          ("args", "ARGS", None), ("targets", "TARGETS", 16), ("decision", "POLICY", 12),
                          ("result", "RESULT", None)], follow=True, id="actions-table")

    def __init__(self, number: int, **kwargs: Any) -> None:
        super().__init__(number, **kwargs)
        self._cache: dict[int, tuple[CallView, tuple[Any, ...]]] = {}
        self._floor = -1

    @property
    def table(self) -> KeyedTable:
        return self.query_one(KeyedTable)

    def key(self, ctx: ViewContext) -> Any:
        return (id(ctx.model), ctx.model.revisions["actions"], ctx.needle)

    def _cells(self, c: CallView) -> tuple[Any, ...]:
        hit = self._cache.get(c.seq)
        if hit is not None and hit[0] is c:
            return hit[1]
        cells = call_cells(c)
        self._cache[c.seq] = (c, cells)
        return cells

    def render_view(self, ctx: ViewContext) -> None:
        calls = ctx.model.calls
        shown = [c for c in calls if c.seq >= self._floor]
        if len(shown) > MAX_ROWS + TRIM or (self._floor > 0 and calls and calls[0].seq >= self._floor):
            self._floor = shown[-MAX_ROWS].seq if len(shown) > MAX_ROWS else -1
            shown = [c for c in calls if c.seq >= self._floor]
        if self._floor >= 0 and (not calls or calls[-1].seq < self._floor):
            self._floor = -1  # a replay seeked back before the window
            shown = calls[-MAX_ROWS:]
        rows = []
        for c in shown:
            cells = self._cells(c)
            if matches(cells, ctx.needle):
                rows.append((f"c{c.seq}", cells))
        self.table.sync(rows)
        acts = [c for c in calls if c.tier == "act"]
        denied = sum(1 for c in acts if not c.allowed)
        counts = f"{len(calls)} calls · {len(acts)} acts · {denied} denied"
        self.filter_counts = (len(rows), len(shown)) if ctx.needle else None  # the "/" filter's chip
        self.set_subtitle(f"{len(rows)} of {len(shown)} calls match · {counts}" if ctx.needle else counts)

    def selected(self, model: RunModel) -> CallView | None:
        """The tool call under the cursor (row keys are ``c<seq>``), for form defaults; None on no row."""
        key = self.table.cursor_key()
        if key is None or not key.startswith("c"):
            return None
        seq = int(key[1:])
        return next((c for c in reversed(model.calls) if c.seq == seq), None)
