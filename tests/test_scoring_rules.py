"""The scoring rules of issue 11, each on a hand-made event stream.

Every test builds the smallest stream that exercises one rule -- a fault, its probe samples,
alerts, reports, acts, health samples, the no-op counterfactual -- and checks the rule. Each
was checked against the scorer landed before issue 11, on which it fails: acts before
localization, acts while the probe passes, recoveries in the last seconds of a window, faults
that heal on their own, scaling to zero, hurting other routes, losing a store's data and
repairs that a restart undoes were all credited; overlapping faults shared one alert's
credit; only the first RCA counted; noise incidents cost nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from engine.apps.model import load_app
from engine.bundle.events import Event, EventStream
from scoring.counterfactual import Counterfactual
from scoring.gates import MIN_SOAK_S, SOAK_S, held_until, soak_complete_at, soak_end
from scoring.score import FORMULA_V1, FORMULA_V2, score_events

APP = "online-boutique"
MODEL = load_app(APP)
T0 = 60.0
"""Injection time of the first fault."""
DT = 15.0


@dataclass
class Stream:
    """A hand-made run of Online Boutique: add events in time order with the helpers."""

    stream: EventStream = field(default_factory=EventStream)
    alerts: int = 0
    incidents: int = 0

    def __post_init__(self) -> None:
        self.emit(0.0, "run.start", {"run_id": "hand", "app": APP, "seed": 1, "regime": "short-5",
                                     "operator": "hand", "substrate": "sim", "schedule_sha256": "x",
                                     "eval_interval_s": DT, "edges": [list(e) for e in MODEL.edges()]})

    def emit(self, t: float, kind: str, payload: dict[str, Any]) -> Event:
        return self.stream.emit(t, kind, payload)

    @property
    def events(self) -> list[Event]:
        return self.stream.events

    def fault(self, t: float, fid: str, target: str, *, scope: tuple[str, ...] = ("checkout",),
              route: str = "checkout", replicas: int = 2, intermittent: bool = False) -> None:
        self.emit(t, "fault.inject", {"fault": fid, "title": f"{fid} title", "category": "code-bug",
                                      "subtype": "feature-logic", "mechanism": "code-change", "target": target,
                                      "scope": list(scope), "artifact": {"kind": "change", "ref": "x.go"},
                                      "changes": ["chg-0001"], "artifact_refs": ["x.go", "chg-0001"],
                                      "probe": {"route": route}, "artifact_services": [target],
                                      "replicas_before": replicas, "intermittent": intermittent})

    def revert(self, t: float, fid: str) -> None:
        self.emit(t, "fault.revert", {"fault": fid, "changes": []})

    def probes(self, fid: str, samples: dict[float, bool]) -> None:
        for t, ok in sorted(samples.items()):
            self.emit(t, "probe.result", {"fault": fid, "ok": ok, "success": 1.0 if ok else 0.0, "p95_ms": 10.0,
                                          "detail": "hand"})

    def alert(self, t: float, labels: dict[str, str], rule: str = "PodNotReady", ended: float | None = None) -> str:
        self.alerts += 1
        aid = f"A-{self.alerts}"
        self.emit(t, "alert.pending", {"alert": rule, "labels": {"alertname": rule, **labels}, "fingerprint": aid,
                                       "value": 1.0, "id": aid, "active_at": t})
        if ended is not None:
            self.emit(ended, "alert.resolved", {"alert": rule, "labels": labels, "fingerprint": aid, "id": aid})
        return aid

    def incident(self, t: float, alerts: list[str]) -> str:
        self.incidents += 1
        inc = f"INC-{self.incidents:04d}"
        self.emit(t, "report.incident", {"incident": inc, "alerts": alerts, "title": "hand"})
        return inc

    def rca(self, t: float, incident: str, service: str) -> None:
        self.emit(t, "report.rca", {"incident": incident, "service": service, "category": "code-bug",
                                    "artifact": "chg-0001", "summary": "hand"})

    def resolve(self, t: float, incident: str) -> None:
        self.emit(t, "report.resolved", {"incident": incident})

    def act(self, t: float, target: str, tool: str = "rollback") -> None:
        self.emit(t, "action.executed", {"tool": tool, "args": {"deployment": target}, "targets": [target],
                                         "operator": "hand"})

    def check(self, t: float, fid: str, recovered_at: float, ok: bool = True) -> None:
        self.emit(t, "repair.check", {"fault": fid, "recovered_at": recovered_at, "ok": ok, "detail": "hand"})

    def health(self, t: float, *, ready: dict[str, tuple[int, int]] | None = None,
               routes: dict[str, float] | None = None, stores: dict[str, int] | None = None) -> None:
        services = [{"service": s.name, "ready": (ready or {}).get(s.name, (2, 2))[0],
                     "desired": (ready or {}).get(s.name, (2, 2))[1], "rps": 1.0, "error_share": 0.0,
                     "p95_ms": 10.0, "restarts": 0, "status": "Running"} for s in MODEL.services]
        rts = [{"route": r.name, "rps": 5.0, "error_share": (routes or {}).get(r.name, 0.0), "p50_ms": 5.0,
                "p95_ms": 10.0} for r in MODEL.routes]
        self.emit(t, "health.sample", {"services": services, "routes": rts,
                                       "stores": stores or {"redis-cart": 0}})

    def end(self, t: float) -> None:
        self.emit(t, "run.end", {"reason": "schedule complete"})


def grid(start: float, end: float) -> list[float]:
    """Sample times every 15 s in [start, end]."""
    out, t = [], start
    while t <= end + 1e-9:
        out.append(t)
        t += DT
    return out


def noop_cf(probes: dict[str, dict[float, bool]], *, violations: dict[str, list[float]] | None = None,
            stores: list[tuple[float, dict[str, int]]] | None = None) -> Counterfactual:
    return Counterfactual(reference="noop:hand", violation_s=100.0,
                          probes={k: sorted(v.items()) for k, v in probes.items()},
                          route_violations=violations or {}, stores=stores or [])


def handled_stream(*, act_t: float = 200.0, rca_t: float = 150.0, fail_until: float = 210.0, revert: float = 900.0,
                   check_ok: bool = True, ready_at_credit: tuple[int, int] = (2, 2), extra: Any = None,
                   end: float = 960.0) -> tuple[Stream, dict[float, bool]]:
    """One fault on checkoutservice: alert at 120 s, incident at 130 s, RCA and act as given,
    probe failing from 90 s until ``fail_until`` and passing after (recovery at the next sample);
    the target's (ready, desired) replicas are ``ready_at_credit`` from the act on."""
    s = Stream()
    s.health(0.0)
    s.fault(T0, "f1", "checkoutservice")
    samples = {t: not (90.0 <= t <= fail_until) for t in grid(T0 + DT, revert - 1)}
    recovered = min(t for t, ok in samples.items() if ok and t > fail_until)
    credit = held_until(sorted(samples.items()), recovered, revert)
    events: list[tuple[float, Any]] = [(t, ("probe", ok)) for t, ok in samples.items()]
    events += [(t, ("health", None)) for t in grid(DT, end)]
    events += [(120.0, ("alert", None)), (130.0, ("incident", None)), (rca_t, ("rca", None)), (act_t, ("act", None))]
    if credit is not None:
        events.append((credit, ("check", None)))
    events.append((revert, ("revert", None)))
    if extra is not None:
        events += extra
    aid = inc = ""
    for t, (what, arg) in sorted(events, key=lambda e: (e[0], str(e[1][0]))):
        if what == "probe":
            s.probes("f1", {t: arg})
        elif what == "health":
            s.health(t, ready={"checkoutservice": ready_at_credit} if t >= act_t else None,
                     stores={"redis-cart": 1 if arg == "lost" or any(
                         x[1][0] == "loss" and x[0] <= t for x in (extra or [])) else 0})
        elif what == "alert":
            aid = s.alert(t, {"pod": "checkoutservice-abc12-xyz9"})
        elif what == "incident":
            inc = s.incident(t, [aid])
        elif what == "rca":
            s.rca(t, inc, "checkoutservice")
        elif what == "act":
            s.act(t, "checkoutservice")
        elif what == "check":
            s.check(t, "f1", recovered, check_ok)
        elif what == "revert":
            s.revert(t, "f1")
        elif what == "resolve":
            s.resolve(t, inc)
        elif what == "route-bad":
            s.health(t, routes={"home": 0.5})
        elif what == "risky-act":
            s.act(t, "adservice", "restart_pod")
    s.end(end)
    return s, samples


