"""``marathon faults generate`` and ``marathon faults qualify``: fault catalogs for any app.

* ``generate --app APP|FILE|DIR -o catalog.yaml [--source SERVICE=PATH]... [--qualify]`` writes
  the generic catalog of an app model (:mod:`faults.generic`; with code-change faults from the
  services' source trees, :mod:`faults.codegen`: ``--source`` copies each tree into the app
  directory's ``src/SERVICE/``, where every command finds it), with the pod placement read from a warm-started simulator
  (it does not depend on the seed) for the node and zone faults. With ``--qualify`` only the
  faults that pass qualification are written; the others are listed in the file's header with
  the trial they failed.
* ``qualify --app APP|FILE|DIR [--catalog FILE] [-o FILE] [--json]`` runs each fault's three
  trials (:mod:`engine.run.qualify`: no-op, revert; :func:`engine.run.validate.qualify_fault`:
  the oracle through the tools and the scorer, with its repair credited within the shortest
  lifetime a schedule gives the fault) and prints one line per fault. Without ``--catalog``
  (and outside an app directory with a ``catalog.yaml``, or a shipped app) it qualifies the
  generic catalog. ``-o`` writes the faults that qualified, each with ``expected_alerts`` set
  to the paper-pack rules that fired, attributable to it, in its no-op trial.

Exit codes: 0 every fault qualified (``generate``: the file was written); 1 some fault did not
qualify (``generate --qualify``: none did); 2 bad input (the message names the file and field).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from engine.apps.model import (
    APP_DIR_MODEL,
    APP_DIR_SOURCE,
    AppModel,
    AppModelError,
    app_source_root,
    builtin_apps,
    load_app,
    register_source,
)
from engine.cliargs import add_app_arguments
from faults.spec import Catalog, CatalogError, FaultSpec, app_catalog, bind_catalog, parse_catalog


@dataclass
class FaultQualification:
    """One fault's qualification: ``ok`` when every trial passed; ``trials`` maps trial name
    (noop, revert, oracle) to (ok, reason); ``fired``: the attributable paper-pack rules of the
    no-op trial."""

    fault: str
    ok: bool
    trials: dict[str, tuple[bool, str]] = field(default_factory=dict)
    fired: list[str] = field(default_factory=list)

    @property
    def reason(self) -> str:
        """The first failed trial and why, or what passed."""
        for name, (ok, why) in self.trials.items():
            if not ok:
                return f"{name}: {why}"
        return "; ".join(f"{name}: {why}" for name, (_, why) in self.trials.items())


def placement(app: str) -> dict[str, list[str]]:
    """Service -> the nodes of its pods on a warm-started simulator of ``app`` (run time 0,
    seed 0; the warm-start placement does not depend on the seed)."""
    from engine.run.substrates import open_substrate

    sub = open_substrate(app, seed=0)
    try:
        out: dict[str, list[str]] = {}
        for pod in sorted(sub.pods(), key=lambda p: p.name):
            if pod.node is not None and not pod.terminating:
                out.setdefault(pod.service, []).append(pod.node)
        return out
    finally:
        sub.close()


def qualify_one(app: str, spec: FaultSpec) -> FaultQualification:
    """The three trials of one fault on fresh clusters of ``app`` (module docstring); the
    catalog ``spec`` comes from must be the app's (:func:`faults.spec.app_catalog`), or bound
    to it (:func:`faults.spec.bind_catalog`), for the oracle trial's run."""
    from engine.run.qualify import noop_trial, revert_trial
    from engine.run.substrates import open_substrate
    from engine.run.validate import qualify_fault
    from faults.generator import REGIMES, lifetime
    from scoring.gates import MIN_SOAK_S, SOAK_S

    out = FaultQualification(spec.id, False)
    noop = noop_trial(spec, open_substrate(app, seed=0))
    out.fired = list(noop.alerts)
    out.trials["noop"] = (noop.ok, noop.reason)
    if not noop.ok:
        return out
    revert = revert_trial(spec, open_substrate(app, seed=0))
    out.trials["revert"] = (revert.ok, revert.reason)
    if not revert.ok:
        return out
    oracle = qualify_fault(app, spec)
    ok, why = oracle.ok, oracle.reason
    if ok:
        shortest = lifetime(load_app(app), spec, min(int(r["life_clip"][0]) for r in REGIMES.values()))
        budget = shortest + SOAK_S - MIN_SOAK_S
        if oracle.work_s is None or oracle.work_s > budget:
            ok, why = False, (f"repair credited {oracle.work_s} s after injection, beyond the shortest lifetime a "
                              f"schedule gives it ({shortest} s)")
    out.trials["oracle"] = (ok, why)
    out.ok = ok
    return out


