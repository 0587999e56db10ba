"""The MCP face of ``marathon serve`` (the official ``mcp`` SDK, low-level server).

Tools offered: every operator tool of :data:`engine.operate.tools.TOOLS` with its JSON Schema, plus
three control tools:

* ``next_invocation(timeout_s=30)`` -- wait for the engine's next invocation; returns its
  context (run time, cumulative and new alerts, your incidents, workspace files) as JSON,
  or ``{"finished": true, "bundle": ...}`` after the run;
* ``end_invocation(note="")`` -- end the open invocation (the engine moves on);
* ``report_usage(model, prompt_tokens, completion_tokens, cost_usd, latency_s)`` -- record
  your own model usage (an ``llm.call`` event, so tokens and cost reach the leaderboard).

Operator tool calls are served by the engine inside the open invocation, through the same
tool box and policy layer as any operator; outside an invocation they fail (``isError``).
Results carry the text the operator reads and, as structured content, ``ok``, ``output``,
``error``, ``denied``, ``data`` and ``t`` (the run time of the answer, seconds; ``get_time``
reads the clock).

Transports: stdio (``--mcp stdio``: the MCP client launches ``marathon serve``) and
streamable HTTP at ``/mcp`` behind the bearer token (:class:`BearerAuth`, which also refuses
bodies over :data:`engine.serve.http_api.MAX_BODY_BYTES` with 413) and the SDK's DNS
rebinding protection for loopback hosts.
"""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import mcp.types as types
from mcp.server.lowlevel import Server

from engine.operate.tools import TOOLS
from engine.serve.hub import AgentHub, HubError

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

CONTROL_TOOLS: list[types.Tool] = [
    types.Tool(name="next_invocation",
               description="Wait for the engine's next invocation (every cadence of run time) and return its context: "
                           "run time, cumulative alerts, new alert ids, your incidents, workspace files. Returns "
                           "finished=true with the bundle path after the run. Call the operator tools, then "
                           "end_invocation.",
               input_schema={"type": "object", "properties": {"timeout_s": {
                   "type": "number", "minimum": 0, "maximum": 300, "default": 30,
                   "description": "seconds to wait before returning with no invocation"}}}),
    types.Tool(name="end_invocation",
               description="End the open invocation; the engine continues to the next cadence.",
               input_schema={"type": "object", "properties": {"note": {"type": "string"}}}),
    types.Tool(name="report_usage",
               description="Record your own LLM usage for this invocation (tokens and dollars on the leaderboard).",
               input_schema={"type": "object", "properties": {
                   "model": {"type": "string"}, "prompt_tokens": {"type": "integer", "minimum": 0},
                   "completion_tokens": {"type": "integer", "minimum": 0},
                   "cost_usd": {"type": "number", "minimum": 0}, "latency_s": {"type": "number", "minimum": 0}},
                   "required": ["model", "prompt_tokens", "completion_tokens"]}),
]


def operator_tools() -> list[types.Tool]:
    """The operator tools as MCP tools (schemas from their pydantic argument models)."""
    out = []
    for spec in TOOLS.values():
        schema = spec.args.model_json_schema()
        schema.pop("title", None)
        out.append(types.Tool(name=spec.name, description=f"[{spec.tier}] {spec.description}", input_schema=schema))
    return out


def _result(payload: dict[str, Any], text: str | None = None, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text if text is not None else
                                                           json.dumps(payload, indent=1, default=str))],
                                structured_content=payload, is_error=error)


def make_server(hub: AgentHub, *, name: str = "sre-marathon") -> Server[Any]:
    """The MCP server (module docstring)."""
    tools = [*CONTROL_TOOLS, *operator_tools()]

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args: dict[str, Any] = dict(params.arguments or {})
        try:
            if params.name == "next_invocation":
                try:
                    timeout = float(args.get("timeout_s", 30.0))
                except (TypeError, ValueError):
                    return _result({"error": "timeout_s must be a number"}, error=True)
                return _result(await asyncio.to_thread(hub.next_invocation, timeout))
            if params.name == "end_invocation":
                done = await asyncio.wrap_future(hub.submit("done", payload={"note": str(args.get("note", ""))}))
                return _result(done)
            if params.name == "report_usage":
                return _result(await asyncio.wrap_future(hub.submit("usage", payload=args)))
            res = await asyncio.wrap_future(hub.submit("tool", name=params.name, args=args))
            return _result(res, str(res["text"]), error=not res["ok"])
        except HubError as exc:
            return _result({"error": exc.message, "status": exc.status}, f"ERROR: {exc.message}", error=True)

    return Server(name, instructions=("SRE-Marathon: call next_invocation, investigate and act with the operator "
                                      "tools, then end_invocation; repeat until finished."),
                  on_list_tools=list_tools, on_call_tool=call_tool)


class BearerAuth:
    """ASGI middleware: HTTP requests need ``Authorization: Bearer <token>`` (401 otherwise).

    Args:
        app: the wrapped ASGI application.
        token: the expected token.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            given = headers.get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                await _refuse(send, 401, "missing or wrong bearer token", [(b"www-authenticate", b"Bearer")])
                return
            # Read the whole body first (at most the cap), so an oversized one is refused before the SDK sees it.
            from engine.serve.http_api import MAX_BODY_BYTES

            messages: list[MutableMapping[str, Any]] = []
            size = 0
            while True:
                message = await receive()
                messages.append(message)
                if message["type"] != "http.request":
                    break
                size += len(message.get("body", b""))
                if size > MAX_BODY_BYTES:
                    await _refuse(send, 413, f"the body is over the {MAX_BODY_BYTES}-byte limit")
                    return
                if not message.get("more_body", False):
                    break

            async def replay() -> MutableMapping[str, Any]:
                return messages.pop(0) if messages else await receive()

            await self.app(scope, replay, send)
            return
        await self.app(scope, receive, send)


async def _refuse(send: Send, status: int, message: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), *(headers or [])]})
    await send({"type": "http.response.body", "body": body})
