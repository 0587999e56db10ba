"""The scorecard: the run's Marathon-Score, per-fault outcomes and stage-wise success over
time, as :func:`scoring.score.score_events` computes them for agents.

After ``marathon play`` it opens in two steps: first the numbers only; ``enter`` then
reveals the ground truth (which faults were injected, what became of each), and the play
screen beneath shows the faults pane and the fault lanes of the timeline.

Once revealed, the per-fault rows are selectable: ``enter`` (or ``w``, "why") on a fault
opens :class:`FaultTrailScreen`, the evidence trail the scorer used for it
(:mod:`scoring.explain`: which alerts supported it and why, which incident and RCA counted
or which other fault took its incident, the acts, the probe samples, every repair gate and
what the no-op counterfactual showed). Nothing of a trail is shown before the reveal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import ClassVar

from rich.console import Group
from rich.padding import Padding
from rich.text import Text
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Label, Static

from scoring.explain import FaultTrail, trail_lines
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
        trails: fault id -> evidence trail of the same scoring pass, or a function building them
            (``ScoreResult.trails``); None: ``enter`` on a fault says there is none.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,s", "close", "Back", id="scorecard-close"),
        Binding("enter", "reveal", "Reveal ground truth", id="scorecard-reveal"),
        Binding("enter,w", "trail", "Why? (evidence trail)", id="scorecard-trail"),
    ]

    def __init__(self, score: RunScore, *, end_t: float, header: HeaderState, staged: bool = False,
                 on_reveal: Callable[[], None] | None = None, note: str = "",
                 trails: Callable[[], Mapping[str, FaultTrail]] | Mapping[str, FaultTrail] | None = None) -> None:
        super().__init__()
        self.score = score
        self.end_t = end_t
        self.header = header
        self.revealed = not staged
        self.on_reveal = on_reveal
        self.note = note
        self._trails = trails
        """Fault id -> trail (:mod:`scoring.explain`), or a function that builds them from the
        scoring pass that made ``score`` (called on the first ``enter``, never before the reveal)."""

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
                yield Label(Text.assemble(("Per-fault outcomes · ", "bold"),
                                          ("enter on a fault: why it scored so (its evidence trail)", "dim")))
                yield KeyedTable(FAULT_COLUMNS, id="scorecard-faults")
                yield Label(Text("Stage-wise success over time (share of faults injected so far)", style="bold"))
                yield Static("", id="scorecard-chart", classes="card")
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one(RunHeader).state = self.header
        if self.revealed:
            self._fill()
            self.query_one("#scorecard-faults", KeyedTable).focus()

    def _fill(self) -> None:
        self.query_one("#scorecard-faults", KeyedTable).sync(fault_rows(self.score))
        width = max(40, (self.app.size.width or 100) - 8)
        self.query_one("#scorecard-chart", Static).update(stage_chart(self.score, self.end_t, width))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The reveal key exists only while there is something to reveal, the trail key only after."""
        if action == "reveal":
            return not self.revealed
        if action == "trail":
            return self.revealed
        return True

    def action_reveal(self) -> None:
        """Show the per-fault ground truth (once)."""
        if self.revealed:
            raise SkipAction()  # enter then opens the selected fault's trail
        self.revealed = True
        self.query_one("#scorecard-hint").add_class("hidden")
        self.query_one("#scorecard-truth").remove_class("hidden")
        self._fill()
        self.query_one("#scorecard-faults", KeyedTable).focus()
        self.refresh_bindings()
        if self.on_reveal is not None:
            self.on_reveal()

    def trails(self) -> Mapping[str, FaultTrail]:
        """Fault id -> evidence trail (built on first use; empty when the opener passed none)."""
        if callable(self._trails):
            self._trails = self._trails()
        return self._trails or {}

    def action_trail(self) -> None:
        """Open the evidence trail of the fault under the table's cursor (after the reveal only)."""
        if not self.revealed:
            raise SkipAction()
        fid = self.query_one("#scorecard-faults", KeyedTable).cursor_key()
        if fid is None:
            return
        trails = self.trails()
        if fid not in trails:
            self.notify("no evidence trail for this score (the screen that opened it passed none)",
                        severity="warning")
            return
        order = [f.fault for f in self.score.faults if f.fault in trails]
        self.app.push_screen(FaultTrailScreen(trails, order, fid, header=self.header))

    def action_close(self) -> None:
        if not self.revealed:
            self.action_reveal()
            return
        self.dismiss(None)


