"""Container logs that tell a coherent story, in each runtime's own log format, at real volume.

Two kinds of lines make up a container's log:

* **Story lines**, stored when they happen (a bounded buffer per container): start-up and
  shutdown, crashes with the runtime's own fatal output, OOM kills (nothing: SIGKILL),
  store restarts.
* **Traffic lines**, generated lazily when the log is read (:func:`traffic_lines`): the
  simulator keeps one :class:`TrafficWindow` per :data:`WINDOW_S` seconds (request and
  failure counts and latency per pod and operation, a bounded deque shared by all pods), and
  reading a pod's log expands the windows of its container's lifetime into per-request
  access and INFO lines, error lines for every failed request (no cap) and background noise
  (cache misses, not-found lookups, slow queries, GC, periodic saves), drawn from a seeded
  per-(pod, window) stream, so the same seed reads the same log and nothing is stored per
  request.

Formats follow each runtime's logger as the demo apps configure it: logrus JSON with
``severity``/``message``/``timestamp`` keys (Online Boutique's Go services), Spring Boot's
console pattern (Train Ticket, ad), pino JSON (currency, payment), the Python JSON logger of
Online Boutique (``timestamp``/``severity``/``name``/``message``), the .NET console logger,
Ruby's Logger and Rack's common log, Monolog, Rust tracing, Envoy's default access log and
nginx's ``combined`` access log and error log, and the stores' own server logs. Errors use
each runtime's own wording: gRPC-Go's ``rpc error: code = ... desc = ...`` only in Go callers,
Spring's ``RestTemplate`` exceptions and stack traces in Java, grpc-js ``14 UNAVAILABLE:`` in
Node.js, ``Grpc.Core.RpcException`` in .NET, nginx's ``connect() failed (111: Connection
refused) while connecting to upstream`` and Envoy's response flags (``UF``, ``UT``).

Where a code fault's failure is logged follows :attr:`engine.sim.effects.LogHint.where`:
the faulty service itself (a stack trace), only its callers, or nowhere.

Departures from reality: message texts are templates (request ids, user ids and amounts are
drawn from the seeded stream, not taken from real requests); volume follows the simulated
request rate with one line per request per template line; a container's log keeps the
newest :data:`LOG_FILE_LINES` lines (the kubelet rotates container logs at
``containerLogMaxSize`` 10 MiB and ``kubectl logs`` reads only the current file; 10 MiB at
about 200 bytes a line is about 50,000 lines).
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import re
import zlib
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from engine.sim.k8s import EPOCH

MAX_LINES = 600
"""Story lines kept per container (current and previous), oldest dropped first."""
WINDOW_S = 10.0
"""Traffic is summarised for the logs in windows of this many seconds."""
RETENTION_S = 3600.0
"""Windows kept (the newest hour): bounds memory whatever the run length."""
LOG_FILE_LINES = 50_000
"""Lines ``kubectl logs`` can return for one container (the kubelet's 10 MiB
``containerLogMaxSize`` at about 200 bytes a line)."""


@dataclass
class ContainerLog:
    """Story lines of the current and previous container of one pod, and their lifetimes."""

    current: deque[tuple[float, Any]] = field(default_factory=lambda: deque(maxlen=MAX_LINES))
    previous: deque[tuple[float, Any]] = field(default_factory=lambda: deque(maxlen=MAX_LINES))
    """Entries are (run time, line)."""
    started_t: float | None = None
    """Run time the current container started (None: it never started)."""
    ended_t: float | None = None
    """Run time the current container exited (None: running)."""
    prev_span: tuple[float, float] | None = None
    """(start, end) of the previous container."""

    def rotate(self, t: float) -> None:
        """A new container starts at run time ``t``; the current one becomes ``--previous``."""
        if self.started_t is not None:
            self.previous = self.current
            self.prev_span = (self.started_t, self.ended_t if self.ended_t is not None else t)
            self.current = deque(maxlen=MAX_LINES)
        self.started_t, self.ended_t = t, None


@dataclass(frozen=True)
class WindowLayout:
    """Which traffic slots belong to which pod, for one pod table (shared by its windows)."""

    slots: dict[str, np.ndarray[Any, Any]]
    """Pod name -> its slot indices."""
    ops: np.ndarray[Any, Any]
    """Slot -> operation index (into the call forest's operations)."""


@dataclass(frozen=True)
class TrafficWindow:
    """Requests served by every pod over ``[t0, t1)`` run time seconds (expected counts).

    ``calls``, ``fails`` and ``lat_ms`` are per slot of ``layout``; ``causes`` maps a failing
    slot to why it failed: ``("own", detail)``, ``("shed", {})`` or ``("downstream", detail)``.
    """

    t0: float
    t1: float
    layout: WindowLayout
    calls: np.ndarray[Any, Any]
    fails: np.ndarray[Any, Any]
    lat_ms: np.ndarray[Any, Any]
    causes: dict[int, tuple[str, dict[str, Any]]]


def _dt(t: float) -> datetime:
    return EPOCH + timedelta(seconds=t)


_ISO_SECONDS: dict[int, str] = {}


def _iso(t: float) -> str:
    """RFC 3339 with milliseconds (``2026-01-05T09:00:00.123Z``); the per-second prefix is
    cached because log reads format many lines per second."""
    sec = math.floor(t)
    prefix = _ISO_SECONDS.get(sec)
    if prefix is None:
        if len(_ISO_SECONDS) > 4096:
            _ISO_SECONDS.clear()
        prefix = _ISO_SECONDS[sec] = _dt(sec).strftime("%Y-%m-%dT%H:%M:%S.")
    return f"{prefix}{int((t - sec) * 1000):03d}Z"


def fill_path(path: str, salt: str) -> str:
    """Replace route template parameters (``{id}``) with plausible concrete values."""
    if "{" not in path:
        return path
    digest = hashlib.sha256((path + salt).encode()).hexdigest().upper()

    def value(match: re.Match[str]) -> str:
        name = match.group(1).lower()
        if "date" in name:
            return f"2026-01-{int(digest[:2], 16) % 28 + 1:02d}"
        if "weight" in name:
            return str(int(digest[:2], 16) % 40 + 1)
        if name.endswith("id") or "number" in name or "code" in name:
            return "".join(c for c in digest if c.isalnum())[:10]
        return digest[:8].lower()

    return re.sub(r"\{([^}]+)\}", value, path)


def _java_class(service: str, function: str, file: str) -> str:
    base = service.replace("ts-", "").replace("-service", "").replace("-", "")
    cls = file.rsplit("/", 1)[-1].split(".", 1)[0] if file else "Application"
    return f"{base}.{cls}"


_SORTED_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"))
"""Go's encoding/json as logrus' JSONFormatter uses it: keys sorted, no spaces."""
_COMPACT_JSON = json.JSONEncoder(separators=(",", ":"))
"""pino's and MongoDB's JSON lines: insertion order, no spaces."""


class LogFormatter:
    """Turns (kind, detail) into lines for one service's runtime."""

    def __init__(self, service: str, language: str, port: int | None, container: str, role: str = "app",
                 protocol: str = "http") -> None:
        self.service = service
        self.language = language
        self.port = port or 8080
        self.container = container
        self.role = role
        self.protocol = protocol
        self.host = container
        """The process's host name (a pod's name; set per read)."""
        self._quiet: dict[str, bool] = {}

    def quiet(self, op: str, handler: str) -> bool:
        """True when serving ``op`` writes no line (many gRPC servers log nothing per request)."""
        q = self._quiet.get(op)
        if q is None:
            q = self._quiet[op] = not self.request_lines(0.0, op, 200, 1.0, "10.8.0.2:40000", 1, handler)
        return q

    def for_pod(self, pod: str) -> LogFormatter:
        """A copy that names ``pod`` as its host."""
        twin = copy.copy(self)
        twin.host = pod
        return twin

    # -- framing ---------------------------------------------------------------

    def line(self, t: float, level: str, msg: str, logger: str = "", extra: dict[str, Any] | None = None,
             thread: str = "") -> str:
        """One log line at run time ``t`` with ``level`` in the runtime's format."""
        lang = self.language
        lv = level.upper()
        if lang == "nodejs":
            level_no = {"DEBUG": 20, "INFO": 30, "WARN": 40, "ERROR": 50, "FATAL": 60}.get(lv, 30)
            rec: dict[str, Any] = {"level": level_no, "time": int((EPOCH.timestamp() + t) * 1000), "pid": 1,
                   "hostname": self.host, "name": f"{self.service}-server", "msg": msg}
            if extra:
                rec.update(extra)
            return _COMPACT_JSON.encode(rec)
        d = _dt(t)
        ms = f"{d.microsecond // 1000:03d}"
        if lang == "go":
            rec = {"message": msg, "severity": level.lower(), "timestamp": _iso(t)}
            if extra:
                rec.update(extra)
            return _SORTED_JSON.encode(rec)  # logrus' JSONFormatter sorts keys
        if lang in ("java",):
            # logback's %15.15t and %-40.40logger keep the end of a long name.
            thread = thread or f"http-nio-{self.port}-exec-{int(t * 7) % 10 + 1}"
            name = logger or f"{self.service.replace('-', '.')}.Application"
            return f"{d:%Y-%m-%d %H:%M:%S}.{ms} {lv:>5} 1 --- [{thread[-15:]:>15}] {name[-40:]:<40} : {msg}"
        if lang == "kotlin":
            return f"{d:%H:%M:%S}.{ms} [main] {lv:<5} {logger or 'frauddetection'} - {msg}"
        if lang == "csharp":
            # Microsoft.Extensions.Logging's console formatter: "level: Category[EventId]" and
            # the message on its own line, indented six spaces.
            short = {"INFO": "info", "WARN": "warn", "ERROR": "fail", "DEBUG": "dbug", "FATAL": "crit"}.get(lv, "info")
            return f"{short}: {logger or self.service + '.Services'}[0]\n      {msg}"
        if lang == "typescript":
            return f"{_iso(t)} {lv.lower():<5} [{self.service}] {msg}"
        if lang == "python":
            rec = {"timestamp": _iso(t), "severity": lv, "name": f"{self.service}-server", "message": msg}
            return json.dumps(rec)
        if lang == "ruby":
            return f"{lv[0]}, [{d:%Y-%m-%dT%H:%M:%S}.{d.microsecond:06d} #1] {lv:>5} -- : {msg}"
        if lang == "php":
            return f"[{d:%Y-%m-%dT%H:%M:%S}.{d.microsecond:06d}+00:00] {self.service}.{lv}: {msg} [] []"
        if lang == "rust":
            return f"{d:%Y-%m-%dT%H:%M:%S}.{d.microsecond:06d}Z {lv:>5} {self.service}::{logger or 'server'}: {msg}"
        if lang == "cpp":
            return f"{d:%Y-%m-%d %H:%M:%S} {lv:<5} {msg}"
        if lang == "elixir":
            return f"{d:%H:%M:%S}.{ms} [{lv.lower()}] {msg}"
        if lang == "rabbitmq":
            pid = f"<0.{int(t * 13) % 900 + 100}.0>"  # an Erlang process id
            return f"{d:%Y-%m-%d %H:%M:%S}.{d.microsecond:06d}+00:00 [{lv.lower()}] {pid} {msg}"
        if lang == "memcached":
            # memcached writes bare messages to stderr, with no timestamp or level (memcached.c).
            return msg
        if lang in ("redis", "valkey"):
            mark = {"WARN": "#", "ERROR": "#"}.get(lv, "*")
            return f"1:M {d:%d %b %Y %H:%M:%S}.{ms} {mark} {msg}"
        if lang == "mongodb":
            sev = {"INFO": "I", "WARN": "W", "ERROR": "E"}.get(lv, "I")
            return _COMPACT_JSON.encode({"t": {"$date": _iso(t)}, "s": sev, "c": logger or "NETWORK",
                                         "ctx": "conn", "msg": msg})
        if lang == "mysql":
            tag = {"INFO": "Note", "WARN": "Warning", "ERROR": "ERROR"}.get(lv, "Note")
            return f"{d:%Y-%m-%dT%H:%M:%S}.{d.microsecond:06d}Z 0 [{tag}] {msg}"
        if lang == "postgresql":
            tag = {"INFO": "LOG", "WARN": "WARNING", "ERROR": "ERROR"}.get(lv, "LOG")
            return f"{d:%Y-%m-%d %H:%M:%S}.{ms} UTC [1] {tag}:  {msg}"
        if lang in ("kafka", "opensearch"):
            return f"[{d:%Y-%m-%d %H:%M:%S},{ms}] {lv} {msg} ({logger or 'kafka.server.KafkaServer'})"
        # envoy and nginx: their error log formats
        if lang == "envoy":
            return f"[{d:%Y-%m-%d %H:%M:%S}.{ms}][1][{lv.lower()}][{logger or 'main'}] {msg}"
        tag = {"ERROR": "error", "WARN": "warn", "DEBUG": "debug"}.get(lv, "notice")
        return f"{d:%Y/%m/%d %H:%M:%S} [{tag}] 1#1: {msg}"


    # -- stories ---------------------------------------------------------------

    def _java_app(self) -> tuple[str, str]:
        app = "".join(part.capitalize() for part in self.service.replace("ts-", "").split("-")) + "Application"
        return app, f"{self.service.replace('ts-', '').replace('-', '.')}.{app}"

    def startup(self, t: float, startup_s: float, crash_after_s: float | None = None) -> list[tuple[float, str]]:
        """Start-up lines of a container started at run time ``t``.

        A container that fails at start-up (``crash_after_s`` set) writes only the lines that
        come before its failure: a Spring Boot application never logs ``Started ...`` then.
        """
        if crash_after_s is None:
            return self._startup(t, startup_s)
        if self.language in ("java", "kotlin") and crash_after_s < 2.0:
            return []  # the JVM itself failed (bad options): Spring never printed a line
        lines = self._startup(t, startup_s)
        return [(ts, text) for ts, text in lines if ts < t + crash_after_s]

    def _startup(self, t: float, startup_s: float) -> list[tuple[float, str]]:
        lang, svc, port = self.language, self.service, self.port
        done = t + startup_s
        if self.role == "loadgenerator":
            return [
                (t + 0.3, self.line(t + 0.3, "info", "Starting Locust 2.20.0")),
                (done, self.line(done, "info", "Ramping to the configured users; sending load to the entry "
                                 "service")),
            ]
        if lang == "java" and self.protocol == "grpc":  # a plain gRPC Java server, not Spring Boot
            pkg = "hipstershop" if svc.endswith("service") else "oteldemo"
            logger = f"{pkg}.{svc.replace('service', '').capitalize()}Service"
            return [(t + 0.6, self.line(t + 0.6, "info", "AdService starting." if "ad" in svc else f"{svc} starting.",
                                        logger, thread="main")),
                    (done, self.line(done, "info", f"Ad Service started, listening on {port}" if "ad" in svc
                                     else f"{svc} started, listening on {port}", logger, thread="main"))]
        if lang == "java":
            app, logger = self._java_app()
            return [
                (t + 0.4, self.line(t + 0.4, "info", f"Starting {app} v0.0.4 using Java 1.8.0_212 on "
                                    f"{self.host} with PID 1 (/app/{svc}-1.0.jar started by root in /app)",
                                    logger, thread="main")),
                (t + 0.5, self.line(t + 0.5, "info", "No active profile set, falling back to default profiles: "
                                    "default", logger, thread="main")),
                (t + startup_s * 0.6, self.line(t + startup_s * 0.6, "info",
                                                f"Tomcat initialized with port(s): {port} (http)",
                                                "o.s.b.w.embedded.tomcat.TomcatWebServer", thread="main")),
                (done - 0.1, self.line(done - 0.1, "info", f"Tomcat started on port(s): {port} (http) with context "
                                       "path ''", "o.s.b.w.embedded.tomcat.TomcatWebServer", thread="main")),
                (done, self.line(done, "info", f"Started {app} in {startup_s:.3f} seconds "
                                 f"(JVM running for {startup_s + 1.1:.3f})", logger, thread="main")),
            ]
        if lang == "csharp":
            return [
                (done - 0.05, self.line(done - 0.05, "info", f"Now listening on: http://[::]:{port}",
                                        "Microsoft.Hosting.Lifetime")),
                (done - 0.02, self.line(done - 0.02, "info", "Application started. Press Ctrl+C to shut down.",
                                        "Microsoft.Hosting.Lifetime")),
                (done, self.line(done, "info", "Hosting environment: Production", "Microsoft.Hosting.Lifetime")),
            ]
        if lang in ("redis", "valkey"):
            return [
                (t + 0.01, self.line(t + 0.01, "info", "oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo")),
                (t + 0.02, self.line(t + 0.02, "info", "Server initialized")),
                (done, self.line(done, "info", "Ready to accept connections tcp")),
            ]
        if lang == "mongodb":
            return [(done, self.line(done, "info", "Waiting for connections", "NETWORK"))]
        if lang == "memcached":
            return []  # memcached logs nothing at start-up without -v
        if lang == "rabbitmq":
            return [(done, self.line(done, "info", "Server startup complete; 0 plugins started."))]
        if lang == "mysql":
            return [(done, self.line(done, "info", "mysqld: ready for connections. Version: '5.6.35'  "
                                     "socket: '/var/run/mysqld/mysqld.sock'  port: 3306"))]
        if lang == "postgresql":
            return [(done, self.line(done, "info", "database system is ready to accept connections"))]
        if lang == "kafka":
            return [(done, self.line(done, "info", "[KafkaServer id=1] started"))]
        if lang == "envoy":
            return [(done, self.line(done, "info", "starting main dispatch loop"))]
        if lang == "nginx":
            return [(t + 0.01, self.line(t + 0.01, "info", "using the \"epoll\" event method")),
                    (done, self.line(done, "info", "start worker processes"))]
        if lang == "nodejs":
            return [(done, self.line(done, "info", f"{svc.replace('service', 'Service').capitalize()} gRPC server "
                                     f"started on port {port}" if self.port else f"{svc} started"))]
        if lang == "python":
            return [(t + 0.2, self.line(t + 0.2, "info", "initializing")),
                    (done, self.line(done, "info", f"listening on port: {port}"))]
        return [
            (t + 0.2, self.line(t + 0.2, "info", f"starting {svc}")),
            (done, self.line(done, "info", f"{svc} listening on port {port}")),
        ]

    def shutdown(self, t: float) -> list[tuple[float, str]]:
        """What the process writes when SIGTERM stops it."""
        if self.language == "java":
            return [(t, self.line(t, "info", "Shutting down ExecutorService 'applicationTaskExecutor'",
                                  "o.s.s.concurrent.ThreadPoolTaskExecutor", thread="SpringApplicationShutdownHook"))]
        if self.language in ("redis", "valkey"):
            return [(t, self.line(t, "info", "Received SIGTERM scheduling shutdown...")),
                    (t + 0.05, self.line(t + 0.05, "info", "Redis is now ready to exit, bye bye..."))]
        if self.language == "csharp":
            return [(t, self.line(t, "info", "Application is shutting down...", "Microsoft.Hosting.Lifetime"))]
        if self.language == "nginx":
            return [(t, self.line(t, "info", "signal 15 (SIGTERM) received from 1, exiting"))]
        if self.language == "memcached":
            return [(t, self.line(t, "info", "Signal handled: Terminated."))]
        if self.language in ("go", "nodejs", "python", "ruby", "php", "rust", "cpp", "typescript"):
            return []  # PID 1 without a SIGTERM handler: the kubelet's SIGKILL ends it silently
        return [(t, self.line(t, "info", "received SIGTERM, shutting down"))]

    def crash(self, t: float, message: str, exception: str, file: str, function: str, line: int) -> list[
            tuple[float, str]]:
        """The last lines of a process that dies at start-up, as its runtime prints them."""
        lang = self.language
        where = f"{file}:{line}" if file else ""
        fname = file.rsplit("/", 1)[-1] if file else ""
        if lang == "go":
            if exception in ("log.Fatalf", "log.Fatal", "fatal error"):
                return [(t, self.line(t, "fatal", message))]
            text = (f"panic: {message}\n\ngoroutine 1 [running]:\nmain.{function or 'main'}(...)\n"
                    f"\t/src/{where or 'main.go:1'}\nmain.main()\n\t/src/main.go:84 +0x1c5")
            return [(t, text)]
        if lang == "java" and exception.startswith("Error:"):
            return [(t, message)]  # the JVM itself failed: its own stderr, no logger
        if lang == "java" and self.protocol == "grpc":  # plain Java: the JVM's uncaught-exception handler
            exc = exception or "java.lang.IllegalStateException"
            head = message if message.startswith("Exception in thread") else f"Exception in thread \"main\" {exc}: " \
                f"{message}"
            return [(t, f"{head}\n\tat {_java_class(self.service, function, file)}.{function or 'main'}"
                        f"({fname or 'Main.java'}:{line or 1})")]
        if lang == "java":
            exc = exception or "java.lang.IllegalStateException"
            cls = _java_class(self.service, function, file)
            _, logger = self._java_app()
            stack = (f"{exc}: {message}\n\tat {cls}.{function or 'run'}({fname or 'Application.java'}:{line or 1})"
                     "\n\tat org.springframework.boot.SpringApplication.run(SpringApplication.java:315)"
                     "\n\tat org.springframework.boot.SpringApplication.run(SpringApplication.java:1226)")
            _ = logger
            return [
                (t - 0.2, self.line(t - 0.2, "warn", "Exception encountered during context initialization - "
                                    f"cancelling refresh attempt: {exc}: {message}",
                                    "ConfigServletWebServerApplicationContext", thread="main")),
                (t - 0.1, self.line(t - 0.1, "info", "Stopping service [Tomcat]",
                                    "o.apache.catalina.core.StandardService", thread="main")),
                (t - 0.05, self.line(t - 0.05, "info", "\n\nError starting ApplicationContext. To display the "
                                     "conditions report re-run your application with 'debug' enabled.",
                                     "ConditionEvaluationReportLoggingListener", thread="main")),
                (t, self.line(t, "error", "Application run failed", "o.s.boot.SpringApplication", thread="main")
                 + "\n\n" + stack),
            ]
        if lang == "kotlin":
            exc = exception or "java.lang.IllegalStateException"
            return [(t, f"Exception in thread \"main\" {exc}: {message}\n\tat frauddetection.MainKt.main(main.kt:1)")]
        if lang == "python":
            text = (f"Traceback (most recent call last):\n  File \"/app/{file or 'server.py'}\", line {line or 1}, "
                    f"in {function or '<module>'}\n{exception or 'ValueError'}: {message}")
            return [(t, text)]
        if lang in ("nodejs", "typescript"):
            text = (f"/app/{file or 'server.js'}:{line or 1}\n{exception or 'Error'}: {message}\n"
                    f"    at {function or 'Object.<anonymous>'} (/app/{file or 'server.js'}:{line or 1}:11)\n"
                    f"    at Module._compile (node:internal/modules/cjs/loader:1358:14)\n\nNode.js v20.15.1")
            return [(t, text)]
        if lang == "csharp":
            text = (f"Unhandled exception. {exception or 'System.InvalidOperationException'}: {message}\n"
                    f"   at {self.service}.{function or 'Main'}() in /app/{file or 'Program.cs'}:line {line or 1}")
            return [(t, text)]
        if lang == "rust":
            return [(t, message if "panicked at" in message else f"thread 'main' panicked at src/main.rs:1:5:\n"
                     f"{message}\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace")]
        return [(t, self.line(t, "error", f"{message}" + (f" ({where or function})" if where or function else "")))]

    # -- request errors (own, shed) ---------------------------------------------

    def own_error(self, t: float, op: str, detail: dict[str, Any]) -> str:
        """The faulty service's own error output for one failed request to ``op``."""
        lang = self.language
        msg = detail.get("message", "internal error")
        exc = detail.get("exception") or ""
        func = detail.get("function") or ""
        file = detail.get("file") or ""
        line = detail.get("line") or 0
        fname = file.rsplit("/", 1)[-1] if file else ""
        method, _, path = op.partition(" ")
        if lang == "java":
            cls = _java_class(self.service, func, file)
            e = exc if "." in exc else f"java.lang.{exc or 'RuntimeException'}"
            return (self.line(t, "error", "Servlet.service() for servlet [dispatcherServlet] in context with path [] "
                              f"threw exception [Request processing failed; nested exception is {e}: {msg}] with "
                              "root cause", "o.a.c.c.C.[.[.[/].[dispatcherServlet]")
                    + f"\n\n{e}: {msg}\n\tat {cls}.{func or 'handle'}({fname or 'Controller.java'}:{line or 1})"
                    "\n\tat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)"
                    "\n\tat org.springframework.web.servlet.FrameworkServlet.service(FrameworkServlet.java:883)")
        if lang == "go":
            if exc == "panic":
                return self.line(t, "error", msg, extra={"http.req.method": method, "http.req.path": path or op})
            return self.line(t, "error", "request error", extra={"error": msg, "http.req.path": path or op})
        if lang == "nodejs":
            text = f"{exc + ': ' if exc else ''}{msg}"
            return self.line(t, "error", f"request failed: {text}", extra={
                "err": {"type": exc or "Error", "message": msg,
                        "stack": f"{exc or 'Error'}: {msg}\n    at {func or 'handler'} "
                                 f"(/usr/src/app/{file or 'server.js'}:{line or 1}:15)"}})
        if lang == "python":
            return (self.line(t, "error", f"Exception on {op}") +
                    f"\nTraceback (most recent call last):\n  File \"/{file or 'app/server.py'}\", line {line or 1}, "
                    f"in {func or 'handler'}\n{exc or 'Exception'}: {msg}")
        if lang == "csharp":
            return self.line(t, "error", f"{exc or 'System.Exception'}: {msg}\n         at {self.service}."
                             f"{func or 'Handle'}() in /app/{file or 'Service.cs'}:line {line or 1}",
                             "Grpc.AspNetCore.Server.ServerCallHandler")
        if lang in ("nginx", "envoy"):
            return self.line(t, "error", msg)
        if lang == "ruby":
            return self.line(t, "error", f"{exc or 'RuntimeError'}: {msg}")
        if lang == "rust":
            return self.line(t, "error", f"{msg}", logger=func or "server")
        return self.line(t, "error", f"{exc + ': ' if exc else ''}{msg}")

    def shed(self, t: float, op: str) -> str:
        """A request the overloaded server turned away."""
        if self.language == "java":
            return self.line(t, "warn", "Maximum number of threads (200) created for connector with address null "
                             f"and port {self.port}", "o.apache.tomcat.util.net.NioEndpoint")
        if self.language == "nginx":
            return self.line(t, "error", "*1 1024 worker_connections are not enough")
        if self.language == "envoy":
            return self.access(t, op, 503, 0.2, "10.8.0.2:40000", flags="UO")
        return self.line(t, "warn", f"{op}: resource exhausted, request rejected")

    # -- a caller's view of a failed downstream call ----------------------------

    def client_error(self, t: float, op: str, detail: dict[str, Any], peer: str) -> str | None:
        """The caller's error line for a request to ``op`` that failed downstream, in the
        caller's client library's wording (None: the runtime logs nothing for it, e.g. nginx
        passing an upstream's 500 through, which only its access log shows)."""
        lang = self.language
        callee = detail.get("callee", "?")
        callee_op = detail.get("callee_op", "?")
        addr = detail.get("addr", callee)
        mode = detail.get("mode", "error")
        desc = detail.get("desc") or ""
        code = detail.get("code") or "Unknown"
        grpc = detail.get("callee_protocol") == "grpc"
        host, _, port = addr.partition(":")
        ip = detail.get("ip") or host
        c_method, _, c_path = callee_op.partition(" ")
        if not c_path:
            c_method, c_path = "POST", callee_op
        url = f"http://{addr}{c_path if c_path.startswith('/') else '/' + c_path}"
        method, _, path = op.partition(" ")
        path = fill_path(path, f"{t:.3f}")
        if lang == "go" and not path:
            return None  # a Go gRPC handler returns the error to its caller without logging it
        if lang == "go":
            if grpc:
                if mode == "refused":
                    rpc = (f"rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while "
                           f"dialing: dial tcp {ip}:{port or '80'}: connect: connection refused\"")
                elif mode == "dns":
                    rpc = ("rpc error: code = Unavailable desc = name resolver error: produced zero addresses")
                elif mode == "timeout":
                    rpc = "rpc error: code = DeadlineExceeded desc = context deadline exceeded"
                else:
                    rpc = f"rpc error: code = {code} desc = {desc or 'internal error'}"
            elif mode == "refused":
                rpc = f"{c_method.capitalize()} \"{url}\": dial tcp {ip}:{port or '80'}: connect: connection refused"
            elif mode == "dns":
                rpc = f"{c_method.capitalize()} \"{url}\": dial tcp: lookup {host} on 10.96.0.10:53: no such host"
            elif mode == "timeout":
                rpc = (f"{c_method.capitalize()} \"{url}\": context deadline exceeded (Client.Timeout exceeded while "
                       "awaiting headers)")
            else:
                rpc = f"{c_method} {url}: 500 Internal Server Error: {desc or 'internal error'}"
            short = callee_op.rsplit("/", 1)[-1]
            wrap = _FRONTEND_WRAP.get(short, f"failed to {short[:1].lower() + short[1:]}")
            return self.line(t, "error", "request error", extra={
                "error": f"{wrap}: {rpc}", "http.req.method": method,
                "http.req.path": path})
        if lang in ("java", "kotlin"):
            if mode in ("refused", "dns", "timeout"):
                reason = {"refused": "Connection refused (Connection refused)",
                          "dns": f"{host}: Name or service not known", "timeout": "Read timed out"}[mode]
                exc = "org.springframework.web.client.ResourceAccessException"
                text = f"I/O error on {c_method} request for \"{url}\": {reason}; nested exception is " + {
                    "refused": "java.net.ConnectException: Connection refused (Connection refused)",
                    "dns": f"java.net.UnknownHostException: {host}: Name or service not known",
                    "timeout": "java.net.SocketTimeoutException: Read timed out"}[mode]
            else:
                exc = "org.springframework.web.client.HttpServerErrorException$InternalServerError"
                body = json.dumps({"timestamp": _iso(t).replace("Z", "+0000"), "status": 500,
                                   "error": "Internal Server Error", "message": desc or "No message available",
                                   "path": c_path}, separators=(",", ":"))
                text = f"500 : [{body}]"
            return (self.line(t, "error", "Servlet.service() for servlet [dispatcherServlet] in context with path [] "
                              f"threw exception [Request processing failed; nested exception is {exc}: {text}] with "
                              "root cause", "o.a.c.c.C.[.[.[/].[dispatcherServlet]")
                    + f"\n\n{exc}: {text}"
                    "\n\tat org.springframework.web.client.RestTemplate.doExecute(RestTemplate.java:785)"
                    "\n\tat org.springframework.web.client.RestTemplate.execute(RestTemplate.java:711)"
                    "\n\tat org.springframework.web.client.RestTemplate.exchange(RestTemplate.java:602)")
        if lang in ("nodejs", "typescript"):
            if mode == "refused":
                text = f"14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED {ip}:{port}"
            elif mode == "dns":
                text = f"14 UNAVAILABLE: Name resolution failed for target dns:{addr}"
            elif mode == "timeout":
                text = "4 DEADLINE_EXCEEDED: Deadline exceeded"
            else:
                num = _GRPC_CODES.get(code, 2)
                text = f"{num} {_upper_snake(code)}: {desc or 'internal error'}"
            return self.line(t, "error", f"{callee_op.rsplit('/', 1)[-1]} failed: {text}")
        if lang == "python":
            if not grpc:
                if mode in ("refused", "dns"):
                    why = ("[Errno 111] Connection refused" if mode == "refused"
                           else "[Errno -2] Name or service not known")
                    text = (f"HTTPConnectionPool(host='{host}', port={port or 80}): Max retries exceeded with url: "
                            f"{c_path} (Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at "
                            f"0x7f3a2c1d5e80>: Failed to establish a new connection: {why}'))")
                elif mode == "timeout":
                    text = f"HTTPConnectionPool(host='{host}', port={port or 80}): Read timed out. (read timeout=10)"
                else:
                    text = f"500 Server Error: Internal Server Error for url: {url}"
                return self.line(t, "error", text)
            status, det = {"refused": ("UNAVAILABLE", f"failed to connect to all addresses; last error: UNKNOWN: "
                                                      f"ipv4:{ip}:{port}: Failed to connect to remote host: "
                                                      "Connection refused"),
                           "dns": ("UNAVAILABLE", f"DNS resolution failed for {addr}"),
                           "timeout": ("DEADLINE_EXCEEDED", "Deadline Exceeded")}.get(
                mode, (_upper_snake(code), desc or "internal error"))
            return self.line(t, "error", f"<_InactiveRpcError of RPC that terminated with:\n\tstatus = "
                             f"StatusCode.{status}\n\tdetails = \"{det}\"\n>")
        if lang == "csharp":
            if detail.get("callee_store"):
                if mode == "timeout":
                    text = "StackExchange.Redis.RedisTimeoutException: Timeout performing HGETALL (5000ms)"
                else:
                    text = ("StackExchange.Redis.RedisConnectionException: It was not possible to connect to the "
                            f"redis server(s). UnableToConnect on {addr}/Interactive")
            else:
                st, det = {"refused": ("Unavailable", "Error connecting to subchannel."),
                           "dns": ("Unavailable", "Error connecting to subchannel."),
                           "timeout": ("DeadlineExceeded", "")}.get(mode, (code, desc or "internal error"))
                text = f"Grpc.Core.RpcException: Status(StatusCode=\"{st}\", Detail=\"{det}\")"
            return self.line(t, "error", text, "Grpc.AspNetCore.Server.ServerCallHandler")
        if lang == "nginx":
            tail = (f", client: {peer.split(':')[0]}, server: , request: \"{method or 'GET'} {path or op} HTTP/1.1\", "
                    f"upstream: \"http://{ip}:{port or 80}{path or ''}\", host: \"{self.service}\"")
            if mode == "refused":
                return self.line(t, "error", f"*1 connect() failed (111: Connection refused) while connecting to "
                                 f"upstream{tail}")
            if mode == "timeout":
                return self.line(t, "error", "*1 upstream timed out (110: Connection timed out) while reading "
                                 f"response header from upstream{tail}")
            if mode == "dns":
                return self.line(t, "error", f"*1 {host} could not be resolved (3: Host not found){tail}")
            return None
        if lang == "envoy":
            return None  # Envoy shows upstream failures in its access log (response flags)
        if lang == "ruby":
            if mode == "refused":
                return self.line(t, "error", f"Errno::ECONNREFUSED: Failed to open TCP connection to {addr} "
                                 f"(Connection refused - connect(2) for \"{host}\" port {port or 80})")
            if mode == "timeout":
                return self.line(t, "error", "Net::ReadTimeout: Net::ReadTimeout with #<TCPSocket:(closed)>")
        if lang == "php":
            if mode == "refused":
                return self.line(t, "error", f"cURL error 7: Failed to connect to {host} port {port or 80}: Connection "
                                 f"refused (see https://curl.haxx.se/libcurl/c/libcurl-errors.html) for {url}")
            if mode == "timeout":
                return self.line(t, "error", f"cURL error 28: Operation timed out after 5001 milliseconds with 0 "
                                 f"bytes received for {url}")
        if lang == "rust":
            if mode == "refused":
                return self.line(t, "error", f"error sending request for url ({url}): error trying to connect: tcp "
                                 "connect error: Connection refused (os error 111)")
            if mode == "timeout":
                return self.line(t, "error", f"error sending request for url ({url}): operation timed out")
        text = {"refused": f"connect to {addr} failed: connection refused", "timeout": f"call to {addr} timed out",
                "dns": f"could not resolve {host}"}.get(mode, f"{callee} answered an error: {desc or 'internal error'}")
        return self.line(t, "error", text)

    # -- access and INFO lines of served requests -------------------------------

    def access(self, t: float, op: str, status: int, duration_ms: float, peer: str, flags: str = "-",
               rid: str = "") -> str:
        """A proxy's access-log line (Envoy's default format, nginx's ``combined``), or a
        generic one for other runtimes."""
        lang = self.language
        method, _, path = op.partition(" ")
        if not path:
            method, path = "POST", op
        path = fill_path(path, f"{t:.3f}{peer}")
        if lang == "envoy":
            return (f"[{_iso(t)}] \"{method} {path} HTTP/1.1\" {status} {flags} 0 {1024 if status < 400 else 91} "
                    f"{int(duration_ms)} {'-' if flags != '-' else int(duration_ms)} \"-\" \"python-requests/2.31.0\" "
                    f"\"{rid or '-'}\" \"{self.service}:8080\" \"{peer if flags == '-' else '-'}\"")
        if lang == "nginx":
            d = _dt(t)
            return (f"{peer.split(':')[0]} - - [{d:%d/%b/%Y:%H:%M:%S} +0000] \"{method} {path} HTTP/1.1\" {status} "
                    f"{512 if status < 400 else 157} \"-\" \"python-requests/2.31.0\"")
        return self.line(t, "info", f"{method} {path} {status} {duration_ms:.1f}ms")

    def request_lines(self, t: float, op: str, status: int, duration_ms: float, peer: str, rnd: int,
                      handler: str) -> list[str]:
        """What the service writes while serving one request to ``op`` (often nothing: many
        gRPC servers log nothing per request).

        ``rnd`` is a per-request random integer (ids, amounts); ``handler`` the operation's
        ``file:function`` from the app model (may be empty).
        """
        lang, svc = self.language, self.service
        method, _, path = op.partition(" ")
        rpc = op.rsplit("/", 1)[-1] if not path else ""
        h = f"{rnd:016x}{(rnd * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF:016x}"
        uid = f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:32]}"
        if lang in ("envoy", "nginx"):
            return [self.access(t, op, status, duration_ms, peer, rid=uid)]
        if lang == "go" and path:
            filled = fill_path(path, f"{rnd}")
            base = {"http.req.id": uid, "http.req.method": method, "http.req.path": filled, "session": uid[::-1]}
            start = t - duration_ms / 1000.0
            return [self.line(start, "debug", "request started", extra=base),
                    self.line(t, "debug", "request complete", extra={
                        **base, "http.resp.bytes": 1500 + rnd % 9000, "http.resp.status": status,
                        "http.resp.took_ms": int(duration_ms)})]
        if lang == "go":
            if rpc == "PlaceOrder":
                return _story(status, [self.line(t - duration_ms / 1000.0, "info", f"[PlaceOrder] user_id=\"{uid}\" "
                                  f"user_currency=\"{_CURRENCIES[rnd % len(_CURRENCIES)]}\""),
                        self.line(t - 0.002, "info", f"payment went through (transaction_id: {uid[::-1]})"),
                        self.line(t, "info", f"order confirmation email sent to \"someone{rnd % 97}@example.com\"")])
            if rpc in ("GetQuote", "ShipOrder") and svc.startswith("shipping"):
                return _story(status, [self.line(t - duration_ms / 1000.0, "info", f"[{rpc}] received request"),
                                       self.line(t, "info", f"[{rpc}] completed request")])
            return []
        if lang == "nodejs":
            if rpc == "Convert":
                return _story(status, [self.line(t - duration_ms / 1000.0, "info", "received conversion request"),
                                       self.line(t, "info", "conversion request successful")])
            if rpc == "GetSupportedCurrencies":
                return [self.line(t, "info", "Getting supported currencies...")]
            if rpc == "Charge":
                card = ("visa", "mastercard")[rnd % 2]
                return _story(status, [self.line(t, "info", f"Transaction processed: {card} ending "
                                                 f"{rnd % 10000:04d}     Amount: USD{rnd % 300 + 10}.{rnd % 100:02d}")])
            if path:
                return [self.line(t, "info", "request completed", extra={
                    "req": {"id": rnd % 100000, "method": method, "url": fill_path(path, f"{rnd}")},
                    "res": {"statusCode": status}, "responseTime": int(duration_ms)})]
            return []
        if lang == "python":
            if self.role == "loadgenerator":
                return []
            if rpc == "SendOrderConfirmation":
                return [self.line(t, "info", f"A request to send order confirmation email to someone{rnd % 97}"
                                  "@example.com has been received.")]
            if rpc == "ListRecommendations":
                return [self.line(t, "info", f"[Recv ListRecommendations] product_ids=['{_PRODUCTS[rnd % 9]}', "
                                  f"'{_PRODUCTS[(rnd >> 4) % 9]}', '{_PRODUCTS[(rnd >> 8) % 9]}', "
                                  f"'{_PRODUCTS[(rnd >> 12) % 9]}', '{_PRODUCTS[(rnd >> 16) % 9]}']")]
            if path:
                d = _dt(t)
                return [f"{peer.split(':')[0]} - - [{d:%d/%b/%Y %H:%M:%S}] \"{method} {fill_path(path, str(rnd))} "
                        f"HTTP/1.1\" {status} -"]
            return [self.line(t, "info", f"[Recv {rpc}]")] if rpc else []
        if lang == "java":
            func = handler.rsplit(":", 1)[-1] if handler else (rpc or "handle")
            if not path:
                return [self.line(t, "info", f"received ad request (context_words=[{_WORDS[rnd % len(_WORDS)]}])",
                                  f"hipstershop.{svc.replace('service', '').capitalize()}Service",
                                  thread=f"grpc-default-executor-{rnd % 8}")] if rpc == "GetAds" else []
            cls = _java_class(svc, func, handler.split(":", 1)[0] if handler else "")
            return [self.line(t, "info", f"[{func}][{method} {fill_path(path, str(rnd))}][status: {status}]", cls)]
        if lang == "csharp":
            if rpc in ("GetCart", "AddItem", "EmptyCart"):
                text = {"GetCart": f"GetCartAsync called with userId={uid}",
                        "AddItem": f"AddItemAsync called with userId={uid}, productId={_PRODUCTS[rnd % 9]}, "
                                   f"quantity={rnd % 5 + 1}",
                        "EmptyCart": f"EmptyCartAsync called with userId={uid}"}[rpc]
                return [text]
            return []
        if lang == "ruby" and path:
            d = _dt(t)
            return [f"{peer.split(':')[0]} - - [{d:%d/%b/%Y:%H:%M:%S} +0000] \"{method} {fill_path(path, str(rnd))} "
                    f"HTTP/1.1\" {status} - {duration_ms / 1000.0:.4f}"]
        if lang == "php" and path:
            return [self.line(t, "info", f"Calculated quote {{\"total\":{rnd % 90 + 5}.{rnd % 100:02d}}}")]
        if lang == "rust":
            return [self.line(t, "info", f"Received {path.rsplit('/', 1)[-1] or rpc or 'request'} request",
                              logger=f"{svc.replace('-', '_')}_service")]
        if lang == "kotlin":
            return [self.line(t, "info", f"Consumed record with orderId: {uid}, and updated total count to: "
                              f"{rnd % 100000}", "frauddetection")]
        if lang == "cpp" and rpc:
            return [self.line(t, "info", f"{rpc} request successful")]
        return []

    def periodic(self, a: float, b: float, phase: float) -> list[tuple[float, str]]:
        """Lines of periodic background work due in ``[a, b)`` run time seconds: Redis's RDB
        snapshot (default ``save 300 100``: every 300 s while keys change, four lines) and
        PostgreSQL's checkpoint (``checkpoint_timeout`` 5 min, two lines)."""
        lang = self.language
        if lang not in ("redis", "valkey", "postgresql"):
            return []
        out: list[tuple[float, str]] = []
        n = math.ceil((a - phase) / 300.0)
        while phase + n * 300.0 < b:
            t = phase + n * 300.0
            pid = 40 + n % 900
            if lang == "postgresql":
                out += [(t, self.line(t, "info", "checkpoint starting: time")),
                        (t + 4.2, self.line(t + 4.2, "info", f"checkpoint complete: wrote {n % 90 + 3} buffers "
                                            "(0.1%); 0 WAL file(s) added, 0 removed, 0 recycled; write=4.105 s, "
                                            "sync=0.004 s, total=4.121 s"))]
            else:
                out += [(t, f"1:M {_dt(t):%d %b %Y %H:%M:%S}.{int((t % 1) * 1000):03d} * 100 changes in 300 seconds. "
                            "Saving..."),
                        (t + 0.001, f"1:M {_dt(t):%d %b %Y %H:%M:%S}.{int((t % 1) * 1000) + 1:03d} * Background "
                                    f"saving started by pid {pid}"),
                        (t + 0.02, f"{pid}:C {_dt(t):%d %b %Y %H:%M:%S}.{int((t % 1) * 1000) + 20:03d} * DB saved on "
                                   "disk"),
                        (t + 0.1, f"1:M {_dt(t):%d %b %Y %H:%M:%S}.{int((t % 1) * 1000) + 100:03d} * Background "
                                  "saving terminated with success")]
            n += 1
        return out

    def noise(self, t: float, rnd: int) -> str | None:
        """One background line of a healthy process (see :data:`NOISE_PER_MIN`)."""
        lang, svc = self.language, self.service
        if lang == "mongodb":
            head: dict[str, Any] = {"t": {"$date": _iso(t)}, "s": "I"}
            kind = rnd % 3
            if kind == 0:
                return _COMPACT_JSON.encode({**head, "c": "NETWORK", "id": 22943, "ctx": "listener",
                                             "msg": "Connection accepted",
                                             "attr": {"remote": f"10.8.0.{rnd % 200 + 2}:{40000 + rnd % 20000}",
                                                      "connectionCount": rnd % 20 + 5}})
            if kind == 1:
                return _COMPACT_JSON.encode({**head, "c": "COMMAND", "id": 51803, "ctx": "conn", "msg": "Slow query",
                                             "attr": {"type": "command", "ns": f"ts.{svc.split('-')[1]}",
                                                      "durationMillis": 100 + rnd % 400}})
            return _COMPACT_JSON.encode({**head, "c": "STORAGE", "id": 22430, "ctx": "Checkpointer",
                                         "msg": "WiredTiger message",
                                         "attr": {"message": f"saving checkpoint snapshot min: {rnd % 9000}"}})
        if lang in ("kafka", "opensearch"):
            return self.line(t, "info", f"[GroupMetadataManager brokerId=1] Removed 0 expired offsets in {rnd % 3} "
                             "milliseconds.", "kafka.coordinator.group.GroupMetadataManager")
        if lang == "java" and self.role == "app":
            pick = rnd % 3
            if pick == 0:
                return self.line(t, "warn", f"[get][Not found][id: {rnd & 0xFFFFFFFF:08x}]",
                                 _java_class(svc, "", "Service.java"))
            if pick == 1:
                return self.line(t, "info", f"Opened connection [connectionId{{localValue:{rnd % 40 + 3}, "
                                 f"serverValue:{rnd % 900 + 100}}}] to {svc.replace('service', 'mongo')}:27017",
                                 "org.mongodb.driver.connection", thread="main")
            return self.line(t, "warn", "No mapping for GET /favicon.ico", "o.s.web.servlet.PageNotFound")
        if lang == "go" and self.role == "app" and self.protocol == "http":
            return self.line(t, "debug", "session ID not found in cookie, a new one is assigned")
        if lang == "nodejs":
            return self.line(t, "warn", "conversion rate cache miss, loading from data file")
        if lang == "python" and self.role == "app":
            return self.line(t, "warning", "product not found in local cache, querying catalog")
        if lang == "csharp":
            return self.line(t, "warn", "Cart not found for user, creating an empty cart",
                             f"{svc}.cartstore.RedisCartStore")
        if lang == "nginx":
            return self.line(t, "error", f"*{rnd % 9000} open() \"/usr/share/nginx/html/favicon.ico\" failed (2: No "
                             f"such file or directory), client: 10.8.0.{rnd % 200 + 2}, server: localhost, request: "
                             "\"GET /favicon.ico HTTP/1.1\", host: \"localhost\"")
        return None


