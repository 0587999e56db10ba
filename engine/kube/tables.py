"""Server-side ``Table`` output (``meta.k8s.io/v1``), as the API server's table convertor writes it.

``kubectl get`` asks for ``Accept: application/json;as=Table;v=v1;g=meta.k8s.io`` and prints
the columns the server sends: ``columnDefinitions`` (``priority: 1`` for the columns only
``-o wide`` shows) and one row per object with its ``cells`` and its ``object`` (the
``PartialObjectMetadata`` by default, the whole object with ``includeObject=Object``, nothing
with ``includeObject=None``). The cells come from :mod:`engine.kubectl.printers`, the port of
``pkg/printers/internalversion/printers.go``, so a served table and the typed tool print the
same text (``k8s.io/apiserver/pkg/registry/rest/table.go``, ``printers.GenerateOptions{Wide: true}``).

Objects without printer columns get the default table (NAME and CREATED AT), as
``rest.NewDefaultTableConvertor`` prints them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from engine.kubectl.printers import table_cells, table_columns

Obj = dict[str, Any]

_INTEGER_COLUMNS = {("Deployment", "Up-to-date"), ("Deployment", "Available"), ("ReplicaSet", "Desired"),
                    ("ReplicaSet", "Current"), ("ReplicaSet", "Ready"), ("ConfigMap", "Data"), ("Secret", "Data"),
                    ("Event", "Count")}

_DESCRIPTIONS = {
    "Name": "Name must be unique within a namespace. Is required when creating resources, although some "
            "resources may allow a client to request the generation of an appropriate name automatically. "
            "Name is primarily intended for creation idempotence and configuration definition. Cannot be "
            "updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
    "Age": "CreationTimestamp is a timestamp representing the server time when this object was created. It is "
           "not guaranteed to be set in happens-before order across separate operations. Clients may not set "
           "this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. "
           "Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
           "api-conventions.md#metadata",
}


def column_definitions(kind: str) -> list[Obj]:
    """``TableColumnDefinition`` entries for ``kind`` (name, type, format, description, priority)."""
    try:
        columns = table_columns(kind)
    except KeyError:
        return [{"name": "Name", "type": "string", "format": "name", "description": _DESCRIPTIONS["Name"],
                 "priority": 0},
                {"name": "Created At", "type": "date", "format": "", "description": _DESCRIPTIONS["Age"],
                 "priority": 0}]
    out = []
    for name, wide in columns:
        out.append({"name": name, "type": "integer" if (kind, name) in _INTEGER_COLUMNS else "string",
                    "format": "name" if name == "Name" else "",
                    "description": _DESCRIPTIONS.get(name, name), "priority": 1 if wide else 0})
    return out


def partial_metadata(obj: Mapping[str, Any]) -> Obj:
    """The ``PartialObjectMetadata`` of ``obj`` (``meta.k8s.io/v1``)."""
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": dict(obj.get("metadata") or {})}


def row(kind: str, obj: Mapping[str, Any], now: datetime, include: str = "Metadata",
        printed: Mapping[str, Any] | None = None) -> Obj:
    """One ``TableRow``: the cells for ``obj`` at the server's time ``now`` and, per ``include``
    (``Metadata``, ``Object`` or ``None``), its object. ``printed`` is the form the printer
    reads when it differs from the served one (an events.k8s.io/v1 Event is printed from its
    core/v1 form, as the server converts to the internal version first)."""
    try:
        cells: list[Any] = table_cells(kind, printed if printed is not None else obj, now)
    except ValueError:
        meta = obj.get("metadata") or {}
        cells = [meta.get("name", ""), meta.get("creationTimestamp")]
    out: Obj = {"cells": cells}
    if include == "Object":
        out["object"] = dict(obj)
    elif include != "None":
        out["object"] = partial_metadata(obj)
    return out


def table(kind: str, objs: Sequence[Mapping[str, Any]], now: datetime, *, include: str = "Metadata",
          list_meta: Mapping[str, Any] | None = None, headers: bool = True,
          printed: Sequence[Mapping[str, Any]] | None = None) -> Obj:
    """A ``Table`` of ``objs`` (all of one kind), with ``list_meta`` as its ``metadata``
    (``resourceVersion``, ``continue``, ``remainingItemCount``); ``headers=False`` leaves the
    column definitions out (watch events after the first, as the server sends them); ``printed``, when given, is
    ``objs`` in the form the printer reads (see :func:`row`)."""
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": dict(list_meta or {}),
            "columnDefinitions": column_definitions(kind) if headers else None,
            "rows": [row(kind, o, now, include, printed[i] if printed is not None else None)
                     for i, o in enumerate(objs)]}


__all__ = ["column_definitions", "partial_metadata", "row", "table"]
