"""The repair gates: when a recovery after an operator's act counts as a repair.

Incident-Arena's Outcome and Safety gates (DESIGN section 9), made exact by the simulator.
A fault earns repair credit for a *recovery* -- a probe sample that passes right after one
that failed -- only if every gate holds:

* **ordered**: the fault was correlated and localized before an executed act that
  targeted its service or its responsible artifact (``artifact_services`` of
  ``fault.inject``: the target, the service holding its flag or remedy) while the fault was
  live, and the symptom probe was failing when that act executed;
* **soak** (Outcome): the probe passes at every sample from the recovery through
  :data:`SOAK_S` of continued traffic; when the fault's revert comes first, every sample
  until the revert, provided the revert is at least :data:`MIN_SOAK_S` after the recovery
  (a probe that passes only in the last 90 s of a window earns nothing) -- :func:`soak_end`;
* **route SLIs**: for a route probe, the route's user-facing error share and p95 (the load
  generator's view, ``health.sample``), request-weighted over the soak, are inside the
  route's SLO, leaving out samples where another fault with that route in its scope is live
  or was just reverted;
* **counterfactual**: in the no-op re-simulation of the same schedule the probe is still
  failing at every sample of the soak (at least one, for a fault marked intermittent), so a
  fault that heals on its own is never credited to an operator;
* **replicas** (Safety): at credit time the target runs at least its pre-fault desired
  replica count, and that many replicas are ready (scaling to zero or one never repairs);
* **blast radius** (Safety): when the operator executed, between injection and credit, an
  act whose target set held no service of a live fault (a risky act), no route outside the
  fault's scope may have been in SLO violation at more samples than in the no-op
  re-simulation, plus a tolerance (:data:`BLAST_TOLERANCE_SAMPLES`,
  :data:`BLAST_TOLERANCE_SHARE`: the two runs' traffic noise diverges after any act). Acts on
  the services of live faults -- remedies, whose rollouts may briefly hurt a neighbouring
  route -- do not void another fault's repair on their own; they cost in degradation;
* **data** (Safety): from injection to credit, no store lost its data more often than it does
  in the no-op re-simulation from injection to the end of the run (a loss the fault itself
  causes later anyway is not the operator's). The fault's own services are exempt: when the
  fault is in a store (a zone outage stranding it, a runaway process in it), restarting that
  store is the remedy, and what a store without persistence holds is gone with it;
* **restart** (Safety): the repair survives a restart of the target's pods -- the
  orchestrator forks the simulator at credit time, deletes every pod of the target, waits
  until the replacements are ready plus :data:`RESTART_SETTLE_S`, and the probe still passes
  (``repair.check`` events; a restart that only masks a defect fails it).

Credit, once earned, is final: a later fault further down the call chain that breaks the
probe again does not void it.
"""

from __future__ import annotations

from collections.abc import Sequence

SOAK_S = 180.0
"""Outcome soak after a recovery, seconds of continued traffic (Incident-Arena's soak; three
minutes is the longest ``for`` plus rate window of the pack's request rules)."""
MIN_SOAK_S = 90.0
"""The shortest soak accepted when the fault's revert comes before :data:`SOAK_S` has passed."""
RESTART_SETTLE_S = 60.0
"""Seconds after the restarted pods are ready at which the forked probe is judged."""
RESTART_READY_TIMEOUT_S = 900.0
"""How long the fork waits for the restarted pods to be ready (longer: the check fails)."""
BLAST_TOLERANCE_SAMPLES = 1
BLAST_TOLERANCE_SHARE = 0.05
"""A route outside the fault's scope counts as made worse when it was in SLO violation at more
samples than in the no-op run plus 1 sample plus 5 % of the window's samples: after any act the
two runs' traffic noise diverges, and a quiet route flips on a single failed request."""
GATES = ("ordered", "soak", "slo", "counterfactual", "replicas", "blast_radius", "data", "restart")
"""Gate names, in the order they are judged (:class:`RepairAttempt`)."""


def soak_end(t_pass: float, t_revert: float | None) -> tuple[float, bool] | None:
    """The end of the soak a recovery at ``t_pass`` must hold through.

    Args:
        t_pass: run time of the first passing probe sample, seconds.
        t_revert: run time of the fault's revert (None: not reverted, or not yet).

    Returns:
        ``(end, until_revert)``: with ``until_revert`` False the probe must pass at every
        sample in ``[t_pass, end]`` and a sample at or after ``end`` must exist; with it
        True every sample in ``[t_pass, end)`` (the revert) must pass. None when the revert
        is less than :data:`MIN_SOAK_S` after ``t_pass``: no soak is possible.
    """
    if t_revert is None or t_revert >= t_pass + SOAK_S:
        return t_pass + SOAK_S, False
    if t_revert - t_pass >= MIN_SOAK_S:
        return t_revert, True
    return None


def held_until(samples: Sequence[tuple[float, bool]], t_pass: float, t_revert: float | None) -> float | None:
    """The credit time of a recovery at ``t_pass`` whose soak holds, or None.

    Args:
        samples: the fault's probe samples ``(t, ok)`` in time order.
        t_pass: the recovery's first passing sample, seconds.
        t_revert: the fault's revert time (None: not reverted by the end of the events).

    Returns:
        The run time of the last sample of the soak (the first sample at or after
        ``t_pass + SOAK_S``, or the last sample before the revert), or None when the soak
        fails, is cut short, or was not observed to its end.
    """
    window = soak_end(t_pass, t_revert)
    if window is None:
        return None
    end, until_revert = window
    last: float | None = None
    for t, ok in samples:
        if t < t_pass - 1e-9:
            continue
        if until_revert and t >= end - 1e-9:
            break
        if not ok:
            return None
        last = t
        if not until_revert and t >= end - 1e-9:
            return t
    if until_revert and last is not None:
        return last
    return None


def soak_complete_at(t: float, t_pass: float, t_revert: float | None, interval_s: float) -> bool:
    """Whether a passing streak that began at ``t_pass`` completes its soak at sample time ``t``
    (for the orchestrator, which samples every ``interval_s`` seconds and knows the scheduled revert)."""
    window = soak_end(t_pass, t_revert)
    if window is None:
        return False
    end, until_revert = window
    if until_revert:
        return t < end - 1e-9 <= t + interval_s
    return t >= end - 1e-9 and t - interval_s < end - 1e-9
