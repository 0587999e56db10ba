"""``marathon play`` driven with Pilot: a human operator through the forms, the policy layer
and the same scorer as agents; ground truth hidden until the end.

The run is driven by hand (``RunSession.advance_to``) instead of the wall clock, so the
test is fast and deterministic; everything else goes through the screen: keys, forms,
confirmations, the tool worker, the seal, the scorecard.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
from textual.message import Message
from textual.notifications import Notify
from textual.widgets import Button, Input, Select, SelectionList

from engine.bundle.format import open_bundle, verify
from scoring.score import score_events
from tui.app import MarathonApp
from tui.messages import RunFinished, ScoreComputed, ToolDone
from tui.screens.dialogs import ConfirmCall, ToolForm
from tui.screens.play import PlayScreen
from tui.screens.scorecard import ScorecardScreen
from tui.screenshots import MOVES_AT, payment_alerts, play_session
from tui.widgets.faults import FaultsPane
from tui.widgets.notes import NOTES_FILE, NotesPane
from tui.widgets.table import KeyedTable

PAYMENT_FAULT = "ob-payment-two-digit-expiry-year"


def aio(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test with asyncio (no pytest plugin needed)."""
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(fn(*args, **kwargs))
    return run


async def settle(pilot: Any, app: MarathonApp) -> None:
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def wait_for(pilot: Any, cond: Any, tries: int = 100) -> None:
    for _ in range(tries):
        if cond():
            return
        await pilot.pause(0.05)
    raise AssertionError("condition not reached")


def play_app(tmp_path: Path, **kwargs: Any) -> tuple[MarathonApp, Any]:
    session = play_session(run_dir=tmp_path / "run")
    app = MarathonApp(lambda: PlayScreen(session=session, autostart=False, **kwargs), cursor_blink=False)
    return app, session


@aio
async def test_a_human_correlates_localizes_and_repairs_and_the_scorer_credits_it(tmp_path: Path) -> None:
    app, session = play_app(tmp_path)
    messages: list[Message] = []
    async with app.run_test(size=(120, 36), message_hook=messages.append) as pilot:
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        session.advance_to(MOVES_AT)
        screen.refresh_now()
        await pilot.pause()
        # ground truth stays hidden while playing
        assert not screen.pane("faults").display and not screen.pane("score").display
        assert screen.query_one(FaultsPane).table.row_count == 0
        assert "hidden until the run ends" in "".join(t.plain for t in screen.query_one("#timeline-view").lines(9))

        # 1. report an incident from the payment fault's firing alerts (the checkout route's)
        chosen = payment_alerts(session)
        assert chosen
        await pilot.press("i")
        form = app.screen
        assert isinstance(form, ToolForm) and form.tool == "report_incident"
        alerts = form.query_one("#field-alerts", SelectionList)
        for aid in chosen:
            alerts.select(aid)
        await pilot.pause()
        assert form.query_one("#field-title", Input).value  # a title is suggested from the alerts
        form.query_one("#field-title", Input).value = "checkout failing: payment errors"
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        done = [m for m in messages if isinstance(m, ToolDone)]
        assert done[-1].tool == "report_incident" and done[-1].result.ok, done[-1].result.text()
        incident = done[-1].result.data["incident"]
        assert screen.model.incidents[incident].alerts == tuple(chosen)
        assert f"inc:{incident}" in screen.query_one("#alerts-table", KeyedTable).row_keys_in_order

        # 2. file the root cause
        await pilot.press("r")
        form = app.screen
        assert isinstance(form, ToolForm) and form.tool == "report_rca"
        assert form.query_one("#field-incident", Select).value == incident
        form.query_one("#field-service", Select).value = "paymentservice"
        form.query_one("#field-category", Select).value = "code-bug"
        form.query_one("#field-artifact", Input).value = "chg-0001"
        form.query_one("#field-summary", Input).value = "two-digit expiry year change rejects cards"
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        assert screen.model.incidents[incident].rca == {"service": "paymentservice", "category": "code-bug",
                                                        "artifact": "chg-0001",
                                                        "summary": "two-digit expiry year change rejects cards"}

        # 3. roll back the faulty revision: the confirmation shows the exact call and starts on Cancel
        await pilot.press("b")
        form = app.screen
        assert isinstance(form, ToolForm) and form.tool == "rollback"
        form.query_one("#field-deployment", Select).value = "paymentservice"
        await pilot.press("ctrl+s")
        await pilot.pause()
        confirm = app.screen
        assert isinstance(confirm, ConfirmCall)
        assert confirm.call == f'rollback {{"deployment": "paymentservice", "incident": "{incident}"}}'
        assert app.focused is confirm.query_one("#cancel", Button)
        await pilot.press("tab")
        assert app.focused is confirm.query_one("#confirm", Button)
        await pilot.press("enter")
        await settle(pilot, app)
        last = [m for m in messages if isinstance(m, ToolDone)][-1]
        assert last.tool == "rollback" and last.result.ok, last.result.text()
        assert any(c.tool == "rollback" and c.executed for c in screen.model.calls)

        # the run goes on to its end; the screen seals it and opens the scorecard, numbers first
        session.advance_to(session.run.end_t)
        screen.refresh_now()
        screen.finish_now()
        await wait_for(pilot, lambda: isinstance(app.screen, ScorecardScreen))
        card = app.screen
        assert isinstance(card, ScorecardScreen) and not card.revealed
        fault = next(f for f in card.score.faults if f.fault == PAYMENT_FAULT)
        assert (fault.correlated, fault.localized, fault.repaired) == (True, True, True)
        assert fault.outcome == "handled" and fault.incident == incident
        assert card.score.corr > 0 and card.score.loc > 0 and card.score.rep > 0 and card.score.risk == 0.0
        assert card.query_one("#scorecard-truth").has_class("hidden")
        await pilot.press("enter")  # then the ground truth
        assert card.revealed
        assert PAYMENT_FAULT in card.query_one("#scorecard-faults", KeyedTable).row_keys_in_order
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is screen and screen.reveal and screen.pane("faults").display

    finished = [m for m in messages if isinstance(m, RunFinished)]
    assert finished and finished[0].finished and finished[0].outcome.bundle is not None
    bundle = finished[0].outcome.bundle
    report = verify(bundle)
    assert report.ok and report.sealed and report.complete
    events = open_bundle(bundle).events
    assert events[0].payload["operator"] == "human"
    # the same scorer over the sealed bundle gives the scorecard's numbers
    assert score_events(events, counterfactual=screen.scorer.counterfactual).to_dict() == card.score.to_dict()
    assert not card.score.provisional
    assert any(isinstance(m, ScoreComputed) and m.final for m in messages)


