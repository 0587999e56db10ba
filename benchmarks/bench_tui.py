"""Terminal app benchmark: is the UI responsive while a Train Ticket marathon runs at full speed?

1. Records a Train Ticket marathon (runbook agent, seed 1, about 90 minutes of run time) at
   full speed and measures how many events the engine emits per wall second.
2. **Apply one second of events to the panes** (target < 50 ms): a headless watch screen
   (120x36) is fed the marathon's events in chunks of one wall second's worth; each chunk
   is timed through the refresh cycle (reducer and every pane's update), then with
   Textual's own processing of the updates (layout and paint) as well.
3. **Replay seek to any point** (target < 100 ms): a headless replay screen of the sealed
   90-minute bundle seeks to random run times; each seek is timed through the keyframe
   restore and the panes' redraw (and, separately, the model alone).

Times with paint are given twice: wall time (which includes waiting for Textual's screen
update timer, up to 1/60 s, and anything else the machine runs) and the UI thread's CPU
time (``time.thread_time``: the work itself). The targets are checked on CPU time.

Run it in the venv: ``python benchmarks/bench_tui.py`` (about a minute on two cores).
"""

from __future__ import annotations

import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.bundle.events import Event
from engine.bundle.format import open_bundle
from engine.operate.operators import make_operator
from engine.run.orchestrator import Orchestrator
from engine.run.sealinputs import seal_run
from engine.run.session import RunSession
from faults.generator import generate
from tui.app import MarathonApp
from tui.screens.replay import ReplayScreen
from tui.screens.watch import WatchScreen
from tui.seek import ReplayIndex
from tui.session import EventFeed, load_bundle

APP, SEED, REGIME = "train-ticket", 1, "marathon"
APPLY_TARGET_MS = 50.0
SEEK_TARGET_MS = 100.0
SEEKS = 40


def ms(values: list[float]) -> str:
    v = sorted(values)
    p95 = v[min(len(v) - 1, int(0.95 * len(v)))]
    return f"median {1000 * statistics.median(v):6.1f} ms   p95 {1000 * p95:6.1f} ms   max {1000 * v[-1]:6.1f} ms"


def record(directory: Path) -> tuple[Path, float, int]:
    sched = generate(APP, SEED, REGIME)
    run = Orchestrator(sched, seed=SEED, operator=make_operator("runbook"), run_dir=directory / "tt")
    started = time.perf_counter()
    run.run()
    wall = time.perf_counter() - started
    return seal_run(directory / "tt"), wall, len(run.stream.events)


class _Fed(WatchScreen):
    """A watch screen whose events come from the benchmark, not an engine."""

    def __init__(self, session: RunSession, feed: EventFeed) -> None:
        super().__init__(session=session, autostart=False)
        self.bench_feed = feed

    def pull(self) -> list[Event]:
        return self.bench_feed.drain()

    def tick_clock(self) -> None:
        return None

    def maybe_score(self, force: bool = False) -> None:
        return None  # the running score is computed in a worker thread, off the refresh cycle


async def bench_apply(events: list[Event], per_second: int) -> tuple[list[float], list[float], list[float]]:
    feed = EventFeed()
    session = RunSession(generate(APP, SEED, REGIME), operator=make_operator("noop"))
    app = MarathonApp(lambda: _Fed(session, feed))
    cycle, with_paint, cpu = [], [], []
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        assert isinstance(screen, _Fed)
        screen._timer.stop()  # type: ignore[union-attr]  # the benchmark drives the cycles
        for i in range(0, len(events), per_second):
            feed.extend(events[i:i + per_second])
            c0 = time.thread_time()
            t0 = time.perf_counter()
            screen.refresh_now()
            t1 = time.perf_counter()
            await pilot.pause()
            t2 = time.perf_counter()
            cpu.append(time.thread_time() - c0)
            cycle.append(t1 - t0)
            with_paint.append(t2 - t0)
    return cycle, with_paint, cpu


async def bench_seek(bundle: Path, times: list[float]) -> tuple[list[float], list[float], list[float], float]:
    loaded = load_bundle(bundle)
    t0 = time.perf_counter()
    index = ReplayIndex(loaded.events)
    build = time.perf_counter() - t0
    model_only = []
    for t in times:
        s = time.perf_counter()
        index.model_at(t)
        model_only.append(time.perf_counter() - s)
    app = MarathonApp(lambda: ReplayScreen(bundle, paused=True, loaded=(loaded, index)))
    seeks, cpu = [], []
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        assert isinstance(screen, ReplayScreen)
        screen._timer.stop()  # type: ignore[union-attr]
        screen.maybe_score = lambda force=False: None  # type: ignore[method-assign]
        await pilot.pause()
        for t in times:
            c = time.thread_time()
            s = time.perf_counter()
            screen.seek(t)
            await pilot.pause()
            seeks.append(time.perf_counter() - s)
            cpu.append(time.thread_time() - c)
    return seeks, cpu, model_only, build


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="bench-tui-") as tmp:
        print(f"recording a {APP} {REGIME} (seed {SEED}, runbook) at full speed...", flush=True)
        bundle, wall, n = record(Path(tmp))
        events = open_bundle(bundle).events
        per_second = max(1, round(n / wall))
        print(f"  {n} events over {events[-1].t / 60:.1f} min of run time in {wall:.1f} s wall: "
              f"{per_second} events per wall second")
        cycle, paint, paint_cpu = asyncio.run(bench_apply(events, per_second))
        print(f"apply one second of events ({per_second} events) to the panes, {len(cycle)} seconds of the run:")
        print(f"  refresh cycle (reducer + panes)      {ms(cycle)}")
        print(f"  ... and Textual's layout and paint   {ms(paint)}   (wall)")
        print(f"  ... the same, UI thread CPU          {ms(paint_cpu)}   target < {APPLY_TARGET_MS:.0f} ms")
        rng = random.Random(7)
        times = [rng.uniform(0.0, events[-1].t) for _ in range(SEEKS)]
        seeks, seeks_cpu, model_only, build = asyncio.run(bench_seek(bundle, times))
        print(f"replay seek to {SEEKS} random points of the {events[-1].t / 60:.0f}-minute bundle "
              f"(index built in {1000 * build:.0f} ms):")
        print(f"  model only (keyframe + events)       {ms(model_only)}")
        print(f"  seek and redraw every pane           {ms(seeks)}   (wall)")
        print(f"  ... the same, UI thread CPU          {ms(seeks_cpu)}   target < {SEEK_TARGET_MS:.0f} ms")
        ok = (statistics.median(paint_cpu) * 1000 < APPLY_TARGET_MS
              and statistics.median(seeks_cpu) * 1000 < SEEK_TARGET_MS)
        print("targets met (medians)" if ok else "TARGETS MISSED (medians)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
