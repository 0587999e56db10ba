"""Go's ``fmt`` and ``strconv`` formatting, as the Go templates of alert rules print values.

Ported from Go 1.19.8 (the Go that built promtool 2.42 in Debian bookworm): ``fmt/print.go``
(``Sprint``, ``Sprintln``, ``Sprintf`` with its argument indexes, ``*`` widths and the
``%!verb(type=value)``, ``%!verb(MISSING)``, ``%!(EXTRA ...)``, ``%!(NOVERB)`` forms),
``fmt/format.go`` (padding, flags ``+ - # 0 space``, integers, floats, strings, quoting) and
``strconv/ftoa.go`` (``FormatFloat``: ``%v`` and ``%g`` without precision use the shortest
round-trip digits and switch to exponent form below 1e-4 and from 1e+06 up, as
``strconv`` does when the precision is the shortest -- ``eprec = 6``).

Go values are modelled by Python values: ``str`` (string), ``bool``, ``int`` (int),
``float`` (float64), ``None`` (untyped nil), :class:`GoMap`, :class:`GoHTML`,
:class:`GoStruct`, :class:`GoPointer`, :class:`GoSlice`, :class:`GoTime`, and
:data:`INVALID` (Go's zero ``reflect.Value``).
"""

from __future__ import annotations

import math
import struct
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any


class _Invalid:
    """Go's zero ``reflect.Value`` (a missing value; templates print it as ``<no value>``)."""

    def __repr__(self) -> str:
        return "INVALID"


INVALID = _Invalid()


class GoMap(dict[Any, Any]):
    """A Go map; ``elem`` names the element type (``string`` or ``interface {}``)."""

    def __init__(self, items: Any = (), *, key: str = "string", elem: str = "string") -> None:
        super().__init__(items)
        self.key = key
        self.elem = elem

    @property
    def type_name(self) -> str:
        return f"map[{self.key}]{self.elem}"


class GoInt64(int):
    """A Go ``int64`` (``time.Time.Unix`` and friends return one)."""

    __slots__ = ()


class GoUint8(int):
    """A Go ``byte`` (``index`` of a string returns one)."""

    __slots__ = ()


class GoEnum(int):
    """An integer of a named type with a ``String`` method (``time.Month``, ``time.Weekday``)."""

    def __new__(cls, value: int, type_name: str, text: str) -> GoEnum:
        obj = super().__new__(cls, value)
        obj.type_name = type_name
        obj.text = text
        return obj

    type_name: str
    text: str


class GoHTML(str):
    """``html/template.HTML`` (what ``safeHtml`` returns): a string kind of another type."""

    __slots__ = ()


@dataclass
class GoStruct:
    """A Go struct value: its type's name and its fields in declaration order."""

    type_name: str
    fields: list[tuple[str, str, Any]]  # (name, Go type, value)

    def get(self, name: str) -> tuple[bool, Any]:
        for n, _t, v in self.fields:
            if n == name:
                return True, v
        return False, None


@dataclass
class GoPointer:
    """A non-nil pointer to a struct (``*template.sample``)."""

    type_name: str
    target: GoStruct


class GoSlice(list[Any]):
    """A Go slice; ``type_name`` e.g. ``template.queryResult``."""

    def __init__(self, items: Any = (), *, type_name: str = "[]interface {}") -> None:
        super().__init__(items)
        self.type_name = type_name


@dataclass(frozen=True)
class GoTime:
    """A ``*time.Time`` in UTC, nanoseconds since the epoch (what ``toTime`` returns)."""

    unix_ns: int

    def string(self) -> str:
        """``time.Time.String``: ``2006-01-02 15:04:05.999999999 +0000 UTC``."""
        sec, ns = divmod(self.unix_ns, 1_000_000_000)
        t = datetime.fromtimestamp(0, tz=UTC) + _timedelta(sec)
        frac = f"{ns:09d}".rstrip("0")
        return f"{t.year:04d}-{t.month:02d}-{t.day:02d} {t.hour:02d}:{t.minute:02d}:{t.second:02d}" + \
            (f".{frac}" if frac else "") + " +0000 UTC"


