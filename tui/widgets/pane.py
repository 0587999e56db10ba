"""The pane base class and the context every pane renders from.

A pane is a bordered container titled ``[n] Name`` (``n``: the number key that toggles
it). It re-renders only when the revisions it depends on moved (:meth:`Pane.key`), and
its border only when its subtitle changed (:meth:`Pane.set_subtitle`), so a refresh cycle
over many panes costs only what changed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.containers import Vertical
from textual.geometry import Region

from tui.model import RunModel
from tui.scorecalc import ScoreResult, StageTimes


@dataclass
class ViewContext:
    """What panes render: the model, the clock, the scorer's view and the filter.

    Attributes:
        model: the run's view model.
        now: the clock shown (the live run clock, or the replay playhead), seconds.
        stages: when each fault reached each stage (from the latest score); empty when hidden.
        score: the latest running score, or None (not computed yet, or hidden in play).
        needle: the ``/`` filter text.
        reveal: whether ground truth may be shown (False while a player plays).
        score_seq: changes whenever ``score``/``stages`` change.
    """

    model: RunModel
    now: float
    stages: StageTimes = field(default_factory=dict)
    score: ScoreResult | None = None
    needle: str = ""
    reveal: bool = True
    score_seq: int = -1


class Pane(Vertical):
    """A bordered, numbered pane (module docstring)."""

    PANE_ID = ""
    TITLE = ""
    filter_counts: tuple[int, int] | None = None
    """(rows matching, rows listed unfiltered) while the ``/`` filter is set, for panes that count
    them (their subtitle says ``n of m ... match``; the header's chip lists them); else None."""

    def __init__(self, number: int, **kwargs: Any) -> None:
        super().__init__(id=f"pane-{self.PANE_ID}", classes="pane", **kwargs)
        self.number = number
        self.border_title = f"[{number}] {self.TITLE}"
        self._last_key: Any = None
        self._subtitle: str | None = None
        self.renders = 0

    def set_subtitle(self, text: str) -> None:
        """Show ``text`` in the bottom border, repainting that line only (nothing when it is already shown).

        Textual's ``border_subtitle`` setter repaints the whole pane, and with it every line
        of every child under it: with counts in most subtitles, that was a third of the lines
        a Train Ticket watch repainted per refresh (``benchmarks/bench_tui.py``).
        """
        if text == self._subtitle:
            return
        first = self._subtitle is None
        self._subtitle = text
        if first or not self.is_mounted or not self.outer_size.height:
            self.border_subtitle = text
            return
        self.refresh = self._no_refresh  # type: ignore[method-assign]  # the setter's full repaint
        try:
            self.border_subtitle = text
        finally:
            del self.refresh
        offset, outer = self.content_offset, self.outer_size
        # refresh regions are relative to the content area; the bottom border lies below it
        self.refresh(Region(-offset.x, outer.height - 1 - offset.y, outer.width, 1))

    def _no_refresh(self, *regions: Region, repaint: bool = True, layout: bool = False,
                    recompose: bool = False) -> Pane:
        return self

    def key(self, ctx: ViewContext) -> Any:
        """What the pane's content depends on; the pane re-renders when it changes."""
        return (id(ctx.model), ctx.model.revisions["header"], ctx.needle)

    def update_view(self, ctx: ViewContext, *, force: bool = False) -> bool:
        """Re-render from ``ctx`` if anything it depends on moved; returns whether it did."""
        key = self.key(ctx)
        if key == self._last_key and not force:
            return False
        self._last_key = key
        self.render_view(ctx)
        self.renders += 1
        return True

    def render_view(self, ctx: ViewContext) -> None:
        """Bring the pane's widgets up to date (subclasses)."""
        raise NotImplementedError

    def focus_main(self) -> None:
        """Focus the pane's main widget."""
        for child in self.query("*"):
            if child.focusable:
                child.focus()
                return
