"""``marathon sweep``: a grid of independent runs, each sealed into a bundle, then one leaderboard.

A grid is apps x regimes x seeds x operators (x LLM configurations for the LLM agents), from a
YAML file (:func:`load_grid`, validated with pydantic; errors name the file and the field) or
from flags. :func:`expand` turns it into :class:`RunSpec` s, each with the name ``marathon run``
gives the same run (:func:`engine.run.orchestrator.run_name`: ``<app>-<regime>-seed<seed>-<operator>``),
so its bundle is ``<out>/<name>.marathon``. Every run goes through :func:`run_one`, which is
``marathon run``'s path (:class:`engine.run.session.RunSession`: drive, then seal), so a sweep's
bundle is byte-identical to ``marathon run``'s for the same (app, seed, regime, operator).

Resumable: a run whose bundle exists, verifies, is sealed and complete is skipped; anything
else under its name (a broken or incomplete bundle, a partial run directory in
``<out>/.partial/``) is removed and the run is redone. Runs record into ``<out>/.partial/<name>``
and the bundle is moved into place only once sealed, so a bundle in ``<out>`` is always a
finished seal.

Backends:

* ``local``: CPU-bound runs (every scripted operator) in a pool of worker processes, one fresh
  worker forked from a warm ``forkserver`` (no re-import) and kept from run to run, as a Ray
  worker is (a worker that dies -- killed, out of memory -- fails only its run and is replaced).
  The pool holds ``min(cores, available memory / RUN_PEAK_BYTES)`` workers
  (:func:`pool_size`). Model-bound runs (LLM agents, which spend their time waiting on their
  endpoint) run as threads of this process, at most ``--concurrency`` at a time; the client's
  retries with back-off on 429 keep them inside the endpoint's rate limits
  (:mod:`engine.operate.llm.client`).
* ``ray``: one Ray task per run (``num_cpus=1`` and ``memory=RUN_PEAK_BYTES`` for CPU-bound runs,
  ``num_cpus=0`` for model-bound ones, at most ``--concurrency`` in flight), on the cluster at
  ``--address`` or a local instance. The bundle comes back to the driver as bytes, or, with
  ``--shared-dir`` (a path every node mounts), is written there by the task. Ray is imported
  only by this backend (the ``ray`` extra).

At the end every bundle is scored on this machine exactly as ``marathon score`` scores it
(:func:`scoring.cli.load_score`, the same ranking filter and :func:`scoring.leaderboard.leaderboard`),
in the local process pool, and ``<out>/leaderboard.json`` is ``marathon score --json`` of the
bundles plus a ``sweep`` key listing every run's name and the runs that failed, with why.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import multiprocessing.connection
import os
import shutil
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from engine.operate.llm.config import LLMConfig, LLMConfigError, load_llm_config

RUN_PEAK_BYTES = 500 * 2**20
"""Peak resident memory of one run, bytes: a Train Ticket marathon peaks at 469-483 MiB
(``/usr/bin/time -v marathon run --regime marathon``, notes of issue 17), the largest shipped
app and regime; smaller runs take less, so the pool errs on the side of fewer workers."""

PARTIAL_DIR = ".partial"
"""Where runs record until sealed (under the output directory)."""

LEADERBOARD_FILE = "leaderboard.json"

BACKENDS = ("local", "ray")

DEFAULT_CONCURRENCY = 4
"""Model-bound runs in flight at once (``--concurrency``)."""


class SweepError(ValueError):
    """A grid that cannot run (message names the file or flag, the field and what to change)."""


# ----------------------------------------------------------------------------- the grid


MAX_SEEDS = 10_000
"""Most seeds one sweep takes (a range is expanded before anything runs: ``1-100000000`` would
take gigabytes to list; 10,000 seeds of one app and operator is already ~ a CPU-month of marathons)."""


def parse_seeds(value: str | int | Sequence[int | str]) -> list[int]:
    """Seeds from ``"1-3,7"``, ``5`` or ``[1, 2, "4-5"]``: a sorted list without repeats.

    Raises:
        ValueError: not a non-negative integer or a ``LO-HI`` range with ``LO <= HI``.
    """
    parts: list[int | str] = [value] if isinstance(value, int | str) else list(value)
    out: set[int] = set()
    for part in parts:
        if isinstance(part, bool):
            raise ValueError(f"invalid seed {part!r}: expected a non-negative integer or a range like 1-5")
        items = [str(part)] if isinstance(part, int) else [p.strip() for p in str(part).split(",") if p.strip()]
        for item in items:
            lo, sep, hi = item.partition("-")
            try:
                a, b = (int(lo), int(hi)) if sep else (int(item), int(item))
            except ValueError:
                raise ValueError(f"invalid seed {item!r}: expected a non-negative integer or a range like "
                                 "1-5") from None
            if a < 0 or b < a:
                raise ValueError(f"invalid seed range {item!r}: seeds are non-negative and LO <= HI")
            if b - a + 1 > MAX_SEEDS or len(out) + (b - a + 1) > MAX_SEEDS:
                raise ValueError(f"too many seeds ({item!r}): a sweep takes at most {MAX_SEEDS} seeds")
            out.update(range(a, b + 1))
    if not out:
        raise ValueError("no seeds given")
    return sorted(out)


class LLMEntry(BaseModel):
    """One LLM configuration of a grid: a file (``config``, relative to the grid file) and/or
    keys of :class:`engine.operate.llm.config.LLMConfig`, which override the file's."""

    model_config = ConfigDict(extra="allow", frozen=True)
    config: str | None = None


