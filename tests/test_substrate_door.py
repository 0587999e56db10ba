"""Nothing outside ``engine/sim`` needs more of the cluster than :class:`engine.substrate.Substrate`.

:class:`Door` is a second substrate: it wraps a simulator and forwards exactly the ABC's
abstract methods and the methods it gives a default (and the attributes the ABC declares),
nothing else -- no ``cluster``, no ``registry``, no ``traffic``. A run of the orchestrator
on it (fault injection and revert,
benign changes, symptom probes, health samples, the oracle's remedies and the restart check
on forks), the qualification trials and ``marathon sim``'s health table must give exactly
what they give on the simulator itself. Code that reached past the interface fails here with
an ``AttributeError``.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any

import pytest

from engine.cli import health_table
from engine.operate.operators import make_operator
from engine.run.orchestrator import Orchestrator
from engine.run.qualify import noop_trial, revert_trial
from engine.run.substrates import SUBSTRATES, open_substrate
from engine.substrate import Substrate
from faults.generator import generate
from faults.spec import load_catalog


class Door(Substrate):
    """A substrate that is only the interface: forwards the abstract methods to ``inner``."""

    def __init__(self, inner: Substrate) -> None:
        self._inner = inner
        self.app = inner.app
        self.seed = inner.seed
        self.dt = inner.dt
        self.store = inner.store

    def fork(self, *, drop_pending_builds: bool = False) -> Substrate:
        return Door(self._inner.fork(drop_pending_builds=drop_pending_builds))


def _forwarder(name: str) -> Any:
    if isinstance(getattr(Substrate, name), property):
        return property(lambda self: getattr(self._inner, name))

    def method(self: Door, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._inner, name)(*args, **kwargs)

    method.__name__ = name
    return method


# The abstract methods, and the interface's methods that have a default (a substrate without
# the capability keeps the default: ``set_background_noise``, ``patch_service``).
_INTERFACE = Substrate.__abstractmethods__ | {n for n, v in vars(Substrate).items()
                                             if not n.startswith("_") and callable(v)}
for _name in sorted(_INTERFACE - set(vars(Door))):
    setattr(Door, _name, _forwarder(_name))
abc.update_abstractmethods(Door)


def _door(app: str, *, seed: int, **options: Any) -> Substrate:
    return Door(open_substrate(app, seed=seed, **options))


def test_door_is_only_the_interface() -> None:
    door = _door("online-boutique", seed=0)
    assert not Door.__abstractmethods__
    for internal in ("cluster", "registry", "traffic", "repos", "inject", "set_node_ready"):
        assert not hasattr(door, internal), internal
    # The methods the run loop, faults and health need are on the interface.
    for needed in ("workload", "pods", "zone_nodes", "apply_fault", "revert_fault", "finish_revert", "probe",
                   "rollout_status", "health_window", "fork", "set_load_factor", "tag_image", "exposition"):
        assert needed in Substrate.__abstractmethods__, needed
    assert SUBSTRATES == ("sim", "kube")
    with pytest.raises(ValueError, match="unknown substrate"):
        open_substrate("online-boutique", seed=0, kind="nomad")


def _events(app: str, operator: str, wrap: Callable[[Substrate], Substrate]) -> list[tuple[float, str, Any]]:
    schedule = generate(app, 1, "short-10")
    run = Orchestrator(schedule, operator=make_operator(operator),
                       substrate=wrap(open_substrate(schedule.app, seed=schedule.seed)))
    run.run()
    return [(e.t, e.kind, e.payload) for e in run.stream.events]


@pytest.mark.parametrize("app", ["online-boutique", "astronomy-shop"])
def test_a_run_through_the_interface_is_the_same_run(app: str) -> None:
    """The oracle on short-10, seed 1: zone outage, CPU pressure, code, image, config, flag and
    probe faults; rolling restarts, rollbacks, patches, flag changes; restart checks on forks."""
    through_door = _events(app, "oracle", Door)
    direct = _events(app, "oracle", lambda s: s)
    kinds = {kind for _, kind, _ in through_door}
    assert {"fault.inject", "fault.revert", "probe.result", "health.sample", "action.executed",
            "repair.check"} <= kinds
    assert through_door == direct


def test_qualification_through_the_interface() -> None:
    spec = {f.id: f for f in load_catalog("online-boutique").faults}["ob-productcatalog-extra-latency"]
    results = {}
    for name, open_cluster in (("direct", open_substrate), ("door", _door)):
        trials = (noop_trial(spec, open_cluster("online-boutique", seed=0)),
                  revert_trial(spec, open_cluster("online-boutique", seed=0)))
        results[name] = [(r.ok, r.reason, r.alerts) for r in trials]
    assert results["door"] == results["direct"]
    assert all(ok for ok, _, _ in results["direct"]), results["direct"]
    with pytest.raises(ValueError, match="fresh cluster"):
        late = open_substrate("online-boutique", seed=0)
        late.advance(120.0)
        noop_trial(spec, late)


def test_health_table_through_the_interface() -> None:
    sim = open_substrate("train-ticket", seed=2)
    sim.advance(120.0)
    assert health_table(Door(sim)) == health_table(sim)
