"""The one event stream of a run (DESIGN section 3).

Everything that happens in a run is one ordered stream of typed events. Each event has
``seq`` (0, 1, 2, ...), ``t`` (seconds of run time), ``kind``, a JSON payload, and a hash
chained to the previous event: ``hash = sha256(prev_hash + canonical JSON of (seq, t,
kind, payload))``. The same stream feeds the live terminal app, the bundle on disk, the
replay viewer and the scorer; there is no second source of truth.

Ground-truth kinds (:data:`GROUND_TRUTH_KINDS`: faults and probes) are recorded but never
reach an operator's tools or a player's screen. Every other kind is public: ``rule.health``
(a rule's evaluation started failing, failed differently, or works again; :mod:`alerts.health`)
is what Prometheus' rules page shows any SRE, so the live panes show it to players too.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
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
    "rule.health": ("rule", "group", "health", "error", "t_eval"),
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

_STR, _INT, _NUM, _BOOL, _LIST, _DICT = "str", "int", "num", "bool", "list", "dict"
_ROUTE_SAMPLE = {"route": _STR, "rps": _NUM, "error_share": _NUM, "p95_ms": _NUM, "p50_ms": _NUM}
_SERVICE_SAMPLE = {"service": _STR, "ready": _INT, "desired": _INT}

PAYLOAD_TYPES: dict[str, dict[str, Any]] = {
    "run.start": {"run_id": (_STR, None), "app": _STR, "seed": _INT, "regime": _STR, "operator": _STR,
                  "substrate": _STR, "schedule_sha256": (_STR, None), "duration_s": _NUM, "edges": [[_STR]]},
    "fault.inject": {"fault": _STR, "title": _STR, "category": _STR, "subtype": (_STR, None), "mechanism": _STR,
                     "target": _STR, "scope": [_STR], "artifact": {"kind": _STR, "ref": _STR}, "changes": _LIST,
                     "artifact_refs": [_STR], "artifact_services": [_STR], "expected_alerts": [_STR],
                     "intermittent": _BOOL, "replicas_before": _INT, "probe": _DICT, "error": (_STR, None)},
    "fault.revert": {"fault": _STR, "changes": _LIST},
    "load.change": {"factor": _NUM},
    "alert.pending": {"alert": _STR, "labels": {"*": _STR}, "fingerprint": _STR, "id": _STR, "active_at": _NUM},
    "alert.firing": {"alert": _STR, "labels": {"*": _STR}, "fingerprint": _STR, "id": _STR, "active_at": _NUM},
    "alert.resolved": {"alert": _STR, "labels": {"*": _STR}, "fingerprint": _STR, "id": _STR},
    "rule.health": {"rule": _STR, "group": _STR, "index": _INT, "type": _STR, "health": _STR, "error": (_STR, None),
                    "t_eval": _NUM},
    "probe.result": {"fault": _STR, "ok": _BOOL, "success": (_NUM, None), "p95_ms": (_NUM, None),
                     "detail": _STR},
    "repair.check": {"fault": _STR, "recovered_at": _NUM, "ok": _BOOL, "detail": _STR},
    "health.sample": {"services": [_SERVICE_SAMPLE], "routes": [_ROUTE_SAMPLE], "stores": {"*": _INT}},
    "report.incident": {"incident": _STR, "alerts": [_STR], "title": _STR},
    "report.rca": {"incident": _STR, "service": _STR, "category": _STR, "artifact": _STR},
    "report.resolved": {"incident": _STR},
    "action.executed": {"tool": _STR, "args": _DICT, "targets": [_STR], "operator": _STR},
    "llm.call": {"tokens": (_INT, None), "cost_usd": (_NUM, None)},
    "tool.call": {"tool": _STR, "tokens": (_INT, None), "allowed": _BOOL, "targets": [_STR], "request": _DICT},
    "run.end": {"reason": _STR},
}
"""Types of the payload fields the scorer, the counterfactual and the replay read, checked
when a recorded stream is read back (:func:`check_payload_types`; never on emit). A type is
``"str"``, ``"int"``, ``"num"`` (a finite int or float), ``"bool"``, ``"list"``, ``"dict"``,
a tuple of alternatives (``None``: JSON null), ``[T]`` (a list of T), or a dict of field
types (``{"*": T}``: every value a T). Fields not listed, and absent optional ones, are not
checked; the required keys are :data:`EVENT_KINDS`."""


def _type_problems(value: Any, spec: Any, where: str, out: list[str]) -> None:
    if isinstance(spec, tuple):
        if (value is None and None in spec) or any(_fits(value, s) for s in spec if s is not None):
            for s in spec:
                if s is not None and _fits(value, s):
                    _type_problems(value, s, where, out)
                    return
            return
        out.append(f"{where}: expected {' or '.join('null' if s is None else _name(s) for s in spec)}, "
                   f"got {_show(value)}")
        return
    if not _fits(value, spec):
        out.append(f"{where}: expected {_name(spec)}, got {_show(value)}")
        return
    if isinstance(spec, list):
        for i, item in enumerate(value):
            _type_problems(item, spec[0], f"{where}[{i}]", out)
    elif isinstance(spec, dict):
        for key, sub in spec.items():
            if key == "*":
                for k, v in value.items():
                    _type_problems(v, sub, f"{where}.{k}", out)
            elif key in value:
                _type_problems(value[key], sub, f"{where}.{key}", out)


def _fits(value: Any, spec: Any) -> bool:
    if isinstance(spec, list):
        return isinstance(value, list)
    if isinstance(spec, dict):
        return isinstance(value, dict)
    if spec == _STR:
        return isinstance(value, str)
    if spec == _BOOL:
        return isinstance(value, bool)
    if spec == _INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if spec == _NUM:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if spec == _LIST:
        return isinstance(value, list)
    return isinstance(value, dict)


def _name(spec: Any) -> str:
    if isinstance(spec, list):
        return f"a list of {_name(spec[0])}"
    if isinstance(spec, dict):
        return "an object"
    return {_STR: "a string", _INT: "an integer", _NUM: "a finite number", _BOOL: "a boolean (true/false)",
            _LIST: "a list", _DICT: "an object"}[spec]


def _show(value: Any) -> str:
    text = json.dumps(value)[:40] if isinstance(value, (str, int, float, bool, type(None))) else ""
    return f"{type(value).__name__} {text}".strip() if value is not None else "null"


def _compile(spec: Any) -> Callable[[Any], bool]:
    """A predicate that is True exactly when :func:`_type_problems` finds nothing wrong with a
    value against ``spec`` (the same rules, without building messages): reading a bundle back
    checks every event, and almost every event is well typed, so the messages are built only
    for the ones that are not."""
    if isinstance(spec, tuple):
        none_ok = None in spec
        alts = [(s, _compile(s)) for s in spec if s is not None]

        def alternatives(value: Any) -> bool:
            if value is None and none_ok:
                return True
            # _type_problems judges a value by the first alternative whose shape it has
            return next((deep(value) for s, deep in alts if _fits(value, s)), False)
        return alternatives
    if isinstance(spec, list):
        item = _compile(spec[0])
        return lambda value: isinstance(value, list) and all(item(v) for v in value)
    if isinstance(spec, dict):
        star = _compile(spec["*"]) if "*" in spec else None
        fields = [(k, _compile(sub)) for k, sub in spec.items() if k != "*"]

        def obj(value: Any) -> bool:
            if not isinstance(value, dict):
                return False
            if star is not None and not all(star(v) for v in value.values()):
                return False
            return all(check(value[k]) for k, check in fields if k in value)
        return obj
    return _SCALAR_CHECKS[spec]


def _is_num(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


_SCALAR_CHECKS: dict[str, Callable[[Any], bool]] = {
    # :func:`_fits` for each scalar type, without dispatching on the spec for every value
    _STR: lambda value: isinstance(value, str),
    _BOOL: lambda value: isinstance(value, bool),
    _INT: lambda value: isinstance(value, int) and not isinstance(value, bool),
    _NUM: _is_num,
    _LIST: lambda value: isinstance(value, list),
    _DICT: lambda value: isinstance(value, dict),
}


_FAST_CHECKS = {kind: _compile(spec) for kind, spec in PAYLOAD_TYPES.items()}


def check_payload_types(kind: str, payload: Any) -> list[str]:
    """What is wrong with a recorded event's payload: missing required keys
    (:data:`EVENT_KINDS`) and fields of the wrong type (:data:`PAYLOAD_TYPES`), each as
    ``payload.<field>: expected ..., got ...``; empty when it is well typed. Unknown kinds
    are not checked (a newer recorder may add kinds; the scorer ignores them).

    Meant for reading streams back (bundles, run directories); :meth:`EventStream.emit`
    only checks the keys, to stay fast.
    """
    if not isinstance(payload, dict):
        return [f"payload: expected an object, got {_show(payload)}"]
    fast = _FAST_CHECKS.get(kind)
    if all(k in payload for k in EVENT_KINDS.get(kind, ())) and (fast is None or fast(payload)):
        return []
    out = [f"payload.{k}: missing" for k in EVENT_KINDS.get(kind, ()) if k not in payload]
    spec = PAYLOAD_TYPES.get(kind)
    if spec is not None:
        _type_problems(payload, spec, "payload", out)
    return out


GROUND_TRUTH_KINDS = frozenset({"fault.inject", "fault.revert", "probe.result", "repair.check"})
GENESIS = "0" * 64


def canonical(obj: Any) -> str:
    """Canonical JSON: sorted keys, no spaces, floats as Python repr (stable across runs)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


