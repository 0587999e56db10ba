"""The orchestrator run loop: one schedule, one app, one operator, one event stream.

:class:`Orchestrator` hosts the simulated cluster in-process and walks the schedule on
the virtual clock (as fast as possible) or a wall clock (1x, or faster for practice):

* at each scheduled time it injects a fault (:meth:`engine.substrate.Substrate.apply_fault`), reverts one at
  the end of its lifetime, ships a benign change or starts/ends a load burst;
* every evaluation interval (15 s of run time, Prometheus' default) it records the
  changes the pipeline deployed, evaluates the alert rules (when an alert source is
  attached), samples every active fault's symptom probe and the health of every service
  and route;
* every operator cadence (60 s by default) it invokes the operator;
* everything goes out as typed events (:mod:`engine.bundle.events`) to subscribers and, with a
  run directory, to disk.

The loop can be driven in slices (:meth:`Orchestrator.advance_to`) so a terminal app
can step it between frames.
"""

from __future__ import annotations

import contextlib
import copy
import math
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from alerts.evaluator import AlertEvaluator, AlertTransition
from alerts.health import RuleHealthSource, health_report
from alerts.history import AlertHistory
from alerts.promql.storage import Storage
from alerts.rules import DEFAULT_PACK, load_pack, pack_files, pack_identity
from alerts.series import SeriesStore
from engine.apps.model import Probe, Resources
from engine.bundle.events import Event, EventStream
from engine.bundle.layout import APP_FILE, RULES_DIR, RUN_FILE, SCHEDULE_FILE, SOURCE_DIR, schedule_digest
from engine.operate.invocation import Invocation, NoopOperator, Operator, OperatorChannel, RunState, run_invocation
from engine.operate.tools import ToolBox, ToolResult
from engine.operate.workspace import Workspace
from engine.run.clock import Pace, drive
from engine.run.health import HealthSampler
from engine.run.identity import engine_identity
from engine.run.recorder import HiddenRecorder, RunRecorder
from engine.run.substrates import open_substrate
from engine.sim.remedy import fault_node
from engine.substrate import FaultInstance, FaultSkipped, Substrate, SubstrateError
from faults.schedule import TEMPLATE_KINDS, BenignChange, LoadBurst, Schedule, ScheduledFault, dump_schedule
from faults.spec import NODE_MECHANISMS, FaultSpec, app_catalog
from scoring.gates import RESTART_READY_TIMEOUT_S, RESTART_SETTLE_S, soak_complete_at

EVAL_INTERVAL_S = 15.0
"""Alert evaluation, probe and health sampling interval: Prometheus' default evaluation
interval."""
CADENCE_S = 60.0
"""Operator invocation cadence (DESIGN section 7)."""
FLUSH_EVERY_S = 1.0
"""While the loop waits for the wall clock, the recorder is flushed at most this often (wall seconds)."""
TAIL_S = 60.0
"""Run time after the schedule's end, so the last reverts show up in alerts and probes."""


class AlertSource(Protocol):
    """What the run loop needs from an alert evaluator (the embedded one, or a Prometheus)."""

    @property
    def history(self) -> AlertHistory | None:
        """The cumulative alert history the source keeps."""
        ...

    def step(self, store: SeriesStore | None, until: float) -> list[AlertTransition]:
        """Evaluate at every interval boundary up to ``until``; the transitions, in order."""
        ...


@dataclass
class FaultRecord:
    """Ground truth of one scheduled fault during a run, with its probe samples."""

    scheduled: ScheduledFault
    spec: FaultSpec
    instance: FaultInstance | None = None
    error: str | None = None
    skipped: bool = False
    """The substrate cannot inject this fault (:class:`engine.substrate.FaultSkipped`): not scored."""
    probes: list[tuple[float, bool]] = field(default_factory=list)
    streak_start: float | None = None
    """Run time of the first passing sample of the current passing streak that follows a failure."""
    checked: set[float] = field(default_factory=set)
    """Streak starts whose repair was checked against a restart of the target (``repair.check``)."""
    services: list[str] = field(default_factory=list)
    """The services an act must target to work on this fault (:func:`fault_services`)."""

    @property
    def failing_share(self) -> float:
        return sum(1 for _, ok in self.probes if not ok) / len(self.probes) if self.probes else 0.0


@dataclass(frozen=True)
class GroundTruthHandle:
    """:class:`engine.operate.invocation.GroundTruth` for a run: its fault records and its cluster."""

    faults: dict[str, FaultRecord]
    cluster: Substrate


