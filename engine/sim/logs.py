"""Container logs that tell a coherent story, in each runtime's own log format.

Lines come from what the simulation did: start-up and shutdown, crashes with the
exception and the failing file and function, OOM kills, request errors naming the
failing downstream call (connection refused, deadline exceeded, an error answer), load
shedding, and a sampled access log. Formats follow each runtime's usual logger
(logrus JSON for Go, Spring Boot's pattern for Java, pino JSON for Node.js, the .NET
console logger, Ruby's Logger, Monolog for PHP, tracing for Rust, Envoy and nginx
access logs, and the stores' own server logs).

Each container keeps its last :data:`MAX_LINES` lines; when it restarts, the old buffer
becomes ``--previous``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from engine.sim.k8s import EPOCH

MAX_LINES = 600
"""Lines kept per container (current and previous), oldest dropped first."""


@dataclass
class ContainerLog:
    """Current and previous log buffers of one container."""

    current: deque[tuple[float, Any]] = field(default_factory=lambda: deque(maxlen=MAX_LINES))
    previous: deque[tuple[float, Any]] = field(default_factory=lambda: deque(maxlen=MAX_LINES))
    """Entries are (run time, line) or (run time, deferred record) formatted on read."""

    def rotate(self) -> None:
        self.previous = self.current
        self.current = deque(maxlen=MAX_LINES)


def _dt(t: float) -> datetime:
    return EPOCH + timedelta(seconds=t)


def _iso(t: float) -> str:
    d = _dt(t)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond // 1000:03d}Z"


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


class LogFormatter:
    """Turns (kind, detail) into lines for one service's runtime."""

    def __init__(self, service: str, language: str, port: int | None, container: str, role: str = "app") -> None:
        self.service = service
        self.language = language
        self.port = port or 8080
        self.container = container
        self.role = role

    # -- framing ---------------------------------------------------------------

    def line(self, t: float, level: str, msg: str, logger: str = "", extra: dict[str, Any] | None = None) -> str:
        """One log line at run time ``t`` with ``level`` in the runtime's format."""
        lang = self.language
        lv = level.upper()
        d = _dt(t)
        ms = f"{d.microsecond // 1000:03d}"
        if lang == "go":
            rec: dict[str, Any] = {"message": msg, "severity": level.lower(), "timestamp": _iso(t)}
            if extra:
                rec.update(extra)
            return json.dumps(rec, sort_keys=True)
        if lang in ("java",):
            thread = f"nio-{self.port}-exec-{int(t * 7) % 10 + 1}"
            name = logger or f"{self.service.replace('-', '.')}.Application"
            return f"{d:%Y-%m-%d %H:%M:%S}.{ms} {lv:>5} 1 --- [{thread:>15.15}] {name[-40:]:<40} : {msg}"
        if lang == "kotlin":
            return f"{d:%H:%M:%S}.{ms} [main] {lv:<5} {logger or 'frauddetection'} - {msg}"
        if lang == "csharp":
            short = {"INFO": "info", "WARN": "warn", "ERROR": "fail", "DEBUG": "dbug"}.get(lv, "info")
            return f"{short}: {logger or self.service + '.Services'}[0] {msg}"
        if lang in ("nodejs",):
            level_no = {"DEBUG": 20, "INFO": 30, "WARN": 40, "ERROR": 50, "FATAL": 60}.get(lv, 30)
            rec = {"level": level_no, "time": int((EPOCH.timestamp() + t) * 1000), "pid": 1,
                   "hostname": self.container, "name": f"{self.service}-server", "msg": msg}
            if extra:
                rec.update(extra)
            return json.dumps(rec)
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
        if lang in ("redis", "valkey"):
            mark = {"WARN": "#", "ERROR": "#"}.get(lv, "*")
            return f"1:M {d:%d %b %Y %H:%M:%S}.{ms} {mark} {msg}"
        if lang == "mongodb":
            sev = {"INFO": "I", "WARN": "W", "ERROR": "E"}.get(lv, "I")
            return json.dumps({"t": {"$date": _iso(t)}, "s": sev, "c": logger or "NETWORK", "ctx": "conn",
                               "msg": msg})
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
        return f"{d:%Y/%m/%d %H:%M:%S} [{'error' if lv == 'ERROR' else 'notice'}] 1#1: {msg}"

    # -- stories ---------------------------------------------------------------

    def startup(self, t: float, startup_s: float, revision_note: str) -> list[tuple[float, str]]:
        lang, svc, port = self.language, self.service, self.port
        done = t + startup_s
        if self.role == "loadgenerator":
            return [
                (t + 0.3, self.line(t + 0.3, "info", "Starting Locust 2.20.0")),
                (done, self.line(done, "info", "Ramping to the configured users; sending load to the entry "
                                 "service")),
            ]
        if lang == "java":
            app = "".join(part.capitalize() for part in svc.replace("ts-", "").split("-")) + "Application"
            return [
                (t + 0.4, self.line(t + 0.4, "info", f"Starting {app} v0.0.4 on {self.container} with PID 1",
                                    f"{svc.replace('-', '.')}.{app}")),
                (t + 0.5, self.line(t + 0.5, "info", f"No active profile set, falling back to default profiles: "
                                    f"default ({revision_note})", f"{svc.replace('-', '.')}.{app}")),
                (t + startup_s * 0.6, self.line(t + startup_s * 0.6, "info",
                                                f"Tomcat initialized with port(s): {port} (http)",
                                                "o.s.b.w.embedded.tomcat.TomcatWebServer")),
                (done, self.line(done, "info", f"Started {app} in {startup_s:.3f} seconds "
                                 f"(JVM running for {startup_s + 1.1:.3f})", f"{svc.replace('-', '.')}.{app}")),
            ]
        if lang in ("redis", "valkey"):
            return [
                (t + 0.01, self.line(t + 0.01, "info", "oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo")),
                (t + 0.02, self.line(t + 0.02, "info", "Server initialized")),
                (done, self.line(done, "info", "Ready to accept connections tcp")),
            ]
        if lang == "mongodb":
            return [(done, self.line(done, "info", "Waiting for connections", "NETWORK"))]
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
            return [(done, self.line(done, "info", "start worker processes"))]
        return [
            (t + 0.2, self.line(t + 0.2, "info", f"starting {svc} ({revision_note})")),
            (done, self.line(done, "info", f"{svc} listening on port {port}")),
        ]

    def shutdown(self, t: float) -> list[tuple[float, str]]:
        if self.language == "java":
            return [(t, self.line(t, "info", "Shutting down ExecutorService 'applicationTaskExecutor'",
                                  "o.s.s.concurrent.ThreadPoolTaskExecutor"))]
        if self.language in ("redis", "valkey"):
            return [(t, self.line(t, "info", "Received SIGTERM scheduling shutdown...")),
                    (t + 0.05, self.line(t + 0.05, "info", "Redis is now ready to exit, bye bye..."))]
        return [(t, self.line(t, "info", "received SIGTERM, shutting down gracefully"))]

    def crash(self, t: float, message: str, exception: str, file: str, function: str, line: int) -> list[
            tuple[float, str]]:
        """The last lines of a process that dies at start-up."""
        lang = self.language
        where = f"{file}:{line}" if file else ""
        if lang == "go":
            text = (f"panic: {message}\n\ngoroutine 1 [running]:\nmain.{function or 'main'}(...)\n"
                    f"\t/src/{where or 'main.go:1'}\nmain.main()\n\t/src/main.go:84 +0x1c5")
            return [(t, text)]
        if lang in ("java", "kotlin"):
            exc = exception or "java.lang.IllegalStateException"
            cls = _java_class(self.service, function, file)
            fname = file.rsplit("/", 1)[-1] if file else "Application.java"
            text = (self.line(t, "error", "Application run failed", "o.s.boot.SpringApplication") +
                    f"\n{exc}: {message}\n\tat {cls}.{function or 'run'}({fname}:{line or 1})"
                    f"\n\tat org.springframework.boot.SpringApplication.run(SpringApplication.java:315)")
            return [(t, text)]
        if lang == "python":
            text = (f"Traceback (most recent call last):\n  File \"/app/{file or 'server.py'}\", line {line or 1}, "
                    f"in {function or '<module>'}\n{exception or 'ValueError'}: {message}")
            return [(t, text)]
        if lang in ("nodejs", "typescript"):
            text = (f"/app/{file or 'server.js'}:{line or 1}\n{exception or 'Error'}: {message}\n"
                    f"    at {function or 'Object.<anonymous>'} (/app/{file or 'server.js'}:{line or 1}:11)")
            return [(t, text)]
        if lang == "csharp":
            text = (f"Unhandled exception. {exception or 'System.InvalidOperationException'}: {message}\n"
                    f"   at {self.service}.{function or 'Main'}() in /app/{file or 'Program.cs'}:line {line or 1}")
            return [(t, text)]
        return [(t, self.line(t, "error", f"fatal: {message} ({where or function})"))]

    def request_error(self, t: float, op: str, cause: str, detail: dict[str, Any]) -> str:
        """One error line for a failed request to ``op``."""
        lang = self.language
        if cause == "own":
            msg = detail.get("message", "internal error")
            exc = detail.get("exception") or ""
            func = detail.get("function") or ""
            file = detail.get("file") or ""
            line = detail.get("line") or 0
            loc = f" at {file}:{line} in {func}" if file else ""
            if lang == "java":
                cls = _java_class(self.service, func, file)
                fname = file.rsplit("/", 1)[-1] if file else "Controller.java"
                return (self.line(t, "error", f"[{op}] {exc or 'java.lang.RuntimeException'}: {msg}", cls) +
                        f"\n\tat {cls}.{func or 'handle'}({fname}:{line or 1})")
            if lang == "go":
                return self.line(t, "error", f"{op}: {msg}", extra={"error": exc or msg, "caller": f"{file}:{line}",
                                                                   "func": func})
            if lang == "python":
                return self.line(t, "error", f"{op} failed: {exc + ': ' if exc else ''}{msg}{loc}")
            return self.line(t, "error", f"{op} failed: {exc + ': ' if exc else ''}{msg}{loc}")
        if cause == "shed":
            if lang == "java":
                return self.line(t, "warn", f"[{op}] request rejected: executor queue full (503 Service Unavailable)",
                                 "o.a.catalina.core.StandardWrapperValve")
            return self.line(t, "warn", f"{op}: 503 server overloaded, request shed")
        callee = detail.get("callee", "?")
        callee_op = detail.get("callee_op", "?")
        addr = detail.get("addr", callee)
        mode = detail.get("mode", "error")
        if lang == "java":
            url = f"http://{addr}{callee_op.split(' ', 1)[-1] if ' ' in callee_op else ''}"
            if mode == "refused":
                text = f"I/O error on POST request for \"{url}\": Connection refused (Connection refused)"
                exc = "org.springframework.web.client.ResourceAccessException"
            elif mode == "dns":
                text = f"I/O error on POST request for \"{url}\": {addr.split(':')[0]}: Name or service not known"
                exc = "org.springframework.web.client.ResourceAccessException"
            elif mode == "timeout":
                text = f"I/O error on POST request for \"{url}\": Read timed out"
                exc = "org.springframework.web.client.ResourceAccessException"
            else:
                text = f"500 Internal Server Error: [{{\"status\":0,\"msg\":\"{callee} error\"}}]"
                exc = "org.springframework.web.client.HttpServerErrorException$InternalServerError"
            return self.line(t, "error", f"[{op}] {exc}: {text}", _java_class(self.service, "", ""))
        if mode == "refused":
            rpc = (f"rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while "
                   f"dialing: dial tcp {addr}: connect: connection refused\"")
        elif mode == "dns":
            rpc = (f"rpc error: code = Unavailable desc = name resolver error: produced zero addresses "
                   f"(lookup {addr.split(':')[0]} on 10.96.0.10:53: no such host)")
        elif mode == "timeout":
            rpc = "rpc error: code = DeadlineExceeded desc = context deadline exceeded"
        else:
            rpc = f"rpc error: code = Internal desc = {callee} returned an error"
        msg = f"failed to call {callee} {callee_op}: {rpc}"
        if lang == "go":
            return self.line(t, "error", f"request error: {msg}", extra={"http.req.path": op})
        return self.line(t, "error", f"{op}: {msg}")

    def access(self, t: float, op: str, status: int, duration_ms: float, peer: str) -> str:
        """A sampled access-log line for a served request."""
        lang = self.language
        method, _, path = op.partition(" ")
        if not path:
            method, path = "POST", op
        path = fill_path(path, f"{t:.3f}{peer}")
        if lang == "envoy":
            return (f"[{_iso(t)}] \"{method} {path} HTTP/1.1\" {status} - 0 1024 {int(duration_ms)} "
                    f"{int(duration_ms)} \"-\" \"python-requests/2.31.0\" \"-\" \"{self.service}:8080\" \"{peer}\"")
        if lang == "nginx":
            d = _dt(t)
            return (f"{peer.split(':')[0]} - - [{d:%d/%b/%Y:%H:%M:%S} +0000] \"{method} {path} HTTP/1.1\" {status} "
                    f"512 \"-\" \"Locust/2.20.0\"")
        if lang == "go":
            return self.line(t, "debug", "request complete", extra={
                "http.req.method": method, "http.req.path": path, "http.resp.status": status,
                "http.resp.took_ms": int(duration_ms)})
        if lang == "java":
            return self.line(t, "info", f"[{method} {path}] status={status} took {int(duration_ms)}ms",
                             f"{self.service.replace('-', '.')}.controller")
        return self.line(t, "info", f"{method} {path} {status} {duration_ms:.1f}ms")
