"""The Textual app hosting the watch, play and replay screens.

App-wide conventions: ``?`` help for the current screen (every key, with its binding id;
Textual's own focus, copy and scrolling keys have none and are marked so), ``:`` jump between panes and
screens, ``ctrl+p`` the command palette (every tool in play, every pane, the scorecard),
``q`` quit; the run beneath help, the ``:`` prompt and the palette keeps refreshing
(:mod:`tui.screens.base`); remappable keys (:mod:`tui.keymap`); toasts for effects off-screen; and
:meth:`MarathonApp.report_error`, where every worker failure becomes a visible notice
instead of a crash.

Garbage collection: once the first screen is up (:meth:`MarathonApp.on_ready`), everything
allocated so far (Textual, the app model, an in-process run's simulator, hundreds of
thousands of objects) is moved out of the collector's reach with :func:`gc.freeze`. It
stays alive either way; what changes is that a full collection no longer walks it, which
took 140-200 ms of the UI thread every ten or so refresh cycles of a Train Ticket watch
(the p95 of ``benchmarks/bench_tui.py``'s apply-one-second figure). The youngest
generation is also collected after :data:`GC_YOUNG_THRESHOLD` net allocations instead of
CPython's 700: a refresh cycle allocates tens of thousands of short-lived objects (cells,
strips, segments) that die by reference counting anyway, and the ~11 young collections per
cycle cost ~7 ms of it; at 10,000 they cost ~1 ms (same benchmark, same minute).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar

from textual import events
from textual._path import CSSPathType
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen

from tui.keymap import DEFAULT_PATH, ENV

STYLES = Path(__file__).parent / "styles"
GC_YOUNG_THRESHOLD = 10_000
"""Net allocations between collections of the youngest generation (module docstring)."""
CSS_FILES = ["app.tcss", "panes.tcss", "run.tcss", "dialogs.tcss", "scorecard.tcss"]


def binding_ids() -> dict[str, list[type]]:
    """Every binding id of the app's screens, dialogs and widgets -> the classes that declare it
    (what a keymap file may name). Textual's own bindings have no id and cannot be remapped."""
    from textual.dom import DOMNode

    import tui.screens.dialogs
    import tui.screens.play
    import tui.screens.replay
    import tui.screens.scorecard
    import tui.screens.watch  # noqa: F401 (their classes declare the bindings)

    out: dict[str, list[type]] = {}
    stack: list[type] = [DOMNode]
    seen: set[type] = set()
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        stack.extend(cls.__subclasses__())
        if not cls.__module__.startswith("tui."):
            continue
        for b in cls.__dict__.get("BINDINGS", []):
            if isinstance(b, Binding) and b.id:
                out.setdefault(b.id, []).append(cls)
    return out


def check_keymap(keymap: dict[str, str]) -> list[str]:
    """Problems of a keymap (binding id -> keys) that still lets the app run: a key that another
    binding of the same screen or widget already uses, which the remap takes away from it.

    Raises:
        KeymapError: an id no binding has (with the closest ids; ``?`` lists them all).
    """
    import difflib

    from tui.keymap import KeymapError

    known = binding_ids()
    unknown = sorted(set(keymap) - set(known))
    if unknown:
        hints = []
        for bid in unknown:
            close = difflib.get_close_matches(bid, list(known), n=3)
            hints.append(f"{bid!r}" + (f" (did you mean {', '.join(close)}?)" if close else ""))
        raise KeymapError(f"keymap: no binding has the id {', '.join(hints)}; ? in the app lists every id")
    problems = []
    for bid, keys in keymap.items():
        for cls in known[bid]:
            chain = [c for c in cls.__mro__ if "BINDINGS" in c.__dict__] + [MarathonApp]
            for other in (b for c in chain for b in c.__dict__["BINDINGS"] if isinstance(b, Binding)):
                if not other.id or other.id == bid:
                    continue
                their = set(keymap.get(other.id, other.key).split(","))
                clash = their & {k.strip() for k in keys.split(",")}
                if clash:
                    problems.append(f"keymap: {bid} = {keys!r} takes {', '.join(sorted(clash))} from {other.id} "
                                    f"({other.description or other.action}) on {cls.__name__}")
    return sorted(set(problems))


