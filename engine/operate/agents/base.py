"""The shared machinery of the LLM agents: context, the tool loop, records.

An :class:`LLMAgent` is an :class:`~engine.operate.invocation.Operator`. Each invocation it

1. copies its system prompt (a file in ``engine/operate/agents/prompts/``) into the run's
   ``prompts/`` directory the first time, so the bundle holds the exact prompt used;
2. renders the invocation for the model: run time, the new alerts, the alerts pending or
   firing, its own incidents, and the tail of its notes file in the workspace;
3. runs the tool loop: the model's tool calls go through the same :class:`~engine.operate.tools.ToolBox`
   and policy layer as any operator's (recorded as ``tool.call`` events); a malformed call
   (invalid JSON arguments, an unknown tool, a tool it was not offered) comes back to the
   model as an ``ERROR:`` tool message, and a reply without a tool call gets a reminder,
   up to :data:`MAX_NUDGES` in a row;
4. ends when the model calls ``end_invocation`` (whose note is appended to ``notes.md`` in
   the workspace), a budget is spent, the endpoint fails, or the run is over -- always
   with an ``agent.end`` event saying why. Nothing the model does raises into the engine
   (nor does a defect in the agent: it ends the invocation with reason ``internal error``).

Transcripts go to ``<run_dir>/transcripts/<operator>.jsonl`` (see :class:`engine.operate.llm.client.Transcript`).
Invocations with nothing to do (no new alert, no open incident, no unreported firing
alert) call no model and end with reason ``idle``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from engine.operate.llm.client import LLMClient, LLMStop, Message, ToolCallRequest, Transcript
from engine.operate.llm.config import LLMConfig
from engine.operate.tools import TOOLS, ToolResult, tool_schemas

if TYPE_CHECKING:
    from alerts.history import AlertInstance
    from engine.operate.invocation import Invocation

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
NOTES_FILE = "notes.md"
MAX_NUDGES = 2
"""Replies in a row without a tool call before the invocation is ended."""
KEEP_RECENT_TOOL_OUTPUTS = 6
"""Tool outputs older than the last this-many are cut to :data:`OLD_OUTPUT_CHARS` in requests,
so a long investigation does not resend every earlier output in full at each step."""
OLD_OUTPUT_CHARS = 600
NOTES_TAIL_CHARS = 3000
MAX_ALERT_ROWS = 40

LocalHandler = Callable[["Invocation", dict[str, Any]], tuple[str, str | None]]
"""An agent-side tool: ``(inv, args) -> (text for the model, reason to end the loop or None)``."""


def function_tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """A tool in the OpenAI function-calling format."""
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": required, "additionalProperties": False}}}


END_TOOL = function_tool(
    "end_invocation",
    "Finish this invocation. The note is appended to your notes file and shown to you next invocation: "
    "record open hypotheses, what you changed and what to check next.",
    {"note": {"type": "string", "description": "notes for your next invocation"}}, ["note"])


def mmss(t: float) -> str:
    """Run time as ``m:ss``."""
    sign = "-" if t < 0 else ""
    t = abs(t)
    return f"{sign}{int(t // 60)}:{int(t % 60):02d}"


def alert_rows(alerts: list[AlertInstance], limit: int = MAX_ALERT_ROWS) -> str:
    """Alerts as a fixed-width table (ID, STATE, ALERT, SINCE, LABELS, SUMMARY); the newest ``limit``."""
    if not alerts:
        return "(none)"
    shown = alerts[-limit:]
    lines = ["ID      STATE     ALERT                        SINCE  LABELS | SUMMARY"]
    for a in shown:
        labels = ",".join(f"{k}={v}" for k, v in sorted(a.labels.items()) if k not in ("alertname", "severity"))
        lines.append(f"A-{a.id:<5} {a.state:9} {a.rule[:28]:28} {mmss(a.active_at):>6} {labels} | "
                     f"{a.annotations.get('summary', '')[:120]}")
    if len(alerts) > limit:
        lines.append(f"... {len(alerts) - limit} older alerts not shown (get_alerts lists every one)")
    return "\n".join(lines)


def parse_arguments(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    """A tool call's JSON arguments as a dict, or an error message for the model."""
    try:
        value = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        return None, f"arguments are not valid JSON ({exc}); call the tool again with a JSON object"
    if not isinstance(value, dict):
        return None, f"arguments must be a JSON object, got {type(value).__name__}"
    return value, None


