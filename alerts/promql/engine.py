"""Compile ``promql-parser`` ASTs into evaluable nodes with Prometheus 2.42 semantics.

:func:`compile_query` walks the typed AST of ``promql_parser.parse`` and builds one node
per construct; every construct the parser accepts but Prometheus 2.42 or this evaluator
does not support raises :class:`UnsupportedError` naming it, at compile (= rule load)
time. Semantics follow ``promql/engine.go`` and ``promql/functions.go`` of Prometheus
v2.42.0 (cited per method): instant selectors with the 5-minute lookback and staleness,
range selectors closed on both ends, vector matching with ``on``/``ignoring`` and
``group_left``/``group_right``, set operators, aggregations with ``by``/``without``,
``offset``, ``@`` and subqueries.

Speed: a vector is two numpy arrays (label-set ids and values). Whatever depends only on
the label sets of a node's inputs -- grouping, matching pairs, output label sets -- is a
*plan* computed in Python once and cached by the bytes of the input id arrays; values
are then combined with numpy. Over a simulator run the series sets change rarely, so
almost every evaluation is a cache hit plus a few vectorised operations.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import promql_parser as pp

from alerts.promql import functions as fn
from alerts.promql import gomath
from alerts.promql.labels import METRIC_NAME, LabelPairs, LabelTable, LidMap, has_duplicate_pairs, has_duplicates
from alerts.promql.regex import go_regex
from alerts.promql.storage import FloatArray, IntArray, Storage
from alerts.promql.values import Matrix, QueryError, UnsupportedError, Value, Vector

DEFAULT_LOOKBACK_MS = 300_000
"""Prometheus' default ``--query.lookback-delta`` (5 minutes)."""

ARITHMETIC = {"+", "-", "*", "/", "%", "^", "atan2"}
DROPS_NAME = {"+", "-", "*", "/", "%", "^"}
"""engine.go ``shouldDropMetricName``: ``atan2`` keeps the metric name."""
COMPARISON = {"==", "!=", ">", "<", ">=", "<="}
SET_OPS = {"and", "or", "unless"}

AGGREGATIONS_242 = {"sum", "avg", "count", "min", "max", "group", "stddev", "stdvar", "topk", "bottomk",
                    "quantile", "count_values"}
"""Aggregation operators of Prometheus 2.42 (``limitk``/``limit_ratio`` came in 3.x)."""


@dataclass
class EvalContext:
    """What one evaluation needs.

    Attributes:
        storage: the samples.
        t_ms: evaluation time, ms.
        lookback_ms: instant-vector lookback.
        start_ms, end_ms: the query's start and end (for ``@ start()`` / ``@ end()``);
            both equal ``t_ms`` for instant queries and rule evaluation.
        subquery_step_ms: default subquery resolution (the global evaluation interval).
        horizon_ms: samples after this time do not exist for this evaluation (None: all do).
            Rule evaluation sets it to the evaluation time, as a Prometheus server (and
            ``promtool test rules``, which appends the samples up to each step before
            evaluating it) has no later sample: ``x offset -5m`` then reads the newest sample
            at or before the evaluation time within the lookback of ``t + 5m``.
    """

    storage: Storage
    t_ms: int
    lookback_ms: int = DEFAULT_LOOKBACK_MS
    start_ms: int | None = None
    end_ms: int | None = None
    subquery_step_ms: int = 60_000
    horizon_ms: int | None = None

    @property
    def labels(self) -> LabelTable:
        return self.storage.labels

    def at(self, t_ms: int) -> EvalContext:
        return EvalContext(self.storage, t_ms, self.lookback_ms, self.start_ms, self.end_ms, self.subquery_step_ms,
                           self.horizon_ms)


@dataclass
class CompileOptions:
    """Feature switches.

    Attributes:
        negative_offset: allow ``offset -5m`` (look-ahead: ``x offset -5m`` at ``t`` reads
            ``x`` at ``t + 5m``). On by default: Prometheus 2.42 has the feature stable --
            ``--enable-feature=promql-negative-offset`` is a no-op since 2.33, and both the
            server (``cmd/prometheus/main.go``) and ``promtool test rules``
            (``cmd/promtool/main.go``) build their engine with ``EnableNegativeOffset: true``.
            False refuses it at compile time, as Prometheus before 2.26 did.
    """

    negative_offset: bool = True


class _PlanCache:
    """A small per-node cache of label plans keyed by input id bytes.

    Plans hold label-set ids of one :class:`LabelTable`; a node evaluated against another
    table (another storage) starts afresh.
    """

    __slots__ = ("_d", "_table")

    def __init__(self) -> None:
        self._d: dict[bytes, Any] = {}
        self._table: LabelTable | None = None

    def get(self, table: LabelTable, key: bytes, build: Callable[[], Any]) -> Any:
        if table is not self._table:
            self._d.clear()
            self._table = table
        hit = self._d.get(key)
        if hit is None:
            if len(self._d) >= 16:
                self._d.clear()
            hit = build()
            self._d[key] = hit
        return hit


def _dup_check(lids: IntArray) -> None:
    if has_duplicates(lids):
        raise QueryError("vector cannot contain metrics with the same labelset")


class Node:
    """An evaluable expression node."""

    kind = "vector"
    """Result type: ``scalar``, ``string``, ``vector`` or ``matrix``."""

    def eval(self, ctx: EvalContext) -> Value:
        raise NotImplementedError

    def eval_vector(self, ctx: EvalContext) -> Vector:
        out = self.eval(ctx)
        assert isinstance(out, Vector)
        return out

    def eval_scalar(self, ctx: EvalContext) -> float:
        out = self.eval(ctx)
        assert isinstance(out, float)
        return out

    def eval_matrix(self, ctx: EvalContext) -> Matrix:
        out = self.eval(ctx)
        assert isinstance(out, Matrix)
        return out

    def children(self) -> list[Node]:
        return []


