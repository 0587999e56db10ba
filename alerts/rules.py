"""Prometheus rule files: validation (pydantic), compilation, and load errors with positions.

A rule file is the format Prometheus 2.42 loads (``rule_files:``; ``promtool check
rules``)::

    groups:
      - name: <string>
        interval: <duration>          # optional
        rules:
          - alert: <name> | record: <name>
            expr: <PromQL>
            for: <duration>           # alerts only
            keep_firing_for: <duration>
            labels: {<name>: <template>}
            annotations: {<name>: <template>}

:func:`load_rule_file` validates the structure, parses every expression with
``promql-parser``, compiles it for the embedded evaluator and compiles every label and
annotation template. Any failure raises :class:`RuleFileError` naming the file, the
group, the rule and the line:column of the offending YAML value (plus the offset inside
the expression when the construct can be located) -- like promtool's
``file:line:col: group "g", rule 2, "Name": could not parse expression: ...``.
A Kubernetes ``PrometheusRule`` resource is accepted too (its ``spec.groups``).

Rule packs (:data:`PACKS`) are named sets of shipped rule files: ``paper`` (the default,
exactly the alerting rules of SRE-Marathon Tables 4 and 6; :data:`PACK_PATH`) and
``extended`` (the paper pack plus ``pack/extended.rules.yaml`` and
``pack/kube-prometheus.rules.yaml``, opt-in, never the
leaderboard default). :func:`load_pack` loads a pack by name or a rule file by path, and
:func:`pack_identity` is the version record every bundle carries.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from alerts.promql.engine import CompileOptions, Node, compile_query
from alerts.promql.values import UnsupportedError
from alerts.templates import Template, TemplateError
from engine.inputs.safeyaml import YamlInputError, parse_yaml_node, read_text

PACK_DIR = Path(__file__).resolve().parent / "pack"
PACK_PATH = PACK_DIR / "sre-marathon.rules.yaml"
"""The frozen SRE-Marathon rule pack (the ``paper`` pack's only file)."""
EXTENDED_PATH = PACK_DIR / "extended.rules.yaml"
"""Rules beyond the paper's, used only on top of :data:`PACK_PATH` (the ``extended`` pack)."""
KUBE_PROMETHEUS_PATH = PACK_DIR / "kube-prometheus.rules.yaml"
"""kube-prometheus' rules for a cluster's background noise (Watchdog, client certificate
expiry, API client errors, CPU throttling), part of the ``extended`` pack only."""

DEFAULT_PACK = "paper"


@dataclass(frozen=True)
class Pack:
    """A named, versioned set of shipped rule files.

    Attributes:
        name: what users pass (``--rules paper``).
        id: the version id recorded in bundles; bump the ``/N`` suffix whenever a file changes.
        files: the rule files, in load order.
    """

    name: str
    id: str
    files: tuple[Path, ...]


PACKS: dict[str, Pack] = {
    "paper": Pack("paper", "sre-marathon-paper/2", (PACK_PATH,)),
    "extended": Pack("extended", "sre-marathon-extended/2", (PACK_PATH, EXTENDED_PATH, KUBE_PROMETHEUS_PATH)),
}
"""The shipped packs. ``paper``: SRE-Marathon Tables 4 and 6, ten alerting rules (version 2:
ServiceErrorRate moved out, entry selection inlined). ``extended``: ``paper`` + ServiceErrorRate
+ kube-prometheus' noise rules (version 2: the kube-prometheus file added)."""

_DURATION_RE = re.compile(r"^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$")
_NAME_RE = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_LABEL_RE = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def parse_duration(text: str) -> float:
    """A Prometheus duration (``1m``, ``1h30m``, ``500ms``, ``0s``) in seconds.

    Raises:
        ValueError: not a Prometheus duration.
    """
    if text == "0":  # Prometheus allows a bare zero
        return 0.0
    m = _DURATION_RE.match(text)
    if not m or not text:
        raise ValueError(f"not a valid duration string: {text!r} (use e.g. 30s, 5m, 1h30m)")
    y, w, d, h, mi, s, ms = (int(g) if g else 0 for g in m.groups())
    total_ms = (((((y * 365 + w * 7 + d) * 24 + h) * 60 + mi) * 60 + s) * 1000) + ms
    if total_ms * 1_000_000 > 2**63 - 1:  # Go's time.Duration: int64 nanoseconds (about 292 years)
        raise ValueError(f"duration out of range: {text!r}")
    return total_ms / 1000.0


class RuleModel(BaseModel):
    """One rule as written in the file (types and durations; :func:`_rule_problems` checks
    the rest, so that every problem of a rule is reported at once)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    alert: str | None = None
    record: str | None = None
    expr: str | None = None
    for_: str = Field("0s", alias="for")
    keep_firing_for: str = "0s"
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)

    @field_validator("alert", "record", "expr", mode="before")
    @classmethod
    def _scalar_text(cls, v: Any) -> Any:
        # go-yaml decodes any scalar into a string field (``expr: 5`` is the expression "5").
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return str(v)
        return v

    @field_validator("labels", "annotations", mode="before")
    @classmethod
    def _stringify(cls, v: Any) -> Any:
        if isinstance(v, dict):
            out: dict[str, Any] = {}
            for k, x in v.items():
                if isinstance(x, (dict, list)):
                    raise ValueError(f"{k}: expected a string, got a {'mapping' if isinstance(x, dict) else 'list'}")
                out[str(k)] = "" if x is None else str(x).lower() if isinstance(x, bool) else str(x)
            return out
        return v if v is not None else {}

    @field_validator("for_", "keep_firing_for", mode="before")
    @classmethod
    def _duration(cls, v: Any) -> str:
        if v is None:
            return "0s"
        if type(v) is int and v == 0:  # go-yaml hands the scalar 0 over as "0", a valid duration
            return "0"
        if not isinstance(v, str):
            raise ValueError(f"not a valid duration string: {v!r} (use e.g. 30s, 5m, 1h30m)")
        parse_duration(v)
        return v


class GroupModel(BaseModel):
    """A rule group (its rules are validated one by one)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    interval: str | None = None
    limit: int = Field(0, strict=True)
    rules: list[Any] | None = None

    @field_validator("interval", mode="before")
    @classmethod
    def _duration(cls, v: Any) -> str | None:
        if v is None:
            return None
        if not isinstance(v, str):
            raise ValueError(f"not a valid duration string: {v!r} (use e.g. 30s, 1m)")
        parse_duration(v)
        return v


@dataclass(frozen=True)
class RuleProblem:
    """One problem of a rule file, with its place (see :class:`RuleFileError`)."""

    message: str
    group: str | None = None
    rule: str | None = None
    index: int | None = None
    line: int | None = None
    column: int | None = None
    expr_offset: int | None = None

    def format(self, path: str) -> str:
        where = path
        if self.line is not None:
            where += f":{self.line}:{self.column or 1}"
        parts = [where]
        if self.group is not None:
            ctx = f'group "{self.group}"'
            if self.index is not None:
                ctx += f", rule {self.index + 1}"
            if self.rule is not None:
                ctx += f', "{self.rule}"'
            parts.append(ctx)
        message = self.message
        if self.expr_offset is not None:
            message = f"{message} (at character {self.expr_offset + 1} of the expression)"
        parts.append(message)
        return ": ".join(parts)


class RuleFileError(ValueError):
    """A rule file that cannot be loaded: one line per problem, each naming the file.

    Attributes:
        path: the file.
        problems: every problem found (:class:`RuleProblem`), in file order.
        group, rule, index, line, column, expr_offset, message: those of the first problem
            (group None for file-level errors; line and column 1-based; expr_offset 0-based,
            inside the expression, when known).
    """

    def __init__(self, path: str, message: str = "", *, group: str | None = None, rule: str | None = None,
                 index: int | None = None, line: int | None = None, column: int | None = None,
                 expr_offset: int | None = None, problems: Sequence[RuleProblem] = ()) -> None:
        self.path = path
        self.problems = list(problems) or [RuleProblem(message, group, rule, index, line, column, expr_offset)]
        first = self.problems[0]
        self.group, self.rule, self.index = first.group, first.rule, first.index
        self.line, self.column, self.expr_offset = first.line, first.column, first.expr_offset
        self.message = first.message
        lines = [p.format(path) for p in self.problems]
        super().__init__(lines[0] if len(lines) == 1 else f"{len(lines)} problems:\n  " + "\n  ".join(lines))


@dataclass
class Rule:
    """A loaded rule: the model plus its compiled expression and templates."""

    group: str
    index: int
    name: str
    kind: str  # "alert" or "record"
    expr: str
    node: Node
    for_s: float
    keep_firing_for_s: float
    labels: dict[str, str]
    annotations: dict[str, str]
    label_templates: dict[str, Template] = field(default_factory=dict)
    annotation_templates: dict[str, Template] = field(default_factory=dict)


@dataclass
class RuleGroup:
    """A loaded rule group.

    Attributes:
        name: the group's name; interval_s: its own evaluation interval, seconds (None: the
            global one); rules: in file order.
        limit: the group's ``limit`` (0: none). An alerting rule with more pending and firing
            alerts, or a recording rule with more output series, fails its evaluation
            (``rules/alerting.go``, ``rules/recording.go``, v2.42).
    """

    name: str
    interval_s: float | None
    rules: list[Rule]
    limit: int = 0


@dataclass
class RuleSet:
    """Every group of one or more rule files, in file order."""

    groups: list[RuleGroup]
    sources: list[str]

    @property
    def rules(self) -> list[Rule]:
        return [r for g in self.groups for r in g.rules]

    @property
    def alerts(self) -> list[Rule]:
        return [r for r in self.rules if r.kind == "alert"]


def _node_at(root: yaml.Node | None, path: list[str | int]) -> yaml.Node | None:
    node = root
    for key in path:
        if node is None:
            return None
        if isinstance(key, int) and isinstance(node, yaml.SequenceNode):
            node = node.value[key] if key < len(node.value) else None
        elif isinstance(key, str) and isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == key), None)
        else:
            return None
    return node


