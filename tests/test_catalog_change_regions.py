"""Code-change faults of one catalog never edit the same text of a file (issue 14, item 9).

Each code-change fault replaces one region (its ``change.find``) of the healthy source. Two
faults whose regions overlap cannot both be valid diffs of the same file version: once one
of them has shipped (or was merged with a different neighbour), the other's ``find`` no
longer occurs and its injection fails. Several engineers grow the catalogs in parallel, so
this test pins the rule: within a catalog, the regions of any two faults on the same file
are disjoint in the healthy source. Touching regions (one ends where the next begins) are
allowed; ``faults/spec.py`` already checks that each ``find`` occurs exactly once.
"""

from __future__ import annotations

import pytest

from engine.apps.model import source_root
from faults.spec import load_catalog

APPS = ["online-boutique", "astronomy-shop", "train-ticket"]


def _regions(app: str) -> dict[str, list[tuple[int, int, str]]]:
    """(start, end, fault id) character spans of every code change, per source file."""
    out: dict[str, list[tuple[int, int, str]]] = {}
    for fault in load_catalog(app).faults:
        ch = fault.change
        if fault.mechanism != "code-change" or ch is None:
            continue
        path = source_root(app) / fault.target / ch.file
        text = path.read_text(encoding="utf-8")
        start = text.index(ch.find)
        out.setdefault(f"{fault.target}/{ch.file}", []).append((start, start + len(ch.find), fault.id))
    return out


def _clashes(spans: list[tuple[int, int, str]]) -> list[tuple[str, str]]:
    """Pairs of fault ids whose spans share at least one character (touching spans do not)."""
    spans = sorted(spans)
    out = []
    for i, (_a_start, a_end, a_id) in enumerate(spans):
        for b_start, _b_end, b_id in spans[i + 1:]:
            if b_start >= a_end:
                break
            out.append((a_id, b_id))
    return out


@pytest.mark.parametrize("app", APPS)
def test_code_changes_of_one_file_edit_disjoint_regions(app: str) -> None:
    clashes = [f"{path}: {a} and {b} edit overlapping text"
               for path, spans in sorted(_regions(app).items()) for a, b in _clashes(spans)]
    assert not clashes, "\n".join(clashes)


def test_clashes_reports_shared_text_only() -> None:
    """A span nested in another and a span overlapping by one character clash; touching spans do not."""
    assert _clashes([(19, 30, "b"), (10, 20, "a"), (30, 40, "c"), (12, 14, "d")]) == [("a", "d"), ("a", "b")]
    assert _clashes([(0, 5, "x"), (5, 9, "y")]) == []