class SweepGrid(BaseModel):
    """A sweep's grid (module docstring). Every list must be non-empty.

    Attributes:
        apps: shipped app names or app files/directories.
        seeds: seeds, or ranges such as ``"1-5"``.
        regimes: run regimes (:data:`faults.schedule.RUN_REGIMES`).
        agents: operators (:data:`engine.operate.operators.OPERATORS`).
        llm: configurations the LLM agents run with (each LLM agent runs once per entry); empty:
            the ``--llm-*`` flags and the environment, as for ``marathon run``.
        rules: the alert rule pack of every run.
        alerts: ``embedded`` or ``none``.
    """

    model_config = ConfigDict(extra="forbid")
    apps: list[str] = Field(min_length=1)
    seeds: list[int | str] | int | str = 1
    regimes: list[str] = Field(default_factory=lambda: ["short-5"], min_length=1)
    agents: list[str] = Field(min_length=1)
    llm: list[LLMEntry] = Field(default_factory=list)
    rules: str = "paper"
    alerts: str = "embedded"

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, v: list[int | str] | int | str) -> list[int]:
        return parse_seeds(v)

    @field_validator("regimes")
    @classmethod
    def _regimes(cls, v: list[str]) -> list[str]:
        from faults.schedule import RUN_REGIMES

        for i, r in enumerate(v):
            if r not in RUN_REGIMES:
                raise ValueError(f"entry {i}: unknown regime {r!r}; choose from {', '.join(RUN_REGIMES)}")
        return v

    @field_validator("agents")
    @classmethod
    def _agents(cls, v: list[str]) -> list[str]:
        from engine.operate.operators import OPERATORS

        for i, a in enumerate(v):
            if a not in OPERATORS:
                raise ValueError(f"entry {i}: unknown agent {a!r}; choose from {', '.join(OPERATORS)}")
        return v

    @field_validator("rules")
    @classmethod
    def _rules(cls, v: str) -> str:
        from alerts.rules import RuleFileError, load_pack

        try:
            load_pack(v)
        except (RuleFileError, OSError) as exc:
            raise ValueError(f"rules {v!r} does not load: {exc}") from None
        return v

    @field_validator("alerts")
    @classmethod
    def _alerts(cls, v: str) -> str:
        if v not in ("embedded", "none"):
            raise ValueError(f"alerts must be embedded or none, not {v!r} (a sweep runs on the embedded simulator)")
        return v


def _validated(data: Any, source: str) -> SweepGrid:
    try:
        return SweepGrid.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'root'}: {e['msg']}" for e in exc.errors())
        raise SweepError(f"{source}: invalid sweep grid: {problems}") from None


def load_grid(path: str | Path) -> SweepGrid:
    """Read and validate a grid file (YAML; module docstring).

    Raises:
        SweepError: unreadable, not YAML, not a mapping, or a field out of range (names the file
            and the field).
    """
    from engine.inputs.safeyaml import YamlInputError, parse_yaml, read_text

    p = Path(path)
    try:
        data = parse_yaml(read_text(p))
    except OSError as exc:
        raise SweepError(f"{p}: cannot read the sweep grid ({exc.strerror or exc})") from None
    except YamlInputError as exc:
        raise SweepError(f"{p}: {exc}") from None
    if not isinstance(data, dict):
        raise SweepError(f"{p}: a sweep grid is a mapping with apps, seeds, regimes and agents, not "
                         f"{type(data).__name__}")
    grid = _validated(data, str(p))
    # LLM configuration files are relative to the grid file.
    entries = []
    for e in grid.llm:
        if e.config is not None and not Path(e.config).is_absolute():
            e = e.model_copy(update={"config": str(p.parent / e.config)})
        entries.append(e)
    return grid.model_copy(update={"llm": entries})


@dataclass(frozen=True)
class RunSpec:
    """One run of a sweep; picklable (it crosses to worker processes and Ray tasks).

    Attributes:
        name: ``<app>-<regime>-seed<seed>-<operator>`` (the bundle is ``<name>.marathon``).
        llm: the LLM agent's resolved configuration (None for scripted operators).
    """

    name: str
    app: str
    seed: int
    regime: str
    agent: str
    llm: LLMConfig | None = None
    rules: str = "paper"
    alerts: str = "embedded"

    @property
    def model_bound(self) -> bool:
        """An LLM agent: the run waits on its endpoint more than it computes."""
        return self.llm is not None


