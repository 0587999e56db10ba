"""``marathon play``: you are the operator.

The run goes on the wall clock at 1x (``--practice``: faster, and pausable, recorded as
``human-practice``). Ground truth -- the faults pane, the fault lanes of the timeline, the
running score -- stays hidden until the run ends; nothing on this screen reads
``fault.*`` or ``probe.result`` before then.

Every operator tool is in the command palette (``ctrl+p``), and the usual ones have a key
(see :data:`TOOL_KEYS`, ``?``); ``m`` opens the PromQL prompt of ``query_metrics``, whose
answers the output pane draws as sparklines (a range) or bars (an instant vector). Read
tools print into the output pane; reports are short forms (pick the alerts of an incident;
service, category and artifact of a root cause); act tools and ``resolve_incident`` open
a confirmation that starts on Cancel and shows the exact call. Every call goes through
:meth:`engine.run.session.RunSession.call_tool` -- the same policy layer and event stream
as an agent's -- and the run is sealed into the same bundle format. Forms start from what
the cursor is on in the alerts pane (an alert: its service; an incident: the incident and
its root-cause service). The notes pane is the player's workspace.

At the end: the scorecard (numbers first), then the ground truth.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.worker import Worker, get_current_worker

from engine.bundle.events import Event
from engine.operate.tools import TOOLS
from engine.run.session import RunSession
from tui.messages import RunFinished, ScoreComputed, ToolDone
from tui.model import fmt_clock
from tui.screens.base import RunScreen
from tui.screens.dialogs import NEEDS_CONFIRMATION, ConfirmCall, FormContext, QueryPrompt, ToolForm
from tui.screens.watch import next_speed
from tui.session import UI_YIELD_S, EventFeed
from tui.widgets.actions import ActionsPane
from tui.widgets.alerts import AlertsPane, alert_choice_label
from tui.widgets.faults import FaultsPane
from tui.widgets.header import speed_label
from tui.widgets.health import HealthPane
from tui.widgets.notes import NOTES_FILE, NotesPane
from tui.widgets.output import OutputPane, call_text
from tui.widgets.score import ScorePane
from tui.widgets.timeline import TimelinePane

TOOL_KEYS: dict[str, str] = {
    "get_alerts": "a", "get_topology": "t", "kubectl_get": "K", "kubectl_describe": "d", "query_logs": "l",
    "query_metrics": "m", "code_search": "c", "get_deploy_history": "h",
    "report_incident": "i", "report_rca": "r", "resolve_incident": "v",
    "restart_pod": "x", "scale_deployment": "S", "rollback": "b", "deploy_patch": "D", "set_config": "C",
    "workspace_list": "W", "workspace_read": "w", "workspace_write": "N",
}
"""The key of every tool that has one (binding id ``tool-<name>``, remappable); every tool is
in the command palette. ``kubectl_get`` is on ``K``, not ``k``: on a focused table ``j``/``k``
move the cursor (k9s), and the focused widget's keys come before the screen's. ``m`` opens the
PromQL prompt (:class:`tui.screens.dialogs.QueryPrompt`)."""
FOOTER_TOOLS = ("report_incident", "report_rca", "rollback", "kubectl_get", "query_logs")
GROUND_TRUTH_PANES = ("faults", "score")
RECENT_ALERT_S = 600.0
"""Alerts offered for an incident: active ones, and those that ended in the last 10 minutes."""
POD_RE = re.compile(r"\b([a-z0-9]+(?:-[a-z0-9]+)*-[a-z0-9]{6,10}-[a-z0-9]{5}|[a-z0-9]+(?:-[a-z0-9]+)*-\d)\b")


def _tool_binding(name: str, key: str) -> Binding:
    spec = TOOLS[name]
    return Binding(key, f"tool('{name}')", name.replace("_", " "), show=name in FOOTER_TOOLS,
                   id=f"tool-{name.replace('_', '-')}", tooltip=f"[{spec.tier}] {spec.description}")


class PlayScreen(RunScreen):
    """See module docstring.

    Args:
        session: the run (its operator is a :class:`tui.human.HumanOperator`).
        practice: practice mode (a faster clock, pausing).
        autostart: start the clock (tests drive the run themselves).
    """

    MODE = "PLAY"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("p", "pause", "Pause", show=False, id="pause"),
        Binding("slash", "filter", "Filter", show=False, id="filter"),
        Binding("s", "scorecard", "Scorecard", show=False, id="scorecard"),
        *(_tool_binding(name, key) for name, key in TOOL_KEYS.items()),
        Binding("n", "focus_notes", "Notes", id="notes-focus"),
        Binding("plus,equals_sign", "faster", "Faster", show=False, id="faster"),
        Binding("minus", "slower", "Slower", show=False, id="slower"),
    ]

    def __init__(self, *, session: RunSession, practice: bool = False, autostart: bool = True) -> None:
        super().__init__()
        self.session = session
        self._feed = EventFeed()
        session.subscribe(self._feed.push, past=True)
        self.practice = practice
        self.autostart = autostart
        self.reveal = False
        self.MODE = "PRACTICE" if practice else "PLAY"
        self.notes_text = ""
        self.pods: set[str] = set()
        self.outcome_text = ""
        self.tool_results: list[ToolDone] = []
        self.queries: list[str] = []
        """PromQL queries made, newest first (the prompt offers them as completions)."""
        self.sealed: RunFinished | None = None
        self._scorecard_shown = False

    def compose_body(self) -> ComposeResult:
        with Horizontal(id="row-top"):
            faults = FaultsPane(1)
            faults.display = False
            yield faults
            score = ScorePane(6)
            score.display = False
            yield score
        with Horizontal(id="row-mid"):
            yield AlertsPane(2)
            yield HealthPane(4)
        with Horizontal(id="row-work"):
            yield OutputPane(7)
            yield NotesPane(8)
        yield ActionsPane(3)
        yield TimelinePane(5)

    # ------------------------------------------------------------------ the run

    def start_source(self) -> None:
        run = self.session.run
        self.scorer.use_schedule(run.schedule.app, run.seed, run.schedule_text, wait=self.inline_score,
                                 cache=False)  # nothing readable on disk while the player plays
        if self.autostart:
            self.run_engine()

    def stop_source(self) -> None:
        self.session.stop()

    @work(thread=True, exclusive=True, group="engine", exit_on_error=False, name="engine")
    def run_engine(self) -> None:
        """Run the clock to the end (saving unsaved notes one tick before), then seal."""
        worker = get_current_worker()
        finished = self.session.drive(lambda: worker.is_cancelled, before_end=self.save_notes_before_end,
                                      yield_s=UI_YIELD_S)
        outcome = self.session.close()
        self.post_message(RunFinished(finished, outcome))

    def finish_now(self) -> None:
        """Close and seal a run driven by hand (tests) and show the end, as the worker would."""
        outcome = self.session.close()
        self.post_message(RunFinished(self.session.finished, outcome))

    def save_notes_before_end(self) -> None:
        """Engine thread: write notes the autosave has not written yet, before ``run.end``."""
        notes = self.query_one(NotesPane)
        text = self.notes_text
        if text != notes.saved_text:
            args = {"path": NOTES_FILE, "text": text}
            result = self.session.call_tool("workspace_write", args)
            self.post_message(ToolDone("workspace_write", args, result, self.session.now))

    def pull(self) -> list[Event]:
        return self._feed.drain()

    def tick_clock(self) -> None:
        if self.model.meta:
            self.model.advance_clock(self.session.now)

    def wants_score(self) -> bool:
        return self.reveal or self.model.ended

    def speed_label(self) -> str:
        return speed_label(self.session.speed)

    def state_label(self) -> str:
        if self.model.ended:
            return "ended"
        if self.session.paused:
            return "paused"
        return "starting" if not self.model.meta else "your move"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Tools are disabled (shown dimmed) once the run has ended; the scorecard until then."""
        if action == "tool" and self.model.ended:
            return None
        if action == "scorecard" and not self.model.ended:
            return None
        return super().check_action(action, parameters)

    # ------------------------------------------------------------------ ground truth

    def can_show(self, pane: Any) -> str | None:
        if pane.PANE_ID in GROUND_TRUTH_PANES and not self.reveal:
            return "ground truth is hidden until the run ends"
        return None

    def reveal_truth(self) -> None:
        """Show the faults pane, the fault lanes and the score (after the run)."""
        if not self.model.ended:
            return
        self.reveal = True
        for pid in GROUND_TRUTH_PANES:
            self.pane(pid).display = True
        self.update_panes(force=True)

    # ------------------------------------------------------------------ tools

    def form_context(self, tool: str) -> FormContext:
        """What the form for ``tool`` offers, starting from the alerts pane's cursor."""
        model = self.model
        now = self.now
        incidents = sorted(model.incidents.values(), key=lambda i: (i.resolved_at is not None, -i.t))
        ctx = FormContext(
            services=list(model.services) or sorted(model.service_names),
            incidents=[(i.id, f"{i.id} {i.title}" + (" (resolved)" if i.resolved_at is not None else ""))
                       for i in incidents],
            alerts=[(a.id, alert_choice_label(a, model))
                    for a in sorted(model.alerts.values(), key=lambda a: -a.active_at)
                    if a.active or (a.ended_at is not None and now - a.ended_at <= RECENT_ALERT_S)],
            pods=sorted(self.pods | {a.labels["pod"] for a in model.alerts.values() if "pod" in a.labels}),
            artifacts=[d.change for d in reversed(model.deploys)],
        )
        alert_id, incident = self.query_one(AlertsPane).selected(model)
        if alert_id is not None and alert_id in model.alerts:
            a = model.alerts[alert_id]
            ctx.defaults["alerts"] = [alert_id]
            if a.workload:
                ctx.defaults.update(service=a.workload, deployment=a.workload)
        if incident is not None:
            ctx.defaults["incident"] = incident
            rca = model.incidents[incident].rca
            if rca:
                ctx.defaults.update(service=rca["service"], deployment=rca["service"])
        return ctx

    def action_tool(self, name: str) -> None:
        """Open the form of tool ``name``; act calls are confirmed before they run."""
        if self.model.ended:
            self.notify("the run has ended: no more tool calls", severity="warning")
            return

        def submitted(args: dict[str, Any] | None) -> None:
            if args is None:
                return
            if name in NEEDS_CONFIRMATION:
                detail = ("The policy layer computes the target set and checks that the incident is open; the call "
                          "is recorded either way." if TOOLS[name].tier == "act"
                          else "Declaring an incident resolved while its fault persists counts against you.")
                def confirmed(ok: bool | None) -> None:
                    if ok:
                        self.run_tool(name, args)

                self.app.push_screen(ConfirmCall(f"Run this {TOOLS[name].tier} call?", call_text(name, args),
                                                 detail), confirmed)
            else:
                self.run_tool(name, args)

        if name == "query_metrics":
            self.app.push_screen(QueryPrompt(lambda: self.session.now, self.queries), submitted)
            return
        self.app.push_screen(ToolForm(name, self.form_context(name)), submitted)

    @work(thread=True, group="tools", exit_on_error=False, name="tool call")
    def run_tool(self, name: str, args: dict[str, Any]) -> None:
        """Make one call through the policy layer (serialised with the run loop)."""
        result = self.session.call_tool(name, args)
        self.post_message(ToolDone(name, args, result, self.session.now))

    def on_tool_done(self, message: ToolDone) -> None:
        self.tool_results.append(message)
        result = message.result
        text = result.text()
        output = self.query_one(OutputPane)
        output.show(message.t, message.tool, message.args, result.ok, text, data=result.data)
        if message.tool == "query_metrics":
            query = str(message.args.get("query", ""))
            self.queries = [query, *(q for q in self.queries if q != query)][:50]
        self.pods.update(m.group(1) for m in POD_RE.finditer(result.output[:20_000]))
        tier = TOOLS[message.tool].tier if message.tool in TOOLS else "read"
        if message.tool == "workspace_write" and message.args.get("path") == NOTES_FILE and result.ok:
            self.query_one(NotesPane).mark_saved(str(message.args.get("text", "")), fmt_clock(message.t))
        elif tier in ("report", "act") or not result.ok:
            self.notify(text.splitlines()[0][:200] if text else message.tool,
                        title=message.tool, severity="information" if result.ok else "error",
                        timeout=6)
        elif not output.display:
            self.notify(f"output in pane {output.number} (hidden: press {output.number})", title=message.tool,
                        timeout=4)
        self.refresh_now()

    def on_notes_pane_save(self, message: NotesPane.Save) -> None:
        if self.model.ended:
            return
        self.run_tool("workspace_write", {"path": NOTES_FILE, "text": message.text})

    def on_text_area_changed(self, event: Any) -> None:
        if event.text_area.id == "notes-text":
            self.notes_text = event.text_area.text

    def action_focus_notes(self) -> None:
        notes = self.query_one(NotesPane)
        notes.display = True
        notes.area.focus()

    # ------------------------------------------------------------------ clock

    def action_pause(self) -> None:
        if not self.practice:
            self.notify("a scored run cannot be paused (practice mode can: marathon play --practice)",
                        severity="warning")
            return
        self.session.set_paused(not self.session.paused)
        self.update_panes()

    def _change_speed(self, step: int) -> None:
        if not self.practice:
            self.notify("a scored run plays at 1x (practice mode can go faster: --practice --speed 10)",
                        severity="warning")
            return
        speed = next_speed(self.session.speed, step) or 200.0
        self.session.set_speed(speed)
        self.update_panes()

    def action_faster(self) -> None:
        self._change_speed(1)

    def action_slower(self) -> None:
        self._change_speed(-1)

    # ------------------------------------------------------------------ the end

    def on_run_finished(self, message: RunFinished) -> None:
        self.sealed = message
        outcome = message.outcome
        if outcome.bundle is not None:
            self.outcome_text = f"sealed {outcome.bundle}  ·  replay it: marathon replay {outcome.bundle}"
        elif outcome.error:
            self.app.report_error("sealing the run", RuntimeError(outcome.error))  # type: ignore[attr-defined]
        self.set_notice(self.outcome_text)
        self.refresh_now()
        if self.final_score is None:
            self.maybe_score(force=True)
        self._end_of_run()

    def on_score_computed(self, message: ScoreComputed) -> None:
        super().on_score_computed(message)
        self._end_of_run()

    def _end_of_run(self) -> None:
        """Once the run is sealed and its final score is in: the scorecard, once."""
        if self.sealed is not None and self.final_score is not None and not self._scorecard_shown:
            self._scorecard_shown = True
            self.show_scorecard()

    def show_scorecard(self) -> None:
        from tui.screens.scorecard import ScorecardScreen

        if self.final_score is None:
            return
        self.app.push_screen(ScorecardScreen(self.final_score.score, end_t=self.model.duration_s,
                                             header=self.header_state(), staged=not self.reveal,
                                             on_reveal=self.reveal_truth, note=self.outcome_text,
                                             trails=self.final_score.trails))

    def action_scorecard(self) -> None:
        if not self.model.ended:
            self.notify("the scorecard opens when the run ends", severity="warning")
            return
        if self.final_score is None:
            self.maybe_score(force=True)
            return
        self.show_scorecard()

    def confirm_quit(self) -> None:
        """Quitting a run in progress stops it and seals it as incomplete: ask first."""
        if self.model.ended:
            self.app.exit()
            return
        self.app.push_screen(ConfirmCall("Quit the run?", f"stop at {fmt_clock(self.now)} and seal the run as "
                                         "incomplete", "An incomplete bundle is kept for replay but not scored "
                                         "as a complete run.", confirm_label="Quit"),
                             lambda ok: self.app.exit() if ok else None)

    def worker_failed(self, worker: Worker[Any]) -> None:
        super().worker_failed(worker)
        if worker.group == "engine":
            self.set_notice(f"the run stopped: {worker.error}", error=True)

    def commands(self) -> Iterable[tuple[str, str, Any]]:
        for name, spec in TOOLS.items():
            key = f" (key {TOOL_KEYS[name]})" if name in TOOL_KEYS else ""
            yield (f"Tool: {name}", f"[{spec.tier}] {spec.description}{key}", lambda n=name: self.action_tool(n))
        yield from super().commands()
