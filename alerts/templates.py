"""The Go-template subset Prometheus alert labels and annotations use.

Supported: text with ``{{ ... }}`` actions (``{{-``/``-}}`` trim whitespace), each a
pipeline of commands joined by ``|``. Operands: ``$labels.NAME``, ``.Labels.NAME``,
``$value``, ``.Value``, ``$externalLabels.NAME``, ``$externalURL``, string literals
(``"..."`` and raw `` `...` ``) and numbers. Functions (Prometheus ``template/template.go``
v2.42.0): ``humanize``, ``humanize1024``, ``humanizeDuration``, ``humanizePercentage``,
``humanizeTimestamp``, ``printf``, ``toUpper``, ``toLower``, ``title``, ``match``,
``reReplaceAll``, ``stripPort``, ``safeHtml``. Control structures (``if``, ``range``,
``with``, ``define``, variable assignment) and the query functions (``query``, ``first``,
``value``, ``label``...) are rejected at load time with :class:`TemplateError`.

Values print as Go prints them: a float with ``%v`` (shortest digits, exponent from
1e6 up and below 1e-4 -- see :func:`go_float`), a missing label as ``""``
(Prometheus uses ``missingkey=zero``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any


class TemplateError(ValueError):
    """A template uses syntax or functions outside the supported subset, or fails to parse."""


_ACTION = re.compile(r"\{\{(-?)(.*?)(-?)\}\}", re.DOTALL)
_TOKEN = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|(`[^`]*`)|(\|)|([$.][A-Za-z0-9_.]*)|([A-Za-z_][A-Za-z0-9_]*)'
                    r"|([+-]?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?))")

_UNSUPPORTED = {"if", "else", "end", "range", "with", "define", "template", "block", "query", "first", "label",
                "value", "sortByLabel", "strvalue", "args", "tmpl", "pathPrefix", "externalURL", "parseDuration",
                "toTime", "and", "or", "not", "eq", "ne", "lt", "le", "gt", "ge", "index", "len", "slice", "call",
                "html", "js", "urlquery", "print", "println"}


@dataclass(frozen=True)
class TemplateData:
    """What a template sees (Prometheus ``AlertTemplateData``)."""

    labels: Mapping[str, str]
    value: float
    external_labels: Mapping[str, str]
    external_url: str = ""


Operand = Callable[[TemplateData], Any]


def go_float(v: float) -> str:
    """``fmt.Sprint(float64)``: Go's ``%v``, i.e. ``strconv.FormatFloat(v, 'g', -1, 64)``.

    Shortest round-trip digits, in exponent form when the decimal exponent is below -4 or
    at least 6 (``1.234567e+06``, ``123456``, ``1.234e-05``; checked against promtool 2.42).
    """
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v == 0:
        return "-0" if math.copysign(1.0, v) < 0 else "0"
    sign, digits, exp = Decimal(repr(v)).as_tuple()
    ds = "".join(str(d) for d in digits).rstrip("0") or "0"
    assert isinstance(exp, int)
    point = len(digits) + exp  # position of the decimal point relative to ds start
    x = point - 1
    neg = "-" if sign else ""
    if x < -4 or x >= 6:
        mant = ds[0] + ("." + ds[1:] if len(ds) > 1 else "")
        return f"{neg}{mant}e{'-' if x < 0 else '+'}{abs(x):02d}"
    if point <= 0:
        return f"{neg}0.{'0' * -point}{ds}"
    if point >= len(ds):
        return neg + ds + "0" * (point - len(ds))
    return f"{neg}{ds[:point]}.{ds[point:]}"


def _g4(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return f"{v:.4g}"


def _to_float(x: Any) -> float:
    if isinstance(x, bool):
        raise TemplateError(f"can't convert {x!r} to float")
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, str):
        try:
            return float(x)
        except ValueError:
            raise TemplateError(f"can't convert {x!r} to float") from None
    raise TemplateError(f"can't convert {type(x).__name__} to float")


def humanize(x: Any) -> str:
    v = _to_float(x)
    if v == 0 or math.isnan(v) or math.isinf(v):
        return _g4(v)
    prefix = ""
    if abs(v) >= 1:
        for p in ("k", "M", "G", "T", "P", "E", "Z", "Y"):
            if abs(v) < 1000:
                break
            prefix = p
            v /= 1000
        return _g4(v) + prefix
    for p in ("m", "u", "n", "p", "f", "a", "z", "y"):
        if abs(v) >= 1:
            break
        prefix = p
        v *= 1000
    return _g4(v) + prefix


def humanize1024(x: Any) -> str:
    v = _to_float(x)
    if abs(v) <= 1 or math.isnan(v) or math.isinf(v):
        return _g4(v)
    prefix = ""
    for p in ("ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"):
        if abs(v) < 1024:
            break
        prefix = p
        v /= 1024
    return _g4(v) + prefix


def humanize_duration(x: Any) -> str:
    v = _to_float(x)
    if math.isnan(v) or math.isinf(v):
        return _g4(v)
    if v == 0:
        return _g4(v) + "s"
    if abs(v) >= 1:
        sign = "-" if v < 0 else ""
        v = abs(v)
        d = int(v)
        seconds, minutes, hours, days = d % 60, (d // 60) % 60, (d // 3600) % 24, d // 86400
        if days:
            return f"{sign}{days}d {hours}h {minutes}m {seconds}s"
        if hours:
            return f"{sign}{hours}h {minutes}m {seconds}s"
        if minutes:
            return f"{sign}{minutes}m {seconds}s"
        return f"{sign}{_g4(v)}s"
    prefix = ""
    for p in ("m", "u", "n", "p", "f", "a", "z", "y"):
        if abs(v) >= 1:
            break
        prefix = p
        v *= 1000
    return f"{_g4(v)}{prefix}s"


def humanize_percentage(x: Any) -> str:
    return _g4(_to_float(x) * 100) + "%"


def humanize_timestamp(x: Any) -> str:
    v = _to_float(x)
    if math.isnan(v) or math.isinf(v):
        return _g4(v)
    t = datetime.fromtimestamp(v, tz=UTC)
    frac = f"{t.microsecond:06d}".rstrip("0")
    return t.strftime("%Y-%m-%d %H:%M:%S") + (f".{frac}" if frac else "") + " +0000 UTC"


_PRINTF = re.compile(r"%([-+ #0]*)(\d+)?(?:\.(\d+))?([vdsfgeExXqt%])")


def go_printf(fmt: str, *args: Any) -> str:
    """``fmt.Sprintf`` for the common verbs (``%v %s %d %f %g %e %x %q %t %%``)."""
    out: list[str] = []
    pos = 0
    ai = 0
    for m in _PRINTF.finditer(fmt):
        out.append(fmt[pos:m.start()])
        pos = m.end()
        flags, width, prec, verb = m.group(1), m.group(2), m.group(3), m.group(4)
        if verb == "%":
            out.append("%")
            continue
        if ai >= len(args):
            out.append(f"%!{verb}(MISSING)")
            continue
        arg = args[ai]
        ai += 1
        spec = flags + (width or "") + (f".{prec}" if prec is not None else "")
        if verb == "v" or (verb == "s" and not isinstance(arg, str)):
            text = go_float(arg) if isinstance(arg, float) else str(arg)
            out.append(f"%{flags}{width or ''}s" % text)
        elif verb == "s":
            out.append(f"%{spec}s" % arg)
        elif verb == "q":
            out.append('"' + str(arg).replace("\\", "\\\\").replace('"', '\\"') + '"')
        elif verb == "t":
            out.append("true" if arg else "false")
        elif verb in "dxX":
            out.append(f"%{spec}{verb}" % int(_to_float(arg)) if isinstance(arg, (int, float)) else
                       f"%!{verb}({arg})")
        else:
            v = _to_float(arg)
            if math.isnan(v) or math.isinf(v):
                out.append(f"%{flags}{width or ''}s" % ("NaN" if math.isnan(v) else ("+Inf" if v > 0 else "-Inf")))
            else:
                out.append(f"%{spec}{verb}" % v)
    out.append(fmt[pos:])
    return "".join(out)


def _match(pattern: str, text: str) -> bool:
    from alerts.promql.regex import go_regex

    return re.search(go_regex(pattern), text) is not None


def _re_replace_all(pattern: str, repl: str, text: str) -> str:
    from alerts.promql.functions import _expand
    from alerts.promql.regex import go_regex

    rx = re.compile(go_regex(pattern))
    return rx.sub(lambda m: _expand(repl, m), text)


def _strip_port(host: str) -> str:
    if host.startswith("[") and "]" in host:
        return host[1:host.index("]")]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


FUNCS: dict[str, Callable[..., Any]] = {
    "humanize": humanize,
    "humanize1024": humanize1024,
    "humanizeDuration": humanize_duration,
    "humanizePercentage": humanize_percentage,
    "humanizeTimestamp": humanize_timestamp,
    "printf": go_printf,
    "toUpper": lambda s: str(s).upper(),
    "toLower": lambda s: str(s).lower(),
    "title": lambda s: str(s).title(),
    "match": _match,
    "reReplaceAll": _re_replace_all,
    "stripPort": _strip_port,
    "safeHtml": lambda s: str(s),
}


def _label_getter(attr: str, name: str) -> Operand:
    def get(d: TemplateData) -> Any:
        labels: Mapping[str, str] = getattr(d, attr)
        return labels.get(name, "")
    return get


def _operand(token: str) -> Operand:
    if token.startswith('"'):
        text = bytes(token[1:-1], "utf-8").decode("unicode_escape")
        return lambda d: text
    if token.startswith("`"):
        raw = token[1:-1]
        return lambda d: raw
    if token in ("$value", ".Value"):
        return lambda d: d.value
    if token in ("$externalURL", ".ExternalURL"):
        return lambda d: d.external_url
    for prefix, attr in (("$labels.", "labels"), (".Labels.", "labels"), ("$externalLabels.", "external_labels"),
                         (".ExternalLabels.", "external_labels")):
        if token.startswith(prefix):
            name = token[len(prefix):]
            if not name or "." in name:
                break
            return _label_getter(attr, name)
    if re.fullmatch(r"[+-]?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?", token):
        num: float | int = int(token) if re.fullmatch(r"[+-]?\d+", token) else float(token)
        return lambda d: num
    raise TemplateError(f"unsupported operand {token!r}")


def _render(value: Any) -> str:
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Template:
    """A compiled template (see module docstring).

    Raises:
        TemplateError: at construction, for syntax outside the subset.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.uses_value = "$value" in text or ".Value" in text
        """Whether the output may depend on the value (a conservative test on the text):
        when False, it depends only on the labels, external labels and external URL."""
        self._parts: list[str | list[tuple[str, list[Operand]]]] = []
        pos = 0
        pending_trim = False
        for m in _ACTION.finditer(text):
            lit = text[pos:m.start()]
            if pending_trim:
                lit = lit.lstrip()
            if m.group(1):
                lit = lit.rstrip()
            self._parts.append(lit)
            self._parts.append(self._pipeline(m.group(2).strip()))
            pending_trim = bool(m.group(3))
            pos = m.end()
        tail = text[pos:]
        if "{{" in tail:
            raise TemplateError(f"unclosed action in template {text!r}")
        self._parts.append(tail.lstrip() if pending_trim else tail)

    @staticmethod
    def _pipeline(body: str) -> list[tuple[str, list[Operand]]]:
        if body.startswith("/*"):
            return []
        tokens: list[str] = []
        pos = 0
        while pos < len(body):
            m = _TOKEN.match(body, pos)
            if not m or m.end() == pos:
                rest = body[pos:].strip()
                if not rest:
                    break
                raise TemplateError(f"cannot parse {{{{ {body} }}}} (at {rest!r})")
            tokens.append(m.group(0).strip())
            pos = m.end()
        if ":=" in body or "=" in tokens:
            raise TemplateError(f"variable assignment is not supported: {{{{ {body} }}}}")
        commands: list[list[str]] = [[]]
        for tok in tokens:
            if tok == "|":
                commands.append([])
            else:
                commands[-1].append(tok)
        out: list[tuple[str, list[Operand]]] = []
        for cmd in commands:
            if not cmd:
                raise TemplateError(f"empty command in {{{{ {body} }}}}")
            head = cmd[0]
            if head in _UNSUPPORTED:
                raise TemplateError(f"template function or action {head!r} is not supported")
            if head in FUNCS:
                out.append((head, [_operand(t) for t in cmd[1:]]))
            elif len(cmd) == 1 and not out:
                out.append(("", [_operand(head)]))
            else:
                raise TemplateError(f"unknown template function {head!r}")
        return out

    def expand(self, data: TemplateData) -> str:
        """Render the template; a runtime failure renders as Prometheus does
        (``<error expanding template: ...>``)."""
        out: list[str] = []
        try:
            for part in self._parts:
                if isinstance(part, str):
                    out.append(part)
                    continue
                value: Any = None
                for i, (func, ops) in enumerate(part):
                    args = [op(data) for op in ops]
                    if func == "":
                        value = args[0]
                        continue
                    if i > 0:
                        args.append(value)
                    value = FUNCS[func](*args)
                if part:
                    out.append(_render(value))
        except (TemplateError, TypeError, ValueError, OverflowError) as exc:
            return f"<error expanding template: {exc}>"
        return "".join(out)