def _position(root: yaml.Node | None, path: list[str | int]) -> tuple[int | None, int | None]:
    node = _node_at(root, path)
    while node is None and path:
        path = path[:-1]
        node = _node_at(root, path)
    if node is None:
        return None, None
    return node.start_mark.line + 1, node.start_mark.column + 1


def _extract_groups(data: Any) -> tuple[Any, list[str | int]]:
    """Plain rule files have ``groups``; a PrometheusRule resource has ``spec.groups``."""
    if isinstance(data, dict) and "groups" not in data and isinstance(data.get("spec"), dict) \
            and "groups" in data["spec"] and data.get("kind") == "PrometheusRule":
        return {"groups": data["spec"]["groups"]}, ["spec"]
    return data, []


def _rule_problems(r: RuleModel) -> list[tuple[str, str]]:
    """What promtool's ``rulefmt.Rule.Validate`` refuses in a typed rule, as (field, message)."""
    out: list[tuple[str, str]] = []
    if r.alert and r.record:
        out.append(("record", "only one of 'record' and 'alert' must be set"))
    elif not r.alert and not r.record:
        out.append(("alert", "a rule needs exactly one of 'alert' or 'record' (one of 'record' or 'alert' "
                             "must be set)"))
    if r.expr is None or not r.expr.strip():
        out.append(("expr", "field 'expr' must be set in rule"))
    if r.record:
        if not _NAME_RE.match(r.record):
            out.append(("record", f"invalid recording rule name: {r.record!r}"))
        if r.annotations:
            out.append(("annotations", "invalid field 'annotations' in recording rule"))
        if parse_duration(r.for_):
            out.append(("for", "invalid field 'for' in recording rule"))
        if parse_duration(r.keep_firing_for):
            out.append(("keep_firing_for", "invalid field 'keep_firing_for' in recording rule"))
    for name in r.labels:
        if not _LABEL_RE.match(name) or name.startswith("__"):
            out.append((f"labels.{name}", f"invalid label name: {name!r}"))
    for name in r.annotations:
        if not _LABEL_RE.match(name):
            out.append((f"annotations.{name}", f"invalid annotation name: {name!r}"))
    return out