class NumberNode(Node):
    kind = "scalar"

    def __init__(self, value: float) -> None:
        self.value = float(value)

    def eval(self, ctx: EvalContext) -> Value:
        return self.value


class StringNode(Node):
    kind = "string"

    def __init__(self, value: str) -> None:
        self.value = value

    def eval(self, ctx: EvalContext) -> Value:
        return self.value


# ---------------------------------------------------------------------------- selectors


@dataclass
class Matcher:
    """One label matcher; regexes are anchored as Prometheus does (``^(?:re)$``)."""

    name: str
    op: str  # "=", "!=", "=~", "!~"
    value: str
    regex: re.Pattern[str] | None = None

    def matches(self, value: str) -> bool:
        if self.op == "=":
            return value == self.value
        if self.op == "!=":
            return value != self.value
        assert self.regex is not None
        hit = self.regex.fullmatch(value) is not None
        return hit if self.op == "=~" else not hit


class SelectorNode(Node):
    """An instant vector selector (``vectorSelectorSingle``): latest sample within lookback."""

    kind = "vector"

    def __init__(self, name: str | None, matchers: list[Matcher], offset_ms: int, at: tuple[str, int] | None) -> None:
        self.name = name
        self.matchers = matchers
        self.offset_ms = offset_ms
        self.at = at
        self._storage: Storage | None = None
        self._cols_arr: IntArray = np.zeros(0, dtype=np.int64)
        self._checked = 0
        self._version = -1

    def cols(self, storage: Storage) -> IntArray:
        """Columns whose labels match, updated incrementally as series appear."""
        if storage is not self._storage:
            self._storage, self._checked, self._version = storage, 0, -1
            self._cols_arr = np.zeros(0, dtype=np.int64)
        if storage.version == self._version:
            return self._cols_arr
        self._version = storage.version
        candidates: Sequence[int] = storage.by_name.get(self.name, []) if self.name is not None \
            else range(storage.n_cols)
        table = storage.labels
        col_lid = storage.col_lid
        matchers = self.matchers
        added: list[int] = []
        for col in candidates[self._checked:]:
            labels = table.dict(int(col_lid[col]))
            if all(m.matches(labels.get(m.name, "")) for m in matchers):
                added.append(col)
        self._checked = len(candidates)
        if added:
            self._cols_arr = np.concatenate((self._cols_arr, np.asarray(added, dtype=np.int64)))
        return self._cols_arr

    def ref_time(self, ctx: EvalContext) -> int:
        base = ctx.t_ms
        if self.at is not None:
            kind, value = self.at
            base = value if kind == "at" else (ctx.start_ms if kind == "start" else ctx.end_ms) or ctx.t_ms
        return base - self.offset_ms

    def eval(self, ctx: EvalContext) -> Value:
        st = ctx.storage
        ref, lookback = self.ref_time(ctx), ctx.lookback_ms
        horizon = ctx.horizon_ms
        if horizon is not None and ref > horizon:  # the window [ref - lookback, ref], cut at the horizon
            ref, lookback = horizon, lookback - (ref - horizon)
            if lookback < 0:
                return Vector.empty()
        cols, vals, ts = st.instant(self.cols(st), ref, lookback)
        return Vector(st.col_lid[cols], vals, ts)


class MatrixSelectorNode(Node):
    """A range selector ``sel[range]`` (``matrixIterSlice``): samples in ``[t - range, t]``."""

    kind = "matrix"

    def __init__(self, selector: SelectorNode, range_ms: int) -> None:
        self.selector = selector
        self.range_ms = range_ms

    def eval(self, ctx: EvalContext) -> Value:
        st = ctx.storage
        end = self.selector.ref_time(ctx)
        start = end - self.range_ms
        last = end if ctx.horizon_ms is None else min(end, ctx.horizon_ms)
        cols, ts, vals, mask = st.window(self.selector.cols(st), start, last)
        return Matrix(st.col_lid[cols], ts, vals, mask, start, end)

    def children(self) -> list[Node]:
        return [self.selector]


