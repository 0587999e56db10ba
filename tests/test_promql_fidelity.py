"""Fidelity of the embedded evaluator to Prometheus 2.42 where it used to differ (issue 16):
negative offsets, inline regex flags, compensated sums, Go's math, group limits.

Values are compared bit for bit with ``promtool test rules`` (:mod:`tests.promtool_oracle`);
those tests skip without promtool, except in CI.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from tests.conftest import need_promtool as _need_promtool
from tests.promtool_oracle import embedded_samples, promtool_samples


def _bits(samples: dict[str, float]) -> dict[str, str]:
    return {k: ("nan" if math.isnan(v) else v.hex()) for k, v in samples.items()}


def _agree(tmp_path: Path, series: dict[str, str], queries: list[tuple[str, int]]) -> None:
    _need_promtool()
    ours = embedded_samples(series, queries)
    theirs = promtool_samples(tmp_path, series, queries)
    bad = [(q, _bits(a), _bits(b)) for q, a, b in zip(queries, ours, theirs, strict=True) if _bits(a) != _bits(b)]
    assert not bad, "embedded != promtool:\n" + "\n".join(f"  {q}: ours {a} promtool {b}" for q, a, b in bad)
    assert any(theirs), "promtool returned nothing at all: the oracle is not exercising anything"


# ---------------------------------------------------------------------------- negative offset

OFFSET_SERIES = {'x{a="1"}': "0+1x30", 'y{a="1"}': "1 4 9 16 25 36 49 64 81 100 121 144 169 196 225 256"}
OFFSET_QUERIES = [
    ("x offset -5m", 180), ("x offset -1h", 0), ("rate(y[3m] offset -2m)", 300),
    ("x @ 300 offset -2m", 0), ("sum_over_time(x[5m:1m] offset -3m)", 360),
    ("max_over_time(y[2m:30s] offset -90s)", 120), ("x offset -30s", 90), ("(x offset -2m) - x", 600),
]


def test_negative_offset_loads_in_a_rule_file() -> None:
    from alerts.rules import load_rule_text

    rs = load_rule_text("groups:\n- name: g\n  rules:\n  - alert: Ahead\n    expr: x offset -5m > x\n")
    assert rs.alerts[0].expr == "x offset -5m > x"


def test_negative_offset_looks_ahead_as_promtool(tmp_path: Path) -> None:
    ours = embedded_samples(OFFSET_SERIES, OFFSET_QUERIES)
    assert ours[0] == {'{__name__="x", a="1"}': 8.0}  # x at 3m + 5m
    assert ours[1] == {}  # beyond the last sample + lookback
    _agree(tmp_path, OFFSET_SERIES, OFFSET_QUERIES)


# ---------------------------------------------------------------------------- group limit

LIMIT_RULES = """\
groups:
  - name: limited
    limit: 2
    rules:
      - alert: Up
        expr: x > 0
        for: 10m
        labels: {severity: page}
      - record: x:copy
        expr: x
