"""Go's ``text/template``: lexer, parser and executor, as Go 1.19.8 has them.

Ported from ``text/template`` and ``text/template/parse`` of Go 1.19.8 (the Go that
built promtool 2.42 in Debian bookworm), with ``missingkey=zero`` as Prometheus sets it:

- the lexer: ``{{ }}`` actions with trim markers (``{{- `` / `` -}}``, any ASCII space
  after/before the dash), comments ``{{/* */}}``, interpreted and raw strings, character
  constants, numbers (decimal, hex, octal, binary, floats, underscores), ``true``/``false``,
  ``nil``, variables, fields, ``(``/``)``, ``|``, ``:=``, ``=``, keywords;
- the parser: ``if``/``else if``/``else``/``end``, ``range`` (with ``$i, $e :=``, ``else``,
  ``break``, ``continue``), ``with``/``else``, ``define``, ``template``, ``block``,
  pipelines, parenthesised pipelines, field chains, variable scoping, and Go's parse
  errors (``template: NAME:LINE: unexpected ...``);
- the executor: Go's truth, comparison (``eq`` with several operands, ints vs floats are
  incompatible), field and map access, argument type checks, ``and``/``or`` returning an
  operand, the builtins ``and or not len index slice print printf println html js
  urlquery call eq ne lt le gt ge``, and Go's execution errors
  (``template: NAME:LINE:COL: executing "NAME" at <NODE>: ...``).

Values are modelled as :mod:`alerts.gofmt` describes. Functions are :class:`GoFunc`
entries with Go parameter types, so that arity and type errors read as Go's.
"""

from __future__ import annotations

import html as _html_mod
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote_plus

from alerts.gofmt import (
    INVALID,
    GoEnum,
    GoHTML,
    GoInt64,
    GoMap,
    GoPointer,
    GoSlice,
    GoStruct,
    GoTime,
    GoUint8,
    format_float,
    quote,
    sprint,
    sprintf,
    sprintln,
    type_name,
)

del _html_mod


