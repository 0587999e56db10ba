"""Catalog size against SRE-Marathon's Table 3 (issue 14, item 9) and ``marathon app catalog``.

Every shipped catalog must hold at least Table 3's code-bug count in every defect subtype; the
command prints the counts, says which subtype is short and by how many, and exits 1 while any is.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from engine.cli import main
from faults.counts import SUBTYPES, TABLE3, catalog_counts, format_counts
from faults.spec import CATALOG_DIR, load_catalog

SHIPPED = sorted(p.stem for p in CATALOG_DIR.glob("*.yaml"))


def test_table3_is_the_papers_shape() -> None:
    # DESIGN section 9: 150 code bugs for Astronomy Shop, 32 each for the other two.
    assert {app: sum(row.values()) for app, row in TABLE3.items()} == \
        {"astronomy-shop": 150, "online-boutique": 32, "train-ticket": 32}
    assert all(tuple(row) == SUBTYPES for row in TABLE3.values())


@pytest.mark.parametrize("app", SHIPPED)
def test_catalog_meets_table3_per_subtype(app: str) -> None:
    counts = catalog_counts(load_catalog(app))
    assert counts.table3, f"{app} has no Table 3 row"
    assert counts.short() == {}, f"{app} is below Table 3: {counts.short()} (marathon app catalog --app {app})"


def test_counts_add_up_and_count_for_each_instances() -> None:
    cat = load_catalog("online-boutique")
    counts = catalog_counts(cat)
    assert counts.total == len(cat.faults) == sum(counts.categories.values())
    assert counts.categories["code-bug"] == sum(counts.subtypes.values())
    # The image/readiness/scale entries are for_each templates: each instance is a fault of its own.
    assert counts.categories["configuration"] == sum(1 for f in cat.faults if f.category == "configuration")


def _without(app: str, subtype: str, n: int, tmp_path: Path) -> Path:
    """A copy of ``app``'s catalog file without its first ``n`` code bugs of ``subtype``."""
    data = yaml.safe_load((CATALOG_DIR / f"{app}.yaml").read_text(encoding="utf-8"))
    dropped = 0
    kept = []
    for entry in data["faults"]:
        if entry.get("subtype") == subtype and dropped < n:
            dropped += 1
            continue
        kept.append(entry)
    data["faults"] = kept
    out = tmp_path / f"{app}.yaml"
    out.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return out


def test_command_prints_counts_and_exits_0_when_met(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["app", "catalog", "--app", "online-boutique", "--app", "train-ticket"])
    out = capsys.readouterr().out
    assert code == 0
    for app in ("online-boutique", "train-ticket"):
        counts = catalog_counts(load_catalog(app))
        assert f"{app}: {counts.total} faults" in out
        for sub in SUBTYPES:
            assert f"  {sub:28} {counts.subtypes[sub]:>6} {TABLE3[app][sub]:>7}  ok" in out
    assert "short" not in out


def test_command_names_the_short_subtype_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _without("train-ticket", "backward-incompatibility", 2, tmp_path)
    code = main(["app", "catalog", "--app", str(path)])
    out = capsys.readouterr().out
    assert code == 1
    assert f"  {'backward-incompatibility':28} {6:>6} {8:>7}  2 short" in out
    assert "below Table 3" in out


def test_command_reports_a_broken_catalog(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "online-boutique.yaml"
    bad.write_text("app: online-boutique\nfaults:\n  - id: ob-x\n", encoding="utf-8")
    assert main(["app", "catalog", "--app", str(bad)]) == 2
    assert "marathon app catalog:" in capsys.readouterr().err
    assert main(["app", "catalog", "--app", "no-such-app"]) == 2


def test_format_marks_apps_without_a_table3_row() -> None:
    counts = catalog_counts(load_catalog("online-boutique"))
    other = type(counts)(app="my-app", total=counts.total, categories=counts.categories,
                         subtypes=counts.subtypes, table3={})
    text = format_counts([other])
    assert other.meets_table3
    assert f"  {'feature-logic':28} {counts.subtypes['feature-logic']:>6} {'-':>7}  -" in text
