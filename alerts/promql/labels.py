"""Label sets interned to integer ids, and the fingerprints Prometheus tools print.

Every series and every vector element the evaluator handles is identified by a *label set
id* (``lid``): an index into one :class:`LabelTable`. Vectors are then two numpy arrays
(ids and values), and anything that depends only on the label sets (grouping, vector
matching, dropping ``__name__``) can be computed once per distinct input and cached by the
bytes of the id array, which is what keeps evaluation vectorised.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import numpy as np
import numpy.typing as npt

METRIC_NAME = "__name__"
"""The label holding a series' metric name (Prometheus ``labels.MetricName``)."""

LabelPairs = tuple[tuple[str, str], ...]
"""Label pairs sorted by name; empty values are never stored (Prometheus drops them)."""


def freeze(labels: Mapping[str, str] | Iterable[tuple[str, str]]) -> LabelPairs:
    """Sort label pairs by name and drop empty values, as Prometheus' label builder does."""
    items = labels.items() if isinstance(labels, Mapping) else labels
    return tuple(sorted((str(k), str(v)) for k, v in items if v != ""))


class LabelTable:
    """Interned label sets with memoised derived sets.

    Ids are dense, stable for the table's life, and assigned in first-seen order.
    """

    def __init__(self) -> None:
        self.sets: list[LabelPairs] = []
        self._dicts: list[dict[str, str]] = []
        self._index: dict[LabelPairs, int] = {}
        self._drop_name: dict[int, int] = {}
        self._drop_map = LidMap(self._drop_one)

    def __len__(self) -> int:
        return len(self.sets)

    def fork(self) -> LabelTable:
        """A copy sharing this table's ids: sets interned into the copy never reach this table.

        For queries that must not change the table a run's rule evaluation uses (the
        ``query_metrics`` tool): ids already interned mean the same label sets in both.
        Copies the index (about 1 ms per 10,000 label sets); the per-set dicts are shared,
        as they are never mutated.
        """
        out = LabelTable()
        out.sets = list(self.sets)
        out._dicts = list(self._dicts)
        out._index = dict(self._index)
        out._drop_name = dict(self._drop_name)
        return out

    def intern(self, pairs: LabelPairs) -> int:
        """Id of a frozen label set (see :func:`freeze`), adding it when new."""
        lid = self._index.get(pairs)
        if lid is None:
            lid = len(self.sets)
            self.sets.append(pairs)
            self._dicts.append(dict(pairs))
            self._index[pairs] = lid
        return lid

    def intern_map(self, labels: Mapping[str, str]) -> int:
        """Id of a label mapping (empty values dropped)."""
        return self.intern(freeze(labels))

    def pairs(self, lid: int) -> LabelPairs:
        return self.sets[lid]

    def dict(self, lid: int) -> dict[str, str]:
        """The label set as a dict; callers must not mutate it."""
        return self._dicts[lid]

    def get(self, lid: int, name: str) -> str:
        """A label's value, or ``""`` when the set lacks it (Prometheus ``Labels.Get``)."""
        return self._dicts[lid].get(name, "")

    def drop_name(self, lid: int) -> int:
        """Id of the same set without ``__name__``."""
        out = self._drop_name.get(lid)
        if out is None:
            pairs = self.sets[lid]
            out = self.intern(tuple(p for p in pairs if p[0] != METRIC_NAME)) if pairs and any(
                p[0] == METRIC_NAME for p in pairs) else lid
            self._drop_name[lid] = out
        return out

    def _drop_one(self, table: LabelTable, lid: int) -> int:
        return self.drop_name(lid)

    def drop_names(self, lids: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """:meth:`drop_name` of every id of an array (vectorised, memoised)."""
        return self._drop_map.map(self, lids)

    def format(self, lid: int) -> str:
        """The set in Prometheus' notation, e.g. ``up{job="x"}`` or ``{a="b"}``."""
        return format_labels(self.sets[lid])


class LidMap:
    """A memoised function of label-set ids, applied to id arrays with numpy.

    ``fn(table, lid)`` must return an int that depends only on the label set ``lid``
    (it may intern new sets). Results are kept in an array indexed by id, so mapping an
    array costs one fancy index plus ``fn`` calls for ids never seen before; the memo is
    dropped when the map is used with another table.
    """

    __slots__ = ("_arr", "_fn", "_table")

    def __init__(self, fn: Callable[[LabelTable, int], int]) -> None:
        self._fn = fn
        self._arr: npt.NDArray[np.int64] = np.full(0, -1, dtype=np.int64)
        self._table: LabelTable | None = None

    def map(self, table: LabelTable, lids: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        if table is not self._table:
            self._table = table
            self._arr = np.full(0, -1, dtype=np.int64)
        if lids.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        arr = self._arr
        n = len(table.sets)
        if arr.shape[0] < n:
            grown = np.full(max(n, 2 * arr.shape[0], 64), -1, dtype=np.int64)
            grown[: arr.shape[0]] = arr
            self._arr = arr = grown
        out = arr[lids]
        miss = np.flatnonzero(out < 0)
        if miss.shape[0]:
            fn = self._fn
            for i in miss.tolist():
                lid = int(lids[i])
                v = int(arr[lid])
                if v < 0:
                    v = fn(table, lid)
                    arr[lid] = v
                out[i] = v
        return out


def has_duplicates(ids: npt.NDArray[np.int64]) -> bool:
    """Whether an id array holds some value twice (a sort: faster than ``np.unique``)."""
    if ids.shape[0] < 2:
        return False
    s = np.sort(ids)
    return bool((s[1:] == s[:-1]).any())


def has_duplicate_pairs(a: npt.NDArray[np.int64], b: npt.NDArray[np.int64]) -> bool:
    """Whether some ``(a[i], b[i])`` pair occurs twice."""
    if a.shape[0] < 2:
        return False
    order = np.lexsort((b, a))
    sa, sb = a[order], b[order]
    return bool(((sa[1:] == sa[:-1]) & (sb[1:] == sb[:-1])).any())


def format_labels(pairs: LabelPairs | Mapping[str, str]) -> str:
    """Render a label set as Prometheus prints it: ``name{a="b", c="d"}`` (name outside)."""
    items = list(pairs.items()) if isinstance(pairs, Mapping) else list(pairs)
    name = ""
    rest = []
    for k, v in items:
        if k == METRIC_NAME:
            name = v
        else:
            rest.append(f'{k}="{escape_value(v)}"')
    if name and not rest:
        return name
    return name + "{" + ", ".join(rest) + "}"


def escape_value(value: str) -> str:
    """Escape a label value for PromQL / exposition text (backslash, quote, newline)."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


_FNV_OFFSET = 14695981039346656037
_FNV_PRIME = 1099511628211
_MASK64 = (1 << 64) - 1


def fingerprint(labels: Mapping[str, str] | LabelPairs) -> str:
    """Alertmanager's fingerprint of a label set, as 16 hex digits.

    Source: ``prometheus/common`` ``model.LabelSet.Fingerprint`` (FNV-1a 64 over the
    sorted names and values, each followed by the separator byte 255); Alertmanager's
    ``/api/v2/alerts`` reports this value as ``fingerprint``.
    """
    items = sorted(labels.items() if isinstance(labels, Mapping) else labels)
    if not items:
        return f"{_FNV_OFFSET:016x}"
    h = _FNV_OFFSET
    for k, v in items:
        for part in (k, v):
            for byte in part.encode():
                h ^= byte
                h = (h * _FNV_PRIME) & _MASK64
            h ^= 255
            h = (h * _FNV_PRIME) & _MASK64
    return f"{h:016x}"
