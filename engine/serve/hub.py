"""The bridge between the engine's run loop and an external agent's requests.

The engine runs in its own thread on the virtual (or a wall) clock. Every cadence it
invokes :class:`ExternalOperator`, which publishes the invocation on the
:class:`AgentHub` and then serves the agent's requests *on the engine thread*, in
arrival order, until the agent says it is done or :attr:`AgentHub.invocation_timeout_s`
wall seconds pass. Run time does not move while the agent thinks; only its tool calls
cost modeled run time, exactly as for a built-in operator (the calls go through the same
:class:`~engine.operate.tools.ToolBox` and policy layer and are recorded as ``tool.call``
events).

Server threads (HTTP, MCP) talk to the hub only through :meth:`AgentHub.next_invocation`
(a long poll) and :meth:`AgentHub.submit` (returns a :class:`concurrent.futures.Future`
the engine thread resolves). A request for an invocation that is not open fails with
:class:`HubError` (status 409); after the run it fails with status 410.
"""

from __future__ import annotations

import concurrent.futures
import json
import math
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from engine.operate.invocation import MAX_USAGE_COST_USD, MAX_USAGE_LATENCY_S, MAX_USAGE_TOKENS
from engine.operate.toolargs import printable

if TYPE_CHECKING:
    from engine.operate.invocation import Invocation

DEFAULT_INVOCATION_TIMEOUT_S = 300.0
"""Wall seconds an external agent has to finish one invocation before the engine ends it."""
MAX_POLL_S = 300.0