_FRONTEND_WRAP = {"GetCart": "could not retrieve cart", "GetSupportedCurrencies": "could not retrieve currencies",
                  "ListProducts": "could not retrieve products", "GetProduct": "could not retrieve product",
                  "Convert": "failed to convert currency", "ListRecommendations": "failed to get product "
                  "recommendations", "GetQuote": "failed to get shipping quote", "PlaceOrder": "failed to complete "
                  "the order", "AddItem": "failed to add to cart", "EmptyCart": "failed to empty cart",
                  "GetAds": "failed to retrieve ads"}
"""How Online Boutique's frontend wraps a failed call (``errors.Wrap`` in handlers.go)."""
_CURRENCIES = ("USD", "EUR", "JPY", "CAD", "GBP", "TRY")
_PRODUCTS = ("OLJCESPC7Z", "66VCHSJNUP", "1YMWWN1N4O", "L9ECAV7KIM", "2ZYFJ3GM2N", "0PUK6V6EV0", "LS4PSXUNUM",
             "9SIQT8TOJO", "6E92ZMYYFZ")
_WORDS = ("clothing", "accessories", "footwear", "hair", "decor", "kitchen")
_GRPC_CODES = {"OK": 0, "Canceled": 1, "Unknown": 2, "InvalidArgument": 3, "DeadlineExceeded": 4, "NotFound": 5,
               "AlreadyExists": 6, "PermissionDenied": 7, "ResourceExhausted": 8, "FailedPrecondition": 9,
               "Aborted": 10, "OutOfRange": 11, "Unimplemented": 12, "Internal": 13, "Unavailable": 14,
               "DataLoss": 15, "Unauthenticated": 16}
