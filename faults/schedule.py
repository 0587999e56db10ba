"""Schedules: which faults arrive when, for how long, and the benign changes and load bursts around them.

A schedule is saved as a YAML file that agents and humans replay exactly; loading then
dumping a schedule reproduces it. This module is the format (models, validation, parsing,
dumping, the table); :mod:`faults.generator` makes seeded schedules from (app, seed, regime),
and its docstring gives the distributions and why.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from engine.apps.model import AppModelError, load_app, source_root
from engine.inputs.safeyaml import YamlInputError, read_yaml
from faults.noise import BackgroundNoise, describe, noise_problems
from faults.spec import Catalog, app_catalog

RunRegime = Literal["short-5", "short-10", "marathon"]
"""The regimes :func:`faults.generator.generate` makes and the command lines offer (``--regime``)."""
Regime = Literal[RunRegime, "single"]
"""Every regime a schedule may name. ``single``: a hand-made schedule of one fault
(qualification); never generated."""
RUN_REGIMES: tuple[RunRegime, ...] = get_args(RunRegime)
"""The user-selectable regimes, shortest first (the keys of :data:`faults.generator.REGIMES`)."""
DEFAULT_REGIME: RunRegime = "short-5"
"""The regime a command runs when none is given."""
GENERATOR_VERSION = "5"

MAX_DURATION_S = 86_400
"""Longest run a schedule may describe, seconds (24 h: the marathon regime runs about 100
minutes); every time in a schedule lies within it. A larger value is a typo, and one of 1e9
would keep a run going for 30 years."""


class _Strict(BaseModel):
    # strict: YAML already types its scalars, so "3" is not an int nor "false" a bool.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class ScheduledFault(_Strict):
    """A catalog fault injected at ``at`` seconds and reverted ``lifetime`` seconds later."""

    at: int = Field(ge=0, le=MAX_DURATION_S, description="run time of injection, seconds")
    fault: str
    target: str
    lifetime: int = Field(gt=0, le=MAX_DURATION_S, description="seconds until the orchestrator reverts it")

    @property
    def end(self) -> int:
        return self.at + self.lifetime


TEMPLATE_KINDS = ("image", "probe", "resources", "scale")
"""Benign change kinds that restart or add pods without a build (module docstring)."""
_KIND_FIELDS = {"code": ("file", "comment", "find", "replace"), "config": ("env",), "image": ("image_tag",),
                "probe": ("probe", "period_s", "failure_threshold"), "resources": ("resource", "factor"),
                "scale": ("replicas",)}


class BenignChange(_Strict):
    """A change that breaks nothing: comment lines (``find`` becomes ``replace`` in ``file``
    of the repository head, or, in older schedules, a one-line ``comment`` on top of it), a
    harmless env value, a re-tag of the running build (``image_tag``), a looser probe
    (``period_s`` seconds more, or ``failure_threshold`` more failures), a higher limit
    (``resource`` times ``factor``) or ``replicas`` more replicas; or, with ``revert_of``,
    the revert of the template change of its service and kind made at that run time (which
    restores the value that change replaced)."""

    at: int = Field(ge=0, le=MAX_DURATION_S)
    service: str
    kind: Literal["code", "config", "image", "probe", "resources", "scale"]
    summary: str
    author: str
    file: str | None = None
    comment: str | None = None
    find: str | None = None
    replace: str | None = None
    env: dict[str, str] | None = None
    image_tag: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")
    probe: Literal["readiness", "liveness"] | None = None
    period_s: int | None = Field(default=None, ge=1, le=30, description="seconds added to periodSeconds")
    failure_threshold: int | None = Field(default=None, ge=1, le=3, description="added to failureThreshold")
    resource: Literal["cpu", "memory"] | None = None
    factor: float | None = Field(default=None, gt=1, le=2, description="the limit (else request) is multiplied by it")
    replicas: int | None = Field(default=None, ge=1, le=2, description="replicas added")
    revert_of: int | None = Field(default=None, ge=0, le=MAX_DURATION_S)

    @model_validator(mode="after")
    def _payload(self) -> BenignChange:
        foreign = [f for k, fields in _KIND_FIELDS.items() if k != self.kind for f in fields
                   if getattr(self, f) is not None]
        if foreign:
            raise ValueError(f"a {self.kind} change takes no {', '.join(foreign)}")
        if self.kind == "code" and (self.file is None or (self.comment is None
                                                          and (self.find is None or self.replace is None))):
            raise ValueError("a code change needs file and comment, or file, find and replace")
        if self.kind == "config" and not self.env:
            raise ValueError("a config change needs env")
        if self.kind in ("code", "config"):
            if self.revert_of is not None:
                raise ValueError(f"a {self.kind} change carries its own revert; it takes no revert_of")
            return self
        given = [f for f in _KIND_FIELDS[self.kind] if getattr(self, f) is not None]
        if self.revert_of is not None:
            if given:
                raise ValueError(f"a revert (revert_of) restores the prior value; it takes no {', '.join(given)}")
        elif self.kind == "probe" and (self.probe is None
                                       or (self.period_s is None) == (self.failure_threshold is None)):
            raise ValueError("a probe change needs probe and one of period_s or failure_threshold")
        elif self.kind == "resources" and (self.resource is None or self.factor is None):
            raise ValueError("a resources change needs resource and factor")
        elif self.kind in ("image", "scale") and not given:
            raise ValueError(f"a {self.kind} change needs {_KIND_FIELDS[self.kind][0]}, or revert_of")
        return self


class LoadBurst(_Strict):
    """The load generator runs ``factor`` times its rate for ``duration`` seconds."""

    at: int = Field(ge=0, le=MAX_DURATION_S)
    duration: int = Field(gt=0, le=MAX_DURATION_S)
    factor: float = Field(gt=0, le=5)


class Schedule(_Strict):
    """One run's schedule (see module docstring)."""

    app: str
    catalog: str | None = Field(default=None, description="the fault catalog file of a user's app file "
                                                            "(``--catalog``); None: the app's own catalog "
                                                            "(:func:`faults.spec.app_catalog`)")
    seed: int = Field(ge=0, le=2**64 - 1)
    regime: Regime
    generator: str = GENERATOR_VERSION
    duration_s: int = Field(gt=0, le=MAX_DURATION_S, description=f"seconds, at most {MAX_DURATION_S}")
    faults: tuple[ScheduledFault, ...] = Field(strict=False)  # a YAML list; its items stay strict
    changes: tuple[BenignChange, ...] = Field(default=(), strict=False)
    bursts: tuple[LoadBurst, ...] = Field(default=(), strict=False)
    noise: BackgroundNoise | None = None
    """The background alert noise of the run (:mod:`faults.noise`); None: a quiet cluster
    (hand-made schedules, qualification). The generator always plans it."""

    def events(self) -> list[tuple[int, str, Any]]:
        """Every scheduled action as (run time, kind, item), in time order."""
        out: list[tuple[int, str, Any]] = []
        for f in self.faults:
            out.append((f.at, "inject", f))
            out.append((f.end, "revert", f))
        out.extend((c.at, "change", c) for c in self.changes)
        for b in self.bursts:
            out.append((b.at, "burst", b))
            out.append((b.at + b.duration, "burst-end", b))
        order = {"revert": 0, "burst-end": 1, "inject": 2, "change": 3, "burst": 4}
        return sorted(out, key=lambda e: (e[0], order[e[1]]))


