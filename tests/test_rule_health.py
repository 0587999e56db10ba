"""Rule health (issue 13): a rule whose evaluation fails mid-run is reported, not silent.

Like Prometheus' ``SetHealth``/``SetLastError``, the embedded evaluator records every rule's
health; the orchestrator emits a ``rule.health`` event when it changes (to ``err``, back to
``ok``, a new error text), the run summary lists the rules that failed, and the run header
shows ``rules: N failing`` while any does. The failing rule here is a real PromQL runtime
error: a ``group_left`` join whose "one" side holds two series for one namespace as soon as
two pods are unready at once -- which a zone outage causes, and its end undoes.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from alerts.evaluator import AlertEvaluator
from alerts.health import RuleHealthSource, RuleHealthTracker, health_report
from alerts.rules import load_rule_file
from engine.bundle.events import GROUND_TRUTH_KINDS, Event, check_payload_types
from engine.run.orchestrator import Orchestrator
from faults.schedule import Schedule, ScheduledFault
from scoring.score import score_events
from tui.app import MarathonApp
from tui.model import RunModel
from tui.screens.watch import WatchScreen
from tui.session import FollowTail
from tui.widgets.header import RULES_FAILING_STYLE, RunHeader

JOIN_ERROR = "found duplicate series for the match group"
FRAGILE_RULES = """\
groups:
  - name: fragile.rules
    rules:
      - alert: UnreadyPodsOfNamespace
        # Written for one unready pod at a time: with two, the right-hand ("one") side of
        # the group_left holds two series for the namespace and the query fails.
        expr: |
          kube_deployment_spec_replicas
            * on (namespace) group_left ()
          (kube_pod_status_ready{condition="true"} == 0)
        labels:
          severity: warning
      - alert: AlwaysFine
        expr: vector(0) > 1