class MarathonApp(App[None]):
    """The terminal app (module docstring).

    Args:
        make_screen: builds the first screen (watch, play or replay).
        keymap: binding id -> keys, applied over the defaults.
        title: the terminal title.
        cursor_blink: let cursors blink (off for deterministic screenshots).
    """

    TITLE = "SRE-Marathon"
    CSS_PATH: ClassVar[CSSPathType] = [STYLES / name for name in CSS_FILES]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", id="help"),
        Binding("colon", "jump", "Jump", id="jump"),
        Binding("q", "quit_app", "Quit", id="quit"),
        # Textual's own ctrl+q quits at once; here it asks first on a run in progress, as q does
        Binding("ctrl+q", "quit_app", "Quit", show=False, priority=True, id="quit-ctrl-q"),
    ]
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]  # noqa: RUF012 (typed by Textual)
    VERTICAL_BREAKPOINTS = [(0, "-short"), (30, "-tall")]  # noqa: RUF012 (typed by Textual)
    ENABLE_COMMAND_PALETTE = True

    def __init__(self, make_screen: Callable[[], Screen[Any]], *, keymap: dict[str, str] | None = None,
                 title: str | None = None, cursor_blink: bool = True) -> None:
        super().__init__()
        self._make_screen = make_screen
        self.cursor_blink = cursor_blink
        self.errors: list[str] = []
        self._gc_threshold: tuple[int, int, int] | None = None
        if title:
            self.title = title
        self.keymap_warnings: list[str] = []
        if keymap:
            self.keymap_warnings = check_keymap(keymap)
            self.set_keymap(keymap)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """With ``cursor_blink`` off (screenshots, snapshot tests), focused inputs show a steady cursor."""
        if not self.cursor_blink and hasattr(event.widget, "cursor_blink"):
            event.widget.cursor_blink = False

    def on_ready(self) -> None:
        """Freeze what start-up allocated, after one collection so no garbage is frozen, and collect the
        youngest generation less often (module docstring)."""
        for warning in self.keymap_warnings:
            self.notify(warning, title="keymap", severity="warning", timeout=12)
        gc.collect()
        gc.freeze()
        self._gc_threshold = gc.get_threshold()
        gc.set_threshold(GC_YOUNG_THRESHOLD, *self._gc_threshold[1:])

    def on_unmount(self) -> None:
        """Give the frozen objects back to the collector: the app's widget tree, once closed, is
        cyclic garbage, and a process that runs several apps (tests) must be able to free it."""
        gc.unfreeze()
        if self._gc_threshold is not None:
            gc.set_threshold(*self._gc_threshold)

    def get_default_screen(self) -> Screen[Any]:
        return self._make_screen()

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        commands = getattr(screen, "commands", None)
        if callable(commands):
            for title, help_text, callback in commands():
                yield SystemCommand(title, help_text, callback)

    def report_error(self, where: str, error: BaseException) -> None:
        """Show a failure as a notice (toast and header) and keep running."""
        text = f"{where} failed: {type(error).__name__}: {error}"
        self.errors.append(text)
        self.log.error(text)
        self.notify(text, title="Error", severity="error", timeout=12)
        for screen in self.screen_stack:
            set_notice = getattr(screen, "set_notice", None)
            if callable(set_notice):
                set_notice(text, error=True)

    def action_help(self) -> None:
        """Open the list of every key of the current screen."""
        from tui.screens.dialogs import HelpScreen

        screen = self.screen
        if isinstance(screen, HelpScreen):
            return
        groups: dict[str, list[Any]] = {}
        for active in screen.active_bindings.values():
            b = active.binding
            group = groups.setdefault(b.id or f"~{b.description or b.action}", [[], b, active.enabled])
            display = self.get_key_display(b)
            if display not in group[0]:
                group[0].append(display)
        # the app's and screen's own keys (they have ids) first, then the focused widget's
        ordered = sorted(groups.items(), key=lambda kv: (kv[0].startswith("~"), kv[0]))
        # keys of our own bindings (they all have ids) hide a built-in one on the same key; the rest of
        # Textual's (focus, copy, scrolling) have no id: listed as such, they cannot be remapped by id
        ours = {k for bid, (keys, _, _) in groups.items() if not bid.startswith("~") for k in keys}
        rows = [(" ".join(keys), (b.description or b.action) + ("" if enabled else " (unavailable now)"),
                 b.id or "(Textual's: no id)") for bid, (keys, b, enabled) in ordered
                if not bid.startswith("~") or not set(keys) <= ours]
        hint = (f"Remap keys by binding id in {DEFAULT_PATH} (or ${ENV}, or --keymap FILE): "
                'a [keymap] table of id = "key" pairs.')
        self.push_screen(HelpScreen(f"Keys · {type(screen).__name__.removesuffix('Screen')}", rows, hint))

    def action_jump(self) -> None:
        """The ``:`` prompt over the current screen's panes and screens."""
        from tui.screens.dialogs import JumpScreen

        screen = self.screen
        targets = getattr(screen, "jump_targets", None)
        if not callable(targets):
            return

        def go(target: str | None) -> None:
            if target:
                screen.jump_to(target)  # type: ignore[attr-defined]

        self.push_screen(JumpScreen(targets()), go)

    def action_quit_app(self) -> None:
        """Quit (the play screen asks first, also from under a dialog: quitting abandons the run)."""
        from tui.screens.dialogs import ConfirmCall

        if isinstance(self.screen, ConfirmCall):
            return  # already asking (a second ctrl+q must not stack another question)
        for screen in reversed(self.screen_stack):
            confirm = getattr(screen, "confirm_quit", None)
            if callable(confirm):
                confirm()
                return
        self.exit()