class GoTemplateError(Exception):
    """A parse or execution error, with Go's message (``template: NAME:LINE[:COL]: ...``)."""

    def __init__(self, message: str, *, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


class GoCallError(Exception):
    """Raised by a template function: the error it returns (Go's ``error`` result)."""


# =================================================================================== lexer

_KEYWORDS = {".": "dot", "block": "block", "break": "break", "continue": "continue", "define": "define",
             "else": "else", "end": "end", "if": "if", "range": "range", "nil": "nil",
             "template": "template", "with": "with"}
_SPACE = " \t\r\n"


@dataclass
class Item:
    typ: str
    pos: int
    val: str
    line: int

    def __str__(self) -> str:
        if self.typ == "EOF":
            return "EOF"
        if self.typ == "error":
            return self.val
        if self.typ in _KEYWORDS.values():
            return f"<{self.val}>"
        if len(self.val) > 10:
            return sprintf("%.10q...", self.val)
        return sprintf("%q", self.val)


def _is_alnum(r: str) -> bool:
    return r == "_" or r.isalpha() or (r.isdigit() and r.isdecimal())


def _is_letter_or_digit(r: str) -> bool:
    # unicode.IsLetter / unicode.IsDigit (Nd)
    return r.isalpha() or r.isdecimal()


class _Lexer:
    def __init__(self, text: str) -> None:
        self.input = text
        self.pos = 0
        self.start = 0
        self.at_eof = False
        self.items: list[Item] = []
        self.paren_depth = 0
        self.line = 1
        self.start_line = 1

    # the helpers, as Go's
    def next(self) -> str:
        if self.pos >= len(self.input):
            self.at_eof = True
            return ""
        r = self.input[self.pos]
        self.pos += 1
        if r == "\n":
            self.line += 1
        return r

    def peek(self) -> str:
        r = self.next()
        self.backup()
        return r

    def backup(self) -> None:
        if not self.at_eof and self.pos > 0:
            self.pos -= 1
            if self.input[self.pos] == "\n":
                self.line -= 1

    def emit(self, typ: str) -> None:
        self.items.append(Item(typ, self.start, self.input[self.start:self.pos], self.start_line))
        self.start = self.pos
        self.start_line = self.line

    def ignore(self) -> None:
        self.line += self.input.count("\n", self.start, self.pos)
        self.start = self.pos
        self.start_line = self.line

    def accept(self, valid: str) -> bool:
        r = self.next()
        if r and r in valid:
            return True
        self.backup()
        return False

    def accept_run(self, valid: str) -> None:
        while True:
            r = self.next()
            if not r or r not in valid:
                break
        self.backup()

    def errorf(self, msg: str) -> None:
        self.items.append(Item("error", self.start, msg, self.start_line))

    def run(self) -> list[Item]:
        state: Callable[[], Any] | None = self.lex_text
        while state is not None:
            state = state()
        return self.items

    # states
    def lex_text(self) -> Callable[[], Any] | None:
        x = self.input.find("{{", self.pos)
        if x >= 0:
            self.pos = x
            trim = 0
            if _has_left_trim(self.input, self.pos + 2):
                seg = self.input[self.start:self.pos]
                trim = len(seg) - len(seg.rstrip(_SPACE))
            self.pos -= trim
            if self.pos > self.start:
                self.line += self.input.count("\n", self.start, self.pos)
                self.emit("text")
            self.pos += trim
            self.ignore()
            return self.lex_left_delim
        self.pos = len(self.input)
        if self.pos > self.start:
            self.line += self.input.count("\n", self.start, self.pos)
            self.emit("text")
        self.emit("EOF")
        return None

    def at_right_delim(self) -> tuple[bool, bool]:
        if _has_right_trim(self.input, self.pos) and self.input.startswith("}}", self.pos + 2):
            return True, True
        if self.input.startswith("}}", self.pos):
            return True, False
        return False, False

    def lex_left_delim(self) -> Callable[[], Any] | None:
        self.pos += 2
        trim = _has_left_trim(self.input, self.pos)
        after = 2 if trim else 0
        if self.input.startswith("/*", self.pos + after):
            self.pos += after
            self.ignore()
            return self.lex_comment
        self.emit("leftDelim")
        self.pos += after
        self.ignore()
        self.paren_depth = 0
        return self.lex_inside_action

    def lex_comment(self) -> Callable[[], Any] | None:
        self.pos += 2
        i = self.input.find("*/", self.pos)
        if i < 0:
            self.errorf("unclosed comment")
            return None
        self.pos = i + 2
        delim, trim = self.at_right_delim()
        if not delim:
            self.errorf("comment ends before closing delimiter")
            return None
        if trim:
            self.pos += 2
        self.pos += 2
        if trim:
            rest = self.input[self.pos:]
            self.pos += len(rest) - len(rest.lstrip(_SPACE))
        self.ignore()
        return self.lex_text

    def lex_right_delim(self) -> Callable[[], Any] | None:
        trim = _has_right_trim(self.input, self.pos)
        if trim:
            self.pos += 2
            self.ignore()
        self.pos += 2
        self.emit("rightDelim")
        if trim:
            rest = self.input[self.pos:]
            self.pos += len(rest) - len(rest.lstrip(_SPACE))
            self.ignore()
        return self.lex_text

    def lex_inside_action(self) -> Callable[[], Any] | None:
        delim, _ = self.at_right_delim()
        if delim:
            if self.paren_depth == 0:
                return self.lex_right_delim
            self.errorf("unclosed left paren")
            return None
        r = self.next()
        if r == "":
            self.errorf("unclosed action")
            return None
        if r in _SPACE:
            self.backup()
            return self.lex_space
        if r == "=":
            self.emit("assign")
        elif r == ":":
            if self.next() != "=":
                self.errorf("expected :=")
                return None
            self.emit("declare")
        elif r == "|":
            self.emit("pipe")
        elif r == '"':
            return self.lex_quote
        elif r == "`":
            return self.lex_raw_quote
        elif r == "$":
            return self.lex_variable
        elif r == "'":
            return self.lex_char
        elif r == "." and self.pos < len(self.input) and not ("0" <= self.input[self.pos] <= "9"):
            return self.lex_field
        elif r in "+-." or "0" <= r <= "9":
            self.backup()
            return self.lex_number
        elif _is_alnum(r):
            self.backup()
            return self.lex_identifier
        elif r == "(":
            self.emit("leftParen")
            self.paren_depth += 1
        elif r == ")":
            self.emit("rightParen")
            self.paren_depth -= 1
            if self.paren_depth < 0:
                self.errorf("unexpected right paren U+0029 ')'")
                return None
        elif ord(r) < 0x80 and r.isprintable():
            self.emit("char")
        else:
            self.errorf(f"unrecognized character in action: {_rune_u(r)}")
            return None
        return self.lex_inside_action

    def lex_space(self) -> Callable[[], Any] | None:
        num = 0
        while True:
            r = self.peek()
            if not r or r not in _SPACE:
                break
            self.next()
            num += 1
        if _has_right_trim(self.input, self.pos - 1) and self.input.startswith("}}", self.pos - 1 + 2):
            self.backup()
            if num == 1:
                return self.lex_right_delim
        self.emit("space")
        return self.lex_inside_action

    def lex_identifier(self) -> Callable[[], Any] | None:
        while True:
            r = self.next()
            if r and _is_alnum(r):
                continue
            self.backup()
            word = self.input[self.start:self.pos]
            if not self.at_terminator():
                self.errorf(f"bad character {_rune_u(r)}")
                return None
            if word in _KEYWORDS and word != ".":
                self.emit(_KEYWORDS[word])
            elif word[0] == ".":
                self.emit("field")
            elif word in ("true", "false"):
                self.emit("bool")
            else:
                self.emit("identifier")
            return self.lex_inside_action

    def lex_field(self) -> Callable[[], Any] | None:
        return self.lex_field_or_variable("field")

    def lex_variable(self) -> Callable[[], Any] | None:
        if self.at_terminator():
            self.emit("variable")
            return self.lex_inside_action
        return self.lex_field_or_variable("variable")

    def lex_field_or_variable(self, typ: str) -> Callable[[], Any] | None:
        if self.at_terminator():
            self.emit("variable" if typ == "variable" else "dot")
            return self.lex_inside_action
        r = ""
        while True:
            r = self.next()
            if not r or not _is_alnum(r):
                self.backup()
                break
        if not self.at_terminator():
            self.errorf(f"bad character {_rune_u(r)}")
            return None
        self.emit(typ)
        return self.lex_inside_action

    def at_terminator(self) -> bool:
        r = self.peek()
        if r and r in _SPACE:
            return True
        if r in ("", ".", ",", "|", ":", ")", "("):
            return True
        return self.input.startswith("}}", self.pos)

    def lex_char(self) -> Callable[[], Any] | None:
        while True:
            r = self.next()
            if r == "\\":
                r2 = self.next()
                if r2 != "" and r2 != "\n":
                    continue
                self.errorf("unterminated character constant")
                return None
            if r in ("", "\n"):
                self.errorf("unterminated character constant")
                return None
            if r == "'":
                break
        self.emit("charConstant")
        return self.lex_inside_action

    def lex_number(self) -> Callable[[], Any] | None:
        if not self.scan_number():
            self.errorf(f"bad number syntax: {quote(self.input[self.start:self.pos])}")
            return None
        sign = self.peek()
        if sign in ("+", "-") and sign:
            if not self.scan_number() or self.input[self.pos - 1] != "i":
                self.errorf(f"bad number syntax: {quote(self.input[self.start:self.pos])}")
                return None
            self.emit("complex")
        else:
            self.emit("number")
        return self.lex_inside_action

    def scan_number(self) -> bool:
        self.accept("+-")
        digits = "0123456789_"
        if self.accept("0"):
            if self.accept("xX"):
                digits = "0123456789abcdefABCDEF_"
            elif self.accept("oO"):
                digits = "01234567_"
            elif self.accept("bB"):
                digits = "01_"
        self.accept_run(digits)
        if self.accept("."):
            self.accept_run(digits)
        if len(digits) == 11 and self.accept("eE"):
            self.accept("+-")
            self.accept_run("0123456789_")
        if len(digits) == 23 and self.accept("pP"):
            self.accept("+-")
            self.accept_run("0123456789_")
        self.accept("i")
        r = self.peek()
        if r and _is_alnum(r):
            self.next()
            return False
        return True

    def lex_quote(self) -> Callable[[], Any] | None:
        while True:
            r = self.next()
            if r == "\\":
                r2 = self.next()
                if r2 != "" and r2 != "\n":
                    continue
                self.errorf("unterminated quoted string")
                return None
            if r in ("", "\n"):
                self.errorf("unterminated quoted string")
                return None
            if r == '"':
                break
        self.emit("string")
        return self.lex_inside_action

    def lex_raw_quote(self) -> Callable[[], Any] | None:
        while True:
            r = self.next()
            if r == "":
                self.errorf("unterminated raw quoted string")
                return None
            if r == "`":
                break
        self.emit("rawString")
        return self.lex_inside_action


def _rune_u(r: str) -> str:
    """``%#U``: ``U+0021 '!'``."""
    if not r:
        return "U+FFFFFFFFFFFFFFFF"
    return sprintf("%#U", ord(r))


def _has_left_trim(s: str, i: int) -> bool:
    return len(s) >= i + 2 and s[i] == "-" and s[i + 1] in _SPACE


def _has_right_trim(s: str, i: int) -> bool:
    return i >= 0 and len(s) >= i + 2 and s[i] in _SPACE and s[i + 1] == "-"


# =================================================================================== strconv


_SIMPLE_ESC = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\"}


def unquote_char(s: str, i: int, q: str) -> tuple[str, int]:
    """``strconv.UnquoteChar`` at ``s[i]``: (the character, next index); ValueError: invalid syntax."""
    c = s[i]
    if c == q and q in "'\"":
        raise ValueError("invalid syntax")
    if c != "\\":
        return c, i + 1
    if i + 1 >= len(s):
        raise ValueError("invalid syntax")
    c = s[i + 1]
    i += 2
    if c in _SIMPLE_ESC:
        return _SIMPLE_ESC[c], i
    if c in "xuU":
        n = {"x": 2, "u": 4, "U": 8}[c]
        h = s[i:i + n]
        if len(h) < n or not re.fullmatch(r"[0-9a-fA-F]+", h):
            raise ValueError("invalid syntax")
        v = int(h, 16)
        if c == "x":
            if q == "'":
                return chr(v), i + n
            return chr(0xDC00 + v) if v >= 0x80 else chr(v), i + n  # a raw byte
        if v > 0x10FFFF or 0xD800 <= v <= 0xDFFF:
            raise ValueError("invalid syntax")
        return chr(v), i + n
    if "0" <= c <= "7":
        o = s[i - 1:i + 2]
        if len(o) < 3 or not re.fullmatch(r"[0-7]{3}", o):
            raise ValueError("invalid syntax")
        v = int(o, 8)
        if v > 255:
            raise ValueError("invalid syntax")
        return (chr(0xDC00 + v) if v >= 0x80 else chr(v)), i + 2
    if c == q and q in "'\"":
        return c, i
    raise ValueError("invalid syntax")


def unquote(s: str) -> str:
    """``strconv.Unquote`` of a Go string literal (``"..."`` or a raw one); ValueError: invalid syntax."""
    if len(s) < 2 or s[0] != s[-1]:
        raise ValueError("invalid syntax")
    q = s[0]
    body = s[1:-1]
    if q == "`":
        if "`" in body:
            raise ValueError("invalid syntax")
        return body.replace("\r", "")
    if q != '"':
        raise ValueError("invalid syntax")
    if "\n" in body:
        raise ValueError("invalid syntax")
    out = []
    i = 0
    while i < len(body):
        c, i = unquote_char(body, i, '"')
        out.append(c)
    raw = "".join(out)
    if any(0xDC80 <= ord(ch) <= 0xDCFF for ch in raw):  # raw bytes: decode the UTF-8 they may form
        b = bytes((ord(ch) - 0xDC00) if 0xDC80 <= ord(ch) <= 0xDCFF else 0 for ch in raw)
        parts: list[str] = []
        buf = bytearray()
        for ch, byte in zip(raw, b, strict=True):
            if 0xDC80 <= ord(ch) <= 0xDCFF:
                buf.append(byte)
            else:
                if buf:
                    parts.append(buf.decode("utf-8", "replace"))
                    buf = bytearray()
                parts.append(ch)
        if buf:
            parts.append(buf.decode("utf-8", "replace"))
        raw = "".join(parts)
    return raw


_FLOAT_DEC = re.compile(r"[+-]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?")
_FLOAT_HEX = re.compile(r"[+-]?0[xX](?:_?[0-9a-fA-F])*(?:\.[0-9a-fA-F](?:_?[0-9a-fA-F])*|\.)?[pP][+-]?\d(?:_?\d)*")
_FLOAT_SPECIAL = re.compile(r"[+-]?(?:inf|infinity)|nan", re.IGNORECASE)


def parse_float(s: str) -> float:
    """``strconv.ParseFloat(s, 64)``.

    Raises:
        ValueError: with Go's message (``strconv.ParseFloat: parsing "x": invalid syntax``,
            ``... value out of range``).
    """
    if _FLOAT_SPECIAL.fullmatch(s):
        low = s.lower().lstrip("+")
        return float("nan") if low == "nan" else (float("-inf") if low.startswith("-") else float("inf"))
    if _FLOAT_DEC.fullmatch(s) and "_" not in s:
        v = float(s)
    elif _FLOAT_HEX.fullmatch(s):
        t = s.replace("_", "")
        neg = t.startswith("-")
        t = t.lstrip("+-")
        try:
            v = float.fromhex(t)
        except OverflowError:
            v = float("inf")
        v = -v if neg else v
    else:
        raise ValueError(f"strconv.ParseFloat: parsing {quote(s)}: invalid syntax")
    if v in (float("inf"), float("-inf")):
        raise ValueError(f"strconv.ParseFloat: parsing {quote(s)}: value out of range")
    return v


def _parse_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 0, 64)``; None when it fails."""
    t = text
    neg = False
    if t[:1] in "+-":
        neg = t[0] == "-"
        t = t[1:]
    if not t:
        return None
    m = re.fullmatch(r"0[xX](_?[0-9a-fA-F])+|0[bB](_?[01])+|0[oO](_?[0-7])+|0(_?[0-7])*|[1-9](_?\d)*", t)
    if not m:
        return None
    v = int(t.replace("_", ""), 8 if re.fullmatch(r"0(_?[0-7])+", t) else 0)
    v = -v if neg else v
    if v > 2**63 - 1 or v < -(2**63):
        return None
    return v


def _parse_uint(text: str) -> int | None:
    if text[:1] in "+-":
        return None
    v = _parse_int("+" + text) if text else None
    if v is None:
        # may be in (2**63, 2**64)
        try:
            t = text.replace("_", "")
            big = int(t, 8) if re.fullmatch(r"0[0-7]+", t) else int(t, 0)
        except ValueError:
            return None
        return big if 0 <= big < 2**64 else None
    return v


# =================================================================================== nodes


class Node:
    pos: int

    def __str__(self) -> str:  # pragma: no cover - every node overrides
        return ""


@dataclass(eq=False)
class TextNode(Node):
    pos: int
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(eq=False)
class ListNode(Node):
    pos: int
    nodes: list[Node] = field(default_factory=list)

    def __str__(self) -> str:
        return "".join(str(n) for n in self.nodes)


@dataclass(eq=False)
class VariableNode(Node):
    pos: int
    ident: list[str]

    def __str__(self) -> str:
        return ".".join(self.ident)


@dataclass(eq=False)
class CommandNode(Node):
    pos: int
    args: list[Node] = field(default_factory=list)

    def __str__(self) -> str:
        out = []
        for a in self.args:
            out.append(f"({a})" if isinstance(a, PipeNode) else str(a))
        return " ".join(out)


@dataclass(eq=False)
class PipeNode(Node):
    pos: int
    line: int
    decl: list[VariableNode] = field(default_factory=list)
    cmds: list[CommandNode] = field(default_factory=list)
    is_assign: bool = False

    def __str__(self) -> str:
        s = ""
        if self.decl:
            s = ", ".join(str(v) for v in self.decl) + " := "
        return s + " | ".join(str(c) for c in self.cmds)


@dataclass(eq=False)
class ActionNode(Node):
    pos: int
    line: int
    pipe: PipeNode

    def __str__(self) -> str:
        return "{{" + str(self.pipe) + "}}"


@dataclass(eq=False)
class IdentifierNode(Node):
    pos: int
    ident: str

    def __str__(self) -> str:
        return self.ident


@dataclass(eq=False)
class DotNode(Node):
    pos: int

    def __str__(self) -> str:
        return "."


@dataclass(eq=False)
class NilNode(Node):
    pos: int

    def __str__(self) -> str:
        return "nil"


@dataclass(eq=False)
class FieldNode(Node):
    pos: int
    ident: list[str]

    def __str__(self) -> str:
        return "".join("." + i for i in self.ident)


@dataclass(eq=False)
class ChainNode(Node):
    pos: int
    node: Node
    fields: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        head = f"({self.node})" if isinstance(self.node, PipeNode) else str(self.node)
        return head + "".join("." + f for f in self.fields)


@dataclass(eq=False)
class BoolNode(Node):
    pos: int
    value: bool

    def __str__(self) -> str:
        return "true" if self.value else "false"


@dataclass(eq=False)
class NumberNode(Node):
    pos: int
    text: str
    is_int: bool = False
    is_uint: bool = False
    is_float: bool = False
    is_complex: bool = False
    int64: int = 0
    uint64: int = 0
    float64: float = 0.0
    complex128: complex = 0j

    def __str__(self) -> str:
        return self.text


@dataclass(eq=False)
class StringNode(Node):
    pos: int
    quoted: str
    text: str

    def __str__(self) -> str:
        return self.quoted


@dataclass(eq=False)
class EndNode(Node):
    pos: int

    def __str__(self) -> str:
        return "{{end}}"


@dataclass(eq=False)
class ElseNode(Node):
    pos: int
    line: int

    def __str__(self) -> str:
        return "{{else}}"


@dataclass(eq=False)
class BranchNode(Node):
    kind: str  # "if", "range", "with"
    pos: int
    line: int
    pipe: PipeNode
    list: ListNode
    else_list: ListNode | None

    def __str__(self) -> str:
        s = "{{" + self.kind + " " + str(self.pipe) + "}}" + str(self.list)
        if self.else_list is not None:
            s += "{{else}}" + str(self.else_list)
        return s + "{{end}}"


@dataclass(eq=False)
class BreakNode(Node):
    pos: int
    line: int

    def __str__(self) -> str:
        return "{{break}}"


@dataclass(eq=False)
class ContinueNode(Node):
    pos: int
    line: int

    def __str__(self) -> str:
        return "{{continue}}"


@dataclass(eq=False)
class TemplateNode(Node):
    pos: int
    line: int
    name: str
    pipe: PipeNode | None

    def __str__(self) -> str:
        s = "{{template " + quote(self.name)
        if self.pipe is not None:
            s += " " + str(self.pipe)
        return s + "}}"


def _is_empty_tree(n: Node | None) -> bool:
    if n is None:
        return True
    if isinstance(n, ListNode):
        return all(_is_empty_tree(x) for x in n.nodes)
    if isinstance(n, TextNode):
        return n.text.strip(" \t\r\n\v\f\x85\xa0") == ""
    return False


# =================================================================================== parser


class _Abort(Exception):
    pass


class _Tree:
    """One template's parse (Go's ``parse.Tree``)."""

    def __init__(self, name: str, parse_name: str, text: str, funcs: set[str], lexer: _ItemStream,
                 tree_set: dict[str, _Tree]) -> None:
        self.name = name
        self.parse_name = parse_name
        self.text = text
        self.funcs = funcs
        self.lex = lexer
        self.tree_set = tree_set
        self.token: list[Item] = [Item("EOF", 0, "", 1)] * 3
        self.peek_count = 0
        self.vars = ["$"]
        self.action_line = 0
        self.range_depth = 0
        self.root: ListNode | None = None

    def errorf(self, msg: str) -> None:
        line = self.token[0].line
        raise GoTemplateError(f"template: {self.parse_name}:{line}: {msg}", line=line)

    def next(self) -> Item:
        if self.peek_count > 0:
            self.peek_count -= 1
        else:
            self.token[0] = self.lex.next_item()
        return self.token[self.peek_count]

    def backup(self) -> None:
        self.peek_count += 1

    def backup2(self, t1: Item) -> None:
        self.token[1] = t1
        self.peek_count = 2

    def backup3(self, t2: Item, t1: Item) -> None:
        self.token[1] = t1
        self.token[2] = t2
        self.peek_count = 3

    def peek(self) -> Item:
        if self.peek_count > 0:
            return self.token[self.peek_count - 1]
        self.peek_count = 1
        self.token[0] = self.lex.next_item()
        return self.token[0]

    def next_non_space(self) -> Item:
        while True:
            tok = self.next()
            if tok.typ != "space":
                return tok

    def peek_non_space(self) -> Item:
        tok = self.next_non_space()
        self.backup()
        return tok

    def expect(self, typ: str, context: str) -> Item:
        tok = self.next_non_space()
        if tok.typ != typ:
            self.unexpected(tok, context)
        return tok

    def expect_one_of(self, t1: str, t2: str, context: str) -> Item:
        tok = self.next_non_space()
        if tok.typ not in (t1, t2):
            self.unexpected(tok, context)
        return tok

    def unexpected(self, tok: Item, context: str) -> None:
        if tok.typ == "error":
            extra = ""
            if self.action_line != 0 and self.action_line != tok.line:
                extra = f" in action started at {self.parse_name}:{self.action_line}"
                if tok.val.endswith(" action"):
                    extra = extra[len(" in action"):]
            self.errorf(f"{tok}{extra}")
        self.errorf(f"unexpected {tok} in {context}")

    def add(self) -> None:
        tree = self.tree_set.get(self.name)
        if tree is None or _is_empty_tree(tree.root):
            self.tree_set[self.name] = self
            return
        if not _is_empty_tree(self.root):
            self.errorf(f"template: multiple definition of template {quote(self.name)}")

    def parse(self) -> None:
        self.root = ListNode(self.peek().pos)
        while self.peek().typ != "EOF":
            if self.peek().typ == "leftDelim":
                delim = self.next()
                if self.next_non_space().typ == "define":
                    new = _Tree("definition", self.parse_name, self.text, self.funcs, self.lex, self.tree_set)
                    new.parse_definition()
                    continue
                self.backup2(delim)
            n = self.text_or_action()
            if isinstance(n, (EndNode, ElseNode)):
                self.errorf(f"unexpected {n}")
            self.root.nodes.append(n)

    def parse_definition(self) -> None:
        context = "define clause"
        name = self.expect_one_of("string", "rawString", context)
        try:
            self.name = unquote(name.val)
        except ValueError as exc:
            self.errorf(str(exc))
        self.expect("rightDelim", context)
        self.root, end = self.item_list()
        if not isinstance(end, EndNode):
            self.errorf(f"unexpected {end} in {context}")
        self.add()

    def item_list(self) -> tuple[ListNode, Node]:
        lst = ListNode(self.peek_non_space().pos)
        while self.peek_non_space().typ != "EOF":
            n = self.text_or_action()
            if isinstance(n, (EndNode, ElseNode)):
                return lst, n
            lst.nodes.append(n)
        self.errorf("unexpected EOF")
        raise AssertionError

    def text_or_action(self) -> Node:
        tok = self.next_non_space()
        if tok.typ == "text":
            return TextNode(tok.pos, tok.val)
        if tok.typ == "leftDelim":
            self.action_line = tok.line
            try:
                return self.action()
            finally:
                self.action_line = 0
        self.unexpected(tok, "input")
        raise AssertionError

    def action(self) -> Node:
        tok = self.next_non_space()
        t = tok.typ
        if t == "block":
            return self.block_control()
        if t == "break":
            return self.break_control(tok.pos, tok.line, "break")
        if t == "continue":
            return self.break_control(tok.pos, tok.line, "continue")
        if t == "else":
            return self.else_control()
        if t == "end":
            return EndNode(self.expect("rightDelim", "end").pos)
        if t in ("if", "range", "with"):
            return self.branch(t)
        if t == "template":
            return self.template_control()
        self.backup()
        tok = self.peek()
        return ActionNode(tok.pos, tok.line, self.pipeline("command", "rightDelim"))

    def break_control(self, pos: int, line: int, word: str) -> Node:
        tok = self.next_non_space()
        if tok.typ != "rightDelim":
            self.unexpected(tok, "{{" + word + "}}")
        if self.range_depth == 0:
            self.errorf("{{" + word + "}} outside {{range}}")
        return BreakNode(pos, line) if word == "break" else ContinueNode(pos, line)

    def pipeline(self, context: str, end: str) -> PipeNode:
        tok = self.peek_non_space()
        pipe = PipeNode(tok.pos, tok.line)
        while True:  # declarations
            v = self.peek_non_space()
            if v.typ != "variable":
                break
            self.next()
            after = self.peek()
            nxt = self.peek_non_space()
            if nxt.typ in ("assign", "declare"):
                pipe.is_assign = nxt.typ == "assign"
                self.next_non_space()
                pipe.decl.append(VariableNode(v.pos, v.val.split(".")))
                self.vars.append(v.val)
            elif nxt.typ == "char" and nxt.val == ",":
                self.next_non_space()
                pipe.decl.append(VariableNode(v.pos, v.val.split(".")))
                self.vars.append(v.val)
                if context == "range" and len(pipe.decl) < 2:
                    if self.peek_non_space().typ in ("variable", "rightDelim", "rightParen"):
                        continue
                    self.errorf("range can only initialize variables")
                self.errorf(f"too many declarations in {context}")
            elif after.typ == "space":
                self.backup3(v, after)
            else:
                self.backup2(v)
            break
        while True:
            tok = self.next_non_space()
            if tok.typ == end:
                self.check_pipeline(pipe, context)
                return pipe
            if tok.typ in ("bool", "charConstant", "complex", "dot", "field", "identifier", "number", "nil",
                           "rawString", "string", "variable", "leftParen"):
                self.backup()
                pipe.cmds.append(self.command())
            else:
                self.unexpected(tok, context)

    def check_pipeline(self, pipe: PipeNode, context: str) -> None:
        if not pipe.cmds:
            self.errorf(f"missing value for {context}")
        for i, c in enumerate(pipe.cmds[1:]):
            if isinstance(c.args[0], (BoolNode, DotNode, NilNode, NumberNode, StringNode)):
                self.errorf(f"non executable command in pipeline stage {i + 2}")

    def parse_control(self, allow_else_if: bool, context: str) -> tuple[int, int, PipeNode, ListNode,
                                                                         ListNode | None]:
        mark = len(self.vars)
        try:
            pipe = self.pipeline(context, "rightDelim")
            if context == "range":
                self.range_depth += 1
            lst, nxt = self.item_list()
            if context == "range":
                self.range_depth -= 1
            else_list: ListNode | None = None
            if isinstance(nxt, ElseNode):
                if allow_else_if and self.peek().typ == "if":
                    self.next()
                    else_list = ListNode(nxt.pos)
                    else_list.nodes.append(self.branch("if"))
                    return pipe.pos, pipe.line, pipe, lst, else_list
                else_list, nxt = self.item_list()
                if not isinstance(nxt, EndNode):
                    self.errorf(f"expected end; found {nxt}")
            return pipe.pos, pipe.line, pipe, lst, else_list
        finally:
            del self.vars[mark:]

    def branch(self, kind: str) -> BranchNode:
        pos, line, pipe, lst, else_list = self.parse_control(kind == "if", kind)
        return BranchNode(kind, pos, line, pipe, lst, else_list)

    def else_control(self) -> Node:
        peek = self.peek_non_space()
        if peek.typ == "if":
            return ElseNode(peek.pos, peek.line)
        tok = self.expect("rightDelim", "else")
        return ElseNode(tok.pos, tok.line)

    def block_control(self) -> Node:
        context = "block clause"
        tok = self.next_non_space()
        name = self.parse_template_name(tok, context)
        pipe = self.pipeline(context, "rightDelim")
        block = _Tree(name, self.parse_name, self.text, self.funcs, self.lex, self.tree_set)
        block.root, end = block.item_list()
        if not isinstance(end, EndNode):
            self.errorf(f"unexpected {end} in {context}")
        block.add()
        return TemplateNode(tok.pos, tok.line, name, pipe)

    def template_control(self) -> Node:
        context = "template clause"
        tok = self.next_non_space()
        name = self.parse_template_name(tok, context)
        pipe = None
        if self.next_non_space().typ != "rightDelim":
            self.backup()
            pipe = self.pipeline(context, "rightDelim")
        return TemplateNode(tok.pos, tok.line, name, pipe)

    def parse_template_name(self, tok: Item, context: str) -> str:
        if tok.typ in ("string", "rawString"):
            try:
                return unquote(tok.val)
            except ValueError as exc:
                self.errorf(str(exc))
        self.unexpected(tok, context)
        raise AssertionError

    def command(self) -> CommandNode:
        cmd = CommandNode(self.peek_non_space().pos)
        while True:
            self.peek_non_space()
            operand = self.operand()
            if operand is not None:
                cmd.args.append(operand)
            tok = self.next()
            if tok.typ == "space":
                continue
            if tok.typ in ("rightDelim", "rightParen"):
                self.backup()
            elif tok.typ == "pipe":
                pass
            else:
                self.unexpected(tok, "operand")
            break
        if not cmd.args:
            self.errorf("empty command")
        return cmd

    def operand(self) -> Node | None:
        node = self.term()
        if node is None:
            return None
        if self.peek().typ == "field":
            chain = ChainNode(self.peek().pos, node)
            while self.peek().typ == "field":
                chain.fields.append(self.next().val[1:])
            if isinstance(node, FieldNode):
                return FieldNode(chain.pos, str(chain)[1:].split("."))
            if isinstance(node, VariableNode):
                return VariableNode(chain.pos, str(chain).split("."))
            if isinstance(node, (BoolNode, StringNode, NumberNode, NilNode, DotNode)):
                self.errorf(f"unexpected . after term {quote(str(node))}")
            return chain
        return node

    def term(self) -> Node | None:
        tok = self.next_non_space()
        t = tok.typ
        if t == "identifier":
            if tok.val not in self.funcs:
                self.errorf(f"function {quote(tok.val)} not defined")
            return IdentifierNode(tok.pos, tok.val)
        if t == "dot":
            return DotNode(tok.pos)
        if t == "nil":
            return NilNode(tok.pos)
        if t == "variable":
            name = tok.val.split(".")[0]
            if name not in self.vars:
                self.errorf(f"undefined variable {quote(name)}")
            return VariableNode(tok.pos, tok.val.split("."))
        if t == "field":
            return FieldNode(tok.pos, tok.val[1:].split("."))
        if t == "bool":
            return BoolNode(tok.pos, tok.val == "true")
        if t in ("charConstant", "complex", "number"):
            try:
                return _new_number(tok.pos, tok.val, t)
            except ValueError as exc:
                self.errorf(str(exc))
        if t == "leftParen":
            return self.pipeline("parenthesized pipeline", "rightParen")
        if t in ("string", "rawString"):
            try:
                return StringNode(tok.pos, tok.val, unquote(tok.val))
            except ValueError as exc:
                self.errorf(str(exc))
        self.backup()
        return None


class _ItemStream:
    def __init__(self, items: list[Item]) -> None:
        self.items = items
        self.i = 0

    def next_item(self) -> Item:
        if self.i < len(self.items):
            it = self.items[self.i]
            self.i += 1
            return it
        return self.items[-1]  # after EOF or an error, the lexer's channel is closed: zero items


def _simplify_complex(n: NumberNode) -> None:
    if n.complex128.imag == 0:
        n.is_float, n.float64 = True, n.complex128.real
        f = n.float64
        if f == int(f) and -(2**63) <= f < 2**63:
            n.is_int, n.int64 = True, int(f)
        if f == int(f) and 0 <= f < 2**64:
            n.is_uint, n.uint64 = True, int(f)


def _new_number(pos: int, text: str, typ: str) -> NumberNode:
    n = NumberNode(pos, text)
    if typ == "charConstant":
        try:
            ch, nxt = unquote_char(text, 1, "'")
        except ValueError:
            raise ValueError("invalid syntax") from None
        if text[nxt:] != "'":
            raise ValueError(f"malformed character constant: {text}")
        r = ord(ch) - 0xDC00 if 0xDC80 <= ord(ch) <= 0xDCFF else ord(ch)
        n.int64 = n.uint64 = r
        n.float64 = float(r)
        n.is_int = n.is_uint = n.is_float = True
        return n
    if typ == "complex":
        try:
            n.complex128 = complex(text.replace("_", "")[:-1] + "j")
        except ValueError:
            raise ValueError("expected integer") from None
        n.is_complex = True
        _simplify_complex(n)
        return n
    if text.endswith("i"):
        try:
            f = parse_float(text[:-1])
        except ValueError:
            f = None
        if f is not None:
            n.is_complex, n.complex128 = True, complex(0, f)
            _simplify_complex(n)
            return n
    u = _parse_uint(text)
    if u is not None:
        n.is_uint, n.uint64 = True, u
    i = _parse_int(text)
    if i is not None:
        n.is_int, n.int64 = True, i
        if i == 0:
            n.is_uint, n.uint64 = True, 0
    if n.is_int:
        n.is_float, n.float64 = True, float(n.int64)
    elif n.is_uint:
        n.is_float, n.float64 = True, float(n.uint64)
    else:
        try:
            f = parse_float(text)
        except ValueError:
            f = None
        if f is not None:
            if not any(c in text for c in ".eEpP"):
                raise ValueError(f"integer overflow: {quote(text)}")
            n.is_float, n.float64 = True, f
            if not n.is_int and f == int(f) and -(2**63) <= f < 2**63:
                n.is_int, n.int64 = True, int(f)
            if not n.is_uint and f == int(f) and 0 <= f < 2**64:
                n.is_uint, n.uint64 = True, int(f)
    if not (n.is_int or n.is_uint or n.is_float):
        raise ValueError(f"illegal number syntax: {quote(text)}")
    return n


# =================================================================================== functions


ANY = "interface {}"
VALUE = "reflect.Value"


@dataclass(frozen=True)
class GoFunc:
    """A template function with its Go signature.

    Attributes:
        fn: the Python implementation; raises :class:`GoCallError` for Go's error result.
        params: Go parameter types (``string``, ``float64``, ``int``, ``bool``,
            ``interface {}``, ``reflect.Value``, ``*template.sample``, ``template.queryResult``).
        variadic: the element type of a final ``...T`` parameter, or None.
    """

    fn: Callable[..., Any]
    params: tuple[str, ...]
    variadic: str | None = None


_CAN_BE_NIL_PREFIXES = ("*", "[]", "map[")


def _can_be_nil(typ: str) -> bool:
    return typ in (ANY, VALUE, "template.queryResult") or typ.startswith(_CAN_BE_NIL_PREFIXES)


def _truth(v: Any) -> tuple[bool, bool]:
    """Go's ``isTrue``: (truth, ok)."""
    if v is INVALID or v is None:
        return False, True
    if isinstance(v, bool):
        return v, True
    if isinstance(v, (int, float)):
        return v != 0, True
    if isinstance(v, (str, GoMap, GoSlice)):
        return len(v) > 0, True
    return True, True