"""
OUTAGE_AT, OUTAGE_LIFETIME = 60, 180


@pytest.fixture(scope="module")
def rules_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rules") / "fragile.rules.yaml"
    path.write_text(FRAGILE_RULES)
    return path


def outage_schedule() -> Schedule:
    """Zone b of Online Boutique goes down at 1:00 for 3 minutes (every pod there unready)."""
    return Schedule(app="online-boutique", seed=1, regime="single", duration_s=420,
                    faults=(ScheduledFault(at=OUTAGE_AT, fault="ob-zone-b-outage-redis", target="redis-cart",
                                           lifetime=OUTAGE_LIFETIME),))


@pytest.fixture(scope="module")
def fragile_run(rules_file: Path) -> Orchestrator:
    run = Orchestrator(outage_schedule(), rules=str(rules_file))
    run.run()
    return run


def health_events(events: list[Event]) -> list[Event]:
    return [e for e in events if e.kind == "rule.health"]


# ----------------------------------------------------------------------------- the tracker


def test_tracker_reports_only_changes() -> None:
    tr = RuleHealthTracker()

    def see(t: float, error: str | None) -> None:
        tr.observe("k", rule="R", group="g", index=0, type="alerting", t=t, error=error)

    see(0, None)
    see(15, None)
    assert tr.take_changes() == []  # unknown -> ok is no news; a healthy run reports nothing
    see(30, "boom")
    see(45, "boom")
    see(60, "bang")
    see(75, None)
    see(90, None)
    got = [(c.t_eval, c.previous, c.health, c.error) for c in tr.take_changes()]
    assert got == [(30, "ok", "err", "boom"), (60, "err", "err", "bang"), (75, "err", "ok", None)]
    assert tr.take_changes() == []
    see(105, "first evaluation fails")
    tr.observe("k2", rule="S", group="g", index=1, type="recording", t=105, error="bad")
    assert [(c.rule, c.previous, c.health) for c in tr.take_changes()] == [("R", "ok", "err"), ("S", "unknown", "err")]
    assert [(r.rule, r.health, r.last_evaluation) for r in tr.failing()] == [("R", "err", 105), ("S", "err", 105)]


# ----------------------------------------------------------------------------- the embedded evaluator


def test_evaluator_records_health_and_keeps_alerts_while_failing(rules_file: Path) -> None:
    ev = AlertEvaluator(load_rule_file(rules_file), interval_s=15)
    assert isinstance(ev, RuleHealthSource)
    assert [(r.rule, r.health) for r in ev.rule_health()] == [("UnreadyPodsOfNamespace", "unknown"),
                                                              ("AlwaysFine", "unknown")]

    def step(t: float, unready: set[str]) -> list[Any]:
        samples: list[tuple[dict[str, str], float]] = [
            ({"__name__": "kube_deployment_spec_replicas", "namespace": "ns", "deployment": "web"}, 3.0)]
        samples += [({"__name__": "kube_pod_status_ready", "namespace": "ns", "pod": p, "condition": "true"},
                     0.0 if p in unready else 1.0) for p in ("a", "b", "c")]
        ev.ingest_samples(t, samples)
        return ev.evaluate(t)

    assert step(0, set()) == []
    fired = step(15, {"a"})
    assert [t.to_state for t in fired] == ["pending", "firing"]
    assert ev.take_rule_health_changes() == []
    assert step(30, {"a", "b"}) == []  # the query fails: the alert stays firing, nothing resolves
    assert step(45, {"a", "b"}) == []
    assert step(60, {"b", "c"}) == []
    assert step(75, set())[0].to_state == "resolved"
    changes = ev.take_rule_health_changes()
    assert [(c.t_eval, c.rule, c.health) for c in changes] == [(30, "UnreadyPodsOfNamespace", "err"),
                                                               (60, "UnreadyPodsOfNamespace", "err"),
                                                               (75, "UnreadyPodsOfNamespace", "ok")]
    assert changes[0].error is not None and changes[0].error.startswith(JOIN_ERROR)
    assert 'pod="a"' in changes[0].error and 'pod="c"' in changes[1].error  # the error text changed
    assert changes[0].to_payload() == {"rule": "UnreadyPodsOfNamespace", "group": "fragile.rules", "index": 0,
                                       "type": "alerting", "health": "err", "error": changes[0].error,
                                       "t_eval": 30.0}
    assert [(r.rule, r.health, r.last_evaluation) for r in ev.rule_health()] == [
        ("UnreadyPodsOfNamespace", "ok", 75.0), ("AlwaysFine", "ok", 75.0)]


# ----------------------------------------------------------------------------- the run


def test_a_rule_failing_mid_run_becomes_events(fragile_run: Orchestrator) -> None:
    events = health_events(fragile_run.stream.events)
    assert [(e.payload["rule"], e.payload["health"]) for e in events] == [("UnreadyPodsOfNamespace", "err"),
                                                                          ("UnreadyPodsOfNamespace", "ok")]
    err, ok = events
    assert OUTAGE_AT < err.t < OUTAGE_AT + OUTAGE_LIFETIME < ok.t
    assert err.payload["t_eval"] == err.t and ok.payload["t_eval"] == ok.t
    assert err.payload["group"] == "fragile.rules" and err.payload["index"] == 0
    assert err.payload["error"].startswith(JOIN_ERROR) and ok.payload["error"] is None
    for e in events:
        assert check_payload_types(e.kind, e.payload) == []
    assert "rule.health" not in GROUND_TRUTH_KINDS and not err.ground_truth  # the rules page is public


def test_a_healthy_run_emits_no_rule_health() -> None:
    run = Orchestrator(outage_schedule())  # the paper pack evaluates cleanly
    run.run()
    assert health_events(run.stream.events) == []
    assert "rule health" not in run.summary()


def test_summary_lists_failing_and_recovered_rules(rules_file: Path, fragile_run: Orchestrator) -> None:
    text = fragile_run.summary()
    assert "rule health: 0 failing at the end, 1 failed and recovered" in text
    row = next(line for line in text.splitlines() if "fragile.rules/UnreadyPodsOfNamespace" in line)
    assert " ok " in row and "1:45-4:15" in row and JOIN_ERROR in row
    assert "AlwaysFine" not in text

    midway = Orchestrator(outage_schedule(), rules=str(rules_file))
    midway.advance_to(OUTAGE_AT + 120)
    row = next(line for line in midway.summary().splitlines() if "UnreadyPodsOfNamespace" in line)
    assert "rule health: 1 failing at the end, 0 failed and recovered" in midway.summary()
    assert " err " in row and "since 1:45" in row and JOIN_ERROR in row


def test_health_report_counts_failing_stretches() -> None:
    def ch(t: float, health: str, error: str | None = None) -> dict[str, Any]:
        return {"rule": "R", "group": "g", "index": 0, "type": "recording", "health": health, "error": error,
                "t_eval": t}

    lines = health_report([ch(60, "err", "a"), ch(90, "ok"), ch(600, "err", "b"), ch(615, "err", "c")])
    assert lines[0].startswith("rule health: 1 failing at the end, 0 failed and recovered")
    assert lines[2].split() == ["g/R", "err", "since", "10:00", "(2x)", "c"]
    assert health_report([]) == []


def test_scoring_and_the_view_model_take_the_new_kind(fragile_run: Orchestrator) -> None:
    events = fragile_run.stream.events
    without = [e for e in events if e.kind != "rule.health"]
    assert score_events(events).to_dict() == score_events(without).to_dict()
    model = RunModel()
    for e in events:
        model.apply(e)
        if e.kind == "rule.health" and e.payload["health"] == "err":
            failing = model.snapshot()  # replay seeks through snapshots: they carry rule health
    assert [r.rule for r in failing.failing_rules()] == ["UnreadyPodsOfNamespace"]
    assert failing.failing_rules()[0].error.startswith(JOIN_ERROR)
    assert model.failing_rules() == [] and list(model.rules) == [("fragile.rules", 0)]


# ----------------------------------------------------------------------------- the header


def test_header_shows_failing_rules_while_they_fail(tmp_path: Path, fragile_run: Orchestrator) -> None:
    """``marathon watch --follow`` on the run as it is recorded: the header warns while the rule fails."""
    events = fragile_run.stream.events
    err, ok = health_events(events)
    run_dir = tmp_path / "live"
    run_dir.mkdir()
    path = run_dir / "events.jsonl"

    async def main() -> None:
        app = MarathonApp(lambda: WatchScreen(follow=FollowTail(run_dir)), cursor_blink=False)
        async with app.run_test(size=(160, 36)) as pilot:
            screen = app.screen
            assert isinstance(screen, WatchScreen)
            header = screen.query_one(RunHeader)

            async def recorded_until(t: float) -> str:
                upto = [e for e in events if e.t <= t]
                with path.open("a") as fh:
                    fh.write("".join(e.to_json() + "\n" for e in upto[screen.model.events:]))
                deadline = time.monotonic() + 30
                while screen.model.events < len(upto) or screen.header_state().now < upto[-1].t:
                    assert time.monotonic() < deadline, "the follow screen did not catch up"
                    await pilot.pause(0.05)
                screen.refresh_now()
                await pilot.pause()
                return header.render().plain

            assert "rules:" not in await recorded_until(err.t - 15)
            assert "rules: 1 failing" in await recorded_until(err.t)
            text = header.render()
            start = text.plain.index("rules: 1 failing")
            assert any(s.style == RULES_FAILING_STYLE and s.start <= start < s.end for s in text.spans)
            assert "rules: 1 failing" in await recorded_until(ok.t - 15)
            assert "rules:" not in await recorded_until(ok.t)

    asyncio.run(main())


# ----------------------------------------------------------------------------- a real Prometheus

BROKEN_JOIN_RULES = """\
groups:
  - name: broken.rules
    rules:
      - alert: ReplicasJoinedPerNamespace
        # Every namespace holds many deployments, so the "one" side is never unique.
        expr: kube_deployment_spec_replicas * on (namespace) group_left () kube_deployment_spec_replicas
      - alert: Fine
        expr: kube_deployment_spec_replicas < 0
