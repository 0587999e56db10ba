"""``marathon serve``: run a marathon whose operator is an external agent.

The engine runs the schedule in a background thread with an :class:`~engine.serve.hub.ExternalOperator`;
the main thread serves the HTTP JSON API (:mod:`engine.serve.http_api`, aiohttp) and MCP
(:mod:`engine.serve.mcp_server`, streamable HTTP via uvicorn, or stdio). The run starts at
the agent's first ``next_invocation`` (unless ``--no-wait``), is recorded into a run
directory and sealed into a bundle at the end; then the server lingers until the agent
has seen the end (or ``--linger`` seconds) and exits. Ctrl-C or SIGTERM, or an MCP stdio client that
disconnects mid-run, stops the run and seals what was recorded as an incomplete bundle
(exit status 128 + the signal number, as a shell reports a signal).

Startup lines (URLs, token, run directory) go to stderr -- stdout belongs to the MCP
stdio transport -- and, with ``--ready-file PATH``, to a JSON file
``{"http", "mcp", "token", "pid", "run_dir", "kube_api", "kubeconfig"}`` (the last two with
``--kube-api``: :mod:`engine.run.kubeapi`) for harnesses that launch the server.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import json
import os
import re
import secrets
import signal
import sys
import threading
import time
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.cliargs import add_app_arguments, add_kube_api_argument, add_rules_argument, seed_arg, speed_arg
from engine.serve.hub import DEFAULT_INVOCATION_TIMEOUT_S, AgentHub, ExternalOperator
from faults.schedule import DEFAULT_REGIME, RUN_REGIMES

if TYPE_CHECKING:
    from engine.run.session import RunSession

STOP_GRACE_S = 4.0
"""Wall seconds the engine has to stop and seal after Ctrl-C or SIGTERM; then the server seals
what was recorded itself (the engine thread is abandoned)."""

TOKEN_ENV = "MARATHON_SERVE_TOKEN"
DEFAULT_HTTP_PORT = 8765
DEFAULT_MCP_PORT = 8766


def add_serve_arguments(p: argparse.ArgumentParser) -> None:
    """The ``marathon serve`` flags; sets ``func`` to :func:`cmd_serve`."""
    add_app_arguments(p, "online-boutique")
    p.add_argument("--seed", type=seed_arg, default=1)
    p.add_argument("--regime", default=DEFAULT_REGIME, choices=RUN_REGIMES)
    p.add_argument("--schedule", help="replay this schedule file instead of generating one")
    p.add_argument("--run-dir", help="record the run here (default: runs/<run id>); sealed into <dir>.marathon")
    p.add_argument("--name", default="external", help="the operator's name on the leaderboard (default external)")
    p.add_argument("--host", default="127.0.0.1", help="listen address (default loopback only)")
    p.add_argument("--port", type=int, default=DEFAULT_HTTP_PORT,
                   help=f"HTTP JSON API port (default {DEFAULT_HTTP_PORT}; 0: any free port)")
    p.add_argument("--no-http", action="store_true", help="do not serve the HTTP JSON API")
    p.add_argument("--mcp", choices=["http", "stdio", "none"], default="http",
                   help="MCP transport: streamable HTTP at /mcp (default), stdio, or none")
    p.add_argument("--mcp-port", type=int, default=DEFAULT_MCP_PORT,
                   help=f"MCP streamable HTTP port (default {DEFAULT_MCP_PORT}; 0: any free port)")
    p.add_argument("--token", help=f"bearer token (default ${TOKEN_ENV}, else a random one, printed)")
    p.add_argument("--invocation-timeout", type=float, default=DEFAULT_INVOCATION_TIMEOUT_S, metavar="S",
                   help="wall seconds the agent has per invocation before the engine ends it (default 300)")
    p.add_argument("--no-wait", action="store_true", help="start the run without waiting for the agent's first poll")
    p.add_argument("--speed", type=speed_arg, default=None,
                   help="wall-clock mode: run-time seconds per wall second (default: virtual clock)")
    p.add_argument("--linger", type=float, default=10.0, metavar="S",
                   help="after the run, keep serving until the agent has seen the end, at most S seconds")
    p.add_argument("--ready-file", metavar="PATH", help="write the URLs and token here as JSON once listening")
    add_kube_api_argument(p, "writes are the agent's acts, accepted while an invocation is open (name the incident "
                             "with kubectl --as=INC-0001)")
    add_rules_argument(p)
    p.set_defaults(func=cmd_serve)


def _log(msg: str) -> None:
    print(f"marathon serve: {msg}", file=sys.stderr, flush=True)


class _Engine(threading.Thread):
    """Drives the run session to the end (or a stop), seals the bundle, tells the hub."""

    def __init__(self, session: RunSession, hub: AgentHub, *, wait: bool) -> None:
        super().__init__(name="marathon-engine", daemon=True)
        self.session = session
        self.hub = hub
        self.wait = wait
        self.signal = 0
        """The signal that stopped the run (0: none)."""
        self._seal_lock = threading.Lock()
        self.sealed = False
        """Set once the run is sealed (by this thread, or by :meth:`abandon`)."""

    def run(self) -> None:
        hub = self.hub
        error: str | None = None
        try:
            if self.wait:
                while not hub.attached.wait(0.2):
                    if hub.stopping.is_set():
                        break
            if not hub.stopping.is_set():
                self.session.drive(hub.stopping.is_set)
        except Exception as exc:  # reported to the agent and the console; the partial run is still sealed
            error = f"{type(exc).__name__}: {exc}"
        finally:
            self._seal(error)

    def _seal(self, error: str | None, *, detach: bool = False) -> bool:
        """Close the recorder and seal the run once; tell the hub. False if another thread is sealing."""
        if not self._seal_lock.acquire(timeout=0 if detach else 60):
            return False
        try:
            if self.sealed:
                return True
            session = self.session
            outcome: dict[str, Any] = {"bundle": None, "complete": False, "error": error,
                                       "run_dir": str(session.run_dir)}
            if session.run.started:
                sealed = session.close(detach=detach)
                outcome["complete"] = sealed.complete
                outcome["bundle"] = str(sealed.bundle) if sealed.bundle is not None else None
                if sealed.error:
                    outcome["error"] = outcome["error"] or f"sealing failed: {sealed.error}"
            else:
                try:
                    session.run.close()
                except Exception as exc:
                    outcome["error"] = outcome["error"] or f"closing the recorder failed: {exc}"
            self.sealed = True
            self.hub.finish(outcome)
            return True
        finally:
            self._seal_lock.release()

    def abandon(self) -> bool:
        """Seal what was recorded from the calling thread, leaving a wedged engine thread behind."""
        return self._seal("the engine did not stop within the grace period; sealed what was recorded",
                          detach=True)


class _QuietUvicorn:
    """A uvicorn server that leaves signal handling (Ctrl-C) to ``marathon serve``."""

    def __init__(self, app: Any, host: str, port: int) -> None:
        import uvicorn

        class Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Generator[None, None, None]:
                yield

        self.server = Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on"))

    async def start(self) -> tuple[asyncio.Task[None], int]:
        task = asyncio.create_task(self.server.serve())
        while not self.server.started:
            if task.done():
                task.result()  # re-raise the bind error
                raise OSError("the MCP server stopped before it started")
            await asyncio.sleep(0.02)
        port = int(self.server.servers[0].sockets[0].getsockname()[1])
        return task, port

    def stop(self) -> None:
        self.server.should_exit = True


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


async def _serve(args: argparse.Namespace, run: Any, hub: AgentHub, engine: _Engine, token: str) -> None:
    from aiohttp import web

    from engine.serve.http_api import make_app
    from engine.serve.mcp_server import BearerAuth, make_server

    def info() -> dict[str, Any]:
        return {"run_id": run.run_id, "app": run.schedule.app, "seed": run.seed, "regime": run.schedule.regime,
                "operator": run.operator.name, "t": run.now, "duration_s": run.end_t, "cadence_s": run.cadence_s,
                "state": "finished" if hub.finished else "running" if run.started else "waiting for the agent",
                "invocations": hub.invocations, **({"outcome": hub.outcome} if hub.outcome else {})}

    loop = asyncio.get_running_loop()

    def on_signal(signum: int) -> None:
        engine.signal = signum
        _log(f"{signal.Signals(signum).name}: stopping the run and sealing what was recorded")
        hub.stop()

    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, on_signal, signum)
    ready: dict[str, Any] = {"http": None, "mcp": None, "token": token, "pid": os.getpid(),
                             "run_dir": str(engine.session.run_dir), "kube_api": None, "kubeconfig": None}
    runner: web.AppRunner | None = None
    mcp_http: _QuietUvicorn | None = None
    mcp_task: asyncio.Task[None] | None = None
    server = make_server(hub)
    kube: Any = None
    try:
        if args.kube_api is not None:
            from engine.run.kubeapi import start_kube_api

            kube = start_kube_api(run, command="serve", port=args.kube_api,
                                  invocation_open=lambda: hub.current is not None)
            ready["kube_api"], ready["kubeconfig"] = kube.url, str(kube.kubeconfig)
            _log(f"Kubernetes API on {kube.url}: kubectl --kubeconfig {kube.kubeconfig} (writes while an invocation "
                 "is open, naming the incident: kubectl --as=INC-0001 ...)")
        if not args.no_http:
            runner = web.AppRunner(make_app(hub, token, info), access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, args.host, args.port)
            await site.start()
            port = int(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]
            ready["http"] = f"http://{_url_host(args.host)}:{port}/v1"
            _log(f"HTTP JSON API on {ready['http']}")
        if args.mcp == "http":
            app = BearerAuth(server.streamable_http_app(host=args.host), token)
            mcp_http = _QuietUvicorn(app, args.host, args.mcp_port)
            mcp_task, port = await mcp_http.start()
            ready["mcp"] = f"http://{_url_host(args.host)}:{port}/mcp"
            _log(f"MCP (streamable HTTP) on {ready['mcp']}")
        elif args.mcp == "stdio":
            ready["mcp"] = "stdio"
            mcp_task = asyncio.create_task(_serve_stdio(server))
        _log(f"bearer token: {token}")
        _log(f"recording into {engine.session.run_dir}; "
             + ("the run starts at the agent's first next_invocation" if not args.no_wait else "the run has started"))
        if args.ready_file:
            tmp = Path(args.ready_file).with_name(Path(args.ready_file).name + ".tmp")
            tmp.write_text(json.dumps(ready, indent=1), encoding="utf-8")
            os.replace(tmp, args.ready_file)
        engine.start()
        stop_deadline: float | None = None
        while not hub.finished:
            if args.mcp == "stdio" and mcp_task is not None and mcp_task.done() and not hub.stopping.is_set():
                _log("the MCP client disconnected; stopping the run")
                hub.stop()
            if hub.stopping.is_set():
                stop_deadline = stop_deadline or time.monotonic() + STOP_GRACE_S
                if time.monotonic() > stop_deadline and engine.abandon():
                    _log(f"the engine did not stop within {STOP_GRACE_S:g} s; sealed what was recorded")
                    break
            await asyncio.sleep(0.1)
        deadline = time.monotonic() + (0.0 if engine.signal else max(0.0, args.linger))
        while time.monotonic() < deadline and not hub.told_finished.is_set():
            if args.mcp == "stdio" and mcp_task is not None and mcp_task.done():
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)  # let the final answers leave
    finally:
        hub.stop()
        if kube is not None:
            kube.stop()
        if mcp_http is not None:
            mcp_http.stop()
        if mcp_task is not None:
            if args.mcp == "stdio":
                mcp_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(mcp_task, 5.0)
        if runner is not None:
            await runner.cleanup()


async def _serve_stdio(server: Any) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve one marathon to an external agent (module docstring); returns the exit status."""
    from engine.run.session import RunSession
    from faults.generator import generate
    from faults.schedule import ScheduleError, load_schedule
    from faults.spec import CatalogError

    token = args.token or os.environ.get(TOKEN_ENV) or secrets.token_urlsafe(24)
    try:
        if not _is_loopback(args.host):
            _log(f"WARNING: listening on {args.host}, not loopback: anyone who can reach it and has the token can "
                 "operate this run")
        if args.invocation_timeout <= 0 or args.linger < 0:
            raise ValueError("--invocation-timeout must be > 0; --linger >= 0")
        if not re.fullmatch(r"[A-Za-z0-9._-]{1,40}", args.name):
            raise ValueError(f"--name {args.name!r}: use 1-40 letters, digits, '.', '_' or '-'")
        if args.no_http and args.mcp == "none":
            raise ValueError("nothing to serve: --no-http with --mcp none")
        sched = load_schedule(args.schedule) if args.schedule else generate(args.app, args.seed, args.regime,
                                                                            catalog_file=args.catalog)
        seed = sched.seed if args.schedule else args.seed
        hub = AgentHub(args.invocation_timeout)
        operator = ExternalOperator(hub, name=args.name)
        session = RunSession(sched, seed=seed, operator=operator, run_dir=args.run_dir or "auto",
                             speed=args.speed or None, rules=args.rules)
        run = session.run
    except (KeyError, ValueError, ScheduleError, CatalogError, FileNotFoundError, FileExistsError) as exc:
        print(f"marathon: {exc.args[0] if isinstance(exc, KeyError) and exc.args else exc}", file=sys.stderr)
        return 2
    engine = _Engine(session, hub, wait=not args.no_wait)
    interrupted = False
    try:
        asyncio.run(_serve(args, run, hub, engine, token))
    except KeyboardInterrupt:
        interrupted = True
        _log("interrupted; stopping the run")
    except OSError as exc:
        print(f"marathon: cannot serve: {exc}", file=sys.stderr)
        hub.stop()
        return 2
    finally:
        hub.stop()
    if engine.ident is not None:
        engine.join(timeout=60 if not hub.stopping.is_set() else STOP_GRACE_S)
        if engine.is_alive() and not engine.sealed:
            engine.abandon()
    outcome = hub.outcome or {}
    if outcome.get("error"):
        _log(f"error: {outcome['error']}")
    if outcome.get("bundle"):
        _log(f"sealed {'complete' if outcome.get('complete') else 'INCOMPLETE'} bundle: {outcome['bundle']}  "
             f"(score it: marathon score {outcome['bundle']})")
    if interrupted or engine.signal:
        return 128 + (engine.signal or signal.SIGINT)
    return 0 if outcome.get("complete") else 1


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def main(argv: list[str] | None = None) -> int:
    """``python -m engine.serve``: the same command before it is wired into ``marathon``."""
    parser = argparse.ArgumentParser(prog="marathon serve", description=__doc__.split("\n\n")[0])
    add_serve_arguments(parser)
    args = parser.parse_args(argv)
    return int(args.func(args))