def _basic_kind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    return "invalid"


def _eq(arg1: Any, *arg2: Any) -> bool:
    if not arg2:
        raise GoCallError("missing argument for comparison")
    k1 = _basic_kind(arg1)
    for arg in arg2:
        k2 = _basic_kind(arg)
        truth = False
        if k1 != k2:
            if arg1 is not INVALID and arg is not INVALID:
                raise GoCallError("incompatible types for comparison")
        elif k1 == "invalid":
            a_nil = arg1 is INVALID or arg1 is None
            b_nil = arg is INVALID or arg is None
            if a_nil or b_nil:
                truth = a_nil == b_nil
            elif isinstance(arg, (GoMap, GoSlice, GoStruct)):
                raise GoCallError(f"non-comparable type {sprintf('%s', arg)}: {type_name(arg)}")
            elif type_name(arg1) != type_name(arg):
                raise GoCallError(f"non-comparable types {sprint(arg1)}: {type_name(arg1)}, {type_name(arg)}: "
                                  f"{sprint(arg)}")
            else:
                truth = arg1 is arg or arg1 == arg
        else:
            truth = arg1 == arg
        if truth:
            return True
    return False


def _lt(a: Any, b: Any) -> bool:
    k1 = _basic_kind(a)
    if k1 == "invalid":
        raise GoCallError("invalid type for comparison")
    k2 = _basic_kind(b)
    if k2 == "invalid":
        raise GoCallError("invalid type for comparison")
    if k1 != k2:
        raise GoCallError("incompatible types for comparison")
    if k1 == "bool":
        raise GoCallError("invalid type for comparison")
    if k1 == "string":
        return str(a).encode("utf-8", "surrogatepass") < str(b).encode("utf-8", "surrogatepass")
    return bool(a < b)


