"""PromQL functions with Prometheus 2.42 semantics (source: ``promql/functions.go`` v2.42.0).

Range-vector functions work on a :class:`~alerts.promql.values.Matrix` (a time grid with
a presence mask), vectorised over series where the Go code's arithmetic can be matched
exactly (``rate``/``increase``/``delta`` including ``extrapolatedRate``, ``irate``,
``changes``, ``resets``, ``count``/``sum``/``min``/``max``/``last``/``present_over_time``);
the rest loop over series in Python with the Go algorithms (incremental means, Welford
variance, Kahan-summed regressions, Holt-Winters).
"""

from __future__ import annotations

import calendar
import contextlib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import numpy as np
import promql_parser as pp

from alerts.promql import gomath
from alerts.promql.labels import METRIC_NAME, LabelTable, has_duplicates
from alerts.promql.regex import go_regex
from alerts.promql.storage import BoolArray, FloatArray, IntArray
from alerts.promql.values import Matrix, QueryError, UnsupportedError, Value, Vector

LABEL_NAME_RE = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


@dataclass
class CallArgs:
    """Evaluated arguments of one call, the evaluation time and the node's plan cache."""

    args: list[Value]
    t_ms: int
    table: LabelTable
    plan: Callable[[bytes, Callable[[], Any]], Any]

    def vector(self, i: int) -> Vector:
        v = self.args[i]
        assert isinstance(v, Vector)
        return v

    def matrix(self, i: int) -> Matrix:
        v = self.args[i]
        assert isinstance(v, Matrix)
        return v

    def scalar(self, i: int) -> float:
        v = self.args[i]
        assert isinstance(v, float)
        return v

    def string(self, i: int) -> str:
        v = self.args[i]
        assert isinstance(v, str)
        return v


Impl = Callable[[CallArgs], Vector]

KEEP_NAME = {"last_over_time", "sort", "sort_desc", "label_replace", "label_join", "histogram_quantile",
             "histogram_count", "histogram_sum", "histogram_fraction"}
"""Functions whose output labels are final (everything else drops ``__name__``)."""

DATE_FUNCS = {"day_of_month", "day_of_week", "day_of_year", "days_in_month", "hour", "minute", "month", "year"}

NOT_IN_242 = {
    "sort_by_label": "added in Prometheus 2.51 (experimental)",
    "sort_by_label_desc": "added in Prometheus 2.51 (experimental)",
    "mad_over_time": "added in Prometheus 2.52 (experimental)",
    "double_exponential_smoothing": "Prometheus 3.0's name for holt_winters",
    "histogram_avg": "added in Prometheus 2.49",
    "histogram_stddev": "added in Prometheus 2.49",
    "histogram_stdvar": "added in Prometheus 2.49",
    "info": "added in Prometheus 3.0 (experimental)",
    "limitk": "added in Prometheus 2.54 (experimental)",
    "limit_ratio": "added in Prometheus 2.54 (experimental)",
}


def _mask_fill(m: Matrix, fill: float) -> FloatArray:
    return np.where(m.mask, m.vals, fill)


def _first_last(m: Matrix) -> tuple[IntArray, IntArray]:
    k = m.mask.shape[0]
    first = m.mask.argmax(axis=0)
    last = k - 1 - m.mask[::-1].argmax(axis=0)
    return first, last


def _prev_rows(m: Matrix) -> IntArray:
    """For every cell, the row of the previous sample of the same series (-1 when none)."""
    k = m.mask.shape[0]
    rows = np.where(m.mask, np.arange(k)[:, None], -1)
    acc = np.maximum.accumulate(rows, axis=0)
    prev = np.full_like(acc, -1)
    prev[1:] = acc[:-1]
    return prev


def _counter_pairs(m: Matrix) -> tuple[FloatArray, FloatArray, Any]:
    """(current, previous, valid) over consecutive sample pairs of each series."""
    prev = _prev_rows(m)
    valid = m.mask & (prev >= 0)
    cols = np.arange(m.vals.shape[1])[None, :]
    prev_vals = m.vals[np.where(prev >= 0, prev, 0), cols]
    return m.vals, prev_vals, valid


