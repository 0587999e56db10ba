"""PromQL queries for operators: the ``query_metrics`` tool's evaluation, bounds and rendering.

An operator queries the run's Prometheus -- the embedded evaluator's storage
(:attr:`alerts.evaluator.AlertEvaluator.storage`): every series the scrape exposes (the
kube-state-metrics, cAdvisor and HTTP-server series a real cluster's Prometheus holds),
plus what rule evaluation writes there (``ALERTS``, ``ALERTS_FOR_STATE``, recording rules),
exactly as far as it has been scraped and evaluated at the current run time. Nothing else
is reachable: no simulator state, no fault, no probe, no sample from later in the run.

**Time.** Arguments are run time in seconds, as every other tool takes time (``since_s`` of
``get_alerts``); answers are in the shape of Prometheus' HTTP API (``/api/v1/query`` and
``/api/v1/query_range``), so timestamps there are Unix seconds on the run's wall clock
(:data:`engine.sim.k8s.EPOCH` + run time, the clock kubectl's timestamps and the
``kube_pod_created`` values use). The query itself runs on that clock too: ``time()``,
``timestamp()``, ``@ <unix time>`` and ``hour()`` mean what they mean in Prometheus.
``time``, ``start`` or ``end`` after the current run time are refused (there are no
samples from the future); ``@`` and ``offset`` can only reach samples up to now, as the
storage holds nothing later.

**Answers.** :func:`run_query` returns the Prometheus body -- ``{"status": "success",
"data": {"resultType": "vector" | "matrix" | "scalar" | "string", "result": [...]}}`` with
values as ``[unix_seconds, "value"]`` (Go's ``strconv.FormatFloat(v, 'f', -1, 64)``:
``"NaN"``, ``"+Inf"``, no exponent) -- or its error body ``{"status": "error",
"errorType": "bad_data" | "execution" | "unavailable", "error": "..."}``; parse errors and bad
parameters are ``bad_data`` (Prometheus' ``invalid parameter "query": ...``), failures
during evaluation ``execution``. Range queries return a matrix sorted by labels, as
Prometheus sorts one.

**Bounds** (a query an operator writes may be expensive; none may stall the run):

* the query text: :data:`MAX_QUERY_CHARS` characters;
* a range query: at most :data:`MAX_POINTS` points per series (Prometheus' own limit,
  ``api.go``: "exceeded maximum resolution of 11,000 points per timeseries");
* an estimate of the work, made before evaluating from the compiled query and the
  storage (deterministic, so a replay refuses exactly what the run refused): samples read
  (for each selector: matching series x samples in its range x evaluations, counting
  subquery steps) at most :data:`MAX_SAMPLES`, and evaluations of the expression at most
  :data:`MAX_EVALUATIONS`; over either, the query is refused with errorType
  ``execution`` before any evaluation; a range query whose result grows past
  :data:`MAX_RANGE_CELLS` points is stopped there (the same error, as Prometheus stops a
  query at ``--query.max-samples``). No wall-clock timeout: it would make a replay's
  answers depend on the machine. The estimate and its bounds are
  :mod:`alerts.promql.budget`'s, shared with alert templates' ``query``.
* regular expressions of label matchers run on RE2 (linear time, Go's syntax, as
  Prometheus); a ``label_replace`` regex (evaluated on Python's ``re``) may not repeat a
  group holding a repetition or an alternation and may hold at most
  :data:`MAX_REPLACE_REPEATS` unbounded repetitions (such patterns can take exponential or
  high-polynomial time on a backtracking engine);
* history: the storage keeps the samples of the last :data:`alerts.evaluator.QUERY_RETENTION_S`
  (one hour) behind the latest rule evaluation, or the longest window a rule reads if that is
  longer, so that a run's memory does not grow with its length (a Prometheus keeps its
  ``--storage.tsdb.retention.time``, 15 days by default). A query that would read an earlier
  sample -- its time or start minus the reach of its selectors (offsets, ranges, the 5-minute
  lookback, subquery ranges; ``@`` times as given: :func:`alerts.promql.budget.reach`) -- is
  refused with errorType ``bad_data`` and the oldest time kept, rather than answered from part
  of its window; every query inside the window gets the answer the full history would give.
* the answer: at most :data:`MAX_RESULT_SERIES` series and :data:`MAX_RESULT_POINTS`
  points in the body, the rest left out with a note in ``warnings`` (the field Prometheus'
  API uses for such notes); the text shows :data:`TEXT_SERIES` series.

**Text for models** (:attr:`QueryAnswer.text`): a header (query kind, evaluation time in
m:ss of run time, series count), then for an instant vector a table of value and series;
for a range (a matrix) one row per series with last, min and max and a sparkline of
:data:`SPARK_WIDTH` characters (per-series scale; a blank where the series has no point).

A query never changes the run: it evaluates on a view of the storage with a forked label
table (:meth:`alerts.promql.labels.LabelTable.fork`), so label sets it creates never reach
the rule evaluator.
"""

