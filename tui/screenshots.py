"""Deterministic screenshots of every screen: ``python -m tui.screenshots``.

Each :class:`Shot` builds the app on a fixed schedule and clock -- the Online Boutique
short-5 scenario ``tui/scenarios/payment-short5.yaml`` (a payment code change at 1:00 breaks
checkout while four more faults overlap it), seed 1; the engine driven by hand to a fixed run
time instead of a clock, the score
computed in the refresh cycle, cursors not blinking -- drives it with the keys a person
would press, and exports Textual's SVG. ``rsvg-convert`` (Debian ``librsvg2-bin``) turns
each SVG into a PNG. The snapshot tests (``tests/test_tui_snapshots.py``) use the same
builders, so the pictures in ``screenshots/`` are the tested screens.

The scripted player (:func:`human_moves`) does what the play test does through the
forms: at 4:45 it groups the payment alerts into an incident, names ``paymentservice``,
``code-bug`` and the change ``chg-0001`` as the root cause, and rolls the deployment back.

The marathon shots (``*-marathon``) use the generated Online Boutique marathon of seed 1
(90 minutes, 52 faults; :data:`MARATHON_REGIME`), the cheapest deterministic marathon: the
runbook agent's run records and seals in about 5 s (:func:`make_marathon_bundle`), the
watch and play shots drive the engine to :data:`MARATHON_AT`. Every screen has a shot at
120x36 and at 80x24.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.app import App
from textual.pilot import Pilot

from engine.operate.tools import ToolResult
from engine.run.session import RunSession
from tui.app import MarathonApp
from tui.human import HumanOperator
from tui.messages import ToolDone
from tui.screens.play import PlayScreen
from tui.screens.replay import ReplayScreen
from tui.screens.watch import WatchScreen
from tui.seek import ReplayIndex
from tui.session import load_bundle

APP = "online-boutique"
SEED = 1
REGIME = "short-5"
WIDE = (120, 36)
SMALL = (80, 24)
MOVES_AT = 285.0
"""Run time of the scripted player's moves: the payment fault's alerts have fired by then."""
NOTES = "1:39 chg-0001 payment deploy, then checkout 5xx\nrollback paymentservice, watch checkout\n"


MARATHON_REGIME = "marathon"
MARATHON_AT = 2700.0
"""Run time of the marathon shots (45:00: faults overlapping, incidents open and resolved)."""


SCENARIO = Path(__file__).resolve().parent / "scenarios" / "payment-short5.yaml"
"""The fixed schedule of the screenshots and the terminal-app tests (independent of the
generator, so the pictures and the tests keep their story when the catalog changes)."""


def schedule() -> Any:
    from faults.schedule import load_schedule

    return load_schedule(SCENARIO)


def marathon_schedule() -> Any:
    """The generated Online Boutique marathon, seed 1 (module docstring)."""
    from faults.generator import generate

    return generate(APP, SEED, MARATHON_REGIME)


def _app(make: Callable[[], Any]) -> MarathonApp:
    return MarathonApp(make, cursor_blink=False)


def watch_app(t: float = 480.0, *, marathon: bool = False) -> MarathonApp:
    """``marathon watch`` of the runbook agent, stopped at run time ``t`` (of the short-5
    scenario, or of the marathon)."""
    from engine.operate.operators import make_operator

    session = RunSession(marathon_schedule() if marathon else schedule(), operator=make_operator("runbook"),
                         speed=None)
    session.advance_to(t)

    def make() -> WatchScreen:
        screen = WatchScreen(session=session, autostart=False)
        screen.inline_score = True
        return screen

    return _app(make)


def play_session(run_dir: str | Path | None = None, *, marathon: bool = False) -> RunSession:
    """A scored play session (1x wall clock, tool calls cost no run time), not started."""
    return RunSession(marathon_schedule() if marathon else schedule(), operator=HumanOperator(), run_dir=run_dir,
                      speed=1.0, spend_time=False)


def payment_alerts(session: RunSession) -> list[str]:
    """The firing alerts a person would group for the payment fault: those naming
    ``paymentservice``, and the checkout route's endpoint alert."""
    history = session.run.alert_history
    assert history is not None
    out = []
    for a in history.instances:
        if a.state != "firing":
            continue
        if a.labels.get("service") == "paymentservice" or (
                a.rule == "EndpointErrorRate" and a.labels.get("handler") == "POST /cart/checkout"):
            out.append(f"A-{a.id}")
    return out


