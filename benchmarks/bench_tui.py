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

4. **The load of the live screens** (issue 18: watch at max speed under 50 % of a core; a
   marathon bundle opens for replay in under 1 s), each measured in a fresh interpreter
   (:data:`PROBES`), so that ``--baseline DIR`` (a checkout of the code before, e.g.
   ``/work/main``) runs the same probes on that code in the same run and prints ratios:

   * **watch at max speed**: a headless watch (120x36) of the Train Ticket marathon
     (runbook, seed 1) with the engine in its worker thread, for ``--seconds`` of wall time
     after start-up: the process's CPU share (``time.process_time``) and the UI thread's
     (``time.thread_time`` on the event loop's thread; the rest is the engine, its tool
     calls and the score worker), and the **bytes written to the terminal per refresh
     cycle**: each compositor update is rendered to its escape sequences as a real
     terminal's driver would (:meth:`textual.app.App._display` does nothing headless; the
     probe does that rendering, so its cost is in the UI thread's share too), summed, and
     divided by the refresh cycles run;
   * **replay at 100x and 200x**: the same figures for a headless replay of the bundle,
     playing from 0:00;
   * **replay open**: wall seconds from starting ``python`` to the replay's first frame
     drawn (``marathon replay BUNDLE`` as :func:`tui.cli.build_replay` builds it, headless),
     with an empty cache directory (``$SRE_MARATHON_CACHE``: the first open of a bundle) and
     again with the cache the first open left (every later open);
   * **seek** in the marathon, as item 3 (UI thread CPU, median);
   * the first three again as the real commands (``marathon watch --speed max --no-record``,
     ``marathon replay --speed 100``/``200``) in a 120x36 pseudo-terminal (:func:`pty_probe`):
     the process's and its main thread's CPU from ``/proc``, and the bytes the process wrote
     to the terminal, per second / 4 (the issue's "~27 KB per 0.25 s cycle" is this figure).

Times with paint are given twice: wall time (which includes waiting for Textual's screen
update timer, up to 1/60 s, and anything else the machine runs) and the UI thread's CPU
time (``time.thread_time``: the work itself). The targets are checked on CPU time.

Run it in the venv: ``python benchmarks/bench_tui.py`` (about two minutes on two cores;
``--baseline /work/main`` doubles item 4).
``--bundle PATH`` skips the recording and uses a sealed Train Ticket marathon bundle
(``marathon run --app train-ticket --regime marathon --seed 1 --agent runbook``), with
``--per-second N`` events per chunk (default: the rate the recording measured, or 300,
about a runbook marathon's rate on an idle two-core machine).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, os.environ.get("BENCH_TUI_ROOT") or str(Path(__file__).resolve().parents[1]))

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

ROOT = Path(sys.path[0])
"""The code measured: this checkout, or (in a probe child, ``BENCH_TUI_ROOT``) the ``--baseline`` one."""
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


# ----------------------------------------------------------------------------- item 4: probes

OPEN_PROBE = """
import asyncio, json, sys, time
import argparse
from tui.cli import add_replay_arguments, build_replay
parser = argparse.ArgumentParser()
add_replay_arguments(parser)
app = build_replay(parser.parse_args([sys.argv[1], "--paused"]))
async def main():
    async with app.run_test(size=(120, 36)) as pilot:
        screen = app.screen
        while getattr(screen, "index", None) is None:
            await pilot.pause(0.01)
        await pilot.pause()
        print(json.dumps({"first_frame": time.time()}))
asyncio.run(main())
"""
"""``marathon replay BUNDLE`` up to its first frame, in a fresh interpreter (prints the wall clock then)."""


class _Bytes:
    """Counts what a terminal driver would be sent: each compositor update rendered to its escape sequences."""

    def __init__(self, app: Any) -> None:
        from textual._compositor import CompositorUpdate

        self.total = 0
        self.updates = 0
        original = app._display

        def display(screen: Any, renderable: Any) -> None:
            if renderable is not None and not app._batch_count and isinstance(renderable, CompositorUpdate):
                self.total += len(renderable.render_segments(app.console).encode("utf-8"))
                self.updates += 1
            original(screen, renderable)

        app._display = display


async def _load(app: Any, seconds: float, start: Any = None) -> dict[str, float]:
    """CPU shares (process, UI thread) and bytes per refresh cycle over ``seconds`` of wall time."""
    counter = _Bytes(app)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause(1.0)  # start-up, the first layout
        if start is not None:
            start(app.screen)
        screen = app.screen
        b0, c0, cycles0, t0 = counter.total, counter.updates, screen.cycles, float(screen.now)
        profile = None
        if os.environ.get("BENCH_TUI_PROFILE"):  # the UI thread only (a profiler is per thread)
            import cProfile

            profile = cProfile.Profile()
            profile.enable()
        w0, p0, u0 = time.perf_counter(), time.process_time(), time.thread_time()
        await pilot.pause(seconds)
        if profile is not None:
            profile.disable()
            profile.dump_stats(os.environ["BENCH_TUI_PROFILE"])
        wall = time.perf_counter() - w0
        process, ui = time.process_time() - p0, time.thread_time() - u0
        cycles = max(1, screen.cycles - cycles0)
        out = {"process": process / wall, "ui": ui / wall, "bytes_per_cycle": (counter.total - b0) / cycles,
               "cycles": cycles, "updates": counter.updates - c0, "wall": wall,
               "run_s": float(screen.now) - t0, "ui_per_run_min": ui / max(1e-9, (float(screen.now) - t0) / 60.0)}
        if hasattr(screen, "stop_source"):
            screen.stop_source()
    return out


def probe_watch(seconds: float) -> dict[str, float]:
    from engine.operate.operators import make_operator
    from engine.run.counterfactual import noop_counterfactual
    from engine.run.session import RunSession

    sched = generate(APP, SEED, REGIME)
    session = RunSession(sched, operator=make_operator("runbook"), speed=None)
    run = session.run
    noop_counterfactual(run.schedule.app, run.seed, run.schedule_text)  # the cache: not the load measured
    app = MarathonApp(lambda: WatchScreen(session=session))
    return asyncio.run(_load(app, seconds))


def probe_replay(bundle: Path, speed: float, seconds: float) -> dict[str, float]:
    loaded = load_bundle(bundle)
    index = ReplayIndex(loaded.events)
    app = MarathonApp(lambda: ReplayScreen(bundle, speed=speed, paused=True, loaded=(loaded, index)))

    def play(screen: Any) -> None:
        screen.action_pause()  # from 0:00, after start-up

    return asyncio.run(_load(app, seconds, play))


def probe_seek(bundle: Path) -> dict[str, float]:
    events = load_bundle(bundle).events
    rng = random.Random(7)
    times = [rng.uniform(0.0, events[-1].t) for _ in range(SEEKS)]
    seeks, cpu, model_only, build = asyncio.run(bench_seek(bundle, times))
    return {"seek_wall": statistics.median(seeks), "seek_cpu": statistics.median(cpu),
            "model_only": statistics.median(model_only), "index_build": build}


def probe_open(bundle: Path, cache: Path) -> dict[str, float]:
    """Wall seconds from starting the interpreter to the replay's first frame, cold then warm cache."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SRE_MARATHON_CACHE": str(cache)}
    out = {}
    for name in ("cold", "warm", "warm2"):
        t0 = time.time()
        proc = subprocess.run([sys.executable, "-c", OPEN_PROBE, str(bundle)], capture_output=True, text=True,
                              env=env, cwd=str(ROOT), check=True)
        out[name] = json.loads(proc.stdout.strip().splitlines()[-1])["first_frame"] - t0
    out["warm"] = min(out["warm"], out.pop("warm2"))
    return out


SYNC_BEGIN = b"\x1b[?2026h"
"""Textual opens every screen update with this (synchronized output, DEC mode 2026): one frame."""
TERM_COLS, TERM_ROWS = 120, 36


def _cpu_ticks(pid: int, tid: int | None = None) -> float:
    """CPU seconds (user + system) of a process, or of one of its threads, from ``/proc``."""
    path = f"/proc/{pid}/stat" if tid is None else f"/proc/{pid}/task/{tid}/stat"
    with open(path, encoding="ascii") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pty_probe(root: Path, argv: list[str], warmup: float, seconds: float, env: dict[str, str]) -> dict[str, float]:
    """``python -m engine.cli ARGV`` on the code in ``root`` in a 120x36 pseudo-terminal: after
    ``warmup`` wall seconds, for ``seconds``, the process's and its main (UI) thread's CPU
    share (``/proc``) and the bytes it wrote to the terminal, per second and per frame
    (:data:`SYNC_BEGIN`). The terminal answers nothing (no emulator), so Textual falls back to
    its defaults, as over a dumb serial line; the process is killed at the end."""
    import pty
    import select
    import signal

    pid, fd = pty.fork()
    if pid == 0:  # the child: the terminal's size, then the app
        import fcntl
        import struct
        import termios

        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", TERM_ROWS, TERM_COLS, 0, 0))
        os.chdir(root)
        os.execvpe(sys.executable, [sys.executable, "-m", "engine.cli", *argv],
                   {**env, "PYTHONPATH": str(root), "TERM": "xterm-256color", "COLORTERM": "truecolor"})
    data = bytearray()
    started = time.monotonic()
    marks: dict[str, Any] = {}

    def pump(until: float) -> None:
        while time.monotonic() < until:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(fd, 1 << 16)
                except OSError:
                    return
                if not chunk:
                    return
                data.extend(chunk)

    try:
        pump(started + warmup)
        marks["bytes0"], marks["frames0"] = len(data), data.count(SYNC_BEGIN)
        p0, u0, w0 = _cpu_ticks(pid), _cpu_ticks(pid, pid), time.monotonic()
        pump(w0 + seconds)
        wall = time.monotonic() - w0
        p1, u1 = _cpu_ticks(pid), _cpu_ticks(pid, pid)
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(fd)
    written = len(data) - marks["bytes0"]
    frames = max(1, data.count(SYNC_BEGIN) - marks["frames0"])
    return {"process": (p1 - p0) / wall, "ui": (u1 - u0) / wall, "bytes_per_s": written / wall,
            "bytes_per_cycle": written / wall * REFRESH_CYCLE_S, "bytes_per_frame": written / frames,
            "frames_per_s": frames / wall, "wall": wall}


REFRESH_CYCLE_S = 0.25
"""The run screens' refresh interval (``tui.screens.base.REFRESH_S``): bytes per cycle = per second / 4."""

PROBES = ("watch", "replay100", "replay200", "open", "seek", "tty-watch", "tty-replay100", "tty-replay200")


def tty_probe(name: str, bundle: Path, seconds: float) -> dict[str, float]:
    """The ``tty-`` probes: the real commands in a pseudo-terminal (:func:`pty_probe`)."""
    with tempfile.TemporaryDirectory(prefix="bench-tui-tty-") as tmp:
        env = {**os.environ, "SRE_MARATHON_CACHE": os.environ.get("SRE_MARATHON_CACHE") or str(Path(tmp) / "c")}
        if name == "tty-watch":
            # the no-op counterfactual the watch computes at start: cached first, it is not the load measured
            from engine.run.counterfactual import noop_counterfactual
            from faults.schedule import dump_schedule

            sched = generate(APP, SEED, REGIME)
            noop_counterfactual(sched.app, SEED, dump_schedule(sched))
            argv = ["watch", "--app", APP, "--regime", REGIME, "--seed", str(SEED), "--agent", "runbook",
                    "--speed", "max", "--no-record"]
            return pty_probe(ROOT, argv, 4.0, min(seconds, 8.0), env)  # the run lasts ~15-25 s of wall
        speed = name.removeprefix("tty-replay")
        return pty_probe(ROOT, ["replay", str(bundle), "--speed", speed], 3.0, seconds, env)


def run_probe(name: str, bundle: Path, seconds: float) -> dict[str, float]:
    if name.startswith("tty-"):
        return tty_probe(name, bundle, seconds)
    if name == "watch":
        return probe_watch(seconds)
    if name.startswith("replay"):
        return probe_replay(bundle, float(name.removeprefix("replay")), seconds)
    if name == "seek":
        return probe_seek(bundle)
    with tempfile.TemporaryDirectory(prefix="bench-tui-cache-") as cache:
        return probe_open(bundle, Path(cache))


def probe_child(root: Path, name: str, bundle: Path, seconds: float) -> dict[str, float]:
    """Run one probe in a fresh interpreter on the code in ``root``."""
    env = {**os.environ, "PYTHONPATH": str(root), "BENCH_TUI_ROOT": str(root)}
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--probe", name, "--bundle", str(bundle),
                           "--seconds", str(seconds)], capture_output=True, text=True, env=env, cwd=str(root))
    if proc.returncode:
        raise RuntimeError(f"probe {name} on {root} failed:\n{proc.stderr[-3000:]}")
    got: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return got


