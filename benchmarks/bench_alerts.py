"""Benchmark: evaluate the frozen rule pack every 15 s over a 90-minute Train Ticket run.

The simulation (with a few injected faults: a 100 % error route, added latency, a bad
image rollout, a memory leak) runs first and is not timed; then the embedded evaluator
ingests its scrapes and evaluates the pack at every 15-second boundary, interleaved as
the run loop does (``AlertEvaluator.step``). Prints wall time for ingestion plus
evaluation, per evaluation, and the alert transitions seen. Target (issue 4): under 3 s
on the development machine (2 cores).

With ``--marathon SEED`` it instead times the evaluator inside a full run of the generated
``marathon`` schedule of ``--app`` (many faults: pod churn, rollouts, stale series), i.e.
the wall time spent in ``AlertEvaluator.step`` during ``Orchestrator.run`` (target: under
2.5 s for train-ticket seed 7).

Usage: python benchmarks/bench_alerts.py [--app train-ticket] [--minutes 90] [--repeat 3] [--seed 1]
       python benchmarks/bench_alerts.py --marathon 7 [--app train-ticket]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter

from alerts.evaluator import AlertEvaluator, AlertTransition
from alerts.rules import load_pack
from alerts.series import SeriesStore
from engine.sim.effects import Effect
from engine.sim.simulator import Simulator


def simulate(app: str, minutes: float, seed: int) -> Simulator:
    sim = Simulator(app, seed=seed)
    sim.advance(300)
    services = [s.name for s in sim.app.services if s.operations and s.role == "app"]
    entry = sim.app.routes[0].entry.service
    sim.inject(Effect(id="route-500", service=entry, operations=(sim.app.routes[0].entry.operation,), error_rate=1.0))
    sim.inject(Effect(id="slow", service=services[len(services) // 2], latency_add_s=4.0))
    target = services[len(services) // 3]
    sim.deploy_change(target, image=sim.app.service(target).image + "-missing", summary="bad image", author="bench")
    sim.inject(Effect(id="leak", service=services[-1], memory_leak_bps=4e6))
    sim.advance(minutes * 60 * 0.5)
    sim.revert("route-500")
    sim.revert("slow")
    sim.advance(minutes * 60)
    return sim


def marathon(app: str, seed: int) -> None:
    from engine.run.orchestrator import Orchestrator
    from faults.generator import generate

    run = Orchestrator(generate(app, seed, "marathon"))
    ev = run.alert_source
    assert isinstance(ev, AlertEvaluator)
    step = ev.step
    spent = [0.0]

    def timed(store: SeriesStore | None, until: float) -> list[AlertTransition]:
        t0 = time.perf_counter()
        out = step(store, until)
        spent[0] += time.perf_counter() - t0
        return out

    ev.step = timed  # type: ignore[method-assign]
    t0 = time.perf_counter()
    run.run()
    total = time.perf_counter() - t0
    print(f"app={app} marathon seed={seed}: run {total:.2f} s, alert evaluation {spent[0]:.3f} s "
          f"({ev.evaluations} evaluations; storage {ev.storage.describe()}); target < 2.5 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--app", default="train-ticket")
    parser.add_argument("--minutes", type=float, default=90.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--marathon", type=int, metavar="SEED", help="time the evaluator in a marathon run instead")
    args = parser.parse_args()
    if args.marathon is not None:
        marathon(args.app, args.marathon)
        return

    t0 = time.perf_counter()
    sim = simulate(args.app, args.minutes, args.seed)
    sim_s = time.perf_counter() - t0
    rules = load_pack()
    walls: list[float] = []
    ev: AlertEvaluator | None = None
    transitions = []
    for _ in range(args.repeat):
        ev = AlertEvaluator(rules)
        start = time.perf_counter()
        transitions = ev.step(sim.store, args.minutes * 60)
        walls.append(time.perf_counter() - start)
    assert ev is not None
    wall = statistics.median(walls)
    kinds = Counter((t.rule, t.to_state) for t in transitions)
    print(f"app={args.app} minutes={args.minutes:g} seed={args.seed}: simulated in {sim_s:.2f} s "
          f"({len(sim.registry)} series, {len(sim.store.scrapes)} scrapes)")
    print(f"pack evaluation ({len(rules.rules)} rules, every 15 s): {ev.evaluations} evaluations, "
          f"wall median {wall:.3f} s (runs: {', '.join(f'{w:.3f}' for w in walls)}), "
          f"{1000 * wall / max(ev.evaluations, 1):.2f} ms per evaluation; target < 3 s")
    print(f"{len(transitions)} transitions; firing: "
          + ", ".join(f"{rule} x{n}" for (rule, state), n in sorted(kinds.items()) if state == "firing"))


if __name__ == "__main__":
    main()