from __future__ import annotations

import copy
import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from alerts.evaluator import QUERY_RETENTION_S
from alerts.promql.budget import BudgetExceeded, check_budget, earliest_read_ms
from alerts.promql.engine import (
    DEFAULT_LOOKBACK_MS,
    CallNode,
    EvalContext,
    Node,
    SelectorNode,
    StringNode,
    compile_query,
)
from alerts.promql.labels import METRIC_NAME, LabelTable, format_labels
from alerts.promql.storage import BoolArray, FloatArray, IntArray, Storage, to_ms
from alerts.promql.values import Matrix, PromQLError, QueryError, UnsupportedError, Vector
from engine.sim.k8s import EPOCH

MAX_QUERY_CHARS = 4096
"""Longest query text, characters (a dashboard query is a few hundred)."""
MAX_POINTS = 11_000
"""Points per series of a range query: Prometheus' limit (``web/api/v1/api.go``)."""
MAX_RANGE_CELLS = 2_000_000
"""Points a range query's result may hold before the caps of the body (series x steps),
counted as the steps are evaluated: ``{__name__=~".+"}`` over a Train Ticket run (8,700
series, 121 steps: 1.06 million) took 0.35 s, most of it building the result."""
MAX_RESULT_SERIES = 100
"""Series kept in the answer's body (a dashboard panel shows no more)."""
MAX_RESULT_POINTS = 20_000
"""Points kept in the answer's body, all series together (about 600 KB of JSON)."""
TEXT_SERIES = 20
"""Series shown in the text rendering."""
SPARK_WIDTH = 40
"""Characters of a range series' sparkline in the text."""
MAX_REPLACE_REPEATS = 3
"""Unbounded repetitions (``*``, ``+``, ``{n,}``) a ``label_replace`` regex may hold."""
DEFAULT_POINTS = 120
"""A range query without ``step`` gets the smallest multiple of the scrape interval giving
at most this many points (Grafana picks a step from the panel's width the same way)."""
SCRAPE_INTERVAL_S = 15.0
"""The run's scrape and rule-evaluation interval (``engine.run.orchestrator.EVAL_INTERVAL_S``);
also the default subquery resolution, as Prometheus uses its evaluation interval."""
EPOCH_MS = round(EPOCH.timestamp() * 1000)
"""Unix milliseconds of run time 0."""
BLOCKS = "▁▂▃▄▅▆▇█"


@dataclass
class QueryAnswer:
    """The outcome of one query.

    Attributes:
        ok: the body's ``status`` is ``success``.
        body: the Prometheus HTTP API body (module docstring).
        text: the rendering for models and people.
    """

    ok: bool
    body: dict[str, Any]
    text: str
    error: str | None = None
    warnings: list[str] = field(default_factory=list)


