"""Go ``text/template`` semantics of alert labels and annotations, checked against promtool 2.42.

Every case below is a small self-written rule: its annotation (or label) templates exercise
one feature of Prometheus' templates -- actions (``if``/``else if``/``range``/``with``/
``define``/``template``/``block``/``break``/``continue``), variables, pipelines, field
chains, Go's builtins and comparison rules, Prometheus' functions (``query`` included,
against the same series), Go's ``printf`` verbs, and Go's execution and parse errors.

The embedded evaluator renders them; :func:`_promtool_agrees` writes a ``promtool test
rules`` file whose expected labels and annotations are those renderings, over the same
series, and promtool must pass it (a negative control proves it compares them). Parse
errors are compared with ``promtool check rules``. Without promtool these tests skip,
except in CI (``CI`` set), where they fail.

A few expectations are also written out as Go prints them, so that the file fails on an
engine that is not Go's even where promtool is absent.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
import yaml

from alerts.evaluator import AlertEvaluator
from alerts.gofmt import go_float, sprintf
from alerts.promtool import record_run, run_promtool, unit_test_yaml
from alerts.rules import RuleFileError, load_rule_file, load_rule_text
from alerts.templates import Template, TemplateData, TemplateError
from tests.conftest import need_promtool

SERIES = [  # (labels, value): one alert per series for every rule below
    ({"instance": "host.example.com:9100", "job": "node", "sev": "crit", "pct": "12.5", "big": "1e400",
      "empty": "", "case": "a"}, 0.25),
    ({"instance": "10.0.0.1:80", "job": "api", "sev": "warn", "pct": "x", "case": "b"}, 1e6),
    ({"instance": "[::1]:9090", "job": "node", "case": "c"}, -1.5),
    ({"instance": "db", "job": "db", "case": "d"}, 123456789.123),
    ({"instance": "h:1", "job": "z", "case": "e"}, 0.0),
    ({"instance": "h:2", "job": "nan", "case": "f"}, math.nan),
    ({"instance": "h:3", "job": "one", "case": "g"}, 1.0),
]
METRIC = "tpl_metric"

DATA = Path(__file__).parent / "data" / "alert-templates"
FEATURES = DATA / "features.rules.yaml"
"""One rule per feature: its annotation ``a`` is the template (178 of them)."""
PARSE_ERRORS = DATA / "parse-errors.rules.yaml"
"""One rule per template that Go refuses (the file does not load, on purpose)."""


def _annotations(path: Path) -> list[str]:
    return [r["annotations"]["a"] for r in yaml.safe_load(path.read_text())["groups"][0]["rules"]]


PRINTF_VERBS = ["%v", "%d", "%s", "%q", "%f", "%.2f", "%e", "%E", "%g", "%G", "%.3g", "%x", "%X", "%o", "%b",
                "%t", "%c", "%U", "%#U", "%T", "%08.3f", "%-8.2f|", "%+d", "% d", "%+.1e", "%#g", "%#x", "%5s|",
                "%-5s|", "%.2s", "%+q", "%#q", "% x", "%05d", "%3c", "%F", "%10.4v|", "%w", "%!",
                "%[2]v %[1]v", "%*d", "%.*f", "%d %d", "%z", "%"]
PRINTF_ARGS = ["$value", "1", "-42", "255", "0x1F600", "1.5", "2.5", "0.000012345", "1e21", "123456.0", "1234567.0",
               '"ab"', '"héllo\\n"', '"`raw`"', "true", "$labels", ".Labels.job", "(safeHtml \"<b>\")",
               "(args 1 \"a\")", "nil", "65"]


def _printf_cases() -> list[str]:
    """Every verb of :data:`PRINTF_VERBS` with every operand of :data:`PRINTF_ARGS`, one
    annotation per verb (operands joined by ``|``)."""
    out = []
    for verb in PRINTF_VERBS:
        parts = []
        for arg in PRINTF_ARGS:
            extra = " 3" if "*" in verb or "%[2]" in verb or "%d %d" in verb else ""
            parts.append("{{ printf " + _go_quote(verb) + f" {arg}{extra} }}}}")
        out.append("|".join(parts))
    return out


def _go_quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


LABEL_CASES = {  # label templates (Prometheus expands them too; an empty result drops the label)
    "severity": "{{ if gt $value 0.5 }}page{{ else if lt $value 0.0 }}negative{{ else }}ticket{{ end }}",
    "owner": "{{ $labels.job | toUpper }}-{{ len $labels }}",
    "dropped": "{{ if eq .Labels.job \"never\" }}x{{ end }}",
    "name": "{{ $labels.__name__ }}",
}

QUERY_CASES = [
    '{{ with query "sum(tpl_metric)" }}{{ . | first | value }}{{ end }}',
    # promtool loads its input series in map order, so a query's order is fixed only by sorting it
    '{{ range query "tpl_metric > 0" | sortByLabel "case" }}{{ .Labels.case }}={{ .Value }};{{ end }}',
    '{{ range query "sort_desc(tpl_metric)" | sortByLabel "job" }}{{ label "job" . }},{{ end }}',
    '{{ query "tpl_metric{case=\\"a\\"}" | first | label "instance" }}',
    '{{ (query "tpl_metric{case=\\"a\\"}" | first).Labels.job }} {{ strvalue (query "vector(1)" | first) }}|',
    '{{ query "scalar(sum(tpl_metric{case=\\"a\\"}))" | first | value }}',
    '{{ query "tpl_metric{case=\\"zzz\\"}" | first }}',
    '{{ len (query "tpl_metric") }} {{ if query "absent(nothing)" }}absent{{ end }}',
    '{{ printf "%.1f" (query "tpl_metric{case=\\"a\\"} * 4" | first | value) }}',
]


def _rule_file(tmp_path: Path, annotations: list[str], labels: dict[str, str] | None = None) -> Path:
    rules = []
    for i, text in enumerate(annotations):
        rule: dict[str, object] = {"alert": f"T{i}", "expr": METRIC, "annotations": {"a": text}}
        if labels and i == 0:
            rule["labels"] = labels
        rules.append(rule)
    path = tmp_path / "templates.rules.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "templates", "rules": rules}]}, allow_unicode=True,
                                   width=1 << 20))
    return path


def _evaluate(path: Path) -> tuple[AlertEvaluator, object]:
    ev = AlertEvaluator(load_rule_file(path), max_template_chars=None)  # promtool sets no bound
    for t in (0.0, 15.0):
        ev.ingest_samples(t, [({**lbls, "__name__": METRIC}, v) for lbls, v in SERIES])
    return ev, record_run(ev, 15_000, 15_000, 15_000)


def _promtool_agrees(tmp_path: Path, path: Path) -> dict[str, list[str]]:
    """Render the rule file with the embedded evaluator, make promtool check every alert's
    labels and annotation ``a``; returns the renderings per rule (one per series)."""
    need_promtool()
    ev, run = _evaluate(path)
    text = unit_test_yaml(ev, run, path)  # type: ignore[arg-type]
    test = tmp_path / "templates.test.yaml"
    test.write_text(text)
    res = run_promtool("test", "rules", str(test))
    assert res.returncode == 0, f"promtool disagrees:\n{res.stdout[-8000:]}{res.stderr[-2000:]}"
    # negative control: alter one expected annotation; promtool must now fail
    doc = yaml.safe_load(text)
    first = next(t for t in doc["tests"][0]["alert_rule_test"] if t["exp_alerts"])
    first["exp_alerts"][0]["exp_annotations"]["a"] += "!"
    bad = tmp_path / "templates.bad.yaml"
    bad.write_text(yaml.safe_dump(doc, allow_unicode=True, width=1 << 20))
    assert run_promtool("test", "rules", str(bad)).returncode != 0, "promtool did not compare the annotations"
    out: dict[str, list[str]] = {}
    for a in run.alerts[-1]:  # type: ignore[attr-defined]
        out.setdefault(a.rule, []).append(a.annotations["a"])
    assert sum(len(v) for v in out.values()) == len(_annotations(path)) * len(SERIES)
    return out


def test_every_template_feature_agrees_with_promtool(tmp_path: Path) -> None:
    got = _promtool_agrees(tmp_path, FEATURES)
    rendered = [x for v in got.values() for x in v]
    errors = sum("<error expanding template" in x for x in rendered)
    assert 0 < errors < len(rendered) // 2, "both working templates and Go's execution errors are covered"
    print(f"{len(got)} templates x {len(SERIES)} series = {len(rendered)} annotations agree with promtool")


def test_printf_verbs_agree_with_promtool(tmp_path: Path) -> None:
    got = _promtool_agrees(tmp_path, _rule_file(tmp_path, _printf_cases()))
    n = sum(len(v) for v in got.values()) * len(PRINTF_ARGS)
    print(f"{len(PRINTF_VERBS)} verbs x {len(PRINTF_ARGS)} operands x {len(SERIES)} series = {n} printf calls agree")


def test_label_templates_and_query_agree_with_promtool(tmp_path: Path) -> None:
    path = _rule_file(tmp_path, QUERY_CASES, LABEL_CASES)
    got = _promtool_agrees(tmp_path, path)
    assert all(not x.startswith("<error") for x in got["T0"]), got["T0"]
    _ev, run = _evaluate(path)
    first = {a.labels["case"]: a.labels for a in run.alerts[-1] if a.rule == "T0"}  # type: ignore[attr-defined]
    assert first["a"]["severity"] == "ticket" and first["b"]["severity"] == "page"
    assert first["c"]["severity"] == "negative" and "dropped" not in first["a"]
    assert first["a"]["owner"] == "NODE-7" and first["a"]["name"] == METRIC and "__name__" not in first["a"]


def test_parse_errors_read_as_promtools(tmp_path: Path) -> None:
    """Each template that Go refuses: our load error is promtool's ``check rules`` line."""
    need_promtool()
    path = PARSE_ERRORS
    res = run_promtool("check", "rules", str(path))
    assert res.returncode != 0
    theirs = {}
    for line in (res.stdout + res.stderr).splitlines():
        m = re.search(r'rule \d+, "(P\d+)": annotation "a": (.*)$', line)
        if m:
            theirs[m.group(1)] = m.group(2)
    ours = {}
    for i, t in enumerate(_annotations(path)):
        with pytest.raises(TemplateError) as exc:
            Template(t, f"P{i}")
        ours[f"P{i}"] = exc.value.message
    assert ours == theirs
    with pytest.raises(RuleFileError) as err:
        load_rule_file(path)
    assert f'annotations.a: {ours["P0"]}' in str(err.value)
    print(f"{len(ours)} parse errors read as promtool's")


