"""SVG snapshots of every screen (pytest-textual-snapshot) at a fixed size, seed and clock,
cursor blink off: the same shots ``python -m tui.screenshots`` writes to ``screenshots/``.

Update after an intended change with ``pytest tests/test_tui_snapshots.py --snapshot-update``
and look at the report it writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tui.screenshots import make_bundle, make_marathon_bundle, shots

NAMES = [s.name for s in shots(Path("unused.marathon"))]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_bundle(tmp_path_factory.mktemp("snapshots"))


@pytest.fixture(scope="module")
def marathon(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Online Boutique marathon's bundle (about 5 s to record), for the ``*-marathon`` shots."""
    return make_marathon_bundle(tmp_path_factory.mktemp("snapshots-marathon"))


@pytest.mark.parametrize("name", NAMES)
def test_screen_snapshot(name: str, bundle: Path, request: pytest.FixtureRequest, snap_compare: Any) -> None:
    long = request.getfixturevalue("marathon") if "marathon" in name else None
    shot = next(s for s in shots(bundle, long) if s.name == name)
    assert snap_compare(shot.build(), terminal_size=shot.size, run_before=shot.run_before)
