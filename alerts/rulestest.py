"""``marathon rules test``: run ``promtool test rules`` unit-test files on the embedded evaluator.

The file format, the evaluation loop, the comparisons, the messages and the exit codes are
those of ``cmd/promtool/unittest.go`` of Prometheus v2.42.0 (read at that tag):

* a unit-test file (``yaml.UnmarshalStrict``: unknown fields are errors) has ``rule_files``
  (relative to the test file, globbed; a pattern matching nothing prints
  ``  WARNING: no file match pattern P``), ``evaluation_interval`` (default 1m),
  ``group_eval_order`` and ``tests``; each test group has ``interval`` (the input series'
  step; 2.42 has no default: 0 puts every sample at time 0, where the first one wins),
  ``input_series`` (series notation: ``_``, ``stale``, ``axN``, ``a+bxN``, ``a-bxN``),
  ``alert_rule_test``, ``promql_expr_test``, ``external_labels``, ``external_url`` and
  ``name``;
* each test group loads the rule files afresh and evaluates every group at ``0, i, 2i, ...``
  up to the largest ``eval_time`` of the group (``i`` = ``evaluation_interval``; a group's own
  ``interval`` is ignored, as ``Group.Eval`` is called directly), with the input samples
  appended up to each evaluation time first (``LazyLoader.WithSamplesTill``); a rule that
  fails to evaluate ends the test group with ``    rule: R, time: T, err: E`` lines;
* an alert test at ``eval_time`` t is checked after the evaluation at the ``ts`` with
  ``ts <= t < ts + i``, against the *firing* alerts of every rule of that name; both sides
  are sorted by labels, then annotations (``labels.Compare``) and compared exactly;
* a PromQL test is an instant query at ``eval_time`` after the whole loop (so it sees the
  samples up to the largest ``eval_time``), lookback 5m, default subquery step ``i``;
  values are compared with ``==`` (``reflect.DeepEqual``: a NaN never equals a NaN);
* output: ``Unit Testing:  FILE`` and ``  SUCCESS`` on stdout, ``  FAILED:`` and every
  error on stderr with one empty stdout line per error, an empty stdout line per file;
  exit code 0 when every file passed, 1 otherwise.

``--run REGEX`` (from promtool 2.50; repeatable, the expressions joined with ``|``) runs only
the test groups whose ``name`` matches (unanchored, as Go's ``regexp.MatchString``).

Differences that remain (also in the README's "Your own rules"): PromQL syntax errors whose
position the message does not give keep ``promql-parser``'s wording (:func:`go_parse_message`
translates the others); rule-file problems are all reported, each with its position (promtool:
the first go-yaml error); a construct the embedded evaluator does not implement is refused at
load; promtool evaluates the groups not named in ``group_eval_order`` in random order (a Go
map), this runner in file order; promtool's 10,000-sample query limit is not enforced; YAML
syntax errors carry PyYAML's wording after ``yaml: line N:``.
"""

from __future__ import annotations

import bisect
import glob
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from alerts.evaluator import AlertEvaluator
from alerts.gofmt import quote as go_quote
from alerts.gofmt import quote_rune
from alerts.promql.engine import CompileOptions, EvalContext, compile_query
from alerts.promql.labels import LabelPairs
from alerts.promql.storage import BoolArray, FloatArray, IntArray, Storage
from alerts.promql.testlang import parse_series_desc, parse_values
from alerts.promql.values import QueryError, UnsupportedError, Vector
from alerts.rules import RuleFileError, RuleGroup, RuleSet, load_rule_file
from engine.inputs.safeyaml import MAX_NODES, YamlInputError, parse_yaml_node, read_text
from engine.kubectl.gofmt import go_format_float

OPTIONS = CompileOptions(negative_offset=True)
"""promtool's ``test rules`` enables the ``@`` modifier and negative offsets (main.go, 2.42)."""

LOOKBACK_MS = 300_000
"""The PromQL lookback delta of promtool's test engine (the default 5m)."""

DEFAULT_EVAL_INTERVAL_MS = 60_000
"""unittest.go: ``evaluation_interval`` defaults to 1m."""

# ---------------------------------------------------------------- Go formatting


def labels_string(pairs: Sequence[tuple[str, str]]) -> str:
    """Prometheus 2.42 ``labels.Labels.String()``: ``{a="1", b="2"}`` (``__name__`` inside)."""
    return "{" + ", ".join(f"{k}={go_quote(v)}" for k, v in pairs) + "}"


def format_float_e(value: float) -> str:
    """Go's ``strconv.FormatFloat(v, 'E', -1, 64)``: shortest digits, ``1.5E+01``, ``NaN``, ``+Inf``."""
    return go_format_float(value, "e").replace("e", "E")


def go_duration(ms: int) -> str:
    """Go's ``time.Duration.String()`` of ``ms`` milliseconds (``0s``, ``1m0s``, ``2m59.999s``, ``500ms``)."""
    if ms == 0:
        return "0s"
    sign = "-" if ms < 0 else ""
    ms = abs(ms)
    if ms < 1000:
        return f"{sign}{ms}ms"
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, frac = divmod(rest, 1000)
    sec = f"{s}" + (f".{frac:03d}".rstrip("0") if frac else "") + "s"
    if h:
        return f"{sign}{h}h{m}m{sec}"
    if m:
        return f"{sign}{m}m{sec}"
    return sign + sec


_MODEL_UNITS = (("y", 31_536_000_000, True), ("w", 604_800_000, True), ("d", 86_400_000, False),
                ("h", 3_600_000, False), ("m", 60_000, False), ("s", 1000, False), ("ms", 1, False))


