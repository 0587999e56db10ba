"""The YAML ``kubectl -o yaml`` writes: ``sigs.k8s.io/yaml`` over go-yaml v2.

kubectl marshals an object to JSON and converts the JSON to YAML with ``JSONToYAML``, which
re-encodes it with go-yaml v2 (``sigs.k8s.io/yaml/goyaml.v2``). Its output differs from
PyYAML's in ways an SRE sees: keys in go-yaml's "natural" order (digit runs compare as
numbers), double quotes for strings that would read back as another type
(``"2026-01-05T09:00:00Z"``, ``"True"``, ``"1"``, ``""``), single quotes for strings a
plain scalar cannot hold, block sequences not indented under their key, and long scalars
folded at the first space past column 80. This module is a port of the emitter paths
those outputs take (``emitterc.go``: ``analyze_scalar``, ``select_scalar_style``,
``write_plain/single_quoted/double_quoted/literal_scalar``; ``encode.go`` ``stringv``;
``resolve.go``; ``sorter.go``).
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any, ClassVar

from engine.kubectl.gofmt import go_format_float

_BEST_WIDTH = 80
_BEST_INDENT = 2

_RESOLVE_MAP = {
    "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON",
    "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF",
    "", "~", "null", "Null", "NULL", ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF",
    "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", "<<",
}
_YAML_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_BASE60 = re.compile(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$")
_TIMESTAMP = re.compile(
    r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"
    r"(?:[Tt][0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2})"
    r"| [0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:\.[0-9]+)?)?$"
)
"""go-yaml v2 ``allowedTimestampFormats``: RFC 3339 with short fields, space-separated, date only."""


def _go_parse_int(text: str) -> bool:
    """True when ``strconv.ParseInt(text, 0, 64)`` (or ParseUint) would accept ``text``."""
    s = text[1:] if text[:1] in "+-" else text
    if not s:
        return False
    low = s.lower()
    if low.startswith("0x"):
        digits, base = s[2:], 16
    elif low.startswith("0b"):
        digits, base = s[2:], 2
    elif low.startswith("0o"):
        digits, base = s[2:], 8
    elif s.startswith("0") and len(s) > 1:
        digits, base = s[1:], 8
    else:
        digits, base = s, 10
    if not digits:
        return False
    try:
        value = int(digits, base)
    except ValueError:
        return False
    return value < 2**64


def _resolves_to_str(s: str) -> bool:
    """go-yaml v2 ``resolve("", s)`` yields ``!!str`` (so a plain scalar reads back as this string)."""
    if s in _RESOLVE_MAP:
        return False
    hint = s[:1]
    if hint == ".":
        try:
            float(s)
        except ValueError:
            return True
        return False
    if hint and (hint in "+-" or hint.isdigit()):
        if _TIMESTAMP.match(s):
            return False
        plain = s.replace("_", "")
        if _go_parse_int(plain):
            return False
        if _YAML_FLOAT.match(plain):
            return False
        if plain.startswith(("0b", "-0b")):
            return not _go_parse_int(plain)
    return True


def _printable(ch: str) -> bool:
    c = ord(ch)
    return c == 0x0A or 0x20 <= c <= 0x7E or 0xA0 <= c <= 0xD7FF or (0xE000 <= c <= 0xFFFD and c != 0xFEFF)


def _is_break(ch: str) -> bool:
    return ch in "\r\n\x85\u2028\u2029"


def _is_blankz(s: str, i: int) -> bool:
    return i >= len(s) or s[i] in " \t" or _is_break(s[i])


class _Analysis:
    def __init__(self, s: str) -> None:
        self.multiline = False
        self.block_plain = True
        self.single_quoted = True
        self.block = True
        if not s:
            self.block_plain, self.block = True, False
            return
        # Only block-context indicators matter: scalars are never emitted in flow context here.
        block_ind = s.startswith(("---", "..."))
        preceded_ws = True
        line_breaks = special = False
        leading_space = leading_break = trailing_space = trailing_break = False
        break_space = space_break = prev_space = prev_break = False
        n = len(s)
        for i, ch in enumerate(s):
            followed_ws = i + 1 >= n or s[i + 1] in " \t"
            if i == 0:
                if ch in "#,[]{}&*!|>'\"%@`" or (ch in "?:-" and followed_ws):
                    block_ind = True
            elif (ch == ":" and followed_ws) or (ch == "#" and preceded_ws):
                block_ind = True
            if not _printable(ch):
                special = True
            if _is_break(ch):
                line_breaks = True
            if ch == " ":
                leading_space = leading_space or i == 0
                trailing_space = trailing_space or i == n - 1
                break_space = break_space or prev_break
                prev_space, prev_break = True, False
            elif _is_break(ch):
                leading_break = leading_break or i == 0
                trailing_break = trailing_break or i == n - 1
                space_break = space_break or prev_space
                prev_space, prev_break = False, True
            else:
                prev_space = prev_break = False
            preceded_ws = _is_blankz(s, i)
        self.multiline = line_breaks
        if leading_space or leading_break or trailing_space or trailing_break:
            self.block_plain = False
        if trailing_space:
            self.block = False
        if break_space:
            self.block_plain = self.single_quoted = False
        if space_break or special:
            self.block_plain = self.single_quoted = self.block = False
        if line_breaks:
            self.block_plain = False
        if block_ind:
            self.block_plain = False


class _Emitter:
    def __init__(self) -> None:
        self.out: list[str] = []
        self.column = 0
        self.whitespace = True
        self.indention = True
        self.indent = -1
        self.indents: list[int] = []

    # low-level writes
    def put(self, text: str) -> None:
        self.out.append(text)
        self.column += len(text)

    def put_break(self) -> None:
        self.out.append("\n")
        self.column = 0

    def write_indent(self) -> None:
        indent = max(self.indent, 0)
        if not self.indention or self.column > indent or (self.column == indent and not self.whitespace):
            self.put_break()
        if self.column < indent:
            self.put(" " * (indent - self.column))
        self.whitespace = True
        self.indention = True

    def write_indicator(self, indicator: str, need_ws: bool, is_ws: bool, is_indention: bool) -> None:
        if need_ws and not self.whitespace:
            self.put(" ")
        self.put(indicator)
        self.whitespace = is_ws
        self.indention = self.indention and is_indention

    def increase_indent(self, flow: bool, indentless: bool) -> None:
        self.indents.append(self.indent)
        if self.indent < 0:
            self.indent = _BEST_INDENT if flow else 0
        elif not indentless:
            self.indent += _BEST_INDENT

    # nodes
    def node(self, value: Any, *, mapping_ctx: bool = False, simple_key: bool = False) -> None:
        if isinstance(value, dict):
            if not value:
                self.empty("{", "}")
                return
            self.increase_indent(False, False)
            for key in sorted(value, key=functools.cmp_to_key(_key_cmp)):
                self.write_indent()
                self.scalar(str(key), simple_key=True)
                self.write_indicator(":", False, False, False)
                self.node(value[key], mapping_ctx=True)
            self.indent = self.indents.pop()
        elif isinstance(value, list):
            if not value:
                self.empty("[", "]")
                return
            self.increase_indent(False, mapping_ctx and not self.indention)
            for item in value:
                self.write_indent()
                self.write_indicator("-", True, False, True)
                self.node(item)
            self.indent = self.indents.pop()
        elif value is None:
            self.scalar("null", plain_only=True)
        elif value is True or value is False:
            self.scalar("true" if value else "false", plain_only=True)
        elif isinstance(value, int):
            self.scalar(str(value), plain_only=True)
        elif isinstance(value, float):
            text = {"+Inf": ".inf", "-Inf": "-.inf", "NaN": ".nan"}.get(go_format_float(value, "g"))
            self.scalar(text or go_format_float(value, "g"), plain_only=True)
        else:
            self.scalar(str(value), simple_key=simple_key)

    def empty(self, start: str, end: str) -> None:
        self.write_indicator(start, True, True, False)
        self.increase_indent(True, False)
        self.indent = self.indents.pop()
        self.write_indicator(end, False, False, False)

    def scalar(self, s: str, *, simple_key: bool = False, plain_only: bool = False) -> None:
        if plain_only:
            style = "plain"
        else:
            if not _resolves_to_str(s) or _BASE60.match(s):
                style = "double"
            elif "\n" in s:
                style = "literal"
            else:
                style = "plain"
            a = _Analysis(s)
            if style == "plain" and (not a.block_plain or (not s and simple_key)):
                style = "single"
            if style == "single" and not a.single_quoted:
                style = "double"
            if style == "literal" and (not a.block or simple_key):
                style = "double"
        self.increase_indent(True, False)
        breaks = not simple_key
        if style == "plain":
            self.write_plain(s, breaks)
        elif style == "single":
            self.write_single(s, breaks)
        elif style == "double":
            self.write_double(s, breaks)
        else:
            self.write_literal(s)
        self.indent = self.indents.pop()

    def write_plain(self, s: str, allow_breaks: bool) -> None:
        if not self.whitespace:
            self.put(" ")
        spaces = False
        i, n = 0, len(s)
        while i < n:
            ch = s[i]
            if ch == " ":
                if allow_breaks and not spaces and self.column > _BEST_WIDTH and i + 1 < n and s[i + 1] != " ":
                    self.write_indent()
                else:
                    self.put(ch)
                spaces = True
            else:
                self.put(ch)
                self.indention = False
                spaces = False
            i += 1
        self.whitespace = False
        self.indention = False

    def write_single(self, s: str, allow_breaks: bool) -> None:
        self.write_indicator("'", True, False, False)
        spaces = False
        n = len(s)
        for i, ch in enumerate(s):
            if ch == " ":
                if (allow_breaks and not spaces and self.column > _BEST_WIDTH and 0 < i < n - 1
                        and s[i + 1] != " "):
                    self.write_indent()
                else:
                    self.put(ch)
                spaces = True
            else:
                self.put("''" if ch == "'" else ch)
                self.indention = False
                spaces = False
        self.write_indicator("'", False, False, False)
        self.whitespace = False
        self.indention = False

    _ESC: ClassVar[dict[int, str]] = {
        0x00: "0", 0x07: "a", 0x08: "b", 0x09: "t", 0x0A: "n", 0x0B: "v", 0x0C: "f", 0x0D: "r", 0x1B: "e",
        0x22: '"', 0x5C: "\\", 0x85: "N", 0xA0: "_", 0x2028: "L", 0x2029: "P"}

    def write_double(self, s: str, allow_breaks: bool) -> None:
        self.write_indicator('"', True, False, False)
        spaces = False
        n = len(s)
        for i, ch in enumerate(s):
            c = ord(ch)
            if not _printable(ch) or c == 0xFEFF or _is_break(ch) or ch in '"\\':
                esc = self._ESC.get(c)
                if esc is None:
                    width = 2 if c <= 0xFF else 4 if c <= 0xFFFF else 8
                    esc = ("x" if width == 2 else "u" if width == 4 else "U") + f"{c:0{width}X}"
                self.put("\\" + esc)
                spaces = False
            elif ch == " ":
                if allow_breaks and not spaces and self.column > _BEST_WIDTH and 0 < i < n - 1:
                    self.write_indent()
                    if s[i + 1] == " ":
                        self.put("\\")
                else:
                    self.put(ch)
                spaces = True
            else:
                self.put(ch)
                spaces = False
        self.write_indicator('"', False, False, False)
        self.whitespace = False
        self.indention = False

    def write_literal(self, s: str) -> None:
        self.write_indicator("|", True, False, False)
        if s[:1] == " " or _is_break(s[:1] or "x"):
            self.write_indicator(str(_BEST_INDENT), False, False, False)
        if not s or not _is_break(s[-1]):
            self.write_indicator("-", False, False, False)
        elif len(s) == 1 or _is_break(s[-2]):
            self.write_indicator("+", False, False, False)
        self.put_break()
        self.indention = True
        self.whitespace = True
        breaks = True
        for ch in s:
            if _is_break(ch):
                self.put_break()
                self.indention = True
                breaks = True
            else:
                if breaks:
                    self.write_indent()
                self.put(ch)
                self.indention = False
                breaks = False


def _key_cmp(a: str, b: str) -> int:
    if a == b:
        return 0
    return -1 if _key_less(a, b) else 1


def _key_less(a: str, b: str) -> bool:
    """go-yaml v2 ``keyList.Less`` for string keys: letters after non-letters, digit runs as numbers."""
    for i in range(min(len(a), len(b))):
        if a[i] == b[i]:
            continue
        al, bl = a[i].isalpha(), b[i].isalpha()
        if al and bl:
            return a[i] < b[i]
        if al or bl:
            return bl
        an = bn = 0
        if a[i] == "0" or b[i] == "0":
            j = i - 1
            while j >= 0 and a[j].isdigit():
                if a[j] != "0":
                    an = bn = 1
                    break
                j -= 1
        ai = i
        while ai < len(a) and "0" <= a[ai] <= "9":
            an = an * 10 + int(a[ai])
            ai += 1
        bi = i
        while bi < len(b) and "0" <= b[bi] <= "9":
            bn = bn * 10 + int(b[bi])
            bi += 1
        if an != bn:
            return an < bn
        if ai != bi:
            return ai < bi
        return a[i] < b[i]
    return len(a) < len(b)


def _json_roundtrip(value: Any) -> Any:
    """Numbers as they come back from JSON: integral floats become ints (``json.Marshal(1.0)`` is ``1``)."""
    if isinstance(value, dict):
        return {str(k): _json_roundtrip(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_roundtrip(v) for v in value]
    if isinstance(value, float) and math.isfinite(value) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    return value


def marshal(value: Any) -> str:
    """``yaml.Marshal`` from ``sigs.k8s.io/yaml`` of a JSON-like value (dicts, lists, scalars)."""
    emitter = _Emitter()
    emitter.node(_json_roundtrip(value))
    emitter.write_indent()
    text = "".join(emitter.out)
    return text if text.endswith("\n") else text + "\n"
