"""Issue 18's "done when": a person plays the short-5 scenario with keys only and completes
correlate -> localize -> repair on three faults, with the panes live under every form.

The run is advanced by hand (``RunSession.advance_to``, as ``tests/test_tui_play.py`` does)
instead of the wall clock; every move of the operator is a key press: moving the cursor to
the row they look at, the tool key that acts on it (``i`` on an alert, ``r`` and ``b`` on a
service's health row), the keys of the form and of the confirmation. The only typed text is
the RCA summary. Non-text keys are counted per loop and bounded (:data:`KEY_BUDGET`, :data:`KEY_MAX`;
``pytest -s`` prints them).

While each form is open the run is moved on underneath and the test waits for the screen's
own refresh cycle (no manual refresh): the clock in what was sent to the terminal and the
health pane's rendered rows must change before the form is submitted.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from textual.widgets import SelectionList

from tui.app import MarathonApp
from tui.messages import ToolDone
from tui.model import AlertView
from tui.screens.dialogs import ConfirmCall, ToolForm
from tui.screens.play import PlayScreen
from tui.screens.scorecard import ScorecardScreen
from tui.screenshots import play_session
from tui.widgets.table import KeyedTable

KEY_BUDGET = 15
"""Non-text keys per loop (correlate + localize + repair) on average over the three, the issue's "~15"."""
KEY_MAX = 17
"""... and in any one loop (4-6 of a loop's keys are the cursor moves to the rows; measured 10, 14, 17: the
third loop's service is four health rows below the second's)."""

def checkout_route(a: AlertView) -> bool:
    return a.rule == "EndpointErrorRate" and a.labels.get("handler") == "POST /cart/checkout"


def catalog(a: AlertView) -> bool:
    return a.workload == "productcatalogservice"


def browse_routes(a: AlertView) -> bool:
    return a.rule == "EndpointErrorRate" and a.labels.get("handler") in ("GET /", "GET /cart", "GET /product/{id}")


FAULTS: list[tuple[float, str, Callable[[AlertView], bool], str]] = [
    # (run time of the loop, fault, the firing unassigned alerts the player groups, the faulty service)
    (285.0, "ob-payment-two-digit-expiry-year", checkout_route, "paymentservice"),
    (560.0, "ob-currency-units-bigint", browse_routes, "currencyservice"),
    (600.0, "ob-productcatalogservice-readiness-metrics-port", catalog, "productcatalogservice"),
]
"""Three faults of ``tui/scenarios/payment-short5.yaml`` the scorer credits on all three stages when
handled this way (the other two, checkout and frontend, overlap these and are left alone;
currency's rollback must come before about 10:40, or its probe does not hold through the soak
before the frontend fault's alerts). The
alerts are chosen by what the player reads in the alerts pane (rule, route, workload): their ids
depend on the player's earlier moves."""

CLOCK_RE = re.compile(r"(\d+:\d\d) / 21:00")


