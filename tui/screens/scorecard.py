"""The scorecard: the run's Marathon-Score, per-fault outcomes and stage-wise success over
time, as :func:`scoring.score.score_events` computes them for agents.

After ``marathon play`` it opens in two steps: first the numbers only; ``enter`` then
reveals the ground truth (which faults were injected, what became of each), and the play
screen beneath shows the faults pane and the fault lanes of the timeline.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Label, Static

from scoring.score import RunScore
from tui.widgets.header import HeaderState, RunHeader
from tui.widgets.score import FAULT_COLUMNS, fault_rows, stage_chart, summary_text
from tui.widgets.table import KeyedTable


class ScorecardScreen(Screen[None]):
    """See module docstring.

    Args:
        score: the score to show.
        end_t: the run's length, seconds (the chart's time axis).
        header: the header of the run screen it was opened from.
        staged: show the numbers first and reveal the ground truth on ``enter``.
        on_reveal: called when the ground truth is revealed.
        note: a line under the title (e.g. where the bundle was sealed).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,s", "close", "Back", id="scorecard-close"),
        Binding("enter", "reveal", "Reveal ground truth", id="scorecard-reveal"),
    ]

    def __init__(self, score: RunScore, *, end_t: float, header: HeaderState, staged: bool = False,
                 on_reveal: Callable[[], None] | None = None, note: str = "") -> None:
        super().__init__()
        self.score = score
        self.end_t = end_t
        self.header = header
        self.revealed = not staged
        self.on_reveal = on_reveal
        self.note = note

    def compose(self) -> ComposeResult:
        yield RunHeader(id="header")
        with VerticalScroll(id="scorecard"):
            yield Label(Text(f"Scorecard · {self.score.run_id}", style="bold"), id="scorecard-title")
            if self.note:
                yield Static(Text(self.note, style="dim"), id="scorecard-note")
            yield Static(summary_text(self.score), id="scorecard-summary", classes="card")
            yield Static(Text("press enter to reveal the ground truth: the faults that were injected, and "
                              "what became of each", style="bold yellow"), id="scorecard-hint",
                         classes="" if not self.revealed else "hidden")
            with Vertical(id="scorecard-truth", classes="" if self.revealed else "hidden"):
                yield Label(Text("Per-fault outcomes", style="bold"))
                yield KeyedTable(FAULT_COLUMNS, id="scorecard-faults")
                yield Label(Text("Stage-wise success over time (share of faults injected so far)", style="bold"))
                yield Static("", id="scorecard-chart", classes="card")
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one(RunHeader).state = self.header
        if self.revealed:
            self._fill()

    def _fill(self) -> None:
        self.query_one("#scorecard-faults", KeyedTable).sync(fault_rows(self.score))
        width = max(40, (self.app.size.width or 100) - 8)
        self.query_one("#scorecard-chart", Static).update(stage_chart(self.score, self.end_t, width))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The reveal key exists only while there is something to reveal."""
        return not (action == "reveal" and self.revealed)

    def action_reveal(self) -> None:
        """Show the per-fault ground truth (once)."""
        if self.revealed:
            return
        self.revealed = True
        self.query_one("#scorecard-hint").add_class("hidden")
        self.query_one("#scorecard-truth").remove_class("hidden")
        self._fill()
        self.refresh_bindings()
        if self.on_reveal is not None:
            self.on_reveal()

    def action_close(self) -> None:
        if not self.revealed:
            self.action_reveal()
            return
        self.dismiss(None)
