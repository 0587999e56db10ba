"""Attributing alert instances to the faults that caused them, from recorded evidence only.

An alert instance is attributed to at most one injected fault, using what the bundle
records: the alert's labels and times, each fault's target, active window and affected
routes, and the application's call graph (recorded in ``run.start``):

1. **Direct**: the alert names the fault's target -- its ``service``, ``deployment`` or
   ``statefulset`` label is the target, or its ``pod`` label is one of the target's pods
   (Kubernetes pod names are ``<workload>-<template hash>-<suffix>`` or
   ``<statefulset>-<ordinal>``).
2. **Propagated**: the alert names a service that calls the target, directly or
   transitively (so the fault's errors or latency reach it), or an entry service whose
   route is in the fault's scope.

In both cases the alert must become active inside the fault's window: from injection to
:data:`GRACE_S` after its revert (alerts lag the symptom by their ``for`` duration and
the rate window). When several faults qualify, direct beats propagated, and then the
most recently injected fault wins (the newest change is the usual suspect).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

GRACE_S = 300.0
"""Alerts may become active up to 5 minutes after a revert and still belong to the fault:
a 5-minute ``for`` plus rate windows delay both firing and resolving."""


@dataclass(frozen=True)
class FaultWindow:
    """What attribution needs to know about one injected fault."""

    key: str
    target: str
    t_inject: float
    t_revert: float | None
    scope: tuple[str, ...] = ()

    def covers(self, t: float, grace: float = GRACE_S) -> bool:
        end = self.t_revert if self.t_revert is not None else float("inf")
        return self.t_inject <= t <= end + grace


def workload_of(labels: Mapping[str, str], services: Iterable[str]) -> str | None:
    """The workload an alert's labels name: service/deployment/statefulset label, else the
    owner of its ``pod`` label (the longest service name the pod name starts with)."""
    names = set(services)
    for key in ("deployment", "statefulset", "service"):
        value = labels.get(key)
        if value and value in names:
            return value
    pod = labels.get("pod")
    if pod:
        best = None
        for name in names:
            if pod.startswith(name + "-") and (best is None or len(name) > len(best)):
                best = name
        return best
    return None


def callers_of(target: str, edges: Sequence[tuple[str, str]]) -> frozenset[str]:
    """Every service that calls ``target`` directly or transitively (memoised per call graph)."""
    return _callers_of(target, tuple(edges))


@functools.lru_cache(maxsize=4096)
def _callers_of(target: str, edges: tuple[tuple[str, str], ...]) -> frozenset[str]:
    up: dict[str, set[str]] = {}
    for caller, callee in edges:
        up.setdefault(callee, set()).add(caller)
    seen: set[str] = set()
    stack = [target]
    while stack:
        for c in up.get(stack.pop(), ()):
            if c not in seen:
                seen.add(c)
                stack.append(c)
    return frozenset(seen)


def attribute(labels: Mapping[str, str], active_at: float, faults: Sequence[FaultWindow],
              services: Iterable[str], edges: Sequence[tuple[str, str]],
              route_of_handler: Mapping[tuple[str, str], str] | None = None) -> str | None:
    """The key of the fault an alert instance belongs to, or None (noise).

    Args:
        labels: the alert's labels.
        active_at: when it became pending, run seconds.
        faults: the run's injected faults.
        services: the app's service names.
        edges: the app's (caller, callee) edges.
        route_of_handler: maps (entry service, handler) to its route name, to use a fault's scope.
    """
    names = list(services)
    workload = workload_of(labels, names)
    if workload is None:
        return None
    direct: list[FaultWindow] = []
    propagated: list[FaultWindow] = []
    for f in faults:
        if not f.covers(active_at):
            continue
        if workload == f.target:
            direct.append(f)
            continue
        if workload in callers_of(f.target, edges):
            handler = labels.get("handler")
            if handler and route_of_handler is not None and f.scope:
                route = route_of_handler.get((workload, handler))
                if route is not None and route not in f.scope:
                    continue
            propagated.append(f)
    pool = direct or propagated
    if not pool:
        return None
    return max(pool, key=lambda f: (f.t_inject, f.key)).key
