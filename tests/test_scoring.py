"""Score validity on real runs (issue 6): the numbers mean what they claim and cannot be gamed."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import pytest

from engine.operate.invocation import Invocation, Operator
from engine.operate.operators import make_operator
from engine.operate.operators.oracle import OracleOperator
from engine.run.orchestrator import Orchestrator
from engine.run.sealinputs import seal_run
from faults.generator import generate
from faults.schedule import Schedule, parse_schedule
from faults.spec import load_catalog
from scoring.cli import load_score
from scoring.leaderboard import leaderboard, to_json
from scoring.score import OUTCOMES, RunScore, score_events

APPS = ["online-boutique", "astronomy-shop", "train-ticket"]


def sequential(app: str, n: int = 5, gap: int = 60, seed: int = 1) -> Schedule:
    """A qualified schedule without overlap: n catalog faults one after another, so no fault
    can mask another's symptom (the oracle's reference setting)."""
    from engine.apps.model import load_app
    from faults.timing import onset_seconds

    model = load_app(app)
    faults = [f for f in load_catalog(app).faults if f.mechanism != "zone-outage"][:: 7][:n]
    at, entries = 60, []
    for f in faults:
        life = int(onset_seconds(model, f)) + 480
        entries.append({"at": at, "fault": f.id, "target": f.target, "lifetime": life})
        at += life + gap
    return parse_schedule({"app": app, "seed": seed, "regime": "short-5", "duration_s": at + 60,
                           "faults": entries}, "<sequential>")


def run(sched: Schedule, operator: Operator, tmp: Path | None = None) -> tuple[Orchestrator, RunScore]:
    r = Orchestrator(sched, operator=operator, run_dir=tmp)
    r.run()
    return r, score_events(r.stream.events)


@pytest.mark.parametrize("app", APPS)
def test_noop_scores_zero(app: str) -> None:
    _, score = run(generate(app, 2, "short-5"), make_operator("noop"))
    assert (score.corr, score.loc, score.rep, score.score) == (0.0, 0.0, 0.0, 0.0)
    assert all(f.outcome == "missed" for f in score.faults)


@pytest.mark.parametrize("app", APPS)
def test_oracle_scores_at_least_95_on_qualified_schedules(app: str) -> None:
    r, score = run(sequential(app), OracleOperator())
    assert r.stream.events[0].payload["oracle"] is True
    assert score.risk == 0.0
    assert score.score >= 95.0, [(f.fault, f.outcome) for f in score.faults]


@dataclass
class OneBigIncident:
    """Reports a single incident holding every alert seen, then names one service."""

    name: str = "one-big-incident"
    done: bool = False
    ground_truth: ClassVar[bool] = True

    def invoke(self, inv: Invocation) -> None:
        firing = [a for a in inv.alerts if a.fired_at is not None]
        if self.done or len(firing) < 6:
            return
        self.done = True
        res = inv.call("report_incident", alerts=[f"A-{a.id}" for a in firing], title="everything is on fire")
        assert inv.truth is not None
        for fault in inv.truth.faults.values():
            inv.call("report_rca", incident=res.data["incident"], service=fault.spec.target, category="code-bug",
                     artifact="x", summary="guess")


def test_one_incident_with_every_alert_correlates_at_most_one_fault() -> None:
    _, score = run(generate("online-boutique", 3, "short-10"), OneBigIncident())
    assert sum(f.correlated for f in score.faults) <= 1
    assert sum(f.localized for f in score.faults) <= 1


@dataclass
class RestlessOracle:
    """The oracle, plus a restart of a healthy service every invocation."""

    name: str = "restless-oracle"
    inner: OracleOperator = field(default_factory=OracleOperator)
    ground_truth: ClassVar[bool] = True

    def invoke(self, inv: Invocation) -> None:
        self.inner.invoke(inv)
        assert inv.truth is not None
        live = {r.spec.target for r in inv.truth.faults.values() if r.instance and r.instance.active}
        if not self.inner.handled:
            return
        incident = next(iter(self.inner.handled.values()))
        healthy = next(s.name for s in inv.app.services if s.role == "app" and s.name not in live)
        pod = next(p["metadata"]["name"] for p in inv.truth.cluster.objects("Pod")
                   if p["metadata"]["labels"]["app"] == healthy)
        inv.call("restart_pod", pod=pod, incident=incident)


def test_restarting_healthy_services_raises_risk_and_lowers_score() -> None:
    sched = sequential("online-boutique")
    _, clean = run(sched, OracleOperator())
    _, restless = run(sched, RestlessOracle())
    assert restless.risk > clean.risk
    assert restless.score < clean.score
    assert restless.risky_actions > 0


@dataclass
class Hasty:
    """Reports incidents, names the right service, and declares them resolved at once."""

    name: str = "hasty"
    inner: OracleOperator = field(default_factory=OracleOperator)
    ground_truth: ClassVar[bool] = True

    def invoke(self, inv: Invocation) -> None:
        before = set(self.inner.handled)
        self.inner.invoke(inv)
        for fid in set(self.inner.handled) - before:
            inv.call("resolve_incident", incident=self.inner.handled[fid])
            self.inner.resolved.add(fid)


def test_premature_declarations_are_counted() -> None:
    _, hasty = run(sequential("online-boutique"), Hasty())
    _, oracle = run(sequential("online-boutique"), OracleOperator())
    assert hasty.false_declarations >= 1
    assert oracle.false_declarations == 0


def test_human_and_agent_paths_score_identically() -> None:
    """The same tool calls at the same run times, made as the terminal app makes them (from
    outside an invocation, through run.tools), score exactly like the agent's."""
    sched = sequential("online-boutique", n=3)
    agent_run, agent = run(sched, OracleOperator())
    calls = [(e.t, e.payload["tool"], e.payload["args"]) for e in agent_run.stream.events
             if e.kind == "tool.call" and e.payload["tier"] in ("report", "act")]

    @dataclass
    class Idle:
        name: str = "oracle"

        def invoke(self, inv: Invocation) -> None:
            return None

    human = Orchestrator(sched, operator=Idle())
    human.start()
    for t, tool, args in calls:
        human.advance_to(t - 3.0 if tool != "report_incident" else t)  # the call's modeled cost ends at t
        res = human.tools.call(tool, args)
        assert res.ok or res.denied or res.error, res
    human.advance_to(human.end_t)
    human_score = score_events(human.stream.events)
    a, h = agent.to_dict(), human_score.to_dict()
    for key in ("corr", "loc", "rep", "risk", "false_declarations"):
        assert a[key] == h[key], key
    assert [f["outcome"] for f in a["faults"]] == [f["outcome"] for f in h["faults"]]


