"""``rag``: the ReAct loop plus retrieval from runbooks and the agent's own past incidents.

Each invocation, before the model is called, the new (else the pending/firing) alerts'
names, labels and summaries form a query; the best passages (:data:`AUTO_K`) from the
runbooks (``engine/operate/agents/runbooks/*.md``) and from the incident records in the agent's
workspace (``incidents/*.md``) are added to the context. The model can also search with
``search_knowledge``. Retrieval is BM25 (:mod:`engine.operate.agents.retrieval`).

The incident records are written by code, not by the model: every report, RCA, act call
and resolution the agent makes through the tools is noted per incident, and changed
records are written to ``incidents/<INC>.md`` through the ``workspace_write`` tool at the
end of the invocation (so they are recorded like any call and land in the bundle).
The runbooks used are copied into the run's ``prompts/runbooks/``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from engine.operate.agents.base import LLMAgent, alert_rows, function_tool, mmss
from engine.operate.agents.retrieval import RUNBOOKS_DIR, KnowledgeBase, Passage, runbook_passages, split_markdown
from engine.operate.llm.client import LLMClient, Message
from engine.operate.llm.config import LLMConfig
from engine.operate.tools import TOOLS, ToolResult

if TYPE_CHECKING:
    from engine.operate.invocation import Invocation

AUTO_K = 3
PASSAGE_CHARS = 1500
"""Characters of each retrieved passage shown to the model."""
INCIDENTS_DIR = "incidents"

SEARCH_TOOL = function_tool(
    "search_knowledge",
    "BM25 search over the runbooks and your own past incident records. Returns the best passages.",
    {"query": {"type": "string", "description": "alert names, services, symptoms, error messages"},
     "k": {"type": "integer", "minimum": 1, "maximum": 8, "description": "passages to return (default 3)"}},
    ["query"])


def render_passages(hits: list[tuple[Passage, float]]) -> str:
    """Retrieved passages as the model reads them."""
    if not hits:
        return "(no matching passage)"
    out = []
    for p, score in hits:
        text = p.text if len(p.text) <= PASSAGE_CHARS else p.text[:PASSAGE_CHARS] + " ..."
        out.append(f"### {p.title}  [{p.source}, bm25 {score:.2f}]\n{text}")
    return "\n\n".join(out)


class RagAgent(LLMAgent):
    """See module docstring."""

    agent: ClassVar[str] = "rag"
    prompt_file: ClassVar[str] = "rag.md"

    def __init__(self, config: LLMConfig, *, client: LLMClient | None = None,
                 runbooks: Path = RUNBOOKS_DIR) -> None:
        super().__init__(config, client=client)
        self.runbooks_dir = runbooks
        self.runbooks = runbook_passages(runbooks)
        self.records: dict[str, dict[str, Any]] = {}
        self._dirty: set[str] = set()

    def versioned_files(self) -> list[tuple[str, Path]]:
        return [(f"runbooks/{p.name}", p) for p in sorted(self.runbooks_dir.glob("*.md"))]

    def tools(self) -> list[dict[str, Any]]:
        return [*super().tools(), SEARCH_TOOL]

    # ----------------------------------------------------------------- retrieval

    def knowledge(self, inv: Invocation) -> KnowledgeBase:
        """Runbooks plus the incident records now in the workspace."""
        passages = list(self.runbooks)
        for rel in inv.workspace.files(INCIDENTS_DIR):
            passages.extend(split_markdown(f"incident:{rel}", inv.workspace.read(rel)))
        return KnowledgeBase(passages)

    @staticmethod
    def alert_query(inv: Invocation) -> str:
        alerts = inv.new_alerts or [a for a in inv.alerts if a.state in ("pending", "firing")]
        words = []
        for a in alerts[-20:]:
            words.append(a.rule)
            words.extend(v for k, v in sorted(a.labels.items()) if k not in ("alertname", "severity", "namespace"))
            words.append(a.annotations.get("summary", ""))
        return " ".join(words)

    def extra_context(self, inv: Invocation) -> str:
        query = self.alert_query(inv)
        hits = self.knowledge(inv).search(query, AUTO_K) if query else []
        return "Retrieved knowledge for these alerts (runbooks and your past incidents):\n" + render_passages(hits)

    def _search(self, inv: Invocation, args: dict[str, Any]) -> tuple[str, str | None]:
        query = str(args.get("query", "")).strip()
        if not query:
            return "ERROR: query must be a non-empty string", None
        try:
            k = max(1, min(8, int(args.get("k", AUTO_K))))
        except (TypeError, ValueError):
            return "ERROR: k must be an integer from 1 to 8", None
        return render_passages(self.knowledge(inv).search(query, k)), None

    # ----------------------------------------------------------------- the invocation

    def run_invocation(self, inv: Invocation) -> str:
        if not self.needs_model(inv):
            return "idle: no new alert, no open incident, no unreported firing alert"
        messages: list[Message] = [{"role": "system", "content": self.system_prompt},
                                   {"role": "user", "content": self.context(inv)}]
        try:
            return self.loop(inv, messages, self.tools(),
                             {"end_invocation": self._end_invocation, "search_knowledge": self._search})
        finally:
            self.write_records(inv)

    # ----------------------------------------------------------------- incident records

    def after_tool(self, inv: Invocation, tool: str, args: dict[str, Any], result: ToolResult) -> None:
        if not result.ok:
            return
        if tool == "report_incident":
            inc = str(result.data.get("incident", ""))
            by_id = {f"A-{a.id}": a for a in inv.alerts}
            alerts = [by_id[str(r).upper()] for r in args.get("alerts", []) if str(r).upper() in by_id]
            self.records[inc] = {"title": args.get("title", ""), "opened": inv.now,
                                 "alerts": alert_rows(alerts), "rca": None, "actions": [], "resolved": None}
            self._dirty.add(inc)
            return
        inc = str(args.get("incident", ""))
        rec = self.records.get(inc)
        if rec is None:
            return
        if tool == "report_rca":
            rec["rca"] = {k: args.get(k) for k in ("service", "category", "artifact", "summary")}
        elif tool == "resolve_incident":
            rec["resolved"] = inv.now
        elif TOOLS.get(tool) is not None and TOOLS[tool].tier == "act":
            shown = {k: v for k, v in args.items() if k not in ("incident", "diff")}
            rec["actions"].append(f"{mmss(inv.now)} {tool} {shown} -> {result.output[:160]}")
        else:
            return
        self._dirty.add(inc)

    def write_records(self, inv: Invocation) -> None:
        """Write each changed incident record to ``incidents/<INC>.md`` through the tools."""
        for inc in sorted(self._dirty):
            rec = self.records[inc]
            rca = rec["rca"]
            lines = [f"# Past incident {inc}: {rec['title']}", "",
                     f"Opened at {mmss(rec['opened'])}; "
                     + (f"declared resolved at {mmss(rec['resolved'])}." if rec["resolved"] is not None
                        else "not resolved yet."),
                     "", "## Alerts", rec["alerts"], "", "## Root cause",
                     (f"service {rca['service']}, category {rca['category']}, artifact {rca['artifact']}: "
                      f"{rca['summary']}" if rca else "not reported"),
                     "", "## Actions", *(rec["actions"] or ["none"])]
            if inv.over:
                break
            inv.call("workspace_write", path=f"{INCIDENTS_DIR}/{inc}.md", text="\n".join(lines) + "\n")
        self._dirty.clear()
