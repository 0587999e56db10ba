"""Sample storage for the embedded evaluator: a time grid of series.

Samples live in a dense grid: one row per distinct sample timestamp (milliseconds), one
column per series, with a state per cell -- no sample, a sample, or a staleness marker.
Prometheus scrapes every target on one interval, so a simulator run is a grid with no
holes except where a series did not exist; a query then reads one row (instant vectors)
or a few contiguous rows (range vectors) for many columns with numpy fancy indexing.

The grid is general: samples may arrive at any timestamps (the PromQL test language
loads series with different steps, leaves gaps with ``_`` and writes explicit ``stale``
markers); rows are inserted where needed, and per-series semantics stay exact:

* an instant selector at ``t`` returns the latest sample in ``[t - lookback, t]`` unless
  that sample is a staleness marker (Prometheus 2.x ``vectorSelectorSingle``);
* a range selector ``[r]`` at ``t`` returns every sample in ``[t - r, t]``, both ends
  inclusive (2.x ``matrixIterSlice``; 3.x made the left end open), staleness markers
  excluded.

:meth:`Storage.append_scrape` implements a scrape: series present in the previous scrape
and missing from this one get a staleness marker, as Prometheus' scrape loop writes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from alerts.promql.labels import METRIC_NAME, LabelTable, freeze

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

NONE, SAMPLE, STALE = 0, 1, 2
"""Cell states: no sample, a sample, a staleness marker."""

STALE_NAN_BITS = 0x7FF0000000000002
"""Prometheus' staleness marker: a NaN with this bit pattern (``value.StaleNaN``)."""


def stale_nan() -> float:
    """The staleness-marker NaN as a Python float (for sample sources that use it)."""
    return float(np.array([STALE_NAN_BITS], dtype=np.uint64).view(np.float64)[0])


def is_stale_nan(value: float) -> bool:
    """Whether ``value`` is Prometheus' staleness-marker NaN (not any NaN)."""
    return math.isnan(value) and int(np.array([value], dtype=np.float64).view(np.uint64)[0]) == STALE_NAN_BITS


def to_ms(t: float) -> int:
    """Seconds (float) to integer milliseconds, rounding to the nearest millisecond."""
    return round(t * 1000.0)