class _Refused(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _error(kind: str, message: str) -> QueryAnswer:
    return QueryAnswer(False, {"status": "error", "errorType": kind, "error": message}, f"{kind}: {message}",
                       error=f"{kind}: {message}")


def format_value(v: float) -> str:
    """A sample value as Prometheus' API writes it (``strconv.FormatFloat(v, 'f', -1, 64)``)."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return np.format_float_positional(v, unique=True, trim="-")


def _unix(t_ms: int) -> int | float:
    """Unix seconds as Prometheus' API writes them: whole when on a second, else with milliseconds."""
    return t_ms // 1000 if t_ms % 1000 == 0 else t_ms / 1000.0


def _mmss(t: float) -> str:
    sign = "-" if t < 0 else ""
    t = abs(t)
    return f"{sign}{int(t // 60)}:{int(t % 60):02d}"


def short_number(v: float) -> str:
    """A value for the text: whole numbers in full (timestamps, byte counts), others to 6 digits."""
    if not math.isfinite(v):
        return format_value(v)
    if v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.6g}"


# ---------------------------------------------------------------------------- bounds


_UNBOUNDED = re.compile(r"(?<!\\)(?:[*+]|\{\d+,\})")


def _replace_regex_problem(pattern: str) -> str | None:
    """Why a ``label_replace`` regex is refused (module docstring), or None."""
    if len(_UNBOUNDED.findall(pattern)) > MAX_REPLACE_REPEATS:
        return f"more than {MAX_REPLACE_REPEATS} unbounded repetitions"
    stack: list[bool] = []  # per open group: holds a repetition or an alternation
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":  # a character class: skip to its end
            j = i + 1
            if pattern[j:j + 1] == "^":
                j += 1
            if pattern[j:j + 1] == "]":
                j += 1
            while j < len(pattern) and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            i = j + 1
            continue
        if ch == "(":
            stack.append(False)
        elif ch in "*+?{|" and stack:
            stack[-1] = True
        elif ch == ")" and stack:
            inner = stack.pop()
            if inner and pattern[i + 1:i + 2] in ("*", "+", "{", "?"):
                return "a repeated group that holds a repetition or an alternation"
            if inner and stack:
                stack[-1] = True
        i += 1
    return None


def _prepare(node: Node, storage: Storage) -> None:
    """Put label matchers on RE2 and check ``label_replace`` regexes (module docstring)."""
    import re2  # google-re2

    options = re2.Options()
    options.log_errors = False
    options.max_mem = 8 << 20
    stack = [node]
    seen: set[int] = set()
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, SelectorNode):
            for m in n.matchers:
                if m.regex is None:
                    continue
                try:
                    m.regex = re2.compile(f"(?:{m.value})", options)
                except re2.error:
                    raise _Refused("bad_data", f"invalid parameter \"query\": error parsing regexp "
                                               f"{m.value[:200]!r} (RE2 syntax, as Prometheus')") from None
        if isinstance(n, CallNode) and n.name == "label_replace" and len(n.args) == 5:
            arg = n.args[4]
            if isinstance(arg, StringNode):
                why = _replace_regex_problem(arg.value)
                if why is not None:
                    raise _Refused("bad_data", f"label_replace regex {arg.value[:200]!r} is refused by "
                                               f"query_metrics: {why} (it could take exponential time)")
        stack.extend(n.children())


# ---------------------------------------------------------------------------- evaluation


def _view(storage: Storage) -> Storage:
    """The storage on the Unix clock with a forked label table (module docstring)."""
    view = copy.copy(storage)
    view.ts = storage.ts[: storage.n_rows] + EPOCH_MS
    view.labels = storage.labels.fork()
    return view


def _labels(table: LabelTable, lid: int) -> dict[str, str]:
    return dict(table.pairs(lid))


