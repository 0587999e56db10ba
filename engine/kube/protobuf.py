"""Just enough of the Kubernetes protobuf encoding to read what kubectl sends as protobuf.

client-go's typed clients for some groups (``authorization.k8s.io``: ``kubectl auth can-i``,
k9s' permission checks) send bodies as ``application/vnd.kubernetes.protobuf``: the 4-byte
magic ``k8s\\x00`` and a ``runtime.Unknown`` message (``typeMeta``, ``raw``) whose ``raw`` is
the object's own message (``k8s.io/apimachinery/pkg/runtime/generated.proto``,
``k8s.io/api/authorization/v1/generated.proto``). The answer can be JSON: client-go picks its
decoder by the response's Content-Type.
"""

from __future__ import annotations

from typing import Any

MAGIC = b"k8s\x00"
PROTOBUF = "application/vnd.kubernetes.protobuf"


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        if i >= len(data) or shift > 63:
            raise ValueError("truncated varint")
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7


def fields(data: bytes) -> dict[int, list[bytes | int]]:
    """A message's fields: number -> values (bytes for length-delimited, int for varints).

    Raises:
        ValueError: malformed input or a wire type other than varint, 64-bit, length-delimited, 32-bit.
    """
    out: dict[int, list[bytes | int]] = {}
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        value: bytes | int
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 2:
            length, i = _varint(data, i)
            if i + length > len(data):
                raise ValueError("truncated field")
            value, i = data[i:i + length], i + length
        elif wire == 1:
            value, i = int.from_bytes(data[i:i + 8], "little"), i + 8
        elif wire == 5:
            value, i = int.from_bytes(data[i:i + 4], "little"), i + 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
        out.setdefault(number, []).append(value)
    return out


def _text(msg: dict[int, list[bytes | int]], number: int) -> str:
    value = (msg.get(number) or [b""])[-1]
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _message(msg: dict[int, list[bytes | int]], number: int) -> dict[int, list[bytes | int]] | None:
    values = msg.get(number) or []
    return fields(values[-1]) if values and isinstance(values[-1], bytes) else None


def unwrap(body: bytes) -> tuple[str, str, bytes]:
    """``(apiVersion, kind, raw)`` of an encoded object.

    Raises:
        ValueError: not the Kubernetes protobuf envelope.
    """
    if not body.startswith(MAGIC):
        raise ValueError("missing the k8s protobuf magic")
    unknown = fields(body[len(MAGIC):])
    type_meta = _message(unknown, 1) or {}
    raw = (unknown.get(2) or [b""])[-1]
    return _text(type_meta, 1), _text(type_meta, 2), raw if isinstance(raw, bytes) else b""


def access_review(body: bytes) -> dict[str, Any]:
    """A ``SelfSubjectAccessReview`` sent as protobuf, as its JSON form (``spec`` only).

    Raises:
        ValueError: malformed input, or another kind.
    """
    _, kind, raw = unwrap(body)
    if kind != "SelfSubjectAccessReview":
        raise ValueError(f"expected a SelfSubjectAccessReview, got {kind!r}")
    review = fields(raw)
    spec = _message(review, 2) or {}
    out: dict[str, Any] = {}
    attrs = _message(spec, 1)
    if attrs is not None:
        out["resourceAttributes"] = {name: _text(attrs, n) for n, name in (
            (1, "namespace"), (2, "verb"), (3, "group"), (4, "version"), (5, "resource"), (6, "subresource"),
            (7, "name"))}
    non_resource = _message(spec, 2)
    if non_resource is not None:
        out["nonResourceAttributes"] = {"path": _text(non_resource, 1), "verb": _text(non_resource, 2)}
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": out}


__all__ = ["MAGIC", "PROTOBUF", "access_review", "fields", "unwrap"]