@dataclass(frozen=True)
class _OperatorAnswers:
    """The run's side of an operator's requests (:class:`engine.operate.invocation.RunSide`),
    each answered holding the run lock (released while the operator thinks: :meth:`Orchestrator._invoke`)."""

    run: Orchestrator

    def call_tool(self, tool: str, args: Any, tokens: Any) -> ToolResult:
        with self.run.lock:
            return self.run.tools.call(tool, args, tokens=tokens)

    def record(self, kind: str, payload: dict[str, Any]) -> None:
        with self.run.lock:
            self.run.emit(kind, payload)

    def state(self) -> RunState:
        with self.run.lock:
            return RunState(self.run.now, self.run.over, self.run.next_invocation_t)

    def incidents(self) -> dict[str, dict[str, object]]:
        with self.run.lock:
            return copy.deepcopy(self.run.tools.incidents.incidents)


@contextlib.contextmanager
def _released(lock: threading.RLock) -> Iterator[None]:
    """Release ``lock`` for the block if this thread holds it (at any depth, as
    :meth:`threading.Condition.wait` does), and hold it again as before afterwards."""
    rlock: Any = lock  # the C RLock's Condition protocol: _is_owned, _release_save, _acquire_restore
    if not rlock._is_owned():
        yield
        return
    state = rlock._release_save()
    try:
        yield
    finally:
        rlock._acquire_restore(state)


def run_name(schedule: Schedule, seed: int, operator: str) -> str:
    """``<app>-<regime>-seed<seed>-<operator>``: a run's id and default directory name (``<app>``:
    the app model's name, so an app file's path never becomes part of a directory name)."""
    from engine.apps.model import load_app

    return f"{load_app(schedule.app).name}-{schedule.regime}-seed{seed}-{operator}"


def fault_services(sim: Substrate, spec: FaultSpec) -> list[str]:
    """The services an act must target to work on a fault (its ``artifact_services``): the
    target, where the responsible artifact lives (the flag's service, the remedy's service),
    and for a zone outage every service with a pod on the lost zone's nodes at injection (each
    is stranded by the same fault)."""
    out = {spec.target}
    if spec.config is not None and spec.config.flag is not None:
        out.add(spec.config.flag.service)
    if spec.remedy.service:
        out.add(spec.remedy.service)
    if spec.mechanism == "zone-outage" and spec.runtime is not None and spec.runtime.zone is not None:
        nodes = set(sim.zone_nodes(spec.runtime.zone))
        out.update(p.service for p in sim.pods() if p.node in nodes and not p.terminating)
    if spec.mechanism in NODE_MECHANISMS:
        node = fault_node(sim, spec)
        out.update(p.service for p in sim.pods() if node is not None and p.node == node and not p.terminating)
    workloads = set(sim.app.service_names())
    return sorted(s for s in out if s in workloads)


SIM_SCRAPE_RETENTION_S = 900.0
"""Scrapes the run's simulator keeps, seconds of run time (:class:`alerts.series.SeriesStore`): more
than the evaluation interval and ``service_health``'s minute; a gap longer than this between two
evaluations makes the evaluator fail loudly (:meth:`alerts.evaluator.AlertEvaluator.sync`)."""