def _le(a: Any, b: Any) -> bool:
    return _lt(a, b) or _eq(a, b)


def _len(item: Any) -> int:
    if isinstance(item, (str, GoMap, GoSlice)):
        return len(str(item).encode("utf-8", "surrogatepass")) if isinstance(item, str) else len(item)
    if item is INVALID or item is None:
        raise GoCallError("reflect: call of reflect.Value.Type on zero Value")
    if isinstance(item, GoPointer):
        raise GoCallError(f"len of type {item.target.type_name}")
    if isinstance(item, GoTime):
        raise GoCallError("len of type time.Time")
    raise GoCallError(f"len of type {type_name(item)}")


def _index_arg(index: Any, cap: int) -> int:
    if isinstance(index, bool) or not isinstance(index, int):
        if index is INVALID or index is None:
            raise GoCallError("cannot index slice/array with nil")
        raise GoCallError(f"cannot index slice/array with type {type_name(index)}")
    if index < 0 or index > cap:
        raise GoCallError(f"index out of range: {index}")
    return index


def _index(item: Any, *indexes: Any) -> Any:
    if item is INVALID or item is None:
        raise GoCallError("index of untyped nil")
    for idx in indexes:
        if isinstance(item, GoPointer):
            item = item.target
        if isinstance(item, str):
            b = item.encode("utf-8", "surrogatepass")
            x = _index_arg(idx, len(b))
            if x == len(b):
                raise GoCallError("reflect: string index out of range")
            item = GoUint8(b[x])
        elif isinstance(item, GoSlice):
            x = _index_arg(idx, len(item))
            if x == len(item):
                raise GoCallError("reflect: slice index out of range")
            item = item[x]
        elif isinstance(item, GoMap):
            if idx is INVALID or idx is None:
                raise GoCallError(f"value is nil; should be of type {item.key}")
            if type_name(idx) != item.key:
                raise GoCallError(f"value has type {type_name(idx)}; should be {item.key}")
            item = item.get(idx, "" if item.elem == "string" else None)
        else:
            raise GoCallError(f"can't index item of type {type_name(item)}")
    return item


