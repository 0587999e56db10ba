"""Benchmark: the attacks on the evidence (issue 12), played and counted.

Prints one figure per attack:

1. **deploy history**: ROC AUC of a logistic regression telling fault changes from benign
   ones on held-out seeds (``bench_deploy_blind.py``; 0.5 = no signal, target <= 0.65);
2. **live run directory**: files of a half-run, live run directory that mention any catalog
   fault id (target 0), for a batch run and a wall-clock "play" run;
3. **forgeries**: of a re-chained edit and of an edit plus reseal (a failing probe flipped to a
   pass), how many ``verify --replay`` catches (target 2 of 2), and whether every honest
   reference bundle (noop, runbook and oracle on the three apps, short-5) replays clean;
4. **malformed tool calls** raising out of the tool layer (target 0 of >= 2,000), from the
   corpus of ``tests/test_tools_fuzz.py``;
5. **fuzzed input files** giving a traceback or a hang (target 0 of >= 300;
   ``bench_input_fuzz.py``);
6. **10 MB arguments**: bundle size after eight 10 MB calls, as a ratio to an honest run's;
7. **replay cost**: wall time of ``verify --replay`` of a Train Ticket marathon against the
   run's own (``--skip-marathon`` leaves it out: about a minute).

Usage: python benchmarks/bench_attacks.py [--skip-marathon] [--fuzz-examples 300]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.bundle.format import verify  # noqa: E402
from engine.operate.operators import make_operator  # noqa: E402
from engine.run.orchestrator import Orchestrator  # noqa: E402
from engine.run.replay import replay  # noqa: E402
from engine.run.sealinputs import seal_run  # noqa: E402
from faults.generator import generate  # noqa: E402
from faults.spec import load_catalog  # noqa: E402
from tests.forgery import flip_first_failing_probe, forge  # noqa: E402

APPS = ("online-boutique", "astronomy-shop", "train-ticket")


def _sub(script: str, *args: str) -> str:
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *args], capture_output=True, text=True)
    return (out.stdout + out.stderr).strip()


def live_directory(work: Path) -> tuple[int, int]:
    """(files, files mentioning a fault id) over half-run live directories of a batch and a
    wall-clock player run."""
    ids = [f.id.encode() for f in load_catalog("online-boutique").faults]
    files = hits = 0
    for i, clock in enumerate(("virtual", "wall")):
        sched = generate("online-boutique", 1, "short-5")
        run = Orchestrator(sched, run_dir=work / f"live{i}", clock=clock,
                           operator=make_operator("runbook") if clock == "virtual" else None)
        run.advance_to(sched.duration_s / 2)
        run.recorder.flush()  # type: ignore[union-attr]
        for path in (work / f"live{i}").rglob("*"):
            if path.is_file():
                files += 1
                data = path.read_bytes()
                hits += any(x in data for x in ids)
        run.close()
    return files, hits


def forgeries(work: Path) -> tuple[int, int, int, int]:
    """(forgeries caught, forgeries, honest bundles clean, honest bundles)."""
    honest: list[Path] = []
    for app in APPS:
        for op in ("noop", "runbook", "oracle"):
            run_dir = work / f"{app}-{op}"
            Orchestrator(generate(app, 1, "short-5"), operator=make_operator(op), run_dir=run_dir).run()
            honest.append(seal_run(run_dir))
    clean = sum(1 for b in honest if replay(b, remember=False).ok)
    target = honest[1]  # online-boutique runbook
    rechained = forge(target, work / "f-rechained", flip_first_failing_probe, reseal=False)
    resealed = forge(target, work / "f-resealed", flip_first_failing_probe)
    caught = 0
    for forged, name in ((rechained, "re-chained edit"), (resealed, "edit + reseal")):
        rep = replay(forged, remember=False)
        caught += not rep.ok
        print(f"   {name:16s} verify: {'intact' if verify(forged).ok else 'NOT INTACT'}; replay: "
              f"{'clean (NOT CAUGHT)' if rep.ok else 'caught: ' + (rep.first_difference or rep.problems[0])[:110]}")
    return caught, 2, clean, len(honest)


def tool_calls() -> tuple[int, int]:
    from tests.test_tools_fuzz import _issue, _run, systematic_calls, ten_mb_calls

    run = _run(None)
    run.tools.spend_time = False
    calls = systematic_calls() + ten_mb_calls()
    raised, _ = _issue(run.tools, calls)
    return raised, len(calls)


def big_arguments(work: Path) -> float:
    honest_dir, attacked_dir = work / "honest", work / "attacked"
    sizes = []
    for run_dir, attack in ((honest_dir, False), (attacked_dir, True)):
        run = Orchestrator(generate("online-boutique", 3, "short-5"), run_dir=run_dir)
        run.advance_to(120)
        if attack:
            for _ in range(8):
                run.tools.call("code_search", {"service": "frontend", "pattern": "x" * 10_000_000})
        run.run()
        sizes.append(seal_run(run_dir).stat().st_size)
    return sizes[1] / sizes[0]


def marathon_replay(work: Path) -> tuple[float, float, float]:
    """(run + seal wall s, of which the seal, replay wall s) of a Train Ticket runbook marathon."""
    run_dir = work / "tt-marathon"
    t0 = time.monotonic()
    Orchestrator(generate("train-ticket", 1, "marathon"), operator=make_operator("runbook"), run_dir=run_dir).run()
    t1 = time.monotonic()
    bundle = seal_run(run_dir)
    t2 = time.monotonic()
    rep = replay(bundle, remember=False)
    assert rep.ok, rep.format()
    return t2 - t0, t2 - t1, rep.wall_s


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--skip-marathon", action="store_true")
    ap.add_argument("--fuzz-examples", type=int, default=300)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        print("1. deploy history classifier (held-out seeds):")
        print("   " + _sub("bench_deploy_blind.py").replace("\n", "\n   "))
        print("   with the change kind as a feature:")
        print("   " + _sub("bench_deploy_blind.py", "--kind").splitlines()[-1])
        files, hits = live_directory(work)
        print(f"2. live run directories: {hits} of {files} files mention a fault id")
        print("3. forgeries:")
        caught, total, clean, honest = forgeries(work)
        print(f"   caught by verify --replay: {caught} of {total}; honest reference bundles replaying clean: "
              f"{clean} of {honest}")
        raised, calls = tool_calls()
        print(f"4. malformed tool calls raising out of the tool layer: {raised} of {calls}")
        print(f"5. fuzzed input files ({args.fuzz_examples} examples):")
        print("   " + _sub("bench_input_fuzz.py", "--examples", str(args.fuzz_examples)).replace("\n", "\n   "))
        print(f"6. bundle after eight 10 MB calls: {big_arguments(work):.3f}x an honest run's")
        if not args.skip_marathon:
            run_s, seal_s, replay_s = marathon_replay(work)
            print(f"7. Train Ticket marathon (runbook): run + seal {run_s:.1f} s (seal {seal_s:.1f} s, the "
                  f"counterfactual); verify --replay {replay_s:.1f} s = {replay_s / run_s:.2f}x the run's own time")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
