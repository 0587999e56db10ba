"""The tool output pane: what the player's read tools returned, newest last.

Each call is a heading (run time, the exact call) followed by the tool's text output, as
an agent would read it; errors and policy denials are red.
"""

from __future__ import annotations

import json
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.widgets import RichLog

from tui.model import fmt_clock
from tui.widgets.pane import Pane, ViewContext

MAX_LINES = 4000


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

    def show(self, t: float, tool: str, args: dict[str, Any], ok: bool, text: str) -> None:
        """Append one call's output."""
        self.calls += 1
        log = self.log_widget
        log.write(Text(f"── {fmt_clock(t)}  {call_text(tool, args)}", style="bold cyan"))
        log.write(Text(text, style="" if ok else "bold red"))
        self.border_subtitle = f"{self.calls} calls · last: {tool}"