class Storage:
    """Series and samples on a time grid (see module docstring).

    Attributes:
        labels: the label table; a series' label set includes ``__name__``.
        n_rows, n_cols: grid size in use (arrays may be larger: capacity).
    """

    def __init__(self, labels: LabelTable | None = None, rows: int = 64, cols: int = 256) -> None:
        self.labels = labels if labels is not None else LabelTable()
        self.ts: IntArray = np.zeros(rows, dtype=np.int64)
        # Only cells in [:n_rows, :n_cols] are ever read, and each is set when its row or
        # column is created (see _grow), so the capacity is left unfilled: its memory is
        # only touched as the grid fills.
        self.vals: FloatArray = np.empty((rows, cols))
        self.state: npt.NDArray[np.int8] = np.zeros((rows, cols), dtype=np.int8)
        self.last: npt.NDArray[np.int32] = np.empty((rows, cols), dtype=np.int32)
        """Row of the latest sample or marker at or before each row, or -1."""
        self.col_lid: IntArray = np.zeros(cols, dtype=np.int64)
        self.scraped: BoolArray = np.zeros(cols, dtype=bool)
        """Columns written by :meth:`append_scrape` (only those go stale when a scrape lacks them)."""
        self.col_name: list[str] = []
        self.by_name: dict[str, list[int]] = {}
        self._col_of_lid: dict[int, int] = {}
        self.n_rows = 0
        self.n_cols = 0
        self.version = 0
        """Incremented whenever columns are added (selector caches key on it)."""
        self.generation = 0
        """Incremented by every change of rows, columns or samples (result caches key on it)."""

    # ------------------------------------------------------------------ columns

    def column(self, lid: int) -> int:
        """Column of a label-set id, created when new."""
        col = self._col_of_lid.get(lid)
        if col is not None:
            return col
        col = self._add_column(lid)
        self._clear_columns(col, col + 1)
        return col

    def columns(self, lids: Sequence[int]) -> list[int]:
        """Columns of label-set ids, created when new (:meth:`column` for many ids at once)."""
        first = self.n_cols
        out = []
        for lid in lids:
            col = self._col_of_lid.get(lid)
            out.append(col if col is not None else self._add_column(lid))
        self._clear_columns(first, self.n_cols)
        return out

    def _add_column(self, lid: int) -> int:
        """A new column for ``lid``; its cells in the rows so far are not cleared yet."""
        col = self.n_cols
        if col >= self.vals.shape[1]:
            self._grow(cols=max(256, 2 * self.vals.shape[1]))
        self.n_cols += 1
        self.col_lid[col] = lid
        name = self.labels.get(lid, METRIC_NAME)
        self.col_name.append(name)
        self.by_name.setdefault(name, []).append(col)
        self._col_of_lid[lid] = col
        self.version += 1
        self.generation += 1
        return col

    def _clear_columns(self, c0: int, c1: int) -> None:
        """Give columns ``[c0, c1)`` the empty state (no sample) in every row so far."""
        if self.n_rows and c1 > c0:
            self.vals[: self.n_rows, c0:c1] = np.nan
            self.state[: self.n_rows, c0:c1] = NONE
            self.last[: self.n_rows, c0:c1] = -1

    def column_of(self, labels: Mapping[str, str]) -> int:
        """Column of a series given its labels (``__name__`` included), created when new."""
        return self.column(self.labels.intern(freeze(labels)))

    def _grow(self, rows: int | None = None, cols: int | None = None) -> None:
        r = rows if rows is not None else self.vals.shape[0]
        c = cols if cols is not None else self.vals.shape[1]
        # Cells outside [:n_rows, :n_cols] are never read: a new column is cleared in the
        # rows so far (:meth:`_clear_columns`) and a new row in the columns so far
        # (:meth:`row`), so the grown arrays need not be filled (untouched pages stay free).
        vals = np.empty((r, c))
        state = np.zeros((r, c), dtype=np.int8)
        last = np.empty((r, c), dtype=np.int32)
        nr, nc = self.n_rows, self.n_cols
        vals[:nr, :nc] = self.vals[:nr, :nc]
        state[:nr, :nc] = self.state[:nr, :nc]
        last[:nr, :nc] = self.last[:nr, :nc]
        self.vals, self.state, self.last = vals, state, last
        if r > self.ts.shape[0]:
            ts = np.zeros(r, dtype=np.int64)
            ts[:nr] = self.ts[:nr]
            self.ts = ts
        if c > self.col_lid.shape[0]:
            col_lid = np.zeros(c, dtype=np.int64)
            col_lid[:nc] = self.col_lid[:nc]
            self.col_lid = col_lid
            scraped = np.zeros(c, dtype=bool)
            scraped[:nc] = self.scraped[:nc]
            self.scraped = scraped

    # ------------------------------------------------------------------ rows

    def row(self, t_ms: int) -> int:
        """Row of timestamp ``t_ms``, inserted (keeping the grid sorted) when new."""
        self.generation += 1
        n = self.n_rows
        if n and self.ts[n - 1] == t_ms:
            return n - 1
        if n == 0 or self.ts[n - 1] < t_ms:
            if n >= self.vals.shape[0]:
                self._grow(rows=max(64, 2 * self.vals.shape[0]))
            self.ts[n] = t_ms
            nc = self.n_cols
            self.vals[n, :nc] = np.nan
            self.state[n, :nc] = NONE
            self.last[n, :nc] = self.last[n - 1, :nc] if n else -1
            self.n_rows = n + 1
            return n
        pos = int(np.searchsorted(self.ts[:n], t_ms))
        if self.ts[pos] == t_ms:
            return pos
        if n >= self.vals.shape[0]:
            self._grow(rows=max(64, 2 * self.vals.shape[0]))
        nc = self.n_cols
        self.ts[pos + 1: n + 1] = self.ts[pos:n].copy()
        self.vals[pos + 1: n + 1, :nc] = self.vals[pos:n, :nc].copy()
        self.state[pos + 1: n + 1, :nc] = self.state[pos:n, :nc].copy()
        self.ts[pos] = t_ms
        self.vals[pos, :nc] = np.nan
        self.state[pos, :nc] = NONE
        self.n_rows = n + 1
        self._relink(pos, np.arange(nc))
        return pos

    def _relink(self, from_row: int, cols: IntArray) -> None:
        """Recompute :attr:`last` for ``cols`` from ``from_row`` to the end."""
        n = self.n_rows
        if from_row >= n or cols.size == 0:
            return
        st = self.state[from_row:n][:, cols]
        rows = np.arange(from_row, n, dtype=np.int32)[:, None]
        marks = np.where(st != NONE, rows, -1).astype(np.int32)
        prev = self.last[from_row - 1, cols] if from_row > 0 else np.full(cols.shape[0], -1, dtype=np.int32)
        marks[0] = np.maximum(marks[0], prev)
        np.maximum.accumulate(marks, axis=0, out=marks)
        self.last[from_row:n, cols] = marks

    # ------------------------------------------------------------------ writing

    def write(self, t_ms: int, cols: Sequence[int] | IntArray, values: Sequence[float] | FloatArray,
              stale: Sequence[int] | IntArray = ()) -> None:
        """Write samples (and staleness markers on ``stale`` columns) at one timestamp.

        Args:
            t_ms: sample time, milliseconds.
            cols: columns of the samples.
            values: sample values, same length as ``cols``.
            stale: columns that get a staleness marker.
        """
        self.generation += 1
        r = self.row(t_ms)
        c = np.asarray(cols, dtype=np.int64)
        s = np.asarray(stale, dtype=np.int64)
        self.vals[r, c] = np.asarray(values, dtype=np.float64)
        self.state[r, c] = SAMPLE
        if s.size:
            self.vals[r, s] = np.nan
            self.state[r, s] = STALE
        both = np.concatenate((c, s)) if s.size else c
        if r == self.n_rows - 1:
            self.last[r, both] = r
        else:
            self._relink(r, both)

    def append_scrape(self, t_ms: int, cols: IntArray, values: FloatArray) -> None:
        """Record one scrape at ``t_ms`` holding exactly the series ``cols``.

        Series that had a sample in the previous row but are missing now get a staleness
        marker. ``t_ms`` must not be earlier than the last row.

        Raises:
            ValueError: ``t_ms`` earlier than the newest row.
        """
        self.generation += 1
        n = self.n_rows
        if n and t_ms < self.ts[n - 1]:
            raise ValueError(f"scrape at {t_ms} ms is older than the newest sample row ({int(self.ts[n - 1])} ms)")
        nc = self.n_cols
        prev = (self.state[n - 1, :nc] == SAMPLE) & self.scraped[:nc] if n else np.zeros(nc, dtype=bool)
        self.scraped[cols] = True
        r = self.row(t_ms)
        present = np.zeros(nc, dtype=bool)
        present[cols] = True
        stale = np.flatnonzero(prev & ~present & (self.state[r, :nc] == NONE)) if n and r == n else \
            np.zeros(0, dtype=np.int64)
        self.vals[r, cols] = values
        self.state[r, cols] = SAMPLE
        self.last[r, cols] = r
        if stale.size:
            self.state[r, stale] = STALE
            self.last[r, stale] = r

    def load(self, samples: Iterable[tuple[int, Mapping[str, str], float | None]]) -> None:
        """Bulk-load samples ``(t_ms, labels, value)``; a value of None is a staleness marker.

        Used by the PromQL test language and by generic sample sources; any timestamps.
        """
        self.generation += 1
        by_t: dict[int, tuple[list[int], list[float], list[int]]] = {}
        for t_ms, labels, value in samples:
            col = self.column_of(labels)
            entry = by_t.setdefault(int(t_ms), ([], [], []))
            if value is None or is_stale_nan(value):
                entry[2].append(col)
            else:
                entry[0].append(col)
                entry[1].append(float(value))
        times = sorted(by_t)
        for t_ms in times:
            self.row(t_ms)
        for t_ms in times:
            cols, values, stale = by_t[t_ms]
            r = int(np.searchsorted(self.ts[: self.n_rows], t_ms))
            c = np.asarray(cols, dtype=np.int64)
            self.vals[r, c] = np.asarray(values, dtype=np.float64)
            self.state[r, c] = SAMPLE
            s = np.asarray(stale, dtype=np.int64)
            self.vals[r, s] = np.nan
            self.state[r, s] = STALE
        if times:
            first = int(np.searchsorted(self.ts[: self.n_rows], times[0]))
            self._relink(first, np.arange(self.n_cols))

    # ------------------------------------------------------------------ reading

    def row_at(self, t_ms: int) -> int:
        """Index of the newest row at or before ``t_ms`` (-1 when none)."""
        return int(np.searchsorted(self.ts[: self.n_rows], t_ms, side="right")) - 1

    def instant(self, cols: IntArray, t_ms: int, lookback_ms: int) -> tuple[IntArray, FloatArray, IntArray]:
        """Latest non-stale sample of each column in ``[t - lookback, t]``.

        Returns:
            (columns that have one, their values, their sample timestamps in ms).
        """
        k = self.row_at(t_ms)
        if k < 0 or cols.size == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64)
        # Rows are sorted by time, so "latest event within the lookback" is "latest event
        # row at or after the first row inside the lookback" (which also excludes -1).
        first = int(np.searchsorted(self.ts[: self.n_rows], t_ms - lookback_ms, side="left"))
        li = self.last[k, cols]
        ok = li >= first
        sel = cols[ok]
        rows = li[ok]
        sample = self.state[rows, sel] == SAMPLE
        if not sample.all():
            sel = sel[sample]
            rows = rows[sample]
        return sel, self.vals[rows, sel], self.ts[rows]

    def window(self, cols: IntArray, start_ms: int, end_ms: int) -> tuple[IntArray, IntArray, FloatArray, BoolArray]:
        """Samples of ``cols`` in ``[start, end]`` (both inclusive), markers excluded.

        Returns:
            (columns with at least one sample, row timestamps [K] in ms,
            values [K, N], presence mask [K, N]).
        """
        n = self.n_rows
        k0 = int(np.searchsorted(self.ts[:n], start_ms, side="left"))
        k1 = int(np.searchsorted(self.ts[:n], end_ms, side="right"))
        if k1 <= k0 or cols.size == 0:
            return (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, 0)),
                    np.zeros((0, 0), dtype=bool))
        # Columns with no sample or marker in the window: ``last`` at the window's last
        # row points before its first row (one gather instead of a [K, N] one).
        live = self.last[k1 - 1, cols] >= k0
        if not live.all():
            cols = cols[live]
        # np.take along axis 1 of the row slice is a faster gather than [k0:k1, cols].
        mask = np.take(self.state[k0:k1], cols, axis=1) == SAMPLE
        keep = mask.any(axis=0)
        if not keep.all():
            cols = cols[keep]
            mask = mask[:, keep]
        return cols, self.ts[k0:k1], np.take(self.vals[k0:k1], cols, axis=1), mask

    def series_samples(self, col: int) -> list[tuple[int, float | None]]:
        """Every sample of one column as ``(t_ms, value)``; None marks staleness."""
        n = self.n_rows
        out: list[tuple[int, float | None]] = []
        st = self.state[:n, col]
        for r in np.flatnonzero(st != NONE).tolist():
            out.append((int(self.ts[r]), None if st[r] == STALE else float(self.vals[r, col])))
        return out

    def describe(self) -> dict[str, Any]:
        """Sizes, for logs and benchmarks."""
        return {"rows": self.n_rows, "series": self.n_cols, "label_sets": len(self.labels)}