"""gRPC status codes (google.golang.org/grpc/codes)."""


def _story(status: int, lines: list[str]) -> list[str]:
    """A handler's INFO narrative of one request: all of it when the request succeeded; when
    it failed, only what was logged before the failure (the first line), never the
    ``... successful`` / ``completed`` lines."""
    return lines if status < 400 else lines[:1] if len(lines) > 1 else []


def _upper_snake(code: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", code).upper()


NOISE_PER_MIN = {"mongodb": 6.0, "kafka": 2.0, "opensearch": 2.0, "java": 4.0, "go": 3.0, "nodejs": 2.0,
                 "python": 2.0, "csharp": 2.0, "nginx": 1.0}
"""Background lines per minute of a healthy process, per runtime (assumption: MongoDB logs connections,
slow queries (> 100 ms) and checkpoints; the application runtimes' not-found lookups and
cache misses at a few a minute)."""


def grpc_code(exception: str) -> str:
    """The gRPC status code named by a hint like ``rpc error: code = InvalidArgument`` or
    ``NOT_FOUND`` (``Unknown`` when the exception names none)."""
    m = re.search(r"code = (\w+)", exception)
    if m:
        return m.group(1)
    flat = exception.replace("_", "").lower()
    for name in _GRPC_CODES:
        if name.lower() == flat:
            return name
    return "Unknown"


def traffic_lines(fmt: LogFormatter, pod: str, seed: int, windows: list[TrafficWindow], span: tuple[float, float],
                  handlers: dict[int, tuple[str, str]], budget: int) -> list[tuple[float, Any]]:
    """Expand ``windows`` (newest first) into one pod's requests, failures and noise lines.

    Args:
        fmt: the pod's formatter.
        pod: pod name (seeds its stream with ``seed`` and each window's start).
        seed: the simulation seed.
        windows: traffic windows, newest first.
        span: the container's (start, end) run time; lines outside it are dropped.
        handlers: operation index -> (operation name, handler ``file:function``).
        budget: stop after the window in which this many entries are reached (whole windows
            only, so a shorter read is the tail of a longer one).

    Returns:
        (run time, entry) pairs in no particular order: an entry is a formatted noise line or
        a deferred request (formatted by :func:`expand`; a request can make several lines).
    """
    out: list[tuple[float, Any]] = []
    salt = zlib.crc32(pod.encode())
    noise_rate = NOISE_PER_MIN.get(fmt.language, 0.0) / 60.0 if fmt.role != "loadgenerator" else 0.0
    lo, hi = span
    for w in windows:
        if len(out) >= budget:
            break
        a, b = max(w.t0, lo), min(w.t1, hi)
        if b <= a:
            continue
        rng = np.random.default_rng([seed, salt, round(w.t0 * 1000.0) + 10**12])
        slots = w.layout.slots.get(pod)
        serving = slots is not None and bool(w.calls[slots].sum() > 0)
        # Background chatter comes from a process that is up and serving.
        n_noise = int(rng.poisson(noise_rate * (b - a))) if noise_rate and serving else 0
        for i in range(n_noise):
            ts = a + float(rng.random()) * (b - a)
            text = fmt.noise(ts, int(rng.integers(0, 2**62)) + i)
            if text is not None:
                out.append((ts, text))
        out.extend(fmt.periodic(a, b, lo + (salt % 300)))
        if slots is None:
            continue
        share = (b - a) / (w.t1 - w.t0)
        for k in slots.tolist():
            mean = float(w.calls[k]) * share
            if mean <= 0:
                continue
            n = int(rng.poisson(mean))
            if n == 0:
                continue
            p_fail = min(1.0, float(w.fails[k]) / float(w.calls[k])) if w.calls[k] > 0 else 0.0
            nf = int(rng.binomial(n, p_fail)) if p_fail > 0 else 0
            op_name, handler = handlers[int(w.layout.ops[k])]
            quiet = fmt.quiet(op_name, handler)
            times = a + rng.random(n) * (b - a)
            rnds = rng.integers(0, 2**62, size=n)
            lat = float(w.lat_ms[k])
            jit = np.exp(0.35 * rng.standard_normal(n))
            cause, detail = w.causes.get(k, ("own", {"message": "internal error", "where": "none"})) if nf else ("", {})
            for j in range(n):
                ts, rnd = float(times[j]), int(rnds[j])
                peer = f"10.8.0.{rnd % 200 + 2}:{40000 + rnd % 20000}"
                dur = lat * float(jit[j])
                if j >= nf:
                    if not quiet:
                        out.append((ts, ("ok", op_name, dur, peer, rnd, handler)))
                else:
                    out.append((ts, ("fail", op_name, cause, detail, dur, peer, rnd, handler)))
    return out


def expand(fmt: LogFormatter, entries: list[tuple[float, Any]]) -> list[tuple[float, str]]:
    """Format deferred entries of :func:`traffic_lines` (and pass formatted ones through):
    formatting is the costly part, so only the lines that survive ``tail`` are formatted."""
    out: list[tuple[float, str]] = []
    for ts, entry in entries:
        if isinstance(entry, str):
            out.append((ts, entry))
        elif entry[0] == "ok":
            _, op_name, dur, peer, rnd, handler = entry
            out.extend((ts, text) for text in fmt.request_lines(ts, op_name, 200, dur, peer, rnd, handler))
        else:
            _, op_name, cause, detail, dur, peer, rnd, handler = entry
            out.extend(_failure_lines(fmt, ts, op_name, cause, detail, dur, peer, rnd, handler))
    return out


def _failure_lines(fmt: LogFormatter, ts: float, op: str, cause: str, detail: dict[str, Any], dur: float,
                   peer: str, rnd: int, handler: str) -> list[tuple[float, str]]:
    """Lines one failed request leaves in the serving pod's log."""
    proxy = fmt.language in ("envoy", "nginx")
    if cause == "shed":
        return [(ts, fmt.shed(ts, op))]
    if cause == "own":
        where = detail.get("where", "self")
        if where != "self":
            # Silent here: the handler returns an error status or a wrong value without logging.
            return [(ts, text) for text in fmt.request_lines(ts, op, 200 if where == "none" else 500, dur, peer, rnd,
                                                             handler)]
        lines = [(ts, fmt.own_error(ts, op, detail))]
        if proxy:
            lines = [(ts, fmt.access(ts, op, 500, dur, peer))] if not detail.get("message", "").startswith('"') \
                else [(ts, fmt.access(ts, op, _status_in(detail["message"]), dur, peer))]
        return lines
    if detail.get("where") == "none":
        return [(ts, text) for text in fmt.request_lines(ts, op, 200, dur, peer, rnd, handler)]
    out: list[tuple[float, str]] = []
    err = fmt.client_error(ts, op, detail, peer)
    if err is not None:
        out.append((ts, err))
    if proxy:
        mode = detail.get("mode", "error")
        status, flags = {"refused": (503, "UF"), "timeout": (504, "UT"), "dns": (503, "UH")}.get(mode, (500, "-"))
        if fmt.language == "nginx":
            status = {"refused": 502, "timeout": 504, "dns": 502}.get(mode, 500)
        out.append((ts, fmt.access(ts, op, status, dur, peer, flags=flags)))
    return out


def _status_in(text: str) -> int:
    m = re.search(r"\" (\d{3})", text)
    return int(m.group(1)) if m else 500