def expand(grid: SweepGrid, *, llm_default: Callable[[], LLMConfig] | None = None) -> list[RunSpec]:
    """The grid's runs, in order apps, regimes, seeds, agents, LLM configurations.

    Args:
        grid: a validated grid.
        llm_default: the configuration of LLM agents when the grid lists none (``marathon sweep``
            passes the ``--llm-*`` flags'); None: the environment's (:func:`load_llm_config`).

    Raises:
        SweepError: an app that does not load, an LLM configuration that cannot be used, or two
            runs that would share a name (give each LLM configuration its own ``label``).
    """
    from engine.apps.model import AppModelError, load_app
    from engine.operate.operators import LLM_AGENTS, make_operator

    for app in grid.apps:
        try:
            load_app(app)
        except (KeyError, AppModelError, OSError) as exc:
            raise SweepError(f"apps: {exc.args[0] if isinstance(exc, KeyError) and exc.args else exc}") from None
    llm_configs: list[LLMConfig] = []
    if any(a in LLM_AGENTS for a in grid.agents):
        try:
            if grid.llm:
                for i, e in enumerate(grid.llm):
                    overrides = {k: v for k, v in (e.model_extra or {}).items()}
                    try:
                        llm_configs.append(load_llm_config(e.config, overrides, env={}))
                    except LLMConfigError as exc:
                        raise SweepError(f"llm.{i}: {exc}") from None
            else:
                llm_configs.append(llm_default() if llm_default is not None else load_llm_config())
        except LLMConfigError as exc:
            raise SweepError(str(exc)) from None
    from engine.run.orchestrator import run_name
    from faults.schedule import Schedule

    names: dict[str, RunSpec] = {}
    out: list[RunSpec] = []
    seeds = grid.seeds if isinstance(grid.seeds, list) else parse_seeds(grid.seeds)
    for app in grid.apps:
        for regime in grid.regimes:
            for seed in seeds:
                for agent in grid.agents:
                    for cfg in (llm_configs if agent in LLM_AGENTS else [None]):
                        try:
                            operator = make_operator(agent, llm_config=cfg)
                        except ValueError as exc:
                            raise SweepError(f"agents: {agent}: {exc}") from None
                        sched = Schedule.model_construct(app=app, regime=regime, seed=int(seed))
                        name = run_name(sched, int(seed), operator.name)
                        spec = RunSpec(name, app, int(seed), regime, agent, cfg, grid.rules, grid.alerts)
                        if name in names:
                            raise SweepError(f"two runs would write the same bundle {name}.marathon "
                                             f"({names[name]} and {spec}); give each llm configuration a "
                                             "distinct label")
                        names[name] = spec
                        out.append(spec)
    return out


# ----------------------------------------------------------------------------- one run


@dataclass
class RunResult:
    """What one run (or its skip) produced.

    Attributes:
        status: ``ok`` (ran and sealed complete), ``skipped`` (a verified bundle was there) or
            ``failed``.
        bundle: where the bundle is (on the machine that ran it, for a Ray task without a shared
            directory: then ``data`` holds its bytes).
        wall_s: seconds of wall time the run took.
    """

    name: str
    status: str
    bundle: str | None = None
    error: str | None = None
    wall_s: float = 0.0
    data: bytes | None = field(default=None, repr=False)


def bundle_path(out: str | Path, name: str) -> Path:
    return Path(out) / f"{name}.marathon"


def sealed_ok(path: Path, spec: RunSpec | None = None) -> bool:
    """Whether ``path`` is a bundle a resumed sweep may keep for ``spec``: it verifies, sealed and
    complete; it is ``spec``'s run (``run.start``'s app, regime, seed and operator give
    ``spec.name``; its rule pack is ``spec.rules``' and its alert source ``spec.alerts``), not
    a bundle copied in under another run's name; and ``marathon verify --replay`` has not found
    it diverged here. ``spec`` None: the first condition only.
    """
    from engine.bundle.format import BundleError, NotARunError, open_bundle, verify
    from engine.bundle.replaystatus import replay_status

    if not path.is_file():
        return False
    try:
        report = verify(path, keep=spec is not None)
        if not (report.ok and report.sealed and report.complete):
            return False
        if spec is None:
            return True
        if replay_status(report.head) == "diverged":
            return False
        meta = open_bundle(path, report=report).meta
    except (BundleError, NotARunError, OSError, ValueError, KeyError):
        return False
    return _is_run_of(meta, spec)


def _is_run_of(meta: dict[str, Any], spec: RunSpec) -> bool:
    from alerts.rules import RuleFileError, pack_identity
    from engine.run.orchestrator import run_name
    from faults.schedule import Schedule

    try:
        seed = int(meta["seed"])
        sched = Schedule.model_construct(app=str(meta["app"]), regime=str(meta["regime"]), seed=seed)
        if run_name(sched, seed, str(meta["operator"])) != spec.name:
            return False
        pack = meta.get("rule_pack")
        if spec.alerts == "none":
            return pack is None
        return isinstance(pack, dict) and pack.get("files") == pack_identity(spec.rules)["files"]
    except (KeyError, TypeError, ValueError, RuleFileError):
        return False


def _clear(out: Path, name: str) -> None:
    """Remove every trace of run ``name`` under ``out`` (its bundle and partial run directory)."""
    partial = out / PARTIAL_DIR / name
    if partial.exists():
        shutil.rmtree(partial)
    for p in (bundle_path(out, name), bundle_path(out / PARTIAL_DIR, name)):
        with contextlib.suppress(FileNotFoundError):
            p.unlink()


def run_one(spec: RunSpec, out: str | Path, cancelled: Callable[[], bool] | None = None) -> RunResult:
    """Run ``spec`` into ``<out>/<name>.marathon`` (module docstring); never raises for a run
    that fails (its result says why), so one broken run never ends a sweep.

    The run is ``marathon run``'s: the schedule :func:`faults.generator.generate` makes for the
    app, seed and regime; the operator :func:`engine.operate.operators.make_operator` makes;
    :class:`engine.run.session.RunSession` on the virtual clock, driven to the end and sealed.
    ``cancelled`` (a thread's run) stops the run after its current slice; it is sealed incomplete.
    """
    out = Path(out)
    started = time.perf_counter()
    try:
        from engine.operate.operators import make_operator
        from engine.run.sealinputs import counterfactual_first
        from engine.run.session import RunSession
        from faults.generator import generate

        _clear(out, spec.name)
        run_dir = out / PARTIAL_DIR / spec.name
        run_dir.parent.mkdir(parents=True, exist_ok=True)
        sched = generate(spec.app, spec.seed, spec.regime)
        operator = make_operator(spec.agent, llm_config=spec.llm)
        first = counterfactual_first(sched, spec.seed)  # as marathon run: before the run's simulator
        session = RunSession(sched, seed=spec.seed, operator=operator, run_dir=run_dir,
                             alert_source=None if spec.alerts == "none" else spec.alerts, rules=spec.rules)
        session.counterfactual = first
        try:
            finished = session.drive(cancelled or (lambda: False))
        finally:
            outcome = session.close()
        if outcome.bundle is None:
            return RunResult(spec.name, "failed", error=f"the run could not be sealed: {outcome.error}",
                             wall_s=time.perf_counter() - started)
        if not (finished and outcome.complete):
            return RunResult(spec.name, "failed", error="the run stopped before the end of its schedule "
                             f"(sealed incomplete: {outcome.bundle})", wall_s=time.perf_counter() - started)
        final = bundle_path(out, spec.name)
        os.replace(outcome.bundle, final)
        shutil.rmtree(run_dir, ignore_errors=True)
        return RunResult(spec.name, "ok", bundle=str(final), wall_s=time.perf_counter() - started)
    except Exception as exc:
        return RunResult(spec.name, "failed", error=_describe(exc), wall_s=time.perf_counter() - started)


