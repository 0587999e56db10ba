"""Code-change faults on the same source file replace disjoint regions of the healthy source.

Two faults whose ``change.find`` texts overlap cannot both be live, and the second one's
revert or rollback could restore text the first one changed. The spec loader already checks
that each ``find`` occurs exactly once in its file; this checks that no two of them share a
character of that file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from faults.spec import load_catalog

APPS = ["online-boutique", "astronomy-shop", "train-ticket"]
SRC = Path(__file__).resolve().parent.parent / "engine" / "apps" / "src"


def _regions(app: str) -> dict[tuple[str, str], list[tuple[int, int, str]]]:
    out: dict[tuple[str, str], list[tuple[int, int, str]]] = {}
    for f in load_catalog(app).faults:
        if f.mechanism != "code-change" or f.change is None:
            continue
        text = (SRC / app / f.target / f.change.file).read_text()
        start = text.index(f.change.find)
        out.setdefault((f.target, f.change.file), []).append((start, start + len(f.change.find), f.id))
    return out


def overlaps(regions: list[tuple[int, int, str]]) -> list[tuple[str, str]]:
    """Pairs (earlier, later) of regions ``(start, stop, id)`` that share a character."""
    out = []
    end, owner = -1, ""
    for start, stop, fid in sorted(regions):
        if start < end:
            out.append((owner, fid))
        if stop > end:
            end, owner = stop, fid
    return out


@pytest.mark.parametrize("app", APPS)
def test_find_regions_of_one_file_are_disjoint(app: str) -> None:
    found = [f"{service}/{path}: {a} and {b}" for (service, path), regions in sorted(_regions(app).items())
             for a, b in overlaps(regions)]
    assert not found, "faults replace overlapping text: " + "; ".join(found)


def test_overlaps_sees_a_region_inside_a_longer_one() -> None:
    """Not only neighbours: both regions inside (0, 100) overlap it; touching regions do not."""
    assert overlaps([(50, 60, "c"), (0, 100, "a"), (10, 20, "b"), (100, 110, "d")]) == [("a", "b"), ("a", "c")]
