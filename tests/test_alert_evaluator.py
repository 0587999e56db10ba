"""Alerting semantics of the embedded evaluator, the alert history, templates, headless imports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alerts.evaluator import AlertEvaluator, AlertTransition
from alerts.history import AlertHistory
from alerts.promql.labels import fingerprint
from alerts.rules import load_rule_text
from alerts.templates import Template, TemplateData, go_float

RULES = """
groups:
  - name: g
    rules:
      - alert: High
        expr: x > 5
        for: 30s
        keep_firing_for: 30s
        labels: {severity: page, team: "{{ $labels.job }}-oncall"}
        annotations: {summary: "{{ $labels.job }} at {{ $value }}"}
      - record: job:x:doubled
        expr: x * 2
      - alert: FromRecord
        expr: job:x:doubled > 100
"""


def _run(values: list[float | None]) -> tuple[AlertEvaluator, list[AlertTransition]]:
    ev = AlertEvaluator(load_rule_text(RULES, "t.yaml"))
    out: list[AlertTransition] = []
    for k, v in enumerate(values):
        ev.ingest_samples(15.0 * k, [] if v is None else [({"__name__": "x", "job": "api"}, v)])
        out += ev.evaluate(15.0 * k)
    return ev, out


def test_pending_firing_keep_firing_resolved() -> None:
    _, out = _run([1, 6, 7, 8, 9, 1, 1, 1, 1])
    high = [(t.t, t.from_state, t.to_state) for t in out if t.rule == "High"]
    # active at 15 s, fires at 45 s (for 30s), expression false from 75 s, kept firing 30 s.
    assert high == [(15.0, "inactive", "pending"), (45.0, "pending", "firing"), (105.0, "firing", "resolved")]
    first = next(t for t in out if t.rule == "High")
    assert first.labels == {"alertname": "High", "job": "api", "severity": "page", "team": "api-oncall"}
    assert first.annotations == {"summary": "api at 6"}
    assert first.fingerprint == fingerprint(first.labels)


def test_pending_that_clears_goes_inactive_and_for_zero_reports_both_steps() -> None:
    _, out = _run([6, 1, 60, 60])
    high = [(t.t, t.from_state, t.to_state) for t in out if t.rule == "High"]
    assert high == [(0.0, "inactive", "pending"), (15.0, "pending", "inactive"), (30.0, "inactive", "pending")]
    rec = [(t.t, t.from_state, t.to_state) for t in out if t.rule == "FromRecord"]
    assert rec == [(30.0, "inactive", "pending"), (30.0, "pending", "firing")]


def test_staleness_resolves_alerts_when_the_series_disappears() -> None:
    _, out = _run([6, 6, 6, 6, None, None, None, None])
    assert [(t.t, t.to_state) for t in out if t.rule == "High"] == [(0.0, "pending"), (30.0, "firing"),
                                                                     (90.0, "resolved")]


def test_alerts_series_are_queryable() -> None:
    from alerts.promql import instant_query

    ev, _ = _run([6, 6, 6])
    res = instant_query('ALERTS{alertname="High"}', ev.storage, 30_000)
    assert [ev.storage.labels.dict(int(lid))["alertstate"] for lid in res.lids] == ["firing"]  # type: ignore[union-attr]


def test_history_is_cumulative_queryable_and_round_trips() -> None:
    ev, out = _run([1, 6, 7, 8, 9, 1, 1, 1, 6, 1])
    hist = ev.history
    assert hist is not None
    highs = hist.query(rule="High")
    assert len(highs) == 2  # the second activation at 120 s is a new instance
    assert highs[0].state == "resolved" and highs[0].fired_at == 45.0 and highs[0].ended_at == 105.0
    assert highs[0].state_at(50) == "firing" and highs[0].state_at(10) == "inactive"
    assert [i.id for i in hist.query(state="firing", at=60)] == [highs[0].id]
    assert hist.query(since=110, until=125, rule="High") == [highs[1]]
    again = AlertHistory.from_dict(json.loads(json.dumps(hist.to_dict())))
    assert again.to_dict() == hist.to_dict()
    with pytest.raises(ValueError):
        hist.query(state="exploded")
    restored = [AlertTransition.from_dict(json.loads(json.dumps(t.to_dict()))) for t in out]
    assert restored == out


@given(st.lists(st.sampled_from([None, 1.0, 6.0]), min_size=1, max_size=40))
@settings(max_examples=60, deadline=None)
def test_transitions_form_valid_state_sequences(values: list[float | None]) -> None:
    _, out = _run(values)
    state: dict[str, str] = {}
    for tr in out:
        cur = state.get(tr.fingerprint, "inactive")
        cur = "inactive" if cur == "resolved" else cur
        assert tr.from_state == cur
        assert (tr.from_state, tr.to_state) in {("inactive", "pending"), ("pending", "firing"),
                                                ("pending", "inactive"), ("firing", "resolved")}
        state[tr.fingerprint] = tr.to_state


def test_templates_print_like_go() -> None:
    data = TemplateData({"a": "x"}, 1234567.0, {})
    assert Template("{{ $value }} {{ humanize $value }} {{ $value | humanizePercentage }}").expand(data) == \
        "1.234567e+06 1.235M 1.235e+08%"
    assert Template('{{ printf "%.2f" $value }}|{{ $labels.a }}|{{ $labels.missing }}|').expand(data) == \
        "1234567.00|x||"
    assert go_float(0.1) == "0.1" and go_float(123456.0) == "123456" and go_float(1.234e-05) == "1.234e-05"
    assert Template("{{ 90 | humanizeDuration }}").expand(data) == "1m 30s"


def test_alerts_package_never_imports_a_ui_toolkit() -> None:
    code = ("import sys, alerts, alerts.evaluator, alerts.history, alerts.rules, alerts.promtool, alerts.templates, "
            "alerts.promql.testlang, alerts.live\n"
            "bad = [m for m in ('textual', 'rich') if m in sys.modules]\n"
            "assert not bad, bad\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert res.returncode == 0, res.stderr


BOUNDED = """
groups:
  - name: g
    rules:
      - alert: Wide
        expr: x > 0
        labels: {wide: '{{ printf "%5000d" 1 }}'}
        annotations:
          summary: '{{ printf "%99999d" 7 }}'
          heavy: '{{ range query "count_over_time(x[100d:1s])" }}{{ .Value }}{{ end }}'
          light: '{{ with query "sum(x)" }}{{ . | first | value }}{{ end }}'