def _counter_resets(m: Matrix, first: IntArray, last: IntArray, n: IntArray) -> tuple[Any, FloatArray | None]:
    """Counter resets of each series: (``resets`` [K, N], true where a sample is below the
    previous sample of its series; ``prev`` [K, N], that previous sample), or (None, None)
    when there is none.

    A series whose samples fill the rows from its first to its last sample (the usual
    case: one sample per scrape) has its previous sample in the row above, so only series
    with gaps need :func:`_counter_pairs`.
    """
    vals, mask = m.vals, m.mask
    gap = (n > 0) & (last - first + 1 != n)
    gapped = bool(gap.any())
    with np.errstate(invalid="ignore"):
        # Cells without a sample hold NaN, and comparisons with NaN are false, so this is
        # "both cells are samples and the value went down".
        down = vals[1:] < vals[:-1]
        if not gapped and not down.any():
            return None, None
        resets = np.zeros(mask.shape, dtype=bool)
        resets[1:] = down & mask[1:] & mask[:-1]
        gap_prev: FloatArray | None = None
        if gapped:
            sub = Matrix(m.lids[gap], m.ts, vals[:, gap], mask[:, gap], m.start_ms, m.end_ms)
            cur, gap_prev, valid = _counter_pairs(sub)
            resets[:, gap] = valid & (cur < gap_prev)
    if not resets.any():
        return None, None
    prev = np.empty_like(vals)
    prev[0] = np.nan
    prev[1:] = vals[:-1]
    if gapped:
        prev[:, gap] = gap_prev
    return resets, prev


def _out(m: Matrix, keep: Any, vals: FloatArray) -> Vector:
    return Vector(m.lids[keep], np.asarray(vals, dtype=np.float64)[keep])


def extrapolated_rate(m: Matrix, is_counter: bool, is_rate: bool) -> Vector:
    """functions.go ``extrapolatedRate`` (rate, increase, delta)."""
    if len(m) == 0:
        return Vector.empty()
    n = m.mask.sum(axis=0)
    keep = n >= 2
    first, last = _first_last(m)
    cols = np.arange(m.vals.shape[1])
    fv = m.vals[first, cols]
    lv = m.vals[last, cols]
    with np.errstate(all="ignore"):
        result = lv - fv
        if is_counter:
            resets, prev = _counter_resets(m, first, last, n)
            if resets is not None and prev is not None:
                for k in np.flatnonzero(resets.any(axis=1)).tolist():
                    result = result + np.where(resets[k], prev[k], 0.0)
        tf = m.ts[first].astype(np.float64)
        tl = m.ts[last].astype(np.float64)
        to_start = (tf - m.start_ms) / 1000.0
        to_end = (m.end_ms - tl) / 1000.0
        sampled = (tl - tf) / 1000.0
        avg = sampled / np.maximum(n - 1, 1)
        if is_counter:
            zero = (result > 0) & (fv >= 0)
            to_zero = sampled * (fv / np.where(result != 0, result, 1.0))
            to_start = np.where(zero & (to_zero < to_start), to_zero, to_start)
        threshold = avg * 1.1
        interval = sampled + np.where(to_start < threshold, to_start, avg / 2) + np.where(to_end < threshold, to_end,
                                                                                           avg / 2)
        factor = interval / sampled
        if is_rate:
            factor = factor / ((m.end_ms - m.start_ms) / 1000.0)
        result = result * factor
    return _out(m, keep, result)


def instant_value(m: Matrix, is_rate: bool) -> Vector:
    """functions.go ``instantValue`` (irate, idelta)."""
    if len(m) == 0:
        return Vector.empty()
    n = m.mask.sum(axis=0)
    _, last = _first_last(m)
    prev = _prev_rows(m)
    cols = np.arange(m.vals.shape[1])
    before = prev[last, cols]
    keep = (n >= 2) & (before >= 0)
    before = np.where(before >= 0, before, 0)
    lv = m.vals[last, cols]
    pv = m.vals[before, cols]
    with np.errstate(all="ignore"):
        res = np.where(is_rate & (lv < pv), lv, lv - pv)
        dt = (m.ts[last] - m.ts[before]).astype(np.float64)
        keep &= dt != 0
        if is_rate:
            res = res / (dt / 1000.0)
    return _out(m, keep, res)


def _changes(m: Matrix, resets: bool) -> Vector:
    if len(m) == 0:
        return Vector.empty()
    cur, prev, valid = _counter_pairs(m)
    with np.errstate(invalid="ignore"):
        hit = valid & (cur < prev) if resets else valid & (cur != prev) & ~(np.isnan(cur) & np.isnan(prev))
    return Vector(m.lids, hit.sum(axis=0).astype(np.float64))


def kahan_inc(inc: float, total: float, c: float) -> tuple[float, float]:
    """functions.go ``kahanSumInc`` (Neumaier's variant)."""
    t = total + inc
    if abs(total) >= abs(inc):
        c += (total - t) + inc
    else:
        c += (inc - t) + total
    return t, c


def incremental_mean(values: list[float]) -> float:
    """Prometheus 2.42's running mean of the ``avg`` aggregation (engine.go, not
    compensated; ``avg_over_time`` is, :func:`_avg_over_time`), Inf-aware."""
    mean = 0.0
    count = 0.0
    for v in values:
        count += 1
        if math.isinf(mean):
            if math.isinf(v) and (mean > 0) == (v > 0):
                continue
            if not math.isinf(v) and not math.isnan(v):
                continue
        mean += v / count - mean / count
    return mean


