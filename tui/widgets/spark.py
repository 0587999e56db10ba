"""Sparklines and bars as plain text (no UI imports: unit-testable and cheap).

Eight block heights (``▁`` .. ``█``); a value of None (a sample without requests) is a space.
"""

from __future__ import annotations

from collections.abc import Sequence

BLOCKS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float | None], width: int, *, lo: float = 0.0, hi: float | None = None,
              floor_hi: float = 0.0) -> str:
    """The last ``width`` values as a sparkline, right-aligned (padded with spaces on the left).

    Args:
        values: oldest first; None draws a space.
        width: characters.
        lo: the value drawn as the lowest block.
        hi: the value drawn as the full block (default: the largest value shown, at least
            ``floor_hi``, so small noise on a quiet series stays low).
        floor_hi: the smallest ``hi`` used when ``hi`` is not given.
    """
    if width <= 0:
        return ""
    shown = list(values[-width:])
    nums = [v for v in shown if v is not None]
    top = hi if hi is not None else max([floor_hi, *nums]) if nums else floor_hi
    span = top - lo
    out = []
    for v in shown:
        if v is None:
            out.append(" ")
        elif span <= 0:
            out.append(BLOCKS[0])
        else:
            frac = min(1.0, max(0.0, (v - lo) / span))
            out.append(BLOCKS[min(len(BLOCKS) - 1, int(frac * (len(BLOCKS) - 1) + 0.5))])
    return " " * (width - len(out)) + "".join(out)


def bar(fraction: float, width: int, *, full: str = "█", empty: str = "░") -> str:
    """A horizontal progress bar of ``width`` characters, ``fraction`` (0..1) filled."""
    if width <= 0:
        return ""
    n = round(max(0.0, min(1.0, fraction)) * width)
    return full * n + empty * (width - n)
