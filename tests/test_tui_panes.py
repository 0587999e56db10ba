"""The live panes at marathon scale (issue 18): rows for alerts and health at 120x36 and
80x24 in watch, play and replay; distinct abbreviated service names; alerts in
Alertmanager's terms with no active alert out of reach; j/k/g/G on tables; the ``/`` filter
chip with per-pane counts.

The model is a Train Ticket marathon (65 services), seed 1, run by hand to 40:00 -- the
runbook agent for watch and replay (its incidents, some resolved), a human for play who
grouped the 13 alerts firing at 30:00 into an incident and declared it resolved at once
(7 of them still fire at 40:00), then opened a second incident.
"""

from __future__ import annotations

import asyncio
import functools
import re
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from engine.bundle.events import Event
from engine.operate.operators import make_operator
from engine.run.session import RunSession
from faults.generator import generate
from tui.app import MarathonApp
from tui.human import HumanOperator
from tui.model import RECENT_INCIDENT_S, RunModel, fmt_clock
from tui.screens.base import RunScreen
from tui.screens.dialogs import SeekScreen, ToolForm
from tui.screens.play import PlayScreen
from tui.screens.replay import ReplayScreen
from tui.screens.watch import WatchScreen
from tui.seek import ReplayIndex
from tui.session import LoadedBundle
from tui.widgets.alerts import STILL_ACTIVE, AlertsPane, alert_choice_label, alert_ids, alert_target, grouped_rows
from tui.widgets.header import RunHeader
from tui.widgets.health import STATE_RANK, HealthPane, short_names
from tui.widgets.table import KeyedTable
from tui.widgets.timeline import TimelinePane, TimelineView

T = 2400.0
SIZES = {"wide": (120, 36), "small": (80, 24)}
MIN_ROWS = {("watch", "wide"): 8, ("watch", "small"): 7, ("replay", "wide"): 8, ("replay", "small"): 7,
            ("play", "wide"): 7, ("play", "small"): 5}
"""Alert and health rows each pane must show (before issue 18: 1, 5, 1, 5, 6, 3 -- scrollbars counted)."""
TIMELINE_MAX = {"wide": 8, "small": 6}
"""The timeline pane's height at most, borders included (before: 14 at 120x36)."""


