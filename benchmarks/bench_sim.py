"""Benchmark: simulate 90 minutes of Train Ticket (the largest app) at 1 s resolution.

Prints wall time (bring-up and warm-up separately from the 90 simulated minutes), the
number of series and scrapes, and peak memory (peak RSS of the process, and the peak of
Python allocations measured by tracemalloc in a separate run). Target (issue 2): under
2 s wall for the 90 minutes on the development machine (2 cores).

With ``--fork``, also times :meth:`Simulator.fork` on the state the run ended in (the restart
gate forks once or twice per repair check), against one more simulated minute and against the
plain ``copy.deepcopy`` the fork replaced (target, issue 17: under 0.1 s on Train Ticket).

Usage: python benchmarks/bench_sim.py [--app train-ticket] [--minutes 90] [--repeat 3] [--seed 1] [--fork]
"""

from __future__ import annotations

import argparse
import copy
import resource
import statistics
import time
import tracemalloc

from alerts.series import SeriesStore
from engine.sim.simulator import Simulator


def run(app: str, minutes: float, seed: int) -> tuple[float, float, Simulator]:
    t0 = time.perf_counter()
    sim = Simulator(app, seed=seed)
    t1 = time.perf_counter()
    sim.advance(minutes * 60.0)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, sim


def deepcopy_fork(sim: Simulator) -> Simulator:
    """The fork as it was before issue 17: one deep copy sharing only the app and the commits."""
    memo = {id(sim.app): sim.app, id(sim.store): None, id(sim.container_logs): {},
            id(sim.log_windows): type(sim.log_windows)(maxlen=sim.log_windows.maxlen)}
    for repo in sim.repos.values():
        for commit in repo.commits:
            memo[id(commit)] = commit
    twin: Simulator = copy.deepcopy(sim, memo)
    twin.store = SeriesStore(twin.registry, retention_s=60.0)
    return twin


def fork_figures(sim: Simulator, repeat: int) -> None:
    """Print fork time (median of ``repeat``) as a ratio to one simulated minute and to a deep copy.

    Ratios are of CPU time (``time.process_time``): on a shared machine the wall clock mostly
    measures the other processes.
    """
    forks, cpu, copies = [], [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        sim.fork()
        forks.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        c0 = time.process_time()
        deepcopy_fork(sim)
        copies.append(time.process_time() - c0)
    c0 = time.process_time()
    sim.advance(sim.now + 60.0)
    minute = time.process_time() - c0
    fork, deep = statistics.median(cpu), statistics.median(copies)
    print(f"fork: median {fork:.4f} s CPU, {statistics.median(forks):.4f} s wall (CPU runs: "
          + ", ".join(f"{x:.4f}" for x in cpu) + f") = {fork / minute:.2f}x one simulated minute "
          f"({minute:.3f} s CPU); deep copy (before issue 17) {deep:.3f} s CPU = {deep / fork:.0f}x the fork; "
          "target < 0.1 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", default="train-ticket")
    parser.add_argument("--minutes", type=float, default=90.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--fork", action="store_true", help="also time Simulator.fork (module docstring)")
    args = parser.parse_args()

    warm, body = [], []
    sim = None
    for _ in range(args.repeat):
        w, b, sim = run(args.app, args.minutes, args.seed)
        warm.append(w)
        body.append(b)
    assert sim is not None
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    tracemalloc.start()
    run(args.app, args.minutes, args.seed)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    ticks = int(args.minutes * 60 / sim.dt)
    print(f"app={args.app} minutes={args.minutes:g} ticks={ticks} repeat={args.repeat}")
    print(f"bring-up + warm-up wall: median {statistics.median(warm):.3f} s (runs: "
          + ", ".join(f"{x:.3f}" for x in warm) + ")")
    print(f"simulated {args.minutes:g} min wall: median {statistics.median(body):.3f} s (runs: "
          + ", ".join(f"{x:.3f}" for x in body) + f"), {1e6 * statistics.median(body) / ticks:.0f} us/tick")
    print(f"series={len(sim.registry)} scrapes={len(sim.store.scrapes)} pods={len(sim.cluster.pods)} "
          f"call-tree nodes={sim.forest.size}")
    print(f"peak RSS {rss_mb:.0f} MB; peak Python allocations (tracemalloc) {peak / 2**20:.1f} MB")
    if args.fork:
        fork_figures(sim, args.repeat)


if __name__ == "__main__":
    main()
