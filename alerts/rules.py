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
``extended`` (the paper pack plus ``pack/extended.rules.yaml``, opt-in, never the
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
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from alerts.promql.engine import CompileOptions, Node, compile_query
from alerts.promql.values import UnsupportedError
from alerts.templates import Template, TemplateError

PACK_DIR = Path(__file__).resolve().parent / "pack"
PACK_PATH = PACK_DIR / "sre-marathon.rules.yaml"
"""The frozen SRE-Marathon rule pack (the ``paper`` pack's only file)."""
EXTENDED_PATH = PACK_DIR / "extended.rules.yaml"
"""Rules beyond the paper's, used only on top of :data:`PACK_PATH` (the ``extended`` pack)."""

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
    "extended": Pack("extended", "sre-marathon-extended/1", (PACK_PATH, EXTENDED_PATH)),
}
"""The shipped packs. ``paper``: SRE-Marathon Tables 4 and 6, ten alerting rules (version 2:
ServiceErrorRate moved out, entry selection inlined). ``extended``: ``paper`` + ServiceErrorRate."""

_DURATION_RE = re.compile(r"^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$")
_NAME_RE = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_LABEL_RE = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")


def parse_duration(text: str) -> float:
    """A Prometheus duration (``1m``, ``1h30m``, ``500ms``, ``0s``) in seconds.

    Raises:
        ValueError: not a Prometheus duration.
    """
    m = _DURATION_RE.match(text)
    if not m or not text:
        raise ValueError(f"not a valid duration string: {text!r} (use e.g. 30s, 5m, 1h30m)")
    y, w, d, h, mi, s, ms = (int(g) if g else 0 for g in m.groups())
    return ((((y * 365 + w * 7 + d) * 24 + h) * 60 + mi) * 60 + s) + ms / 1000.0