def _describe(exc: BaseException) -> str:
    """``Type: message`` and the innermost frame (enough to find a crash without a traceback dump)."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" (at {Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {exc}{where}"


@dataclass
class Scored:
    """One bundle's score as ``marathon score`` computes it, and its run identity (last hash,
    event count) by which ``marathon score`` counts a run once."""

    name: str
    score: Any = None
    identity: tuple[str, int] | None = None
    error: str | None = None


def score_one(name: str, path: str, formula: str) -> Scored:
    """Score one bundle as ``marathon score`` does (:func:`scoring.cli.load_score`, verified, with
    the no-op counterfactual it carries); never raises (the result says why it failed)."""
    from engine.run.counterfactual import noop_counterfactual
    from scoring.cli import ScoreError, load_score

    try:
        score, events = load_score(path, formula=formula, noop=noop_counterfactual)
    except ScoreError as exc:
        return Scored(name, error=str(exc))
    except Exception as exc:
        return Scored(name, error=_describe(exc))
    identity = (events[-1].hash if events and events[-1].hash else path, len(events))
    return Scored(name, score, identity)


# ----------------------------------------------------------------------------- progress


class Progress(Protocol):
    """What a sweep reports as it goes (a rich bar in a terminal: ``tui/sweepbar.py``)."""

    def start(self, total: int, skipped: int) -> None: ...

    def run_done(self, result: RunResult) -> None: ...

    def phase(self, text: str) -> None: ...

    def close(self) -> None: ...


class LineProgress:
    """Plain progress lines on a stream (no terminal, or ``--quiet`` off a terminal)."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.done = 0
        self.total = 0

    def start(self, total: int, skipped: int) -> None:
        self.total = total
        print(f"sweep: {total} runs to do, {skipped} already sealed (skipped)", file=self.stream, flush=True)

    def run_done(self, result: RunResult) -> None:
        self.done += 1
        note = f": {result.error}" if result.error else ""
        print(f"[{self.done}/{self.total}] {result.name} {result.status} ({result.wall_s:.1f} s){note}",
              file=self.stream, flush=True)

    def phase(self, text: str) -> None:
        print(f"sweep: {text}", file=self.stream, flush=True)

    def close(self) -> None:
        pass


class _Quiet(LineProgress):
    def start(self, total: int, skipped: int) -> None:
        self.total = total

    def run_done(self, result: RunResult) -> None:
        pass

    def phase(self, text: str) -> None:
        pass


# ----------------------------------------------------------------------------- local backend


