"""Go regular expressions (RE2 syntax: PromQL matchers, ``label_replace``, templates) on Python's ``re``."""

from __future__ import annotations

import re

from alerts.promql.values import UnsupportedError


def go_regex(pattern: str) -> str:
    """Translate RE2 syntax that Python's ``re`` reads differently.

    Inline flags in the middle of a pattern -- RE2 applies ``a(?i)b|c`` to the rest of
    the enclosing group, both alternatives included -- become scoped groups
    (``a(?i:b)|(?i:c)``); ``\\z`` becomes ``\\Z``; ``(?<name>`` becomes ``(?P<name>``.

    Raises:
        UnsupportedError: the ungreedy flag ``U``.
    """
    out: list[str] = []
    scopes: list[list[str]] = [[]]  # flags of the scoped groups open at each nesting level
    i = 0
    in_class = False
    while i < len(pattern):
        ch = pattern[i]
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
        m = re.match(r"\(\?([a-zA-Z]+)\)", pattern[i:])
        if m:
            flags = m.group(1)
            if "U" in flags:
                raise UnsupportedError("regular expression flag U", "RE2's ungreedy mode has no Python equivalent")
            if not out:
                out.append(m.group(0))
            else:
                out.append(f"(?{flags}:")
                scopes[-1].append(flags)
            i += m.end()
            continue
        if ch == "(":
            named = pattern.startswith("(?<", i) and not pattern.startswith(("(?<=", "(?<!"), i)
            out.append("(?P<" if named else ch)
            i += 3 if named else 1
            scopes.append([])
            continue
        if ch == ")" and len(scopes) > 1:
            out.append(")" * len(scopes.pop()) + ")")
            i += 1
            continue
        if ch == "|" and scopes[-1]:
            open_flags = scopes[-1]
            out.append(")" * len(open_flags) + "|" + "".join(f"(?{f}:" for f in open_flags))
            i += 1
            continue
        out.append(ch)
        i += 1
    out.append(")" * sum(len(s) for s in scopes))
    return "".join(out)