class SubqueryNode(Node):
    """``expr[range:step]`` evaluated at step-aligned times (engine.go ``SubqueryExpr``)."""

    kind = "matrix"

    def __init__(self, expr: Node, range_ms: int, step_ms: int | None, offset_ms: int,
                 at: tuple[str, int] | None) -> None:
        self.expr = expr
        self.range_ms = range_ms
        self.step_ms = step_ms
        self.offset_ms = offset_ms
        self.at = at

    def eval(self, ctx: EvalContext) -> Value:
        base = ctx.t_ms
        if self.at is not None:
            kind, value = self.at
            base = value if kind == "at" else (ctx.start_ms if kind == "start" else ctx.end_ms) or ctx.t_ms
        end = base - self.offset_ms
        start = end - self.range_ms
        step = self.step_ms or ctx.subquery_step_ms
        first = -(-start // step) * step  # first step-aligned time >= start
        times = list(range(first, end + 1, step))
        order: dict[int, int] = {}
        rows: list[tuple[int, Vector]] = []
        for t in times:
            v = self.expr.eval(ctx.at(t))
            if isinstance(v, float):
                v = Vector(np.asarray([ctx.labels.intern(())], dtype=np.int64), np.asarray([v]))
            assert isinstance(v, Vector)
            for lid in v.lids.tolist():
                order.setdefault(lid, len(order))
            rows.append((t, v))
        n = len(order)
        k = len(times)
        vals = np.full((k, n), np.nan)
        mask = np.zeros((k, n), dtype=bool)
        for i, (_, v) in enumerate(rows):
            if len(v):
                idx = np.asarray([order[lid] for lid in v.lids.tolist()], dtype=np.int64)
                vals[i, idx] = v.vals
                mask[i, idx] = True
        lids = np.asarray(list(order), dtype=np.int64)
        return Matrix(lids, np.asarray(times, dtype=np.int64), vals, mask, start, end)

    def children(self) -> list[Node]:
        return [self.expr]


# ---------------------------------------------------------------------------- operators


class UnaryNode(Node):
    """``-expr``: negation; drops the metric name of vector elements."""

    def __init__(self, expr: Node) -> None:
        self.expr = expr
        self.kind = expr.kind
        self._plans = _PlanCache()

    def eval(self, ctx: EvalContext) -> Value:
        v = self.expr.eval(ctx)
        if isinstance(v, float):
            return -v
        assert isinstance(v, Vector)
        table = ctx.labels
        lids = self._plans.get(table, v.lids.tobytes(), lambda: _drop_names(table, v.lids))
        return Vector(lids, -v.vals)

    def children(self) -> list[Node]:
        return [self.expr]


def _drop_names(table: LabelTable, lids: IntArray) -> IntArray:
    out = table.drop_names(lids)
    _dup_check(out)
    return out


_ARITH: dict[str, Callable[[Any, Any], Any]] = {
    "+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide, "%": np.fmod,
    "^": gomath.pow_arrays, "atan2": gomath.atan2_arrays,  # ^ is Go's math.Pow (engine.go), not C's pow
}
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "==": np.equal, "!=": np.not_equal, ">": np.greater, "<": np.less, ">=": np.greater_equal, "<=": np.less_equal,
}


def _arith(op: str, lhs: FloatArray | float, rhs: FloatArray | float) -> FloatArray:
    with np.errstate(all="ignore"):
        return _ARITH[op](lhs, rhs)  # type: ignore[no-any-return]


def _compare(op: str, lhs: FloatArray | float, rhs: FloatArray | float) -> Any:
    with np.errstate(all="ignore"):
        return _COMPARE[op](lhs, rhs)


@dataclass
class _MatchPlan:
    li: IntArray  # index into the (possibly swapped) left side
    ri: IntArray  # index into the (possibly swapped) right side
    sig: IntArray  # match-signature id per pair
    out: IntArray  # output label-set id per pair
    risky: bool  # duplicate signatures/outputs possible: check after filtering


@dataclass
class _SetPlan:
    left: IntArray
    right: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


