"""Every catalog fault of every app is qualified: no-op, oracle and revert trials (issues 3 and 11).

One test case per fault and trial, so the report shows exactly which fault is unfair. The
no-op trial is judged twice: its probe fails at every sample, and an alert of the paper
pack (SRE-Marathon Tables 4 and 6, the leaderboard default) attributable to the fault fires
-- one the catalog lists in ``expected_alerts``, which names paper rules only. The oracle
trial is the real path (:func:`engine.run.validate.qualify_fault`): the fault alone on a
one-fault schedule, the oracle operator acting through the tools and the policy layer, the
scorer judging it against the no-op run; it must earn every stage with no false declaration,
no risky act and no noise incident, and its repair credit must fit in the shortest lifetime
the schedule generator gives the fault (:func:`faults.generator.lifetime`, from
:func:`faults.timing.work_seconds`). Run one app
with ``-k ob-``, ``-k as-`` or ``-k tt-`` (fault ids start with the app's prefix).
"""

from __future__ import annotations

import pytest

from alerts.rules import load_pack
from engine.apps.model import load_app
from engine.run.qualify import QUALIFYING_PACK, TrialResult, noop_trial, revert_trial
from engine.run.substrates import open_substrate
from engine.run.validate import qualify_fault
from faults.generator import REGIMES, lifetime
from faults.spec import FaultSpec, load_catalog
from faults.timing import work_seconds
from scoring.gates import MIN_SOAK_S, SOAK_S

APPS = ["online-boutique", "astronomy-shop", "train-ticket"]
CASES = [(app, fault) for app in APPS for fault in load_catalog(app).faults]
PAPER_RULES = frozenset(r.name for r in load_pack(QUALIFYING_PACK).alerts)


def _id(case: tuple[str, FaultSpec]) -> str:
    return case[1].id


# Under pytest-xdist (--dist loadgroup) a fault's trials run on one worker, so its no-op
# trial (shared by two tests through _NOOP) runs once.
PARAMS = [pytest.param(c, id=_id(c), marks=pytest.mark.xdist_group(_id(c))) for c in CASES]


_NOOP: dict[str, TrialResult] = {}


def _noop(app: str, fault: FaultSpec) -> TrialResult:
    if fault.id not in _NOOP:
        _NOOP[fault.id] = noop_trial(fault, open_substrate(app, seed=0))
    return _NOOP[fault.id]


@pytest.mark.parametrize("case", PARAMS)
def test_noop_trial_probe_fails_while_active(case: tuple[str, FaultSpec]) -> None:
    app, fault = case
    result = _noop(app, fault)
    passing = [(t, s.detail) for t, s in result.samples if s.ok]
    assert result.samples and not passing, result.reason


@pytest.mark.parametrize("case", PARAMS)
def test_noop_trial_raises_an_attributable_alert(case: tuple[str, FaultSpec]) -> None:
    app, fault = case
    result = _noop(app, fault)
    assert fault.expected_alerts and set(fault.expected_alerts) <= PAPER_RULES, (
        f"{fault.id}: expected_alerts must name rules of the {QUALIFYING_PACK} pack: {sorted(fault.expected_alerts)}")
    assert result.alerts, f"{fault.id}: no alert of the {QUALIFYING_PACK} pack fired that is attributable to it"
    assert set(fault.expected_alerts) & set(result.alerts), (
        f"{fault.id}: expected {sorted(fault.expected_alerts)}, fired {result.alerts}")
    assert result.ok, result.reason


@pytest.mark.parametrize("case", PARAMS)
def test_oracle_earns_every_stage_through_the_tools_and_the_scorer(case: tuple[str, FaultSpec]) -> None:
    app, fault = case
    result = qualify_fault(app, fault)
    assert result.ok, result.reason
    # The shortest lifetime a schedule gives the fault leaves room for the oracle's credit, even
    # with the soak cut to its minimum by the revert.
    shortest = lifetime(load_app(app), fault, min(r["life_clip"][0] for r in REGIMES.values()))
    budget = shortest + SOAK_S - MIN_SOAK_S
    assert result.work_s is not None and result.work_s <= budget, (
        f"{fault.id}: repair credited {result.work_s} s after injection; the shortest lifetime it gets is "
        f"{shortest} s (work_seconds {work_seconds(load_app(app), fault):.0f} s)")


@pytest.mark.parametrize("case", PARAMS)
def test_revert_trial_returns_to_healthy(case: tuple[str, FaultSpec]) -> None:
    app, fault = case
    result = revert_trial(fault, open_substrate(app, seed=0))
    assert result.ok, result.reason
