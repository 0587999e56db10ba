"""The play screen's forms and dialogs (issue 18): live panes beneath every dialog, defaults
from the row the player is on with where each came from, no silent narrowing of read tools,
pickers instead of typed names, enter/esc, and keys typed at key-repeat speed all landing.

Setup moves (reporting an incident the test needs, advancing the run) are internal calls;
what is tested goes through keys (Pilot) and what the screen shows.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from textual import events
from textual.command import CommandPalette
from textual.widgets import Button, Checkbox, Input, Select, SelectionList, TextArea

from tui.app import MarathonApp
from tui.messages import ToolDone
from tui.screens.dialogs import ConfirmCall, HelpScreen, JumpScreen, ToolForm
from tui.screens.play import PlayScreen
from tui.screenshots import play_session
from tui.widgets.table import KeyedTable

CLOCK_RE = re.compile(r"(\d+:\d\d) / 21:00")


def aio(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(fn(*args, **kwargs))
    return run


def play_app(tmp_path: Path) -> tuple[MarathonApp, Any, list[str]]:
    """A play app driven by hand, and the text of every terminal update it sends (with the screen on top)."""
    session = play_session(run_dir=tmp_path / "run")
    app = MarathonApp(lambda: PlayScreen(session=session, autostart=False), cursor_blink=False)
    sent: list[str] = []
    original = app._display

    def display(screen: Any, renderable: Any) -> None:
        if renderable is not None and app._running:
            sent.append(f"{type(app.screen).__name__}\0{renderable.render_segments(app.console)}")
        original(screen, renderable)

    app._display = display  # type: ignore[method-assign]
    return app, session, sent


async def at(pilot: Any, screen: PlayScreen, t: float) -> None:
    screen.session.advance_to(t)
    screen.refresh_now()
    await pilot.pause()


async def settle(pilot: Any, app: MarathonApp) -> None:
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def cursor_to(pilot: Any, table: KeyedTable, key: str) -> None:
    table.focus()
    await pilot.pause()
    table.move_cursor(row=table.row_keys_in_order.index(key))
    await pilot.pause()


def source(form: ToolForm, name: str) -> str:
    return str(form.query_one(f"#source-{name}").render())


def form(app: MarathonApp, tool: str) -> ToolForm:
    screen = app.screen
    assert isinstance(screen, ToolForm) and screen.tool == tool, screen
    return screen


def health_lines(screen: PlayScreen) -> list[str]:
    table = screen.query_one("#health-table", KeyedTable)
    return [table.render_line(y).text for y in range(table.size.height)]


# ---------------------------------------------------------------------------- live under dialogs


@aio
async def test_the_panes_and_the_clock_keep_updating_beneath_every_dialog(tmp_path: Path) -> None:
    app, session, sent = play_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        await at(pilot, screen, 285.0)
        session.call_tool("report_incident", {"alerts": ["A-5"], "title": "checkout errors"})
        await at(pilot, screen, session.now + 1)
        openers: list[tuple[tuple[str, ...], type]] = [
            (("i",), ToolForm), (("question_mark",), HelpScreen), (("colon",), JumpScreen),
            (("ctrl+p",), CommandPalette), (("tab", "b", "enter"), ConfirmCall)]
        for keys, kind in openers:
            await pilot.press(*keys)
            await pilot.pause()
            assert isinstance(app.screen, kind), (keys, app.screen)
            before = health_lines(screen)
            mark = len(sent)
            session.advance_to(session.now + 15.0)  # one health sample; no manual refresh: the cycle's own
            want = f"{int(session.now // 60)}:{int(session.now % 60):02d}"
            for _ in range(30):
                await pilot.pause(0.1)
                if health_lines(screen) != before and any(want in s for s in sent[mark:]):
                    break
            shown = [c for s in sent[mark:] if s.startswith(kind.__name__ + "\0") for c in CLOCK_RE.findall(s)]
            assert want in shown, (kind.__name__, want, shown[-3:])
            # ... and only by what changed: cycles beneath the dialog while the run stands still send nothing
            # (Textual would repaint the whole terminal for each: base.RunScreen._cycle)
            await pilot.pause(0.2)
            idle, cycles = len(sent), screen.cycles
            await pilot.pause(1.2)
            assert screen.cycles > cycles and len(sent) == idle, (kind.__name__, [len(x) for x in sent[idle:]])
            assert health_lines(screen) != before, kind.__name__
            assert isinstance(app.screen, kind)
            mark = len(sent)
            while app.screen is not screen:
                await pilot.press("escape")
                await pilot.pause()
            await pilot.pause(0.3)
            back = [c for s in sent[mark:] if s.startswith("PlayScreen\0") for c in CLOCK_RE.findall(s)]
            assert want in back, ("back on the play screen", want, back)  # repainted whole, not stale


# ---------------------------------------------------------------------------- defaults follow the eye


@aio
async def test_forms_prefill_from_the_focused_panes_row_and_say_where_it_came_from(tmp_path: Path) -> None:
    app, session, _ = play_app(tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        await at(pilot, screen, 285.0)
        alerts = screen.query_one("#alerts-table", KeyedTable)
        health = screen.query_one("#health-table", KeyedTable)
        actions = screen.query_one("#actions-table", KeyedTable)
        # an alert row: its alert preselected and named
        await cursor_to(pilot, alerts, "un:A-5")
        await pilot.press("i")
        f = form(app, "report_incident")
        assert list(f.query_one("#field-alerts", SelectionList).selected) == ["A-5"]
        assert source(f, "alerts")  # where the checked alerts came from ...
        f.query_one("#field-alerts", SelectionList).deselect("A-5")
        await pilot.pause()
        assert source(f, "alerts") == ""  # ... until the player changes them: then it would mislead
        f.query_one("#field-alerts", SelectionList).select("A-5")
        await pilot.pause()
        assert "alerts row A-5" in source(f, "alerts") and "A-5" in str(f.query_one("#form-origin").render())
        await pilot.press("escape")
        # a health row: the service, named as such
        await cursor_to(pilot, health, "checkoutservice")
        await pilot.press("b")
        f = form(app, "rollback")
        assert f.query_one("#field-deployment", Select).value == "checkoutservice"
        assert source(f, "deployment") == "deployment: checkoutservice  ← health row"
        await pilot.press("escape")
        # no pane focused: the pane focused last
        screen.set_focus(None)
        await pilot.press("b")
        assert form(app, "rollback").values()["deployment"] == "checkoutservice"
        await pilot.press("escape")
        # an incident row: the incident and its root-cause service
        inc = session.call_tool("report_incident", {"alerts": ["A-5"], "title": "checkout errors"}).data["incident"]
        session.call_tool("report_rca", {"incident": inc, "service": "paymentservice", "category": "code-bug",
                                         "artifact": "chg-0001", "summary": "expiry year"})
        session.call_tool("get_deploy_history", {"service": "paymentservice"})
        await at(pilot, screen, session.now + 1)
        await cursor_to(pilot, alerts, f"inc:{inc}")
        await pilot.press("b")
        f = form(app, "rollback")
        assert f.values() == {"deployment": "paymentservice", "incident": inc}
        assert f"{inc}'s root cause" in source(f, "deployment") and f"alerts row {inc}" in source(f, "incident")
        await pilot.press("escape")
        # an actions-log row: the call's target (and incident, when it had one)
        await cursor_to(pilot, actions, actions.row_keys_in_order[-1])
        await pilot.press("S")
        f = form(app, "scale_deployment")
        assert f.query_one("#field-deployment", Select).value == "paymentservice"
        assert "actions row #" in source(f, "deployment") and "get_deploy_history" in source(f, "deployment")
        await pilot.press("escape")
        # a resolved incident is marked, listed after the open ones, and never the default
        session.call_tool("resolve_incident", {"incident": inc})
        other = session.call_tool("report_incident", {"alerts": ["A-6"], "title": "catalog"}).data["incident"]
        await at(pilot, screen, session.now + 1)
        await cursor_to(pilot, health, "paymentservice")
        await pilot.press("r")
        f = form(app, "report_rca")
        picker = f.query_one("#field-incident", Select)
        labels = [str(p) for p, _ in picker._options if _ is not Select.NULL]
        assert picker.value == other and "the only open incident" in source(f, "incident")
        assert labels[0].startswith(other) and labels[-1] == f"{inc} checkout errors (resolved)"


@aio
async def test_read_tools_are_never_narrowed_behind_the_players_back(tmp_path: Path) -> None:
    app, _session, _ = play_app(tmp_path)
    messages: list[Any] = []
    async with app.run_test(size=(120, 36), message_hook=messages.append) as pilot:
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        await at(pilot, screen, 285.0)
        await cursor_to(pilot, screen.query_one("#alerts-table", KeyedTable), "un:A-5")
        await pilot.press("a")
        f = form(app, "get_alerts")
        assert f.query_one("#field-service", Select).value is Select.NULL
        assert f.query_one("#field-alertname", Input).value == ""
        assert source(f, "service").startswith("not filtered: service=frontend suggested ← alerts row A-5")
        assert "ctrl+f" in str(f.query_one("#form-keys").render())
        await pilot.press("enter")
        await settle(pilot, app)
        done = [m for m in messages if isinstance(m, ToolDone)][-1]
        assert done.tool == "get_alerts" and "service" not in done.args and "alertname" not in done.args
        # applied only when asked, visibly, and cleared the same way
        await pilot.press("a")
        f = form(app, "get_alerts")
        await pilot.press("ctrl+f")
        assert f.values()["service"] == "frontend" and f.values()["alertname"] == "EndpointErrorRate"
        assert source(f, "service").startswith("filter applied: service=frontend")
        await pilot.press("ctrl+f")
        assert "service" not in f.values() and "alertname" not in f.values()
        await pilot.press("escape")
        # kubectl_get from a health row: the label selector is suggested, not applied
        await cursor_to(pilot, screen.query_one("#health-table", KeyedTable), "paymentservice")
        await pilot.press("K")
        f = form(app, "kubectl_get")
        assert f.query_one("#field-selector", Input).value == ""
        assert "selector=app=paymentservice suggested ← health row" in source(f, "selector")


# ---------------------------------------------------------------------------- row actions and pickers


@aio
async def test_tool_keys_act_on_the_selected_row_with_pickers(tmp_path: Path) -> None:
    app, session, _ = play_app(tmp_path)
    messages: list[Any] = []
    async with app.run_test(size=(120, 36), message_hook=messages.append) as pilot:
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        await at(pilot, screen, 285.0)
        inc = session.call_tool("report_incident", {"alerts": ["A-5"], "title": "checkout errors"}).data["incident"]
        await at(pilot, screen, session.now + 1)
        health = screen.query_one("#health-table", KeyedTable)
        await cursor_to(pilot, health, "paymentservice")
        await pilot.press("l")
        f = form(app, "query_logs")
        assert f.values() == {"deployment": "paymentservice", "tail": 100, "previous": False}
        assert "health row paymentservice" in str(f.query_one("#form-origin").render())
        await pilot.press("escape", "d")
        f = form(app, "kubectl_describe")
        assert f.values() == {"kind": "deployments", "name": "paymentservice"}
        await pilot.press("escape", "S")
        f = form(app, "scale_deployment")
        desired = screen.model.services["paymentservice"].desired
        assert f.values() == {"deployment": "paymentservice", "replicas": desired, "incident": inc}
        assert "the desired count now" in source(f, "replicas")
        # x: the pod picker lists the service's pods first (from alert labels here), preset to one of them
        await pilot.press("escape", "x")
        f = form(app, "restart_pod")
        picker = f.query_one("#pick-pod", Select)
        pods = [v for _, v in picker._options if v is not Select.NULL]
        assert pods and all(p.startswith("paymentservice-") for p in pods[:3])
        assert f.values() == {"pod": pods[0], "incident": inc} and "a pod of paymentservice" in source(f, "pod")
        # picking another with keys fills the typed line
        picker.focus()
        await pilot.press("space", "down", "enter")
        await pilot.pause()
        assert f.values()["pod"] == pods[1] and isinstance(app.screen, ToolForm)
        await pilot.press("escape")
        # b: the revision picker lists the deployment's deploys; rev 1 is the one before chg-0001
        await pilot.press("b")
        f = form(app, "rollback")
        revisions = f.query_one("#pick-revision", Select)
        labels = [str(p) for p, v in revisions._options if v is not Select.NULL]
        assert labels[0].startswith("rev 2 · chg-0001 · code") and labels[1].startswith("rev 1 · before chg-0001")
        revisions.focus()
        await pilot.press("space", "down", "down", "enter")
        await pilot.pause()
        assert f.values() == {"deployment": "paymentservice", "revision": 1, "incident": inc}
        await pilot.press("escape")
        # r: the change picker offers every deploy, the service's newest preset, the category guessed from it
        await pilot.press("r")
        f = form(app, "report_rca")
        changes = [v for _, v in f.query_one("#pick-artifact", Select)._options if v is not Select.NULL]
        assert changes[0] == screen.model.deploys[-1].change and "chg-0001" in changes
        assert f.values()["artifact"] == "chg-0001" and "paymentservice's newest change" in source(f, "artifact")
        assert f.values()["category"] == "code-bug" and "a guess" in source(f, "category")
        await pilot.press("escape")
        # the alert checklist: no two alerts read the same; an endpoint alert shows its route
        await at(pilot, screen, 600.0)
        await cursor_to(pilot, screen.query_one("#alerts-table", KeyedTable), "un:A-6")
        await pilot.press("i")
        f = form(app, "report_incident")
        checklist = f.query_one("#field-alerts", SelectionList)
        prompts = [str(checklist.get_option_at_index(i).prompt) for i in range(checklist.option_count)]
        assert len(set(prompts)) == len(prompts) and prompts[0].startswith("A-6 ")
        endpoint = [p for p in prompts if "EndpointErrorRate" in p]
        assert len(endpoint) >= 2 and all(" · route " in p for p in endpoint)
        # every binding of the play screen has an id and is listed in ?
        await pilot.press("escape", "question_mark")
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        ids = {bid for _, _, bid in help_screen.rows}
        assert "-" not in ids and all(bid for bid in ids)
        assert {"tool-query-logs", "tool-kubectl-describe", "tool-restart-pod", "tool-rollback",
                "tool-scale-deployment", "tool-report-incident"} <= ids


# ---------------------------------------------------------------------------- keys


@aio
async def test_enter_submits_esc_cancels_and_the_buttons_stay_in_view(tmp_path: Path) -> None:
    app, session, _ = play_app(tmp_path)
    messages: list[Any] = []
    async with app.run_test(size=(80, 24), message_hook=messages.append) as pilot:
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        await at(pilot, screen, 285.0)
        session.call_tool("report_incident", {"alerts": ["A-5"], "title": "checkout errors"})
        await at(pilot, screen, session.now + 1)
        # the longest act form at 80x24: the submit button is on screen, inside the dialog
        screen.query_one("#health-table", KeyedTable).focus()
        await pilot.press("D")
        f = form(app, "deploy_patch")
        submit = f.query_one("#submit", Button)
        dialog = f.query_one("#dialog").region
        assert submit.region.height and dialog.contains_region(submit.region)
        assert submit.region.bottom <= 24 and "enter submit (ctrl+s in a text area)" in str(
            f.query_one("#form-keys").render())
        # enter in a text area is a new line; ctrl+s submits from there
        f.query_one("#field-diff", TextArea).focus()
        await pilot.press("a", "enter", "b")
        assert f.query_one("#field-diff", TextArea).text == "a\nb" and app.screen is f
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is f and "diff" in str(f.query_one("#form-error").render())  # too short: refused
        await pilot.press("escape")
        assert app.screen is screen
        # enter on a closed select submits (it does not open it); space opens, enter picks without submitting
        await pilot.press("b")
        f = form(app, "rollback")
        deployment = f.query_one("#field-deployment", Select)
        deployment.focus()
        await pilot.press("space")
        await pilot.pause()
        assert deployment.expanded
        await pilot.press("down", "enter")
        await pilot.pause()
        assert not deployment.expanded and app.screen is f
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmCall)
        await pilot.press("escape")  # the confirmation, then nothing runs
        await settle(pilot, app)
        assert not any(isinstance(m, ToolDone) and m.tool == "rollback" for m in messages)
        # enter submits from a checkbox (space toggles it)
        await pilot.press("l")
        f = form(app, "query_logs")
        f.query_one("#field-previous", Checkbox).focus()
        await pilot.press("space", "enter")
        await settle(pilot, app)
        done = [m for m in messages if isinstance(m, ToolDone)][-1]
        assert done.tool == "query_logs" and done.args["previous"] is True


@aio
async def test_keys_at_key_repeat_speed_all_land(tmp_path: Path) -> None:
    app, session, _ = play_app(tmp_path)
    messages: list[Any] = []
    async with app.run_test(size=(120, 36), message_hook=messages.append) as pilot:
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        await at(pilot, screen, 600.0)
        screen._cycle_s = 0.0
        # five alert toggles pressed without a pause, while the run moves on underneath
        await pilot.press("i")
        f = form(app, "report_incident")
        checklist = f.query_one("#field-alerts", SelectionList)
        assert checklist.has_focus and not checklist.selected
        session.advance_to(session.now + 30.0)
        await pilot.press(*["space", "down"] * 5)
        await pilot.pause()
        want = [checklist.get_option_at_index(i).value for i in range(5)]
        assert sorted(checklist.selected) == sorted(want)
        # the same keys arriving in one read from the terminal (a burst: key repeat, a laggy ssh link):
        # every key is queued before the first toggle is handled, and each toggle must still land on
        # the row it was pressed on (Textual's own SelectionList toggles the last row three times)
        checklist.deselect_all()
        checklist.highlighted = 0
        await pilot.pause()
        for key, char in [("down", None), ("space", " ")] * 3:
            app.post_message(events.Key(key, char))
        await pilot.pause(0.3)
        assert checklist.highlighted == 3
        assert sorted(checklist.selected) == sorted(checklist.get_option_at_index(i).value for i in (1, 2, 3))
        await pilot.press("escape")
        # tab right after a select, then typing: every character lands in the next field
        await pilot.press("K")
        f = form(app, "kubectl_get")
        assert app.focused is f.query_one("#field-kind", Select)
        # open the select, pick its first kind (under the blank), tab out at once and type: nothing is swallowed
        kinds = [v for _, v in f.query_one("#field-kind", Select)._options if v is not Select.NULL]
        await pilot.press("space", "down", "enter", "tab", *"cartservice", "enter")
        await settle(pilot, app)
        assert app.screen is screen, f.query_one("#form-error").render()
        done = [m for m in messages if isinstance(m, ToolDone)][-1]
        assert done.tool == "kubectl_get" and done.args.get("name") == "cartservice", done.args
        assert done.args["kind"] == kinds[0]


@aio
async def test_the_root_cause_form_never_suggests_the_players_own_rollback(tmp_path: Path) -> None:
    """Repair first, report after (the usual order): the RCA's artifact must not default to the
    rollback the player just made, but to the newest change of the service that is not a rollback,
    a revert or the player's own."""
    app, session, _ = play_app(tmp_path)
    messages: list[Any] = []
    async with app.run_test(size=(120, 36), message_hook=messages.append) as pilot:
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        await at(pilot, screen, 285.0)
        session.call_tool("report_incident", {"alerts": ["A-5"], "title": "checkout errors"})
        await at(pilot, screen, session.now + 1)
        before = [d.change for d in screen.model.deploys if d.service == "paymentservice"]
        assert before, "the payment change was deployed by now"
        await cursor_to(pilot, screen.query_one("#health-table", KeyedTable), "paymentservice")
        await pilot.press("b", "enter")
        assert isinstance(app.screen, ConfirmCall)
        await pilot.press("tab", "enter")
        await settle(pilot, app)
        rollback = next(m for m in messages if isinstance(m, ToolDone) and m.tool == "rollback")
        assert rollback.result.ok, rollback.result.error
        await at(pilot, screen, session.now + 20)
        mine = str(rollback.result.data["change"])
        assert screen.model.deploys[-1].change == mine  # the newest deploy of the service is the rollback
        await pilot.press("r")
        f = form(app, "report_rca")
        assert f.values().get("artifact") == before[-1] != mine
        assert source(f, "artifact").endswith("← paymentservice's newest change (rollbacks, reverts, yours skipped)")


@aio
async def test_help_shows_every_binding_id_whole_at_80x24(tmp_path: Path) -> None:
    """``?`` is where a keymap's ids are read: they must be on screen whole, not cut or pushed off the
    right edge by long descriptions (found by a review: ``tool-kubect`` for two different tools)."""
    app, _session, _ = play_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        await at(pilot, screen, 120.0)
        await pilot.press("question_mark")
        await pilot.pause()
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        from textual.widgets import DataTable

        table = help_screen.query_one("#help-table", DataTable)
        seen: set[str] = set()
        for _ in range(len(help_screen.rows) // max(1, table.size.height - 1) + 2):
            seen.update(table.render_line(y).text for y in range(table.size.height))
            await pilot.press("pagedown")
            await pilot.pause()
        text = "\n".join(seen)
        for bid in ("tool-kubectl-describe", "tool-kubectl-get", "tool-report-incident", "tool-report-rca",
                    "table-first-g"):
            assert bid in {b for _, _, b in help_screen.rows}
            assert re.search(rf"(?<![\w-]){re.escape(bid)}(?![\w-])", text), (bid, text[:2000])
