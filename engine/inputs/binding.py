"""Scoped bindings: a value that stands in for what a lookup would load, inside a ``with`` block.

A bundle's replay runs the app model and the catalog entries the bundle carries, whatever the
user's files now hold; qualification runs a catalog not yet written to a file. The lookups
(:func:`engine.apps.model.load_app`, :func:`faults.spec.app_catalog`) consult a table of such
bindings first; :func:`bound` puts one in place for the block and restores what was there.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


@contextmanager
def bound(table: MutableMapping[K, V], key: K, value: V) -> Iterator[None]:
    """``table[key] = value`` inside the block; on exit the previous entry (or none) comes back,
    so nested bindings of the same key unwind in order."""
    previous = [table[key]] if key in table else []
    table[key] = value
    try:
        yield
    finally:
        if previous:
            table[key] = previous[0]
        else:
            table.pop(key, None)