def trail_text(trail: FaultTrail) -> Group:
    """A trail's lines (:func:`scoring.explain.trail_lines`) styled for the terminal: the heading
    bold, section lines bold, failed gates red, passed ones green. Each line keeps its indent
    when the terminal wraps it (a padded block per line, not leading blanks)."""
    sections = ("alerts supporting it", "related-looking alerts that did not count", "incidents", "RCA", "repair")
    blocks = []
    for i, line in enumerate(trail_lines(trail)):
        body = line.lstrip()
        indent = len(line) - len(body)
        out = Text()
        head, colon, rest = body.partition(":")
        if i == 0:
            out.append(body, style="bold")
        elif indent == 2 and colon and head in sections:
            out.append(head + ":", style="bold cyan")
            out.append(rest)
        elif body.startswith(("FAIL ", "pass ", "n/a ")):
            mark, _, rest = body.partition(" ")
            out.append(mark, style={"FAIL": "bold red", "pass": "green"}.get(mark, "dim"))
            out.append(" " + rest)
        elif indent == 2:
            out.append(body, style="yellow")
        else:
            out.append(body)
        blocks.append(Padding(out, (0, 0, 0, indent)) if indent else out)
    return Group(*blocks)


class FaultTrailScreen(Screen[None]):
    """The evidence trail of one fault (module docstring): scrollable, ``[``/``]`` for the
    previous/next fault, ``esc`` back to the scorecard.

    Args:
        trails: fault id -> trail.
        order: the fault ids in the scorecard's order.
        fault: the fault to show first.
        header: the run header to show.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back", id="trail-close"),
        Binding("left_square_bracket,p", "step(-1)", "Previous fault", id="trail-previous"),
        Binding("right_square_bracket,n", "step(1)", "Next fault", id="trail-next"),
    ]

    DEFAULT_CSS = """
    FaultTrailScreen #trail-scroll { padding: 0 1; }
    FaultTrailScreen #trail-title { padding: 1 0 0 0; }
    """

    def __init__(self, trails: Mapping[str, FaultTrail], order: list[str], fault: str, *,
                 header: HeaderState) -> None:
        super().__init__()
        self.trails = trails
        self.order = order
        self.fault = fault
        self.header = header
        self.body_text = ""
        """The trail shown, as plain text (what a reader sees, without the wrapping)."""

    def compose(self) -> ComposeResult:
        yield RunHeader(id="header")
        with VerticalScroll(id="trail-scroll"):
            yield Label("", id="trail-title")
            yield Static("", id="trail-body")
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        self.query_one(RunHeader).state = self.header
        self._show()
        self.query_one("#trail-scroll", VerticalScroll).focus()

    def _show(self) -> None:
        t = self.trails[self.fault]
        n = self.order.index(self.fault) + 1 if self.fault in self.order else 0
        self.query_one("#trail-title", Label).update(Text.assemble(
            ("Evidence trail · ", "bold"), (f"{self.fault} ({n} of {len(self.order)})", ""),
            (" · what the scorer used for this fault" if (self.app.size.width or 0) >= 110 else "", "dim")))
        body = trail_text(t)
        self.body_text = "\n".join((b.renderable if isinstance(b, Padding) else b).plain  # type: ignore[union-attr]
                                   for b in body.renderables)
        self.query_one("#trail-body", Static).update(body)
        self.query_one("#trail-scroll", VerticalScroll).scroll_home(animate=False)

    def action_step(self, step: int) -> None:
        if self.fault not in self.order or len(self.order) < 2:
            return
        self.fault = self.order[(self.order.index(self.fault) + step) % len(self.order)]
        self._show()

    def action_close(self) -> None:
        self.dismiss(None)
