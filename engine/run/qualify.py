"""Qualification: a fault ships only if it is fair (Incident-Arena's oracle and no-op trials).

Three trials per fault. The no-op and revert trials run here, each on a fresh cluster of
the fault's app that the caller brings up (:func:`engine.run.substrates.open_substrate`; the
trials see it only through :class:`~engine.substrate.Substrate`); the oracle trial runs
through the real path -- the oracle operator acting through the tools and the policy layer,
scored by the scorer -- in :func:`engine.run.validate.qualify_fault`:

* **no-op** -- inject and leave alone: from the fault's onset (when the change is built
  and rolled out, or at once for runtime faults) its symptom probe must fail at every
  sample for :data:`NOOP_WINDOW_S`, and at least one alert of the paper pack
  (:data:`QUALIFYING_PACK`, the leaderboard default: SRE-Marathon Tables 4 and 6)
  attributable to the fault (:func:`scoring.attribution.attribute`) must fire within
  :data:`ALERT_WINDOW_S` of the onset -- an operator sees faults only through alerts, so a
  fault silent under the paper's rules could never be correlated;
* **oracle** -- the fault alone on a one-fault schedule, the oracle operator reporting,
  localizing and applying the reference remedy: the scorer must credit every stage, within
  :func:`work_seconds` of the injection;
* **revert** -- inject, wait, let the orchestrator revert: the probe and every route probe
  pass, and every Deployment is fully rolled out again
  (:meth:`engine.substrate.Substrate.rollout_status`).

Probes are sampled every 15 s (the evaluation interval). :func:`onset_seconds` and
:func:`work_seconds` are what the schedule generator gives each fault: time to bite, and
time for a correct operator to earn its repair.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.substrate import ProbeResult, Substrate
from faults.spec import FaultSpec, ProbeSpec
from faults.timing import onset_seconds, remedy_grace_seconds

QUALIFYING_PACK = "paper"
"""The rule pack a fault must be visible through (:func:`alerts.rules.load_pack`); an alert
only the opt-in extended pack raises does not qualify a fault."""
INJECT_AT_S = 60.0
SAMPLE_S = 15.0
NOOP_WINDOW_S = 240.0
HOLD_S = 180.0
ALERT_WINDOW_S = 720.0
"""How long after its onset a fault may take to fire an attributable alert."""


@dataclass
class TrialResult:
    """Outcome of one trial with its probe samples (run time, result) and, for the no-op
    trial, the alerts that fired and are attributable to the fault (rule names)."""

    name: str
    ok: bool
    reason: str
    samples: list[tuple[float, ProbeResult]] = field(default_factory=list)
    alerts: list[str] = field(default_factory=list)


def _sample(sim: Substrate, probe: ProbeSpec, until: float, out: list[tuple[float, ProbeResult]],
            each: object = None, target: str | None = None) -> None:
    t = sim.now
    while t + SAMPLE_S <= until + 1e-9:
        t += SAMPLE_S
        sim.advance(t)
        if callable(each):
            each()
        out.append((t, sim.probe(probe, target)))


def _fresh(cluster: Substrate) -> Substrate:
    """``cluster`` advanced to :data:`INJECT_AT_S`.

    Raises:
        ValueError: its run time is past that already (a trial needs a fresh cluster).
    """
    if cluster.now > INJECT_AT_S:
        raise ValueError(f"a trial needs a fresh cluster; this one is at run time {cluster.now:.0f} s, past the "
                         f"injection at {INJECT_AT_S:.0f} s")
    cluster.advance(INJECT_AT_S)
    return cluster


def noop_trial(spec: FaultSpec, cluster: Substrate) -> TrialResult:
    """Inject and leave alone (module docstring).

    Args:
        spec: the fault.
        cluster: a fresh cluster of the fault's app (at run time 0, e.g.
            ``open_substrate(app, seed=0)``); the trial runs on it.

    Returns:
        ``ok`` when the probe failed at every sample from the onset for :data:`NOOP_WINDOW_S`
        and an attributable alert of :data:`QUALIFYING_PACK` fired; ``alerts`` lists the rule
        names of the attributable alerts that fired, ``samples`` the probe samples.
    """
    from alerts.evaluator import AlertEvaluator
    from alerts.rules import load_pack
    from scoring.attribution import FaultWindow, attribute

    sim = _fresh(cluster)
    evaluator = AlertEvaluator(load_pack(QUALIFYING_PACK), interval_s=SAMPLE_S)
    evaluator.step(sim.store, sim.now)
    sim.apply_fault(spec)
    onset = sim.now + onset_seconds(sim.app, spec)
    sim.advance(onset)
    samples: list[tuple[float, ProbeResult]] = [(sim.now, sim.probe(spec.probe, spec.probe_anchor))]
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
    if not fired:
        return TrialResult("noop", False, f"probe failed at all {len(samples)} samples, but no alert of the "
                                          f"{QUALIFYING_PACK} pack attributable to the fault fired within "
                                          f"{ALERT_WINDOW_S:.0f}s of the onset", samples, fired)
    return TrialResult("noop", True, f"probe failed at all {len(samples)} samples: {samples[-1][1].detail}; "
                                     f"fired: {', '.join(fired)}", samples, fired)


def revert_trial(spec: FaultSpec, cluster: Substrate) -> TrialResult:
    """Inject, wait, let the orchestrator's revert undo it (module docstring).

    Args:
        spec: the fault.
        cluster: a fresh cluster of the fault's app (see :func:`noop_trial`).

    Returns:
        ``ok`` when, after the revert has had time to take effect, the probe passes at every
        sample for :data:`HOLD_S`, the fault left nothing registered, and every route probe
        and every Deployment's rollout status is healthy.
    """
    sim = _fresh(cluster)
    inst = sim.apply_fault(spec)
    sim.advance(sim.now + onset_seconds(sim.app, spec) + 60.0)
    sim.revert_fault(inst)
    grace_end = sim.now + remedy_grace_seconds(sim.app, spec.model_copy(update={"remedy": spec.remedy.model_copy(
        update={"action": "revert-patch" if spec.mechanism == "code-change" else "rollback"})}))
    samples: list[tuple[float, ProbeResult]] = []
    _sample(sim, spec.probe, grace_end, [], each=lambda: sim.finish_revert(inst), target=spec.probe_anchor)
    samples.append((sim.now, sim.probe(spec.probe, spec.probe_anchor)))
    _sample(sim, spec.probe, grace_end + HOLD_S, samples, each=lambda: sim.finish_revert(inst),
            target=spec.probe_anchor)
    failing = [(t, s) for t, s in samples if not s.ok]
    if failing:
        t, s = failing[0]
        return TrialResult("revert", False, f"probe failing at +{t - INJECT_AT_S:.0f}s after revert: {s.detail}",
                           samples)
    if inst.effect_ids:
        return TrialResult("revert", False, "the fault's effects are still registered after the revert", samples)
    for route in sim.app.routes:
        res = sim.probe(ProbeSpec(route=route.name))
        if not res.ok:
            return TrialResult("revert", False, f"after revert: {res.detail}", samples)
    for svc in sim.app.services:
        if sim.workload(svc.name).kind != "Deployment":
            continue
        res = sim.rollout_status(svc.name)
        if not res.ok:
            return TrialResult("revert", False, f"after revert: {res.detail}", samples)
    return TrialResult("revert", True, "probe, every route and every rollout healthy after revert", samples)