class BinaryNode(Node):
    """A binary operator (engine.go ``VectorBinop``, ``VectorscalarBinop``, ``VectorAnd/Or/Unless``)."""

    def __init__(self, op: str, lhs: Node, rhs: Node, return_bool: bool, card: str, on: bool,
                 matching: list[str], include: list[str]) -> None:
        self.op = op
        self.lhs = lhs
        self.rhs = rhs
        self.return_bool = return_bool
        self.card = card  # one-to-one, many-to-one, one-to-many, many-to-many
        self.on = on
        self.matching = sorted(matching)
        self.include = include
        self.kind = "scalar" if lhs.kind == "scalar" and rhs.kind == "scalar" else "vector"
        self._plans = _PlanCache()
        self._matching_set = frozenset(matching)
        self._sig_index: dict[LabelPairs, int] = {}
        self._sig_table: LabelTable | None = None
        self._sig_ids = LidMap(self._sig_id)
        self._result_ids = LidMap(lambda table, lid: self._result_labels(table, lid, lid))
        """Output label sets of pairs when they depend on the left side only (no ``group_x`` labels)."""
        self._result_memo: dict[tuple[int, int], int] = {}
        self._result_table: LabelTable | None = None

    def children(self) -> list[Node]:
        return [self.lhs, self.rhs]

    def eval(self, ctx: EvalContext) -> Value:
        lv = self.lhs.eval(ctx)
        rv = self.rhs.eval(ctx)
        op = self.op
        if isinstance(lv, float) and isinstance(rv, float):
            if op in COMPARISON:
                return 1.0 if bool(_compare(op, lv, rv)) else 0.0
            return float(_arith(op, lv, rv))
        if isinstance(lv, Vector) and isinstance(rv, Vector):
            if op in SET_OPS:
                return self._set_op(ctx, lv, rv)
            return self._vector_op(ctx, lv, rv)
        if isinstance(lv, Vector):
            assert isinstance(rv, float)
            return self._scalar_op(ctx, lv, rv, swap=False)
        assert isinstance(rv, Vector) and isinstance(lv, float)
        return self._scalar_op(ctx, rv, lv, swap=True)

    # -- vector op scalar
    def _scalar_op(self, ctx: EvalContext, vec: Vector, scalar: float, swap: bool) -> Vector:
        op = self.op
        drop = op in DROPS_NAME or self.return_bool
        table = ctx.labels
        lids = vec.lids
        if drop:
            lids = self._plans.get(table, vec.lids.tobytes(), lambda: _drop_names_lazy(table, vec.lids))
        if op in ARITHMETIC:
            vals = _arith(op, scalar, vec.vals) if swap else _arith(op, vec.vals, scalar)
            _dup_check_cached(lids)
            return Vector(lids, vals)
        keep = _compare(op, scalar, vec.vals) if swap else _compare(op, vec.vals, scalar)
        if self.return_bool:
            _dup_check_cached(lids)
            return Vector(lids, keep.astype(np.float64))
        # The vector element's value is kept even when the scalar is on the left.
        return Vector(lids[keep], vec.vals[keep])

    # -- vector op vector
    def _signature(self, table: LabelTable, lid: int) -> LabelPairs:
        pairs = table.pairs(lid)
        names = self._matching_set
        if self.on:
            return tuple(p for p in pairs if p[0] in names)
        return tuple(p for p in pairs if p[0] != METRIC_NAME and p[0] not in names)

    def _sig_id(self, table: LabelTable, lid: int) -> int:
        """A small int per distinct match signature (stable for one table)."""
        if table is not self._sig_table:
            self._sig_table = table
            self._sig_index = {}
        return self._sig_index.setdefault(self._signature(table, lid), len(self._sig_index))

    def _signatures(self, table: LabelTable, lids: IntArray) -> IntArray:
        if table is not self._sig_table:
            self._sig_table = table
            self._sig_index = {}
        return self._sig_ids.map(table, lids)

    def _result_labels(self, table: LabelTable, l_lid: int, r_lid: int) -> int:
        """engine.go ``resultMetric``."""
        labels = dict(table.pairs(l_lid))
        if self.op in DROPS_NAME:
            labels.pop(METRIC_NAME, None)
        if self.card == "one-to-one":
            if self.on:
                labels = {k: v for k, v in labels.items() if k in self.matching}
            else:
                for name in self.matching:
                    labels.pop(name, None)
        rd = table.dict(r_lid)
        for name in self.include:
            value = rd.get(name, "")
            if value:
                labels[name] = value
            else:
                labels.pop(name, None)
        out = table.intern_map(labels)
        if self.return_bool:
            out = table.drop_name(out)
        return out

    def _duplicate_error(self, table: LabelTable, right: IntArray) -> QueryError:
        right_sigs: dict[LabelPairs, int] = {}
        for j, lid in enumerate(right.tolist()):
            sig = self._signature(table, lid)
            if sig in right_sigs:
                side = "left" if self.card == "one-to-many" else "right"
                # Both series as Go's labels.String() prints them (__name__ inside the braces).
                one, other = _fmt_pairs(table.pairs(lid)), _fmt_pairs(table.pairs(int(right[right_sigs[sig]])))
                return QueryError(
                    f"found duplicate series for the match group {_fmt_pairs(sig)} on the {side} hand-side of the "
                    f"operation: [{one}, {other}];many-to-many "
                    "matching not allowed: matching labels must be unique on one side")
            right_sigs[sig] = j
        raise AssertionError("no duplicate signature")

    def _match_plan(self, table: LabelTable, left: IntArray, right: IntArray) -> _MatchPlan:
        rsig = self._signatures(table, right)
        if has_duplicates(rsig):
            raise self._duplicate_error(table, right)
        lsig = self._signatures(table, left)
        if lsig.shape[0] and rsig.shape[0]:
            pos = np.full(int(max(lsig.max(), rsig.max())) + 1, -1, dtype=np.int64)
            pos[rsig] = np.arange(rsig.shape[0], dtype=np.int64)
            match = pos[lsig]
            li = np.flatnonzero(match >= 0).astype(np.int64)
            ri = match[li]
            sigs = lsig[li]
        else:
            li = ri = sigs = np.zeros(0, dtype=np.int64)
        if self.include:
            if table is not self._result_table:
                self._result_table = table
                self._result_memo = {}
            memo = self._result_memo
            outs: list[int] = []
            for a, b in zip(left[li].tolist(), right[ri].tolist(), strict=True):
                key = (a, b)
                o = memo.get(key)
                if o is None:
                    o = self._result_labels(table, a, b)
                    memo[key] = o
                outs.append(o)
            out = np.asarray(outs, dtype=np.int64)
        else:
            out = self._result_ids.map(table, left[li])
        risky = has_duplicates(sigs) if self.card == "one-to-one" else has_duplicate_pairs(sigs, out)
        return _MatchPlan(li, ri, sigs, out, risky or has_duplicates(out))

    def _vector_op(self, ctx: EvalContext, lv: Vector, rv: Vector) -> Vector:
        swap = self.card == "one-to-many"
        left, right = (rv, lv) if swap else (lv, rv)
        table = ctx.labels
        key = left.lids.tobytes() + b"|" + right.lids.tobytes()
        plan: _MatchPlan = self._plans.get(table, key, lambda: self._match_plan(table, left.lids, right.lids))
        a = left.vals[plan.li]
        b = right.vals[plan.ri]
        vl, vr = (b, a) if swap else (a, b)
        op = self.op
        if op in ARITHMETIC:
            vals = _arith(op, vl, vr)
            keep = None
        else:
            keep = _compare(op, vl, vr)
            vals = keep.astype(np.float64) if self.return_bool else vl
            if self.return_bool:
                keep = None
        out, sigs = plan.out, plan.sig
        if keep is not None:
            out, sigs, vals = out[keep], sigs[keep], vals[keep]
        if plan.risky:
            if self.card == "one-to-one":
                if has_duplicates(sigs):
                    raise QueryError("multiple matches for labels: many-to-one matching must be explicit "
                                     "(group_left/group_right)")
            elif has_duplicate_pairs(sigs, out):
                raise QueryError("multiple matches for labels: grouping labels must ensure unique matches")
            _dup_check(out)
        return Vector(out, np.asarray(vals, dtype=np.float64))

    # -- and / or / unless
    def _set_plan(self, table: LabelTable, left: IntArray, right: IntArray) -> _SetPlan:
        lsig = self._signatures(table, left)
        rsig = self._signatures(table, right)
        if self.op == "and":
            return _SetPlan(np.flatnonzero(_member(lsig, rsig)).astype(np.int64))
        if self.op == "unless":
            return _SetPlan(np.flatnonzero(~_member(lsig, rsig)).astype(np.int64))
        return _SetPlan(np.arange(lsig.shape[0], dtype=np.int64),
                        np.flatnonzero(~_member(rsig, lsig)).astype(np.int64))

    def _set_op(self, ctx: EvalContext, lv: Vector, rv: Vector) -> Vector:
        table = ctx.labels
        key = lv.lids.tobytes() + b"|" + rv.lids.tobytes()
        plan: _SetPlan = self._plans.get(table, key, lambda: self._set_plan(table, lv.lids, rv.lids))
        if self.op != "or":
            return Vector(lv.lids[plan.left], lv.vals[plan.left])
        return Vector(np.concatenate((lv.lids, rv.lids[plan.right])), np.concatenate((lv.vals, rv.vals[plan.right])))


