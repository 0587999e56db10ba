"""``marathon score`` and ``marathon report``: scores from sealed bundles.

A bundle is verified before it is scored; a bundle that is unsealed or does not verify is
refused unless ``--allow-unverified`` is given, and then every output marks it.

Scoring reads only the bundle (DESIGN section 8): the app model, the no-op counterfactual
and the events it carries, and the replay verdict recorded for its head
(:mod:`engine.bundle.replaystatus`). Scoring never re-simulates a bundle that carries its
counterfactual. A bundle sealed before it carried one is re-simulated only through a
:data:`scoring.counterfactual.NoopProvider` the command layer injects (``marathon`` passes the
run side's ``noop_counterfactual``, ``engine/run/counterfactual.py``); without one its repair
credit is provisional, and the message says so.

Trust model of the stored counterfactual (``counterfactual.json``). The seal computes it on
the sealing engine and lists its digest in the manifest; the seal event carries the digest of
that file table, the seal event is chained into the stream's head, and a signed bundle's
signature covers the head (:mod:`engine.bundle.format`, :mod:`engine.bundle.keys`). So:

* a counterfactual changed after the seal is a verify problem: the bundle is refused, and even
  with ``--allow-unverified`` a counterfactual (or manifest) that does not verify is never
  used -- the no-op run is re-simulated through the injected provider instead, or the repair
  credit is provisional;
* a counterfactual moved from another run is refused: its ``schedule_sha256`` must be the
  ``run.start`` event's (the schedule text names the app) and its reference must name the
  run's seed;
* a forger who rewrites ``counterfactual.json`` *and* reseals is no stronger than one who
  rewrites the events and reseals: an unsigned bundle cannot tell them apart from the
  honest sealer (the same holds for every file); a signed bundle can, since the forger lacks
  the key (``marathon verify --trust KEY``); and ``marathon verify --replay`` re-simulates
  the no-op run without the cache and reports a counterfactual that differs
  (``engine/run/replay.py``), which marks the bundle ``diverged`` and takes it off the
  leaderboard (:mod:`engine.bundle.replaystatus`).

A counterfactual only ever *judges* repairs (the counterfactual, blast-radius and data gates)
and the degradation; it can withhold credit a forger wants, so the honest sealer has no
reason to weaken it, and the only way to make it lenient is a forgery covered above.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scoring.counterfactual import Counterfactual, NoopProvider
from scoring.score import FORMULA_VERSION, FORMULAS, RunScore

GeneratedSchedule = Callable[[str, int, str], str]
"""``(app, seed, regime) -> schedule_sha256`` of the schedule the installed engine generates for a
shipped app (the run side's ``generated_schedule_digest`` caches it per engine code digest). The
command layer injects it; without one the scorer generates the schedule itself (about a second
for a marathon)."""


def add_score_arguments(p: argparse.ArgumentParser, *, noop: NoopProvider | None = None,
                        generated: GeneratedSchedule | None = None) -> None:
    """Declare ``marathon score``'s arguments on ``p`` and set ``func``.

    Args:
        p: the ``score`` sub-parser.
        noop: re-simulates the no-op counterfactual of a bundle that carries none (None:
            such a bundle is scored with provisional repair credit).
        generated: the digest of the schedule the engine generates (:data:`GeneratedSchedule`;
            None: generated in the scorer).
    """
    p.add_argument("bundles", nargs="+", help="sealed bundles (.marathon) or sealed run directories")
    p.add_argument("--json", action="store_true", help="canonical JSON (byte-identical for the same inputs)")
    p.add_argument("--faults", action="store_true",
                   help="also print per-fault detail of every run and each fault's evidence trail (alerts, "
                   "incidents, RCA, acts, probe samples, gates, counterfactual)")
    p.add_argument("--formula", choices=FORMULAS, default=FORMULA_VERSION,
                   help=f"which Marathon-Score ranks the runs (default {FORMULA_VERSION}; marathon-score/1 is the "
                        "paper-comparable form without the precision and false-declaration terms)")
    p.add_argument("--allow-unverified", action="store_true",
                   help="score unsealed or damaged bundles too, clearly marked")
    p.add_argument("--no-counterfactual", "--no-degradation", dest="no_degradation", action="store_true",
                   help="score without the no-op counterfactual: no degradation, and repair credit is provisional "
                        "(the counterfactual, blast-radius and data gates are not judged); marked on every output")
    p.add_argument("--per-app", action="store_true", help="one row per operator and app (default: per operator)")
    p.add_argument("--include-incomplete", action="store_true",
                   help="rank runs that stopped before the schedule's end too (marked); by default they are "
                        "listed but left out of the leaderboard")
    p.set_defaults(func=cmd_score, noop_provider=noop, generated_schedule=generated)


def add_report_arguments(p: argparse.ArgumentParser, *, noop: NoopProvider | None = None,
                         generated: GeneratedSchedule | None = None) -> None:
    """Declare ``marathon report``'s arguments on ``p`` and set ``func`` (``noop``, ``generated``:
    as for :func:`add_score_arguments`)."""
    p.add_argument("bundle", help="a sealed bundle or run directory")
    p.add_argument("-o", "--output", required=True, help="directory to write index.html and the plots into")
    p.add_argument("--allow-unverified", action="store_true",
                   help="report on an unsealed or damaged bundle too, clearly marked")
    p.set_defaults(func=cmd_report, noop_provider=noop, generated_schedule=generated)


INCOMPLETE = "INCOMPLETE"
"""Integrity prefix of a sealed run that stopped before its schedule's end (quit, killed)."""