def _ratio(before: float | None, now: float) -> str:
    return "" if before is None or not now else f"   before {before:8.3f}   (x{before / now:.2f})"


def report_load(bundle: Path, seconds: float, baseline: Path | None) -> None:
    """Item 4, printed; with ``baseline`` each figure also on that code, with the ratio before/now."""
    roots = [ROOT] + ([baseline] if baseline is not None else [])
    got: dict[str, list[dict[str, float]]] = {}
    for name in PROBES:
        got[name] = [probe_child(r, name, bundle, seconds) for r in roots]
    print(f"load of the live screens ({seconds:.0f} s of wall time each; this code"
          + (f", before: {baseline}" if baseline else "") + "):")

    def line(label: str, probe: str, key: str, scale: float = 1.0, unit: str = "") -> None:
        now = got[probe][0][key] * scale
        before = got[probe][1][key] * scale if baseline is not None else None
        print(f"  {label:44} {now:8.3f} {unit:4}{_ratio(before, now)}", flush=True)

    for probe, what in (("watch", "watch at max speed"), ("replay100", "replay at 100x"),
                        ("replay200", "replay at 200x")):
        for where, name in (("headless", probe), ("terminal", f"tty-{probe}")):
            line(f"{what}, {where}: process CPU", name, "process", 100.0, "%")
            line(f"{what}, {where}: UI thread CPU", name, "ui", 100.0, "%")
            line(f"{what}, {where}: bytes per refresh cycle", name, "bytes_per_cycle", 1 / 1024, "KiB")
        line(f"{what}, headless: run seconds per wall second", probe, "run_s", 1 / seconds, "")
    line("replay open to first frame, first open", "open", "cold", 1.0, "s")
    line("replay open to first frame, cached", "open", "warm", 1.0, "s")
    line("seek in the marathon (UI thread CPU, median)", "seek", "seek_cpu", 1000.0, "ms")
    line("seek in the marathon (wall, median)", "seek", "seek_wall", 1000.0, "ms")
    w = got["tty-watch"][0]
    print(f"  targets: watch process CPU < 50 % (terminal): {'met' if w['process'] < 0.5 else 'MISSED'}; "
          "replay open < 1 s: "
          f"{'met' if got['open'][0]['warm'] < 1.0 else 'MISSED'} cached, "
          f"{'met' if got['open'][0]['cold'] < 1.0 else 'MISSED'} first open")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, help="a sealed Train Ticket marathon bundle (skips the recording)")
    parser.add_argument("--per-second", type=int, help="events per chunk (default: the recorded rate)")
    parser.add_argument("--baseline", type=Path, help="a checkout of the code before: item 4 on it too, as ratios")
    parser.add_argument("--seconds", type=float, default=15.0, help="wall seconds of each load probe (item 4)")
    parser.add_argument("--only-load", action="store_true", help="item 4 only (needs --bundle)")
    parser.add_argument("--probe", choices=PROBES, help=argparse.SUPPRESS)  # a child of item 4
    args = parser.parse_args(argv)
    if args.probe:
        print(json.dumps(run_probe(args.probe, args.bundle, args.seconds)))
        return 0
    if args.only_load:
        if args.bundle is None:
            parser.error("--only-load needs --bundle")
        report_load(args.bundle, args.seconds, args.baseline)
        return 0
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
        report_load(bundle if args.bundle is None else args.bundle, args.seconds, args.baseline)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
