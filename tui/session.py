"""Event sources for the terminal app: an in-process run, a tailed run directory, a bundle.

Nothing here imports ``textual``: the screens drive these from workers (threads) and
drain their :class:`EventFeed` on the UI's refresh cycle.

* :class:`EventFeed` buffers the events of an in-process run
  (:class:`engine.run.session.RunSession`, which paces and seals it) for the UI thread.
* :class:`FollowTail` tails another process's ``events.jsonl`` (``marathon watch --follow``).
* :func:`load_bundle` reads and verifies a sealed bundle for replay (once: then from a cache).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import marshal
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.bundle.events import Event
from engine.bundle.layout import APP_FILE, COUNTERFACTUAL_FILE, EVENTS_FILE

UI_YIELD_S = 0.002
"""Wall seconds an in-process run sleeps after each virtual-clock slice, so the UI thread
takes the interpreter between slices (:meth:`engine.run.session.RunSession.drive`)."""


class EventFeed:
    """A thread-safe queue of events from a source to the UI (drained whole, in order)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[Event] = []
        self.total = 0

    def push(self, ev: Event) -> None:
        """Append one event (called from the engine's thread or a tool call's)."""
        with self._lock:
            self._items.append(ev)
            self.total += 1

    def extend(self, events: list[Event]) -> None:
        with self._lock:
            self._items.extend(events)
            self.total += len(events)

    def drain(self) -> list[Event]:
        """Every event pushed since the last drain, in order."""
        with self._lock:
            items, self._items = self._items, []
        return items

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)


class FollowTail:
    """Reads the events another process records in ``<run_dir>`` (its journal, then ``events.jsonl``).

    Only complete lines are parsed; a torn last line waits for its newline.

    Args:
        run_dir: the run directory being recorded.

    Raises:
        FileNotFoundError: ``run_dir`` is not a directory.
    """

    def __init__(self, run_dir: str | Path) -> None:
        self.dir = Path(run_dir)
        if not self.dir.is_dir():
            raise FileNotFoundError(f"{run_dir}: no such run directory (start the run with --run-dir first)")
        self.path = self.dir / EVENTS_FILE
        self._offset = 0
        self._partial = b""
        self._seen = 0
        from engine.bundle.journal import JournalTail

        self._journal = JournalTail(self.dir)
        self.sealed = False
        self.ended = False

    def poll(self) -> list[Event]:
        """The events appended since the last poll: from the encrypted journal while the run
        records into one (:mod:`engine.bundle.journal`), then from ``events.jsonl`` once it is sealed
        (skipping the events already read).

        Raises:
            ValueError: a line that is not an event, or a journal that cannot be read.
        """
        from engine.bundle.journal import has_journal

        if has_journal(self.dir) and not self.path.is_file():
            data = self._journal.poll()
        elif self.path.is_file():
            with self.path.open("rb") as fh:
                fh.seek(self._offset)
                data = fh.read()
            self._offset += len(data)
        else:
            return []
        if not data:
            return []
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        out = []
        for line in lines:
            if line.strip():
                ev = Event.from_dict(json.loads(line))
                if ev.seq < self._seen:
                    continue  # read from the journal already
                self._seen = ev.seq + 1
                out.append(ev)
                self.ended = self.ended or ev.kind == "run.end"
                self.sealed = self.sealed or ev.kind == "seal"
        return out

    def follow(self, feed: EventFeed, cancelled: Callable[[], bool], interval_s: float = 0.25,
               linger_s: float = 10.0) -> None:
        """Poll into ``feed`` until the run is sealed, or has ended and stayed quiet for ``linger_s``."""
        quiet_since = time.monotonic()
        while not cancelled():
            events = self.poll()
            if events:
                feed.extend(events)
                quiet_since = time.monotonic()
            if self.sealed or (self.ended and time.monotonic() - quiet_since > linger_s):
                return
            time.sleep(interval_s)


BUNDLE_CACHE_VERSION = "1"
"""Part of every replay-cache key: bump it when what :func:`load_bundle` keeps may change."""
BUNDLE_CACHE_ENTRIES = 16
"""Bundles kept in the replay cache; the least recently opened are removed past this."""
_SCORING_FILES = (APP_FILE, COUNTERFACTUAL_FILE)
"""The members the replay's scorer reads (kept as text, parsed in a worker after the first frame)."""