def run_query(storage: Storage | None, query: str, now: float, *, time: float | None = None,
              start: float | None = None, end: float | None = None, step: float | None = None) -> QueryAnswer:
    """Evaluate one instant or range query (module docstring).

    Args:
        storage: the run's Prometheus storage; None when the run has none.
        query: PromQL text.
        now: the current run time, seconds.
        time: instant query at this run time, seconds (default ``now``).
        start, end, step: a range query from ``start`` to ``end`` (default ``now``) every
            ``step`` seconds (default: :data:`DEFAULT_POINTS`); run time, seconds.

    Returns:
        The answer; never raises for any query or parameters.
    """
    try:
        return _run(storage, query, now, time, start, end, step)
    except _Refused as exc:
        return _error(exc.kind, exc.message)
    except QueryError as exc:
        return _error("execution", str(exc))
    except (UnsupportedError, ValueError) as exc:
        return _error("bad_data", f"invalid parameter \"query\": {exc}")
    except PromQLError as exc:
        return _error("execution", str(exc))
    except (ArithmeticError, MemoryError, RecursionError, AssertionError, TypeError, IndexError, KeyError) as exc:
        return _error("execution", f"the evaluator failed on this query: {type(exc).__name__}: {exc}"[:500])
    except BaseException as exc:  # promql-parser is Rust: a panic arrives as pyo3's PanicException
        if isinstance(exc, (KeyboardInterrupt, SystemExit, GeneratorExit)):
            raise
        return _error("bad_data", f"invalid parameter \"query\": the parser failed: {type(exc).__name__}: "
                                  f"{exc}"[:500])


def _run(storage: Storage | None, query: str, now: float, time: float | None, start: float | None,
         end: float | None, step: float | None) -> QueryAnswer:
    if storage is None:
        raise _Refused("unavailable", "this run has no embedded Prometheus to query (its alerts come from "
                                      "another source)")
    if not query.strip():
        raise _Refused("bad_data", "invalid parameter \"query\": empty query")
    if len(query) > MAX_QUERY_CHARS:
        raise _Refused("bad_data", f"invalid parameter \"query\": {len(query)} characters; at most "
                                   f"{MAX_QUERY_CHARS}")
    ranged = start is not None or end is not None or step is not None
    if ranged and time is not None:
        raise _Refused("bad_data", "give either time (an instant query) or start, end and step (a range query), "
                                   "not both")
    if ranged and start is None:
        raise _Refused("bad_data", "invalid parameter \"start\": a range query needs start (run time, seconds)")
    for name, value in (("time", time), ("start", start), ("end", end)):
        if value is not None and value > now + 1e-6:
            raise _Refused("bad_data", f"invalid parameter \"{name}\": run time {value:g} s is after the current "
                                       f"run time {now:g} s; there are no samples from the future")
    node = compile_query(query)
    _prepare(node, storage)
    view = _view(storage)
    if not ranged:
        t_ms = to_ms(now if time is None else time) + EPOCH_MS
        _check_retention(node, storage, t_ms)
        return _instant(node, view, t_ms)
    assert start is not None
    end_s = now if end is None else end
    if end_s < start:
        raise _Refused("bad_data", "end timestamp must not be before start time")
    if step is None:
        span = end_s - start
        step = SCRAPE_INTERVAL_S * max(1, math.ceil(span / SCRAPE_INTERVAL_S / (DEFAULT_POINTS - 1)))
    if step <= 0:
        raise _Refused("bad_data", "zero or negative query resolution step widths are not accepted. "
                                   "Try a positive integer")
    points = math.floor((end_s - start) / step) + 1
    if points > MAX_POINTS:
        raise _Refused("bad_data", "exceeded maximum resolution of 11,000 points per timeseries. Try decreasing "
                                   "the query resolution (?step=XX)")
    if node.kind not in ("vector", "scalar"):
        kind = {"matrix": "range vector", "string": "string"}.get(node.kind, node.kind)
        raise _Refused("bad_data", f"invalid parameter \"query\": invalid expression type \"{kind}\" for range "
                                   "query, must be Scalar or instant Vector")
    _check_retention(node, storage, to_ms(start) + EPOCH_MS)
    return _range(node, view, to_ms(start) + EPOCH_MS, to_ms(end_s) + EPOCH_MS, max(1, to_ms(step)), points)


def _check_retention(node: Node, storage: Storage, start_ms: int) -> None:
    """Refuse a query evaluated from ``start_ms`` (Unix ms) that reads before the oldest sample the
    storage keeps (module docstring, **History**)."""
    kept = storage.retained_from_ms
    if kept is None:
        return
    earliest = earliest_read_ms(node, start_ms, DEFAULT_LOOKBACK_MS)
    if earliest is not None and earliest < kept + EPOCH_MS:
        raise _Refused("bad_data", f"the query reads samples from run time {(earliest - EPOCH_MS) / 1000:g} s, before "
                                   f"the oldest the run's Prometheus keeps ({kept / 1000:g} s; it keeps the last "
                                   f"{QUERY_RETENTION_S / 60:g} minutes, or the longest window a rule reads if "
                                   "longer): query a later time or a shorter range")