def _slice(item: Any, *indexes: Any) -> Any:
    if item is INVALID or item is None:
        raise GoCallError("slice of untyped nil")
    if len(indexes) > 3:
        raise GoCallError(f"too many slice indexes: {len(indexes)}")
    if isinstance(item, str):
        if len(indexes) == 3:
            raise GoCallError("cannot 3-index slice a string")
        b = item.encode("utf-8", "surrogatepass")
        cap = len(b)
    elif isinstance(item, GoSlice):
        cap = len(item)
    else:
        raise GoCallError(f"can't slice item of type {type_name(item)}")
    idx = [0, cap, cap]
    for i, index in enumerate(indexes):
        idx[i] = _index_arg(index, cap)
    if idx[0] > idx[1]:
        raise GoCallError(f"invalid slice index: {idx[0]} > {idx[1]}")
    if len(indexes) == 3 and idx[1] > idx[2]:
        raise GoCallError(f"invalid slice index: {idx[1]} > {idx[2]}")
    if isinstance(item, str):
        out = b[idx[0]:idx[1]].decode("utf-8", "surrogateescape")
        return GoHTML(out) if isinstance(item, GoHTML) else out
    return GoSlice(item[idx[0]:idx[1]], type_name=item.type_name)


def _printable(v: Any) -> Any:
    if isinstance(v, GoPointer):
        return v.target
    if v is INVALID:
        return "<no value>"
    return v