class _Members:
    """The few read methods of :class:`engine.bundle.format.Bundle` that
    :func:`scoring.cli.bundle_app_model` and :func:`scoring.cli.bundle_counterfactual` use,
    over member texts kept by :func:`load_bundle` (in memory or in its cache)."""

    def __init__(self, path: Path, texts: dict[str, str]) -> None:
        self.path = path
        self._texts = texts

    def names(self) -> list[str]:
        return sorted(self._texts)

    def read_text(self, name: str) -> str:
        return self._texts[name]

    def read_json(self, name: str) -> Any:
        from engine.bundle.format import BundleError

        try:
            return json.loads(self._texts[name])
        except ValueError as exc:
            raise BundleError(f"{self.path}: {name} is not JSON ({exc})") from None


@dataclass
class LoadedBundle:
    """A bundle read for replay: its events, what was run, and whether it verified.

    The scorer's inputs (:attr:`counterfactual`, :attr:`app_model`) are parsed on first use
    (:meth:`scoring_inputs`): parsing the app model costs about a quarter of a second
    (imports included), which the replay spends in a worker after its first frame.
    """

    path: Path
    events: list[Event]
    meta: dict[str, Any]
    integrity: str
    schedule_text: str = ""
    """The schedule the run replayed (for its no-op counterfactual); empty if the bundle lacks it."""
    members: dict[str, str] = field(default_factory=dict)
    """Texts of the bundle's ``app.yaml`` and ``counterfactual.json`` (those it holds)."""
    cached: bool = False
    """Whether the events came from the replay cache (:func:`load_bundle`), not a scan of the bundle."""
    _inputs: tuple[Any, Any] | None = field(default=None, repr=False, compare=False)
    _pending: tuple[str, dict[str, Any]] | None = field(default=None, repr=False, compare=False)

    def remember(self) -> None:
        """Write the replay-cache entry that ``load_bundle(..., defer_write=True)`` left pending
        (nothing if none is): encoding a marathon's events costs about 0.1 s, which the replay
        spends after its first frame."""
        pending, self._pending = self._pending, None
        if pending is not None:
            _cache_put(*pending)

    def scoring_inputs(self) -> tuple[Any, Any]:
        """(the no-op counterfactual the bundle carries or None, the app model it carries or None).

        The counterfactual is checked against ``run.start`` and never taken from a bundle
        that does not verify (as ``marathon score``); a damaged input gives (None, None): the
        replay then scores with the installed model, provisionally.
        """
        if self._inputs is None:
            from scoring.cli import ScoreError, bundle_app_model, bundle_counterfactual

            files = _Members(self.path, self.members)
            verified = not self.integrity.startswith("DOES NOT")
            try:
                counterfactual = bundle_counterfactual(files, self.path, self.meta) if verified else None
                app_model = bundle_app_model(files, self.path)
            except ScoreError:
                counterfactual = app_model = None
            self._inputs = (counterfactual, app_model)
        return self._inputs

    @property
    def counterfactual(self) -> Any:
        """The no-op counterfactual the bundle carries (:class:`scoring.counterfactual.Counterfactual`), or None."""
        return self.scoring_inputs()[0]

    @property
    def app_model(self) -> Any:
        """The app model the bundle carries (``app.yaml``), or None (the installed one of the same name)."""
        return self.scoring_inputs()[1]


def bundle_cache_dir() -> Path:
    """Where :func:`load_bundle` keeps what it read of sealed bundles: ``<cache root>/replay``
    (``$SRE_MARATHON_CACHE``, default ``~/.cache/sre-marathon``: :func:`engine.bundle.replaystatus.cache_root`)."""
    from engine.bundle.replaystatus import cache_root

    return cache_root() / "replay"


def _cache_key(data: bytes) -> str:
    """SHA-256 over the bundle's bytes, salted with the engine's code digest (which covers the
    verifier, :mod:`engine.bundle.format`) and :data:`BUNDLE_CACHE_VERSION`: a changed byte or
    a changed verifier is a miss."""
    from engine.run.identity import code_sha256

    h = hashlib.sha256(f"replay-{BUNDLE_CACHE_VERSION}-{code_sha256()}\n".encode())
    h.update(data)
    return h.hexdigest()


