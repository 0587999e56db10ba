"""Which faults an alert instance can be evidence of, from recorded evidence only.

An alert instance *supports* an injected fault when both hold (what the bundle records: the
alert's labels and active interval, each fault's target, active window and affected routes,
and the application's call graph from ``run.start``):

1. **Scope**: the alert names the fault's target, or another service the fault acts on
   directly (its ``artifact_services``: the service holding its flag, every service a zone
   outage strands) (**direct**: its ``service``, ``deployment`` or ``statefulset`` label is
   one of them, or its ``pod`` label is one of their pods --
   Kubernetes pod names are ``<workload>-<template hash>-<suffix>`` or ``<statefulset>-<ordinal>``),
   or a service that calls the target directly or transitively, so the fault's errors or
   latency reach it (**propagated**; an entry-route alert only when its route is in the
   fault's scope).
2. **Time**: the alert was active (pending or firing) at some moment of the fault's window,
   from injection to :data:`GRACE_S` after its revert (alerts lag the symptom by their
   ``for`` duration and rate window, and resolve as late).

An alert may support several faults: under overlap, an alert that an earlier fault raised and
that keeps firing through a later fault on the same handler is evidence of both, and which
fault an incident is *about* is decided by its root-cause report (:mod:`scoring.score`).
:func:`attribute` keeps the single-owner rule (direct beats propagated, then the newest
fault) for one-fault trials and for operators that need one answer.
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
    services: frozenset[str] = frozenset()
    """Services the fault acts on directly besides its target (its ``artifact_services``)."""

    def covers(self, t: float, grace: float = GRACE_S) -> bool:
        """Whether run time ``t`` (seconds) is inside the window, extended by ``grace`` after the revert."""
        end = self.t_revert if self.t_revert is not None else float("inf")
        return self.t_inject <= t <= end + grace

    def overlaps(self, start: float, end: float | None, grace: float = GRACE_S) -> bool:
        """Whether the interval ``[start, end]`` (None: still open) meets the window plus ``grace``."""
        w_end = self.t_revert + grace if self.t_revert is not None else float("inf")
        return start <= w_end and (end is None or end >= self.t_inject)


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


def relation(labels: Mapping[str, str], fault: FaultWindow, services: Iterable[str],
             edges: Sequence[tuple[str, str]], route_of_handler: Mapping[tuple[str, str], str] | None = None,
             workload: str | None = None) -> str | None:
    """How an alert's labels relate to a fault, ignoring time: ``"direct"``, ``"propagated"`` or None.

    Args:
        labels: the alert's labels.
        fault: the fault.
        services: the app's service names.
        edges: the app's (caller, callee) edges.
        route_of_handler: (entry service, handler) -> route name, to apply the fault's scope
            to entry-route alerts.
        workload: the workload the labels name, if already known (:func:`workload_of`).
    """
    name = workload if workload is not None else workload_of(labels, services)
    if name is None:
        return None
    if name == fault.target or name in fault.services:
        return "direct"
    if name not in callers_of(fault.target, edges):
        return None
    handler = labels.get("handler")
    if handler and route_of_handler is not None and fault.scope:
        route = route_of_handler.get((name, handler))
        if route is not None and route not in fault.scope:
            return None
    return "propagated"


def candidates(labels: Mapping[str, str], active_at: float, ended_at: float | None, faults: Sequence[FaultWindow],
               services: Iterable[str], edges: Sequence[tuple[str, str]],
               route_of_handler: Mapping[tuple[str, str], str] | None = None) -> dict[str, str]:
    """Every fault an alert instance supports (module docstring), with how.

    Args:
        labels: the alert's labels.
        active_at: when it became pending, run seconds.
        ended_at: when it resolved or dropped (None: still active).
        faults: the run's injected faults.
        services: the app's service names.
        edges: the app's (caller, callee) edges.
        route_of_handler: (entry service, handler) -> route name.

    Returns:
        fault key -> ``"direct"`` or ``"propagated"``.
    """
    names = list(services)
    workload = workload_of(labels, names)
    if workload is None:
        return {}
    out: dict[str, str] = {}
    for f in faults:
        if not f.overlaps(active_at, ended_at):
            continue
        how = relation(labels, f, names, edges, route_of_handler, workload)
        if how is not None:
            out[f.key] = how
    return out


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
        how = relation(labels, f, names, edges, route_of_handler, workload)
        if how == "direct":
            direct.append(f)
        elif how == "propagated":
            propagated.append(f)
    pool = direct or propagated
    if not pool:
        return None
    return max(pool, key=lambda f: (f.t_inject, f.key)).key