def _timedelta(sec: int) -> Any:
    from datetime import timedelta
    return timedelta(seconds=sec)


def type_name(v: Any) -> str:
    """The Go type of a modelled value, as ``%T`` prints it."""
    if v is None:
        return "<nil>"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, GoInt64):
        return "int64"
    if isinstance(v, GoUint8):
        return "uint8"
    if isinstance(v, GoEnum):
        return v.type_name
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float64"
    if isinstance(v, complex):
        return "complex128"
    if isinstance(v, GoHTML):
        return "template.HTML"
    if isinstance(v, str):
        return "string"
    if isinstance(v, (GoMap, GoStruct, GoPointer, GoSlice)):
        return v.type_name
    if isinstance(v, GoTime):
        return "*time.Time"
    return "?" + type(v).__name__ + "?"


def is_string_kind(v: Any) -> bool:
    return isinstance(v, str)


# ---------------------------------------------------------------------------------- strconv


def _is_print(r: str) -> bool:
    """``strconv.IsPrint``: letters, marks, numbers, punctuation, symbols and ASCII space."""
    if r == " ":
        return True
    return unicodedata.category(r)[0] in "LMNPS"


def quote(s: str, *, ascii_only: bool = False, quote_char: str = '"') -> str:
    """``strconv.Quote`` (``QuoteToASCII`` with ``ascii_only``)."""
    out = [quote_char]
    for r in s:
        out.append(_escape_rune(r, quote_char, ascii_only))
    out.append(quote_char)
    return "".join(out)


def _escape_rune(r: str, q: str, ascii_only: bool) -> str:
    o = ord(r)
    if r == q or r == "\\":
        return "\\" + r
    if ascii_only:
        if o < 0x80 and _is_print(r):
            return r
    elif _is_print(r):
        return r
    simple = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}
    if r in simple:
        return simple[r]
    if o < 0x20 or o == 0x7F:
        return f"\\x{o:02x}"
    if 0xD800 <= o <= 0xDFFF:  # a lone surrogate is not a valid rune
        return "\\ufffd"
    if o < 0x10000:
        return f"\\u{o:04x}"
    return f"\\U{o:08x}"


def quote_rune(r: int, *, ascii_only: bool = False) -> str:
    """``strconv.QuoteRune``."""
    if r < 0 or r > 0x10FFFF or 0xD800 <= r <= 0xDFFF:
        r = 0xFFFD
    return quote(chr(r), ascii_only=ascii_only, quote_char="'")


def can_backquote(s: str) -> bool:
    """``strconv.CanBackquote``."""
    for r in s:
        if r == "`" or r == "\ufeff":
            return False
        if (ord(r) < 0x20 and r != "\t") or r == "\x7f":
            return False
    return True


def _shortest(v: float) -> tuple[str, int]:
    """Shortest round-trip decimal digits of finite ``abs(v)`` and the decimal point
    position (``0.d1d2... * 10**dp``); zero is ``("", 0)``."""
    if v == 0:
        return "", 0
    _sign, digits, exp = Decimal(repr(abs(v))).as_tuple()
    assert isinstance(exp, int)
    ds = "".join(map(str, digits))
    dp = len(ds) + exp
    ds = ds.rstrip("0")
    return ds, dp


def _rounded(v: float, nd: int) -> tuple[str, int]:
    """``abs(v)`` rounded (exactly, half to even) to ``nd`` significant digits; trailing
    zeros trimmed, as strconv's ``decimal.Round`` leaves them."""
    if v == 0:
        return "", 0
    s = f"{abs(v):.{max(nd - 1, 0)}e}"
    mant, e = s.split("e")
    ds = mant.replace(".", "").rstrip("0")
    return ds, int(e) + 1


def _fmt_e(neg: bool, ds: str, dp: int, prec: int, ch: str) -> str:
    out = ["-"] if neg else []
    out.append(ds[0] if ds else "0")
    if prec > 0:
        out.append(".")
        tail = ds[1:prec + 1]
        out.append(tail + "0" * (prec - len(tail)))
    exp = dp - 1 if ds else 0
    out.append(ch)
    out.append("-" if exp < 0 else "+")
    exp = abs(exp)
    out.append(f"{exp:02d}")
    return "".join(out)