def welford_var(values: list[float]) -> float:
    """Population variance as 2.42's ``stdvar`` aggregation computes it."""
    count = 0.0
    mean = 0.0
    aux = 0.0
    for v in values:
        count += 1
        delta = v - mean
        mean += delta / count
        aux += delta * (v - mean)
    return aux / count if count else math.nan


def _var_over_time(values: list[float]) -> float:
    count = 0.0
    mean = c_mean = aux = c_aux = 0.0
    for v in values:
        count += 1
        delta = v - (mean + c_mean)
        mean, c_mean = kahan_inc(delta / count, mean, c_mean)
        aux, c_aux = kahan_inc(delta * (v - (mean + c_mean)), aux, c_aux)
    return (aux + c_aux) / count


def quantile(q: float, values: list[float]) -> float:
    """functions.go ``quantile``: linear interpolation between ranks, NaNs sorted first."""
    if not values:
        return math.nan
    if math.isnan(q):
        return math.nan
    if q < 0:
        return -math.inf
    if q > 1:
        return math.inf
    vs = sorted(values, key=lambda x: (not math.isnan(x), x if not math.isnan(x) else 0.0))
    n = float(len(vs))
    rank = q * (n - 1)
    lower = max(0.0, math.floor(rank))
    upper = min(n - 1, lower + 1)
    weight = rank - math.floor(rank)
    return vs[int(lower)] * (1 - weight) + vs[int(upper)] * weight


def top_bottom_k(vals: FloatArray, members: list[int], k: int, top: bool) -> list[int]:
    """Element indices of one group's top/bottom k, in Prometheus' output order."""
    def key(i: int) -> tuple[int, float]:
        v = float(vals[i])
        if math.isnan(v):
            return (0, 0.0)  # NaN loses against every number in both topk and bottomk
        return (1, v if top else -v)

    ranked = sorted(members, key=key, reverse=True)
    return ranked[:k]


def _linear_regression(ts: list[float], vs: list[float], intercept_ms: float) -> tuple[float, float]:
    n = 0.0
    sx = cx = sy = cy = sxy = cxy = sx2 = cx2 = 0.0
    init_y = vs[0]
    const_y = True
    for i, (t, v) in enumerate(zip(ts, vs, strict=True)):
        if const_y and i > 0 and v != init_y:
            const_y = False
        n += 1.0
        x = (t - intercept_ms) / 1e3
        sx, cx = kahan_inc(x, sx, cx)
        sy, cy = kahan_inc(v, sy, cy)
        sxy, cxy = kahan_inc(x * v, sxy, cxy)
        sx2, cx2 = kahan_inc(x * x, sx2, cx2)
    if const_y:
        if math.isinf(init_y):
            return math.nan, math.nan
        return 0.0, init_y
    sx, sy, sxy, sx2 = sx + cx, sy + cy, sxy + cxy, sx2 + cx2
    cov = sxy - sx * sy / n
    var = sx2 - sx * sx / n
    with np.errstate(all="ignore"):
        slope = float(np.float64(cov) / np.float64(var))
    return slope, sy / n - slope * sx / n


def _per_series(m: Matrix, f: Callable[[list[float], list[float]], float | None]) -> Vector:
    lids: list[int] = []
    out: list[float] = []
    for j in range(m.vals.shape[1]):
        rows = np.flatnonzero(m.mask[:, j])
        if rows.size == 0:
            continue
        res = f(m.ts[rows].astype(np.float64).tolist(), m.vals[rows, j].tolist())
        if res is None:
            continue
        lids.append(int(m.lids[j]))
        out.append(res)
    return Vector(np.asarray(lids, dtype=np.int64), np.asarray(out, dtype=np.float64))


def _holt_winters(vs: list[float], sf: float, tf: float) -> float | None:
    if len(vs) < 2:
        return None
    s0 = 0.0
    s1 = vs[0]
    b = vs[1] - vs[0]
    for i in range(1, len(vs)):
        x = sf * vs[i]
        if i - 1 != 0:
            b = tf * (s1 - s0) + (1 - tf) * b
        y = (1 - sf) * (s1 + b)
        s0, s1 = s1, x + y
    return s1


def _sum_seq(vs: list[float]) -> float:
    total = 0.0
    for v in vs:
        total += v
    return total


# ---------------------------------------------------------------------------- vector functions

def _simple(f: Callable[[FloatArray], FloatArray]) -> Impl:
    def impl(a: CallArgs) -> Vector:
        v = a.vector(0)
        with np.errstate(all="ignore"):
            return Vector(v.lids, np.asarray(f(v.vals), dtype=np.float64))
    return impl


def _round(a: CallArgs) -> Vector:
    v = a.vector(0)
    to_nearest = a.scalar(1) if len(a.args) > 1 else 1.0
    inv = 1.0 / to_nearest
    with np.errstate(all="ignore"):
        return Vector(v.lids, np.floor(v.vals * inv + 0.5) / inv)