def _member(a: IntArray, b: IntArray) -> Any:
    """``np.isin`` for small non-negative ids (signature ids): a lookup table."""
    if a.shape[0] == 0 or b.shape[0] == 0:
        return np.zeros(a.shape[0], dtype=bool)
    present = np.zeros(int(max(a.max(), b.max())) + 1, dtype=bool)
    present[b] = True
    return present[a]


_DUP_OK: dict[bytes, bool] = {}


def _drop_names_lazy(table: LabelTable, lids: IntArray) -> IntArray:
    return table.drop_names(lids)


def _dup_check_cached(lids: IntArray) -> None:
    if lids.shape[0] < 2:
        return
    key = lids.tobytes()
    ok = _DUP_OK.get(key)
    if ok is None:
        if len(_DUP_OK) > 4096:
            _DUP_OK.clear()
        ok = not has_duplicates(lids)
        _DUP_OK[key] = ok
    if not ok:
        raise QueryError("vector cannot contain metrics with the same labelset")


def _fmt_pairs(pairs: LabelPairs) -> str:
    return "{" + ", ".join(f'{k}="{v}"' for k, v in pairs) + "}"


# ---------------------------------------------------------------------------- aggregation


@dataclass
class _GroupPlan:
    idx: IntArray  # group index per input element
    out: IntArray  # output label-set id per group
    _members: list[list[int]] | None = None

    @property
    def members(self) -> list[list[int]]:
        """Element indices per group, ascending (for the aggregators that loop in Python)."""
        if self._members is None:
            order = np.argsort(self.idx, kind="stable")
            bounds = np.cumsum(np.bincount(self.idx, minlength=self.out.shape[0]))[:-1]
            self._members = [part.tolist() for part in np.split(order, bounds)]
        return self._members


def _first_seen_groups(keys: IntArray) -> tuple[IntArray, IntArray]:
    """(group index per element, key per group), groups numbered in first-seen order."""
    uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(order.shape[0], dtype=np.int64)
    rank[order] = np.arange(order.shape[0], dtype=np.int64)
    return rank[inverse.reshape(-1)], uniq[order]