class ScoreError(Exception):
    """A bundle that cannot be scored (message names the bundle and why)."""


def load_score(path: str, *, allow_unverified: bool = False, degradation: bool = True,
               formula: str = FORMULA_VERSION, noop: NoopProvider | None = None,
               generated: GeneratedSchedule | None = None) -> tuple[RunScore, list]:  # type: ignore[type-arg]
    """Verify and score one bundle (args and errors as :func:`load_explained`).

    Returns:
        The score and the bundle's events.
    """
    score, events, _ = load_explained(path, allow_unverified=allow_unverified, degradation=degradation,
                                      formula=formula, noop=noop, generated=generated, explain=False)
    return score, events


def load_explained(path: str, *, allow_unverified: bool = False, degradation: bool = True,
                   formula: str = FORMULA_VERSION, noop: NoopProvider | None = None,
                   generated: GeneratedSchedule | None = None,
                   explain: bool = True) -> tuple[RunScore, list, dict[str, Any] | None]:  # type: ignore[type-arg]
    """Verify and score one bundle, with every fault's evidence trail (:mod:`scoring.explain`).

    Args:
        path: a bundle file or a sealed (or, with ``allow_unverified``, unsealed) run directory.
        allow_unverified: score a bundle that does not verify, marked in ``integrity``.
        degradation: judge against the no-op counterfactual (False: provisional repair credit,
            no degradation).
        formula: which of :data:`scoring.score.FORMULAS` the score reports.
        noop: re-simulates the no-op counterfactual when the bundle carries none, or (with
            ``allow_unverified``) one that does not verify (module docstring); None: such a
            bundle is scored provisionally, with a message.
        generated: the digest of the schedule the engine generates (:data:`GeneratedSchedule`),
            to tell a seeded run from a custom-schedule one; None: generated here.
        explain: also build the trails (the same scoring pass; False: None in their place).

    Returns:
        The score, the bundle's events, and fault id -> :class:`scoring.explain.FaultTrail`.

    Raises:
        ScoreError: not a bundle, not intact (without ``allow_unverified``), not a run, or a
            stored counterfactual that is malformed or belongs to another run.
    """
    from engine.bundle.format import BundleError, open_bundle, verify
    from engine.bundle.replaystatus import replay_status
    from scoring.score import score_events

    try:
        report = verify(path, keep=True)  # open_bundle below reuses its files and parsed events
    except (BundleError, OSError, ValueError) as exc:
        raise ScoreError(str(exc)) from None
    integrity = "sealed"
    if not (report.ok and report.sealed):
        first = report.problems[0] if report.problems else "not sealed"
        if not allow_unverified:
            raise ScoreError(f"{path}: refused: bundle does not verify ({first}); use --allow-unverified to score "
                             "it anyway, marked as such")
        integrity = f"UNVERIFIED: {first}"
    elif not report.complete:
        integrity = f"{INCOMPLETE}: {report.reason or 'the run stopped before the end of its schedule'}"
    try:
        bundle = open_bundle(path, report=report)
        try:
            events = bundle.events
        except BundleError:
            if not allow_unverified:
                raise
            events = _lenient_events(bundle.read_text("events.jsonl"))
        start = next((e for e in events if e.kind == "run.start"), None)
        if start is None:
            raise ScoreError(f"{path}: not a run: no run.start event")
        meta = start.payload
    except (BundleError, OSError, ValueError) as exc:
        raise ScoreError(str(exc)) from None
    model = bundle_app_model(bundle, path)
    counterfactual = None
    if degradation:
        from engine.bundle.layout import COUNTERFACTUAL_FILE

        unverified = {p.file for p in report.problems} & {COUNTERFACTUAL_FILE, "manifest.json"}
        if unverified and COUNTERFACTUAL_FILE in bundle.names():  # never trust what does not verify
            print(f"marathon: {path}: its {COUNTERFACTUAL_FILE} does not verify and is not used", file=sys.stderr)
        else:
            counterfactual = bundle_counterfactual(bundle, path, meta)
        if counterfactual is None:  # a bundle sealed before it carried one: re-simulate on this engine
            counterfactual = _resimulated(noop, meta, bundle, path)
    trails: dict[str, Any] | None = None
    try:
        if explain:
            from scoring.explain import explain_events

            explained = explain_events(events, app=model, counterfactual=counterfactual, integrity=integrity,
                                       formula=formula)
            score, trails = explained.score, dict(explained.trails)
        else:
            score = score_events(events, app=model, counterfactual=counterfactual, integrity=integrity,
                                 formula=formula)
    except (ValueError, KeyError) as exc:
        raise ScoreError(f"{path}: {exc}") from None
    score.replayed = replay_status(report.head)
    from engine.bundle.layout import APP_FILE

    model_text = bundle.read_text(APP_FILE) if model is not None else None
    score.custom_schedule = not _generated_schedule(meta, model, model_text=model_text, generated=generated)
    return score, events, trails