def _eval_args(args: Sequence[Any]) -> str:
    if len(args) == 1 and isinstance(args[0], str):
        return str(args[0])
    return sprint(*["<no value>" if a is None else _printable(a) for a in args])  # printableValue of nil


def html_escape(s: str) -> str:
    """``template.HTMLEscapeString``."""
    out = []
    for c in s:
        out.append({"\0": "\ufffd", '"': "&#34;", "'": "&#39;", "&": "&amp;", "<": "&lt;", ">": "&gt;"}.get(c, c))
    return "".join(out)


def js_escape(s: str) -> str:
    """``template.JSEscapeString``."""
    out = []
    for c in s:
        o = ord(c)
        if c in "\\'\"<>&=":
            out.append({"\\": "\\\\", "'": "\\'", '"': '\\"', "<": "\\u003C", ">": "\\u003E", "&": "\\u0026",
                        "=": "\\u003D"}[c])
        elif o < 0x20:
            out.append(f"\\u00{o >> 4:X}{o & 15:X}")
        elif o < 0x80 or c.isprintable() or c == " ":
            out.append(c)
        else:
            out.append(f"\\u{o:04X}")
    return "".join(out)


def url_query_escape(s: str) -> str:
    """``url.QueryEscape``: space as ``+``, everything but ``A-Za-z0-9-_.~`` percent-encoded."""
    return quote_plus(s.encode("utf-8", "surrogateescape"), safe="")


def _call(fn: Any, *args: Any) -> Any:
    if fn is INVALID or fn is None:
        raise GoCallError("call of nil")
    name = type_name(fn.target) if isinstance(fn, GoPointer) and False else type_name(fn)
    raise GoCallError(f"non-function of type {name}")


def _not(v: Any) -> bool:
    return not _truth(v)[0]


def _unreachable(*_a: Any) -> Any:  # and/or are evaluated specially, as Go's evalCall does
    raise AssertionError("and/or are special forms")


def _ne(a: Any, b: Any) -> bool:
    return not _eq(a, b)


def _gt(a: Any, b: Any) -> bool:
    return not _le(a, b)


def _ge(a: Any, b: Any) -> bool:
    return not _lt(a, b)


BUILTINS: dict[str, GoFunc] = {
    "and": GoFunc(_unreachable, (VALUE,), VALUE),
    "or": GoFunc(_unreachable, (VALUE,), VALUE),
    "not": GoFunc(_not, (VALUE,)),
    "call": GoFunc(_call, (VALUE,), VALUE),
    "html": GoFunc(lambda *a: html_escape(_eval_args(a)), (), ANY),
    "js": GoFunc(lambda *a: js_escape(_eval_args(a)), (), ANY),
    "urlquery": GoFunc(lambda *a: url_query_escape(_eval_args(a)), (), ANY),
    "index": GoFunc(_index, (VALUE,), VALUE),
    "slice": GoFunc(_slice, (VALUE,), VALUE),
    "len": GoFunc(_len, (VALUE,)),
    "print": GoFunc(lambda *a: sprint(*a), (), ANY),
    "printf": GoFunc(lambda f, *a: sprintf(f, *a), ("string",), ANY),
    "println": GoFunc(lambda *a: sprintln(*a), (), ANY),
    "eq": GoFunc(_eq, (VALUE,), VALUE),
    "ne": GoFunc(_ne, (VALUE, VALUE)),
    "lt": GoFunc(_lt, (VALUE, VALUE)),
    "le": GoFunc(_le, (VALUE, VALUE)),
    "gt": GoFunc(_gt, (VALUE, VALUE)),
    "ge": GoFunc(_ge, (VALUE, VALUE)),
}


# =================================================================================== executor


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


_MAX_EXEC_DEPTH = 100000
_PY_EXEC_DEPTH = 60