class AggregateNode(Node):
    """An aggregation (engine.go ``aggregation``)."""

    def __init__(self, op: str, expr: Node, param: Node | None, without: bool, grouping: list[str]) -> None:
        self.op = op
        self.expr = expr
        self.param = param
        self.without = without
        self.grouping = grouping
        self._grouping_set = frozenset(grouping)
        self._excluded = frozenset(grouping) | {METRIC_NAME}
        self._plans = _PlanCache()
        self._group_ids = LidMap(lambda table, lid: table.intern(self._group_labels(table, lid)))

    def children(self) -> list[Node]:
        return [self.expr] + ([self.param] if self.param is not None else [])

    def _group_labels(self, table: LabelTable, lid: int, drop: str | None = None) -> LabelPairs:
        pairs = table.pairs(lid)
        if self.without:
            excluded = self._excluded | {drop} if drop else self._excluded
            return tuple(p for p in pairs if p[0] not in excluded)
        grouping = self._grouping_set
        return tuple(p for p in pairs if p[0] in grouping)

    def _plan(self, table: LabelTable, lids: IntArray) -> _GroupPlan:
        idx, out = _first_seen_groups(self._group_ids.map(table, lids))
        return _GroupPlan(idx, out)

    def eval(self, ctx: EvalContext) -> Value:
        vec = self.expr.eval_vector(ctx)
        table = ctx.labels
        op = self.op
        if op == "count_values":
            assert self.param is not None
            return self._count_values(table, vec, str(self.param.eval(ctx)))
        if op in ("topk", "bottomk", "quantile"):
            assert self.param is not None
            param = self.param.eval_scalar(ctx)
        else:
            param = 0.0
        if len(vec) == 0:
            return Vector.empty()
        plan: _GroupPlan = self._plans.get(table, vec.lids.tobytes(), lambda: self._plan(table, vec.lids))
        g = plan.out.shape[0]
        v = vec.vals
        if op == "sum":
            out = np.bincount(plan.idx, weights=v, minlength=g)
            # bincount turns -0 and NaN sums right; Inf - Inf gives NaN as Prometheus does.
            return Vector(plan.out, out.astype(np.float64))
        if op == "count":
            return Vector(plan.out, np.bincount(plan.idx, minlength=g).astype(np.float64))
        if op == "group":
            return Vector(plan.out, np.ones(g))
        if op in ("max", "min"):
            res = np.full(g, np.nan)
            (np.fmax if op == "max" else np.fmin).at(res, plan.idx, v)
            return Vector(plan.out, res)
        if op == "avg":
            return Vector(plan.out, np.asarray([fn.incremental_mean(v[m].tolist()) for m in plan.members]))
        if op in ("stddev", "stdvar"):
            res_l = [fn.welford_var(v[m].tolist()) for m in plan.members]
            res = np.asarray(res_l)
            return Vector(plan.out, np.sqrt(res) if op == "stddev" else res)
        if op == "quantile":
            return Vector(plan.out, np.asarray([fn.quantile(param, v[m].tolist()) for m in plan.members]))
        # topk / bottomk keep the input elements (labels included).
        if math.isnan(param) or abs(param) >= 2.0**63:
            raise QueryError(f"Scalar value {param} overflows int64")
        k = int(param)
        if k < 1:
            return Vector.empty()
        picks: list[int] = []
        for m in plan.members:
            picks.extend(fn.top_bottom_k(v, m, k, top=op == "topk"))
        sel = np.asarray(picks, dtype=np.int64)
        return Vector(vec.lids[sel], v[sel])

    def _count_values(self, table: LabelTable, vec: Vector, label: str) -> Vector:
        if not re.fullmatch(r"[a-zA-Z_][a-zA-Z0-9_]*", label):
            raise QueryError(f"invalid label name {label!r}")
        counts: dict[LabelPairs, int] = {}
        for lid, value in zip(vec.lids.tolist(), vec.vals.tolist(), strict=True):
            pairs = dict(table.pairs(lid))
            pairs[label] = fn.format_float(value)
            if self.without:
                g = self._group_labels(table, table.intern(tuple(sorted(pairs.items()))))
            else:
                g = tuple(sorted((k, v) for k, v in pairs.items() if k in self.grouping or k == label))
            counts[g] = counts.get(g, 0) + 1
        return Vector(np.asarray([table.intern(g) for g in counts], dtype=np.int64),
                      np.asarray(list(counts.values()), dtype=np.float64))


# ---------------------------------------------------------------------------- calls


class CallNode(Node):
    """A function call; implementations are in :mod:`alerts.promql.functions`."""

    def __init__(self, name: str, args: list[Node], ast_args: list[Any]) -> None:
        self.name = name
        self.args = args
        self.kind = "scalar" if name in ("time", "scalar", "pi") else "vector"
        self._plans = _PlanCache()
        self._absent_labels: LabelPairs | None = None
        if name in ("absent", "absent_over_time"):
            self._absent_labels = _absent_labels(ast_args[0])
        self._timestamp_of_selector = name == "timestamp" and isinstance(_unwrap(args[0]), SelectorNode)
        self.impl = fn.lookup(name)

    def children(self) -> list[Node]:
        return list(self.args)

    def eval(self, ctx: EvalContext) -> Value:
        name = self.name
        table = ctx.labels
        if name == "time":
            return ctx.t_ms / 1000.0
        if name == "pi":
            return math.pi
        if name == "vector":
            return Vector(np.asarray([table.intern(())], dtype=np.int64), np.asarray([self.args[0].eval_scalar(ctx)]))
        if name == "scalar":
            v = self.args[0].eval_vector(ctx)
            return float(v.vals[0]) if len(v) == 1 else math.nan
        if name in ("absent", "absent_over_time"):
            arg = self.args[0].eval(ctx)
            assert isinstance(arg, (Vector, Matrix))
            if len(arg):
                return Vector.empty()
            assert self._absent_labels is not None
            return Vector(np.asarray([table.intern(self._absent_labels)], dtype=np.int64), np.ones(1))
        args = [a.eval(ctx) for a in self.args]
        if not self.args and name in fn.DATE_FUNCS:
            args = [Vector(np.asarray([table.intern(())], dtype=np.int64), np.asarray([ctx.t_ms / 1000.0]))]
        if name == "timestamp":
            arg0 = args[0]
            assert isinstance(arg0, Vector)
            ts = arg0.ts if self._timestamp_of_selector and arg0.ts is not None else np.full(len(arg0), ctx.t_ms)
            src = arg0.lids
            lids = self._plans.get(table, b"dn" + src.tobytes(), lambda: _drop_names(table, src))
            return Vector(lids, ts.astype(np.float64) / 1000.0)
        plans = self._plans
        result = self.impl(fn.CallArgs(args, ctx.t_ms, table, lambda key, build: plans.get(table, key, build)))
        if name in fn.KEEP_NAME:
            return result
        out = result.lids
        lids = self._plans.get(table, b"dn" + out.tobytes(), lambda: _drop_names(table, out))
        return Vector(lids, result.vals)


def _unwrap(node: Node) -> Node:
    while isinstance(node, (ParenNode, SharedNode)):
        node = node.expr
    return node


class SharedNode(Node):
    """A subexpression that occurs more than once in one expression (the compiler gives
    every occurrence this one node): evaluated once per evaluation context and storage
    state, the result handed to each occurrence (values are never mutated in place)."""

    def __init__(self, expr: Node) -> None:
        self.expr = expr
        self.kind = expr.kind
        self._key: tuple[Any, ...] | None = None
        self._value: Value | None = None

    def eval(self, ctx: EvalContext) -> Value:
        st = ctx.storage
        key = (st, st.generation, ctx.t_ms, ctx.lookback_ms, ctx.start_ms, ctx.end_ms, ctx.subquery_step_ms,
               ctx.horizon_ms)
        if self._value is not None and key == self._key:  # Storage compares by identity
            return self._value
        value = self.expr.eval(ctx)
        self._key, self._value = key, value
        return value

    def children(self) -> list[Node]:
        return [self.expr]


