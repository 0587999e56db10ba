"""argparse types shared by the command lines (``marathon``, ``marathon serve``, the terminal app)."""

from __future__ import annotations

import argparse
import math


def seed_arg(text: str) -> int:
    """argparse type for seeds: a non-negative integer."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid seed {text!r}: expected a non-negative integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"invalid seed {value}: seeds are non-negative integers")
    return value


def speed_arg(text: str) -> float:
    """argparse type for ``--speed``: a finite number >= 0 (0: virtual clock, as fast as possible)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid speed {text!r}: expected a number") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"invalid speed {text!r}: expected a finite number >= 0 "
                                         "(0: as fast as possible)")
    return value


def add_rules_argument(p: argparse.ArgumentParser) -> None:
    """``--rules``: the alert rule pack of a run (recorded in its bundle)."""
    p.add_argument("--rules", default="paper", metavar="PACK|FILE",
                   help="alert rule pack: paper (default: SRE-Marathon's Tables 4 and 6, the frozen pack every "
                        "leaderboard uses), extended (paper plus per-service error-rate rules), or a Prometheus "
                        "rule file")
