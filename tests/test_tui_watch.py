"""``marathon watch`` driven with Pilot: live panes from the in-process engine, follow mode,
the shared conventions (pause, filter, pane toggles, jump, help, keymaps), and worker
failures that become notices instead of crashes."""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
from textual.message import Message
from textual.notifications import Notify

from engine.bundle.format import open_bundle, verify
from engine.operate.operators import make_operator
from engine.run.session import RunSession
from scoring.score import score_events
from tui.app import MarathonApp
from tui.messages import PanesRefreshed, RunFinished, ScoreComputed
from tui.model import RunModel
from tui.screens.dialogs import HelpScreen, JumpScreen
from tui.screens.scorecard import ScorecardScreen
from tui.screens.watch import WatchScreen, next_speed
from tui.screenshots import schedule
from tui.session import FollowTail
from tui.widgets.table import KeyedTable


def aio(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test with asyncio (no pytest plugin needed)."""
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(fn(*args, **kwargs))
    return run


async def wait_for(pilot: Any, cond: Callable[[], bool], seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if cond():
            return
        await pilot.pause(0.05)
    raise AssertionError("condition not reached in time")


def runbook_session(run_dir: Path | None = None, speed: float | None = None) -> RunSession:
    return RunSession(schedule(), operator=make_operator("runbook"), run_dir=run_dir, speed=speed)


def watch_app(session: RunSession, autostart: bool = False, **kwargs: Any) -> tuple[MarathonApp, list[WatchScreen]]:
    made: list[WatchScreen] = []

    def make() -> WatchScreen:
        screen = WatchScreen(session=session, autostart=autostart)
        screen.inline_score = not autostart
        made.append(screen)
        return screen

    return MarathonApp(make, cursor_blink=False, **kwargs), made


@aio
async def test_panes_show_the_run_as_it_goes() -> None:
    session = runbook_session()
    app, _ = watch_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        session.advance_to(480)
        screen.refresh_now()
        await pilot.pause()
        m = screen.model
        faults = screen.query_one("#faults-table", KeyedTable).row_keys_in_order
        assert faults == [f.fault for f in m.active_faults()] and len(faults) == 4
        # stage progress in the faults pane comes from the scorer: the payment fault is correlated at 8:00
        assert screen.score_result is not None
        corr, loc, _ = screen.stages["ob-payment-two-digit-expiry-year"]
        assert corr is not None and corr <= 480 and loc is None
        # alerts grouped under the operator's incidents, then the unassigned ones
        alerts = screen.query_one("#alerts-table", KeyedTable).row_keys_in_order
        for inc in m.open_incidents():
            assert f"inc:{inc.id}" in alerts
            head = alerts.index(f"inc:{inc.id}")
            assert alerts[head + 1:head + 1 + len(inc.alerts)] == [f"{inc.id}:{a}" for a in inc.alerts]
        # every tool call in the actions pane, newest last
        actions = screen.query_one("#actions-table", KeyedTable).row_keys_in_order
        assert actions == [f"c{c.seq}" for c in m.calls]
        # unhealthy services first
        health = screen.query_one("#health-table", KeyedTable).row_keys_in_order
        states = [m.services[s].state for s in health]
        rank = {"failing": 0, "degraded": 1, "ok": 2}
        assert [rank[s] for s in states] == sorted(rank[s] for s in states) and states[0] == "failing"
        header = screen.header_state()
        assert (header.mode, header.now, header.total, header.speed) == ("WATCH", 480.0, 1260.0, "max")


@aio
async def test_tables_are_updated_in_place() -> None:
    session = runbook_session()
    app, _ = watch_app(session)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        session.advance_to(300)
        screen.refresh_now()
        await pilot.pause()
        table = screen.query_one("#health-table", KeyedTable)
        table.focus()
        table.move_cursor(row=3)
        key = table.cursor_key()
        rows = table.row_count
        table.touched = 0
        session.advance_to(session.now + 15)  # one more health sample
        screen.refresh_now()
        await pilot.pause()
        assert table.cursor_key() == key  # the operator keeps their row
        assert table.row_count == rows and 0 < table.touched < rows * len(table.column_spec)


@aio
async def test_a_whole_run_at_full_speed_is_sealed_and_scored(tmp_path: Path) -> None:
    session = runbook_session(tmp_path / "run", speed=None)
    app, _ = watch_app(session, autostart=True)
    messages: list[Message] = []
    async with app.run_test(size=(120, 36), message_hook=messages.append) as pilot:
        await wait_for(pilot, lambda: any(isinstance(m, RunFinished) for m in messages), 60)
        await wait_for(pilot, lambda: any(isinstance(m, ScoreComputed) and m.final for m in messages), 30)
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        assert screen.model.ended and "sealed" in screen.notice
        assert any(isinstance(m, PanesRefreshed) for m in messages)
        await pilot.press("s")
        assert isinstance(app.screen, ScorecardScreen)
    finished = next(m for m in messages if isinstance(m, RunFinished))
    assert finished.finished and finished.outcome.bundle is not None
    assert verify(finished.outcome.bundle).ok
    events = open_bundle(finished.outcome.bundle).events
    final = next(m for m in messages if isinstance(m, ScoreComputed) and m.final)
    # the same scorer, with the same no-op counterfactual, over the sealed bundle
    assert screen.scorer.counterfactual is not None
    assert final.result.score.to_dict() == score_events(events, counterfactual=screen.scorer.counterfactual).to_dict()
    # the panes saw exactly the recorded stream
    reduced = RunModel()
    reduced.apply_many(events)
    assert screen.model.calls == reduced.calls and screen.model.alerts == reduced.alerts


@aio
async def test_pause_and_speed_while_running() -> None:
    session = runbook_session(speed=20.0)
    app, _ = watch_app(session, autostart=True)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: session.now >= 20)
        await pilot.press("p")
        assert session.paused
        frozen = session.now
        await pilot.pause(0.5)
        assert session.now == frozen
        assert app.screen.header_state().state == "paused"  # type: ignore[attr-defined]
        await pilot.press("plus")
        assert session.speed == 50.0
        await pilot.press("minus", "minus")
        assert session.speed == 10.0
        await pilot.press("p")
        await wait_for(pilot, lambda: session.now > frozen)
    assert next_speed(None, -1) == 200.0 and next_speed(1.0, -1) == 1.0 and next_speed(200.0, 1) is None


@aio
async def test_filter_toggle_jump_and_help() -> None:
    session = runbook_session()
    app, _ = watch_app(session)
    messages: list[Message] = []
    async with app.run_test(size=(120, 36), message_hook=messages.append) as pilot:
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        session.advance_to(480)
        screen.refresh_now()
        await pilot.pause()
        await pilot.press("slash", *"payment")
        await pilot.pause()
        health = screen.query_one("#health-table", KeyedTable).row_keys_in_order
        assert health == ["paymentservice"]
        assert screen.query_one("#faults-table", KeyedTable).row_keys_in_order == ["ob-payment-two-digit-expiry-year"]
        await pilot.press("escape")
        assert screen.needle == "" and len(screen.query_one("#health-table", KeyedTable).row_keys_in_order) > 1
        # number keys toggle panes; keys of panes this screen lacks are not bound
        await pilot.press("1")
        assert not screen.pane("faults").display
        await pilot.press("1")
        assert screen.pane("faults").display
        await pilot.press("9")
        assert app.screen is screen and all(p.display for p in screen.panes())
        # : jumps to a pane
        await pilot.press("colon")
        assert isinstance(app.screen, JumpScreen)
        await pilot.press(*"health", "enter")
        await pilot.pause()
        assert app.focused is screen.query_one("#health-table")
        # ? lists every key of the screen with its binding id
        await pilot.press("question_mark")
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        ids = {bid for _, _, bid in help_screen.rows}
        assert {"pause", "filter", "back", "scorecard", "faster", "slower", "help", "jump", "quit", "pane-1",
                "pane-6"} <= ids
        assert "pane-9" not in ids
        await pilot.press("escape")
        assert app.screen is screen


@aio
async def test_keys_are_remappable_by_binding_id() -> None:
    session = runbook_session(speed=20.0)
    app, _ = watch_app(session, autostart=True, keymap={"pause": "space", "pane-1": "f1"})
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        await wait_for(pilot, lambda: session.now > 0)
        await pilot.press("space")
        assert session.paused
        await pilot.press("f1")
        assert not screen.pane("faults").display
        await pilot.press("p")  # the default key no longer pauses
        assert session.paused


def test_a_keymap_naming_no_binding_is_refused_and_a_stolen_key_is_a_warning() -> None:
    """An unknown id used to be ignored and a key taken from another binding went unsaid (a review)."""
    from tui.app import MarathonApp, check_keymap
    from tui.keymap import KeymapError

    with pytest.raises(KeymapError, match=r"no binding has the id 'tool-qurey-logs' \(did you mean tool-query-logs"):
        check_keymap({"tool-qurey-logs": "a"})
    assert check_keymap({"pause": "space", "tool-rollback": "ctrl+b"}) == []
    warnings = check_keymap({"tool-query-logs": "a"})
    assert warnings == ["keymap: tool-query-logs = 'a' takes a from tool-get-alerts (get alerts) on PlayScreen"]
    assert MarathonApp(lambda: None, keymap={"tool-query-logs": "a"}).keymap_warnings == warnings  # type: ignore[arg-type,return-value]
    with pytest.raises(KeymapError, match="no binding has the id 'nonexistent'"):
        MarathonApp(lambda: None, keymap={"nonexistent": "z"})  # type: ignore[arg-type,return-value]


@aio
async def test_a_failing_engine_worker_becomes_a_notice_not_a_crash() -> None:
    session = runbook_session()

    def broken(*args: Any, **kwargs: Any) -> bool:
        raise RuntimeError("simulated engine failure")

    session.drive = broken  # type: ignore[method-assign]
    app, _ = watch_app(session, autostart=True)
    messages: list[Message] = []
    async with app.run_test(size=(120, 36), message_hook=messages.append) as pilot:
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        await wait_for(pilot, lambda: bool(app.errors))
        await pilot.pause()
        assert app.is_running and "simulated engine failure" in screen.notice and screen.notice_error
        assert any(isinstance(m, Notify) and m.notification.severity == "error" for m in messages)
        await pilot.press("question_mark")  # still usable
        assert isinstance(app.screen, HelpScreen)


@aio
async def test_follow_tails_a_run_another_process_records(tmp_path: Path) -> None:
    from tui.screenshots import make_bundle

    source = open_bundle(make_bundle(tmp_path / "src")).events
    run_dir = tmp_path / "live"
    run_dir.mkdir()
    path = run_dir / "events.jsonl"
    half = len(source) // 2
    path.write_text("".join(e.to_json() + "\n" for e in source[:half]))
    tail = FollowTail(run_dir)
    app = MarathonApp(lambda: WatchScreen(follow=tail), cursor_blink=False)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        assert isinstance(screen, WatchScreen)
        await wait_for(pilot, lambda: screen.model.events == half)
        assert not screen.model.ended and screen.header_state().speed == "follow"

        def writer() -> None:
            with path.open("a") as fh:
                for e in source[half:]:
                    fh.write(e.to_json() + "\n")

        thread = threading.Thread(target=writer)
        thread.start()
        thread.join()
        await wait_for(pilot, lambda: screen.model.sealed)
        assert screen.model.events == len(source) and screen.model.ended


def test_follow_of_a_missing_directory_is_refused(tmp_path: Path) -> None:
    from tui.cli import build_parser, build_watch

    with pytest.raises(FileNotFoundError):
        build_watch(build_parser().parse_args(["watch", "--follow", str(tmp_path / "nope")]))


def test_watch_defaults_are_the_readme_main_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tui.cli import build_parser, build_watch

    monkeypatch.chdir(tmp_path)
    args = build_parser().parse_args(["watch"])
    assert (args.app, args.seed, args.regime, args.agent, args.speed) == ("online-boutique", 1, "short-5",
                                                                         "runbook", 20.0)
    app = build_watch(args)
    screen = app.get_default_screen()
    assert screen.session.run.run_id == "online-boutique-short-5-seed1-runbook"
    assert screen.session.run_dir == Path("runs/online-boutique-short-5-seed1-runbook")
    assert build_parser().parse_args(["watch", "--speed", "max"]).speed is None
    with pytest.raises(SystemExit):
        build_parser().parse_args(["watch", "--speed", "-3"])
