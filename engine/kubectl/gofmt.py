"""Byte-exact ports of the Go library code that shapes kubectl's output.

kubectl's text is produced by a handful of Go routines whose details show in every line:

* :class:`TabWriter` -- Go's ``text/tabwriter`` (``format``/``writeLines``): column blocks
  end at a line with fewer cells, the last cell of a line is never padded, widths count runes.
  ``kubectl describe`` uses ``tabwriter.Init(buf, 0, 8, 2, ' ', 0)``
  (``staging/src/k8s.io/kubectl/pkg/describe/describe.go``, ``tabbedString``) and
  ``kubectl get`` ``NewWriter(out, 6, 4, 3, ' ', RememberWidths)``
  (``staging/src/k8s.io/cli-runtime/pkg/printers/tabwriter.go``).
* :func:`go_sort` -- Go's unstable ``sort.Sort`` (pattern-defeating quicksort,
  ``src/sort/zsortinterface.go``), so that events with equal timestamps come out in the
  order kubectl prints them.
* :func:`go_json` -- ``json.MarshalIndent(obj, "", "    ")`` of an unstructured object, as
  ``kubectl -o json`` prints it (sorted keys, HTML-safe escapes, Go float formatting).
* :func:`human_duration` -- ``k8s.io/apimachinery/pkg/util/duration.HumanDuration``.
* :func:`rfc1123z` -- ``time.Format(time.RFC1123Z)``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, MutableSequence
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, TypeVar

T = TypeVar("T")

# ----------------------------------------------------------------- text/tabwriter


class TabWriter:
    """Go's ``text/tabwriter.Writer`` with a space pad character and no flags.

    Cells are separated by ``\\t``; lines end with ``\\n``. Text is buffered until
    :meth:`flush`, which aligns the buffered lines (Go's ``Writer.Flush``); a flush in the
    middle of a text starts new column blocks, as kubectl's ``DescribeEvents`` relies on.

    Args:
        minwidth: minimal cell width including padding.
        tabwidth: width of a tab (unused with a space pad character; kept for the signature).
        padding: padding added to a cell's width when computing the column width.
    """

    def __init__(self, minwidth: int, tabwidth: int, padding: int) -> None:
        self.minwidth = minwidth
        self.tabwidth = tabwidth
        self.padding = padding
        self._pending = ""
        self._out: list[str] = []

    def write(self, text: str) -> None:
        """Buffer ``text`` (cells separated by tabs, lines by newlines)."""
        self._pending += text

    def flush(self) -> None:
        """Format and emit everything buffered so far."""
        text, self._pending = self._pending, ""
        if not text:
            return
        parts = text.split("\n")
        tail = parts.pop()  # text after the last newline: an unterminated last line
        lines = [p.split("\t") for p in parts]
        widths: list[int] = []
        self._format(lines, widths, 0, len(lines))
        if tail:
            self._out.append(tail)

    def getvalue(self) -> str:
        """Flush and return all output written so far."""
        self.flush()
        return "".join(self._out)

    def _write_lines(self, lines: list[list[str]], widths: list[int], line0: int, line1: int) -> None:
        out = self._out
        for i in range(line0, line1):
            for j, cell in enumerate(lines[i]):
                if cell:
                    out.append(cell)
                    if j < len(widths):
                        out.append(" " * (widths[j] - len(cell)))
                elif j < len(widths):
                    out.append(" " * widths[j])
            out.append("\n")

    def _format(self, lines: list[list[str]], widths: list[int], line0: int, line1: int) -> None:
        column = len(widths)
        this = line0
        while this < line1:
            if column >= len(lines[this]) - 1:
                this += 1
                continue
            # A cell exists in this column: print the lines before the block, then the block.
            self._write_lines(lines, widths, line0, this)
            line0 = this
            width = self.minwidth
            while this < line1:
                line = lines[this]
                if column >= len(line) - 1:
                    break
                width = max(width, len(line[column]) + self.padding)
                this += 1
            widths.append(width)
            self._format(lines, widths, line0, this)
            widths.pop()
            line0 = this
        self._write_lines(lines, widths, line0, line1)


def tabwrite(text: str, minwidth: int, tabwidth: int, padding: int) -> str:
    """Align ``text`` with a :class:`TabWriter` in one flush."""
    writer = TabWriter(minwidth, tabwidth, padding)
    writer.write(text)
    return writer.getvalue()


# ----------------------------------------------------------------- sort.Sort (pdqsort)

_U64 = (1 << 64) - 1


def go_sort(data: MutableSequence[T], less: Callable[[T, T], bool]) -> None:
    """Sort ``data`` in place exactly as Go's ``sort.Sort`` orders it (not stable).

    Equal elements end up where Go's pattern-defeating quicksort puts them
    (``src/sort/zsortinterface.go``, Go 1.19+): insertion sort up to 12 elements, so short
    lists keep the input order of equal elements.
    """
    n = len(data)
    if n <= 1:
        return
    _Pdq(data, less).pdqsort(0, n, n.bit_length())


class _Pdq:
    """A line-by-line port of Go's ``pdqsort`` over ``Less(i, j)``/``Swap(i, j)``."""

    def __init__(self, data: MutableSequence[Any], less: Callable[[Any, Any], bool]) -> None:
        self.d = data
        self.lt = less

    def less(self, i: int, j: int) -> bool:
        return self.lt(self.d[i], self.d[j])

    def swap(self, i: int, j: int) -> None:
        d = self.d
        d[i], d[j] = d[j], d[i]

    def insertion_sort(self, a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and self.less(j, j - 1):
                self.swap(j, j - 1)
                j -= 1

    def sift_down(self, lo: int, hi: int, first: int) -> None:
        root = lo
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and self.less(first + child, first + child + 1):
                child += 1
            if not self.less(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def heap_sort(self, a: int, b: int) -> None:
        first, lo, hi = a, 0, b - a
        for i in range((hi - 1) // 2, -1, -1):
            self.sift_down(i, hi, first)
        for i in range(hi - 1, -1, -1):
            self.swap(first, first + i)
            self.sift_down(lo, i, first)

    def pdqsort(self, a: int, b: int, limit: int) -> None:
        was_balanced = True
        was_partitioned = True
        while True:
            length = b - a
            if length <= 12:
                self.insertion_sort(a, b)
                return
            if limit == 0:
                self.heap_sort(a, b)
                return
            if not was_balanced:
                self.break_patterns(a, b)
                limit -= 1
            pivot, hint = self.choose_pivot(a, b)
            if hint == 2:  # decreasing
                self.reverse_range(a, b)
                pivot = (b - 1) - (pivot - a)
                hint = 1
            if was_balanced and was_partitioned and hint == 1 and self.partial_insertion_sort(a, b):
                return
            if a > 0 and not self.less(a - 1, pivot):
                a = self.partition_equal(a, b, pivot)
                continue
            mid, already = self.partition(a, b, pivot)
            was_partitioned = already
            left, right = mid - a, b - mid
            threshold = length // 8
            if left < right:
                was_balanced = left >= threshold
                self.pdqsort(a, mid, limit)
                a = mid + 1
            else:
                was_balanced = right >= threshold
                self.pdqsort(mid + 1, b, limit)
                b = mid

    def partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while i <= j and self.less(i, a):
            i += 1
        while i <= j and not self.less(j, a):
            j -= 1
        if i > j:
            self.swap(j, a)
            return j, True
        self.swap(i, j)
        i += 1
        j -= 1
        while True:
            while i <= j and self.less(i, a):
                i += 1
            while i <= j and not self.less(j, a):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i += 1
            j -= 1
        self.swap(j, a)
        return j, False

    def partition_equal(self, a: int, b: int, pivot: int) -> int:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while True:
            while i <= j and not self.less(a, i):
                i += 1
            while i <= j and self.less(a, j):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i += 1
            j -= 1
        return i

    def partial_insertion_sort(self, a: int, b: int) -> bool:
        i = a + 1
        for _ in range(5):
            while i < b and not self.less(i, i - 1):
                i += 1
            if i == b:
                return True
            if b - a < 50:
                return False
            self.swap(i, i - 1)
            if i - a >= 2:
                j = i - 1
                while j >= 1:
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
                    j -= 1
            if b - i >= 2:
                j = i + 1
                while j < b:
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
                    j += 1
        return False

    def break_patterns(self, a: int, b: int) -> None:
        length = b - a
        if length < 8:
            return
        state = length
        modulus = 1 << length.bit_length()
        idx = a + (length // 4) * 2 - 1
        while idx <= a + (length // 4) * 2 + 1:
            state ^= (state << 13) & _U64
            state ^= state >> 7
            state ^= (state << 17) & _U64
            other = state & (modulus - 1)
            if other >= length:
                other -= length
            self.swap(idx, a + other)
            idx += 1

    def choose_pivot(self, a: int, b: int) -> tuple[int, int]:
        n = b - a
        swaps = [0]
        i, j, k = a + n // 4 * 1, a + n // 4 * 2, a + n // 4 * 3
        if n >= 8:
            if n >= 50:
                i = self.median(i - 1, i, i + 1, swaps)
                j = self.median(j - 1, j, j + 1, swaps)
                k = self.median(k - 1, k, k + 1, swaps)
            j = self.median(i, j, k, swaps)
        if swaps[0] == 0:
            return j, 1  # increasing
        if swaps[0] == 12:
            return j, 2  # decreasing
        return j, 0

    def median(self, a: int, b: int, c: int, swaps: list[int]) -> int:
        a, b = self.order2(a, b, swaps)
        b, c = self.order2(b, c, swaps)
        a, b = self.order2(a, b, swaps)
        return b

    def order2(self, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
        if self.less(b, a):
            swaps[0] += 1
            return b, a
        return a, b

    def reverse_range(self, a: int, b: int) -> None:
        i, j = a, b - 1
        while i < j:
            self.swap(i, j)
            i += 1
            j -= 1


# ----------------------------------------------------------------- encoding/json

_JSON_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def _json_string(s: str) -> str:
    out = ['"']
    for ch in s:
        esc = _JSON_ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _shortest_digits(f: float) -> tuple[str, int]:
    """Shortest round-trip decimal digits of ``abs(f)`` and the decimal point position.

    ``1250.0`` -> ``("125", 4)``; ``0.05`` -> ``("5", -1)``; zero -> ``("0", 1)``.
    """
    _, digit_tuple, exponent = Decimal(repr(abs(f))).as_tuple()
    assert isinstance(exponent, int)
    all_digits = "".join(str(d) for d in digit_tuple)
    digits = all_digits.lstrip("0")
    if not digits:
        return "0", 1
    dp = len(all_digits) + exponent - (len(all_digits) - len(digits))
    return digits.rstrip("0"), dp


def _fmt_e(neg: bool, digits: str, dp: int) -> str:
    mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    exp = dp - 1 if digits != "0" else 0
    sign = "-" if exp < 0 else "+"
    return f"{'-' if neg else ''}{mant}e{sign}{abs(exp):02d}"


def _fmt_f(neg: bool, digits: str, dp: int) -> str:
    if digits == "0":
        body = "0"
    elif dp <= 0:
        body = "0." + "0" * (-dp) + digits
    elif dp >= len(digits):
        body = digits + "0" * (dp - len(digits))
    else:
        body = digits[:dp] + "." + digits[dp:]
    return ("-" if neg else "") + body


def go_format_float(f: float, fmt: str) -> str:
    """``strconv.FormatFloat(f, fmt, -1, 64)`` for ``fmt`` in ``e``, ``f``, ``g``."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    neg = math.copysign(1.0, f) < 0
    digits, dp = _shortest_digits(f)
    if fmt == "e":
        return _fmt_e(neg, digits, dp)
    if fmt == "f":
        return _fmt_f(neg, digits, dp)
    exp = dp - 1
    if digits != "0" and (exp < -4 or exp >= 6):
        return _fmt_e(neg, digits, dp)
    return _fmt_f(neg, digits, dp)


def _json_float(f: float) -> str:
    if math.isnan(f) or math.isinf(f):
        raise ValueError(f"json: unsupported value: {f}")
    a = abs(f)
    if a != 0 and (a < 1e-6 or a >= 1e21):
        s = go_format_float(f, "e")
        if len(s) >= 4 and s[-4] == "e" and s[-3] == "-" and s[-2] == "0":
            s = s[:-2] + s[-1]
        return s
    return go_format_float(f, "f")


def _json(value: Any, indent: str, level: int, out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, float):
        out.append(_json_float(value))
    elif isinstance(value, str):
        out.append(_json_string(value))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = "\n" + indent * (level + 1)
        out.append("{")
        for n, key in enumerate(sorted(value)):
            out.append(("," if n else "") + inner + _json_string(str(key)) + ": ")
            _json(value[key], indent, level + 1, out)
        out.append("\n" + indent * level + "}")
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = "\n" + indent * (level + 1)
        out.append("[")
        for n, item in enumerate(value):
            out.append(("," if n else "") + inner)
            _json(item, indent, level + 1, out)
        out.append("\n" + indent * level + "]")
    else:
        raise TypeError(f"json: unsupported type {type(value).__name__}")


_HTML_SAFE = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))
"""The escapes Go's encoder adds to the standard library's (``encoding/json`` ``htmlSafeSet``)."""


def _stdlib_encodes_alike(value: Any) -> bool:
    """Whether ``json.dumps(value, indent=..., sort_keys=True, ensure_ascii=False)`` writes
    what Go writes, up to the HTML-safe escapes (:data:`_HTML_SAFE`, which only strings hold).

    True for trees of dicts with string keys, lists, tuples, strings, ints, bools, None and
    floats whose Python ``repr`` is Go's text: not integral (Go writes ``3``, Python ``3.0``)
    and within ``1e-4 <= |f| < 1e16`` (outside it Python switches to exponents where Go
    writes ``0.00001`` or ``10000000000000000``). Anything else takes the port.
    """
    stack = [value]
    while stack:
        v = stack.pop()
        if v is None or isinstance(v, (str, int)):  # bool is an int
            continue
        if isinstance(v, float):
            a = abs(v)
            if not (1e-4 <= a < 1e16) or v.is_integer():
                return False
        elif isinstance(v, dict):
            for k in v:
                if not isinstance(k, str):
                    return False
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        else:
            return False
    return True


def go_json(value: Any, indent: str = "    ") -> str:
    """``json.MarshalIndent(value, "", indent)`` of an unstructured value, plus a newline.

    Map keys are sorted (Go sorts ``map[string]interface{}`` keys), ``<``, ``>`` and ``&``
    are escaped as ``\\u003c`` etc., and floats use Go's shortest formatting.

    The standard library's C encoder writes it when its output is Go's
    (:func:`_stdlib_encodes_alike`; ``tests/test_kubectl_gofmt_json.py`` compares the two
    paths on generated values); the port (:func:`go_json_port`) writes the rest.

    Raises:
        ValueError: NaN or an infinity (Go: ``json: unsupported value``).
        TypeError: a value of no JSON type.
    """
    if isinstance(value, (dict, list)) and _stdlib_encodes_alike(value):
        text = json.dumps(value, indent=indent, sort_keys=True, ensure_ascii=False)
        for ch, escaped in _HTML_SAFE:
            if ch in text:  # only strings hold these characters: the structure is never touched
                text = text.replace(ch, escaped)
        return text + "\n"
    return go_json_port(value, indent)


def go_json_port(value: Any, indent: str = "    ") -> str:
    """:func:`go_json` by a line-by-line port of ``encoding/json``'s encoder (any value)."""
    out: list[str] = []
    _json(value, indent, 0, out)
    return "".join(out) + "\n"


# ----------------------------------------------------------------- time

_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def parse_time(text: str | None) -> datetime | None:
    """An RFC 3339 timestamp as the API server writes it, or None when empty."""
    if not text:
        return None
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def rfc1123z(t: datetime) -> str:
    """``t.Format(time.RFC1123Z)``: ``Mon, 05 Jan 2026 09:00:00 +0000``."""
    offset = t.utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    minutes = abs(minutes)
    return (f"{_DAYS[t.weekday()]}, {t.day:02d} {_MONTHS[t.month - 1]} {t.year:04d} "
            f"{t.hour:02d}:{t.minute:02d}:{t.second:02d} {sign}{minutes // 60:02d}{minutes % 60:02d}")


def _trunc_div(a: int, b: int) -> int:
    """Go integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def human_duration(d: timedelta) -> str:
    """``duration.HumanDuration`` (``k8s.io/apimachinery/pkg/util/duration/duration.go``).

    ``45s``, ``5m12s``, ``3h20m``, ``2d4h``...: about two significant figures.
    """
    us = (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds
    seconds = _trunc_div(us, 1_000_000)
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 60 * 2:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = seconds // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def since(text: str | None, now: datetime) -> str:
    """kubectl's ``translateTimestampSince``: ``<unknown>`` for an empty timestamp."""
    t = parse_time(text)
    if t is None:
        return "<unknown>"
    return human_duration(now - t)
