"""Benchmark: ``marathon rules test`` against ``promtool test rules`` on the same files.

Two workloads, each run ``--repeat`` times by both tools as separate processes (the wall time a
user sees, Python's start-up and imports included), median reported:

* ``fixtures``: every unit-test file of ``prometheus-testdata/promtool`` in one invocation
  (small files: start-up dominates);
* ``pack``: the paper pack over a faulted 35-minute Online Boutique run, as
  :func:`alerts.promtool.unit_test_yaml` writes it (every sample of the series the pack reads,
  the firing alerts and annotations at every 15 s evaluation: 720 series, 1,040 alert tests, 0.56 MB;
  promtool itself fails it in about one run of six: Go's random aggregation order moves a sum's
  last bit and one ``humanizePercentage`` annotation rounds to 50.62 % instead of 50.63 %);
* ``generated``: one unit-test file written here over ``tests/data/rulestest/rules.yml`` --
  ``--series`` ``errors_total`` and ``up`` series at 15 s for ``--hours`` hours, evaluated every
  15 s, with an alert test and a PromQL test every 30 minutes, all passing (rule evaluation dominates).

Prints the medians and the ratio promtool / marathon (above 1: marathon is faster), and the
median of the same files run in this process (:func:`alerts.rulestest.run_files`: no start-up,
the evaluation alone).

Usage: python benchmarks/bench_rules_test.py [--repeat 5] [--series 200] [--hours 6]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
_SHARED = [Path(p) for p in (os.environ.get("SRE_MARATHON_SHARED_DATA", ""), REPO.parent / "shared" / "data",
                              "/work/shared/data") if p and Path(p).is_dir()]
FIXTURES = (_SHARED[0] if _SHARED else REPO.parent / "shared" / "data") / "prometheus-testdata" / "promtool"
"""Prometheus' promtool fixtures (``SRE_MARATHON_SHARED_DATA`` overrides, as for the tests)."""
UNIT_TEST_FILES = ("at-modifier-test.yml", "bad-input-series.yml", "bad-promql.yml", "bad-rules-error-test.yml",
                   "bad-rules-syntax-test.yml", "failing.yml", "long-period.yml", "negative-offset-test.yml",
                   "unittest.yml")


def generated_file(directory: Path, series: int, hours: float) -> Path:
    """Write the ``generated`` workload's unit-test file (and a copy of its rule file) into ``directory``."""
    shutil.copy(REPO / "tests" / "data" / "rulestest" / "rules.yml", directory / "rules.yml")
    steps = int(hours * 240)
    inputs = []
    for k in range(series // 2):
        job, inst = f"job{k % 50}", f"i{k}"
        inputs.append({"series": f'errors_total{{job="{job}", instance="{inst}"}}', "values": f"0+{k % 7}x{steps}"})
        inputs.append({"series": f'up{{job="{job}", instance="{inst}"}}', "values": f"1x{steps}"})
    alerts = []
    exprs = []
    for m in range(30, int(hours * 60) + 1, 30):
        alerts.append({"eval_time": f"{m}m", "alertname": "TargetDown", "exp_alerts": []})
        exprs.append({"expr": "count(job:errors:rate1m)", "eval_time": f"{m}m", "exp_samples": [{"value": 50}]})
    doc = {"rule_files": ["rules.yml"], "evaluation_interval": "15s",
           "tests": [{"interval": "15s", "input_series": inputs, "alert_rule_test": alerts,
                      "promql_expr_test": exprs}]}
    path = directory / "generated-test.yml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def pack_file(directory: Path) -> Path:
    """Write the ``pack`` workload's unit-test file into ``directory``."""
    from alerts.evaluator import AlertEvaluator
    from alerts.promtool import record_run, unit_test_yaml
    from alerts.rules import PACK_PATH
    from engine.sim.effects import Effect
    from engine.sim.simulator import Simulator

    sim = Simulator("online-boutique", 3)
    sim.advance(60)
    sim.inject(Effect(id="err-route", service="frontend", operations=("POST /cart",), error_rate=1.0))
    sim.inject(Effect(id="slow", service="productcatalogservice", latency_add_s=4.0))
    sim.scale("currencyservice", 0)
    sim.advance(900)
    sim.revert("err-route")
    sim.revert("slow")
    sim.scale("currencyservice", 2)
    sim.advance(1200)
    ev = AlertEvaluator(None)
    for scrape in sim.store.scrapes:
        if scrape.t % 15 == 0:
            ev.ingest(scrape, sim.store.info)
    st = ev.storage
    run = record_run(ev, int(st.ts[0]), int(st.ts[st.n_rows - 1]), 15_000)
    path = directory / "pack-test.yml"
    path.write_text(unit_test_yaml(ev, run, PACK_PATH))
    return path


def timed(cmd: list[str], cwd: Path, repeat: int) -> tuple[float, int]:
    """Median wall seconds of ``repeat`` runs of ``cmd`` and its exit code."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    times = []
    code = 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        code = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, check=False).returncode
        times.append(time.perf_counter() - t0)
    return statistics.median(times), code


def in_process(cwd: Path, files: list[str], repeat: int) -> float:
    """Median wall seconds of :func:`alerts.rulestest.run_files` on ``files`` (run from ``cwd``)."""
    from alerts.rulestest import run_files

    here = Path.cwd()
    times = []
    try:
        os.chdir(cwd)
        run_files(files)  # warm-up: imports, the PromQL parser's function table
        for _ in range(repeat):
            t0 = time.perf_counter()
            run_files(files)
            times.append(time.perf_counter() - t0)
    finally:
        os.chdir(here)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--series", type=int, default=200)
    ap.add_argument("--hours", type=float, default=6.0)
    args = ap.parse_args()
    promtool = shutil.which("promtool")
    if promtool is None:
        sys.exit("promtool not on PATH (Debian: apt-get install prometheus)")
    marathon = [sys.executable, "-m", "engine.cli", "rules", "test"]
    with tempfile.TemporaryDirectory() as tmp:
        gen = generated_file(Path(tmp), args.series, args.hours)
        pack = pack_file(Path(tmp))
        workloads = [("fixtures", FIXTURES, list(UNIT_TEST_FILES)), ("pack", Path(tmp), [pack.name]),
                     ("generated", Path(tmp), [gen.name])]
        print(f"{'workload':<10} {'promtool s':>11} {'marathon s':>11} {'ratio':>7} {'in-process s':>13} "
              f"{'ratio':>7}  exit codes")
        for name, cwd, files in workloads:
            p_s, p_code = timed([promtool, "test", "rules", *files], cwd, args.repeat)
            m_s, m_code = timed([*marathon, *files], cwd, args.repeat)
            i_s = in_process(cwd, files, args.repeat)
            print(f"{name:<10} {p_s:>11.3f} {m_s:>11.3f} {p_s / m_s:>6.2f}x {i_s:>13.3f} {p_s / i_s:>6.2f}x  "
                  f"promtool {p_code}, marathon {m_code}")


if __name__ == "__main__":
    main()
