"""One encoding per event: :meth:`EventStream.emit` composes the hash and the line around
the payload's single canonical encoding; both must be what the three encodings gave
(``canonical(to_dict())`` and :meth:`Event.digest` over the frozen payload)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.bundle.events import EventStream, canonical, verify_chain

_KEYS = st.one_of(st.text(max_size=6), st.integers(-20, 20), st.booleans(), st.none(),
                  st.floats(allow_nan=False, allow_infinity=False, width=32))
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                     st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8),
                     st.sampled_from(["<a&b>", "\u2028", "é\"\\\n", "\x00", "seq", ',"seq":1']))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.tuples(inner, inner),
    st.dictionaries(st.text(max_size=6), inner, max_size=4),
    st.dictionaries(_KEYS, inner, max_size=4)), max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(extra=st.dictionaries(_KEYS, _VALUES, max_size=5), t=st.floats(0, 1e6), kind=st.sampled_from(
    ["load.change", "tool.call", "alert.resolved"]))
def test_composed_line_and_hash_match_the_encodings(extra: dict[Any, Any], t: float, kind: str) -> None:
    stream = EventStream()
    stream.emit(0.0, "load.change", {"factor": 1.0})
    payload: dict[Any, Any] = {**extra, "factor": 2.0}
    if kind == "tool.call":
        payload.update(tool="kubectl_get", tier="read", args={}, targets=[], allowed=True, reason="", result="")
    elif kind == "alert.resolved":
        payload.update(alert="HighErrorRate", labels={"service": "cart"}, fingerprint="ab12")
    try:
        old_freeze = json.loads(canonical(payload))
    except (TypeError, ValueError):  # the old code refused it: so must the new
        with pytest.raises((TypeError, ValueError)):
            stream.emit(t, kind, payload)
        return
    ev = stream.emit(t, kind, payload)
    assert ev.payload == old_freeze
    assert ev.to_json() == canonical(ev.to_dict())
    assert verify_chain(stream.events) is None


def test_non_string_keys_take_the_slow_path() -> None:
    ev = EventStream().emit(1.0, "load.change", {"factor": 1, "by": {10: "a", 9: "b"}})
    assert list(ev.payload["by"]) == ["9", "10"]  # 9 < 10 as ints: the old freeze kept that order
    assert '"by":{"10":"a","9":"b"}' in ev.to_json()  # sorted as strings on the line
    assert ev.to_json() == canonical(ev.to_dict())
    assert verify_chain([ev]) is None