def _fmt_f(neg: bool, ds: str, dp: int, prec: int) -> str:
    out = ["-"] if neg else []
    if dp > 0:
        head = ds[:dp]
        out.append(head + "0" * (dp - len(head)))
    else:
        out.append("0")
    if prec > 0:
        out.append(".")
        frac = []
        for i in range(prec):
            j = dp + i
            frac.append(ds[j] if 0 <= j < len(ds) else "0")
        out.append("".join(frac))
    return "".join(out)


def format_float(v: float, fmt: str, prec: int) -> str:
    """``strconv.FormatFloat(v, fmt, prec, 64)`` for ``fmt`` in ``e E f g G b x X``.

    ``prec`` -1 means the shortest digits that read back as ``v``.
    """
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    neg = math.copysign(1.0, v) < 0
    if fmt == "b":
        return _fmt_b(v)
    if fmt in "xX":
        return _fmt_x(v, prec, fmt)
    shortest = prec < 0
    if shortest:
        ds, dp = _shortest(v)
        if fmt in "eE":
            prec = max(len(ds) - 1, 0)
        elif fmt == "f":
            prec = max(len(ds) - dp, 0)
        else:
            prec = len(ds)
    elif fmt in "eE":
        body = f"{abs(v):.{prec}e}"
        return ("-" if neg else "") + (body if fmt == "e" else body.upper())
    elif fmt == "f":
        return ("-" if neg else "") + f"{abs(v):.{prec}f}"
    else:
        if prec == 0:
            prec = 1
        ds, dp = _rounded(v, prec)
    if fmt in "eE":
        return _fmt_e(neg, ds, dp, prec, fmt)
    if fmt == "f":
        return _fmt_f(neg, ds, dp, prec)
    # 'g' / 'G'
    nd = len(ds)
    eprec = prec
    if eprec > nd and nd >= dp:
        eprec = nd
    if shortest:
        eprec = 6
    exp = dp - 1
    if exp < -4 or exp >= eprec:
        if prec > nd:
            prec = nd
        return _fmt_e(neg, ds, dp, prec - 1, "e" if fmt == "g" else "E")
    if prec > dp:
        prec = nd
    return _fmt_f(neg, ds, dp, max(prec - dp, 0))


def _bits(v: float) -> int:
    return int(struct.unpack("<Q", struct.pack("<d", v))[0])


def _fmt_b(v: float) -> str:
    bits = _bits(v)
    neg = bits >> 63
    exp = (bits >> 52) & 0x7FF
    mant = bits & ((1 << 52) - 1)
    if exp == 0:
        exp += 1
    else:
        mant |= 1 << 52
    exp += -1023 - 52
    return ("-" if neg else "") + f"{mant}p" + ("+" if exp >= 0 else "") + str(exp)


def _fmt_x(v: float, prec: int, fmt: str) -> str:
    """``%x`` of a float: ``-0x1.8p+00`` (mantissa 1.xxx, exponent at least 2 digits)."""
    bits = _bits(v)
    neg = bits >> 63
    exp = (bits >> 52) & 0x7FF
    mant = bits & ((1 << 52) - 1)
    if exp == 0:
        exp = -1022
    else:
        mant |= 1 << 52
        exp -= 1023
    if mant == 0:
        exp = 0
    # shift mantissa so the leading 1 is bit 60 (as strconv's fmtX)
    mant <<= 60 - 52
    while mant != 0 and mant & (1 << 60) == 0:
        mant <<= 1
        exp -= 1
    if 0 <= prec < 15:
        shift = prec * 4
        extra = (mant << shift) & ((1 << 60) - 1)
        mant >>= 60 - shift
        if extra | (mant & 1) > 1 << 59:
            mant += 1
        mant <<= 60 - shift
        if mant & (1 << 61):
            mant >>= 1
            exp += 1
    hexd = "0123456789abcdef" if fmt == "x" else "0123456789ABCDEF"
    out = ["-"] if neg else []
    out.append("0" + ("x" if fmt == "x" else "X"))
    out.append(str((mant >> 60) & 1))
    mant <<= 4
    if prec < 0 and mant & ((1 << 64) - 1) != 0:
        out.append(".")
        m = mant & ((1 << 64) - 1)
        while m != 0:
            out.append(hexd[(m >> 60) & 15])
            m = (m << 4) & ((1 << 64) - 1)
    elif prec > 0:
        out.append(".")
        m = mant & ((1 << 64) - 1)
        for _ in range(prec):
            out.append(hexd[(m >> 60) & 15])
            m = (m << 4) & ((1 << 64) - 1)
    out.append("p" if fmt == "x" else "P")
    out.append("-" if exp < 0 else "+")
    exp = abs(exp)
    out.append(f"{exp:02d}")
    return "".join(out)


