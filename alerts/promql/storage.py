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

    Columns are *logical*: a series keeps its column (and so its place in every result, the
    order it was first written in) for the storage's life. Its samples live in a *slot* of the
    grid, which :meth:`retain` takes back once the series has no sample or marker left in the
    rows it keeps; writing to the column again gives it a new slot. Every public method takes
    and returns logical columns.

    Attributes:
        labels: the label table; a series' label set includes ``__name__``.
        n_rows: rows in use (the oldest ones may have been dropped by :meth:`retain`).
        n_cols: logical columns (every series ever written); n_slots: grid columns in use.
        retained_from_ms: None while nothing was dropped; then every sample at or after this
            time is kept and every earlier one is gone (:meth:`retain`).
    """

    def __init__(self, labels: LabelTable | None = None, rows: int = 64, cols: int = 256) -> None:
        self.labels = labels if labels is not None else LabelTable()
        self.ts: IntArray = np.zeros(rows, dtype=np.int64)
        # Only cells in [:n_rows, :n_slots] are ever read, and each is set when its row or
        # slot is created (see _grow), so the capacity is left unfilled: its memory is
        # only touched as the grid fills.
        self.vals: FloatArray = np.empty((rows, cols))
        self.state: npt.NDArray[np.int8] = np.zeros((rows, cols), dtype=np.int8)
        self.last: npt.NDArray[np.int32] = np.empty((rows, cols), dtype=np.int32)
        """Row of the latest sample or marker at or before each row, or -1."""
        self.slot_col: IntArray = np.zeros(cols, dtype=np.int64)
        """Logical column of each slot."""
        self.col_lid: IntArray = np.zeros(cols, dtype=np.int64)
        self.scraped: BoolArray = np.zeros(cols, dtype=bool)
        """Columns written by :meth:`append_scrape` (only those go stale when a scrape lacks them)."""
        self.slot: IntArray = np.full(cols, -1, dtype=np.int64)
        """Slot of each logical column, or -1 (its samples were all dropped)."""
        self.col_name: list[str] = []
        self.by_name: dict[str, list[int]] = {}
        self._col_of_lid: dict[int, int] = {}
        self.n_rows = 0
        self.n_cols = 0
        self.n_slots = 0
        self.retained_from_ms: int | None = None
        self._retain_ms: int | None = None
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
        self._slots(np.asarray([col], dtype=np.int64))
        return col

    def columns(self, lids: Sequence[int]) -> list[int]:
        """Columns of label-set ids, created when new (:meth:`column` for many ids at once)."""
        first = self.n_cols
        out = []
        for lid in lids:
            col = self._col_of_lid.get(lid)
            out.append(col if col is not None else self._add_column(lid))
        if self.n_cols > first:
            self._slots(np.arange(first, self.n_cols, dtype=np.int64))
        return out

    def _add_column(self, lid: int) -> int:
        """A new logical column for ``lid``, without a slot yet."""
        col = self.n_cols
        if col >= self.col_lid.shape[0]:
            c = max(256, 2 * self.col_lid.shape[0])
            self.col_lid = _grown(self.col_lid, c, 0)
            self.scraped = _grown(self.scraped, c, False)
            self.slot = _grown(self.slot, c, -1)
        self.n_cols += 1
        self.col_lid[col] = lid
        name = self.labels.get(lid, METRIC_NAME)
        self.col_name.append(name)
        self.by_name.setdefault(name, []).append(col)
        self._col_of_lid[lid] = col
        self.version += 1
        self.generation += 1
        return col

    def _slots(self, cols: IntArray) -> IntArray:
        """Slots of logical columns, giving the columns that have none a new, empty one."""
        if cols.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        out: IntArray = self.slot[cols]
        missing = out < 0
        if missing.any():
            new = np.unique(cols[missing])
            s0 = self.n_slots
            s1 = s0 + new.shape[0]
            if s1 > self.vals.shape[1]:
                self._grow(cols=max(256, 2 * self.vals.shape[1], s1))
            self.slot_col[s0:s1] = new
            self.slot[new] = np.arange(s0, s1, dtype=np.int64)
            self.n_slots = s1
            if self.n_rows:
                self.vals[: self.n_rows, s0:s1] = np.nan
                self.state[: self.n_rows, s0:s1] = NONE
                self.last[: self.n_rows, s0:s1] = -1
            self.generation += 1
            out = self.slot[cols]
        return out

    def column_of(self, labels: Mapping[str, str]) -> int:
        """Column of a series given its labels (``__name__`` included), created when new."""
        return self.column(self.labels.intern(freeze(labels)))

    def _grow(self, rows: int | None = None, cols: int | None = None) -> None:
        r = rows if rows is not None else self.vals.shape[0]
        c = cols if cols is not None else self.vals.shape[1]
        # Cells outside [:n_rows, :n_slots] are never read: a new slot is cleared in the
        # rows so far (:meth:`_slots`) and a new row in the slots so far (:meth:`row`), so
        # the grown arrays need not be filled (untouched pages stay free).
        vals = np.empty((r, c))
        state = np.zeros((r, c), dtype=np.int8)
        last = np.empty((r, c), dtype=np.int32)
        nr, ns = self.n_rows, self.n_slots
        vals[:nr, :ns] = self.vals[:nr, :ns]
        state[:nr, :ns] = self.state[:nr, :ns]
        last[:nr, :ns] = self.last[:nr, :ns]
        self.vals, self.state, self.last = vals, state, last
        if r > self.ts.shape[0]:
            self.ts = _grown(self.ts, r, 0)
        if c > self.slot_col.shape[0]:
            self.slot_col = _grown(self.slot_col, c, 0)

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
            ns = self.n_slots
            self.vals[n, :ns] = np.nan
            self.state[n, :ns] = NONE
            self.last[n, :ns] = self.last[n - 1, :ns] if n else -1
            self.n_rows = n + 1
            return n
        pos = int(np.searchsorted(self.ts[:n], t_ms))
        if self.ts[pos] == t_ms:
            return pos
        if n >= self.vals.shape[0]:
            self._grow(rows=max(64, 2 * self.vals.shape[0]))
        ns = self.n_slots
        self.ts[pos + 1: n + 1] = self.ts[pos:n].copy()
        self.vals[pos + 1: n + 1, :ns] = self.vals[pos:n, :ns].copy()
        self.state[pos + 1: n + 1, :ns] = self.state[pos:n, :ns].copy()
        self.ts[pos] = t_ms
        self.vals[pos, :ns] = np.nan
        self.state[pos, :ns] = NONE
        self.n_rows = n + 1
        self._relink(pos, np.arange(ns))
        return pos

    def _relink(self, from_row: int, slots: IntArray) -> None:
        """Recompute :attr:`last` for ``slots`` from ``from_row`` to the end."""
        n = self.n_rows
        if from_row >= n or slots.size == 0:
            return
        st = self.state[from_row:n][:, slots]
        rows = np.arange(from_row, n, dtype=np.int32)[:, None]
        marks = np.where(st != NONE, rows, -1).astype(np.int32)
        prev = self.last[from_row - 1, slots] if from_row > 0 else np.full(slots.shape[0], -1, dtype=np.int32)
        marks[0] = np.maximum(marks[0], prev)
        np.maximum.accumulate(marks, axis=0, out=marks)
        self.last[from_row:n, slots] = marks

    def retain(self, from_ms: int, *, min_drop_rows: int = 32) -> None:
        """Declare that no read will reach before ``from_ms``; drop what only such reads could see.

        The rows before ``from_ms`` (never the newest row: the next scrape's staleness markers
        read it) are dropped once there are at least ``min_drop_rows`` of them and an eighth of
        the rows, so the copying is amortised (:attr:`retained_from_ms` then moves past them), and with
        them every slot whose column has no sample or marker left -- a series absent for that
        long reads as absent either way (a staleness marker or an empty lookback both read as
        nothing). The columns stay, so a series written again keeps its place in results.

        Args:
            from_ms: the earliest sample time any later read may need, ms.
            min_drop_rows: drop nothing until this many rows can go.
        """
        if self._retain_ms is None or from_ms > self._retain_ms:
            self._retain_ms = from_ms
        n = self.n_rows
        k0 = min(int(np.searchsorted(self.ts[:n], self._retain_ms, side="left")), n - 1)
        if k0 < max(min_drop_rows, n // 8, 1):
            return
        ns = self.n_slots
        keep = np.flatnonzero(self.last[n - 1, :ns] >= k0)
        nk = keep.shape[0]
        nr = n - k0
        # Row by row, in place: each destination row lies before its source row, so nothing
        # the copy still needs is overwritten, and no temporary larger than one row is made.
        vals, state, last = self.vals, self.state, self.last
        whole = nk == ns
        for i in range(nr):
            src = k0 + i
            if whole:
                vals[i, :ns] = vals[src, :ns]
                state[i, :ns] = state[src, :ns]
                row = last[src, :ns] - k0
            else:
                vals[i, :nk] = vals[src, keep]
                state[i, :nk] = state[src, keep]
                row = last[src, keep] - k0
            np.maximum(row, -1, out=row)
            last[i, :nk] = row
        self.retained_from_ms = int(self.ts[k0 - 1]) + 1
        self.ts[:nr] = self.ts[k0:n].copy()
        cols = self.slot_col[keep].copy()
        self.slot[self.slot_col[:ns]] = -1
        self.slot_col[:nk] = cols
        self.slot[cols] = np.arange(nk, dtype=np.int64)
        self.n_rows, self.n_slots = nr, nk
        self.generation += 1

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
        c = self._slots(np.asarray(cols, dtype=np.int64))
        s = self._slots(np.asarray(stale, dtype=np.int64))
        r = self.row(t_ms)
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
        ph = self._slots(cols)
        ns = self.n_slots
        prev = (self.state[n - 1, :ns] == SAMPLE) & self.scraped[self.slot_col[:ns]] if n \
            else np.zeros(ns, dtype=bool)
        self.scraped[cols] = True
        r = self.row(t_ms)
        present = np.zeros(ns, dtype=bool)
        present[ph] = True
        stale = np.flatnonzero(prev & ~present & (self.state[r, :ns] == NONE)) if n and r == n else \
            np.zeros(0, dtype=np.int64)
        self.vals[r, ph] = values
        self.state[r, ph] = SAMPLE
        self.last[r, ph] = r
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
            cols, _, stale = by_t[t_ms]
            self._slots(np.asarray(cols + stale, dtype=np.int64))
        for t_ms in times:
            self.row(t_ms)
        for t_ms in times:
            cols, values, stale = by_t[t_ms]
            r = int(np.searchsorted(self.ts[: self.n_rows], t_ms))
            c = self.slot[np.asarray(cols, dtype=np.int64)]
            self.vals[r, c] = np.asarray(values, dtype=np.float64)
            self.state[r, c] = SAMPLE
            s = self.slot[np.asarray(stale, dtype=np.int64)]
            self.vals[r, s] = np.nan
            self.state[r, s] = STALE
        if times:
            first = int(np.searchsorted(self.ts[: self.n_rows], times[0]))
            self._relink(first, np.arange(self.n_slots))

    # ------------------------------------------------------------------ reading

    def row_at(self, t_ms: int) -> int:
        """Index of the newest row at or before ``t_ms`` (-1 when none)."""
        return int(np.searchsorted(self.ts[: self.n_rows], t_ms, side="right")) - 1

    def _held(self, cols: IntArray) -> tuple[IntArray, IntArray]:
        """(the columns of ``cols`` that have a slot, their slots), in the order given."""
        ph = self.slot[cols]
        held = ph >= 0
        if not held.all():
            return cols[held], ph[held]
        return cols, ph

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
        cols, ph = self._held(cols)
        li = self.last[k, ph]
        ok = li >= first
        sel = cols[ok]
        sp = ph[ok]
        rows = li[ok]
        sample = self.state[rows, sp] == SAMPLE
        if not sample.all():
            sel = sel[sample]
            sp = sp[sample]
            rows = rows[sample]
        return sel, self.vals[rows, sp], self.ts[rows]

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
        cols, ph = self._held(cols)
        # Columns with no sample or marker in the window: ``last`` at the window's last
        # row points before its first row (one gather instead of a [K, N] one).
        live = self.last[k1 - 1, ph] >= k0
        if not live.all():
            cols = cols[live]
            ph = ph[live]
        # np.take along axis 1 of the row slice is a faster gather than [k0:k1, cols].
        mask = np.take(self.state[k0:k1], ph, axis=1) == SAMPLE
        keep = mask.any(axis=0)
        if not keep.all():
            cols = cols[keep]
            ph = ph[keep]
            mask = mask[:, keep]
        return cols, self.ts[k0:k1], np.take(self.vals[k0:k1], ph, axis=1), mask

    def series_samples(self, col: int) -> list[tuple[int, float | None]]:
        """Every kept sample of one column as ``(t_ms, value)``; None marks staleness."""
        n = self.n_rows
        out: list[tuple[int, float | None]] = []
        s = int(self.slot[col])
        if s < 0:
            return out
        st = self.state[:n, s]
        for r in np.flatnonzero(st != NONE).tolist():
            out.append((int(self.ts[r]), None if st[r] == STALE else float(self.vals[r, s])))
        return out

    def describe(self) -> dict[str, Any]:
        """Sizes, for logs and benchmarks."""
        return {"rows": self.n_rows, "series": self.n_cols, "slots": self.n_slots, "label_sets": len(self.labels)}


def _grown(arr: npt.NDArray[Any], size: int, fill: Any) -> npt.NDArray[Any]:
    """``arr`` extended to ``size`` elements, the new ones set to ``fill``."""
    out = np.full(size, fill, dtype=arr.dtype)
    out[: arr.shape[0]] = arr
    return out
