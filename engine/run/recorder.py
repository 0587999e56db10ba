"""Recording a run's event stream into a run directory as it happens.

The recorder subscribes to the stream and appends each event as one line of canonical
JSON to ``events.jsonl``, flushing to the operating system at least every
``flush_every_s`` seconds of wall time and at the end, so a killed run leaves a
verifiable prefix. Beside it: ``schedule.yaml`` (the exact schedule replayed) and
``run.json`` (what was run); the names are :mod:`engine.bundle.layout`'s. Sealing the
directory into a bundle is :mod:`engine.bundle.format`'s job (:func:`engine.run.sealinputs.seal_run`).

:class:`HiddenRecorder` (what a run uses) writes the same lines and every *secret* side
file (the schedule) into the encrypted journal instead (:mod:`engine.bundle.journal`), so nothing
in a live run directory reveals ground truth; the seal decrypts them into the same files.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import IO, Any

from engine.bundle.events import Event
from engine.bundle.journal import JournalWriter
from engine.bundle.layout import EVENTS_FILE


class RunRecorder:
    """Appends events to ``<run_dir>/events.jsonl`` (module docstring).

    Args:
        run_dir: the run directory; created if missing; must not already hold events.
        flush_every_s: maximum wall seconds between flushes.

    Raises:
        FileExistsError: the directory already holds a recorded run.
    """

    def __init__(self, run_dir: str | Path, flush_every_s: float = 2.0) -> None:
        self.dir = Path(run_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        path = self.dir / EVENTS_FILE
        if path.exists() and path.stat().st_size > 0:
            raise FileExistsError(f"{path} already holds a recorded run; choose another --run-dir")
        self._fh: IO[str] | None = path.open("a", encoding="utf-8")
        self.flush_every_s = flush_every_s
        self._last_flush = time.monotonic()
        self.count = 0

    def write_file(self, name: str, text: str, *, secret: bool = False) -> None:
        """Write a side file (schedule, run description) atomically (``secret`` is ignored:
        this recorder keeps nothing hidden)."""
        _write_atomic(self.dir / name, text)

    def write_json(self, name: str, data: dict[str, Any]) -> None:
        self.write_file(name, json.dumps(data, indent=2, sort_keys=True) + "\n")

    def __call__(self, event: Event) -> None:
        if self._fh is None:
            return
        self._fh.write(event.to_json() + "\n")
        self.count += 1
        now = time.monotonic()
        if now - self._last_flush >= self.flush_every_s:
            self.flush()

    def flush(self) -> None:
        if self._fh is not None:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._last_flush = time.monotonic()

    def close(self) -> None:
        if self._fh is not None:
            self.flush()
            self._fh.close()
            self._fh = None


class HiddenRecorder:
    """A :class:`RunRecorder` whose events and secret side files go into the encrypted journal.

    Events are buffered and written as one encrypted record per flush (at most every
    ``flush_every_s`` wall seconds, and at the end), so a killed run keeps everything flushed.

    Args:
        run_dir: the run directory; created if missing; must not already hold a run.
        flush_every_s: maximum wall seconds between flushes.

    Raises:
        FileExistsError: the directory already holds a recorded run or a journal.
    """

    def __init__(self, run_dir: str | Path, flush_every_s: float = 2.0) -> None:
        self.dir = Path(run_dir)
        events = self.dir / EVENTS_FILE
        if events.exists() and events.stat().st_size > 0:
            raise FileExistsError(f"{events} already holds a recorded run; choose another --run-dir")
        self._journal: JournalWriter | None = JournalWriter(self.dir)
        self._buffer: list[str] = []
        self.flush_every_s = flush_every_s
        self._last_flush = time.monotonic()
        self.count = 0

    def write_file(self, name: str, text: str, *, secret: bool = False) -> None:
        """Write a side file: plainly and atomically, or (``secret``) into the journal."""
        if secret:
            if self._journal is not None:
                self._journal.file(name, text.encode("utf-8"))
                self._journal.flush()
            return
        _write_atomic(self.dir / name, text)

    def write_json(self, name: str, data: dict[str, Any]) -> None:
        self.write_file(name, json.dumps(data, indent=2, sort_keys=True) + "\n")

    def __call__(self, event: Event) -> None:
        if self._journal is None:
            return
        self._buffer.append(event.to_json() + "\n")
        self.count += 1
        if time.monotonic() - self._last_flush >= self.flush_every_s:
            self.flush()

    def flush(self) -> None:
        if self._journal is not None:
            if self._buffer:
                self._journal.events("".join(self._buffer).encode("utf-8"))
                self._buffer = []
            self._journal.flush()
            self._last_flush = time.monotonic()

    def close(self) -> None:
        if self._journal is not None:
            self.flush()
            self._journal.close()
            self._journal = None


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def read_events(run_dir: str | Path) -> list[Event]:
    """Read every complete event line of a run directory (a torn last line is dropped).

    Raises:
        FileNotFoundError: no events file.
        ValueError: a complete line that is not an event (names the line number).
    """
    path = Path(run_dir) / EVENTS_FILE
    out: list[Event] = []
    with path.open(encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    for i, line in enumerate(lines, start=1):
        if not line:
            continue
        try:
            out.append(Event.from_dict(json.loads(line)))
        except (json.JSONDecodeError, ValueError) as exc:
            if i == len(lines):
                break  # the last line was being written when the run stopped
            raise ValueError(f"{path}:{i}: {exc}") from None
    return out
