"""Symptom probes on the embedded cluster: does the system give the correct answer to a
fault's request? What :meth:`Simulator.probe <engine.sim.simulator.Simulator.probe>` and
:meth:`~engine.sim.simulator.Simulator.rollout_status` do.

A probe judges user-visible requests through the fault's scope, never rollout status
alone (DESIGN section 8). Two kinds (:class:`~faults.spec.ProbeSpec`):

* **route** -- a user request along an entry route, with optional request attributes
  (``currency: JPY``), judged where it reaches the fault's target (the call to the target
  and everything below it -- the whole route when the target is the entry service);
  correct when it succeeds with probability at least ``1 - max_error`` (default 99 %) and
  its p95 latency is within the route's SLO;
* **operation** -- a direct call to one service operation, as its busiest caller makes
  it (a synthetic check for services no route strictly needs, such as ads).

Either may add ``rollout``: the named Deployment must also be fully rolled out (every
replica updated, available and ready, nothing waiting, generation observed;
:func:`rollout_status`). That catches a new revision that never serves while old pods keep
the requests succeeding (a bad image on a 2-replica Deployment); it is never enough by
itself, because 0/0 replicas is fully rolled out, and a target scaled to zero fails the
request part.

The request's success probability and latency come from the simulator's model of the
request (:meth:`~engine.sim.simulator.Simulator.probe_route`), with no request sent.

Probes are ground truth: their results go to the bundle (``probe.result`` events) and to
scoring, never to an operator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.substrate import ProbeResult

if TYPE_CHECKING:
    from engine.sim.simulator import Simulator
    from faults.spec import ProbeSpec

DEFAULT_OPERATION_P95_MS = 2000.0
"""The p95 latency limit of an operation probe without its own, ms."""


def evaluate_probe(sim: Simulator, probe: ProbeSpec, target: str | None = None) -> ProbeResult:
    """Evaluate a probe against the simulator's current state.

    Args:
        sim: the simulation.
        probe: the fault's probe.
        target: the fault's target; a route probe is judged where the request reaches it
            (the call to the target and everything below), so that concurrent faults on other
            parts of the route neither mask nor fake this fault's symptom.

    Raises:
        SubstrateError: an unknown route or operation (the catalog validates both on load).
        KeyError: ``probe.rollout`` names no workload of the simulation.
    """
    if probe.route is not None:
        outcome = sim.probe_route(probe.route, probe.attributes, at_service=target)
        slo = next(r.slo.latency_p95_ms for r in sim.app.routes if r.name == probe.route)
        limit = probe.latency_p95_ms or slo
        what = f"route {probe.route}"
    else:
        assert probe.operation is not None  # ProbeSpec guarantees route xor operation
        outcome = sim.probe_operation(probe.operation[0], probe.operation[1], probe.attributes)
        limit = probe.latency_p95_ms or DEFAULT_OPERATION_P95_MS
        what = f"{probe.operation[0]} {probe.operation[1]}"
    p95 = outcome.quantile_ms(0.95)
    ok_err = 1.0 - outcome.success <= probe.max_error
    ok_lat = p95 <= limit
    attrs = f" {probe.attributes}" if probe.attributes else ""
    detail = f"{what}{attrs}: success {100 * outcome.success:.2f}%, p95 {p95:.0f} ms (limit {limit:.0f} ms)"
    ok = ok_err and ok_lat
    if probe.rollout is not None:
        rolled = rollout_status(sim, probe.rollout)
        ok = ok and rolled.ok
        detail = f"{detail}; {rolled.detail}{'' if rolled.ok else ' (not rolled out)'}"
    return ProbeResult(ok, outcome.success, p95, detail)


def rollout_status(sim: Simulator, name: str) -> ProbeResult:
    """Whether Deployment ``name`` is fully rolled out: generation observed, as many pods as
    requested, all of the current template and ready, none waiting (other than being created).

    Not a symptom probe by itself (true at 0/0 replicas); used as a probe's extra
    ``rollout`` condition and by the revert trial's cluster-wide check. ``success`` and
    ``p95_ms`` are 1/0 and 0 (no request is made).

    Raises:
        KeyError: no such workload.
    """
    wl = sim.cluster.workloads[name]
    pods = [p for p in wl.all_pods() if not p.terminating]
    current = wl.template
    updated = [p for p in pods if p.template == current]
    ready = [p for p in updated if p.ready]
    waiting = [p for p in pods
               if p.container.state == "waiting" and p.container.reason not in ("ContainerCreating", "")]
    ok = (
        wl.observed_generation == wl.generation
        and len(pods) == wl.replicas
        and len(ready) == wl.replicas
        and not waiting
    )
    detail = (f"deployment {name}: {len(ready)}/{wl.replicas} updated and ready, {len(pods)} pods"
              + (f", waiting: {', '.join(sorted({p.container.reason for p in waiting}))}" if waiting else ""))
    return ProbeResult(ok, 1.0 if ok else 0.0, 0.0, detail)
