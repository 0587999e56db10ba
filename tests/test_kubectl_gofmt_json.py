"""``go_json``'s standard-library path against the ``encoding/json`` port it stands in for:
byte-identical on every value, whichever path :func:`_stdlib_encodes_alike` picks."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.kubectl import gofmt

_TEXT = st.text(alphabet=st.one_of(st.sampled_from(list("<>&\"\\\n\r\t\b\f\x00\x1f\x7f\u2028\u2029é€😀 aZ09:{}[],")),
                                   st.characters()), max_size=12)
_FLOATS = st.one_of(st.floats(allow_nan=False, allow_infinity=False),
                    st.sampled_from([0.0, -0.0, 1.0, 3.0, 0.5, 1e-4, 9.99e-5, 1e-6, 1e-7, 1e15, 1e16, 1e21, 1e22,
                                     123456789.125, -2.5e-5, 0.1, 1 / 3]))
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**25, 10**25), _FLOATS, _TEXT)
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(_TEXT, inner, max_size=4)), max_leaves=20)


@settings(max_examples=600, deadline=None)
@given(value=st.one_of(st.dictionaries(_TEXT, _VALUES, max_size=5), st.lists(_VALUES, max_size=5)))
def test_stdlib_path_is_byte_identical_to_the_port(value: Any) -> None:
    assert gofmt.go_json(value) == gofmt.go_json_port(value)
    assert gofmt.go_json(value, "  ") == gofmt.go_json_port(value, "  ")


@pytest.mark.parametrize("value", [
    {"a": 1.5, "b": [0.25, {"c": "<tag> & \u2028"}]}, [{"x": "é😀", "y": True, "z": None}], {"": {}, "e": []},
])
def test_plain_values_take_the_stdlib_path(value: Any) -> None:
    assert gofmt._stdlib_encodes_alike(value)
    assert gofmt.go_json(value) == gofmt.go_json_port(value)


@pytest.mark.parametrize("value", [{"n": 3.0}, {"n": 1e-5}, {"n": 1e16}, {"n": -0.0}, {1: "int key"},
                                   {"t": {"s": {1, 2}}}])
def test_values_go_writes_differently_take_the_port(value: Any) -> None:
    assert not gofmt._stdlib_encodes_alike(value)


def test_kubectl_object_shapes() -> None:
    """A pod as ``kubectl get -o json`` prints it: HTML escapes, quantities, nested lists."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "cart-7f9c", "labels": {"app": "cart"},
           "annotations": {"note": "a<b && c>d"}}, "spec": {"containers": [{"name": "cart", "args": ["--x=1"],
           "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}}}]},
           "status": {"phase": "Running", "containerStatuses": [{"restartCount": 0, "ready": True}]}}
    out = gofmt.go_json(pod)
    assert out == gofmt.go_json_port(pod)
    assert '"note": "a\\u003cb \\u0026\\u0026 c\\u003ed"' in out and out.endswith("}\n")
    with pytest.raises(ValueError, match="unsupported value"):
        gofmt.go_json({"x": float("nan")})
