"""Prometheus 2.42's own answers, from ``promtool test rules``, for exact comparisons.

:func:`promtool_samples` writes one unit-test file whose ``promql_expr_test`` cases
expect nothing, so promtool fails every case with a non-empty result and prints what it
got: ``strconv.FormatFloat(v, 'E', -1, 64)`` per sample (``cmd/promtool/unittest.go``
``parsedSample.String``), the shortest text that parses back to the same float64 -- every
bit of promtool's value. :func:`embedded_samples` evaluates the same queries on the
embedded evaluator over the same series (loaded by the PromQL test language, as promtool
loads ``input_series``).

Caveat (measured): promtool's series order -- hence the order in which ``sum`` adds --
is random per run (``promql/test.go`` ``LazyLoader.appendTill`` creates series while
ranging over a Go map), so sums of three or more series are not comparable bit for bit
unless the series are created at different evaluation steps.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

from alerts.promql.engine import EvalContext, compile_query
from alerts.promql.labels import format_labels
from alerts.promql.storage import Storage
from alerts.promql.testlang import parse_series_desc, parse_values
from alerts.promql.values import Vector
from alerts.promtool import run_promtool

Samples = dict[str, float]
"""``{labels text (Prometheus' format, __name__ first as a bare name or in braces): value}``."""

_GOT_RE = re.compile(r'^\s*expr: "(?P<expr>(?:[^"\\]|\\.)*)", time: (?P<time>\S+),\n\s*exp: .*\n\s*got: (?P<got>.*)$',
                     re.M)
_SAMPLE_RE = re.compile(r"(\{(?:[^\"}]|\"(?:[^\"\\]|\\.)*\")*\}) (\S+?)(?:, |$)")


def promtool_samples(tmp_path: Path, series: Mapping[str, str], queries: Sequence[tuple[str, int]], *,
                     interval_s: int = 60) -> list[Samples]:
    """What promtool 2.42 returns for each ``(expr, eval time in seconds)`` over ``series``
    (``{series selector text: promtool values notation}``, one sample per ``interval_s``).

    Raises:
        AssertionError: promtool did not run the file (its output is in the message).
    """
    rules = tmp_path / "oracle_rules.yaml"
    rules.write_text("groups: []\n")
    doc = {"rule_files": [str(rules)], "evaluation_interval": f"{interval_s}s", "tests": [{
        "interval": f"{interval_s}s",
        "input_series": [{"series": k, "values": v} for k, v in series.items()],
        "promql_expr_test": [{"expr": e, "eval_time": f"{t}s", "exp_samples": []} for e, t in queries],
    }]}
    path = tmp_path / "oracle_test.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False, width=1 << 20))
    res = run_promtool("test", "rules", str(path))
    out = res.stdout + res.stderr
    got: dict[tuple[str, str], Samples] = {}
    for m in _GOT_RE.finditer(out):
        samples: Samples = {}
        text = m.group("got")
        if text != "nil":
            for lm in _SAMPLE_RE.finditer(text):
                samples[lm.group(1)] = float(lm.group(2))
        got[(m.group("expr").encode().decode("unicode_escape"), m.group("time"))] = samples
    if res.returncode not in (0, 1) or ("FAILED" not in out and "SUCCESS" not in out):
        raise AssertionError(f"promtool did not run the oracle file:\n{out[-3000:]}")
    return [got.get((e, _go_duration(t)), {}) for e, t in queries]


def _go_duration(seconds: int) -> str:
    """``model.Duration.String`` of whole seconds (``0s``, ``3m``, ``1m30s``, ``1h30m``)."""
    if seconds == 0:
        return "0s"
    out = ""
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        n, seconds = divmod(seconds, size)
        if n:
            out += f"{n}{unit}"
    return out


def embedded_samples(series: Mapping[str, str], queries: Sequence[tuple[str, int]], *,
                     interval_s: int = 60) -> list[Samples]:
    """The embedded evaluator's answers to the same queries (see :func:`promtool_samples`).

    Like promtool, only samples up to the last evaluation step at or before the latest
    query time are loaded (``unittest.go`` appends ``WithSamplesTill`` each step up to
    ``maxEvalTime``), so a negative offset cannot see beyond it.
    """
    st = Storage()
    last_ms = max((t for _, t in queries), default=0) // interval_s * interval_s * 1000
    rows = []
    for text, values in series.items():
        pairs, _ = parse_series_desc(text)
        labels = dict(pairs)
        for i, v in enumerate(parse_values(values)):
            if v is not None and i * interval_s * 1000 <= last_ms:
                rows.append((i * interval_s * 1000, labels, None if v == "stale" else float(v)))
    st.load(rows)
    out: list[Samples] = []
    for expr, t in queries:
        node = compile_query(expr)
        res = node.eval(EvalContext(st, t * 1000, start_ms=t * 1000, end_ms=t * 1000))
        samples: Samples = {}
        if isinstance(res, Vector):
            for lid, v in zip(res.lids.tolist(), res.vals.tolist(), strict=True):
                samples[_braced(st.labels.pairs(lid))] = v
        elif isinstance(res, float):
            samples["{}"] = res
        out.append(samples)
    return out


def _braced(pairs: Sequence[tuple[str, str]]) -> str:
    """Labels as promtool prints them (``labels.Labels.String``: every label in braces)."""
    return "{" + ", ".join(f'{k}="{_go_quote(v)}"' for k, v in pairs) + "}"


def _go_quote(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


__all__ = ["Samples", "embedded_samples", "format_labels", "promtool_samples"]