class RuleModel(BaseModel):
    """One rule as written in the file."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    alert: str | None = None
    record: str | None = None
    expr: str
    for_: str = Field("0s", alias="for")
    keep_firing_for: str = "0s"
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)

    @field_validator("expr", mode="before")
    @classmethod
    def _expr_text(cls, v: Any) -> Any:
        return str(v) if isinstance(v, (int, float)) else v

    @field_validator("labels", "annotations", mode="before")
    @classmethod
    def _stringify(cls, v: Any) -> Any:
        if isinstance(v, dict):
            return {str(k): "" if x is None else str(x) for k, x in v.items()}
        return v if v is not None else {}

    @field_validator("for_", "keep_firing_for")
    @classmethod
    def _duration(cls, v: str) -> str:
        parse_duration(v)
        return v

    @model_validator(mode="after")
    def _kind(self) -> RuleModel:
        if (self.alert is None) == (self.record is None):
            raise ValueError("a rule needs exactly one of 'alert' or 'record'")
        if self.record is not None:
            if not _NAME_RE.match(self.record):
                raise ValueError(f"invalid recording rule name: {self.record!r}")
            if self.annotations or self.for_ != "0s" or self.keep_firing_for != "0s":
                raise ValueError("recording rules cannot have 'annotations', 'for' or 'keep_firing_for'")
        if self.alert is not None and not self.alert.strip():
            raise ValueError("alert name must not be empty")
        for name in self.labels:
            if not _LABEL_RE.match(name) or name.startswith("__"):
                raise ValueError(f"invalid label name: {name!r}")
        for name in self.annotations:
            if not _LABEL_RE.match(name):
                raise ValueError(f"invalid annotation name: {name!r}")
        if not self.expr.strip():
            raise ValueError("field 'expr' must be set in rule")
        return self


class GroupModel(BaseModel):
    """A rule group."""

    model_config = ConfigDict(extra="forbid")

    name: str
    interval: str | None = None
    limit: int = 0
    rules: list[RuleModel] = Field(default_factory=list)

    @field_validator("interval")
    @classmethod
    def _duration(cls, v: str | None) -> str | None:
        if v is not None:
            parse_duration(v)
        return v


class RuleFileModel(BaseModel):
    """A rule file: ``groups`` with unique names."""

    model_config = ConfigDict(extra="forbid")

    groups: list[GroupModel]

    @model_validator(mode="after")
    def _unique(self) -> RuleFileModel:
        seen: set[str] = set()
        for g in self.groups:
            if g.name in seen:
                raise ValueError(f"groupname: {g.name!r} is repeated in the same file")
            seen.add(g.name)
        return self


class RuleFileError(ValueError):
    """A rule file that cannot be loaded.

    Attributes:
        path: the file.
        group: group name (None for file-level errors).
        rule: rule name (None when not about one rule).
        line, column: 1-based position in the file of the offending value, when known.
        expr_offset: 0-based offset inside the expression, when known.
    """

    def __init__(self, path: str, message: str, *, group: str | None = None, rule: str | None = None,
                 index: int | None = None, line: int | None = None, column: int | None = None,
                 expr_offset: int | None = None) -> None:
        self.path, self.group, self.rule, self.index = path, group, rule, index
        self.line, self.column, self.expr_offset = line, column, expr_offset
        self.message = message
        where = path
        if line is not None:
            where += f":{line}:{column or 1}"
        parts = [where]
        if group is not None:
            ctx = f'group "{group}"'
            if index is not None:
                ctx += f", rule {index + 1}"
            if rule is not None:
                ctx += f', "{rule}"'
            parts.append(ctx)
        if expr_offset is not None:
            message = f"{message} (at character {expr_offset + 1} of the expression)"
        parts.append(message)
        super().__init__(": ".join(parts))


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
    name: str
    interval_s: float | None
    rules: list[Rule]


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


def load_rule_text(text: str, source: str = "<rules>", *, options: CompileOptions | None = None,
                   only_groups: set[str] | None = None) -> RuleSet:
    """Validate and compile rule-file text (see module docstring).

    Args:
        text: YAML.
        source: the file name to report.
        options: compile options (e.g. negative offsets).
        only_groups: load only these group names (e.g. ``{"kubernetes-apps"}``).

    Raises:
        RuleFileError: the first problem, with file, group, rule and position.
    """
    try:
        data = yaml.safe_load(text)
        root = yaml.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise RuleFileError(source, f"YAML syntax error: {getattr(exc, 'problem', exc)}",
                            line=mark.line + 1 if mark else None, column=mark.column + 1 if mark else None) from None
    data, prefix = _extract_groups(data)
    try:
        model = RuleFileModel.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [x for x in err["loc"] if isinstance(x, (str, int))]
        path: list[str | int] = [*prefix, *("for" if x == "for_" else x for x in loc)]
        line, col = _position(root, path)
        group = rule = None
        index = None
        if len(loc) >= 2 and loc[0] == "groups" and isinstance(loc[1], int) and isinstance(data, dict):
            raw_groups = data.get("groups") or []
            if loc[1] < len(raw_groups) and isinstance(raw_groups[loc[1]], dict):
                group = str(raw_groups[loc[1]].get("name"))
                if len(loc) >= 4 and loc[2] == "rules" and isinstance(loc[3], int):
                    index = loc[3]
                    raw_rules = raw_groups[loc[1]].get("rules") or []
                    if index < len(raw_rules) and isinstance(raw_rules[index], dict):
                        rule = raw_rules[index].get("alert") or raw_rules[index].get("record")
        field_name = ".".join(str(x) for x in loc[4:]) if index is not None else ".".join(str(x) for x in loc)
        msg = err["msg"].removeprefix("Value error, ")
        raise RuleFileError(source, f"{field_name}: {msg}" if field_name else msg, group=group, rule=rule,
                            index=index, line=line, column=col) from None
    groups: list[RuleGroup] = []
    for gi, g in enumerate(model.groups):
        if only_groups is not None and g.name not in only_groups:
            continue
        rules: list[Rule] = []
        for ri, r in enumerate(g.rules):
            name = r.alert or r.record or ""
            base: list[str | int] = [*prefix, "groups", gi, "rules", ri]
            try:
                node = compile_query(r.expr, options)
            except UnsupportedError as exc:
                line, col = _position(root, [*base, "expr"])
                raise RuleFileError(source, f"unsupported by the embedded evaluator: {exc.construct}"
                                    + (f" ({exc.reason})" if exc.reason else ""), group=g.name, rule=name,
                                    index=ri, line=line, column=col, expr_offset=exc.position) from None
            except ValueError as exc:
                line, col = _position(root, [*base, "expr"])
                offset = _unknown_function_offset(r.expr, str(exc))
                raise RuleFileError(source, f"could not parse expression: {exc}", group=g.name, rule=name, index=ri,
                                    line=line, column=col, expr_offset=offset) from None
            rule = Rule(g.name, ri, name, "alert" if r.alert else "record", r.expr, node, parse_duration(r.for_),
                        parse_duration(r.keep_firing_for), dict(r.labels), dict(r.annotations))
            for kind, src, dst in (("labels", r.labels, rule.label_templates),
                                   ("annotations", r.annotations, rule.annotation_templates)):
                for key, text_value in src.items():
                    try:
                        dst[key] = Template(text_value)
                    except TemplateError as exc:
                        line, col = _position(root, [*base, kind, key])
                        raise RuleFileError(source, f"{kind}.{key}: template: {exc}", group=g.name, rule=name,
                                            index=ri, line=line, column=col) from None
            rules.append(rule)
        groups.append(RuleGroup(g.name, parse_duration(g.interval) if g.interval else None, rules))
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
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise RuleFileError(str(p), f"cannot read: {exc.strerror or exc}") from None
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
