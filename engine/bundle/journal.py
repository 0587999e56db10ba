"""The encrypted journal: a live run's events and ground truth, unreadable until the seal.

While a run is live its directory must not show the answer key: the schedule names every
fault, its target and its time, and the event stream carries ``fault.inject``,
``fault.revert``, ``probe.result`` and ``repair.check`` events. So a recorded run writes
them into ``journal.enc``, encrypted with a key that lives outside the run directory, and
the seal decrypts them into the bundle (:func:`materialize` and :func:`discard`, called
by :func:`engine.bundle.format.seal`). A run killed with ``kill -9`` keeps every record flushed
before the kill: ``marathon seal --recover`` decrypts them with the same key.

Files:

* ``<run_dir>/journal.json``: ``{"format": "sre-marathon-journal", "version": 1,
  "cipher": "AES-256-GCM", "key_id": <32 hex>}`` (no secret);
* ``<run_dir>/journal.enc``: a sequence of records, each ``4-byte big-endian length`` +
  ``12-byte nonce`` + ciphertext-and-tag. The plaintext of a record is one type byte, the
  4-byte big-endian length of its data, the data -- ``E`` + complete event lines (canonical
  JSON, ``\\n``-terminated), or ``F`` + a file name (UTF-8) + ``\\0`` + the file's bytes (the
  schedule) -- and zero padding to a multiple of :data:`PAD_BYTES`, so a record's size does
  not tell how many probe results or injections it holds (a review measured the live-fault
  count from unpadded sizes). The associated data of
  record *i* is ``key_id`` + *i* as 8 bytes, so records cannot be dropped, reordered or
  moved between journals without the tag failing;
* the key: ``<state dir>/keys/journal-<key_id>.key``, 32 random bytes, mode 0600 in a 0700
  directory. The state directory is ``$SRE_MARATHON_STATE``, else
  ``$XDG_STATE_HOME/sre-marathon``, else ``~/.local/state/sre-marathon``. The seal deletes
  the journal and then the key.

Trust model: this keeps the answers from anyone who can read the run directory but not
the user's state directory -- a player with a second terminal in the run directory, an
agent whose shell or file tools are confined to its workspace or the run directory, a
co-worker browsing a shared ``runs/`` folder. It does not protect against the same OS user
with a shell (they can read the key file), against root, or against reading the
process's memory. Run an external agent as another OS user, or in a sandbox that does not
mount the state directory, to keep the key from it.
"""

from __future__ import annotations

import json
import os
import secrets
import struct
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

JOURNAL_FILE = "journal.enc"
JOURNAL_HEADER = "journal.json"
FORMAT = "sre-marathon-journal"
VERSION = 1
_NONCE = 12
_LEN = struct.Struct(">I")
PAD_BYTES = 16 * 1024
"""Record plaintexts are padded to a multiple of this. A 1x wall-clock run flushes about one
record per 15 s evaluation (2-4 KiB of events), so each record is one padded block."""


class JournalError(ValueError):
    """A journal that cannot be read: no key, a damaged record, a malformed header."""


def state_dir() -> Path:
    """The user's state directory for keys (module docstring)."""
    env = os.environ.get("SRE_MARATHON_STATE")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_STATE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "state") / "sre-marathon"


def _key_path(key_id: str) -> Path:
    return state_dir() / "keys" / f"journal-{key_id}.key"


def _private_dir(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)


def has_journal(run_dir: str | Path) -> bool:
    """Whether ``run_dir`` holds an encrypted journal (a live or killed hidden run)."""
    return (Path(run_dir) / JOURNAL_HEADER).is_file()