def qualify_catalog(app: str, catalog: Catalog, *,
                    progress: Callable[[FaultQualification], None] | None = None) -> list[FaultQualification]:
    """Qualify every fault of ``catalog`` on ``app`` (bound to the app for the oracle's runs),
    in catalog order."""
    out = []
    with bind_catalog(app, catalog):
        for spec in catalog.faults:
            result = qualify_one(app, spec)
            out.append(result)
            if progress is not None:
                progress(result)
    return out


def qualified_entries(catalog: Catalog, results: Sequence[FaultQualification],
                      data: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The catalog entries of the faults that qualified, ``expected_alerts`` set to the rules
    that fired in their no-op trial (``data``: the catalog's own entries, to keep their
    layout; default: each spec dumped without its defaults)."""
    raw = {e["id"]: e for e in (data or {}).get("faults", []) if isinstance(e, dict)}
    passed = {r.fault: r for r in results if r.ok}
    out = []
    for spec in catalog.faults:
        if spec.id not in passed:
            continue
        entry = dict(raw.get(spec.id) or spec.model_dump(mode="json", exclude_defaults=True))
        entry["expected_alerts"] = sorted(passed[spec.id].fired)
        out.append(entry)
    return out


def _dump(head: str, app: str, faults: list[dict[str, Any]]) -> str:
    return head + yaml.safe_dump({"app": app, "faults": faults}, sort_keys=False, allow_unicode=True, width=120)


def _line(r: FaultQualification) -> str:
    return f"{'ok  ' if r.ok else 'FAIL'} {r.fault:60} {r.reason[:160]}"


def _model(args: argparse.Namespace) -> AppModel | None:
    if not args.app:
        print("marathon: --app is required (a shipped app's name, an app model file or an app directory)",
              file=sys.stderr)
        return None
    try:
        return load_app(args.app)
    except (KeyError, AppModelError) as exc:
        print(f"marathon: {exc.args[0] if isinstance(exc, KeyError) and exc.args else exc}", file=sys.stderr)
        return None


SOURCE_SKIP_DIRS = frozenset({".git", "node_modules", "vendor", "__pycache__", "target", "bin", "obj", "dist",
                              "build", ".venv", "venv"})
"""Directories ``--source`` does not copy (VCS data, dependencies, build output)."""
SOURCE_MAX_FILE = 256 * 1024
"""Largest file ``--source`` copies, bytes (larger ones are generated or data, not code a commit edits)."""


def copy_sources(app: str, specs: Sequence[str]) -> list[Path]:
    """Copy each ``SERVICE=PATH`` tree's UTF-8 text files into the app directory's
    ``src/SERVICE/`` (replacing what was there), so the app directory -- and the bundles of its
    runs -- carry the source its code-change faults apply to. Skips :data:`SOURCE_SKIP_DIRS`,
    hidden directories, binary files and files over :data:`SOURCE_MAX_FILE`.

    Returns:
        The service directories written.

    Raises:
        ValueError: a spec without ``=``, a PATH that is not a directory, or an app that is
            not a directory (or its ``app.yaml``).
    """
    import shutil

    base = Path(app)
    if base.is_file() and base.name == APP_DIR_MODEL:
        base = base.parent
    if not (base / APP_DIR_MODEL).is_file():
        raise ValueError(f"--source needs --app DIR (a directory holding {APP_DIR_MODEL}): its {APP_DIR_SOURCE}/ "
                         f"keeps the copied source beside the model; {app} is not one")
    written: list[Path] = []
    for spec in specs:
        service, sep, src = spec.partition("=")
        if not sep or not service or not src or "/" in service:
            raise ValueError(f"--source {spec!r}: expected SERVICE=PATH")
        root = Path(src)
        if not root.is_dir():
            raise ValueError(f"--source {spec!r}: {src} is not a directory")
        dest = base / APP_DIR_SOURCE / service
        if dest.resolve() == root.resolve():
            written.append(dest)
            continue
        if dest.exists():
            shutil.rmtree(dest)
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root)
            if not path.is_file() or any(p in SOURCE_SKIP_DIRS or p.startswith(".") for p in rel.parts[:-1]) \
                    or path.stat().st_size > SOURCE_MAX_FILE:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            out = dest / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8")
        written.append(dest)
    return written


def cmd_faults_generate(args: argparse.Namespace) -> int:
    """``marathon faults generate`` (module docstring)."""
    from faults.generic import generic_catalog, header

    model = _model(args)
    if model is None:
        return 2
    if args.source:
        unknown = sorted({spec.partition("=")[0] for spec in args.source} - set(model.service_names()))
        if model.name in builtin_apps():
            print(f"marathon: {args.app}: --source needs a model of its own name (not the shipped {model.name!r}, "
                  "whose source is the package's)", file=sys.stderr)
            return 2
        if unknown:
            print(f"marathon: --source: no service {', '.join(unknown)} in {args.app}", file=sys.stderr)
            return 2
        try:
            copy_sources(args.app, args.source)
        except ValueError as exc:
            print(f"marathon: {exc}", file=sys.stderr)
            return 2
        register_source(args.app)
    gen = generic_catalog(model, placement(args.app), app_source_root(args.app))
    try:
        catalog = parse_catalog(gen.data, f"<generic catalog of {args.app}>", model)
    except CatalogError as exc:  # a model the rules do not fit: say so rather than write a broken file
        print(f"marathon: the generic catalog does not validate: {exc}", file=sys.stderr)
        return 2
    faults, excluded = list(gen.data["faults"]), []
    if args.qualify:
        results = qualify_catalog(args.app, catalog, progress=None if args.quiet else
                                  lambda r: print(_line(r), file=sys.stderr, flush=True))
        faults = qualified_entries(catalog, results, gen.data)
        excluded = [(r.fault, r.reason) for r in results if not r.ok]
    text = _dump(header(model, gen.skipped, excluded), model.name, faults)
    Path(args.output).write_text(text, encoding="utf-8")
    state = "qualified" if args.qualify else "candidate (not yet qualified: marathon faults qualify)"
    print(f"wrote {args.output}: {len(faults)} {state} faults for {model.name}"
          + (f", {len(excluded)} excluded" if args.qualify else ""))
    return 1 if args.qualify and not faults else 0


def cmd_faults_qualify(args: argparse.Namespace) -> int:
    """``marathon faults qualify`` (module docstring)."""
    from faults.generic import generic_catalog, header

    model = _model(args)
    if model is None:
        return 2
    data: dict[str, Any] | None = None
    skipped: list[tuple[str, str]] = []
    try:
        catalog = app_catalog(args.app, args.catalog)
    except FileNotFoundError:
        if args.catalog is not None:
            print(f"marathon: no such catalog file {args.catalog}", file=sys.stderr)
            return 2
        gen = generic_catalog(model, placement(args.app), app_source_root(args.app))
        data, skipped = gen.data, gen.skipped
        catalog = parse_catalog(gen.data, f"<generic catalog of {args.app}>", model)
        print(f"marathon: {args.app} has no catalog: qualifying its generic catalog ({len(catalog.faults)} "
              "faults)", file=sys.stderr)
    except (CatalogError, KeyError, AppModelError) as exc:
        print(f"marathon: {exc}", file=sys.stderr)
        return 2
    if args.fault:
        wanted = set(args.fault)
        unknown = sorted(wanted - {f.id for f in catalog.faults})
        if unknown:
            print(f"marathon: no such fault in the catalog: {', '.join(unknown)}", file=sys.stderr)
            return 2
        catalog = Catalog(app=catalog.app, faults=tuple(f for f in catalog.faults if f.id in wanted))
    results = qualify_catalog(args.app, catalog, progress=None if args.json or args.quiet else
                              lambda r: print(_line(r), flush=True))
    passed = sum(r.ok for r in results)
    if args.json:
        sys.stdout.write(json.dumps([asdict(r) | {"reason": r.reason} for r in results], indent=1) + "\n")
    else:
        print(f"\n{passed} of {len(results)} faults qualified")
    if args.output:
        excluded = [(r.fault, r.reason) for r in results if not r.ok]
        Path(args.output).write_text(_dump(header(model, skipped, excluded), model.name,
                                           qualified_entries(catalog, results, data)), encoding="utf-8")
        print(f"wrote {args.output}: the {passed} qualified faults", file=sys.stderr)
    return 0 if passed == len(results) else 1


def add_faults_arguments(sub: Any) -> None:
    """Declare ``marathon faults generate`` and ``marathon faults qualify`` on the ``faults``
    sub-parsers ``sub``."""
    p = sub.add_parser("generate", help="write the generic fault catalog of any app model")
    add_app_arguments(p, None, catalog=False)
    p.add_argument("-o", "--output", required=True, help="the catalog file to write")
    p.add_argument("--source", action="append", metavar="SERVICE=PATH",
                   help="the service's source tree (repeatable): copied into the app directory's src/SERVICE/, "
                        "where code-change faults are generated from (faults/codegen.py)")
    p.add_argument("--qualify", action="store_true", help="write only the faults that pass qualification (the "
                                                          "others are listed in the header)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=cmd_faults_generate)
    p = sub.add_parser("qualify", help="no-op, revert and oracle trials of each fault of a catalog")
    add_app_arguments(p, None)
    p.add_argument("--fault", action="append", metavar="ID", help="only this fault (repeatable)")
    p.add_argument("-o", "--output", help="write the faults that qualified to this catalog file")
    p.add_argument("--json", action="store_true", help="the results as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=cmd_faults_qualify)
