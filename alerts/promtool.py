"""Write ``promtool test rules`` unit-test files from embedded evaluations, and run promtool.

:func:`record_run` evaluates a rule set over the samples of an
:class:`~alerts.evaluator.AlertEvaluator` storage at every evaluation time and records
which alerts were pending and firing. :func:`unit_test_yaml` turns that into a promtool
unit-test file: ``input_series`` carry the exact samples of every scraped series the
rules read (``_`` where a series had no sample, ``stale`` where it went stale, runs
compressed with promtool's ``aXn`` / ``_xn`` notation), ``alert_rule_test`` asks for the
embedded evaluator's firing alerts (labels and annotations) at every evaluation time,
and ``promql_expr_test`` asks for the pending ones through ``ALERTS{alertstate="pending"}``.
If Prometheus 2.42 agrees, ``promtool test rules`` passes. :func:`staggered` makes promtool
add sums in the embedded evaluator's series order (otherwise random per promtool run), so
that agreement holds to the last bit.
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
from alerts.promql.engine import MatrixSelectorNode, SelectorNode, SubqueryNode, walk
from alerts.promql.labels import METRIC_NAME, format_labels
from alerts.promql.storage import NONE, SAMPLE, STALE
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


def staggered(evaluator: AlertEvaluator, *, interval_s: float = 15.0, gap_s: float | None = None) -> AlertEvaluator:
    """A fresh evaluator over the same samples, preceded by a creation prefix that makes
    promtool's series order the embedded one, so sums agree to the last bit.

    Why: ``sum`` adds in the order of its input vector, which is the storage's series order
    (series references, i.e. creation order, in Prometheus' head block). promtool 2.42
    creates the ``input_series`` while ranging over a Go map (``promql/test.go``
    ``LazyLoader.appendTill``), so that order -- and the last bit of a sum of three or more
    series -- is random per run: measured, ``sum`` of ``1e16, 1, -1e16, 1`` gives 0 or 1 from
    one run to the next, and a pack test of 35 minutes failed 1 run in 4 on a
    ``humanizePercentage`` of 31.87 % vs 31.88 %. promtool appends the samples up to each
    evaluation step before evaluating it, so a series whose first sample is at step ``i`` is
    created at step ``i``: the prefix gives the rules' series one sample each, at steps
    ``0, 1, ...`` in the embedded column order (each a staleness marker one step later) --
    per metric name, as the rules' selectors name their metric (the ``i``-th series of every
    name at step ``i``; with a selector that names none, one series per step) -- then
    ``gap_s`` of nothing (default: the lookback plus the rules' longest range, offset included,
    so the original samples are read as before), then the original samples, unchanged. Record the returned
    evaluator's run from its first row (:func:`record_run`) and write it with
    :func:`unit_test_yaml`: both sides then evaluate the same samples, prefix included.

    Args:
        evaluator: an evaluator whose storage rows lie on the ``interval_s`` grid.
        interval_s: the grid, seconds; gap_s: the empty stretch before the original samples,
            seconds.

    Raises:
        ValueError: no samples.
    """
    src = evaluator.storage
    n = src.n_rows
    if n == 0:
        raise ValueError("no samples to stagger")
    wanted = metric_names(evaluator.rules)
    cols = [c for c in range(src.n_cols)
            if src.scraped[c] and src.slot[c] >= 0 and (wanted is None or src.col_name[c] in wanted)]
    labels = [dict(src.labels.pairs(int(src.col_lid[c]))) for c in cols]
    step = round(interval_s * 1000)
    t0 = int(src.ts[0])
    gap_ms = round(gap_s * 1000) if gap_s is not None else evaluator.lookback_ms + _longest_reach_ms(evaluator.rules)
    per_name: dict[str, int] = {}
    for c in cols:
        key = src.col_name[c] if wanted is not None else ""
        per_name[key] = per_name.get(key, 0) + 1
    start = t0 - (max(per_name.values(), default=0) + 1) * step - -(-gap_ms // step) * step
    out = AlertEvaluator(evaluator.rules, interval_s=evaluator.interval_s, lookback_s=evaluator.lookback_ms / 1000.0,
                         external_labels=evaluator.external_labels, external_url=evaluator.external_url,
                         record_history=False, max_template_chars=None, retention_s=None)
    states = src.state[:n][:, src.slot[np.asarray(cols, dtype=np.int64)]] if cols else np.zeros((n, 0), dtype=np.int8)
    vals = src.vals[:n][:, src.slot[np.asarray(cols, dtype=np.int64)]] if cols else np.zeros((n, 0))
    rank: dict[str, int] = {}
    steps: list[list[int]] = []  # the positions in ``cols`` created at each prefix step
    for j, c in enumerate(cols):
        k = rank.get(src.col_name[c] if wanted is not None else "", 0)
        rank[src.col_name[c] if wanted is not None else ""] = k + 1
        if k == len(steps):
            steps.append([])
        steps[k].append(j)
    for i, members in enumerate(steps):
        samples = []
        for j in members:
            rows = np.flatnonzero(states[:, j] == SAMPLE)
            samples.append((labels[j], float(vals[int(rows[0]), j]) if rows.size else 0.0))
        out.ingest_samples((start + i * step) / 1000.0, samples)
    out.ingest_samples((start + len(steps) * step) / 1000.0, [])  # the last prefix samples go stale
    for r in range(n):
        present = np.flatnonzero(states[r] == SAMPLE).tolist()
        out.ingest_samples(int(src.ts[r]) / 1000.0, [(labels[j], float(vals[r, j])) for j in present])
    return out


def _longest_reach_ms(rules: RuleSet) -> int:
    """How far back any rule reads, ms: the longest range or subquery range plus its offset."""
    reach = 0
    for rule in rules.rules:
        for node in walk(rule.node):
            if isinstance(node, MatrixSelectorNode):
                reach = max(reach, node.range_ms + abs(node.selector.offset_ms))
            elif isinstance(node, SubqueryNode):
                reach = max(reach, node.range_ms + abs(node.offset_ms))
            elif isinstance(node, SelectorNode):
                reach = max(reach, abs(node.offset_ms))
    return reach


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
        if not st.scraped[col] or st.slot[col] < 0:  # no slot: no sample kept
            continue
        if wanted is not None and st.col_name[col] not in wanted:
            continue
        tokens = ["_"] * k_total
        states = st.state[:n, st.slot[col]]
        vals = st.vals[:n, st.slot[col]]
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
