"""The terminal app's commands: ``marathon watch``, ``marathon play``, ``marathon replay``.

``engine/cli.py`` attaches these with :func:`add_watch_arguments`,
:func:`add_play_arguments` and :func:`add_replay_arguments`. This module imports no
``textual`` at import time (the engine's CLI imports it, and ``engine`` stays free of the
UI); each command imports the app when it runs. ``python -m tui`` runs the same three
commands on their own.

Defaults: ``marathon watch`` with no flags watches the runbook agent on Online Boutique,
seed 1, the short-5 regime, at 20x (a 21-minute run in about a minute; ``--speed max``
runs as fast as the engine goes), recorded into ``runs/`` and sealed at the end.
``marathon play`` runs on the wall clock at 1x; ``--practice`` allows faster clocks and
pausing and records the operator as ``human-practice`` so practice never mixes with
scored human baselines.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.cliargs import add_app_arguments, add_kube_api_argument, add_rules_argument, seed_arg, speed_arg
from engine.operate.llm.config import add_llm_arguments
from faults.schedule import DEFAULT_REGIME, RUN_REGIMES

DEFAULT_APP = "online-boutique"
DEFAULT_SEED = 1
DEFAULT_AGENT = "runbook"
DEFAULT_WATCH_SPEED = 20.0
DEFAULT_PRACTICE_SPEED = 10.0
DEFAULT_REPLAY_SPEED = 30.0


def _common_run(p: argparse.ArgumentParser) -> None:
    add_app_arguments(p, DEFAULT_APP)
    p.add_argument("--seed", type=seed_arg, default=DEFAULT_SEED, help=f"schedule and simulation seed (default "
                                                                     f"{DEFAULT_SEED})")
    p.add_argument("--regime", default=DEFAULT_REGIME, choices=RUN_REGIMES, help=f"default {DEFAULT_REGIME}")
    p.add_argument("--schedule", help="run this schedule file instead of generating one")
    add_rules_argument(p)
    p.add_argument("--run-dir", help="record here (default: runs/<run id>); sealed into <dir>.marathon at the end")
    p.add_argument("--keymap", help="a TOML keymap file (binding id = \"key\"; see ? in the app)")


def add_watch_arguments(p: argparse.ArgumentParser) -> None:
    """``marathon watch``: an agent's run, live (module docstring)."""
    _common_run(p)
    p.add_argument("--agent", default=DEFAULT_AGENT,
                   help=f"the operator: noop, runbook, oracle, an LLM agent (react, rag, orbit) or a scripted "
                        "adversary (alert-spam, lump-all, claim-only, scale-to-zero, restart-everything, "
                        "rollback-everything, random-act) "
                        f"(default {DEFAULT_AGENT})")
    p.add_argument("--speed", type=speed_arg, default=DEFAULT_WATCH_SPEED,
                   help=f"run-time seconds per wall second, or max (default {DEFAULT_WATCH_SPEED:g})")
    p.add_argument("--follow", metavar="RUN_DIR", help="attach to a run another process is recording in RUN_DIR")
    p.add_argument("--no-record", action="store_true", help="keep the run in memory only")
    add_kube_api_argument(p, "read-only here (the run's operator is the agent you watch)")
    add_llm_arguments(p)
    p.set_defaults(func=cmd_watch)


def add_play_arguments(p: argparse.ArgumentParser) -> None:
    """``marathon play``: you are the operator (module docstring)."""
    _common_run(p)
    p.add_argument("--practice", action="store_true",
                   help="practice mode: a faster clock (--speed, default "
                        f"{DEFAULT_PRACTICE_SPEED:g}x) and pausing; recorded as human-practice")
    p.add_argument("--speed", type=speed_arg, default=None,
                   help="practice mode only: run-time seconds per wall second")
    add_kube_api_argument(p, "your kubectl writes are your acts, recorded and scored like the tools' (name the "
                             "incident with kubectl --as=INC-0001)")
    p.set_defaults(func=cmd_play)


def add_replay_arguments(p: argparse.ArgumentParser) -> None:
    """``marathon replay``: a sealed bundle in the viewer."""
    p.add_argument("bundle", help="a bundle (.marathon) or a run directory")
    p.add_argument("--speed", type=speed_arg, default=DEFAULT_REPLAY_SPEED,
                   help=f"playback speed, run-time seconds per wall second (default {DEFAULT_REPLAY_SPEED:g})")
    p.add_argument("--at", default=None, help="start at this run time (m:ss or seconds)")
    p.add_argument("--paused", action="store_true", help="start paused")
    p.add_argument("--keymap", help="a TOML keymap file (binding id = \"key\")")
    p.set_defaults(func=cmd_replay)