class JournalWriter:
    """Appends encrypted records to ``<run_dir>/journal.enc`` (module docstring).

    Args:
        run_dir: the run directory (created if missing).

    Raises:
        FileExistsError: the directory already holds a journal.
        OSError: the key or the journal cannot be written.
    """

    def __init__(self, run_dir: str | Path) -> None:
        self.dir = Path(run_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        if (self.dir / JOURNAL_HEADER).exists() or (self.dir / JOURNAL_FILE).exists():
            raise FileExistsError(f"{self.dir} already holds a journal; choose another --run-dir")
        self.key_id = secrets.token_hex(16)
        key = AESGCM.generate_key(bit_length=256)
        path = _key_path(self.key_id)
        _private_dir(path.parent.parent)
        _private_dir(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(key)
        self._aead = AESGCM(key)
        header = {"format": FORMAT, "version": VERSION, "cipher": "AES-256-GCM", "key_id": self.key_id}
        (self.dir / JOURNAL_HEADER).write_text(json.dumps(header, sort_keys=True) + "\n", encoding="utf-8")
        self._fh = (self.dir / JOURNAL_FILE).open("ab")
        self._index = 0

    def _append(self, plain: bytes) -> None:
        body = plain[:1] + _LEN.pack(len(plain) - 1) + plain[1:]
        plain = body + bytes(-len(body) % PAD_BYTES)
        nonce = os.urandom(_NONCE)
        sealed = nonce + self._aead.encrypt(nonce, plain, self.key_id.encode() + self._index.to_bytes(8, "big"))
        self._fh.write(_LEN.pack(len(sealed)) + sealed)
        self._index += 1

    def events(self, lines: bytes) -> None:
        """Append complete event lines."""
        if lines:
            self._append(b"E" + lines)

    def file(self, name: str, data: bytes) -> None:
        """Append a whole side file (it replaces an earlier record of the same name)."""
        self._append(b"F" + name.encode() + b"\0" + data)

    def flush(self) -> None:
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        if not self._fh.closed:
            self.flush()
            self._fh.close()


def _unpad(plain: bytes) -> tuple[bytes, bytes]:
    """(type byte, data) of a decrypted record."""
    (size,) = _LEN.unpack_from(plain, 1)
    return plain[:1], plain[1 + _LEN.size:1 + _LEN.size + size]


def read_journal(run_dir: str | Path) -> tuple[bytes, dict[str, bytes], int]:
    """Decrypt a journal: (the event lines, the side files, torn bytes dropped at the end).

    A last record cut short (the process was killed mid-write) is dropped and counted.

    Raises:
        JournalError: malformed header, no key on this machine, or a record whose tag fails
            (damaged, reordered or from another journal): names the record and its offset.
    """
    run_dir = Path(run_dir)
    header_path = run_dir / JOURNAL_HEADER
    try:
        header = json.loads(header_path.read_text(encoding="utf-8"))
        key_id = str(header["key_id"])
        if header.get("format") != FORMAT or header.get("version") != VERSION or len(key_id) != 32:
            raise ValueError("not a version-1 journal header")
        int(key_id, 16)
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise JournalError(f"{header_path}: unreadable journal header ({exc})") from None
    try:
        key = _key_path(key_id).read_bytes()
    except OSError:
        raise JournalError(f"{run_dir}: the journal's key {_key_path(key_id)} is not on this machine; the run can "
                           "only be sealed where it was recorded, by the user who recorded it") from None
    aead = AESGCM(key)
    try:
        blob = (run_dir / JOURNAL_FILE).read_bytes()
    except FileNotFoundError:
        blob = b""
    except OSError as exc:
        raise JournalError(f"{run_dir / JOURNAL_FILE}: cannot be read ({exc.strerror or exc})") from None
    events: list[bytes] = []
    files: dict[str, bytes] = {}
    pos = index = 0
    while pos < len(blob):
        if pos + _LEN.size > len(blob):
            break
        (size,) = _LEN.unpack_from(blob, pos)
        if size < _NONCE + 16 or pos + _LEN.size + size > len(blob):
            break  # torn
        rec = blob[pos + _LEN.size:pos + _LEN.size + size]
        try:
            plain = aead.decrypt(rec[:_NONCE], rec[_NONCE:], key_id.encode() + index.to_bytes(8, "big"))
        except InvalidTag:
            end = pos + _LEN.size + size - 1
            raise JournalError(f"{run_dir / JOURNAL_FILE}: record {index + 1} (bytes {pos}-{end}) fails its "
                               "authentication tag: the journal was changed") from None
        kind, data = _unpad(plain)
        if kind == b"E":
            events.append(data)
        elif kind == b"F":
            name, _, body = data.partition(b"\0")
            files[name.decode()] = body
        pos += _LEN.size + size
        index += 1
    return b"".join(events), files, len(blob) - pos


class JournalTail:
    """Reads the event lines another process appends to a journal, record by record
    (``marathon watch --follow`` of a hidden run; the follower is the same user, with the key).

    Raises (from :meth:`poll`):
        JournalError: see :func:`read_journal`.
    """

    def __init__(self, run_dir: str | Path) -> None:
        self.dir = Path(run_dir)
        self._aead: AESGCM | None = None
        self._key_id = ""
        self._offset = 0
        self._index = 0

    def poll(self) -> bytes:
        """The complete event lines of the records written since the last poll."""
        if self._aead is None:
            if not has_journal(self.dir):
                return b""
            try:
                header = json.loads((self.dir / JOURNAL_HEADER).read_text(encoding="utf-8"))
                self._key_id = str(header["key_id"])
                self._aead = AESGCM(_key_path(self._key_id).read_bytes())
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise JournalError(f"{self.dir}: cannot open the journal to follow it ({exc})") from None
        try:
            with (self.dir / JOURNAL_FILE).open("rb") as fh:
                fh.seek(self._offset)
                blob = fh.read()
        except FileNotFoundError:
            return b""
        out: list[bytes] = []
        pos = 0
        while pos + _LEN.size <= len(blob):
            (size,) = _LEN.unpack_from(blob, pos)
            if pos + _LEN.size + size > len(blob):
                break  # still being written
            rec = blob[pos + _LEN.size:pos + _LEN.size + size]
            try:
                plain = self._aead.decrypt(rec[:_NONCE], rec[_NONCE:],
                                           self._key_id.encode() + self._index.to_bytes(8, "big"))
            except InvalidTag:
                raise JournalError(f"{self.dir / JOURNAL_FILE}: record {self._index + 1} fails its authentication "
                                   "tag") from None
            kind, data = _unpad(plain)
            if kind == b"E":
                out.append(data)
            pos += _LEN.size + size
            self._index += 1
        self._offset += pos
        return b"".join(out)


def materialize(run_dir: str | Path) -> int:
    """Decrypt a journal into ``events.jsonl`` and its side files (replacing them); the journal
    stays until :func:`discard`. Returns the torn bytes dropped. A directory without a journal
    is left alone (0).

    Raises:
        JournalError: see :func:`read_journal`.
        OSError: a write failed (the journal is kept; nothing is lost).
    """
    run_dir = Path(run_dir)
    if not has_journal(run_dir):
        return 0
    events, files, torn = read_journal(run_dir)
    for name, data in sorted(files.items()):
        tmp = run_dir / f".{name}.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, run_dir / name)
    tmp = run_dir / ".events.jsonl.tmp"
    tmp.write_bytes(events)
    os.replace(tmp, run_dir / "events.jsonl")
    return torn


def journal_size(run_dir: str | Path) -> int:
    """Bytes in ``journal.enc`` (0 when there is none)."""
    try:
        return (Path(run_dir) / JOURNAL_FILE).stat().st_size
    except OSError:
        return 0


def discard(run_dir: str | Path) -> None:
    """Delete a journal and its key, once its contents are sealed (idempotent)."""
    run_dir = Path(run_dir)
    header = run_dir / JOURNAL_HEADER
    try:
        key_id = str(json.loads(header.read_text(encoding="utf-8"))["key_id"])
    except (OSError, ValueError, KeyError, TypeError):
        key_id = ""
    (run_dir / JOURNAL_FILE).unlink(missing_ok=True)
    header.unlink(missing_ok=True)
    if len(key_id) == 32 and all(c in "0123456789abcdef" for c in key_id):
        _key_path(key_id).unlink(missing_ok=True)
