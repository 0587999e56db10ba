"""Terminal app benchmark: is the UI responsive while a Train Ticket marathon runs at full speed?

1. Records a Train Ticket marathon (runbook agent, seed 1, about 90 minutes of run time) at
   full speed and measures how many events the engine emits per second of its CPU time.
2. **Apply one second of events to the panes** (targets, issue 17: median < 25 ms, p95
   < 50 ms): a headless watch screen (120x36), settled after start-up, is fed the
   marathon's events in chunks of one such second's worth; each chunk is timed through the
   refresh cycle (reducer and every pane's update), then with Textual's own processing of
   the updates (layout and paint) as well; the paint part alone is printed too. Garbage
   collections that fall inside a chunk are counted in it (they were the p95: see
   :mod:`tui.app`), and their share is printed.
3. **Replay seek to any point** (target < 100 ms): a headless replay screen of the sealed
   90-minute bundle seeks to random run times; each seek is timed through the keyframe
   restore and the panes' redraw (and, separately, the model alone).

Times with paint are given twice: wall time (which includes waiting for Textual's screen
update timer, up to 1/60 s, and anything else the machine runs) and the UI thread's CPU
time (``time.thread_time``: the work itself). The targets are checked on CPU time.

Run it in the venv: ``python benchmarks/bench_tui.py`` (about a minute on two cores).
``--bundle PATH`` skips the recording and uses a sealed Train Ticket marathon bundle
(``marathon run --app train-ticket --regime marathon --seed 1 --agent runbook``), with
``--per-second N`` events per chunk (default: the rate the recording measured, or 300,
about a runbook marathon's rate on an idle two-core machine).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
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
APPLY_TARGET_MS = 25.0
"""Median CPU time of applying one second of events, panes painted (issue 17)."""
APPLY_P95_TARGET_MS = 50.0
"""Its 95th percentile (issue 17)."""
DEFAULT_PER_SECOND = 300
SEEK_TARGET_MS = 100.0
SEEKS = 40


def p95(values: list[float]) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, int(0.95 * len(v)))]


def ms(values: list[float]) -> str:
    return (f"median {1000 * statistics.median(values):6.1f} ms   p95 {1000 * p95(values):6.1f} ms   "
            f"max {1000 * max(values):6.1f} ms")


def record(directory: Path) -> tuple[Path, float, int]:
    """Record and seal the marathon; (bundle, CPU seconds of the run, events)."""
    sched = generate(APP, SEED, REGIME)
    run = Orchestrator(sched, seed=SEED, operator=make_operator("runbook"), run_dir=directory / "tt")
    started = time.process_time()  # CPU, not wall: a busy machine would otherwise shrink the chunks
    run.run()
    cpu = time.process_time() - started
    return seal_run(directory / "tt"), cpu, len(run.stream.events)


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


class _GcClock:
    """CPU seconds the garbage collector spent on this thread since the last :meth:`take`."""

    def __init__(self) -> None:
        self.spent = 0.0
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.thread_time()
        else:
            self.spent += time.thread_time() - self._start

    def take(self) -> float:
        spent, self.spent = self.spent, 0.0
        return spent


async def bench_apply(events: list[Event], per_second: int) -> dict[str, list[float]]:
    """Per chunk: ``cycle`` (refresh cycle, wall), ``with_paint`` (and Textual's paint, wall),
    ``cpu`` (both, UI thread CPU), ``paint_cpu`` (the paint alone, CPU), ``gc`` (collections, CPU)."""
    feed = EventFeed()
    session = RunSession(generate(APP, SEED, REGIME), operator=make_operator("noop"))
    app = MarathonApp(lambda: _Fed(session, feed))
    out: dict[str, list[float]] = {k: [] for k in ("cycle", "with_paint", "cpu", "paint_cpu", "gc")}
    clock = _GcClock()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        assert isinstance(screen, _Fed)
        screen._timer.stop()  # type: ignore[union-attr]  # the benchmark drives the cycles
        await pilot.pause()  # start-up (first layout, the app's ready handler) is not a second of events
        gc.callbacks.append(clock)
        try:
            for i in range(0, len(events), per_second):
                feed.extend(events[i:i + per_second])
                clock.take()
                c0 = time.thread_time()
                t0 = time.perf_counter()
                screen.refresh_now()
                t1 = time.perf_counter()
                c1 = time.thread_time()
                await pilot.pause()
                t2 = time.perf_counter()
                c2 = time.thread_time()
                out["cpu"].append(c2 - c0)
                out["paint_cpu"].append(c2 - c1)
                out["cycle"].append(t1 - t0)
                out["with_paint"].append(t2 - t0)
                out["gc"].append(clock.take())
        finally:
            gc.callbacks.remove(clock)
    return out


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, help="a sealed Train Ticket marathon bundle (skips the recording)")
    parser.add_argument("--per-second", type=int, help="events per chunk (default: the recorded rate)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-tui-") as tmp:
        if args.bundle is None:
            print(f"recording a {APP} {REGIME} (seed {SEED}, runbook) at full speed...", flush=True)
            bundle, cpu, n = record(Path(tmp))
            events = open_bundle(bundle).events
            per_second = args.per_second or max(1, round(n / cpu))
            print(f"  {n} events over {events[-1].t / 60:.1f} min of run time in {cpu:.1f} CPU s: "
                  f"{round(n / cpu)} events per second of the engine")
        else:
            bundle = args.bundle
            events = open_bundle(bundle).events
            per_second = args.per_second or DEFAULT_PER_SECOND
            print(f"{bundle}: {len(events)} events over {events[-1].t / 60:.1f} min of run time")
        got = asyncio.run(bench_apply(events, per_second))
        cpu_s, paint_s, gc_s = got["cpu"], got["paint_cpu"], got["gc"]
        print(f"apply one second of events ({per_second} events) to the panes, {len(cpu_s)} seconds of the run:")
        print(f"  refresh cycle (reducer + panes)      {ms(got['cycle'])}   (wall)")
        print(f"  ... and Textual's layout and paint   {ms(got['with_paint'])}   (wall)")
        print(f"  apply one second, UI thread CPU      {ms(cpu_s)}   "
              f"target median < {APPLY_TARGET_MS:.0f} ms, p95 < {APPLY_P95_TARGET_MS:.0f} ms")
        print(f"  ... of which paint                   {ms(paint_s)}")
        print(f"  ... of which garbage collection      {ms(gc_s)}   ({100 * sum(gc_s) / sum(cpu_s):.0f} % of the CPU)")
        rng = random.Random(7)
        times = [rng.uniform(0.0, events[-1].t) for _ in range(SEEKS)]
        seeks, seeks_cpu, model_only, build = asyncio.run(bench_seek(bundle, times))
        print(f"replay seek to {SEEKS} random points of the {events[-1].t / 60:.0f}-minute bundle "
              f"(index built in {1000 * build:.0f} ms):")
        print(f"  model only (keyframe + events)       {ms(model_only)}")
        print(f"  seek and redraw every pane           {ms(seeks)}   (wall)")
        print(f"  ... the same, UI thread CPU          {ms(seeks_cpu)}   target < {SEEK_TARGET_MS:.0f} ms")
        apply_ok = (statistics.median(cpu_s) * 1000 < APPLY_TARGET_MS and p95(cpu_s) * 1000 < APPLY_P95_TARGET_MS)
        seek_ok = statistics.median(seeks_cpu) * 1000 < SEEK_TARGET_MS
        print(f"apply one second: {'met' if apply_ok else 'MISSED'}; seek: {'met' if seek_ok else 'MISSED'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