def available_memory() -> int | None:
    """``MemAvailable`` of ``/proc/meminfo``, bytes (None where there is none)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def cores() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def pool_size(*, n_cores: int | None = None, memory: int | None = None, peak: int = RUN_PEAK_BYTES) -> int:
    """Worker processes for CPU-bound runs: ``min(cores, available memory // peak)``, at least 1.

    Args:
        n_cores: CPUs (default :func:`cores`).
        memory: available bytes (default :func:`available_memory`; unknown: cores decide).
        peak: one run's peak resident memory, bytes (:data:`RUN_PEAK_BYTES`).
    """
    n = cores() if n_cores is None else n_cores
    mem = available_memory() if memory is None else memory
    if mem is not None:
        n = min(n, mem // peak)
    return max(1, int(n))


_PRELOAD = ["engine.run.sweep", "engine.run.session", "engine.run.orchestrator", "engine.run.counterfactual",
            "engine.operate.operators.runbook", "engine.operate.operators.oracle", "faults.generator",
            "scoring.cli", "scoring.score", "scoring.leaderboard", "engine.bundle.format"]
"""Modules the forkserver imports once, so each worker starts warm."""


def _watch_driver(driver: int) -> None:
    """End this worker when the sweep that started it is gone (its parent is the forkserver, so
    nothing else would stop an orphaned run)."""
    while True:
        time.sleep(1.0)
        try:
            os.kill(driver, 0)
        except ProcessLookupError:
            os._exit(70)
        except PermissionError:
            pass


def _worker(conn: Any, driver: int) -> None:
    """A worker process's body: runs ``(fn, args)`` tasks from ``conn`` one at a time, sending
    each result back (an exception is sent as a failure; a process that dies sends nothing, and
    the pool records its exit status); ``None`` or a closed pipe ends it. It also exits on its own
    when the ``driver`` process has gone away."""
    threading.Thread(target=_watch_driver, args=(driver,), name="sweep-driver-watch", daemon=True).start()
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        fn, args = task
        try:
            result: Any = ("ok", fn(*args))
        except BaseException as exc:
            result = ("error", _describe(exc))
        conn.send(result)


class ProcessSlots:
    """A pool of ``size`` worker processes (module docstring).

    Workers are kept from task to task (what a process caches -- app models, catalogs, compiled
    rules -- serves the next run, as in a Ray worker); a worker that dies fails only the task it
    held and is replaced. Tasks are ``(key, fn, args)``; ``fn`` (a module-level function), its
    arguments and its result are pickled. Results are ``("ok", value)``, or ``("error", text)``
    when ``fn`` raised or the process died (``text`` gives the exit status).

    Args:
        size: processes at once.
        start_method: ``forkserver`` (default: workers fork from a warm server, never from this
            process, whose threads -- progress, model-bound runs -- must not be forked), or
            ``fork``/``spawn``.
    """

    def __init__(self, size: int, start_method: str = "forkserver") -> None:
        self.size = max(1, size)
        self.ctx: Any = multiprocessing.get_context(start_method)
        if start_method == "forkserver":
            self.ctx.set_forkserver_preload(_PRELOAD)
        self._idle: list[tuple[Any, Any]] = []
        self._running: dict[Any, tuple[Any, Any]] = {}

    def _start(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, Any]:
        """An idle worker (or a new one) with the task sent to it."""
        while self._idle:
            proc, conn = self._idle.pop()
            try:
                conn.send((fn, args))
                return proc, conn
            except (BrokenPipeError, OSError):  # died while idle
                conn.close()
                proc.join(5)
        conn, child = self.ctx.Pipe(duplex=True)
        proc = self.ctx.Process(target=_worker, args=(child, os.getpid()), daemon=True, name="sweep-worker")
        proc.start()
        child.close()
        conn.send((fn, args))
        return proc, conn

    def run(self, tasks: Iterable[tuple[Any, Callable[..., Any], tuple[Any, ...]]],
            on_result: Callable[[Any, tuple[str, Any]], Iterable[tuple[Any, Callable[..., Any], tuple[Any, ...]]]
                                | None]) -> None:
        """Run every task, calling ``on_result(key, result)`` in this thread as each ends; it may
        return more tasks (queued after those waiting). Returns when all have ended.

        On ``KeyboardInterrupt`` every worker is terminated and the interrupt re-raised.
        """
        queue = list(tasks)
        try:
            while queue or self._running:
                while queue and len(self._running) < self.size:
                    key, fn, args = queue.pop(0)
                    self._running[key] = self._start(fn, args)
                waiting = [c for _, c in self._running.values()] + [p.sentinel for p, _ in self._running.values()]
                ready = multiprocessing.connection.wait(waiting)
                for key, (proc, conn) in list(self._running.items()):
                    if conn not in ready and proc.sentinel not in ready:
                        continue
                    result: tuple[str, Any] | None = None
                    with contextlib.suppress(EOFError, OSError):
                        if conn.poll():
                            result = conn.recv()
                    del self._running[key]
                    if result is not None and proc.is_alive():
                        self._idle.append((proc, conn))
                    else:
                        conn.close()
                        if result is None:
                            result = ("error", _exit_text(proc))
                    more = on_result(key, result)
                    if more:
                        queue.extend(more)
        except BaseException:
            self.terminate()
            raise

    def close(self) -> None:
        """Let the idle workers exit."""
        for _, conn in self._idle:
            with contextlib.suppress(OSError):
                conn.send(None)
            conn.close()
        for proc, _ in self._idle:
            proc.join(5)
            if proc.is_alive():
                proc.terminate()
        self._idle.clear()

    def terminate(self) -> None:
        """Stop every worker, busy or idle."""
        for proc, _ in [*self._running.values(), *self._idle]:
            proc.terminate()
        for proc, conn in [*self._running.values(), *self._idle]:
            proc.join(5)
            conn.close()
        self._running.clear()
        self._idle.clear()


def _exit_text(proc: Any) -> str:
    proc.join(5)
    code = proc.exitcode
    if code is not None and code < 0:
        import signal

        try:
            sig = signal.Signals(-code).name
        except ValueError:
            sig = str(-code)
        hint = " (out of memory?)" if -code == signal.SIGKILL else ""
        return f"the worker process was killed by {sig}{hint}"
    return f"the worker process exited with status {code} before reporting"


# ----------------------------------------------------------------------------- the sweep


@dataclass
class SweepResult:
    """Every run's result in grid order, the bundles' scores, and the leaderboard file."""

    results: list[RunResult]
    scores: list[Scored] = field(default_factory=list)
    leaderboard: Path | None = None
    table: str = ""
    wall_s: float = 0.0

    @property
    def failed(self) -> list[RunResult]:
        return [r for r in self.results if r.status == "failed"]


def sweep(specs: Sequence[RunSpec], out: str | Path, *, backend: str = "local", workers: int | None = None,
          concurrency: int = DEFAULT_CONCURRENCY, address: str | None = None, shared_dir: str | Path | None = None,
          formula: str | None = None, per_app: bool = False, score: bool = True,
          progress: Progress | None = None, start_method: str = "forkserver") -> SweepResult:
    """Run ``specs`` into ``out`` and score them (module docstring).

    Args:
        specs: from :func:`expand`.
        out: the output directory (created).
        backend: ``local`` or ``ray``.
        workers: worker processes (local) or CPUs of a local Ray instance (default :func:`pool_size`).
        concurrency: model-bound runs in flight at once.
        address: the Ray cluster (``auto``, ``ray://HOST:10001``, ``HOST:6379``); None or ``local``:
            a local instance of ``workers`` CPUs (an already initialised Ray is used as is).
        shared_dir: Ray only: tasks write bundles here (a path every node, and the driver, mounts)
            instead of returning them as bytes; the driver copies each into ``out`` unless
            ``out`` is this directory.
        formula: the Marathon-Score formula (default :data:`scoring.score.FORMULA_VERSION`).
        per_app: one leaderboard row per operator and app.
        score: write the leaderboard (False: runs only).
        progress: where progress goes (default: lines on stderr).
        start_method: the local pool's (:class:`ProcessSlots`).

    Raises:
        SweepError: an unknown backend; ``shared_dir`` without Ray; Ray not installed.
        KeyboardInterrupt: interrupted (workers stopped; run the sweep again to resume).
    """
    from scoring.score import FORMULA_VERSION

    if backend not in BACKENDS:
        raise SweepError(f"--backend must be one of {', '.join(BACKENDS)}, not {backend!r}")
    if shared_dir is not None and backend != "ray":
        raise SweepError("--shared-dir is for --backend ray (local runs write into the output directory)")
    if concurrency < 1:
        raise SweepError("--concurrency must be at least 1")
    if workers is not None and workers < 1:
        raise SweepError("--workers must be at least 1")
    formula = formula or FORMULA_VERSION
    progress = progress or LineProgress()
    outp = Path(out)
    try:
        outp.mkdir(parents=True, exist_ok=True)
        (outp / PARTIAL_DIR).mkdir(exist_ok=True)
    except OSError as exc:
        raise SweepError(f"{outp}: cannot use it as the sweep's output directory ({exc.strerror or exc})") from None
    started = time.perf_counter()
    size = workers or pool_size()
    slots = ProcessSlots(size, start_method)
    try:
        return _sweep(specs, outp, slots, size, backend, concurrency, address, shared_dir, formula, per_app, score,
                      progress, started)
    finally:
        slots.close()


def _sweep(specs: Sequence[RunSpec], outp: Path, slots: ProcessSlots, size: int, backend: str, concurrency: int,
           address: str | None, shared_dir: str | Path | None, formula: str, per_app: bool, score: bool,
           progress: Progress, started: float) -> SweepResult:
    """:func:`sweep`'s body, on its pool (closed by the caller)."""
    # Resume: bundles already sealed and verified are skipped (checked in the pool: verifying is CPU).
    results: dict[str, RunResult] = {}
    existing = [s for s in specs if bundle_path(outp, s.name).is_file()]
    if existing:
        progress.phase(f"checking {len(existing)} existing bundles")

        def checked(key: Any, res: tuple[str, Any]) -> None:
            if res == ("ok", True):
                results[key] = RunResult(key, "skipped", bundle=str(bundle_path(outp, key)))

        slots.run([(s.name, sealed_ok, (bundle_path(outp, s.name), s)) for s in existing], checked)
    todo = [s for s in specs if s.name not in results]
    progress.start(len(todo), len(results))
    try:
        if backend == "local":
            _run_local(todo, outp, slots, concurrency, results, progress)
        else:
            _run_ray(todo, outp, size, concurrency, address, shared_dir, results, progress)
    finally:
        progress.close()
    ordered = [results[s.name] for s in specs]
    res = SweepResult(ordered)
    if score:
        res.scores, res.table, res.leaderboard = _score_all(ordered, outp, slots, formula, per_app, progress)
    res.wall_s = time.perf_counter() - started
    return res


def spread(specs: Sequence[RunSpec]) -> list[RunSpec]:
    """The order runs start in: round-robin over schedules (app, regime, seed), first run of each,
    then the second, ...

    Every run's seal computes its schedule's no-op counterfactual unless another run of the same
    schedule has already cached it (:mod:`engine.run.counterfactual`); started side by side, two
    runs of one schedule would both compute it. Results keep the grid's order regardless.
    """
    by_schedule: dict[tuple[str, str, int], list[RunSpec]] = {}
    for s in specs:
        by_schedule.setdefault((s.app, s.regime, s.seed), []).append(s)
    rounds = max((len(v) for v in by_schedule.values()), default=0)
    return [runs[i] for i in range(rounds) for runs in by_schedule.values() if i < len(runs)]


def _run_local(todo: Sequence[RunSpec], out: Path, slots: ProcessSlots, concurrency: int,
               results: dict[str, RunResult], progress: Progress) -> None:
    """CPU-bound runs in the process pool; model-bound ones in threads of this process, both at once."""
    lock = threading.Lock()

    def record(result: RunResult) -> None:
        with lock:
            results[result.name] = result
            progress.run_done(result)

    model = [s for s in spread(todo) if s.model_bound]
    cpu = [s for s in spread(todo) if not s.model_bound]
    threads = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="sweep-model") if model else None
    futures: list[Future[RunResult]] = []
    stop = threading.Event()
    try:
        if threads is not None:
            for s in model:
                fut = threads.submit(run_one, s, out, stop.is_set)
                fut.add_done_callback(lambda f: record(f.result()))
                futures.append(fut)

        def done(key: Any, res: tuple[str, Any]) -> None:
            record(res[1] if res[0] == "ok" else RunResult(key, "failed", error=res[1]))

        slots.run([(s.name, run_one, (s, out)) for s in cpu], done)
        wait(futures)
    except BaseException:
        stop.set()  # threads' runs end after their slice, sealed incomplete (redone on resume)
        raise
    finally:
        if threads is not None:
            threads.shutdown(wait=True, cancel_futures=True)


def _ray_task(spec: RunSpec, shared: str | None) -> RunResult:
    """A Ray task's body: the run, into the shared directory or a scratch one whose bundle is
    returned as bytes."""
    if shared is not None:
        return run_one(spec, shared)
    with tempfile.TemporaryDirectory(prefix="marathon-sweep-") as tmp:
        result = run_one(spec, tmp)
        if result.bundle is not None:
            result.data = Path(result.bundle).read_bytes()
        return result


def _run_ray(todo: Sequence[RunSpec], out: Path, cpus: int, concurrency: int, address: str | None,
             shared_dir: str | Path | None, results: dict[str, RunResult], progress: Progress) -> None:
    """One Ray task per run (module docstring); bundles land in ``out`` either way."""
    try:
        import ray
    except ImportError:
        raise SweepError("--backend ray needs Ray: pip install 'sre-marathon[ray]'") from None
    shared = str(Path(shared_dir).resolve()) if shared_dir is not None else None
    started_here = False
    if not ray.is_initialized():
        if address in (None, "", "local"):
            ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False,
                     object_store_memory=256 * 2**20)
        else:
            ray.init(address=address, log_to_driver=False)
        started_here = True
    try:
        cpu_task = ray.remote(_ray_task).options(num_cpus=1, memory=RUN_PEAK_BYTES, max_retries=0)
        model_task = ray.remote(_ray_task).options(num_cpus=0, max_retries=0)
        pending: dict[Any, RunSpec] = {cpu_task.remote(s, shared): s for s in spread(todo) if not s.model_bound}
        model = [s for s in spread(todo) if s.model_bound]
        in_flight_model = 0
        while pending or model:
            while model and in_flight_model < concurrency:
                s = model.pop(0)
                pending[model_task.remote(s, shared)] = s
                in_flight_model += 1
            [ref], _ = ray.wait(list(pending), num_returns=1)
            spec = pending.pop(ref)
            if spec.model_bound:
                in_flight_model -= 1
            try:
                result: RunResult = ray.get(ref)
            except Exception as exc:  # the task's worker died, or Ray could not run it
                result = RunResult(spec.name, "failed", error=f"{type(exc).__name__}: {exc}".splitlines()[0])
            try:
                result = _land(result, out)
            except OSError as exc:
                result = RunResult(spec.name, "failed", error=f"the run sealed {result.bundle} but its bundle could "
                                   f"not be put into {out} on the driver ({exc}); mount --shared-dir here too",
                                   wall_s=result.wall_s)
            results[spec.name] = result
            progress.run_done(result)
    finally:
        if started_here:
            ray.shutdown()


