"""List chunking for ``kubectl get``: the API's ``limit`` / ``continue`` paging, for tools that
must not cut a list silently.

A real API server answers ``?limit=N`` with N items and ``metadata.continue``, an opaque token
(base64 of ``{"v": "meta.k8s.io/v1", "rv": ..., "start": "<key>\\u0000"}``, apiserver
``storage/etcd3``) from which the next call resumes after the last key returned. Here the same
shape holds, with one order per kind:

* every kind but events: API-server order (namespace, name); the token resumes after the
  last name returned;
* events: newest first by ``lastTimestamp`` (ties by name), so the first page holds the
  newest events and each token reaches further back; a page is printed oldest to newest,
  as ``kubectl get events --sort-by=.lastTimestamp`` prints.

Departure from a real server: pages are not served from one etcd snapshot; a token resumes
after a key, so objects created after the first page (before it, in the page order) are not
seen by later pages and no object is returned twice, but an event whose count grows between
calls moves ahead and is not repeated.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_VERSION = "meta.k8s.io/v1"


@dataclass(frozen=True)
class Page:
    """One page of a list: the items to show and the items after them, in page order."""

    items: list[dict[str, Any]]
    rest: list[dict[str, Any]]


def _name(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def page_key(kind: str, obj: Mapping[str, Any]) -> list[str]:
    """The key an object has in its kind's page order (ascending for every kind but events,
    whose pages run newest first)."""
    if kind == "Event":
        return [str(obj.get("lastTimestamp") or obj.get("eventTime") or ""), _name(obj)]
    return [_name(obj)]


def page_order(kind: str, items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``items`` in page order (see the module docstring)."""
    ordered = sorted((dict(o) for o in items), key=lambda o: page_key(kind, o))
    return ordered[::-1] if kind == "Event" else ordered


def encode_token(kind: str, key: list[str]) -> str:
    """The continue token resuming after ``key``."""
    raw = json.dumps({"v": _VERSION, "kind": kind, "start": key}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_token(kind: str, token: str) -> list[str]:
    """The key a continue token resumes after.

    Raises:
        ValueError: a token that is not one of ours, or is for another kind, in the API
            server's words (``continue key is not valid``).
    """
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        doc = json.loads(raw)
    except (binascii.Error, ValueError, UnicodeDecodeError):
        raise ValueError("Error from server (BadRequest): continue key is not valid: malformed token") from None
    if not isinstance(doc, dict) or doc.get("v") != _VERSION or not isinstance(doc.get("start"), list) \
            or not all(isinstance(k, str) for k in doc["start"]):
        raise ValueError("Error from server (BadRequest): continue key is not valid: unknown token format")
    if doc.get("kind") != kind:
        raise ValueError(f"Error from server (BadRequest): continue key is not valid: the token lists "
                         f"{doc.get('kind')!r}, not {kind!r}")
    return list(doc["start"])


def list_page(kind: str, items: Sequence[Mapping[str, Any]], limit: int | None, token: str | None) -> Page:
    """The page of ``items`` after ``token`` (None: the first), at most ``limit`` long (None:
    all that are left).

    Raises:
        ValueError: a malformed continue token (:func:`decode_token`).
    """
    ordered = page_order(kind, items)
    if token:
        start = decode_token(kind, token)
        if kind == "Event":
            ordered = [o for o in ordered if page_key(kind, o) < start]
        else:
            ordered = [o for o in ordered if page_key(kind, o) > start]
    if limit is None:
        return Page(ordered, [])
    return Page(ordered[:limit], ordered[limit:])


def page_token(kind: str, shown: Sequence[Mapping[str, Any]], rest: Sequence[Mapping[str, Any]]) -> str | None:
    """The continue token after ``shown``, or None when nothing is left."""
    if not rest or not shown:
        return None
    return encode_token(kind, page_key(kind, shown[-1]))


__all__ = ["Page", "decode_token", "encode_token", "list_page", "page_key", "page_order", "page_token"]
