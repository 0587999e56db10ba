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
                                            :class:`~engine.operate.tools.ToolResult` as ``ok``,
                                            ``output``, ``error``, ``denied``, ``data``,
                                            ``text`` and ``t`` (run time of the answer, s)
``POST /v1/invocations/{n}/usage``          body ``{"model", "prompt_tokens",
                                            "completion_tokens", "cost_usd", "latency_s"}``:
                                            the harness's own model usage, recorded as ``llm.call``
``POST /v1/invocations/{n}/done``           body ``{"note": "..."}``: ends invocation n
==========================================  =================================================

Invocation ``{n}`` must be the open one (409 otherwise; 410 after the run). A tool call
with bad arguments or an unknown tool is *not* an HTTP error: it is answered, and
recorded, like a built-in operator's (``ok: false``). A body that is not a JSON object, or
a ``timeout_s`` or ``tokens`` of the wrong type, is a 400 naming the problem; a body over
:data:`MAX_BODY_BYTES` (2 MiB) is a 413. Tool calls run on the engine thread, so the server
keeps answering (``GET /v1/run`` included) while one runs.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from engine.operate.toolargs import MAX_TOKENS
from engine.operate.tools import tool_schemas
from engine.serve.hub import MAX_POLL_S, AgentHub, HubError

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
CALL_TIMEOUT_S = 600.0
"""Longest wait for the engine to answer one call (a tool call takes milliseconds; this only
guards against a wedged engine)."""
MAX_BODY_BYTES = 2 * 1024 * 1024
"""Largest request body (a 1 MiB patch in JSON fits, with room)."""


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


def _http_error(cls: type[web.HTTPError], message: str) -> web.HTTPError:
    return cls(text=json.dumps({"error": message}), content_type="application/json")


async def _body(request: web.Request) -> dict[str, Any]:
    """The request's JSON object body ({} when there is none).

    Raises:
        web.HTTPBadRequest: not UTF-8, not JSON, nested too deep, or not an object (400).
        web.HTTPRequestEntityTooLarge: over :data:`MAX_BODY_BYTES` (413).
    """
    if not request.can_read_body:
        return {}
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise web.HTTPRequestEntityTooLarge(MAX_BODY_BYTES, content_type="application/json",
                                            text=json.dumps({"error": f"the body is over the {MAX_BODY_BYTES}"
                                                                      "-byte limit"})) from None
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise _http_error(web.HTTPBadRequest, f"body is not UTF-8: {exc}") from None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, a number too long, nesting too deep
        raise _http_error(web.HTTPBadRequest, f"body is not valid JSON: {str(exc)[:300]}") from None
    if not isinstance(data, dict):
        raise _http_error(web.HTTPBadRequest, "body must be a JSON object")
    return data


def _number(value: Any, name: str, *, lo: float, hi: float, integer: bool = False) -> float:
    """A finite number in [lo, hi] (an integer when ``integer``), else a 400 naming ``name``."""
    kind = "an integer" if integer else "a number"
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
        and (not integer or value == int(value)) and lo <= value <= hi
    if not ok:
        raise _http_error(web.HTTPBadRequest, f"{name} must be {kind} from {lo:g} to {hi:g}, got "
                                              f"{json.dumps(value, default=str)[:60]}")
    return float(value)


class _QuietDisconnects(logging.Filter):
    """Drops aiohttp's traceback for a client that went away mid-request (a client could
    otherwise flood the server's stderr with them); every other error is still logged."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, (ConnectionResetError, BrokenPipeError, asyncio.CancelledError))


def make_app(hub: AgentHub, token: str, info: Callable[[], dict[str, Any]]) -> web.Application:
    """The aiohttp application (module docstring).

    Args:
        hub: the engine bridge.
        token: the bearer token every request must carry.
        info: the ``GET /v1/run`` document.
    """
    for name in ("aiohttp.server", "aiohttp.web"):
        log = logging.getLogger(name)
        if not any(isinstance(f, _QuietDisconnects) for f in log.filters):
            log.addFilter(_QuietDisconnects())

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
        timeout = _number(body.get("timeout_s", 30.0), "timeout_s (seconds)", lo=0, hi=MAX_POLL_S)
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
        tokens = body.get("tokens", 0)
        tokens = int(_number(0 if tokens is None else tokens, "tokens", lo=0, hi=MAX_TOKENS, integer=True))
        return await _submit("tool", request, name=request.match_info["tool"], args=args, tokens=tokens)

    async def usage(request: web.Request) -> web.Response:
        return await _submit("usage", request, payload=await _body(request))

    async def done(request: web.Request) -> web.Response:
        return await _submit("done", request, payload=await _body(request))

    app = web.Application(middlewares=[auth], client_max_size=MAX_BODY_BYTES)
    app.router.add_get("/v1/run", run_info)
    app.router.add_get("/v1/tools", tools)
    app.router.add_post("/v1/invocations/next", next_invocation)
    app.router.add_post("/v1/invocations/{n}/tools/{tool}", call_tool)
    app.router.add_post("/v1/invocations/{n}/usage", usage)
    app.router.add_post("/v1/invocations/{n}/done", done)
    return app