def _land(result: RunResult, out: Path) -> RunResult:
    """Put a Ray task's bundle into ``out`` (atomically): its bytes, or its file on the shared path."""
    if result.status != "ok":
        return result
    final = bundle_path(out, result.name)
    tmp = final.with_name(final.name + ".tmp")
    if result.data is not None:
        tmp.write_bytes(result.data)
        os.replace(tmp, final)
        result.data = None
    elif result.bundle is not None and Path(result.bundle).resolve() != final.resolve():
        shutil.copyfile(result.bundle, tmp)
        os.replace(tmp, final)
    result.bundle = str(final)
    return result


def _score_all(results: Sequence[RunResult], out: Path, slots: ProcessSlots, formula: str, per_app: bool,
               progress: Progress) -> tuple[list[Scored], str, Path]:
    """Score every bundle in the pool and write the leaderboard (module docstring)."""
    from scoring.cli import INCOMPLETE
    from scoring.leaderboard import format_table, leaderboard, to_json

    have = [r for r in results if r.status in ("ok", "skipped") and r.bundle]
    progress.phase(f"scoring {len(have)} bundles")
    scored: dict[str, Scored] = {}

    def done(key: Any, res: tuple[str, Any]) -> None:
        scored[key] = res[1] if res[0] == "ok" else Scored(key, error=res[1])

    slots.run([(r.name, score_one, (r.name, str(bundle_path(out, r.name)), formula)) for r in have], done)
    in_order = [scored[r.name] for r in have]
    # As cmd_score (scoring/cli.py): a run given twice counts once; incomplete and diverged runs
    # are listed but not ranked.
    seen: set[tuple[str, int]] = set()
    scores = []
    for s in in_order:
        if s.score is None or s.identity is None or s.identity in seen:
            continue
        seen.add(s.identity)
        scores.append(s.score)
    ranked = [s for s in scores if not s.integrity.startswith(INCOMPLETE) and s.replayed != "diverged"]
    rows = leaderboard(ranked, per_app=per_app, formula=formula)
    doc = json.loads(to_json(scores, rows, formula))
    failed = [{"run": r.name, "error": r.error} for r in results if r.status == "failed"]
    failed += [{"run": s.name, "error": f"scoring failed: {s.error}"} for s in in_order if s.error]
    doc["sweep"] = {"runs": [r.name for r in results], "failed": failed}
    path = out / LEADERBOARD_FILE
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    table = format_table(rows, per_app=per_app) if rows else "(no complete runs to rank)"
    oracle = [s for s in scores if s.oracle]
    if oracle:
        table += "\n\n" + "\n".join(f"-- {s.run_id}: the oracle (validation only, never ranked): {formula} "
                                    f"{s.score:.1f}" for s in oracle)
    if failed:
        table += "\n\nFAILED:\n" + "\n".join(f"  {f['run']}: {f['error']}" for f in failed)
    return in_order, table, path