def go_float(v: float) -> str:
    """``fmt.Sprint(float64)``: ``strconv.FormatFloat(v, 'g', -1, 64)`` (``1e+06``, ``123456``, ``1e-05``)."""
    return format_float(v, "g", -1)


# ---------------------------------------------------------------------------------- fmt


@dataclass
class _Flags:
    minus: bool = False
    plus: bool = False
    sharp: bool = False
    space: bool = False
    zero: bool = False
    plus_v: bool = False
    sharp_v: bool = False
    wid: int | None = None
    prec: int | None = None


@dataclass
class _Printer:
    buf: list[str] = field(default_factory=list)
    f: _Flags = field(default_factory=_Flags)
    erroring: bool = False
    arg: Any = None
    has_arg: bool = False

    def write(self, s: str) -> None:
        self.buf.append(s)

    # --------------------------------------------------------------- padding
    def _padding(self, n: int) -> str:
        if n <= 0:
            return ""
        return ("0" if self.f.zero else " ") * n

    def pad(self, s: str) -> None:
        f = self.f
        if not f.wid:
            self.write(s)
            return
        width = f.wid - len(s)
        if not f.minus:
            self.write(self._padding(width) + s)
        else:
            self.write(s + self._padding(width))

    # --------------------------------------------------------------- basic kinds
    def fmt_boolean(self, v: bool) -> None:
        self.pad("true" if v else "false")

    def fmt_integer(self, u: int, base: int, signed: bool, verb: str, upper: bool) -> None:
        f = self.f
        u &= (1 << 64) - 1
        negative = signed and u >= 1 << 63
        if negative:
            u = (1 << 64) - u
        prec = 0
        if f.prec is not None:
            prec = f.prec
            if prec == 0 and u == 0:
                old = f.zero
                f.zero = False
                self.write(self._padding(f.wid or 0))
                f.zero = old
                return
        elif f.zero and f.wid is not None:
            prec = f.wid
            if negative or f.plus or f.space:
                prec -= 1
        digits = "0123456789ABCDEFX" if upper else "0123456789abcdefx"
        if u == 0:
            s = "0"
        else:
            out = []
            while u:
                out.append(digits[u % base])
                u //= base
            s = "".join(reversed(out))
        if len(s) < prec:
            s = "0" * (prec - len(s)) + s
        if f.sharp:
            if base == 2:
                s = "0b" + s
            elif base == 8:
                if s[0] != "0":
                    s = "0" + s
            elif base == 16:
                s = "0" + digits[16] + s
        if verb == "O":
            s = "0o" + s
        if negative:
            s = "-" + s
        elif f.plus:
            s = "+" + s
        elif f.space:
            s = " " + s
        old = f.zero
        f.zero = False
        self.pad(s)
        f.zero = old

    def fmt_unicode(self, u: int) -> None:
        f = self.f
        prec = 4
        if f.prec is not None and f.prec > 4:
            prec = f.prec
        u &= (1 << 64) - 1
        s = f"{u:X}"
        if len(s) < prec:
            s = "0" * (prec - len(s)) + s
        s = "U+" + s
        if f.sharp and u <= 0x10FFFF and not (0xD800 <= u <= 0xDFFF) and _is_print(chr(u)):
            s += " '" + chr(u) + "'"
        old = f.zero
        f.zero = False
        self.pad(s)
        f.zero = old

    def fmt_c(self, c: int) -> None:
        c &= (1 << 64) - 1
        if c > 0x10FFFF or 0xD800 <= c <= 0xDFFF:
            c = 0xFFFD
        self.pad(chr(c))

    def fmt_qc(self, c: int) -> None:
        c &= (1 << 64) - 1
        if c > 0x10FFFF:
            c = 0xFFFD
        self.pad(quote_rune(c, ascii_only=self.f.plus))

    def fmt_float(self, v: float, verb: str, prec: int) -> None:
        f = self.f
        if f.prec is not None:
            prec = f.prec
        num = format_float(v, verb, prec)
        if num[0] in "+-":
            sign, num = num[0], num[1:]
        else:
            sign = "+"
        if f.space and sign == "+" and not f.plus:
            sign = " "
        if num[0] in "IN":  # Inf, NaN: no zero padding; NaN carries no sign unless asked
            old = f.zero
            f.zero = False
            if num[0] == "N" and not f.space and not f.plus:
                self.pad(num)
            else:
                self.pad(sign + num)
            f.zero = old
            return
        if f.sharp and verb != "b":
            digits = 0
            if verb in ("v", "g", "G", "x"):
                digits = prec if prec != -1 else 6
            tail = ""
            body = num
            for i, ch in enumerate(num):
                if ch in "pP" or (ch in "eE" and verb not in "xX"):
                    tail, body = num[i:], num[:i]
                    break
            has_point = "." in body
            saw_nonzero = False
            for ch in body:
                if ch == ".":
                    continue
                if ch != "0":
                    saw_nonzero = True
                if saw_nonzero:
                    digits -= 1
            if not has_point:
                if body == "0":
                    digits -= 1
                body += "."
            if digits > 0:
                body += "0" * digits
            num = body + tail
        if f.plus or sign != "+":
            if f.zero and f.wid is not None and f.wid > len(num) + 1:
                self.write(sign + "0" * (f.wid - len(num) - 1) + num)
                return
            self.pad(sign + num)
            return
        self.pad(num)

    def truncate(self, s: str) -> str:
        if self.f.prec is not None:
            return s[:self.f.prec]
        return s

    def fmt_s(self, s: str) -> None:
        self.pad(self.truncate(s))

    def fmt_sx(self, s: str, upper: bool) -> None:
        f = self.f
        b = s.encode("utf-8", "surrogateescape")
        length = len(b)
        if f.prec is not None and f.prec < length:
            length = f.prec
        width = 2 * length
        if width > 0:
            if f.space:
                if f.sharp:
                    width *= 2
                width += length - 1
            elif f.sharp:
                width += 2
        else:
            if f.wid is not None:
                self.write(self._padding(f.wid))
            return
        if f.wid is not None and f.wid > width and not f.minus:
            self.write(self._padding(f.wid - width))
        digits = "0123456789ABCDEFX" if upper else "0123456789abcdefx"
        out = []
        if f.sharp:
            out.append("0" + digits[16])
        for i in range(length):
            if f.space and i > 0:
                out.append(" ")
                if f.sharp:
                    out.append("0" + digits[16])
            c = b[i]
            out.append(digits[c >> 4] + digits[c & 15])
        self.write("".join(out))
        if f.wid is not None and f.wid > width and f.minus:
            self.write(self._padding(f.wid - width))

    def fmt_q(self, s: str) -> None:
        s = self.truncate(s)
        if self.f.sharp and can_backquote(s):
            self.pad("`" + s + "`")
            return
        self.pad(quote(s, ascii_only=self.f.plus))

    # --------------------------------------------------------------- dispatch
    def bad_verb(self, verb: str, value: Any) -> None:
        self.erroring = True
        self.write("%!" + verb + "(")
        if value is None or value is INVALID:
            self.write("<nil>")
        else:
            self.write(type_name(value) + "=")
            self.print_arg(value, "v")
        self.write(")")
        self.erroring = False

    def fmt_bool(self, v: bool, verb: str) -> None:
        if verb in "tv":
            self.fmt_boolean(v)
        else:
            self.bad_verb(verb, v)

    def fmt_int(self, v: int, verb: str, value: Any) -> None:
        if verb in "vd":
            self.fmt_integer(v, 10, True, verb, False)
        elif verb == "b":
            self.fmt_integer(v, 2, True, verb, False)
        elif verb in "oO":
            self.fmt_integer(v, 8, True, verb, False)
        elif verb == "x":
            self.fmt_integer(v, 16, True, verb, False)
        elif verb == "X":
            self.fmt_integer(v, 16, True, verb, True)
        elif verb == "c":
            self.fmt_c(v)
        elif verb == "q":
            self.fmt_qc(v)
        elif verb == "U":
            self.fmt_unicode(v)
        else:
            self.bad_verb(verb, value)

    def fmt_uint(self, v: int, verb: str) -> None:
        bases = {"v": 10, "d": 10, "b": 2, "o": 8, "O": 8, "x": 16, "X": 16}
        if verb in bases:
            self.fmt_integer(v, bases[verb], False, verb, verb == "X")
        else:
            self.fmt_int(v, verb, v)

    def fmt_float64(self, v: float, verb: str) -> None:
        if verb == "v":
            self.fmt_float(v, "g", -1)
        elif verb in "bgGxX":
            self.fmt_float(v, verb, -1)
        elif verb in "feE":
            self.fmt_float(v, verb, 6)
        elif verb == "F":
            self.fmt_float(v, "f", 6)
        else:
            self.bad_verb(verb, v)

    def fmt_complex(self, v: complex, verb: str) -> None:
        if verb not in "vbgGxXfFeE":
            self.bad_verb(verb, v)
            return
        old_plus = self.f.plus
        self.write("(")
        self.fmt_float64(v.real, verb)
        self.f.plus = True
        self.fmt_float64(v.imag, verb)
        self.write("i)")
        self.f.plus = old_plus

    def fmt_string(self, v: str, verb: str, orig: Any = None) -> None:
        if verb == "v":
            if self.f.sharp_v:
                self.fmt_q(v)
            else:
                self.fmt_s(v)
        elif verb == "s":
            self.fmt_s(v)
        elif verb == "x":
            self.fmt_sx(v, False)
        elif verb == "X":
            self.fmt_sx(v, True)
        elif verb == "q":
            self.fmt_q(v)
        else:
            self.bad_verb(verb, v if orig is None else orig)

    def print_arg(self, arg: Any, verb: str, depth: int = 0) -> None:
        if arg is None:
            if verb in "Tv":
                self.pad("<nil>")
            else:
                self.bad_verb(verb, None)
            return
        if verb == "T":
            self.fmt_s(type_name(arg))
            return
        if verb == "p":
            if isinstance(arg, (GoMap, GoPointer, GoSlice, GoTime)):
                self.fmt_integer(0xC000010000, 16, False, "v", False)
            else:
                self.bad_verb(verb, arg)
            return
        if verb == "w" and isinstance(arg, (GoMap, GoStruct, GoPointer, GoSlice, GoTime)) and not self.erroring:
            self.bad_verb(verb, arg)  # handleMethods: %w outside Errorf
            return
        if isinstance(arg, GoEnum) and verb in "vsxXq" and not self.erroring and not self.f.sharp_v:
            self.fmt_string(arg.text, verb)  # handleMethods: a Stringer
        elif isinstance(arg, bool):
            self.fmt_bool(arg, verb)
        elif isinstance(arg, GoUint8):
            self.fmt_uint(arg, verb)
        elif isinstance(arg, int):
            self.fmt_int(arg, verb, arg)
        elif isinstance(arg, float):
            self.fmt_float64(arg, verb)
        elif isinstance(arg, complex):
            self.fmt_complex(arg, verb)
        elif isinstance(arg, str):
            self.fmt_string(str(arg), verb, arg)
        elif isinstance(arg, GoTime):
            if verb in "vsxXq" and not self.f.sharp_v and not self.erroring:
                self.fmt_string(arg.string(), verb)
            else:  # the time.Time struct: wall (ns), ext (seconds since year 1), loc (nil for UTC)
                sec, ns = divmod(arg.unix_ns, 1_000_000_000)
                self.write("&{")
                if verb in "vdboxX":
                    self.fmt_int(ns, verb, ns)
                    self.write(" ")
                    self.fmt_int(sec + 62135596800, verb, sec)
                    self.write(" ")
                    self.fmt_integer(0, 10, False, verb, False) if verb != "v" else self.write("<nil>")
                else:
                    ext = sec + 62135596800
                    self.write(f"%!{verb}(uint64={ns}) %!{verb}(int64={ext}) %!{verb}(*time.Location=<nil>)")
                self.write("}")
        elif isinstance(arg, GoMap):
            if self.f.sharp_v:
                self.write(arg.type_name + "{")
            else:
                self.write("map[")
            for i, k in enumerate(sorted(arg, key=_sort_key)):
                if i:
                    self.write(", " if self.f.sharp_v else " ")
                self.print_arg(k, verb, depth + 1)
                self.write(":")
                v = arg[k]
                if v is None and arg.elem == "interface {}":
                    self.write("<nil>" if not self.f.sharp_v else "interface {}(nil)")
                else:
                    self.print_arg(v, verb, depth + 1)
            self.write("}" if self.f.sharp_v else "]")
        elif isinstance(arg, GoStruct):
            if self.f.sharp_v:
                self.write(arg.type_name)
            self.write("{")
            for i, (name, _t, v) in enumerate(arg.fields):
                if i:
                    self.write(", " if self.f.sharp_v else " ")
                if self.f.plus_v or self.f.sharp_v:
                    self.write(name + ":")
                self.print_arg(v, verb, depth + 1)
            self.write("}")
        elif isinstance(arg, GoPointer):
            if depth == 0:
                self.write("&")
                self.print_arg(arg.target, verb, depth + 1)
            else:
                self.fmt_integer(0xC000010000, 16, False, "v", False) if verb == "v" else self.bad_verb(verb, arg)
        elif isinstance(arg, GoSlice):
            self.write("[")
            for i, v in enumerate(arg):
                if i:
                    self.write(" ")
                self.print_arg(v, verb, depth + 1)
            self.write("]")
        elif arg is INVALID:
            self.write("<invalid reflect.Value>" if depth == 0 else "<nil>")
        else:
            self.write("?" + type(arg).__name__ + "?")


