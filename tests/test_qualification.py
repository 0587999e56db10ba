"""Every catalog fault of every app is qualified: no-op, oracle and revert trials (issue 3).

One test case per fault and trial, so the report shows exactly which fault is unfair.
"""

from __future__ import annotations

import pytest

from faults.qualify import TrialResult, noop_trial, oracle_trial, revert_trial
from faults.spec import FaultSpec, load_catalog

APPS = ["online-boutique", "astronomy-shop", "train-ticket"]
CASES = [(app, fault) for app in APPS for fault in load_catalog(app).faults]


def _id(case: tuple[str, FaultSpec]) -> str:
    return case[1].id


_NOOP: dict[str, TrialResult] = {}


def _noop(app: str, fault: FaultSpec) -> TrialResult:
    if fault.id not in _NOOP:
        _NOOP[fault.id] = noop_trial(fault, app)
    return _NOOP[fault.id]


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_noop_trial_probe_fails_while_active(case: tuple[str, FaultSpec]) -> None:
    app, fault = case
    result = _noop(app, fault)
    assert result.ok, result.reason


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_noop_trial_raises_an_attributable_alert(case: tuple[str, FaultSpec]) -> None:
    app, fault = case
    result = _noop(app, fault)
    assert result.alerts, f"{fault.id}: no alert of the pack fired that is attributable to it"
    assert set(fault.expected_alerts) & set(result.alerts), (
        f"{fault.id}: expected {sorted(fault.expected_alerts)}, fired {result.alerts}")


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_oracle_trial_reference_remedy_repairs(case: tuple[str, FaultSpec]) -> None:
    app, fault = case
    result = oracle_trial(fault, app)
    assert result.ok, result.reason


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_revert_trial_returns_to_healthy(case: tuple[str, FaultSpec]) -> None:
    app, fault = case
    result = revert_trial(fault, app)
    assert result.ok, result.reason
