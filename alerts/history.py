"""The cumulative alert history operators receive.

Every alert *instance* -- one activation of one label set of one alerting rule, from
``pending`` until it is ``resolved`` (was firing) or dropped back to ``inactive`` (never
fired) -- with its labels, Alertmanager fingerprint, annotations, last value and every
state transition with its run time. Nothing is ever removed: the history is cumulative.
Queries select instances by rule, state at a time, or activity in a time window;
:meth:`AlertHistory.to_dict` / :meth:`AlertHistory.from_dict` round-trip through
JSON-able dicts for the event stream and bundles.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from alerts.evaluator import AlertTransition

STATES = ("inactive", "pending", "firing", "resolved")
"""``resolved``: was firing and stopped; ``inactive``: dropped while pending (or not yet active)."""


@dataclass
class AlertInstance:
    """One activation of one alert (see module docstring).

    Attributes:
        id: sequence number in the history, from 1.
        rule: alert name; group: rule group.
        labels: the alert's labels (``alertname`` included).
        fingerprint: Alertmanager fingerprint of ``labels``.
        transitions: ``(t, state)`` in order; t in seconds of run time.
        annotations: the latest annotations seen; value: the latest expression value.
    """

    id: int
    rule: str
    group: str
    labels: dict[str, str]
    fingerprint: str
    transitions: list[tuple[float, str]] = field(default_factory=list)
    annotations: dict[str, str] = field(default_factory=dict)
    value: float = 0.0

    @property
    def state(self) -> str:
        """The current state."""
        return self.transitions[-1][1] if self.transitions else "inactive"

    @property
    def active_at(self) -> float:
        """When the instance became pending, seconds."""
        return self.transitions[0][0]

    @property
    def fired_at(self) -> float | None:
        return next((t for t, s in self.transitions if s == "firing"), None)

    @property
    def ended_at(self) -> float | None:
        """When it resolved or dropped back to inactive (None while active)."""
        t, s = self.transitions[-1]
        return t if s in ("resolved", "inactive") else None

    def state_at(self, t: float) -> str:
        """The state at run time ``t`` (transitions at exactly ``t`` included)."""
        state = "inactive"
        for when, s in self.transitions:
            if when > t:
                break
            state = s
        return state

    def active_during(self, start: float, end: float) -> bool:
        """Whether the instance was pending or firing at any time in ``[start, end]``."""
        if self.active_at > end:
            return False
        ended = self.ended_at
        return ended is None or ended >= start

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "rule": self.rule, "group": self.group, "labels": dict(self.labels),
                "fingerprint": self.fingerprint, "transitions": [[t, s] for t, s in self.transitions],
                "annotations": dict(self.annotations), "value": self.value}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> AlertInstance:
        return cls(int(d["id"]), str(d["rule"]), str(d.get("group", "")), dict(d["labels"]), str(d["fingerprint"]),
                   [(float(t), str(s)) for t, s in d["transitions"]], dict(d.get("annotations", {})),
                   float(d.get("value", 0.0)))


class AlertHistory:
    """Cumulative alert instances, fed with :class:`~alerts.evaluator.AlertTransition` lists."""

    def __init__(self) -> None:
        self.instances: list[AlertInstance] = []
        self._open: dict[tuple[str, str], AlertInstance] = {}

    def __len__(self) -> int:
        return len(self.instances)

    def record(self, transitions: Iterable[AlertTransition]) -> None:
        """Apply transitions in order: ``inactive -> pending`` opens a new instance."""
        for tr in transitions:
            key = (tr.group, tr.fingerprint)
            inst = self._open.get(key)
            if inst is None or tr.from_state == "inactive":
                inst = AlertInstance(len(self.instances) + 1, tr.rule, tr.group, dict(tr.labels), tr.fingerprint)
                self.instances.append(inst)
                self._open[key] = inst
            inst.transitions.append((tr.t, tr.to_state))
            inst.annotations = dict(tr.annotations)
            inst.value = tr.value
            if tr.to_state in ("resolved", "inactive"):
                del self._open[key]

    def update(self, group: str, fingerprint: str, value: float, annotations: dict[str, str]) -> None:
        """Refresh an open instance's latest value and annotations (no transition)."""
        inst = self._open.get((group, fingerprint))
        if inst is not None:
            inst.value = value
            inst.annotations = annotations

    def query(self, *, state: str | None = None, at: float | None = None, rule: str | None = None,
              since: float | None = None, until: float | None = None,
              labels: dict[str, str] | None = None) -> list[AlertInstance]:
        """Instances matching every given criterion, oldest first.

        Args:
            state: one of :data:`STATES`; with ``at``, the state at that time, else the
                current state.
            at: run time for ``state`` (default: now, i.e. the latest transition).
            rule: alert name.
            since, until: keep instances active at some time in ``[since, until]``.
            labels: label equalities the instance's labels must include.

        Raises:
            ValueError: unknown state.
        """
        if state is not None and state not in STATES:
            raise ValueError(f"unknown alert state {state!r}; one of {', '.join(STATES)}")
        out = []
        for inst in self.instances:
            if rule is not None and inst.rule != rule:
                continue
            if labels and any(inst.labels.get(k) != v for k, v in labels.items()):
                continue
            if (since is not None or until is not None) and not inst.active_during(
                    since if since is not None else float("-inf"), until if until is not None else float("inf")):
                continue
            if state is not None:
                current = inst.state_at(at) if at is not None else inst.state
                if current != state:
                    continue
            out.append(inst)
        return out

    def firing(self, at: float | None = None) -> list[AlertInstance]:
        return self.query(state="firing", at=at)

    def pending(self, at: float | None = None) -> list[AlertInstance]:
        return self.query(state="pending", at=at)

    def transitions(self, since: float | None = None, until: float | None = None) -> list[tuple[float, AlertInstance,
                                                                                                 str]]:
        """Every ``(t, instance, state)`` with ``since < t <= until``, in time order."""
        out = [(t, inst, s) for inst in self.instances for t, s in inst.transitions
               if (since is None or t > since) and (until is None or t <= until)]
        out.sort(key=lambda x: (x[0], x[1].id))
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able snapshot: ``{"instances": [...]}``."""
        return {"instances": [i.to_dict() for i in self.instances]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> AlertHistory:
        """Rebuild a history from :meth:`to_dict` output.

        Raises:
            KeyError, ValueError: malformed input.
        """
        hist = cls()
        for raw in d.get("instances", []):
            inst = AlertInstance.from_dict(raw)
            for s in (s for _, s in inst.transitions):
                if s not in STATES:
                    raise ValueError(f"instance {inst.id}: unknown state {s!r}")
            hist.instances.append(inst)
            if inst.state in ("pending", "firing"):
                hist._open[(inst.group, inst.fingerprint)] = inst
        return hist