def _sort_key(k: Any) -> Any:
    return (0, k) if isinstance(k, str) else (1, str(k))


def sprint(*args: Any) -> str:
    """``fmt.Sprint``: operands joined, with a space between two that are not strings."""
    p = _Printer()
    prev_string = False
    for i, arg in enumerate(args):
        is_string = isinstance(arg, str)
        if i > 0 and not is_string and not prev_string:
            p.write(" ")
        p.f = _Flags()
        p.print_arg(arg, "v")
        prev_string = is_string
    return "".join(p.buf)


def sprintln(*args: Any) -> str:
    """``fmt.Sprintln``: operands joined by spaces, then a newline."""
    p = _Printer()
    for i, arg in enumerate(args):
        if i > 0:
            p.write(" ")
        p.f = _Flags()
        p.print_arg(arg, "v")
    p.write("\n")
    return "".join(p.buf)


def _parsenum(s: str, start: int, end: int) -> tuple[int, bool, int]:
    if start >= end:
        return 0, False, end
    num = 0
    isnum = False
    i = start
    while i < end and "0" <= s[i] <= "9":
        if num > 1_000_000 or num < -1_000_000:
            return 0, False, end
        num = num * 10 + ord(s[i]) - 48
        isnum = True
        i += 1
    return num, isnum, i