@aio
async def test_forms_validate_before_calling_and_acts_can_be_cancelled(tmp_path: Path) -> None:
    app, session = play_app(tmp_path)
    messages: list[Message] = []
    async with app.run_test(size=(120, 36), message_hook=messages.append) as pilot:
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        session.advance_to(MOVES_AT)
        screen.refresh_now()
        # an incomplete form says what is missing and calls nothing
        await pilot.press("i")
        await pilot.press("ctrl+s")
        form = app.screen
        assert isinstance(form, ToolForm)
        assert "alerts" in str(form.query_one("#form-error").render())
        form.query_one("#field-alerts", SelectionList).select(payment_alerts(session)[0])
        form.query_one("#field-title", Input).value = "payment"
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        assert [m.tool for m in messages if isinstance(m, ToolDone)] == ["report_incident"]
        events_before = len(session.run.stream.events)
        # an act is not made when the confirmation is answered on its first button, Cancel
        await pilot.press("x")
        form = app.screen
        assert isinstance(form, ToolForm) and form.tool == "restart_pod"
        assert form.query_one("#field-incident", Select).value == "INC-0001"
        form.query_one("#field-pod", Input).value = "paymentservice-abc"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmCall)
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, PlayScreen)
        assert len(session.run.stream.events) == events_before
        # an act on something outside the application is denied by the policy layer, recorded, shown in red
        await pilot.press("S")
        form = app.screen
        assert isinstance(form, ToolForm) and form.tool == "scale_deployment"
        form.query_one("#field-deployment", Select).value = "loadgenerator"
        form.query_one("#field-replicas", Input).value = "3"
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.press("tab", "enter")
        await settle(pilot, app)
        done = [m for m in messages if isinstance(m, ToolDone)][-1]
        assert done.tool == "scale_deployment" and done.result.denied
        call = screen.model.calls[-1]
        assert call.tool == "scale_deployment" and not call.allowed and "outside the application" in call.reason
        assert any(isinstance(m, Notify) and m.notification.severity == "error" for m in messages)


