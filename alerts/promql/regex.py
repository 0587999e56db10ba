"""Go regular expressions (RE2 syntax: PromQL matchers, ``label_replace``, templates) on Python's ``re``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from alerts.promql.values import UnsupportedError

_FLAGS_RE = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])")
_REPEAT_RE = re.compile(r"\{\d+(?:,\d*)?\}")
RE2_FLAGS = frozenset("imsU")
"""The flags RE2 (and Go's ``regexp/syntax``) accepts in ``(?flags)`` and ``(?flags:re)``."""


@dataclass
class _Frame:
    """One open group: how many scoped flag groups were opened inside it (closed with it,
    and re-opened after each ``|``), and whether ungreedy mode is on."""

    opened: list[str] = field(default_factory=list)
    ungreedy: bool = False


def go_regex(pattern: str) -> str:
    """Translate RE2 syntax that Python's ``re`` reads differently.

    Inline flags -- RE2 applies ``a(?i)b|c`` to the rest of the enclosing group, both
    alternatives included, and ``(?i)`` at the start to the whole pattern -- become scoped
    groups (``a(?i:b)|(?i:c)``), so they stay valid inside the ``^(?:re)$`` anchoring
    Prometheus adds (Python refuses global flags there); clearing flags (``(?i-s)``,
    ``(?-i:re)``) is kept. The ungreedy flag ``U`` has no Python equivalent and is applied
    here: under it ``*``, ``+``, ``?`` and ``{n,m}`` are lazy and their ``?`` forms greedy,
    as RE2 reads them. ``\\z`` becomes ``\\Z``; ``(?<name>`` becomes ``(?P<name>``.

    Raises:
        UnsupportedError: a flag RE2 does not know (RE2 knows ``i``, ``m``, ``s``, ``U``).
    """
    out: list[str] = []
    frames: list[_Frame] = [_Frame()]
    i = 0
    in_class = False
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        frame = frames[-1]
        if ch == "\\":
            nxt = pattern[i + 1: i + 2]
            out.append("\\Z" if nxt == "z" else ch + nxt)
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
            out.append(ch)
            i += 1
            continue
        if ch == "[":
            in_class = True
            out.append(ch)
            for lead in ("^", "]"):
                if pattern[i + 1: i + 2] == lead:
                    out.append(lead)
                    i += 1
            i += 1
            continue
        m = _FLAGS_RE.match(pattern, i) if pattern.startswith("(?", i) else None
        if m and (m.group(1) or m.group(2) is not None):
            on, off, end = m.group(1), m.group(2) or "", m.group(3)
            bad = sorted(set(on + off) - RE2_FLAGS)
            if bad or (m.group(2) is not None and not off):
                raise UnsupportedError(f"regular expression flag {''.join(bad) or '-'}",
                                       f"RE2 knows only the flags i, m, s and U: {pattern!r}")
            ungreedy = frame.ungreedy
            if "U" in on:
                ungreedy = True
            if "U" in off:
                ungreedy = False
            py_on, py_off = on.replace("U", ""), off.replace("U", "")
            scoped = f"(?{py_on}-{py_off}:" if py_off else (f"(?{py_on}:" if py_on else "(?:")
            if end == ":":  # (?flags:re): a group of its own
                out.append(scoped)
                frames.append(_Frame(ungreedy=ungreedy))
            else:  # (?flags): the rest of the enclosing group
                frame.ungreedy = ungreedy
                if py_on or py_off:
                    out.append(scoped)
                    frame.opened.append(scoped)
            i = m.end()
            continue
        if ch == "(":
            named = pattern.startswith("(?<", i) and not pattern.startswith(("(?<=", "(?<!"), i)
            if named:
                out.append("(?P<")
                i += 3
            elif pattern.startswith("(?", i):  # (?P<name>, (?:, lookarounds: copied as they are
                out.append("(?")
                i += 2
            else:
                out.append(ch)
                i += 1
            frames.append(_Frame(ungreedy=frame.ungreedy))
            continue
        if ch == ")" and len(frames) > 1:
            out.append(")" * len(frames.pop().opened) + ")")
            i += 1
            continue
        if ch == "|" and frame.opened:
            out.append(")" * len(frame.opened) + "|" + "".join(frame.opened))
            i += 1
            continue
        quant = None
        if ch in "*+?":
            quant = ch
        elif ch == "{":
            rm = _REPEAT_RE.match(pattern, i)
            if rm is None:  # not a repetition: a literal brace for RE2 (Python reads {,n} as one)
                out.append("\\{")
                i += 1
                continue
            quant = rm.group(0)
        if quant is not None:
            i += len(quant)
            lazy = pattern.startswith("?", i)
            if lazy:
                i += 1
            if i < n and (pattern[i] in "*+?" or _REPEAT_RE.match(pattern, i)):
                raise UnsupportedError("regular expression repetition", f"RE2: bad repetition operator in {pattern!r}")
            out.append(quant + ("?" if lazy != frame.ungreedy else ""))
            continue
        out.append(ch)
        i += 1
    out.append(")" * sum(len(f.opened) for f in frames))
    return "".join(out)
