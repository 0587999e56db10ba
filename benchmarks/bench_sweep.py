"""Benchmark: ``marathon sweep`` of 3 apps x {noop, runbook, oracle} x marathon, seed 1, on the local
process pool and on a local Ray instance, scoring included.

Prints per backend: wall seconds from the first run to the leaderboard written (runs, then
scoring), the slowest run, and the Ray time as a ratio to the pool's measured in the same
invocation (the machine's load changes minute to minute; the ratio is the figure to compare).
With ``--rounds 2`` the backends run in ABBA order (local, ray, ray, local) so a drift in the
machine's load weighs on both alike; the ratio is of their summed times. Each sweep starts with
an empty no-op counterfactual cache (``SRE_MARATHON_CACHE`` in a fresh
temporary directory), so neither profits from the other's; both use the same number of workers.
Also checks that both backends' bundles are byte-identical.

Targets (issue 17, on the 2-core development machine): the pool sweep under 60 s including
scoring (moonshot 30 s); Ray local within 1.2x of the pool.

Usage: python benchmarks/bench_sweep.py [--apps a,b] [--agents x,y] [--regime marathon] [--backends local,ray]
                                        [--workers N] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from engine.run.sweep import LineProgress, SweepGrid, expand, pool_size, sweep

APPS = ("online-boutique", "astronomy-shop", "train-ticket")
AGENTS = ("noop", "runbook", "oracle")
POOL_TARGET_S = 60.0
RAY_RATIO_TARGET = 1.2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", default=",".join(APPS))
    parser.add_argument("--agents", default=",".join(AGENTS))
    parser.add_argument("--regime", default="marathon")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--backends", default="local,ray")
    parser.add_argument("--workers", type=int, default=None, help="default: the sweep's own pool size")
    parser.add_argument("--rounds", type=int, default=1, help="repeat in ABBA order (module docstring)")
    args = parser.parse_args()
    specs = expand(SweepGrid(apps=args.apps.split(","), seeds=[args.seed], regimes=[args.regime],
                             agents=args.agents.split(",")))
    workers = args.workers or pool_size()
    print(f"{len(specs)} runs ({args.apps} x {args.agents} x {args.regime}, seed {args.seed}); {workers} workers; "
          f"load average {os.getloadavg()[0]:.2f} at start", flush=True)
    walls: dict[str, float] = {}
    counts: dict[str, int] = {}
    bundles: dict[str, dict[str, bytes]] = {}
    order = args.backends.split(",")
    plan = [b for i in range(args.rounds) for b in (order if i % 2 == 0 else order[::-1])]
    with tempfile.TemporaryDirectory() as tmp:
        for i, backend in enumerate(plan):
            out = Path(tmp) / f"{backend}-{i}"
            os.environ["SRE_MARATHON_CACHE"] = str(Path(tmp) / f"cache-{i}")
            t0 = time.perf_counter()
            result = sweep(specs, out, backend=backend, workers=workers, progress=LineProgress())
            wall = time.perf_counter() - t0
            walls[backend] = walls.get(backend, 0.0) + wall
            counts[backend] = counts.get(backend, 0) + 1
            bundles[backend] = {p.name: p.read_bytes() for p in out.glob("*.marathon")}
            slowest = max(result.results, key=lambda r: r.wall_s)
            print(result.table)
            print(f"\n{backend:5}: {wall:6.1f} s wall incl. scoring  (slowest run {slowest.name} "
                  f"{slowest.wall_s:.1f} s; {len(result.failed)} failed; load average {os.getloadavg()[0]:.2f})\n",
                  flush=True)
    walls = {b: w / counts[b] for b, w in walls.items()}  # mean seconds per sweep
    if "local" in walls:
        verdict = "met" if walls["local"] < POOL_TARGET_S else "MISSED"
        print(f"pool sweep: {walls['local']:.1f} s (target < {POOL_TARGET_S:.0f} s, moonshot 30 s): {verdict}")
    if "local" in walls and "ray" in walls:
        ratio = walls["ray"] / walls["local"]
        verdict = "met" if ratio <= RAY_RATIO_TARGET else "MISSED"
        same = bundles["ray"] == bundles["local"]
        print(f"ray local: {walls['ray']:.1f} s = {ratio:.2f}x the pool (target <= {RAY_RATIO_TARGET}x): {verdict}; "
              f"bundles byte-identical to the pool's: {same}")


if __name__ == "__main__":
    main()
