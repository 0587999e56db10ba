"""Bounding and checking operator tool arguments before any tool sees them.

An operator's arguments arrive from a model, a harness or a person and may be anything:
NaN, 10 MB strings, lone surrogates, deeply nested lists, dictionaries with integer keys.
:func:`bound_arguments` turns any value into a *recorded form* that is plain, bounded,
canonical JSON (:func:`engine.bundle.events.canonical` never fails on it) and lists the
*problems* that reject the call before the tool's pydantic model is consulted.

Caps (bytes are UTF-8 bytes):

==============================  ==========================================================
any string argument             :data:`MAX_STRING_BYTES` (64 KiB)
``deploy_patch.diff``           :data:`MAX_DIFF_BYTES` (1 MiB)
``workspace_write.text``        :data:`MAX_WORKSPACE_TEXT_BYTES` (256 KiB: notes, not dumps)
all arguments of one call       :data:`MAX_ARGS_BYTES` (1 MiB + 64 KiB), :data:`MAX_VALUES` values
nesting                         :data:`MAX_DEPTH` levels of lists/objects
one object / one list           :data:`MAX_KEYS` keys (each at most :data:`MAX_KEY_BYTES`) /
                                :data:`MAX_ITEMS` items
integers                        ``|n| <= 2**63 - 1``; floats must be finite
==============================  ==========================================================

Strings may not hold lone surrogates (not representable in UTF-8) nor control characters;
free text (:data:`FREE_TEXT`: a patch, a note, an RCA summary) may hold ``\\n``, ``\\t``
and ``\\r``. Object keys must be strings.

**Markers.** A value that is over a cap or not representable in canonical JSON is recorded
as ``{"$unrecorded": {"sha256", "bytes", "preview", "problem"}}``: the SHA-256 of its
serialization (a string's UTF-8 bytes), that serialization's size in bytes, its first
:data:`PREVIEW_CHARS` characters made printable, and why it was rejected. A marker given as
an argument is rejected with its own ``problem``, so an operator gains nothing by sending
one.

**Replay contract.** ``bound_arguments`` is idempotent on its recorded form: bounding the
recorded form again yields the same recorded form and the same problems. Objects come out
with sorted keys (the order canonical JSON records), so the problems and the pydantic errors
do not depend on the order the operator wrote its keys in. Arguments that are not an object
(a list, a number, JSON text that does not parse) are recorded as ``{"$arguments": value}``
and that form, given back, is read as the bare value: ``tool.call`` always records an
object.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import reprlib
from typing import Any

MAX_STRING_BYTES = 64 * 1024
MAX_DIFF_BYTES = 1024 * 1024
MAX_WORKSPACE_TEXT_BYTES = 256 * 1024
MAX_ARGS_BYTES = MAX_DIFF_BYTES + MAX_STRING_BYTES
MAX_VALUES = 10_000
MAX_DEPTH = 6
MAX_KEYS = 64
MAX_KEY_BYTES = 256
MAX_ITEMS = 500
"""Matches the largest ``limit`` a read tool takes (``get_alerts``)."""
MAX_INT = 2**63 - 1
MAX_TOKENS = 100_000_000
"""Largest token count one call may claim; more is recorded as this many."""
MAX_TOOL_NAME_CHARS = 100
PREVIEW_CHARS = 200
MAX_PROBLEM_CHARS = 300
MAX_PROBLEMS_SHOWN = 8
MAX_ERROR_CHARS = 2000
MARKER_KEY = "$unrecorded"
NON_OBJECT_KEY = "$arguments"

FIELD_CAPS: dict[tuple[str, str], int] = {
    ("deploy_patch", "diff"): MAX_DIFF_BYTES,
    ("workspace_write", "text"): MAX_WORKSPACE_TEXT_BYTES,
}
"""Per-argument string caps above the default :data:`MAX_STRING_BYTES`."""
FREE_TEXT = frozenset({("deploy_patch", "diff"), ("workspace_write", "text"), ("report_rca", "summary")})
"""Arguments where ``\\n``, ``\\t`` and ``\\r`` are allowed."""

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL_STRICT = re.compile("[\x00-\x1f\x7f-\x9f]")
_CONTROL_FREE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_SHA256 = re.compile("[0-9a-f]{64}")
_MARKER_FIELDS = frozenset({"sha256", "bytes", "preview", "problem"})
_MAX_PREVIEW_FIELD = 6 * PREVIEW_CHARS
_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxstring, _REPR.maxother, _REPR.maxlong = 3, PREVIEW_CHARS, 60, 60
_MARKER_BYTES = 420
"""What a marker adds to the recorded size (about its canonical JSON length)."""


def printable(text: str) -> str:
    """``text`` with control characters and lone surrogates as ``\\uXXXX`` escapes."""
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def utf8_len(text: str) -> int:
    """UTF-8 length in bytes (a lone surrogate counts its 3 bytes)."""
    return len(text.encode("utf-8", "surrogatepass"))


def _serialized(value: Any) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, int) and not isinstance(value, bool):
        return value.to_bytes((value.bit_length() + 8) // 8, "big", signed=True)
    try:
        return json.dumps(value, ensure_ascii=True, allow_nan=True, default=repr).encode()
    except (TypeError, ValueError, RecursionError):  # non-string keys of odd types, cycles, huge ints, depth
        return _bounded_repr(value).encode("utf-8", "surrogatepass")


def _bounded_repr(value: Any) -> str:
    try:
        return _REPR.repr(value)
    except (ValueError, RecursionError):  # an integer too long to print
        return f"<{type(value).__name__}>"


def marker(value: Any, problem: str) -> dict[str, Any]:
    """The recorded stand-in for a rejected ``value`` (module docstring)."""
    data = _serialized(value)
    if isinstance(value, str):
        preview = value[:PREVIEW_CHARS]
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
        preview = f"<integer of {value.bit_length()} bits>"
    else:
        preview = _bounded_repr(value)[:PREVIEW_CHARS]
    return {MARKER_KEY: {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data),
                         "preview": printable(preview), "problem": printable(problem)[:MAX_PROBLEM_CHARS]}}


def is_marker(value: Any) -> bool:
    """Whether ``value`` is a well-formed marker (one :func:`marker` could have made)."""
    if not (isinstance(value, dict) and len(value) == 1 and MARKER_KEY in value):
        return False
    inner = value[MARKER_KEY]
    if not (isinstance(inner, dict) and set(inner) == _MARKER_FIELDS):
        return False
    sha, size, preview, problem = inner["sha256"], inner["bytes"], inner["preview"], inner["problem"]
    return (isinstance(sha, str) and _SHA256.fullmatch(sha) is not None
            and isinstance(size, int) and not isinstance(size, bool) and 0 <= size <= MAX_INT
            and isinstance(preview, str) and len(preview) <= _MAX_PREVIEW_FIELD and not _UNSAFE.search(preview)
            and isinstance(problem, str) and 0 < len(problem) <= MAX_PROBLEM_CHARS and not _UNSAFE.search(problem))


def _copy_marker(value: dict[str, Any]) -> dict[str, Any]:
    return {MARKER_KEY: dict(value[MARKER_KEY])}


class _Budget(Exception):
    """The arguments as a whole are over :data:`MAX_ARGS_BYTES` or :data:`MAX_VALUES`."""


class _Bounder:
    def __init__(self, tool: str) -> None:
        self.tool = tool
        self.bytes = 0
        self.values = 0

    def _count(self, size: int) -> None:
        self.values += 1
        self.bytes += size
        if self.values > MAX_VALUES:
            raise _Budget(f"more than {MAX_VALUES} values")
        if self.bytes > MAX_ARGS_BYTES:
            raise _Budget(f"more than {MAX_ARGS_BYTES} bytes in all")

    def _marker(self, value: Any, problem: str) -> dict[str, Any]:
        self._count(_MARKER_BYTES)
        return marker(value, problem)

    def bound(self, value: Any, path: tuple[str, ...], depth: int) -> Any:
        if is_marker(value):
            self._count(_MARKER_BYTES)
            return _copy_marker(value)
        if value is None or isinstance(value, bool):
            self._count(5)
            return value
        if isinstance(value, int):
            if abs(value) > MAX_INT:
                return self._marker(value, f"integer of {value.bit_length()} bits is out of range (|n| < 2^63)")
            self._count(20)
            return int(value)
        if isinstance(value, float):
            if not math.isfinite(value):
                return self._marker(value, f"non-finite number {value!r}")
            self._count(24)
            return float(value)
        if isinstance(value, str):
            return self._string(value, path)
        if isinstance(value, (list, tuple)):
            if depth >= MAX_DEPTH:
                return self._marker(value, f"nested deeper than {MAX_DEPTH} levels")
            if len(value) > MAX_ITEMS:
                return self._marker(value, f"a list of {len(value)} items is over the cap of {MAX_ITEMS}")
            self._count(2)
            return [self.bound(v, (*path, str(i)), depth + 1) for i, v in enumerate(value)]
        if isinstance(value, dict):
            if depth >= MAX_DEPTH:
                return self._marker(value, f"nested deeper than {MAX_DEPTH} levels")
            if len(value) > MAX_KEYS:
                return self._marker(value, f"an object of {len(value)} keys is over the cap of {MAX_KEYS}")
            for k in value:
                if not isinstance(k, str):
                    return self._marker(value, f"object key {_bounded_repr(k)[:60]} is not a string "
                                               f"({type(k).__name__})")
                if len(k) > MAX_KEY_BYTES or utf8_len(k) > MAX_KEY_BYTES:
                    return self._marker(value, f"an object key of {utf8_len(k)} bytes is over the cap of "
                                               f"{MAX_KEY_BYTES}")
                hit = _SURROGATE.search(k)
                if hit:
                    return self._marker(value, f"object key has a lone surrogate U+{ord(hit.group()):04X} at "
                                               f"character {hit.start()}")
            self._count(2)
            out: dict[str, Any] = {}
            for k in sorted(value):
                self._count(len(k) + 4)
                out[k] = self.bound(value[k], (*path, k), depth + 1)
            return out
        return self._marker(value, f"not a JSON value ({type(value).__name__})")

    def _string(self, value: str, path: tuple[str, ...]) -> Any:
        cap = FIELD_CAPS.get((self.tool, path[0]), MAX_STRING_BYTES) if len(path) == 1 else MAX_STRING_BYTES
        if len(value) > cap or utf8_len(value) > cap:
            return self._marker(value, f"{utf8_len(value)} bytes is over the {cap}-byte cap")
        hit = _SURROGATE.search(value)
        if hit:
            return self._marker(value, f"lone surrogate U+{ord(hit.group()):04X} at character {hit.start()}")
        self._count(len(value) + 2)
        return value


def _path_text(path: tuple[str, ...]) -> str:
    return ".".join(printable(p)[:80] for p in path) or "arguments"


def _problems(tool: str, value: Any, path: tuple[str, ...], out: list[str]) -> None:
    """Markers and control characters in a recorded form, in canonical (sorted-key) order."""
    if is_marker(value):
        out.append(f"{_path_text(path)}: {value[MARKER_KEY]['problem']}")
    elif isinstance(value, str):
        free = len(path) == 1 and (tool, path[0]) in FREE_TEXT
        hit = (_CONTROL_FREE if free else _CONTROL_STRICT).search(value)
        if hit:
            allowed = "only \\n, \\t and \\r are allowed in free text" if free else "not allowed here"
            out.append(f"{_path_text(path)}: control character U+{ord(hit.group()):04X} at character "
                       f"{hit.start()} ({allowed})")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _problems(tool, v, (*path, str(i)), out)
    elif isinstance(value, dict):
        for k in sorted(value):
            hit = _CONTROL_STRICT.search(k)
            if hit:
                out.append(f"{_path_text((*path, k))}: control character U+{ord(hit.group()):04X} in the key")
            _problems(tool, value[k], (*path, k), out)


def bound_arguments(tool: str, args: Any) -> tuple[dict[str, Any], list[str]]:
    """The recorded form of a call's arguments and the problems that reject it.

    Args:
        tool: the tool's name (selects per-argument caps and free-text fields).
        args: anything: a dict, JSON text, None (no arguments), any other value.

    Returns:
        (recorded form: a plain JSON object, problems as ``"path: what is wrong"``; empty
        when the arguments may go on to the tool's pydantic model). Never raises for any
        input value.
    """
    if args is None:
        args = {}
    if isinstance(args, dict) and len(args) == 1 and NON_OBJECT_KEY in args \
            and not isinstance(args[NON_OBJECT_KEY], dict):
        args = args[NON_OBJECT_KEY]  # a recorded non-object, given back
    if isinstance(args, str):
        if len(args) > MAX_ARGS_BYTES or utf8_len(args) > MAX_ARGS_BYTES:
            rec = marker(args, f"JSON text of {utf8_len(args)} bytes is over the {MAX_ARGS_BYTES}-byte cap")
            return rec, [f"arguments: {rec[MARKER_KEY]['problem']}"]
        try:
            args = json.loads(args) if args.strip() else {}
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, too many digits, too deep
            problem = printable(f"not valid JSON: {exc}")[:MAX_PROBLEM_CHARS]
            text: Any = args
            if len(args) > MAX_STRING_BYTES or utf8_len(args) > MAX_STRING_BYTES or _SURROGATE.search(args):
                text = marker(args, problem)
            return {NON_OBJECT_KEY: text} if isinstance(text, str) else text, [f"arguments: {problem}"]
    bounder = _Bounder(tool)
    try:
        recorded = bounder.bound(args, (), 0)
    except _Budget as exc:
        recorded = marker(args, f"the arguments are too large: {exc}")
    problems: list[str] = []
    _problems(tool, recorded, (), problems)
    if isinstance(recorded, dict):
        return recorded, problems
    if not problems:
        problems.append(f"arguments: must be a JSON object, got {_json_type(recorded)}")
    return {NON_OBJECT_KEY: recorded}, problems


def _json_type(value: Any) -> str:
    return {list: "array", str: "string", bool: "boolean", int: "number", float: "number",
            type(None): "null"}.get(type(value), type(value).__name__)


def format_problems(tool: str, problems: list[str]) -> str:
    """The error an operator reads for rejected arguments."""
    shown = "; ".join(problems[:MAX_PROBLEMS_SHOWN])
    if len(problems) > MAX_PROBLEMS_SHOWN:
        shown += f"; and {len(problems) - MAX_PROBLEMS_SHOWN} more"
    text = f"invalid arguments for {tool}: {shown}"
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS] + " ..."


def recorded_tool_name(name: Any) -> str:
    """The tool name as recorded: itself when a short printable string, else a stand-in.

    The stand-in (``$unrecorded-`` and 16 hex digits of the name's SHA-256) is itself a short
    printable string, so recording it again gives it back.
    """
    if isinstance(name, str) and len(name) <= MAX_TOOL_NAME_CHARS and not _UNSAFE.search(name):
        return name
    return "$unrecorded-" + hashlib.sha256(_serialized(name)).hexdigest()[:16]


def normalize_tokens(tokens: Any) -> int:
    """The token count recorded for a call.

    An integer (or an integral float) in ``[0, MAX_TOKENS]`` is itself; a larger one is
    :data:`MAX_TOKENS`; anything else -- negative, NaN, a string, a bool -- counts as 0. The
    result is what ``tool.call`` records, so a replayed call records the same count. (The
    HTTP and MCP servers reject such values with status 400 before they get here.)
    """
    if isinstance(tokens, bool):
        return 0
    if isinstance(tokens, float):
        if not math.isfinite(tokens) or tokens != int(tokens):
            return 0
        tokens = int(tokens)
    if not isinstance(tokens, int):
        return 0
    return max(0, min(int(tokens), MAX_TOKENS))


REQUEST_CAPS: dict[str, int] = {"user": MAX_KEY_BYTES, "method": 16, "path": 4096, "content_type": MAX_KEY_BYTES,
                                "body": MAX_STRING_BYTES}
"""The raw Kubernetes API request recorded with a tool call (:func:`bound_request`): its fields
and each one's cap in UTF-8 bytes (the body: 64 KiB, like any string argument)."""


def bound_request(request: Any) -> dict[str, Any]:
    """The recorded form of the raw API request a tool call came in as.

    Args:
        request: a mapping with (some of) the keys of :data:`REQUEST_CAPS`, string values;
            anything else counts as an empty request.

    Returns:
        Every key of :data:`REQUEST_CAPS` (sorted), each a string -- empty when absent -- or a
        marker (:func:`marker`) for a value that is no string, over its cap, or holds a lone
        surrogate or a control character (the body may hold ``\\n``, ``\\t``, ``\\r``). Like
        :func:`bound_arguments` it is idempotent: bounding the recorded form gives it back, so
        a replayed call records the same request.
    """
    source = request if isinstance(request, dict) else {}
    out: dict[str, Any] = {}
    for key in sorted(REQUEST_CAPS):
        value = source.get(key, "")
        if is_marker(value):
            out[key] = _copy_marker(value)
        elif not isinstance(value, str):
            out[key] = marker(value, f"{key}: not a string")
        elif utf8_len(value) > REQUEST_CAPS[key]:
            out[key] = marker(value, f"{key}: {utf8_len(value):,} bytes; at most {REQUEST_CAPS[key]:,} are recorded")
        elif (_CONTROL_FREE if key == "body" else _CONTROL_STRICT).search(value) or _SURROGATE.search(value):
            out[key] = marker(value, f"{key}: a control character or lone surrogate")
        else:
            out[key] = value
    return out
