"""``orbit``: deterministic incident bookkeeping around a model that only investigates.

What is code, the same every run for the same alerts:

* **merging** -- firing alerts not yet claimed are grouped by the workload their labels
  name (:func:`scoring.attribution.workload_of`); a group joins the open incident of the
  same workload, or of a service it calls directly in the app's call graph when that
  incident was opened within :data:`MERGE_WINDOW_S` (an upstream symptom of a downstream
  cause); otherwise it becomes a new incident;
* **publication** -- ``report_incident`` (title: the alert rules and the workload), the
  ``report_rca`` built from the model's conclusion once it validates (known service, a
  fault category, an artifact), and ``resolve_incident`` once every alert the incident
  claimed has stopped pending or firing.

What the model decides, inside one loop per incident that needs investigating (no root
cause yet; or still firing :data:`REINVESTIGATE_AFTER` invocations after the last look, at
most :data:`MAX_INVESTIGATIONS` times): which read and act tools to call, and what to
conclude (``conclude``). It is not offered the report tools; act calls without an
``incident`` argument get the incident under investigation.

The per-incident investigation notes are written to ``orbit/<INC>.md`` in the workspace
through the tools and shown at the next look.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from engine.operate.agents.base import END_TOOL, LLMAgent, alert_rows, function_tool, mmss
from engine.operate.llm.client import Message
from engine.operate.tools import CATEGORIES, TOOLS, ToolResult, tool_schemas
from scoring.attribution import workload_of

if TYPE_CHECKING:
    from alerts.history import AlertInstance
    from engine.operate.invocation import Invocation

MERGE_WINDOW_S = 600.0
"""An upstream alert group joins a downstream incident opened at most this long ago (10 minutes)."""
REINVESTIGATE_AFTER = 5
MAX_INVESTIGATIONS = 3
NOTES_DIR = "orbit"

CONCLUDE_TOOL = function_tool(
    "conclude",
    "State the root cause of the incident under investigation. It is published as the incident's RCA; "
    "this ends the investigation for now.",
    {"service": {"type": "string", "description": "the faulty service (a deployment name)"},
     "category": {"type": "string", "enum": list(CATEGORIES)},
     "artifact": {"type": "string", "description": "the responsible change id (chg-NNNN), config key, image, "
                                                   "flag or resource"},
     "summary": {"type": "string", "description": "what is wrong, the evidence, and what you did about it"}},
    ["service", "category", "artifact", "summary"])


@dataclass
class OrbitIncident:
    """One incident the agent published and tracks."""

    id: str
    workload: str
    opened: float
    alert_ids: set[int] = field(default_factory=set)
    rca: dict[str, str] | None = None
    investigations: int = 0
    last_look: int = 0
    resolved: bool = False


class OrbitAgent(LLMAgent):
    """See module docstring."""

    agent: ClassVar[str] = "orbit"
    prompt_file: ClassVar[str] = "orbit.md"
    tiers: ClassVar[tuple[str, ...]] = ("read", "act")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.incidents: dict[str, OrbitIncident] = {}
        self.claimed: set[int] = set()
        self._current: OrbitIncident | None = None

    def tools(self) -> list[dict[str, Any]]:
        return [*tool_schemas(self.tiers), CONCLUDE_TOOL, END_TOOL]

    # ----------------------------------------------------------------- deterministic part

    def merge(self, inv: Invocation) -> list[OrbitIncident]:
        """Claim unclaimed firing alerts into incidents; publish the new ones. Returns the new incidents."""
        sim_app = inv.app
        services = [s.name for s in sim_app.services]
        calls = set(sim_app.edges())
        groups: dict[str, list[AlertInstance]] = {}
        for a in inv.alerts:
            if a.state != "firing" or a.id in self.claimed:
                continue
            workload = workload_of(a.labels, services)
            if workload is not None:
                groups.setdefault(workload, []).append(a)
        fresh: list[OrbitIncident] = []
        for workload in sorted(groups):
            alerts = sorted(groups[workload], key=lambda a: a.id)
            home = self._open_for(workload) or self._downstream_for(workload, calls, inv.t)
            if home is not None:
                home.alert_ids.update(a.id for a in alerts)
                self.claimed.update(a.id for a in alerts)
                continue
            rules = sorted({a.rule for a in alerts})
            res = inv.call("report_incident", alerts=[f"A-{a.id}" for a in alerts],
                           title=f"{', '.join(rules)} on {workload}")
            if not res.ok:
                continue
            inc = OrbitIncident(str(res.data["incident"]), workload, inv.now, {a.id for a in alerts})
            self.incidents[inc.id] = inc
            self.claimed.update(inc.alert_ids)
            fresh.append(inc)
        return fresh

    def _open_for(self, workload: str) -> OrbitIncident | None:
        return next((i for i in self.incidents.values() if not i.resolved and i.workload == workload), None)

    def _downstream_for(self, workload: str, calls: set[tuple[str, str]], now: float) -> OrbitIncident | None:
        candidates = [i for i in self.incidents.values() if not i.resolved and (workload, i.workload) in calls
                      and now - i.opened <= MERGE_WINDOW_S]
        return min(candidates, key=lambda i: i.opened) if candidates else None

    def resolve_quiet(self, inv: Invocation) -> None:
        """Declare resolved every open incident none of whose alerts is pending or firing."""
        state = {a.id: a.state for a in inv.alerts}
        for inc in sorted(self.incidents.values(), key=lambda i: i.id):
            if inc.resolved or any(state.get(a) in ("pending", "firing") for a in inc.alert_ids):
                continue
            if inv.call("resolve_incident", incident=inc.id).ok:
                inc.resolved = True

    def to_investigate(self, inv: Invocation) -> list[OrbitIncident]:
        state = {a.id: a.state for a in inv.alerts}
        out = []
        for inc in sorted(self.incidents.values(), key=lambda i: i.opened):
            if inc.resolved or inc.investigations >= MAX_INVESTIGATIONS:
                continue
            firing = any(state.get(a) == "firing" for a in inc.alert_ids)
            if inc.rca is None or (firing and inv.number - inc.last_look >= REINVESTIGATE_AFTER):
                out.append(inc)
        return out

    # ----------------------------------------------------------------- the invocation

    def run_invocation(self, inv: Invocation) -> str:
        self.merge(inv)
        self.resolve_quiet(inv)
        queue = self.to_investigate(inv)
        if not queue:
            return "idle: no incident needs investigating"
        reason = "done"
        for inc in queue:
            if inv.over:
                return "run over"
            inc.investigations += 1
            inc.last_look = inv.number
            self._current = inc
            try:
                reason = self.investigate(inv, inc)
            finally:
                self._current = None
            if reason not in ("concluded", "done"):
                return reason  # a spent budget or a failed endpoint ends the whole invocation
        return reason

    def investigate(self, inv: Invocation, inc: OrbitIncident) -> str:
        """One model loop on one incident; returns the reason it ended."""
        by_id = {a.id: a for a in inv.alerts}
        alerts = [by_id[i] for i in sorted(inc.alert_ids) if i in by_id]
        app = inv.app
        callees = sorted({b for a, b in app.edges() if a == inc.workload})
        callers = sorted({a for a, b in app.edges() if b == inc.workload})
        notes_path = f"{NOTES_DIR}/{inc.id}.md"
        notes = inv.workspace.read(notes_path) if inv.workspace.exists(notes_path) else ""
        rca = (f"Published root cause so far: {inc.rca['service']} ({inc.rca['category']}, {inc.rca['artifact']})"
               if inc.rca else "No root cause published yet.")
        user = "\n".join([
            f"Run time {mmss(inv.t)}. Investigate incident {inc.id}, opened at {mmss(inc.opened)} for workload "
            f"{inc.workload} (look {inc.investigations} of at most {MAX_INVESTIGATIONS}).",
            f"\nIts alerts:\n{alert_rows(alerts)}",
            f"\n{inc.workload} calls: {', '.join(callees) or 'nothing'}; called by: {', '.join(callers) or 'nobody'}.",
            f"\n{rca}",
            f"\nYour notes from earlier looks at {inc.id}:\n{notes.strip() or '(none)'}",
            f"\nAct calls must name incident {inc.id}. Call conclude with the root cause when you have it.",
        ])
        messages: list[Message] = [{"role": "system", "content": self.system_prompt},
                                   {"role": "user", "content": user}]
        return self.loop(inv, messages, self.tools(), {"conclude": self._conclude, "end_invocation": self._pause})

    def adjust_arguments(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        spec = TOOLS.get(tool)
        if spec is not None and spec.tier == "act" and "incident" not in args and self._current is not None:
            return {**args, "incident": self._current.id}
        return args

    def after_tool(self, inv: Invocation, tool: str, args: dict[str, Any], result: ToolResult) -> None:
        spec = TOOLS.get(tool)
        if self._current is None or spec is None or spec.tier != "act":
            return
        shown = {k: v for k, v in args.items() if k not in ("incident", "diff")}
        inv.call("workspace_write", path=f"{NOTES_DIR}/{self._current.id}.md", append=True,
                 text=f"- {mmss(inv.now)} {tool} {shown}: {result.text()[:200]}\n")

    def _pause(self, inv: Invocation, args: dict[str, Any]) -> tuple[str, str | None]:
        """``end_invocation`` during an investigation: stop without a conclusion, keeping the note."""
        note = str(args.get("note", "")).strip()
        if self._current is not None and note:
            inv.call("workspace_write", path=f"{NOTES_DIR}/{self._current.id}.md", append=True,
                     text=f"- {mmss(inv.now)} paused: {note[:800]}\n")
        return "investigation paused", "done"

    def _conclude(self, inv: Invocation, args: dict[str, Any]) -> tuple[str, str | None]:
        inc = self._current
        if inc is None:
            return "ERROR: no incident is under investigation", None
        services = {s.name for s in inv.app.services}
        service = str(args.get("service", "")).strip()
        category = str(args.get("category", "")).strip()
        artifact = str(args.get("artifact", "")).strip()
        summary = str(args.get("summary", "")).strip()
        if len(summary) < 3:
            summary = f"root cause in {service}"
        problems = []
        if service not in services:
            problems.append(f"service {service!r} is not a service of this application ({', '.join(sorted(services))})")
        if category not in CATEGORIES:
            problems.append(f"category must be one of {', '.join(CATEGORIES)}")
        if not artifact:
            problems.append("artifact must name the responsible change id, config key, image, flag or resource")
        if problems:
            return "ERROR: " + "; ".join(problems) + ". Call conclude again.", None
        conclusion = {"service": service, "category": category, "artifact": artifact}
        if conclusion != inc.rca:
            res = inv.call("report_rca", incident=inc.id, summary=summary[:2000], **conclusion)
            if not res.ok:
                return f"ERROR: the RCA was not accepted: {res.error}", None
            inc.rca = conclusion
        inv.call("workspace_write", path=f"{NOTES_DIR}/{inc.id}.md", append=True,
                 text=f"- {mmss(inv.now)} concluded: {service} ({category}, {artifact}): {summary[:400]}\n")
        return f"published the root cause of {inc.id}", "concluded"
