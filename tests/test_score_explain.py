"""The scorer's evidence trail per fault (issue 18, problem 7): :mod:`scoring.explain`,
``marathon score --faults`` and the scorecard's trail screen.

The streams are the hand-made ones of ``tests/test_scoring_rules.py``. The overlap case is the
one the issue names: a fault correctly localized and rolled back scores 0 on every stage
because the incident holding its alerts was judged to be about an overlapping fault; the
trail must name that incident, the other fault and the reason.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from scoring.explain import FaultTrail, explain_events, fmt_t, trail_lines
from scoring.score import score_events
from tests.test_scoring_rules import T0, Stream, always_failing, grid, handled_stream, noop_cf
from tui.app import MarathonApp
from tui.screens.scorecard import FaultTrailScreen, ScorecardScreen
from tui.widgets.header import HeaderState
from tui.widgets.table import KeyedTable


def aio(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
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


def overlap_run() -> Stream:
    """f1 on paymentservice and f2 on currencyservice, both called by checkoutservice, live at once.
    The operator files one incident with 1 payment pod alert, 1 checkoutservice alert (supports
    both) and 3 currency pod alerts, names paymentservice (right for f1) and rolls it back; the
    probe of f1 recovers. But only 2 of the 5 alerts support f1 (below the 50 % purity), 4 support
    f2: the incident is about f2, and f1 scores nothing."""
    s = Stream()
    s.health(0.0)
    s.fault(T0, "f1", "paymentservice")
    s.fault(T0 + 15.0, "f2", "currencyservice")
    pay = s.alert(105.0, {"pod": "paymentservice-abc12-xyz9"})
    chk = s.alert(110.0, {"service": "checkoutservice"}, rule="HighRequestErrorRate")
    cur = [s.alert(112.0 + i, {"pod": f"currencyservice-def34-q{i}"}) for i in range(3)]
    inc = s.incident(130.0, [pay, chk, *cur])
    s.rca(150.0, inc, "paymentservice")
    s.act(200.0, "paymentservice")
    for t in grid(T0 + DT, 885.0):
        s.probes("f1", {t: not (90.0 <= t <= 210.0)})
        s.probes("f2", {t: t < 90.0})
        s.health(t)
    s.revert(900.0, "f1")
    s.revert(900.0, "f2")
    s.end(960.0)
    return s


DT = 15.0


def test_an_incident_taken_by_an_overlapping_fault_is_named_with_the_reason() -> None:
    s = overlap_run()
    cf = noop_cf({"f1": always_failing()["f1"], "f2": always_failing()["f1"]})
    ex = explain_events(s.events, counterfactual=cf)
    assert ex.score.to_dict() == score_events(s.events, counterfactual=cf).to_dict()  # the same numbers
    f1 = next(f for f in ex.score.faults if f.fault == "f1")
    assert (f1.correlated, f1.localized, f1.repaired, f1.outcome) == (False, False, False, "repaired")
    t = ex.trails["f1"]
    inc = next(i for i in t.incidents if i.incident == "INC-0001")
    assert inc.role == "other fault" and inc.about == "f2"
    assert (inc.supporting, inc.alerts, inc.support["f2"]) == (2, 5, 4)
    assert "below the 50% purity" in inc.reason and "2 of 5 support this fault" in inc.reason
    assert "4 support f2" in inc.reason
    assert "its RCA at 2:30 names paymentservice, this fault's target, but an RCA decides only among" in inc.reason
    text = "\n".join(trail_lines(t))
    assert "INC-0001" in text and "f2" in text and "not correlated" in text
    assert "judged to be about f2 (on currencyservice)" in t.headline[1]
    # its alerts: the payment pod names the target, checkoutservice calls it
    how = {a.id: (a.how, a.why) for a in t.alerts}
    assert how["A-1"] == ("direct", "pod paymentservice-abc12-xyz9 of the target")
    assert how["A-2"][0] == "propagated" and "checkoutservice -> paymentservice" in how["A-2"][1]
    # the act was there and the probe recovered, but repair needs localization first
    assert [(a.tool, a.t) for a in t.acts] == [("rollback", 200.0)]
    assert t.recoveries and not t.recoveries[0].credited
    ordered = next(g for g in t.recoveries[0].gates if g.gate == "ordered")
    assert ordered.verdict is False and "not localized" in ordered.reason
    # the other fault's trail: the incident correlates it, decided by its alerts (no RCA names f2's target)
    f2 = ex.trails["f2"]
    assert [(i.incident, i.role) for i in f2.incidents] == [("INC-0001", "correlates")]
    assert "alerts decide" in f2.incidents[0].reason
    json.dumps(ex.to_dict())  # JSON-able


def test_a_handled_faults_trail_shows_the_act_the_recovery_every_gate_and_the_counterfactual() -> None:
    s, _ = handled_stream()
    ex = explain_events(s.events, counterfactual=noop_cf(always_failing()))
    t = ex.trails["f1"]
    assert t.outcome == "handled" and t.stages == {"corr": True, "loc": True, "rep": True}
    assert [i.role for i in t.incidents] == ["correlates"]
    assert [(r.service, r.counted) for r in t.rcas] == [("checkoutservice", True)]
    assert [(a.tool, a.t, a.probe_failing, a.after_localization) for a in t.acts] == [("rollback", 200.0, True, True)]
    (rec,) = t.recoveries
    assert rec.credited and rec.t_pass == 225.0 and rec.last_failing == 210.0 and rec.soak_until == 405.0
    assert {g.gate: g.verdict for g in rec.gates} == dict.fromkeys(
        ["ordered", "soak", "slo", "counterfactual", "replicas", "blast_radius", "data", "restart"], True)
    assert rec.noop == f"no-op run: probe failing at 13 of 13 samples {fmt_t(225.0)}-{fmt_t(405.0)}"
    text = "\n".join(trail_lines(t))
    assert "act rollback at 3:20 on checkoutservice" in text and "recovery at 3:45" in text
    assert "no-op run: probe failing at 13 of 13 samples 3:45-6:45" in text
    assert "FAIL" not in text


def test_alerts_outside_the_window_are_listed_as_not_counted() -> None:
    s = Stream()
    s.health(0.0)
    s.fault(T0, "f1", "checkoutservice")
    late = s.alert(1500.0, {"pod": "checkoutservice-abc12-xyz9"})
    s.revert(600.0, "f1")
    s.end(1600.0)
    t = explain_events(s.events).trails["f1"]
    assert not t.alerts
    (a,) = t.uncounted
    assert a.id == late and not a.counted and "after the window 1:00-10:00 (+5:00 grace)" in a.when


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tui.screenshots import make_bundle

    return make_bundle(tmp_path_factory.mktemp("explain"))


def test_marathon_score_faults_prints_every_faults_trail(bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from engine.cli import main

    assert main(["score", "--faults", str(bundle)]) == 0
    out = capsys.readouterr().out
    assert "evidence trail, per fault:" in out
    assert "alerts supporting it:" in out and "incidents:" in out and "RCA:" in out and "repair:" in out
    handled = out.split("evidence trail, per fault:")[1]
    assert "pass counterfactual: the no-op run's probe was still failing" in handled
    assert "no-op run: probe failing at" in handled
    assert "[other fault ->" in handled  # an incident that held a fault's alerts but was about another
    # --json is unchanged by the trail
    assert main(["score", "--json", str(bundle)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert "trail" not in json.dumps(doc)


def test_marathon_report_carries_every_faults_trail(bundle: Path, tmp_path: Path) -> None:
    from engine.cli import main

    assert main(["report", "-o", str(tmp_path / "r"), str(bundle)]) == 0
    page = (tmp_path / "r" / "index.html").read_text()
    assert "Evidence trail, per fault" in page and page.count("<details>") == 5
    assert "no-op run: probe failing at" in page


@aio
async def test_the_scorecard_opens_a_faults_trail_after_the_reveal_only() -> None:
    s = overlap_run()
    cf = noop_cf({"f1": always_failing()["f1"], "f2": always_failing()["f1"]})
    ex = explain_events(s.events, counterfactual=cf)
    calls: list[int] = []

    def trails() -> dict[str, FaultTrail]:
        calls.append(1)
        return ex.trails

    app = MarathonApp(lambda: ScorecardScreen(ex.score, end_t=960.0, header=HeaderState(), staged=True,
                                              trails=trails), cursor_blink=False)
    async with app.run_test(size=(120, 36)) as pilot:
        card = app.screen
        assert isinstance(card, ScorecardScreen) and not card.revealed
        assert card.active_bindings["enter"].binding.id == "scorecard-reveal"
        assert "w" not in card.active_bindings
        await pilot.press("w")  # nothing of the trail before the reveal
        await pilot.pause()
        assert app.screen is card and not calls
        await pilot.press("enter")
        assert card.revealed and app.screen is card and not calls
        # the `?` list (and keymaps) know the trail key by its id
        assert card.active_bindings["enter"].binding.id == "scorecard-trail"
        assert card.active_bindings["w"].binding.id == "scorecard-trail"
        table = card.query_one("#scorecard-faults", KeyedTable)
        assert table.cursor_key() == "f1"
        await pilot.press("enter")
        await pilot.pause()
        trail = app.screen
        assert isinstance(trail, FaultTrailScreen) and trail.fault == "f1" and calls == [1]
        body = trail.body_text
        assert "INC-0001" in body and "judged to be about f2" in body and "below the 50% purity" in body
        assert {b.binding.id for b in trail.active_bindings.values()} >= {"trail-close", "trail-previous",
                                                                            "trail-next"}
        await pilot.press("right_square_bracket")
        assert trail.fault == "f2"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is card
        await pilot.press("down", "w")
        await pilot.pause()
        assert isinstance(app.screen, FaultTrailScreen) and app.screen.fault == "f2" and calls == [1]
    small = MarathonApp(lambda: ScorecardScreen(ex.score, end_t=960.0, header=HeaderState(), staged=True,
                                                trails=trails), cursor_blink=False)
    async with small.run_test(size=(80, 24)) as pilot:  # readable at 80x24 too: it scrolls
        await pilot.press("enter", "enter")
        await pilot.pause()
        trail = small.screen
        assert isinstance(trail, FaultTrailScreen)
        scroll = trail.query_one("#trail-scroll")
        assert scroll.max_scroll_y > 0
        await pilot.press("pagedown")
        await pilot.pause()
        assert scroll.scroll_y > 0


@aio
async def test_the_replay_scorecard_explains_a_fault(bundle: Path) -> None:
    from tui.screens.replay import ReplayScreen

    app = MarathonApp(lambda: ReplayScreen(bundle, speed=None, start_at=900.0), cursor_blink=False)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        await wait_for(pilot, lambda: screen.index is not None and screen.model.ended
                       and screen.final_score is not None)
        await pilot.press("s")
        card = app.screen
        assert isinstance(card, ScorecardScreen) and card.revealed
        handled = next(f.fault for f in card.score.faults if f.outcome == "handled")
        table = card.query_one("#scorecard-faults", KeyedTable)
        while table.cursor_key() != handled:
            await pilot.press("down")
        await pilot.press("enter")
        await pilot.pause()
        trail = app.screen
        assert isinstance(trail, FaultTrailScreen) and trail.fault == handled
        body = trail.body_text
        assert "recovery at" in body and "pass restart" in body and "no-op run: probe failing at" in body
        # end shows the trail's last line (a review saw it stop two lines short)
        await pilot.press("end")
        await pilot.pause(0.2)
        shot = re.sub(r"<[^>]+>", "", app.export_screenshot()).replace("&#160;", " ")
        assert body.splitlines()[-1].strip()[:40] in shot


def test_an_unrecovered_probe_names_the_other_faults_live_on_its_route() -> None:
    """The act was right but another fault kept the same route failing: the trail says so instead of
    only "the probe did not recover" (found by a review: payment kept checkout failing after the
    checkout rollback)."""
    s = Stream()
    s.health(0.0)
    s.fault(T0, "f1", "checkoutservice")
    s.fault(T0 + 60.0, "f2", "paymentservice")  # its scope holds the same route (Stream's default)
    a = s.alert(110.0, {"service": "checkoutservice"}, rule="HighRequestErrorRate")
    inc = s.incident(130.0, [a])
    s.rca(150.0, inc, "checkoutservice")
    s.act(200.0, "checkoutservice")
    for t in grid(T0 + DT, 885.0):
        s.probes("f1", {t: False})
        s.health(t)
    s.revert(900.0, "f1")
    s.revert(900.0, "f2")
    s.end(960.0)
    ex = explain_events(s.events, counterfactual=None)
    note = ex.trails["f1"].repair_note
    assert note.startswith("the probe did not recover after an act on the fault")
    assert "meanwhile other faults on its probe's route checkout were live: f2 (on paymentservice" in note
    assert "meanwhile" not in ex.trails["f2"].repair_note  # no act on f2: nothing to explain