def _compile_expr(expr: str, options: CompileOptions | None) -> tuple[Node | None, str | None, int | None]:
    """(node, problem, offset in the expression) of one rule's expression."""
    try:
        return compile_query(expr, options), None, None
    except UnsupportedError as exc:
        return None, (f"unsupported by the embedded evaluator: {exc.construct}"
                      + (f" ({exc.reason})" if exc.reason else "")), exc.position
    except ValueError as exc:
        return None, f"could not parse expression: {exc}", _unknown_function_offset(expr, str(exc))
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # the Rust parser panics (pyo3 PanicException) on some input
        return None, f"could not parse expression: {type(exc).__name__}: {exc}", None


def load_rule_text(text: str, source: str = "<rules>", *, options: CompileOptions | None = None,
                   only_groups: set[str] | None = None) -> RuleSet:
    """Validate and compile rule-file text (see module docstring), as ``promtool check rules``
    2.42 does and more: unique group names, valid durations, exactly one of ``alert`` or
    ``record``, PromQL that parses (and that the embedded evaluator supports), valid metric,
    label and annotation names, templates that parse, no unknown keys and no duplicate keys.
    Two rules of a group with the same name and labels load: for promtool 2.42 they are a lint
    warning only (exit code 0), and kube-prometheus' own rules have them.

    Args:
        text: YAML.
        source: the file name to report.
        options: compile options (e.g. negative offsets).
        only_groups: load only these group names (e.g. ``{"kubernetes-apps"}``).

    Raises:
        RuleFileError: every problem of the file, each with group, rule and position.
    """
    try:
        data, root = parse_yaml_node(text)
    except YamlInputError as exc:
        raise RuleFileError(source, f"YAML: {exc.problem}", line=exc.line, column=exc.column) from None
    data, prefix = _extract_groups(data)
    problems: list[RuleProblem] = []

    def at(path: list[str | int]) -> tuple[int | None, int | None]:
        return _position(root, [*prefix, *path])

    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise RuleFileError(source, f"expected a mapping with 'groups', got {type(data).__name__}", line=1, column=1)
    for key in data:
        if key != "groups":
            line, col = at([str(key)])
            problems.append(RuleProblem(f"field {key} not found in the rule file (only 'groups')", line=line,
                                        column=col))
    raw_groups = data.get("groups")
    if raw_groups is None:
        raw_groups = []
    if not isinstance(raw_groups, list):
        line, col = at(["groups"])
        problems.append(RuleProblem(f"groups: expected a list of groups, got {type(raw_groups).__name__}", line=line,
                                    column=col))
        raw_groups = []
    groups: list[RuleGroup] = []
    seen_groups: set[str] = set()
    for gi, raw_g in enumerate(raw_groups):
        if raw_g is None:
            continue
        gpath: list[str | int] = ["groups", gi]
        if not isinstance(raw_g, dict):
            line, col = at(gpath)
            problems.append(RuleProblem(f"groups[{gi}]: expected a mapping, got {type(raw_g).__name__}", line=line,
                                        column=col))
            continue
        gname = raw_g.get("name")
        label = str(gname) if isinstance(gname, (str, int, float)) and not isinstance(gname, bool) else None
        g: GroupModel | None = None
        try:
            g = GroupModel.model_validate(raw_g)
        except ValidationError as exc:
            for err in exc.errors():
                loc = [x for x in err["loc"] if isinstance(x, (str, int))]
                line, col = at([*gpath, *loc])
                msg = str(err["msg"]).removeprefix("Value error, ")
                problems.append(RuleProblem(f"{'.'.join(str(x) for x in loc) or 'group'}: {msg}", group=label,
                                            line=line, column=col))
        if g is not None and not g.name:
            line, col = at([*gpath, "name"])
            problems.append(RuleProblem("Groupname must not be empty", line=line, column=col))
        elif g is not None and g.name in seen_groups:
            line, col = at([*gpath, "name"])
            problems.append(RuleProblem(f"groupname: {g.name!r} is repeated in the same file", line=line, column=col))
        group_name = g.name if g is not None else label or f"groups[{gi}]"
        seen_groups.add(group_name)
        rules: list[Rule] = []
        selected = only_groups is None or group_name in only_groups
        raw_rules = g.rules if g is not None else raw_g.get("rules")
        # The rules of a group with a bad field are still checked, so that every problem is reported.
        for ri, raw_r in enumerate(raw_rules if isinstance(raw_rules, list) else []):
            if raw_r is None:
                continue
            base: list[str | int] = [*gpath, "rules", ri]
            rname: str | None = None
            if isinstance(raw_r, dict):
                n = raw_r.get("alert") or raw_r.get("record")
                rname = str(n) if isinstance(n, (str, int, float)) else None
            else:
                line, col = at(base)
                problems.append(RuleProblem(f"expected a rule mapping, got {type(raw_r).__name__}",
                                            group=group_name, index=ri, line=line, column=col))
                continue

            def add(message: str, path: Sequence[str | int], offset: int | None = None, *, _ri: int = ri,
                    _base: list[str | int] = base, _name: str | None = rname, _group: str = group_name) -> None:
                line, col = at([*_base, *path])
                problems.append(RuleProblem(message, group=_group, rule=_name, index=_ri, line=line, column=col,
                                            expr_offset=offset))

            invalid = False
            try:
                r = RuleModel.model_validate(raw_r)
            except ValidationError as exc:
                bad: set[str] = set()
                for err in exc.errors():
                    loc = ["for" if x == "for_" else x for x in err["loc"] if isinstance(x, (str, int))]
                    msg = str(err["msg"]).removeprefix("Value error, ")
                    add(f"{'.'.join(str(x) for x in loc)}: {msg}" if loc else msg, list(loc))
                    bad.add(str(loc[0]) if loc else "")
                # The rest of the rule is still checked (its expression, its templates), so that a
                # bad duration does not hide a bad expression; the rule itself is not loaded.
                rest = {k: v for k, v in raw_r.items() if str(k) not in bad}
                if bad & {"", "alert", "record", "expr"}:
                    continue
                try:
                    r = RuleModel.model_validate(rest)
                except ValidationError:
                    continue
                invalid = True
            semantic = _rule_problems(r)
            for fld, msg in semantic:
                add(msg, fld.split(".", 1))
            if not selected:  # a group left out is only checked for its structure
                continue
            node = None
            if r.expr is not None and r.expr.strip():
                node, why, offset = _compile_expr(r.expr, options)
                if why is not None:
                    add(why, ["expr"], offset)
            name = r.alert or r.record or ""
            kind = "alert" if r.alert else "record"
            label_t: dict[str, Template] = {}
            annotation_t: dict[str, Template] = {}
            for what, src, dst in (("labels", r.labels, label_t), ("annotations", r.annotations, annotation_t)):
                if kind != "alert":  # a recording rule's labels are not templates (rulefmt parses alerts only)
                    break
                for k, text_value in src.items():
                    try:
                        dst[k] = Template(text_value, name)
                    except TemplateError as exc:
                        add(f"{what}.{k}: {exc}", [what, k])
            if semantic or node is None or invalid:
                continue
            rule = Rule(group_name, ri, name, kind, str(r.expr), node, parse_duration(r.for_),
                        parse_duration(r.keep_firing_for), dict(r.labels), dict(r.annotations), label_t, annotation_t)
            rules.append(rule)
        if selected and g is not None:
            groups.append(RuleGroup(g.name, parse_duration(g.interval) if g.interval else None, rules, g.limit))
    if problems:
        problems.sort(key=lambda p: (p.line or 0, p.column or 0))  # file order (stable for file-level ones)
        raise RuleFileError(source, problems=problems)
    return RuleSet(groups, [source])


