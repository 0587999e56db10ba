"""Prometheus' alert templates: Go ``text/template`` with Prometheus' functions (v2.42.0).

An alert rule's label and annotation values are Go templates (:mod:`alerts.gotemplate`,
Go 1.19.8 semantics, ``missingkey=zero``). As ``rules/alerting.go`` does, each text is
prefixed with ``{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}``
``{{$externalURL := .ExternalURL}}{{$value := .Value}}`` and named ``__alert_<alertname>``;
the data (``template.AlertTemplateData``) is a struct of ``Labels``, ``ExternalLabels``
(``map[string]string``), ``ExternalURL`` (string) and ``Value`` (float64).

The functions are those of Prometheus 2.42's ``template/template.go``: ``query``,
``first``, ``label``, ``value``, ``strvalue``, ``sortByLabel``, ``args``, ``humanize``,
``humanize1024``, ``humanizeDuration``, ``humanizePercentage``, ``humanizeTimestamp``,
``toTime``, ``title``, ``toUpper``, ``toLower``, ``match``, ``reReplaceAll``, ``safeHtml``,
``stripPort``, ``stripDomain``, ``graphLink``, ``tableLink``, ``externalURL``,
``pathPrefix``, ``parseDuration`` (``toDuration``, ``now`` and ``urlQueryEscape`` came in
later releases and are undefined, as in 2.42), plus Go's builtins.

A template that does not parse raises :class:`TemplateError` at load with Go's message
(``template: __alert_X:1: function "foo" not defined``); one that fails at evaluation
expands, as Prometheus logs and shows it, to
``<error expanding template: error executing template __alert_X: template: __alert_X:1:125:
executing "__alert_X" at <...>: ...>``. Column numbers on line 1 count the 112 bytes of the
prefix, as Prometheus' do.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from alerts.gofmt import INVALID, GoHTML, GoMap, GoPointer, GoSlice, GoStruct, GoTime, go_float, sprintf
from alerts.gotemplate import (
    ANY,
    ChainNode,
    DotNode,
    FieldNode,
    GoCallError,
    GoFunc,
    GoTemplate,
    GoTemplateError,
    Node,
    TemplateNode,
    VariableNode,
    parse_float,
    url_query_escape,
)

__all__ = ["DEFS", "FUNCS", "Template", "TemplateData", "TemplateError", "go_float", "go_printf", "humanize",
           "humanize1024", "humanize_duration", "humanize_percentage", "humanize_timestamp"]

DEFS = ("{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}{{$externalURL := .ExternalURL}}"
        "{{$value := .Value}}")
"""What ``rules/alerting.go`` puts before every label and annotation template (112 bytes)."""

_DATA_TYPE = "struct { Labels map[string]string; ExternalLabels map[string]string; ExternalURL string; Value float64 }"
_SAMPLE = "*template.sample"
_RESULT = "template.queryResult"
_NIL_DEREF = "runtime error: invalid memory address or nil pointer dereference"


class TemplateError(ValueError):
    """A template that Prometheus would refuse to load (Go's parse error).

    Attributes:
        message: Go's message, ``template: __alert_X:LINE: ...``.
        line: the line of the template text (1 = its first line).
    """

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


QueryFunc = Callable[[str], list[tuple[dict[str, str], float]]]
"""Evaluates a PromQL instant query at the evaluation time: (labels with ``__name__``, value)
pairs; raises :class:`GoCallError` (or ``ValueError``) with the error text."""


@dataclass(frozen=True)
class TemplateData:
    """What a template sees (Prometheus ``AlertTemplateData``), plus what its functions need.

    Attributes:
        labels: the alert's labels (``$labels``; ``__name__`` too when the expression keeps it).
        value: the sample value (``$value``).
        external_labels: ``$externalLabels``.
        external_url: ``$externalURL``; also what ``externalURL`` and ``pathPrefix`` read (an empty
            URL makes both fail, as in ``promtool test rules``, where it is nil).
        query: evaluates ``query "..."`` at the evaluation time; None: ``query`` fails.
    """

    labels: Mapping[str, str]
    value: float
    external_labels: Mapping[str, str]
    external_url: str = ""
    query: QueryFunc | None = None


# ----------------------------------------------------------------------------- conversions


def _to_float(x: Any) -> float:
    """Prometheus' ``convertToFloat``: float64, string (``strconv.ParseFloat``) or an integer."""
    if isinstance(x, bool) or x is None or x is INVALID:
        raise GoCallError(f"can't convert {_tname(x)} to float")
    if isinstance(x, float):
        return x
    if isinstance(x, int):
        return float(x)
    if isinstance(x, str) and not isinstance(x, GoHTML):
        try:
            return parse_float(str(x))
        except ValueError as exc:
            raise GoCallError(str(exc)) from None
    raise GoCallError(f"can't convert {_tname(x)} to float")


def _tname(x: Any) -> str:
    from alerts.gofmt import type_name
    return "<nil>" if x is INVALID else type_name(x)


def _g4(v: float) -> str:
    return sprintf("%.4g", v)


def humanize(x: Any) -> str:
    """Prometheus ``humanize``: SI prefixes, 4 significant digits (``1.235k``, ``12.5m``)."""
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
    """Prometheus ``humanize1024``: binary prefixes (``1ki``, ``1.5Mi``)."""
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
    """Prometheus ``humanizeDuration`` (``1d 2h 3m 4s``, ``1.5s``, ``12ms``), seconds in."""
    v = _to_float(x)
    if math.isnan(v) or math.isinf(v):
        return _g4(v)
    if v == 0:
        return _g4(v) + "s"
    if abs(v) >= 1:
        sign = ""
        if v < 0:
            sign = "-"
            v = -v
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
    """Prometheus ``humanizePercentage``: ``%.4g%%`` of the value times 100."""
    return _g4(_to_float(x) * 100) + "%"


def _float_to_time(v: float) -> GoTime:
    if math.isnan(v) or math.isinf(v):
        raise _NaNOrInf
    ts = v * 1e9
    if ts > 9.223372036854776e18 or ts < -9.223372036854776e18:
        raise GoCallError(f"{go_float(v)} cannot be represented as a nanoseconds timestamp since it overflows int64")
    ns = int(ts)  # Go's int64(float): toward zero
    ms = int(ns / 1_000_000) if abs(ns) < 2**53 else (abs(ns) // 1_000_000) * (1 if ns >= 0 else -1)
    return GoTime(ms * 1_000_000)  # model.TimeFromUnixNano keeps milliseconds


class _NaNOrInfError(Exception):
    pass


_NaNOrInf = _NaNOrInfError()


def humanize_timestamp(x: Any) -> str:
    """Prometheus ``humanizeTimestamp``: Unix seconds as ``2023-11-14 22:13:20.123 +0000 UTC``."""
    v = _to_float(x)
    try:
        return _float_to_time(v).string()
    except _NaNOrInfError:
        return _g4(v)


def _to_time(x: Any) -> GoTime:
    v = _to_float(x)
    try:
        return _float_to_time(v)
    except _NaNOrInfError:
        raise GoCallError("value is NaN or Inf") from None


def go_printf(fmt: str, *args: Any) -> str:
    """``fmt.Sprintf`` (see :func:`alerts.gofmt.sprintf`)."""
    return sprintf(fmt, *args)


# ----------------------------------------------------------------------------- strings


def _is_separator(r: str) -> bool:
    if r <= "\x7f":
        return not (r.isalnum() or r == "_")
    if r.isalpha() or r.isdecimal():
        return False
    return r.isspace()


def _title(s: str) -> str:
    """``strings.Title``: the first letter of every word to title case, the rest unchanged."""
    out = []
    prev = " "
    for r in s:
        if _is_separator(prev):
            t = r.title() if len(r.title()) == 1 else r
            out.append(t)
        else:
            out.append(r)
        prev = r
    return "".join(out)


def _map_runes(s: str, upper: bool) -> str:
    out = []
    for r in s:
        m = r.upper() if upper else r.lower()
        out.append(m if len(m) == 1 else r)  # Go maps rune by rune, no special casing
    return "".join(out)


def _split_host_port(hostport: str) -> tuple[str, str]:
    """``net.SplitHostPort``; ValueError when it fails."""
    i = hostport.rfind(":")
    if i < 0:
        raise ValueError("missing port in address")
    if hostport.startswith("["):
        end = hostport.find("]")
        if end < 0:
            raise ValueError("missing ']' in address")
        if end + 1 == len(hostport):
            raise ValueError("missing port in address")
        if end + 1 != i:
            raise ValueError("too many colons in address" if hostport[end + 1] == ":" else "missing port in address")
        host = hostport[1:end]
        if "[" in hostport[1:] or "]" in hostport[end + 1:]:
            raise ValueError("unexpected bracket")
        return host, hostport[i + 1:]
    host = hostport[:i]
    if ":" in host:
        raise ValueError("too many colons in address")
    if "[" in hostport or "]" in hostport:
        raise ValueError("unexpected bracket")
    return host, hostport[i + 1:]


def _strip_port(hp: str) -> str:
    try:
        return _split_host_port(hp)[0]
    except ValueError:
        return hp


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return "%" not in host


def _strip_domain(hp: str) -> str:
    try:
        host, port = _split_host_port(hp)
    except ValueError:
        host, port = hp, ""
    if _is_ip(host):
        return hp
    host = host.split(".")[0]
    if port:
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return host


def _go_regex(pattern: str) -> re.Pattern[str]:
    from alerts.promql.regex import go_regex
    try:
        return re.compile(go_regex(pattern))
    except (re.error, ValueError) as exc:
        raise GoCallError(f"error parsing regexp: {_re_reason(exc)}: `{pattern}`") from None


def _re_reason(exc: Exception) -> str:
    msg = str(exc)
    if "missing ), unterminated subpattern" in msg:
        return "missing closing )"
    if "unbalanced parenthesis" in msg:
        return "unexpected )"
    if "unterminated character set" in msg:
        return "missing closing ]"
    if "nothing to repeat" in msg or "multiple repeat" in msg:
        return "missing argument to repetition operator"
    return "invalid or unsupported Perl syntax"


def _match(pattern: str, text: str) -> bool:
    return _go_regex(pattern).search(text) is not None


def _re_replace_all(pattern: str, repl: str, text: str) -> str:
    from alerts.promql.functions import _expand
    try:
        rx = _go_regex(pattern)
    except GoCallError as exc:
        q = f"`{pattern}`" if "`" not in pattern else sprintf("%q", pattern)
        raise GoCallError(f"regexp: Compile({q}): {exc}") from None
    return rx.sub(lambda m: _expand(repl, m), text)


_DURATION_RE = re.compile(r"^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$")


def _parse_duration(d: str) -> float:
    """``model.ParseDuration`` (prometheus/common, as in Prometheus 2.42), in seconds."""
    if d == "0":
        return 0.0
    if d == "":
        raise GoCallError("empty duration string")
    m = _DURATION_RE.match(d)
    if not m:
        raise GoCallError(f"not a valid duration string: {sprintf('%q', d)}")
    mults = (365 * 86400_000, 7 * 86400_000, 86400_000, 3600_000, 60_000, 1000, 1)
    total = 0
    for g, mult in zip(m.groups(), mults, strict=True):
        if g:
            n = int(g)
            if n > (2**63 - 1) // mult // 1_000_000:
                raise GoCallError("duration out of range")
            total += n * mult
    if total * 1_000_000 > 2**63 - 1:
        raise GoCallError("duration out of range")
    return total * 1_000_000 / 1e9


def _sample(labels: Mapping[str, str], value: float) -> GoPointer:
    return GoPointer(_SAMPLE, GoStruct("template.sample", [("Labels", "map[string]string", GoMap(labels)),
                                                           ("Value", "float64", float(value))]))


def _sample_field(s: Any, name: str) -> Any:
    if not isinstance(s, GoPointer):
        raise GoCallError(_NIL_DEREF)
    return s.target.get(name)[1]


def _first(v: Any) -> Any:
    if isinstance(v, GoSlice) and len(v):
        return v[0]
    raise GoCallError("first() called on vector with no elements")


def _sort_by_label(label: str, v: Any) -> Any:
    if not isinstance(v, GoSlice):
        return v
    v.sort(key=lambda s: _sample_field(s, "Labels").get(label, "").encode("utf-8", "surrogatepass"))
    return v


def _args(*a: Any) -> GoMap:
    return GoMap({f"arg{i}": (None if x is INVALID else x) for i, x in enumerate(a)}, elem="interface {}")


def _funcs(data: TemplateData | None) -> dict[str, GoFunc]:
    def query(q: str) -> GoSlice:
        if data is None or data.query is None:
            raise GoCallError(_NIL_DEREF)
        try:
            rows = data.query(q)
        except (GoCallError, ValueError) as exc:
            raise GoCallError(str(exc)) from None
        return GoSlice([_sample(lbls, v) for lbls, v in rows], type_name=_RESULT)

    def external_url() -> str:
        if data is None or not data.external_url:
            raise GoCallError(_NIL_DEREF)
        return data.external_url

    def path_prefix() -> str:
        if data is None or not data.external_url:
            raise GoCallError(_NIL_DEREF)
        from urllib.parse import urlsplit
        return urlsplit(data.external_url).path

    s = ("string",)
    return {
        "query": GoFunc(query, s),
        "first": GoFunc(_first, (_RESULT,)),
        "label": GoFunc(lambda name, smp: _sample_field(smp, "Labels").get(name, ""), ("string", _SAMPLE)),
        "value": GoFunc(lambda smp: _sample_field(smp, "Value"), (_SAMPLE,)),
        "strvalue": GoFunc(lambda smp: _sample_field(smp, "Labels").get("__value__", ""), (_SAMPLE,)),
        "args": GoFunc(_args, (), ANY),
        "reReplaceAll": GoFunc(_re_replace_all, ("string", "string", "string")),
        "safeHtml": GoFunc(lambda t: GoHTML(t), s),
        "match": GoFunc(_match, ("string", "string")),
        "title": GoFunc(_title, s),
        "toUpper": GoFunc(lambda t: _map_runes(t, True), s),
        "toLower": GoFunc(lambda t: _map_runes(t, False), s),
        "graphLink": GoFunc(lambda e: f"/graph?g0.expr={url_query_escape(e)}&g0.tab=0", s),
        "tableLink": GoFunc(lambda e: f"/graph?g0.expr={url_query_escape(e)}&g0.tab=1", s),
        "sortByLabel": GoFunc(_sort_by_label, ("string", _RESULT)),
        "stripPort": GoFunc(_strip_port, s),
        "stripDomain": GoFunc(_strip_domain, s),
        "humanize": GoFunc(humanize, (ANY,)),
        "humanize1024": GoFunc(humanize1024, (ANY,)),
        "humanizeDuration": GoFunc(humanize_duration, (ANY,)),
        "humanizePercentage": GoFunc(humanize_percentage, (ANY,)),
        "humanizeTimestamp": GoFunc(humanize_timestamp, (ANY,)),
        "toTime": GoFunc(_to_time, (ANY,)),
        "pathPrefix": GoFunc(path_prefix, ()),
        "externalURL": GoFunc(external_url, ()),
        "parseDuration": GoFunc(_parse_duration, s),
    }


FUNCS: dict[str, GoFunc] = _funcs(None)
"""Prometheus 2.42's template functions (with no data: ``query``, ``externalURL`` and
``pathPrefix`` fail)."""


def _walk(node: Any, start: int) -> list[Node]:
    out: list[Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n is None:
            continue
        if isinstance(n, Node) and n.pos >= start:
            out.append(n)
        for attr in ("nodes", "args", "cmds", "decl"):
            stack.extend(getattr(n, attr, ()) or ())
        for attr in ("pipe", "list", "else_list", "node"):
            child = getattr(n, attr, None)
            if child is not None:
                stack.append(child)
    return out


class Template:
    """A compiled alert label or annotation template (see module docstring).

    Args:
        text: the template as written in the rule file.
        name: the alert's name; the Go template is ``__alert_<name>``.

    Raises:
        TemplateError: Go's parse error (Prometheus refuses the rule file).
    """

    def __init__(self, text: str, name: str = "") -> None:
        self.text = text
        self.name = "__alert_" + name
        try:
            self._tmpl = GoTemplate(self.name, DEFS + text, FUNCS)
        except GoTemplateError as exc:
            raise TemplateError(exc.message, exc.line) from None
        except RecursionError:  # Go's parser has no depth limit; Python's stack has one
            raise TemplateError(f"template: {self.name}: too deeply nested for this parser") from None
        nodes = [n for t in self._tmpl.trees.values() for n in _walk(t.root, len(DEFS))]
        self.uses_query = self._tmpl.uses_function("query")
        """Whether the output may depend on the stored series (``query``): never memoise it."""
        self.uses_value = self.uses_query or any(
            isinstance(n, (DotNode, TemplateNode, ChainNode))
            or (isinstance(n, VariableNode) and n.ident[0] in ("$", "$value"))
            or (isinstance(n, FieldNode) and n.ident[0] == "Value")
            for n in nodes)
        """Whether the output may depend on the value (conservative, from the parse tree):
        when False, it depends only on the labels, external labels and external URL."""
        self.is_static = "{{" not in text

    def expand(self, data: TemplateData) -> str:
        """Render the template; an execution error renders as Prometheus shows it
        (``<error expanding template: error executing template __alert_X: ...>``)."""
        if self.is_static:
            return self.text
        root = GoStruct(_DATA_TYPE, [
            ("Labels", "map[string]string", GoMap(data.labels)),
            ("ExternalLabels", "map[string]string", GoMap(data.external_labels)),
            ("ExternalURL", "string", data.external_url),
            ("Value", "float64", float(data.value)),
        ])
        tmpl = self._tmpl
        if data.query is not None or data.external_url:
            tmpl = GoTemplate.__new__(GoTemplate)
            tmpl.__dict__.update(self._tmpl.__dict__)
            tmpl.funcs = _funcs(data)
        try:
            return tmpl.execute(root)
        except GoTemplateError as exc:
            return f"<error expanding template: error executing template {self.name}: {exc.message}>"
        except Exception as exc:  # like Prometheus' recover(): a template never stops a rule's evaluation
            return f"<error expanding template: panic expanding template {self.name}: {type(exc).__name__}: {exc}>"
