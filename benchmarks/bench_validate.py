"""Benchmark: ``marathon validate`` on the marathon regime, every app, several seeds.

Runs noop, oracle, runbook, one-per-fault and every scripted adversary on the same marathon
schedules, scores them against the no-op counterfactual and prints the table and the verdict
of the ranking checks (:mod:`engine.run.validate`), then the mean score per operator across the
schedules and the wall time. CI runs the short-5 form of the same checks
(``tests/test_validate.py``); this is the long form, too slow for CI (about 2-3 minutes per
schedule on the development machine).

Usage: python benchmarks/bench_validate.py [--regime marathon] [--seeds 3] [--app APP ...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from engine.apps.model import builtin_apps
from engine.run.validate import format_validation, operators, validate
from faults.schedule import RUN_REGIMES


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--regime", default="marathon", choices=RUN_REGIMES)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--app", action="append", default=None)
    args = parser.parse_args()
    started = time.perf_counter()
    result = validate(args.app or builtin_apps(), args.regime, range(1, args.seeds + 1),
                      progress=lambda line: print(line, file=sys.stderr, flush=True))
    wall = time.perf_counter() - started
    print(format_validation(result))
    print("\nmean score per operator (default formula / marathon-score/1):")
    for op in operators():
        rows = [r for r in result.rows if r.operator == op]
        mean, mean_v1 = statistics.mean(r.score for r in rows), statistics.mean(r.score_v1 for r in rows)
        print(f"  {op:20s} {mean:6.1f} / {mean_v1:6.1f}   ({len(rows)} schedules)")
    print(f"\n{len(result.rows)} runs in {wall:.0f} s wall")
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
