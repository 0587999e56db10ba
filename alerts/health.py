"""Rule health: whether each rule's latest evaluation worked, as Prometheus' rules page shows it.

Prometheus records, for every rule, ``SetHealth`` (``unknown`` until the rule is first
evaluated, then ``ok`` or ``err``), ``SetLastError`` and ``SetEvaluationTimestamp``
(``rules/alerting.go``, ``rules/recording.go``, v2.42), and ``/api/v1/rules`` and the rules
page show them, so a rule that breaks at evaluation time -- a join that meets duplicate
series, a recording rule whose output collides -- is seen broken instead of silently never
firing. An alerting rule whose evaluation fails keeps its alerts as they were and raises no
new one until it evaluates again.

:class:`RuleHealthTracker` keeps that status per rule and reports only *changes*
(:class:`RuleHealthChange`): to ``err`` from ``unknown`` or ``ok``, back to ``ok`` from
``err``, and ``err`` again with a different error text. The first successful evaluation
(``unknown -> ok``) is not reported, so a healthy run reports nothing at all. Both alert
sources (the embedded :class:`~alerts.evaluator.AlertEvaluator` and a real Prometheus read by
:class:`~alerts.live.PrometheusAlerts`) keep one tracker; the orchestrator turns every change
into a ``rule.health`` event (:meth:`RuleHealthChange.to_payload`).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

HEALTH_STATES = ("unknown", "ok", "err")
"""Prometheus' ``RuleHealth`` values (``rules/manager.go``)."""
RULE_TYPES = ("alerting", "recording")
"""``type`` of a rule in ``/api/v1/rules``."""


@dataclass(frozen=True)
class RuleHealth:
    """One rule's status now (an ``/api/v1/rules`` entry's health fields).

    Attributes:
        rule: alert name or recorded series name; group: its rule group; index: its
            position in the group, from 0 (rule names need not be unique).
        type: ``alerting`` or ``recording``.
        health: one of :data:`HEALTH_STATES`.
        last_error: the latest evaluation's error, None when it worked.
        last_evaluation: run time of the latest evaluation, seconds (None: never evaluated).
    """

    rule: str
    group: str
    index: int
    type: str
    health: str
    last_error: str | None
    last_evaluation: float | None


@dataclass(frozen=True)
class RuleHealthChange:
    """One change of one rule's health (module docstring: which changes are reported).

    Attributes:
        rule, group, index, type: as in :class:`RuleHealth`.
        health: ``err`` or ``ok`` after the change; previous: before it (``unknown``, ``ok``
            or ``err``).
        error: the evaluation error (None for ``ok``).
        t_eval: run time of the evaluation that changed it, seconds.
    """

    rule: str
    group: str
    index: int
    type: str
    health: str
    previous: str
    error: str | None
    t_eval: float

    def to_payload(self) -> dict[str, Any]:
        """The ``rule.health`` event payload: ``{rule, group, index, type, health, error, t_eval}``."""
        return {"rule": self.rule, "group": self.group, "index": self.index, "type": self.type,
                "health": self.health, "error": self.error, "t_eval": self.t_eval}


@dataclass
class _Status:
    rule: str
    group: str
    index: int
    type: str
    health: str = "unknown"
    last_error: str | None = None
    last_evaluation: float | None = None


def _frozen(st: _Status) -> RuleHealth:
    return RuleHealth(st.rule, st.group, st.index, st.type, st.health, st.last_error, st.last_evaluation)


class RuleHealthTracker:
    """Per-rule health, fed with every evaluation's outcome; collects the changes (module docstring)."""

    def __init__(self) -> None:
        self._status: dict[Hashable, _Status] = {}
        self._changes: list[RuleHealthChange] = []

    def observe(self, key: Hashable, *, rule: str, group: str, index: int, type: str, t: float,
                error: str | None) -> None:
        """Record one evaluation of one rule.

        Args:
            key: what identifies the rule to the caller (its group and position), stable
                across evaluations.
            rule, group, index, type: as in :class:`RuleHealth`.
            t: run time of the evaluation, seconds.
            error: its error text, or None when it worked.
        """
        st = self._status.get(key)
        if st is None:
            st = self._status[key] = _Status(rule, group, index, type)
        st.last_evaluation = t
        health = "ok" if error is None else "err"
        if health == st.health and error == st.last_error:
            return
        previous = st.health
        st.health, st.last_error = health, error
        if previous != "unknown" or health == "err":
            self._changes.append(RuleHealthChange(rule, group, index, type, health, previous, error, t))

    def take_changes(self) -> list[RuleHealthChange]:
        """The changes since the previous call, in evaluation order."""
        out, self._changes = self._changes, []
        return out

    def get(self, key: Hashable) -> RuleHealth | None:
        """The status of the rule ``key`` names (None: never observed)."""
        st = self._status.get(key)
        return None if st is None else _frozen(st)

    def rules(self) -> list[RuleHealth]:
        """Every rule seen so far, in first-evaluation order."""
        return [_frozen(s) for s in self._status.values()]

    def failing(self) -> list[RuleHealth]:
        """The rules whose latest evaluation failed."""
        return [r for r in self.rules() if r.health == "err"]


def health_report(changes: Iterable[Mapping[str, Any]]) -> list[str]:
    """A plain-text table of the rules whose evaluation failed during a run: those failing at
    the end first, then those that recovered, each with its latest failing stretch (and how many
    there were) and its last error; empty when none failed.

    Args:
        changes: the run's ``rule.health`` payloads (:meth:`RuleHealthChange.to_payload`), in order.
    """
    rules: dict[tuple[str, int, str], dict[str, Any]] = {}
    for ch in changes:
        key = (str(ch.get("group", "")), int(ch.get("index", 0)), str(ch.get("rule", "")))
        t = float(ch.get("t_eval", 0.0))
        r = rules.setdefault(key, {"health": "ok", "since": t, "until": None, "times": 0, "error": ""})
        if ch.get("health") == "err":
            if r["health"] != "err":
                r.update(since=t, until=None, times=r["times"] + 1)
            r.update(health="err", error=str(ch.get("error") or ""))
        else:
            r.update(health="ok", until=t)
    if not rules:
        return []
    failing = [k for k, r in rules.items() if r["health"] == "err"]
    recovered = [k for k, r in rules.items() if r["health"] != "err"]
    out = [f"rule health: {len(failing)} failing at the end, {len(recovered)} failed and recovered "
           "(a rule whose evaluation fails raises no new alert)",
           f"  {'GROUP/RULE':44} {'HEALTH':6} {'FAILED':18} LAST ERROR"]
    for key in failing + recovered:
        group, _, rule = key
        r = rules[key]
        when = f"since {_clock(r['since'])}" if r["until"] is None else f"{_clock(r['since'])}-{_clock(r['until'])}"
        if r["times"] > 1:
            when += f" ({r['times']}x)"
        out.append(f"  {f'{group}/{rule}'[:44]:44} {r['health']:6} {when:18} {r['error']}")
    return out


def _clock(t: float) -> str:
    s = int(t)
    return f"{s // 60}:{s % 60:02d}"


@runtime_checkable
class RuleHealthSource(Protocol):
    """An alert source that reports rule health (the embedded evaluator, a Prometheus)."""

    def take_rule_health_changes(self) -> list[RuleHealthChange]:
        """Rule health changes since the previous call, in evaluation order."""
        ...

    def rule_health(self) -> list[RuleHealth]:
        """Every rule's health now."""
        ...


__all__ = ["HEALTH_STATES", "RULE_TYPES", "RuleHealth", "RuleHealthChange", "RuleHealthSource",
           "RuleHealthTracker", "health_report"]