def _fail(message: str) -> int:
    print(f"marathon: {message}", file=sys.stderr)
    return 2


def _needs_terminal(command: str) -> str | None:
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        instead = ("marathon score BUNDLE --faults for its numbers" if command == "replay"
                   else "marathon run for a headless run (and marathon score for the numbers)")
        return f"marathon {command} is a terminal app and needs a terminal; use {instead}"
    return None


def _keymap(args: argparse.Namespace) -> dict[str, str]:
    from tui.keymap import keymap_path, load_keymap

    return load_keymap(keymap_path(getattr(args, "keymap", None)))


def _schedule(args: argparse.Namespace) -> Any:
    from faults.generator import generate
    from faults.schedule import load_schedule

    return load_schedule(args.schedule) if args.schedule else generate(args.app, args.seed, args.regime,
                                                                            catalog_file=args.catalog)


FOLLOW_WAIT_S = 30.0
"""How long ``watch --follow`` waits for a run directory that another process is about to
create (``marathon run --run-dir D & marathon watch --follow D``)."""


def _wait_for_dir(path: Path, timeout_s: float) -> None:
    import time

    deadline = time.monotonic() + timeout_s
    if not path.is_dir() and not path.exists():
        print(f"waiting up to {timeout_s:.0f} s for {path} to be created...", file=sys.stderr, flush=True)
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.2)


def build_watch(args: argparse.Namespace) -> Any:
    """The watch (or follow) app for parsed arguments, not yet running.

    Raises:
        KeyError, ValueError, FileNotFoundError, FileExistsError, and the schedule and
        catalog errors: arguments that name nothing runnable.
    """
    from engine.run.session import RunSession
    from tui.app import MarathonApp
    from tui.screens.watch import WatchScreen
    from tui.session import FollowTail

    keymap = _keymap(args)
    if args.follow:
        _wait_for_dir(Path(args.follow), FOLLOW_WAIT_S)
        tail = FollowTail(args.follow)
        return MarathonApp(lambda: WatchScreen(follow=tail), keymap=keymap)
    from engine.operate.operators import operator_from_args

    sched = _schedule(args)
    operator = operator_from_args(args)
    seed = sched.seed if args.schedule else args.seed
    run_dir = None if args.no_record else Path(args.run_dir) if args.run_dir else "auto"
    session = RunSession(sched, operator=operator, run_dir=run_dir, speed=args.speed, seed=seed, rules=args.rules)
    app = MarathonApp(lambda: WatchScreen(session=session), keymap=keymap)
    app.session = session  # type: ignore[attr-defined]  # _run reports where the bundle went
    _kube_api(app, session, "watch", getattr(args, "kube_api", None))
    return app


def build_play(args: argparse.Namespace) -> Any:
    """The play app for parsed arguments (raises as :func:`build_watch`)."""
    from engine.run.session import RunSession
    from tui.app import MarathonApp
    from tui.human import HUMAN, PRACTICE, HumanOperator
    from tui.screens.play import PlayScreen

    if args.speed is not None and not args.practice:
        raise ValueError("a scored run is played on the wall clock at 1x; add --practice to play faster")
    speed = (args.speed or DEFAULT_PRACTICE_SPEED) if args.practice else 1.0
    keymap = _keymap(args)
    sched = _schedule(args)
    operator = HumanOperator(PRACTICE if args.practice else HUMAN)
    seed = sched.seed if args.schedule else args.seed
    run_dir = Path(args.run_dir) if args.run_dir else "auto"
    session = RunSession(sched, operator=operator, run_dir=run_dir, speed=speed, seed=seed, spend_time=False,
                         rules=args.rules)
    app = MarathonApp(lambda: PlayScreen(session=session, practice=args.practice), keymap=keymap)
    app.session = session  # type: ignore[attr-defined]  # _run reports where the bundle went
    _kube_api(app, session, "play", getattr(args, "kube_api", None))
    return app