class HubError(Exception):
    """A request the hub refuses: :attr:`status` is the HTTP status that fits (409, 410, 400)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class _Request:
    kind: str
    """``tool``, ``usage`` or ``done``."""
    invocation: int | None
    future: concurrent.futures.Future[dict[str, Any]]
    name: str = ""
    args: Any = None
    tokens: int = 0
    payload: dict[str, Any] = field(default_factory=dict)


def alert_dict(a: Any) -> dict[str, Any]:
    """An alert instance as the external agent sees it (the shape of ``get_alerts`` data)."""
    return {"id": f"A-{a.id}", "fingerprint": a.fingerprint, "alertname": a.rule, "state": a.state,
            "labels": dict(a.labels), "active_at": a.active_at, "fired_at": a.fired_at, "ended_at": a.ended_at,
            "summary": a.annotations.get("summary", "")}


def invocation_context(inv: Invocation) -> dict[str, Any]:
    """What an external agent receives for one invocation (JSON-serialisable).

    Keys: ``number``, ``t`` (run time, seconds), ``mmss`` (the same as ``m:ss``),
    ``cadence_s``, ``next_invocation_t`` (run time of the next invocation, seconds),
    ``alerts`` (the cumulative history, oldest first), ``new_alerts`` (ids of instances that
    changed state since the previous invocation), ``incidents`` (the agent's own reports: id
    -> alerts, title, resolved) and ``workspace_files``.
    """
    book = inv.incidents()
    state = inv.state
    t = float(inv.t)
    return {"number": inv.number, "t": t, "mmss": f"{int(t // 60)}:{int(t % 60):02d}", "cadence_s": inv.cadence_s,
            "next_invocation_t": float(state.next_invocation_t),
            "alerts": [alert_dict(a) for a in inv.alerts], "new_alerts": [f"A-{a.id}" for a in inv.new_alerts],
            "incidents": json.loads(json.dumps(book, default=str)), "workspace_files": inv.workspace.files()}


class AgentHub:
    """Thread-safe hand-off of invocations and requests (module docstring).

    Args:
        invocation_timeout_s: wall seconds before an unanswered invocation is ended.
    """

    def __init__(self, invocation_timeout_s: float = DEFAULT_INVOCATION_TIMEOUT_S) -> None:
        if invocation_timeout_s <= 0:
            raise ValueError("the invocation timeout must be > 0 seconds")
        self.invocation_timeout_s = invocation_timeout_s
        self._cond = threading.Condition()
        self._queue: queue.Queue[_Request] = queue.Queue()
        self.current: dict[str, Any] | None = None
        self.attached = threading.Event()
        """Set by the first poll: the engine may start."""
        self.stopping = threading.Event()
        self.outcome: dict[str, Any] | None = None
        """Set when the run is over: ``bundle``, ``complete``, ``error``."""
        self.told_finished = threading.Event()
        self.invocations = 0

    # ----------------------------------------------------------------- agent side (any thread)

    @property
    def finished(self) -> bool:
        return self.outcome is not None

    def next_invocation(self, timeout_s: float = 30.0) -> dict[str, Any]:
        """Long poll: the open invocation, the end of the run, or nothing after ``timeout_s``.

        Returns:
            ``{"invocation": context | None, "finished": bool, ...outcome}``.
        """
        self.attached.set()
        timeout_s = max(0.0, min(float(timeout_s), MAX_POLL_S))
        with self._cond:
            self._cond.wait_for(lambda: self.current is not None or self.outcome is not None, timeout_s)
            if self.current is not None:
                return {"invocation": self.current, "finished": False}
            if self.outcome is not None:
                self.told_finished.set()
                return {"invocation": None, "finished": True, **self.outcome}
            return {"invocation": None, "finished": False}

    def submit(self, kind: str, invocation: int | None = None, *, name: str = "", args: Any = None,
               tokens: int = 0, payload: dict[str, Any] | None = None) -> concurrent.futures.Future[dict[str, Any]]:
        """Queue a request for the open invocation (``invocation`` None: whichever is open).

        The future resolves to a JSON-serialisable dict, or fails with :class:`HubError`.
        """
        fut: concurrent.futures.Future[dict[str, Any]] = concurrent.futures.Future()
        with self._cond:
            if self.outcome is not None:
                fut.set_exception(HubError(410, "the run has ended; no more calls are accepted"))
            elif self.current is None:
                fut.set_exception(HubError(409, "no invocation is open: call next_invocation and wait for one"))
            elif invocation is not None and invocation != self.current["number"]:
                fut.set_exception(HubError(409, f"invocation {invocation} is not open (open: "
                                                f"{self.current['number']})"))
            else:
                self._queue.put(_Request(kind, invocation, fut, name, args, tokens, payload or {}))
        return fut

    # ----------------------------------------------------------------- engine side

    def serve(self, inv: Invocation, context: dict[str, Any]) -> tuple[str, str, int]:
        """Publish ``inv`` and serve requests until done, timeout or stop (engine thread).

        Returns:
            (reason the invocation ended, the agent's note, tool calls served).
        """
        with self._cond:
            self.current = context
            self.invocations += 1
            self._cond.notify_all()
        deadline = time.monotonic() + self.invocation_timeout_s
        reason, note, calls = "timeout", "", 0
        done: _Request | None = None
        try:
            while True:
                if self.stopping.is_set():
                    reason = "server stopping"
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    reason = f"timeout: no done within {self.invocation_timeout_s:g} s"
                    break
                try:
                    req = self._queue.get(timeout=min(remaining, 0.25))
                except queue.Empty:
                    continue
                if req.kind == "done":
                    reason, note, done = "done", printable(str(req.payload.get("note", ""))[:2000]), req
                    break
                try:
                    if req.kind == "tool":
                        calls += 1
                        req.future.set_result(self._tool(inv, req))
                    elif req.kind == "usage":
                        req.future.set_result(self._usage(inv, req))
                    else:
                        req.future.set_exception(HubError(400, f"unknown request kind {req.kind!r}"))
                except HubError as exc:  # the agent's request was wrong: its status stands
                    req.future.set_exception(exc)
                except Exception as exc:  # a defect must reach the agent as an error, not stop the engine
                    req.future.set_exception(HubError(500, f"{type(exc).__name__}: {exc}"))
        finally:
            with self._cond:
                self.current = None
                self._cond.notify_all()
            while True:
                try:
                    late = self._queue.get_nowait()
                except queue.Empty:
                    break
                late.future.set_exception(HubError(409, f"invocation {inv.number} ended ({reason})"))
            if done is not None:
                done.future.set_result({"ok": True, "invocation": inv.number, "tool_calls": calls})
        return reason, note, calls

    @staticmethod
    def _tool(inv: Invocation, req: _Request) -> dict[str, Any]:
        res = inv.call_tool(req.name, req.args, tokens=req.tokens)
        data = json.loads(json.dumps(res.data, default=str))
        return {"ok": res.ok, "output": res.output, "error": res.error, "denied": res.denied, "data": data,
                "text": res.text(), "t": res.t}

    @staticmethod
    def _usage(inv: Invocation, req: _Request) -> dict[str, Any]:
        p = req.payload
        try:
            prompt = int(p.get("prompt_tokens", 0))
            completion = int(p.get("completion_tokens", 0))
            cost = float(p.get("cost_usd", 0.0))
            latency = float(p.get("latency_s", 0.0))
        except (TypeError, ValueError, OverflowError) as exc:  # OverflowError: int(1e400)
            raise HubError(400, f"usage fields must be numbers: {exc}") from None
        if min(prompt, completion) < 0 or not (math.isfinite(cost) and math.isfinite(latency)) \
                or cost < 0 or latency < 0:
            raise HubError(400, "usage fields must be finite non-negative numbers")
        if max(prompt, completion) > MAX_USAGE_TOKENS or cost > MAX_USAGE_COST_USD or latency > MAX_USAGE_LATENCY_S:
            raise HubError(400, f"usage over the limits of one model call: tokens <= {MAX_USAGE_TOKENS:,}, cost_usd <= "
                                f"{MAX_USAGE_COST_USD:g}, latency_s <= {MAX_USAGE_LATENCY_S:g}")
        model = printable(str(p.get("model", "unknown"))[:200])
        from engine.operate.llm.client import usage_payload  # the openai SDK loads only when usage is reported

        inv.record("llm.call", usage_payload(model=model, prompt_tokens=prompt, completion_tokens=completion,
                                              cost_usd=cost, latency_s=latency, operator=inv.operator,
                                              invocation=inv.number))
        return {"ok": True, "tokens": prompt + completion}

    def finish(self, outcome: dict[str, Any]) -> None:
        """The run is over (engine thread): wake every poller with ``outcome``."""
        with self._cond:
            self.outcome = outcome
            self._cond.notify_all()

    def stop(self) -> None:
        """Ask the engine to stop at the next opportunity (shutdown, disconnected agent)."""
        self.stopping.set()
        with self._cond:
            self._cond.notify_all()


@dataclass
class ExternalOperator:
    """An operator whose decisions come from outside the process through an :class:`AgentHub`."""

    hub: AgentHub
    name: str = "external"

    def invoke(self, inv: Invocation) -> None:
        if self.hub.stopping.is_set():
            return
        reason, note, calls = self.hub.serve(inv, invocation_context(inv))
        inv.record("agent.end", {"invocation": inv.number, "operator": self.name, "reason": reason,
                                 "note": note, "tool_calls": calls})
