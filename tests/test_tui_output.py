"""The tool output pane as a place to read evidence (issue 18): full screen, wrap or scroll
horizontally, search with n/N, a history of outputs, and long answers paged through new
recorded calls -- plus the ``page`` argument of the paged tools, for every operator alike.

The TUI tests drive ``marathon play`` with Pilot, keys only for what the pane offers; the
run is moved by hand (``RunSession.advance_to``), and calls cost no run time
(:func:`tui.screenshots.play_session`), so one answer's pages are cut from the same text.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from engine.operate.tools import MAX_OUTPUT_CHARS, TOOLS, QueryLogsArgs, page_of, tool_schemas
from engine.run.orchestrator import Orchestrator
from faults.generator import generate
from tui.app import MarathonApp
from tui.screens.dialogs import HelpScreen
from tui.screens.play import PlayScreen
from tui.screenshots import MOVES_AT, play_session
from tui.widgets.alerts import AlertsPane
from tui.widgets.header import RunHeader
from tui.widgets.notes import NotesPane
from tui.widgets.output import CURRENT_MATCH_STYLE, MATCH_STYLE, OutputPane

FOOTER = re.compile(r"\n\.\.\. \[[^\n]*\]\Z")


def aio(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(fn(*args, **kwargs))
    return run


async def settle(pilot: Any, app: MarathonApp) -> None:
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


def play_app(tmp_path: Path) -> tuple[MarathonApp, Any]:
    session = play_session(run_dir=tmp_path / "run")
    app = MarathonApp(lambda: PlayScreen(session=session, autostart=False), cursor_blink=False)
    return app, session


async def call(pilot: Any, app: MarathonApp, tool: str, args: dict[str, Any]) -> None:
    """One call as the forms make it: the play screen's run_tool (RunSession.call_tool)."""
    screen = app.screen
    assert isinstance(screen, PlayScreen)
    screen.run_tool(tool, args)
    await settle(pilot, app)


async def started(pilot: Any, app: MarathonApp, session: Any) -> tuple[PlayScreen, OutputPane]:
    screen = app.screen
    assert isinstance(screen, PlayScreen)
    session.advance_to(MOVES_AT)
    screen.refresh_now()
    await pilot.pause()
    return screen, screen.query_one(OutputPane)


def log_text(pane: OutputPane) -> list[str]:
    return [str(line.text) for line in pane.log_widget.lines]


def tool_calls(session: Any) -> list[dict[str, Any]]:
    return [e.payload for e in session.run.stream.events if e.kind == "tool.call"]


def visible(screen: PlayScreen, widget: Any) -> bool:
    return widget in screen._compositor.visible_widgets


# ---------------------------------------------------------------------------- full screen


@aio
async def test_f_fills_the_screen_with_the_output_keeping_the_clock_and_f_or_esc_restores(tmp_path: Path) -> None:
    app, session = play_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen, out = await started(pilot, app, session)
        await call(pilot, app, "get_deploy_history", {})
        small = out.size
        out.focus_main()
        await pilot.pause()
        await pilot.press("f")
        await pilot.pause()
        assert screen.maximized is out
        assert out.size.width >= 118 and out.size.height > 2 * small.height, (small, out.size)
        header = screen.query_one(RunHeader)
        assert visible(screen, header) and header.region.y == 0, "the header with the clock stays"
        assert not visible(screen, screen.query_one(AlertsPane)) and not visible(screen, screen.query_one(NotesPane))
        await pilot.press("f")
        await pilot.pause()
        assert screen.maximized is None and out.size == small
        assert visible(screen, screen.query_one(AlertsPane))
        # esc restores too, and the command palette offers the same (Textual's Maximize / Minimize)
        await pilot.press("f", "escape")
        await pilot.pause()
        assert screen.maximized is None
        titles = {c.title: c for c in app.get_system_commands(screen)}
        assert "Maximize" in titles
        titles["Maximize"].callback()
        await pilot.pause()
        assert screen.maximized is out, "the palette's Maximize fills the screen with the pane, not its log"
        assert "Minimize" in {c.title for c in app.get_system_commands(screen)}


# ---------------------------------------------------------------------------- wrap / horizontal


