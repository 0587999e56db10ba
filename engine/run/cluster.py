"""``marathon cluster``: the simulated cluster as a standalone Kubernetes API server process.

:class:`SimulatedCluster` runs an app on the simulator paced against the wall clock
(:class:`engine.run.live.LiveSimulation`, whose ``/metrics`` a real Prometheus scrapes) and serves
the Kubernetes API over it (:class:`engine.kube.apiserver.KubeAPIServer`) with the cluster
administrator's Mutator (:class:`engine.kube.admin.AdminMutator`) and the simulated world's
reading of writes (:class:`engine.sim.world.SimWorld`: catalog images, env defects, Chaos Mesh,
node taints). Beside the API, behind the same bearer token:

* ``GET /marathon/v1/clock`` -- ``{"now": <run seconds>, "speed": X, "dt": 1.0, "epoch": <Unix
  seconds of run time 0 in the served timestamps>, "held": bool}``; ``POST
  /marathon/v1/clock/start`` starts a clock held by ``--hold`` (so a run attaches at run time 0;
  idempotent, and a no-op on a clock that runs);
* ``POST /marathon/v1/builds`` ``{"service", "files", "commit"}`` -- the simulated cluster's CI:
  builds the service's tree that differs from its release by ``files`` and answers ``{"image":
  "<release repository>:<release tag>-<commit[:7]>"}`` (:meth:`engine.sim.world.SimWorld.build`),
  which rolls out like any image; a real cluster's build system plays this part;
* ``POST /marathon/v1/load`` ``{"factor": x}`` -- scale the load generator's rate (a schedule's
  load burst, :meth:`engine.kube.substrate.KubeSubstrate.set_load_factor`); ``422`` for a
  factor that is not > 0;
* the service proxy (``/api/v1/namespaces/<ns>/services/<name>[:<port>]/proxy/<path>``), which
  answers each request with the simulator's model of that call (:meth:`SimulatedCluster.proxy`).

The administrator's kubeconfig (user ``admin``) is written where ``--kubeconfig`` says (default
``runs/cluster-<app>/kubeconfig``).
"""

from __future__ import annotations

import argparse
import json
import math
import secrets
import signal
import sys
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.cliargs import CATALOG_HELP, add_app_arguments
from engine.kube.admin import AdminMutator
from engine.run.live import LiveSimulation
from engine.run.substrates import open_substrate
from engine.substrate import SubstrateError
from faults.spec import Catalog, app_catalog

if TYPE_CHECKING:
    from aiohttp import web

    from engine.kube.apiserver import KubeAPIServer
    from engine.sim.world import SimWorld
    from engine.substrate import Substrate

CLOCK_PATH = "/marathon/v1/clock"
CLOCK_START_PATH = "/marathon/v1/clock/start"
LOAD_PATH = "/marathon/v1/load"
BUILDS_PATH = "/marathon/v1/builds"


def default_kubeconfig(app: str) -> Path:
    """Where ``marathon cluster --app APP`` writes its kubeconfig by default."""
    return Path("runs") / f"cluster-{app}" / "kubeconfig"