def aio(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(fn(*args, **kwargs))
    return run


class Marathon:
    """The two sessions of the module docstring, built once."""

    def __init__(self) -> None:
        sched = generate("train-ticket", 1, "marathon")
        self.agent = RunSession(sched, operator=make_operator("runbook"), speed=None)
        self.events: list[Event] = []
        self.agent.subscribe(self.events.append, past=True)
        self.agent.advance_to(T)
        self.human = RunSession(sched, operator=HumanOperator(), speed=1.0, spend_time=False)
        self.human_events: list[Event] = []
        self.human.subscribe(self.human_events.append, past=True)
        self.human.advance_to(1800)
        history = self.human.run.alert_history
        assert history is not None
        firing = [f"A-{a.id}" for a in history.instances if a.state == "firing"]
        inc = self.human.call_tool("report_incident", {"alerts": firing, "title": "everything at 30:00"})
        self.resolved = str(inc.data["incident"])
        assert self.human.call_tool("resolve_incident", {"incident": self.resolved}).ok
        self.human.advance_to(T)
        now_firing = [f"A-{a.id}" for a in history.instances if a.state == "firing" and f"A-{a.id}" not in firing]
        assert self.human.call_tool("report_incident", {"alerts": now_firing[:3] or firing[:1],
                                                        "title": "new at 40:00"}).ok
        self.still_firing = {f"A-{a.id}" for a in history.instances if a.state == "firing"} & set(firing)
        assert self.still_firing  # the case under test: firing alerts of an incident resolved 10 min ago

    def model(self) -> RunModel:
        m = RunModel()
        m.apply_many(self.events)
        return m


@pytest.fixture(scope="module")
def marathon() -> Marathon:
    return Marathon()


class QuietPlay(PlayScreen):
    """Play without the background no-op counterfactual (a whole marathon simulated again)."""

    def start_source(self) -> None:
        pass


def make_screen(marathon: Marathon, kind: str) -> Callable[[], RunScreen]:
    if kind == "watch":
        return lambda: WatchScreen(session=marathon.agent, autostart=False)
    if kind == "play":
        return lambda: QuietPlay(session=marathon.human, autostart=False)
    loaded = LoadedBundle(path=Path("train-ticket-marathon.marathon"), events=marathon.events,
                          meta=dict(marathon.events[0].payload), integrity="sealed")
    index = ReplayIndex(marathon.events)
    return lambda: ReplayScreen(loaded.path, paused=True, start_at=T, loaded=(loaded, index))


async def opened(app: MarathonApp, pilot: Any) -> RunScreen:
    screen = app.screen
    assert isinstance(screen, RunScreen)
    screen.refresh_now()
    await pilot.pause()
    screen.refresh_now()
    await pilot.pause()
    return screen


def visible(table: KeyedTable) -> int:
    """Rows on screen: the table's height under its header and above a horizontal scrollbar, or fewer rows."""
    return min(table.row_count, max(0, table.scrollable_content_region.height - 1))


# ---------------------------------------------------------------------- layout


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("kind", ["watch", "play", "replay"])
@aio
async def test_alerts_and_health_get_their_rows_at_marathon_scale(marathon: Marathon, kind: str, size: str) -> None:
    app = MarathonApp(make_screen(marathon, kind), cursor_blink=False)
    async with app.run_test(size=SIZES[size]) as pilot:
        screen = await opened(app, pilot)
        alerts = screen.query_one("#alerts-table", KeyedTable)
        health = screen.query_one("#health-table", KeyedTable)
        assert health.row_count == 65 and alerts.row_count > 20
        # every health column fits the pane: no horizontal scrollbar eating a row
        assert health.total_width <= health.scrollable_content_region.width
        assert visible(alerts) >= MIN_ROWS[kind, size], (kind, size, visible(alerts))
        assert visible(health) >= MIN_ROWS[kind, size], (kind, size, visible(health))
        if kind != "play":  # the faults pane loses no row to a horizontal scrollbar (before: 4 and 2)
            assert visible(screen.query_one("#faults-table", KeyedTable)) >= (5 if size == "wide" else 3)
        timeline = screen.query_one(TimelinePane)
        assert timeline.outer_size.height <= TIMELINE_MAX[size]
        # the capped timeline still draws the alerts, operator and deploys rows
        view = screen.query_one(TimelineView)
        labels = [line.plain.split(" ")[0] for line in view.lines(view.size.height)]
        assert labels[-3:] == ["alerts", "operator", "deploys"]
        if kind != "play":  # fault lanes summarise the 30+ faults: none is left out
            assert any("+" in line.plain[:12] for line in view.lines(view.size.height))
        # the health rows read distinctly at this width, unhealthy services first
        names = [health.row_cells(k)[0].plain.strip() for k in health.row_keys_in_order]
        assert len(set(names)) == 65, [n for n in names if names.count(n) > 1]
        assert all(len(n) <= screen.query_one(HealthPane).name_width for n in names)
        ranks = [STATE_RANK[screen.model.services[k].state] for k in health.row_keys_in_order]
        assert ranks == sorted(ranks) and ranks[0] < 2  # some service is unhealthy at 40:00, and it is on top


def test_train_ticket_names_are_distinct_at_every_width(marathon: Marathon) -> None:
    names = list(marathon.model().services)
    assert len(names) == 65
    for width in range(9, 30):
        short = short_names(names, width)
        assert len(set(short.values())) == 65, width
        assert all(len(s) <= width for s in short.values())
    wide = short_names(names, 40)
    assert wide["ts-admin-basic-info-service"] == "admin-basic-info" and wide["ts-order-mongo"] == "order-mongo"
    assert short_names(names, 10)["ts-admin-basic-info-service"] == "admin…info"
    # Online Boutique shares no prefix but most names end in "service"; the Astronomy Shop shares nothing
    from engine.apps.model import load_app

    boutique = short_names([s.name for s in load_app("online-boutique").services], 20)
    assert boutique["paymentservice"] == "payment" and boutique["redis-cart"] == "redis-cart"
    assert len(set(boutique.values())) == len(boutique)
    shop = [s.name for s in load_app("astronomy-shop").services]
    assert short_names(shop, 40) == {n: n for n in shop}
    assert short_names(["frontend", "cartservice", "paymentservice", "redis-cart"], 20)["cartservice"] == "cartservice"


# ---------------------------------------------------------------------- alerts


def test_no_active_alert_hides_under_a_resolved_incident(marathon: Marathon) -> None:
    model = RunModel()
    model.apply_many(marathon.human_events)
    inc = model.incidents[marathon.resolved]
    assert inc.resolved_at is not None and model.t - inc.resolved_at > RECENT_INCIDENT_S
    rows = grouped_rows(model, model.t)
    assert alert_ids(rows) >= model.active_alerts  # every active alert is on a row
    keys = [k for k, _ in rows]
    assert f"inc:{marathon.resolved}" in keys
    under = {k.partition(":")[2] for k in keys if k.startswith(f"{marathon.resolved}:")}
    assert under == {a for a in inc.alerts if model.alerts[a].active} and marathon.still_firing <= under
    for key, cells in rows:
        if key.startswith(f"{marathon.resolved}:"):
            assert STILL_ACTIVE in cells[0].plain[:3] and "still active" in cells[-1].plain


def test_groups_that_burn_come_first(marathon: Marathon) -> None:
    """At marathon scale the firing alerts must be at the top, not under old resolved incidents listed
    in id order (a review found three firing alerts neither at the top nor at the bottom at 80x24)."""
    for events in (marathon.human_events, marathon.events):
        model = RunModel()
        model.apply_many(events)
        rows = grouped_rows(model, model.t)
        heads = [k for k, _ in rows if k.startswith("inc:")]

        def members(head: str, rows: list[tuple[str, Any]] = rows) -> list[str]:
            group = head[4:]
            prefix = "un:" if group == "unassigned" else f"{group}:"
            return [k.partition(":")[2] for k, _ in rows if k.startswith(prefix)]

        tiers = [0 if any(model.alerts[a].state == "firing" for a in members(h))
                 else 1 if any(model.alerts[a].active for a in members(h)) else 2 for h in heads]
        assert tiers == sorted(tiers) and tiers[0] == 0, list(zip(heads, tiers, strict=True))
        firing_rows = [i for i, (k, _) in enumerate(rows) if not k.startswith("inc:")
                       and model.alerts[k.partition(":")[2]].state == "firing"]
        quiet_heads = [rows.index(next(r for r in rows if r[0] == h)) for h, t in zip(heads, tiers, strict=True)
                       if t == 2]
        assert not quiet_heads or max(firing_rows) < min(quiet_heads)


@aio
async def test_the_subtitle_counts_the_alerts_one_can_reach(marathon: Marathon) -> None:
    app = MarathonApp(make_screen(marathon, "play"), cursor_blink=False)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(app, pilot)
        pane = screen.query_one(AlertsPane)
        table = pane.table
        counts = re.match(r"(\d+) firing · (\d+) pending", str(pane.border_subtitle))
        assert counts is not None
        reachable = set()
        table.focus()
        await pilot.press("g")
        for _ in range(table.row_count):  # walk every row with the keys
            key = table.cursor_key()
            assert key is not None
            if not key.startswith("inc:"):
                reachable.add(key.partition(":")[2])
            await pilot.press("j")
        active = {a for a in reachable if screen.model.alerts[a].active}
        assert len(active) == int(counts[1]) + int(counts[2]) and active == screen.model.active_alerts


def test_alert_columns_have_one_meaning_each(marathon: Marathon) -> None:
    model = marathon.model()
    rows = dict(grouped_rows(model, model.t))
    firing = [k for k in rows if not k.startswith("inc:") and model.alerts[k.partition(":")[2]].state == "firing"]
    ended = [k for k in rows if not k.startswith("inc:") and not model.alerts[k.partition(":")[2]].active]
    assert firing and ended
    for key in firing:
        a = model.alerts[key.partition(":")[2]]
        cells = rows[key]
        assert cells[3].plain.strip() == fmt_clock(a.active_at) and cells[4].plain.strip() == fmt_clock(a.fired_at)
    for key in ended:
        a = model.alerts[key.partition(":")[2]]
        cells = rows[key]
        assert cells[3].plain.strip() == fmt_clock(a.active_at) and cells[4].plain.strip() == fmt_clock(a.ended_at)
        assert a.ended_at is not None and a.ended_at >= a.active_at


@aio
async def test_alerts_table_headers_say_what_each_time_is(marathon: Marathon) -> None:
    app = MarathonApp(make_screen(marathon, "watch"), cursor_blink=False)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(app, pilot)
        table = screen.query_one("#alerts-table", KeyedTable)
        labels = [label.strip() for _, label, _ in table.column_spec]
        assert labels[:5] == ["ID", "STATE", "ALERTNAME · TARGET / INCIDENT", "ACTIVE", "CHANGED"]
        # the alert name gets room at 120 columns (three columns more than before left it 7 cells)
        assert table.widths_for(table.size.width)[2] >= 16


def test_alert_picker_labels_name_the_route_and_tell_alerts_apart(marathon: Marathon) -> None:
    model = marathon.model()
    labels = [alert_choice_label(a, model) for a in model.alerts.values()]
    assert len(set(labels)) == len(labels)
    by_target: dict[tuple[str, str], list[str]] = {}
    for a in model.alerts.values():
        by_target.setdefault((a.rule, alert_target(a)), []).append(alert_choice_label(a, model))
    assert any(len(v) > 1 for v in by_target.values())  # the case of issue 18: one rule, one service, twice
    routed = [a for a in model.alerts.values() if "handler" in a.labels]
    assert routed and all(f"route {a.labels['handler']}" in alert_choice_label(a, model) for a in routed)


@aio
async def test_the_play_forms_offer_alerts_by_their_picker_label(marathon: Marathon) -> None:
    app = MarathonApp(make_screen(marathon, "play"), cursor_blink=False)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(app, pilot)
        assert isinstance(screen, PlayScreen)
        offered = screen.form_context("report_incident").alerts
        assert offered and all(label == alert_choice_label(screen.model.alerts[aid], screen.model)
                               for aid, label in offered)


# ---------------------------------------------------------------------- keys


@aio
async def test_j_k_g_G_move_the_cursor_and_replay_keeps_g_for_seeking(marathon: Marathon) -> None:
    app = MarathonApp(make_screen(marathon, "watch"), cursor_blink=False)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(app, pilot)
        table = screen.query_one("#health-table", KeyedTable)
        table.focus()
        await pilot.press("j", "j", "j")
        assert table.cursor_row == 3
        await pilot.press("k")
        assert table.cursor_row == 2
        await pilot.press("G")
        assert table.cursor_row == table.row_count - 1 == 64
        assert round(table.scroll_y) > 0  # brought into view
        await pilot.press("g")
        assert table.cursor_row == 0 and round(table.scroll_y) == 0
    app = MarathonApp(make_screen(marathon, "replay"), cursor_blink=False)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(app, pilot)
        table = screen.query_one("#alerts-table", KeyedTable)
        table.focus()
        await pilot.press("G")
        assert table.cursor_row == table.row_count - 1
        await pilot.press("g")  # the replay screen's own g: the seek prompt, not the first row
        assert isinstance(app.screen, SeekScreen)
        assert table.cursor_row == table.row_count - 1


@aio
async def test_in_play_k_moves_on_a_table_and_K_is_kubectl_get(marathon: Marathon) -> None:
    app = MarathonApp(make_screen(marathon, "play"), cursor_blink=False)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await opened(app, pilot)
        table = screen.query_one("#alerts-table", KeyedTable)
        table.focus()
        await pilot.press("j", "j", "k")
        assert table.cursor_row == 1 and app.screen is screen
        await pilot.press("K")
        form = app.screen
        assert isinstance(form, ToolForm) and form.tool == "kubectl_get"


# ---------------------------------------------------------------------- filter


@pytest.mark.parametrize("size", list(SIZES))
@aio
async def test_the_filter_stays_visible_as_a_chip_with_counts_and_esc_clears_it(marathon: Marathon,
                                                                                size: str) -> None:
    app = MarathonApp(make_screen(marathon, "watch"), cursor_blink=False)
    async with app.run_test(size=SIZES[size]) as pilot:
        screen = await opened(app, pilot)
        await pilot.press("slash", *"order", "enter")
        await pilot.pause()
        box = screen.query_one("#filter")
        assert box.has_class("hidden") and screen.needle == "order"  # the box is gone once applied...
        header = screen.query_one(RunHeader)
        line = header.render().plain
        health = screen.query_one("#health-table", KeyedTable)
        alerts = screen.query_one(AlertsPane)
        shown = len(health.row_keys_in_order)
        assert 0 < shown < 65
        a_shown = len(alert_ids([(k, ()) for k in alerts.table.row_keys_in_order]))
        a_total = len(alert_ids(grouped_rows(screen.model, screen.now)))
        assert line.startswith(" WATCH  filter: order ✕")  # ...and the chip stays, at both sizes
        assert f"health {shown}/65" in line and f"alerts {a_shown}/{a_total}" in line
        listed = [p for p in ("faults", "alerts", "actions", "health") if f"· {p} " in line]
        assert listed == (["faults", "alerts", "actions", "health"] if size == "wide"
                          else ["faults", "alerts", "health"])  # the shown panes (actions start hidden at 80x24)
        assert str(screen.query_one(HealthPane).border_subtitle).startswith(f"{shown} of 65 services match")
        assert str(alerts.border_subtitle).startswith(f"{a_shown} of {a_total} alerts match")
        await pilot.press("escape")
        await pilot.pause()
        assert screen.needle == "" and "filter:" not in header.render().plain
        assert len(health.row_keys_in_order) == 65
        assert "match" not in str(screen.query_one(HealthPane).border_subtitle)
        # a click on the chip clears it too
        await pilot.press("slash", *"pay", "enter")
        await pilot.pause()
        assert "filter: pay ✕" in header.render().plain
        await pilot.click(RunHeader, offset=(12, 0))
        await pilot.pause()
        assert screen.needle == "" and "filter:" not in header.render().plain
