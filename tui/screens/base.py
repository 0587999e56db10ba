"""The base of the run screens (watch, play, replay): panes, the refresh cycle, scoring,
and the shared conventions (``p`` pause, ``/`` filter, ``esc`` back, number keys toggle
panes, ``s`` scorecard).

The refresh cycle is a one-shot timer re-armed when a cycle finishes, so cycles never
overlap. It keeps going beneath a dialog (a form, ``?`` help, the ``:`` prompt, a
confirmation, the command palette): those are translucent modal screens, and Textual
(8.2.8) composites the screen beneath them and forwards the regions its widgets mark dirty
to the terminal update of the screen on top (``Screen.is_current`` is true for it), so
the clock, alerts and health stay live while the player fills a form (Textual also marks
such a screen for a full repaint after each forward, so every cycle would resend the whole
terminal, ~10 KB at 120x36: the cycle clears that mark unless the layout moved, and a cycle
with nothing new sends nothing). Beneath a dialog
the cycle runs at most every :data:`DIALOG_REFRESH_S` and waits :data:`DIALOG_COST_FACTOR`
times its own cost between cycles, so the dialog's keys get most of the UI thread; under an
opaque screen (the scorecard) it skips, and events wait in the source's feed to be applied
in one batch afterwards. Each cycle drains the source, applies the events
to the :class:`~tui.model.RunModel`, and lets every visible pane re-render if what it
shows changed. The running score is :func:`scoring.score.score_events` over the events so
far, in a worker, no more often than every :data:`SCORE_MIN_INTERVAL_S` seconds and never
more than a :data:`SCORE_MAX_DUTY` share of the time (a long marathon's score takes
longer, so it is refreshed less often).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input
from textual.worker import Worker, WorkerState, get_current_worker

from engine.bundle.events import Event
from tui.messages import PanesRefreshed, ScoreComputed
from tui.model import RunModel
from tui.scorecalc import Scorer, ScoreResult, StageTimes
from tui.widgets.header import HeaderState, RunHeader
from tui.widgets.pane import Pane, ViewContext

REFRESH_S = 0.25
"""Seconds between refresh cycles (4 frames a second is plenty for 15 s health samples)."""
DIALOG_REFRESH_S = 0.5
"""Seconds between refresh cycles while a dialog covers the screen (the clock shows whole seconds)."""
COST_FACTOR = 2.0
DIALOG_COST_FACTOR = 4.0
"""A cycle waits at least this many times the last cycle's cost before the next (more beneath a dialog,
where the player is typing)."""
SCORE_MIN_INTERVAL_S = 1.0
SCORE_MAX_DUTY = 0.2

PANE_KEYS = [Binding(str(n), f"toggle_pane({n})", f"Toggle pane {n}", show=False, id=f"pane-{n}")
             for n in range(1, 10)]


class RunScreen(Screen[None]):
    """Shared machinery of the run screens (module docstring). Subclasses compose the panes
    and implement :meth:`pull` (new events) and :meth:`header_state`."""

    MODE = "WATCH"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("p", "pause", "Pause", id="pause"),
        Binding("slash", "filter", "Filter", id="filter"),
        Binding("escape", "back", "Back", show=False, id="back"),
        Binding("s", "scorecard", "Scorecard", id="scorecard"),
        *PANE_KEYS,
    ]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.model = RunModel()
        self.events: list[Event] = []
        self.needle = ""
        self.reveal = True
        self.score_result: ScoreResult | None = None
        self.final_score: ScoreResult | None = None
        self.stages: StageTimes = {}
        self.score_seq = 0
        self.scorer = Scorer()
        self._scoring = False
        self._score_wall = 0.0
        self._scored_seq = -1
        self._timer: Timer | None = None
        self.notice = ""
        self.notice_error = False
        self.cycles = 0
        self._cycle_s = 0.0
        self.inline_score = False
        """Score in the refresh cycle instead of a worker (deterministic screenshots and tests)."""

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield RunHeader(id="header")
        yield from self.compose_body()
        yield Input(placeholder="filter rows of every pane (enter: keep, esc: clear)", id="filter", classes="hidden")
        yield Footer(show_command_palette=False)

    def compose_body(self) -> ComposeResult:
        """The panes (subclasses)."""
        raise NotImplementedError
        yield  # pragma: no cover

    def panes(self) -> list[Pane]:
        return list(self.query(Pane))

    def pane(self, pane_id: str) -> Pane:
        return self.query_one(f"#pane-{pane_id}", Pane)

    # ------------------------------------------------------------------ the cycle

    def on_mount(self) -> None:
        self.start_source()
        self.refresh_now()
        self._arm()

    def on_unmount(self) -> None:
        if self._timer is not None:
            self._timer.stop()
        self.stop_source()

    def start_source(self) -> None:
        """Start the workers that produce events (subclasses)."""

    def stop_source(self) -> None:
        """Stop them (subclasses)."""

    @property
    def covered(self) -> bool:
        """Whether a dialog is open over this screen (it is still visible beneath it)."""
        return self.app.screen is not self

    def _arm(self) -> None:
        # a slow cycle (a busy marathon) waits longer, so keys always get most of the UI thread
        if self.covered:
            wait = max(DIALOG_REFRESH_S, DIALOG_COST_FACTOR * self._cycle_s)
        else:
            wait = max(REFRESH_S, COST_FACTOR * self._cycle_s)
        self._timer = self.set_timer(wait, self._cycle)

    def _cycle(self) -> None:
        try:
            # is_current: this screen is on top, or visible beneath a translucent dialog (module docstring)
            if self.is_current:
                covered = self.covered
                if covered:
                    # Textual 8.2.8 marks a screen beneath a dialog for a full repaint each time it forwards
                    # its dirty regions, so every message it handles repaints the whole terminal (~10 KB at
                    # 120x36); only the regions the panes mark dirty need to go (module docstring) ...
                    self._repaint_required = False
                started = time.perf_counter()
                self.refresh_now()
                self._cycle_s = time.perf_counter() - started
                if covered and self._layout_required:
                    self._repaint_required = True  # ... unless the layout moves: then all of it
        except Exception as exc:  # a defect in a pane must not take the run down
            self.app.report_error("refreshing the panes", exc)  # type: ignore[attr-defined]
        finally:
            if self.is_attached:
                self._arm()

    def pull(self) -> list[Event]:
        """Events that arrived since the last cycle (subclasses)."""
        return []

    def tick_clock(self) -> None:
        """Move the model's clock between events (subclasses with a live clock or playhead)."""

    @property
    def now(self) -> float:
        return self.model.t

    def context(self) -> ViewContext:
        return ViewContext(self.model, self.now, self.stages if self.reveal else {},
                           self.score_result if self.reveal else None, self.needle, self.reveal, self.score_seq)

    def refresh_now(self) -> int:
        """One refresh cycle, now: apply new events, update panes and header; returns events applied."""
        started = time.perf_counter()
        events = self.pull()
        if events:
            self.model.apply_many(events)
            self.absorb(events)
        self.tick_clock()
        self.update_panes()
        self.maybe_score()
        self.cycles += 1
        if events:
            self.post_message(PanesRefreshed(len(events), self.model.seq, time.perf_counter() - started))
        return len(events)

    def absorb(self, events: list[Event]) -> None:
        """Keep the events for scoring (replay keeps its own index instead)."""
        self.events.extend(events)

    def update_panes(self, force: bool = False) -> None:
        ctx = self.context()
        with self.app.batch_update():
            for pane in self.panes():
                if pane.display:
                    pane.update_view(ctx, force=force)
            self.query_one(RunHeader).state = self.header_state()

    def header_state(self) -> HeaderState:
        m = self.model.meta
        return HeaderState(mode=self.MODE, run_id=self.model.run_id, app=str(m.get("app", "")), seed=m.get("seed"),
                           regime=str(m.get("regime", "")), operator=str(m.get("operator", "")), now=self.now,
                           total=self.model.duration_s, state=self.state_label(), notice=self.notice,
                           notice_error=self.notice_error, speed=self.speed_label(),
                           rules_failing=len(self.model.failing_rules()), filter=self.needle,
                           filter_counts=self.filter_counts())

    def state_label(self) -> str:
        return "ended" if self.model.ended else "running"

    def speed_label(self) -> str:
        return ""

    def set_notice(self, text: str, error: bool = False) -> None:
        """Show ``text`` at the end of the header (errors in red)."""
        self.notice, self.notice_error = text, error
        if self.is_attached:
            self.query_one(RunHeader).state = self.header_state()

    # ------------------------------------------------------------------ scoring

    def score_events(self) -> list[Event]:
        """The events the running score covers (subclasses may narrow it, e.g. to a playhead)."""
        return self.events

    def wants_score(self) -> bool:
        return self.reveal

    def maybe_score(self, force: bool = False) -> None:
        """Start a score of the events so far when due (module docstring)."""
        events = self.score_events()
        if not events or self._scoring or not self.wants_score():
            return
        seq = events[-1].seq
        if seq == self._scored_seq and not force:
            return
        last = self.score_result.elapsed_s if self.score_result else 0.0
        wait = max(SCORE_MIN_INTERVAL_S, last / SCORE_MAX_DUTY)
        if not force and not self.inline_score and time.monotonic() - self._score_wall < wait:
            return
        final = self.model.ended and events is self.events
        self._score_wall = time.monotonic()
        if self.inline_score:
            result = self.scorer.score(events)
            if result is not None:
                self.on_score_computed(ScoreComputed(result, final))
            return
        self._scoring = True
        self._score_worker(list(events), final=final)

    @work(thread=True, exclusive=True, group="score", exit_on_error=False, name="score", description="score")
    def _score_worker(self, events: list[Event], final: bool) -> None:
        # ``description`` given: Textual's default is the repr of the arguments, every event so
        # far, composed in the UI thread (a Train Ticket marathon: ~0.1 s per score started)
        worker = get_current_worker()
        result = self.scorer.score(events)
        if result is not None and not worker.is_cancelled:
            self.post_message(ScoreComputed(result, final))

    def on_score_computed(self, message: ScoreComputed) -> None:
        self._scoring = False
        self._scored_seq = message.result.seq
        self.apply_score(message.result, message.final)

    def apply_score(self, result: ScoreResult, final: bool) -> None:
        """Take a new score (subclasses decide where stage times come from)."""
        self.score_result = result
        self.stages = result.stages
        if final:
            self.final_score = result
        self.score_seq += 1

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The central handler: a worker that failed becomes a notice, never a crash."""
        if event.state != WorkerState.ERROR:
            return
        if event.worker.group == "score":
            self._scoring = False
        self.worker_failed(event.worker)

    def worker_failed(self, worker: Worker[Any]) -> None:
        error = worker.error or RuntimeError("unknown error")
        self.app.report_error(worker.name or worker.group, error)  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ conventions

    def pane_numbers(self) -> dict[int, Pane]:
        return {p.number: p for p in self.panes()}

    def can_show(self, pane: Pane) -> str | None:
        """Why ``pane`` may not be shown now, or None."""
        return None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Number keys exist only for the panes this screen has."""
        return not (action == "toggle_pane" and parameters and parameters[0] not in self.pane_numbers())

    def action_toggle_pane(self, number: int) -> None:
        """Show or hide pane ``number``."""
        pane = self.pane_numbers().get(number)
        if pane is None:
            self.notify(f"no pane {number} on this screen", severity="warning")
            return
        if not pane.display:
            why = self.can_show(pane)
            if why:
                self.notify(why, severity="warning")
                return
            pane.display = True
            pane.update_view(self.context(), force=True)
            pane.focus_main()
        else:
            pane.display = False

    def jump_targets(self) -> list[tuple[str, str]]:
        """What ``:`` can jump to: panes, then screens."""
        out = [(p.PANE_ID, f"[{p.number}] {p.TITLE}" + ("" if p.display else " (hidden)"))
               for p in sorted(self.panes(), key=lambda p: p.number) if self.can_show(p) is None]
        out += [("scorecard", "the scorecard"), ("help", "every key of this screen")]
        return out

    def jump_to(self, target: str) -> None:
        """Focus (and show) a pane, or open a screen."""
        if target == "scorecard":
            self.action_scorecard()
            return
        if target == "help":
            self.app.action_help()  # type: ignore[attr-defined]
            return
        for pane in self.panes():
            if target == pane.PANE_ID:
                if not pane.display:
                    self.action_toggle_pane(pane.number)
                pane.focus_main()
                return

    def filter_counts(self) -> tuple[tuple[str, int, int], ...]:
        """(pane, rows matching, rows unfiltered) of each shown pane that counts them, while filtered."""
        if not self.needle:
            return ()
        out = []
        for pane in sorted(self.panes(), key=lambda p: p.number):
            if pane.display and pane.filter_counts is not None:
                out.append((pane.PANE_ID, *pane.filter_counts))
        return tuple(out)

    def on_run_header_clear_filter(self, message: RunHeader.ClearFilter) -> None:
        self.clear_filter()

    def clear_filter(self) -> None:
        """Drop the ``/`` filter (and its chip); the panes list everything again."""
        box = self.query_one("#filter", Input)
        box.value = ""
        box.add_class("hidden")
        self.needle = ""
        self.update_panes()

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.remove_class("hidden")
        box.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self.needle = event.value.strip()
            self.update_panes()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            event.input.add_class("hidden")
            self.focus_first_pane()

    def focus_first_pane(self) -> None:
        for pane in sorted(self.panes(), key=lambda p: p.number):
            if pane.display:
                pane.focus_main()
                return

    def action_back(self) -> None:
        """esc: clear the filter if one is set, else leave the focused pane."""
        box = self.query_one("#filter", Input)
        if self.needle or not box.has_class("hidden"):
            self.clear_filter()
            self.focus_first_pane()
            return
        self.set_focus(None)

    def action_pause(self) -> None:
        """Pause or resume (subclasses)."""

    def action_scorecard(self) -> None:
        """Open the scorecard of the run so far (subclasses)."""

    def commands(self) -> Iterable[tuple[str, str, Any]]:
        """Command palette entries: (title, help, callback)."""
        for pane in sorted(self.panes(), key=lambda p: p.number):
            yield (f"Pane: toggle {pane.TITLE}", f"show or hide pane {pane.number}",
                   lambda n=pane.number: self.action_toggle_pane(n))
        yield ("Scorecard", "the scorecard of the run so far", self.action_scorecard)
        yield ("Filter rows", "filter every pane's rows (/)", self.action_filter)