"""


def _limit_run() -> tuple[object, list[list[object]]]:
    from alerts.evaluator import AlertEvaluator
    from alerts.rules import load_rule_text

    ev = AlertEvaluator(load_rule_text(LIMIT_RULES), interval_s=60.0)
    # minutes 0-2: two series; minutes 3-4: three (over the limit); 5-9: two again.
    steps = []
    for minute in range(10):
        n = 3 if minute in (3, 4) else 2
        ev.ingest_samples(minute * 60.0, [({"__name__": "x", "i": str(i)}, 1.0) for i in range(n)])
        steps.append(ev.evaluate(minute * 60.0))
    return ev, steps


def test_limit_fails_the_rule_with_prometheus_error_and_drops_its_alerts() -> None:
    from alerts.evaluator import AlertEvaluator

    ev, steps = _limit_run()
    assert isinstance(ev, AlertEvaluator)
    # minute 3: both rules fail; the two pending alerts end, none is raised
    ended = [(tr.from_state, tr.to_state) for tr in steps[3]]  # type: ignore[attr-defined]
    assert ended == [("pending", "inactive"), ("pending", "inactive")]
    changes = ev.take_rule_health_changes()
    errors = {(c.rule, c.health, c.error) for c in changes}
    assert ("Up", "err", "exceeded limit of 2 with 3 alerts") in errors
    assert ("x:copy", "err", "exceeded limit of 2 with 3 series") in errors
    assert ("Up", "ok", None) in errors  # back at minute 5
    # minute 5: the alerts come back as new ones (activeAt 5m), no ALERTS sample at 3m and 4m
    assert [(tr.to_state, tr.active_at) for tr in steps[5]] == [("pending", 300.0)] * 2  # type: ignore[attr-defined]
    assert not steps[4]


def test_limit_agrees_with_promtool(tmp_path: Path) -> None:
    """promtool 2.42 on the same series reports the same two errors at the first evaluation
    over the limit (a failing rule fails ``promtool test rules`` there; ``unittest.go`` stops
    at the first evaluation with errors)."""
    _need_promtool()
    import yaml

    from alerts.promtool import run_promtool

    rules = tmp_path / "limited.rules.yaml"
    rules.write_text(LIMIT_RULES)
    series = [{"series": 'x{i="0"}', "values": "1x9"}, {"series": 'x{i="1"}', "values": "1x9"},
              {"series": 'x{i="2"}', "values": "_ _ _ 1 1 stale"}]
    doc = {"rule_files": [str(rules)], "evaluation_interval": "1m", "tests": [{
        "interval": "1m", "input_series": series,
        "alert_rule_test": [{"eval_time": "9m", "alertname": "Up", "exp_alerts": []}]}]}
    path = tmp_path / "limit_test.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    res = run_promtool("test", "rules", str(path))
    errors = sorted(line.strip() for line in (res.stdout + res.stderr).splitlines() if "err:" in line)
    assert errors == ["rule: Up, time: 3m0s, err: exceeded limit of 2 with 3 alerts",
                      "rule: x:copy, time: 3m0s, err: exceeded limit of 2 with 3 series"], res.stdout
    ev, _ = _limit_run()
    health = {h.rule: h for h in ev.rule_health()}  # type: ignore[attr-defined]
    assert health["Up"].health == "ok"  # minute 9


# ---------------------------------------------------------------------------- $labels.__name__

def test_templates_see_name_where_the_expression_keeps_it() -> None:
    from alerts.evaluator import AlertEvaluator
    from alerts.rules import load_rule_text

    rules = load_rule_text("""\
groups:
  - name: g
    rules:
      - alert: Down
        expr: up == 0
        annotations: {summary: "{{ $labels.__name__ }} of {{ $labels.job }}"}
      - alert: Ratio
        expr: up / 1 == 0
        annotations: {summary: "[{{ $labels.__name__ }}]"}