class LLMAgent:
    """The ReAct loop every LLM agent shares (module docstring); subclasses change the context
    (:meth:`context`), the tools (:meth:`tools`) and what an invocation does (:meth:`run_invocation`).

    Args:
        config: the LLM configuration.
        client: the client (default: one built from ``config``).

    Raises:
        LLMConfigError: no endpoint or model configured (from the client).
    """

    agent: ClassVar[str] = "react"
    prompt_file: ClassVar[str] = "react.md"
    tiers: ClassVar[tuple[str, ...]] = ("read", "report", "act", "workspace")

    def __init__(self, config: LLMConfig, *, client: LLMClient | None = None) -> None:
        self.config = config
        self.client = client or LLMClient(config)
        self.name = f"{self.agent}-{config.label}" if config.label else self.agent
        self.system_prompt = (PROMPTS_DIR / self.prompt_file).read_text(encoding="utf-8")
        self.prompt_sha256 = hashlib.sha256(self.system_prompt.encode()).hexdigest()
        self.transcript = Transcript(None)
        self._prepared = False
        self.last_reason = ""

    # ----------------------------------------------------------------- run directory

    def _prepare(self, inv: Invocation) -> None:
        """First invocation: version the prompt (and extra files) into the run directory."""
        if self._prepared:
            return
        self._prepared = True
        run_dir = inv.run_dir
        if run_dir is None:
            return
        prompts = Path(run_dir) / "prompts"
        prompts.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(PROMPTS_DIR / self.prompt_file, prompts / self.prompt_file)
        for rel, src in self.versioned_files():
            dest = prompts / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
        self.transcript = Transcript(Path(run_dir) / "transcripts" / f"{self.name}.jsonl")
        self.transcript.write({"type": "config", "operator": self.name, "agent": self.agent,
                               "prompt": f"prompts/{self.prompt_file}", "prompt_sha256": self.prompt_sha256,
                               "llm": self.config.public()})

    def versioned_files(self) -> list[tuple[str, Path]]:
        """More files to copy into ``prompts/`` (relative name, source)."""
        return []

    # ----------------------------------------------------------------- the operator

    def invoke(self, inv: Invocation) -> None:
        """One invocation (module docstring); always ends with an ``agent.end`` event."""
        self._prepare(inv)
        self.client.begin(inv.number, operator=self.name, emit=inv.record, transcript=self.transcript)
        self.transcript.write({"type": "invocation", "invocation": inv.number, "t": inv.t,
                               "alerts": len(inv.alerts), "new_alerts": len(inv.new_alerts)})
        try:
            reason = self.run_invocation(inv)
        except LLMStop as exc:
            reason = exc.reason
        except Exception as exc:  # a defect in an agent must not take a marathon down; the reason records it
            reason = f"internal error: {type(exc).__name__}: {exc}"
        self.last_reason = reason
        spend = self.client.invocation_spend
        inv.record("agent.end", {"invocation": inv.number, "operator": self.name, "reason": reason,
                               "steps": spend.steps, "tokens": spend.tokens, "cost_usd": round(spend.usd, 8)})
        self.transcript.write({"type": "end", "invocation": inv.number, "t": inv.now, "reason": reason,
                               "steps": spend.steps, "tokens": spend.tokens, "cost_usd": round(spend.usd, 8)})

    def run_invocation(self, inv: Invocation) -> str:
        """What one invocation does; returns the reason it ended."""
        if not self.needs_model(inv):
            return "idle: no new alert, no open incident, no unreported firing alert"
        messages: list[Message] = [{"role": "system", "content": self.system_prompt},
                                   {"role": "user", "content": self.context(inv)}]
        return self.loop(inv, messages, self.tools(), {"end_invocation": self._end_invocation})

    def needs_model(self, inv: Invocation) -> bool:
        """Whether this invocation is worth a model call."""
        if inv.new_alerts:
            return True
        book = inv.incidents()
        if any(not rec.get("resolved", False) for rec in book.values()):
            return True
        reported = {a for rec in book.values() for a in rec.get("alerts", [])}  # type: ignore[attr-defined]
        return any(a.state == "firing" and f"A-{a.id}" not in reported for a in inv.alerts)

    def tools(self) -> list[dict[str, Any]]:
        """The tools offered to the model (OpenAI function format)."""
        return [*tool_schemas(self.tiers), END_TOOL]

    # ----------------------------------------------------------------- context

    def context(self, inv: Invocation) -> str:
        """The invocation as the model reads it."""
        active = [a for a in inv.alerts if a.state in ("pending", "firing")]
        resolved = sum(1 for a in inv.alerts if a.state not in ("pending", "firing"))
        incidents = []
        for inc, rec in inv.incidents().items():
            alerts = ", ".join(rec.get("alerts", []))  # type: ignore[arg-type]
            incidents.append(f"{inc} [{'resolved' if rec.get('resolved') else 'open'}] {rec.get('title', '')} "
                             f"(alerts {alerts})")
        notes = inv.workspace.read(NOTES_FILE) if inv.workspace.exists(NOTES_FILE) else ""
        if len(notes) > NOTES_TAIL_CHARS:
            notes = "... " + notes[-NOTES_TAIL_CHARS:]
        parts = [
            f"Invocation {inv.number} at run time {mmss(inv.t)} (you are invoked every "
            f"{inv.cadence_s:g} s of run time; each tool call costs run time).",
            f"\nNew or changed alerts since your last invocation ({len(inv.new_alerts)}):\n"
            f"{alert_rows(inv.new_alerts)}",
            f"\nAlerts pending or firing now ({len(active)}):\n{alert_rows(active)}",
            f"\nResolved alert instances so far: {resolved} (get_alerts lists the history).",
            "\nYour incidents:\n" + ("\n".join(incidents) if incidents else "(none)"),
            f"\nYour notes ({NOTES_FILE} in your workspace):\n{notes.strip() or '(empty)'}",
        ]
        extra = self.extra_context(inv)
        if extra:
            parts.append("\n" + extra)
        parts.append("\nInvestigate with the tools, act where it helps, and call end_invocation when done.")
        return "\n".join(parts)

    def extra_context(self, inv: Invocation) -> str:
        """More context after the notes (retrieval results, ...)."""
        return ""

    # ----------------------------------------------------------------- the loop

    def loop(self, inv: Invocation, messages: list[Message], tools: list[dict[str, Any]],
             local: dict[str, LocalHandler]) -> str:
        """Call the model and its tools until a local handler ends the loop; returns the reason.

        Raises:
            LLMStop: never from here (returned as the reason instead).
        """
        offered = {t["function"]["name"] for t in tools}
        nudges = 0
        while True:
            if inv.over:
                return "run over"
            try:
                reply = self.client.chat(self.compact(messages), tools)
            except LLMStop as exc:
                return exc.reason
            messages.append(reply.message)
            if not reply.tool_calls:
                nudges += 1
                if nudges > MAX_NUDGES:
                    return f"no tool call in {nudges} replies in a row"
                messages.append({"role": "user", "content": (
                    "ERROR: your reply called no tool. Every step must call one of the tools; call "
                    "end_invocation with a note when you are done for this invocation.")})
                continue
            nudges = 0
            ended: str | None = None
            for call in reply.tool_calls:
                if ended is not None:
                    content = "skipped: the loop ended before this call"
                else:
                    content, ended = self.dispatch(inv, call, offered, local)
                messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
            self.transcript.write({"type": "tools", "invocation": inv.number, "results": [
                {"tool_call_id": m["tool_call_id"], "content": m["content"]}
                for m in messages[-len(reply.tool_calls):]]})
            if ended is not None:
                return ended

    def dispatch(self, inv: Invocation, call: ToolCallRequest, offered: set[str],
                 local: dict[str, LocalHandler]) -> tuple[str, str | None]:
        """Run one tool call; returns (text for the model, reason to end or None)."""
        if call.name in local:
            args, error = parse_arguments(call.arguments)
            if args is None:
                return f"ERROR: {error}", None
            return local[call.name](inv, args)
        if call.name in TOOLS and call.name not in offered:
            return f"ERROR: tool {call.name!r} is not available to you; use one of: {', '.join(sorted(offered))}", \
                None
        args, error = parse_arguments(call.arguments)
        if args is not None:
            args = self.adjust_arguments(call.name, args)
        # Unknown tools and invalid JSON go to the tool box too: it records them like any call.
        result = inv.call_tool(call.name, args if args is not None else call.arguments)
        if args is not None:
            self.after_tool(inv, call.name, args, result)
        return self.clip(result.text()), None

    def adjust_arguments(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """Deterministic fix-ups of a tool call's arguments before it runs (default: none)."""
        return args

    def after_tool(self, inv: Invocation, tool: str, args: dict[str, Any], result: ToolResult) -> None:
        """Observe a tool call's result (default: nothing)."""
        return None

    def clip(self, text: str) -> str:
        limit = self.config.max_tool_output_chars
        if len(text) <= limit:
            return text
        return text[:limit] + f"\n... [{len(text) - limit} characters cut; narrow the query to see them]"

    @staticmethod
    def compact(messages: list[Message]) -> list[Message]:
        """The request's messages: tool outputs older than the last few cut short (module constants)."""
        tool_idx = [i for i, m in enumerate(messages) if m.get("role") == "tool"]
        old = set(tool_idx[:-KEEP_RECENT_TOOL_OUTPUTS]) if len(tool_idx) > KEEP_RECENT_TOOL_OUTPUTS else set()
        out: list[Message] = []
        for i, m in enumerate(messages):
            content = m.get("content")
            if i in old and isinstance(content, str) and len(content) > OLD_OUTPUT_CHARS:
                m = {**m, "content": content[:OLD_OUTPUT_CHARS] + f"\n... [{len(content) - OLD_OUTPUT_CHARS} "
                                                                   "characters of an earlier output elided]"}
            out.append(m)
        return out

    def _end_invocation(self, inv: Invocation, args: dict[str, Any]) -> tuple[str, str | None]:
        note = str(args.get("note", "")).strip()
        if note:
            inv.call("workspace_write", path=NOTES_FILE, text=f"\n## invocation {inv.number} at "
                                                              f"{mmss(inv.t)}\n{note}\n", append=True)
        return "invocation ended", "done"