def _kube_api(app: Any, session: Any, command: str, port: int | None) -> None:
    """With ``--kube-api``, serve the run's Kubernetes API (:mod:`engine.run.kubeapi`) while the app
    runs: the URL and kubeconfig go to the app's exit notes and, before it starts, to stderr;
    :func:`_run` stops it when the app ends.

    Raises:
        ValueError: the port cannot be bound, or the kubeconfig cannot be written.
    """
    if port is None:
        return
    from engine.run.kubeapi import start_kube_api

    try:
        kube = start_kube_api(session.run, command=command, port=port)
    except OSError as exc:
        raise ValueError(f"cannot serve the Kubernetes API: {exc}") from None
    app.kube_api = kube
    note = (f"Kubernetes API on {kube.url} ({'read-only' if command == 'watch' else 'your writes are acts'}): "
            f"kubectl --kubeconfig {kube.kubeconfig} get pods")
    print(note, file=sys.stderr, flush=True)
    app.exit_notes = [*getattr(app, "exit_notes", []), f"served the Kubernetes API on {kube.url} (its kubeconfig, "
                                                       "whose token is dead now, was removed)"]


def build_replay(args: argparse.Namespace) -> Any:
    """The replay app for parsed arguments.

    Raises:
        FileNotFoundError: no such bundle; ValueError: a bad ``--at``.
    """
    from engine.bundle.format import BundleError
    from tui.app import MarathonApp
    from tui.model import parse_clock
    from tui.screens.replay import ReplayScreen
    from tui.seek import ReplayIndex
    from tui.session import load_bundle

    if not Path(args.bundle).exists():
        raise FileNotFoundError(f"{args.bundle}: no such bundle or run directory")
    start = parse_clock(args.at) if args.at else None
    keymap = _keymap(args)
    # Loaded before the app starts, so a file that is no run fails here with its reason.
    try:
        bundle = load_bundle(args.bundle, defer_write=True)  # the cache is written after the first frame
        if not bundle.events or bundle.events[0].kind != "run.start":
            raise ValueError("no run.start event")
        index = ReplayIndex(bundle.events)
    except (BundleError, OSError, ValueError, KeyError, TypeError) as exc:
        why = str(exc).removeprefix(f"{args.bundle}: ")
        raise ValueError(f"{args.bundle}: cannot replay: {why}") from None
    if start is not None and start > index.end_t:
        raise ValueError(f"--at {args.at} is past the end of the recording ({index.end_t / 60:.1f} min)")
    return MarathonApp(lambda: ReplayScreen(args.bundle, speed=args.speed, start_at=start, paused=args.paused,
                                            loaded=(bundle, index)), keymap=keymap)


def _run(command: str, build: Any, args: argparse.Namespace) -> int:
    from faults.schedule import ScheduleError
    from faults.spec import CatalogError
    from tui.keymap import KeymapError

    why = _needs_terminal(command)
    if why:
        return _fail(why)
    try:
        app = build(args)
    except (KeyError, ValueError, FileNotFoundError, FileExistsError, ScheduleError, CatalogError,
            KeymapError) as exc:
        return _fail(str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc))
    try:
        app.run()
    finally:
        kube = getattr(app, "kube_api", None)
        if kube is not None:
            kube.stop()
    for line in getattr(app, "exit_notes", []):
        print(line)
    session = getattr(app, "session", None)
    if session is not None:
        outcome = session.close()  # idempotent: the screen has usually sealed it already
        if outcome.bundle is not None:
            what = "sealed bundle" if outcome.complete else "stopped early; sealed the incomplete run"
            print(f"{what}: {outcome.bundle}  (replay it: marathon replay {outcome.bundle})")
        elif outcome.error:
            print(f"marathon: the run could not be sealed: {outcome.error}", file=sys.stderr)
    return 0


def cmd_watch(args: argparse.Namespace) -> int:
    """Run ``marathon watch``."""
    return _run("watch", build_watch, args)


def cmd_play(args: argparse.Namespace) -> int:
    """Run ``marathon play``."""
    return _run("play", build_play, args)


def cmd_replay(args: argparse.Namespace) -> int:
    """Run ``marathon replay``."""
    return _run("replay", build_replay, args)


def build_parser() -> argparse.ArgumentParser:
    """The three commands on their own (``python -m tui``)."""
    parser = argparse.ArgumentParser(prog="python -m tui", description="SRE-Marathon's terminal app")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    add_watch_arguments(sub.add_parser("watch", help="watch an agent's run live"))
    add_play_arguments(sub.add_parser("play", help="be the operator yourself"))
    add_replay_arguments(sub.add_parser("replay", help="replay a sealed bundle"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m tui``."""
    args = build_parser().parse_args(argv)
    code: int = args.func(args)
    return code


def sweep_progress() -> Any:
    """The terminal progress bar of ``marathon sweep`` (:class:`tui.sweepbar.SweepBar`; rich is
    imported only when a sweep runs in a terminal)."""
    from tui.sweepbar import SweepBar

    return SweepBar()
