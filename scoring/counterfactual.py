"""The no-op counterfactual a run's degradation is measured against.

On the embedded simulator a run's no-op counterfactual is produced deterministically: the
same schedule replayed with the same seed and no operator. Operators and alert
evaluation never change what the simulator does on its own, so the no-op run shows
exactly what the run's users would have seen had nobody acted. Its SLO-violation time is
cached per (app, seed, schedule digest) under ``$SRE_MARATHON_CACHE`` (default
``~/.cache/sre-marathon``), and the score records which no-op run it compared against
(its event-stream head hash).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import yaml

from engine.appmodel import load_app
from scoring.score import route_violation_seconds

CACHE_VERSION = "1"


def cache_dir() -> Path:
    root = os.environ.get("SRE_MARATHON_CACHE") or str(Path.home() / ".cache" / "sre-marathon")
    return Path(root) / "noop"


def noop_counterfactual(app: str, seed: int, schedule_text: str, *, use_cache: bool = True) -> dict[str, Any]:
    """SLO-violation seconds of the no-op run of a schedule.

    Returns:
        ``{"violation_s": float, "reference": "noop:<app>:seed<N>:<head hash>",
        "schedule_sha256": str}``.
    """
    digest = hashlib.sha256(schedule_text.encode()).hexdigest()
    key = hashlib.sha256(f"{CACHE_VERSION}:{app}:{seed}:{digest}".encode()).hexdigest()[:24]
    path = cache_dir() / f"{app}-seed{seed}-{key}.json"
    if use_cache and path.is_file():
        try:
            cached: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
            return cached
        except ValueError:
            pass  # a damaged cache entry is recomputed
    from engine.orchestrator import EVAL_INTERVAL_S, Orchestrator
    from faults.schedule import parse_schedule

    sched = parse_schedule(yaml.safe_load(schedule_text), "<bundle schedule>")
    run = Orchestrator(sched, seed=seed, alert_source=None)
    run.run()
    model = load_app(app)
    slos = {r.name: (r.slo.error_share, r.slo.latency_p95_ms) for r in model.routes}
    violation, _ = route_violation_seconds(run.stream.events, slos, EVAL_INTERVAL_S)
    result = {"violation_s": round(violation, 3), "reference": f"noop:{app}:seed{seed}:{run.stream.head[:16]}",
              "schedule_sha256": digest}
    if use_cache:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(result, sort_keys=True), encoding="utf-8")
            tmp.replace(path)
        except OSError:
            pass  # an unwritable cache only costs time
    return result