@aio
async def test_read_tools_print_to_the_output_pane_and_notes_go_to_the_workspace(tmp_path: Path) -> None:
    app, session = play_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        session.advance_to(120)
        screen.refresh_now()
        await pilot.press("K")  # kubectl_get: k moves up on a focused table (k9s)
        form = app.screen
        assert isinstance(form, ToolForm)
        form.query_one("#field-kind", Select).value = "deployments"
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        lines = [str(line.text) for line in screen.query_one("#output-log").lines]  # type: ignore[attr-defined]
        assert any("kubectl_get" in x for x in lines) and any("paymentservice" in x for x in lines)
        # notes: typed, the tool keys do not fire inside them, saved with ctrl+s through workspace_write
        await pilot.press("n")
        await pilot.press(*"rollback b")
        assert isinstance(app.screen, PlayScreen)
        await pilot.press("ctrl+s")
        await settle(pilot, app)
        notes = screen.query_one(NotesPane)
        assert notes.saved_text == "rollback b" and not notes.dirty
        assert (tmp_path / "run" / "workspace" / NOTES_FILE).read_text() == "rollback b"
        assert screen.model.calls[-1].tool == "workspace_write"


@aio
async def test_ground_truth_cannot_be_shown_and_the_clock_not_paused_in_a_scored_run(tmp_path: Path) -> None:
    app, session = play_app(tmp_path)
    messages: list[Message] = []
    async with app.run_test(size=(120, 36), message_hook=messages.append) as pilot:
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        session.advance_to(300)
        screen.refresh_now()
        for key in ("1", "6", "p", "plus"):
            await pilot.press(key)
        await pilot.pause()
        assert not screen.pane("faults").display and not session.paused and session.speed == 1.0
        warnings = [m.notification.message for m in messages if isinstance(m, Notify)]
        assert any("hidden until the run ends" in w for w in warnings)
        assert any("cannot be paused" in w for w in warnings)
        assert "faults" not in [t for t, _ in screen.jump_targets()]
        # nothing on the play screen carries a fault id before the end
        assert not any(fid in repr(screen.context().stages) for fid in screen.model.faults)


@aio
async def test_practice_mode_pauses_and_changes_speed(tmp_path: Path) -> None:
    from engine.run.session import RunSession
    from tui.human import PRACTICE, HumanOperator
    from tui.screenshots import schedule

    session = RunSession(schedule(), operator=HumanOperator(PRACTICE), speed=10.0, spend_time=False)
    app = MarathonApp(lambda: PlayScreen(session=session, practice=True))
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        await wait_for(pilot, lambda: session.now >= 3.0)
        assert screen.header_state().mode == "PRACTICE"
        await pilot.press("p")
        assert session.paused
        frozen = session.now
        await pilot.pause(0.4)
        assert session.now == frozen
        await pilot.press("plus")
        assert session.speed == 20.0
        await pilot.press("p")
        await wait_for(pilot, lambda: session.now > frozen)
    assert session.run.stream.events[0].payload["operator"] == PRACTICE


@aio
async def test_quitting_a_run_in_progress_asks_first(tmp_path: Path) -> None:
    app, session = play_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        session.advance_to(60)
        await pilot.press("q")
        confirm = app.screen
        assert isinstance(confirm, ConfirmCall)
        assert app.focused is confirm.query_one("#cancel", Button)
        await pilot.press("enter")
        assert isinstance(app.screen, PlayScreen) and app.is_running
        # Textual's ctrl+q asks too (it used to quit and seal the run at once), also from inside a form
        await pilot.press("ctrl+q")
        assert isinstance(app.screen, ConfirmCall) and app.is_running
        await pilot.press("enter")
        assert isinstance(app.screen, PlayScreen) and app.is_running
        await pilot.press("r")
        assert isinstance(app.screen, ToolForm)
        await pilot.press("ctrl+q")
        assert isinstance(app.screen, ConfirmCall) and app.is_running
        await pilot.press("ctrl+q")
        assert isinstance(app.screen, ConfirmCall) and app.is_running


@pytest.mark.parametrize("practice", [False, True])
def test_play_command_line(practice: bool, tmp_path: Path) -> None:
    from tui.cli import build_parser, build_play

    argv = ["play", "--run-dir", str(tmp_path / "r"), *(["--practice", "--speed", "5"] if practice else [])]
    app = build_play(build_parser().parse_args(argv))
    screen = app.get_default_screen()
    assert screen.session.speed == (5.0 if practice else 1.0)
    assert screen.session.run.operator.name == ("human-practice" if practice else "human")
    with pytest.raises(ValueError, match="practice"):
        build_play(build_parser().parse_args(["play", "--speed", "5", "--run-dir", str(tmp_path / "x")]))