@aio
async def test_w_wraps_and_unwrapped_lines_scroll_by_half_a_pane_with_home_end(tmp_path: Path) -> None:
    app, session = play_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        _, out = await started(pilot, app, session)
        await call(pilot, app, "query_logs", {"deployment": "frontend"})
        log = out.log_widget
        out.focus_main()
        await pilot.pause()
        assert not log.wrap and log.max_scroll_x > 100, "frontend's JSON log lines are long"
        width = log.scrollable_content_region.width
        await pilot.press("right")
        assert log.scroll_x == width // 2, "right moves half a pane, not one column"
        await pilot.press("right", "left")
        assert log.scroll_x == width // 2
        await pilot.press("end")
        assert log.scroll_x == log.max_scroll_x
        await pilot.press("home")
        assert log.scroll_x == 0
        rows = len(log.lines)
        await pilot.press("w")
        await pilot.pause()
        assert log.wrap and out.wrap and "· wrap" in (out._subtitle or "")
        assert len(log.lines) > rows and log.max_scroll_x == 0
        assert max(line.cell_length for line in log.lines) <= log.scrollable_content_region.width
        # wrapped at the pane's width: full screen rewraps wider
        await pilot.press("f")
        await pilot.pause()
        await pilot.pause()
        assert max(line.cell_length for line in log.lines) > width
        await pilot.press("f", "w")
        await pilot.pause()
        assert not log.wrap and len(log.lines) == rows and "no wrap" in (out._subtitle or "")


# ---------------------------------------------------------------------------- search


@aio
async def test_slash_searches_the_output_with_n_and_N_and_a_count_while_slash_elsewhere_filters(
        tmp_path: Path) -> None:
    app, session = play_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen, out = await started(pilot, app, session)
        await call(pilot, app, "kubectl_get", {"kind": "deployments"})
        text = screen.tool_results[-1].result.text()
        expected = len(re.findall("service", text, re.IGNORECASE))  # the heading names none
        assert expected >= 3
        out.focus_main()
        await pilot.pause()
        await pilot.press("slash", *"SerVice")
        await pilot.pause()
        assert screen.query_one("#filter").has_class("hidden"), "/ in the output pane is not the row filter"
        assert screen.needle == ""
        assert f"match 1/{expected}" in (out._subtitle or ""), out._subtitle
        await pilot.press("enter")
        focused: object = app.focused
        assert focused is out.log_widget and screen.query_one("#output-search").has_class("hidden")
        await pilot.press("n")
        assert f"match 2/{expected}" in (out._subtitle or "")
        await pilot.press("N", "N")
        assert f"match {expected}/{expected}" in (out._subtitle or ""), "N wraps around to the last match"
        # every match highlighted, the current one distinctly
        styles = [str(seg.style) for line in out.log_widget.lines for seg in line if seg.style]
        assert sum(str(s).count("on yellow") for s in styles) == expected - 1, MATCH_STYLE
        assert sum("on bright_cyan" in s for s in styles) == 1, CURRENT_MATCH_STYLE
        ln, _, _ = out.matches[out.match]
        assert out.log_widget.scroll_offset.y <= ln < out.log_widget.scroll_offset.y + out.log_widget.size.height
        # a miss says so; esc in the box drops the search, and then n is the screen's notes key again
        await pilot.press("slash", "backspace", *"zzz-nothing")
        assert "no match for" in (out._subtitle or "")
        await pilot.press("escape")
        assert out.needle == "" and "match" not in (out._subtitle or "")
        await pilot.press("n")
        focused = app.focused
        assert focused is screen.query_one(NotesPane).area
        # / in another pane is still the global row filter
        screen.query_one(AlertsPane).focus_main()
        await pilot.press("slash")
        assert not screen.query_one("#filter").has_class("hidden")


# ---------------------------------------------------------------------------- history


