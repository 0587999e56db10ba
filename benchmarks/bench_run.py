"""Benchmark: whole marathons on the virtual clock, then sealing and scoring their bundles.

Prints, per operator: wall time of the run (engine, alerts, operator, recording), bundle
size, seal and verify time, and the time to score the sealed bundle (the no-op
counterfactual excluded: it is computed once per schedule and cached).

Targets (issues 3, 5 and 6, on the development machine): a noop marathon on Train Ticket
under 10 s; a runbook marathon under 10 s with a bundle under 20 MB; scoring a 90-minute
marathon bundle under 1 s.

Usage: python benchmarks/bench_run.py [--app train-ticket] [--seed 7] [--agents noop,runbook]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from engine.bundle.format import verify
from engine.operate.operators import make_operator
from engine.run.orchestrator import Orchestrator
from engine.run.sealinputs import seal_run
from faults.generator import generate
from scoring.cli import load_score


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", default="train-ticket")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--regime", default="marathon")
    parser.add_argument("--agents", default="noop,runbook")
    args = parser.parse_args()
    sched = generate(args.app, args.seed, args.regime)
    print(f"{args.app} {args.regime} seed {args.seed}: {len(sched.faults)} faults, {sched.duration_s / 60:.0f} min")
    with tempfile.TemporaryDirectory() as tmp:
        for agent in args.agents.split(","):
            run_dir = Path(tmp) / agent
            t0 = time.perf_counter()
            run = Orchestrator(sched, operator=make_operator(agent), run_dir=run_dir)
            run.run()
            t1 = time.perf_counter()
            bundle = seal_run(run_dir)
            t2 = time.perf_counter()
            report = verify(bundle)
            t3 = time.perf_counter()
            score, _ = load_score(str(bundle), degradation=False)
            t4 = time.perf_counter()
            size = bundle.stat().st_size
            print(f"{agent:8} run {t1 - t0:6.2f} s  events {len(run.stream.events):6d}  bundle {size / 2**20:6.2f} MB  "
                  f"seal {t2 - t1:5.2f} s  verify {t3 - t2:5.2f} s ({'ok' if report.ok else 'FAILED'})  "
                  f"score {t4 - t3:5.2f} s  ->  corr {score.corr:.3f} loc {score.loc:.3f} rep {score.rep:.3f} "
                  f"risk {score.risk:.3f} score {score.score:.1f}")


if __name__ == "__main__":
    main()