def _resimulated(noop: NoopProvider | None, meta: dict[str, Any], bundle: Any, path: str) -> Counterfactual | None:
    """The no-op counterfactual of a bundle that carries none, re-simulated by ``noop``; None
    (provisional repair credit) when there is no ``noop`` or it fails. Says which on stderr."""
    if noop is None:
        print(f"marathon: {path}: the bundle carries no counterfactual and none can be re-simulated here; repair "
              "credit is provisional", file=sys.stderr)
        return None
    try:
        result = noop(str(meta["app"]), int(meta["seed"]), bundle.schedule_text)
    except Exception as exc:  # a schedule this version cannot replay: provisional repair credit
        print(f"marathon: {path}: no-op counterfactual unavailable ({exc}); repair credit is provisional",
              file=sys.stderr)
        return None
    print(f"marathon: {path}: the bundle carries no counterfactual; re-simulated the no-op run on the "
          "installed engine", file=sys.stderr)
    return result


def _generated_schedule(meta: dict[str, Any], model: Any = None, *, model_text: str | None = None,
                        generated: GeneratedSchedule | None = None) -> bool:
    """Whether the run replayed the schedule this engine generates for its app, regime and seed
    (a ``--schedule FILE`` run, or one whose schedule was swapped, is ranked apart).

    Decided from the bundle alone, never from files where the scorer runs: only a shipped app
    (its name in ``run.start``, and the model the bundle carries equal to the installed one)
    has a public schedule to compare with. A user's app -- a file or directory, or a model
    that merely takes a shipped app's name -- is always ranked apart: the bundle carries only
    the catalog entries its schedule drew, so no scorer can regenerate its schedule.

    Args:
        meta: ``run.start``'s payload.
        model: the app model the bundle carries (None: an older bundle, the installed one).
        model_text: the text of the bundle's ``app.yaml``, when there is one: text equal to
            the installed model file's is the same model, so neither is parsed again.
        generated: :data:`GeneratedSchedule` (None: the schedule is generated here).
    """
    from engine.apps.model import builtin_app_path, builtin_apps, load_app_file
    from engine.bundle.layout import schedule_digest
    from faults.generator import generate
    from faults.schedule import dump_schedule

    app = str(meta.get("app", ""))
    if app not in builtin_apps():
        return False
    try:
        installed = builtin_app_path(app)
        same_text = model_text is not None and model_text == installed.read_text(encoding="utf-8")
        if model is not None and not same_text and model != load_app_file(installed):
            return False
        if generated is not None:
            return generated(app, int(meta["seed"]), str(meta["regime"])) == meta.get("schedule_sha256")
        expected = dump_schedule(generate(app, int(meta["seed"]), str(meta["regime"])))
    except Exception:  # an app, regime or seed this engine cannot generate: not a public schedule
        return False
    return schedule_digest(expected) == meta.get("schedule_sha256")