class Orchestrator:
    """A run of one schedule (module docstring).

    Args:
        schedule: the schedule to replay.
        seed: the simulation seed (default: the schedule's).
        operator: the operator invoked every cadence (default: noop).
        run_dir: record the event stream here (None: in memory only).
        clock: ``virtual`` (as fast as possible) or ``wall``.
        speed: run-time seconds per wall second on the wall clock.
        alert_source: the alert evaluator: ``"embedded"`` (default: the rule pack on the
            embedded evaluator), ``"prometheus=URL"``, an :class:`AlertSource`, or None to run
            without alerts.
        rules: the rule pack the embedded evaluator loads and ``run.start`` records
            (:func:`alerts.rules.pack_identity`): ``paper`` (default, the frozen pack every
            leaderboard uses), ``extended``, or a rule file's path. For a Prometheus it names
            the pack you loaded into it (``marathon prometheus-config --rules``).
        cadence_s: operator invocation interval, run-time seconds.
        subscribers: called with every event, in emission order.
        hide_truth: record into the encrypted journal (:class:`engine.run.recorder.HiddenRecorder`),
            so the live run directory holds no readable ground truth (the default); False
            writes ``events.jsonl`` and ``schedule.yaml`` in the clear as the run goes (tests,
            debugging).
        substrate: the cluster to run on, at run time 0 (default: the schedule's app on the
            embedded simulator, from :func:`engine.run.substrates.open_substrate`; the run loop
            never constructs one itself).

    A recorded run also writes the inputs its score depends on, in the clear (they hold no
    ground truth): ``app.yaml`` (the app model file) and ``rules/`` (the rule pack's files).
    The seal adds the schedule, the catalog entries used and the no-op counterfactual
    (:func:`engine.bundle.format.seal`).
    """

    def __init__(
        self,
        schedule: Schedule,
        *,
        seed: int | None = None,
        operator: Operator | None = None,
        run_dir: str | Path | None = None,
        clock: str = "virtual",
        speed: float = 1.0,
        alert_source: AlertSource | str | None = "embedded",
        cadence_s: float = CADENCE_S,
        subscribers: tuple[Callable[[Event], None], ...] = (),
        rules: str = DEFAULT_PACK,
        hide_truth: bool = True,
        substrate: Substrate | None = None,
    ) -> None:
        if clock not in ("virtual", "wall"):
            raise ValueError(f"clock must be 'virtual' or 'wall', not {clock!r}")
        if speed <= 0:
            raise ValueError("speed must be > 0")
        self.schedule = schedule
        self.seed = schedule.seed if seed is None else seed
        self.operator: Operator = operator or NoopOperator()
        self.ground_truth = bool(getattr(self.operator, "ground_truth", False))
        """Whether the operator receives ground truth (:attr:`Invocation.truth`): read once, here,
        so the run that hands it out is the run ``run.start`` marks ``"oracle": true``."""
        self.clock = clock
        self.speed = speed
        self.lock = threading.RLock()
        """Held while the simulation advances (the live /metrics server reads under it)."""
        self.metrics_server: Any = None
        self.rule_pack = pack_identity(rules)
        source: AlertSource | None
        if alert_source == "embedded":
            source = AlertEvaluator(load_pack(rules), interval_s=EVAL_INTERVAL_S)
        elif isinstance(alert_source, str) and alert_source.startswith("prometheus="):
            if clock != "wall":
                raise ValueError("reading alerts from Prometheus needs the wall clock (--speed)")
            from alerts.live import PrometheusAlerts

            source = PrometheusAlerts(alert_source.split("=", 1)[1], clock=lambda: self.sim.now)
        elif isinstance(alert_source, str):
            raise ValueError(f"unknown alert source {alert_source!r}")
        else:
            source = alert_source
        self.alert_source: AlertSource | None = source
        self.alert_history: AlertHistory | None = source.history if source is not None else None
        self.cadence_s = cadence_s
        self.catalog = {f.id: f for f in app_catalog(schedule.app, schedule.catalog).faults}
        self._fault_images = {f.config.image for f in self.catalog.values() if f.config is not None and f.config.image}
        self._benign_done: dict[tuple[str, str, int], tuple[str, Any, Any]] = {}
        """Benign template changes applied: (service, kind, at) -> (field, value replaced, value set)."""
        # The simulator's own series store need only hold the scrapes the evaluator has not ingested
        # yet (it ingests every EVAL_INTERVAL_S) and the last minute (``service_health``): keeping
        # the whole run would grow memory with its length (issue 17).
        self.sim: Substrate = substrate if substrate is not None else open_substrate(
            schedule.app, seed=self.seed, retention_s=SIM_SCRAPE_RETENTION_S)
        if schedule.noise is not None:
            self.sim.set_background_noise(schedule.noise)  # the schedule's noise, as series
        self.stream = EventStream()
        for fn in subscribers:
            self.stream.subscribe(fn)
        self.recorder: RunRecorder | HiddenRecorder | None = None
        self.schedule_text = dump_schedule(schedule)
        if run_dir is not None:
            self.recorder = HiddenRecorder(run_dir) if hide_truth else RunRecorder(run_dir)
            self.recorder.write_file(SCHEDULE_FILE, self.schedule_text, secret=True)
            self.recorder.write_file(APP_FILE, _app_model_text(schedule.app))
            for rel, text in _app_source_files(schedule.app):
                self.recorder.write_file(f"{SOURCE_DIR}/{rel}", text)
            if alert_source is not None:
                for path in pack_files(rules):
                    self.recorder.write_file(f"{RULES_DIR}/{path.name}", path.read_text(encoding="utf-8"))
            self.stream.subscribe(self.recorder)
        self.run_id = run_name(schedule, self.seed, self.operator.name)
        self.end_t = float(schedule.duration_s) + TAIL_S
        self.faults: dict[str, FaultRecord] = {}
        self._actions = schedule.events()
        self._next_action = 0
        self._next_eval = EVAL_INTERVAL_S
        self._next_invoke = self.cadence_s
        self._invocations = 0
        self._deployed: set[str] = set()
        self._reverting: list[FaultInstance] = []
        self._burst_depth = 0
        self.health = HealthSampler(self.sim)
        self.workspace = Workspace(Path(run_dir) / "workspace" if run_dir is not None else None)
        self.tools = ToolBox(self, self.operator.name, self.workspace)
        self._in_invocation = False
        self.engine_info: dict[str, Any] = engine_identity()
        """What ``run.start`` records as ``engine`` (a replay sets the recorded one)."""
        self.replay_hook: Callable[[], None] | None = None
        """Called wherever a tool call from another thread could come in (between steps, and
        between a step and the invocation that follows it): :mod:`engine.run.replay` re-issues
        the calls a player made there."""
        self.replay_stop: Callable[[], float | None] | None = None
        """The run time of the next such call, so the loop stops there (replay only)."""
        self._last_invoke_t = 0.0
        self._last_flush = 0.0
        self.started = False
        self.finished = False

    # ----------------------------------------------------------------- events

    def emit(self, kind: str, payload: dict[str, Any]) -> Event:
        return self.stream.emit(self.sim.now, kind, payload)

    @property
    def now(self) -> float:
        return self.sim.now

    @property
    def metrics(self) -> Storage | None:
        """What ``query_metrics`` queries: the embedded evaluator's storage, which holds the
        scrapes and rule outputs up to the last evaluation at or before now (None with another
        alert source, or none)."""
        return self.alert_source.storage if isinstance(self.alert_source, AlertEvaluator) else None

    def start(self) -> None:
        """Emit ``run.start`` (idempotent)."""
        if self.started:
            return
        self.started = True
        meta = {
            "run_id": self.run_id,
            "app": self.schedule.app,
            "seed": self.seed,
            "regime": self.schedule.regime,
            "operator": self.operator.name,
            "substrate": self.sim.kind,
            "clock": self.clock,
            "speed": self.speed,
            "duration_s": self.end_t,
            "eval_interval_s": EVAL_INTERVAL_S,
            "cadence_s": self.cadence_s,
            "schedule_sha256": schedule_digest(self.schedule_text),
            "oracle": self.ground_truth,
            "rule_pack": self.rule_pack if self.alert_source is not None else None,
            "edges": [list(e) for e in self.sim.app.edges()],
            "engine": self.engine_info,
        }
        if self.recorder is not None:
            self.recorder.write_json(RUN_FILE, meta)
        self.emit("run.start", meta)
        self.health.sample()  # baseline for the first interval

    # ----------------------------------------------------------------- the loop

    def serve_metrics(self, port: int = 0, host: str = "127.0.0.1") -> int:
        """Serve the simulation's series at ``http://host:port/metrics`` for a real Prometheus; returns the port."""
        from alerts.live import MetricsServer

        self.metrics_server = MetricsServer(self.sim.exposition, self.lock, host=host, port=port)
        return int(self.metrics_server.start())

    def run(self) -> None:
        """Run the whole schedule to the end, on the virtual clock (as fast as possible) or
        paced against the wall clock (:func:`engine.run.clock.drive`), and close the recorder."""
        self.start()
        drive(self, Pace(self.speed if self.clock == "wall" else None), slice_s=EVAL_INTERVAL_S,
              idle=self.flush_recorder)
        self.close()

    def flush_recorder(self) -> None:
        """While the loop waits for the wall clock: flush the recorder (at most once every
        :data:`FLUSH_EVERY_S` wall seconds), so nothing recorded waits in a buffer while we
        sleep and a follower (``marathon watch --follow``) sees events promptly."""
        wall = time.monotonic()
        if self.recorder is not None and wall - self._last_flush >= FLUSH_EVERY_S:
            self._last_flush = wall
            self.recorder.flush()

    @property
    def dt(self) -> float:
        """The simulation tick, seconds (targets are rounded down to whole ticks)."""
        return float(self.sim.dt)

    def advance_to(self, target: float) -> None:
        """Run the loop until run time ``target`` (or the end of the run), in whole ticks:
        a target between two ticks stops at the earlier one."""
        self.start()
        dt = self.sim.dt
        target = min(math.floor(target / dt + 1e-9) * dt, self.end_t)
        while self.now < target - 1e-9 and not self.finished:
            if self.replay_hook is not None:
                self.replay_hook()
            nxt = min(self._next_eval, target if self._in_invocation else min(self._next_invoke, target))
            if self._next_action < len(self._actions):
                nxt = min(nxt, float(self._actions[self._next_action][0]))
            if self.replay_stop is not None:
                stop = self.replay_stop()
                if stop is not None and self.now + 1e-9 < stop < nxt:
                    nxt = stop
            # Tool calls from another thread (the terminal app, a tool server) take the same
            # lock, so they never see a half-applied step. The invocation itself runs outside
            # it: an operator served from another thread makes its tool calls meanwhile.
            with self.lock:
                if nxt > self.now:
                    self.sim.advance(nxt)
                self._due_actions()
                if self.now >= self._next_eval - 1e-9:
                    while self._next_eval <= self.now + 1e-9:  # a substrate that ran ahead: skip missed ones
                        self._next_eval += EVAL_INTERVAL_S
                    self._evaluate()
            if self.replay_hook is not None:
                self.replay_hook()
            if self.now >= self._next_invoke - 1e-9 and not self._in_invocation:
                self._next_invoke += self.cadence_s
                self._invoke()
                while self._next_invoke <= self.now + 1e-9:
                    self._next_invoke += self.cadence_s  # an invocation that overran skips cadences
            if self.now >= self.end_t - 1e-9 and not self._in_invocation:
                self._finish("schedule complete")

    def _due_actions(self) -> None:
        while self._next_action < len(self._actions) and self._actions[self._next_action][0] <= self.now + 1e-9:
            _, kind, item = self._actions[self._next_action]
            self._next_action += 1
            if kind == "inject":
                self._inject(item)
            elif kind == "revert":
                self._revert(item)
            elif kind == "change":
                self._benign(item)
            elif kind == "burst":
                self._burst(item, True)
            else:
                self._burst(item, False)

    def _inject(self, sf: ScheduledFault) -> None:
        spec = self.catalog[sf.fault]
        rec = FaultRecord(sf, spec, services=fault_services(self.sim, spec))
        self.faults[sf.fault] = rec
        payload: dict[str, Any] = {
            "fault": spec.id,
            "title": spec.title,
            "category": spec.category,
            "subtype": spec.subtype,
            "mechanism": spec.mechanism,
            "target": spec.target,
            "scope": list(spec.scope),
            "artifact": spec.artifact.model_dump(),
            "lifetime_s": sf.lifetime,
            "probe": spec.probe.model_dump(exclude_defaults=True),
            "remedy": spec.remedy.model_dump(exclude_none=True),
            "expected_alerts": list(spec.expected_alerts),
            "artifact_services": rec.services,
            "replicas_before": self.sim.workload(spec.target).replicas,
            "intermittent": spec.intermittent,
        }
        try:
            rec.instance = self.sim.apply_fault(spec)
        except FaultSkipped as exc:
            rec.error, rec.skipped = f"skipped: {exc}", True
            self.emit("fault.inject", {**payload, "changes": [], "error": rec.error, "skipped": True})
            return
        except (SubstrateError, KeyError, ValueError) as exc:
            rec.error = str(exc)
            self.emit("fault.inject", {**payload, "changes": [], "error": rec.error})
            return
        payload["changes"] = rec.instance.change_ids
        payload["revision_before"] = rec.instance.revision_before
        payload["artifact_refs"] = rec.instance.artifact_refs()
        self.emit("fault.inject", payload)

    def _revert(self, sf: ScheduledFault) -> None:
        rec = self.faults.get(sf.fault)
        if rec is None or rec.instance is None:
            return
        changes = self.sim.revert_fault(rec.instance)
        if rec.instance.effect_ids:
            self._reverting.append(rec.instance)
        self.emit("fault.revert", {"fault": sf.fault, "changes": [c.id for c in changes]})

    def _benign(self, ch: BenignChange) -> None:
        try:
            if ch.kind in TEMPLATE_KINDS:
                self._benign_template(ch)
            elif ch.kind == "code":
                assert ch.file is not None
                text = self.sim.head_files(ch.service).get(ch.file)  # a commit goes on the branch tip
                if text is None or (ch.find is not None and ch.find not in text):
                    return
                new = (text.replace(ch.find, ch.replace or "", 1) if ch.find is not None
                       else _add_comment(ch.file, text, ch.comment or ""))
                self.sim.deploy_change(ch.service, files={ch.file: new}, summary=ch.summary, author=ch.author)
            else:
                env: dict[str, str | None] = dict(ch.env or {})
                self.sim.deploy_change(ch.service, env=env, summary=ch.summary, author=ch.author)
        except SubstrateError:
            return  # the service is mid-change; a person would retry later

    def _benign_template(self, ch: BenignChange) -> None:
        """Apply a benign image, probe, resources or scale change, or revert one: a revert
        restores the value its change replaced, only while the change's value is still in place."""
        try:
            wl = self.sim.workload(ch.service)
        except SubstrateError:
            return
        attr = {"image": "image", "resources": "resources", "scale": "replicas"}.get(ch.kind) \
            or f"{ch.probe or 'readiness'}_probe"
        if ch.revert_of is not None:
            done = self._benign_done.pop((ch.service, ch.kind, ch.revert_of), None)
            if done is None:
                return
            attr, before, after = done
            now = getattr(wl, attr)
            if now != after:
                return  # changed since: the revert would undo someone else's change
            value = before
        else:
            before = getattr(wl, attr)
            value = self._benign_value(ch, before)
            if value is None:
                return
        if attr == "replicas":
            self.sim.scale(ch.service, int(value), summary=ch.summary, author=ch.author)
        elif attr == "image":
            self.sim.deploy_change(ch.service, image=value, summary=ch.summary, author=ch.author)
        elif attr == "resources":
            self.sim.deploy_change(ch.service, resources=value, summary=ch.summary, author=ch.author)
        else:
            self.sim.deploy_change(ch.service, summary=ch.summary, author=ch.author, **{attr: value})
        if ch.revert_of is None:
            self._benign_done[(ch.service, ch.kind, ch.at)] = (attr, before, value)

    def _benign_value(self, ch: BenignChange, before: Any) -> Any:
        """The value a benign template change sets in place of ``before``, or None when it
        has nothing to change (no such probe, resource or tag)."""
        if ch.kind == "scale":
            return int(before) + int(ch.replicas or 1)
        if ch.kind == "image":
            ref = f"{str(before).rpartition(':')[0]}:{ch.image_tag}"
            if ch.image_tag is None or ref in self._fault_images or ref == before:
                return None  # never make a fault's unknown image pullable
            return self.sim.tag_image(ch.service, ch.image_tag)
        if ch.kind == "probe":
            if not isinstance(before, Probe):
                return None
            if ch.period_s is not None:
                return before.model_copy(update={"period_s": before.period_s + ch.period_s})
            more = before.failure_threshold + (ch.failure_threshold or 1)
            return before.model_copy(update={"failure_threshold": more})
        assert isinstance(before, Resources) and ch.resource is not None and ch.factor is not None
        side = "limits" if getattr(before.limits, ch.resource) else "requests"
        current = getattr(before, side)
        amount = current.memory_bytes() if ch.resource == "memory" else current.cpu_cores()
        if amount is None:
            return None
        raised = (f"{math.ceil(amount * ch.factor / 2**20)}Mi" if ch.resource == "memory"
                  else f"{math.ceil(amount * ch.factor * 1000)}m")
        return before.model_copy(update={side: current.model_copy(update={ch.resource: raised})})

    def _burst(self, burst: LoadBurst, start: bool) -> None:
        self._burst_depth += 1 if start else -1
        factor = burst.factor if self._burst_depth > 0 else 1.0
        try:
            self.sim.set_load_factor(factor)
        except SubstrateError as exc:  # a real cluster's load is its own: the burst is skipped, visibly
            self.emit("load.change", {"factor": factor, "duration_s": burst.duration if start else 0,
                                      "skipped": str(exc)})
            return
        self.emit("load.change", {"factor": factor, "duration_s": burst.duration if start else 0})

    def _evaluate(self) -> None:
        for ch in self.sim.deploy_history():
            if ch.status == "deployed" and ch.id not in self._deployed:
                self._deployed.add(ch.id)
                self.emit("change.deploy", {"change": ch.id, "service": ch.service, "kind": ch.kind,
                                            "summary": ch.summary, "author": ch.author, "revision": ch.revision,
                                            "commit": ch.commit, "image": ch.image})
        self._reverting = [i for i in self._reverting if not self.sim.finish_revert(i)]
        if self.alert_source is not None:
            for tr in self.alert_source.step(self.sim.store, self.now):
                self._emit_alert(tr)
            if isinstance(self.alert_source, RuleHealthSource):  # a rule that breaks must not go silent
                for change in self.alert_source.take_rule_health_changes():
                    self.emit("rule.health", change.to_payload())
        for rec in self.faults.values():
            if rec.instance is None or not rec.instance.active:
                continue
            res = self.sim.probe(rec.spec.probe, rec.spec.probe_anchor)
            failed_before = bool(rec.probes) and not rec.probes[-1][1]
            rec.probes.append((self.now, res.ok))
            self.emit("probe.result", {"fault": rec.spec.id, "ok": res.ok, "success": round(res.success, 5),
                                       "p95_ms": round(res.p95_ms, 1), "detail": res.detail})
            if not res.ok:
                rec.streak_start = None
            elif failed_before:
                rec.streak_start = self.now
            self._maybe_check_repair(rec)
        self.emit("health.sample", self.health.sample())

    def _maybe_check_repair(self, rec: FaultRecord) -> None:
        """At the sample where a passing streak completes its soak, check that the recovery
        survives a restart of the target's pods (:mod:`scoring.gates`), if an operator could be
        credited with it: an act on the fault's services, and an RCA naming its target, came first."""
        t_pass = rec.streak_start
        if t_pass is None or t_pass in rec.checked or rec.instance is None:
            return
        if not soak_complete_at(self.now, t_pass, float(rec.scheduled.end), EVAL_INTERVAL_S):
            return
        services = set(rec.services)
        t0 = rec.instance.t_inject
        acted = named = False
        for ev in self.stream.events:
            if ev.t < t0:
                continue
            if ev.t >= t_pass:
                break
            if ev.kind == "report.rca" and ev.payload.get("service") == rec.spec.target:
                named = True
            elif ev.kind == "action.executed" and services & set(ev.payload.get("targets", [])):
                acted = True
        if not (acted and named):
            return
        rec.checked.add(t_pass)
        ok, detail = restart_survives(self.sim, rec.spec, rec.instance)
        self.emit("repair.check", {"fault": rec.spec.id, "recovered_at": t_pass, "ok": ok, "detail": detail})

    def _emit_alert(self, tr: AlertTransition) -> None:
        kind = {"pending": "alert.pending", "firing": "alert.firing"}.get(tr.to_state, "alert.resolved")
        inst = None
        if self.alert_history is not None:
            inst = next((i for i in reversed(self.alert_history.instances)
                         if i.fingerprint == tr.fingerprint and i.group == tr.group), None)
        self.emit(kind, {"alert": tr.rule, "labels": tr.labels, "fingerprint": tr.fingerprint,
                         "value": tr.value if tr.value == tr.value and abs(tr.value) != float("inf") else None,
                         "id": f"A-{inst.id}" if inst else None, "from_state": tr.from_state,
                         "state": tr.to_state, "active_at": tr.active_at,
                         "summary": tr.annotations.get("summary", "")})

    def _invoke(self) -> None:
        """Invoke the operator with its view of the run (:mod:`engine.operate.invocation`): on its
        own thread, answering its requests here; ground truth only to an operator declaring it."""
        self._invocations += 1
        history = self.alert_history
        alerts = list(history.instances) if history is not None else []
        since = self._last_invoke_t
        new = [i for i in alerts if any(since < t <= self.now for t, _ in i.transitions)]
        self._last_invoke_t = self.now
        self.emit("agent.invoke", {"invocation": self._invocations, "operator": self.operator.name,
                                   "alerts": len(alerts), "new_alerts": len(new)})
        self.tools.invocation = self._invocations
        self.tools.policy.new_invocation()
        truth = GroundTruthHandle(self.faults, self.sim) if self.ground_truth else None
        run_dir = self.recorder.dir if self.recorder is not None else None
        inv = Invocation(self._invocations, self.now, alerts, new, self.workspace, self.sim.app, self.cadence_s,
                         run_dir, self.operator.name, OperatorChannel(self._invocations), truth)
        self._in_invocation = True
        try:
            # The operator thinks without the run lock, so another thread's reads and tool calls
            # (the terminal app, the Kubernetes API of --kube-api) are served meanwhile; every
            # request of the operator's is answered under it (_OperatorAnswers). The flag is
            # cleared holding the lock again, so a thread holding the lock sees it stable. An
            # operator with ground truth reads the cluster directly, so it keeps the lock.
            with contextlib.nullcontext() if self.ground_truth else _released(self.lock):
                run_invocation(self.operator, inv, _OperatorAnswers(self))
        finally:
            self._in_invocation = False

    @property
    def in_invocation(self) -> bool:
        """True while the operator's invocation runs (its tool calls are marked so)."""
        return self._in_invocation

    def spend(self, seconds: float) -> None:
        """Let ``seconds`` of run time pass during an invocation (a tool call's modeled cost).

        Run time never passes the end of the run: an operator still working then is cut
        off (its further tool calls are refused) and the run ends when it returns.
        """
        if seconds <= 0 or self.finished:
            return
        self.advance_to(self.now + seconds)

    @property
    def next_invocation_t(self) -> float:
        """Run time of the next operator invocation, seconds (during one: the one after it,
        counting the cadences an overrunning invocation skips)."""
        nxt = self._next_invoke
        while nxt <= self.now + 1e-9:
            nxt += self.cadence_s
        return nxt

    @property
    def over(self) -> bool:
        """True once run time has reached the end (the operator's calls are refused from then on)."""
        return self.finished or self.now >= self.end_t - 1e-9

    def _finish(self, reason: str) -> None:
        if self.finished:
            return
        self.finished = True
        injected = [r for r in self.faults.values() if r.instance is not None]
        self.emit("run.end", {"reason": reason, "faults_injected": len(injected),
                              "faults_failed_to_inject": sum(1 for r in self.faults.values()
                                                             if r.error and not r.skipped),
                              "faults_skipped": sum(1 for r in self.faults.values() if r.skipped),
                              "events": len(self.stream.events) + 1})

    def close(self) -> None:
        """Flush and close the recorder (the run may continue in memory); stop serving metrics;
        let the substrate release its connections (:meth:`Substrate.close`)."""
        self.sim.close()
        if self.recorder is not None:
            self.recorder.close()
        if self.metrics_server is not None:
            self.metrics_server.stop()
            self.metrics_server = None

    # ----------------------------------------------------------------- summary

    def summary(self) -> str:
        """What was injected and what the probes saw, as a plain-text table; then the rules whose
        evaluation failed during the run, if any (:func:`alerts.health.health_report`)."""
        lines = [f"run {self.run_id}: {self.now / 60:.1f} min of run time, {len(self.stream.events)} events", "",
                 f"{'AT':>6} {'FAULT':44} {'TARGET':28} {'PROBE FAILING':>13}  NOTE"]
        for rec in sorted(self.faults.values(), key=lambda r: r.scheduled.at):
            at = f"{rec.scheduled.at // 60}:{rec.scheduled.at % 60:02d}"
            share = f"{100 * rec.failing_share:5.0f}% of {len(rec.probes):3d}" if rec.probes else "-"
            note = rec.error if rec.skipped else f"not injected: {rec.error}" if rec.error else ""
            lines.append(f"{at:>6} {rec.spec.id[:44]:44} {rec.spec.target[:28]:28} {share:>13}  {note}")

        skipped = sum(1 for r in self.faults.values() if r.skipped)
        if skipped:
            lines += ["", f"{skipped} fault(s) skipped: the {self.sim.kind} substrate cannot inject them "
                          "(not scored as missed)"]
        health = health_report(e.payload for e in self.stream.events if e.kind == "rule.health")
        if health:
            lines += ["", *health]
        return "\n".join(lines)