"""


def _bounded_alert(max_template_chars: int | None) -> AlertTransition:
    ev = AlertEvaluator(load_rule_text(BOUNDED, "b.yaml"), max_template_chars=max_template_chars)
    out: list[AlertTransition] = []
    for k in range(3):
        ev.ingest_samples(15.0 * k, [({"__name__": "x", "job": "api"}, 2.0)])
        out += ev.evaluate(15.0 * k)
    return out[-1]


def test_a_templates_query_is_refused_over_the_sample_budget_and_expands_to_an_error() -> None:
    # 100 days at 1 s: 8.6 M subquery steps; before the budget this evaluated for minutes
    alert = _bounded_alert(None)
    assert alert.annotations["heavy"].startswith("<error expanding template: ")
    assert "query processing would " in alert.annotations["heavy"]  # a bound of alerts.promql.budget
    assert alert.annotations["light"] == "2"  # a cheap query still answers


def test_a_run_cuts_long_expanded_text_and_rules_test_does_not() -> None:
    cut = _bounded_alert(4096)
    assert len(cut.annotations["summary"]) < 4200
    assert cut.annotations["summary"].endswith("[95,903 more characters cut by the embedded evaluator]")
    assert cut.labels["wide"].endswith("[904 more characters cut by the embedded evaluator]")
    whole = _bounded_alert(None)
    assert whole.annotations["summary"] == " " * 99998 + "7"
