"""Write ``promtool test rules`` unit-test files from embedded evaluations, and run promtool.

:func:`record_run` evaluates a rule set over the samples of an
:class:`~alerts.evaluator.AlertEvaluator` storage at every evaluation time and records
which alerts were pending and firing. :func:`unit_test_yaml` turns that into a promtool
unit-test file: ``input_series`` carry the exact samples of every scraped series the
rules read (``_`` where a series had no sample, ``stale`` where it went stale, runs
compressed with promtool's ``aXn`` / ``_xn`` notation), ``alert_rule_test`` asks for the
embedded evaluator's firing alerts (labels and annotations) at every evaluation time,
and ``promql_expr_test`` asks for the pending ones through ``ALERTS{alertstate="pending"}``.
If Prometheus 2.42 agrees, ``promtool test rules`` passes.
"""

from __future__ import annotations

import math
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from alerts.evaluator import ActiveAlert, AlertEvaluator
from alerts.promql.engine import MatrixSelectorNode, SelectorNode, walk
from alerts.promql.labels import METRIC_NAME, format_labels
from alerts.promql.storage import NONE, STALE
from alerts.rules import RuleSet


@dataclass
class RecordedRun:
    """Alert states of an embedded run at each evaluation time.

    Attributes:
        times_ms: evaluation times, ms, on the storage's time base.
        alerts: active alerts after each evaluation (same order as ``times_ms``).
    """

    times_ms: list[int]
    alerts: list[list[ActiveAlert]]


def record_run(evaluator: AlertEvaluator, start_ms: int, end_ms: int, step_ms: int) -> RecordedRun:
    """Evaluate at ``start, start + step, ... <= end`` (ms) and record the active alerts."""
    times: list[int] = []
    snaps: list[list[ActiveAlert]] = []
    t = start_ms
    while t <= end_ms:
        evaluator.evaluate(t / 1000.0)
        times.append(t)
        snaps.append(evaluator.active_alerts())
        t += step_ms
    return RecordedRun(times, snaps)


def metric_names(rules: RuleSet) -> set[str] | None:
    """Metric names the rules' selectors read (None: some selector has no fixed name)."""
    names: set[str] = set()
    for rule in rules.rules:
        for node in walk(rule.node):
            sel = node.selector if isinstance(node, MatrixSelectorNode) else node
            if isinstance(sel, SelectorNode):
                if sel.name is None:
                    return None
                names.add(sel.name)
    return names


def _fmt(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(float(v))


def series_values(tokens: list[str]) -> str:
    """Join per-step tokens with run-length compression (``vxN`` = N+1 copies, ``_xN`` = N)."""
    out: list[str] = []
    i = 0
    n = len(tokens)
    while i < n:
        j = i
        while j + 1 < n and tokens[j + 1] == tokens[i]:
            j += 1
        run = j - i + 1
        tok = tokens[i]
        if tok == "_":
            out.append("_" if run == 1 else f"_x{run}")
        elif tok == "stale" or run < 3:
            out.extend([tok] * run)
        else:
            out.append(f"{tok}x{run - 1}")
        i = j + 1
    return " ".join(out)


def unit_test_yaml(evaluator: AlertEvaluator, run: RecordedRun, rule_file: str | Path, *,
                   interval_s: float = 15.0) -> str:
    """A ``promtool test rules`` file checking the recorded run (see module docstring).

    Times are shifted so the first storage row is promtool's time 0; every row must lie
    on the ``interval_s`` grid from there.

    Raises:
        ValueError: rows off the grid, or evaluation times before the first row.
    """
    st = evaluator.storage
    n = st.n_rows
    t0 = int(st.ts[0])
    step = round(interval_s * 1000)
    rel = st.ts[:n] - t0
    if np.any(rel % step):
        raise ValueError("storage rows are not on the scrape interval grid")
    slots = (rel // step).astype(np.int64)
    k_total = int(slots[-1]) + 1
    wanted = metric_names(evaluator.rules)
    series: list[dict[str, str]] = []
    for col in range(st.n_cols):
        if not st.scraped[col]:
            continue
        if wanted is not None and st.col_name[col] not in wanted:
            continue
        tokens = ["_"] * k_total
        states = st.state[:n, col]
        vals = st.vals[:n, col]
        for r in np.flatnonzero(states != NONE).tolist():
            tokens[int(slots[r])] = "stale" if states[r] == STALE else _fmt(float(vals[r]))
        while tokens and tokens[-1] == "_":
            tokens.pop()
        series.append({"series": format_labels(st.labels.pairs(int(st.col_lid[col]))), "values": series_values(tokens)})
    alert_names = [r.name for r in evaluator.rules.alerts]
    alert_tests: list[dict[str, Any]] = []
    expr_tests: list[dict[str, Any]] = []
    for t_ms, alerts in zip(run.times_ms, run.alerts, strict=True):
        if t_ms < t0:
            raise ValueError("evaluation before the first sample row")
        eval_time = f"{(t_ms - t0) // 1000}s" if (t_ms - t0) % 1000 == 0 else f"{t_ms - t0}ms"
        firing: dict[str, list[dict[str, Any]]] = {name: [] for name in alert_names}
        pending: list[dict[str, Any]] = []
        for a in alerts:
            if a.state == "firing":
                firing[a.rule].append({"exp_labels": {k: v for k, v in a.labels.items() if k != "alertname"},
                                       "exp_annotations": dict(a.annotations)})
            else:
                labels = dict(a.labels)
                labels["alertstate"] = "pending"
                labels[METRIC_NAME] = "ALERTS"
                pending.append({"labels": format_labels(labels), "value": 1})
        for name in alert_names:
            alert_tests.append({"eval_time": eval_time, "alertname": name, "exp_alerts": firing[name]})
        expr_tests.append({"expr": 'ALERTS{alertstate="pending"}', "eval_time": eval_time, "exp_samples": pending})
    doc = {
        "rule_files": [str(Path(rule_file).resolve())],
        "evaluation_interval": f"{step // 1000}s" if step % 1000 == 0 else f"{step}ms",
        "tests": [{
            "interval": f"{step // 1000}s" if step % 1000 == 0 else f"{step}ms",
            "input_series": series,
            "alert_rule_test": alert_tests,
            "promql_expr_test": expr_tests,
        }],
    }
    return yaml.safe_dump(doc, sort_keys=False, width=1 << 20, allow_unicode=True)


def promtool_path() -> str | None:
    """The ``promtool`` binary on PATH, or None."""
    return shutil.which("promtool")


def run_promtool(*args: str, timeout_s: float = 600.0) -> subprocess.CompletedProcess[str]:
    """Run ``promtool`` with ``args`` and capture its output.

    Raises:
        FileNotFoundError: promtool is not installed.
        subprocess.TimeoutExpired: it ran longer than ``timeout_s``.
    """
    exe = promtool_path()
    if exe is None:
        raise FileNotFoundError("promtool not found on PATH (Debian: apt-get install prometheus)")
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout_s, check=False)