def always_failing(revert: float = 900.0) -> dict[str, dict[float, bool]]:
    return {"f1": dict.fromkeys(grid(90.0, revert - 1), False)}


# ------------------------------------------------------------------------------------ the soak rule


def test_soak_window_rule() -> None:
    assert soak_end(100.0, None) == (100.0 + SOAK_S, False)
    assert soak_end(100.0, 1000.0) == (100.0 + SOAK_S, False)
    assert soak_end(100.0, 100.0 + MIN_SOAK_S) == (100.0 + MIN_SOAK_S, True)
    assert soak_end(100.0, 100.0 + MIN_SOAK_S - 1) is None
    passing = [(t, True) for t in grid(100.0, 400.0)]
    assert held_until(passing, 100.0, None) == 100.0 + SOAK_S
    assert held_until(passing[:5], 100.0, None) is None  # not observed to its end
    assert held_until([(100.0, True), (115.0, False), *passing[2:]], 100.0, None) is None
    assert held_until(passing, 100.0, 220.0) == 205.0  # until the revert: the last sample before it
    # The orchestrator's restart check fires exactly at the scorer's credit sample.
    assert [t for t in grid(100.0, 400.0) if soak_complete_at(t, 100.0, None, DT)] == [280.0]
    assert [t for t in grid(100.0, 400.0) if soak_complete_at(t, 100.0, 220.0, DT)] == [205.0]


