"""Live Prometheus mode: serve a running simulation at ``/metrics`` and read alerts back.

* :class:`MetricsServer` serves a running simulation's exposition over aiohttp on
  loopback, so a real Prometheus can scrape it (:class:`engine.run.live.LiveSimulation`
  is a substrate that paces itself and serves this way).
* :func:`write_prometheus_config` writes a scrape configuration plus the chosen rule pack's
  files (``paper`` by default, ``extended``, or one rule file) for a user's Prometheus;
  :func:`cmd_prometheus_config` is the ``marathon prometheus-config`` command (declare its
  arguments with :func:`add_prometheus_config_arguments`).
* :class:`AlertSource` polls a Prometheus' ``/api/v1/alerts`` (``prometheus-api-client``
  session) and turns state changes into the same
  :class:`~alerts.evaluator.AlertTransition` objects the embedded evaluator produces, and
  reads every rule's health from ``/api/v1/rules`` (:meth:`AlertSource.fetch_rules`), which
  :class:`PrometheusAlerts` turns into the same rule health changes (:mod:`alerts.health`).

Scraped series keep the simulator's labels (``honor_labels``) and the ``instance`` label
Prometheus would add is dropped, so alert label sets equal the embedded ones. Rate
windows are wall-clock windows: run the simulation at ``speed=1`` when the pack's
windows and ``for`` durations should mean what they say.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from alerts.evaluator import AlertTransition
from alerts.health import RuleHealth, RuleHealthChange, RuleHealthTracker
from alerts.promql.labels import fingerprint
from alerts.rules import DEFAULT_PACK, PACKS, RuleFileError, load_rule_file, pack_files

if TYPE_CHECKING:
    pass

EXIT_OK = 0
EXIT_WRITE_FAILED = 1
EXIT_BAD_INPUT = 2


class MetricsServer:
    """Serve ``exposition()`` at ``http://host:port/metrics`` from a background thread.

    The owner (the orchestrator on a wall clock) advances the simulation and holds ``lock``
    while doing so; :class:`engine.run.live.LiveSimulation` is the variant that advances it itself.

    Args:
        exposition: returns the Prometheus text exposition.
        lock: held while ``exposition`` runs.
        host: listen address (loopback by default); port: 0 picks a free one (see
            :attr:`port` after :meth:`start`).
    """

    thread_name = "marathon-metrics"

    def __init__(self, exposition: Callable[[], str], lock: threading.RLock, *, host: str = "127.0.0.1",
                 port: int = 0) -> None:
        self.exposition = exposition
        self.lock = lock
        self.host = host
        self.port = port
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/metrics"

    def start(self) -> int:
        """Start serving; returns the port.

        Raises:
            RuntimeError: the server could not start (the cause is chained).
        """
        self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
        self._thread.start()
        self._ready.wait(10.0)
        if self._error is not None:
            raise RuntimeError(f"metrics server failed to start: {self._error}") from self._error
        if not self._ready.is_set():
            raise RuntimeError("metrics server did not start within 10 s")
        return self.port

    def stop(self) -> None:
        """Stop serving (idempotent)."""
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(10.0)
            self._thread = None

    def __enter__(self) -> MetricsServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # surfaced by start()
            self._error = exc
            self._ready.set()

    def _headers(self) -> dict[str, str]:
        return {}

    async def _serve(self, stop: asyncio.Event) -> None:
        """Runs while the server is up; returns when ``stop`` is set."""
        await stop.wait()

    async def _main(self) -> None:
        from aiohttp import web

        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()

        async def metrics(_: web.Request) -> web.Response:
            with self.lock:
                body = self.exposition()
                headers = self._headers()
            return web.Response(text=body, content_type="text/plain", charset="utf-8", headers=headers)

        app = web.Application()
        app.router.add_get("/metrics", metrics)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port)
        await site.start()
        sockets = getattr(getattr(site, "_server", None), "sockets", None) or []
        if sockets:
            self.port = int(sockets[0].getsockname()[1])
        self._ready.set()
        try:
            await self._serve(self._stop)
        finally:
            await runner.cleanup()


def prometheus_config(targets: list[str], *, rule_files: list[str], scrape_interval: str = "15s",
                      evaluation_interval: str = "15s", job: str = "sre-marathon") -> dict[str, Any]:
    """A Prometheus configuration (as a dict) scraping ``targets`` with the given rule files."""
    return {
        "global": {"scrape_interval": scrape_interval, "evaluation_interval": evaluation_interval},
        "rule_files": rule_files,
        "scrape_configs": [{
            "job_name": job,
            "honor_labels": True,
            "scrape_interval": scrape_interval,
            "static_configs": [{"targets": targets}],
            # The simulator's series carry their own job label; drop the target's instance
            # label so alert label sets equal the embedded evaluator's.
            "metric_relabel_configs": [{"action": "labeldrop", "regex": "instance"}],
        }],
    }


def write_prometheus_config(out_dir: str | Path, targets: list[str], *, scrape_interval: str = "15s",
                            evaluation_interval: str = "15s", rules: str | Path = DEFAULT_PACK,
                            time_scale: float = 1.0) -> Path:
    """Write ``prometheus.yml`` and a copy of the rule pack's file(s) into ``out_dir``.

    Args:
        out_dir: the directory (created if missing).
        targets: ``host:port`` endpoints to scrape.
        scrape_interval, evaluation_interval: Prometheus durations.
        rules: a pack name (``paper``, the default; ``extended`` copies the paper file and the
            extended file) or the path of one rule file (:func:`alerts.rules.pack_files`).
        time_scale: the cluster's run seconds per wall second (``marathon cluster --speed``):
            the rule files, the scrape and the evaluation interval are rewritten for it
            (:func:`alerts.timescale.scale_rules`); 1 copies the files as they are.

    Returns:
        The path of ``prometheus.yml`` (its ``rule_files`` are relative to it).

    Raises:
        RuleFileError: unknown pack and no such file, a file that does not load, or two
            files of the pack with the same name.
        OSError: the directory or files cannot be written.
    """
    files = pack_files(rules)
    names = [f.name for f in files]
    if len(set(names)) != len(names):
        raise RuleFileError(str(rules), f"rule files with the same name cannot be copied side by side: {names}")
    for f in files:
        load_rule_file(f)  # validate before writing
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for f in files:
        if time_scale == 1:
            shutil.copyfile(f, out / f.name)
        else:
            from alerts.timescale import scale_duration, scale_rules

            data = scale_rules(yaml.safe_load(f.read_text(encoding="utf-8")), time_scale)
            (out / f.name).write_text(f"# {f.name} for a cluster at {time_scale:g}x (`marathon prometheus-config "
                                      f"--time-scale`): durations and rates in run time.\n"
                                      + yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    if time_scale != 1:
        scrape_interval = scale_duration(scrape_interval, time_scale)
        evaluation_interval = scale_duration(evaluation_interval, time_scale)
    cfg = prometheus_config(targets, rule_files=names, scrape_interval=scrape_interval,
                            evaluation_interval=evaluation_interval)
    path = out / "prometheus.yml"
    path.write_text("# Written by `marathon prometheus-config`.\n" + yaml.safe_dump(cfg, sort_keys=False))
    return path


def add_prometheus_config_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the arguments of ``marathon prometheus-config`` on ``parser`` and set ``func``."""
    parser.add_argument("-o", "--output", default="prometheus", metavar="DIR",
                        help="directory for prometheus.yml and the rule pack (default: ./prometheus)")
    parser.add_argument("--target", action="append", default=None, metavar="HOST:PORT",
                        help="metrics endpoint to scrape (repeatable; default 127.0.0.1:9464, where `marathon "
                             "cluster` and `--metrics-port 9464` serve)")
    parser.add_argument("--scrape-interval", default="15s")
    parser.add_argument("--evaluation-interval", default="15s")
    parser.add_argument("--rules", default=DEFAULT_PACK, metavar="PACK|FILE",
                        help=f"rule pack ({', '.join(PACKS)}; default {DEFAULT_PACK}) or a rule file")
    parser.add_argument("--time-scale", type=float, default=1.0, metavar="X",
                        help="the cluster runs X run seconds per wall second (marathon cluster --speed X): rewrite "
                             "the pack's windows, for durations, rates and the intervals for it (default 1)")
    parser.set_defaults(func=cmd_prometheus_config)


