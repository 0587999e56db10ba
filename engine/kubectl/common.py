"""What ``kubectl get`` (:mod:`engine.kubectl.printers`) and ``kubectl describe``
(:mod:`engine.kubectl.describe`) share: an API dict's parts, API-server order, the zone of
``now``, ``printers.WriteEscaped``, restartable init containers and node roles.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from engine.kubectl.apiobjects import Obj


def meta_of(obj: Mapping[str, Any]) -> dict[str, Any]:
    """``metadata``, or {} when absent."""
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def spec_of(obj: Mapping[str, Any]) -> dict[str, Any]:
    """``spec``, or {} when absent."""
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def status_of(obj: Mapping[str, Any]) -> dict[str, Any]:
    """``status``, or {} when absent."""
    status = obj.get("status")
    return status if isinstance(status, dict) else {}


def aware_now(now: datetime) -> datetime:
    """``now`` with a zone (naive means UTC)."""
    return now if now.tzinfo is not None else now.replace(tzinfo=UTC)


def server_order(objs: Sequence[Obj]) -> list[Obj]:
    """Objects in the order an API server lists them (by namespace, then name)."""
    return sorted(objs, key=lambda o: (meta_of(o).get("namespace", ""), meta_of(o).get("name", "")))


def escaped(text: str) -> str:
    """``printers.WriteEscaped``: neutralise terminal escape sequences."""
    return text.replace("\x1b", "^[").replace("\r", "\\r")


def is_restartable(container: Mapping[str, Any] | None) -> bool:
    """Whether an init container is a restartable (sidecar) one: ``restartPolicy: Always``."""
    return bool(container) and (container or {}).get("restartPolicy") == "Always"


def node_roles(node: Mapping[str, Any]) -> list[str]:
    """``findNodeRoles``: ``node-role.kubernetes.io/<role>`` labels and ``kubernetes.io/role``."""
    roles = set()
    for key, value in (meta_of(node).get("labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/"):
            role = key[len("node-role.kubernetes.io/"):]
            if role:
                roles.add(role)
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    return sorted(roles)


__all__ = ["aware_now", "escaped", "is_restartable", "meta_of", "node_roles", "server_order", "spec_of",
           "status_of"]