def _unknown_function_offset(expr: str, message: str) -> int | None:
    m = re.search(r"unknown function with name '([^']+)'", message)
    if m:
        pos = expr.find(m.group(1) + "(")
        return pos if pos >= 0 else None
    return None


def load_rule_file(path: str | Path, *, options: CompileOptions | None = None,
                   only_groups: set[str] | None = None) -> RuleSet:
    """Load one rule file (see :func:`load_rule_text`).

    Raises:
        RuleFileError: unreadable file or any problem in it.
    """
    p = Path(path)
    try:
        text = read_text(p)
    except OSError as exc:
        raise RuleFileError(str(p), f"cannot read: {exc.strerror or exc}") from None
    except YamlInputError as exc:
        raise RuleFileError(str(p), exc.problem) from None
    return load_rule_text(text, str(p), options=options, only_groups=only_groups)


def load_rule_files(paths: Sequence[str | Path], *, options: CompileOptions | None = None) -> RuleSet:
    """Load several rule files into one rule set (groups in the given order)."""
    groups: list[RuleGroup] = []
    sources: list[str] = []
    for path in paths:
        rs = load_rule_file(path, options=options)
        groups.extend(rs.groups)
        sources.extend(rs.sources)
    return RuleSet(groups, sources)


def pack_files(name_or_path: str | Path = DEFAULT_PACK) -> tuple[Path, ...]:
    """The rule files of a pack (a name in :data:`PACKS`) or of one rule file (any other value, a path).

    Raises:
        RuleFileError: neither a pack name nor an existing file (the message lists the packs).
    """
    if isinstance(name_or_path, str) and name_or_path in PACKS:
        return PACKS[name_or_path].files
    path = Path(name_or_path)
    if not path.is_file():
        raise RuleFileError(str(name_or_path), f"no such rule pack or rule file (packs: {', '.join(PACKS)}; "
                                               "or give the path of a Prometheus rule file)")
    return (path,)