@aio
async def test_brackets_go_back_and_forward_through_previous_outputs_and_a_new_call_shows_the_newest(
        tmp_path: Path) -> None:
    app, session = play_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        _, out = await started(pilot, app, session)
        for tool, args in (("get_alerts", {}), ("get_deploy_history", {}), ("kubectl_get", {"kind": "pods"})):
            await call(pilot, app, tool, args)
        assert (out._subtitle or "").startswith("call 3/3 · kubectl_get")
        out.focus_main()
        await pilot.pause()
        await pilot.press("left_square_bracket")
        assert (out._subtitle or "").startswith("call 2/3 · get_deploy_history")
        assert log_text(out)[0].startswith("── ") and "get_deploy_history" in log_text(out)[0]
        assert not any("kubectl_get" in x for x in log_text(out)), "one entry at a time"
        await pilot.press("alt+left")
        assert (out._subtitle or "").startswith("call 1/3 · get_alerts")
        await pilot.press("left_square_bracket")
        assert (out._subtitle or "").startswith("call 1/3"), "the oldest stays"
        await pilot.press("right_square_bracket")
        assert (out._subtitle or "").startswith("call 2/3")
        await call(pilot, app, "get_topology", {})
        assert (out._subtitle or "").startswith("call 4/4 · get_topology")
        assert "get_topology" in log_text(out)[0]


# ---------------------------------------------------------------------------- paging


