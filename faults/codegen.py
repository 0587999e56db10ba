"""Code-change faults from a user's source tree: ``marathon faults generate --source SERVICE=PATH``.

A shipped catalog's code bugs are written by hand from the app's source. For a user's app the
generator mutates the service's own files, mutation-testing style, into the kind of one-line
commit an engineer ships (SRE-Marathon Table 3 subtypes):

=====================  =======================================================================
subtype                the mutation (lexical, per line; Go, Python, Java, JavaScript/TypeScript, C#)
=====================  =======================================================================
``constant-flag``      a numeric literal on a line naming a timeout, deadline, retry count,
                       limit, size, pool or port: timeouts and limits cut to 1/100 (at least 1),
                       Go's ``time.Second`` to ``time.Millisecond``, a port moved by one
``feature-logic``      the comparison of an ``if`` / ``elif`` / ``else if`` condition with one
                       comparison operator turned around at its boundary (``<`` and ``<=``,
                       ``>`` and ``>=``, ``==`` and ``!=``), or ``&&`` / ``and`` into ``||`` / ``or``
``type-validation``    a parse narrowed (Go ``ParseInt(..., 64)`` to ``32``, Java ``Long.parseLong``
                       to ``Integer.parseInt``, C# ``long.Parse`` to ``int.Parse``, Python
                       ``float(`` to ``int(``, JavaScript ``parseFloat(`` to ``parseInt(``) or a
                       null check narrowed (JavaScript ``=== null`` to ``=== undefined``, Go
                       ``err != nil`` letting ``io.EOF`` through)
=====================  =======================================================================

Each change replaces one whole line, which occurs exactly once in its file (else the line and
its predecessor, else the candidate is skipped), and the new line occurs nowhere in the healthy
file (it is the fault's marker: FORMAT.md, ``change``). Comment lines, string contents, test
files and files of other languages are never mutated. The commit reads like a normal one: a
conventional-commit subject about the code it touches and an author of the app's domain; the
diff is the one line. The ``effect`` is what such a commit does to the service's operations: an
error rate (:data:`ERROR_RATE`; 1.0 for a wrong port) with a log line in the language's style (Go's wrapped
error, a Python/Java/C#/JavaScript exception naming the enclosing function).

At most one fault per subtype and service. The choice among a service's candidates is
deterministic: the candidate with the smallest SHA-256 over the app name, the file's SHA-256
and the line number.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.apps.model import AppModel

CODEGEN = "source-1"
"""Version of these mutation rules (recorded in generated catalogs' headers)."""

ERROR_RATE = 0.8
"""Share of a mutated operation's requests that fail: above the 50 % of the paper pack's
EndpointErrorRate (Table 4) with margin, so a route through the service pages even when its
share of traffic is too small for HighRequestErrorRate's 10 % of all entry requests; the
shipped catalogs' code bugs fail 1.0 of the requests they hit."""

_LANG = {".go": "go", ".py": "python", ".java": "java", ".js": "js", ".mjs": "js", ".cjs": "js", ".ts": "js",
         ".cs": "csharp"}
_TEST = re.compile(r"(_test\.go|Test\.java|Tests?\.cs|\.(spec|test)\.[jt]s)$|(^|/)(test_[^/]*\.py|tests?/)")
_COMMENT = ("//", "#", "/*", "*", "--")
_STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`')
_CONST_NAME = re.compile(r"(?i)(timeout|deadline|retr(y|ies)|max|limit|size|pool|capacity|ttl|batch|port|backoff)")
_NUMBER = re.compile(r"(?<![\w.])(\d+)(?![\w.])")
_CONDITION = re.compile(r"^\s*(\}\s*else\s+if\b|else\s+if\b|if\b|elif\b)")
_CMP = re.compile(r"(<=|>=|==|!=|(?<![<>=!-])<(?![<=-])|(?<![<>=-])>(?![>=]))")
_TURN = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
_PARSE = {
    "go": [(re.compile(r"strconv\.ParseInt\(([^,()]+), 10, 64\)"), r"strconv.ParseInt(\1, 10, 32)"),
           (re.compile(r"strconv\.ParseFloat\(([^,()]+), 64\)"), r"strconv.ParseFloat(\1, 32)"),
           (re.compile(r"^(\s*if err != nil) \{$"), r"\1 && !errors.Is(err, io.EOF) {")],
    "python": [(re.compile(r"(?<![\w.])float\("), "int(")],
    "java": [(re.compile(r"\bLong\.parseLong\("), "Integer.parseInt("),
             (re.compile(r"\bDouble\.parseDouble\("), "Integer.parseInt(")],
    "csharp": [(re.compile(r"\blong\.Parse\("), "int.Parse("), (re.compile(r"\bdouble\.Parse\("), "int.Parse("),
               (re.compile(r"\bstring\.IsNullOrEmpty\((\w+)\)"), r"\1.Length == 0")],
    "js": [(re.compile(r"\bparseFloat\("), "parseInt("), (re.compile(r"=== null\b"), "=== undefined"),
           (re.compile(r"!== null\b"), "!== undefined")],
}
_FUNC = {
    "go": re.compile(r"^func\s+(?:\([^)]*\)\s*)?(\w+)\s*\("),
    "python": re.compile(r"^\s*(?:async\s+)?def\s+(\w+)\s*\("),
    "java": re.compile(r"^\s*(?:public|private|protected|static|final|synchronized|\s)*"
                       r"[\w<>\[\], ]+\s+(\w+)\s*\([^;]*$"),
    "csharp": re.compile(r"^\s*(?:public|private|protected|internal|static|async|override|virtual|\s)*"
                         r"[\w<>\[\], ?]+\s+(\w+)\s*\([^;]*$"),
    "js": re.compile(r"^\s*(?:export\s+)?(?:async\s+)?(?:function\s+(\w+)|(\w+)\s*[:=]\s*(?:async\s*)?"
                     r"(?:function\b|\([^)]*\)\s*=>)|(\w+)\s*\([^)]*\)\s*\{)"),
}
_KEYWORDS = {"if", "for", "while", "switch", "catch", "return", "else", "new", "function"}
_EXC = {
    "type-validation": {"go": None, "python": "ValueError", "java": "java.lang.NumberFormatException",
                        "csharp": "System.FormatException", "js": "TypeError"},
    "feature-logic": {"go": None, "python": "RuntimeError", "java": "java.lang.IllegalStateException",
                      "csharp": "System.InvalidOperationException", "js": "Error"},
    "constant-flag": {"go": None, "python": "TimeoutError", "java": "java.util.concurrent.TimeoutException",
                      "csharp": "System.TimeoutException", "js": "Error"},
}
_AUTHORS = ("alex.kim", "priya.natarajan", "tomas.novak", "li.wei", "sam.okafor", "maria.garcia", "jonas.berg",
            "aiko.tanaka")


@dataclass(frozen=True)
class Mutation:
    """One candidate: ``find`` (whole lines, unique in the file) becomes ``replace``."""

    file: str
    line: int
    """1-based number of the mutated line."""
    subtype: str
    what: str
    """``timeout``, ``limit``, ``port``, ``comparison``, ``equality``, ``condition``, ``parse``, ``null-check``."""
    find: str
    replace: str
    function: str
    """The enclosing function's name, "" at top level."""
    name: str
    """The identifier the change is about (the constant's name; else the function's)."""


def _code(line: str) -> str:
    """The line with the insides of string literals blanked to ``_`` (same length, so offsets
    found in it apply to the line; operators and numbers inside strings are not code)."""
    return _STRING.sub(lambda m: m.group()[0] + "_" * (len(m.group()) - 2) + m.group()[-1], line)


def _function(lang: str, lines: list[str], i: int) -> str:
    for j in range(i, -1, -1):
        m = _FUNC[lang].match(lines[j])
        if m:
            name = next((g for g in m.groups() if g), "")
            if name and name not in _KEYWORDS:
                return name
    return ""  # top level (a constant's declaration)


def _constant(lang: str, line: str) -> tuple[str, str, str] | None:
    code = _code(line)
    if _CONDITION.match(code) or code.lstrip().startswith(("return", "case ", "[")):
        return None  # a comparison or an attribute, not a setting
    name_m = re.search(r"([A-Za-z_][\w.]*)\s*(?::=|=(?!=)|:)", code)
    if name_m is None:
        return None
    m = _CONST_NAME.search(name_m.group(1))
    if m is None:
        return None  # the constant's own name says what it sets
    name = name_m.group(1)
    what = "port" if "port" in m.group(1).lower() else "timeout" if re.search(
        r"(?i)timeout|deadline|ttl|backoff", m.group(1)) else "limit"
    if lang == "go" and what == "timeout" and "time.Second" in code and code.count("time.Second") == 1:
        return what, name, line.replace("time.Second", "time.Millisecond")
    nums = [n for n in _NUMBER.finditer(code) if n.start() > name_m.end()]
    if len(nums) != 1:
        return None
    n = nums[0]
    value = int(n.group(1))
    if what == "port":
        if value < 1024 or value > 65000:
            return None
        new = value + 1
    else:
        if value < 2:
            return None
        new = max(1, value // 100)
    return what, name, line[:n.start()] + str(new) + line[n.end():]


def _comparison(lang: str, line: str) -> tuple[str, str] | None:
    if not _CONDITION.match(line):
        return None
    code = _code(line)
    if any(t in code for t in ("<-", "=>", "->", "<<", ">>", "::")) or re.search(r"\w<\w", code):
        return None
    ops = list(_CMP.finditer(code))
    logic = re.findall(r"&&|\band\b", code)
    if len(ops) == 1 and not re.search(r"\|\||\bor\b|&&|\band\b", code):
        op = ops[0]
        what = "equality" if op.group(1) in ("==", "!=") else "comparison"
        return what, line[:op.start()] + _TURN[op.group(1)] + line[op.end():]
    if len(logic) == 1 and not re.search(r"\|\||\bor\b", code):
        at = re.search(r"&&|\band\b", code)
        assert at is not None
        return "condition", line[:at.start()] + ("||" if at.group() == "&&" else "or") + line[at.end():]
    return None


def _parse(lang: str, line: str, text: str) -> tuple[str, str] | None:
    code = _code(line)
    for pattern, repl in _PARSE[lang]:
        if "EOF" in repl and not ('"errors"' in text and '"io"' in text):
            continue  # the new line needs errors and io: only where the file imports them
        hits = list(pattern.finditer(code))
        if len(hits) == 1 and len(list(pattern.finditer(line))) == 1:
            new = pattern.sub(repl, line, count=1)
            return ("null-check" if "null" in pattern.pattern or "nil" in pattern.pattern
                    or "IsNullOrEmpty" in pattern.pattern else "parse"), new
    return None


def mutations(rel: str, text: str) -> list[Mutation]:
    """Every candidate mutation of one source file (module docstring), in line order; none for a
    language the rules do not cover or a test file."""
    lang = _LANG.get(Path(rel).suffix)
    if lang is None or _TEST.search(rel):
        return []
    lines = text.splitlines(keepends=True)
    out: list[Mutation] = []
    for i, raw in enumerate(lines):
        line = raw.rstrip("\n")
        body = line.strip()
        if not body or body.startswith(_COMMENT) or len(body) > 160 or "\r" in line:
            continue
        found: list[tuple[str, str, str, str]] = []
        c = _constant(lang, line)
        if c is not None:
            found.append(("constant-flag", c[0], c[2], c[1]))
        cmp_ = _comparison(lang, line)
        if cmp_ is not None:
            found.append(("feature-logic", cmp_[0], cmp_[1], ""))
        p = _parse(lang, line, text)
        if p is not None:
            found.append(("type-validation", p[0], p[1], ""))
        for subtype, what, new, name in found:
            if new == line or new.strip() in text:
                continue  # no change, or the marker would already be in the healthy file
            find, replace = raw, new + ("\n" if raw.endswith("\n") else "")
            if text.count(find) != 1 and i > 0:
                find, replace = lines[i - 1] + find, lines[i - 1] + replace
            if text.count(find) != 1:
                continue
            func = _function(lang, lines, i)
            out.append(Mutation(rel, i + 1, subtype, what, find, replace, func, name or func))
    return out


def _language(rel: str) -> str:
    return _LANG[Path(rel).suffix]


def _summary(svc: str, m: Mutation) -> str:
    where = f" in {m.function}" if m.function else ""
    words = {
        "timeout": f"perf({svc}): fail fast on slow calls{where} ({m.name})",
        "limit": f"chore({svc}): lower {m.name} to bound memory under load",
        "port": f"config({svc}): align {m.name} with the chart's port",
        "comparison": f"fix({svc}): off-by-one in the bounds check{where}",
        "equality": f"refactor({svc}): return early{where}",
        "condition": f"refactor({svc}): simplify the guard{where}",
        "parse": f"refactor({svc}): use the narrower parse{where}",
        "null-check": f"refactor({svc}): tidy the empty-value check{where}",
    }
    return words[m.what]


def _log(svc: str, m: Mutation) -> dict[str, Any]:
    lang = _language(m.file)
    func = m.function or {"go": "main", "python": "<module>", "js": "<anonymous>"}.get(lang, "Main")
    messages = {
        "timeout": "context deadline exceeded" if lang == "go" else "operation timed out",
        "limit": f"{m.name} exceeded",
        "port": "connect: connection refused",
        "comparison": f"{func}: invalid state",
        "equality": f"{func}: invalid state",
        "condition": f"{func}: invalid state",
        "parse": "value out of range" if lang == "go" else "invalid number format",
        "null-check": "unexpected EOF" if lang == "go" else f"cannot read properties of undefined ({func})",
    }
    log: dict[str, Any] = {"message": messages[m.what], "function": func, "line": m.line}
    exc = _EXC[m.subtype][lang]
    if exc is not None:
        log["exception"] = exc
    return log


def _digest(app: str, text: str, line: int) -> str:
    file_sha = hashlib.sha256(text.encode()).hexdigest()
    return hashlib.sha256(f"{app}\0{file_sha}\0{line}".encode()).hexdigest()


def code_faults(app: AppModel, root: Path, scope_of: dict[str, list[str]]) -> tuple[list[dict[str, Any]],
                                                                                     list[tuple[str, str]]]:
    """Code-change catalog entries for the services with a source tree under ``root``.

    Args:
        app: the model (its ``name`` seeds the choice, its operations become the effect's).
        root: the source root (``root/<service>/...``).
        scope_of: service -> the routes that need it, most traffic first (the generic
            catalog's scope; a service without routes gets no code fault).

    Returns:
        (entries in service then subtype order, skipped (service, reason)).
    """
    faults: list[dict[str, Any]] = []
    skipped: list[tuple[str, str]] = []
    domain = re.sub(r"[^a-z0-9-]", "", app.name.lower()) or "app"
    for svc in sorted(app.services, key=lambda s: s.name):
        tree = root / svc.name
        if not tree.is_dir():
            continue
        scope = scope_of.get(svc.name, [])
        if not scope or not svc.operations:
            skipped.append((f"{svc.name} code", "no route needs it, or it serves no operation"))
            continue
        best: dict[str, tuple[str, Mutation]] = {}
        for path in sorted(tree.rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            rel = path.relative_to(tree).as_posix()
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            for m in mutations(rel, text):
                key = _digest(app.name, text, m.line)
                if m.subtype not in best or key < best[m.subtype][0]:
                    best[m.subtype] = (key, m)
        if not best:
            skipped.append((f"{svc.name} code", "no line the mutation rules can change safely"))
            continue
        ops = [o.name for o in svc.operations]
        for subtype in ("constant-flag", "feature-logic", "type-validation"):
            if subtype not in best:
                continue
            key, m = best[subtype]
            author = f"{_AUTHORS[int(key[:8], 16) % len(_AUTHORS)]}@{domain}.example"
            rate = 1.0 if m.what == "port" else ERROR_RATE
            changed = {"constant-flag": "constant", "feature-logic": "condition"}.get(subtype, "parse or check")
            faults.append({
                "id": f"{svc.name}-code-{subtype}".lower(),
                "title": f"A commit to {svc.name}'s {m.file}{f' ({m.function})' if m.function else ''} changes a "
                         f"{changed}; {int(rate * 100)} % of its requests fail",
                "category": "code-bug", "subtype": subtype, "mechanism": "code-change", "target": svc.name,
                "scope": sorted(scope),
                "change": {"file": m.file, "find": m.find, "replace": m.replace, "summary": _summary(svc.name, m),
                           "author": author},
                "effect": {"operations": list(ops), "error_rate": rate, "log": _log(svc.name, m)},
                "probe": {"route": scope[0]},
                "artifact": {"kind": "change", "ref": m.file},
                "remedy": {"action": "rollback"},
                "expected_alerts": ["EndpointErrorRate", "HighRequestErrorRate"],
            })
    return faults, skipped
