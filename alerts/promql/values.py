"""Value types of the embedded PromQL evaluator and its errors."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from alerts.promql.storage import BoolArray, FloatArray, IntArray


class PromQLError(Exception):
    """Base class of evaluator errors."""


class UnsupportedError(PromQLError):
    """The parser accepts a construct the evaluator does not implement (raised at load time).

    Attributes:
        construct: what is unsupported, e.g. ``function sort_by_label`` or ``fill() modifier``.
        position: 0-based character offset of the construct in the expression, when known.
    """

    def __init__(self, construct: str, reason: str = "", position: int | None = None) -> None:
        self.construct = construct
        self.reason = reason
        self.position = position
        super().__init__(f"unsupported construct: {construct}" + (f" ({reason})" if reason else ""))


class QueryError(PromQLError):
    """An evaluation error Prometheus also reports at query time (e.g. many-to-many matching)."""


@dataclass
class Vector:
    """An instant vector: label-set ids and values, one per element, in Prometheus' order.

    Attributes:
        lids: label-set ids, int64 [N].
        vals: values, float64 [N].
        ts: sample timestamps in ms, int64 [N], set only by vector selectors (for ``timestamp()``).
    """

    lids: IntArray
    vals: FloatArray
    ts: IntArray | None = None

    def __len__(self) -> int:
        return int(self.lids.shape[0])

    @staticmethod
    def empty() -> Vector:
        return Vector(np.zeros(0, dtype=np.int64), np.zeros(0))


@dataclass
class Matrix:
    """A range vector on a time grid.

    Attributes:
        lids: label-set ids of the series, int64 [N].
        ts: row timestamps, ms, int64 [K].
        vals: values, float64 [K, N]; cells without a sample hold NaN.
        mask: True where a series has a sample, bool [K, N].
        start_ms, end_ms: the selected window ``[start, end]`` (for rate extrapolation).
    """

    lids: IntArray
    ts: IntArray
    vals: FloatArray
    mask: BoolArray
    start_ms: int
    end_ms: int

    def __len__(self) -> int:
        return int(self.lids.shape[0])


Value = float | str | Vector | Matrix
"""A query result: scalar (float), string, instant vector or range vector."""