def _cache_get(key: str) -> dict[str, Any] | None:
    try:
        entry = marshal.loads((bundle_cache_dir() / f"{key}.marshal").read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None  # absent, or damaged: a miss
    if not isinstance(entry, dict) or entry.get("version") != BUNDLE_CACHE_VERSION:
        return None
    with contextlib.suppress(OSError):
        os.utime(bundle_cache_dir() / f"{key}.marshal")  # least recently opened goes first
    return entry


def _cache_put(key: str, entry: dict[str, Any]) -> None:
    """Write atomically; never raises (a cache that cannot be written is no cache)."""
    from engine.inputs.safeyaml import put_cache_entry

    try:
        packed = marshal.dumps(entry)
    except ValueError:
        return
    put_cache_entry(bundle_cache_dir(), key, packed, BUNDLE_CACHE_ENTRIES)


def load_bundle(path: str | Path, *, cache: bool = True, defer_write: bool = False) -> LoadedBundle:
    """Open and verify a bundle (or run directory) for replay.

    A bundle that does not verify is still replayed, with its first problem as the
    integrity note shown in the header.

    The bundle is read, parsed and hashed once (``verify(keep=True)`` hands its scan to
    ``open_bundle``). A bundle *file* (sealed, so it never changes) is then remembered under
    :func:`bundle_cache_dir`, keyed by the SHA-256 of its bytes and the engine's code digest
    (:func:`_cache_key`): opening it again reads the events from :mod:`marshal` bytes instead
    of verifying every line's hash and encoding (a Train Ticket marathon: about 0.6 s to
    0.1 s; ``benchmarks/bench_tui.py``). The cache only saves time: its entry is what this
    code concluded from those exact bytes. Run directories are never cached (a live or
    killed run can still change).

    Args:
        path: the bundle (``*.marathon``) or run directory.
        cache: read and write the replay cache (False: always verify).
        defer_write: on a miss, leave the cache entry for :meth:`LoadedBundle.remember` to
            write (the replay screen does, after its first frame) instead of writing it now.

    Raises:
        engine.bundle.format.NotARunError, engine.bundle.format.BundleError: not a readable run.
    """
    from engine.bundle.format import BundleError, open_bundle, verify

    p = Path(path)
    key = None
    if cache and p.is_file():
        try:
            key = _cache_key(p.read_bytes())
        except OSError:
            key = None
        entry = _cache_get(key) if key is not None else None
        if entry is not None:
            events = [Event(seq, t, kind, payload, prev, digest)
                      for seq, t, kind, payload, prev, digest in entry["events"]]
            return LoadedBundle(p, events, entry["meta"], entry["integrity"], entry["schedule_text"],
                                entry["members"], cached=True)
    report = verify(path, keep=True)
    bundle = open_bundle(path, report=report)
    events = bundle.events
    meta = bundle.meta
    if report.ok and report.sealed:
        integrity = "sealed"
    elif report.ok:
        integrity = "unsealed"
    else:
        integrity = f"DOES NOT VERIFY: {report.problems[0]}"
    try:
        schedule_text = bundle.schedule_text
    except (BundleError, KeyError, OSError, UnicodeDecodeError):
        schedule_text = ""
    names = set(bundle.names())
    members = {}
    for name in _SCORING_FILES:
        if name in names:
            # not UTF-8: scored as if absent (the installed model, a re-simulated counterfactual)
            with contextlib.suppress(BundleError):
                members[name] = bundle.read_text(name)
    del report  # it holds every file of the run
    loaded = LoadedBundle(p, events, meta, integrity, schedule_text, members)
    if key is not None:
        entry = {"version": BUNDLE_CACHE_VERSION, "integrity": integrity, "meta": meta,
                 "schedule_text": schedule_text, "members": members,
                 "events": [(e.seq, e.t, e.kind, e.payload, e.prev, e.hash) for e in events]}
        loaded._pending = (key, entry)
        if not defer_write:
            loaded.remember()
    return loaded