def _budget(node: Node, view: Storage, evaluations: int) -> None:
    try:
        check_budget(node, view, evaluations, to_ms(SCRAPE_INTERVAL_S), who="query_metrics")
    except BudgetExceeded as exc:
        raise _Refused("execution", str(exc)) from None


def _instant(node: Node, view: Storage, t_ms: int) -> QueryAnswer:
    _budget(node, view, 1)
    ctx = EvalContext(view, t_ms, DEFAULT_LOOKBACK_MS, t_ms, t_ms, to_ms(SCRAPE_INTERVAL_S))
    with np.errstate(all="ignore"):
        value = node.eval(ctx)
    table = view.labels
    warnings: list[str] = []
    when = (t_ms - EPOCH_MS) / 1000.0
    head = f"instant query at {_mmss(when)} (run time {when:g} s)"
    if isinstance(value, float):
        body_data: dict[str, Any] = {"resultType": "scalar", "result": [_unix(t_ms), format_value(value)]}
        text = f"{head}: scalar\n{short_number(value)}"
    elif isinstance(value, str):
        body_data = {"resultType": "string", "result": [_unix(t_ms), value]}
        text = f"{head}: string\n{value}"
    elif isinstance(value, Vector):
        n = len(value)
        keep = min(n, MAX_RESULT_SERIES)
        result = [{"metric": _labels(table, int(lid)), "value": [_unix(t_ms), format_value(float(v))]}
                  for lid, v in zip(value.lids[:keep].tolist(), value.vals[:keep].tolist(), strict=True)]
        if n > keep:
            warnings.append(f"showing {keep} of {n} series: narrow the query (a label matcher, topk, sum by)")
        body_data = {"resultType": "vector", "result": result}
        text = f"{head}: vector, {n} series\n" + _vector_text(result, n)
    else:
        assert isinstance(value, Matrix)
        body_data, shown, total, warnings = _matrix_answer(table, value.lids, value.ts, value.vals, value.mask,
                                                           sort=False)
        text = f"{head}: matrix (range vector), {total} series\n" + _matrix_text(shown, total)
    return _answer(body_data, warnings, text + _unknown_names(node, view, body_data))


def _range(node: Node, view: Storage, start_ms: int, end_ms: int, step_ms: int, points: int) -> QueryAnswer:
    _budget(node, view, points)
    ctx = EvalContext(view, start_ms, DEFAULT_LOOKBACK_MS, start_ms, end_ms, to_ms(SCRAPE_INTERVAL_S))
    table = view.labels
    scalar_lid = table.intern(())
    times = [start_ms + i * step_ms for i in range(points) if start_ms + i * step_ms <= end_ms]
    rows: list[tuple[IntArray, FloatArray]] = []
    cells = 0
    with np.errstate(all="ignore"):
        for t in times:
            v = node.eval(ctx.at(t))
            if isinstance(v, float):
                rows.append((np.asarray([scalar_lid], dtype=np.int64), np.asarray([v])))
            else:
                assert isinstance(v, Vector)
                if len(v) and np.unique(v.lids).shape[0] != len(v):
                    raise QueryError("vector cannot contain metrics with the same labelset")
                rows.append((v.lids, v.vals))
            cells += rows[-1][0].shape[0]
            if cells > MAX_RANGE_CELLS:
                raise _Refused("execution", f"query processing would load too many samples into memory in query "
                                            f"execution (more than {MAX_RANGE_CELLS:,} result points by "
                                            f"{_mmss((t - EPOCH_MS) / 1000)} of {len(times)} steps): narrow the "
                                            "query (a label matcher, sum by) or raise the step")
    lids = np.unique(np.concatenate([r[0] for r in rows])) if rows else np.zeros(0, dtype=np.int64)
    vals = np.full((len(times), lids.shape[0]), np.nan)
    mask = np.zeros((len(times), lids.shape[0]), dtype=bool)
    for i, (row_lids, row_vals) in enumerate(rows):
        if row_lids.shape[0]:
            idx = np.searchsorted(lids, row_lids)
            vals[i, idx] = row_vals
            mask[i, idx] = True
    body_data, shown, total, warnings = _matrix_answer(table, lids, np.asarray(times, dtype=np.int64), vals, mask,
                                                       sort=True)
    span = (f"range query {_mmss((start_ms - EPOCH_MS) / 1000)}..{_mmss((end_ms - EPOCH_MS) / 1000)} of run time, "
            f"step {step_ms / 1000:g} s, {len(times)} points")
    text = f"{span}: matrix, {total} series\n" + _matrix_text(shown, total)
    return _answer(body_data, warnings, text + _unknown_names(node, view, body_data))