def bundle_app_model(bundle: Any, path: str | Path) -> Any:
    """The app model the bundle carries (``app.yaml``), or None for an older bundle (the
    installed model of the same name is used).

    Raises:
        ScoreError: the carried model does not load.
    """
    from engine.apps.model import AppModelError, parse_app
    from engine.bundle.layout import APP_FILE
    from engine.inputs.safeyaml import parse_yaml

    if APP_FILE not in bundle.names():
        return None
    try:
        return parse_app(parse_yaml(bundle.read_text(APP_FILE)), f"{path}:{APP_FILE}")
    except (AppModelError, ValueError) as exc:
        raise ScoreError(f"{path}: {APP_FILE}: {exc}") from None


def bundle_counterfactual(bundle: Any, path: str | Path, meta: dict[str, Any] | None = None) -> Any:
    """The no-op counterfactual the bundle carries (``counterfactual.json``), or None.

    Args:
        bundle: the open bundle.
        path: its path, for messages.
        meta: the run's ``run.start`` payload, to check the counterfactual is this run's
            (module docstring, trust model); None: not checked.

    Raises:
        ScoreError: the carried counterfactual is malformed, or another run's: its
            ``schedule_sha256`` is not the run's, or its reference names another seed.
    """
    from engine.bundle.layout import COUNTERFACTUAL_FILE

    if COUNTERFACTUAL_FILE not in bundle.names():
        return None
    try:
        cf = Counterfactual.from_dict(bundle.read_json(COUNTERFACTUAL_FILE))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ScoreError(f"{path}: {COUNTERFACTUAL_FILE} is malformed: {exc}") from None
    if meta is not None:
        # ``noop:<app>:seed<N>:<head>``; the app is not compared: the schedule digest covers it
        # (the schedule names its app), and a bundle may carry a user's app under a new name
        seed = cf.reference.rsplit(":", 2)[1] if cf.reference.count(":") >= 3 else ""
        schedule = meta.get("schedule_sha256")
        if (isinstance(schedule, str) and cf.schedule_sha256 != schedule) or seed != f"seed{meta.get('seed')}":
            raise ScoreError(f"{path}: {COUNTERFACTUAL_FILE} is not this run's no-op run (reference "
                             f"{cf.reference!r}, schedule {cf.schedule_sha256[:12] or '-'}; the run: seed "
                             f"{meta.get('seed')}, schedule {str(schedule)[:12]}): refused")
    return cf