class _NotCanonical(ValueError):
    """An object whose keys, read back, are not in strictly increasing order."""


def _canonical_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads`` object hook proving that ``canonical`` of what is read back is the text
    read: true when every object's keys come in strictly increasing order (a payload with
    keys that were not strings, ``{10: .., 9: ..}`` or ``{1: .., "1": ..}``, fails this, and
    its round trip re-sorts or merges them). Scalars read back encode to the same text
    (floats are written as their shortest repr)."""
    for i in range(1, len(pairs)):
        if not pairs[i - 1][0] < pairs[i][0]:
            raise _NotCanonical
    return dict(pairs)


@dataclass(frozen=True)
class Event:
    """One event of the stream (module docstring)."""

    seq: int
    t: float
    kind: str
    payload: dict[str, Any]
    prev: str
    hash: str
    _line: str | None = field(default=None, init=False, repr=False, compare=False)
    """:meth:`to_json`, composed once by :meth:`EventStream.emit` from the payload's one
    encoding (None for events built otherwise, which encode on every call)."""

    @property
    def ground_truth(self) -> bool:
        return self.kind in GROUND_TRUTH_KINDS

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "t": self.t, "kind": self.kind, "payload": self.payload, "prev": self.prev,
                "hash": self.hash}

    def to_json(self) -> str:
        """``canonical(self.to_dict())``: the event's line in ``events.jsonl``."""
        if self._line is not None:
            return self._line
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
        body = canonical(payload)
        try:
            payload = json.loads(body, object_pairs_hook=_canonical_pairs)  # freeze to plain JSON types
        except _NotCanonical:  # keys that were not strings, or sorted otherwise as strings
            payload = json.loads(body)
            body = canonical(payload)
        # ``body`` is now canonical(payload): the hash and the line are composed around it
        # (the keys of both objects in sorted order) instead of encoding the payload twice more.
        seq = len(self.events)
        t = round(float(t), 3)
        head = self.head
        kind_json, t_json = canonical(kind), canonical(t)
        digest = hashlib.sha256(
            f'{head}{{"kind":{kind_json},"payload":{body},"seq":{seq},"t":{t_json}}}'.encode()).hexdigest()
        ev = Event(seq, t, kind, payload, head, digest)
        object.__setattr__(ev, "_line", f'{{"hash":"{digest}","kind":{kind_json},"payload":{body},"prev":"{head}",'
                                        f'"seq":{seq},"t":{t_json}}}')
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
