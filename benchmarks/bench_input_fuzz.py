"""Benchmark: mutation fuzzing of every input-file loader, more examples than CI runs.

The same mutations as ``tests/test_input_fuzz.py`` (:mod:`tests.input_fuzz`: deleted keys,
changed types, NaN, huge and negative numbers, bytes that are not UTF-8, truncation,
duplicate ids, alias bombs) over schedules, fault catalogs, app models, rule files,
keymaps, LLM configurations, run directories and sealed bundles. Prints, per loader and in
all, the examples run, how many loaded and were rejected, and the counts that must be zero:
tracebacks (an exception other than the loader's documented error), hangs (over
``TIME_LIMIT_S``) and errors that do not name the file. Exit code 1 when any is not zero.

Usage: python benchmarks/bench_input_fuzz.py [--examples 1000] [--seed 0] [--loader NAME ...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.input_fuzz import Tally, fuzz, targets

SHARE = {"schedule": 3, "catalog": 2, "app": 2, "rules": 4, "keymap": 1, "llm-config": 2, "bundle-dir": 3,
         "bundle": 1}
"""Relative share of the examples per loader (the slow loaders -- catalogs, apps -- get fewer)."""



def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1000, help="examples in all (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--loader", action="append", choices=list(SHARE), default=None)
    parser.add_argument("--show", type=int, default=10, help="failures to print (default 10)")
    args = parser.parse_args()
    names = args.loader or list(SHARE)
    weight = sum(SHARE[n] for n in names)
    total = Tally()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="input-fuzz-") as tmp:
        work = Path(tmp)
        found = targets(work / "seeds")
        for name in names:
            n = max(1, round(args.examples * SHARE[name] / weight))
            t0 = time.perf_counter()
            tally = fuzz(found[name], n, work / name, args.seed)
            print(f"{tally.line(name)}  ({time.perf_counter() - t0:.1f} s)", flush=True)
            total.add(tally)
    print(f"{total.line('all')}  ({time.perf_counter() - started:.1f} s)")
    for line in total.failures[: args.show]:
        print("  " + line)
    return 1 if total.tracebacks or total.hangs or total.unnamed else 0


if __name__ == "__main__":
    raise SystemExit(main())