class _State:
    def __init__(self, tmpl: GoTemplate, name: str, text: str, parse_name: str) -> None:
        self.tmpl = tmpl
        self.name = name
        self.out: list[str] = []
        self.node: Node | None = None
        self.vars: list[list[Any]] = []
        self.depth = 0
        self.text = text
        self.parse_name = parse_name

    def at(self, node: Node) -> None:
        self.node = node

    def errorf(self, msg: str) -> None:
        name = self.name.replace("%", "%%")
        if self.node is None:
            raise GoTemplateError(f"template: {name}: {msg}")
        pos = self.node.pos
        prefix = self.text[:pos].encode("utf-8", "surrogatepass")
        nl = prefix.rfind(b"\n")
        col = len(prefix) if nl < 0 else len(prefix) - nl - 1
        line = 1 + prefix.count(b"\n")
        context = str(self.node)
        raise GoTemplateError(f"template: {self.parse_name}:{line}:{col}: executing {quote(name)} at <{context}>: "
                              f"{msg}", line=line, column=col)

    def push(self, name: str, value: Any) -> None:
        self.vars.append([name, value])

    def set_var(self, name: str, value: Any) -> None:
        for v in reversed(self.vars):
            if v[0] == name:
                v[1] = value
                return
        self.errorf(f"undefined variable: {name}")

    def var_value(self, name: str) -> Any:
        for v in reversed(self.vars):
            if v[0] == name:
                return v[1]
        self.errorf(f"undefined variable: {name}")

    # ------------------------------------------------------------------ walk
    def walk(self, dot: Any, node: Node) -> None:
        self.at(node)
        if isinstance(node, ActionNode):
            val = self.eval_pipeline(dot, node.pipe)
            if not node.pipe.decl:
                self.print_value(node, val)
        elif isinstance(node, BreakNode):
            raise _Break
        elif isinstance(node, ContinueNode):
            raise _Continue
        elif isinstance(node, BranchNode):
            if node.kind == "range":
                self.walk_range(dot, node)
            else:
                self.walk_if_or_with(node, dot)
        elif isinstance(node, ListNode):
            for n in node.nodes:
                self.walk(dot, n)
        elif isinstance(node, TemplateNode):
            self.walk_template(dot, node)
        elif isinstance(node, TextNode):
            self.out.append(node.text)
        else:
            self.errorf(f"unknown node: {node}")

    def walk_if_or_with(self, node: BranchNode, dot: Any) -> None:
        mark = len(self.vars)
        try:
            val = self.eval_pipeline(dot, node.pipe)
            truth, _ok = _truth(val)
            if truth:
                self.walk(val if node.kind == "with" else dot, node.list)
            elif node.else_list is not None:
                self.walk(dot, node.else_list)
        finally:
            del self.vars[mark:]

    def walk_range(self, dot: Any, r: BranchNode) -> None:
        self.at(r)
        mark0 = len(self.vars)
        try:
            val = self.eval_pipeline(dot, r.pipe)
            if isinstance(val, GoPointer):
                val = val.target
            mark = len(self.vars)

            def one(index: Any, elem: Any) -> None:
                if r.pipe.decl:
                    self.vars[mark - 1][1] = elem
                if len(r.pipe.decl) > 1:
                    self.vars[mark - 2][1] = index
                try:
                    self.walk(elem, r.list)
                except _Continue:
                    pass
                finally:
                    del self.vars[mark:]

            if isinstance(val, GoSlice):
                if len(val):
                    for i, e in enumerate(val):
                        one(i, e)
                    return
            elif isinstance(val, GoMap):
                if len(val):
                    for k in sorted(val, key=lambda k: str(k).encode("utf-8", "surrogatepass")):
                        one(k, val[k])
                    return
            elif val is INVALID or val is None:
                pass
            else:
                self.errorf(f"range can't iterate over {sprint(_printable(val))}")
            if r.else_list is not None:
                self.walk(dot, r.else_list)
        except _Break:
            pass
        finally:
            del self.vars[mark0:]

    def walk_template(self, dot: Any, t: TemplateNode) -> None:
        self.at(t)
        tree = self.tmpl.trees.get(t.name)
        if tree is None or tree.root is None:
            self.errorf(f"template {quote(t.name)} not defined")
        if self.depth >= _PY_EXEC_DEPTH:  # Go stops at 100000; Python's stack ends sooner (same error)
            self.errorf(f"exceeded maximum template depth ({_MAX_EXEC_DEPTH})")
        dot = self.eval_pipeline(dot, t.pipe)
        new = _State(self.tmpl, t.name, self.text, self.parse_name)
        new.out = self.out
        new.depth = self.depth + 1
        new.vars = [["$", dot]]
        assert tree is not None and tree.root is not None
        new.walk(dot, tree.root)

    # ------------------------------------------------------------------ evaluation
    def eval_pipeline(self, dot: Any, pipe: PipeNode | None) -> Any:
        if pipe is None:
            return INVALID
        self.at(pipe)
        value: Any = _MISSING
        for cmd in pipe.cmds:
            value = self.eval_command(dot, cmd, value)
            if value is None:
                value = INVALID  # an interface{} holding nil becomes the zero reflect.Value
        for v in pipe.decl:
            if pipe.is_assign:
                self.set_var(v.ident[0], value)
            else:
                self.push(v.ident[0], value)
        return value

    def not_a_function(self, args: list[Node], final: Any) -> None:
        if len(args) > 1 or final is not _MISSING:
            self.errorf(f"can't give argument to non-function {args[0]}")

    def eval_command(self, dot: Any, cmd: CommandNode, final: Any) -> Any:
        first = cmd.args[0]
        if isinstance(first, FieldNode):
            self.at(first)
            return self.eval_field_chain(dot, dot, first, first.ident, cmd.args, final)
        if isinstance(first, ChainNode):
            return self.eval_chain_node(dot, first, cmd.args, final)
        if isinstance(first, IdentifierNode):
            return self.eval_function(dot, first, cmd, cmd.args, final)
        if isinstance(first, PipeNode):
            self.not_a_function(cmd.args, final)
            return self.eval_pipeline(dot, first)
        if isinstance(first, VariableNode):
            return self.eval_variable_node(dot, first, cmd.args, final)
        self.at(first)
        self.not_a_function(cmd.args, final)
        if isinstance(first, BoolNode):
            return first.value
        if isinstance(first, DotNode):
            return dot
        if isinstance(first, NilNode):
            self.errorf("nil is not a command")
        if isinstance(first, NumberNode):
            return self.ideal_constant(first)
        if isinstance(first, StringNode):
            return first.text
        self.errorf(f"can't evaluate command {quote(str(first))}")

    def ideal_constant(self, c: NumberNode) -> Any:
        self.at(c)
        t = c.text
        is_hex_int = len(t) > 2 and t[0] == "0" and t[1] in "xX" and not any(x in t for x in "pP")
        if c.is_complex:
            return c.complex128
        if c.is_float and not is_hex_int and not t.startswith("'") and any(x in t for x in ".eEpP"):
            return c.float64
        if c.is_int:
            return c.int64
        if c.is_uint:
            self.errorf(f"{t} overflows int")
        return INVALID

    def eval_chain_node(self, dot: Any, chain: ChainNode, args: list[Node], final: Any) -> Any:
        self.at(chain)
        if isinstance(chain.node, NilNode):
            self.errorf(f"indirection through explicit nil in {chain}")
        pipe = self.eval_arg(dot, None, chain.node)
        return self.eval_field_chain(dot, pipe, chain, chain.fields, args, final)

    def eval_variable_node(self, dot: Any, v: VariableNode, args: list[Node] | None, final: Any) -> Any:
        self.at(v)
        value = self.var_value(v.ident[0])
        if len(v.ident) == 1:
            self.not_a_function(args or [v], final)
            return value
        return self.eval_field_chain(dot, value, v, v.ident[1:], args, final)

    def eval_field_chain(self, dot: Any, receiver: Any, node: Node, ident: list[str], args: list[Node] | None,
                         final: Any) -> Any:
        n = len(ident)
        for i in range(n - 1):
            receiver = self.eval_field(dot, ident[i], node, None, _MISSING, receiver)
        return self.eval_field(dot, ident[n - 1], node, args, final, receiver)

    def eval_function(self, dot: Any, node: IdentifierNode, cmd: Node, args: list[Node] | None, final: Any) -> Any:
        self.at(node)
        name = node.ident
        fn = self.tmpl.funcs.get(name)
        builtin = False
        if fn is None:
            fn = BUILTINS.get(name)
            builtin = True
        if fn is None:
            self.errorf(f"{quote(name)} is not a defined function")
        assert fn is not None
        return self.eval_call(dot, fn, builtin, cmd, name, args, final)

    def eval_field(self, dot: Any, name: str, node: Node, args: list[Node] | None, final: Any,
                   receiver: Any) -> Any:
        if receiver is INVALID or receiver is None:
            return INVALID
        typ = type_name(receiver)
        if isinstance(receiver, GoTime):
            entry = _TIME_METHODS.get(name)
            if entry is not None:
                method, params = entry
                return self.eval_call(dot, GoFunc(lambda *a: method(receiver, *a), params), False, node, name, args,
                                      final)
            self.errorf(f"can't evaluate field {name} in type {typ}")
        has_args = (args is not None and len(args) > 1) or final is not _MISSING
        target = receiver.target if isinstance(receiver, GoPointer) else receiver
        if isinstance(target, GoStruct):
            found, value = target.get(name)
            if found:
                if has_args:
                    self.errorf(f"{name} has arguments but cannot be invoked as function")
                return value
        elif isinstance(target, GoMap) and target.key == "string":
            if has_args:
                self.errorf(f"{name} is not a method but has arguments")
            if name in target:
                return target[name]
            return "" if target.elem == "string" else None
        self.errorf(f"can't evaluate field {name} in type {typ}")

    def eval_call(self, dot: Any, fn: GoFunc, builtin: bool, node: Node, name: str, args: list[Node] | None,
                  final: Any) -> Any:
        argn = list(args[1:]) if args is not None else []
        num_in = len(argn) + (1 if final is not _MISSING else 0)
        params = fn.params
        if fn.variadic is not None:
            num_fixed = len(params)
            if num_in < num_fixed:
                self.errorf(f"wrong number of args for {name}: want at least {num_fixed} got {len(argn)}")
        else:
            num_fixed = len(argn)
            if num_in != len(params):
                self.errorf(f"wrong number of args for {name}: want {len(params)} got {num_in}")
        if builtin and name in ("and", "or"):
            v: Any = INVALID
            for a in argn:
                v = self.eval_arg(dot, VALUE, a)
                if _truth(v)[0] == (name == "or"):
                    return v
            if final is not _MISSING:
                v = self.validate_type(final, VALUE)
            return v
        argv: list[Any] = []
        i = 0
        while i < num_fixed and i < len(argn):
            argv.append(self.eval_arg(dot, params[i], argn[i]))
            i += 1
        if fn.variadic is not None:
            while i < len(argn):
                argv.append(self.eval_arg(dot, fn.variadic, argn[i]))
                i += 1
        if final is not _MISSING:
            if fn.variadic is not None:
                t = params[num_in - 1] if num_in - 1 < len(params) else fn.variadic
            else:
                t = params[-1]
            argv.append(self.validate_type(final, t))
        try:
            result = fn.fn(*argv)
        except GoCallError as exc:
            self.at(node)
            self.errorf(f"error calling {name}: {exc}")
        return result

    def validate_type(self, value: Any, typ: str | None) -> Any:
        if value is INVALID or value is _MISSING:
            if typ is None:
                return None
            if _can_be_nil(typ):
                return INVALID if typ == VALUE else None
            self.errorf(f"invalid value; expected {typ}")
        if typ is None or typ in (ANY, VALUE):
            return value
        vt = type_name(value)
        if vt == typ:
            return value
        if isinstance(value, GoPointer) and value.target.type_name == typ:
            return value.target
        self.errorf(f"wrong type for value; expected {typ}; got {vt}")

    def eval_arg(self, dot: Any, typ: str | None, n: Node) -> Any:
        self.at(n)
        if isinstance(n, DotNode):
            return self.validate_type(dot, typ)
        if isinstance(n, NilNode):
            if typ is not None and _can_be_nil(typ):
                return INVALID if typ == VALUE else None
            self.errorf(f"cannot assign nil to {typ}")
        if isinstance(n, FieldNode):
            self.at(n)
            return self.validate_type(self.eval_field_chain(dot, dot, n, n.ident, [n], _MISSING), typ)
        if isinstance(n, VariableNode):
            return self.validate_type(self.eval_variable_node(dot, n, None, _MISSING), typ)
        if isinstance(n, PipeNode):
            return self.validate_type(self.eval_pipeline(dot, n), typ)
        if isinstance(n, IdentifierNode):
            return self.validate_type(self.eval_function(dot, n, n, None, _MISSING), typ)
        if isinstance(n, ChainNode):
            return self.validate_type(self.eval_chain_node(dot, n, [], _MISSING), typ)
        if typ == "bool":
            if isinstance(n, BoolNode):
                return n.value
            self.errorf(f"expected bool; found {n}")
        if typ == "float64":
            if isinstance(n, NumberNode) and n.is_float:
                return n.float64
            self.errorf(f"expected float; found {n}")
        if typ == "int":
            if isinstance(n, NumberNode) and n.is_int:
                return n.int64
            self.errorf(f"expected integer; found {n}")
        if typ == "string":
            if isinstance(n, StringNode):
                return n.text
            self.errorf(f"expected string; found {n}")
        if typ in (ANY, VALUE):
            if isinstance(n, BoolNode):
                return n.value
            if isinstance(n, NumberNode):
                return self.ideal_constant(n)
            if isinstance(n, StringNode):
                return n.text
        self.errorf(f"can't handle {n} for arg of type {typ}")

    def print_value(self, n: Node, v: Any) -> None:
        self.at(n)
        if v is INVALID or v is _MISSING:
            self.out.append("<no value>")
            return
        self.out.append(sprint(_printable(v)))


