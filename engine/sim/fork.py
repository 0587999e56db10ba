"""Forking a running simulation: an independent copy to try something on.

The scorer's restart gate (:mod:`scoring.gates`) asks "would this repair survive a restart of
the target's pods?" without disturbing the run: the orchestrator forks the simulator, restarts
the pods in the fork and probes there. A fork shares nothing mutable with its parent; it leaves
behind what only the parent's observers need (the series store's scrape history and the
container logs), and shares what never changes (the app model, the source repositories' past
commits).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.sim.simulator import Simulator


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

    memo: dict[int, Any] = {id(sim.app): sim.app, id(sim.store): None, id(sim.container_logs): {},
                            id(sim.log_windows): type(sim.log_windows)(maxlen=sim.log_windows.maxlen)}
    for repo in sim.repos.values():
        for commit in repo.commits:
            memo[id(commit)] = commit  # commits are frozen snapshots
    twin: Simulator = copy.deepcopy(sim, memo)
    twin.store = SeriesStore(twin.registry, retention_s=60.0)
    if drop_pending_builds:
        for name in ("_pending", "_build_queue"):
            if isinstance(getattr(twin, name, None), list):
                setattr(twin, name, [])
            elif isinstance(getattr(twin, name, None), dict):
                setattr(twin, name, {})
    return twin