def structural_key(node: Node) -> tuple[Any, ...] | None:
    """A hashable key equal for two compiled subtrees exactly when they compute the same
    thing, or None for a subtree that contains a node kind it does not know."""
    def sub(child: Node | None) -> tuple[Any, ...] | None:
        return ("none",) if child is None else structural_key(child)

    parts: tuple[Any, ...]
    children: list[Node | None] = []
    if isinstance(node, NumberNode):
        return ("num", node.value.hex())
    if isinstance(node, StringNode):
        return ("str", node.value)
    if isinstance(node, SharedNode):
        return structural_key(node.expr)
    if isinstance(node, SelectorNode):
        return ("sel", node.name, tuple((m.name, m.op, m.value) for m in node.matchers), node.offset_ms, node.at)
    if isinstance(node, MatrixSelectorNode):
        parts, children = ("range", node.range_ms), [node.selector]
    elif isinstance(node, SubqueryNode):
        parts, children = ("subquery", node.range_ms, node.step_ms, node.offset_ms, node.at), [node.expr]
    elif isinstance(node, ParenNode):
        parts, children = ("paren",), [node.expr]
    elif isinstance(node, UnaryNode):
        parts, children = ("neg",), [node.expr]
    elif isinstance(node, BinaryNode):
        parts = ("binary", node.op, node.return_bool, node.card, node.on, tuple(node.matching), tuple(node.include))
        children = [node.lhs, node.rhs]
    elif isinstance(node, AggregateNode):
        parts, children = ("aggregate", node.op, node.without, tuple(node.grouping)), [node.expr, node.param]
    elif isinstance(node, CallNode):
        parts, children = ("call", node.name, len(node.args)), list(node.args)
    else:
        return None
    keys = [sub(c) for c in children]
    if any(k is None for k in keys):
        return None
    return (*parts, *keys)


class ParenNode(Node):
    def __init__(self, expr: Node) -> None:
        self.expr = expr
        self.kind = expr.kind

    def eval(self, ctx: EvalContext) -> Value:
        return self.expr.eval(ctx)

    def children(self) -> list[Node]:
        return [self.expr]


def _absent_labels(arg: Any) -> LabelPairs:
    """functions.go ``createLabelsForAbsentFunction``: equality matchers, once per name."""
    if isinstance(arg, pp.MatrixSelector):
        arg = arg.vector_selector
    if not isinstance(arg, pp.VectorSelector):
        return ()
    out: dict[str, str] = {}
    has: set[str] = set()
    for m in arg.matchers.matchers:
        if m.name == METRIC_NAME:
            continue
        if str(m.op) == "MatchOp.Equal" and m.name not in has:
            out[m.name] = m.value
            has.add(m.name)
        else:
            out.pop(m.name, None)
    return tuple(sorted((k, v) for k, v in out.items() if v != ""))


# ---------------------------------------------------------------------------- compile


def _ms(delta: Any) -> int:
    return round(delta.total_seconds() * 1000.0) if delta is not None else 0


def _at(node: Any) -> tuple[str, int] | None:
    try:
        at = node.at
    except BaseException as exc:  # pyo3 panics on negative @ timestamps
        raise UnsupportedError("negative @ timestamp", "promql-parser cannot return it") from exc
    if at is None:
        return None
    kind = str(at.type).rsplit(".", 1)[-1]
    if kind == "Start":
        return ("start", 0)
    if kind == "End":
        return ("end", 0)
    try:
        when = at.at
    except BaseException as exc:
        raise UnsupportedError("negative @ timestamp", "promql-parser cannot return it") from exc
    return ("at", round(when.timestamp() * 1000.0))


_OPS = {"MatchOp.Equal": "=", "MatchOp.NotEqual": "!=", "MatchOp.Re": "=~", "MatchOp.NotRe": "!~"}