def aio(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(fn(*args, **kwargs))
    return run


class Keys:
    """Presses keys through Pilot and counts the non-text ones (every key but typed text)."""

    def __init__(self, pilot: Any) -> None:
        self.pilot = pilot
        self.count = 0
        self.log: list[str] = []

    async def press(self, *keys: str) -> None:
        if not keys:
            return
        self.count += len(keys)
        self.log.extend(keys)
        await self.pilot.press(*keys)

    async def type(self, text: str) -> None:
        await self.pilot.press(*text)

    async def move_to(self, table: KeyedTable, key: str) -> None:
        """Move the cursor to the row ``key`` as a person would: down or up a row at a time from where it is,
        or from the first row (home) or the last (end), whichever takes fewer keys."""
        rows = table.row_keys_in_order
        target = rows.index(key)
        paths = [(abs(target - table.cursor_row), [], target - table.cursor_row),
                 (1 + target, ["home"], target),
                 (1 + len(rows) - 1 - target, ["end"], target - (len(rows) - 1))]
        _, start, steps = min(paths, key=lambda p: p[0])
        await self.press(*start, *(["down"] * steps if steps > 0 else ["up"] * -steps))
        assert table.cursor_key() == key


class Terminal:
    """What the app sends to the terminal (Textual's compositor updates), as text."""

    def __init__(self, app: MarathonApp) -> None:
        self.sent: list[tuple[str, str]] = []
        original = app._display

        def display(screen: Any, renderable: Any) -> None:
            if renderable is not None and app._running:
                self.sent.append((type(app.screen).__name__, renderable.render_segments(app.console)))
            original(screen, renderable)

        app._display = display  # type: ignore[method-assign]

    def clocks_since(self, mark: int, under: type) -> list[str]:
        return [m for name, text in self.sent[mark:] if name == under.__name__ for m in CLOCK_RE.findall(text)]


def health_lines(screen: PlayScreen) -> list[str]:
    table = screen.query_one("#health-table", KeyedTable)
    return [table.render_line(y).text for y in range(table.size.height)]


async def settle(pilot: Any, app: MarathonApp) -> None:
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def live_underneath(pilot: Any, app: MarathonApp, screen: PlayScreen, terminal: Terminal,
                          seconds: float) -> None:
    """With a form open, move the run on by ``seconds`` and wait for the screen's own cycle: the
    terminal must get the new clock and the health pane new rows while the form is still up."""
    form = app.screen
    assert isinstance(form, ToolForm)
    before_lines = health_lines(screen)
    before_clock = screen.header_state().now
    mark = len(terminal.sent)
    session = screen.session
    session.advance_to(session.now + seconds)
    want = f"{int(session.now // 60)}:{int(session.now % 60):02d}"
    for _ in range(40):
        await pilot.pause(0.1)
        if screen.header_state().now > before_clock and health_lines(screen) != before_lines and \
                want in terminal.clocks_since(mark, ToolForm):
            break
    assert app.screen is form, "the form is still open"
    assert want in terminal.clocks_since(mark, ToolForm), (want, terminal.clocks_since(mark, ToolForm)[-3:])
    assert health_lines(screen) != before_lines, "the health pane did not change under the form"


@aio
async def test_three_faults_correlated_localized_and_repaired_with_keys_only(tmp_path: Path) -> None:
    session = play_session(run_dir=tmp_path / "run")
    app = MarathonApp(lambda: PlayScreen(session=session, autostart=False), cursor_blink=False)
    terminal = Terminal(app)
    messages: list[Any] = []
    per_loop: list[int] = []
    async with app.run_test(size=(120, 36), message_hook=messages.append) as pilot:
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        alerts = screen.query_one("#alerts-table", KeyedTable)
        health = screen.query_one("#health-table", KeyedTable)
        incidents: list[str] = []
        for at, _fault, wanted, service in FAULTS:
            session.advance_to(max(at, session.now))
            await pilot.pause(0.7)  # the refresh cycle picks the run up
            chosen = [a.id for a in sorted(screen.model.alerts.values(), key=lambda a: int(a.id[2:]))
                      if a.state == "firing" and not a.incidents and wanted(a)]
            assert chosen, f"no firing alert for {service}"
            keys = Keys(pilot)
            # correlate: on the first alert's row, i; toggle the others in the form; enter
            if not alerts.has_focus:
                await keys.press("shift+tab")
            assert alerts.has_focus
            await keys.move_to(alerts, f"un:{chosen[0]}")
            await keys.press("i")
            form = app.screen
            assert isinstance(form, ToolForm) and form.tool == "report_incident"
            checklist = form.query_one("#field-alerts", SelectionList)
            assert checklist.selected[0] == chosen[0], "the alert of the row is preselected"
            assert app.focused is checklist
            for aid in [a for a in chosen if a not in checklist.selected]:
                order = [checklist.get_option_at_index(i).value for i in range(checklist.option_count)]
                steps = order.index(aid) - (checklist.highlighted or 0)
                await keys.press(*(["down"] * steps if steps > 0 else ["up"] * -steps), "space")
            assert sorted(checklist.selected) == sorted(chosen)
            await live_underneath(pilot, app, screen, terminal, 15.0)
            await keys.press("enter")
            await settle(pilot, app)
            done = [m for m in messages if isinstance(m, ToolDone)][-1]
            assert done.tool == "report_incident" and done.result.ok, done.result.text()
            incident = str(done.result.data["incident"])
            incidents.append(incident)
            # localize: on the service's health row, r; the form names the row, the incident, the change
            await keys.press("tab")
            assert health.has_focus
            await keys.move_to(health, service)
            await keys.press("r")
            form = app.screen
            assert isinstance(form, ToolForm) and form.tool == "report_rca"
            values = form.values()
            assert values["incident"] == incident and values["service"] == service
            assert str(form.query_one("#source-service").render()).endswith("← health row")
            assert app.focused is form.query_one("#field-summary"), "the form starts on the empty field"
            await keys.type(f"{values['artifact']} on {service} broke it; roll it back")
            await live_underneath(pilot, app, screen, terminal, 15.0)
            await keys.press("enter")
            await settle(pilot, app)
            rca = screen.model.incidents[incident].rca
            assert rca is not None and rca["service"] == service
            # repair: b on the same row, enter, then the confirmation (it starts on Cancel)
            await keys.press("b")
            form = app.screen
            assert isinstance(form, ToolForm) and form.tool == "rollback"
            assert form.values() == {"deployment": service, "incident": incident}
            await live_underneath(pilot, app, screen, terminal, 15.0)
            await keys.press("enter")
            await pilot.pause()
            assert isinstance(app.screen, ConfirmCall)
            await keys.press("tab", "enter")
            await settle(pilot, app)
            done = [m for m in messages if isinstance(m, ToolDone)][-1]
            assert done.tool == "rollback" and done.result.ok, done.result.text()
            per_loop.append(keys.count)
            print(f"{service}: {' '.join(keys.log)}")

        print(f"non-text keys per loop: {per_loop}")
        assert sum(per_loop) <= KEY_BUDGET * len(per_loop) and max(per_loop) <= KEY_MAX, per_loop

        session.advance_to(session.run.end_t)
        screen.refresh_now()
        screen.finish_now()
        for _ in range(100):
            if isinstance(app.screen, ScorecardScreen):
                break
            await pilot.pause(0.05)
        card = app.screen
        assert isinstance(card, ScorecardScreen)
        by_fault = {f.fault: f for f in card.score.faults}
        for (_, fault, _, _), incident in zip(FAULTS, incidents, strict=True):
            f = by_fault[fault]
            assert (f.correlated, f.localized, f.repaired) == (True, True, True), (fault, f)
            assert f.incident == incident