def _unknown_names(node: Node, storage: Storage, data: dict[str, Any]) -> str:
    """For an empty result, a line naming the selected metrics this Prometheus has never had."""
    if data.get("resultType") not in ("vector", "matrix") or data.get("result"):
        return ""
    stack, names = [node], set()
    while stack:
        n = stack.pop()
        if isinstance(n, SelectorNode) and n.name is not None and n.name not in storage.by_name:
            names.add(n.name)
        stack.extend(n.children())
    if not names:
        return ""
    return (f"\nno series named {', '.join(sorted(names))} in this run's Prometheus (list the names with "
            "count by (__name__) ({__name__=~\".+\"}))")


_Series = tuple[dict[str, str], list[int], list[float]]


def _matrix_answer(table: LabelTable, lids: IntArray, ts: IntArray, vals: FloatArray, mask: BoolArray, *,
                   sort: bool) -> tuple[dict[str, Any], list[_Series], int, list[str]]:
    """The body of a matrix (series sorted by labels when ``sort``, as a range query's are),
    capped at :data:`MAX_RESULT_SERIES` series and :data:`MAX_RESULT_POINTS` points; the
    series kept, the total and the warnings."""
    counts = mask.sum(axis=0)
    order = np.flatnonzero(counts > 0).tolist()
    if sort:
        order.sort(key=lambda j: table.pairs(int(lids[j])))
    kept: list[_Series] = []
    points = 0
    for j in order:
        n = int(counts[j])
        if len(kept) >= MAX_RESULT_SERIES or points + n > MAX_RESULT_POINTS:
            break
        present = np.flatnonzero(mask[:, j])
        kept.append((_labels(table, int(lids[j])), ts[present].tolist(), vals[present, j].tolist()))
        points += n
    warnings: list[str] = []
    if len(kept) < len(order):
        warnings.append(f"showing {len(kept)} of {len(order)} series (at most {MAX_RESULT_SERIES} series and "
                        f"{MAX_RESULT_POINTS:,} points): narrow the query or raise the step")
    result = [{"metric": labels, "values": [[_unix(t), format_value(v)] for t, v in zip(t_list, vs, strict=True)]}
              for labels, t_list, vs in kept]
    return {"resultType": "matrix", "result": result}, kept, len(order), warnings


def _answer(data: dict[str, Any], warnings: list[str], text: str) -> QueryAnswer:
    body: dict[str, Any] = {"status": "success", "data": data}
    if warnings:
        body["warnings"] = warnings
        text += "\n" + "\n".join(f"warning: {w}" for w in warnings)
    return QueryAnswer(True, body, text, warnings=warnings)


def series_name(labels: dict[str, str]) -> str:
    """A series as Prometheus prints it: ``name{a="b", ...}`` (``{}`` for no labels)."""
    name = labels.get(METRIC_NAME, "")
    rest = {k: v for k, v in labels.items() if k != METRIC_NAME}
    return (name + format_labels(rest)) if rest or not name else name


