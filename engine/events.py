"""The one event stream of a run (DESIGN section 3).

Everything that happens in a run is one ordered stream of typed events. Each event has
``seq`` (0, 1, 2, ...), ``t`` (seconds of run time), ``kind``, a JSON payload, and a hash
chained to the previous event: ``hash = sha256(prev_hash + canonical JSON of (seq, t,
kind, payload))``. The same stream feeds the live terminal app, the bundle on disk, the
replay viewer and the scorer; there is no second source of truth.

Ground-truth kinds (:data:`GROUND_TRUTH_KINDS`: faults and probes) are recorded but never
reach an operator's tools or a player's screen.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

EVENT_KINDS: dict[str, tuple[str, ...]] = {
    "run.start": ("run_id", "app", "seed", "regime", "operator", "substrate", "schedule_sha256"),
    "fault.inject": ("fault", "title", "category", "subtype", "mechanism", "target", "scope", "artifact", "changes"),
    "fault.revert": ("fault", "changes"),
    "change.deploy": ("change", "service", "kind", "summary", "author", "revision"),
    "load.change": ("factor",),
    "alert.pending": ("alert", "labels", "fingerprint", "value"),
    "alert.firing": ("alert", "labels", "fingerprint", "value"),
    "alert.resolved": ("alert", "labels", "fingerprint"),
    "probe.result": ("fault", "ok", "success", "p95_ms", "detail"),
    "repair.check": ("fault", "recovered_at", "ok", "detail"),
    "health.sample": ("services", "routes"),
    "agent.invoke": ("invocation", "operator"),
    "tool.call": ("tool", "tier", "args", "targets", "allowed", "reason", "result"),
    "report.incident": ("incident", "alerts", "title"),
    "report.rca": ("incident", "service", "category", "artifact", "summary"),
    "report.resolved": ("incident",),
    "action.executed": ("tool", "args", "targets"),
    "llm.call": ("model", "prompt_tokens", "completion_tokens", "tokens", "latency_s", "cost_usd"),
    "agent.end": ("invocation", "operator", "reason"),
    "run.end": ("reason",),
    "seal": ("events", "sha256"),
}
"""Every kind with the payload keys it must carry (more are allowed)."""

GROUND_TRUTH_KINDS = frozenset({"fault.inject", "fault.revert", "probe.result", "repair.check"})
GENESIS = "0" * 64


def canonical(obj: Any) -> str:
    """Canonical JSON: sorted keys, no spaces, floats as Python repr (stable across runs)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


@dataclass(frozen=True)
class Event:
    """One event of the stream (module docstring)."""

    seq: int
    t: float
    kind: str
    payload: dict[str, Any]
    prev: str
    hash: str

    @property
    def ground_truth(self) -> bool:
        return self.kind in GROUND_TRUTH_KINDS

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "t": self.t, "kind": self.kind, "payload": self.payload, "prev": self.prev,
                "hash": self.hash}

    def to_json(self) -> str:
        return canonical(self.to_dict())

    @staticmethod
    def digest(prev: str, seq: int, t: float, kind: str, payload: dict[str, Any]) -> str:
        body = canonical({"seq": seq, "t": t, "kind": kind, "payload": payload})
        return hashlib.sha256((prev + body).encode()).hexdigest()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Event:
        """Rebuild an event read from disk (no verification; see :func:`verify_chain`).

        Raises:
            ValueError: a missing or mistyped field.
        """
        try:
            return cls(int(data["seq"]), float(data["t"]), str(data["kind"]), dict(data["payload"]),
                       str(data["prev"]), str(data["hash"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"malformed event {str(data)[:120]}: {exc}") from None


class EventError(ValueError):
    """An event that does not fit the stream (unknown kind, missing payload keys)."""


def check_payload(kind: str, payload: dict[str, Any]) -> None:
    """Raise :class:`EventError` unless ``payload`` carries the keys ``kind`` requires."""
    keys = EVENT_KINDS.get(kind)
    if keys is None:
        raise EventError(f"unknown event kind {kind!r}")
    missing = [k for k in keys if k not in payload]
    if missing:
        raise EventError(f"{kind} event lacks {', '.join(missing)}")


Subscriber = Callable[[Event], None]


class EventStream:
    """Append-only, hash-chained events, pushed to subscribers as they are emitted."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._subscribers: list[Subscriber] = []

    def subscribe(self, fn: Subscriber) -> None:
        """Call ``fn(event)`` for every event emitted from now on."""
        self._subscribers.append(fn)

    def unsubscribe(self, fn: Subscriber) -> None:
        self._subscribers.remove(fn)

    @property
    def head(self) -> str:
        return self.events[-1].hash if self.events else GENESIS

    def emit(self, t: float, kind: str, payload: dict[str, Any]) -> Event:
        """Append one event and notify subscribers.

        Raises:
            EventError: unknown kind or missing payload keys.
        """
        check_payload(kind, payload)
        payload = json.loads(canonical(payload))  # freeze to plain JSON types
        seq = len(self.events)
        t = round(float(t), 3)
        ev = Event(seq, t, kind, payload, self.head, Event.digest(self.head, seq, t, kind, payload))
        self.events.append(ev)
        for fn in list(self._subscribers):
            fn(ev)
        return ev


def verify_chain(events: list[Event]) -> int | None:
    """Index of the first event whose seq, link or hash is wrong, or None when the chain holds."""
    prev = GENESIS
    for i, ev in enumerate(events):
        if ev.seq != i or ev.prev != prev or ev.hash != Event.digest(prev, ev.seq, ev.t, ev.kind, ev.payload):
            return i
        prev = ev.hash
    return None