class SimulatedCluster:
    """An app on the simulator, paced on the wall clock, behind a Kubernetes API (module docstring).

    Args:
        app: a shipped app's name (or an app model file).
        seed: the simulation's seed.
        speed: run seconds per wall second.
        host: the listen address of both servers (loopback by default).
        port: the API server's port (0: a free one).
        metrics_port: the ``/metrics`` port (0: a free one).
        token: the administrator's bearer token (default: a fresh random one).
        hold: keep the run clock at 0 until ``POST /marathon/v1/clock/start``.
        catalog: the fault catalog the world resolves images and env values against (an app
            name or a file; default: the app's shipped catalog, or none for an app without one).
        repository: where catalog change images live (default
            :func:`faults.images.default_repository`).
        tls: serve the API over HTTPS (kubectl sends a token only over TLS).

    Raises:
        KeyError: unknown app; FileNotFoundError: no such ``catalog``; CatalogError: a catalog
            that does not load; ValueError: ``speed`` not > 0.
    """

    def __init__(self, app: str, *, seed: int = 0, speed: float = 1.0, host: str = "127.0.0.1", port: int = 0,
                 metrics_port: int = 0, token: str | None = None, hold: bool = False, catalog: str | None = None,
                 repository: str | None = None, tls: bool = True) -> None:
        from engine.sim.world import world_for

        self.sim: Substrate = open_substrate(app, seed=seed, retention_s=3600.0)
        try:
            faults = app_catalog(app, catalog)
        except FileNotFoundError:
            if catalog is not None:
                raise
            faults = Catalog(app=self.sim.app.name, faults=())  # an app without a catalog: no image or env is a defect
        self.world: SimWorld = world_for(self.sim, faults, repository=repository)
        self.host = host
        self.port = port
        self.token = token or secrets.token_urlsafe(24)
        self.tls = tls
        self.live = LiveSimulation(self.sim, host=host, port=metrics_port, speed=speed, paused=hold)
        self.live.on_tick = self._after_advance
        self.held = hold
        self.mutator = AdminMutator(self.sim, self.world)
        self.api: KubeAPIServer | None = None
        self.url = ""
        self._hold_lock = threading.Lock()

    @property
    def lock(self) -> threading.RLock:
        """The lock that guards the simulation (the pacing loop, the API server and /metrics)."""
        return self.live.lock

    @property
    def namespace(self) -> str:
        """The app's namespace."""
        return self.sim.app.namespace

    @property
    def speed(self) -> float:
        return self.live.speed

    # ----------------------------------------------------------------- running

    def start(self) -> str:
        """Start /metrics, the pacing loop and the API server; returns the API server's URL.

        Raises:
            RuntimeError: a server could not start (a port in use...).
        """
        from engine.kube.apiserver import KubeAPIServer
        from engine.sim.k8s import EPOCH

        self.api = KubeAPIServer(self.sim, lock=self.lock, mutator=self.mutator, token=self.token, user="admin",
                                 proxy=self.proxy, extra_routes=self._routes(), epoch=EPOCH, anchor_wall_clock=True,
                                 chaos=True, tls=self.tls)
        with self.lock:  # the objects as they are at start, before the first advance observes them
            self.api.observe()
        self.live.start()
        try:
            self.url = self.api.start(self.host, self.port)
        except BaseException:
            self.live.stop()
            raise
        return self.url

    def stop(self) -> None:
        """Stop both servers and the pacing loop (idempotent)."""
        if self.api is not None:
            self.api.stop()
        self.live.stop()

    def write_kubeconfig(self, path: str | Path) -> Path:
        """Write the administrator's kubeconfig (user ``admin``, the app's namespace) to ``path``.

        Raises:
            RuntimeError: before :meth:`start`.
            OSError: the file cannot be written.
        """
        from engine.kube.kubeconfig import write_kubeconfig

        if self.api is None or not self.url:
            raise RuntimeError("start the cluster before writing its kubeconfig")
        return write_kubeconfig(path, self.url, self.token, self.namespace, user="admin",
                                certificate_authority=self.api.certificate)

    def _after_advance(self, sim: Substrate) -> None:
        """After each advance, holding the lock: Chaos Mesh durations, then the watches."""
        self.world.step()
        if self.api is not None:
            self.api.observe()

    # ----------------------------------------------------------------- the clock

    def clock(self) -> dict[str, Any]:
        """The harness clock's reading (module docstring)."""
        epoch = None
        if self.api is not None and self.api.epoch is not None:
            epoch = (self.api.epoch + self.api.offset).timestamp()
        return {"now": float(self.sim.now), "speed": self.speed, "dt": float(self.sim.dt), "epoch": epoch,
                "held": self.held}

    def start_clock(self) -> dict[str, Any]:
        """Start a held clock now (the run clock then runs at :attr:`speed`, and the served
        timestamps are re-anchored so the server's clock is the wall clock); returns the reading."""
        with self._hold_lock, self.lock:
            if self.held:
                self.held = False
                if self.api is not None and self.api.epoch is not None:
                    # Served timestamps follow the wall clock from the start on (kubectl's ages).
                    wall = datetime.fromtimestamp(int(time.time()), UTC)
                    self.api.offset = wall - (self.api.epoch + timedelta(seconds=int(self.sim.now)))
                self.live.pace.set_paused(False, self.sim.now)
        return self.clock()

    def _routes(self) -> list[tuple[str, str, Any]]:
        from aiohttp import web

        async def get_clock(_: web.Request) -> web.Response:
            return web.json_response(self.clock())

        async def post_start(_: web.Request) -> web.Response:
            return web.json_response(self.start_clock())

        async def post_load(request: web.Request) -> web.Response:
            try:
                factor = float((await request.json())["factor"])
                with self.lock:
                    self.sim.set_load_factor(factor)
            except (KeyError, TypeError, ValueError, SubstrateError) as exc:
                return web.json_response({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 422,
                                          "reason": "Invalid", "message": f"load factor: {exc}"}, status=422)
            return web.json_response({"factor": factor})

        async def post_build(request: web.Request) -> web.Response:
            try:
                doc = await request.json()
                service, files, commit = doc["service"], doc["files"], doc["commit"]
                if not (isinstance(service, str) and isinstance(commit, str) and isinstance(files, dict)
                        and all(isinstance(k, str) and isinstance(v, str) for k, v in files.items())):
                    raise TypeError("service and commit are strings, files an object of strings")
                with self.lock:
                    image = self.world.build(service, files, commit)
            except (KeyError, TypeError, ValueError, AttributeError, SubstrateError) as exc:
                return web.json_response({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 422,
                                          "reason": "Invalid", "message": f"build: {exc}"}, status=422)
            return web.json_response({"image": image})

        return [("GET", CLOCK_PATH, get_clock), ("POST", CLOCK_START_PATH, post_start), ("POST", LOAD_PATH, post_load),
                ("POST", BUILDS_PATH, post_build)]

    # ----------------------------------------------------------------- the service proxy

    def proxy(self, namespace: str, service: str, port: str | None, path: str, method: str,
              query: Mapping[str, str], body: bytes) -> tuple[int, Mapping[str, str], bytes]:
        """The API server's service proxy (:data:`engine.kube.apiserver.ProxyCall`), called
        holding the lock: the answer of :meth:`engine.sim.world.SimWorld.model_request`, with
        ``Server-Timing: app;dur=<ms>`` and -- a simulator shortcut, so a prober's judgement
        equals the embedded one -- ``X-Marathon-Success: <probability>`` and
        ``X-Marathon-P95-Ms: <ms>``. An
        unknown namespace or service is ``404`` with a ``Status``; a path the service does not
        serve is ``404 page not found`` (a Go server's answer)."""
        if namespace != self.namespace or service not in self.sim.app.service_names():
            status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                      "message": f'services "{service}" not found', "reason": "NotFound",
                      "details": {"name": service, "kind": "services"}, "code": 404}
            return 404, {"Content-Type": "application/json"}, json.dumps(status).encode()
        answer = self.world.model_request(service, path, query, method)
        if answer is None:
            return 404, {"Content-Type": "text/plain; charset=utf-8"}, b"404 page not found\n"
        headers = {"Content-Type": "application/json", "Server-Timing": f"app;dur={answer.latency_ms:.1f}",
                   "X-Marathon-Success": f"{answer.success:.6f}", "X-Marathon-P95-Ms": f"{answer.p95_ms:.1f}"}
        payload = {"status": answer.status, "what": answer.what}
        if answer.status != 200:
            payload["error"] = "upstream request failed"
        return answer.status, headers, json.dumps(payload).encode()


