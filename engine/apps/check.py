"""``marathon app check FILE``: does an app model load, and which of its values are still guesses or defaults.

:func:`check_app` loads the file with :func:`engine.apps.model.load_app_file` and, for an imported
model, compares every value recorded under ``imported.guesses`` and ``imported.defaults`` with
the value now at that place in the file: a value still equal is *in use*; one the user changed
is *replaced*; a note whose service or field is gone is *gone*. It also lists the fields the
file leaves out, which therefore take the schema's defaults (``engine/apps/model.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.apps.model import AppModel, ImportNote, load_app_file
from engine.inputs.safeyaml import read_yaml

SCHEMA_DEFAULT_FIELDS: tuple[str, ...] = ("role", "protocol", "replicas", "startup_s", "memory_idle")
"""Service fields whose absence from the file means the schema's default is in force."""
LOAD_DEFAULT_FIELDS: tuple[str, ...] = ("swing", "period_s", "think_time_s", "request_timeout_s")


@dataclass
class NoteStatus:
    """One import note with its state now: ``in use``, ``replaced`` (with the value now) or ``gone``."""

    kind: str  # "default" or "guess"
    note: ImportNote
    state: str
    now: Any = None

    def where(self) -> str:
        """The note's place as ``services.<name>.<field>``, or the document path."""
        return f"services.{self.note.service}.{self.note.field}" if self.note.service else self.note.field


@dataclass
class CheckReport:
    """What ``marathon app check`` found in one loadable file."""

    app: AppModel
    notes: list[NoteStatus] = field(default_factory=list)
    schema_defaults: list[str] = field(default_factory=list)

    def in_use(self, kind: str) -> list[NoteStatus]:
        """The notes of ``kind`` (``default`` or ``guess``) whose value is still the recorded one."""
        return [n for n in self.notes if n.kind == kind and n.state == "in use"]


_MISSING = object()


def _walk(node: Any, path: str) -> Any:
    """The value at a dotted path with ``[i]`` indices, or ``_MISSING``."""
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        if part.startswith("["):
            index = int(part[1:-1])
            if not isinstance(node, list) or index >= len(node):
                return _MISSING
            node = node[index]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return _MISSING
    return node


def _same(recorded: Any, now: Any) -> bool:
    if isinstance(recorded, dict) and isinstance(now, dict):
        return all(_same(v, now.get(k, _MISSING)) for k, v in recorded.items())
    if isinstance(recorded, (int, float)) and isinstance(now, (int, float)) and not isinstance(now, bool):
        return abs(float(recorded) - float(now)) <= 1e-9 * max(1.0, abs(float(recorded)))
    return bool(recorded == now)


def _state(data: dict[str, Any], note: ImportNote) -> tuple[str, Any]:
    root: Any = data
    if note.service is not None:
        root = next((s for s in data.get("services") or [] if isinstance(s, dict) and s.get("name") == note.service),
                    None)
        if root is None:
            return "gone", None
    if note.field == "dependencies":
        deps = [d.get("service") for d in root.get("dependencies") or [] if isinstance(d, dict)]
        return ("in use" if note.value in deps else "gone"), None
    if note.field == "routes":
        now = sorted(str(_walk(r, "entry.service")) for r in data.get("routes") or [])
        return ("in use" if _same(sorted(note.value or []), now) else "replaced"), now
    if note.field.endswith("[*].times"):
        calls = _walk(root, note.field[: -len("[*].times")])
        times = [c.get("times", 1.0) for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
        same = bool(times) and all(abs(float(note.value) - float(t)) < 1e-5 for t in times)
        return ("in use" if same else "replaced"), times
    if note.field == "routes[*].share":
        shares = [r.get("share") for r in data.get("routes") or [] if isinstance(r, dict)]
        same = bool(shares) and all(isinstance(s, (int, float)) and abs(float(note.value) - s) < 1e-5 for s in shares)
        return ("in use" if same else "replaced"), shares
    now = _walk(root, note.field)
    if now is _MISSING:
        return "gone", None
    return ("in use" if _same(note.value, now) else "replaced"), now


def check_app(path: str | Path) -> CheckReport:
    """Load ``path`` and report the import notes' states and the schema defaults in force.

    Raises:
        AppModelError: the file does not load (the message names the file and the field).
    """
    app = load_app_file(path)
    data = read_yaml(Path(path))
    report = CheckReport(app)
    if app.imported is not None:
        for kind, notes in (("default", app.imported.defaults), ("guess", app.imported.guesses)):
            for note in notes:
                state, now = _state(data, note)
                report.notes.append(NoteStatus(kind, note, state, now))
    for raw in data.get("services") or []:
        missing = [f for f in SCHEMA_DEFAULT_FIELDS if f not in raw]
        if missing:
            svc = app.service(str(raw.get("name")))
            report.schema_defaults.append(f"services.{svc.name}: " + ", ".join(
                f"{f}={getattr(svc, f)}" for f in missing))
    load = data.get("load") or {}
    missing = [f for f in LOAD_DEFAULT_FIELDS if f not in load]
    if missing:
        report.schema_defaults.append("load: " + ", ".join(f"{f}={getattr(app.load, f)}" for f in missing))
    return report


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_show(v)}" for k, v in value.items()) + "}"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def render_check(path: str | Path, report: CheckReport) -> str:
    """The text ``marathon app check`` prints for a loadable file."""
    app = report.app
    lines = [f"{path}: loads: {app.name}, {len(app.services)} services, {len(app.routes)} routes, "
             f"{len(app.edges())} call edges"]
    if app.imported is None:
        lines.append("not an imported model (no `imported` section): no guesses or defaults recorded")
    for kind, title in (("default", "defaults still in use"), ("guess", "guesses still in use")):
        used = report.in_use(kind)
        total = sum(1 for n in report.notes if n.kind == kind)
        if not total:
            continue
        lines.append(f"{title}: {len(used)} of {total}")
        lines.extend(f"  {n.where()} = {_show(n.note.value)}  ({n.note.evidence})" for n in used)
        changed = [n for n in report.notes if n.kind == kind and n.state != "in use"]
        if changed:
            lines.append(f"  -- {len(changed)} replaced or gone: "
                         + ", ".join(f"{n.where()} ({n.state})" for n in changed))
    if report.schema_defaults:
        lines.append("schema defaults (fields the file leaves out):")
        lines.extend(f"  {item}" for item in report.schema_defaults)
    if app.imported is not None:
        imp = app.imported
        for name, items in (("dangling references", imp.dangling), ("UDP ports (not modelled)", imp.udp)):
            if items:
                lines.append(f"{name}: {len(items)}")
                lines.extend("  " + ", ".join(f"{k}={v}" for k, v in item.items()) for item in items)
        if imp.warnings:
            lines.append(f"import warnings: {len(imp.warnings)}")
            lines.extend(f"  {w}" for w in imp.warnings)
    return "\n".join(lines) + "\n"
