"""A rule pack for a cluster whose clock runs faster than the wall clock (``marathon cluster --speed X``).

A real Prometheus measures time on the wall clock: a ``rate(...[2m])`` window, a ``for: 1m``
and the scrape interval are wall durations, and a counter of a cluster running at ``X`` run
seconds per wall second grows ``X`` times faster per wall second. :func:`scale_rules` rewrites
a rule file so that, evaluated at that speed, it means what it says in run time:

* every duration of an expression (range selectors ``[2m]``, subquery ranges and steps,
  ``offset``) and every ``for`` / ``keep_firing_for`` is divided by ``X``;
* every ``rate()`` and ``irate()`` is divided by ``X`` (per run second again), so absolute
  thresholds such as "above 1 request/s" keep their meaning; ``increase()`` and the
  ``*_over_time()`` functions count over the (scaled) window and need nothing.

Nothing else changes (names, labels, annotations), so the alerts a Prometheus fires from the
scaled pack have the same names and label sets as the embedded evaluator's; the bundle
records the unscaled pack the scaled one came from. At ``X = 1`` the pack is unchanged.
"""

from __future__ import annotations

import copy
import re
from typing import Any

_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000,
             "y": 31_536_000_000}
_DURATION = re.compile(r"(\d+)(ms|s|m|h|d|w|y)")
_TOKEN = r"(?:\d+(?:ms|s|m|h|d|w|y))+"
_RANGE = re.compile(rf"\[\s*({_TOKEN})\s*(?::\s*({_TOKEN})?\s*)?\]")
_OFFSET = re.compile(rf"\boffset\s+(-?)({_TOKEN})")
_RATE = re.compile(r"(?<![A-Za-z0-9_:])(i?rate)\s*\(")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')


def duration_ms(text: str) -> int:
    """A Prometheus duration (``1h30m``, ``250ms``) in milliseconds.

    Raises:
        ValueError: not a duration.
    """
    if not re.fullmatch(_TOKEN, text.strip()):
        raise ValueError(f"not a Prometheus duration: {text!r}")
    return sum(int(n) * _UNITS_MS[u] for n, u in _DURATION.findall(text))


def format_ms(ms: int) -> str:
    """Milliseconds as the shortest Prometheus duration (``0s`` for 0)."""
    if ms <= 0:
        return "0s"
    for unit in ("h", "m", "s"):
        if ms % _UNITS_MS[unit] == 0:
            return f"{ms // _UNITS_MS[unit]}{unit}"
    return f"{ms}ms"


def scale_duration(text: str, speed: float) -> str:
    """``text`` divided by ``speed``, rounded to whole milliseconds."""
    return format_ms(round(duration_ms(text) / speed))


def scale_expr(expr: str, speed: float) -> str:
    """A PromQL expression for a cluster at ``speed`` (module docstring); string literals
    (label values, regular expressions) are left as they are."""
    if speed == 1:
        return expr
    literals: list[str] = []

    def hide(m: re.Match[str]) -> str:
        literals.append(m.group(0))
        return f"\x00{len(literals) - 1}\x00"

    expr = _STRING.sub(hide, expr)

    def rng(m: re.Match[str]) -> str:
        out = f"[{scale_duration(m.group(1), speed)}"
        if ":" in m.group(0):
            out += ":" + (scale_duration(m.group(2), speed) if m.group(2) else "")
        return out + "]"

    expr = _RANGE.sub(rng, expr)
    expr = _OFFSET.sub(lambda m: f"offset {m.group(1)}{scale_duration(m.group(2), speed)}", expr)
    expr = _divide_rates(expr, speed)
    return re.sub("\x00(\\d+)\x00", lambda m: literals[int(m.group(1))], expr)


def _divide_rates(expr: str, speed: float) -> str:
    out, i = [], 0
    while True:
        m = _RATE.search(expr, i)
        if m is None:
            out.append(expr[i:])
            return "".join(out)
        depth, j = 1, m.end()
        while j < len(expr) and depth:
            depth += {"(": 1, ")": -1}.get(expr[j], 0)
            j += 1
        inner = _divide_rates(expr[m.end():j - 1], speed)
        out.append(expr[i:m.start()])
        out.append(f"({m.group(1)}({inner}) / {speed:g})")
        i = j


def scale_rules(data: dict[str, Any], speed: float) -> dict[str, Any]:
    """A copy of a loaded rule file (``{"groups": [...]}``) for a cluster at ``speed``.

    Raises:
        ValueError: ``speed`` not > 0, or a malformed duration.
    """
    if not speed > 0:
        raise ValueError("speed must be > 0")
    out = copy.deepcopy(data)
    for group in out.get("groups") or []:
        if group.get("interval"):
            group["interval"] = scale_duration(str(group["interval"]), speed)
        for rule in group.get("rules") or []:
            if "expr" in rule:
                rule["expr"] = scale_expr(str(rule["expr"]), speed)
            for key in ("for", "keep_firing_for"):
                if rule.get(key):
                    rule[key] = scale_duration(str(rule[key]), speed)
    return out