def _app_source_files(app: str) -> list[tuple[str, str]]:
    """``(<service>/<path>, text)`` of every UTF-8 file of a user's app source tree (``src/``
    beside its ``app.yaml``), so the bundle carries what its code changes apply to; none for a
    shipped app (its tree is in the package) or an app without source."""
    from engine.apps.model import app_source_root

    root = app_source_root(app)
    out: list[tuple[str, str]] = []
    if root is None:
        return out
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            try:
                out.append((path.relative_to(root).as_posix(), path.read_text(encoding="utf-8")))
            except UnicodeDecodeError:
                continue  # binary assets: the simulated repositories skip them too
    return out


def _app_model_text(app: str) -> str:
    """The text of the app model file a run loads (a shipped app by name, an app file or an app directory)."""
    from engine.apps.model import app_model_path

    return app_model_path(app).read_text(encoding="utf-8")


def _add_comment(path: str, text: str, note: str) -> str:
    """Insert a one-line comment at the top of a source file (after a shebang or ``<?php``)."""
    prefix = "#" if path.endswith((".py", ".rb")) else "//"
    comment = f"{prefix} {note}\n"
    first, sep, rest = text.partition("\n")
    if first.startswith(("#!", "<?php")) or (path.endswith(".py") and "coding" in first):
        return first + sep + comment + rest
    return comment + text


