"""Forking a running simulation: an independent copy to try something on.

The scorer's restart gate (:mod:`scoring.gates`) asks "would this repair survive a restart of
the target's pods?" without disturbing the run: the orchestrator forks the simulator, restarts
the pods in the fork and probes there. A fork shares nothing mutable with its parent; it leaves
behind what only the parent's observers need (the series store's scrape history and the
container logs), and shares what never changes (the app model, the source repositories' past
commits).

The copy is a :func:`copy.deepcopy` whose memo is seeded with what is shared or copied by
hand, so the generic walk never enters it:

- every frozen app-model object (:class:`engine.apps.model.AppModel` and the pydantic models
  and tuples inside it) maps to itself, wherever in the simulator it is referenced from;
- the series registry (:class:`alerts.series.SeriesRegistry`) is copied by hand: its arrays
  with ``ndarray.copy``, its list of series identities and its identity index as new
  containers holding the same frozen :class:`alerts.series.SeriesInfo` objects and label
  tuples. Deep-copying those ~14 k identities and their ~120 k label tuples was nearly all of
  the cost of a fork: on the Train Ticket runbook marathon's state at its first repair check
  (seed 1, 2445 s in) a plain deep copy takes 0.7-0.9 s of CPU and this fork 0.07-0.09 s
  (``benchmarks/bench_sim.py --fork`` prints the figures for a fault-free run);
- the traffic model's window of recent ticks (:attr:`engine.sim.traffic.TrafficModel.route_window`,
  300 :class:`engine.sim.traffic.TickResult` objects of ten arrays each) is a new deque holding
  the same results: a result is made by one tick and never changed after (its arrays are new
  each tick or attributes the model rebinds, never writes into).

Sharing an immutable object instead of copying it changes nothing a simulation can observe;
``tests/test_sim_fork.py`` checks that a fork behaves exactly like a plain deep copy.
"""

from __future__ import annotations

import copy
import gc
from collections import deque
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel

if TYPE_CHECKING:
    from alerts.series import SeriesRegistry
    from engine.apps.model import AppModel
    from engine.sim.simulator import Simulator

_APP_OBJECTS: dict[int, tuple[AppModel, tuple[object, ...]]] = {}
"""Frozen objects of each app model forked so far, by ``id(app)`` (the model is kept alive
with them, so the id is not reused); a handful of apps per process."""


def fork(sim: Simulator, *, drop_pending_builds: bool = False) -> Simulator:
    """An independent copy of ``sim`` at its current time.

    Args:
        sim: the running simulation (left untouched).
        drop_pending_builds: drop builds still in the pipeline in the copy, so that only what
            is done to the copy changes it.

    Returns:
        The copy; its series store starts empty (with the same series identities) and its
        container logs and their traffic windows are empty.
    """
    from alerts.series import SeriesStore

    memo: dict[int, Any] = {id(o): o for o in _app_objects(sim.app)}
    memo[id(sim.store)] = None
    memo[id(sim.container_logs)] = {}
    memo[id(sim.log_windows)] = deque(maxlen=sim.log_windows.maxlen)
    for repo in sim.repos.values():
        for commit in repo.commits:
            memo[id(commit)] = commit  # commits are frozen snapshots
    _copy_registry(sim.registry, memo)
    window = sim.traffic.route_window
    memo[id(window)] = deque(window, maxlen=window.maxlen)
    for tick in window:
        memo[id(tick)] = tick  # written once by TrafficModel.step, only read after
    paused = gc.isenabled()
    gc.disable()  # the copy makes ~10 k containers; collecting meanwhile only rescans the parent
    try:
        twin: Simulator = copy.deepcopy(sim, memo)
    finally:
        if paused:
            gc.enable()
    twin.store = SeriesStore(twin.registry, retention_s=60.0)
    if drop_pending_builds:
        for name in ("_pending", "_build_queue"):
            if isinstance(getattr(twin, name, None), list):
                setattr(twin, name, [])
            elif isinstance(getattr(twin, name, None), dict):
                setattr(twin, name, {})
    return twin


def _app_objects(app: AppModel) -> tuple[object, ...]:
    """The app model and every frozen pydantic model and tuple inside it (never mutated)."""
    hit = _APP_OBJECTS.get(id(app))
    if hit is not None and hit[0] is app:
        return hit[1]
    found: dict[int, object] = {}
    stack: list[object] = [app]
    while stack:
        obj = stack.pop()
        if id(obj) in found:
            continue
        if isinstance(obj, BaseModel) and obj.model_config.get("frozen"):
            found[id(obj)] = obj
            stack.extend(vars(obj).values())
        elif isinstance(obj, tuple):
            found[id(obj)] = obj
            stack.extend(obj)
        elif isinstance(obj, (list, dict)):
            # mutable containers inside a model are not shared, only searched for models
            stack.extend(obj.values() if isinstance(obj, dict) else obj)
    objs = tuple(found.values())
    if len(_APP_OBJECTS) >= 8:
        _APP_OBJECTS.clear()
    _APP_OBJECTS[id(app)] = (app, objs)
    return objs


def _copy_registry(registry: SeriesRegistry, memo: dict[int, Any]) -> None:
    """Put a copy of ``registry`` in ``memo``: new arrays and containers, shared identities.

    The series identities (frozen ``SeriesInfo`` objects, and ``(name, labels)`` keys made of
    strings) are immutable, so the copy's list and index hold the same objects; attributes
    other than the known ones are deep-copied, so a field added later is never shared.
    """
    twin = object.__new__(type(registry))
    memo[id(registry)] = twin
    for name, value in vars(registry).items():
        if isinstance(value, np.ndarray) and value.dtype != object:
            new: Any = value.copy(order="K")  # what ndarray.__deepcopy__ makes
        elif name == "info" and type(value) is list:
            new = list(value)
        elif name == "_ids" and type(value) is dict:
            new = dict(value)
        else:
            new = copy.deepcopy(value, memo)
        memo[id(value)] = new
        setattr(twin, name, new)