class _Missing:
    pass


_MISSING = _Missing()


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _utc(t: GoTime) -> tuple[Any, int]:
    from datetime import UTC, datetime, timedelta
    sec, ns = divmod(t.unix_ns, 1_000_000_000)
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=sec), ns


def _next_std_chunk(layout: str) -> tuple[str, str, str]:
    """Go's ``time.nextStdChunk``: (prefix, chunk, suffix); chunk "" when none is left."""
    n = len(layout)
    for i, c in enumerate(layout):
        rest = layout[i:]
        if c == "J" and rest.startswith("Jan"):
            if rest.startswith("January"):
                return layout[:i], "January", layout[i + 7:]
            if not layout[i + 3:i + 4].islower():
                return layout[:i], "Jan", layout[i + 3:]
        elif c == "M":
            if rest.startswith("Mon"):
                if rest.startswith("Monday"):
                    return layout[:i], "Monday", layout[i + 6:]
                if not layout[i + 3:i + 4].islower():
                    return layout[:i], "Mon", layout[i + 3:]
            if rest.startswith("MST"):
                return layout[:i], "MST", layout[i + 3:]
        elif c == "0":
            if i + 1 < n and "1" <= layout[i + 1] <= "6":
                return layout[:i], rest[:2], layout[i + 2:]
            if rest.startswith("002"):
                return layout[:i], "002", layout[i + 3:]
        elif c == "1":
            if rest.startswith("15"):
                return layout[:i], "15", layout[i + 2:]
            return layout[:i], "1", layout[i + 1:]
        elif c == "2":
            if rest.startswith("2006"):
                return layout[:i], "2006", layout[i + 4:]
            return layout[:i], "2", layout[i + 1:]
        elif c == "_":
            if rest.startswith("_2"):
                if rest.startswith("_2006"):
                    return layout[:i + 1], "2006", layout[i + 5:]
                return layout[:i], "_2", layout[i + 2:]
            if rest.startswith("__2"):
                return layout[:i], "__2", layout[i + 3:]
        elif c in "345":
            return layout[:i], c, layout[i + 1:]
        elif c == "P" and rest.startswith("PM"):
            return layout[:i], "PM", layout[i + 2:]
        elif c == "p" and rest.startswith("pm"):
            return layout[:i], "pm", layout[i + 2:]
        elif c in "-Z":
            for tz in (c + "070000", c + "07:00:00", c + "0700", c + "07:00", c + "07"):
                if rest.startswith(tz):
                    return layout[:i], tz, layout[i + len(tz):]
        elif c in ".," and i + 1 < n and layout[i + 1] in "09":
            ch = layout[i + 1]
            j = i + 1
            while j < n and layout[j] == ch:
                j += 1
            if not (j < n and layout[j].isdigit()):
                return layout[:i], layout[i:j], layout[j:]
    return layout, "", ""


def _time_format(t: GoTime, layout: str) -> str:
    """``time.Time.Format`` for a UTC time."""
    d, ns = _utc(t)
    out = []
    while layout:
        prefix, std, layout = _next_std_chunk(layout)
        out.append(prefix)
        if not std:
            break
        hour12 = d.hour % 12 or 12
        simple = {
            "06": f"{d.year % 100:02d}", "2006": f"{d.year:04d}", "Jan": _MONTHS[d.month - 1][:3],
            "January": _MONTHS[d.month - 1], "1": str(d.month), "01": f"{d.month:02d}",
            "Mon": _DAYS[d.weekday()][:3], "Monday": _DAYS[d.weekday()], "2": str(d.day), "_2": f"{d.day:2d}",
            "02": f"{d.day:02d}", "__2": f"{d.timetuple().tm_yday:3d}", "002": f"{d.timetuple().tm_yday:03d}",
            "15": f"{d.hour:02d}", "3": str(hour12), "03": f"{hour12:02d}", "4": str(d.minute),
            "04": f"{d.minute:02d}", "5": str(d.second), "05": f"{d.second:02d}",
            "PM": "PM" if d.hour >= 12 else "AM", "pm": "pm" if d.hour >= 12 else "am", "MST": "UTC",
            "-070000": "+000000", "-07:00:00": "+00:00:00", "-0700": "+0000", "-07:00": "+00:00", "-07": "+00",
        }
        if std in simple:
            out.append(simple[std])
        elif std.startswith("Z"):
            out.append("Z")
        else:  # fractional seconds: .000 (fixed) or .999 (trailing zeros trimmed)
            digits = f"{ns:09d}"[:len(std) - 1]
            if std[1] == "9":
                digits = digits.rstrip("0")
                if digits:
                    out.append(std[0] + digits)
            else:
                out.append(std[0] + digits)
    return "".join(out)


_TIME_METHODS: dict[str, tuple[Callable[..., Any], tuple[str, ...]]] = {
    "Unix": (lambda t: GoInt64(t.unix_ns // 1_000_000_000), ()),
    "UnixMilli": (lambda t: GoInt64(t.unix_ns // 1_000_000), ()),
    "UnixMicro": (lambda t: GoInt64(t.unix_ns // 1_000), ()),
    "UnixNano": (lambda t: GoInt64(t.unix_ns), ()),
    "String": (lambda t: t.string(), ()),
    "Format": (_time_format, ("string",)),
    "Year": (lambda t: _utc(t)[0].year, ()),
    "Month": (lambda t: GoEnum(_utc(t)[0].month, "time.Month", _MONTHS[_utc(t)[0].month - 1]), ()),
    "Weekday": (lambda t: GoEnum((_utc(t)[0].weekday() + 1) % 7, "time.Weekday", _DAYS[_utc(t)[0].weekday()]), ()),
    "YearDay": (lambda t: _utc(t)[0].timetuple().tm_yday, ()),
    "Day": (lambda t: _utc(t)[0].day, ()),
    "Hour": (lambda t: _utc(t)[0].hour, ()),
    "Minute": (lambda t: _utc(t)[0].minute, ()),
    "Second": (lambda t: _utc(t)[0].second, ()),
    "Nanosecond": (lambda t: _utc(t)[1], ()),
    "UTC": (lambda t: t, ()),
    "IsZero": (lambda t: t.unix_ns == -62135596800 * 1_000_000_000, ()),
}
"""The methods of ``*time.Time`` a template can call (those without Duration or Time operands)."""


class GoTemplate:
    """A parsed template set (Go's ``*template.Template`` after ``Parse``).

    Args:
        name: the template's name (Prometheus: ``__alert_<alertname>``).
        text: the template text.
        funcs: the function map (Go's ``Funcs``), besides the builtins.

    Raises:
        GoTemplateError: a parse error, with Go's message and the line.
    """

    def __init__(self, name: str, text: str, funcs: dict[str, GoFunc]) -> None:
        self.name = name
        self.text = text
        self.funcs = funcs
        self.trees: dict[str, _Tree] = {}
        names = set(BUILTINS) | set(funcs)
        stream = _ItemStream(_Lexer(text).run())
        tree = _Tree(name, name, text, names, stream, self.trees)
        tree.parse()
        tree.add()

    def uses_function(self, fname: str) -> bool:
        """Whether any parsed tree calls ``fname``."""
        return any(_uses(t.root, fname) for t in self.trees.values())

    def execute(self, data: Any) -> str:
        """Execute the template on ``data`` (Go's ``Execute``; ``missingkey=zero``).

        Raises:
            GoTemplateError: an execution error, with Go's message, line and column.
        """
        tree = self.trees.get(self.name)
        state = _State(self, self.name, self.text, self.name)
        state.vars = [["$", data]]
        if tree is None or tree.root is None:
            state.errorf(f"{quote(self.name)} is an incomplete or empty template")
        assert tree is not None and tree.root is not None
        try:
            state.walk(data, tree.root)
        except RecursionError:
            raise GoTemplateError(f"template: {self.name}: exceeded maximum template depth") from None
        return "".join(state.out)


def _uses(node: Any, fname: str) -> bool:
    if node is None:
        return False
    if isinstance(node, IdentifierNode):
        return node.ident == fname
    for attr in ("nodes", "args", "cmds"):
        for child in getattr(node, attr, ()) or ():
            if _uses(child, fname):
                return True
    for attr in ("pipe", "list", "else_list", "node"):
        child = getattr(node, attr, None)
        if child is not None and _uses(child, fname):
            return True
    return False


__all__ = [
    "ANY",
    "BUILTINS",
    "VALUE",
    "GoCallError",
    "GoFunc",
    "GoTemplate",
    "GoTemplateError",
    "format_float",
    "html_escape",
    "js_escape",
    "parse_float",
    "unquote",
    "url_query_escape",
]
