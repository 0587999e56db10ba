"""In the no-op marathon, every fault stays broken from its onset until the orchestrator reverts it.

Nobody repairs anything in a no-op run, so a fault whose probe passes while it is live was
lost by the substrate (a build that overwrote it, a commit based on the wrong revision) or
is not the fault its catalog entry says it is. For every app and seeds 1..3, each fault's
probe must fail at every sample from ``t_inject + onset_seconds`` to its revert, unless its
spec is marked ``intermittent``.

The nine marathons are run once per module (:func:`_outcomes`) and shared by the test
cases. A failure names, per fault, the passing samples and everything else that touched
the fault's service or the services it calls directly: other faults and their windows,
benign changes, the build pipeline's log for the service, and hints (a queued build, a
rollout that replaced the pods, a live zone outage) -- what is needed to tell a lost fault
from a late one or a probe that cannot see it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import pytest

from engine.apps.builds import build_seconds
from engine.run.orchestrator import FaultRecord, Orchestrator
from faults.generator import generate
from faults.timing import onset_seconds

APPS = ("online-boutique", "astronomy-shop", "train-ticket")
SEEDS = (1, 2, 3)


@dataclass(frozen=True)
class FaultOutcome:
    """One fault of one no-op marathon, judged.

    Attributes:
        fault: fault id.
        mechanism: its injection mechanism.
        target: its target service.
        t_inject: run time of injection, seconds (None when injection failed).
        t_onset: ``t_inject + onset_seconds``, seconds.
        t_revert: run time of the revert, seconds (None: still active at the end).
        intermittent: the spec allows passing samples.
        error: the injection error, if any.
        passing: run times (seconds) of samples in ``[t_onset, t_revert]`` where the probe passed.
        samples: how many samples fell in that window.
        context: what else touched the target or its callees (one line each).
    """

    fault: str
    mechanism: str
    target: str
    t_inject: float | None
    t_onset: float | None
    t_revert: float | None
    intermittent: bool
    error: str | None
    passing: tuple[float, ...]
    samples: int
    context: tuple[str, ...] = field(default=())

    @property
    def holds(self) -> bool:
        return self.error is None and (self.intermittent or not self.passing)

    def describe(self, app: str, seed: int) -> str:
        if self.error is not None:
            return f"{app} seed {seed} {self.fault} ({self.mechanism} on {self.target}): not injected: {self.error}"
        assert self.t_inject is not None and self.t_onset is not None
        rel = ", ".join(f"+{t - self.t_inject:.0f}" for t in self.passing[:12]) + (" ..." if len(self.passing) > 12
                                                                                    else "")
        end = "end of run" if self.t_revert is None else f"+{self.t_revert - self.t_inject:.0f}s"
        head = (f"{app} seed {seed} {self.fault} ({self.mechanism} on {self.target}), injected at "
                f"{self.t_inject:.0f}s, onset +{self.t_onset - self.t_inject:.0f}s, reverted {end}: probe passed at "
                f"{len(self.passing)}/{self.samples} samples after onset (s after inject: {rel})")
        return "\n    ".join([head, *self.context])


def _hints(run: Orchestrator, rec: FaultRecord, first_pass: float) -> list[str]:
    """Likely reasons a live fault's probe passed, from the pipeline's log and the schedule."""
    spec, inst, sim = rec.spec, rec.instance, run.sim
    assert inst is not None
    out = []
    for c in inst.changes:
        if c.kind == "code" and c.t_deployed is not None:
            late = c.t_deployed - inst.t_inject - build_seconds(sim.app.service(c.service).language)
            if late > 1:
                behind = [o.id for o in sim.deploy_history(c.service) if o.t_submitted <= c.t_submitted
                          and o.id != c.id and o.t_deployed is not None and o.t_deployed > c.t_submitted]
                out.append(f"own build queued {late:.0f} s behind {', '.join(behind)}: onset later than modeled")
    own_ids = {c.id for c in inst.changes}
    for c in sim.deploy_history(spec.target):
        if c.id in own_ids or c.t_deployed is None or not inst.t_inject < c.t_deployed <= first_pass:
            continue
        if spec.mechanism == "image" and c.kind == "code" and spec.config is not None \
                and c.image != spec.config.image:
            out.append(f"{c.id} ({c.summary!r}, submitted after the image change) deployed its built image")
        elif c.kind != "scale":
            out.append(f"{c.id} ({c.kind} by {c.author}) rolled out new pods of {spec.target} at "
                       f"+{c.t_deployed - inst.t_inject:.0f}s (state in the old containers is gone; a rollout of "
                       "the fault's revision may have been superseded)")
    for other in run.faults.values():
        o = other.instance
        if other.spec.mechanism == "zone-outage" and o is not None and o.t_inject <= first_pass \
                and (o.t_revert is None or o.t_revert >= inst.t_inject) and other is not rec:
            out.append(f"zone outage {other.spec.id} live from {o.t_inject:.0f}s (evictions 340 s after it)")
    return out


@functools.cache
def _outcomes(app: str, seed: int) -> tuple[FaultOutcome, ...]:
    """Run the no-op marathon of (app, seed) once and judge every fault in it."""
    sched = generate(app, seed, "marathon")
    run = Orchestrator(sched, alert_source=None)
    run.run()
    sim = run.sim
    edges = sim.app.edges()
    out = []
    for fid, rec in sorted(run.faults.items(), key=lambda kv: kv[1].scheduled.at):
        spec = rec.spec
        inst = rec.instance
        if inst is None:
            out.append(FaultOutcome(fid, spec.mechanism, spec.target, None, None, None, spec.intermittent, rec.error,
                                    (), 0))
            continue
        onset = inst.t_inject + onset_seconds(sim.app, spec)
        end = inst.t_revert if inst.t_revert is not None else float("inf")
        window = [(t, ok) for t, ok in rec.probes if onset - 1e-9 <= t <= end + 1e-9]
        passing = tuple(t for t, ok in window if ok)
        context: list[str] = []
        if passing:
            own = {spec.target}
            if spec.runtime is not None and spec.runtime.caller:
                own.add(spec.runtime.caller)
            if spec.config is not None and spec.config.flag is not None:
                own.add(spec.config.flag.service)
            near = own | {callee for caller, callee in edges if caller in own}
            t0, t1 = inst.t_inject, end
            for c in inst.changes:
                deployed = "never" if c.t_deployed is None else f"+{c.t_deployed - t0:.0f}s"
                context.append(f"own change {c.id} ({c.kind}) deployed {deployed}")
            for other in sched.faults:
                if other.fault != fid and other.target in near and other.at < t1 and other.end > t0 - 300:
                    context.append(f"fault {other.fault} on {other.target}: {other.at}s..{other.end}s")
            for ch in sched.changes:
                if ch.service in near and t0 - 300 <= ch.at <= t1:
                    what = ch.file if ch.kind == "code" else ch.env
                    context.append(f"benign {ch.kind} change on {ch.service} at {ch.at}s: {what}")
            for c in sim.deploy_history():
                if c.service in own and t0 - 300 <= c.t_submitted <= t1:
                    deployed = "-" if c.t_deployed is None else f"{c.t_deployed:.0f}s"
                    detail = c.detail.replace("\n", " | ")
                    context.append(f"{c.id} {c.service} {c.kind} by {c.author} submitted {c.t_submitted:.0f}s "
                                   f"deployed {deployed} rev {c.revision}: {c.summary} [{detail}]")
            fail_runs = [t for t, ok in window if not ok]
            context.append(f"failing samples in window: {len(fail_runs)}; first pass at +{passing[0] - t0:.0f}s, "
                           f"last at +{passing[-1] - t0:.0f}s")
            context.extend(f"hint: {h}" for h in _hints(run, rec, passing[0]))
        out.append(FaultOutcome(fid, spec.mechanism, spec.target, inst.t_inject, onset, inst.t_revert,
                                spec.intermittent, None, passing, len(window), tuple(context)))
    return tuple(out)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("app", APPS)
def test_every_fault_is_injected(app: str, seed: int) -> None:
    outcomes = _outcomes(app, seed)
    assert len(outcomes) == len(generate(app, seed, "marathon").faults), "every scheduled fault was reached"
    errors = [o.describe(app, seed) for o in outcomes if o.error is not None]
    assert not errors, "\n" + "\n".join(errors)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("app", APPS)
def test_every_fault_fails_its_probe_from_onset_to_revert(app: str, seed: int) -> None:
    outcomes = [o for o in _outcomes(app, seed) if o.error is None]
    assert all(o.samples > 0 for o in outcomes), "every fault is sampled after its onset"
    lost = [o for o in outcomes if not o.holds]
    report = "\n".join(o.describe(app, seed) for o in lost)
    print(f"{app} seed {seed}: {len(outcomes)} faults, {len(outcomes) - len(lost)} hold\n{report}")
    assert not lost, f"{len(lost)} of {len(outcomes)} faults passed their probe while live:\n{report}"