def human_moves(session: RunSession) -> list[tuple[str, dict[str, Any], ToolResult]]:
    """The scripted player's calls at :data:`MOVES_AT` (module docstring), through the policy layer."""
    calls: list[tuple[str, dict[str, Any]]] = [("get_alerts", {"state": "firing"})]
    out = []
    for name, args in calls:
        out.append((name, args, session.call_tool(name, args)))
    alerts = payment_alerts(session)
    inc_args = {"alerts": alerts, "title": "checkout failing: payment errors"}
    res = session.call_tool("report_incident", inc_args)
    out.append(("report_incident", inc_args, res))
    incident = str(res.data.get("incident", "INC-0001"))
    for name, args in [
        ("get_deploy_history", {"service": "paymentservice"}),
        ("report_rca", {"incident": incident, "service": "paymentservice", "category": "code-bug",
                        "artifact": "chg-0001", "summary": "expiry-year change in chg-0001 rejects cards"}),
        ("rollback", {"deployment": "paymentservice", "incident": incident}),
    ]:
        out.append((name, args, session.call_tool(name, args)))
    return out


def play_app(*, moves: bool = True, end: bool = False, marathon: bool = False) -> MarathonApp:
    """``marathon play`` at :data:`MOVES_AT` after the scripted moves, or at the end of the run
    (the marathon: at :data:`MARATHON_AT`, no scripted moves)."""
    session = play_session(marathon=marathon)
    session.advance_to(MARATHON_AT if marathon else MOVES_AT)
    moves = moves and not marathon
    done = human_moves(session) if moves else []
    if end:
        session.advance_to(session.run.end_t)

    def make() -> PlayScreen:
        screen = PlayScreen(session=session, autostart=False)
        screen.inline_score = True
        screen.scripted = done  # type: ignore[attr-defined]
        return screen

    return _app(make)


async def show_scripted_output(pilot: Pilot[Any]) -> None:
    """Feed the scripted calls' results to the play screen as if the player had made them."""
    screen = play_screen(pilot.app)
    for name, args, result in getattr(screen, "scripted", []):
        screen.on_tool_done(ToolDone(name, args, result, screen.session.now))
    notes = screen.query_one("#notes-text")
    notes.load_text(NOTES)  # type: ignore[attr-defined]
    screen.refresh_now()
    await pilot.pause()


def make_bundle(directory: Path) -> Path:
    """Record and seal the runbook's run of the fixed schedule into ``directory``; the bundle path."""
    from engine.operate.operators import make_operator
    from engine.run.orchestrator import Orchestrator
    from engine.run.sealinputs import seal_run

    run_dir = directory / f"{APP}-{REGIME}-seed{SEED}-runbook"
    run = Orchestrator(schedule(), seed=SEED, operator=make_operator("runbook"), run_dir=run_dir)
    run.run()
    return seal_run(run_dir)


def make_marathon_bundle(directory: Path) -> Path:
    """Record and seal the runbook's run of the marathon (module docstring) into ``directory``; the bundle path."""
    from engine.operate.operators import make_operator
    from engine.run.orchestrator import Orchestrator
    from engine.run.sealinputs import seal_run

    run_dir = directory / f"{APP}-{MARATHON_REGIME}-seed{SEED}-runbook"
    run = Orchestrator(marathon_schedule(), seed=SEED, operator=make_operator("runbook"), run_dir=run_dir)
    run.run()
    return seal_run(run_dir)


_marathon_bundles: dict[str, Path] = {}


def marathon_bundle() -> Path:
    """The marathon bundle, recorded once per process into a temporary directory (removed at exit)."""
    if "bundle" not in _marathon_bundles:
        import atexit

        tmp = tempfile.TemporaryDirectory(prefix="marathon-shots-")
        atexit.register(tmp.cleanup)
        _marathon_bundles["bundle"] = make_marathon_bundle(Path(tmp.name))
    return _marathon_bundles["bundle"]


def replay_app(bundle: Path, at: float = 600.0) -> MarathonApp:
    """``marathon replay`` of ``bundle``, paused at run time ``at``."""
    loaded = load_bundle(bundle)
    index = ReplayIndex(loaded.events)

    def make() -> ReplayScreen:
        screen = ReplayScreen(bundle, paused=True, start_at=at, loaded=(loaded, index))
        screen.inline_score = True
        return screen

    return _app(make)


