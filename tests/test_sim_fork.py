"""A fork of the simulator (:mod:`engine.sim.fork`) behaves exactly like a plain deep copy.

The fork shares the frozen app model and the series identities with its parent and copies the
series registry by hand instead of deep-copying everything. These tests fork Train Ticket in
the middle of faults (a code change, a config change, a crash), advance the fork and a
deep-copy reference (the implementation the fork replaced, :func:`_deepcopy_fork` below)
through the same acts, and compare everything a run can observe: the exposition (every
live series' value), the registry's arrays and identities, the scrapes, the pods, the
Kubernetes events, the container logs, the probes and the state of every random stream.
Then they change a fork and check that its parent has not moved.
"""

from __future__ import annotations

import copy
import pickle
from typing import Any

import numpy as np
import pytest

from alerts.series import SeriesStore
from engine.run.orchestrator import restart_survives
from engine.sim.simulator import Simulator
from engine.substrate import SubstrateError
from faults.spec import FaultSpec, load_catalog


def _deepcopy_fork(sim: Simulator, *, drop_pending_builds: bool = False) -> Simulator:
    """The fork as it was before it shared anything: one ``copy.deepcopy`` (the reference)."""
    memo: dict[int, Any] = {id(sim.app): sim.app, id(sim.store): None, id(sim.container_logs): {},
                            id(sim.log_windows): type(sim.log_windows)(maxlen=sim.log_windows.maxlen)}
    for repo in sim.repos.values():
        for commit in repo.commits:
            memo[id(commit)] = commit
    twin: Simulator = copy.deepcopy(sim, memo)
    twin.store = SeriesStore(twin.registry, retention_s=60.0)
    if drop_pending_builds:
        for name in ("_pending", "_build_queue"):
            if isinstance(getattr(twin, name, None), list):
                setattr(twin, name, [])
            elif isinstance(getattr(twin, name, None), dict):
                setattr(twin, name, {})
    return twin


def _rng_states(sim: Simulator) -> list[Any]:
    return [sim.log_rng.bit_generator.state, sim.cluster.rng.bit_generator.state,
            sim.traffic.rng.bit_generator.state]


def _observe(sim: Simulator, *, logs: bool = True, scrapes: bool = True) -> dict[str, Any]:
    """Everything a run can read of ``sim``, in comparable form."""
    reg = sim.registry
    n = len(reg)
    pods = sim.pods()
    out: dict[str, Any] = {
        "now": sim.now,
        "exposition": sim.exposition(),
        "registry": (reg.values[:n].tobytes(), reg.live[:n].tobytes(), reg.integer[:n].tobytes(),
                     list(reg.info), sorted(reg._ids.items())),
        "pods": [repr(p) for p in pods],
        "events": sim.events(),
        "rng": _rng_states(sim),
        "probes": [repr(sim.probe_route(r.name)) for r in sim.app.routes],
        "route_health": [repr(h) for h in sim.route_health()],
    }
    if scrapes:  # and what is computed from them: a fork's store starts empty
        out["scrapes"] = [(s.t, s.ids.tobytes(), s.values.tobytes()) for s in sim.store.scrapes]
        out["service_health"] = [repr(h) for h in sim.service_health()]
    if logs:
        out["logs"] = {p.name: _logs(sim, p.name) for p in pods}
    return out


def _logs(sim: Simulator, pod: str) -> Any:
    try:
        return sim.logs(pod)
    except SubstrateError as exc:  # a fork's logs start empty: a pod started before it "is waiting"
        return str(exc)


def _raw_logs(sim: Simulator) -> bytes:
    """The container logs and the traffic windows they are generated from, as bytes (reading a
    long-running parent's logs through :meth:`Simulator.logs` takes seconds per pod)."""
    return pickle.dumps((sim.container_logs, list(sim.log_windows)))