DEFAULT_PORT = 6443
"""The API server's default port (kube-apiserver's ``--secure-port``)."""
DEFAULT_METRICS_PORT = 9464
"""The ``/metrics`` port by default: the target ``marathon prometheus-config`` writes by default."""


def add_cluster_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the arguments of ``marathon cluster`` on ``parser`` and set ``func``."""
    from engine.cliargs import seed_arg

    add_app_arguments(parser, "online-boutique", catalog=False)
    parser.add_argument("--seed", type=seed_arg, default=1)
    parser.add_argument("--speed", type=_positive, default=1.0,
                        help="run-time seconds per wall second (default 1: real time)")
    parser.add_argument("--host", default="127.0.0.1", help="listen address (default loopback)")
    parser.add_argument("--port", type=_port, default=DEFAULT_PORT,
                        help=f"the Kubernetes API's port (default {DEFAULT_PORT}; 0: any free port)")
    parser.add_argument("--metrics-port", type=_port, default=DEFAULT_METRICS_PORT,
                        help=f"/metrics for a real Prometheus (default {DEFAULT_METRICS_PORT}, the target "
                             "`marathon prometheus-config` writes; 0: any free port)")
    parser.add_argument("--kubeconfig", default=None, metavar="PATH",
                        help="write the admin kubeconfig here (default runs/cluster-<app>/kubeconfig)")
    parser.add_argument("--token", default=None, help="the admin bearer token (default: a random one)")
    parser.add_argument("--hold", action="store_true",
                        help="keep the run clock at 0 until POST /marathon/v1/clock/start (a run attaching at 0)")
    parser.add_argument("--catalog", default=None, metavar="FILE",
                        help=f"fault catalog for image and env resolution: {CATALOG_HELP}")
    parser.add_argument("--image-repository", default=None, metavar="REPO",
                        help="where catalog change images live (default registry.sre-marathon.local/<app>)")
    parser.set_defaults(func=cmd_cluster)


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid speed {text!r}: expected a positive number") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"invalid speed {text!r}: a cluster runs on the wall clock, at a positive "
                                         "speed")
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid port {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"invalid port {value}: 0..65535")
    return value


def cmd_cluster(args: argparse.Namespace) -> int:
    """``marathon cluster``: serve until SIGINT or SIGTERM.

    Returns:
        0 after a clean stop; 2 bad input (unknown app, no catalog); 1 a server or the
        kubeconfig could not be set up.
    """
    from engine.apps.model import AppModelError
    from faults.spec import CatalogError

    try:
        cluster = SimulatedCluster(args.app, seed=args.seed, speed=args.speed, host=args.host, port=args.port,
                                   metrics_port=args.metrics_port, token=args.token, hold=args.hold,
                                   catalog=args.catalog, repository=args.image_repository)
    except (KeyError, AppModelError, FileNotFoundError, CatalogError, ValueError) as exc:
        print(f"marathon cluster: {exc.args[0] if isinstance(exc, KeyError) and exc.args else exc}", file=sys.stderr)
        return 2
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        stop.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            url = cluster.start()
        except RuntimeError as exc:
            print(f"marathon cluster: {exc}", file=sys.stderr)
            return 1
        path = Path(args.kubeconfig) if args.kubeconfig else default_kubeconfig(cluster.sim.app.name)
        try:
            cluster.write_kubeconfig(path)
        except OSError as exc:
            print(f"marathon cluster: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
            cluster.stop()
            return 1
        metrics = f"{cluster.host}:{cluster.live.port}"
        clock = "held at 0 until POST /marathon/v1/clock/start" if cluster.held else f"running at {args.speed:g}x"
        print(f"marathon cluster: {cluster.sim.app.name} (seed {args.seed}) serving the Kubernetes API at {url}\n"
              f"  kubeconfig  {path}\n"
              f"  kubectl     kubectl --kubeconfig {path} get pods -o wide\n"
              f"  metrics     http://{metrics}/metrics  (marathon prometheus-config --target {metrics})\n"
              f"  clock       {clock}\n"
              "  stop        Ctrl-C", flush=True)
        while not stop.wait(0.5):
            pass
        print("marathon cluster: stopping", file=sys.stderr, flush=True)
        cluster.stop()
        return 0
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
