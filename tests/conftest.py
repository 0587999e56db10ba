"""Shared pytest fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _shared_data() -> Path:
    """The real inputs (manifests, compose files, FACTS.md): ``../shared/data`` beside the repo.

    ``SRE_MARATHON_SHARED_DATA`` overrides; ``/work/shared/data`` is the development
    machine's location, used when the checkout lives elsewhere (a fresh clone in /tmp).
    """
    candidates = [os.environ.get("SRE_MARATHON_SHARED_DATA", ""), REPO.parent / "shared" / "data",
                  "/work/shared/data"]
    for cand in candidates:
        if cand and Path(cand).is_dir():
            return Path(cand)
    return REPO.parent / "shared" / "data"


SHARED_DATA = _shared_data()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The directory of real application inputs; the test is skipped when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA} (set SRE_MARATHON_SHARED_DATA)")
    return SHARED_DATA


@pytest.fixture(autouse=True, scope="session")
def _private_state_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Journal and sealing keys go to a per-session state directory, not the user's
    (``SRE_MARATHON_STATE``; subprocesses inherit it). A test of signing makes its own key."""
    os.environ["SRE_MARATHON_STATE"] = str(tmp_path_factory.mktemp("state"))


def need_promtool() -> str:
    """The promtool binary; skips the test without it, except in CI (``CI`` set), where it fails."""
    from alerts.promtool import promtool_path

    exe = promtool_path()
    if exe is None:
        if os.environ.get("CI", "").lower() not in ("", "0", "false"):
            pytest.fail("promtool is required in CI (apt-get install prometheus)")
        pytest.skip("promtool not installed (apt-get install prometheus)")
    return exe