def _act(sim: Simulator, service: str) -> None:
    """The same acts on a fork and its reference: restart a pod, advance, then two more minutes."""
    victim = sorted(p.name for p in sim.pods(service) if not p.terminating)[0]
    sim.restart_pod(victim)
    sim.advance(sim.now + 45.0)
    sim.advance(sim.now + 120.0)


@pytest.fixture(scope="module")
def catalog() -> dict[str, FaultSpec]:
    return {f.id: f for f in load_catalog("train-ticket").faults}


@pytest.fixture(scope="module")
def mid_fault(catalog: dict[str, FaultSpec]) -> Simulator:
    """Train Ticket 5 minutes in, with a code change, a config change and a crash active."""
    sim = Simulator("train-ticket", seed=3)
    sim.advance(120.0)
    for fid in ("tt-travel-leg-segment-off-by-one", "tt-news-listen-port"):
        sim.apply_fault(catalog[fid])
        sim.advance(sim.now + 90.0)
    return sim


@pytest.mark.parametrize("drop_pending_builds", [False, True])
def test_fork_behaves_like_a_deep_copy(mid_fault: Simulator, drop_pending_builds: bool) -> None:
    fast = mid_fault.fork(drop_pending_builds=drop_pending_builds)
    slow = _deepcopy_fork(mid_fault, drop_pending_builds=drop_pending_builds)
    assert _observe(fast) == _observe(slow)
    for sim in (fast, slow):
        _act(sim, "ts-travel-service")
        _act(sim, "ts-news-service")
    seen_fast, seen_slow = _observe(fast), _observe(slow)
    assert seen_fast["now"] > mid_fault.now
    assert seen_fast["scrapes"], "the forks scraped"
    assert any(isinstance(v, list) and v for v in seen_fast["logs"].values()), "the forks logged"
    assert seen_fast == seen_slow


def test_changing_a_fork_leaves_its_parent_alone(mid_fault: Simulator) -> None:
    witness = _deepcopy_fork(mid_fault)  # the parent's future, had nothing been forked
    before = _observe(mid_fault, logs=False)
    logs_before = _raw_logs(mid_fault)
    n_series, n_pods = len(mid_fault.registry), len(mid_fault.cluster.pods)
    twin = mid_fault.fork()
    assert twin.registry is not mid_fault.registry and twin.registry.values is not mid_fault.registry.values
    assert twin.app is mid_fault.app
    _act(twin, "ts-travel-service")
    twin.registry.values[:] = np.nan  # nothing of the parent's registry is reachable from the fork
    assert len(twin.registry) > n_series, "the restarts made new series in the fork"
    assert _observe(mid_fault, logs=False) == before
    assert _raw_logs(mid_fault) == logs_before
    assert (len(mid_fault.registry), len(mid_fault.cluster.pods)) == (n_series, n_pods)
    mid_fault.advance(mid_fault.now + 60.0)
    witness.advance(witness.now + 60.0)
    assert _observe(mid_fault, logs=False, scrapes=False) == _observe(witness, logs=False, scrapes=False)
    assert mid_fault.store.scrapes[-1].values.tobytes() == witness.store.scrapes[-1].values.tobytes()


def test_restart_check_leaves_the_run_alone() -> None:
    """The restart gate judges a currency bug that fails with and without the restart the same way
    twice (it forks once for the restart and once, afterwards, for the run without it), and the run
    it judged has not moved."""
    spec = {f.id: f for f in load_catalog("online-boutique").faults}["ob-currency-jpy-truncated-nanos"]
    sim = Simulator("online-boutique", seed=4)
    sim.advance(60.0)
    instance = sim.apply_fault(spec)
    sim.advance(sim.now + 120.0)
    before, logs_before = _observe(sim, logs=False), _raw_logs(sim)
    ok, detail = restart_survives(sim, spec, instance)
    assert ok and "fails without the restart too" in detail, detail
    assert (_observe(sim, logs=False), _raw_logs(sim)) == (before, logs_before)
    assert restart_survives(sim, spec, instance) == (ok, detail)