def test_scoring_is_byte_identical_and_refuses_tampered_bundles(tmp_path: Path) -> None:
    run(generate("online-boutique", 5, "short-5"), make_operator("runbook"), tmp_path / "run")
    bundle = seal_run(tmp_path / "run")
    one, _ = load_score(str(bundle), degradation=False)
    two, _ = load_score(str(bundle), degradation=False)
    assert to_json([one], leaderboard([one])) == to_json([two], leaderboard([two]))
    data = bytearray(bundle.read_bytes())
    data[len(data) // 2] ^= 0x01
    bad = tmp_path / "tampered.marathon"
    bad.write_bytes(bytes(data))
    from scoring.cli import ScoreError

    with pytest.raises(ScoreError, match="does not verify"):
        load_score(str(bad), degradation=False)
    flagged, _ = load_score(str(bad), allow_unverified=True, degradation=False)
    assert flagged.integrity.startswith("UNVERIFIED")


def test_degradation_is_relative_to_the_noop_run(tmp_path: Path) -> None:
    run(generate("online-boutique", 6, "short-5"), make_operator("noop"), tmp_path / "n")
    bundle = seal_run(tmp_path / "n")
    score, _ = load_score(str(bundle))
    assert score.degradation == pytest.approx(100.0)
    assert score.noop_reference and score.noop_reference.startswith("noop:online-boutique:seed6")
    run(generate("online-boutique", 6, "short-5"), OracleOperator(), tmp_path / "o")
    better, _ = load_score(str(seal_run(tmp_path / "o")))
    assert better.degradation is not None and better.degradation < 100.0


def test_score_json_round_trips_and_names_the_formula() -> None:
    _, score = run(generate("astronomy-shop", 4, "short-5"), make_operator("runbook"))
    doc = json.loads(to_json([score], leaderboard([score])))
    assert doc["formula"] == "marathon-score/2"
    assert doc["runs"][0]["faults"][0]["outcome"] in OUTCOMES
    assert set(doc["runs"][0]["scores"]) == {"marathon-score/1", "marathon-score/2"}
    v1 = json.loads(to_json([score], leaderboard([score], formula="marathon-score/1"), "marathon-score/1"))
    assert v1["formula"] == "marathon-score/1"
    assert v1["leaderboard"][0]["score"] == pytest.approx(score.scores["marathon-score/1"], abs=1e-3)


def test_the_oracle_is_never_ranked_and_several_runs_get_intervals() -> None:
    from scoring.leaderboard import format_table

    scores = [run(generate("online-boutique", seed, "short-5"), make_operator(op))[1]
              for seed in (1, 2) for op in ("runbook", "oracle")]
    rows = leaderboard(scores)
    assert [r.operator for r in rows] == ["runbook"]
    row = rows[0]
    assert row.runs == 2 and set(row.intervals) >= {"score", "corr", "precision", "risk"}
    lo, hi = row.intervals["score"]
    assert lo <= row.score <= hi
    assert f"{row.risky_actions}/{row.actions}" in format_table(rows)
    assert rows == leaderboard(scores)  # the bootstrap is seeded: same runs, same intervals


def test_marathon_score_ranks_by_the_chosen_formula(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from engine.cli import main

    run(generate("online-boutique", 1, "short-5"), make_operator("runbook"), tmp_path / "r")
    bundle = seal_run(tmp_path / "r")
    assert main(["score", str(bundle), "--no-counterfactual", "--json"]) == 0
    v2 = json.loads(capsys.readouterr().out)
    assert main(["score", str(bundle), "--no-counterfactual", "--json", "--formula", "marathon-score/1"]) == 0
    v1 = json.loads(capsys.readouterr().out)
    run_v2 = v2["runs"][0]
    assert v2["leaderboard"][0]["score"] == pytest.approx(run_v2["scores"]["marathon-score/2"], abs=1e-3)
    assert v1["leaderboard"][0]["score"] == pytest.approx(run_v2["scores"]["marathon-score/1"], abs=1e-3)
    assert run_v2["provisional"] is True