# ------------------------------------------------------------------ Go's output, written out


def test_go_values_print_as_go_prints_them() -> None:
    data = TemplateData({"b": "2", "a": "1", "__name__": "up"}, 0.25, {"c": "x"})
    assert Template("{{ $labels }}").expand(data) == "map[__name__:up a:1 b:2]"
    assert Template("{{ . }}").expand(data) == "{map[__name__:up a:1 b:2] map[c:x]  0.25}"
    assert Template('{{ printf "%d|%s|%5.1f|%x" $value $value $value 255 }}').expand(data) == \
        "%!d(float64=0.25)|%!s(float64=0.25)|  0.2|ff"
    assert Template('{{ printf "%d %s" 1 }} {{ printf "x" 1 }}').expand(data) == "1 %!s(MISSING) x%!(EXTRA int=1)"
    assert [go_float(v) for v in (1e6, 123456.0, 1e-5, 1e21, 0.1)] == ["1e+06", "123456", "1e-05", "1e+21", "0.1"]
    assert sprintf("%g %G %.3g %#g %v", 1e-7, 1e-7, 1234.5678, 1.0, 100000.0) == "1e-07 1E-07 1.23e+03 1.00000 100000"
    assert Template('{{ title "hELLO wOrld" }} {{ toUpper "straße" }}').expand(data) == "HELLO WOrld STRAßE"


