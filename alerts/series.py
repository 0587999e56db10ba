"""Prometheus series inside the simulator: a registry of live values and a scrape store.

The registry holds one float per series in a growing numpy array, so the traffic model
can add a tick's increments to thousands of counters with one vectorised operation, and
Kubernetes objects write their kube-state-metrics gauges only when their state changes.
A *scrape* copies the values of every live series into the :class:`SeriesStore`, which is
what an evaluator, the ``/metrics`` endpoint and the determinism tests read.

Counters whose real exporters report whole numbers (request and bucket counts) are kept
as fractional expected counts internally and exposed floored, so they are integers,
monotonic, and a histogram's ``+Inf`` bucket equals its ``_count``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Labels = tuple[tuple[str, str], ...]
"""Label pairs sorted by name, without ``__name__``."""

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def make_labels(labels: Mapping[str, str]) -> Labels:
    """Freeze a label mapping into a sorted tuple (the registry's key form)."""
    return tuple(sorted((str(k), str(v)) for k, v in labels.items()))


@dataclass(frozen=True)
class SeriesInfo:
    """Identity of one series: metric name, labels, and whether it is exposed floored."""

    name: str
    labels: Labels
    integer: bool

    def label(self, key: str) -> str | None:
        for k, v in self.labels:
            if k == key:
                return v
        return None

    def selector(self) -> str:
        """The series in PromQL selector notation, e.g. ``up{job="x"}``."""
        inner = ",".join(f'{k}="{_escape(v)}"' for k, v in self.labels)
        return f"{self.name}{{{inner}}}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class SeriesRegistry:
    """Live series values, addressed by integer id.

    Ids are stable for the life of a run: a series that disappears (its pod deleted)
    keeps its id, is marked dead, and a later series with the same identity gets it back
    with its value restarting where the new owner sets it.
    """

    def __init__(self, capacity: int = 4096) -> None:
        self.values: FloatArray = np.zeros(capacity, dtype=np.float64)
        self.live: npt.NDArray[np.bool_] = np.zeros(capacity, dtype=np.bool_)
        self.integer: npt.NDArray[np.bool_] = np.zeros(capacity, dtype=np.bool_)
        self.info: list[SeriesInfo] = []
        self._ids: dict[tuple[str, Labels], int] = {}

    def __len__(self) -> int:
        return len(self.info)

    def add(self, name: str, labels: Mapping[str, str], value: float = 0.0, *, integer: bool = False) -> int:
        """Create (or revive) a series and set its value; returns its id."""
        key = (name, make_labels(labels))
        sid = self._ids.get(key)
        if sid is None:
            sid = len(self.info)
            if sid >= self.values.shape[0]:
                self._grow()
            self.info.append(SeriesInfo(name, key[1], integer))
            self._ids[key] = sid
            self.integer[sid] = integer
        self.values[sid] = value
        self.live[sid] = True
        return sid

    def lookup(self, name: str, labels: Mapping[str, str]) -> int | None:
        """Id of a series, or None when it was never created."""
        return self._ids.get((name, make_labels(labels)))

    def set(self, sid: int, value: float) -> None:
        self.values[sid] = value

    def inc(self, sid: int, amount: float = 1.0) -> None:
        self.values[sid] += amount

    def kill(self, ids: Iterable[int]) -> None:
        """Mark series dead: they drop out of the next scrape (a staleness marker)."""
        for sid in ids:
            self.live[sid] = False

    def _grow(self) -> None:
        size = self.values.shape[0] * 2
        for attr in ("values", "live", "integer"):
            old = getattr(self, attr)
            new = np.zeros(size, dtype=old.dtype)
            new[: old.shape[0]] = old
            setattr(self, attr, new)

    def exposed(self) -> tuple[IntArray, FloatArray]:
        """Ids and exposed values of every live series, in id order."""
        n = len(self.info)
        ids = np.flatnonzero(self.live[:n]).astype(np.int64)
        vals = self.values[ids].copy()
        ints = self.integer[ids]
        vals[ints] = np.floor(vals[ints] + 1e-9)
        return ids, vals


@dataclass(frozen=True)
class Scrape:
    """One scrape: the time (seconds of run time) and the live series' values."""

    t: float
    ids: IntArray
    values: FloatArray


class SeriesStore:
    """Every scrape of a run, sharing the registry's series identities."""

    def __init__(self, registry: SeriesRegistry, retention_s: float | None = None) -> None:
        self.registry = registry
        self.scrapes: list[Scrape] = []
        self.retention_s = retention_s
        """Drop scrapes older than this many seconds (None: keep every scrape of the run)."""
        self.dropped = 0
        """Scrapes dropped so far (``scrapes[0]`` is the ``dropped``-th scrape recorded)."""

    def record(self, t: float) -> Scrape:
        ids, values = self.registry.exposed()
        scrape = Scrape(t, ids, values)
        self.scrapes.append(scrape)
        if self.retention_s is not None:
            cut = 0
            while cut < len(self.scrapes) and self.scrapes[cut].t < t - self.retention_s:
                cut += 1
            if cut:
                del self.scrapes[:cut]
                self.dropped += cut
        return scrape

    @property
    def info(self) -> list[SeriesInfo]:
        return self.registry.info

    def series_ids(self, name: str, **match: str) -> list[int]:
        """Ids of every series named ``name`` whose labels include ``match``."""
        out = []
        for sid, info in enumerate(self.registry.info):
            if info.name != name:
                continue
            labels = dict(info.labels)
            if all(labels.get(k) == v for k, v in match.items()):
                out.append(sid)
        return out

    def samples(self, sid: int) -> tuple[FloatArray, FloatArray]:
        """(times, values) of one series over every scrape where it was live."""
        ts: list[float] = []
        vs: list[float] = []
        for scrape in self.scrapes:
            pos = int(np.searchsorted(scrape.ids, sid))
            if pos < scrape.ids.shape[0] and scrape.ids[pos] == sid:
                ts.append(scrape.t)
                vs.append(float(scrape.values[pos]))
        return np.asarray(ts), np.asarray(vs)

    def iter_samples(self) -> Iterator[tuple[float, SeriesInfo, float]]:
        """Every (time, series, value) in scrape order, then id order."""
        info = self.registry.info
        for scrape in self.scrapes:
            for sid, value in zip(scrape.ids.tolist(), scrape.values.tolist(), strict=True):
                yield scrape.t, info[sid], value

    def digest(self) -> str:
        """SHA-256 over every scrape's series identities and values (for determinism checks)."""
        import hashlib

        h = hashlib.sha256()
        for scrape in self.scrapes:
            h.update(np.float64(scrape.t).tobytes())
            h.update(scrape.ids.tobytes())
            h.update(scrape.values.tobytes())
        for info in self.registry.info:
            h.update(info.selector().encode())
        return h.hexdigest()


def exposition(registry: SeriesRegistry, timestamp_ms: int | None = None) -> str:
    """Render live series in the Prometheus text exposition format (version 0.0.4).

    Args:
        registry: the live series.
        timestamp_ms: optional explicit sample timestamp, milliseconds since the epoch.
    """
    ids, values = registry.exposed()
    by_name: dict[str, list[tuple[SeriesInfo, float]]] = {}
    for sid, value in zip(ids.tolist(), values.tolist(), strict=True):
        info = registry.info[sid]
        by_name.setdefault(_family(info.name), []).append((info, value))
    lines: list[str] = []
    suffix = "" if timestamp_ms is None else f" {timestamp_ms}"
    for family in sorted(by_name):
        lines.append(f"# TYPE {family} {_family_type(family)}")
        for info, value in by_name[family]:
            lines.append(f"{info.selector()} {_format_value(value)}{suffix}")
    return "\n".join(lines) + "\n"


def _family(name: str) -> str:
    for suffix in ("_bucket", "_sum", "_count"):
        if name.endswith(suffix) and name.startswith("http_request_duration_seconds"):
            return name[: -len(suffix)]
    return name


def _family_type(family: str) -> str:
    if family == "http_request_duration_seconds":
        return "histogram"
    if family.endswith("_total"):
        return "counter"
    return "gauge"


def _format_value(value: float) -> str:
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(value)
