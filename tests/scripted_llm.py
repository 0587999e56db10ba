"""A scripted OpenAI-compatible chat-completions server for tests (real HTTP on loopback, aiohttp).

``ScriptedLLM(policy)`` serves ``POST /v1/chat/completions``: each request body is
recorded in :attr:`ScriptedLLM.requests` and answered by ``policy(body, server)``, which
returns a :class:`Reply` (an HTTP status, a JSON body and headers). Successful replies'
usage is summed in :attr:`ScriptedLLM.prompt_tokens` / :attr:`completion_tokens`, so a
test can check what the engine recorded against what the "provider" billed.

:func:`sre_policy` is a canned on-call engineer good enough to drive every agent through
the tools: it reads the invocation context and tool results in the messages and calls
get_alerts, report_incident, report_rca, an allowed act (rollback) and a denied one
(scaling the load generator), then end_invocation; for ``orbit`` investigations it reads the
deploy history, rolls back and concludes.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class Reply:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    """Seconds to wait before answering (to provoke client timeouts)."""


def tool_call(name: str, arguments: dict[str, Any] | str, call_id: str | None = None) -> dict[str, Any]:
    """One tool call of an assistant message (``arguments`` as a dict, or raw text to send verbatim)."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": call_id or f"call_{name}_{abs(hash(raw)) % 10**8}", "type": "function",
            "function": {"name": name, "arguments": raw}}


def completion(body: dict[str, Any], *, calls: list[dict[str, Any]] | None = None, text: str | None = None,
               completion_tokens: int = 20, usage: bool = True) -> Reply:
    """A chat.completion reply; prompt tokens are the request's JSON size / 4 (deterministic)."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = calls
    out: dict[str, Any] = {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": body["model"],
                           "choices": [{"index": 0, "message": message,
                                        "finish_reason": "tool_calls" if calls else "stop"}]}
    if usage:
        prompt = len(json.dumps(body["messages"])) // 4
        out["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion_tokens,
                        "total_tokens": prompt + completion_tokens}
    return Reply(200, out)


def error(status: int, message: str = "scripted error", retry_after: str | None = None) -> Reply:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return Reply(status, {"error": {"message": message, "type": "scripted", "code": status}}, headers)


Policy = Callable[[dict[str, Any], "ScriptedLLM"], Reply]


class ScriptedLLM:
    """The server (module docstring). Use as a context manager; :attr:`url` is the base URL (``.../v1``)."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.requests: list[dict[str, Any]] = []
        self.replies: list[Reply] = []
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        reply = self.policy(body, self)
        self.replies.append(reply)
        if reply.delay_s:
            await asyncio.sleep(reply.delay_s)
        if reply.status == 200 and "usage" in reply.body:
            self.prompt_tokens += reply.body["usage"]["prompt_tokens"]
            self.completion_tokens += reply.body["usage"]["completion_tokens"]
        return web.json_response(reply.body, status=reply.status, headers=reply.headers)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        self._loop.run_forever()

    def __enter__(self) -> ScriptedLLM:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        async def _stop() -> None:
            if self._runner is not None:
                await self._runner.cleanup()

        asyncio.run_coroutine_threadsafe(_stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


# --------------------------------------------------------------------- the canned engineer

_ALERT_ID = re.compile(r"\bA-(\d+)\b")


def _since_context(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Messages after the first user message (this invocation's steps)."""
    msgs: list[dict[str, Any]] = body["messages"]
    first_user = next(i for i, m in enumerate(msgs) if m["role"] == "user")
    return msgs[first_user + 1:]


def _tool_outputs(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in _since_context(body) if m["role"] == "tool"]


def _called(body: dict[str, Any]) -> list[str]:
    return [c["function"]["name"] for m in _since_context(body) if m["role"] == "assistant"
            for c in m.get("tool_calls") or []]


def _reported_ids(context: str) -> set[str]:
    section = context.split("Your incidents:", 1)[1].split("Your notes", 1)[0] if "Your incidents:" in context else ""
    return {f"A-{n}" for n in _ALERT_ID.findall(section)}


def sre_policy(body: dict[str, Any], server: ScriptedLLM) -> Reply:
    """The canned engineer (module docstring)."""
    msgs = body["messages"]
    context = next(m["content"] for m in msgs if m["role"] == "user")
    tools = {t["function"]["name"] for t in body.get("tools", [])}
    if context.startswith("Run time") and "Investigate incident" in context:
        return _orbit_step(body)
    called = _called(body)
    outputs = _tool_outputs(body)
    if not called:
        calls = [tool_call("get_alerts", {"state": "firing"})]
        if "search_knowledge" in tools:
            calls.append(tool_call("search_knowledge", {"query": "error rate rollback", "k": 2}))
        return completion(body, calls=calls)
    if called[-1] in ("get_alerts", "search_knowledge") and "report_incident" not in called:
        alerts_out = next(o for o in outputs if o.startswith("run time"))
        firing = [f"A-{n}" for line in alerts_out.splitlines() if " firing " in line
                  for n in _ALERT_ID.findall(line)[:1]]
        fresh = [a for a in firing if a not in _reported_ids(context)]
        if not fresh:
            return completion(body, calls=[tool_call("end_invocation", {"note": "nothing new to report"})])
        service = "frontend"
        for line in alerts_out.splitlines():
            if fresh[0] + " " in line or line.startswith(fresh[0]):
                m = re.search(r"service=([a-z0-9-]+)", line) or re.search(r"deployment=([a-z0-9-]+)", line)
                if m:
                    service = m.group(1)
        return completion(body, calls=[tool_call("report_incident", {"alerts": fresh,
                                                                     "title": f"scripted: {service}"})])
    if called[-1] == "report_incident":
        m = re.search(r"opened (INC-\d+): scripted: ([a-z0-9-]+)", outputs[-1])
        if not m:
            return completion(body, calls=[tool_call("end_invocation", {"note": "report failed"})])
        inc, service = m.group(1), m.group(2)
        return completion(body, calls=[
            tool_call("report_rca", {"incident": inc, "service": service, "category": "code-bug",
                                     "artifact": "unknown", "summary": "scripted root cause"}),
            tool_call("rollback", {"deployment": service, "incident": inc}),
            tool_call("scale_deployment", {"deployment": "loadgenerator", "replicas": 0, "incident": inc}),
        ])
    return completion(body, calls=[tool_call("end_invocation", {"note": f"handled; calls: {', '.join(called)}"})])


def _orbit_step(body: dict[str, Any]) -> Reply:
    context = next(m["content"] for m in body["messages"] if m["role"] == "user")
    workload = re.search(r"for workload ([a-z0-9-]+)", context)
    service = workload.group(1) if workload else "frontend"
    called = _called(body)
    if not called:
        return completion(body, calls=[tool_call("get_deploy_history", {"service": service, "limit": 5})])
    if called[-1] == "get_deploy_history":
        return completion(body, calls=[tool_call("rollback", {"deployment": service})])
    if called[-1] == "rollback":
        changes = re.findall(r"\b(chg-\d+)\b", "\n".join(_tool_outputs(body)))
        return completion(body, calls=[tool_call("conclude", {
            "service": service, "category": "code-bug", "artifact": changes[0] if changes else service,
            "summary": "scripted: the latest change broke it; rolled back"})])
    return completion(body, calls=[tool_call("end_invocation", {"note": "scripted pause"})])
