"""What ``marathon verify --replay`` found for a bundle, remembered per bundle head.

Replay (``marathon verify --replay``, ``engine/run/replay.py``) re-executes a bundle on the
simulator; its verdict is written here, keyed by the bundle's head hash, so the scorer and
the leaderboard can mark a row ``verified`` or ``diverged`` by reading a file, without
importing the run side.

The records live in the per-user cache directory, :func:`cache_root` (``$SRE_MARATHON_CACHE``,
default ``~/.cache/sre-marathon``), under ``noop/replay/<head>.json``: where they have always
been, beside the no-op counterfactual cache (``engine/run/counterfactual.py``), so verdicts
recorded by earlier versions stay readable.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path


def cache_root() -> Path:
    """The per-user cache directory: ``$SRE_MARATHON_CACHE``, else ``~/.cache/sre-marathon``."""
    return Path(os.environ.get("SRE_MARATHON_CACHE") or str(Path.home() / ".cache" / "sre-marathon"))


def status_dir() -> Path:
    """Where replay verdicts are kept (module docstring)."""
    return cache_root() / "noop" / "replay"


def remember(head: str, *, ok: bool, first_difference: str | None, problems: Sequence[str]) -> None:
    """Record a replay's verdict for the bundle whose head hash is ``head``; never raises.

    Args:
        head: the bundle's head (the seal event's hash, 64 hex characters).
        ok: the bundle replayed clean.
        first_difference: the first differing event, in words (None when none differs).
        problems: every other problem the replay found.
    """
    try:
        d = status_dir()
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{head}.json").write_text(json.dumps({"ok": ok, "first_difference": first_difference,
                                                    "problems": list(problems)}, sort_keys=True), encoding="utf-8")
    except OSError:
        pass  # an unwritable cache only loses the leaderboard mark


def replay_status(head: str) -> str | None:
    """``verified``, ``diverged``, or None (never replayed here) for a bundle, by its head hash."""
    if not (len(head) == 64 and all(c in "0123456789abcdef" for c in head)):
        return None
    try:
        data = json.loads((status_dir() / f"{head}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return "verified" if data.get("ok") is True else "diverged"