def load_pack(name: str | Path = DEFAULT_PACK, *, options: CompileOptions | None = None) -> RuleSet:
    """Load a rule pack by name (``paper``, the default; ``extended``) or a rule file by path.

    Raises:
        RuleFileError: unknown pack and no such file, or any problem in a file.
    """
    return load_rule_files(list(pack_files(name)), options=options)


def pack_identity(name_or_path: str | Path = DEFAULT_PACK) -> dict[str, Any]:
    """The version record of a pack, as bundles carry it (``run.start``).

    Returns:
        ``{"pack": "paper", "id": "sre-marathon-paper/2", "files": {"sre-marathon.rules.yaml": "<sha256>"}}``;
        for a user's rule file ``{"pack": "file", "id": "file:<file name>", "files": {<file name>: <sha256>}}``.
        Digests are the hex sha256 of the files' bytes, so an edited file is visible even
        where the id is unchanged.

    Raises:
        RuleFileError: unknown pack and no such file, or a file that cannot be read.
    """
    files = pack_files(name_or_path)
    digests: dict[str, str] = {}
    for path in files:
        try:
            digests[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as exc:
            raise RuleFileError(str(path), f"cannot read: {exc.strerror or exc}") from None
    if isinstance(name_or_path, str) and name_or_path in PACKS:
        pack = PACKS[name_or_path]
        return {"pack": pack.name, "id": pack.id, "files": digests}
    return {"pack": "file", "id": f"file:{files[0].name}", "files": digests}
