"""Benchmark: ``marathon score`` and ``marathon verify`` of sealed bundles, from the command line.

Prints, per bundle (a Train Ticket marathon and each shipped app's short-5 run, runbook
operator, seed 1): its size and events, then the wall time of ``marathon score BUNDLE`` and
``marathon verify BUNDLE`` as separate processes (what a user waits for, start-up included),
median of ``--repeat`` runs, once with a cold cache (``SRE_MARATHON_CACHE`` pointing at an
empty directory: the generated-schedule digest is computed again) and once warm, and the
score printed, against the issue 17 targets: score < 1 s, verify < 0.5 s. Also prints
``marathon --help`` as the start-up floor both commands pay.

Scoring never re-simulates these bundles (they carry their no-op counterfactual), so cold
and warm differ only by the generated-schedule cache (``engine/run/counterfactual.py``).
The machine is shared: read the figures as medians, and against the ``--help`` floor.

Usage: python benchmarks/bench_score.py [--workdir DIR] [--repeat 3] [--apps a,b] [--skip-marathon]
(bundles are made once into DIR and reused; default a temporary directory).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from engine.apps.model import builtin_apps
from engine.bundle.format import open_bundle

TARGET_SCORE_S = 1.0
TARGET_VERIFY_S = 0.5
REPO = Path(__file__).resolve().parents[1]


def _env(cache: Path) -> dict[str, str]:
    env = dict(os.environ, SRE_MARATHON_CACHE=str(cache))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH", "")) if p)
    return env


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, str, float]:
    """(wall seconds, stdout, CPU seconds: user + system) of ``python -m engine.cli ARGV``. The
    CPU time is what the command costs whatever else the machine runs; wall time on a busy
    machine is that plus waiting for a core.

    Raises:
        SystemExit: the command failed (its stderr is printed).
    """
    c0 = _cpu()
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "engine.cli", *argv], env=env, capture_output=True, text=True,
                          check=False)
    took = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"marathon {' '.join(argv)} failed ({proc.returncode}):\n{proc.stderr}")
    return took, proc.stdout, _cpu() - c0


def _bundle(workdir: Path, app: str, regime: str, env: dict[str, str]) -> Path:
    """The sealed runbook bundle of ``app`` / ``regime`` / seed 1 in ``workdir``, made when missing."""
    run_dir = workdir / f"{app}-{regime}"
    bundle = run_dir.with_name(run_dir.name + ".marathon")
    if not bundle.exists():
        print(f"  (recording {app} {regime} ...)", flush=True)
        _timed(["run", "--app", app, "--regime", regime, "--seed", "1", "--agent", "runbook", "--run-dir",
                str(run_dir)], env)
    return bundle


def _score_value(stdout: str) -> str:
    """The SCORE column of the leaderboard's first row."""
    lines = [ln for ln in stdout.splitlines() if ln.strip()]
    head = lines[0].split()
    row = lines[1].split()
    col = next(i for i, h in enumerate(head) if h.startswith("SCORE"))
    return row[col]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, help="where the bundles are made and kept (default: a temp dir)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each command; the median is printed")
    parser.add_argument("--apps", default=",".join(builtin_apps()), help="apps whose short-5 bundle is scored")
    parser.add_argument("--skip-marathon", action="store_true", help="leave out the Train Ticket marathon")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = args.workdir or Path(tmp) / "bundles"
        workdir.mkdir(parents=True, exist_ok=True)
        warm_cache = Path(tmp) / "warm-cache"
        cases = [] if args.skip_marathon else [("train-ticket", "marathon")]
        cases += [(app, "short-5") for app in args.apps.split(",") if app]
        bundles = [(app, regime, _bundle(workdir, app, regime, _env(warm_cache))) for app, regime in cases]
        helps = [_timed(["--help"], _env(warm_cache)) for _ in range(args.repeat)]
        print(f"marathon --help (start-up floor): {statistics.median(h[0] for h in helps):.2f} s wall, "
              f"{statistics.median(h[2] for h in helps):.2f} s CPU")
        print("wall seconds (CPU seconds), medians")
        print(f"{'bundle':24} {'MB':>5} {'events':>6}  {'score cold':>13} {'score warm':>13} {'verify':>13}  "
              f"{'score':>6}  targets: score < {TARGET_SCORE_S:g} s, verify < {TARGET_VERIFY_S:g} s")
        for app, regime, bundle in bundles:
            events = len(open_bundle(bundle).events)
            cold = [_timed(["score", str(bundle)], _env(Path(tmp) / f"cold-{app}-{regime}-{i}"))
                    for i in range(args.repeat)]
            warm = [_timed(["score", str(bundle)], _env(warm_cache)) for _ in range(args.repeat)]
            ver = [_timed(["verify", str(bundle)], _env(warm_cache)) for _ in range(args.repeat)]
            cells = [(statistics.median(r[0] for r in runs), statistics.median(r[2] for r in runs))
                     for runs in (cold, warm, ver)]
            flag = ("" if cells[1][0] < TARGET_SCORE_S else " score MISSED") \
                + ("" if cells[2][0] < TARGET_VERIFY_S else " verify MISSED")
            print(f"{app + ' ' + regime:24} {bundle.stat().st_size / 2**20:5.2f} {events:6d}  "
                  + " ".join(f"{w:6.2f} ({c:4.2f})" for w, c in cells) + f"  {_score_value(warm[-1][1]):>6}{flag}")


if __name__ == "__main__":
    main()