"""


def test_prometheus_rule_health_is_read_from_the_rules_api() -> None:
    pytest.importorskip("prometheus_api_client")
    from alerts.live import PrometheusAlerts

    source = PrometheusAlerts("http://127.0.0.1:9", clock=lambda: 0.0)  # never contacted here
    assert isinstance(source, RuleHealthSource)

    def groups(health: str, error: str) -> list[dict[str, Any]]:
        return [{"name": "g", "file": "/etc/prometheus/a.yaml", "rules": [
            {"name": "A", "type": "alerting", "health": "unknown", "lastError": ""},
            {"name": "R", "type": "recording", "health": health, "lastError": error}]}]

    source.observe_rules(groups("ok", ""), 15.0)
    source.observe_rules(groups("err", "boom"), 30.0)
    source.observe_rules(groups("err", "boom"), 45.0)
    source.observe_rules(groups("ok", ""), 60.0)
    assert [(c.rule, c.index, c.type, c.health, c.error, c.t_eval) for c in source.take_rule_health_changes()] == [
        ("R", 1, "recording", "err", "boom", 30.0), ("R", 1, "recording", "ok", None, 60.0)]
    assert [(r.rule, r.health) for r in source.rule_health()] == [("R", "ok")]  # A was never evaluated


def test_prometheus_reports_the_same_rule_health(tmp_path: Path) -> None:
    """Conformance: Debian's Prometheus 2.42 and the embedded evaluator fail the same rule with
    the same error (up to the order of the two duplicate series it names)."""
    exe = shutil.which("prometheus")
    in_ci = os.environ.get("CI", "").lower() not in ("", "0", "false")
    try:
        import aiohttp  # noqa: F401
        import prometheus_api_client  # noqa: F401
    except ImportError:
        exe = None
    if exe is None:
        if in_ci:
            pytest.fail("prometheus, aiohttp and prometheus-api-client are required in CI")
        pytest.skip("prometheus (or aiohttp / prometheus-api-client) not installed")
    from alerts.live import PrometheusAlerts, write_prometheus_config
    from engine.run.live import LiveSimulation
    from engine.sim.simulator import Simulator

    rules_path = tmp_path / "broken.rules.yaml"
    rules_path.write_text(BROKEN_JOIN_RULES)
    sim = Simulator("online-boutique", seed=2)
    embedded = AlertEvaluator(load_rule_file(rules_path))
    live = LiveSimulation(sim, speed=4.0)
    live.on_tick = lambda s: embedded.step(s.store, s.now)
    assert live.start() > 0
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        prom_port = int(s.getsockname()[1])
    cfg = write_prometheus_config(tmp_path / "prom", [f"127.0.0.1:{live.port}"], scrape_interval="1s",
                                  evaluation_interval="1s", rules=rules_path)
    proc = subprocess.Popen([exe, f"--config.file={cfg}", f"--storage.tsdb.path={tmp_path / 'data'}",
                             f"--web.listen-address=127.0.0.1:{prom_port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        remote = PrometheusAlerts(f"http://127.0.0.1:{prom_port}", clock=lambda: sim.now)
        changes: list[Any] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            remote.step(None, sim.now)
            changes += remote.take_rule_health_changes()
            if changes and {r.rule for r in remote.rule_health()} == {"ReplicasJoinedPerNamespace", "Fine"}:
                break
            time.sleep(0.5)
        with live.lock:
            local = embedded.take_rule_health_changes()
            local_health = {r.rule: r.health for r in embedded.rule_health()}
        assert [(c.rule, c.health) for c in changes] == [("ReplicasJoinedPerNamespace", "err")]
        assert [(c.rule, c.health) for c in local] == [("ReplicasJoinedPerNamespace", "err")]
        assert {r.rule: r.health for r in remote.rule_health()} == local_health == {
            "ReplicasJoinedPerNamespace": "err", "Fine": "ok"}

        # The texts agree but for the two series named: Prometheus 2.42 prints them as
        # {__name__="..."} and picks another pair (it walks the series in label order).
        remote_error, local_error = changes[0].error, local[0].error
        assert remote_error is not None and local_error is not None
        assert remote_error.startswith(JOIN_ERROR)
        assert remote_error.split(": [")[0] == local_error.split(": [")[0]
        assert remote_error.split("];")[1] == local_error.split("];")[1]
    finally:
        live.stop()
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