def cmd_prometheus_config(args: argparse.Namespace) -> int:
    """Write a scrape configuration and the rule pack for a user's Prometheus.

    Returns:
        0 written; 1 the output could not be written; 2 the rule file does not load.
    """
    try:
        path = write_prometheus_config(args.output, args.target or ["127.0.0.1:9464"],
                                       scrape_interval=args.scrape_interval,
                                       evaluation_interval=args.evaluation_interval, rules=args.rules,
                                       time_scale=getattr(args, "time_scale", 1.0))
    except (RuleFileError, ValueError) as exc:
        print(f"marathon prometheus-config: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:
        print(f"marathon prometheus-config: cannot write {args.output}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_WRITE_FAILED
    print(f"wrote {path} (run: prometheus --config.file={path})", file=sys.stderr)
    return EXIT_OK


class AlertSource:
    """Alerts read from a running Prometheus, as :class:`AlertTransition` lists.

    Args:
        url: the Prometheus base URL, e.g. ``http://127.0.0.1:9090``.
        clock: maps wall time to the run time stamped on transitions (default: wall seconds).

    Raises:
        ImportError: ``prometheus-api-client`` is not installed.
    """

    def __init__(self, url: str, *, clock: Callable[[], float] | None = None, timeout_s: float = 5.0) -> None:
        from prometheus_api_client import PrometheusConnect

        self.url = url.rstrip("/")
        self.client = PrometheusConnect(url=self.url, disable_ssl=True)
        self.clock = clock or time.time
        self.timeout_s = timeout_s
        self._states: dict[str, tuple[str, dict[str, Any]]] = {}

    def ready(self) -> bool:
        """Whether Prometheus answers."""
        return bool(self.client.check_prometheus_connection())

    def fetch(self) -> list[dict[str, Any]]:
        """The ``/api/v1/alerts`` list (labels, annotations, state, activeAt, value).

        Raises:
            RuntimeError: an error answer.
        """
        alerts: list[dict[str, Any]] = self._get("/api/v1/alerts")["data"]["alerts"]
        return alerts

    def fetch_rules(self) -> list[dict[str, Any]]:
        """The ``/api/v1/rules`` groups (name, file, rules with name, type, health, lastError,
        lastEvaluation).

        Raises:
            RuntimeError: an error answer.
        """
        body = self._get("/api/v1/rules")
        groups: list[dict[str, Any]] = body["data"]["groups"]
        return groups

    def _get(self, path: str) -> dict[str, Any]:
        session = getattr(self.client, "_session", None)
        if session is None:
            import requests

            session = requests.Session()
        body: dict[str, Any] = session.get(f"{self.url}{path}", timeout=self.timeout_s).json()
        if body.get("status") != "success":
            raise RuntimeError(f"Prometheus {path}: {body}")
        return body

    def poll(self) -> list[AlertTransition]:
        """Fetch alerts and return the state changes since the last poll."""
        now = self.clock()
        out: list[AlertTransition] = []
        seen: dict[str, tuple[str, dict[str, Any]]] = {}
        for a in self.fetch():
            labels = {str(k): str(v) for k, v in a.get("labels", {}).items()}
            seen[fingerprint(labels)] = (str(a.get("state", "")), a)
        for fp, (state, a) in seen.items():
            before = self._states.get(fp, ("inactive", a))[0]
            if before == state:
                continue
            if before == "inactive" and state == "firing":
                out.append(self._transition(fp, a, "inactive", "pending", now))
                before = "pending"
            out.append(self._transition(fp, a, before, state, now))
        for fp, (state, a) in self._states.items():
            if fp not in seen:
                out.append(self._transition(fp, a, state, "resolved" if state == "firing" else "inactive", now))
        self._states = seen
        return out

    @staticmethod
    def _transition(fp: str, a: dict[str, Any], from_state: str, to_state: str, now: float) -> AlertTransition:
        labels = {str(k): str(v) for k, v in a.get("labels", {}).items()}
        try:
            value = float(a.get("value", "nan"))
        except (TypeError, ValueError):
            value = float("nan")
        return AlertTransition(labels.get("alertname", ""), "", labels, fp, from_state, to_state, now, value,
                               {str(k): str(v) for k, v in a.get("annotations", {}).items()}, now)


__all__ = ["AlertSource", "MetricsServer", "add_prometheus_config_arguments", "cmd_prometheus_config",
           "prometheus_config", "write_prometheus_config"]


class PrometheusAlerts:
    """The run loop's alert source backed by a real Prometheus (instead of the embedded evaluator).

    ``step`` polls ``/api/v1/alerts`` and returns the state changes since the last poll,
    stamped with the run's clock; ``history`` accumulates them like the embedded one. It also
    reads ``/api/v1/rules`` and keeps every evaluated rule's health (Prometheus' own
    ``health``/``lastError``; rules still ``unknown`` are left out), so
    :meth:`take_rule_health_changes` reports the same changes as the embedded evaluator's,
    stamped with the run time of the poll that saw them.
    """

    def __init__(self, url: str, clock: Callable[[], float]) -> None:
        from alerts.history import AlertHistory

        self.source = AlertSource(url, clock=clock)
        self.history = AlertHistory()
        self._health = RuleHealthTracker()

    def step(self, store: object, until: float) -> list[AlertTransition]:
        try:
            out = self.source.poll()
        except Exception as exc:  # an unreachable Prometheus: no news this interval
            print(f"marathon: polling Prometheus failed: {exc}", file=sys.stderr)
            return []
        self.history.record(out)
        try:
            self.observe_rules(self.source.fetch_rules(), self.source.clock())
        except Exception as exc:  # keep the alerts of this interval; rule health waits for the next poll
            print(f"marathon: reading Prometheus' rule health failed: {exc}", file=sys.stderr)
        return out

    def observe_rules(self, groups: list[dict[str, Any]], t: float) -> None:
        """Record the health of every evaluated rule of ``/api/v1/rules`` groups, at run time ``t``."""
        for group in groups:
            name = str(group.get("name", ""))
            for index, rule in enumerate(group.get("rules") or ()):
                health = str(rule.get("health", "unknown"))
                if health not in ("ok", "err"):
                    continue  # not evaluated yet
                error = (str(rule.get("lastError") or "") or "unknown error") if health == "err" else None
                self._health.observe((group.get("file"), name, index), rule=str(rule.get("name", "")), group=name,
                                     index=index, type=str(rule.get("type", "alerting")), t=t, error=error)

    def take_rule_health_changes(self) -> list[RuleHealthChange]:
        """Rule health changes since the previous call (:mod:`alerts.health`)."""
        return self._health.take_changes()

    def rule_health(self) -> list[RuleHealth]:
        """Every evaluated rule's health as of the latest poll."""
        return self._health.rules()
