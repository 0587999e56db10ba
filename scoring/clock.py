"""Run time as people read it: ``m:ss``, ``h:mm:ss`` from an hour (the scorer's trails, the
terminal app's clock and tables: one formatter, so a time reads the same everywhere)."""

from __future__ import annotations


def fmt_clock(seconds: float | None) -> str:
    """Run time as ``m:ss`` (``h:mm:ss`` from an hour), whole seconds truncated; ``-`` for None."""
    if seconds is None:
        return "-"
    sign = "-" if seconds < 0 else ""
    s = int(abs(seconds))
    if s >= 3600:
        return f"{sign}{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
    return f"{sign}{s // 60}:{s % 60:02d}"