def model_duration_string(ms: int) -> str:
    """prometheus/common v0.39 ``model.Duration.String()`` (``0s``, ``5m``, ``1w``, ``90d``, ``1h30m500ms``)."""
    if ms == 0:
        return "0s"
    out = ""
    for unit, mult, exact in _MODEL_UNITS:
        if exact and ms % mult:
            continue
        v = ms // mult
        if v > 0:
            out += f"{v}{unit}"
            ms -= v * mult
    return out


_MODEL_DURATION = re.compile(r"^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$")


class _Fatal(Exception):
    """An error that ends decoding of a file (yaml.v2 ``fail``): printed as is."""


def parse_model_duration(text: str) -> int:
    """prometheus/common v0.39 ``model.ParseDuration`` in milliseconds.

    Raises:
        _Fatal: promtool's message (``not a valid duration string: "x"``, ``empty duration
            string``, ``duration out of range``).
    """
    if text == "0":
        return 0
    if text == "":
        raise _Fatal("empty duration string")
    m = _MODEL_DURATION.match(text)
    if not m:
        raise _Fatal(f"not a valid duration string: {go_quote(text)}")
    total = 0
    for g, (_, mult, _exact) in zip(m.groups(), _MODEL_UNITS, strict=True):
        if g:
            total += int(g) * mult
            if total * 1_000_000 > 2**63 - 1:
                raise _Fatal("duration out of range")
    return total


# ---------------------------------------------------------------- YAML (yaml.v2 UnmarshalStrict)

_NULLS = {"", "~", "null", "Null", "NULL"}
_BOOLS = {"y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false", "False",
          "FALSE", "on", "On", "ON", "off", "Off", "OFF"}
_FLOAT_SPECIAL = {".inf": math.inf, ".Inf": math.inf, ".INF": math.inf, "+.inf": math.inf, "+.Inf": math.inf,
                  "+.INF": math.inf, "-.inf": -math.inf, "-.Inf": -math.inf, "-.INF": -math.inf,
                  ".nan": math.nan, ".NaN": math.nan, ".NAN": math.nan}
_YAML_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")


