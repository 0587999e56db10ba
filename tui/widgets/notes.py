"""The notes pane: the player's workspace (``notes.md``), written through the
``workspace_write`` tool so notes are part of the run like an agent's workspace.

The pane saves on ``ctrl+s`` and by itself :data:`AUTOSAVE_S` seconds after the last
keystroke; each save is one recorded tool call. After the run has ended the notes are
read-only.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.timer import Timer
from textual.widgets import TextArea

from tui.widgets.pane import Pane, ViewContext

NOTES_FILE = "notes.md"
AUTOSAVE_S = 5.0


class NotesPane(Pane):
    """See module docstring."""

    PANE_ID = "notes"
    TITLE = f"Notes (workspace/{NOTES_FILE})"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+s", "save", "Save notes", id="notes-save")]

    class Save(Message):
        """The notes should be written to the workspace (``text``: the whole file)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, number: int, **kwargs: Any) -> None:
        super().__init__(number, **kwargs)
        self.saved_text = ""
        self._timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield TextArea("", id="notes-text", soft_wrap=True, show_line_numbers=False)

    @property
    def area(self) -> TextArea:
        return self.query_one(TextArea)

    def key(self, ctx: ViewContext) -> Any:
        return ctx.model.ended

    def render_view(self, ctx: ViewContext) -> None:
        self.area.read_only = ctx.model.ended

    @property
    def dirty(self) -> bool:
        return self.area.text != self.saved_text

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if self._timer is not None:
            self._timer.stop()
        if self.dirty:
            self.set_subtitle("unsaved")
            self._timer = self.set_timer(AUTOSAVE_S, self.action_save)

    def action_save(self) -> None:
        """Ask the screen to write the notes (nothing happens when they are saved already)."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self.dirty and not self.area.read_only:
            self.post_message(self.Save(self.area.text))

    def mark_saved(self, text: str, when: str) -> None:
        """The screen wrote ``text`` at run time ``when``."""
        self.saved_text = text
        self.set_subtitle(f"saved {when}" if not self.dirty else "unsaved")