# ----------------------------------------------------------------------------- the command


def _csv(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def add_sweep_arguments(p: argparse.ArgumentParser, *,
                        progress: Callable[[], Progress] | None = None) -> None:
    """Declare ``marathon sweep``'s arguments on ``p`` and set ``func``.

    Args:
        p: the ``sweep`` sub-parser.
        progress: makes the progress display for a terminal (``marathon`` passes the rich bar of
            ``tui/sweepbar.py``); None or off a terminal: plain lines on stderr.
    """
    from engine.cliargs import add_rules_argument
    from engine.operate.llm.config import add_llm_arguments
    from scoring.score import FORMULA_VERSION, FORMULAS

    p.add_argument("--grid", metavar="FILE", help="a YAML grid file: apps, seeds, regimes, agents, llm, rules, "
                                                  "alerts (flags given override its fields)")
    p.add_argument("--apps", type=_csv, metavar="A,B", help="apps (shipped names or app files)")
    p.add_argument("--seeds", metavar="SPEC", help="seeds, e.g. 1-5 or 1,3,7 (default 1)")
    p.add_argument("--regimes", type=_csv, metavar="R,S", help="run regimes (default short-5)")
    p.add_argument("--agents", "--operators", dest="agents", type=_csv, metavar="X,Y",
                   help="operators: noop, runbook, oracle, adversaries, LLM agents (react, rag, orbit)")
    p.add_argument("-o", "--out", default="sweep", metavar="DIR",
                   help="output directory: <run name>.marathon per run and leaderboard.json (default ./sweep); "
                        "running again resumes")
    p.add_argument("--backend", choices=BACKENDS, default="local",
                   help="local: a process pool plus threads for LLM runs (default); ray: one Ray task per run")
    p.add_argument("--workers", type=int, metavar="N",
                   help="worker processes (local) or CPUs of a local Ray (default: min(cores, available memory / "
                        f"{RUN_PEAK_BYTES // 2**20} MiB))")
    p.add_argument("--concurrency", type=int, default=DEFAULT_CONCURRENCY, metavar="N",
                   help=f"LLM runs in flight at once (default {DEFAULT_CONCURRENCY})")
    p.add_argument("--address", metavar="ADDR",
                   help="--backend ray: the cluster (auto, ray://HOST:10001, HOST:6379); default a local Ray")
    p.add_argument("--shared-dir", metavar="DIR",
                   help="--backend ray: tasks write bundles here (mounted on every node) instead of returning them")
    p.add_argument("--alerts", choices=("embedded", "none"), default=None, help="alert source (default embedded)")
    p.add_argument("--formula", default=None, choices=FORMULAS,
                   help="the Marathon-Score formula ranking the leaderboard (as marathon score; default "
                        f"{FORMULA_VERSION})")
    p.add_argument("--per-app", action="store_true", help="one leaderboard row per operator and app")
    p.add_argument("--no-score", action="store_true", help="run only; no leaderboard")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    add_rules_argument(p)
    p.set_defaults(rules=None)
    add_llm_arguments(p)
    p.set_defaults(func=cmd_sweep, sweep_progress=progress)


def grid_from_args(args: argparse.Namespace) -> SweepGrid:
    """The grid of ``--grid`` with the flags given laid over it.

    Raises:
        SweepError: see :func:`load_grid`; no apps or agents anywhere.
    """
    base: dict[str, Any] = {}
    if args.grid:
        base = load_grid(args.grid).model_dump()  # llm entries keep their extra keys
    flags = {"apps": args.apps, "seeds": args.seeds, "regimes": args.regimes, "agents": args.agents,
             "rules": args.rules, "alerts": args.alerts}
    for key, value in flags.items():
        if value is not None:
            base[key] = value
    missing = [k for k in ("apps", "agents") if not base.get(k)]
    if missing:
        raise SweepError(f"a sweep needs {' and '.join(missing)}: give --{' and --'.join(missing)}, or a --grid "
                         "file that lists them")
    return _validated(base, "flags" if not args.grid else f"{args.grid} with flags")


def cmd_sweep(args: argparse.Namespace) -> int:
    """``marathon sweep`` (module docstring): 0 when every run sealed, 1 when any failed, 2 for a bad grid."""
    from engine.operate.llm.config import config_from_args

    try:
        grid = grid_from_args(args)
        specs = expand(grid, llm_default=lambda: config_from_args(args))
    except SweepError as exc:
        print(f"marathon: {exc}", file=sys.stderr)
        return 2
    progress: Progress
    if args.quiet:
        progress = _Quiet()
    elif args.sweep_progress is not None and sys.stderr.isatty():
        progress = args.sweep_progress()
    else:
        progress = LineProgress()
    try:
        result = sweep(specs, args.out, backend=args.backend, workers=args.workers, concurrency=args.concurrency,
                       address=args.address, shared_dir=args.shared_dir, formula=args.formula,
                       per_app=args.per_app, score=not args.no_score, progress=progress)
    except SweepError as exc:
        print(f"marathon: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"\nmarathon: sweep interrupted; run the same command again to resume (sealed bundles in {args.out} "
              "are kept)", file=sys.stderr)
        return 130
    done = sum(r.status == "ok" for r in result.results)
    skipped = sum(r.status == "skipped" for r in result.results)
    if result.table:
        print(result.table)
    print(f"\n{len(result.results)} runs: {done} ran, {skipped} skipped (already sealed), {len(result.failed)} "
          f"failed; {result.wall_s:.1f} s wall" + (f"; leaderboard: {result.leaderboard}" if result.leaderboard
                                                   else ""))
    return 1 if result.failed else 0
