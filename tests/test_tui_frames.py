"""Cheap frames (issue 18): a refresh cycle repaints only what changed, and does no work
for nothing.

* The timeline marks for repaint only the lines whose text or styles changed (the playhead
  moving one column is not the whole picture sent again), and what it shows then equals a
  full redraw.
* A table that gains or loses rows without its scrollbars changing does not lay out the
  screen (a layout repaints every scrollbar of every table).
* Starting the running score does not compose the repr of every event so far in the UI
  thread (Textual's default worker description).

The speed figures themselves are measured by ``benchmarks/bench_tui.py``, not here.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from textual.geometry import Region
from textual.widget import Widget

from engine.bundle.events import Event
from tui.app import MarathonApp
from tui.screens.replay import ReplayScreen
from tui.screenshots import make_bundle
from tui.seek import ReplayIndex
from tui.session import load_bundle
from tui.widgets.table import KeyedTable
from tui.widgets.timeline import TimelineView


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_bundle(tmp_path_factory.mktemp("frames"))


def _replay(bundle: Path, at: float) -> MarathonApp:
    loaded = load_bundle(bundle)
    index = ReplayIndex(loaded.events)

    def make() -> ReplayScreen:
        screen = ReplayScreen(bundle, paused=True, start_at=at, loaded=(loaded, index))
        screen.inline_score = True
        return screen

    return MarathonApp(make, cursor_blink=False)


def _record_refreshes(widget: Widget) -> list[tuple[tuple[Region, ...], bool]]:
    calls: list[tuple[tuple[Region, ...], bool]] = []
    original = widget.refresh

    def refresh(*regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False) -> Any:
        calls.append((regions, layout))
        return original(*regions, repaint=repaint, layout=layout, recompose=recompose)

    widget.refresh = refresh  # type: ignore[method-assign]
    return calls


def _cells(app: MarathonApp) -> list[list[tuple[str, str]]]:
    """Every line of the screen as Textual composes it: (text, style) segments."""
    return [[(seg.text, str(seg.style)) for seg in strip] for strip in app.screen._compositor.render_strips()]


async def _stale_free(app: MarathonApp, pilot: Any, lines: range | None = None) -> bool:
    """Whether the screen (its ``lines``, default all) shows what a full redraw of every widget
    shows (else prints the lines that differ)."""
    shown = _cells(app)
    for widget in app.screen.walk_children(Widget, with_self=True):
        if isinstance(widget, KeyedTable):
            widget._strips.clear()
            widget._header = None
        widget.refresh()
    await pilot.pause()
    redrawn = _cells(app)
    if lines is not None:
        shown, redrawn = shown[lines.start:lines.stop], redrawn[lines.start:lines.stop]
    for y, (a, b) in enumerate(zip(shown, redrawn, strict=True)):
        if a != b:
            print(y, "".join(t for t, _ in a), [p for p in a if p not in b][:3], [p for p in b if p not in a][:3])
    return redrawn == shown


def test_the_timeline_repaints_only_the_lines_that_changed(bundle: Path) -> None:
    async def run() -> None:
        app = _replay(bundle, 600.0)
        async with app.run_test(size=(120, 36)) as pilot:
            screen = app.screen
            assert isinstance(screen, ReplayScreen)
            await pilot.pause()
            view = screen.query_one(TimelineView)
            height = view.size.height
            assert height >= 5
            for step in range(4):
                calls = _record_refreshes(view)
                screen.seek(screen.playhead + 15.0 * (step + 1))
                await pilot.pause()
                del view.refresh
                assert calls, "the playhead moved: something must repaint"
                assert all(regions and not layout for regions, layout in calls), calls  # never the whole view
                lines = {r.y for regions, _ in calls for r in regions}
                assert all(r.height == 1 and r.width == view.size.width for regions, _ in calls for r in regions)
                assert len(lines) < height, f"every line of the timeline repainted ({sorted(lines)})"
                # (the timeline's own lines: the score pane's "as of" subtitle can be left stale
                # after a seek on main too, a defect of its own)
                region = view.region
                assert await _stale_free(app, pilot, range(region.y, region.bottom)), \
                    f"a stale timeline line at {screen.playhead}"

    asyncio.run(run())


def test_a_table_that_grows_within_its_scrollbars_does_not_lay_out_the_screen(bundle: Path) -> None:
    async def run() -> None:
        app = _replay(bundle, 0.0)
        async with app.run_test(size=(120, 36)) as pilot:
            screen = app.screen
            assert isinstance(screen, ReplayScreen)
            await pilot.pause()
            table = screen.query_one("#actions-table", KeyedTable)
            cells = tuple("" for _ in table.column_spec)
            table.sync([("a", cells)])
            await pilot.pause()
            room = table.container_size.height
            assert room >= 3
            calls = _record_refreshes(table)
            table.sync([("a", cells), ("b", cells)])  # two rows and the header: still fits, no scrollbar
            await pilot.pause()
            assert table.virtual_size.height == 3 and table.row_keys_in_order == ["a", "b"]
            assert not any(layout for _, layout in calls), calls
            assert not table.show_vertical_scrollbar
            # past the pane's height the scrollbar appears: that one is a layout
            rows = [(str(i), cells) for i in range(room + 3)]
            table.sync(rows)
            await pilot.pause()
            assert any(layout for _, layout in calls) and table.show_vertical_scrollbar
            # and rows added while it shows move its thumb, without a layout
            calls.clear()
            table.sync([*rows, ("z", cells)])
            await pilot.pause()
            assert not any(layout for _, layout in calls)
            assert table.vertical_scrollbar.window_virtual_size == room + 5
            assert await _stale_free(app, pilot)

    asyncio.run(run())


def test_starting_the_running_score_does_not_repr_the_events(bundle: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async def run() -> None:
        app = _replay(bundle, 900.0)
        async with app.run_test(size=(120, 36)) as pilot:
            screen = app.screen
            assert isinstance(screen, ReplayScreen)
            await pilot.pause()
            screen.inline_score = False
            reprs: list[int] = []

            def counted(self: Event) -> str:
                reprs.append(self.seq)
                return f"Event({self.seq})"

            monkeypatch.setattr(Event, "__repr__", counted)
            screen._scored_seq = -1
            screen._score_wall = 0.0
            screen.maybe_score(force=True)
            assert screen._scoring
            await app.workers.wait_for_complete()
            await pilot.pause()
            assert not screen._scoring and screen.score_result is not None
            assert reprs == []

    asyncio.run(run())
