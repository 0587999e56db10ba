"""Re-simulating a schedule's no-op run: the run side of the counterfactual.

On the embedded simulator a run's no-op counterfactual is produced deterministically: the
same schedule replayed with the same seed and no operator. Operators and alert evaluation
never change what the simulator does on its own, so the no-op run shows exactly what the
run's users would have seen had nobody acted. :func:`noop_counterfactual` runs it and
reduces its events to a :class:`scoring.counterfactual.Counterfactual` (what the scorer
reads; the reduction is :func:`scoring.counterfactual.counterfactual_from_events`).

The seal stores the result in the bundle (:mod:`engine.run.sealinputs`), so scoring reads it
from there; this module is for the seal, for ``marathon verify --replay`` (which re-derives
it), for the live panes, and for the command layer to re-simulate bundles sealed before they
carried one.

Results are cached per (app, seed, schedule digest, engine code digest) under
:func:`cache_dir` (``$SRE_MARATHON_CACHE``, default ``~/.cache/sre-marathon``, then ``noop/``),
so a code change never reuses a stale counterfactual, and the score records which no-op run
it compared against (its event-stream head hash).

The scorer also asks whether a run replayed the schedule this engine generates for its app,
regime and seed (``scoring/cli.py``'s ``_generated_schedule``; a ``--schedule FILE`` run is
ranked apart): :func:`generated_schedule_digest` answers from the same kind of cache, so a
score does not regenerate a marathon's schedule (about a second) every time.

The cache only saves time; nothing in it is trusted more than the code that wrote it: each
entry is keyed by the engine's code digest, and a score never reads the no-op cache for a
bundle that carries its own counterfactual (``scoring/cli.py``: the trust model).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from engine.bundle.layout import schedule_digest
from engine.bundle.replaystatus import cache_root
from scoring.counterfactual import Counterfactual, counterfactual_from_events

CACHE_VERSION = "2"


def cache_dir() -> Path:
    """Where no-op counterfactuals are cached: ``<cache root>/noop``."""
    return cache_root() / "noop"


def code_digest() -> str:
    """SHA-256 over the engine's code (:func:`engine.run.identity.code_sha256`: the simulator, the
    app models and their source trees, the fault catalogs, the orchestrator, the tools and the
    scorer), so the cache never outlives a code change: the no-op run's head hash, which the
    counterfactual's reference names, covers ``run.start``'s engine identity."""
    from engine.run.identity import code_sha256

    return code_sha256()


def _user_inputs(app: str, schedule_text: str) -> tuple[str, str]:
    """(a digest of the app model and fault catalog a user's app loads, the model's name): a
    user's files can change under the same path, the engine's code digest covers only the
    shipped ones. ("", ``app``) for a shipped app, or when the inputs do not load (the run
    itself will then say why)."""
    import yaml

    from engine.apps.model import is_shipped_app, load_app
    from faults.spec import app_catalog

    if is_shipped_app(app):
        return "", app
    try:
        model = load_app(app)
        sched = yaml.safe_load(schedule_text) or {}
        catalog = sched.get("catalog") if isinstance(sched, dict) and isinstance(sched.get("catalog"), str) else None
        text = model.model_dump_json() + app_catalog(app, catalog).model_dump_json()
    except Exception:  # the run below raises the real error
        return "", "app"
    return ":" + hashlib.sha256(text.encode()).hexdigest(), model.name


def noop_counterfactual(app: str, seed: int, schedule_text: str, *, use_cache: bool = True) -> Counterfactual:
    """The no-op counterfactual of a schedule, re-simulated (or from the cache).

    Args:
        app: the app reference (a shipped app's name, an app file or an app directory; a user's
            app is cached under its model's name, keyed by the model and catalog it loads).
        seed: the simulation seed of the run.
        schedule_text: the schedule YAML the run replayed.
        use_cache: read and write the on-disk cache.

    Raises:
        ScheduleError: the schedule does not validate against this installation.
    """
    digest = schedule_digest(schedule_text)
    inputs, name = _user_inputs(app, schedule_text)
    key = hashlib.sha256(f"{CACHE_VERSION}:{app}:{seed}:{digest}:{code_digest()}{inputs}".encode()).hexdigest()[:24]
    path = cache_dir() / f"{name}-seed{seed}-{key}.json"
    if use_cache and path.is_file():
        try:
            return Counterfactual.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, KeyError, TypeError):
            pass  # a damaged cache entry is recomputed
    import yaml

    from engine.apps.model import load_app
    from engine.run.orchestrator import EVAL_INTERVAL_S, Orchestrator
    from faults.schedule import parse_schedule

    sched = parse_schedule(yaml.safe_load(schedule_text), "<bundle schedule>")
    run = Orchestrator(sched, seed=seed, alert_source=None)
    run.run()
    model = load_app(app)
    slos = {r.name: (r.slo.error_share, r.slo.latency_p95_ms) for r in model.routes}
    result = counterfactual_from_events(run.stream.events, slos, EVAL_INTERVAL_S, digest)
    if use_cache:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(result.to_dict(), sort_keys=True), encoding="utf-8")
            tmp.replace(path)
        except OSError:
            pass  # an unwritable cache only costs time
    return result


def generated_schedule_digest(app: str, seed: int, regime: str, *, use_cache: bool = True) -> str:
    """The ``schedule_sha256`` of the schedule this engine generates for a shipped app, regime
    and seed (:func:`faults.generator.generate`, then :func:`faults.schedule.dump_schedule`),
    from the cache when it is there (keyed like the no-op cache: app, seed, regime and
    :func:`code_digest`; ``<cache root>/schedules``).

    Args:
        app: a shipped app's name.
        seed: the simulation seed.
        regime: the regime name (``short-5``, ``marathon``, ...).
        use_cache: read and write the on-disk cache.

    Returns:
        64 hex digits.

    Raises:
        Exception: whatever generating raises (an app, regime or seed this engine cannot generate).
    """
    key = hashlib.sha256(f"{CACHE_VERSION}:{app}:{seed}:{regime}:{code_digest()}".encode()).hexdigest()[:24]
    path = cache_root() / "schedules" / f"{app}-{regime}-seed{seed}-{key}.sha256"
    if use_cache:
        try:
            cached = path.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            cached = ""
        if len(cached) == 64 and all(c in "0123456789abcdef" for c in cached):
            return cached
    from faults.generator import generate
    from faults.schedule import dump_schedule

    digest = schedule_digest(dump_schedule(generate(app, seed, regime)))
    if use_cache:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(digest + "\n", encoding="ascii")
            tmp.replace(path)
        except OSError:
            pass  # an unwritable cache only costs time
    return digest
