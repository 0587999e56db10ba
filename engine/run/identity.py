"""Which engine produced a run: its version and a digest of the code that decides what a run does.

Bundles carry :func:`engine_identity` in ``run.start`` (``engine``), so a score, a replay and
a leaderboard row can say which engine sealed it, and ``marathon verify --replay`` can say
when it replays with a different one.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

_PARTS = ("engine", "faults", "alerts", "scoring")
_SUFFIXES = {".py", ".yaml", ".yml", ".json", ".txt", ".md"}


@lru_cache(maxsize=1)
def engine_version() -> str:
    """The installed ``sre-marathon`` distribution's version (``0+unknown`` when not installed)."""
    try:
        return metadata.version("sre-marathon")
    except metadata.PackageNotFoundError:
        return "0+unknown"


@lru_cache(maxsize=1)
def code_sha256() -> str:
    """SHA-256 over the source of the engine, the faults, the alert rules and the scorer
    (every ``.py``/``.yaml``/... file and the app source trees, by relative path), hex."""
    root = Path(__file__).resolve().parents[2]
    h = hashlib.sha256()
    for part in _PARTS:
        for path in sorted(p for p in (root / part).rglob("*") if p.is_file() and "__pycache__" not in p.parts
                           and (p.suffix in _SUFFIXES or "src" in p.parts)):
            h.update(path.relative_to(root).as_posix().encode() + b"\0")
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def engine_identity() -> dict[str, Any]:
    """``{"version": "0.1.0", "code_sha256": <hex>}``: recorded in every ``run.start``."""
    return {"version": engine_version(), "code_sha256": code_sha256()}