def restart_survives(sim: Substrate, spec: FaultSpec, instance: FaultInstance | None = None) -> tuple[bool, str]:
    """Whether the fault's repair survives a restart of every pod of its target.

    On a substrate that cannot fork (a real cluster: :meth:`Substrate.fork` raises), the
    repair is judged by the template instead (:meth:`Substrate.fault_in_template` of
    ``instance``): it survives when nothing of the fault's change is left in the target's
    template and the probe passes now -- deleting the pods of a live cluster to find out would
    change the run being scored.

    Forks the simulation (the run itself is untouched), at most twice. In one fork every pod of the
    target is deleted; both forks advance until the replacements are all ready (at most
    :data:`scoring.gates.RESTART_READY_TIMEOUT_S`) and :data:`scoring.gates.RESTART_SETTLE_S`
    more, and the probe is judged in both. The repair survives when the probe passes after the
    restart, or fails in the fork without the restart as well (something else -- another
    fault, a zone coming back -- broke it at that moment, not the restart). Builds still in the
    pipeline are dropped in both forks, so only the restart differs. The fork without the
    restart is only made when the probe fails after it: ``sim`` does not move while the other
    fork runs, so forking it then gives the same copy as forking it first.

    Returns:
        (ok, a short explanation).
    """
    try:
        restarted = sim.fork(drop_pending_builds=True)
    except SubstrateError as exc:
        if instance is None:
            return False, f"cannot judge a restart: {exc}"
        left = sim.fault_in_template(instance)
        now = sim.probe(spec.probe, spec.probe_anchor)
        head = f"{exc}: judged by the template instead of a restart; "
        if left:
            return False, head + f"the template of {spec.target} still has the fault's {', '.join(left)}"
        return now.ok, head + f"nothing of the fault is left in it; probe now: {now.detail}"
    target = spec.target
    pods = sorted(p.name for p in restarted.pods(target) if not p.terminating)
    for name in pods:
        restarted.restart_pod(name)
    deadline = restarted.now + RESTART_READY_TIMEOUT_S
    ready_at = None
    while restarted.now < deadline - 1e-9:
        restarted.advance(restarted.now + EVAL_INTERVAL_S)
        live = [p for p in restarted.pods(target) if not p.terminating]
        if live and all(p.ready for p in live) and not any(p.name in pods for p in live) \
                and len(live) >= restarted.workload(target).replicas:
            ready_at = restarted.now
            break
    if ready_at is None:
        return False, f"after deleting {len(pods)} pods of {target}, the replacements were not all ready within " \
                      f"{RESTART_READY_TIMEOUT_S:.0f} s"
    judge_at = ready_at + RESTART_SETTLE_S
    restarted.advance(judge_at)
    after = restarted.probe(spec.probe, spec.probe_anchor)
    head = f"restarted {len(pods)} pods of {target}; ready after {ready_at - sim.now:.0f} s; "
    if after.ok:
        return True, head + f"probe passes {RESTART_SETTLE_S:.0f} s later: {after.detail}"
    untouched = sim.fork(drop_pending_builds=True)
    untouched.advance(judge_at)
    without = untouched.probe(spec.probe, spec.probe_anchor)
    if not without.ok:
        return True, head + f"probe fails {RESTART_SETTLE_S:.0f} s later, but fails without the restart too: " \
                            f"{without.detail}"
    return False, head + f"probe fails {RESTART_SETTLE_S:.0f} s later: {after.detail} (without the restart: " \
                         f"{without.detail})"
