"""``marathon watch``: an agent's run, live.

The engine runs in-process in a worker thread (:class:`engine.run.session.RunSession`), as fast
as possible or at a speed, pausable (``p``) and re-paced live (``+``/``-``); or, with
``--follow RUN_DIR``, the screen tails a run another process is recording. Panes: the
live faults with their stage progress (ground truth, for watchers), alerts grouped by the
operator's incidents, the operator's tool calls with the policy's decisions, service
health, the timeline and the running score. When the run ends it is sealed into a bundle
and a toast says how to replay it.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.worker import Worker, get_current_worker

from engine.bundle.events import Event
from engine.run.session import RunSession
from tui.messages import FollowEnded, RunFinished
from tui.screens.base import RunScreen
from tui.session import UI_YIELD_S, EventFeed, FollowTail
from tui.widgets.actions import ActionsPane
from tui.widgets.alerts import AlertsPane
from tui.widgets.faults import FaultsPane
from tui.widgets.header import speed_label
from tui.widgets.health import HealthPane
from tui.widgets.score import ScorePane
from tui.widgets.timeline import TimelinePane

SPEEDS: tuple[float | None, ...] = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, None)
"""The ``+``/``-`` ladder of run-time seconds per wall second (None: as fast as possible)."""


def next_speed(speed: float | None, step: int) -> float | None:
    """The next speed up (step 1) or down (step -1) the ladder."""
    ladder = range(len(SPEEDS) - 1)
    i = len(SPEEDS) - 1 if speed is None else min(ladder, key=lambda k: abs((SPEEDS[k] or 0.0) - speed))
    return SPEEDS[max(0, min(len(SPEEDS) - 1, i + step))]


class WatchScreen(RunScreen):
    """See module docstring.

    Args:
        session: the in-process run (watch mode).
        follow: the tailed run directory (follow mode); exactly one of the two.
        autostart: start the engine or the tail (tests and screenshots drive it themselves).
    """

    MODE = "WATCH"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("plus,equals_sign", "faster", "Faster", id="faster"),
        Binding("minus", "slower", "Slower", id="slower"),
    ]

    def __init__(self, *, session: RunSession | None = None, follow: FollowTail | None = None,
                 autostart: bool = True) -> None:
        super().__init__()
        if (session is None) == (follow is None):
            raise ValueError("watch needs exactly one of session or follow")
        self.session = session
        self.follow = follow
        self.autostart = autostart
        self.frozen = False
        self._follow_feed = None if follow is None else EventFeed()
        self._feed = EventFeed()
        if session is not None:
            session.subscribe(self._feed.push, past=True)
        self.outcome_text = ""

    def compose_body(self) -> ComposeResult:
        with Horizontal(id="row-top"):
            yield FaultsPane(1)
            yield ScorePane(6)
        with Horizontal(id="row-mid"):
            yield AlertsPane(2)
            yield HealthPane(4)
        yield ActionsPane(3)
        yield TimelinePane(5)

    # ------------------------------------------------------------------ sources

    def start_source(self) -> None:
        if not self.autostart:
            return
        if self.session is not None:
            run = self.session.run
            self.scorer.use_schedule(run.schedule.app, run.seed, run.schedule_text, wait=self.inline_score)
            self.run_engine()
        else:
            self.run_follow()

    def stop_source(self) -> None:
        if self.session is not None:
            self.session.stop()

    @work(thread=True, exclusive=True, group="engine", exit_on_error=False, name="engine")
    def run_engine(self) -> None:
        """Drive the run to its end (or until cancelled), then seal it."""
        assert self.session is not None
        worker = get_current_worker()
        finished = self.session.drive(lambda: worker.is_cancelled, yield_s=UI_YIELD_S)
        outcome = self.session.close()
        self.post_message(RunFinished(finished, outcome))

    @work(thread=True, exclusive=True, group="follow", exit_on_error=False, name="follow")
    def run_follow(self) -> None:
        """Tail the run directory until the run is sealed."""
        assert self.follow is not None and self._follow_feed is not None
        worker = get_current_worker()
        self.follow.follow(self._follow_feed, lambda: worker.is_cancelled)
        self.post_message(FollowEnded(self.follow.sealed))

    def pull(self) -> list[Event]:
        if self.session is not None:
            return self._feed.drain()
        if self.frozen or self._follow_feed is None:
            return []
        return self._follow_feed.drain()

    def tick_clock(self) -> None:
        if self.session is not None and self.model.meta:
            self.model.advance_clock(self.session.now)

    # ------------------------------------------------------------------ header

    def speed_label(self) -> str:
        if self.session is None:
            return "follow"
        return speed_label(self.session.speed)

    def state_label(self) -> str:
        if self.session is not None and self.session.paused and not self.model.ended:
            return "paused"
        if self.follow is not None and self.frozen:
            return "paused (following)"
        if self.model.ended:
            return "sealed" if self.outcome_text else "ended"
        if not self.model.meta:
            return "starting"
        return "following" if self.follow is not None else "running"

    # ------------------------------------------------------------------ actions

    def action_pause(self) -> None:
        """Pause or resume the engine (follow mode: freeze or unfreeze the view)."""
        if self.session is not None:
            if self.model.ended:
                self.notify("the run has ended", severity="warning")
                return
            self.session.set_paused(not self.session.paused)
        else:
            self.frozen = not self.frozen
        self.update_panes()

    def _change_speed(self, step: int) -> None:
        if self.session is None:
            self.notify("a followed run goes at its own pace", severity="warning")
            return
        self.session.set_speed(next_speed(self.session.speed, step))
        self.update_panes()
        self.notify(f"speed {speed_label(self.session.speed)}", timeout=2)

    def action_faster(self) -> None:
        self._change_speed(1)

    def action_slower(self) -> None:
        self._change_speed(-1)

    def action_scorecard(self) -> None:
        from tui.screens.scorecard import ScorecardScreen

        result = self.score_result
        if result is None or result.seq != self.model.seq:
            result = self.scorer.score(self.events)
        if result is None:
            self.notify("nothing to score yet", severity="warning")
            return
        self.app.push_screen(ScorecardScreen(result.score, end_t=self.model.duration_s or self.now,
                                             header=self.header_state(), note=self.outcome_text,
                                             trails=result.trails))

    def on_run_finished(self, message: RunFinished) -> None:
        outcome = message.outcome
        if outcome.bundle is not None:
            self.outcome_text = f"sealed {outcome.bundle}  ·  replay it: marathon replay {outcome.bundle}"
            self.notify(f"Run {'complete' if message.finished else 'stopped'}. {self.outcome_text}", timeout=15)
        elif outcome.error:
            self.app.report_error("sealing the run", RuntimeError(outcome.error))  # type: ignore[attr-defined]
        else:
            self.notify("Run complete (not recorded: --no-record)", timeout=8)
        self.set_notice(self.outcome_text)
        self.refresh_now()
        self.maybe_score(force=True)

    def on_follow_ended(self, message: FollowEnded) -> None:
        self.notify("the followed run was sealed" if message.sealed else "the followed run ended", timeout=8)

    def worker_failed(self, worker: Worker[Any]) -> None:
        super().worker_failed(worker)
        if worker.group in ("engine", "follow"):
            self.set_notice(f"{worker.name} stopped: {worker.error}", error=True)
