"""``marathon replay BUNDLE``: a sealed run in the viewer.

The same panes as ``watch``, fed from the bundle's events by the same reducer, with a
playhead: play/pause (``p``/``space``), step a 15 s evaluation interval (``.``/``,``),
speed (``+``/``-``), jump to the next or previous fault (``f``/``F``), firing alert
(``a``/``A``) or operator action (``x``/``X``), seek to any run time (``g``, a click on
the timeline, ``home``/``end``). Seeking restores the nearest keyframe
(:class:`tui.seek.ReplayIndex`). The timeline draws the whole run and dims what lies after
the playhead; stage progress comes from the bundle's final score; the score pane scores
the events up to the playhead.

Opening is cheap (issue 18: a marathon bundle in under 1 s, ``benchmarks/bench_tui.py``): the
bundle is read once and then from the replay cache (:func:`tui.session.load_bundle`), the
first frame is drawn before the scorer's inputs (the bundle's app model and counterfactual)
are parsed, and the score panes fill in from a worker after it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.worker import Worker

from engine.bundle.events import Event
from tui.messages import BundleLoaded
from tui.model import fmt_clock
from tui.scorecalc import ScoreResult
from tui.screens.base import RunScreen
from tui.seek import KEYFRAME_EVERY, ReplayIndex
from tui.session import LoadedBundle, load_bundle
from tui.widgets.actions import ActionsPane
from tui.widgets.alerts import AlertsPane
from tui.widgets.faults import FaultsPane
from tui.widgets.header import speed_label
from tui.widgets.health import HealthPane
from tui.widgets.score import ScorePane
from tui.widgets.timeline import TimelinePane, TimelineView

STEP_S = 15.0
"""``.``/``,`` move the playhead one evaluation interval."""


class ReplayScreen(RunScreen):
    """See module docstring.

    Args:
        path: the bundle or run directory.
        speed: playback speed, run-time seconds per wall second (None: as fast as the screen draws).
        start_at: initial playhead, seconds (default 0).
        paused: start paused.
        loaded: an already loaded bundle (tests and screenshots skip the loading worker).
    """

    MODE = "REPLAY"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("p,space", "pause", "Play/pause", id="pause"),
        Binding("full_stop", "step(1)", "Step", id="step-forward"),
        Binding("comma", "step(-1)", "Step back", show=False, id="step-back"),
        Binding("plus,equals_sign", "faster", "Faster", show=False, id="faster"),
        Binding("minus", "slower", "Slower", show=False, id="slower"),
        Binding("slash", "filter", "Filter", show=False, id="filter"),
        Binding("f", "jump('fault', 1)", "Next fault", id="next-fault"),
        Binding("F", "jump('fault', -1)", "Prev fault", show=False, id="prev-fault"),
        Binding("a", "jump('alert', 1)", "Next alert", id="next-alert"),
        Binding("A", "jump('alert', -1)", "Prev alert", show=False, id="prev-alert"),
        Binding("x", "jump('action', 1)", "Next action", id="next-action"),
        Binding("X", "jump('action', -1)", "Prev action", show=False, id="prev-action"),
        Binding("g", "seek_prompt", "Seek", id="seek"),
        Binding("home", "seek_to(0)", "Start", show=False, id="seek-start", priority=True),
        Binding("end", "seek_end", "End", show=False, id="seek-end", priority=True),
    ]

    def __init__(self, path: str | Path, *, speed: float | None = 30.0, start_at: float | None = None,
                 paused: bool = False, loaded: tuple[LoadedBundle, ReplayIndex] | None = None) -> None:
        super().__init__()
        self.path = Path(path)
        self.speed = speed
        self.playing = not paused
        self.playhead = start_at or 0.0
        self.index: ReplayIndex | None = None
        self.bundle: LoadedBundle | None = None
        self.applied = 0
        self._wall = time.monotonic()
        self._preloaded = loaded
        self._inputs_ready = False

    def compose_body(self) -> ComposeResult:
        with Horizontal(id="row-top"):
            yield FaultsPane(1)
            yield ScorePane(6)
        with Horizontal(id="row-mid"):
            yield AlertsPane(2)
            yield HealthPane(4)
        yield ActionsPane(3)
        yield TimelinePane(5)

    # ------------------------------------------------------------------ loading

    def start_source(self) -> None:
        if self._preloaded is not None:
            self._loaded(*self._preloaded)
        else:
            self.set_notice(f"loading {self.path}...")
            self.load()

    @work(thread=True, exclusive=True, group="load", exit_on_error=False, name="loading the bundle")
    def load(self) -> None:
        bundle = load_bundle(self.path, defer_write=True)
        index = ReplayIndex(bundle.events)
        self.post_message(BundleLoaded(bundle, index))

    def on_bundle_loaded(self, message: BundleLoaded) -> None:
        self._loaded(message.bundle, message.index)
        self.refresh_now()

    def _loaded(self, bundle: LoadedBundle, index: ReplayIndex) -> None:
        self.bundle = bundle
        self.index = index
        self.set_notice("" if bundle.integrity == "sealed" else bundle.integrity,
                        error=bundle.integrity.startswith("DOES NOT"))
        self.query_one(TimelinePane).full_model = index.final
        self.query_one(TimelinePane).end_t = index.end_t
        self.playhead = min(self.playhead, index.end_t)
        self._seek_model(self.playhead)
        self._wall = time.monotonic()
        if self.inline_score:
            self._use_scoring_inputs()
            self._final_score()
        else:
            # the first frame is drawn before the scorer's inputs are parsed (about 0.25 s for
            # a marathon's app model): a worker started now would share the interpreter with it
            self.call_after_refresh(self._final_score)

    def _use_scoring_inputs(self) -> None:
        """Give the scorer the bundle's own app model and counterfactual (or re-simulate one)."""
        assert self.bundle is not None
        bundle = self.bundle
        counterfactual, app_model = bundle.scoring_inputs()
        if app_model is not None:
            self.scorer.use_app(str(bundle.meta.get("app")), app_model)
        if counterfactual is not None:
            self.scorer.counterfactual = counterfactual
        elif bundle.schedule_text and bundle.meta.get("app") is not None:
            self.scorer.use_schedule(str(bundle.meta["app"]), int(bundle.meta.get("seed", 0)), bundle.schedule_text,
                                     wait=self.inline_score)
        self._inputs_ready = True

    def wants_score(self) -> bool:
        return self._inputs_ready and super().wants_score()

    @work(thread=True, exclusive=True, group="final-score", exit_on_error=False, name="scoring the bundle",
          description="scoring the bundle")
    def _final_score(self) -> None:
        # no arguments: Textual's ``work`` describes a worker by the repr of its arguments,
        # which for a marathon's events cost 60 ms of the first frame
        if self.bundle is not None:
            self.bundle.remember()  # the replay cache entry, when this open was a miss
        if not self._inputs_ready:
            self._use_scoring_inputs()
        assert self.index is not None
        result = self.scorer.score(self.index.events)
        if result is not None:
            from tui.messages import ScoreComputed

            self.post_message(ScoreComputed(result, final=True))

    def apply_score(self, result: ScoreResult, final: bool) -> None:
        if final:
            self.final_score = result
            self.stages = result.stages  # stage progress at any playhead comes from the final score
        else:
            self.score_result = result
        self.score_seq += 1

    def score_events(self) -> list[Event]:
        return [] if self.index is None else self.index.events[:self.applied]

    # ------------------------------------------------------------------ the playhead

    @property
    def now(self) -> float:
        return self.playhead

    def pull(self) -> list[Event]:
        wall = time.monotonic()
        elapsed, self._wall = wall - self._wall, wall
        if self.index is None:
            return []
        if self.playing:
            step = elapsed * self.speed if self.speed is not None else STEP_S * 4
            self.playhead = min(self.index.end_t, self.playhead + step)
            if self.playhead >= self.index.end_t:
                self.playing = False
        n = self.index.count_at(self.playhead)
        if n < self.applied or n - self.applied > KEYFRAME_EVERY:
            self._seek_model(self.playhead)
            return []
        events = self.index.events[self.applied:n]
        self.applied = n
        return events

    def absorb(self, events: list[Event]) -> None:
        return None  # the index holds the events

    def tick_clock(self) -> None:
        self.model.advance_clock(self.playhead)

    def _seek_model(self, t: float) -> None:
        assert self.index is not None
        self.applied = self.index.count_at(t)
        self.model = self.index.model_after(self.applied)
        self.model.advance_clock(t)

    def seek(self, t: float) -> None:
        """Move the playhead to run time ``t`` (clamped to the run) and redraw now."""
        if self.index is None:
            return
        self.playhead = max(0.0, min(self.index.end_t, t))
        n = self.index.count_at(self.playhead)
        if n < self.applied or n - self.applied > KEYFRAME_EVERY:
            self._seek_model(self.playhead)
        self._wall = time.monotonic()
        self.refresh_now()

    # ------------------------------------------------------------------ header

    def header_state(self) -> Any:
        state = super().header_state()
        if self.index is not None:
            from dataclasses import replace

            state = replace(state, total=self.index.end_t)
        return state

    def speed_label(self) -> str:
        return speed_label(self.speed)

    def state_label(self) -> str:
        if self.index is None:
            return "loading"
        if self.playing:
            return "playing"
        return "at end" if self.playhead >= self.index.end_t else "paused"

    # ------------------------------------------------------------------ actions

    def action_pause(self) -> None:
        if self.index is not None and not self.playing and self.playhead >= self.index.end_t:
            self.seek(0.0)
        self.playing = not self.playing
        self._wall = time.monotonic()
        self.update_panes()

    def action_step(self, direction: int) -> None:
        self.playing = False
        self.seek(self.playhead + direction * STEP_S)

    def action_faster(self) -> None:
        from tui.screens.watch import next_speed  # not at the top: watch imports the run engine

        self.speed = next_speed(self.speed, 1)
        self.update_panes()

    def action_slower(self) -> None:
        from tui.screens.watch import next_speed

        self.speed = next_speed(self.speed, -1)
        self.update_panes()

    def action_jump(self, kind: str, direction: int) -> None:
        """Jump the playhead to the next (1) or previous (-1) fault, alert or action."""
        if self.index is None:
            return
        t = (self.index.next_mark(kind, self.playhead) if direction > 0
             else self.index.prev_mark(kind, self.playhead))
        if t is None:
            self.notify(f"no {'later' if direction > 0 else 'earlier'} {kind}", severity="warning", timeout=3)
            return
        self.playing = False
        self.seek(t)

    def action_seek_to(self, t: float) -> None:
        self.seek(t)

    def action_seek_end(self) -> None:
        if self.index is not None:
            self.playing = False
            self.seek(self.index.end_t)

    def action_seek_prompt(self) -> None:
        from tui.screens.dialogs import SeekScreen

        if self.index is None:
            return

        def done(t: float | None) -> None:
            if t is not None:
                self.playing = False
                self.seek(t)

        self.app.push_screen(SeekScreen(self.index.end_t), done)

    def on_timeline_view_seek(self, message: TimelineView.Seek) -> None:
        self.playing = False
        self.seek(message.t)

    def action_scorecard(self) -> None:
        from tui.screens.scorecard import ScorecardScreen

        if self.index is None:
            return
        result = self.final_score or self.scorer.score(self.index.events)
        if result is None:
            return
        note = (f"{self.path.name} · {self.bundle.integrity if self.bundle else ''} · the whole run "
                f"(playhead at {fmt_clock(self.playhead)})")
        self.app.push_screen(ScorecardScreen(result.score, end_t=self.index.end_t, header=self.header_state(),
                                             note=note, trails=result.trails))

    def worker_failed(self, worker: Worker[Any]) -> None:
        super().worker_failed(worker)
        if worker.group == "load":
            self.set_notice(f"cannot replay {self.path}: {worker.error}", error=True)
