"""The terminal app's pure core: the reducer, keyframe seeking, scores for the panes, helpers.

These modules import neither textual nor rich (checked in a subprocess, as for the engine),
so watch, follow and replay share one tested code path.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.bundle.events import Event
from engine.bundle.format import open_bundle
from scoring.score import score_events
from tui.model import RunModel, changed_metrics, fmt_clock, parse_clock, service_state
from tui.scorecalc import Scorer, stage_success_series, stage_times, stages_reached
from tui.seek import ReplayIndex
from tui.session import EventFeed, FollowTail
from tui.widgets.spark import bar, sparkline

PURE = ["tui.model", "tui.seek", "tui.scorecalc", "tui.session", "tui.human", "tui.keymap", "tui.cli",
        "tui.widgets.spark"]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tui.screenshots import make_bundle

    return make_bundle(tmp_path_factory.mktemp("bundle"))


@pytest.fixture(scope="module")
def events(bundle: Path) -> list[Event]:
    return open_bundle(bundle).events


@pytest.mark.parametrize("module", PURE)
def test_core_of_the_app_imports_without_textual(module: str) -> None:
    code = (f"import importlib, sys\nimportlib.import_module({module!r})\n"
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{module} pulled in {out.stdout.strip()}"


def test_reducer_builds_what_the_panes_show(events: list[Event]) -> None:
    m = RunModel()
    m.apply_many(events)
    assert m.ended and m.sealed and m.meta["operator"] == "runbook"
    injected = [e.payload["fault"] for e in events if e.kind == "fault.inject"]
    assert list(m.faults) == injected
    assert all(f.t_revert is not None for f in m.faults.values())
    assert not m.active_faults()
    # every alert instance, with its last state; none stays active after the tail of the run
    ids = {e.payload["id"] for e in events if e.kind.startswith("alert.")}
    assert set(m.alerts) == ids
    # incidents hold the alerts reported, and each alert knows its incidents
    for e in (e for e in events if e.kind == "report.incident"):
        inc = m.incidents[e.payload["incident"]]
        assert list(inc.alerts) == e.payload["alerts"]
        assert all(inc.id in m.alerts[a].incidents for a in inc.alerts)
    assert sum(1 for i in m.incidents.values() if i.rca) == sum(1 for e in events if e.kind == "report.rca")
    # every tool call, and the executed acts marked
    assert len(m.calls) == sum(1 for e in events if e.kind == "tool.call")
    assert len(m.executed_actions()) == sum(1 for e in events if e.kind == "action.executed")
    assert m.samples == sum(1 for e in events if e.kind == "health.sample")
    svc = m.services["paymentservice"]
    assert 1 <= len(svc.err_hist) <= 48 and svc.desired == 2


def test_alert_states_follow_their_transitions(events: list[Event]) -> None:
    m = RunModel()
    for ev in events:
        m.apply(ev)
        if ev.kind.startswith("alert."):
            a = m.alerts[ev.payload["id"]]
            assert a.state == ev.payload["state"]
            assert a.active == (a.id in m.active_alerts)
            if ev.kind == "alert.firing":
                assert a.fired_at is not None and a.fired_at <= ev.t


def test_revisions_move_only_for_affected_panes(events: list[Event]) -> None:
    m = RunModel()
    m.apply_many(events[:50])
    before = dict(m.revisions)
    sample = next(e for e in events[50:] if e.kind == "health.sample")
    m.apply(sample)
    assert m.revisions["health"] > before["health"]
    assert m.revisions["actions"] == before["actions"]
    assert m.revisions["alerts"] == before["alerts"]


def test_snapshot_is_independent(events: list[Event]) -> None:
    m = RunModel()
    m.apply_many(events[:200])
    snap = m.snapshot()
    frozen = (snap.t, len(snap.calls), dict(snap.alerts), dict(snap.services), len(snap.firing_series))
    m.apply_many(events[200:])
    assert (snap.t, len(snap.calls), dict(snap.alerts), dict(snap.services), len(snap.firing_series)) == frozen


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_seeking_anywhere_equals_replaying_from_the_start(events: list[Event], data: st.DataObject) -> None:
    index = ReplayIndex(events, every=37)
    n = data.draw(st.integers(0, len(events)))
    fresh = RunModel()
    fresh.apply_many(events[:n])
    seeked = index.model_after(n)
    assert (seeked.seq, seeked.t, seeked.alerts, seeked.incidents, seeked.calls, seeked.services, seeked.faults,
            seeked.firing_series) == (fresh.seq, fresh.t, fresh.alerts, fresh.incidents, fresh.calls,
                                      fresh.services, fresh.faults, fresh.firing_series)


def test_jump_marks(events: list[Event]) -> None:
    index = ReplayIndex(events)
    first_fault = next(e.t for e in events if e.kind == "fault.inject")
    assert index.next_mark("fault", 0.0) == first_fault
    assert index.prev_mark("fault", first_fault) is None
    acts = [e.t for e in events if e.kind == "tool.call" and e.payload["tier"] in ("act", "report")]
    assert index.next_mark("action", acts[0]) == next(t for t in acts if t > acts[0])
    assert index.next_mark("alert", index.end_t) is None
    assert index.model_at(600.0).t == 600.0


def test_stage_times_come_from_the_scorer(events: list[Event]) -> None:
    score = score_events(events)
    times = stage_times(score)
    for f in score.faults:
        corr, loc, rep = times[f.fault]
        assert (corr is not None) == f.correlated and (loc is not None) == f.localized
        assert (rep is not None) == f.repaired
        if corr is not None:
            assert corr == pytest.approx(f.t_inject + f.detect_after)
            assert stages_reached(times[f.fault], corr) == (True, loc is not None and loc <= corr, False)
            assert stages_reached(times[f.fault], corr - 1) == (False, False, False)
    series = stage_success_series(score, 1260.0, 20)
    assert series["corr"][-1] == pytest.approx(score.corr)
    assert series["loc"][-1] == pytest.approx(score.loc)
    assert all(a >= b for a, b in zip(series["corr"], series["loc"], strict=True))


def test_scorer_scores_prefixes_like_score_events(events: list[Event]) -> None:
    scorer = Scorer()
    assert scorer.score([]) is None
    half = events[: len(events) // 2]
    result = scorer.score(half)
    assert result is not None and result.seq == half[-1].seq
    assert result.score.to_dict() == score_events(half).to_dict()


def test_service_state_and_changes() -> None:
    assert service_state(2, 2, 10.0, 0.0, 50.0, "Running") == "ok"
    assert service_state(0, 2, 0.0, 0.0, None, "CrashLoopBackOff") == "failing"
    assert service_state(2, 2, 10.0, 0.2, 50.0, "Running") == "failing"
    assert service_state(1, 2, 10.0, 0.0, 50.0, "Running") == "degraded"
    assert service_state(2, 2, 10.0, 0.02, 50.0, "Running") == "degraded"
    assert service_state(2, 2, 10.0, 0.0, 2500.0, "Running") == "degraded"
    from tui.model import ServiceView

    prev = ServiceView("a", 2, 2, 10.0, 0.0, 50.0, 0, "Running", "ok")
    assert changed_metrics(prev, {"ready": 2, "desired": 2, "rps": 10.5, "error_share": 0.001, "p95_ms": 60.0,
                                  "restarts": 0, "status": "Running"}) == []
    assert set(changed_metrics(prev, {"ready": 1, "desired": 2, "rps": 30.0, "error_share": 0.3, "p95_ms": 900.0,
                                      "restarts": 1, "status": "CrashLoopBackOff"})) == {
        "ready", "rps", "error_share", "p95_ms", "restarts", "status"}


@pytest.mark.parametrize(("text", "seconds"), [("90", 90.0), ("1:30", 90.0), ("1:02:03", 3723.0), ("5m", 300.0),
                                                ("45s", 45.0), (" 12:00 ", 720.0)])
def test_parse_clock(text: str, seconds: float) -> None:
    assert parse_clock(text) == seconds
    assert parse_clock(fmt_clock(seconds)) == seconds


@pytest.mark.parametrize("bad", ["", "soon", "1:2:3:4", "-5"])
def test_parse_clock_rejects(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_clock(bad)


def test_sparkline_and_bar() -> None:
    assert sparkline([0, 1, 2, 3, 4, 5, 6, 7], 8) == "▁▂▃▄▅▆▇█"
    assert sparkline([1.0, None, 1.0], 5) == "  █ █"
    assert sparkline([0.001, 0.002], 2, floor_hi=0.1) == "▁▁"
    assert sparkline([5.0] * 30, 4) == "████"
    assert bar(0.5, 10) == "█████░░░░░"
    assert bar(2.0, 4) == "████" and bar(-1, 3) == "░░░"


def test_feed_and_follow_tail(tmp_path: Path, events: list[Event]) -> None:
    run_dir = tmp_path / "run"
    with pytest.raises(FileNotFoundError):
        FollowTail(run_dir)
    run_dir.mkdir()
    tail = FollowTail(run_dir)
    assert tail.poll() == []
    lines = [e.to_json() + "\n" for e in events]
    path = run_dir / "events.jsonl"
    path.write_text("".join(lines[:10]) + lines[10][:25])  # a torn line waits for its newline
    first = tail.poll()
    assert [e.seq for e in first] == list(range(10))
    with path.open("a") as fh:
        fh.write(lines[10][25:] + "".join(lines[11:]))
    rest = tail.poll()
    assert [e.seq for e in rest] == list(range(10, len(events)))
    assert tail.ended and tail.sealed
    feed = EventFeed()
    feed.extend(first)
    feed.push(rest[0])
    assert len(feed) == 11 and feed.drain()[-1] is rest[0] and feed.drain() == []


def test_drive_calls_before_end_one_tick_before_run_end(tmp_path: Path) -> None:
    from engine.run.session import RunSession
    from tui.human import HumanOperator
    from tui.screenshots import schedule

    session = RunSession(schedule(), operator=HumanOperator(), run_dir=tmp_path / "run", speed=None,
                          spend_time=False)
    seen: list[float] = []

    def last_words() -> None:
        seen.append(session.now)
        assert session.call_tool("workspace_write", {"path": "notes.md", "text": "done"}).ok

    assert session.drive(before_end=last_words)
    assert seen == [session.run.end_t - session.run.sim.dt]
    outcome = session.close()
    assert outcome.bundle is not None and outcome.complete
    recorded = open_bundle(outcome.bundle).events
    writes = [i for i, e in enumerate(recorded) if e.kind == "tool.call" and e.payload["tool"] == "workspace_write"]
    assert len(writes) == 1 and writes[0] < [e.kind for e in recorded].index("run.end")
    assert session.call_tool("get_alerts", {}).error == "the run has ended: no more tool calls"
