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
as an agent's -- and the run is sealed into the same bundle format.

Forms follow the eye, k9s-style: a tool key acts on the row under the cursor of the
focused pane (or of the pane focused last, when none is): on an alert, ``i`` opens an
incident with it preselected and its workload and pod are the defaults; on an incident row,
the incident and its root-cause service; on a health row (a service), ``l`` its logs, ``d``
describes its deployment, ``x`` restarts one of its pods (the pod picker lists its pods
first), ``b`` rolls it back, ``S`` scales it, ``r`` files its newest change as the root
cause; on an actions-log row, the call's target and incident. The form names the row and,
next to each prefilled value, where it came from; filters of read tools (``get_alerts
--service``, ``kubectl_get --selector``) are suggested, never applied unseen
(:class:`tui.screens.dialogs.ToolForm`). The panes keep updating beneath every form (see
:mod:`tui.screens.base`). The notes pane is the player's workspace.

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
from textual.screen import ModalScreen
from textual.worker import Worker, get_current_worker

from engine.bundle.events import Event
from engine.operate.tools import TOOLS
from engine.run.session import RunSession
from tui.messages import RunFinished, ScoreComputed, ToolDone
from tui.model import DeployView, fmt_clock
from tui.screens.base import RunScreen
from tui.screens.dialogs import (
    CATEGORY_OF_CHANGE,
    NEEDS_CONFIRMATION,
    READ_FILTERS,
    ChangeOption,
    ConfirmCall,
    FormContext,
    QueryPrompt,
    ToolForm,
)
from tui.screens.watch import next_speed
from tui.session import UI_YIELD_S, EventFeed
from tui.widgets.actions import ActionsPane
from tui.widgets.alerts import AlertsPane, alert_choice_label, alert_target
from tui.widgets.faults import FaultsPane
from tui.widgets.header import speed_label
from tui.widgets.health import HealthPane
from tui.widgets.notes import NOTES_FILE, NotesPane
from tui.widgets.output import OutputPane, call_text
from tui.widgets.pane import Pane
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
    AUTO_FOCUS = "#alerts-table"
    """The alerts pane has the focus when the run starts (the faults pane, first in the tree, is hidden)."""
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
        self._scorecard_waits = False
        self.last_pane: str | None = None
        """The pane that had the focus last (forms follow it when no pane has the focus)."""

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

    def on_descendant_focus(self, event: Any) -> None:
        """Remember the pane the player last looked at (forms follow it when nothing has focus)."""
        pane = self.pane_of(event.widget)
        if pane is not None:
            self.last_pane = pane.PANE_ID

    def pane_of(self, widget: Any) -> Pane | None:
        for node in widget.ancestors_with_self if widget is not None else ():
            if isinstance(node, Pane):
                return node
        return None

    def context_pane(self) -> str | None:
        """The pane forms take their defaults from: the focused one, else the most recently focused one."""
        pane = self.pane_of(self.focused)
        if pane is not None:
            return pane.PANE_ID
        return self.last_pane

    def form_context(self, tool: str) -> FormContext:
        """What the form for ``tool`` offers, starting from the row the player is on (module docstring).

        The row is the cursor's in the focused pane (else the most recently focused one): an
        alert gives its alert (preselected), workload, pod and incident; an incident row the
        incident and its root-cause service; a health row the service; an actions row the
        call's target and incident. Each default carries where it came from
        (:attr:`FormContext.sources`), and filters of read tools are only suggested
        (:data:`tui.screens.dialogs.READ_FILTERS`).
        """
        model = self.model
        now = self.now
        incidents = sorted(model.incidents.values(), key=lambda i: (i.resolved_at is not None, -i.t))
        recent = [a for a in sorted(model.alerts.values(), key=lambda a: -a.active_at)
                  if a.active or (a.ended_at is not None and now - a.ended_at <= RECENT_ALERT_S)]
        pod_sources = {p: "seen in tool output" for p in sorted(self.pods)}
        for a in model.alerts.values():
            if "pod" in a.labels:
                pod_sources.setdefault(a.labels["pod"], f"alert {a.id} {a.rule}")
        ctx = FormContext(
            services=list(model.services) or sorted(model.service_names),
            incidents=[(i.id, f"{i.id} {i.title}" + (" (resolved)" if i.resolved_at is not None else ""))
                       for i in incidents],
            alerts=[(a.id, alert_choice_label(a, model)) for a in recent],
            alert_titles={a.id: (a.rule, alert_target(a)) for a in recent},
            pods=sorted(pod_sources),
            pod_sources=pod_sources,
            artifacts=[d.change for d in reversed(model.deploys)],
            changes=[ChangeOption(d.change, d.service, d.kind, d.revision, d.t, d.summary, self._undoes(d))
                     for d in reversed(model.deploys)],
        )
        defaults, sources = ctx.defaults, ctx.sources

        def put(source: str, **values: Any) -> None:
            for k, v in values.items():
                if v is not None and v != "":
                    defaults[k] = v
                    sources[k] = source

        where = self.context_pane()
        if where == "alerts":
            alert_id, incident = self.query_one(AlertsPane).selected(model)
            row_alert = model.alerts.get(alert_id) if alert_id is not None else None
            if (alert := row_alert) is not None:
                ctx.origin = f"alerts row {alert.id} {alert.rule} {alert_target(alert)}"
                # Alertmanager's default grouping (alertname, service): the row's unassigned group-mates
                where_of = alert.labels.get("service") or alert.workload
                group = [a.id for a in recent if a.id != alert.id and a.state == "firing" and not a.incidents
                         and a.rule == alert.rule and (a.labels.get("service") or a.workload) == where_of]
                if tool == "report_incident" and group and not alert.incidents and where_of:
                    put(f"alerts row {alert.id} and its group (firing {alert.rule} on {where_of}, unassigned)",
                        alerts=[alert.id, *group])
                else:
                    put(f"alerts row {alert.id}", alerts=[alert.id])
                put(f"alerts row {alert.id} (its workload)", service=alert.workload, deployment=alert.workload)
                put(f"alerts row {alert.id} (its pod label)", pod=alert.labels.get("pod"))
                put(f"alerts row {alert.id} (its rule)", alertname=alert.rule)
            if incident is not None:
                inc = model.incidents[incident]
                if row_alert is None:
                    ctx.origin = f"alerts row {incident} {inc.title}"
                put(f"alerts row {'' if row_alert is None else row_alert.id + ' in '}{incident}", incident=incident)
                if inc.rca:
                    put(f"{incident}'s root cause", service=inc.rca["service"], deployment=inc.rca["service"])
        elif where == "health":
            service = self.query_one(HealthPane).selected()
            if service is not None:
                ctx.origin = f"health row {service}"
                put("health row", service=service, deployment=service)
                view = model.services.get(service)
                if view is not None:
                    put(f"health row ({view.ready}/{view.desired} ready: the desired count now)", replicas=view.desired)
        elif where == "actions":
            call = self.query_one(ActionsPane).selected(model)
            if call is not None:
                ctx.origin = f"actions row #{call.seq} {call.tool}"
                src = f"actions row #{call.seq} ({call.tool})"
                target = call.args.get("deployment") or call.args.get("service")
                put(src, service=target, deployment=target, pod=call.args.get("pod"),
                    incident=call.args.get("incident") if call.args.get("incident") in model.incidents else None)
        self._derived_defaults(ctx, tool)
        ctx.alerts = self._checklist_order(ctx)
        return ctx

    def _checklist_order(self, ctx: FormContext) -> list[tuple[str, str]]:
        """The incident checklist: the preselected alerts first, then the active ones (those of the same
        workload or service as the first preselected one first), then those that ended, newest first within
        each (so the alerts to add are a few rows away)."""
        chosen = list(ctx.defaults.get("alerts", ()))
        first = self.model.alerts.get(chosen[0]) if chosen else None
        if first is None:
            return ctx.alerts
        near = {first.workload, first.labels.get("service"), alert_target(first)} - {None, "", "-"}

        def related(aid: str) -> bool:
            a = self.model.alerts[aid]
            names = {a.workload, a.labels.get("service"), alert_target(a)} - {None, "", "-"}
            pod = a.labels.get("pod", "")
            return bool(names & near) or any(pod.startswith(f"{n}-") for n in near)

        rank = {aid: i for i, aid in enumerate(chosen)}
        alerts = self.model.alerts
        return sorted(ctx.alerts, key=lambda item: (item[0] not in rank, rank.get(item[0], 0),
                                                    not alerts[item[0]].active, not related(item[0])))

    def _undoes(self, change: ChangeOption | DeployView) -> bool:
        """Whether ``change`` cannot be a root cause to suggest: a rollback, a revert commit, or a change
        the player made (a rollback, a patch or a config change of theirs is a remedy, not the cause)."""
        mine = {str(m.result.data.get("change")) for m in self.tool_results if m.result.ok and m.result.data}
        return (change.kind == "rollback" or change.summary.lower().startswith(("revert", "rollback"))
                or change.change in mine)

    def _derived_defaults(self, ctx: FormContext, tool: str) -> None:
        """Defaults that follow from the row's: the incident, the change, the category, the pod, the kind;
        then the filters of a read tool become suggestions."""
        model, defaults, sources = self.model, ctx.defaults, ctx.sources
        open_ids = [i.id for i in model.open_incidents()]
        if "incident" not in defaults and open_ids:
            newest = max(model.open_incidents(), key=lambda i: i.t)
            defaults["incident"] = newest.id
            sources["incident"] = "the only open incident" if len(open_ids) == 1 else "the newest open incident"
        service = defaults.get("service")
        if service:
            newest_change = next((c for c in ctx.changes if c.service == service and not c.remedy), None)
            if newest_change is not None:
                defaults["artifact"] = newest_change.change
                sources["artifact"] = f"{service}'s newest change (rollbacks, reverts, yours skipped)"
                if newest_change.kind in CATEGORY_OF_CHANGE:
                    defaults["category"] = CATEGORY_OF_CHANGE[newest_change.kind]
                    sources["category"] = f"{newest_change.change} is a {newest_change.kind} change (a guess)"
            if "pod" not in defaults:
                mine = [p for p in ctx.pods if p.startswith(f"{service}-")]
                if mine:
                    defaults["pod"] = mine[0]
                    sources["pod"] = f"a pod of {service} ({ctx.pod_sources[mine[0]]})"
        if tool == "kubectl_describe":
            if "pod" in defaults and sources.get("pod", "").startswith("alerts row"):
                defaults.update(kind="pods", name=defaults["pod"])
                sources.update(kind=sources["pod"], name=sources["pod"])
            elif service:
                defaults.update(kind="deployments", name=service)
                sources.update(kind=sources["service"], name=sources["service"])
        if tool == "kubectl_get" and service:
            defaults["selector"] = {"app": service}
            sources["selector"] = sources["service"]
        if tool == "query_logs":
            defaults.pop("pod", None)  # one of deployment/pod: the deployment's pods when the row names one
        for name in READ_FILTERS.get(tool, ()):
            if name in defaults:
                ctx.suggested[name] = defaults.pop(name)

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
        self.close_dialogs_at_the_end()
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

    def close_dialogs_at_the_end(self) -> None:
        """The run ended under an open form, confirmation or prompt: close it (nothing can be called any
        more) and let the scorecard wait for ``s``, so the keys the player was typing into the form do not
        land on the scorecard (an ``enter`` would reveal the ground truth before the numbers were read)."""
        stack = self.app.screen_stack
        if self not in stack:
            return
        above = stack[stack.index(self) + 1:]
        if not above or not all(isinstance(s, ModalScreen) for s in above):
            return
        for _ in above:
            self.app.pop_screen()
        self._scorecard_waits = True
        self.notify("The run has ended: the open dialog was closed. Press s for the scorecard.",
                    title="run ended", timeout=10)

    def _end_of_run(self) -> None:
        """Once the run is sealed and its final score is in: the scorecard, once (unless the run ended
        under a dialog: then on ``s``, see :meth:`close_dialogs_at_the_end`)."""
        if self._scorecard_waits:
            return
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
        self._scorecard_waits = False
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