# ------------------------------------------------------------------------------------ repair gates


def test_a_causal_ordered_durable_safe_repair_is_credited() -> None:
    s, _ = handled_stream()
    score = score_events(s.events, counterfactual=noop_cf(always_failing()))
    f = score.faults[0]
    assert (f.correlated, f.localized, f.repaired) == (True, True, True), f.evidence
    assert f.repair_after == 225.0 - T0
    assert all(v is True for v in f.gates.values()), f.gates
    assert score.scores == {FORMULA_V1: 100.0, FORMULA_V2: 100.0}


def test_act_before_localization_earns_no_repair() -> None:
    s, _ = handled_stream(act_t=140.0, rca_t=150.0)
    f = score_events(s.events, counterfactual=noop_cf(always_failing())).faults[0]
    assert f.localized and not f.repaired
    assert f.gates["ordered"] is False and f.outcome == "repaired"


def test_act_while_the_probe_passes_earns_no_repair() -> None:
    # The probe fails only from 90 to 105 s, long before the act: the act repaired nothing.
    s, _ = handled_stream(act_t=200.0, fail_until=105.0)
    f = score_events(s.events, counterfactual=noop_cf(always_failing())).faults[0]
    assert not f.repaired


def test_recovery_too_close_to_the_revert_earns_no_repair() -> None:
    # Recovery at 855 s, revert at 900 s: 45 s of passing probes, less than the 90 s minimum soak.
    s, _ = handled_stream(act_t=800.0, fail_until=850.0)
    f = score_events(s.events, counterfactual=noop_cf(always_failing())).faults[0]
    assert f.probe_recovered and not f.repaired and f.gates["soak"] is False


def test_a_fault_that_heals_on_its_own_in_the_noop_run_is_not_credited() -> None:
    s, _ = handled_stream()
    healed = {"f1": {t: t > 210.0 for t in grid(90.0, 899.0)}}
    f = score_events(s.events, counterfactual=noop_cf(healed)).faults[0]
    assert not f.repaired and f.gates["counterfactual"] is False
    assert "healed on its own" in (f.repair_denied or "")