async def settle(pilot: Pilot[Any]) -> None:
    await pilot.pause()
    screen = pilot.app.screen
    refresh = getattr(screen, "refresh_now", None)
    if callable(refresh):
        refresh()
    await pilot.pause()


@dataclass
class Shot:
    """One screenshot: a name, a terminal size, an app builder and what to do before the picture."""

    name: str
    size: tuple[int, int]
    build: Callable[[], App[Any]]
    run_before: Callable[[Pilot[Any]], Awaitable[None]] | None = None
    description: str = ""


def _press(*keys: str, before: Callable[[Pilot[Any]], Awaitable[None]] | None = None
           ) -> Callable[[Pilot[Any]], Awaitable[None]]:
    async def run(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        if before is not None:
            await before(pilot)
        await pilot.press(*keys)
        await pilot.pause()
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
    return run


QUERY = 'sum by (service) (rate(http_requests_total{service=~"frontend|checkoutservice|paymentservice"}[1m]))'
"""The query of the ``play-query`` shot: the checkout path's request rates (the payment fault's route)."""


async def show_query(pilot: Pilot[Any]) -> None:
    """A range query made through the PromQL prompt at :data:`MOVES_AT`, drawn in the output pane."""
    screen = play_screen(pilot.app)
    await pilot.press("m")
    await pilot.pause()
    prompt = pilot.app.screen
    prompt.query_one("#query-input").value = QUERY  # type: ignore[attr-defined]
    prompt.query_one("#query-range").value = "5m"  # type: ignore[attr-defined]
    await pilot.press("enter")
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    screen.refresh_now()
    await pilot.pause()


async def _rca_form(pilot: Pilot[Any]) -> None:
    await show_scripted_output(pilot)
    await pilot.press("r")
    await pilot.pause()


async def _form(pilot: Pilot[Any]) -> None:
    """The root-cause form, opened on the play screen as it stands (no scripted moves)."""
    await pilot.press("r")
    await pilot.pause()


def shots(bundle: Path, marathon: Path | None = None) -> list[Shot]:
    """Every screen, in the order the README shows them: the short-5 scenario's ``bundle``,
    then the marathon's (``marathon``; None: :func:`marathon_bundle`, recorded on first use).
    Every screen of the issue-18 list (watch, play with a form open, replay, the scorecard)
    at 120x36 and at 80x24, on the short run and on the marathon."""
    def long() -> Path:
        return marathon if marathon is not None else marathon_bundle()

    short = [
        Shot("watch", WIDE, lambda: watch_app(480.0), _press(),
             "marathon watch: the runbook agent at 8:00 of a short-5 run"),
        Shot("watch-80x24", SMALL, lambda: watch_app(480.0), _press(), "the same at 80x24"),
        Shot("help", WIDE, lambda: watch_app(480.0), _press("question_mark"), "? lists every key and binding id"),
        Shot("play", WIDE, play_app, _press(before=show_scripted_output),
             "marathon play: an incident reported, its root cause filed, a rollback done"),
        Shot("play-form", WIDE, lambda: play_app(moves=False), _press(before=_rca_form),
             "the root-cause form"),
        Shot("play-form-80x24", SMALL, lambda: play_app(moves=False), _press(before=_rca_form),
             "the root-cause form at 80x24"),
        Shot("play-confirm", WIDE, play_app, _press("b", "ctrl+s", before=show_scripted_output),
             "an act call waits for confirmation, on Cancel"),
        Shot("play-query", WIDE, lambda: play_app(moves=False), _press(before=show_query),
             "m: a PromQL range query, the table an agent reads, then one sparkline per series"),
        Shot("play-scorecard", WIDE, lambda: play_app(end=True), _press(before=_finish),
             "the end of a play: the scorecard first"),
        Shot("play-ground-truth", WIDE, lambda: play_app(end=True), _press("enter", before=_finish),
             "then the ground truth"),
        Shot("replay", WIDE, lambda: replay_app(bundle, 600.0), _press(),
             "marathon replay: the sealed bundle at 10:00"),
        Shot("replay-80x24", SMALL, lambda: replay_app(bundle, 600.0), _press(), "the same at 80x24"),
        Shot("replay-scorecard", WIDE, lambda: replay_app(bundle, 600.0), _press("s"),
             "the scorecard of a replay"),
        Shot("replay-scorecard-80x24", SMALL, lambda: replay_app(bundle, 600.0), _press("s"),
             "the scorecard of a replay at 80x24"),
        Shot("play-trail", WIDE, lambda: play_app(end=True), _press("enter", "enter", before=_finish),
             "after the reveal, enter on a fault: the evidence trail the scorer used"),
        Shot("play-trail-80x24", SMALL, lambda: play_app(end=True), _press("enter", "enter", before=_finish),
             "the evidence trail at 80x24"),
        Shot("replay-trail", WIDE, lambda: replay_app(bundle, 600.0), _press("s", "down", "enter"),
             "a replay's scorecard, enter on a fault: its evidence trail"),
    ]
    at = MARATHON_AT
    long_shots = []
    for suffix, size in (("", WIDE), ("-80x24", SMALL)):
        where = f"at {size[0]}x{size[1]}"
        long_shots += [
            Shot(f"watch-marathon{suffix}", size, lambda: watch_app(at, marathon=True), _press(),
                 f"marathon watch of an Online Boutique marathon at 45:00, {where}"),
            Shot(f"play-form-marathon{suffix}", size, lambda: play_app(marathon=True), _press(before=_form),
                 f"the root-cause form over a marathon at 45:00, {where}"),
            Shot(f"replay-marathon{suffix}", size, lambda: replay_app(long(), at), _press(),
                 f"the marathon's sealed bundle replayed at 45:00, {where}"),
            Shot(f"replay-scorecard-marathon{suffix}", size, lambda: replay_app(long(), at), _press("s"),
                 f"the marathon's scorecard, {where}"),
            Shot(f"replay-trail-marathon{suffix}", size, lambda: replay_app(long(), at), _press("s", "enter"),
                 f"the evidence trail of the marathon's first fault, {where}"),
        ]
    return short + long_shots


def play_screen(app: App[Any]) -> PlayScreen:
    """The play screen of ``app`` (under any dialog or scorecard)."""
    return next(s for s in app.screen_stack if isinstance(s, PlayScreen))


async def _finish(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    play_screen(pilot.app).finish_now()
    await pilot.pause()
    await settle(pilot)


async def take(shot: Shot) -> str:
    """The SVG of one shot."""
    app = shot.build()
    async with app.run_test(size=shot.size) as pilot:
        if shot.run_before is not None:
            await shot.run_before(pilot)
        else:
            await settle(pilot)
        svg = app.export_screenshot(title=f"SRE-Marathon · {shot.name}")
    return svg


def to_png(svg: Path, png: Path) -> None:
    """Convert with ``rsvg-convert``.

    Raises:
        FileNotFoundError: rsvg-convert is not installed (Debian: apt-get install librsvg2-bin).
        subprocess.CalledProcessError: the conversion failed.
    """
    exe = shutil.which("rsvg-convert")
    if exe is None:
        raise FileNotFoundError("rsvg-convert not found: apt-get install librsvg2-bin")
    subprocess.run([exe, str(svg), "-o", str(png)], check=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Regenerate the screenshots (``--only NAME`` for some, ``--no-png`` without PNGs)."""
    parser = argparse.ArgumentParser(prog="python -m tui.screenshots", description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "screenshots"))
    parser.add_argument("--only", action="append", help="only this shot (repeatable)")
    parser.add_argument("--no-png", action="store_true")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="marathon-shots-") as tmp:
        bundle = make_bundle(Path(tmp))
        wanted = [s for s in shots(bundle) if not args.only or s.name in args.only]
        marathon = make_marathon_bundle(Path(tmp)) if any("marathon" in s.name for s in wanted) else None
        for shot in shots(bundle, marathon):
            if args.only and shot.name not in args.only:
                continue
            svg = asyncio.run(take(shot))
            path = out / f"{shot.name}.svg"
            path.write_text(svg, encoding="utf-8")
            line = f"{path}"
            if not args.no_png:
                to_png(path, path.with_suffix(".png"))
                line += f"  {path.with_suffix('.png').name}"
            print(f"{line}  ({shot.size[0]}x{shot.size[1]}: {shot.description})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
