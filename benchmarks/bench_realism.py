"""What an operator sees per fault type: the numbers behind issue 14's closing note.

For each case, a faulted simulator and a fault-free control of the same seed run 300 s of
warm traffic, the fault is applied, and both run on for 480 s; the script prints, over the
last 240 s, the target's and the entry's success share, request rate and p95 (the ratio to
the control where one makes sense), and for cases without a catalog fault in older
checkouts, ``n/a``. Then, per app, log lines per pod per minute and the share of error lines,
and the alerts a fault-free 30 minutes fires under each pack. It runs unchanged against an
older checkout, so a before/after comparison is this script run in both::

    python benchmarks/bench_realism.py            # this checkout
    git worktree add /tmp/base <commit> && cd /tmp/base && python /path/to/bench_realism.py

Output: one line per measurement, ``key value`` pairs.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path.cwd()))

from engine.sim.simulator import Simulator
from faults.spec import load_catalog

WARM_S, FAULT_S, WINDOW_S = 300.0, 480.0, 240.0
CASES = [
    ("online-boutique", "ob-productcatalog-cpu-hog"),
    ("online-boutique", "ob-currencyservice-cpu-hog"),
    ("astronomy-shop", "as-cart-cpu-hog"),
    ("train-ticket", "tt-cpu-hog-ts-station-service"),
    ("online-boutique", "ob-checkout-payment-delay"),
    ("online-boutique", "ob-frontend-productcatalogservice-network-delay"),
    ("astronomy-shop", "as-shipping-quote-delay"),
    ("online-boutique", "ob-cart-service-selector"),
    ("online-boutique", "ob-node-network-delay-recommendation"),
]


def _fmt(x: float | None, nd: int = 3) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def case(app: str, fault_id: str) -> None:
    spec = next((f for f in load_catalog(app).faults if f.id == fault_id), None)
    if spec is None:
        print(f"case {fault_id} n/a (not in this catalog)")
        return
    sim, ctl = Simulator(app, seed=3), Simulator(app, seed=3)
    sim.advance(WARM_S)
    ctl.advance(WARM_S)
    sim.apply_fault(spec)
    sim.advance(WARM_S + FAULT_S)
    ctl.advance(WARM_S + FAULT_S)
    h = {x.service: x for x in sim.service_health(WINDOW_S)}
    c = {x.service: x for x in ctl.service_health(WINDOW_S)}
    entry = sim.app.routes[0].entry.service
    for role, svc in (("target", spec.target), ("entry", entry)):
        a, b = h.get(svc), c.get(svc)
        if a is None or b is None:
            continue
        p95 = None if not (a.p95_ms and b.p95_ms) else a.p95_ms / b.p95_ms
        rate = None if not b.rps else a.rps / b.rps
        print(f"case {fault_id} {role} {svc} success {_fmt(1 - a.error_share)} rate_ratio {_fmt(rate)} "
              f"p95_ms {_fmt(a.p95_ms, 0)} p95_ratio {_fmt(p95, 1)}")
    others = [s for s in c if s not in (spec.target, entry) and c[s].rps and s in h]
    if others:
        mean = sum(h[s].rps / c[s].rps for s in others) / len(others)
        print(f"case {fault_id} others rate_ratio {_fmt(mean)}")


def logs(app: str) -> None:
    sim = Simulator(app, seed=3)
    sim.advance(WARM_S + 600.0)
    pods = sorted(p.name for p in sim.cluster.pods.values() if not p.terminating)
    lines = [len(sim.logs(p)) for p in pods]
    errors = sum(1 for p in pods for ln in sim.logs(p) if "error" in ln.lower())
    span_min = (WARM_S + 600.0) / 60.0
    print(f"logs {app} pods {len(pods)} lines_per_pod_min {sum(lines) / len(pods) / span_min:.1f} "
          f"error_line_share {errors / max(1, sum(lines)):.3f}")


def quiet_alerts(app: str) -> None:
    """Alerts firing or pending in a fault-free 30-minute run (no operator), under each pack."""
    from engine.run.orchestrator import Orchestrator
    from faults.generator import generate

    sched = generate(app, 1, "short-5").model_copy(update={"faults": (), "duration_s": 1800})
    for pack in ("paper", "extended"):
        try:
            run = Orchestrator(sched, operator=None, alert_source="embedded", rules=pack)
        except (ValueError, KeyError) as exc:
            print(f"quiet {app} {pack} n/a ({type(exc).__name__}: {exc})")
            continue
        run.run()
        fired = sorted({e.payload["alert"] for e in run.stream.events if e.kind == "alert.firing"})
        pending = sorted({e.payload["alert"] for e in run.stream.events if e.kind == "alert.pending"})
        print(f"quiet {app} {pack} firing {len(fired)} {','.join(fired) or '-'} "
              f"pending {len(pending)} {','.join(pending) or '-'}")


def main() -> None:
    t0 = time.perf_counter()
    for app, fid in CASES:
        case(app, fid)
    for app in ("online-boutique", "astronomy-shop", "train-ticket"):
        logs(app)
    for app in ("online-boutique", "astronomy-shop", "train-ticket"):
        try:
            quiet_alerts(app)
        except Exception as exc:
            print(f"quiet {app} n/a ({type(exc).__name__}: {exc})")
    print(f"wall_s {time.perf_counter() - t0:.1f}")


if __name__ == "__main__":
    main()