def test_intermittent_fault_needs_one_failing_noop_sample() -> None:
    s, _ = handled_stream()
    flapping = {"f1": {t: int(t / DT) % 2 == 0 for t in grid(90.0, 899.0)}}
    assert not score_events(s.events, counterfactual=noop_cf(flapping)).faults[0].repaired
    payloads = [e for e in s.events if e.kind == "fault.inject"]
    payloads[0].payload["intermittent"] = True
    assert score_events(s.events, counterfactual=noop_cf(flapping)).faults[0].repaired


def test_scaling_below_the_pre_fault_replicas_earns_no_repair() -> None:
    for ready in [(0, 0), (1, 1)]:
        s, _ = handled_stream(ready_at_credit=ready)
        f = score_events(s.events, counterfactual=noop_cf(always_failing())).faults[0]
        assert not f.repaired and f.gates["replicas"] is False, ready


def test_another_route_made_worse_than_the_noop_run_voids_the_repair() -> None:
    bad = [(t, ("route-bad", None)) for t in grid(100.5, 200.5)]  # home in violation for 7 extra samples
    s, _ = handled_stream(extra=[*bad, (100.2, ("risky-act", None))])  # ... after restarting a healthy service
    score = score_events(s.events, counterfactual=noop_cf(always_failing()))
    f = score.faults[0]
    assert not f.repaired and f.gates["blast_radius"] is False
    assert score.risky_actions == 1
    # The same violations in the no-op run are not the operator's doing.
    same = noop_cf(always_failing(), violations={"home": [t for t, _ in bad]})
    assert score_events(s.events, counterfactual=same).faults[0].repaired


def test_harm_without_a_risky_act_does_not_void_another_faults_repair() -> None:
    # The same violations, with every act on a faulty service (a remedy's rollout hurting a neighbour).
    s, _ = handled_stream(extra=[(t, ("route-bad", None)) for t in grid(100.5, 200.5)])
    f = score_events(s.events, counterfactual=noop_cf(always_failing())).faults[0]
    assert f.repaired and f.gates["blast_radius"] is True


def test_losing_a_stores_data_voids_the_repair() -> None:
    s, _ = handled_stream(extra=[(150.0, ("loss", None))])
    f = score_events(s.events, counterfactual=noop_cf(always_failing(), stores=[(0.0, {"redis-cart": 0})])).faults[0]
    assert not f.repaired and f.gates["data"] is False
    # A loss that happens in the no-op run too (later) is the fault's, not the operator's.
    later = noop_cf(always_failing(), stores=[(0.0, {"redis-cart": 0}), (700.0, {"redis-cart": 1})])
    assert score_events(s.events, counterfactual=later).faults[0].repaired


def test_a_repair_a_restart_undoes_is_not_credited() -> None:
    s, _ = handled_stream(check_ok=False)
    f = score_events(s.events, counterfactual=noop_cf(always_failing())).faults[0]
    assert not f.repaired and f.gates["restart"] is False


def test_a_later_failure_after_the_soak_does_not_void_the_repair() -> None:
    s, _ = handled_stream()
    # Break the probe from 500 s to the revert (a later fault further down the call chain).
    for ev in s.events:
        if ev.kind == "probe.result" and ev.t >= 500.0:
            ev.payload["ok"] = False
    f = score_events(s.events, counterfactual=noop_cf(always_failing())).faults[0]
    assert f.repaired


def test_without_a_counterfactual_repair_credit_is_provisional() -> None:
    s, _ = handled_stream()
    score = score_events(s.events)
    assert score.provisional and score.faults[0].repaired
    assert score.faults[0].gates["counterfactual"] is None and score.degradation is None


# ------------------------------------------------------------------------------------ correlation


def overlap_stream(rca_service: str | None) -> Stream:
    """Two faults on checkout's call chain; one alert, raised while only f1 was live, keeps
    firing through f2: the operator reports it once f2 is live too."""
    s = Stream()
    s.health(0.0)
    s.fault(T0, "f1", "paymentservice")
    aid = s.alert(120.0, {"service": "checkoutservice"}, rule="HighRequestLatency")
    s.fault(300.0, "f2", "checkoutservice")
    inc = s.incident(400.0, [aid])
    if rca_service:
        s.rca(410.0, inc, rca_service)
    s.end(600.0)
    return s


