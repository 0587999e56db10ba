"""The run header (k9s style): mode, run id, app, seed, regime, run clock against the
schedule's length, speed, paused or ended, rule health, and the latest notice.

Rule health, as Prometheus' rules page shows it: while any alert or recording rule's latest
evaluation failed, ``rules: N failing`` in the warning colour (such a rule raises no new
alert, so an operator must know the alert history is incomplete); nothing while all are healthy.

The ``/`` filter, once set, is a chip right after the mode (k9s shows its filter in the
crumbs): ``filter: pay ✕ · alerts 3/41 · health 2/11``, the rows each pane shows out of what
it would list unfiltered; ``esc`` (or a click on the chip) clears it.

One line; when the terminal is narrow, the least important parts are dropped first
(notice, then run id, then the progress bar); rule health and the filter chip are never dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import events
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget

from tui.model import fmt_clock
from tui.widgets.spark import bar

MODE_STYLES = {
    "WATCH": "bold white on dark_blue",
    "FOLLOW": "bold white on dark_blue",
    "PLAY": "bold black on green",
    "PRACTICE": "bold black on magenta",
    "REPLAY": "bold black on cyan",
}
RULES_FAILING_STYLE = "bold black on dark_orange"
"""The warning colour of ``rules: N failing``."""
FILTER_STYLE = "bold black on yellow"
"""The colour of the filter chip."""


@dataclass(frozen=True)
class HeaderState:
    """What the header shows (all run times in seconds)."""

    mode: str = "WATCH"
    run_id: str = ""
    app: str = ""
    seed: int | None = None
    regime: str = ""
    operator: str = ""
    now: float = 0.0
    total: float = 0.0
    speed: str = ""
    state: str = "starting"
    notice: str = ""
    notice_error: bool = False
    rules_failing: int = 0
    """Rules whose latest evaluation failed (``rule.health``)."""
    filter: str = ""
    """The ``/`` filter text ("" when none is set)."""
    filter_counts: tuple[tuple[str, int, int], ...] = ()
    """(pane, rows matching, rows unfiltered) per pane that counts them, while a filter is set."""


def filter_chip(needle: str, counts: tuple[tuple[str, int, int], ...] = ()) -> str:
    """The chip's text: ``filter: pay ✕ · alerts 3/41 · health 2/11`` ("" without a filter)."""
    if not needle:
        return ""
    return " · ".join([f"filter: {needle} ✕", *(f"{pane} {n}/{m}" for pane, n, m in counts)])


def speed_label(speed: float | None) -> str:
    """``20x``, ``1x``, ``max`` (as fast as possible)."""
    if speed is None:
        return "max"
    return f"{speed:g}x"


class RunHeader(Widget):
    """See module docstring."""

    DEFAULT_CSS = """
    RunHeader { height: 1; dock: top; background: $panel; }
    """
    state: reactive[HeaderState] = reactive(HeaderState, layout=False)

    class ClearFilter(Message):
        """The filter chip was clicked: clear the ``/`` filter."""

    _chip_span: tuple[int, int] = (0, 0)
    """Columns of the filter chip in the last render (a click there clears the filter)."""

    def on_click(self, event: events.Click) -> None:
        start, stop = self._chip_span
        if start <= event.x < stop:
            self.post_message(self.ClearFilter())

    def render(self) -> Text:
        s = self.state
        width = self.size.width or 120
        badge = Text(f" {s.mode} ", style=MODE_STYLES.get(s.mode, "bold reverse"))
        if not s.app:
            what = Text(" ")
        elif width >= 100:
            what = Text(f" {s.app} · seed {s.seed} · {s.regime} · {s.operator} ", style="bold")
        else:
            what = Text(f" {s.app} s{s.seed} {s.regime} {s.operator} ", style="bold")
        clock = Text(f" {fmt_clock(s.now)} / {fmt_clock(s.total)} ")
        frac = s.now / s.total if s.total else 0.0
        progress = Text(bar(frac, 12, full="━", empty="─"), style="cyan")
        speed = Text(f" {s.speed} " if s.speed else "", style="bold")
        state_style = {"paused": "bold black on yellow", "ended": "bold black on green",
                       "sealed": "bold black on green", "error": "bold white on red"}.get(s.state.split(" ")[0],
                                                                                          "bold")
        state = Text(f" {s.state} ", style=state_style)
        run_id = Text(f" {s.run_id} ", style="dim")
        notice = Text(f" {s.notice} ", style="bold red" if s.notice_error else "italic")
        chip = Text(f" {filter_chip(s.filter, s.filter_counts)} " if s.filter else "", style=FILTER_STYLE)
        parts = [badge, chip, what, clock, progress, speed, state, run_id, notice]
        if s.rules_failing:
            parts.insert(7, Text(f" rules: {s.rules_failing} failing ", style=RULES_FAILING_STYLE))
        for drop in (notice, run_id, progress, what):
            if sum(p.cell_len for p in parts) <= width:
                break
            parts.remove(drop)
        self._chip_span = (badge.cell_len, badge.cell_len + chip.cell_len)
        out = Text.assemble(*parts)
        out.truncate(width)
        return out