def _clamp(a: CallArgs) -> Vector:
    v = a.vector(0)
    lo, hi = a.scalar(1), a.scalar(2)
    if hi < lo:
        return Vector.empty()
    return Vector(v.lids, np.maximum(lo, np.minimum(hi, v.vals)))


def _clamp_min(a: CallArgs) -> Vector:
    v = a.vector(0)
    return Vector(v.lids, np.maximum(a.scalar(1), v.vals))


def _clamp_max(a: CallArgs) -> Vector:
    v = a.vector(0)
    return Vector(v.lids, np.minimum(a.scalar(1), v.vals))


def _sgn(x: FloatArray) -> FloatArray:
    """functions.go ``funcSgn``: -1, 1, or the value itself (NaN, 0 and -0 stay as they are)."""
    return np.where(x < 0, -1.0, np.where(x > 0, 1.0, x))


def _date(kind: str) -> Impl:
    def part(v: float) -> float:
        d = datetime.fromtimestamp(int(v), tz=UTC)
        if kind == "day_of_month":
            return float(d.day)
        if kind == "day_of_week":
            return float((d.weekday() + 1) % 7)
        if kind == "day_of_year":
            return float(d.timetuple().tm_yday)
        if kind == "days_in_month":
            return float(calendar.monthrange(d.year, d.month)[1])
        if kind == "hour":
            return float(d.hour)
        if kind == "minute":
            return float(d.minute)
        if kind == "month":
            return float(d.month)
        return float(d.year)

    def impl(a: CallArgs) -> Vector:
        v = a.vector(0)
        out = [math.nan if math.isnan(x) or math.isinf(x) else part(x) for x in v.vals.tolist()]
        return Vector(v.lids, np.asarray(out, dtype=np.float64))
    return impl


def _sort(desc: bool) -> Impl:
    def impl(a: CallArgs) -> Vector:
        v = a.vector(0)
        vals = v.vals.tolist()
        nums = [i for i, x in enumerate(vals) if not math.isnan(x)]
        nans = [i for i, x in enumerate(vals) if math.isnan(x)]
        nums.sort(key=lambda i: vals[i], reverse=desc)
        order = np.asarray(nums + nans, dtype=np.int64)
        return Vector(v.lids[order], v.vals[order])
    return impl


_GO_TEMPLATE = re.compile(r"\$(?:\{(\w+)\}|(\w+)|\$)")