def test_an_alert_fitting_several_live_faults_supports_each_and_the_rca_decides() -> None:
    to_f2 = score_events(overlap_stream("checkoutservice").events)
    assert {f.fault: f.correlated for f in to_f2.faults} == {"f1": False, "f2": True}
    assert {f.fault: f.localized for f in to_f2.faults} == {"f1": False, "f2": True}
    to_f1 = score_events(overlap_stream("paymentservice").events)
    assert {f.fault: (f.correlated, f.localized) for f in to_f1.faults} == {"f1": (True, True),
                                                                             "f2": (False, False)}


def test_one_incident_credits_at_most_one_fault() -> None:
    score = score_events(overlap_stream(None).events)
    assert sum(f.correlated for f in score.faults) == 1


def test_spurious_and_duplicate_incidents_cost_precision() -> None:
    s = Stream()
    s.health(0.0)
    s.fault(T0, "f1", "checkoutservice")
    a1 = s.alert(120.0, {"pod": "checkoutservice-abc12-xyz9"})
    a2 = s.alert(125.0, {"pod": "checkoutservice-abc12-qq7w1"})
    noise = s.alert(130.0, {"service": "adservice"}, rule="HighRequestLatency")
    for aid in (a1, a2, noise):
        s.incident(140.0, [aid])
    mixed = s.incident(150.0, [a1, noise, s.alert(145.0, {"service": "emailservice"})])  # 1 of 3 supports f1
    s.end(600.0)
    score = score_events(s.events)
    roles = {i.incident: i.role for i in score.incident_log}
    assert roles == {"INC-0001": "credited", "INC-0002": "duplicate", "INC-0003": "spurious", mixed: "spurious"}
    assert (score.incidents, score.credited_incidents, score.duplicate_incidents, score.spurious_incidents) == \
        (4, 1, 1, 2)
    assert score.precision == 0.25
    assert score.scores[FORMULA_V2] == pytest.approx(score.scores[FORMULA_V1] * 0.25, abs=1e-3)


def test_the_latest_rca_counts_and_mttl_is_when_the_final_answer_was_first_given() -> None:
    def stream(services: list[str]) -> Stream:
        s = Stream()
        s.fault(T0, "f1", "checkoutservice")
        inc = s.incident(130.0, [s.alert(120.0, {"pod": "checkoutservice-abc12-xyz9"})])
        for i, svc in enumerate(services):
            s.rca(200.0 + 60.0 * i, inc, svc)
        s.end(900.0)
        return s

    late_right = score_events(stream(["frontend", "checkoutservice", "checkoutservice"]).events).faults[0]
    assert late_right.localized and late_right.localize_after == 260.0 - T0
    late_wrong = score_events(stream(["checkoutservice", "frontend"]).events).faults[0]
    assert late_wrong.correlated and not late_wrong.localized


# ------------------------------------------------------------------------------------ declarations


def test_declarations_before_a_durable_repair_are_false() -> None:
    def resolved_at(t: float) -> int:
        s, _ = handled_stream(extra=[(t, ("resolve", None))])
        return score_events(s.events, counterfactual=noop_cf(always_failing())).false_declarations

    assert resolved_at(180.0) == 1  # probe still failing
    assert resolved_at(300.0) == 1  # probe passing, but the soak (to 405 s) is not over: no durable repair yet
    assert resolved_at(420.0) == 0  # after the repair was credited
    assert resolved_at(930.0) == 0  # after the fault was reverted


def test_false_declarations_cost_score() -> None:
    s, _ = handled_stream(extra=[(180.0, ("resolve", None))])
    score = score_events(s.events, counterfactual=noop_cf(always_failing()))
    assert score.false_declarations == 1
    assert score.scores[FORMULA_V1] == 100.0 and score.scores[FORMULA_V2] == 0.0  # 1 false of 1 fault
    assert score_events(s.events, counterfactual=noop_cf(always_failing()), formula=FORMULA_V1).score == 100.0