""")
    ev = AlertEvaluator(rules)
    ev.ingest_samples(0.0, [({"__name__": "up", "job": "api"}, 0.0)])
    trs = ev.evaluate(0.0)
    by_rule = {tr.rule: tr for tr in trs if tr.to_state == "firing"}
    assert by_rule["Down"].annotations == {"summary": "up of api"}
    assert "__name__" not in by_rule["Down"].labels
    assert by_rule["Ratio"].annotations == {"summary": "[]"}


# ---------------------------------------------------------------------------- compensated sums

KAHAN_SERIES = {
    'a{k="big"}': "1e16 1 1 1 1 1 -1e16 1 1 1",
    'a{k="tenths"}': "0.1x12",
    'a{k="mixed"}': "1e100 1 -1e100 3.3 -7.7 1e-5 2.5e15 0.3 -2.5e15 0.7",
    'a{k="inf"}': "Inf 1 2 -3 Inf 4",
    'a{k="thirds"}': "0.3333333333333333 0.6666666666666666 1.3333333333333333 2.6666666666666665 5.333333333333333",
}
KAHAN_QUERIES = [(f"{f}(a[{w}])", t) for f in ("sum_over_time", "avg_over_time", "stddev_over_time",
                                               "stdvar_over_time") for w, t in (("10m", 540), ("4m", 420), ("3m", 300))]


def test_sum_and_avg_over_time_are_compensated() -> None:
    ours = embedded_samples(KAHAN_SERIES, [("sum_over_time(a[10m])", 540), ("avg_over_time(a[10m])", 540)])
    assert ours[0]['{k="big"}'] == 8.0  # a plain float sum loses the 1s added to 1e16: 6.0
    assert ours[0]['{k="tenths"}'] == 1.0  # ten 0.1 (the window holds ten): a plain sum is 0.9999999999999999
    assert ours[1]['{k="tenths"}'] == 0.1


def test_over_time_sums_agree_with_promtool(tmp_path: Path) -> None:
    _agree(tmp_path, KAHAN_SERIES, KAHAN_QUERIES)


# ---------------------------------------------------------------------------- inline regex flags

REGEX_SERIES = {f'r{{v="{v}"}}': "1" for v in ("Foo", "foo", "FOO", "fooo", "foo-bar", "Bar", "aaa", "xa", "a.b")}
REGEX_QUERIES = [(q, 0) for q in (
    'r{v=~"(?i)foo"}', 'r{v!~"(?i)FOO"}', 'r{v=~"(?i)fo+"}', 'r{v=~"f(?i)OO"}', 'r{v=~"(?i:f)oo"}',
    'r{v=~"(?s)a.b"}', 'r{v=~"(?m)^aaa$"}', 'r{v=~"(?i)bar|(?-i)Foo"}', 'r{v=~"(?is)FOO.*"}',
    'label_replace(r{v=~"x.*|a+"}, "g", "$1", "v", "(?U)(a+).*")',
    'label_replace(r{v=~"x.*|a+"}, "g", "$1", "v", "(?U)(a+?)(a*)")',
    'label_replace(r, "g", "$1", "v", "(?i)(F)o+")',
    'label_replace(r{v=~"foo.*"}, "g", "$1", "v", "(?U)(.{1,3}).*")',
)]


def test_leading_inline_flags_compile_and_match() -> None:
    from alerts.promql.engine import compile_query

    for expr, _ in REGEX_QUERIES:
        compile_query(expr)  # Python refused "(?i)" inside Prometheus' ^(?:...)$ anchoring
    ours = embedded_samples(REGEX_SERIES, REGEX_QUERIES[:1])
    assert {k.split('"')[3] for k in ours[0]} == {"Foo", "foo", "FOO"}


def test_inline_flags_agree_with_promtool(tmp_path: Path) -> None:
    _agree(tmp_path, REGEX_SERIES, REGEX_QUERIES)


def test_flags_re2_refuses_are_refused() -> None:
    from alerts.promql.engine import compile_query
    from alerts.promql.values import UnsupportedError

    with pytest.raises(UnsupportedError, match="flag x"):
        compile_query('r{v=~"(?x)a b"}')


# ---------------------------------------------------------------------------- Go's math


def _math_series(seed: int, n: int) -> dict[str, str]:
    import random

    rnd = random.Random(seed)
    vals: list[float] = []
    for i in range(n):
        kind = i % 4
        vals.append(rnd.uniform(-20, 20) if kind == 0 else rnd.uniform(0, 3) if kind == 1
                    else math.exp(rnd.uniform(-700, 700)) if kind == 2 else rnd.uniform(-745, 710))
    # edges: log's sqrt(2)/2 split, exp's k = 1024 (+Inf in Go), subnormal results, exact powers of two
    vals += [0.7071067811865476, 5.656854249492381, 709.5, -708.5, -745.0, 1e-310, 5e-324, 0.5, 1024.0, 0.1,
             2.0**40 + 0.3, 1e300, 123456789012.5, -0.0]
    return {f'x{{i="{i}"}}': repr(v) for i, v in enumerate(vals)}


MATH_QUERIES = [(q, 0) for q in ("exp(x)", "ln(x)", "log2(x)", "log10(x)", "x ^ 1.7", "x ^ 0.3", "x ^ 3",
                                 "x ^ -2.5", "1.7 ^ (x / 100)", "10 ^ (x / 100)", "deg(x)", "rad(x)", "sqrt(x)",
                                 "sin(x)", "cos(x)", "tan(x)", "sin(x / 1e3)", "cos(x % 10)", "tan(x % 3)",
                                 "atan(x)", "asin(x % 1)", "acos(x % 1)", "sinh(x % 30)", "cosh(x % 30)",
                                 "tanh(x % 2)", "x atan2 (x / 3 + 1)", "asinh(x)", "acosh(x % 5 + 1)",
                                 "atanh(x % 1)", "sgn(x)", "round(x, 0.1)", "x % -3")]


def test_math_agrees_with_promtool_to_the_bit(tmp_path: Path) -> None:
    """exp, ln, log2, log10, ^ (Go's math.Exp/Log/Log2/Log10/Pow), deg, rad, sqrt and the
    trigonometric and hyperbolic functions (huge arguments included: Payne-Hanek reduction) on
    210 random values each; numpy's disagree with promtool on a fifth to a third of them."""
    _agree(tmp_path, _math_series(7, 200), MATH_QUERIES)


def test_go_math_edges() -> None:
    from alerts.promql import gomath

    assert gomath.go_exp(709.5) == math.inf  # Go's amd64 Exp: k = 1024 overflows (math.exp: 1.35e308)
    assert gomath.go_exp(-745.0) == 5e-324
    assert gomath.go_log2(1024.0) == 10.0
    assert gomath.go_pow(-8.0, 1 / 3) != gomath.go_pow(-8.0, 1 / 3)  # NaN: negative base, fractional power
    assert gomath.go_pow(0.0, -3.0) == math.inf and gomath.go_pow(-0.0, -3.0) == -math.inf
    assert gomath.fma(0.1, 10.0, -1.0) == 5.551115123125783e-17  # the rounding error of 0.1 * 10, kept


# ---------------------------------------------------------------------------- every load error at once

BAD_RULES = """\
groups:
  - name: a
    limit: 3
    rules:
      - alert: A
        expr: rate(x[5m)
        for: 5x
        annotations:
          summary: "{{ .Bad "
      - record: bad name
        expr: up
      - alert: C
        expr: foo(up)
  - name: a
    rules: []
"""


def test_loader_reports_every_problem_with_its_place() -> None:
    from alerts.rules import RuleFileError, load_rule_text

    with pytest.raises(RuleFileError) as info:
        load_rule_text(BAD_RULES, "bad.rules.yaml")
    err = info.value
    lines = str(err).splitlines()
    assert lines[0] == "6 problems:"
    places = [(p.line, p.group, p.index) for p in err.problems]
    assert places == [(6, "a", 0), (7, "a", 0), (9, "a", 0), (10, "a", 1), (13, "a", 2), (14, None, None)]
    assert "for: not a valid duration string: '5x'" in lines[2]  # the bad duration does not hide the rest
    assert lines[1].startswith('  bad.rules.yaml:6:15: group "a", rule 1, "A": could not parse expression')
    assert "unclosed action" in lines[3] and "invalid recording rule name" in lines[4]
    assert "unknown function with name 'foo'" in lines[5] and "repeated" in lines[6]
    assert (err.line, err.group, err.rule) == (6, "a", "A")  # the first problem, as callers read it


# ---------------------------------------------------------------------------- sums in promtool's order

ORDER_RULES = """\
groups:
  - name: order
    rules:
      - record: s:sum
        expr: sum(s)
      - alert: SumAboveZero
        expr: sum(s) > 0
        annotations: {value: "{{ $value }}"}
"""


def _seq_sum(values: list[float]) -> float:
    total = values[0]
    for v in values[1:]:
        total += v
    return total


def test_staggered_promtool_adds_in_the_embedded_order(tmp_path: Path) -> None:
    """The sum of these 8 values is different for each of their 8 rotations. promtool creates
    unstaggered input series in a random rotation of the file's order (a Go map of 8 entries:
    one bucket, a random start), so the sum agreed in about 1 run in 8; staggered, every run
    agrees."""
    _need_promtool()
    from alerts.evaluator import AlertEvaluator
    from alerts.promtool import record_run, run_promtool, staggered, unit_test_yaml
    from alerts.rules import load_rule_text

    rules = tmp_path / "order.rules.yaml"
    rules.write_text(ORDER_RULES)
    ev = AlertEvaluator(load_rule_text(ORDER_RULES))
    values = [2.0**53, 7.0, 1e15, 3.0, 0.5, 3.0, -1e16, 3.0]
    rotations = {_seq_sum(values[k:] + values[:k]) for k in range(8)}
    assert len(rotations) == 8
    for t in range(0, 61, 15):
        ev.ingest_samples(float(t), [({"__name__": "s", "i": str(i)}, v) for i, v in enumerate(values)])
    sev = staggered(ev)
    st = sev.storage
    run = record_run(sev, int(st.ts[0]), int(st.ts[st.n_rows - 1]), 15_000)
    firing = run.alerts[-1][0]
    assert firing.annotations == {"value": "7.199254741011e+12"}  # values added in the file's order
    path = tmp_path / "order_test.yaml"
    path.write_text(unit_test_yaml(sev, run, rules))
    for _ in range(3):
        res = run_promtool("test", "rules", str(path))
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr


# ---------------------------------------------------------------------------- a rule file with all of it

FEATURE_RULES = """\
groups:
  - name: features
    limit: 40
    rules:
      - record: job:req:sum_over_time
        expr: sum by (job) (sum_over_time(req_total{job=~"(?i)API|web"}[5m]))
      - alert: ErrorShare
        expr: sum by (job) (rate(err_total[2m])) / sum by (job) (rate(req_total{job=~"(?i)api|WEB"}[2m])) > 0.05
        annotations:
          share: "{{ $value | humanizePercentage }}"
      - alert: LookingAhead
        expr: (req_total offset -2m) - req_total < 1 or absent(req_total offset -10m)
        annotations:
          value: "{{ $value }}"
      - alert: Named
        expr: load > 0.5
        annotations:
          summary: "{{ $labels.__name__ }} of {{ $labels.job }} is {{ $value }}"
      - alert: Curved
        expr: exp(avg_over_time(load[5m])) ^ 1.5 + sin(load * 10) + ln(load + 1) + (load atan2 3) > 1.6
        annotations:
          value: "{{ $value }}"
"""


def _feature_series(ev: object) -> None:
    import random

    from alerts.evaluator import AlertEvaluator

    assert isinstance(ev, AlertEvaluator)
    rnd = random.Random(5)
    totals: dict[tuple[str, str, str], float] = {}
    for step in range(80):
        samples: list[tuple[dict[str, str], float]] = []
        for job in ("api", "web", "Batch"):
            for code in ("200", "500", "503", "404"):
                key = (job, code, "req")
                totals[key] = totals.get(key, 0.0) + rnd.uniform(0, 30) * (3 if code == "200" else 0.4)
                samples.append(({"__name__": "req_total", "job": job, "code": code}, totals[key]))
                if code != "200":
                    samples.append(({"__name__": "err_total", "job": job, "code": code}, totals[key]))
            samples.append(({"__name__": "load", "job": job}, rnd.uniform(0, 1)))
        ev.ingest_samples(step * 15.0, samples)


def test_a_rule_file_with_every_feature_agrees_with_promtool(tmp_path: Path) -> None:
    """Negative offsets, inline regex flags, a group limit, compensated sums over time, Go's math,
    $labels.__name__, humanizePercentage of sums of several series: the embedded evaluator's
    alerts and annotations at every step are promtool's, to the last digit."""
    _need_promtool()
    from alerts.evaluator import AlertEvaluator
    from alerts.promtool import record_run, run_promtool, staggered, unit_test_yaml
    from alerts.rules import load_rule_text

    rules = tmp_path / "features.rules.yaml"
    rules.write_text(FEATURE_RULES)
    ev = AlertEvaluator(load_rule_text(FEATURE_RULES))
    _feature_series(ev)
    sev = staggered(ev)
    st = sev.storage
    run = record_run(sev, int(st.ts[0]), int(st.ts[st.n_rows - 1]), 15_000)
    assert not sev.rule_errors()
    fired = {a.rule for snap in run.alerts for a in snap if a.state == "firing"}
    assert fired == {"ErrorShare", "LookingAhead", "Named", "Curved"}, fired
    named = next(a for snap in run.alerts for a in snap if a.rule == "Named")
    assert named.annotations["summary"].startswith("load of ")
    path = tmp_path / "features_test.yaml"
    path.write_text(unit_test_yaml(sev, run, rules))
    res = run_promtool("test", "rules", str(path))
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr


def test_rule_evaluation_sees_no_sample_after_its_time() -> None:
    """A run evaluated after it was recorded reads what it read live (and what promtool reads):
    ``absent(x offset -10m)`` holds, ``x offset -2m`` is the newest sample so far."""
    from alerts.evaluator import AlertEvaluator
    from alerts.rules import load_rule_text

    ev = AlertEvaluator(load_rule_text("groups:\n- name: g\n  rules:\n  - alert: Absent\n"
                                       "    expr: absent(x offset -10m)\n  - alert: Ahead\n"
                                       "    expr: (x offset -2m) == 5\n"))
    for t in range(0, 901, 15):
        ev.ingest_samples(float(t), [({"__name__": "x"}, float(t // 60))])
    trs = ev.evaluate(300.0)
    assert [(tr.rule, tr.to_state, tr.value) for tr in trs if tr.to_state == "firing"] == [
        ("Absent", "firing", 1.0), ("Ahead", "firing", 5.0)]  # x at 5m, not at 7m