def _expand(template: str, match: re.Match[str]) -> str:
    """Go ``Regexp.ExpandString``: ``$1``, ``${1}``, ``$name``; ``$$`` is a dollar."""
    def repl(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        name = m.group(1) or m.group(2)
        try:
            value = match.group(int(name)) if name.isdigit() else match.group(name)
        except IndexError:
            return ""
        return value or ""
    return _GO_TEMPLATE.sub(repl, template)


def _label_replace(a: CallArgs) -> Vector:
    v = a.vector(0)
    dst, repl, src, regex = a.string(1), a.string(2), a.string(3), a.string(4)
    try:
        rx = re.compile(f"(?:{go_regex(regex)})")
    except (re.error, UnsupportedError):
        raise QueryError(f"invalid regular expression in label_replace(): {regex}") from None
    if not LABEL_NAME_RE.match(dst):
        raise QueryError(f"invalid destination label name in label_replace(): {dst}")
    table = a.table

    def build() -> Any:
        out = []
        for lid in v.lids.tolist():
            m = rx.fullmatch(table.get(lid, src))
            if m is None:
                out.append(lid)
                continue
            res = _expand(repl, m)
            labels = dict(table.pairs(lid))
            labels.pop(dst, None)
            if res:
                labels[dst] = res
            out.append(table.intern_map(labels))
        arr = np.asarray(out, dtype=np.int64)
        _check_unique(arr)
        return arr

    key = b"lr" + v.lids.tobytes() + "\0".join((dst, repl, src, regex)).encode()
    return Vector(a.plan(key, build), v.vals)


def _label_join(a: CallArgs) -> Vector:
    v = a.vector(0)
    dst, sep = a.string(1), a.string(2)
    srcs = [a.string(i) for i in range(3, len(a.args))]
    if not LABEL_NAME_RE.match(dst):
        raise QueryError(f"invalid destination label name in label_join(): {dst}")
    table = a.table

    def build() -> Any:
        out = []
        for lid in v.lids.tolist():
            joined = sep.join(table.get(lid, s) for s in srcs)
            labels = dict(table.pairs(lid))
            labels.pop(dst, None)
            if joined:
                labels[dst] = joined
            out.append(table.intern_map(labels))
        arr = np.asarray(out, dtype=np.int64)
        _check_unique(arr)
        return arr

    key = b"lj" + v.lids.tobytes() + "\0".join((dst, sep, *srcs)).encode()
    return Vector(a.plan(key, build), v.vals)


def _check_unique(lids: IntArray) -> None:
    if has_duplicates(lids):
        raise QueryError("vector cannot contain metrics with the same labelset")


# ---------------------------------------------------------------------------- histogram_quantile

@dataclass
class _HistPlan:
    out: IntArray  # output label set per group
    idx: IntArray  # [G, B] input element index per bucket, sorted by bound; -1 padding
    bounds: FloatArray  # [G, B] upper bounds (+Inf padding is never read)
    width: IntArray  # buckets per group
    exact: bool  # no duplicate bounds and every group has +Inf last


@dataclass
class _HistMemo:
    """Per label set: (bucket group id, upper bound, output label set), or None without a valid ``le``."""

    info: dict[int, tuple[int, float, int] | None]
    group_ids: dict[tuple[tuple[str, str], ...], int]


def _hist_info(table: LabelTable, memo: _HistMemo, lid: int) -> tuple[int, float, int] | None:
    try:
        bound = _parse_go_float(table.get(lid, "le"))
    except ValueError:
        return None
    pairs = table.pairs(lid)
    sig = tuple(p for p in pairs if p[0] != "le")
    gid = memo.group_ids.setdefault(sig, len(memo.group_ids))
    return gid, bound, table.intern(tuple(p for p in pairs if p[0] not in ("le", METRIC_NAME)))


def _hist_plan(table: LabelTable, lids: IntArray, memo: _HistMemo | None = None) -> _HistPlan:
    if memo is None:
        memo = _HistMemo({}, {})
    info = memo.info
    groups: dict[int, list[tuple[float, int]]] = {}
    outs: dict[int, int] = {}
    for i, lid in enumerate(lids.tolist()):
        if lid in info:
            entry = info[lid]
        else:
            entry = info[lid] = _hist_info(table, memo, lid)
        if entry is None:
            continue
        gid, bound, out_lid = entry
        items = groups.get(gid)
        if items is None:
            items = groups[gid] = []
            outs[gid] = out_lid
        items.append((bound, i))
    out = np.asarray(list(outs.values()), dtype=np.int64)
    _check_unique(out)
    g = len(groups)
    b = max((len(x) for x in groups.values()), default=0)
    idx = np.full((g, b), -1, dtype=np.int64)
    bounds = np.full((g, b), np.inf)
    width = np.zeros(g, dtype=np.int64)
    exact = True
    for r, items in enumerate(groups.values()):
        items.sort(key=lambda x: x[0])
        w = len(items)
        width[r] = w
        ub = [x[0] for x in items]
        idx[r, :w] = [x[1] for x in items]
        bounds[r, :w] = ub
        if len(set(ub)) != len(ub) or not math.isinf(ub[-1]) or ub[-1] < 0:
            exact = False
    return _HistPlan(out, idx, bounds, width, exact)


def _parse_go_float(text: str) -> float:
    t = text.strip()
    if t != text or not t:
        raise ValueError(text)
    low = t.lower().lstrip("+-")
    if low in ("inf", "infinity"):
        return -math.inf if t.startswith("-") else math.inf
    if low == "nan":
        return math.nan
    if "_" in t:
        raise ValueError(text)
    return float(t)


def bucket_quantile(q: float, buckets: list[tuple[float, float]]) -> float:
    """functions.go / quantile.go ``bucketQuantile`` for one group of (upper bound, count)."""
    if math.isnan(q):
        return math.nan
    if q < 0:
        return -math.inf
    if q > 1:
        return math.inf
    bs = sorted(buckets, key=lambda x: x[0])
    if not math.isinf(bs[-1][0]) or bs[-1][0] < 0:
        return math.nan
    merged: list[list[float]] = []
    for ub, count in bs:
        if merged and merged[-1][0] == ub:
            merged[-1][1] += count
        else:
            merged.append([ub, count])
    top = -math.inf
    for item in merged:
        if item[1] > top:
            top = item[1]
        elif item[1] < top:
            item[1] = top
    if len(merged) < 2:
        return math.nan
    observations = merged[-1][1]
    if observations == 0:
        return math.nan
    rank = q * observations
    b = len(merged) - 1
    for i in range(len(merged) - 1):
        if merged[i][1] >= rank:
            b = i
            break
    if b == len(merged) - 1:
        return merged[-2][0]
    if b == 0 and merged[0][0] <= 0:
        return merged[0][0]
    start = 0.0
    end = merged[b][0]
    count = merged[b][1]
    if b > 0:
        start = merged[b - 1][0]
        count -= merged[b - 1][1]
        rank -= merged[b - 1][1]
    with np.errstate(all="ignore"):
        return float(start + (end - start) * np.float64(rank) / np.float64(count))


NonMonotonic = Literal["fix", "bisect", "scan"]
"""How :func:`bucket_quantiles` treats cumulative counts that decrease somewhere (see there)."""


def bucket_quantiles(q: float, bounds: FloatArray, counts: FloatArray, *, nonmonotonic: NonMonotonic = "fix",
                     divide_first: bool = True) -> FloatArray:
    """:func:`bucket_quantile` vectorised over rows of classic histograms.

    With the defaults each row gets the reference's semantics: counts are made monotonic
    (each the running maximum, as ``ensureMonotonic`` does); the quantile is interpolated
    linearly inside the first bucket whose count reaches rank ``q * observations``; a rank
    in the +Inf bucket gives the highest finite bound; a rank in a first bucket whose bound
    is <= 0 gives that bound; a row without observations (or with fewer than two buckets)
    gives NaN; ``q`` NaN, < 0 or > 1 gives NaN, -Inf, +Inf.

    Args:
        q: the quantile.
        bounds: upper bounds, shape (B,) shared by every row or (rows, B); strictly
            increasing along each row, the last +Inf.
        counts: cumulative counts, shape (rows, B), without NaN (the reference is the
            definition for NaN counts).
        nonmonotonic: ``fix`` (Prometheus, the alert evaluator) as above. The other two
            use the counts as given, observations being the +Inf bucket's count:
            ``bisect`` takes the bucket ``np.searchsorted`` (left) finds for the rank (the
            run's health sampler), ``scan`` the first bucket whose count reaches it (the
            simulator's service health). On monotonic counts all three agree; on others
            they may pick different buckets or interpolate between different counts. The
            health figures' bucket increases come from floored counters, which often
            decrease somewhere, and bundles recorded with them must stay byte-identical.
        divide_first: interpolate as ``start + (end - start) * (rank / count)``, as
            Prometheus' ``quantile.go`` does (the alert evaluator); False computes
            ``start + (end - start) * rank / count`` as :func:`bucket_quantile` does (the
            health figures). The two differ in the last bit only.

    Returns:
        One value per row, shape (rows,), in the unit of ``bounds``.

    Raises:
        ValueError: on mismatched shapes, NaN counts, or bounds that do not increase
            strictly to +Inf.
    """
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 2:
        raise ValueError(f"counts must have shape (rows, buckets), got {counts.shape}")
    bounds = np.broadcast_to(np.asarray(bounds, dtype=np.float64), counts.shape)
    rows, width = counts.shape
    if width and not (np.all(np.isposinf(bounds[:, -1])) and np.all(bounds[:, 1:] > bounds[:, :-1])):
        raise ValueError("bucket bounds must increase strictly along each row and end in +Inf")
    if np.isnan(counts).any():
        raise ValueError("bucket counts must not be NaN")
    if math.isnan(q) or q < 0 or q > 1:
        return np.full(rows, math.nan if math.isnan(q) else math.copysign(math.inf, q))
    if width < 2:
        return np.full(rows, math.nan)
    r_idx = np.arange(rows)
    if nonmonotonic == "fix":
        counts = np.maximum.accumulate(counts, axis=1)
    obs = counts[:, -1]
    rank = q * obs
    if nonmonotonic == "bisect":
        # numpy's binary search (``searchsorted``, side left), all rows in lockstep.
        lo = np.zeros(rows, dtype=np.int64)
        hi = np.full(rows, width, dtype=np.int64)
        while (active := lo < hi).any():
            mid = lo + ((hi - lo) >> 1)
            less = counts[r_idx, np.minimum(mid, width - 1)] < rank
            lo = np.where(active & less, mid + 1, lo)
            hi = np.where(active & ~less, mid, hi)
        b = np.minimum(lo, width - 1)
    else:
        hit = counts[:, : width - 1] >= rank[:, None]
        b = np.where(hit.any(axis=1), hit.argmax(axis=1), width - 1)
    res = np.empty(rows)
    last = b == width - 1
    res[last] = bounds[last, width - 2]
    low_edge = ~last & (b == 0) & (bounds[:, 0] <= 0)
    res[low_edge] = bounds[low_edge, 0]
    mid = ~last & ~low_edge
    bm = b[mid]
    rm = r_idx[mid]
    start = np.where(bm > 0, bounds[rm, np.maximum(bm - 1, 0)], 0.0)
    below = np.where(bm > 0, counts[rm, np.maximum(bm - 1, 0)], 0.0)
    with np.errstate(all="ignore"):
        if divide_first:
            res[mid] = start + (bounds[rm, bm] - start) * ((rank[mid] - below) / (counts[rm, bm] - below))
        else:
            res[mid] = start + (bounds[rm, bm] - start) * (rank[mid] - below) / (counts[rm, bm] - below)
    res[obs == 0] = np.nan
    return res


def _histogram_quantile(a: CallArgs) -> Vector:
    q = a.scalar(0)
    v = a.vector(1)
    plan: _HistPlan = a.plan(b"hq" + v.lids.tobytes(),
                             lambda: _hist_plan(a.table, v.lids, a.plan(b"hq-memo", lambda: _HistMemo({}, {}))))
    g = plan.out.shape[0]
    if g == 0:
        return Vector.empty()
    if not plan.exact or np.isnan(v.vals).any() or math.isnan(q) or q < 0 or q > 1:
        res = []
        for r in range(g):
            items = [(float(plan.bounds[r, c]), float(v.vals[plan.idx[r, c]])) for c in range(int(plan.width[r]))]
            res.append(bucket_quantile(q, items))
        return Vector(plan.out, np.asarray(res, dtype=np.float64))
    out = np.full(g, np.nan)
    for width in np.unique(plan.width).tolist():
        rows = np.flatnonzero(plan.width == width)
        out[rows] = bucket_quantiles(q, plan.bounds[rows, :width], v.vals[plan.idx[rows, :width]])
    return Vector(plan.out, out)


def _empty(_: CallArgs) -> Vector:
    return Vector.empty()


# ---------------------------------------------------------------------------- range functions

def _over_time(f: Callable[[list[float], list[float]], float | None]) -> Impl:
    def impl(a: CallArgs) -> Vector:
        return _per_series(a.matrix(0), f)
    return impl


def _count_over_time(a: CallArgs) -> Vector:
    m = a.matrix(0)
    return Vector(m.lids, m.mask.sum(axis=0).astype(np.float64))


def _kahan_rows(s: FloatArray, c: FloatArray, inc: FloatArray, live: BoolArray) -> None:
    """:func:`kahan_inc` for many series at once, in place: ``(s, c) += inc`` where ``live``."""
    t = s + inc
    comp = np.where(np.abs(s) >= np.abs(inc), (s - t) + inc, (inc - t) + s)
    np.copyto(c, c + comp, where=live)
    np.copyto(s, t, where=live)


def _sum_over_time(a: CallArgs) -> Vector:
    """functions.go ``funcSumOverTime`` (2.42): Kahan-Neumaier sum in time order, the
    compensation added at the end unless the sum is infinite."""
    m = a.matrix(0)
    n = m.vals.shape[1]
    total = np.zeros(n)
    comp = np.zeros(n)
    with np.errstate(all="ignore"):
        for i in range(m.vals.shape[0]):
            _kahan_rows(total, comp, m.vals[i], m.mask[i])
        return Vector(m.lids, np.where(np.isinf(total), total, total + comp))


def _avg_over_time(a: CallArgs) -> Vector:
    """functions.go ``funcAvgOverTime`` (2.42): a running mean ``mean += v/n - mean/n``
    summed with Kahan-Neumaier compensation, Inf-aware as there; series without samples
    in the window give nothing."""
    m = a.matrix(0)
    n = m.vals.shape[1]
    mean = np.zeros(n)
    comp = np.zeros(n)
    count = np.zeros(n)
    with np.errstate(all="ignore"):
        for i in range(m.vals.shape[0]):
            v = m.vals[i]
            live = m.mask[i]
            count += live
            inf_mean = np.isinf(mean)
            # an infinite mean stays when v is Inf of its sign, or any finite number
            skip = inf_mean & ((np.isinf(v) & ((mean > 0) == (v > 0))) | np.isfinite(v))
            _kahan_rows(mean, comp, v / count - mean / count, live & ~skip)
        out = np.where(np.isinf(mean), mean, mean + comp)
    keep = count > 0
    return Vector(m.lids[keep], out[keep])


def _minmax_over_time(is_max: bool) -> Impl:
    def impl(a: CallArgs) -> Vector:
        m = a.matrix(0)
        if len(m) == 0:
            return Vector.empty()
        filled = _mask_fill(m, np.nan)
        red = np.fmax.reduce(filled, axis=0) if is_max else np.fmin.reduce(filled, axis=0)
        return Vector(m.lids, red)
    return impl


def _last_over_time(a: CallArgs) -> Vector:
    m = a.matrix(0)
    if len(m) == 0:
        return Vector.empty()
    _, last = _first_last(m)
    return Vector(m.lids, m.vals[last, np.arange(m.vals.shape[1])])


def _present_over_time(a: CallArgs) -> Vector:
    m = a.matrix(0)
    return Vector(m.lids, np.ones(len(m)))


def _quantile_over_time(a: CallArgs) -> Vector:
    q = a.scalar(0)
    return _per_series(a.matrix(1), lambda _t, vs: quantile(q, vs))


def _deriv(a: CallArgs) -> Vector:
    return _per_series(a.matrix(0), lambda ts, vs: _linear_regression(ts, vs, ts[0])[0] if len(vs) >= 2 else None)


def _predict_linear(a: CallArgs) -> Vector:
    duration = a.scalar(1)
    t = float(a.t_ms)

    def f(ts: list[float], vs: list[float]) -> float | None:
        if len(vs) < 2:
            return None
        slope, intercept = _linear_regression(ts, vs, t)
        return slope * duration + intercept
    return _per_series(a.matrix(0), f)


def _holt(a: CallArgs) -> Vector:
    sf, tf = a.scalar(1), a.scalar(2)
    if not 0 < sf < 1:
        raise QueryError(f"invalid smoothing factor. Expected: 0 < sf < 1, got: {sf:f}")
    if not 0 < tf < 1:
        raise QueryError(f"invalid trend factor. Expected: 0 < tf < 1, got: {tf:f}")
    return _per_series(a.matrix(0), lambda _t, vs: _holt_winters(vs, sf, tf))


FUNCTIONS: dict[str, Impl] = {
    "abs": _simple(np.abs),
    "ceil": _simple(np.ceil),
    "floor": _simple(np.floor),
    "exp": _simple(gomath.vectorize(gomath.go_exp)),
    "sqrt": _simple(np.sqrt),
    "ln": _simple(gomath.vectorize(gomath.go_log)),
    "log2": _simple(gomath.vectorize(gomath.go_log2)),
    "log10": _simple(gomath.vectorize(gomath.go_log10)),
    "sgn": _simple(_sgn),
    "acos": _simple(gomath.vectorize(gomath.go_acos)),
    "acosh": _simple(gomath.vectorize(gomath.go_acosh)),
    "asin": _simple(gomath.vectorize(gomath.go_asin)),
    "asinh": _simple(gomath.vectorize(gomath.go_asinh)),
    "atan": _simple(gomath.vectorize(gomath.go_atan)),
    "atanh": _simple(gomath.vectorize(gomath.go_atanh)),
    "cos": _simple(gomath.vectorize(gomath.go_cos)),
    "cosh": _simple(gomath.vectorize(gomath.go_cosh)),
    "sin": _simple(gomath.vectorize(gomath.go_sin)),
    "sinh": _simple(gomath.vectorize(gomath.go_sinh)),
    "tan": _simple(gomath.vectorize(gomath.go_tan)),
    "tanh": _simple(gomath.vectorize(gomath.go_tanh)),
    "deg": _simple(lambda v: v * 180.0 / math.pi),  # functions.go: two roundings, not np.degrees' one
    "rad": _simple(lambda v: v * math.pi / 180.0),
    "round": _round,
    "clamp": _clamp,
    "clamp_min": _clamp_min,
    "clamp_max": _clamp_max,
    "sort": _sort(False),
    "sort_desc": _sort(True),
    "label_replace": _label_replace,
    "label_join": _label_join,
    "histogram_quantile": _histogram_quantile,
    "histogram_count": _empty,
    "histogram_sum": _empty,
    "histogram_fraction": _empty,
    "rate": lambda a: extrapolated_rate(a.matrix(0), True, True),
    "increase": lambda a: extrapolated_rate(a.matrix(0), True, False),
    "delta": lambda a: extrapolated_rate(a.matrix(0), False, False),
    "irate": lambda a: instant_value(a.matrix(0), True),
    "idelta": lambda a: instant_value(a.matrix(0), False),
    "changes": lambda a: _changes(a.matrix(0), False),
    "resets": lambda a: _changes(a.matrix(0), True),
    "deriv": _deriv,
    "predict_linear": _predict_linear,
    "holt_winters": _holt,
    "avg_over_time": _avg_over_time,
    "sum_over_time": _sum_over_time,
    "count_over_time": _count_over_time,
    "min_over_time": _minmax_over_time(False),
    "max_over_time": _minmax_over_time(True),
    "stddev_over_time": _over_time(lambda _t, vs: math.sqrt(_var_over_time(vs))),
    "stdvar_over_time": _over_time(lambda _t, vs: _var_over_time(vs)),
    "quantile_over_time": _quantile_over_time,
    "last_over_time": _last_over_time,
    "present_over_time": _present_over_time,
}
for _name in DATE_FUNCS:
    FUNCTIONS[_name] = _date(_name)

HANDLED_BY_NODE = {"time", "pi", "vector", "scalar", "absent", "absent_over_time", "timestamp"}


def supported(name: str) -> bool:
    """Whether ``name`` is a Prometheus 2.42 function this evaluator implements."""
    return name in FUNCTIONS or name in HANDLED_BY_NODE


def why_unsupported(name: str) -> str:
    return NOT_IN_242.get(name, "not implemented by the embedded evaluator")


def lookup(name: str) -> Impl:
    return FUNCTIONS.get(name, _empty)


_REGISTERED = False


def register_parser_functions() -> None:
    """Teach ``promql-parser`` the 2.42 function it lacks (``holt_winters``)."""
    global _REGISTERED
    if _REGISTERED:
        return
    vt = pp.ValueType
    with contextlib.suppress(ValueError):  # a later parser version may know it already
        pp.register_extra_functions([pp.Function("holt_winters", [vt.Matrix, vt.Scalar, vt.Scalar], vt.Vector)])
    _REGISTERED = True


def format_float(value: float) -> str:
    """Go's ``strconv.FormatFloat(v, 'f', -1, 64)`` (used by ``count_values``)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return np.format_float_positional(value, trim="-", unique=True)
