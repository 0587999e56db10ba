"""The no-op counterfactual a run is judged against: what would have happened had nobody acted.

The no-op run is the same schedule replayed with the same seed and no operator; the run
side re-simulates it (``engine/run/counterfactual.py``) and the seal stores the result in
the bundle (``counterfactual.json``), so the scorer reads it from the bundle like every
other piece of evidence. The scorer reads from it:

* the user-facing SLO-violation time (degradation, 100 = no better than doing nothing);
* every fault's probe samples (the repair gate "the probe would still be failing": no
  credit for faults that heal on their own);
* per route, the samples at which the route violated its SLO (the blast-radius gate);
* per store, its data generation at each sample (the data gate).

:class:`Counterfactual` is JSON-able; :func:`counterfactual_from_events` reduces a recorded
no-op run's events to one, and the score records which no-op run it compared against (its
event-stream head hash). :data:`NoopProvider` is how the command layer hands the scorer a
way to re-simulate one for a bundle that carries none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.bundle.events import Event


@dataclass(frozen=True)
class Counterfactual:
    """The no-op run of one schedule, as the scorer reads it (module docstring).

    Attributes:
        reference: ``noop:<app>:seed<N>:<head hash prefix>``.
        violation_s: SLO-violation seconds summed over routes.
        probes: fault id -> ``[(t, ok), ...]`` probe samples, seconds of run time.
        route_violations: route -> run times of the samples at which it violated its SLO.
        stores: ``[(t, {store: data generation}), ...]`` per sample.
        replicas: fault target -> ``[(t, ready, desired), ...]`` per sample.
        schedule_sha256: digest of the schedule text replayed.
    """

    reference: str
    violation_s: float
    probes: dict[str, list[tuple[float, bool]]] = field(default_factory=dict)
    route_violations: dict[str, list[float]] = field(default_factory=dict)
    stores: list[tuple[float, dict[str, int]]] = field(default_factory=list)
    replicas: dict[str, list[tuple[float, int, int]]] = field(default_factory=dict)
    schedule_sha256: str = ""

    def replicas_at(self, service: str, t: float) -> tuple[int, int] | None:
        """(ready, desired) of a fault target at the sample at run time ``t``, or None."""
        for ts, ready, desired in self.replicas.get(service, []):
            if abs(ts - t) < 1e-6:
                return ready, desired
        return None

    def to_dict(self) -> dict[str, Any]:
        return {"reference": self.reference, "violation_s": self.violation_s,
                "probes": {k: [[t, ok] for t, ok in v] for k, v in sorted(self.probes.items())},
                "route_violations": {k: list(v) for k, v in sorted(self.route_violations.items())},
                "stores": [[t, dict(sorted(s.items()))] for t, s in self.stores],
                "replicas": {k: [list(x) for x in v] for k, v in sorted(self.replicas.items())},
                "schedule_sha256": self.schedule_sha256}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Counterfactual:
        """Rebuild from :meth:`to_dict` output.

        Raises:
            KeyError, TypeError, ValueError: not a counterfactual document.
        """
        return cls(reference=str(d["reference"]), violation_s=float(d["violation_s"]),
                   probes={str(k): [(float(t), bool(ok)) for t, ok in v] for k, v in d.get("probes", {}).items()},
                   route_violations={str(k): [float(t) for t in v] for k, v in d.get("route_violations", {}).items()},
                   stores=[(float(t), {str(k): int(g) for k, g in s.items()}) for t, s in d.get("stores", [])],
                   replicas={str(k): [(float(t), int(r), int(n)) for t, r, n in v]
                             for k, v in d.get("replicas", {}).items()},
                   schedule_sha256=str(d.get("schedule_sha256", "")))


def route_violations(events: Sequence[Event], slos: Mapping[str, tuple[float, float]]) -> dict[str, list[float]]:
    """Per route, the run times of the ``health.sample`` events at which it violated its SLO.

    A route violates its SLO in a sample when it had traffic and its error share or p95
    exceeded the SLO's (``slos``: route -> (max error share, max p95 ms)). The first sample
    is a baseline that covers no interval and is skipped.
    """
    out: dict[str, list[float]] = {}
    first = True
    for ev in events:
        if ev.kind != "health.sample":
            continue
        if first:
            first = False
            continue
        for r in ev.payload.get("routes", []):
            slo = slos.get(r["route"])
            if slo is None or r.get("rps", 0) <= 0:
                continue
            if r["error_share"] > slo[0] or r["p95_ms"] > slo[1]:
                out.setdefault(r["route"], []).append(ev.t)
    return out


def store_generations(events: Sequence[Event]) -> list[tuple[float, dict[str, int]]]:
    """``[(t, {store: data generation})]`` from the ``health.sample`` events that carry ``stores``."""
    return [(ev.t, {str(k): int(v) for k, v in ev.payload["stores"].items()})
            for ev in events if ev.kind == "health.sample" and isinstance(ev.payload.get("stores"), dict)]


def counterfactual_from_events(events: Sequence[Event], slos: Mapping[str, tuple[float, float]],
                               interval_s: float, schedule_sha256: str = "") -> Counterfactual:
    """The :class:`Counterfactual` of a recorded no-op run (its events)."""
    start = next((e for e in events if e.kind == "run.start"), None)
    if start is None:
        raise ValueError("not a run: no run.start event")
    violations = route_violations(events, slos)
    probes: dict[str, list[tuple[float, bool]]] = {}
    for ev in events:
        if ev.kind == "probe.result":
            probes.setdefault(str(ev.payload["fault"]), []).append((ev.t, bool(ev.payload["ok"])))
    targets = {str(e.payload["target"]) for e in events if e.kind == "fault.inject"}
    replicas: dict[str, list[tuple[float, int, int]]] = {t: [] for t in sorted(targets)}
    for ev in events:
        if ev.kind == "health.sample":
            for svc in ev.payload.get("services", []):
                if svc["service"] in replicas:
                    replicas[svc["service"]].append((ev.t, int(svc["ready"]), int(svc["desired"])))
    head = events[-1].hash if events else ""
    meta = start.payload
    return Counterfactual(reference=f"noop:{meta['app']}:seed{meta['seed']}:{head[:16]}",
                          violation_s=round(sum(len(v) for v in violations.values()) * interval_s, 3),
                          probes=probes, route_violations=violations, stores=store_generations(events),
                          replicas=replicas, schedule_sha256=schedule_sha256 or str(meta.get("schedule_sha256", "")))



NoopProvider = Callable[[str, int, str], Counterfactual]
"""``(app, seed, schedule text) -> Counterfactual``: re-simulates the no-op run of a schedule
(the run side's ``noop_counterfactual``), for bundles sealed without one. The
command layer injects it; scoring itself never runs anything."""
