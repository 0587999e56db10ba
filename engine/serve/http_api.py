"""The plain HTTP JSON API of ``marathon serve`` (aiohttp).

Every request needs ``Authorization: Bearer <token>`` (401 otherwise). Bodies and answers
are JSON; errors are ``{"error": message}`` with a fitting status.

==========================================  =================================================
``GET  /v1/run``                            app, seed, regime, run id, operator, state, run time
``GET  /v1/tools``                          the tools in OpenAI function-calling format
``POST /v1/invocations/next``               long poll, body ``{"timeout_s": 30}`` (max 300):
                                            ``{"invocation": {...} | null, "finished": bool}``;
                                            after the run also ``bundle``, ``complete``
``POST /v1/invocations/{n}/tools/{tool}``   body ``{"args": {...}, "tokens": 0}``: the
                                            :class:`~engine.tools.ToolResult` as ``ok``,
                                            ``output``, ``error``, ``denied``, ``data``, ``text``
``POST /v1/invocations/{n}/usage``          body ``{"model", "prompt_tokens",
                                            "completion_tokens", "cost_usd", "latency_s"}``:
                                            the harness's own model usage, recorded as ``llm.call``
``POST /v1/invocations/{n}/done``           body ``{"note": "..."}``: ends invocation n
==========================================  =================================================

Invocation ``{n}`` must be the open one (409 otherwise; 410 after the run). A tool call
with bad arguments or an unknown tool is *not* an HTTP error: it is answered, and
recorded, like a built-in operator's (``ok: false``).
"""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from engine.serve.hub import AgentHub, HubError
from engine.tools import tool_schemas

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
CALL_TIMEOUT_S = 600.0
"""Longest wait for the engine to answer one call (a tool call takes milliseconds; this only
guards against a wedged engine)."""


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


async def _body(request: web.Request) -> dict[str, Any]:
    if not request.can_read_body:
        return {}
    try:
        data = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise web.HTTPBadRequest(text=json.dumps({"error": f"body is not valid JSON: {exc}"}),
                                 content_type="application/json") from None
    if not isinstance(data, dict):
        raise web.HTTPBadRequest(text=json.dumps({"error": "body must be a JSON object"}),
                                 content_type="application/json")
    return data


def make_app(hub: AgentHub, token: str, info: Callable[[], dict[str, Any]]) -> web.Application:
    """The aiohttp application (module docstring).

    Args:
        hub: the engine bridge.
        token: the bearer token every request must carry.
        info: the ``GET /v1/run`` document.
    """

    @web.middleware
    async def auth(request: web.Request, handler: Handler) -> web.StreamResponse:
        given = request.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return _error(401, "missing or wrong bearer token (Authorization: Bearer <token>; the token is printed "
                               "by marathon serve and written to its --ready-file)")
        return await handler(request)

    async def run_info(request: web.Request) -> web.Response:
        return web.json_response(info())

    async def tools(request: web.Request) -> web.Response:
        return web.json_response({"tools": tool_schemas()})

    async def next_invocation(request: web.Request) -> web.Response:
        body = await _body(request)
        try:
            timeout = float(body.get("timeout_s", 30.0))
        except (TypeError, ValueError):
            return _error(400, "timeout_s must be a number of seconds")
        return web.json_response(await asyncio.to_thread(hub.next_invocation, timeout))

    async def _submit(kind: str, request: web.Request, **kw: Any) -> web.Response:
        try:
            number = int(request.match_info["n"])
        except ValueError:
            return _error(400, "the invocation number must be an integer")
        fut = hub.submit(kind, number, **kw)
        try:
            result = await asyncio.wait_for(asyncio.wrap_future(fut), CALL_TIMEOUT_S)
        except HubError as exc:
            return _error(exc.status, exc.message)
        except TimeoutError:
            return _error(504, "the engine did not answer in time")
        return web.json_response(result)

    async def call_tool(request: web.Request) -> web.Response:
        body = await _body(request)
        args = body.get("args", {})
        try:
            tokens = int(body.get("tokens", 0) or 0)
        except (TypeError, ValueError):
            return _error(400, "tokens must be an integer")
        return await _submit("tool", request, name=request.match_info["tool"], args=args, tokens=max(0, tokens))

    async def usage(request: web.Request) -> web.Response:
        return await _submit("usage", request, payload=await _body(request))

    async def done(request: web.Request) -> web.Response:
        return await _submit("done", request, payload=await _body(request))

    app = web.Application(middlewares=[auth], client_max_size=4 * 1024 * 1024)
    app.router.add_get("/v1/run", run_info)
    app.router.add_get("/v1/tools", tools)
    app.router.add_post("/v1/invocations/next", next_invocation)
    app.router.add_post("/v1/invocations/{n}/tools/{tool}", call_tool)
    app.router.add_post("/v1/invocations/{n}/usage", usage)
    app.router.add_post("/v1/invocations/{n}/done", done)
    return app