@aio
async def test_the_query_prompt_plots_promql_through_the_same_recorded_costed_call(tmp_path: Path) -> None:
    from engine.run.session import RunSession
    from tui.human import HumanOperator
    from tui.screens.dialogs import QueryPrompt
    from tui.screenshots import schedule

    session = RunSession(schedule(), operator=HumanOperator(), run_dir=tmp_path / "run", speed=1.0)
    app = MarathonApp(lambda: PlayScreen(session=session, autostart=False), cursor_blink=False)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        session.advance_to(MOVES_AT)
        screen.refresh_now()
        await pilot.press("m")
        prompt = app.screen
        assert isinstance(prompt, QueryPrompt)
        await pilot.press(*"rate(")  # an unclosed query: the evaluator's error, in red, through the same call
        await pilot.press("enter")
        await settle(pilot, app)
        assert screen.tool_results[-1].result.data["errorType"] == "bad_data"
        await pilot.press("m")
        prompt = app.screen
        assert isinstance(prompt, QueryPrompt)
        prompt.query_one("#query-input", Input).value = "sum by (service) (rate(http_requests_total[1m]))"
        prompt.query_one("#query-step", Input).value = "15s"
        await pilot.press("enter")  # a step without a range is refused in the prompt
        assert isinstance(app.screen, QueryPrompt) and "needs a range" in str(
            prompt.query_one("#form-error").render())
        prompt.query_one("#query-range", Input).value = "4m"
        before = session.now
        prompt.query_one("#query-input", Input).focus()
        await pilot.press("enter")
        await settle(pilot, app)
        done = screen.tool_results[-1]
        assert done.tool == "query_metrics" and done.result.ok, done.result.error
        assert done.args["start"] == pytest.approx(before - 240) and done.args["step"] == 15.0
        assert done.result.t is not None and session.now == pytest.approx(done.result.t + 5.0), "a read costs 5 s"
        call = [e.payload for e in session.run.stream.events if e.kind == "tool.call"][-1]
        assert (call["tool"], call["args"]["query"], call["operator"]) == (
            "query_metrics", "sum by (service) (rate(http_requests_total[1m]))", "human")
        lines = [str(line.text) for line in screen.query_one("#output-log").lines]  # type: ignore[attr-defined]
        frontend = next(i for i, x in enumerate(lines) if x.startswith('{service="frontend"}   last '))
        assert set(lines[frontend + 1].strip()) <= set("▁▂▃▄▅▆▇█ ") and len(lines[frontend + 1].strip()) >= 15
        assert any(x.startswith("LAST") and "TREND" in x for x in lines)
        # an instant query draws bars; the prompt remembers the query
        await pilot.press("m")
        prompt = app.screen
        assert isinstance(prompt, QueryPrompt) and prompt.history[0].startswith("sum by (service)")
        prompt.query_one("#query-input", Input).value = "kube_deployment_spec_replicas"
        await pilot.press("enter")
        await settle(pilot, app)
        lines = [str(line.text) for line in screen.query_one("#output-log").lines]  # type: ignore[attr-defined]
        assert any(x.startswith("█" * 20) and "kube_deployment_spec_replicas{" in x for x in lines)
        # the command palette offers it too
        titles = [title for title, _, _ in screen.commands()]
        assert "Tool: query_metrics" in titles and "Tool: get_time" in titles


@aio
async def test_the_run_ending_under_a_form_closes_it_and_the_scorecard_waits_for_s(tmp_path: Path) -> None:
    """Keys the player was typing into a form as the run ended must not land on the scorecard: an
    ``enter`` there reveals the ground truth before the numbers were read (found by a review)."""
    app, session = play_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        session.advance_to(MOVES_AT)
        screen.refresh_now()
        await pilot.pause()
        await pilot.press("x")
        assert isinstance(app.screen, ToolForm)
        session.advance_to(session.run.end_t)
        screen.finish_now()
        await wait_for(pilot, lambda: screen.final_score is not None and screen.sealed is not None)
        await pilot.pause()
        assert app.screen is screen  # the form was closed; no scorecard over the keys being typed
        await pilot.press("enter", "enter")
        assert app.screen is screen and not screen.reveal
        await pilot.press("s")
        await wait_for(pilot, lambda: isinstance(app.screen, ScorecardScreen))
        card = app.screen
        assert isinstance(card, ScorecardScreen) and not card.revealed
        await pilot.press("enter")
        assert card.revealed and screen.reveal
