"""``marathon replay`` driven with Pilot: loading a sealed bundle in a worker, play/pause,
step, speed, jumps to the next fault / alert / action, seeking by prompt, by click and by
keys, and the scorecard with per-fault outcomes."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
from textual.message import Message

from engine.bundle.format import open_bundle
from scoring.score import score_events
from tui.app import MarathonApp
from tui.messages import BundleLoaded, ScoreComputed
from tui.model import RunModel
from tui.screens.dialogs import SeekScreen
from tui.screens.replay import STEP_S, ReplayScreen
from tui.screens.scorecard import ScorecardScreen
from tui.screenshots import make_bundle
from tui.widgets.table import KeyedTable
from tui.widgets.timeline import TimelineView


def aio(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test with asyncio (no pytest plugin needed)."""
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(fn(*args, **kwargs))
    return run


async def wait_for(pilot: Any, cond: Callable[[], bool], seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if cond():
            return
        await pilot.pause(0.05)
    raise AssertionError("condition not reached in time")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_bundle(tmp_path_factory.mktemp("replay"))


def same_as_reduced(screen: ReplayScreen) -> bool:
    """The screen's model equals reducing the bundle's events up to the playhead."""
    assert screen.index is not None
    expected = RunModel()
    expected.apply_many(screen.index.events[:screen.index.count_at(screen.playhead)])
    m = screen.model
    return (m.seq, m.alerts, m.calls, m.services, m.faults) == (expected.seq, expected.alerts, expected.calls,
                                                                expected.services, expected.faults)


@aio
async def test_replay_loads_plays_jumps_and_seeks(bundle: Path) -> None:
    app = MarathonApp(lambda: ReplayScreen(bundle, speed=200.0, paused=True), cursor_blink=False)
    messages: list[Message] = []
    events = open_bundle(bundle).events
    async with app.run_test(size=(120, 36), message_hook=messages.append) as pilot:
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        await wait_for(pilot, lambda: screen.index is not None)
        await wait_for(pilot, lambda: screen.final_score is not None)
        assert any(isinstance(m, BundleLoaded) for m in messages)
        assert screen.bundle is not None and screen.bundle.integrity == "sealed"
        assert screen.playhead == 0.0 and screen.header_state().state == "paused"
        # next fault / alert / action
        await pilot.press("f")
        first_fault = next(e.t for e in events if e.kind == "fault.inject")
        assert screen.playhead == first_fault
        assert list(screen.model.faults) == [events[[e.kind for e in events].index("fault.inject")].payload["fault"]]
        await pilot.press("a")
        first_firing = next(e.t for e in events if e.kind == "alert.firing")
        assert screen.playhead == first_firing and screen.model.firing() >= 1
        await pilot.press("x")
        first_action = next(e.t for e in events if e.kind == "tool.call" and e.payload["tier"] in ("act", "report")
                            and e.t > first_firing)
        assert screen.playhead == first_action and same_as_reduced(screen)
        await pilot.press("X")  # nothing earlier: stays
        assert screen.playhead == first_action
        await pilot.press("x")
        assert screen.playhead > first_action
        await pilot.press("X")
        assert screen.playhead == first_action
        # step forward and back one evaluation interval
        t0 = screen.playhead
        await pilot.press("full_stop")
        assert screen.playhead == t0 + STEP_S
        await pilot.press("comma", "comma")
        assert screen.playhead == t0 - STEP_S and same_as_reduced(screen)
        # seek by prompt, far forward then back (keyframes both ways)
        await pilot.press("g")
        assert isinstance(app.screen, SeekScreen)
        await pilot.press(*"17:30", "enter")
        await pilot.pause()
        assert screen.playhead == 1050.0 and same_as_reduced(screen)
        await pilot.press("home")
        assert screen.playhead == 0.0 and screen.model.seq == 0
        await pilot.press("end")
        assert screen.model.ended and screen.header_state().state == "at end"
        # a click on the timeline seeks to the time under the mouse
        view = screen.query_one(TimelineView)
        await pilot.click(TimelineView, offset=(13 + view.size.width // 2 - 6, 2))
        await pilot.pause()
        assert abs(screen.playhead - screen.index.end_t / 2) < screen.index.end_t / 10  # type: ignore[union-attr]
        assert same_as_reduced(screen)
        # stage progress from the final score, at the playhead
        faults = screen.query_one("#faults-table", KeyedTable)
        assert faults.row_keys_in_order == [f.fault for f in screen.model.faults.values()
                                            if f.t_revert is None or screen.playhead - f.t_revert <= 120]


@aio
async def test_replay_plays_to_the_end_and_opens_the_scorecard(bundle: Path) -> None:
    app = MarathonApp(lambda: ReplayScreen(bundle, speed=None, start_at=900.0), cursor_blink=False)
    messages: list[Message] = []
    async with app.run_test(size=(120, 36), message_hook=messages.append) as pilot:
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        await wait_for(pilot, lambda: screen.index is not None and screen.model.ended)
        assert not screen.playing and same_as_reduced(screen)
        await wait_for(pilot, lambda: any(isinstance(m, ScoreComputed) and not m.final for m in messages))
        await pilot.press("p")  # at the end, play starts over
        assert screen.playing and screen.playhead < 100
        await pilot.press("p", "s")
        card = app.screen
        assert isinstance(card, ScorecardScreen) and card.revealed
        assert screen.scorer.counterfactual is not None  # the replay scores against the no-op run too
        expected = score_events(open_bundle(bundle).events, counterfactual=screen.scorer.counterfactual)
        assert card.score.to_dict() == expected.to_dict()
        rows = card.query_one("#scorecard-faults", KeyedTable).row_keys_in_order
        assert rows == [f.fault for f in expected.faults]
        await pilot.press("escape")
        assert app.screen is screen


@aio
async def test_a_bundle_that_cannot_be_read_is_a_notice(tmp_path: Path) -> None:
    bad = tmp_path / "broken.marathon"
    bad.write_bytes(b"not a bundle at all")
    app = MarathonApp(lambda: ReplayScreen(bad), cursor_blink=False)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        await wait_for(pilot, lambda: bool(app.errors))
        assert app.is_running and "cannot replay" in screen.notice
        await pilot.press("f", "g", "s")  # nothing to jump to; no crash
        assert app.screen is screen


def test_replay_command_line(bundle: Path) -> None:
    from tui.cli import build_parser, build_replay

    app = build_replay(build_parser().parse_args(["replay", str(bundle), "--at", "5:00", "--paused"]))
    screen = app.get_default_screen()
    assert (screen.playhead, screen.playing, screen.speed) == (300.0, False, 30.0)
    with pytest.raises(FileNotFoundError):
        build_replay(build_parser().parse_args(["replay", "/nonexistent.marathon"]))


def _model_state(m: RunModel) -> tuple[Any, ...]:
    return (m.seq, m.t, m.alerts, m.calls, m.services, m.faults, m.incidents, m.ended)


def test_a_cached_open_replays_exactly_what_a_verified_one_does(bundle: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The replay cache (``tui.session.load_bundle``): the second open of a bundle reads the
    events from the cache, and the model at any run time, by keyframe, equals reducing the
    verified events from the start; another bundle's bytes are a miss."""
    from tui.seek import ReplayIndex
    from tui.session import bundle_cache_dir, load_bundle

    monkeypatch.setenv("SRE_MARATHON_CACHE", str(tmp_path / "cache"))
    first = load_bundle(bundle)
    again = load_bundle(bundle)
    assert (first.cached, again.cached) == (False, True) and any(bundle_cache_dir().glob("*.marshal"))
    assert [e.to_dict() for e in again.events] == [e.to_dict() for e in first.events]
    assert [e.to_json() for e in again.events] == [e.to_json() for e in first.events]  # hash and prev too
    assert (again.meta, again.integrity, again.schedule_text) == (first.meta, first.integrity, first.schedule_text)
    assert again.integrity == "sealed"
    cf, app_model = again.scoring_inputs()
    assert cf is not None and cf.to_dict() == first.counterfactual.to_dict()
    assert app_model is not None and app_model == first.app_model
    verified = load_bundle(bundle, cache=False).events
    index = ReplayIndex(again.events, every=7)  # many keyframes: most seeks restore one
    end = verified[-1].t
    for t in (0.0, 59.0, 60.0, 287.5, end / 3, end / 2, end - 1.0, end):
        expected = RunModel()
        expected.apply_many([e for e in verified if e.t <= t + 1e-9])
        expected.advance_clock(t)
        assert _model_state(index.model_at(t)) == _model_state(expected), t
    # the key is the bytes (not the path) and the code: a copy is a hit, another cache version a miss
    copy = tmp_path / "copy.marathon"
    copy.write_bytes(bundle.read_bytes())
    assert load_bundle(copy).cached is True
    monkeypatch.setattr("tui.session.BUNDLE_CACHE_VERSION", "test")
    assert load_bundle(copy).cached is False
    # a deferred write (the replay screen's, after its first frame) lands only when remembered
    monkeypatch.setattr("tui.session.BUNDLE_CACHE_VERSION", "test-deferred")
    deferred = load_bundle(copy, defer_write=True)
    assert load_bundle(copy, defer_write=True).cached is False
    deferred.remember()
    assert load_bundle(copy).cached is True


@aio
async def test_replay_opens_from_the_cache_at_the_requested_time(bundle: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``marathon replay``: the first open writes the cache after its first frame; the next,
    ``--at``, opens from it: the first frame is the run at that time, and the scorer's inputs
    (the bundle's own app model and counterfactual) arrive after it."""
    from tui.cli import build_parser, build_replay

    monkeypatch.setenv("SRE_MARATHON_CACHE", str(tmp_path / "cache"))
    first = build_replay(build_parser().parse_args(["replay", str(bundle), "--paused"]))
    async with first.run_test(size=(120, 36)) as pilot:  # a miss: the entry is written after the first frame
        opened = first.screen
        assert isinstance(opened, ReplayScreen) and opened.bundle is not None and not opened.bundle.cached
        await wait_for(pilot, lambda: opened.final_score is not None)
    app = build_replay(build_parser().parse_args(["replay", str(bundle), "--at", "7:30", "--paused"]))
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        assert screen.bundle is not None and screen.bundle.cached
        await pilot.pause()
        assert screen.playhead == 450.0 and same_as_reduced(screen)
        await wait_for(pilot, lambda: screen.final_score is not None)
        assert screen.scorer.counterfactual is not None
        expected = score_events(open_bundle(bundle).events, counterfactual=screen.bundle.counterfactual,
                                app=screen.bundle.app_model)
        assert screen.final_score.score == expected  # type: ignore[union-attr]