def cmd_score(args: argparse.Namespace) -> int:
    from scoring.leaderboard import format_faults, format_table, format_trails, leaderboard, to_json

    scores = []
    trails: dict[int, dict[str, Any]] = {}
    seen: dict[tuple[str, int], str] = {}
    for path in args.bundles:
        try:
            score, events, trail = load_explained(path, allow_unverified=args.allow_unverified,
                                                  degradation=not args.no_degradation, formula=args.formula,
                                                  noop=getattr(args, "noop_provider", None),
                                                  generated=getattr(args, "generated_schedule", None),
                                                  explain=bool(args.faults) and not args.json)
        except ScoreError as exc:
            print(f"marathon: {exc}", file=sys.stderr)
            return 2
        # The same run given twice (its directory and its bundle, or a copy) counts once.
        identity = (events[-1].hash if events and events[-1].hash else path, len(events))
        if identity in seen:
            print(f"marathon: {path}: the same run as {seen[identity]}; counted once", file=sys.stderr)
            continue
        seen[identity] = path
        scores.append(score)
        if trail is not None:
            trails[id(score)] = trail
    ranked = [s for s in scores if (args.include_incomplete or not s.integrity.startswith(INCOMPLETE))
              and s.replayed != "diverged"]
    left_out = [s for s in scores if s not in ranked]
    rows = leaderboard(ranked, per_app=args.per_app, formula=args.formula)
    if args.json:
        sys.stdout.write(to_json(scores, rows, args.formula))
        return 0
    print(format_table(rows, per_app=args.per_app) if rows else "(no complete runs to rank)")
    if any(s.provisional for s in ranked):
        print("\n!! PROVISIONAL: scored without the no-op counterfactual; repair credit did not pass the "
              "counterfactual, blast-radius and data gates")
    from alerts.rules import DEFAULT_PACK, PACKS

    paper_id = PACKS[DEFAULT_PACK].id
    for s in scores:
        if s.rule_pack is not None and s.rule_pack != paper_id:
            print(f"\n-- {s.run_id}: rule pack {s.rule_pack}, not the paper's {paper_id}: not comparable with "
                  "the paper's numbers")
        if s.oracle:
            print(f"\n-- {s.run_id}: the oracle (validation only, never ranked): {args.formula} {s.score:.1f}")
        if s.replayed == "diverged":
            print(f"\n!! {s.run_id}: its bundle does not replay (marathon verify --replay): left out of the "
                  "leaderboard")
        elif s.integrity != "sealed":
            note = " (left out of the leaderboard; --include-incomplete ranks it)" if s in left_out else ""
            print(f"\n!! {s.run_id}: {s.integrity}{note}")
    if args.faults:
        for s in scores:
            print(f"\n{s.run_id} ({s.operator}): score {s.score:.1f}"
                  + ("" if s.integrity == "sealed" else f"  [{s.integrity}]"))
            print(format_faults(s))
            if id(s) in trails:
                print(format_trails(trails[id(s)].values()))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from scoring.report import write_report

    try:
        score, events, trails = load_explained(args.bundle, allow_unverified=args.allow_unverified,
                                               noop=getattr(args, "noop_provider", None),
                                               generated=getattr(args, "generated_schedule", None))
    except ScoreError as exc:
        print(f"marathon: {exc}", file=sys.stderr)
        return 2
    out = Path(args.output)
    if out.exists() and not out.is_dir():
        print(f"marathon: {out}: exists and is not a directory (-o names the directory to write index.html "
              "and the plots into)", file=sys.stderr)
        return 2
    path = write_report(score, events, out, trails)
    print(f"wrote {path}")
    return 0


def _lenient_events(text: str) -> list:  # type: ignore[type-arg]
    """Every line of an events file that still parses as an event (for --allow-unverified)."""
    import json

    from engine.bundle.events import Event

    out = []
    for line in text.splitlines():
        try:
            out.append(Event.from_dict(json.loads(line)))
        except (ValueError, TypeError):
            continue
    return out
