"""Sealed run bundles: one verifiable file per run (DESIGN section 8, issue 5 part 5).

A run records into a run directory (the run side's recorder, ``engine/run/recorder.py``; the
file names are :mod:`engine.bundle.layout`'s): ``events.jsonl`` (the hash-chained event
stream, one canonical JSON event per line), ``schedule.yaml``, ``run.json`` and, with
operators that have them, ``workspace/``, ``transcripts/`` and ``prompts/``. :func:`seal`
closes the directory into one file; :func:`verify` says whether anything changed since, and
exactly where; :func:`open_bundle` reads a bundle, a sealed run directory or a live/killed
(unsealed) one through the same interface.

Sealing, in order:

1. read ``events.jsonl`` and check every line: valid JSON in canonical form
   (:func:`engine.bundle.events.canonical`), ``seq`` = line number - 1, ``prev`` = the previous
   event's hash, ``hash`` = :meth:`engine.bundle.events.Event.digest`. A broken chain is never
   repaired: the first bad event is reported (file, line, seq) and nothing is written;
2. a run is *complete* when its last event is ``run.end``. An incomplete run, or one whose
   last line is torn (bytes after the last newline: the process was killed mid-write), is
   sealed only with ``recover=True``: the torn bytes are dropped, every complete event is
   kept, and the bundle is marked incomplete with the reason;
3. append a ``seal`` event, chained like every other event, at the run time of the last
   event. Payload: ``events`` (events in the stream, the seal included), ``sha256`` (the
   *files digest*: sha256 of ``canonical({path: {"sha256", "size"}})`` over every file
   but ``events.jsonl``, which cannot hold its own digest and is covered by the chain),
   ``files`` (files in the manifest, ``events.jsonl`` included), ``complete``, ``reason``,
   ``recovered``, ``dropped_bytes`` (torn bytes dropped) and ``format`` (the version);
4. write ``manifest.json`` (below) into the directory and pack the bundle.

Bundle format, version 2 (``<run_dir>.marathon``, uncompressed so that every byte has a
location): a POSIX ustar archive written by this module, not by :mod:`tarfile`, so its
bytes never depend on the Python version. Members are regular files only, ``manifest.json``
first, then every file of the run directory sorted by its POSIX path (empty directories
are not kept). Every header has mode 0644, uid/gid 0, empty user/group names, mtime 0 and
typeflag ``0``; paths longer than 100 bytes use the ustar prefix field (at most 255
bytes). Data is zero-padded to 512-byte blocks; the archive ends with two zero blocks and
zero padding to a multiple of 10240 bytes, as GNU tar and :mod:`tarfile` write. Any
``tar -xf`` extracts it into a sealed run directory that :func:`verify` also accepts.

``manifest.json`` is JSON with sorted keys, two-space indent and a final newline::

    {"format": "sre-marathon-bundle", "version": 1, "run_id": ..., "events": N,
     "head": <hash of the seal event>, "complete": bool, "reason": str, "recovered": bool,
     "files_sha256": <the seal event's sha256>,
     "files": {path: {"sha256": hex, "size": bytes}, ...}}   # every file but manifest.json

Verifying checks the container byte for byte against the canonical form the manifest
implies (headers, padding, end-of-archive, length), every file against its digest, the
manifest against the seal event, every event line against the chain, and reports each
problem with its place: the bundle byte range, the file, and for events the line and seq.
Same run (seed, schedule, operator decisions) -> byte-identical bundle.

Version 2 adds an optional manifest ``signature`` (:mod:`engine.bundle.keys`: Ed25519 over the head);
version-1 bundles still verify.

What sealing protects against: any change to a sealed run, accidental or not, by someone
who does not recompute every digest and hash. A forger who rewrites the whole chain and
reseals it gets a bundle this module calls intact; it is caught by re-execution
(``marathon verify --replay``, ``engine/run/replay.py``), and a signed bundle by the signature,
which the forger cannot make without the key.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from engine.bundle.events import GENESIS, Event, canonical, check_payload, check_payload_types
from engine.bundle.journal import (
    JOURNAL_FILE,
    JOURNAL_HEADER,
    JournalError,
    discard,
    has_journal,
    journal_size,
    materialize,
    read_journal,
)
from engine.bundle.layout import EVENTS_FILE, SCHEDULE_FILE

BUNDLE_SUFFIX = ".marathon"
MANIFEST_FILE = "manifest.json"
FORMAT_NAME = "sre-marathon-bundle"
FORMAT_VERSION = 2
"""Version 2 adds the optional manifest ``signature`` (:mod:`engine.bundle.keys`); version-1 bundles
still verify."""
READ_VERSIONS = (1, 2)
BLOCK = 512
"""Bytes per tar block."""
RECORD = 20 * BLOCK
"""Bytes per tar record: the archive is zero-padded to a multiple of this (GNU tar's default)."""
MAX_FILE_SIZE = 8**11 - 1
"""Largest member a ustar header can describe (11 octal digits): 8 GiB - 1 bytes."""

_ZERO_BLOCK = bytes(BLOCK)
_MANIFEST_KEYS = frozenset(
    {"format", "version", "run_id", "events", "head", "complete", "reason", "recovered", "files_sha256", "files"}
)
_MANIFEST_OPTIONAL = frozenset({"signature"})
_JOURNAL_FILES = frozenset({JOURNAL_FILE, JOURNAL_HEADER})
_EVENT_KEYS = frozenset({"seq", "t", "kind", "payload", "prev", "hash"})
SealInputs = Callable[[Path, list[Event]], object]
"""A hook :func:`seal` calls with the run directory and its events, once the journal is decrypted
and before the files are read: it may add files the bundle must carry (the run side's
``complete_inputs`` adds the catalog entries and the no-op counterfactual)."""
_HEADER_FIELDS = (
    (0, "name"), (100, "mode"), (108, "uid"), (116, "gid"), (124, "size"), (136, "mtime"), (148, "chksum"),
    (156, "typeflag"), (157, "linkname"), (257, "magic"), (263, "version"), (265, "uname"), (297, "gname"),
    (329, "devmajor"), (337, "devminor"), (345, "prefix"), (500, "padding"),
)


class BundleError(ValueError):
    """A run or bundle that cannot be sealed or read; the message names the file and the fault."""


class NotARunError(BundleError):
    """The path is not a run directory or a bundle at all (bad input rather than a refused seal)."""


# ----------------------------------------------------------------------------- problems and reports


@dataclass(frozen=True)
class Problem:
    """One thing that differs from what was sealed, with its place.

    Attributes:
        where: the place in words, e.g. ``events.jsonl line 57 (seq 56, bundle bytes 20480-21311)``.
        what: what is wrong there.
        file: the run file concerned (``events.jsonl``, ``manifest.json``, ...), if any.
        line: the 1-based line of ``events.jsonl``, for event problems.
        seq: the event's sequence number (the one expected at that line when unreadable).
        start: first byte of the place: an offset in the bundle file, or in ``file`` when a
            directory is verified.
        end: one past the last byte of the place (same frame as ``start``).
    """

    where: str
    what: str
    file: str | None = None
    line: int | None = None
    seq: int | None = None
    start: int | None = None
    end: int | None = None

    def __str__(self) -> str:
        return f"{self.where}: {self.what}"

    def to_dict(self) -> dict[str, Any]:
        return {"where": self.where, "what": self.what, "file": self.file, "line": self.line, "seq": self.seq,
                "start": self.start, "end": self.end}


@dataclass
class VerifyReport:
    """What :func:`verify` found.

    Attributes:
        path: the bundle file or run directory verified.
        form: ``bundle`` (a bundle file) or ``run directory`` (sealed or not).
        sealed: the stream ends with a seal event, or a manifest is present.
        complete: the run reached ``run.end`` (False: truncated, e.g. recovered after a kill).
        reason: why the run is (in)complete, e.g. ``run.end: schedule complete``.
        events: event lines in the stream (the seal event included).
        head: hash of the last readable event (``GENESIS`` when there is none).
        files: files of the run (``manifest.json`` excluded).
        size: bytes of the bundle file, or of all files of a directory.
        problems: every change found, in the order found; empty when intact.
        notes: facts that are not problems (e.g. a torn last line in an unsealed directory).
        signer: the public key (hex) of a valid seal signature, or None (unsigned, or invalid:
            then a problem says so).
    """

    path: Path
    form: str
    sealed: bool = False
    complete: bool = False
    reason: str = ""
    events: int = 0
    head: str = GENESIS
    files: int = 0
    size: int = 0
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    signer: str | None = None
    _read: tuple[_Loaded, _Scan | None] | None = field(default=None, repr=False, compare=False)
    """The files and the event scan this report was made from, for :func:`open_bundle` to reuse."""

    @property
    def ok(self) -> bool:
        """True when nothing is wrong (an unsealed directory with an intact chain is ok)."""
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {"path": str(self.path), "form": self.form, "ok": self.ok, "sealed": self.sealed,
                "complete": self.complete, "reason": self.reason, "events": self.events, "head": self.head,
                "files": self.files, "size": self.size, "problems": [p.to_dict() for p in self.problems],
                "notes": list(self.notes), "signer": self.signer}

    def format(self, max_problems: int = 50) -> str:
        """A short human report: status, events, head hash, then every problem with its place.

        Args:
            max_problems: list at most this many problems, then say how many more there are.
        """
        state = "complete" if self.complete else "truncated (incomplete)"
        status = f"{'sealed' if self.sealed else 'unsealed'} {self.form}, {state}"
        if not self.sealed and not self.events:
            status = f"not a readable {'marathon bundle' if self.form == 'bundle' else 'run directory'}"
        lines = [f"{self.path}: {status}",
                 f"  reason  {self.reason or '-'}",
                 f"  events  {self.events}",
                 f"  head    {self.head}",
                 f"  files   {self.files} ({self.size} bytes)",
                 f"  signed  {self.signer or '-'}"]
        lines += [f"  note    {n}" for n in self.notes]
        if self.ok:
            lines.append("intact" if self.sealed else "intact so far (not sealed: `marathon seal` closes it)")
        else:
            lines.append(f"NOT INTACT: {len(self.problems)} problem{'s' if len(self.problems) != 1 else ''}")
            lines += [f"  {p}" for p in self.problems[:max_problems]]
            if len(self.problems) > max_problems:
                lines.append(f"  ... and {len(self.problems) - max_problems} more")
        return "\n".join(lines)


# ----------------------------------------------------------------------------- the ustar container


def _padded(size: int) -> int:
    return -(-size // BLOCK) * BLOCK


def _archive_length(members_end: int) -> int:
    """Total bundle length when the last member's padded data ends at ``members_end``."""
    return -(-(members_end + 2 * BLOCK) // RECORD) * RECORD


def _split_name(name: str) -> tuple[bytes, bytes]:
    """Split a member path into the ustar (name, prefix) fields.

    Raises:
        ValueError: the path does not fit a ustar header (over 255 bytes, or no ``/`` to
            split a long path at) or cannot be encoded as UTF-8.
    """
    raw = name.encode("utf-8")
    if len(raw) <= 100:
        return raw, b""
    cut = raw.rfind(b"/", 0, 156)  # the longest prefix of at most 155 bytes, as tarfile does
    if cut <= 0 or not 0 < len(raw) - cut - 1 <= 100:
        raise ValueError(f"path {name!r} is too long for a ustar header ({len(raw)} bytes; at most 255)")
    return raw[cut + 1:], raw[:cut]


def _header(name: str, size: int) -> bytes:
    """The canonical 512-byte ustar header of a regular file (module docstring).

    Raises:
        ValueError: a path that does not fit (see :func:`_split_name`), or ``size`` above
            :data:`MAX_FILE_SIZE`.
    """
    if not 0 <= size <= MAX_FILE_SIZE:
        raise ValueError(f"{size} bytes is too large for a ustar member")
    nm, prefix = _split_name(name)
    buf = bytearray(BLOCK)
    buf[0:len(nm)] = nm
    buf[100:108] = b"0000644\0"
    buf[108:116] = b"0000000\0"
    buf[116:124] = b"0000000\0"
    buf[124:136] = b"%011o\0" % size
    buf[136:148] = b"00000000000\0"
    buf[148:156] = b"        "
    buf[156:157] = b"0"
    buf[257:263] = b"ustar\0"
    buf[263:265] = b"00"
    buf[329:337] = b"0000000\0"
    buf[337:345] = b"0000000\0"
    buf[345:345 + len(prefix)] = prefix
    buf[148:156] = b"%06o\0 " % sum(buf)
    return bytes(buf)


def _header_field(offset: int) -> str:
    name = "name"
    for start, fname in _HEADER_FIELDS:
        if offset >= start:
            name = fname
    return name


def _write_archive(fh: BinaryIO, members: list[tuple[str, bytes]]) -> int:
    """Write ``members`` (name, data) as a canonical archive; returns the bytes written."""
    pos = 0
    for name, data in members:
        fh.write(_header(name, len(data)))
        fh.write(data)
        fh.write(bytes(_padded(len(data)) - len(data)))
        pos += BLOCK + _padded(len(data))
    end = _archive_length(pos)
    fh.write(bytes(end - pos))
    return end


@dataclass
class _File:
    """One file of a run, as read from a bundle member or a directory."""

    name: str
    data: bytes
    base: int = 0
    """Offset of ``data[0]`` in the verified path (0 for a file of a directory)."""
    header: int | None = None
    """Offset of the member's header in the bundle file."""
    truncated: bool = False

    @property
    def span(self) -> tuple[int, int]:
        """The bytes of this file in the verified path's frame (header included for members)."""
        start = self.header if self.header is not None else self.base
        return start, self.base + len(self.data)


def _parse_header(block: bytes) -> tuple[str, int] | str:
    """(name, size) from a header block, or why the block is not a ustar header."""
    if block[257:263] != b"ustar\0":
        return "no ustar header here (magic missing)"
    size_field = block[124:136].split(b"\0", 1)[0].strip()
    if not size_field or any(c not in b"01234567" for c in size_field):
        return f"the size field {block[124:136]!r} is not an octal number"
    name = block[0:100].split(b"\0", 1)[0]
    prefix = block[345:500].split(b"\0", 1)[0]
    full = prefix + b"/" + name if prefix else name
    return full.decode("utf-8", "surrogateescape"), int(size_field, 8)


def _first_nonzero(data: bytes, start: int = 0) -> int:
    """Index of the first non-zero byte of ``data`` at or after ``start``, or -1."""
    stripped = data[start:].lstrip(b"\0")
    return -1 if not stripped else len(data) - len(stripped)


def _parse_archive(blob: bytes) -> tuple[list[_File], list[Problem]]:
    """Read every member of a bundle, checking the container byte for byte.

    Returns:
        The members read (a truncated last member holds what is there) and the problems,
        each with the bundle byte range it concerns. Never raises.
    """
    members: list[_File] = []
    problems: list[Problem] = []
    n = len(blob)
    pos = 0
    while True:
        idx = len(members) + 1
        if pos + BLOCK > n:
            if n == 0:
                problems.append(Problem("bundle byte 0", "the file is empty", start=0, end=1))
            elif pos == 0:
                problems.append(Problem(f"bundle bytes 0-{n - 1}", f"not a marathon bundle: only {n} bytes (a bundle "
                                        f"has at least {RECORD})", start=0, end=n))
            else:
                problems.append(Problem(f"bundle bytes {pos}-{n}", f"the bundle ends at byte {n}, before its "
                                        "end-of-archive marker (truncated)", start=max(0, min(pos, n - 1)),
                                        end=max(n, pos + 1)))
            return members, problems
        block = blob[pos:pos + BLOCK]
        if block == _ZERO_BLOCK:
            break
        where = f"bundle bytes {pos}-{pos + BLOCK - 1} (header of member {idx})"
        parsed = _parse_header(block)
        if isinstance(parsed, str):
            what = parsed if members else f"not a marathon bundle: {parsed}"
            if members:
                what += "; expected the next member's header or the end-of-archive marker"
            problems.append(Problem(where, what, start=pos, end=pos + BLOCK))
            return members, problems
        name, size = parsed
        where = f"bundle bytes {pos}-{pos + BLOCK - 1} (header of member {idx}, {name!r})"
        try:
            expected: bytes | None = _header(name, size)
        except ValueError as exc:
            expected = None
            problems.append(Problem(where, f"not a canonical header: {exc}", file=name, start=pos, end=pos + BLOCK))
        if expected is not None and expected != block:
            stored = block[148:156]
            computed = sum(block[:148]) + 8 * 0x20 + sum(block[156:])
            if stored.split(b"\0", 1)[0].strip() != b"%06o" % computed:
                what = "header checksum mismatch: the header was changed"
            else:
                diff = next(i for i in range(BLOCK) if block[i] != expected[i])
                what = (f"field {_header_field(diff)} (byte {pos + diff}) differs from the canonical header "
                        f"(format {FORMAT_VERSION})")
            problems.append(Problem(where, what, file=name, start=pos, end=pos + BLOCK))
        start = pos + BLOCK
        end = start + size
        if end > n:
            members.append(_File(name, blob[start:end], base=start, header=pos, truncated=True))
            problems.append(Problem(f"bundle bytes {start}-{n} (data of member {idx}, {name!r})",
                                    f"the bundle ends at byte {n}, {end - n} bytes into the {size} bytes of "
                                    f"{name} (truncated)", file=name, start=min(start, n - 1), end=n))
            return members, problems
        members.append(_File(name, blob[start:end], base=start, header=pos))
        pad_end = start + _padded(size)
        if pad_end > n:
            problems.append(Problem(f"bundle bytes {end}-{n} (padding after {name!r})",
                                    f"the bundle ends at byte {n}, inside the padding after {name} (truncated)",
                                    file=name, start=min(end, n - 1), end=n))
            return members, problems
        nz = _first_nonzero(blob[end:pad_end])
        if nz >= 0:
            problems.append(Problem(f"bundle byte {end + nz} (padding after {name!r})",
                                    "padding after a member must be zero bytes", file=name,
                                    start=end + nz, end=end + nz + 1))
        pos = pad_end
    total = _archive_length(pos)
    tail = blob[pos:total]
    nz = _first_nonzero(tail)
    if nz >= 0:
        part = "end-of-archive marker" if nz < 2 * BLOCK else "end-of-archive padding"
        problems.append(Problem(f"bundle byte {pos + nz} ({part})", "must be a zero byte",
                                start=pos + nz, end=pos + nz + 1))
    if n < total:
        problems.append(Problem(f"bundle bytes {n}-{total}", f"the bundle ends at byte {n}; its end-of-archive "
                                f"padding runs to byte {total} (truncated)", start=n - 1, end=total))
    elif n > total:
        problems.append(Problem(f"bundle bytes {total}-{n}", f"{n - total} bytes after the end of the archive",
                                start=total, end=n))
    return members, problems


# ----------------------------------------------------------------------------- the event stream


@dataclass
class _Line:
    """One complete line of ``events.jsonl``."""

    number: int
    start: int
    end: int
    """One past the newline."""
    event: Event | None
    """The event, when the line could be read as one (even if it is wrong)."""


@dataclass
class _Scan:
    lines: list[_Line]
    tail: bytes
    """Bytes after the last newline (a torn line)."""
    problems: list[Problem]

    @property
    def events(self) -> list[Event]:
        return [ln.event for ln in self.lines if ln.event is not None]

    @property
    def last(self) -> Event | None:
        return self.lines[-1].event if self.lines else None


def _read_line(raw: bytes) -> tuple[Event | None, list[str], str | None]:
    """The event on one line, what is wrong with the line itself (not the chain), and the
    digest of its content (:meth:`engine.bundle.events.Event.digest`; None when it cannot be
    computed).

    The line is JSON-encoded once: the canonical body the digest covers (``seq``, ``t``,
    ``kind``, ``payload``) is encoded, and the canonical line is that body with ``hash`` and
    ``prev`` spliced in at their sorted places (``hash`` < ``kind`` < ``payload`` < ``prev``
    < ``seq`` < ``t``), so it equals ``ev.to_json()`` without encoding the payload twice.
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [f"not UTF-8 (byte {exc.start} of the line)"], None
    if not text:
        return None, ["an empty line"], None
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError) as exc:
        msg = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        col = f" at column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        return None, [f"not JSON ({msg}{col})"], None
    if not isinstance(obj, dict):
        return None, ["not an event object"], None
    try:
        ev = Event.from_dict(obj)
        body = canonical({"seq": ev.seq, "t": ev.t, "kind": ev.kind, "payload": ev.payload})
        tail = f',"seq":{canonical(ev.seq)},"t":{canonical(ev.t)}}}'
        as_json = (f'{{"hash":{canonical(ev.hash)},' + body[1:len(body) - len(tail)]
                   + f',"prev":{canonical(ev.prev)}' + tail)
    except (ValueError, TypeError) as exc:
        return None, [f"not an event ({exc})"], None
    reasons = []
    if set(obj) != _EVENT_KEYS:
        reasons.append(f"fields {sorted(obj)}, expected {sorted(_EVENT_KEYS)}")
    elif as_json != text:
        reasons.append("not in canonical JSON form")
    return ev, reasons, hashlib.sha256((ev.prev + body).encode()).hexdigest()


def _scan_events(data: bytes, f: _File, bundle: bool) -> _Scan:
    """Check every complete line of ``events.jsonl`` and the hash chain through them.

    Every bad line yields one :class:`Problem` naming the line, the seq and the byte range;
    after an unreadable line the next event's link is not checked (its predecessor is
    unknown), so one damaged line is one problem.
    """
    lines: list[_Line] = []
    problems: list[Problem] = []
    pos = 0
    prev: str | None = GENESIS
    frame = "bundle bytes" if bundle else "bytes"
    while (nl := data.find(b"\n", pos)) >= 0:
        number = len(lines) + 1
        ev, reasons, digest = _read_line(data[pos:nl])
        if ev is not None:
            if ev.seq != number - 1:
                reasons.append(f"seq {ev.seq} where {number - 1} belongs")
            if prev is not None and ev.prev != prev:
                reasons.append(f"its prev link does not match the hash of seq {number - 2}" if number > 1
                               else "its prev link is not the genesis hash")
            if ev.hash != digest:
                reasons.append("its hash does not match its content")
        prev = ev.hash if ev is not None else None
        lines.append(_Line(number, pos, nl + 1, ev))
        if reasons:
            seq = ev.seq if ev is not None and ev.seq == number - 1 else number - 1
            start, end = f.base + pos, f.base + nl + 1
            problems.append(Problem(f"{f.name} line {number} (seq {seq}, {frame} {start}-{end - 1})",
                                    "; ".join(reasons), file=f.name, line=number, seq=seq, start=start, end=end))
        pos = nl + 1
    return _Scan(lines, data[pos:], problems)


def _run_reason(last: Event | None, dropped: int = 0) -> tuple[bool, str]:
    """(complete, reason) of a stream whose last event before any seal is ``last``."""
    if last is not None and last.kind == "run.end":
        return True, f"run.end: {last.payload.get('reason', '')}"
    if last is None:
        return False, "no event recorded"
    why = f"no run.end: the stream stops after seq {last.seq} ({last.kind}) at t={last.t:g} s"
    if dropped:
        why += f"; a torn last line of {dropped} bytes was dropped"
    return False, why


# ----------------------------------------------------------------------------- loading


def _check_name(name: str) -> str | None:
    """Why ``name`` cannot be a bundle member path, or None."""
    parts = name.split("/")
    if not name or name.startswith("/") or any(p in ("", ".", "..") for p in parts):
        return "not a plain relative path"
    if "\\" in name or "\0" in name:
        return "holds a backslash or NUL"
    try:
        _split_name(name)
    except UnicodeEncodeError:
        return "not valid UTF-8"
    except ValueError as exc:
        return str(exc)
    return None


def _walk(run_dir: Path) -> tuple[list[str], list[str]]:
    """(every regular file of ``run_dir`` as a sorted POSIX path, what cannot be bundled)."""
    names: list[str] = []
    bad: list[str] = []

    def fail(exc: OSError) -> None:
        bad.append(f"{exc.filename}: cannot be read ({exc.strerror or exc})")

    for root, dirs, files in os.walk(run_dir, onerror=fail):
        here = Path(root)
        for d in list(dirs):
            if (here / d).is_symlink():
                bad.append(f"{here / d}: a symbolic link; a bundle holds regular files only")
                dirs.remove(d)
        for fname in files:
            path = here / fname
            try:
                mode = path.lstat().st_mode
            except OSError as exc:
                bad.append(f"{path}: cannot be read ({exc.strerror or exc})")
                continue
            if not stat.S_ISREG(mode):
                bad.append(f"{path}: not a regular file (a link, socket or device); a bundle holds regular "
                           "files only")
                continue
            rel = path.relative_to(run_dir).as_posix()
            why = _check_name(rel)
            if why:
                bad.append(f"{path}: cannot be a bundle member: {why}")
                continue
            names.append(rel)
    return sorted(names), bad


@dataclass
class _Loaded:
    path: Path
    form: str
    files: dict[str, _File]
    problems: list[Problem]
    size: int
    order: list[str]


def _load(path: Path) -> _Loaded:
    """Read a bundle file or a run directory into memory, with container problems.

    Raises:
        NotARunError: the path does not exist or is neither a file nor a directory.
        BundleError: the path cannot be read.
    """
    if path.is_dir():
        names, bad = _walk(path)
        names = [n for n in names if n not in _JOURNAL_FILES]
        problems = [Problem(b.split(": ", 1)[0], b.split(": ", 1)[1]) for b in bad]
        files: dict[str, _File] = {}
        for name in names:
            try:
                files[name] = _File(name, (path / name).read_bytes())
            except OSError as exc:
                problems.append(Problem(f"file {name}", f"cannot be read ({exc.strerror or exc})", file=name))
        if has_journal(path) and MANIFEST_FILE not in files:  # a live or killed run: read its journal
            try:
                lines, side, _torn = read_journal(path)
            except JournalError as exc:
                problems.append(Problem(f"file {JOURNAL_FILE}", str(exc), file=JOURNAL_FILE))
            else:
                for name, data in {**side, EVENTS_FILE: lines}.items():
                    files[name] = _File(name, data)
                names = sorted(files)
        return _Loaded(path, "run directory", files, problems, sum(len(f.data) for f in files.values()), names)
    if not path.exists():
        raise NotARunError(f"{path}: no such bundle or run directory")
    if not path.is_file():
        raise NotARunError(f"{path}: neither a bundle file nor a run directory")
    try:
        blob = path.read_bytes()
    except OSError as exc:
        raise BundleError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    members, problems = _parse_archive(blob)
    files = {}
    order: list[str] = []
    for i, m in enumerate(members):
        where = f"bundle bytes {m.header}-{m.base + len(m.data) - 1} (member {i + 1}, {m.name!r})"
        why = _check_name(m.name)
        if why:
            problems.append(Problem(where, f"the member path is {why}", file=m.name, start=m.span[0],
                                    end=m.span[1]))
            continue
        if m.name in files:
            problems.append(Problem(where, "a second member with this path", file=m.name, start=m.span[0],
                                    end=m.span[1]))
            continue
        if i == 0 and m.name != MANIFEST_FILE:
            problems.append(Problem(where, f"the first member must be {MANIFEST_FILE}: not a marathon bundle",
                                    file=m.name, start=m.span[0], end=m.span[1]))
        elif i > 0 and (m.name == MANIFEST_FILE or (order and order[-1] != MANIFEST_FILE and m.name < order[-1])):
            problems.append(Problem(where, "out of order: members after manifest.json are sorted by path",
                                    file=m.name, start=m.span[0], end=m.span[1]))
        files[m.name] = m
        order.append(m.name)
    return _Loaded(path, "bundle", files, problems, len(blob), order)


# ----------------------------------------------------------------------------- manifest


def _dump_manifest(manifest: dict[str, Any]) -> bytes:
    return (json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n").encode()


def files_digest(files: dict[str, dict[str, Any]]) -> str:
    """The files digest a seal event carries: sha256 of canonical ``{path: {"sha256", "size"}}``
    over every file but ``events.jsonl`` (module docstring).

    Args:
        files: the manifest's ``files`` table.
    """
    table = {k: {"sha256": v["sha256"], "size": v["size"]} for k, v in files.items() if k != EVENTS_FILE}
    return hashlib.sha256(canonical(table).encode()).hexdigest()


def _manifest_shape(m: Any) -> list[str]:
    """What is wrong with the shape of a parsed manifest (empty when well formed)."""
    if not isinstance(m, dict):
        return ["not a JSON object"]
    out = []
    if not _MANIFEST_KEYS <= set(m) <= _MANIFEST_KEYS | _MANIFEST_OPTIONAL:
        extra, missing = sorted(set(m) - _MANIFEST_KEYS - _MANIFEST_OPTIONAL), sorted(_MANIFEST_KEYS - set(m))
        out.append(f"fields differ from format {FORMAT_VERSION}" + (f"; unknown {extra}" if extra else "")
                   + (f"; missing {missing}" if missing else ""))
        return out
    if m["format"] != FORMAT_NAME:
        out.append(f"format is {m['format']!r}, not {FORMAT_NAME!r}")
    if m["version"] not in READ_VERSIONS or type(m["version"]) is not int:
        out.append(f"version {m['version']!r}: this reader knows versions {', '.join(map(str, READ_VERSIONS))}")
    if "signature" in m and m["version"] < 2:
        out.append("a signature needs format version 2")
    typed: tuple[tuple[str, type | tuple[type, ...]], ...] = (
        ("run_id", (str, type(None))), ("events", int), ("head", str), ("complete", bool), ("reason", str),
        ("recovered", bool), ("files_sha256", str), ("files", dict))
    for key, types in typed:
        if not isinstance(m[key], types) or (types is int and isinstance(m[key], bool)):
            out.append(f"{key} has the wrong type")
    if isinstance(m["files"], dict):
        for name, entry in m["files"].items():
            if (not isinstance(entry, dict) or set(entry) != {"sha256", "size"} or not isinstance(entry["sha256"], str)
                    or type(entry["size"]) is not int):
                out.append(f"files[{name!r}] is not {{sha256, size}}")
    return out


# ----------------------------------------------------------------------------- verification


@dataclass
class _Checker:
    """One verification under way: the loaded files, the report it fills, and how it names places.

    Places are bundle byte ranges for a bundle file and byte ranges within the file for a
    run directory (:class:`Problem`).
    """

    loaded: _Loaded
    rep: VerifyReport

    @property
    def bundle(self) -> bool:
        return self.loaded.form == "bundle"

    def span_of(self, f: _File) -> tuple[int, int]:
        return f.span if self.bundle else (0, len(f.data))

    def file_where(self, f: _File) -> str:
        a, b = self.span_of(f)
        return f"{f.name} ({'bundle ' if self.bundle else ''}bytes {a}-{max(a, b - 1)})"

    def add(self, problem: Problem) -> None:
        self.rep.problems.append(problem)

    def at_file(self, f: _File, what: str) -> None:
        """A problem with a whole file, placed at its bytes."""
        a, b = self.span_of(f)
        self.add(Problem(self.file_where(f), what, file=f.name, start=a, end=b))

    def at_line(self, ev_file: _File, ln: _Line, what: str) -> None:
        """A problem with one line of the event stream, placed at its bytes."""
        self.add(Problem(f"{EVENTS_FILE} line {ln.number} (seq {ln.number - 1})", what, file=EVENTS_FILE,
                         line=ln.number, seq=ln.number - 1, start=ev_file.base + ln.start, end=ev_file.base + ln.end))


@dataclass
class _SealSeen:
    """The last line of a sealed stream, which must be the seal event, and where it is."""

    line: _Line | None
    event: Event | None
    """The seal event (None: the last event is not one, or unreadable)."""
    where: str
    span: tuple[int, int]

    @property
    def payload(self) -> dict[str, Any]:
        return dict(self.event.payload) if self.event is not None else {}

    def problem(self, what: str) -> Problem:
        return Problem(self.where, what, file=EVENTS_FILE, line=self.line.number if self.line else None,
                       start=self.span[0], end=self.span[1])


def _run_start(scan: _Scan) -> dict[str, Any] | None:
    """The payload of the stream's first event when it is ``run.start``, else None."""
    first = scan.lines[0].event if scan.lines else None
    return first.payload if first is not None and first.kind == "run.start" else None


def _check_stream(c: _Checker) -> tuple[_File, _Scan] | None:
    """The events chain: every line and link (:func:`_scan_events`), and a first event that is
    ``run.start``. Sets the report's events, head and sealed; None when there is no stream."""
    rep, files = c.rep, c.loaded.files
    ev_file = files.get(EVENTS_FILE)
    if ev_file is None:
        what = f"no {EVENTS_FILE}: " + ("not a marathon bundle" if c.bundle else "not a run directory")
        c.add(Problem(str(c.loaded.path), what, file=EVENTS_FILE))
        rep.sealed = MANIFEST_FILE in files
        return None
    scan = _scan_events(ev_file.data, ev_file, c.bundle)
    rep.problems += scan.problems
    rep.events = len(scan.lines)
    last = scan.last
    rep.head = last.hash if last is not None else GENESIS
    rep.sealed = MANIFEST_FILE in files or (last is not None and last.kind == "seal")
    first = scan.lines[0].event if scan.lines else None
    if first is not None and first.kind != "run.start":
        c.at_line(ev_file, scan.lines[0], f"the first event is {first.kind}, not run.start")
    elif not scan.lines:
        a, b = c.span_of(ev_file)
        c.add(Problem(EVENTS_FILE, "no complete event", file=EVENTS_FILE, start=a, end=max(b, a + 1)))
    return ev_file, scan


def _check_schedule(c: _Checker, scan: _Scan) -> None:
    """``schedule.yaml`` against the ``schedule_sha256`` its ``run.start`` event records."""
    sched = c.loaded.files.get(SCHEDULE_FILE)
    start = _run_start(scan)
    want = start.get("schedule_sha256") if start is not None else None
    if sched is not None and isinstance(want, str) and hashlib.sha256(sched.data).hexdigest() != want:
        c.at_file(sched, "does not match the schedule_sha256 of the run.start event")


def _check_seal_position(c: _Checker, ev_file: _File, scan: _Scan) -> None:
    """A seal event only as the stream's last event."""
    for ln in scan.lines:
        if ln.event is not None and ln.event.kind == "seal" and ln is not scan.lines[-1]:
            c.at_line(ev_file, ln, "a seal event before the end of the stream")


def _note_unsealed(c: _Checker, scan: _Scan) -> None:
    """An unsealed stream: whether the run is complete so far, and a note for a torn last line."""
    c.rep.complete, c.rep.reason = _run_reason(scan.last)
    if scan.tail:
        c.rep.notes.append(f"the last line of {EVENTS_FILE} is torn ({len(scan.tail)} bytes without a newline): "
                           "the run is being written or was killed; `marathon seal --recover` seals the rest")


def _check_seal_event(c: _Checker, ev_file: _File, scan: _Scan) -> _SealSeen:
    """A sealed stream: no torn tail, a last event that is the seal, and a seal payload that
    agrees with the stream (events, complete, format). Sets the report's complete and reason."""
    rep = c.rep
    ev_a, ev_b = c.span_of(ev_file)
    if scan.tail:
        t0 = ev_file.base + len(ev_file.data) - len(scan.tail)
        c.add(Problem(f"{EVENTS_FILE} ({'bundle ' if c.bundle else ''}bytes {t0}-{ev_b - 1})",
                      f"{len(scan.tail)} bytes after the last newline in a sealed stream", file=EVENTS_FILE,
                      start=t0, end=ev_b))
    line = scan.lines[-1] if scan.lines else None
    seen = _SealSeen(line, line.event if line is not None else None,
                     f"{EVENTS_FILE} line {line.number} (seq {line.number - 1})" if line else EVENTS_FILE,
                     (ev_file.base + line.start, ev_file.base + line.end) if line else (ev_a, ev_b))
    if seen.event is None or seen.event.kind != "seal":
        kind = seen.event.kind if seen.event is not None else "unreadable"
        c.add(seen.problem(f"the last event is {kind}, not the seal event"))
        seen.event = None
    before = scan.lines[-2].event if len(scan.lines) >= 2 else None
    rep.complete, rep.reason = _run_reason(before)
    if seen.event is not None:
        sp = seen.payload
        rep.reason = str(sp.get("reason", rep.reason))
        facts = {"events": rep.events, "complete": rep.complete, "format": FORMAT_VERSION}
        for key, value in facts.items():
            if sp.get(key) != value or type(sp.get(key)) is not type(value):
                c.add(seen.problem(f"the seal event says {key}={sp.get(key)!r}; the stream has {value!r}"))
    return seen


def _read_manifest(c: _Checker) -> tuple[_File, dict[str, Any]] | None:
    """``manifest.json``: present, JSON, and of the format's shape; None (every other file
    then reported as unchecked) when it cannot be used."""
    files = c.loaded.files
    man_file = files.get(MANIFEST_FILE)
    if man_file is None:
        c.add(Problem(str(c.loaded.path), f"sealed, but {MANIFEST_FILE} is missing", file=MANIFEST_FILE))
        return None
    try:
        manifest: Any = json.loads(man_file.data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        c.at_file(man_file, f"not readable JSON ({exc})")
        manifest = None
    shape = _manifest_shape(manifest) if manifest is not None else ["unreadable"]
    if manifest is not None:
        for s in shape:
            c.at_file(man_file, s)
    if shape:
        for name, f in files.items():  # without a manifest, only the chain vouches for anything
            if name not in (MANIFEST_FILE, EVENTS_FILE):
                c.at_file(f, "cannot be checked: the manifest is unreadable")
        return None
    return man_file, manifest


def _check_manifest(c: _Checker, man_file: _File, manifest: dict[str, Any], scan: _Scan, seal: _SealSeen) -> None:
    """The manifest's own form and digest, and its fields against the stream and the seal event.
    Sets the report's file count."""
    try:
        if _dump_manifest(manifest) != man_file.data:
            c.at_file(man_file, "not in the canonical form the sealer writes (sorted keys, 2-space indent)")
    except ValueError as exc:
        c.at_file(man_file, f"not canonical JSON ({exc})")
    listed: dict[str, dict[str, Any]] = manifest["files"]
    c.rep.files = len(listed)
    if files_digest(listed) != manifest["files_sha256"]:
        c.at_file(man_file, "files_sha256 does not match the digest of its own file table")
    start = _run_start(scan)
    run_id = start.get("run_id") if start is not None else None
    checks: list[tuple[str, Any, Any, str]] = [
        ("events", manifest["events"], c.rep.events, "the event stream holds"),
        ("head", manifest["head"], c.rep.head, "the last event's hash is"),
        ("run_id", manifest["run_id"], run_id, "the run.start event has"),
    ]
    if seal.event is not None:
        sp = seal.payload
        checks += [(k, manifest[k], sp.get(k), "the seal event has") for k in ("complete", "reason", "recovered")]
        checks.append(("files_sha256", manifest["files_sha256"], sp.get("sha256"), "the seal event has"))
        checks.append(("files (count)", len(listed), sp.get("files"), "the seal event has"))
    for key, got, want, source in checks:
        if got != want or type(got) is not type(want):
            c.at_file(man_file, f"{key} is {got!r}; {source} {want!r}")


def _check_signature(c: _Checker, man_file: _File, manifest: dict[str, Any]) -> None:
    """A manifest ``signature``, when present, is a valid one over the head; sets the report's signer."""
    if "signature" not in manifest:
        return
    from engine.bundle.keys import check_signature

    why = check_signature(manifest["signature"], manifest["head"])
    if why:
        c.at_file(man_file, why)
    else:
        c.rep.signer = manifest["signature"]["public_key"]


def _check_files(c: _Checker, man_file: _File, manifest: dict[str, Any], seal: _SealSeen) -> None:
    """Every file against its manifest entry: none missing, none added, digests and sizes equal."""
    files = c.loaded.files
    listed: dict[str, dict[str, Any]] = manifest["files"]
    # The stream vouches for itself: a chain that holds up to a seal event whose hash is the
    # manifest's head is the sealed stream, so a digest mismatch for it is the manifest's fault.
    stream_vouched = (seal.event is not None and manifest["head"] == c.rep.head
                      and not any(p.file == EVENTS_FILE for p in c.rep.problems))
    for name in sorted(set(listed) | set(files)):
        if name == MANIFEST_FILE:
            continue
        member = files.get(name)
        entry = listed.get(name)
        if member is None:
            c.add(Problem(f"file {name}", "listed in the manifest but missing", file=name))
            continue
        if entry is None:
            c.at_file(member, "not in the manifest (added after sealing)")
            continue
        digest = hashlib.sha256(member.data).hexdigest()
        if name == EVENTS_FILE and stream_vouched and (digest, len(member.data)) != (entry["sha256"], entry["size"]):
            c.at_file(man_file, f"the files entry for {EVENTS_FILE} does not match the stream, whose hash chain and "
                                f"seal event verify ({len(member.data)} bytes, sha256 {digest[:12]}...)")
        elif digest != entry["sha256"] or len(member.data) != entry["size"]:
            c.at_file(member, f"differs from the manifest ({len(member.data)} bytes, sha256 {digest[:12]}...; "
                              f"sealed: {entry['size']} bytes, {str(entry['sha256'])[:12]}...)")


def _check(loaded: _Loaded, keep: bool = False) -> VerifyReport:
    """Every content check (module docstring) on loaded files, in order; container problems come first.

    The stream first (chain, ``run.start``, the schedule's digest, where seal events stand);
    an unsealed stream stops there. A sealed one adds the seal event, the manifest, its
    signature and the files it lists, each check skipped when what it compares against is
    missing or unreadable.
    """
    c = _Checker(loaded, VerifyReport(loaded.path, loaded.form, size=loaded.size, problems=list(loaded.problems)))
    c.rep.files = len([n for n in loaded.files if n != MANIFEST_FILE])
    stream = _check_stream(c)
    if keep:
        c.rep._read = (loaded, stream[1] if stream is not None else None)
    if stream is None:
        return c.rep
    ev_file, scan = stream
    _check_schedule(c, scan)
    _check_seal_position(c, ev_file, scan)
    if not c.rep.sealed:
        _note_unsealed(c, scan)
        return c.rep
    seal = _check_seal_event(c, ev_file, scan)
    read = _read_manifest(c)
    if read is None:
        return c.rep
    man_file, manifest = read
    _check_manifest(c, man_file, manifest, scan, seal)
    _check_signature(c, man_file, manifest)
    _check_files(c, man_file, manifest, seal)
    return c.rep


def verify(path: str | Path, *, keep: bool = False) -> VerifyReport:
    """Verify a bundle file, a sealed run directory or an unsealed one.

    Args:
        path: the bundle (``*.marathon``) or run directory.
        keep: keep the files read and the parsed events in the report, for
            ``open_bundle(path, report=...)`` to reuse (the report then holds the whole run in
            memory: drop it once the bundle is open).

    Returns:
        The report: sealed or not, complete or truncated, and every problem with its place
        (see :class:`Problem`). A file that is not a bundle at all, or a directory that is not a
        run, gives a report with a problem saying so.

    Raises:
        NotARunError: the path does not exist.
        BundleError: the path cannot be read.
    """
    return _check(_load(Path(path)), keep)


# ----------------------------------------------------------------------------- reading


class Bundle:
    """Read access to a bundle file, a sealed run directory or an unsealed one.

    Opening checks the container, not the contents: call :func:`verify` (or open with
    ``check=True``) before trusting a bundle. Ground-truth events are included; code that
    serves an operator must never hand it a :class:`Bundle`.
    """

    def __init__(self, loaded: _Loaded, scan: _Scan | None = None) -> None:
        self._loaded = loaded
        self._prescan = scan
        self.path = loaded.path
        self.form = loaded.form

    def names(self) -> list[str]:
        """Every file of the run, ``manifest.json`` included when sealed, as POSIX paths."""
        return sorted(self._loaded.files)

    def read_bytes(self, name: str) -> bytes:
        """The bytes of one file.

        Raises:
            BundleError: no such file in the run.
        """
        f = self._loaded.files.get(name)
        if f is None:
            raise BundleError(f"{self.path}: holds no file {name!r}")
        return f.data

    def read_text(self, name: str) -> str:
        """One file as UTF-8 text.

        Raises:
            BundleError: no such file, or not UTF-8.
        """
        try:
            return self.read_bytes(name).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BundleError(f"{self.path}: {name} is not UTF-8 text (byte {exc.start})") from None

    def read_json(self, name: str) -> Any:
        """One file parsed as JSON.

        Raises:
            BundleError: no such file, or not JSON.
        """
        try:
            return json.loads(self.read_text(name))
        except ValueError as exc:
            raise BundleError(f"{self.path}: {name} is not JSON ({exc})") from None

    @functools.cached_property
    def _scan(self) -> _Scan:
        f = self._loaded.files.get(EVENTS_FILE)
        if f is None:
            raise NotARunError(f"{self.path}: holds no {EVENTS_FILE}: not a run")
        scan = self._prescan if self._prescan is not None else _scan_events(f.data, f, self.form == "bundle")
        if scan.problems:
            raise BundleError(f"{self.path}: {scan.problems[0]}")
        bad = [(ln, why) for ln in scan.lines if ln.event is not None
               for why in check_payload_types(ln.event.kind, ln.event.payload)]
        if bad:  # a well-chained stream can still carry what no recorder writes (a hand-edited, resealed run)
            lines = [f"{self.path}: {EVENTS_FILE} line {ln.number} (seq {ln.number - 1}, "
                     f"{ln.event.kind if ln.event else ''}): {why}" for ln, why in bad[:20]]
            more = f"\n  ... and {len(bad) - 20} more" if len(bad) > 20 else ""
            raise BundleError(f"{self.path}: {len(bad)} mistyped event field{'s' if len(bad) > 1 else ''}:\n  "
                              + "\n  ".join(lines) + more)
        return scan

    @property
    def events(self) -> list[Event]:
        """Every event in order (a torn last line of an unsealed directory is left out), seal included.

        Raises:
            BundleError: a line that is not a well-chained event (names the line and seq).
        """
        return self._scan.events

    @property
    def torn_bytes(self) -> int:
        """Bytes after the last complete event line (0 unless an unsealed run was killed mid-write)."""
        return len(self._scan.tail)

    @property
    def head(self) -> str:
        """Hash of the last event (``GENESIS`` when there is none)."""
        return self.events[-1].hash if self.events else GENESIS

    @property
    def sealed(self) -> bool:
        return bool(self.events) and self.events[-1].kind == "seal"

    @property
    def seal_event(self) -> Event | None:
        return self.events[-1] if self.sealed else None

    @property
    def complete(self) -> bool:
        """True when the run reached ``run.end`` (the event before the seal, when sealed)."""
        body = self.events[:-1] if self.sealed else self.events
        return bool(body) and body[-1].kind == "run.end"

    @property
    def meta(self) -> dict[str, Any]:
        """What was run: the ``run.start`` event's payload (run_id, app, seed, regime, operator...).

        Raises:
            BundleError: the stream does not begin with ``run.start``.
        """
        if not self.events or self.events[0].kind != "run.start":
            raise NotARunError(f"{self.path}: the event stream does not begin with run.start")
        return dict(self.events[0].payload)

    @property
    def manifest(self) -> dict[str, Any] | None:
        """The parsed ``manifest.json``, or None when unsealed."""
        if MANIFEST_FILE not in self._loaded.files:
            return None
        data = self.read_json(MANIFEST_FILE)
        if not isinstance(data, dict):
            raise BundleError(f"{self.path}: {MANIFEST_FILE} is not a JSON object")
        return data

    @property
    def schedule_text(self) -> str:
        """The exact schedule replayed (``schedule.yaml``).

        Raises:
            BundleError: the run holds no schedule file.
        """
        return self.read_text(SCHEDULE_FILE)


def open_bundle(path: str | Path, *, check: bool = False, report: VerifyReport | None = None) -> Bundle:
    """Open a bundle file, a sealed run directory or an unsealed (live or killed) one.

    Args:
        path: the bundle or directory.
        check: verify everything first and refuse anything that is not intact.
        report: what ``verify(path, keep=True)`` said of the same ``path`` moments ago: the files it
            read and its scan of the event stream are reused, so verifying and then opening reads,
            parses and hashes every event once (the files are not read again: a caller that
            needs to catch a change between the two calls verifies again).

    Raises:
        NotARunError: no such path, or a file that is not a marathon bundle, or a directory
            without ``events.jsonl``.
        BundleError: a damaged container (truncated, changed headers), or with ``check``,
            anything :func:`verify` reports (the first problem, with its place).
    """
    read = report._read if report is not None and report.path == Path(path) else None
    loaded, scan = read if read is not None else (_load(Path(path)), None)
    if loaded.form == "bundle" and (not loaded.order or loaded.order[0] != MANIFEST_FILE):
        first = loaded.problems[0] if loaded.problems else "its first member is not manifest.json"
        raise NotARunError(f"{path}: not a marathon bundle ({first})")
    if EVENTS_FILE not in loaded.files:
        kind = "marathon bundle" if loaded.form == "bundle" else "run directory"
        raise NotARunError(f"{path}: not a {kind}: no {EVENTS_FILE}")
    if check:
        rep = report if read is not None and report is not None else _check(loaded)
        if rep.problems:
            raise BundleError(f"{path}: not intact ({len(rep.problems)} problems; first: {rep.problems[0]})")
        scan = rep._read[1] if rep._read is not None else None
    elif loaded.problems:
        raise BundleError(f"{path}: damaged bundle: {loaded.problems[0]}")
    return Bundle(loaded, scan)


# ----------------------------------------------------------------------------- sealing


def bundle_path(run_dir: str | Path) -> Path:
    """Where :func:`seal` writes the bundle of ``run_dir``: ``<run_dir>.marathon`` beside it."""
    d = Path(run_dir).resolve()
    return d.parent / (d.name + BUNDLE_SUFFIX)


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):  # not every filesystem lets a directory be opened
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def _exclusive(path: Path) -> Iterator[BinaryIO]:
    """Create ``path`` exclusively for writing; remove it unless the block succeeds."""
    try:
        fh = path.open("xb")
    except FileExistsError:
        raise BundleError(f"{path} exists: another seal is running or one was interrupted; remove it and "
                          "seal again") from None
    ok = False
    try:
        with fh:
            yield fh
        ok = True
    finally:
        if not ok:
            with contextlib.suppress(OSError):
                path.unlink()


def seal(run_dir: str | Path, *, recover: bool = False, out: str | Path | None = None,
         inputs: SealInputs | None = None, sign: bool = True) -> Path:
    """Close a run directory into one bundle file (module docstring: sealing, format).

    The directory is changed too: a ``seal`` event is appended to ``events.jsonl`` and
    ``manifest.json`` written, so the directory itself becomes a sealed run directory with
    the same contents as the bundle.

    Args:
        run_dir: the run directory (``events.jsonl``, ``schedule.yaml``, ``run.json``, ...).
        recover: seal a run that stopped before ``run.end`` (killed, interrupted): drop a
            torn last line, keep every complete event, mark the bundle incomplete with the
            reason. The caller makes sure the run's process has stopped.
        out: the bundle path (default :func:`bundle_path`); must not be inside ``run_dir``.
        inputs: called as ``inputs(run_dir, events)`` before the files are read, to add the
            inputs a score depends on that a live run keeps hidden (:data:`SealInputs`; None:
            the directory is sealed as it is). A recorded run is sealed through the run side's
            ``seal_run`` (``engine/run/sealinputs.py``), which passes the catalog entries and the
            no-op counterfactual (re-running the schedule without an operator, seconds to a few
            tens of seconds).
        sign: sign the head with the sealing key when ``marathon keys init`` made one
            (:mod:`engine.bundle.keys`).

    A run recorded into the encrypted journal (:mod:`engine.bundle.journal`) is decrypted first into
    ``events.jsonl`` and ``schedule.yaml``; the journal and its key are deleted once the
    bundle is written. Bytes of a torn last journal record count as dropped bytes.

    Returns:
        The bundle path.

    Raises:
        NotARunError: not a directory, no ``events.jsonl``, no complete event, or a stream
            that does not begin with ``run.start``.
        BundleError: already sealed; a broken chain (the first bad event: file, line, seq; even
            with ``recover``); a torn last line or no ``run.end`` without ``recover``; a file
            that cannot be bundled (symbolic link, path too long); the bundle file exists; the
            stream grew while sealing (the run is still going); or a write failed.
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise NotARunError(f"{run_dir}: not a run directory" + ("" if run_dir.exists() else " (no such path)"))
    events_path = run_dir / EVENTS_FILE
    target = Path(out) if out is not None else bundle_path(run_dir)
    known = f"; its bundle is {bundle_path(run_dir)}" if bundle_path(run_dir).exists() else ""
    if (run_dir / MANIFEST_FILE).exists():
        raise BundleError(f"{run_dir} is already sealed ({MANIFEST_FILE} present){known}")
    journal_bytes = journal_size(run_dir)
    journal_torn = 0
    if has_journal(run_dir):
        try:
            journal_torn = materialize(run_dir)
        except (JournalError, OSError) as exc:
            raise BundleError(f"{run_dir}: cannot decrypt the run's journal: {exc}") from None
    if not events_path.is_file():
        raise NotARunError(f"{run_dir} is not a run directory: it has no {EVENTS_FILE}")
    try:
        data = events_path.read_bytes()
    except OSError as exc:
        raise BundleError(f"{events_path}: cannot be read ({exc.strerror or exc})") from None
    scan = _scan_events(data, _File(EVENTS_FILE, data), bundle=False)
    sealed_at = [ln for ln in scan.lines if ln.event is not None and ln.event.kind == "seal"]
    if sealed_at:
        raise BundleError(f"{run_dir} is already sealed: {EVENTS_FILE} line {sealed_at[0].number} is a seal event"
                          f"{known}")
    if scan.problems:
        p = scan.problems[0]
        raise BundleError(f"{events_path}:{p.line}: the event chain is broken at seq {p.seq}: {p.what}. Refusing to "
                          "seal" + ("; --recover drops only a torn last line and never repairs a broken chain"
                                    if recover else ""))
    if scan.tail and not recover:
        raise BundleError(f"{events_path}: the last line is torn ({len(scan.tail)} bytes without a newline): the run "
                          "was killed mid-write; seal it with --recover to keep every complete event")
    events = scan.events
    if not events:
        raise NotARunError(f"{events_path}: no complete event; nothing to seal")
    if events[0].kind != "run.start":
        raise NotARunError(f"{events_path}:1: the first event is {events[0].kind}, not run.start: not a run")
    last = events[-1]
    complete, reason = _run_reason(last, len(scan.tail) + journal_torn)
    if not complete and not recover:
        raise BundleError(f"{run_dir}: the run is not complete ({reason}); if its process has stopped, seal it with "
                          "--recover to mark the bundle incomplete")
    if target.exists():
        raise BundleError(f"{target} already exists; refusing to overwrite a bundle")
    if target.resolve().is_relative_to(run_dir.resolve()):
        raise BundleError(f"{target}: the bundle cannot be written inside the run directory {run_dir}")

    if inputs is not None:
        inputs(run_dir, events)
    names, bad = _walk(run_dir)
    names = [n for n in names if n not in _JOURNAL_FILES]
    if bad:
        raise BundleError(f"{run_dir}: cannot seal: {bad[0]}" + (f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""))
    contents: dict[str, bytes] = {}
    for name in names:
        if name != EVENTS_FILE:
            try:
                contents[name] = (run_dir / name).read_bytes()
            except OSError as exc:
                raise BundleError(f"{run_dir / name}: cannot be read ({exc.strerror or exc})") from None
    table = {n: {"sha256": hashlib.sha256(b).hexdigest(), "size": len(b)} for n, b in contents.items()}
    digest = files_digest(table)
    payload: dict[str, Any] = {"events": len(events) + 1, "sha256": digest, "files": len(table) + 1,
                               "complete": complete, "reason": reason, "recovered": recover,
                               "dropped_bytes": len(scan.tail) + journal_torn, "format": FORMAT_VERSION}
    check_payload("seal", payload)
    payload = json.loads(canonical(payload))
    seq = len(events)
    seal_ev = Event(seq, last.t, "seal", payload, last.hash, Event.digest(last.hash, seq, last.t, "seal", payload))
    seal_line = (seal_ev.to_json() + "\n").encode()
    kept = len(data) - len(scan.tail)
    contents[EVENTS_FILE] = data[:kept] + seal_line
    table[EVENTS_FILE] = {"sha256": hashlib.sha256(contents[EVENTS_FILE]).hexdigest(),
                          "size": len(contents[EVENTS_FILE])}
    run_id = events[0].payload.get("run_id")
    manifest = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "run_id": run_id if isinstance(run_id, str) else None,
                "events": seq + 1, "head": seal_ev.hash, "complete": complete, "reason": reason,
                "recovered": recover, "files_sha256": digest, "files": table}
    if sign:
        from engine.bundle.keys import SigningKeyError, load_private, sign_head

        try:
            key = load_private()
        except SigningKeyError as exc:
            raise BundleError(f"cannot sign {run_dir}: {exc}") from None
        if key is not None:
            manifest["signature"] = sign_head(key, seal_ev.hash)
    manifest_bytes = _dump_manifest(manifest)
    for name in contents:
        try:
            _header(name, len(contents[name]))
        except ValueError as exc:
            raise BundleError(f"{run_dir / name}: cannot be bundled: {exc}") from None

    tmp = target.with_name(target.name + ".tmp")
    try:
        with _exclusive(tmp) as fh:
            _write_archive(fh, [(MANIFEST_FILE, manifest_bytes)] + [(n, contents[n]) for n in sorted(contents)])
            fh.flush()
            os.fsync(fh.fileno())
            # The directory is sealed only once the bundle is safely written; the stream must not
            # have grown meanwhile (a run still going would append after the seal event).
            with events_path.open("r+b") as ev_fh:
                if os.fstat(ev_fh.fileno()).st_size != len(data) or journal_size(run_dir) != journal_bytes:
                    raise BundleError(f"{events_path} grew while sealing: is the run still going? Nothing was "
                                      "sealed")
                ev_fh.truncate(kept)
                ev_fh.seek(kept)
                ev_fh.write(seal_line)
                ev_fh.flush()
                os.fsync(ev_fh.fileno())
            man_tmp = run_dir / f".{MANIFEST_FILE}.tmp"
            man_tmp.write_bytes(manifest_bytes)
            os.replace(man_tmp, run_dir / MANIFEST_FILE)
        os.replace(tmp, target)
        discard(run_dir)
    except OSError as exc:
        raise BundleError(f"cannot seal {run_dir} into {target}: {exc.strerror or exc} "
                          f"({exc.filename or ''})") from None
    _fsync_dir(run_dir)
    _fsync_dir(target.parent)
    return target
