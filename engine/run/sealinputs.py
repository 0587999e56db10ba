"""What the seal adds to a run directory so the bundle carries everything its score depends on.

A recorded run writes ``app.yaml`` and ``rules/`` as it starts (they hold no ground truth).
At the seal, once the journal is decrypted (:mod:`engine.bundle.journal`), :func:`complete_inputs`
adds what would have revealed the answers while the run was live:

* ``catalog.yaml``: the catalog entries of the faults the schedule names (``{"app", "faults"}``,
  the format :func:`faults.spec.parse_catalog` reads);
* ``counterfactual.json``: the no-op counterfactual of the schedule, per sample
  (:class:`scoring.counterfactual.Counterfactual` ``to_dict()``), computed now by re-running
  the schedule without an operator on this engine (:mod:`engine.run.counterfactual`), with
  ``engine`` (which engine computed it).

``marathon score`` and ``marathon report`` read these instead of the installed package, so a
bundle sealed by another engine version, or of an imported app, is scored from its own
contents; ``marathon verify --replay`` recomputes them and says where they differ.

The bundle format knows nothing of runs: :func:`engine.bundle.format.seal` takes the inputs as
a hook, and :func:`seal_run` is the seal every recorded run goes through (``marathon run``,
``watch``, ``play``, ``serve``, ``marathon seal``), passing :func:`complete_inputs`.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from engine.bundle.events import Event
from engine.bundle.format import seal
from engine.bundle.layout import APP_FILE, CATALOG_FILE, COUNTERFACTUAL_FILE, SCHEDULE_FILE, SOURCE_DIR


def catalog_entries(app: str, schedule_text: str) -> dict[str, Any]:
    """``{"app": name, "faults": [entry, ...]}`` for the faults a schedule names, in schedule order
    (``name``: the catalog's app, the app model's name; the catalog is the schedule's ``catalog``
    file, or the app's own: :func:`faults.spec.app_catalog`).

    Raises:
        KeyError, ValueError: the app or the schedule does not load on this engine.
    """
    from faults.spec import app_catalog

    sched = yaml.safe_load(schedule_text) or {}
    ids = [str(f["fault"]) for f in sched.get("faults", []) if isinstance(f, dict) and "fault" in f]
    catalog = sched.get("catalog") if isinstance(sched.get("catalog"), str) else None
    cat = app_catalog(app, catalog)
    specs = {f.id: f for f in cat.faults}
    missing = [i for i in ids if i not in specs]
    if missing:
        raise KeyError(f"faults not in the {app} catalog: {', '.join(missing)}")
    seen: list[str] = []
    for i in ids:
        if i not in seen:
            seen.append(i)
    return {"app": cat.app, "faults": [specs[i].model_dump(mode="json", exclude_defaults=True) for i in seen]}


def counterfactual_document(app: str, seed: int, schedule_text: str) -> dict[str, Any]:
    """The no-op counterfactual as the bundle carries it (module docstring).

    Raises:
        Exception: the schedule cannot be re-run on this engine (whatever the run raises).
    """
    from engine.run.counterfactual import noop_counterfactual
    from engine.run.identity import engine_identity

    doc = noop_counterfactual(app, seed, schedule_text).to_dict()
    doc["engine"] = engine_identity()
    return doc


def counterfactual_first(schedule: Any, seed: int) -> dict[str, Any] | None:
    """The no-op counterfactual of a run about to start, computed before its simulator exists
    (:func:`counterfactual_document` of ``schedule`` as the orchestrator will record it), so a
    headless run's peak memory is the larger of the two runs rather than their sum; None when
    it cannot be computed (sealing then tries again and notes why).

    Args:
        schedule: the :class:`faults.schedule.Schedule` the run replays.
        seed: the run's simulation seed.
    """
    import gc

    from faults.schedule import dump_schedule

    try:
        return counterfactual_document(schedule.app, seed, dump_schedule(schedule))
    except Exception:  # whatever the no-op run raises, sealing meets it again and records it
        return None
    finally:
        gc.collect()  # the no-op run's simulator goes before the run's is built


def write_counterfactual(run_dir: str | Path, doc: dict[str, Any]) -> None:
    """Write ``counterfactual.json`` (``doc``, :func:`counterfactual_document`) into ``run_dir``."""
    _write(Path(run_dir) / COUNTERFACTUAL_FILE, json.dumps(doc, sort_keys=True, indent=1) + "\n")


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def complete_inputs(run_dir: str | Path, events: list[Event]) -> list[str]:
    """Add ``catalog.yaml`` and ``counterfactual.json`` when missing; never raises.

    Returns:
        One note per input that could not be added (the bundle is sealed without it and
        its score is then provisional, or read from the installed package).
    """
    run_dir = Path(run_dir)
    start = events[0] if events and events[0].kind == "run.start" else None
    schedule = run_dir / SCHEDULE_FILE
    if start is None or not schedule.is_file() or not isinstance(start.payload.get("app"), str) \
            or not (run_dir / APP_FILE).is_file():
        return []  # not a run the orchestrator recorded (it writes app.yaml as it starts)
    app = str(start.payload["app"])
    notes: list[str] = []
    try:
        text = schedule.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [f"{SCHEDULE_FILE} unreadable ({exc})"]
    if not (run_dir / CATALOG_FILE).exists():
        try:
            _write(run_dir / CATALOG_FILE, yaml.safe_dump(catalog_entries(app, text), sort_keys=False,
                                                          allow_unicode=True))
        except Exception as exc:  # an app or catalog this engine cannot load: sealed without it
            notes.append(f"{CATALOG_FILE} not added: {exc}")
    if not (run_dir / COUNTERFACTUAL_FILE).exists():
        try:
            seed = int(start.payload["seed"])
            write_counterfactual(run_dir, counterfactual_document(app, seed, text))
        except Exception as exc:  # a schedule this engine cannot re-run: scored provisionally
            notes.append(f"{COUNTERFACTUAL_FILE} not added: {type(exc).__name__}: {exc}")
    return notes


def seal_run(run_dir: str | Path, *, recover: bool = False, out: str | Path | None = None,
             sign: bool = True) -> Path:
    """Seal a recorded run into its bundle, with the inputs its score depends on (module docstring).

    :func:`engine.bundle.format.seal` with :func:`complete_inputs` as its ``inputs`` hook; the
    arguments, the result and the errors are ``seal``'s.

    Raises:
        engine.bundle.format.NotARunError, engine.bundle.format.BundleError: as ``seal``.
    """
    return seal(run_dir, recover=recover, out=out, inputs=complete_inputs, sign=sign)


@contextmanager
def carried_inputs(bundle: Any, app: str, source: str) -> Iterator[bool]:
    """Inside the block, the app reference ``app`` of a user's app (not a shipped one) loads the
    app model, the source tree and the catalog entries the bundle carries (``app.yaml``,
    ``src/<service>/...``, ``catalog.yaml``: :func:`engine.apps.model.bind_app`,
    :func:`engine.apps.model.bind_source`, :func:`faults.spec.bind_catalog`), whatever the user's
    files now hold or whether they still exist, so a replay re-executes what was run. Yields
    whether it bound anything (False for a shipped app, whose inputs replay compares with the
    installation instead, and for a bundle that carries no model).

    Args:
        bundle: an open bundle (:func:`engine.bundle.format.open_bundle`).
        app: ``run.start``'s app.
        source: the bundle's path, for error messages.

    Raises:
        engine.apps.model.AppModelError, faults.spec.CatalogError: a carried input that does not load.
    """
    from engine.apps.model import bind_app, bind_source, is_shipped_app, parse_app
    from engine.inputs.safeyaml import parse_yaml
    from faults.spec import bind_catalog, parse_catalog

    names = set(bundle.names())
    if is_shipped_app(app) or APP_FILE not in names:
        yield False
        return
    model = parse_app(parse_yaml(bundle.read_text(APP_FILE)), f"{source}:{APP_FILE}")
    with contextlib.ExitStack() as stack:
        stack.enter_context(bind_app(app, model))
        sources = sorted(n for n in names if n.startswith(f"{SOURCE_DIR}/"))
        if sources:  # the source tree the run's code changes applied to, whatever the user's now holds
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="marathon-src-")))
            for name in sources:
                dest = tmp / name[len(SOURCE_DIR) + 1:]
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text(bundle.read_text(name), encoding="utf-8")
            stack.enter_context(bind_source(model.name, tmp))
        if CATALOG_FILE in names:
            catalog = parse_catalog(parse_yaml(bundle.read_text(CATALOG_FILE)), f"{source}:{CATALOG_FILE}", model)
            stack.enter_context(bind_catalog(app, catalog))
        yield True