class ScheduleError(ValueError):
    """A malformed schedule: names the file, the entry and the field."""

    def __init__(self, source: str, problems: list[tuple[str, str]]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("invalid schedule\n  " + "\n  ".join(f"{source}: {w}: {m}" for w, m in problems))


def _where(loc: tuple[Any, ...]) -> str:
    if len(loc) >= 2 and isinstance(loc[1], int):
        return f"{loc[0]}[{loc[1]}]" + ("." + ".".join(str(p) for p in loc[2:]) if len(loc) > 2 else "")
    return ".".join(str(p) for p in loc) or "<top>"


def parse_schedule(data: Any, source: str, catalog: Catalog | None = None) -> Schedule:
    """Validate schedule data against its app and fault catalog.

    Raises:
        ScheduleError: naming ``source``, the entry and the field.
    """
    if not isinstance(data, dict):
        raise ScheduleError(source, [("<top>", f"expected a mapping, got {type(data).__name__}")])
    try:
        sched = Schedule.model_validate(data)
    except ValidationError as exc:
        raise ScheduleError(source, [(_where(tuple(e["loc"])), e["msg"]) for e in exc.errors()]) from None
    problems: list[tuple[str, str]] = []
    try:
        app = load_app(sched.app)
    except KeyError as exc:
        raise ScheduleError(source, [("app", str(exc.args[0]) if exc.args else str(exc))]) from None
    except (AppModelError, OSError) as exc:
        raise ScheduleError(source, [("app", f"{sched.app!r} is neither a shipped app nor a loadable app file: "
                                             f"{exc}")]) from None
    try:
        cat = catalog or app_catalog(sched.app, sched.catalog)
    except FileNotFoundError as exc:
        raise ScheduleError(source, [("catalog" if sched.catalog else "app", str(exc))]) from None
    except KeyError as exc:
        raise ScheduleError(source, [("app", str(exc.args[0]) if exc.args else str(exc))]) from None
    except (ValueError, OSError) as exc:  # CatalogError names the catalog file and its problems
        raise ScheduleError(source, [("app", f"the fault catalog of {sched.app!r} cannot be used: {exc}")]) from None
    specs = {f.id: f for f in cat.faults}
    services = set(app.service_names())
    first_at: dict[str, int] = {}
    for i, f in enumerate(sched.faults):
        spec = specs.get(f.fault)
        if f.fault in first_at:
            # Events, probes and scores are keyed by fault id: a second injection would merge with the first.
            problems.append((f"faults[{i}].fault", f"fault {f.fault!r} is already scheduled "
                                                   f"(faults[{first_at[f.fault]}]); a fault appears at most once"))
        first_at.setdefault(f.fault, i)
        if spec is None:
            problems.append((f"faults[{i}].fault", f"unknown fault {f.fault!r} in the {sched.app} catalog"))
        elif spec.target != f.target:
            problems.append((f"faults[{i}].target", f"fault {f.fault} targets {spec.target}, not {f.target}"))
        if f.end > sched.duration_s:
            problems.append((f"faults[{i}].lifetime", f"ends at {f.end}s, after the run ({sched.duration_s}s)"))
    for i, c in enumerate(sched.changes):
        if c.service not in services:
            problems.append((f"changes[{i}].service", f"unknown service {c.service!r}"))
        elif c.kind == "code" and c.file is not None and not _source_file(sched.app, c.service, c.file):
            problems.append((f"changes[{i}].file", f"{c.file!r} is not in {c.service}'s source"))
        if c.at > sched.duration_s:
            problems.append((f"changes[{i}].at", f"after the end of the run ({sched.duration_s}s)"))
    for i, burst in enumerate(sched.bursts):
        if burst.at + burst.duration > sched.duration_s:
            problems.append((f"bursts[{i}]", f"ends after the run ({sched.duration_s}s)"))
    if sched.noise is not None:
        problems.extend(noise_problems(sched.noise, app, sched.duration_s))
    ordered = sorted(enumerate(sched.faults), key=lambda x: x[1].at)
    for a_pos, (i, first) in enumerate(ordered):
        for j, later in ordered[a_pos + 1:]:
            if later.at >= first.end:
                break
            if first.target == later.target:
                problems.append((f"faults[{j}].at", f"overlaps faults[{i}] on the same target {first.target}"))
    if problems:
        raise ScheduleError(source, problems)
    return sched


def dump_schedule(sched: Schedule) -> str:
    """The canonical YAML text of a schedule (stable key order, no aliases)."""
    data = sched.model_dump(mode="json", exclude_none=True)
    header = (f"# SRE-Marathon schedule: {sched.app}, regime {sched.regime}, seed {sched.seed} "
              f"(generator v{sched.generator}).\n# {len(sched.faults)} faults, {len(sched.changes)} benign changes, "
              f"{len(sched.bursts)} load bursts over {sched.duration_s // 60} min"
              f"{', background noise' if sched.noise is not None else ''}. "
              "Replay: marathon run --schedule FILE\n")
    return header + yaml.safe_dump(data, sort_keys=False, default_flow_style=False, width=1000, allow_unicode=True)


def _source_file(app: str, service: str, file: str) -> bool:
    """True when ``file`` is a plain relative path to a file of ``service``'s source."""
    parts = file.split("/")
    if not file or "\0" in file or file.startswith("/") or ".." in parts or "\\" in file:
        return False
    return (source_root(app) / service / file).is_file()


def load_schedule(path: str | Path) -> Schedule:
    """Load and validate a schedule file.

    Raises:
        ScheduleError: unreadable, not UTF-8, malformed YAML (alias bombs and duplicate keys
            included: :mod:`engine.inputs.safeyaml`) or content; names the file and each problem.
        FileNotFoundError: no such file.
    """
    try:
        data = read_yaml(path)
    except YamlInputError as exc:
        raise ScheduleError(str(path), [(exc.where, exc.problem)]) from None
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise ScheduleError(str(path), [("<file>", f"cannot be read ({exc.strerror or exc})")]) from None
    return parse_schedule(data, str(path))


def schedule_table(sched: Schedule, catalog: Catalog | None = None) -> str:
    """A readable table of a schedule: one line per fault, then noise counts."""
    cat = catalog or app_catalog(sched.app, sched.catalog)
    specs = {f.id: f for f in cat.faults}
    lines = [f"{sched.app}  regime {sched.regime}  seed {sched.seed}  {sched.duration_s // 60} min  "
             f"{len(sched.faults)} faults, {len(sched.changes)} benign changes, {len(sched.bursts)} load bursts", "",
             f"{'AT':>7} {'UNTIL':>7}  {'FAULT':44} {'CATEGORY':15} {'MECHANISM':15} TARGET"]
    for f in sched.faults:
        s = specs[f.fault]
        lines.append(f"{_mmss(f.at):>7} {_mmss(f.end):>7}  {f.fault[:44]:44} {s.category:15} {s.mechanism:15} "
                     f"{f.target}")
    peak = max((sum(1 for g in sched.faults if g.at <= f.at < g.end) for f in sched.faults), default=0)
    lines += ["", f"max concurrent faults: {peak}"]
    if sched.noise is not None:
        d = describe(sched.noise)
        lines.append(f"background noise: Watchdog, certificate of {d['cert_client']} expiring, API client errors, "
                     f"CPU throttling of {d['throttled']}"
                     + (f", flaky {d['flaky']} ({d['flaky_episodes']} episodes)" if d["flaky"] else ""))
    return "\n".join(lines)


def _mmss(seconds: int) -> str:
    return f"{seconds // 60:d}:{seconds % 60:02d}"
