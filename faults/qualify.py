"""Qualification: a fault ships only if it is fair (Incident-Arena's oracle and no-op trials).

Three trials per fault, each on a fresh simulation of the fault's app:

* **no-op** -- inject and leave alone: from the fault's onset (when the change is built
  and rolled out, or at once for runtime faults) its symptom probe must fail at every
  sample for :data:`NOOP_WINDOW_S`, and at least one alert of the frozen pack attributable
  to the fault (:mod:`scoring.attribution`) must fire -- an operator sees faults only
  through alerts, so a silent fault could never be correlated;
* **oracle** -- inject, wait for the onset, apply the reference remedy: the probe must
  pass within the remedy's grace (its build and rollout time) and keep passing for
  :data:`HOLD_S`;
* **revert** -- inject, wait, let the orchestrator revert: the probe and every route probe
  pass, and every Deployment is fully rolled out again.

Probes are sampled every 15 s (the evaluation interval).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.appmodel import AppModel
from engine.sim.simulator import Simulator
from engine.sim.source import build_seconds
from faults.inject import apply_remedy, finish_revert, inject, revert
from faults.probes import ProbeResult, evaluate_probe
from faults.spec import FaultSpec, ProbeSpec

INJECT_AT_S = 60.0
SAMPLE_S = 15.0
NOOP_WINDOW_S = 240.0
HOLD_S = 180.0
ALERT_WINDOW_S = 720.0
"""How long after its onset a fault may take to fire an attributable alert."""
MARGIN_S = 45.0


@dataclass
class TrialResult:
    """Outcome of one trial with its probe samples (run time, result) and, for the no-op
    trial, the alerts that fired and are attributable to the fault (rule names)."""

    name: str
    ok: bool
    reason: str
    samples: list[tuple[float, ProbeResult]] = field(default_factory=list)
    alerts: list[str] = field(default_factory=list)


def rollout_seconds(app: AppModel, service: str) -> float:
    """Time for one new pod of ``service`` to become ready: pull, start-up, readiness delay."""
    svc = app.service(service)
    probe = svc.readiness_probe
    ready = max(svc.startup_s * 1.25, probe.initial_delay_s + probe.period_s if probe else 0.0)
    return 20.0 + ready


def onset_seconds(app: AppModel, spec: FaultSpec) -> float:
    """Seconds from injection until the fault bites (build + first pod of the rollout)."""
    if spec.mechanism == "code-change":
        return build_seconds(app.service(spec.target).language) + rollout_seconds(app, spec.target) + MARGIN_S
    if spec.mechanism in ("config-patch", "resource-limit", "image", "readiness-probe"):
        return rollout_seconds(app, spec.target) + MARGIN_S
    return MARGIN_S


def remedy_grace_seconds(app: AppModel, spec: FaultSpec) -> float:
    """Seconds a correct remedy needs to take effect (rebuild, roll out both replicas)."""
    service = spec.remedy.service or spec.target
    roll = 2 * rollout_seconds(app, service) + MARGIN_S
    if spec.remedy.action == "revert-patch":
        return build_seconds(app.service(service).language) + roll
    if spec.remedy.action == "set-flag":
        return 2 * MARGIN_S
    return roll


def _sample(sim: Simulator, probe: ProbeSpec, until: float, out: list[tuple[float, ProbeResult]],
            each: object = None, target: str | None = None) -> None:
    t = sim.now
    while t + SAMPLE_S <= until + 1e-9:
        t += SAMPLE_S
        sim.advance(t)
        if callable(each):
            each()
        out.append((t, evaluate_probe(sim, probe, target)))


def _fresh(spec: FaultSpec, app: str, seed: int) -> Simulator:
    sim = Simulator(app, seed=seed)
    sim.advance(INJECT_AT_S)
    return sim


def noop_trial(spec: FaultSpec, app: str, seed: int = 0) -> TrialResult:
    from alerts.evaluator import AlertEvaluator
    from scoring.attribution import FaultWindow, attribute

    sim = _fresh(spec, app, seed)
    evaluator = AlertEvaluator(interval_s=SAMPLE_S)
    evaluator.step(sim.store, sim.now)
    inject(sim, spec)
    onset = sim.now + onset_seconds(sim.app, spec)
    sim.advance(onset)
    samples: list[tuple[float, ProbeResult]] = [(sim.now, evaluate_probe(sim, spec.probe, spec.probe_anchor))]
    _sample(sim, spec.probe, onset + NOOP_WINDOW_S, samples, target=spec.probe_anchor)
    # Alerts lag their symptom by their rate window and ``for`` (up to 10 minutes for the
    # latency rule), so the fault stays in place a while longer for them.
    sim.advance(max(sim.now, INJECT_AT_S + onset_seconds(sim.app, spec) + ALERT_WINDOW_S))
    evaluator.step(sim.store, sim.now)
    window = [FaultWindow(spec.id, spec.target, INJECT_AT_S, None, spec.scope)]
    services = sim.app.service_names()
    edges = sim.app.edges()
    routes = {(r.entry.service, r.entry.operation): r.name for r in sim.app.routes}
    fired = sorted({i.rule for i in (evaluator.history.instances if evaluator.history else [])
                    if i.fired_at is not None
                    and attribute(i.labels, i.active_at, window, services, edges, routes) == spec.id})
    passing = [(t, s) for t, s in samples if s.ok]
    if passing:
        t, s = passing[0]
        return TrialResult("noop", False, f"probe passed at +{t - INJECT_AT_S:.0f}s with the fault active: "
                                          f"{s.detail}", samples, fired)
    return TrialResult("noop", True, f"probe failed at all {len(samples)} samples: {samples[-1][1].detail}", samples,
                       fired)


def oracle_trial(spec: FaultSpec, app: str, seed: int = 0) -> TrialResult:
    sim = _fresh(spec, app, seed)
    inst = inject(sim, spec)
    sim.advance(sim.now + onset_seconds(sim.app, spec) + 30.0)
    before = evaluate_probe(sim, spec.probe, spec.probe_anchor)
    steps = apply_remedy(sim, inst)
    grace_end = sim.now + remedy_grace_seconds(sim.app, spec)
    sim.advance(grace_end)
    samples: list[tuple[float, ProbeResult]] = [(sim.now, evaluate_probe(sim, spec.probe, spec.probe_anchor))]
    _sample(sim, spec.probe, grace_end + HOLD_S, samples, target=spec.probe_anchor)
    failing = [(t, s) for t, s in samples if not s.ok]
    what = ", ".join(f"{s.tool}({', '.join(f'{k}={v}' for k, v in s.args.items() if k != 'diff')})" for s in steps)
    if failing:
        t, s = failing[0]
        return TrialResult("oracle", False, f"after {what}: probe still failing at +{t - INJECT_AT_S:.0f}s: "
                                            f"{s.detail} (before remedy: {before.detail})", samples)
    return TrialResult("oracle", True, f"{what}: probe passes and holds: {samples[-1][1].detail}", samples)


def revert_trial(spec: FaultSpec, app: str, seed: int = 0) -> TrialResult:
    sim = _fresh(spec, app, seed)
    inst = inject(sim, spec)
    sim.advance(sim.now + onset_seconds(sim.app, spec) + 60.0)
    revert(sim, inst)
    grace_end = sim.now + remedy_grace_seconds(sim.app, spec.model_copy(update={"remedy": spec.remedy.model_copy(
        update={"action": "revert-patch" if spec.mechanism == "code-change" else "rollback"})}))
    samples: list[tuple[float, ProbeResult]] = []
    _sample(sim, spec.probe, grace_end, [], each=lambda: finish_revert(sim, inst), target=spec.probe_anchor)
    samples.append((sim.now, evaluate_probe(sim, spec.probe, spec.probe_anchor)))
    _sample(sim, spec.probe, grace_end + HOLD_S, samples, each=lambda: finish_revert(sim, inst),
            target=spec.probe_anchor)
    failing = [(t, s) for t, s in samples if not s.ok]
    if failing:
        t, s = failing[0]
        return TrialResult("revert", False, f"probe failing at +{t - INJECT_AT_S:.0f}s after revert: {s.detail}",
                           samples)
    if inst.effect_ids:
        return TrialResult("revert", False, "the fault's effects are still registered after the revert", samples)
    for route in sim.app.routes:
        res = evaluate_probe(sim, ProbeSpec(route=route.name))
        if not res.ok:
            return TrialResult("revert", False, f"after revert: {res.detail}", samples)
    for wl in sim.cluster.workloads.values():
        if wl.kind != "Deployment":
            continue
        res = evaluate_probe(sim, ProbeSpec(rollout=wl.name))
        if not res.ok:
            return TrialResult("revert", False, f"after revert: {res.detail}", samples)
    return TrialResult("revert", True, "probe, every route and every rollout healthy after revert", samples)


@dataclass(frozen=True)
class Qualification:
    fault: str
    noop: TrialResult
    oracle: TrialResult
    revert: TrialResult

    @property
    def ok(self) -> bool:
        return self.noop.ok and self.oracle.ok and self.revert.ok


def qualify(spec: FaultSpec, app: str, seed: int = 0) -> Qualification:
    """Run the three trials of one fault."""
    return Qualification(spec.id, noop_trial(spec, app, seed), oracle_trial(spec, app, seed),
                         revert_trial(spec, app, seed))
