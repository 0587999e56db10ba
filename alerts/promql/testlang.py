"""Prometheus' PromQL test language (``promql/test.go`` of v2.42.0): parse and run ``*.test`` files.

Commands: ``load <step>`` with indented series lines, ``clear``, and ``eval[_fail|_ordered]
instant at <time> <expr>`` followed by expected elements (``{labels} value`` or
``name{labels} value``) or a bare number for a scalar result. Series values use the
series-description notation: ``1 2 3``, ``_`` (no sample), ``stale`` (a staleness
marker), ``a+bxN`` / ``a-bxN`` (N+1 values stepping by b), ``axN`` (N+1 copies) and
``_xN`` (N missing samples). Results are compared as 2.42's ``compareResult`` does:
every returned element must be expected, every expected element returned, values equal
to a relative 1e-6 (``almostEqual``), and positions checked for ``eval_ordered``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from alerts.promql.engine import CompileOptions, EvalContext, Node, compile_query
from alerts.promql.labels import METRIC_NAME, LabelPairs, freeze
from alerts.promql.storage import Storage
from alerts.promql.values import QueryError, UnsupportedError, Vector

EPSILON = 1e-6
MIN_NORMAL = 2.2250738585072014e-308

_DURATION = re.compile(r"(\d+)(ms|s|m|h|d|w|y)")
_UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000, "y": 31_536_000_000}
_EVAL = re.compile(r"^eval(?:_(fail|ordered))?\s+instant\s+(?:at\s+(.+?))?\s+(.+)$")


def parse_duration_ms(text: str) -> int:
    """A Prometheus duration (``5m``, ``1h30m``, ``10s``, ``1ms``) in milliseconds.

    Raises:
        ValueError: not a duration.
    """
    pos = 0
    total = 0
    for m in _DURATION.finditer(text):
        if m.start() != pos:
            raise ValueError(f"bad duration {text!r}")
        total += int(m.group(1)) * _UNITS[m.group(2)]
        pos = m.end()
    if pos != len(text) or not text:
        raise ValueError(f"bad duration {text!r}")
    return total


def parse_number(text: str) -> float:
    """A PromQL number literal (``1``, ``-2.5e3``, ``Inf``, ``NaN``, ``0x1f``).

    Raises:
        ValueError: not a number.
    """
    t = text.strip()
    low = t.lower()
    sign = -1.0 if low.startswith("-") else 1.0
    body = low.lstrip("+-")
    if body in ("inf", "infinity"):
        return sign * math.inf
    if body == "nan":
        return math.nan
    if body.startswith("0x"):
        return sign * float(int(body, 16))
    return float(t)


_LABELS_RE = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?')


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), value)


def parse_series_desc(line: str) -> tuple[LabelPairs, str]:
    """Split ``name{labels} rest`` into (frozen labels incl. ``__name__``, the rest of the line).

    Raises:
        ValueError: malformed metric or labels.
    """
    s = line.strip()
    m = re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", s)
    labels: dict[str, str] = {}
    if m:
        labels[METRIC_NAME] = m.group(0)
        s = s[m.end():]
    if s.startswith("{"):
        end = 1
        depth_in_string = False
        while end < len(s):
            ch = s[end]
            if ch == "\\" and depth_in_string:
                end += 2
                continue
            if ch == '"':
                depth_in_string = not depth_in_string
            elif ch == "}" and not depth_in_string:
                break
            end += 1
        inner = s[1:end]
        pos = 0
        while pos < len(inner):
            lm = _LABELS_RE.match(inner, pos)
            if not lm:
                if inner[pos:].strip() == "":
                    break
                raise ValueError(f"bad labels in {line!r}")
            labels[lm.group(1)] = _unescape(lm.group(2))
            pos = lm.end()
        s = s[end + 1:]
    elif not m:
        raise ValueError(f"bad series description {line!r}")
    return freeze(labels), s.strip()


_ITEM = re.compile(
    r"^(?:(?P<blank>_)(?:x(?P<bn>\d+))?|(?P<val>stale|[+-]?(?:inf|nan|\d*\.?\d+(?:e[+-]?\d+)?|\d+\.))"
    r"(?:(?P<step>[+-](?:inf|nan|\d*\.?\d+(?:e[+-]?\d+)?))?x(?P<n>\d+))?)$", re.IGNORECASE)


def parse_values(text: str) -> list[float | str | None]:
    """Expand a series-value sequence; None is a missing sample, ``"stale"`` a staleness marker.

    Raises:
        ValueError: malformed item.
    """
    out: list[float | str | None] = []
    for item in text.split():
        m = _ITEM.match(item)
        if not m:
            raise ValueError(f"bad series value {item!r}")
        if m.group("blank"):
            out.extend([None] * (int(m.group("bn")) if m.group("bn") else 1))
            continue
        raw = m.group("val")
        if raw.lower() == "stale":
            if m.group("n"):
                raise ValueError(f"bad series value {item!r}")
            out.append("stale")
            continue
        value = parse_number(raw)
        if m.group("n") is None:
            out.append(value)
            continue
        step = parse_number(m.group("step")) if m.group("step") else 0.0
        for _ in range(int(m.group("n")) + 1):
            out.append(value)
            value += step
    return out


@dataclass
class Load:
    step_ms: int
    series: list[tuple[LabelPairs, list[float | str | None]]]
    line: int


@dataclass
class Clear:
    line: int


@dataclass
class Eval:
    """One ``eval`` command and its expectations."""

    expr: str
    t_ms: int
    line: int
    fail: bool = False
    ordered: bool = False
    scalar: float | None = None
    expected: list[tuple[LabelPairs, float]] = field(default_factory=list)


Command = Load | Clear | Eval


def parse_test_file(text: str) -> list[Command]:
    """Parse a test file into commands.

    Raises:
        ValueError: a malformed line (message names the line number).
    """
    lines = text.splitlines()
    cmds: list[Command] = []
    i = 0
    while i < len(lines):
        raw = lines[i]
        line = raw.strip()
        if not line or line.startswith("#"):
            i += 1
            continue
        if line == "clear":
            cmds.append(Clear(i + 1))
            i += 1
            continue
        if line.startswith("load"):
            parts = line.split()
            step = parse_duration_ms(parts[1])
            series = []
            j = i + 1
            while j < len(lines) and lines[j].strip() and (lines[j][0] in " \t"):
                if lines[j].strip().startswith("#"):
                    j += 1
                    continue
                labels, rest = parse_series_desc(lines[j])
                series.append((labels, parse_values(rest)))
                j += 1
            cmds.append(Load(step, series, i + 1))
            i = j
            continue
        m = _EVAL.match(line)
        if not m:
            raise ValueError(f"line {i + 1}: unknown command {line!r}")
        cmd = Eval(m.group(3), parse_duration_ms(m.group(2)), i + 1, m.group(1) == "fail", m.group(1) == "ordered")
        j = i + 1
        while j < len(lines) and lines[j].strip():
            exp = lines[j].strip()
            if exp.startswith("#"):
                j += 1
                continue
            try:
                cmd.scalar = parse_number(exp)
                j += 1
                break
            except ValueError:
                pass
            labels, rest = parse_series_desc(exp)
            vals = parse_values(rest)
            if len(vals) != 1 or not isinstance(vals[0], float):
                raise ValueError(f"line {j + 1}: expected exactly one value")
            cmd.expected.append((labels, vals[0]))
            j += 1
        cmds.append(cmd)
        i = j
    return cmds


def almost_equal(a: float, b: float) -> bool:
    """test.go ``almostEqual``."""
    if math.isnan(a) and math.isnan(b):
        return True
    if a == b:
        return True
    diff = abs(a - b)
    if a == 0 or b == 0 or diff < MIN_NORMAL:
        return diff < EPSILON * MIN_NORMAL
    return diff / (abs(a) + abs(b)) < EPSILON


@dataclass
class Case:
    """One eval with the storage state it runs on."""

    file: str
    eval: Eval
    storage_loads: list[Load]

    @property
    def id(self) -> str:
        return f"{self.file}:{self.eval.line}"


def cases_of(path: Path) -> list[Case]:
    """Every eval of a test file with the loads in force at that point."""
    loads: list[Load] = []
    out: list[Case] = []
    for cmd in parse_test_file(path.read_text()):
        if isinstance(cmd, Clear):
            loads = []
        elif isinstance(cmd, Load):
            loads = [*loads, cmd]
        else:
            out.append(Case(path.name, cmd, loads))
    return out


_STORAGE_CACHE: dict[int, tuple[list[Load], Storage]] = {}


def build_storage(loads: list[Load]) -> Storage:
    """A storage holding the samples of ``loads`` (test.go ``loadCmd.append``)."""
    key = id(loads)
    cached = _STORAGE_CACHE.get(key)
    if cached is not None and cached[0] is loads:
        return cached[1]
    st = Storage()
    samples: list[tuple[int, dict[str, str], float | None]] = []
    for load in loads:
        for labels, vals in load.series:
            lab = dict(labels)
            for k, v in enumerate(vals):
                if v is None:
                    continue
                samples.append((k * load.step_ms, lab, None if v == "stale" else float(v)))
    st.load(samples)
    if len(_STORAGE_CACHE) > 64:
        _STORAGE_CACHE.clear()
    _STORAGE_CACHE[key] = (loads, st)
    return st


class Skip(Exception):
    """The case uses something the evaluator does not support (message says what)."""


def run_case(case: Case) -> None:
    """Run one eval.

    Raises:
        Skip: unsupported construct or a parser that rejects valid 2.42 syntax.
        AssertionError: the result differs from the expectation.
    """
    ev = case.eval
    try:
        node: Node = compile_query(ev.expr, CompileOptions(negative_offset=True))
    except UnsupportedError as exc:
        raise Skip(str(exc)) from None
    except ValueError as exc:
        raise Skip(f"promql-parser rejects it: {exc}") from None
    st = build_storage(case.storage_loads)
    ctx = EvalContext(st, ev.t_ms, start_ms=ev.t_ms, end_ms=ev.t_ms, subquery_step_ms=60_000)
    try:
        result = node.eval(ctx)
    except QueryError as exc:
        if ev.fail:
            return
        raise AssertionError(f"{case.id}: error evaluating {ev.expr!r}: {exc}") from None
    if ev.fail:
        raise AssertionError(f"{case.id}: expected an error evaluating {ev.expr!r} but got none")
    if isinstance(result, str):
        raise Skip("string result (2.42's test harness cannot compare strings)")
    if isinstance(result, float):
        exp = ev.scalar if ev.scalar is not None else (ev.expected[0][1] if ev.expected else math.nan)
        if not almost_equal(exp, result):
            raise AssertionError(f"{case.id}: expected scalar {exp} but got {result}")
        return
    if not isinstance(result, Vector):
        raise AssertionError(f"{case.id}: received range result on instant evaluation")
    table = st.labels
    expected = {labels: (pos + 1, value) for pos, (labels, value) in enumerate(ev.expected)}
    seen = set()
    got = [(table.pairs(int(lid)), float(v)) for lid, v in zip(result.lids.tolist(), result.vals.tolist(), strict=True)]
    for pos, (labels, value) in enumerate(got):
        if labels not in expected:
            raise AssertionError(f"{case.id}: unexpected metric {table.format(table.intern(labels))} in result "
                                 f"{_fmt(got, table)}")
        exp_pos, exp_val = expected[labels]
        if ev.ordered and exp_pos != pos + 1:
            raise AssertionError(f"{case.id}: expected {labels} at position {exp_pos} but was at {pos + 1}")
        if not almost_equal(exp_val, value):
            raise AssertionError(f"{case.id}: expected {exp_val} for {labels} but got {value}")
        seen.add(labels)
    for labels in expected:
        if labels not in seen:
            raise AssertionError(f"{case.id}: expected metric {labels} not found; got {_fmt(got, table)}")


def _fmt(got: list[tuple[LabelPairs, float]], table: object) -> str:
    return "[" + ", ".join(f"{dict(lab)}={val}" for lab, val in got) + "]"