def sprintf(fmt: str, *a: Any) -> str:
    """``fmt.Sprintf`` with Go's verbs, flags, ``[n]`` argument indexes and ``*`` widths."""
    p = _Printer()
    end = len(fmt)
    arg_num = 0
    after_index = False
    reordered = False
    i = 0

    def arg_number(arg_num: int, i: int) -> tuple[int, int, bool, bool]:
        """(argNum, i, found, good)."""
        nonlocal reordered
        if i >= end or fmt[i] != "[":
            return arg_num, i, False, True
        reordered = True
        # parseArgNumber
        sub = fmt[i:]
        if len(sub) >= 3:
            for j in range(1, len(sub)):
                if sub[j] == "]":
                    width, ok, newi = _parsenum(sub, 1, j)
                    if not ok or newi != j:
                        return arg_num, i + j + 1, False, False
                    index = width - 1
                    if 0 <= index < len(a):
                        return index, i + j + 1, True, True
                    return arg_num, i + j + 1, True, False
        return arg_num, i + 1, False, False

    while i < end:
        good = True
        last = i
        while i < end and fmt[i] != "%":
            i += 1
        if i > last:
            p.write(fmt[last:i])
        if i >= end:
            break
        i += 1
        p.f = _Flags()
        f = p.f
        simple_done = False
        while i < end:
            c = fmt[i]
            if c == "#":
                f.sharp = True
            elif c == "0":
                f.zero = not f.minus
            elif c == "+":
                f.plus = True
            elif c == "-":
                f.minus = True
                f.zero = False
            elif c == " ":
                f.space = True
            else:
                if "a" <= c <= "z" and arg_num < len(a):
                    if c == "v":
                        f.sharp_v, f.sharp = f.sharp, False
                        f.plus_v, f.plus = f.plus, False
                    p.print_arg(a[arg_num], c)
                    arg_num += 1
                    i += 1
                    simple_done = True
                break
            i += 1
        if simple_done:
            continue
        arg_num, i, after_index, ok = arg_number(arg_num, i)
        good = good and ok
        if i < end and fmt[i] == "*":
            i += 1
            f.wid, present, arg_num = _int_from_arg(a, arg_num)
            if not present:
                p.write("%!(BADWIDTH)")
                f.wid = None
            elif f.wid is not None and f.wid < 0:
                f.wid = -f.wid
                f.minus = True
                f.zero = False
            after_index = False
        else:
            wid, present, i = _parsenum(fmt, i, end)
            f.wid = wid if present else None
            if after_index and present:
                good = False
        if i + 1 < end and fmt[i] == ".":
            i += 1
            if after_index:
                good = False
            arg_num, i, after_index, ok = arg_number(arg_num, i)
            good = good and ok
            if i < end and fmt[i] == "*":
                i += 1
                prec, present, arg_num = _int_from_arg(a, arg_num)
                if prec is not None and prec < 0:
                    prec, present = 0, False
                f.prec = prec if present else None
                if not present:
                    p.write("%!(BADPREC)")
                after_index = False
            else:
                prec, present, i = _parsenum(fmt, i, end)
                f.prec = prec if present else 0
        if not after_index:
            arg_num, i, after_index, ok = arg_number(arg_num, i)
            good = good and ok
        if i >= end:
            p.write("%!(NOVERB)")
            break
        verb = fmt[i]
        i += 1
        if verb == "%":
            p.write("%")
        elif not good:
            p.write("%!" + verb + "(BADINDEX)")
        elif arg_num >= len(a):
            p.write("%!" + verb + "(MISSING)")
        else:
            if verb == "v":
                f.sharp_v, f.sharp = f.sharp, False
                f.plus_v, f.plus = f.plus, False
            p.print_arg(a[arg_num], verb)
            arg_num += 1
    if not reordered and arg_num < len(a):
        p.f = _Flags()
        p.write("%!(EXTRA ")
        for j, arg in enumerate(a[arg_num:]):
            if j:
                p.write(", ")
            if arg is None:
                p.write("<nil>")
            else:
                p.write(type_name(arg) + "=")
                p.print_arg(arg, "v")
        p.write(")")
    return "".join(p.buf)


def _int_from_arg(a: tuple[Any, ...], arg_num: int) -> tuple[int | None, bool, int]:
    if arg_num < len(a):
        v = a[arg_num]
        ok = isinstance(v, int) and not isinstance(v, bool)
        num = v if ok else 0
        if ok and (num > 1_000_000 or num < -1_000_000):
            return 0, False, arg_num + 1
        return num, ok, arg_num + 1
    return 0, False, arg_num
