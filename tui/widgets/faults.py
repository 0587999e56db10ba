"""The faults pane (ground truth, for watchers and replays): every live fault with its
category, target, age and progress through correlation, localization and repair.

Stage progress comes from the scorer (:mod:`tui.scorecalc`), never from the pane's own
guess: ``C L R`` turn green when the fault reached the stage by the clock shown. Faults
reverted in the last two minutes stay, dimmed, so a watcher sees how they ended.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rich.text import Text
from textual.app import ComposeResult

from tui.model import FaultView, fmt_clock
from tui.scorecalc import stages_reached
from tui.widgets.pane import Pane, ViewContext
from tui.widgets.table import KeyedTable, matches

KEEP_REVERTED_S = 120.0
CATEGORY_SHORT = {"code-bug": "code", "configuration": "config", "runtime": "runtime", "infrastructure": "infra"}


def stage_marks(reached: tuple[bool, ...]) -> Text:
    """``C L R`` with reached stages in green, the rest dim."""
    out = Text()
    for i, (letter, ok) in enumerate(zip("CLR", reached, strict=True)):
        if i:
            out.append(" ")
        out.append(letter if ok else "·", style="bold green" if ok else "dim")
    return out


class FaultsPane(Pane):
    """See module docstring."""

    PANE_ID = "faults"
    TITLE = "Faults (ground truth)"

    def compose(self) -> ComposeResult:
        yield KeyedTable([("fault", "FAULT", None), ("cat", "CAT", 7), ("target", "TARGET", 17),
                          ("age", "AGE/LIFE", 10), ("stages", "C L R", 5), ("probe", "PROBE", 6),
                          ("title", "TITLE", -60)], id="faults-table")

    @property
    def table(self) -> KeyedTable:
        return self.query_one(KeyedTable)

    def key(self, ctx: ViewContext) -> Any:
        return (id(ctx.model), ctx.model.revisions["faults"], int(ctx.now), ctx.needle, ctx.score_seq)

    def rows(self, ctx: ViewContext) -> list[tuple[str, tuple[Any, ...]]]:
        """The rows to show: live faults, and faults reverted within :data:`KEEP_REVERTED_S`."""
        out = []
        now = ctx.now
        for f in ctx.model.faults.values():
            if f.t_inject > now or (f.t_revert is not None and now - f.t_revert > KEEP_REVERTED_S):
                continue
            cells = self._cells(f, ctx)
            if matches(cells, ctx.needle):
                out.append((f.fault, cells))
        return out

    def _cells(self, f: FaultView, ctx: ViewContext) -> tuple[Any, ...]:
        live = f.active(ctx.now)
        dim = "" if live else "dim"
        reached = stages_reached(ctx.stages.get(f.fault), ctx.now)
        age = fmt_clock(ctx.now - f.t_inject)
        life = fmt_clock(f.lifetime_s) if f.lifetime_s else "?"
        if f.error:
            probe = Text("failed", style="bold red")
        elif f.probe_ok is None:
            probe = Text("-", style="dim")
        else:
            probe = Text("ok", style="green") if f.probe_ok else Text("FAIL", style="bold red")
        if not live and not f.error:
            probe = Text("revert", style="dim")
        return (Text(f.fault, style=dim or "bold"), Text(CATEGORY_SHORT.get(f.category, f.category), style=dim),
                Text(f.target, style=dim), Text(f"{age}/{life}", style=dim), stage_marks(reached), probe,
                Text(f.title, style="dim"))

    def render_view(self, ctx: ViewContext) -> None:
        if not ctx.reveal:  # a player never sees ground truth before the run ends
            self.table.sync([])
            self.set_subtitle("hidden until the run ends")
            return
        rows = self.rows(ctx)
        self.table.sync(rows)
        live = sum(1 for f in ctx.model.faults.values() if f.active(ctx.now))
        counts = f"{live} live · {len(ctx.model.faults)} injected"
        if ctx.needle:  # the "/" filter: n of m here and in the header's chip
            total = len(self.rows(replace(ctx, needle="")))
            self.filter_counts = (len(rows), total)
            counts = f"{len(rows)} of {total} faults match · {counts}"
        else:
            self.filter_counts = None
        self.set_subtitle(counts)