def _compile_regex(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(f"(?:{go_regex(pattern)})")
    except re.error as exc:
        raise UnsupportedError(f"regular expression {pattern!r}", f"not valid in Python's re: {exc}") from None


class Compiler:
    """AST -> :class:`Node` (raises :class:`UnsupportedError`)."""

    def __init__(self, options: CompileOptions | None = None) -> None:
        self.options = options or CompileOptions()
        self._counts: dict[tuple[Any, ...], int] | None = None
        self._shared: dict[tuple[Any, ...], SharedNode] = {}
        self._sharing = False

    def compile_shared(self, node: Any) -> Node:
        """:meth:`compile`, with each subexpression that occurs more than once compiled to
        one :class:`SharedNode` (evaluated once per evaluation)."""
        counts: dict[tuple[Any, ...], int] = {}
        self._counts, self._shared, self._sharing = counts, {}, False
        try:
            tree = self.compile(node)
            if all(c < 2 for c in counts.values()):
                return tree
            self._sharing = True
            return self.compile(node)
        finally:
            self._counts, self._shared, self._sharing = None, {}, False

    def compile(self, node: Any) -> Node:
        out = self._build(node)
        counts = self._counts
        if counts is None or isinstance(out, (NumberNode, StringNode)):
            return out
        key = structural_key(out)
        if key is None:
            return out
        if not self._sharing:
            counts[key] = counts.get(key, 0) + 1
            return out
        if counts.get(key, 0) < 2:
            return out
        shared = self._shared.get(key)
        if shared is None:
            shared = self._shared[key] = SharedNode(out)
        return shared

    def offset(self, node: Any) -> int:
        off = _ms(node.offset)
        if off < 0 and not self.options.negative_offset:
            raise UnsupportedError("negative offset", "refused by these compile options")
        return off

    def selector(self, node: Any) -> SelectorNode:
        if node.matchers.or_matchers:
            raise UnsupportedError("'or' inside a label matcher list", "added after Prometheus 2.42")
        matchers = []
        for m in node.matchers.matchers:
            op = _OPS[str(m.op)]
            regex = _compile_regex(m.value) if op in ("=~", "!~") else None
            matchers.append(Matcher(m.name, op, m.value, regex))
        name = node.name
        eq_name = next((m.value for m in matchers if m.name == METRIC_NAME and m.op == "="), None)
        return SelectorNode(name if name is not None else eq_name, matchers, self.offset(node), _at(node))

    def _build(self, node: Any) -> Node:
        if isinstance(node, pp.NumberLiteral):
            return NumberNode(node.val)
        if isinstance(node, pp.StringLiteral):
            return StringNode(node.val)
        if isinstance(node, pp.ParenExpr):
            return ParenNode(self.compile(node.expr))
        if isinstance(node, pp.UnaryExpr):
            return UnaryNode(self.compile(node.expr))
        if isinstance(node, pp.VectorSelector):
            return self.selector(node)
        if isinstance(node, pp.MatrixSelector):
            return MatrixSelectorNode(self.selector(node.vector_selector), _ms(node.range))
        if isinstance(node, pp.SubqueryExpr):
            return SubqueryNode(self.compile(node.expr), _ms(node.range), _ms(node.step) or None,
                                self.offset(node), _at(node))
        if isinstance(node, pp.BinaryExpr):
            return self.binary(node)
        if isinstance(node, pp.AggregateExpr):
            op = str(node.op)
            if op not in AGGREGATIONS_242:
                raise UnsupportedError(f"aggregation {op}", "not in Prometheus 2.42")
            without = False
            grouping: list[str] = []
            if node.modifier is not None:
                without = str(node.modifier.type).endswith("Without")
                grouping = list(node.modifier.labels)
            param = self.compile(node.param) if node.param is not None else None
            return AggregateNode(op, self.compile(node.expr), param, without, grouping)
        if isinstance(node, pp.Call):
            name = node.func.name
            if not fn.supported(name):
                raise UnsupportedError(f"function {name}", fn.why_unsupported(name))
            args = [self.compile(a) for a in node.args]
            return CallNode(name, args, list(node.args))
        raise UnsupportedError(f"expression type {type(node).__name__}")

    def binary(self, node: Any) -> BinaryNode:
        op = str(node.op)
        mod = node.modifier
        return_bool = False
        card = "one-to-one"
        on = False
        matching: list[str] = []
        include: list[str] = []
        if mod is not None:
            fill = mod.fill_values
            if fill is not None and (fill.lhs is not None or fill.rhs is not None):
                raise UnsupportedError("fill() modifier", "added after Prometheus 2.42")
            return_bool = bool(mod.return_bool)
            card = {"OneToOne": "one-to-one", "ManyToOne": "many-to-one", "OneToMany": "one-to-many",
                    "ManyToMany": "many-to-many"}[str(mod.card).rsplit(".", 1)[-1]]
            if mod.matching is not None:
                on = str(mod.matching.type).endswith("Include")
                matching = list(mod.matching.labels)
            include = list(mod.group_labels or [])
        if op in SET_OPS:
            card = "many-to-many"
        return BinaryNode(op, self.compile(node.lhs), self.compile(node.rhs), return_bool, card, on, matching,
                          include)


def compile_query(text: str, options: CompileOptions | None = None) -> Node:
    """Parse and compile a PromQL expression.

    Raises:
        ValueError: a syntax error (``promql-parser``'s message).
        UnsupportedError: a construct this evaluator or Prometheus 2.42 does not support;
            ``position`` is set where the construct's text can be found.
    """
    fn.register_parser_functions()
    ast = pp.parse(text)
    try:
        return Compiler(options).compile_shared(ast)
    except UnsupportedError as exc:
        if exc.position is None:
            exc.position = _locate(text, exc.construct)
        raise


def _locate(text: str, construct: str) -> int | None:
    token = {"negative offset": "offset -", "fill() modifier": "fill", "negative @ timestamp": "@ -",
             "'or' inside a label matcher list": " or "}.get(construct)
    if token is None:
        token = construct.split(" ", 1)[-1] + ("(" if construct.startswith("function") else "")
    pos = text.find(token)
    return pos if pos >= 0 else None


def walk(node: Node) -> list[Node]:
    """Every node of a compiled tree, depth first."""
    out = [node]
    for child in node.children():
        out.extend(walk(child))
    return out


def instant_query(text_or_node: str | Node, storage: Storage, t_ms: int, *, lookback_ms: int = DEFAULT_LOOKBACK_MS,
                  options: CompileOptions | None = None) -> Value:
    """Evaluate an expression at one time (an instant query).

    Raises:
        ValueError: syntax error; UnsupportedError; QueryError at evaluation.
    """
    node = compile_query(text_or_node, options) if isinstance(text_or_node, str) else text_or_node
    return node.eval(EvalContext(storage, t_ms, lookback_ms, t_ms, t_ms))
