"""The tool output pane: what the player's read tools returned, one call at a time, with its history.

Each call is an entry: a heading (run time, the exact call, and for a paged answer "page k of
n") followed by the tool's text output, as an agent would read it; errors and policy denials
are red. A ``query_metrics`` answer is drawn from its Prometheus body (:func:`query_plot`): a
range as the tool's table, then one sparkline per series across the pane with its latest
value, min and max; an instant vector as a bar per series with its value.

A place to read evidence (keys while the pane has focus; every binding has an id, ``?``
lists them, keymaps remap them):

* ``f`` full screen and back (Textual's :meth:`~textual.screen.Screen.maximize`: the header
  with the clock and the footer stay; ``esc`` also restores; the command palette's
  "Maximize"/"Minimize" do the same);
* ``w`` wrapped lines or horizontal scrolling; unwrapped, ``left``/``right`` move half a
  pane, ``home``/``end`` go to the start and the end of the longest line, ``g``/``G`` to the
  top and the bottom;
* ``/`` searches the shown entry's text (case-insensitive, plain text), every match
  highlighted and the current one brighter; ``n``/``N`` the next/previous match; the
  subtitle counts them ("match 3/17"); ``enter`` keeps the search, ``esc`` in the box drops
  it; ``/`` outside this pane still filters every pane's rows;
* ``[``/``]`` (or ``alt+left``/``alt+right``) the previous/next entry ("call 4/9 ·
  query_logs"); a new call always shows the newest (at its end for :data:`SHOW_END`, else
  at its top);
* ``>`` (``<``) the next (previous) page of a paged answer (``query_logs``, ``code_search``: an answer over
  :data:`engine.operate.tools.MAX_OUTPUT_CHARS` characters is cut into pages, for every
  operator alike): the same call with ``page`` + 1 (- 1), made through the screen's ``run_tool``
  (so :meth:`engine.run.session.RunSession.call_tool`: costed and recorded like any call).

The pane keeps the last :data:`MAX_ENTRIES` entries; older ones are dropped (the bundle keeps
every call, its first 400 characters).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Input, RichLog

from engine.operate.promquery import grid, series_name, short_number, sparkline
from engine.operate.tools import PAGED_TOOLS
from tui.model import fmt_clock
from tui.widgets.pane import Pane, ViewContext
from tui.widgets.spark import bar

MAX_LINES = 4000
MAX_ENTRIES = 200
"""Entries (tool calls) the pane keeps for back/forward."""
MATCH_STYLE = "black on yellow"
CURRENT_MATCH_STYLE = "bold black on bright_cyan"
SHOW_END = ("query_metrics", "query_logs")
"""Tools whose new output opens at its end: the plots (drawn last), the newest log lines
(``kubectl logs`` prints them last); the others open at the top, the heading and table header."""
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


@dataclass
class Entry:
    """One call shown in the pane: when, what was called, and what came back."""

    t: float
    tool: str
    args: dict[str, Any]
    ok: bool
    text: str
    data: dict[str, Any] | None = None
    lines: list[Text] = field(default_factory=list)
    """The rendered lines (heading first), one per text line; built on first show."""
    width: int = 0
    """The width the lines were built for (plots fill the pane)."""

    @property
    def page(self) -> tuple[int, int] | None:
        """(page, pages) of a paged answer, or None (not a paged tool, or an answer that fits)."""
        d = self.data or {}
        if self.ok and self.tool in PAGED_TOOLS and isinstance(d.get("pages"), int) and d["pages"] > 1:
            return int(d.get("page", 1)), int(d["pages"])
        return None


def _split(text: Text) -> list[Text]:
    return list(text.split("\n", allow_blank=True)) if "\n" in text.plain else [text]


class OutputLog(RichLog):
    """The pane's log: left/right move half a pane and home/end go to the line ends (unwrapped)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "half_page(-1)", "Scroll left half a pane", show=False, id="output-left"),
        Binding("right", "half_page(1)", "Scroll right half a pane", show=False, id="output-right"),
        Binding("home", "line_start", "Start of the lines", show=False, id="output-line-start"),
        Binding("end", "line_end", "End of the longest line", show=False, id="output-line-end"),
        Binding("g", "scroll_home", "Top of the output", show=False, id="output-top"),
        Binding("G", "scroll_end", "Bottom of the output", show=False, id="output-bottom"),
    ]

    def action_half_page(self, direction: int) -> None:
        self.scroll_relative(x=direction * max(1, self.scrollable_content_region.width // 2), animate=False)

    def action_line_start(self) -> None:
        self.scroll_to(x=0, animate=False)

    def action_line_end(self) -> None:
        self.scroll_to(x=self.max_scroll_x, animate=False)


class SearchBox(Input):
    """The pane's search box (``esc`` drops the search)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "drop", "Drop the search", show=False, id="output-search-drop"),
    ]

    def action_drop(self) -> None:
        pane = next((a for a in self.ancestors if isinstance(a, OutputPane)), None)
        if pane is not None:
            pane.drop_search()


class OutputPane(Pane):
    """See module docstring."""

    PANE_ID = "output"
    TITLE = "Tool output"
    ALLOW_MAXIMIZE = True
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "full_screen", "Full screen", id="output-full-screen",
                tooltip="the output pane fills the screen (the header with the clock stays); f or esc restores"),
        Binding("w", "wrap", "Wrap", id="output-wrap",
                tooltip="wrapped lines, or horizontal scrolling (left/right half a pane, home/end)"),
        Binding("slash", "search", "Search output", id="output-search",
                tooltip="search this output (the row filter is / in the other panes)"),
        Binding("n", "match(1)", "Next match", id="output-next-match"),
        Binding("N", "match(-1)", "Previous match", id="output-previous-match"),
        Binding("left_square_bracket,alt+left", "history(-1)", "Previous output", id="output-back"),
        Binding("right_square_bracket,alt+right", "history(1)", "Next output", show=False, id="output-forward"),
        Binding("greater_than_sign", "turn_page(1)", "Next page", id="output-next-page",
                tooltip="the same call with page + 1: a new read call, costed and recorded"),
        Binding("less_than_sign", "turn_page(-1)", "Previous page", show=False, id="output-previous-page",
                tooltip="the same call with page - 1: a new call ([ shows the earlier outputs for free)"),
    ]

    def __init__(self, number: int, **kwargs: Any) -> None:
        super().__init__(number, **kwargs)
        self.calls = 0
        self.entries: list[Entry] = []
        self.index = -1
        """The entry shown (an index into :attr:`entries`; -1: none yet)."""
        self.wrap = False
        self.needle = ""
        self.matches: list[tuple[int, int, int]] = []
        """(line, start, end) of every match of :attr:`needle` in the shown entry's lines."""
        self.match = -1
        """The current match (an index into :attr:`matches`; -1: none)."""
        self._offsets: list[int] = []
        self._drawn_width = 0

    def compose(self) -> ComposeResult:
        yield OutputLog(id="output-log", max_lines=MAX_LINES, wrap=False, markup=False, highlight=False,
                        auto_scroll=False)
        yield SearchBox(placeholder="search the output (enter: keep, esc: drop; n/N next/previous)",
                        id="output-search", classes="hidden")

    def on_mount(self) -> None:
        # the header (with the clock) stays on screen when a pane is maximized
        screen = self.screen
        allowed = getattr(screen, "ALLOW_IN_MAXIMIZED_VIEW", None) or self.app.ALLOW_IN_MAXIMIZED_VIEW
        if "RunHeader" not in allowed:
            setattr(screen, "ALLOW_IN_MAXIMIZED_VIEW", f"{allowed}, RunHeader")  # noqa: B010 (a ClassVar)

    @property
    def log_widget(self) -> RichLog:
        return self.query_one(OutputLog)

    @property
    def entry(self) -> Entry | None:
        return self.entries[self.index] if 0 <= self.index < len(self.entries) else None

    @property
    def maximized(self) -> bool:
        return self.is_mounted and self.screen.maximized is self

    def key(self, ctx: ViewContext) -> Any:
        return None

    def render_view(self, ctx: ViewContext) -> None:
        return None

    # ------------------------------------------------------------------ entries

    def show(self, t: float, tool: str, args: dict[str, Any], ok: bool, text: str,
             data: dict[str, Any] | None = None) -> None:
        """Add one call's output and show it (``data``: the result's data: a ``query_metrics``
        answer's body, drawn as a plot; a paged answer's ``page``/``pages``)."""
        self.calls += 1
        self.entries.append(Entry(t, tool, dict(args), ok, text, data))
        if len(self.entries) > MAX_ENTRIES:
            del self.entries[: len(self.entries) - MAX_ENTRIES]
        self.index = len(self.entries) - 1
        self._show_entry(first_match=True)

    def _lines(self, e: Entry, width: int) -> list[Text]:
        if e.lines and (e.width == width or e.tool != "query_metrics"):
            return e.lines
        page = e.page
        heading = Text(f"── {fmt_clock(e.t)}  {call_text(e.tool, e.args)}", style="bold cyan")
        if page is not None:
            heading.append(f"   page {page[0]} of {page[1]}" + (" (> next page)" if page[0] < page[1] else ""),
                           style="bold yellow")
            if page[0] > 1:
                # each page is cut from a new answer at the call's own run time, as kubectl logs would be
                # read again: lines logged since the previous page shift where this one starts
                heading.append(f"   cut from the answer at {fmt_clock(e.t)}: it may start mid-line, and lines "
                               "logged since the previous page shift it", style="dim yellow")
        body: list[Text]
        if e.ok and e.tool == "query_metrics" and e.data:
            body = query_plot(e.data, e.text, width)
        else:
            body = [Text(e.text, style="" if e.ok else "bold red")]
        e.lines = [heading, *(ln for b in body for ln in _split(b))]
        e.width = width
        return e.lines

    def _show_entry(self, *, first_match: bool = False, keep_scroll: bool = False) -> None:
        """Write the shown entry into the log, matches highlighted; scroll to the current match."""
        log = self.log_widget
        e = self.entry
        scroll = log.scroll_offset
        log.clear()
        self._offsets = []
        if e is None:
            self._update_subtitle()
            return
        self._drawn_width = log.size.width
        lines = self._lines(e, log.size.width or 80)
        self.matches = self._find(lines) if self.needle else []
        if first_match or not (0 <= self.match < len(self.matches)):
            self.match = 0 if self.matches else -1
        marks: dict[int, list[tuple[int, int, bool]]] = {}
        for i, (ln, a, b) in enumerate(self.matches):
            marks.setdefault(ln, []).append((a, b, i == self.match))
        wrap_at = (log.scrollable_content_region.width or None) if self.wrap else None
        for i, line in enumerate(lines):
            self._offsets.append(len(log.lines))
            if i in marks:
                line = line.copy()
                for a, b, current in marks[i]:
                    line.stylize(CURRENT_MATCH_STYLE if current else MATCH_STYLE, a, b)
            # wrapped: at the pane's width (RichLog measures against the console's width otherwise)
            log.write(line, width=wrap_at, scroll_end=False)
        if self.match >= 0:
            self._scroll_to_match()
        elif keep_scroll:
            log.scroll_to(scroll.x, scroll.y, animate=False)
        elif e.tool in SHOW_END:
            log.scroll_end(animate=False, x_axis=False)
        else:
            log.scroll_home(animate=False)
        self._update_subtitle()

    def _find(self, lines: list[Text]) -> list[tuple[int, int, int]]:
        rx = re.compile(re.escape(self.needle), re.IGNORECASE)
        return [(i, m.start(), m.end()) for i, line in enumerate(lines) for m in rx.finditer(line.plain)]

    def _scroll_to_match(self) -> None:
        log = self.log_widget
        ln, a, _ = self.matches[self.match]
        # a line's first row in the log (rendering is deferred until the log has a size)
        known = len(self._offsets) > ln and (ln == 0 or self._offsets[ln] > 0)
        y = self._offsets[ln] if known else ln
        x = 0
        if not self.wrap:
            width = log.scrollable_content_region.width or 80
            x = max(0, a - width // 3) if a >= width - 4 else 0
        elif log.scrollable_content_region.width:
            y += a // log.scrollable_content_region.width
        height = log.scrollable_content_region.height or 1
        log.scroll_to(x, max(0, y - height // 3), animate=False)

    def _update_subtitle(self) -> None:
        e = self.entry
        if e is None:
            self.set_subtitle("no calls yet")
            return
        parts = [f"call {self.index + 1}/{len(self.entries)} · {e.tool}"]
        page = e.page
        if page is not None:
            parts.append(f"page {page[0]} of {page[1]}" + (" (> next)" if page[0] < page[1] else ""))
        if self.needle:
            parts.append(f"match {self.match + 1}/{len(self.matches)}" if self.matches
                         else f"no match for {self.needle!r}")
        parts.append("wrap" if self.wrap else "no wrap")
        self.set_subtitle(" · ".join(parts))

    # ------------------------------------------------------------------ actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``n``/``N`` only while searching and ``>``/``<`` only on a paged answer with a page that
        way (else those keys do what they do on the screen: ``n`` notes, ``N`` workspace_write;
        ``?`` lists what is live)."""
        if action == "match" and not self.needle:
            return False
        if action == "turn_page":
            page = self.entry.page if self.entry is not None else None
            return page is not None and 1 <= page[0] + int(str(parameters[0])) <= page[1]
        if action == "history":
            return None if not self.entries else True
        return True

    def action_full_screen(self) -> None:
        """Fill the screen with this pane (header and footer stay), or restore the layout."""
        screen = self.screen
        if screen.maximized is self:
            screen.minimize()
        else:
            screen.maximize(self, container=False)
        self.call_after_refresh(self._rerender_for_width)

    def _rerender_for_width(self) -> None:
        """Plots fill the pane and wrapped lines wrap at its width: redraw them at the new width."""
        e = self.entry
        width = self.log_widget.size.width
        if e is not None and width and width != self._drawn_width and (self.wrap or e.tool == "query_metrics"):
            self._show_entry(keep_scroll=True)

    def on_resize(self) -> None:
        self.call_after_refresh(self._rerender_for_width)

    def action_wrap(self) -> None:
        """Toggle wrapped lines / horizontal scrolling."""
        self.wrap = not self.wrap
        log = self.log_widget
        log.wrap = self.wrap
        self._show_entry(keep_scroll=True)

    def action_search(self) -> None:
        box = self.query_one(SearchBox)
        box.remove_class("hidden")
        box.value = self.needle
        box.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "output-search":
            return
        event.stop()
        self.set_search(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "output-search":
            return
        event.stop()
        event.input.add_class("hidden")
        self.log_widget.focus()

    def set_search(self, needle: str) -> None:
        """Search the shown entry for ``needle`` (case-insensitive; empty: no search)."""
        self.needle = needle
        self._show_entry(first_match=True, keep_scroll=True)

    def drop_search(self) -> None:
        box = self.query_one(SearchBox)
        box.value = ""
        box.add_class("hidden")
        self.set_search("")
        self.log_widget.focus()

    def action_match(self, step: int) -> None:
        """The next (``step`` 1) or previous (-1) match, wrapping around."""
        if not self.matches:
            self.notify(f"no match for {self.needle!r} in this output", severity="warning", timeout=3)
            return
        self.match = (self.match + step) % len(self.matches)
        self._show_entry(keep_scroll=True)

    def action_history(self, step: int) -> None:
        """The previous (``step`` -1) or next (1) entry."""
        if not self.entries:
            return
        index = min(len(self.entries) - 1, max(0, self.index + step))
        if index == self.index:
            self.notify("the oldest output kept" if step < 0 else "the newest output", timeout=2)
            return
        self.index = index
        self._show_entry(first_match=True)

    def action_turn_page(self, step: int) -> None:
        """Fetch the next (``step`` 1) or previous (-1) page of the shown (paged) answer: the same
        call with ``page`` + ``step``, through the screen's ``run_tool``."""
        e = self.entry
        page = e.page if e is not None else None
        if e is None or page is None or not 1 <= page[0] + step <= page[1]:
            return
        run_tool = getattr(self.screen, "run_tool", None)
        if not callable(run_tool):
            self.notify("no tool calls on this screen", severity="warning")
            return
        run_tool(e.tool, {**e.args, "page": page[0] + step})