@aio
async def test_a_long_log_is_paged_through_a_second_recorded_call(tmp_path: Path) -> None:
    app, session = play_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen, out = await started(pilot, app, session)
        whole = session.run.tools._query_logs(QueryLogsArgs.model_validate({"deployment": "frontend"})).output
        pages = -(-len(whole) // MAX_OUTPUT_CHARS)
        assert pages >= 3, len(whole)
        await call(pilot, app, "query_logs", {"deployment": "frontend"})
        first = screen.tool_results[-1].result
        assert f"page 1 of {pages}" in (out._subtitle or "")
        assert "next: the same call with page=2" in first.output
        out.focus_main()
        await pilot.pause()
        await pilot.press("greater_than_sign")
        await settle(pilot, app)
        second = screen.tool_results[-1]
        assert second.tool == "query_logs" and second.args == {"deployment": "frontend", "page": 2}
        assert (out._subtitle or "").startswith(f"call 2/2 · query_logs · page 2 of {pages}")
        calls = tool_calls(session)
        assert [c["tool"] for c in calls] == ["query_logs", "query_logs"]
        assert "page" not in calls[0]["args"] and calls[1]["args"]["page"] == 2
        assert calls[1]["operator"] == "human" and calls[1]["allowed"]
        body = FOOTER.sub("", first.output) + FOOTER.sub("", second.result.output)
        assert body == whole[:2 * MAX_OUTPUT_CHARS]
        # on the last page > does nothing more (the key is the screen's again: unbound there)
        for _ in range(pages - 2):
            await pilot.press("greater_than_sign")
            await settle(pilot, app)
        assert f"page {pages} of {pages}" in (out._subtitle or "")
        n = len(tool_calls(session))
        await pilot.press("greater_than_sign")
        await settle(pilot, app)
        assert len(tool_calls(session)) == n
        # < fetches the previous page, again as a new recorded call
        await pilot.press("less_than_sign")
        await settle(pilot, app)
        assert tool_calls(session)[-1]["args"]["page"] == pages - 1 and len(tool_calls(session)) == n + 1
        assert f"page {pages - 1} of {pages}" in (out._subtitle or "")


# ---------------------------------------------------------------------------- keys


@aio
async def test_every_output_key_has_an_id_and_is_listed_in_help(tmp_path: Path) -> None:
    app, session = play_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        _, out = await started(pilot, app, session)
        await call(pilot, app, "query_logs", {"deployment": "frontend"})
        out.focus_main()
        await pilot.press("slash", *"error", "enter")
        await pilot.press("question_mark")
        await pilot.pause()
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        ids = {row[2] for row in help_screen.rows}
        assert {"output-full-screen", "output-wrap", "output-search", "output-next-match", "output-previous-match",
                "output-back", "output-forward", "output-next-page", "output-left", "output-right",
                "output-line-start", "output-line-end"} <= ids, ids
        for binding in [*OutputPane.BINDINGS, *type(out.log_widget).BINDINGS]:
            assert binding.id and binding.description, binding  # type: ignore[union-attr]


# ---------------------------------------------------------------------------- the page argument


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Orchestrator:
    r = Orchestrator(generate("online-boutique", 3, "short-5"), run_dir=tmp_path_factory.mktemp("o") / "run")
    r.start()
    r.advance_to(420)
    r.tools.spend_time = False
    return r


def test_query_logs_pages_join_to_the_whole_answer_and_a_page_past_the_end_is_an_error(run: Orchestrator) -> None:
    args = {"deployment": "frontend", "tail": 300}
    whole = run.tools._query_logs(QueryLogsArgs.model_validate(args)).output
    pages = -(-len(whole) // MAX_OUTPUT_CHARS)
    assert pages >= 3
    first = run.tools.call("query_logs", args)
    assert first.ok and first.output.startswith(whole[:MAX_OUTPUT_CHARS])
    assert f"[{len(whole) - MAX_OUTPUT_CHARS} more characters truncated: page 1 of {pages}" in first.output
    assert first.data == {"page": 1, "pages": pages, "chars": len(whole)}
    got = [FOOTER.sub("", first.output)]
    for k in range(2, pages + 1):
        res = run.tools.call("query_logs", {**args, "page": k})
        assert res.ok and res.data["page"] == k, res.error
        assert len(FOOTER.sub("", res.output)) <= MAX_OUTPUT_CHARS
        assert ("next: the same call with page=" in res.output) == (k < pages)
        got.append(FOOTER.sub("", res.output))
    assert "".join(got) == whole
    assert run.tools.call("query_logs", {**args, "page": 1}).output == first.output
    past = run.tools.call("query_logs", {**args, "page": pages + 1})
    assert not past.ok and f"page {pages + 1} is past the end: this answer has {pages} pages" in (past.error or "")
    assert not run.tools.call("query_logs", {**args, "page": 0}).ok
    calls = [e.payload for e in run.stream.events if e.kind == "tool.call" and e.payload["tool"] == "query_logs"]
    assert "page" not in calls[0]["args"], "an omitted page is not recorded (bundles of agents that never page)"
    assert [c["args"].get("page") for c in calls[1:pages]] == list(range(2, pages + 1))
    assert calls[pages]["args"]["page"] == 1
    assert calls[pages + 1]["ok"] is False and calls[pages + 1]["allowed"] is True


def test_short_answers_are_unchanged_and_code_search_pages_too(run: Orchestrator) -> None:
    short = run.tools.call("query_logs", {"deployment": "frontend", "tail": 2})
    assert short.ok and "... [" not in short.output and short.data == {}
    one = run.tools.call("query_logs", {"deployment": "frontend", "tail": 2, "page": 1})
    assert one.output == short.output and one.data == {"page": 1, "pages": 1, "chars": len(short.output)}
    assert "past the end" in (run.tools.call("query_logs", {"deployment": "frontend", "tail": 2,
                                                             "page": 2}).error or "")
    text, info = page_of("x" * (2 * MAX_OUTPUT_CHARS + 5), 3)
    assert text.startswith("xxxxx\n... [page 3 of 3") and info["pages"] == 3
    search = run.tools.call("code_search", {"service": "frontend", "pattern": "e", "max_matches": 200,
                                            "context": 10})
    assert search.ok and search.data.get("pages", 1) >= 2, len(search.output)
    again = run.tools.call("code_search", {"service": "frontend", "pattern": "e", "max_matches": 200,
                                           "context": 10, "page": 2})
    assert again.ok and again.data["page"] == 2
    # an unpaged tool still truncates as before
    assert "page" not in TOOLS["kubectl_describe"].args.model_fields


def test_the_page_argument_is_in_the_schema_of_the_paged_tools_only() -> None:
    schemas = {s["function"]["name"]: s["function"]["parameters"] for s in tool_schemas()}
    for name in ("query_logs", "code_search"):
        prop = schemas[name]["properties"]["page"]
        assert prop["default"] is None and {"type": "integer", "minimum": 1} in [
            {k: v for k, v in p.items() if k in ("type", "minimum")} for p in prop["anyOf"]]
        assert "page" not in schemas[name].get("required", [])
    assert all("page" not in p["properties"] for n, p in schemas.items() if n not in ("query_logs", "code_search"))
