"""A keyed table for live panes: updated by row key, repainting only the rows that changed.

Panes describe the rows they want, in order; :meth:`KeyedTable.sync` drops rows that went
away, adds new ones, compares every cell with what is shown and re-renders only the rows
with a changed cell; the cursor stays on the same row (by key) while the run goes on, and
a log (``follow``) keeps its newest row in view. Only the visible lines whose row changed
(its cells, or which row sits there) are marked for repaint, so an alert that changed
state repaints one line, not the pane.

Why not Textual's ``DataTable``: it re-renders every visible cell after any change and
re-indexes all rows on each removal, which at a Train Ticket marathon's pace (hundreds of
events a second, a hundred alert rows) cost several times the 50 ms budget per refresh
(``benchmarks/bench_tui.py``). Here a row is rendered into a cached ``Strip`` when it is
first painted after one of its cells changed (rows scrolled out of view are never
rendered), and painting is copying strips (the Line API).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.actions import SkipAction
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

Cells = tuple[Any, ...]
MIN_FLEX = 6


def plain(cell: Any) -> str:
    """A cell's text without styles."""
    return cell.plain if isinstance(cell, Text) else str(cell)


def signature(cell: Any) -> Any:
    """What decides whether a cell changed: text, base style and spans (``Text.__eq__`` ignores the base style)."""
    if isinstance(cell, Text):
        return (cell.plain, str(cell.style), tuple(cell.spans))
    return cell


def matches(cells: Sequence[Any], needle: str) -> bool:
    """Whether any cell contains ``needle`` (case-insensitive); an empty needle matches everything."""
    if not needle:
        return True
    n = needle.lower()
    return any(n in plain(c).lower() for c in cells)


