"""SVG snapshots of every screen (pytest-textual-snapshot) at a fixed size, seed and clock,
cursor blink off: the same shots ``python -m tui.screenshots`` writes to ``screenshots/``.

Update after an intended change with ``pytest tests/test_tui_snapshots.py --snapshot-update``
and look at the report it writes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tui.screenshots import make_bundle, shots

NAMES = [s.name for s in shots(Path("unused.marathon"))]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_bundle(tmp_path_factory.mktemp("snapshots"))


@pytest.mark.parametrize("name", NAMES)
def test_screen_snapshot(name: str, bundle: Path, snap_compare: Any) -> None:
    shot = next(s for s in shots(bundle) if s.name == name)
    assert snap_compare(shot.build(), terminal_size=shot.size, run_before=shot.run_before)
