"""Event sources for the terminal app: an in-process run, a tailed run directory, a bundle.

Nothing here imports ``textual``: the screens drive these from workers (threads) and
drain their :class:`EventFeed` on the UI's refresh cycle.

* :class:`EventFeed` buffers the events of an in-process run
  (:class:`engine.run.session.RunSession`, which paces and seals it) for the UI thread.
* :class:`FollowTail` tails another process's ``events.jsonl`` (``marathon watch --follow``).
* :func:`load_bundle` reads and verifies a sealed bundle for replay.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.bundle.events import Event
from engine.bundle.layout import EVENTS_FILE

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


@dataclass
class LoadedBundle:
    """A bundle read for replay: its events, what was run, and whether it verified."""

    path: Path
    events: list[Event]
    meta: dict[str, Any]
    integrity: str
    schedule_text: str = ""
    """The schedule the run replayed (for its no-op counterfactual); empty if the bundle lacks it."""
    counterfactual: Any = None
    """The no-op counterfactual the bundle carries (:class:`scoring.counterfactual.Counterfactual`), or None."""
    app_model: Any = None
    """The app model the bundle carries (``app.yaml``), or None (the installed one of the same name)."""


def load_bundle(path: str | Path) -> LoadedBundle:
    """Open and verify a bundle (or run directory) for replay.

    A bundle that does not verify is still replayed, with its first problem as the
    integrity note shown in the header.

    Raises:
        engine.bundle.format.NotARunError, engine.bundle.format.BundleError: not a readable run.
    """
    from engine.bundle.format import BundleError, open_bundle, verify

    report = verify(path)
    bundle = open_bundle(path)
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
    from scoring.cli import ScoreError, bundle_app_model, bundle_counterfactual

    try:
        # this run's own (checked against run.start), and never one from a bundle that does not verify
        counterfactual = bundle_counterfactual(bundle, path, meta) if report.ok else None
        app_model = bundle_app_model(bundle, path)
    except ScoreError:  # a damaged input: replayed with the installed model, scores provisional
        counterfactual = app_model = None
    return LoadedBundle(Path(path), events, meta, integrity, schedule_text, counterfactual, app_model)