def test_control_structures_and_errors() -> None:
    data = TemplateData({"job": "node", "instance": "h:9"}, 2.0, {})
    t = '{{ range $k, $v := $labels }}{{ if eq $k "job" }}{{ continue }}{{ end }}{{ $k }}={{ $v }}{{ end }}'
    assert Template(t).expand(data) == "instance=h:9"
    assert Template('{{ define "x" }}<{{ . }}>{{ end }}{{ template "x" .Labels.job }}').expand(data) == "<node>"
    assert Template("{{ with .Labels.missing }}a{{ else }}b{{ end }}{{- \"  c  \" -}}  d").expand(data) == "b  c  d"
    assert Template("{{ eq $value 2 }}", "A").expand(data) == (
        '<error expanding template: error executing template __alert_A: template: __alert_A:1:115: '
        'executing "__alert_A" at <eq $value 2>: error calling eq: incompatible types for comparison>')
    with pytest.raises(TemplateError, match=r'^template: __alert_A:2: function "nosuch" not defined$'):
        Template("ok\n{{ nosuch }}", "A")


def test_recording_rule_labels_are_not_templates() -> None:
    rs = load_rule_text("groups:\n- name: g\n  rules:\n  - record: r\n    expr: up\n    labels:\n"
                        "      x: '{{ unclosed'\n", "r.yaml")
    assert rs.rules[0].labels == {"x": "{{ unclosed"}