class KeyedTable(ScrollView, can_focus=True):
    """A row-cursor table synchronised by key (module docstring).

    Args:
        columns: ``(key, label, width)`` per column; a width of None makes the column
            flexible: flexible columns share what the fixed ones leave of the table's width
            (at least :data:`MIN_FLEX` cells each), recomputed on every resize. A negative
            width ``-w`` is a column ``w`` wide that may run off the right edge (it is left
            out of the sharing: the detail a user scrolls to).
        follow: keep the last row in view while the cursor is on it (a log).
        cell_padding: blank cells on each side of every column.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {"keyed-table--header", "keyed-table--cursor"}
    DEFAULT_CSS = """
    KeyedTable {
        height: 1fr;
        background: $surface;
    }
    KeyedTable > .keyed-table--header {
        text-style: bold;
        background: $panel;
    }
    KeyedTable > .keyed-table--cursor {
        background: $boost;
    }
    KeyedTable:focus > .keyed-table--cursor {
        background: $accent 45%;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "Up", show=False, id="table-up"),
        Binding("down", "cursor(1)", "Down", show=False, id="table-down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="table-page-up"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="table-page-down"),
        Binding("home", "cursor_to(0)", "First row", show=False, id="table-first"),
        Binding("end", "cursor_to(-1)", "Last row", show=False, id="table-last"),
        # k9s / vim habits. j/k always move on a focused table (the play screen's kubectl_get
        # is on K for that reason); g/G give way to a screen that binds the same key itself
        # (replay: g opens the seek prompt), see :meth:`action_vim_to`.
        Binding("j", "cursor(1)", "Down (vim)", show=False, id="table-down-j"),
        Binding("k", "cursor(-1)", "Up (vim; in play, kubectl get is K)", show=False, id="table-up-k"),
        Binding("g", "vim_to(0)", "First row (vim; a screen's own g wins, e.g. replay's seek)", show=False,
                id="table-first-g"),
        Binding("G", "vim_to(-1)", "Last row (vim; a screen's own G wins)", show=False, id="table-last-G"),
    ]

    def __init__(self, columns: Sequence[tuple[str, str, int | None]], *, follow: bool = False,
                 cell_padding: int = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.column_spec = list(columns)
        self.follow = follow
        self.cell_padding = cell_padding
        self.cursor_row = 0
        self.touched = 0
        self.renders = 0
        self._widths: list[int] = [abs(w) if w is not None else MIN_FLEX for _, _, w in self.column_spec]
        self._order: list[str] = []
        self._cells: dict[str, Cells] = {}
        self._sigs: dict[str, tuple[Any, ...]] = {}
        self._strips: dict[str, Strip] = {}
        self._header: Strip | None = None

    # ------------------------------------------------------------------ geometry

    def widths_for(self, width: int) -> list[int]:
        """Column widths for a table ``width`` cells wide (flexible columns share the rest)."""
        pad = 2 * self.cell_padding
        inside = [w for _, _, w in self.column_spec if w is None or w >= 0]
        fixed = sum(w for w in inside if w is not None)
        flex = sum(1 for w in inside if w is None)
        room = width - 1 - fixed - pad * len(inside)
        each = max(MIN_FLEX, room // flex) if flex else 0
        return [each if w is None else abs(w) for _, _, w in self.column_spec]

    @property
    def total_width(self) -> int:
        return sum(self._widths) + 2 * self.cell_padding * len(self._widths)

    def _resize_virtual(self) -> None:
        size = Size(self.total_width, len(self._order) + 1)
        old = self.virtual_size
        if size == old:
            return
        box = self.container_size
        if (self.is_mounted and box.height and old.width == size.width
                and (old.height > box.height) == (size.height > box.height)):
            # Rows came or went but the scrollbars stay as they are: setting ``virtual_size``
            # would lay out the whole screen, and a layout repaints every scrollbar of every
            # table (a Train Ticket watch at full speed: a layout on most refresh cycles).
            self.set_reactive(KeyedTable.virtual_size, size)
            if self.show_vertical_scrollbar:
                self._scroll_update(size)  # the thumb's length and position
            return
        self.virtual_size = size

    def on_mount(self) -> None:
        self._set_widths(self.widths_for(self.size.width or 80))

    def on_resize(self, event: events.Resize) -> None:
        self._set_widths(self.widths_for(event.size.width))

    def _set_widths(self, widths: list[int]) -> None:
        if widths == self._widths and self._header is not None:
            return
        self._widths = widths
        self._header = None
        self._strips = {}
        self._resize_virtual()
        self.refresh()

    def set_columns(self, columns: Sequence[tuple[str, str, int | None]]) -> None:
        """Replace the columns (a layout change); rows are dropped until the next :meth:`sync`."""
        if list(columns) == self.column_spec:
            return
        self.column_spec = list(columns)
        self._order, self._cells, self._sigs, self._strips = [], {}, {}, {}
        self._widths = []
        self._set_widths(self.widths_for(self.size.width or 80))

    # ------------------------------------------------------------------ rows

    @property
    def row_count(self) -> int:
        return len(self._order)

    @property
    def row_keys_in_order(self) -> list[str]:
        """The keys of the rows shown, top to bottom."""
        return list(self._order)

    def row_cells(self, key: str) -> Cells:
        """The cells shown on row ``key`` (KeyError when no such row)."""
        return self._cells[key]

    def cursor_key(self) -> str | None:
        """Key of the row under the cursor, or None for an empty table."""
        return self._order[self.cursor_row] if 0 <= self.cursor_row < len(self._order) else None

    def _render_row(self, cells: Cells, style: Style | None = None) -> Strip:
        pad = " " * self.cell_padding
        line = Text(no_wrap=True, end="", style=style or "")
        for cell, width in zip(cells, self._widths, strict=False):
            text = cell.copy() if isinstance(cell, Text) else Text(str(cell))
            text.no_wrap = True
            text.truncate(width, overflow="ellipsis", pad=True)
            line.append(pad)
            line.append_text(text)
            line.append(pad)
        self.renders += 1
        segments: list[Segment] = list(line.render(self.app.console))
        return Strip(segments, line.cell_len)

    def sync(self, rows: Sequence[tuple[str, Cells]]) -> int:
        """Show exactly ``rows`` (key, cells) in this order; returns the number of cells that changed."""
        at_end = bool(self._order) and self.cursor_row >= len(self._order) - 1
        keep = self.cursor_key()
        touched = 0
        wanted = set()
        redraw: set[str] = set()
        cells_of, sigs_of = self._cells, self._sigs
        for key, cells in rows:
            wanted.add(key)
            if cells_of.get(key) is cells:
                continue  # the pane handed back the very tuple it gave last time (a per-record cache)
            sigs = tuple(signature(c) for c in cells)
            old = sigs_of.get(key)
            if old == sigs:
                cells_of[key] = cells
                continue
            touched += len(cells) if old is None else sum(1 for a, b in zip(old, sigs, strict=False) if a != b)
            sigs_of[key] = sigs
            cells_of[key] = cells
            self._strips.pop(key, None)  # rendered again when painted
            redraw.add(key)
        for key in [k for k in self._order if k not in wanted]:
            touched += 1
            del sigs_of[key], cells_of[key]
            self._strips.pop(key, None)
        before = self._order
        order = [k for k, _ in rows]
        if order != before:
            self._order = order
            self._resize_virtual()
        if touched or order != before:
            self._refresh_rows(before, redraw)
        if self.follow and order and (at_end or keep is None):
            self.move_cursor(row=len(order) - 1)
        elif keep is not None and keep in wanted:
            self.move_cursor(row=order.index(keep), scroll=False)
        else:
            self.move_cursor(row=min(self.cursor_row, max(0, len(order) - 1)), scroll=False)
        self.touched += touched
        return touched

    def _visible_rows(self) -> range:
        """Indexes of the rows on screen (under the header)."""
        top = round(self.scroll_y)
        return range(top, top + max(1, self.size.height - 1))

    def _refresh_line_of(self, idx: int) -> None:
        self.refresh(Region(0, idx - round(self.scroll_y) + 1, max(self.size.width, self.total_width), 1))

    def _refresh_rows(self, before: list[str], redraw: set[str]) -> None:
        """Mark for repaint the visible lines whose row changed: its cells, or which row sits there."""
        if not self.is_mounted or not self.size.height:
            self.refresh()
            return
        after = self._order
        start = None
        shown = self._visible_rows()
        for idx in shown:
            new = after[idx] if idx < len(after) else None
            old = before[idx] if idx < len(before) else None
            if new != old or new in redraw:
                if start is None:
                    start = idx
            elif start is not None:
                self._refresh_span(start, idx)
                start = None
        if start is not None:
            self._refresh_span(start, shown.stop)

    def _refresh_span(self, start: int, stop: int) -> None:
        top = round(self.scroll_y)
        self.refresh(Region(0, start - top + 1, max(self.size.width, self.total_width), stop - start))

    # ------------------------------------------------------------------ cursor

    def move_cursor(self, *, row: int, animate: bool = False, scroll: bool = True) -> None:
        """Put the cursor on row ``row`` (clamped); bring it into view unless ``scroll`` is False."""
        row = max(0, min(row, len(self._order) - 1)) if self._order else 0
        if row != self.cursor_row:
            if self.is_mounted and self.size.height:
                self._refresh_line_of(self.cursor_row)
                self._refresh_line_of(row)
            else:
                self.refresh()
            self.cursor_row = row
        if scroll:
            self._scroll_to_cursor()

    def _scroll_to_cursor(self) -> None:
        lines = max(1, self.size.height - 1)
        top = round(self.scroll_y)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False)
        elif self.cursor_row >= top + lines:
            self.scroll_to(y=self.cursor_row - lines + 1, animate=False)

    def action_cursor(self, step: int) -> None:
        self.move_cursor(row=self.cursor_row + step)

    def action_page(self, step: int) -> None:
        self.move_cursor(row=self.cursor_row + step * max(1, self.size.height - 2))

    def action_cursor_to(self, row: int) -> None:
        self.move_cursor(row=row if row >= 0 else len(self._order) - 1)

    def action_vim_to(self, row: int) -> None:
        """``g``/``G``: first or last row, unless the screen binds the pressed key itself.

        Textual asks the focused widget before the screen, so a table would otherwise take
        ``g`` away from replay's seek prompt; ``SkipAction`` hands the key on to the screen.
        """
        key = "g" if row == 0 else "G"
        if key in self.screen._bindings.key_to_bindings:
            raise SkipAction()
        self.action_cursor_to(row)

    def on_click(self, event: events.Click) -> None:
        if event.y >= 1:
            self.move_cursor(row=round(self.scroll_y) + event.y - 1, scroll=False)

    # ------------------------------------------------------------------ painting

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        base = self.rich_style
        if y == 0:
            if self._header is None:
                header_style = self.get_component_rich_style("keyed-table--header")
                self._header = self._render_row(tuple(Text(label) for _, label, _ in self.column_spec),
                                                header_style)
            return self._header.crop_extend(scroll_x, scroll_x + width,
                                            self.get_component_rich_style("keyed-table--header"))
        idx = scroll_y + y - 1
        if idx >= len(self._order):
            return Strip.blank(width, base)
        key = self._order[idx]
        strip = self._strips.get(key)
        if strip is None:
            strip = self._strips[key] = self._render_row(self._cells[key])
        if idx == self.cursor_row:
            cursor = self.get_component_rich_style("keyed-table--cursor")
            return strip.apply_style(cursor).crop_extend(scroll_x, scroll_x + width, base + cursor)
        return strip.crop_extend(scroll_x, scroll_x + width, base)
