"""The run header (k9s style): mode, run id, app, seed, regime, run clock against the
schedule's length, speed, paused or ended, rule health, and the latest notice.

Rule health, as Prometheus' rules page shows it: while any alert or recording rule's latest
evaluation failed, ``rules: N failing`` in the warning colour (such a rule raises no new
alert, so an operator must know the alert history is incomplete); nothing while all are healthy.

One line; when the terminal is narrow, the least important parts are dropped first
(notice, then run id, then the progress bar); rule health is never dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
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
        parts = [badge, what, clock, progress, speed, state, run_id, notice]
        if s.rules_failing:
            parts.insert(6, Text(f" rules: {s.rules_failing} failing ", style=RULES_FAILING_STYLE))
        for drop in (notice, run_id, progress, what):
            if sum(p.cell_len for p in parts) <= width:
                break
            parts.remove(drop)
        out = Text.assemble(*parts)
        out.truncate(width)
        return out