def _plain(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and not node.style and node.tag.startswith("tag:yaml.org,2002:")


def _is_null(node: yaml.Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and (node.tag.endswith(":null") or (_plain(node) and
                                                                                  node.value in _NULLS))


def _resolve_number(node: yaml.ScalarNode) -> float | None:
    """A plain scalar as yaml.v2 resolves it to a number (int or float), else None."""
    if not _plain(node):
        return None
    text = node.value
    if text in _FLOAT_SPECIAL:
        return _FLOAT_SPECIAL[text]
    plain = text.replace("_", "")
    sign = -1.0 if plain.startswith("-") else 1.0
    body = plain[1:] if plain[:1] in ("+", "-") else plain
    # strconv.ParseInt(s, 0, 64): a leading 0 is octal, 0x hex, 0b binary, 0o octal.
    if re.fullmatch(r"0[0-7]+", body):
        return sign * int(body, 8)
    if re.fullmatch(r"[0-9]+", body):
        return sign * int(body, 10)
    if re.fullmatch(r"0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO][0-7]+", body):
        return sign * int(body, 0)
    if _YAML_FLOAT.match(plain):
        return float(plain)
    return None


def _short_tag(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "!!map"
    if isinstance(node, yaml.SequenceNode):
        return "!!seq"
    tag = node.tag
    if tag.startswith("tag:yaml.org,2002:"):
        name = tag.rsplit(":", 1)[1]
        if _plain(node):
            if node.value in _NULLS:
                name = "null"
            elif node.value in _BOOLS:
                name = "bool"
            elif isinstance(node, yaml.ScalarNode) and _resolve_number(node) is not None:
                name = "float" if "." in node.value or "e" in node.value.lower() or node.value in _FLOAT_SPECIAL \
                    else "int"
            else:
                name = "str"
        return "!!" + name
    return tag


_COMPOSER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class _Decoder:
    """yaml.v2 strict decoding into promtool's types, collecting its type errors."""

    errors: list[str] = field(default_factory=list)
    nodes: int = 0

    def visit(self, node: yaml.Node) -> None:
        """Count decoded nodes: aliases can make a short file expand without bound."""
        if isinstance(node, (yaml.SequenceNode, yaml.MappingNode)):
            self.nodes += len(node.value)
            if self.nodes > MAX_NODES:
                raise _Fatal(f"the document expands to more than {MAX_NODES:,} nodes through its aliases")

    def terror(self, node: yaml.Node, into: str) -> None:
        tag = _short_tag(node)
        value = ""
        if tag not in ("!!seq", "!!map"):
            v = str(node.value)
            value = f" `{v[:7]}...`" if len(v) > 10 else f" `{v}`"
        self.errors.append(f"line {node.start_mark.line + 1}: cannot unmarshal {tag}{value} into {into}")

    def string(self, node: yaml.Node, into: str = "string") -> str | None:
        if _is_null(node):
            return ""
        if not isinstance(node, yaml.ScalarNode):
            self.terror(node, into)
            return None
        return str(node.value)

    def duration(self, node: yaml.Node) -> int:
        text = self.string(node)
        if _is_null(node) or text is None:
            return 0
        return parse_model_duration(text)

    def number(self, node: yaml.Node) -> float:
        if _is_null(node):
            return 0.0
        if isinstance(node, yaml.ScalarNode):
            v = _resolve_number(node)
            if v is not None:
                return v
        self.terror(node, "float64")
        return 0.0

    def strings(self, node: yaml.Node) -> list[str]:
        if _is_null(node):
            return []
        if not isinstance(node, yaml.SequenceNode):
            self.terror(node, "[]string")
            return []
        self.visit(node)
        out = []
        for item in node.value:
            s = self.string(item)
            if s is not None:
                out.append(s)
        return out

    def string_map(self, node: yaml.Node, into: str = "map[string]string") -> dict[str, str] | None:
        if _is_null(node):
            return None
        if not isinstance(node, yaml.MappingNode):
            self.terror(node, into)
            return None
        self.visit(node)
        out: dict[str, str] = {}
        for k, v in node.value:
            key = self.string(k)
            val = self.string(v)
            if key is None or val is None:
                continue
            if key in out:
                self.errors.append(f"line {k.start_mark.line + 1}: key {go_quote(key)} already set in map")
            out[key] = val
        return out

    def struct(self, node: yaml.Node, type_name: str, fields: Sequence[str]) -> dict[str, yaml.Node] | None:
        if _is_null(node):
            return {}
        if not isinstance(node, yaml.MappingNode):
            self.terror(node, type_name)
            return None
        self.visit(node)
        out: dict[str, yaml.Node] = {}
        for k, v in node.value:
            name = str(k.value) if isinstance(k, yaml.ScalarNode) else ""
            if name not in fields:
                self.errors.append(f"line {k.start_mark.line + 1}: field {name} not found in type {type_name}")
                continue
            if name in out:
                self.errors.append(f"line {k.start_mark.line + 1}: field {name} already set in type {type_name}")
            out[name] = v
        return out

    def items(self, node: yaml.Node, into: str) -> list[yaml.Node]:
        if _is_null(node):
            return []
        if not isinstance(node, yaml.SequenceNode):
            self.terror(node, into)
            return []
        self.visit(node)
        return list(node.value)


@dataclass
class AlertCase:
    """One ``alert_rule_test`` item: eval time (ms), alert name, expected (labels, annotations)."""

    eval_ms: int
    alertname: str
    exp_alerts: list[tuple[dict[str, str], dict[str, str]]]


@dataclass
class ExprCase:
    """One ``promql_expr_test`` item: expression, eval time (ms), expected (labels text, value)."""

    expr: str
    eval_ms: int
    exp_samples: list[tuple[str, float]]


@dataclass
class TestGroup:
    """One entry of ``tests`` (promtool's ``testGroup``)."""

    interval_ms: int = 0
    input_series: list[tuple[str, str]] = field(default_factory=list)
    alert_tests: list[AlertCase] = field(default_factory=list)
    expr_tests: list[ExprCase] = field(default_factory=list)
    external_labels: dict[str, str] = field(default_factory=dict)
    external_url: str = ""
    name: str = ""


@dataclass
class UnitTestFile:
    """A parsed unit-test file (promtool's ``unitTestFile``); ``rule_files`` as written."""

    rule_files: list[str] = field(default_factory=list)
    evaluation_interval_ms: int = 0
    group_eval_order: list[str] = field(default_factory=list)
    tests: list[TestGroup] = field(default_factory=list)


def parse_unit_test_yaml(text: str) -> UnitTestFile:
    """Decode a unit-test file as promtool's ``yaml.UnmarshalStrict`` does.

    Raises:
        ValueError: the message promtool prints (``yaml: unmarshal errors:\\n  line N: ...``,
            a duration error, or ``yaml: line N: <syntax problem>``).
    """
    try:
        # Only the node tree is needed (decoded below, as go-yaml decodes; repeated keys are its
        # decoding errors), so libyaml composes it when present: 10x PyYAML's speed on the large
        # files `alerts.promtool` writes. Aliases are bounded while decoding (_Decoder.visit).
        root = yaml.compose(text, Loader=_COMPOSER)
    except (yaml.YAMLError, ValueError, RecursionError):
        try:  # the same failure again, for the project's wording and position of YAML errors
            parse_yaml_node(text)
        except YamlInputError as exc:
            raise ValueError(f"yaml: line {exc.line or 1}: {exc.problem}") from None
        raise ValueError("yaml: not a valid YAML document") from None
    d = _Decoder()
    out = UnitTestFile()
    try:
        top = d.struct(root, "main.unitTestFile",
                       ("rule_files", "evaluation_interval", "group_eval_order", "tests")) if root is not None else {}
        for key, node in (top or {}).items():
            if key == "rule_files":
                out.rule_files = d.strings(node)
            elif key == "evaluation_interval":
                out.evaluation_interval_ms = d.duration(node)
            elif key == "group_eval_order":
                out.group_eval_order = d.strings(node)
            else:
                out.tests = [_test_group(d, n) for n in d.items(node, "[]main.testGroup")]
    except _Fatal as exc:
        raise ValueError(str(exc)) from None
    if d.errors:
        raise ValueError("yaml: unmarshal errors:\n  " + "\n  ".join(d.errors))
    return out


def _test_group(d: _Decoder, node: yaml.Node) -> TestGroup:
    tg = TestGroup()
    f = d.struct(node, "main.testGroup", ("interval", "input_series", "alert_rule_test", "promql_expr_test",
                                          "external_labels", "external_url", "name")) or {}
    for key, v in f.items():
        if key == "interval":
            tg.interval_ms = d.duration(v)
        elif key == "input_series":
            for item in d.items(v, "[]main.series"):
                s = d.struct(item, "main.series", ("series", "values")) or {}
                series = d.string(s["series"]) if "series" in s else ""
                values = d.string(s["values"]) if "values" in s else ""
                tg.input_series.append((series or "", values or ""))
        elif key == "alert_rule_test":
            for item in d.items(v, "[]main.alertTestCase"):
                a = d.struct(item, "main.alertTestCase", ("eval_time", "alertname", "exp_alerts")) or {}
                case = AlertCase(d.duration(a["eval_time"]) if "eval_time" in a else 0,
                                 (d.string(a["alertname"]) or "") if "alertname" in a else "", [])
                for e in d.items(a["exp_alerts"], "[]main.alert") if "exp_alerts" in a else []:
                    ef = d.struct(e, "main.alert", ("exp_labels", "exp_annotations")) or {}
                    labels = d.string_map(ef["exp_labels"]) if "exp_labels" in ef else None
                    annotations = d.string_map(ef["exp_annotations"]) if "exp_annotations" in ef else None
                    case.exp_alerts.append((labels or {}, annotations or {}))
                tg.alert_tests.append(case)
        elif key == "promql_expr_test":
            for item in d.items(v, "[]main.promqlTestCase"):
                p = d.struct(item, "main.promqlTestCase", ("expr", "eval_time", "exp_samples")) or {}
                ecase = ExprCase((d.string(p["expr"]) or "") if "expr" in p else "",
                                 d.duration(p["eval_time"]) if "eval_time" in p else 0, [])
                for smp in d.items(p["exp_samples"], "[]main.sample") if "exp_samples" in p else []:
                    sf = d.struct(smp, "main.sample", ("labels", "value")) or {}
                    ecase.exp_samples.append(((d.string(sf["labels"]) or "") if "labels" in sf else "",
                                              d.number(sf["value"]) if "value" in sf else 0.0))
                tg.expr_tests.append(ecase)
        elif key == "external_labels":
            tg.external_labels = d.string_map(v, "map[string]string") or {}
        elif key == "external_url":
            tg.external_url = d.string(v) or ""
        else:
            tg.name = d.string(v) or ""
    return tg


# ---------------------------------------------------------------- series notation


def _col(text: str, i: int) -> int:
    """1-based column of character offset ``i`` as Go counts it (bytes)."""
    return len(text[:i].encode()) + 1


class _At:
    """``at + message``: Go's ``1:COL: parse error: message`` for offset ``i`` (the column is only
    computed for an error)."""

    __slots__ = ("i", "text")

    def __init__(self, text: str, i: int) -> None:
        self.text, self.i = text, i

    def __add__(self, message: str) -> str:
        return f"1:{_col(self.text, self.i)}: parse error: {message}"


def _label_set_error(text: str) -> tuple[str | None, int]:
    """The Go parser's first error in the ``{...}`` part of a series description or metric
    (``promql/parser``: ``lexInsideBraces`` and the ``label_set`` grammar), as
    ``1:COL: parse error: ...``, and the offset after the closing brace (0 when there is none)."""
    start = text.find("{")
    if start < 0:
        return None, 0
    expect = "name"  # name | "=" | string | "," (comma or close)
    i = start + 1
    while i < len(text):
        ch = text[i]
        at = _At(text, i)
        if ch in " \t\r\n":
            i += 1
            continue
        if ch == "}":
            if expect in ("=", "string"):
                return at + f'unexpected "}}" in label set, expected {_EXPECTED[expect]}', i
            return None, i + 1
        if ch == ",":
            if expect != ",":
                return at + f'unexpected "," in label set, expected {_EXPECTED[expect]}', i
            expect = "name"
            i += 1
        elif text.startswith(("=~", "!=", "!~"), i) or ch == "=":
            op = text[i:i + 2] if ch != "=" or text.startswith("=~", i) else "="
            if expect != "=" or op != "=":
                return at + f"unexpected <op:{op}> in label set, expected {_EXPECTED[expect]}", i
            expect = "string"
            i += len(op)
        elif ch.isalpha() or ch == "_":
            j = i
            while j < len(text) and (text[j].isalnum() or text[j] == "_"):
                j += 1
            if expect != "name":
                return at + f"unexpected identifier {go_quote(text[i:j])} in label set, expected {_EXPECTED[expect]}", i
            expect = "="
            i = j
        elif ch in "\"'`":
            j = i + 1
            while j < len(text) and text[j] != ch:
                j += 2 if text[j] == "\\" and ch != "`" else 1
            if j >= len(text):
                return at + "unterminated quoted string", i
            if expect != "string":
                return at + f"unexpected string {text[i:j + 1]} in label set, expected {_EXPECTED[expect]}", i
            expect = ","
            i = j + 1
        else:
            return at + f"unexpected character inside braces: {_go_rune(ch)}", i
    return f"1:{_col(text, len(text))}: parse error: unexpected end of input inside braces", len(text)


_EXPECTED = {"name": 'label', "=": '"="', "string": "string", ",": '"," or "}"'}


def _values_error(text: str, pos: int) -> str | None:
    """The Go parser's first error in the values of a series description from offset ``pos``
    (``lexValueSequence`` and the ``series_values`` grammar), or None."""
    state = "item"
    i = pos
    n = len(text)
    while True:
        while i < n and text[i] in " \t":
            i += 1
            state = "item" if state in ("blank", "value", "done") else state
        at = _At(text, i)
        if i >= n:
            return None if state in ("item", "blank", "value", "done") else \
                f"1:{_col(text, n)}: parse error: unexpected end of input in series values"
        ch = text[i]
        if ch == "x":
            kind, j = "x", i + 1
        elif ch in "+-":
            kind, j = "op", i + 1
        elif ch == "_":
            kind, j = "_", i + 1
        elif ch.isdigit() or (ch == "." and text[i + 1: i + 2].isdigit()):
            m = re.compile(r"[0-9]*\.?[0-9]*(?:[eE][+-]?[0-9]+)?").match(text, i)
            j = m.end() if m else i + 1
            unit = re.compile(r"(ms|[smhdwy])").match(text, j)
            if unit:
                return at + f"unexpected duration {go_quote(text[i:unit.end()])} in series values"
            kind = "num"
        elif ch.isalpha():
            m = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*").match(text, i)
            j = m.end() if m else i + 1
            word = text[i:j]
            kind = "num" if word.lower() in ("inf", "nan") else "stale" if word == "stale" else "ident"
            if kind == "ident":
                if state == "item":
                    return at + f'unexpected identifier {go_quote(word)} in series values, expected number or "stale"'
                return at + f"unexpected identifier {go_quote(word)} in series values"
        else:
            return at + f"unexpected character in series sequence: {_go_rune(ch)}"
        token = text[i:j]
        if state == "item":
            if kind == "x":
                return at + 'unexpected "x"'
            state = {"_": "blank", "num": "value", "stale": "value", "op": "sign"}[kind]
        elif state == "sign":  # a sign before the first number of an item, or before a step
            if kind != "num":
                return at + f"unexpected {_token_name(kind, token)} in series values"
            state = "value"
        elif state == "value":
            if kind == "x":
                state = "count"
            elif kind == "op":
                state = "stepsign"
            else:
                return at + f"unexpected {_token_name(kind, token)} in series values"
        elif state == "stepsign":
            if kind != "num":
                return at + f"unexpected {_token_name(kind, token)} in series values"
            state = "step"
        elif state in ("step", "blank"):
            if kind != "x":
                return at + f"unexpected {_token_name(kind, token)} in series values"
            state = "count"
        elif state == "count":
            if kind != "num":
                return at + f"unexpected {_token_name(kind, token)} in series values"
            state = "done"
        else:  # done: an item is complete, a space must follow
            return at + f"unexpected {_token_name(kind, token)} in series values"
        i = j


def _token_name(kind: str, token: str) -> str:
    """How Go's parser names a token in an error (``<op:->``, ``"x"``, ``number "1"``)."""
    if kind == "op":
        return f"<op:{token}>"
    if kind == "x":
        return '"x"'
    if kind == "_":
        return '"_"'
    return f"number {go_quote(token)}"


def _go_rune(ch: str) -> str:
    """Go's ``%q`` of a rune."""
    return quote_rune(ord(ch))


def parse_metric(text: str) -> LabelPairs:
    """``parser.ParseMetric``: ``name``, ``name{a="b"}`` or ``{a="b"}`` (empty text: no labels), sorted.

    Raises:
        ValueError: Go's parse error (``1:COL: parse error: ...``) where it can be reproduced.
    """
    if not text.strip():
        return ()
    err, _ = _label_set_error(text)
    if err is not None:
        raise ValueError(err)
    try:
        labels, rest = parse_series_desc(text)
    except ValueError:
        raise ValueError(f"1:1: parse error: unexpected character: {_go_rune(text.strip()[0])}") from None
    if rest:
        raise ValueError(f"1:{len(text) - len(rest) + 1}: parse error: unexpected {rest.split()[0]!r}")
    return labels


def parse_input_series(series: Sequence[tuple[str, str]], step_ms: int) -> \
        dict[LabelPairs, tuple[IntArray, FloatArray, BoolArray]]:
    """The samples of ``input_series`` as promtool's lazy loader holds them.

    Each ``series values`` line is one line of a ``load`` command (trimmed; a line starting
    with ``#`` or empty ends the command there, as ``getLines``/``parseLoad`` do). A series
    given twice keeps the last definition; samples at one timestamp keep the first (what
    the TSDB head keeps from one commit: with ``interval`` 0 every sample is at time 0).

    Returns:
        ``{labels: (sample times in ms [N], values [N] (NaN at markers), staleness markers [N])}``.

    Raises:
        ValueError: Go's message (``1:COL: parse error: ...``).
    """
    out: dict[LabelPairs, tuple[IntArray, FloatArray, BoolArray]] = {}
    for name, values in series:
        line = f"{name} {values}".strip()
        if not line or line.startswith("#"):
            break
        err, after = _label_set_error(line)
        if err is None:
            if not after:
                metric = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line)
                after = metric.end() if metric else 0
            err = _values_error(line, after)
        if err is not None:
            raise ValueError(err)
        try:
            labels, rest = parse_series_desc(line)
            vals = parse_values(rest)
        except ValueError as exc:
            raise ValueError(f"1:1: parse error: {exc}") from None
        idx = [k for k, v in enumerate(vals) if v is not None]
        if step_ms == 0:
            idx = idx[:1]
        raw = [vals[k] for k in idx]
        stale = np.asarray([v == "stale" for v in raw], dtype=bool)
        value = np.asarray([math.nan if isinstance(v, str) else v for v in raw], dtype=np.float64)
        out[labels] = (np.asarray(idx, dtype=np.int64) * step_ms, value, stale)
    return out


# ---------------------------------------------------------------- running


@dataclass
class FileResult:
    """What one file printed: ``chunks`` of (``"out"`` | ``"err"``, text) in order, and whether it passed."""

    chunks: list[tuple[str, str]]
    passed: bool


_AT_END = {
    "unclosed left parenthesis": "unclosed left parenthesis",
    "unexpected end of input inside braces": "unexpected end of input inside braces",
    "unexpected end of input inside brackets": "unclosed left bracket",
    "unexpected end of input in offset, expected duration": "unexpected end of input in offset, expected duration",
    "unexpected end of input in @, expected timestamp": "unexpected end of input in @, expected timestamp",
}
"""``promql-parser`` messages of errors at the end of the input, and Go's wording of them."""

_TRAILING_OPERATOR = re.compile(r"(\+|-|\*|/|%|\^|==|!=|<=|>=|<|>|\band|\bor|\bunless|\bbool)\s*$")
_TYPE_NAMES = {"matrix": "range vector", "vector": "instant vector", "scalar": "scalar", "string": "string"}


def _go_position(expr: str, pos: int) -> str:
    """``LINE:COL`` of character offset ``pos`` as Go's ``ParseErr`` counts it (bytes, 1-based)."""
    head = expr[:pos].encode()
    newline = b"\n"
    return f"{head.count(newline) + 1}:{len(head) - head.rfind(newline)}"


def go_parse_message(expr: str, message: str) -> str:
    """Go's wording and position (``1:5: parse error: ...``) of the PromQL syntax errors
    ``promql-parser`` words differently, where the position follows from the message (checked
    against ``promtool check rules`` 2.42); other messages are returned unchanged."""
    end = f"{_go_position(expr, len(expr))}: parse error: "
    if message in _AT_END:
        return end + _AT_END[message]
    if message == "invalid promql query":
        if re.search(r"\b(by|without)\s*$", expr):
            return end + 'unexpected end of input in grouping opts, expected "("'
        if _TRAILING_OPERATOR.search(expr):
            return end + "unexpected end of input"
        return message
    m = re.fullmatch(r"expected type (\w+) in call to function '([^']+)', got (\w+)", message)
    if m and m.group(1) in _TYPE_NAMES and m.group(3) in _TYPE_NAMES:
        call = re.search(rf"\b{re.escape(m.group(2))}\s*\(\s*", expr)
        if call:
            return (f"{_go_position(expr, call.end())}: parse error: expected type {_TYPE_NAMES[m.group(1)]} in call "
                    f'to function "{m.group(2)}", got {_TYPE_NAMES[m.group(3)]}')
    m = re.fullmatch(r"expected (\d+) argument\(s\) in call to '([^']+)', got (\d+)", message)
    call = re.search(rf"\b{re.escape(m.group(2))}\s*\(", expr) if m else None
    if m and call:
        return (f"{_go_position(expr, call.start())}: parse error: expected {m.group(1)} argument(s) in call to "
                f'"{m.group(2)}", got {m.group(3)}')
    m = re.fullmatch(r"unexpected character: '(.)'", message)
    if m and m.group(1) in expr:
        return f"{_go_position(expr, expr.index(m.group(1)))}: parse error: {message}"
    if message.startswith("unterminated quoted string"):
        start = _unterminated_string(expr)
        if start is not None:
            return f"{_go_position(expr, start)}: parse error: unterminated quoted string"
    m = re.fullmatch(r"unknown function with name '([^']+)'", message)
    call = re.search(rf"\b{re.escape(m.group(1))}\s*\(", expr) if m else None
    if m and call:
        return f'{_go_position(expr, call.start())}: parse error: unknown function with name "{m.group(1)}"'
    return message


def _unterminated_string(expr: str) -> int | None:
    """Offset of the quote opening a string that never ends (Go's strings: ``"``, ``'``, raw ````` ``), or None."""
    i = 0
    while i < len(expr):
        q = expr[i]
        if q in "\"'`":
            j = i + 1
            while j < len(expr) and expr[j] != q:
                j += 2 if expr[j] == "\\" and q != "`" else 1
            if j >= len(expr):
                return i
            i = j
        i += 1
    return None


def _rule_errors(exc: RuleFileError) -> list[str]:
    """promtool's ``FILE: LINE:COL: group "G", rule N, "R": message`` lines for a rule file."""
    out = []
    for p in exc.problems:
        message = p.message
        prefix = "could not parse expression: "
        expr = _expr_of(exc.path, p) if message.startswith(prefix) and p.group is not None else ""
        if expr:
            message = prefix + go_parse_message(expr, message[len(prefix):])
        if p.group is None or p.index is None:
            where = f"{p.line}:{p.column or 1}: " if p.line is not None else ""
            out.append(f"{exc.path}: {where}{message}")
            continue
        where = f"{p.line}:{p.column or 1}: " if p.line is not None else ""
        out.append(f"{exc.path}: {where}group {go_quote(p.group)}, rule {p.index + 1}, {go_quote(p.rule or '')}: "
                   f"{message}")
    return out


def _expr_of(path: str, problem: Any) -> str:
    """The expression of the rule a loader problem names ("" when it cannot be found)."""
    try:
        data = yaml.safe_load(read_text(path))
        if "groups" not in data and isinstance(data.get("spec"), dict):  # a PrometheusRule resource
            data = data["spec"]
        for g in data.get("groups") or []:
            if g.get("name") == problem.group:
                return str(g["rules"][problem.index].get("expr", ""))
    except (OSError, YamlInputError, yaml.YAMLError, AttributeError, KeyError, IndexError, TypeError):
        pass
    return ""


class _RuleCache:
    """Rule files are loaded once per file run (each test group of promtool reloads them; the
    result is the same), with the errors of the first file that fails."""

    def __init__(self, files: Sequence[str]) -> None:
        self.files = list(files)
        self._loaded: tuple[list[tuple[str, RuleGroup]], list[str]] | None = None

    def get(self) -> tuple[list[tuple[str, RuleGroup]], list[str]]:
        if self._loaded is None:
            groups: list[tuple[str, RuleGroup]] = []
            errors: list[str] = []
            for f in self.files:
                try:
                    rs = load_rule_file(f, options=OPTIONS)
                except RuleFileError as exc:
                    errors = _rule_errors(exc)
                    break
                groups.extend((f, g) for g in rs.groups)
            self._loaded = (groups, errors)
        return self._loaded


def _alerts_string(items: list[tuple[LabelPairs, LabelPairs]]) -> str:
    if not items:
        return "[]"
    parts = [f"{i}:" + _indent(f"\nLabels:{labels_string(lab)}\nAnnotations:{labels_string(ann)}", "  ")
             for i, (lab, ann) in enumerate(items)]
    return "[\n" + ",\n".join(parts) + "\n]"


def _indent(lines: str, indent: str) -> str:
    """unittest.go ``indentLines``: prefix every line but the first."""
    return ("\n" + indent).join(lines.split("\n"))


def _samples_string(samples: list[tuple[LabelPairs, float]]) -> str:
    if not samples:
        return "nil"
    return ", ".join(f"{labels_string(lab)} {format_float_e(v)}" for lab, v in samples)


def _run_group(tg: TestGroup, eval_ms: int, order: dict[str, int], rules: _RuleCache) -> list[str]:
    """unittest.go ``testGroup.test``: the error messages of one test group (empty: passed)."""
    try:
        inputs = parse_input_series(tg.input_series, tg.interval_ms)
    except ValueError as exc:
        return [str(exc)]
    loaded, rule_errors = rules.get()
    if rule_errors:
        return list(rule_errors)
    # sort.Slice by group_eval_order position (groups not listed count as 0); stable here.
    ordered = sorted(loaded, key=lambda fg: order.get(fg[1].name, 0))
    ruleset = RuleSet([replace(g, interval_s=None) for _, g in ordered], [f for f, _ in ordered])
    for case in tg.alert_tests:
        if not case.alertname:
            where = f" (in TestGroup {tg.name})" if tg.name else ""
            return [f"an item under alert_rule_test misses required attribute alertname at eval_time "
                    f"{model_duration_string(case.eval_ms)}{where}"]
    maxt = max([c.eval_ms for c in tg.alert_tests] + [c.eval_ms for c in tg.expr_tests]
               + [0])
    ev = AlertEvaluator(ruleset, interval_s=eval_ms / 1000.0, lookback_s=LOOKBACK_MS / 1000.0,
                        external_labels=tg.external_labels, external_url=tg.external_url, record_history=False,
                        max_template_chars=None, retention_s=None)
    # A grid sized for this test (the evaluator's default is sized for a marathon's series:
    # growing its rows would copy 32,768 columns each time).
    # Every input sample up to the last evaluation, in time order (stable: series order within a time).
    lids = [ev.storage.labels.intern(labels) for labels in inputs]
    parts = [(t[t <= maxt], v[t <= maxt], m[t <= maxt]) for t, v, m in inputs.values()]
    sample_t = np.concatenate([p[0] for p in parts] + [np.zeros(0, dtype=np.int64)])
    by_time = np.argsort(sample_t, kind="stable")
    sample_t = sample_t[by_time]
    sample_v = np.concatenate([p[1] for p in parts] + [np.zeros(0)])[by_time]
    sample_stale = np.concatenate([p[2] for p in parts] + [np.zeros(0, dtype=bool)])[by_time]
    times_arr, starts = np.unique(sample_t, return_index=True)
    times = times_arr.tolist()
    bounds = [*starts.tolist(), int(sample_t.shape[0])]
    # A grid sized for this test (the evaluator's default is sized for a marathon's series:
    # growing its rows would copy 32,768 columns each time).
    n_steps = maxt // eval_ms + 1
    st = ev.storage = Storage(ev.storage.labels, rows=max(64, n_steps + len(times)),
                              cols=max(256, 2 * len(lids) + 64))
    series_cols = st.columns(lids)
    sample_col = np.concatenate([np.full(p[0].shape[0], c, dtype=np.int64)
                                 for p, c in zip(parts, series_cols, strict=True)]
                                + [np.zeros(0, dtype=np.int64)])[by_time]
    loaded_upto = 0
    alert_times = sorted({c.eval_ms for c in tg.alert_tests})
    alerts_at: dict[int, list[AlertCase]] = {}
    for c in tg.alert_tests:
        alerts_at.setdefault(c.eval_ms, []).append(c)
    errs: list[str] = []
    curr = 0
    ts = 0
    while ts <= maxt:
        end = bisect.bisect_right(times, ts)
        for i in range(loaded_upto, end):
            a, b = bounds[i], bounds[i + 1]
            marker = sample_stale[a:b]
            cols = sample_col[a:b]
            st.write(times[i], cols[~marker], sample_v[a:b][~marker], cols[marker])
        loaded_upto = end
        ev.evaluate(ts / 1000.0)
        eval_errs = [f"    rule: {h.rule}, time: {go_duration(ts)}, err: {h.last_error}"
                     for h in ev.rule_health() if h.last_error]
        if eval_errs:
            return errs + eval_errs
        firing: dict[str, list[tuple[LabelPairs, LabelPairs]]] | None = None
        while curr < len(alert_times) and ts <= alert_times[curr] < ts + eval_ms:
            t = alert_times[curr]
            if firing is None:
                firing = {}
                for a in ev.active_alerts():
                    if a.state == "firing":
                        firing.setdefault(a.rule, []).append((tuple(sorted(a.labels.items())),
                                                              tuple(sorted(a.annotations.items()))))
            for case in alerts_at[t]:
                got = sorted(firing.get(case.alertname, []))
                exp = sorted((tuple(sorted({**lab, "alertname": case.alertname}.items())), tuple(sorted(ann.items())))
                             for lab, ann in case.exp_alerts)
                if exp != got:
                    name = f"    name: {tg.name},\n" if tg.name else ""
                    errs.append(f"{name}    alertname: {case.alertname}, time: {model_duration_string(t)}, \n"
                                f"        exp:{_indent(_alerts_string(exp), ' ' * 12)}, \n"
                                f"        got:{_indent(_alerts_string(got), ' ' * 12)}")
            curr += 1
        ts += eval_ms
    for ecase in tg.expr_tests:
        errs.extend(_expr_test(ecase, st, eval_ms))
    return errs


def _expr_test(case: ExprCase, st: Any, eval_ms: int) -> list[str]:
    head = f"    expr: {go_quote(case.expr)}, time: {model_duration_string(case.eval_ms)}"
    try:
        node = compile_query(case.expr, OPTIONS)
    except UnsupportedError as exc:
        return [f"{head}, err: {exc}"]
    except ValueError as exc:
        return [f"{head}, err: {go_parse_message(case.expr, str(exc))}"]
    ctx = EvalContext(st, case.eval_ms, LOOKBACK_MS, case.eval_ms, case.eval_ms, eval_ms)
    try:
        res = node.eval(ctx)
    except QueryError as exc:
        return [f"{head}, err: {exc}"]
    if isinstance(res, float):
        got: list[tuple[LabelPairs, float]] = [((), res)]
    elif isinstance(res, Vector):
        table = st.labels
        got = [(table.pairs(int(lid)), float(v)) for lid, v in zip(res.lids.tolist(), res.vals.tolist(), strict=True)]
    else:
        return [f"{head}, err: rule result is not a vector or scalar"]
    exp: list[tuple[LabelPairs, float]] = []
    for text, value in case.exp_samples:
        try:
            exp.append((parse_metric(text), value))
        except ValueError as exc:
            return [f"{head}, err: labels {go_quote(text)}: {exc}"]
    exp.sort(key=lambda s: s[0])
    got.sort(key=lambda s: s[0])
    same = len(exp) == len(got) and all(a[0] == b[0] and a[1] == b[1] for a, b in zip(exp, got, strict=True))
    if same:
        return []
    return [f"{head},\n        exp: {_samples_string(exp)}\n        got: {_samples_string(got)}"]


def run_file(filename: str, run: re.Pattern[str] | None = None) -> FileResult:
    """Run one unit-test file as promtool's ``ruleUnitTest`` + ``RulesUnitTest`` print it.

    Args:
        filename: the path as the user gave it (printed as is; rule files resolve against its directory).
        run: only test groups whose ``name`` this matches (None: all).
    """
    chunks: list[tuple[str, str]] = [("out", f"Unit Testing:  {filename}\n")]
    errs = _file_errors(filename, run, chunks)
    if errs:
        chunks.append(("err", "  FAILED:\n"))
        for e in errs:
            chunks.append(("err", e + "\n"))
            chunks.append(("out", "\n"))
    else:
        chunks.append(("out", "  SUCCESS\n"))
    chunks.append(("out", "\n"))
    return FileResult(chunks, not errs)


def _file_errors(filename: str, run: re.Pattern[str] | None, chunks: list[tuple[str, str]]) -> list[str]:
    try:
        text = Path(filename).read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        return [f"open {filename}: {(exc.strerror or str(exc)).lower()}"]
    try:
        utf = parse_unit_test_yaml(text)
    except ValueError as exc:
        return [str(exc)]
    base = os.path.dirname(filename) or "."
    files: list[str] = []
    for rf in utf.rule_files:
        pattern = os.path.normpath(os.path.join(base, rf)) if rf and not os.path.isabs(rf) else rf
        matches = sorted(glob.glob(pattern, include_hidden=True)) if glob.has_magic(pattern) else \
            ([pattern] if os.path.lexists(pattern) else [])
        if not matches:
            chunks.append(("err", f"  WARNING: no file match pattern {pattern}\n"))
        files.extend(matches)
    eval_ms = utf.evaluation_interval_ms or DEFAULT_EVAL_INTERVAL_MS
    order: dict[str, int] = {}
    for i, name in enumerate(utf.group_eval_order):
        if name in order:
            return [f"group name repeated in evaluation order: {name}"]
        order[name] = i
    rules = _RuleCache(files)
    errs: list[str] = []
    for tg in utf.tests:
        if run is not None and not run.search(tg.name):
            continue
        errs.extend(_run_group(tg, eval_ms, order, rules))
    return errs


def run_files(files: Sequence[str], run: str | Sequence[str] | None = None) -> tuple[int, list[tuple[str, str]]]:
    """Run unit-test files (promtool's ``RulesUnitTest``).

    Args:
        files: unit-test file paths, as the user gave them.
        run: only test groups whose ``name`` matches one of these regular expressions (joined
            with ``|``, as promtool 2.50's repeatable ``--run`` does); None or empty: all.

    Returns:
        (exit code: 0 every file passed, 1 otherwise; the output chunks, see :class:`FileResult`).

    Raises:
        re.error: ``run`` is not a regular expression.
    """
    runs = [run] if isinstance(run, str) else list(run or [])
    pattern = re.compile("|".join(runs)) if runs else None
    chunks: list[tuple[str, str]] = []
    failed = False
    for f in files:
        res = run_file(f, pattern)
        chunks.extend(res.chunks)
        failed |= not res.passed
    return (1 if failed else 0), chunks


__all__ = ["FileResult", "UnitTestFile", "format_float_e", "go_duration", "go_quote", "labels_string",
           "model_duration_string", "parse_metric", "parse_unit_test_yaml", "run_file", "run_files"]


def cmd_rules_test(args: Any) -> int:
    """``marathon rules test [--run REGEX] FILE...``: promtool's output and exit code (see module docstring).

    A file that does not exist is refused before anything runs, as promtool's ``ExistingFiles``
    argument does (message on stderr, exit code 1).
    """
    import sys

    for f in args.files:
        if not os.path.exists(f):
            print(f"marathon rules test: error: path {go_quote(f)[1:-1]!r} does not exist, try --help", file=sys.stderr)
            return 1
    try:
        code, chunks = run_files(args.files, args.run)
    except re.error as exc:
        print(f"marathon rules test: error: --run {'|'.join(args.run)!r}: {exc}", file=sys.stderr)
        return 1
    for stream, text in chunks:
        (sys.stdout if stream == "out" else sys.stderr).write(text)
        (sys.stdout if stream == "out" else sys.stderr).flush()
    return code


def add_rules_test_arguments(p: Any) -> None:
    """The ``marathon rules test`` arguments (an ``argparse`` parser)."""
    p.add_argument("files", nargs="+", metavar="FILE", help="promtool unit-test files (`promtool test rules` format)")
    p.add_argument("--run", metavar="REGEX", action="append", default=None,
                   help="run only the test groups whose name matches this regular expression (repeatable: any of "
                        "them)")
    p.set_defaults(func=cmd_rules_test)
