"""The human operator: the player at the terminal (``marathon play``).

The run loop invokes every operator at its cadence; for a human the invocation is only a
tick of the clock (the policy layer's per-invocation rate limit restarts, the invocation
number advances). The player calls tools whenever they like, from the UI thread through
:meth:`engine.run.session.RunSession.call_tool`, through the same policy layer and recorded in
the same event stream as an agent's calls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.operate.invocation import Invocation

HUMAN = "human"
PRACTICE = "human-practice"
"""Operator names: ``human`` for a scored run on the wall clock at 1x, ``human-practice``
for a faster practice run, so a leaderboard never mixes the two."""


@dataclass
class HumanOperator:
    """An operator whose decisions come from the terminal (module docstring).

    Attributes:
        name: :data:`HUMAN` or :data:`PRACTICE`.
        invocations: the number of the last invocation (the run's operator clock).
    """

    name: str = HUMAN
    invocations: int = 0

    def invoke(self, inv: Invocation) -> None:
        """Record the invocation number; the player acts asynchronously."""
        self.invocations = inv.number
