"""Typed messages the workers post back to the screens (STYLE: workers post typed Messages).

Tests capture them with ``App.run_test(message_hook=...)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:  # annotations only: the tool layer and the run session cost replay 0.3 s of imports
    from engine.operate.tools import ToolResult
    from engine.run.session import SealOutcome
    from tui.scorecalc import ScoreResult
    from tui.seek import ReplayIndex
    from tui.session import LoadedBundle


class RunFinished(Message, bubble=False):
    """The in-process run ended (``finished``) or was stopped, and was sealed (``outcome``)."""

    def __init__(self, finished: bool, outcome: SealOutcome) -> None:
        super().__init__()
        self.finished = finished
        self.outcome = outcome


class FollowEnded(Message, bubble=False):
    """The followed run was sealed, or ended and went quiet."""

    def __init__(self, sealed: bool) -> None:
        super().__init__()
        self.sealed = sealed


class ScoreComputed(Message, bubble=False):
    """A score of the events so far (or up to the replay's playhead)."""

    def __init__(self, result: ScoreResult, final: bool = False) -> None:
        super().__init__()
        self.result = result
        self.final = final


class ToolDone(Message, bubble=False):
    """A tool call the player made returned."""

    def __init__(self, tool: str, args: dict[str, Any], result: ToolResult, t: float) -> None:
        super().__init__()
        self.tool = tool
        self.args = args
        self.result = result
        self.t = t


class BundleLoaded(Message, bubble=False):
    """A bundle was read, verified and indexed for replay."""

    def __init__(self, bundle: LoadedBundle, index: ReplayIndex) -> None:
        super().__init__()
        self.bundle = bundle
        self.index = index


class PanesRefreshed(Message, bubble=False):
    """A refresh cycle applied ``applied`` events (through seq ``seq``) in ``elapsed_s`` wall seconds."""

    def __init__(self, applied: int, seq: int, elapsed_s: float) -> None:
        super().__init__()
        self.applied = applied
        self.seq = seq
        self.elapsed_s = elapsed_s

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, PanesRefreshed)