def _vector_text(result: list[dict[str, Any]], total: int) -> str:
    if not result:
        return "(empty result)"
    rows = [["VALUE", "SERIES"]]
    for r in result[:TEXT_SERIES]:
        rows.append([short_number(float(r["value"][1])), series_name(r["metric"])])
    width = max(len(r[0]) for r in rows)
    text = "\n".join(f"{r[0].ljust(width)}   {r[1]}" for r in rows)
    if total > TEXT_SERIES:
        text += f"\n... {total - min(len(result), TEXT_SERIES)} more series not shown"
    return text


def sparkline(values: list[float | None], width: int) -> str:
    """``values`` resampled to at most ``width`` characters (mean per bucket) on their own scale."""
    if not values or width <= 0:
        return ""
    n = len(values)
    buckets: list[float | None] = []
    cells = min(width, n)
    for i in range(cells):
        chunk = [v for v in values[i * n // cells:(i + 1) * n // cells] if v is not None and math.isfinite(v)]
        buckets.append(sum(chunk) / len(chunk) if chunk else None)
    nums = [b for b in buckets if b is not None]
    if not nums:
        return " " * cells
    lo, hi = min(nums), max(nums)
    out = []
    for b in buckets:
        if b is None:
            out.append(" ")
        elif hi <= lo:
            out.append(BLOCKS[0] if hi == 0 else BLOCKS[3])
        else:
            out.append(BLOCKS[min(len(BLOCKS) - 1, int((b - lo) / (hi - lo) * (len(BLOCKS) - 1) + 0.5))])
    return "".join(out)


def grid(ts: list[int], vs: list[float], first_ms: int, last_ms: int, width: int, *,
         hold_ms: int = 0) -> list[float | None]:
    """A series' points placed on ``width`` equal time cells from ``first_ms`` to ``last_ms``
    (the mean of the points in each; None where there is none), so gaps show as gaps.

    Args:
        hold_ms: a cell without a point takes the previous point's value while that point is
            at most this many ms older than the cell (a line across the cells between two
            points of one series, rather than a dot per point, when cells outnumber points).
    """
    if width <= 0:
        return []
    span = max(1, last_ms - first_ms)
    sums = [0.0] * width
    counts = [0] * width
    for t, v in zip(ts, vs, strict=True):
        if not math.isfinite(v):
            continue
        i = min(width - 1, max(0, (t - first_ms) * width // (span + 1)))
        sums[i] += v
        counts[i] += 1
    out: list[float | None] = [s / c if c else None for s, c in zip(sums, counts, strict=True)]
    if hold_ms > 0:
        k = 0
        held: tuple[int, float] | None = None
        for i in range(width):
            cell_ms = first_ms + i * (span + 1) // width
            while k < len(ts) and ts[k] < cell_ms + (span + 1) // width:
                if math.isfinite(vs[k]):
                    held = (ts[k], vs[k])
                k += 1
            if out[i] is None and held is not None and cell_ms - held[0] <= hold_ms:
                out[i] = held[1]
    return out


def _matrix_text(series: list[_Series], total: int) -> str:
    if not series:
        return "(empty result)"
    first = min(s[1][0] for s in series)
    last = max(s[1][-1] for s in series)
    width = min(SPARK_WIDTH, max(len(s[1]) for s in series))
    rows = [["LAST", "MIN", "MAX", "TREND", "SERIES"]]
    for labels, ts, vs in series[:TEXT_SERIES]:
        finite = [v for v in vs if math.isfinite(v)]
        lo, hi = (short_number(min(finite)), short_number(max(finite))) if finite else ("-", "-")
        rows.append([short_number(vs[-1]), lo, hi,
                     sparkline(grid(ts, vs, first, last, width), width), series_name(labels)])
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    text = "\n".join("   ".join([*(c.ljust(w) for c, w in zip(r[:4], widths, strict=True)), r[4]]) for r in rows)
    text += (f"\nTREND: {_mmss((first - EPOCH_MS) / 1000)} .. {_mmss((last - EPOCH_MS) / 1000)} of run time, "
             "each series on its own scale (min to max)")
    if total > TEXT_SERIES:
        text += f"\n... {total - min(len(series), TEXT_SERIES)} more series not shown"
    return text
