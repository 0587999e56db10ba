"""Left only for one caller: ``engine/operate/tools.py`` imports ``_set_flag`` from here.

Fault injection and revert moved to :mod:`engine.sim.faults` (behind
:meth:`engine.substrate.Substrate.apply_fault`), the reference remedy and the flag edit to
:mod:`faults.remedy`. Delete this module once ``tools.py`` imports
:func:`faults.remedy.set_flag` instead.
"""

from __future__ import annotations

from faults.remedy import set_flag as _set_flag

__all__ = ["_set_flag"]
