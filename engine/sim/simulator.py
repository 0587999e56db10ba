"""The embedded cluster: :class:`Simulator`, the default :class:`~engine.substrate.Substrate`.

A simulation is deterministic for (app, seed, and the sequence of mutations at given run
times): randomness comes from one ``numpy`` seed sequence split into independent streams
for traffic, cluster names and jitter, and logs, so adding a log line never changes
traffic.

Time: run time ``t`` is in seconds and advances in ticks of ``dt`` (1 s). Before run time
0 the app is brought up and warmed: the workloads are created at ``-warmup_s`` and the
load generator starts :data:`WARM_TRAFFIC_S` seconds before 0, so at ``t = 0`` every pod
is ready and every rate window already holds data, as in a cluster that was deployed
earlier. Prometheus scrapes every ``scrape_interval_s`` (15 s, its default).

The build pipeline (:meth:`Simulator.deploy_change`): each service's source is a
:class:`~engine.sim.source.SourceRepo`; a commit is based on the repository head, builds of
one service run one at a time in commit order (modeled build times in
:mod:`engine.sim.source`), and a landing build moves only the commit and image of the pod
template current when it lands, so changes made while it built are kept.
"""

from __future__ import annotations

import json
import math
import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from alerts.promql.functions import bucket_quantiles
from alerts.series import SeriesRegistry, SeriesStore, exposition
from engine.apps.builds import CONFIG_SUFFIXES, build_seconds
from engine.apps.model import AppModel, ConfigRef, Probe, Resources, Service, load_app, source_root
from engine.kubectl.quantity import parse_quantity
from engine.sim.calltree import compile_forest, pod_cpu_cores
from engine.sim.cluster import Cluster, Workset
from engine.sim.effects import EdgeEffect, Effect, EnvEquals, FlagEquals, SourceContains
from engine.sim.exporters import ExporterSeries
from engine.sim.health import SeriesClasses
from engine.sim.health import health_window as _health_window
from engine.sim.k8s import EPOCH, Pod, PodTemplate, endpoint_slice_k8s, endpoints_k8s, timestamp
from engine.sim.logs import (
    LOG_FILE_LINES,
    RETENTION_S,
    WINDOW_S,
    ContainerLog,
    LogFormatter,
    TrafficWindow,
    WindowLayout,
    expand,
    grpc_code,
    traffic_lines,
)
from engine.sim.noise import NoiseSeries
from engine.sim.source import SourceRepo
from engine.sim.traffic import (
    BUCKETS,
    IntArray,
    PodTable,
    ProbeOutcome,
    RequestClass,
    TrafficModel,
    cancel_code,
    histogram_top_s,
    queue_limit,
    route_quantile,
)
from engine.substrate import (
    OBJECT_KINDS,
    ChangeRecord,
    EdgeStats,
    FaultInstance,
    HealthWindow,
    PodView,
    ProbeResult,
    RouteHealth,
    Sample,
    ServiceHealth,
    Substrate,
    SubstrateError,
    WorkloadView,
)
from faults.noise import BackgroundNoise

if TYPE_CHECKING:
    from faults.spec import FaultSpec, ProbeSpec

WARM_TRAFFIC_S = 360.0
"""Seconds of traffic before run time 0, so 5-minute rate windows are full at t = 0."""


def _address(value: str, env: dict[str, str], var: str) -> tuple[str, int | None]:
    """Host and port named by an address-like env value.

    Understands ``host:port``, ``http://host:port/path``, FQDNs
    (``host.ns.svc.cluster.local``), connection strings (``Host=postgresql;...``) and
    ``*_HOST`` vars with a sibling ``*_PORT``.
    """
    text = value.strip()
    m = re.search(r"(?i)\bhost=([^;]+)", text)
    if m:
        host, port = m.group(1), None
        pm = re.search(r"(?i)\bport=(\d+)", text)
        return host.split(".")[0], int(pm.group(1)) if pm else None
    text = re.sub(r"^[a-z]+://", "", text).split("/")[0]
    host, _, port_s = text.partition(":")
    port = int(port_s) if port_s.isdigit() else None
    if port is None and var.endswith("_HOST"):
        sibling = env.get(var[: -len("_HOST")] + "_PORT")
        port = int(sibling) if sibling and sibling.isdigit() else None
    return host.split(".")[0], port



@dataclass
class _OpBlock:
    """One pod's rows of the per-(pod, operation) table, cached while its inputs hold."""

    key: tuple[Any, ...]
    op: IntArray
    err: npt.NDArray[np.float64]
    latfac: npt.NDArray[np.float64]
    latadd: npt.NDArray[np.float64]
    matched: list[list[Effect]]
    base: npt.NDArray[np.float64]
    sid: IntArray
    http: npt.NDArray[np.bool_]


def _cat(parts: list[Any], dtype: Any) -> Any:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)


@dataclass(frozen=True)
class _PodEffects:
    """What the effects active on one pod add up to, cached per pod while ``sig`` holds.

    Attributes:
        sig: (effects version, template hash, container start, node) it was computed for.
        slot_rows: per operation, :meth:`Simulator._slot_effects`'s row.
        hung: some effect fails the liveness probe (the process hangs).
        cpu_extra: extra CPU demand, cores.
        mem_extra: extra memory, bytes.
        leak_bps: memory leak, bytes per second.
    """

    sig: tuple[Any, ...]
    slot_rows: list[tuple[float, float, float, list[Effect], tuple[float, float, float]]]
    hung: bool
    cpu_extra: float
    mem_extra: float
    leak_bps: float


_POD_COLUMNS = ("names", "slot", "svc", "weight", "serving_since", "up", "hung", "running", "cpu_cap", "cpu_extra",
                "mem_limit", "mem_idle", "mem_extra", "leak_bps", "started", "http", "hist", "sum", "count", "cpu",
                "mem", "has_limit", "queue_max", "cfs")
"""The pod-level columns of a :class:`PodTable`, in the order of a row of :meth:`Simulator._pod_row`."""


def _assemble_pod_table(rows: list[tuple[Any, ...]], slots: dict[str, Any]) -> PodTable:
    """The :class:`PodTable` of the pod rows (:data:`_POD_COLUMNS` order) and the slot-level
    arrays (:meth:`Simulator._slot_arrays`), with no request classes yet."""
    i64, f64 = np.int64, np.float64
    cols = dict(zip(_POD_COLUMNS, zip(*rows, strict=True), strict=True)) if rows else {k: () for k in _POD_COLUMNS}
    n = len(rows)
    return PodTable(
        names=list(cols["names"]),
        slot=np.asarray(cols["slot"], dtype=i64),
        svc=np.asarray(cols["svc"], dtype=i64),
        weight=np.asarray(cols["weight"], dtype=f64),
        serving_since=np.asarray(cols["serving_since"], dtype=f64),
        up=np.asarray(cols["up"], dtype=bool),
        hung=np.asarray(cols["hung"], dtype=bool),
        running=np.asarray(cols["running"], dtype=bool),
        cpu_cap=np.asarray(cols["cpu_cap"], dtype=f64),
        cpu_extra=np.asarray(cols["cpu_extra"], dtype=f64),
        mem_limit=np.asarray(cols["mem_limit"], dtype=f64),
        mem_idle=np.asarray(cols["mem_idle"], dtype=f64),
        mem_extra=np.asarray(cols["mem_extra"], dtype=f64),
        leak_bps=np.asarray(cols["leak_bps"], dtype=f64),
        started=np.asarray(cols["started"], dtype=f64),
        http=np.asarray(cols["http"], dtype=bool),
        hist_sids=np.asarray(cols["hist"], dtype=i64).reshape(n, len(BUCKETS) + 1),
        sum_sid=np.asarray(cols["sum"], dtype=i64),
        count_sid=np.asarray(cols["count"], dtype=i64),
        cpu_sid=np.asarray(cols["cpu"], dtype=i64),
        mem_sid=np.asarray(cols["mem"], dtype=i64),
        has_limit=np.asarray(cols["has_limit"], dtype=bool),
        queue_max=np.asarray(cols["queue_max"], dtype=f64),
        cfs_sid=np.asarray(cols["cfs"], dtype=i64).reshape(n, 2),
        **slots,
        classes=[],
    )


@dataclass(eq=False)
class _Build:
    """One commit in a service's build pipeline queue.

    Attributes:
        rec: its change record.
        commit: the commit id it rolls out.
        image: the image it builds, or None for a commit rolled out without a build.
        seconds: modeled build time, seconds.
        edits: env, image, resource and probe edits shipped with the commit
            (:func:`_edit_template` keywords).
        image_at_submit: the pod template's image when the commit entered the pipeline.
        due: run time the build finishes, seconds; None while queued.
    """

    rec: ChangeRecord
    commit: str
    image: str | None
    seconds: float
    edits: dict[str, Any]
    image_at_submit: str | None = None
    due: float | None = None


def _edit_template(template: PodTemplate, *, env: dict[str, str | None] | None = None, image: str | None = None,
                   resources: Resources | None = None, readiness_probe: Probe | Literal["keep"] | None = "keep",
                   liveness_probe: Probe | Literal["keep"] | None = "keep") -> tuple[PodTemplate, str]:
    """``template`` with env vars set (None unsets), an image, resources or probes (None
    removes one, ``"keep"`` keeps it); and the change kind they make (``config``, ``image``,
    ``resources``, ``probe``)."""
    kind = "image" if image else "config"
    if resources is not None:
        template = template.replace(resources=resources)
        kind = "resources"
    if readiness_probe != "keep":
        template = template.replace(readiness_probe=readiness_probe)
        kind = "probe"
    if liveness_probe != "keep":
        template = template.replace(liveness_probe=liveness_probe)
        kind = "probe"
    if env:
        new_env = dict(template.env)
        for key, value in env.items():
            if value is None:
                new_env.pop(key, None)
            else:
                new_env[key] = value
        template = template.replace(env=tuple(new_env.items()))
    if image:
        template = template.replace(image=image)
    return template, kind



def _rfc3339_nano(t: float) -> str:
    """Run time ``t`` as Go's ``time.RFC3339Nano`` (trailing zeros of the fraction dropped), the
    kubelet's log timestamp format."""
    stamp = EPOCH + timedelta(seconds=t)
    fraction = f"{stamp.microsecond:06d}000".rstrip("0")
    return stamp.strftime("%Y-%m-%dT%H:%M:%S") + (f".{fraction}" if fraction else "") + "Z"

class Simulator(Substrate):
    """A deterministic simulation of one app on a two-zone cluster (module docstring).

    Args:
        app: an :class:`AppModel` or the name of a shipped app.
        seed: the run's seed.
        dt: tick length, seconds.
        scrape_interval_s: Prometheus scrape interval, seconds.
        record_warmup: also keep the warm-up scrapes (before t = 0) in :attr:`store`.
        retention_s: keep only this many seconds of scrapes (None: the whole run).

    Raises:
        ValueError: a negative or non-integer seed.
    """

    store: SeriesStore
    """Every scrape (the embedded alert evaluator's input); never None here."""

    def __init__(self, app: AppModel | str, seed: int = 0, dt: float = 1.0, scrape_interval_s: float = 15.0,
                 record_warmup: bool = True, retention_s: float | None = None) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        self.app = load_app(app) if isinstance(app, str) else app
        self.seed = seed
        self.dt = dt
        self.scrape_interval_s = scrape_interval_s
        self.record_warmup = record_warmup
        seq = np.random.SeedSequence(seed)
        traffic_ss, cluster_ss, log_ss = seq.spawn(3)
        self.log_rng = np.random.Generator(np.random.PCG64(log_ss))
        self.registry = SeriesRegistry()
        self.store = SeriesStore(self.registry, retention_s)
        self.forest = compile_forest(self.app)
        self.repos: dict[str, SourceRepo] = {}
        root = source_root(self.app.name)
        for svc in self.app.services:
            self.repos[svc.name] = SourceRepo.from_directory(svc.name, root / svc.name)
        self.images: set[str] = {svc.image for svc in self.app.services}
        self.effects: dict[str, Effect] = {}
        self.edge_effects: dict[str, EdgeEffect] = {}
        self._template_effects: dict[tuple[str, str], list[Effect]] = {}
        self._effects_version = 0
        self._service_effects_version: dict[str, int] = {}
        """Per service, a counter of injections and reverts of its effects (:meth:`_pod_effect_totals`)."""
        self._conditional_services: frozenset[str] = frozenset()
        """Services with a runtime effect under a condition (which may read any workload's template)."""
        self._flag_cache: dict[tuple[str, str, str], dict[str, str]] = {}
        self._worksets: dict[str, tuple[tuple[int, float | None], PodTemplate, Workset]] = {}
        """Revision effects per (service, commit + env), cleared when effects change."""
        self.changes: list[ChangeRecord] = []
        self._build_queue: dict[str, list[_Build]] = {}
        """Per service, the commits not yet rolled out, in commit order (the one building first)."""
        self._pending: list[_Build] = []
        """Builds running now, at most one per service."""
        self._built_images: dict[str, set[str]] = {}
        """Per service, the images its builds pushed (see :meth:`_land`)."""
        self.container_logs: dict[str, ContainerLog] = {}
        self.log_windows: deque[TrafficWindow] = deque(maxlen=int(RETENTION_S / WINDOW_S))
        """Traffic per pod and operation for the logs, newest last (see :mod:`engine.sim.logs`)."""
        self._log_layout: tuple[int, WindowLayout] | None = None
        self._defect_stamp: tuple[int, int] = (-2, -2)
        self._defect_cache: dict[tuple[str, str], Effect | None] = {}
        self._detail_cache: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        self.formatters = {
            svc.name: LogFormatter(svc.name, svc.language, svc.port, svc.container, svc.role, svc.protocol)
            for svc in self.app.services
        }
        self.cluster = Cluster(
            self.app, self.registry, np.random.Generator(np.random.PCG64(cluster_ss)), self.images,
            self._workset, self._lifecycle_log,
        )
        self.traffic = TrafficModel(self.app, self.forest, self.registry,
                                    np.random.Generator(np.random.PCG64(traffic_ss)), dt)
        self._svc_ops: dict[str, list[int]] = {}
        for i, (s, _) in enumerate(self.forest.ops):
            self._svc_ops.setdefault(s, []).append(i)
        self._table_version = -1
        self._fail_acc = np.zeros(0)
        self._calls_acc = np.zeros(0)
        self._fail_since = 0.0
        self._svc_model = {s.name: s for s in self.app.services}
        self._svc_position = {s.name: i for i, s in enumerate(self.app.services)}
        """Position of each service in the app model (what a ``services.index`` would find)."""
        self._share_memo: tuple[Any, Any, dict[str, tuple[float, float]]] | None = None
        """(table, tick result, per service its slots' calls and failures): :meth:`_service_fail_share`."""
        self._svc_masks: tuple[Any, dict[str, npt.NDArray[np.bool_]], dict[str, bool]] | None = None
        """(table, per service the mask of its slots, per service :meth:`_service_timeouts`)."""
        self._mem_idle = {s.name: parse_quantity(s.memory_idle) for s in self.app.services}
        self._pod_rows: dict[str, _PodEffects] = {}
        self._op_blocks: dict[str, _OpBlock] = {}
        self._hist_ids: dict[str, list[int]] = {}
        self._dep_cache: dict[tuple[int, str, str], tuple[PodTemplate, bool, str, str]] = {}
        self._limit_cache: dict[tuple[str, str], tuple[float, float | None, bool]] = {}
        self._series_sig: dict[str, tuple[bool, float]] = {}
        self._series_serial = 0
        self._series_token: dict[str, int] = {}
        """Per pod, the serial of the last :meth:`_sync_container_series` that did work."""
        self._row_cache: dict[str, tuple[tuple[Any, ...], tuple[Any, ...], _OpBlock | None]] = {}
        """Per pod, :meth:`_pod_row`'s inputs, row and block."""
        self._slot_cache: tuple[tuple[tuple[int, int], ...], list[_OpBlock], dict[str, Any]] | None = None
        """:meth:`_slot_arrays`' last key, blocks and arrays."""
        self._sid_cache: dict[str, dict[int, list[int]]] = {}
        self._entry_services = {r.entry.service for r in self.app.routes}
        self._slot_matched: list[list[Effect]] = []
        self._seen_start: dict[str, float] = {}
        self._store_state: dict[str, dict[str, float]] = {
            s.name: {"generation": 0, "since": 0.0, "served_at_loss": 0.0} for s in self.app.services if s.store
        }
        self._route_cache: dict[str, Any] = {}
        self._cause_cache: dict[tuple[int, float], tuple[str, dict[str, Any]]] = {}
        self._next_scrape = 0.0
        self.exporters = ExporterSeries(self.app, self.registry, self.cluster, self.forest, self.traffic)
        """node-exporter's and the store exporters' series (:mod:`engine.sim.exporters`)."""
        self.noise: NoiseSeries | None = None
        """The series of the schedule's background noise (:meth:`set_background_noise`)."""
        self._health_classes = SeriesClasses(self.app.service_names())
        """The registry's series classified for :meth:`health_window` (shared by every reader)."""
        self._warm_start()

    # ----------------------------------------------------------------- warm start

    def _initial_template(self, svc: Service) -> PodTemplate:
        return PodTemplate(
            image=svc.image,
            env=tuple(svc.env.items()),
            resources=svc.resources,
            readiness_probe=svc.readiness_probe,
            liveness_probe=svc.liveness_probe,
            commit=self.repos[svc.name].head.id,
            config_refs=svc.config_refs,
        )

    def _warm_start(self) -> None:
        bring_up = max(
            (s.readiness_probe.initial_delay_s if s.readiness_probe else 0.0) + s.startup_s * 1.25 + 35.0
            for s in self.app.services
        )
        start = -(math.ceil((bring_up + WARM_TRAFFIC_S) / 60.0) * 60.0)
        self.t = start
        self.cluster.t = start
        for svc in self.app.services:
            self.cluster.add_workload(svc, self._initial_template(svc))
        for svc in self.app.services:
            for pod in self.cluster.workloads[svc.name].all_pods():
                _ = pod
        # Controllers only, until the load generator starts.
        traffic_from = -WARM_TRAFFIC_S
        while self.t + self.dt <= traffic_from + 1e-9:
            self.t += self.dt
            self.cluster.step(self.t)
            self.cluster.probe(self.t)
            self.cluster.drain_removed()
        self._next_scrape = math.ceil(self.t / self.scrape_interval_s) * self.scrape_interval_s
        self.advance(0.0)

    # ----------------------------------------------------------------- the loop

    @property
    def now(self) -> float:
        return self.t

    def advance(self, until: float) -> None:
        """Run ticks until run time ``until`` (seconds)."""
        while self.t + self.dt <= until + 1e-9:
            self._tick()

    def _tick(self) -> None:
        t = self.t + self.dt
        self._complete_builds(t)
        self.cluster.step(t)
        for pod in self.cluster.drain_removed():
            self._forget_pod(pod)
        if self.cluster.version != self._table_version:
            self._close_log_window()
            self._rebuild()
        result = self.traffic.step(t)
        tab = self.traffic.table
        assert tab is not None
        for p in result.oom.tolist():
            victim = self.cluster.pods.get(tab.names[p])
            if victim is not None:
                self.cluster.oom_kill(victim)
        self.cluster.probe(t)
        if self._fail_acc.shape != result.slot_fail.shape:
            self._fail_acc = np.zeros_like(result.slot_fail)
            self._calls_acc = np.zeros_like(result.slot_calls)
            self._fail_since = self.t
        self._fail_acc += result.slot_fail
        self._calls_acc += result.slot_calls
        self.t = t
        if t - self._fail_since >= WINDOW_S:
            self._close_log_window()
        if t + 1e-9 >= self._next_scrape:
            self._next_scrape += self.scrape_interval_s
            self.traffic.flush()
            self.exporters.update(t)
            if self.noise is not None:
                self.noise.update(t)
            if t >= 0 or self.record_warmup:
                self.store.record(t)

    # ----------------------------------------------------------------- effects

    def _template_effect_list(self, service: str, template: PodTemplate) -> list[Effect]:
        # Revision effects depend only on the source commit and the env.
        key = (service, template.commit + "\0" + repr(template.env))
        cached = self._template_effects.get(key)
        if cached is not None:
            return cached
        out = []
        files: dict[str, str] | None = None
        for eff in self.effects.values():
            if eff.service != service or not eff.per_revision:
                continue
            cond = eff.when
            if isinstance(cond, SourceContains):
                if files is None:
                    files = self.repos[service].get(template.commit).files
                if cond.text in files.get(cond.path, ""):
                    out.append(eff)
            elif isinstance(cond, EnvEquals):
                env = template.env_dict()
                if self._env_matches(service, env, cond):
                    out.append(eff)
        self._template_effects[key] = out
        return out

    def _env_matches(self, service: str, env: dict[str, str], cond: EnvEquals) -> bool:
        current = env.get(cond.key)
        if cond.value is None:
            return current != self.app.service(service).env.get(cond.key)
        return current == cond.value

    def _global_active(self, eff: Effect) -> bool:
        """Whether a runtime or cross-service conditional effect is active now."""
        cond = eff.when
        if cond is None:
            return True
        other = cond.service or eff.service
        template = self.cluster.workloads[other].template
        if isinstance(cond, FlagEquals):
            return self.flag_variant(other, cond.path, cond.flag) == cond.variant
        if isinstance(cond, SourceContains):
            return cond.text in self.repos[other].get(template.commit).files.get(cond.path, "")
        return self._env_matches(other, template.env_dict(), cond)

    def flag_variant(self, service: str, path: str, flag: str) -> str | None:
        """The ``defaultVariant`` of a flagd flag in the deployed flag file, or None if absent."""
        commit = self.cluster.workloads[service].template.commit
        key = (service, commit, path)
        flags = self._flag_cache.get(key)
        if flags is None:
            try:
                doc = json.loads(self.repos[service].get(commit).files.get(path, "{}"))
                flags = {name: str(spec.get("defaultVariant")) for name, spec in doc.get("flags", {}).items()}
            except (ValueError, AttributeError):
                flags = {}  # an unparsable flag file: flagd serves no flags
            self._flag_cache[key] = flags
        return flags.get(flag)

    def pod_effects(self, pod: Pod) -> list[Effect]:
        """Every effect active on ``pod`` now (revision, runtime and cross-service ones)."""
        out = list(self._template_effect_list(pod.service, pod.template))
        for eff in self.effects.values():
            if eff.service != pod.service or eff.per_revision:
                continue
            if eff.pod is not None and eff.pod != pod.name:
                continue
            if eff.node is not None and eff.node != pod.node:
                continue
            if eff.started_before is not None and (pod.container.started_t is None
                                                   or pod.container.started_t >= eff.started_before):
                continue
            if self._global_active(eff):
                out.append(eff)
        return out

    def _workset(self, pod: Pod) -> Workset:
        cached = self._worksets.get(pod.name)
        if cached is not None and cached[0] == (self._effects_version, pod.container.started_t) \
                and cached[1] is pod.template:
            return cached[2]
        ws = Workset()
        for eff in self.pod_effects(pod):
            if eff.crash_on_start and ws.crash is None:
                ws.crash = eff
            ws.readiness_fails = ws.readiness_fails or eff.readiness_fails
            ws.liveness_fails = ws.liveness_fails or eff.liveness_fails
        self._worksets[pod.name] = ((self._effects_version, pod.container.started_t), pod.template, ws)
        return ws

    def inject(self, effect: Effect | EdgeEffect) -> None:
        """Add a behaviour effect (a fault's mechanism). Takes effect from the next tick.

        Raises:
            SubstrateError: unknown service, or an id already in use.
        """
        services = set(self.app.service_names())
        if effect.id in self.effects or effect.id in self.edge_effects:
            raise SubstrateError(f"effect id {effect.id!r} already injected")
        if isinstance(effect, EdgeEffect):
            for name in (effect.caller, effect.callee):
                if name not in services:
                    raise SubstrateError(f"unknown service {name!r} in edge effect {effect.id}")
            self.edge_effects[effect.id] = effect
        else:
            if effect.service not in services:
                raise SubstrateError(f"unknown service {effect.service!r} in effect {effect.id}")
            self.effects[effect.id] = effect
            service = effect.service
            self._template_effects.clear()
            self._effects_version += 1
            self._effects_changed(service)
        self.cluster.version += 1

    def revert(self, effect_id: str) -> None:
        """Remove an injected effect.

        Raises:
            SubstrateError: no such effect.
        """
        if effect_id in self.edge_effects:
            del self.edge_effects[effect_id]
        elif effect_id in self.effects:
            service = self.effects[effect_id].service
            del self.effects[effect_id]
            self._template_effects.clear()
            self._effects_version += 1
            self._effects_changed(service)
        else:
            raise SubstrateError(f"no injected effect {effect_id!r}")
        self.cluster.version += 1

    def _effects_changed(self, service: str) -> None:
        """Note that an effect of ``service`` was injected or reverted."""
        self._service_effects_version[service] = self._service_effects_version.get(service, 0) + 1
        self._conditional_services = frozenset(e.service for e in self.effects.values()
                                               if not e.per_revision and e.when is not None)

    def set_load_factor(self, factor: float) -> None:
        """Scale the load generator's rate (1 = nominal; a burst is e.g. 2.5)."""
        if factor <= 0:
            raise SubstrateError("load factor must be > 0")
        self.traffic.load_factor = factor
        self.traffic.invalidate()

    def set_host_load(self, node: str, cores: float) -> None:
        """Keep ``node`` busy with ``cores`` cores of work outside the app (a noisy neighbour:
        a batch job or a runaway host process; 0 ends it). Only node-exporter's
        ``node_cpu_seconds_total`` shows it (:mod:`engine.sim.exporters`): the node's pods are
        not slowed (CPU contention between cgroups is not modelled).

        Raises:
            SubstrateError: unknown node, or negative or non-finite cores.
        """
        try:
            self.exporters.set_host_load(node, cores)
        except ValueError as exc:
            raise SubstrateError(str(exc)) from None

    def set_background_noise(self, noise: BackgroundNoise | None) -> None:
        """See :meth:`Substrate.set_background_noise`: from the next scrape on, the noise's
        series advance (:mod:`engine.sim.noise`); the same plan again keeps them going."""
        if noise is None:
            self.noise = None
        elif self.noise is None or self.noise.plan != noise:
            self.noise = NoiseSeries(noise, self.app.namespace, self.registry, self.cluster, self.forest)

    def set_node_ready(self, node: str, ready: bool, network: bool = True) -> None:
        """Take a node down (it stops reporting) or bring it back.

        ``network`` False stops only the kubelet: the node's containers keep running and
        answering (see :meth:`Cluster.set_node_ready <engine.sim.cluster.Cluster.set_node_ready>`).

        Raises:
            SubstrateError: unknown node.
        """
        try:
            self.cluster.set_node_ready(node, ready, network=network)
        except KeyError as exc:
            raise SubstrateError(str(exc)) from None

    def set_node_spec(self, node: str, *, unschedulable: bool | None = None,
                      taints: list[tuple[str, str, str]] | None = None) -> None:
        """Cordon or uncordon a node and set its taints (key, value, effect), as an
        administrator's write of the Node (:meth:`Cluster.set_node_spec
        <engine.sim.cluster.Cluster.set_node_spec>`); None leaves a field unchanged.

        Raises:
            SubstrateError: unknown node.
        """
        try:
            self.cluster.set_node_spec(node, unschedulable=unschedulable, taints=taints)
        except KeyError:
            raise SubstrateError(f'nodes "{node}" not found') from None

    def zone_nodes(self, zone: str) -> list[str]:
        return [n.name for n in self.cluster.nodes if n.zone == zone]

    def load_rate(self) -> float:
        return self.traffic.rate(self.t)

    # ----------------------------------------------------------------- pod table

    def _rebuild(self) -> None:
        """Recompute the traffic model's pod table and edge matrices from the cluster."""
        pods = self._placed_pods()
        self.traffic.ensure_capacity(self.cluster._next_slot + 1)
        table, self._slot_matched = self._pod_table(pods)
        table.classes = self._request_classes(table, self._slot_matched)
        self.traffic.reset_table(table)
        self.traffic.generator_up = self._generator_running()
        self._rebuild_edges()
        self._table_version = self.cluster.version

    def _placed_pods(self) -> list[Pod]:
        """Pods bound to a node, in pod-table order: by service (the traffic model's order), then name."""
        svc_index = self.traffic.svc_index
        return sorted((p for p in self.cluster.pods.values() if p.node is not None),
                      key=lambda p: (svc_index.get(p.service, 10**6), p.name))

    def _pod_table(self, pods: list[Pod]) -> tuple[PodTable, list[list[Effect]]]:
        """The pod table of ``pods`` (its ``classes`` still empty) and, per slot, the
        attribute-matched effects. Syncs each pod's container series on the way, in table order.

        Incremental: each pod's row (its pod-level columns and its slot block) is kept with
        the inputs it was computed from (:meth:`_pod_row`) and reused while they hold, and
        the slot-level arrays are reused while every pod keeps its block and position, so a
        pod state change costs one row, not a table."""
        ready_count: dict[str, int] = {}
        for p in pods:
            if p.ready and not p.terminating:
                ready_count[p.service] = ready_count.get(p.service, 0) + 1
        nodes = {n.name: n for n in self.cluster.nodes}
        rows: list[tuple[Any, ...]] = []
        placed: list[tuple[int, _OpBlock]] = []
        for p_idx, pod in enumerate(pods):
            row, block = self._pod_row(pod, ready_count.get(pod.service, 0), nodes[pod.node or ""])
            rows.append(row)
            if block is not None:
                placed.append((p_idx, block))
        return _assemble_pod_table(rows, self._slot_arrays(placed)), self._slot_matched_of(placed)

    def _pod_row(self, pod: Pod, n_ready: int, node: Any) -> tuple[tuple[Any, ...], _OpBlock | None]:
        """``pod``'s pod-level columns (in :data:`_POD_COLUMNS` order) and its slot block (None
        for a service without operations), cached per pod while every input they read holds:
        slot, readiness and the service's ready count (the weight), serving start, the node's
        reachability, the effects, running state and start, the template, and the container's
        series (their ids change only when :meth:`_sync_container_series` does work)."""
        effects = self._pod_effect_totals(pod)
        svc = self._svc_model[pod.service]
        ops = self._svc_ops.get(pod.service, [])
        http = bool(ops) and svc.role == "app" and svc.protocol in ("http", "grpc")
        running = pod.running
        started = pod.container.started_t if pod.container.started_t is not None else self.t
        self._sync_container_series(pod, svc, ops, http, running, started)
        serving = pod.ready and not pod.terminating
        key = (pod.slot, serving, n_ready if serving else 0, pod.serving_since, pod.node, node.reachable, effects,
               running, started, pod.template, pod.template_hash, self._series_token.get(pod.name, 0))
        hit = self._row_cache.get(pod.name)
        if hit is not None and hit[0] == key:
            return hit[1], hit[2]
        cpu_cap, mem_limit, has_limit = self._limits(pod)
        hist, sum_sid, count_sid, cpu_sid, mem_sid, cfs = self._series_ids(pod, http)
        row = (pod.name, pod.slot, self.traffic.svc_index[pod.service],
               1.0 / n_ready if serving and n_ready else 0.0,
               pod.serving_since if pod.serving_since is not None else math.inf,
               node.reachable, effects.hung, running, cpu_cap, effects.cpu_extra, mem_limit or node.memory,
               self._mem_idle[pod.service], effects.mem_extra, effects.leak_bps, started, http and running,
               hist, sum_sid, count_sid, cpu_sid, mem_sid, has_limit, queue_limit(svc.language, svc.protocol), cfs)
        block = self._op_block(pod, ops, effects, http, running) if ops else None
        self._row_cache[pod.name] = (key, row, block)
        return row, block

    def _slot_arrays(self, placed: list[tuple[int, _OpBlock]]) -> dict[str, Any]:
        """The slot-level columns of a pod table whose pods at positions ``p_idx`` have these
        blocks, reused from the last table while every (position, block) is the same."""
        key = tuple((p_idx, id(block)) for p_idx, block in placed)
        if self._slot_cache is not None and self._slot_cache[0] == key:
            return self._slot_cache[2]
        i64, f64 = np.int64, np.float64
        blocks = [b for _, b in placed]
        counts = [b.op.shape[0] for b in blocks]
        owners = [p_idx for p_idx, _ in placed]
        starts = np.cumsum([0, *counts[:-1]]) if counts else np.zeros(0)
        arrays = {
            "k_pod": np.repeat(np.asarray(owners, dtype=i64), counts) if blocks else np.zeros(0, dtype=i64),
            "k_op": _cat([b.op for b in blocks], i64),
            "k_err": _cat([b.err for b in blocks], f64),
            "k_latfac": _cat([b.latfac for b in blocks], f64),
            "k_latadd": _cat([b.latadd for b in blocks], f64),
            "k_sid": np.concatenate([b.sid for b in blocks]) if blocks else np.zeros((0, 3), dtype=i64),
            "k_http": _cat([b.http for b in blocks], bool),
            "k_starts": np.asarray(starts, dtype=i64),
            "k_owner": np.asarray(owners, dtype=i64),
            "k_err_base": _cat([b.base[:, 0] for b in blocks], f64),
            "k_latfac_base": _cat([b.base[:, 1] for b in blocks], f64),
            "k_latadd_base": _cat([b.base[:, 2] for b in blocks], f64),
        }
        # The blocks are held with the key so that the ids in it cannot be reused.
        self._slot_cache = (key, blocks, arrays)
        return arrays

    @staticmethod
    def _slot_matched_of(placed: list[tuple[int, _OpBlock]]) -> list[list[Effect]]:
        """Per slot, the attribute-matched effects of the blocks ``placed``."""
        return [m for _, block in placed for m in block.matched]

    def _pod_effect_totals(self, pod: Pod) -> _PodEffects:
        """What the effects on ``pod`` add up to, cached while its effects, template, start and node hold."""
        # What pod_effects reads: the service's effects, the pod's template, start and node,
        # and for a service with conditional runtime effects any workload's template (the
        # global version counts template changes too).
        service = pod.service
        sig = (self._service_effects_version.get(service, 0),
               self._effects_version if service in self._conditional_services else -1,
               pod.template_hash, pod.container.started_t, pod.node)
        cached = self._pod_rows.get(pod.name)
        if cached is None or cached.sig != sig:
            effects = self.pod_effects(pod)
            cached = _PodEffects(sig, self._slot_effects(pod.service, effects), any(e.liveness_fails for e in effects),
                                 sum(e.cpu_cores for e in effects), sum(e.memory_bytes for e in effects),
                                 sum(e.memory_leak_bps for e in effects))
            self._pod_rows[pod.name] = cached
        return cached

    def _series_ids(self, pod: Pod, http: bool) -> tuple[list[int], int, int, int, int, list[int]]:
        """``pod``'s histogram bucket, sum, count, CPU, memory and CFS series ids (the traffic
        model's sink where it exports none), as the pod-table columns hold them."""
        sink = self.traffic.sink_sid
        s = pod.series
        if http and "hist:0" in s:
            hist_ids = self._hist_ids.get(pod.name)
            if hist_ids is None or hist_ids[0] != s["hist:0"]:
                # Bounds above the runtime's top bucket are not exposed: they write to the sink.
                hist_ids = [s.get(f"hist:{b}", sink) for b in range(len(BUCKETS) + 1)]
                self._hist_ids[pod.name] = hist_ids
            head = (hist_ids, s["hist:sum"], s["hist:count"])
        else:
            head = ([sink] * (len(BUCKETS) + 1), sink, sink)
        cfs = [s.get("cfs:periods", sink), s.get("cfs:throttled", sink)]
        return (*head, s.get("cpu", sink), s.get("mem", sink), cfs)

    def _op_block(self, pod: Pod, ops: list[int], effects: _PodEffects, http: bool, running: bool) -> _OpBlock:
        """``pod``'s rows of the per-(pod, operation) table, cached while its inputs hold."""
        s = pod.series
        block_key = (effects.sig, http and running, s.get("hist:0", -1) if http else -1)
        block = self._op_blocks.get(pod.name)
        if block is not None and block.key == block_key:
            return block
        if http and "hist:0" in s:
            codes = ("200", "500", cancel_code(self._svc_model[pod.service].protocol))
            sid_rows = [[s[f"req:{op}:{c}"] for c in codes] for op in ops]
        else:
            sid_rows = [[self.traffic.sink_sid] * 3 for _ in ops]
        rows = effects.slot_rows
        block = _OpBlock(
            key=block_key,
            op=np.asarray(ops, dtype=np.int64),
            err=np.asarray([r[0] for r in rows], dtype=np.float64),
            latfac=np.asarray([r[1] for r in rows], dtype=np.float64),
            latadd=np.asarray([r[2] for r in rows], dtype=np.float64),
            matched=[r[3] for r in rows],
            base=np.asarray([r[4] for r in rows], dtype=np.float64).reshape(len(ops), 3),
            sid=np.asarray(sid_rows, dtype=np.int64).reshape(len(ops), 3),
            http=np.full(len(ops), http and running, dtype=bool),
        )
        self._op_blocks[pod.name] = block
        return block

    def _request_classes(self, table: PodTable, matched: list[list[Effect]]) -> list[RequestClass]:
        """One request class per (attribute match, share) of the attribute-matched effects, sorted."""
        return [self._request_class(table, dict(match), share)
                for match, share in sorted({(e.match, e.share) for effs in matched for e in effs})]

    def _generator_running(self) -> bool:
        """The load generator sends traffic only while one of its pods runs."""
        return any(p.service == self.app.load.generator and p.running and not p.terminating
                   for p in self.cluster.pods.values())

    def _slot_effects(self, service: str, effects: list[Effect]) -> list[tuple[float, float, float, list[Effect],
                                                                                  tuple[float, float, float]]]:
        """Per operation of ``service``: live error, latency factor and added latency (attribute
        classes mixed in by share), the attribute-matched effects, and the unmatched base."""
        rows = []
        for op in self._svc_ops.get(service, []):
            name = self.forest.ops[op][1]
            err, fac, add = 0.0, 1.0, 0.0
            b_err, b_fac, b_add = 0.0, 1.0, 0.0
            matched: list[Effect] = []
            for e in effects:
                if e.operations and name not in e.operations:
                    continue
                share = e.live_share
                err = 1.0 - (1.0 - err) * (1.0 - e.error_rate * share)
                fac *= 1.0 + (e.latency_factor - 1.0) * share
                add += e.latency_add_s * share
                if e.match:
                    matched.append(e)
                else:
                    b_err = 1.0 - (1.0 - b_err) * (1.0 - e.error_rate)
                    b_fac *= e.latency_factor
                    b_add += e.latency_add_s
            rows.append((err, fac, add, matched, (b_err, b_fac, b_add)))
        return rows

    def _limits(self, pod: Pod) -> tuple[float, float | None, bool]:
        """CPU cores and memory bytes (None: no limit) a pod's template allows, and whether it
        has a CPU limit (a CFS quota). A pod without a CPU limit is given 1 core (assumption)."""
        key = (pod.service, pod.template_hash)
        hit = self._limit_cache.get(key)
        if hit is None:
            lim = pod.template.resources.limits
            cores = lim.cpu_cores()
            hit = (cores or 1.0, lim.memory_bytes(), bool(cores))
            self._limit_cache[key] = hit
        return hit

    def _rebuild_edges(self) -> None:
        traffic, app, cluster = self.traffic, self.app, self.cluster
        S = traffic.S
        ok = np.ones((S + 1, S))
        delay = np.zeros((S + 1, S))
        drop = np.zeros((S + 1, S))
        self._edge_addr: dict[tuple[str, str], tuple[str, str]] = {}
        ready_pods: dict[str, list[Pod]] = {}
        for p in cluster.pods.values():
            if p.ready and not p.terminating:
                ready_pods.setdefault(p.service, []).append(p)
        for svc in app.services:
            ci = traffic.svc_index[svc.name]
            pods = ready_pods.get(svc.name, [])
            templates = [p.template for p in pods] or [cluster.workloads[svc.name].template]
            for dep in svc.dependencies:
                callee = self._svc_model[dep.service]
                if dep.env is None:
                    self._edge_addr[(svc.name, dep.service)] = (f"{dep.service}:{callee.service_port}", "ok")
                    continue
                good = 0
                mode = "ok"
                addr = ""
                for tpl in templates:
                    ok_t, mode_t, addr = self._dependency_address(tpl, dep.env, dep.service, callee.service_port)
                    if ok_t:
                        good += 1
                    else:
                        mode = mode_t
                ok[ci, traffic.svc_index[dep.service]] = good / len(templates)
                self._edge_addr[(svc.name, dep.service)] = (addr, mode if good < len(templates) else "ok")
        for name in sorted(cluster.services):
            if not cluster.service_reaches_pods(name):
                # No endpoint on the port the pods listen on: every connection to the Service is
                # refused (kube-proxy rejects a Service without endpoints), from callers and the
                # load generator alike (row S).
                ce = traffic.svc_index[name]
                ok[:, ce] = 0.0
                svc_obj = cluster.services[name]
                for caller in app.services:
                    if (caller.name, name) in self._edge_addr:
                        self._edge_addr[(caller.name, name)] = (f"{name}:{svc_obj.port}", "refused")
        for eff in self.edge_effects.values():
            ci, ce = traffic.svc_index[eff.caller], traffic.svc_index[eff.callee]
            share = 1.0
            if eff.started_before is not None:
                endpoints = [p for p in cluster.pods.values()
                             if p.service == eff.callee and p.ready and not p.terminating]
                hit = [p for p in endpoints if p.container.started_t is not None
                       and p.container.started_t < eff.started_before]
                share = len(hit) / len(endpoints) if endpoints else 0.0
            delay[ci, ce] += eff.delay_s * share
            drop[ci, ce] = 1.0 - (1.0 - drop[ci, ce]) * (1.0 - eff.drop * share)
        traffic.edge_ok, traffic.edge_delay, traffic.edge_drop = ok, delay, drop

    def _dependency_address(self, tpl: PodTemplate, env_name: str, callee: str,
                            port_expected: int | None) -> tuple[bool, str, str]:
        """Whether pods of ``tpl`` reach ``callee`` through env var ``env_name``: (ok, failure
        mode ``dns``/``refused``, address). Memoised per template (templates are immutable)."""
        key = (id(tpl), env_name, callee)
        hit = self._dep_cache.get(key)
        if hit is not None and hit[0] is tpl:
            return hit[1], hit[2], hit[3]
        env = tpl.env_dict()
        value = env.get(env_name)
        if value is None:
            ok, mode, addr = False, "dns", f"{env_name} unset"
        else:
            host, port = _address(value, env, env_name)
            addr = f"{host}:{port}" if port else host
            if host != callee:
                ok, mode = False, "dns"
            elif port is not None and port_expected is not None and port != port_expected:
                ok, mode = False, "refused"
            else:
                ok, mode = True, "ok"
        self._dep_cache[key] = (tpl, ok, mode, addr)
        return ok, mode, addr

    def _sync_container_series(self, pod: Pod, svc: Service, ops: list[int], http: bool, running: bool,
                               started: float) -> None:
        """Create a container's cAdvisor and HTTP series while it runs; reset them on restart.

        A container that is not running has no metrics endpoint, so its series go stale.
        """
        if self._series_sig.get(pod.name) == (running, started):
            return  # nothing changed since the last sync
        self._series_sig[pod.name] = (running, started)
        self._series_serial += 1
        self._series_token[pod.name] = self._series_serial  # the pod's row must be rebuilt (_pod_row)
        s = pod.series
        reg = self.registry
        labels = {"namespace": self.app.namespace, "pod": pod.name, "container": pod.container.name,
                  "node": pod.node or ""}
        http_keys = [k for k in s if k.startswith(("req:", "hist:"))]
        cad_keys: list[str] = [k for k in ("cpu", "mem", "cfs:periods", "cfs:throttled") if k in s]
        if not running:
            reg.kill(s[k] for k in http_keys + cad_keys)
            return
        fresh = self._seen_start.get(pod.name) != started
        self._seen_start[pod.name] = started
        base = {"job": "cadvisor", **labels}
        if "cpu" not in s or fresh:
            s["cpu"] = reg.add("container_cpu_usage_seconds_total", base, 0.0)
            s["mem"] = reg.add("container_memory_working_set_bytes", base, parse_quantity(svc.memory_idle))
            if pod.template.resources.limits.cpu_cores():
                # cAdvisor exports the CFS counters for containers with a CPU quota only.
                s["cfs:periods"] = reg.add("container_cpu_cfs_periods_total", base, 0.0, integer=True)
                s["cfs:throttled"] = reg.add("container_cpu_cfs_throttled_periods_total", base, 0.0, integer=True)
            else:
                s.pop("cfs:periods", None)
                s.pop("cfs:throttled", None)
        else:
            for k in cad_keys:
                reg.live[s[k]] = True
        if not http:
            return
        target = {"job": svc.name, "namespace": self.app.namespace, "service": svc.name, "pod": pod.name}
        if svc.name in self._entry_services:
            target["entry"] = "true"  # a target label set by relabelling from the pod's entry label
        if fresh or not http_keys:
            for op in ops:
                name = self.forest.ops[op][1]
                method = svc.operation(name).method
                for code in ("200", "500", cancel_code(svc.protocol)):
                    s[f"req:{op}:{code}"] = reg.add("http_requests_total",
                                                    {**target, "handler": name, "method": method, "code": code},
                                                    0.0, integer=True)
            top = histogram_top_s(svc.language)
            for b, le in enumerate([*BUCKETS, math.inf]):
                if le > top and not math.isinf(le):
                    continue
                le_s = "+Inf" if math.isinf(le) else repr(le) if le < 1 else f"{le:.1f}"
                s[f"hist:{b}"] = reg.add("http_request_duration_seconds_bucket", {**target, "le": le_s}, 0.0,
                                         integer=True)
            s["hist:sum"] = reg.add("http_request_duration_seconds_sum", target, 0.0)
            s["hist:count"] = reg.add("http_request_duration_seconds_count", target, 0.0, integer=True)
        else:
            for k in http_keys:
                reg.live[s[k]] = True

    def _forget_pod(self, pod: Pod) -> None:
        self.container_logs.pop(pod.name, None)
        self._pod_rows.pop(pod.name, None)
        self._row_cache.pop(pod.name, None)
        self._series_sig.pop(pod.name, None)
        self._sid_cache.pop(pod.name, None)
        self._seen_start.pop(pod.name, None)
        self.traffic.util[pod.slot] = 0.0
        self.traffic.mem[pod.slot] = 0.0

    # ----------------------------------------------------------------- logs

    def _log(self, pod_name: str, lines: Iterable[tuple[float, Any]]) -> None:
        buf = self.container_logs.setdefault(pod_name, ContainerLog())
        for t, line in lines:
            buf.current.append((t, line))

    def _lifecycle_log(self, pod: Pod, kind: str, detail: dict[str, Any]) -> None:
        fmt = self.formatters[pod.service]
        t = self.cluster.t
        buf = self.container_logs.setdefault(pod.name, ContainerLog())
        if kind == "start":
            buf.rotate(t)
            crash = detail.get("crash_after_s")
            self._log(pod.name, fmt.startup(t, float(detail["startup_s"]),
                                            None if crash is None else float(crash)))
            if self.app.service(pod.service).store and not self.app.service(pod.service).store.persistent:  # type: ignore[union-attr]
                self._store_restarted(pod)
            return
        if buf.started_t is not None and buf.ended_t is None:
            buf.ended_t = t
        if kind == "crash":
            eff = detail.get("effect")
            hint = eff.log if isinstance(eff, Effect) else None
            if hint is not None:
                self._log(pod.name, fmt.crash(t, hint.message, hint.exception, hint.file, hint.function, hint.line))
            else:
                self._log(pod.name, fmt.crash(t, "process exited", "", "", "", 0))
        elif kind == "oom":
            pass  # SIGKILL from the kernel: the process writes nothing.
        elif kind in ("stop", "killed"):
            self._log(pod.name, fmt.shutdown(t))

    def _store_restarted(self, pod: Pod) -> None:
        state = self._store_state[pod.service]
        served = float(self.traffic.svc_served[self.traffic.svc_index[pod.service]])
        lost = int(served - state["served_at_loss"])
        if lost > 0:
            state["generation"] += 1
            state["since"] = self.cluster.t
            state["served_at_loss"] = served
            fmt = self.formatters[pod.service]
            self._log(pod.name, [(self.cluster.t + 0.03, fmt.line(self.cluster.t + 0.03, "warn",
                                  f"No persistence configured: starting with an empty dataset "
                                  f"(the previous instance had served {lost} requests)"))])

    def store_state(self, service: str) -> dict[str, float]:
        """A store's data generation (incremented by each data loss), when it began, and the
        requests it has served since (a proxy for the data written since).

        Raises:
            SubstrateError: not a store.
        """
        if service not in self._store_state:
            raise SubstrateError(f"{service!r} is not a store")
        self.traffic.flush()
        state = self._store_state[service]
        served = float(self.traffic.svc_served[self.traffic.svc_index[service]])
        return {"generation": state["generation"], "since": state["since"],
                "served_since": served - state["served_at_loss"]}

    def _close_log_window(self) -> None:
        """Keep the traffic accumulated since the last call as one :class:`TrafficWindow`
        (the logs expand it into lines when read), with why each failing slot failed."""
        tab = self.traffic.table
        fail, calls, since, t = self._fail_acc, self._calls_acc, self._fail_since, self.t
        self._fail_acc = np.zeros_like(fail)
        self._calls_acc = np.zeros_like(calls)
        self._fail_since = t
        span = t - since
        if tab is None or span <= 0 or calls.shape[0] != tab.k_pod.shape[0] or not calls.any():
            return
        if self._log_layout is None or self._log_layout[0] != self._table_version:
            owners: dict[str, list[int]] = {}
            for k, p in enumerate(tab.k_pod.tolist()):
                owners.setdefault(tab.names[int(p)], []).append(k)
            self._log_layout = (self._table_version, WindowLayout(
                {name: np.asarray(ks, dtype=np.int32) for name, ks in owners.items()},
                tab.k_op.astype(np.int32)))
        layout = self._log_layout[1]
        causes: dict[int, tuple[str, dict[str, Any]]] = {}
        # Why a slot failed is worked out only where the window expects at least half a failed
        # request (the rest rarely draws one; a drawn failure without a cause logs nothing).
        for k in np.flatnonzero(fail >= 0.5).tolist():
            key = (k, float(self._table_version) + (0.5 if self.traffic.overflow[int(tab.slot[int(tab.k_pod[k])])] > 0
                                                       else 0.0))
            cached = self._cause_cache.get(key)
            if cached is None:
                cached = self._failure_cause(tab, k, self.forest.ops[int(tab.k_op[k])][0], int(tab.k_op[k]))
                self._cause_cache = {key: cached} if len(self._cause_cache) > 512 else self._cause_cache
                self._cause_cache[key] = cached
            causes[k] = cached
        lat = (self.traffic.op_lat_s[tab.k_op] * 1000.0 * tab.k_latfac).astype(np.float32)
        self.log_windows.append(TrafficWindow(since, t, layout, calls.astype(np.float32), fail.astype(np.float32),
                                              lat, causes))

    def _failure_cause(self, tab: PodTable, k: int, service: str, op: int) -> tuple[str, dict[str, Any]]:
        """Why requests to slot ``k`` fail: own defect, load shedding, or a named downstream call."""
        pod = self.cluster.pods.get(tab.names[int(tab.k_pod[k])])
        if float(self.traffic.overflow[int(tab.slot[int(tab.k_pod[k])])]) > 0:
            return "shed", {}  # the pod's queue is full: the overflow is refused
        if tab.k_err[k] > 0.01 and pod is not None:
            op_name = self.forest.ops[op][1]
            for eff in self.pod_effects(pod):
                if eff.error_rate > 0 and (not eff.operations or op_name in eff.operations):
                    h = eff.log
                    return "own", {"message": h.message, "exception": h.exception, "file": h.file,
                                   "function": h.function, "line": h.line, "where": h.where}
        svc = self.app.service(service)
        op_model = svc.operation(self.forest.ops[op][1])
        worst: tuple[float, str, str, str] | None = None
        ti = self.traffic
        for call in op_model.calls:
            if call.optional or call.is_async:
                continue
            ci, ce = ti.svc_index[service], ti.svc_index[call.service]
            addr, mode = self._edge_addr.get((service, call.service), (call.service, "ok"))
            ok = ti.edge_ok[ci, ce]
            ready = self.cluster.workloads[call.service].status_ready
            if ok < 1.0:
                score, why = 1.0 - ok, mode
            elif ready == 0:
                score, why = 1.0, "refused"
            elif ti.edge_drop[ci, ce] > 0 or ti.edge_delay[ci, ce] > 1.0:
                score, why = 0.5 + ti.edge_drop[ci, ce], "timeout"
            else:
                callee_fail = self._service_fail_share(call.service)
                score, why = callee_fail, "error"
                if callee_fail > 0 and self._service_timeouts(call.service):
                    why = "timeout"
                elif callee_fail > 0 and self._defect_of(call.service, call.operation) is None:
                    score *= 0.5  # the callee fails, but not on this operation: blame the one that does
            if worst is None or score > worst[0]:
                worst = (score, call.service, call.operation, why if why != "ok" else "error")
                worst_addr = addr
        if worst is None:
            # No defect and no failing call to blame (a baseline failure): nothing to log.
            return "own", {"message": "internal error", "where": "none"}
        return "downstream", self._downstream_detail(worst[1], worst[2], worst[3], worst_addr)

    def _downstream_detail(self, callee: str, callee_op: str, mode: str, addr: str) -> dict[str, Any]:
        """What a caller's client sees of a failed call to ``callee``: its protocol, its
        cluster IP, and for an error answer the message and gRPC code of the callee's active
        defect (``where`` tells whether anyone logs it); cached like :meth:`_defect_of`."""
        self._defect_of(callee, callee_op)  # refreshes the cache stamp
        key = (callee, callee_op, mode, addr)
        hit = self._detail_cache.get(key)
        if hit is None:
            hit = self._detail_cache[key] = self._downstream_detail_uncached(callee, callee_op, mode, addr)
        return hit

    def _downstream_detail_uncached(self, callee: str, callee_op: str, mode: str, addr: str) -> dict[str, Any]:
        svc = self.app.service(callee)
        detail: dict[str, Any] = {"callee": callee, "callee_op": callee_op, "mode": mode, "addr": addr,
                                  "callee_protocol": svc.protocol, "callee_store": svc.store is not None}
        if svc.service_port is not None:
            index = self._svc_position[callee]
            detail["ip"] = f"10.96.{index // 200}.{index % 200 + 10}"
        if mode != "error":
            return detail
        eff = self._defect_of(callee, callee_op)
        if eff is not None:
            detail.update(desc=eff.log.message, code=grpc_code(eff.log.exception), where=eff.log.where)
            return detail
        # The callee fails because of its own callees: its error answer wraps theirs.
        try:
            calls = self.app.service(callee).operation(callee_op).calls
        except (KeyError, ValueError):
            calls = ()
        for call in calls:
            inner = self._defect_of(call.service, call.operation)
            if inner is not None and inner.log.where != "none":
                short = call.operation.rsplit("/", 1)[-1]
                detail.update(code="Internal", where="self",
                              desc=f"failed to {short[:1].lower() + short[1:]}: rpc error: code = "
                                   f"{grpc_code(inner.log.exception)} desc = {inner.log.message}")
                return detail
        return detail

    def _defect_of(self, service: str, operation: str) -> Effect | None:
        """The active defect making ``operation`` of ``service`` fail (None: none); cached
        until the pods or the effects change."""
        stamp = (self._table_version, self._effects_version)
        if self._defect_stamp != stamp:
            self._defect_stamp, self._defect_cache, self._detail_cache = stamp, {}, {}
        key = (service, operation)
        if key in self._defect_cache:
            return self._defect_cache[key]
        found: Effect | None = None
        for pod in sorted(self.cluster.workloads[service].all_pods(), key=lambda p: p.name):
            for eff in self.pod_effects(pod):
                if eff.error_rate > 0 and (not eff.operations or operation in eff.operations):
                    found = eff
                    break
            if found is not None:
                break
        self._defect_cache[key] = found
        return found

    def _service_masks(self, tab: PodTable) -> tuple[dict[str, npt.NDArray[np.bool_]], dict[str, bool]]:
        """Per service, the mask of its slots in ``tab`` and its :meth:`_service_timeouts`
        answers so far; both are kept for as long as ``tab`` is the table (it is immutable)."""
        memo = self._svc_masks
        if memo is None or memo[0] is not tab:
            memo = self._svc_masks = (tab, {}, {})
        return memo[1], memo[2]

    def _service_fail_share(self, service: str) -> float:
        tab = self.traffic.table
        last = self.traffic.last
        if tab is None or last is None:
            return 0.0
        memo = self._share_memo
        if memo is None or memo[0] is not tab or memo[1] is not last:
            memo = self._share_memo = (tab, last, {})
        sums = memo[2].get(service)
        if sums is None:
            masks = self._service_masks(tab)[0]
            sel = masks.get(service)
            if sel is None:
                sel = masks[service] = tab.svc[tab.k_pod] == self.traffic.svc_index[service]
            sums = memo[2][service] = (float(last.slot_calls[sel].sum()), float(last.slot_fail[sel].sum()))
        calls = sums[0]
        ready = self.cluster.workloads[service].status_ready
        if ready == 0:
            return 1.0
        return sums[1] / calls if calls > 0 else 0.0

    def _service_timeouts(self, service: str) -> bool:
        tab = self.traffic.table
        if tab is None:
            return False
        answers = self._service_masks(tab)[1]
        hit = answers.get(service)
        if hit is None:
            sel = tab.svc == self.traffic.svc_index[service]
            hit = answers[service] = bool((tab.hung[sel] | ~tab.up[sel]).any())
        return hit

    # ----------------------------------------------------------------- Substrate: state

    def objects(self, kind: str) -> list[dict[str, Any]]:
        cluster = self.cluster
        if kind == "Node":
            return [n.to_k8s(cluster.t) for n in cluster.nodes]
        if kind == "Lease":  # the nodes' leases in kube-node-lease (for describe node)
            return [n.lease_k8s(cluster.t) for n in cluster.nodes]
        if kind == "Pod":
            return [cluster.k8s_pod(p) for p in sorted(cluster.pods.values(), key=lambda p: p.name)]
        if kind == "Deployment":
            return [w.to_k8s() for w in cluster.workloads.values() if w.kind == "Deployment"]
        if kind == "StatefulSet":
            return [w.to_k8s() for w in cluster.workloads.values() if w.kind == "StatefulSet"]
        if kind == "ReplicaSet":
            return [cluster.rs_k8s(w, rs) for w in cluster.workloads.values() for rs in w.replicasets]
        if kind == "Service":
            return [svc.to_k8s() for svc in cluster.services.values()]
        if kind == "Event":
            return self.events()
        if kind in ("ConfigMap", "Secret"):
            return [o.to_k8s() for (k, _), o in sorted(cluster.config_objects.items()) if k == kind]
        if kind == "Endpoints":
            return [endpoints_k8s(svc, cluster.endpoint_addresses(name)) for name, svc in cluster.services.items()]
        if kind == "EndpointSlice":
            return [endpoint_slice_k8s(svc, cluster.endpoint_addresses(name))
                    for name, svc in cluster.services.items()]
        raise SubstrateError(f"unknown kind {kind!r}; known: {', '.join(OBJECT_KINDS)}")

    def events(self, since: float | None = None) -> list[dict[str, Any]]:
        evs = self.cluster.events
        if since is not None:
            evs = [e for e in evs if e.last_t > since]
        return [e.to_k8s(self.app.namespace) for e in sorted(evs, key=lambda e: (e.last_t, e.first_t))]

    # ----------------------------------------------------------------- Substrate: observability

    def scrape(self) -> list[Sample]:
        """The series as they are now: state series as of this tick, the request and CPU
        counters as of the last scheduled scrape (every :attr:`scrape_interval_s`).

        A read never folds the traffic accumulated since that scrape: the fold feeds the
        model's saturation (an interval's CPU drives the next one's queues), so folding at a
        reader's moment would change the run -- a ``kubectl top`` or a ``/metrics`` scrape
        from outside must leave a seeded run (and its replay) exactly as it is.
        """
        ids, values = self.registry.exposed()
        info = self.registry.info
        return [Sample(info[i].name, dict(info[i].labels), v)
                for i, v in zip(ids.tolist(), values.tolist(), strict=True)]

    def exposition(self) -> str:
        """The current series in the Prometheus text format (what ``/metrics`` serves), as
        :meth:`scrape` reads them (no fold of unscraped traffic)."""
        return exposition(self.registry)

    def logs(self, pod: str, *, tail: int | None = None, previous: bool = False,
             since: float | None = None, timestamps: bool = False) -> list[str]:
        """See :meth:`Substrate.logs`. Story lines and the traffic lines generated from the
        retained windows (:mod:`engine.sim.logs`), at most :data:`LOG_FILE_LINES` lines.

        Raises:
            SubstrateError: unknown pod; ``tail`` < 0; no previous container; and, as the
                kubelet answers ``kubectl logs`` (pkg/kubelet/kubelet_pods.go,
                validateContainerLogStatus), a container that has not started: ``container
                "C" in pod "P" is waiting to start: ContainerCreating`` (``trying and
                failing to pull image`` in ImagePullBackOff, ``image can't be pulled`` in
                ErrImagePull, the waiting reason otherwise).
        """
        if pod not in self.cluster.pods:
            raise SubstrateError(f'pods "{pod}" not found')
        if tail is not None and tail < 0:
            raise SubstrateError(f"tail must be >= 0, got {tail}")
        the_pod = self.cluster.pods[pod]
        cname = the_pod.container.name
        buf = self.container_logs.get(pod, ContainerLog())
        if previous:
            if buf.prev_span is None:
                raise SubstrateError(f'previous terminated container "{cname}" in pod "{pod}" not found')
            lines, span = buf.previous, buf.prev_span
        else:
            if buf.started_t is None:
                reason = the_pod.container.reason or "ContainerCreating"
                what = {"ImagePullBackOff": "trying and failing to pull image",
                        "ErrImagePull": "image can't be pulled"}.get(reason, reason)
                raise SubstrateError(f'container "{cname}" in pod "{pod}" is waiting to start: {what}')
            lines, span = buf.current, (buf.started_t, buf.ended_t if buf.ended_t is not None else self.t)
        if since is not None:
            lines = deque(entry for entry in lines if entry[0] >= since)
            span = (max(span[0], since), span[1])
        budget = LOG_FILE_LINES if tail is None else min(tail, LOG_FILE_LINES)
        fmt = self.formatters[the_pod.service].for_pod(pod)
        handlers = self._log_handlers()
        windows = [w for w in reversed(self.log_windows) if w.t1 > span[0] and w.t0 < span[1]]
        generated = traffic_lines(fmt, pod, self.seed, windows, span, handlers, budget) if budget else []
        entries = sorted([*lines, *generated], key=lambda x: x[0])
        formatted: list[tuple[float, str]] = []
        end = len(entries)
        # Newest first until the budget of lines is met and no older entry can still reach it
        # (an entry's lines are never later than the entry itself).
        while end > 0:
            if len(formatted) >= budget:
                formatted.sort(key=lambda x: x[0])
                if entries[end - 1][0] < formatted[-budget][0]:
                    break
            start = max(0, end - max(64, budget - len(formatted)))
            formatted.extend(expand(fmt, entries[start:end]))
            end = start
        formatted.sort(key=lambda x: x[0])
        if not budget:
            return []
        if timestamps:
            return [f"{_rfc3339_nano(t)} {text}" for t, text in formatted[-budget:]]
        return [text for _, text in formatted[-budget:]]

    def _log_handlers(self) -> dict[int, tuple[str, str]]:
        """Operation index -> (operation name, handler ``file:function``) for the logs."""
        cached: dict[int, tuple[str, str]] | None = getattr(self, "_handlers_cache", None)
        if cached is None:
            cached = {}
            for i, (service, op_name) in enumerate(self.forest.ops):
                try:
                    handler = self.app.service(service).operation(op_name).handler or ""
                except (KeyError, ValueError):
                    handler = ""
                cached[i] = (op_name, handler)
            self._handlers_cache = cached
        return cached

    def topology(self, window_s: float = 300.0) -> list[EdgeStats]:
        ti = self.traffic
        minutes = max(1, math.ceil(window_s / 60.0))
        bins = list(ti.topo_bins)[-minutes:]
        if not bins:
            return []
        calls = np.sum([b[1] for b in bins], axis=0)
        errs = np.sum([b[2] for b in bins], axis=0)
        lat = np.sum([b[3] for b in bins], axis=0)
        span = min(window_s, max(self.t - bins[0][0] * 60.0, 1.0))
        names = [*self.forest.services, self.app.load.generator]
        out = []
        for e, (caller, callee) in enumerate(ti.edge_keys):
            c = float(calls[e])
            out.append(EdgeStats(names[caller], names[callee], c / span, float(errs[e]) / c if c else 0.0,
                                 1000.0 * float(lat[e]) / c if c else 0.0))
        return out

    # ----------------------------------------------------------------- Substrate: source & pipeline

    def source_files(self, service: str) -> dict[str, str]:
        wl = self._workload(service)
        return dict(self.repos[service].get(wl.template.commit).files)

    def head_files(self, service: str) -> dict[str, str]:
        self._workload(service)
        return dict(self.repos[service].head.files)

    def commits_ahead(self, service: str) -> int:
        """How many commits the repository head of ``service`` is ahead of the deployed revision
        (0 when the pods run the head; after a rollback, the commits rolled back over).

        Raises:
            SubstrateError: unknown service.
        """
        wl = self._workload(service)
        repo = self.repos[service]
        deployed = repo.get(wl.template.commit)
        return len(repo.commits) - 1 - repo.commits.index(deployed)

    def deploy_history(self, service: str | None = None) -> list[ChangeRecord]:
        return [c for c in self.changes if service is None or c.service == service]

    # ----------------------------------------------------------------- Substrate: views for the run loop

    def workload(self, name: str) -> WorkloadView:
        wl = self._workload(name)
        tpl = wl.template
        return WorkloadView(name=wl.name, kind=wl.kind, replicas=wl.replicas, revision=wl.revision,
                            generation=wl.generation, observed_generation=wl.observed_generation,
                            ready_replicas=wl.status_ready, image=tpl.image, env=tpl.env_dict(),
                            resources=tpl.resources, readiness_probe=tpl.readiness_probe,
                            liveness_probe=tpl.liveness_probe)

    def pods(self, service: str | None = None) -> list[PodView]:
        """See :meth:`Substrate.pods`: a service's pods in its workload's order (replica set by
        replica set, or by ordinal), every pod in creation order."""
        pods = list(self.cluster.pods.values()) if service is None else self._workload(service).all_pods()
        return [PodView(name=p.name, uid=p.uid, service=p.service, node=p.node, zone=p.zone, ready=p.ready,
                        terminating=p.terminating, status=p.status_text(), restarts=p.container.restart_count)
                for p in pods]

    def health_window(self, since: object | None = None) -> HealthWindow:
        """See :meth:`Substrate.health_window` (computed in :mod:`engine.sim.health`)."""
        return _health_window(self, self._health_classes, since)

    def _workload(self, service: str) -> Any:
        try:
            return self.cluster.workloads[service]
        except KeyError:
            raise SubstrateError(f'deployments.apps "{service}" not found') from None

    def _new_change(self, service: str, kind: str, summary: str, author: str) -> ChangeRecord:
        rec = ChangeRecord(f"chg-{len(self.changes) + 1:04d}", service, kind, summary, author, self.t)
        self.changes.append(rec)
        return rec

    def deploy_change(
        self,
        service: str,
        *,
        files: dict[str, str] | None = None,
        env: dict[str, str | None] | None = None,
        image: str | None = None,
        resources: Resources | None = None,
        readiness_probe: Probe | Literal["keep"] | None = "keep",
        liveness_probe: Probe | Literal["keep"] | None = "keep",
        build: bool | None = None,
        summary: str,
        author: str,
    ) -> ChangeRecord:
        """See :meth:`Substrate.deploy_change`, whose pipeline rules this implements.

        The simulator also takes ``resources`` and probes (``None`` removes one), and
        ``build``: whether changed files need a CI build (default: yes when any changed file
        is source code, no for config files such as flagd's flag file, which roll out as a
        ConfigMap change). With ``files``, the env, resource and probe edits ride with the
        commit: they are applied to the pod template current when the commit lands.

        Raises:
            SubstrateError: unknown service, nothing to change, or ``image`` together with
                files that need a build (the build makes the image).
        """
        wl = self._workload(service)
        svc = self.app.service(service)
        edits: dict[str, Any] = {"env": env, "image": image, "resources": resources,
                                 "readiness_probe": readiness_probe, "liveness_probe": liveness_probe}
        if not files and not env and image is None and resources is None and readiness_probe == "keep" \
                and liveness_probe == "keep":
            raise SubstrateError("nothing to change: give files, env, image, resources or a probe")
        if not files:
            template, kind = _edit_template(wl.template, **edits)
            rec = self._new_change(service, kind, summary, author)
            rec.image = template.image
            self._apply_template(rec, template.replace(change_cause=f"{rec.id}: {summary}"))
            return rec
        if build is None:
            build = any(not path.endswith(CONFIG_SUFFIXES) for path in files)
        if build and image is not None:
            raise SubstrateError("a change that is built makes its own image: give files or an image, not both")
        repo = self.repos[service]
        base = dict(repo.head.files)
        for path, text in files.items():
            if text == "":
                base.pop(path, None)
            else:
                base[path] = text
        commit = repo.commit(base, summary, author, self.t)
        queue = self._build_queue.setdefault(service, [])
        behind = queue[-1].rec.id if queue else None
        if not build:
            rec = self._new_change(service, "config", summary, author)
            rec.commit = commit.id
            if behind is None:
                self._land(_Build(rec, commit.id, None, 0.0, edits))
                return rec
            rec.detail = f"queued behind {behind}: rolls out when it has"
            queue.append(_Build(rec, commit.id, None, 0.0, edits))
            return rec
        repo_name, _, tag = svc.image.rpartition(":")
        new_image = f"{repo_name}:{tag.split('-')[0]}-{commit.short}"
        rec = self._new_change(service, "code", summary, author)
        rec.commit, rec.image = commit.id, new_image
        job = _Build(rec, commit.id, new_image, build_seconds(svc.language), edits,
                     image_at_submit=wl.template.image)
        queue.append(job)
        if behind is None:
            self._start_build(job, self.t)
        else:
            rec.detail = (f"queued behind {behind}: {svc.language} image {new_image} "
                          f"(~{int(job.seconds)} s once it starts)")
        return rec

    def _start_build(self, job: _Build, t: float) -> None:
        """Start a queued build at run time ``t`` (seconds): it finishes ``job.seconds`` later."""
        job.due = t + job.seconds
        svc = self.app.service(job.rec.service)
        line = f"build started: {svc.language} image {job.image} (~{int(job.seconds)} s)"
        job.rec.detail = f"{job.rec.detail}\n{line}" if job.rec.detail else line
        self._pending.append(job)

    def _land(self, job: _Build) -> None:
        """Roll out a finished commit on top of the *current* pod template.

        Only the commit moves (and the change cause, and the commit's env, resource and
        probe edits, if any), so env, resources, probes and replicas changed while the
        commit was in the pipeline stay.

        The image rule: the built image replaces the template's image only when the
        template still has the image it had when the build started (when the commit entered
        the pipeline, for a build that queued), or has an image the pipeline itself made
        (an earlier build's, or the release image the app started from: a rollback or an
        earlier build of the queue). When someone set another image meanwhile (an image
        fault, ``kubectl set image``) their image stays and only the commit moves. A build
        that lands after a rollback therefore deploys the head with its image, as a CD
        pipeline would -- re-introducing whatever the head still has, as a real one does.
        """
        service = job.rec.service
        template, _ = _edit_template(self.cluster.workloads[service].template, **job.edits)
        template = template.replace(commit=job.commit, change_cause=f"{job.rec.id}: {job.rec.summary}")
        if job.image is not None:
            self.images.add(job.image)  # pushed to the registry, whether or not it rolls out
            self._built_images.setdefault(service, set()).add(job.image)
            job.rec.detail += f"\nbuild succeeded; pushed {job.image}"
            if template.image in (job.image_at_submit, self.app.service(service).image) \
                    or template.image in self._built_images[service]:
                template = template.replace(image=job.image)
            else:
                job.rec.detail += f"; image {template.image} was set while it built and is kept"
        job.rec.image = template.image
        self._apply_template(job.rec, template)

    def _apply_template(self, rec: ChangeRecord, template: PodTemplate) -> None:
        wl = self.cluster.workloads[rec.service]
        self.cluster.set_template(rec.service, template)
        self._effects_version += 1  # cross-service conditions may read this template
        self.cluster.step(self.t)
        rec.t_deployed = self.t
        rec.revision = wl.revision
        rec.status = "deployed"
        self.cluster.version += 1

    def _complete_builds(self, t: float) -> None:
        """Land the builds finished by run time ``t`` and start the next of each service's queue.

        Builds finishing in the same tick land in submission order; a commit without a build
        queued behind a build lands right after it.
        """
        if not self._pending:
            return
        due = [job for job in self._pending if job.due is not None and job.due <= t]
        if not due:
            return
        self._pending = [job for job in self._pending if job not in due]
        for job in sorted(due, key=lambda j: (j.due or 0.0, self.changes.index(j.rec))):
            queue = self._build_queue[job.rec.service]
            assert queue and queue[0] is job
            queue.pop(0)
            self._land(job)
            while queue and queue[0].image is None:
                self._land(queue.pop(0))
            if queue:
                self._start_build(queue[0], t)

    def restart_pod(self, pod: str) -> None:
        try:
            self.cluster.delete_pod(pod, "deleted")
        except KeyError:
            raise SubstrateError(f'pods "{pod}" not found') from None

    def rollout_restart(self, service: str, *, summary: str | None = None, author: str = "operator") -> ChangeRecord:
        """See :meth:`Substrate.rollout_restart`: the pod template gets a new
        ``kubectl.kubernetes.io/restartedAt`` (this run time, RFC 3339 seconds), so the
        controller rolls every pod; logged as a change of kind ``restart``. A second restart
        within the same second changes nothing (the annotation is the same), as with kubectl.

        Raises:
            SubstrateError: unknown service.
        """
        wl = self._workload(service)
        stamp = timestamp(self.t)
        summary = summary or "rollout restart"
        rec = self._new_change(service, "restart", summary, author)
        if wl.template.restarted_at == stamp:
            rec.status, rec.t_deployed, rec.revision = "deployed", self.t, wl.revision
            rec.image = wl.template.image
            return rec
        rec.image = wl.template.image
        self._apply_template(rec, wl.template.replace(restarted_at=stamp, change_cause=f"{rec.id}: {summary}"))
        return rec

    def tag_image(self, service: str, tag: str) -> str:
        """Push the image ``service``'s pod template runs under ``tag`` too (``docker tag`` and
        push: the same build, so the same commit): the registry has the new reference from now
        on, and the pipeline counts it as its own (a later build replaces it, see :meth:`_land`).
        Returns the new image reference.

        Raises:
            SubstrateError: unknown service, or a malformed tag.
        """
        wl = self._workload(service)
        if not tag or len(tag) > 128 or not all(c.isalnum() or c in "_.-" for c in tag) or tag[0] in ".-":
            raise SubstrateError(f"invalid image tag {tag!r}")
        ref = f"{wl.template.image.rpartition(':')[0]}:{tag}"
        self.images.add(ref)
        self._built_images.setdefault(service, set()).add(ref)
        return ref

    def deploy_image(self, service: str, image: str, *, source: dict[str, str] | str | None = None,
                     env: dict[str, str | None] | None = None, resources: Resources | None = None,
                     readiness_probe: Probe | Literal["keep"] | None = "keep",
                     liveness_probe: Probe | Literal["keep"] | None = "keep", summary: str,
                     author: str) -> ChangeRecord:
        """Roll out an image built outside the pipeline (``kubectl set image`` of an image some
        other build system pushed), at once, with the source it was built from: one change of
        kind ``image``, no build.

        Args:
            service: the Deployment (or StatefulSet).
            image: the reference the pod template gets. Whether it pulls is the registry's
                business (:attr:`images`): the caller adds a reference that exists.
            source: what the image runs: a complete file set (committed on top of the
                repository head, with ``summary`` as the message, so the head moves to it, as
                the commit a build came from lands on the branch), an existing commit id (an
                earlier revision's image again), or None (the template's commit stays: the
                image's source is not known).
            env, resources, readiness_probe, liveness_probe: edits in the same rollout, as
                :meth:`deploy_change` takes them.
            summary: the change's one-line description.
            author: who shipped it.

        Raises:
            SubstrateError: unknown service or commit.

        Builds still in the pipeline land later by :meth:`_land`'s image rule: this image is
        not the pipeline's, so it stays and only their commit moves.
        """
        wl = self._workload(service)
        repo = self.repos[service]
        if isinstance(source, dict):
            commit_id = repo.commit(dict(source), summary, author, self.t).id
        elif isinstance(source, str):
            try:
                commit_id = repo.get(source).id
            except KeyError as exc:
                raise SubstrateError(str(exc)) from None
        else:
            commit_id = wl.template.commit
        template, _ = _edit_template(wl.template, env=env, image=image, resources=resources,
                                     readiness_probe=readiness_probe, liveness_probe=liveness_probe)
        rec = self._new_change(service, "image", summary, author)
        rec.commit, rec.image = commit_id, image
        self._apply_template(rec, template.replace(commit=commit_id, change_cause=f"{rec.id}: {summary}"))
        return rec

    def scale(self, service: str, replicas: int, *, summary: str | None = None, author: str = "operator") -> None:
        """See :meth:`Substrate.scale`; the simulator also takes the pipeline log's ``summary``
        (default ``scale to N replicas``) and ``author`` of the change."""
        if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 0:
            raise SubstrateError(f"replicas must be a non-negative integer, got {replicas!r}")
        self._workload(service)
        self.cluster.scale(service, replicas)
        rec = self._new_change(service, "scale", summary or f"scale to {replicas} replicas", author)
        rec.status, rec.t_deployed = "deployed", self.t

    # ----------------------------------------------------------------- config objects and Services

    def deploy_config_refs(self, service: str, refs: tuple[ConfigRef, ...], *,
                           env: dict[str, str | None] | None = None, summary: str, author: str) -> ChangeRecord:
        """Roll out a pod template whose ConfigMap/Secret references are ``refs``, with env vars
        set (None unsets) in the same change (a Deployment change, kind ``config``: rollback
        restores the previous references).

        Raises:
            SubstrateError: unknown service.
        """
        wl = self._workload(service)
        template = wl.template
        if env:
            template, _ = _edit_template(template, env=env)
        rec = self._new_change(service, "config", summary, author)
        self._apply_template(rec, template.replace(config_refs=tuple(refs), change_cause=f"{rec.id}: {summary}"))
        return rec

    def edit_config_object(self, kind: str, name: str, keys: list[str], *, service: str, summary: str,
                           author: str) -> ChangeRecord:
        """Apply a ConfigMap or Secret with key set ``keys`` (``kubectl apply``); logged as a
        change of kind ``configmap``/``secret`` on ``service``, the workload that reads it.

        Raises:
            SubstrateError: no such object.
        """
        try:
            self.cluster.set_config_keys(kind, name, keys)
        except KeyError:
            raise SubstrateError(f'{kind.lower()}s "{name}" not found') from None
        rec = self._new_change(service, kind.lower(), summary, author)
        rec.status, rec.t_deployed = "deployed", self.t
        return rec

    def rotate_config_object(self, kind: str, name: str, *, service: str, summary: str,
                             author: str) -> ChangeRecord:
        """New values under the same keys of a Secret or ConfigMap (a credential rotation).

        Raises:
            SubstrateError: no such object.
        """
        try:
            self.cluster.rotate(kind, name)
        except KeyError:
            raise SubstrateError(f'{kind.lower()}s "{name}" not found') from None
        rec = self._new_change(service, kind.lower(), summary, author)
        rec.status, rec.t_deployed = "deployed", self.t
        return rec

    def patch_service(self, service: str, *, selector: dict[str, str] | None = None,
                      target_port: int | str | None = None, summary: str | None = None,
                      author: str = "operator") -> ChangeRecord:
        """See :meth:`Substrate.patch_service`; logged as a change of kind ``service``."""
        if service not in self.cluster.services:
            raise SubstrateError(f'services "{service}" not found')
        if selector is None and target_port is None:
            raise SubstrateError("nothing to change: give a selector or a targetPort")
        self.cluster.patch_service(service, selector=selector, target_port=target_port)
        parts = []
        if selector is not None:
            parts.append("selector " + ",".join(f"{k}={v}" for k, v in sorted(selector.items())))
        if target_port is not None:
            parts.append(f"targetPort {target_port}")
        rec = self._new_change(service, "service", summary or f"service: {'; '.join(parts)}", author)
        rec.status, rec.t_deployed = "deployed", self.t
        return rec

    def rollback(self, service: str, revision: int | None = None) -> ChangeRecord:
        """See :meth:`Substrate.rollback`: the target ReplicaSet's pod template (commit, image,
        env, resources, probes) becomes the Deployment's, as in Kubernetes. Builds in flight
        are not cancelled: one that lands afterwards deploys the repository head (see
        :meth:`_land`), re-introducing whatever the head still has -- as a CD pipeline would.

        Raises:
            SubstrateError: unknown service, not a Deployment, no such revision, or no history.
        """
        wl = self._workload(service)
        if wl.kind != "Deployment":
            raise SubstrateError(f"{service} is a {wl.kind}; rollback needs a Deployment")
        current = wl.current_rs()
        candidates = sorted((rs for rs in wl.replicasets if rs is not current), key=lambda r: r.revision)
        if revision is None:
            if not candidates:
                raise SubstrateError(f'no rollout history found for deployment "{service}"')
            target = candidates[-1]
        else:
            matches = [rs for rs in wl.replicasets if rs.revision == revision]
            if not matches:
                raise SubstrateError(f'unable to find specified revision {revision} in history')
            target = matches[0]
            if target is current:
                raise SubstrateError(f"revision {revision} is already the current revision")
        rec = self._new_change(service, "rollback", f"rollback to revision {target.revision}", "operator")
        rec.commit, rec.image = target.template.commit, target.template.image
        self._apply_template(rec, target.template)
        return rec

    # ----------------------------------------------------------------- Substrate: faults, probes, forks

    def apply_fault(self, spec: FaultSpec) -> FaultInstance:
        """See :meth:`Substrate.apply_fault` (:func:`engine.sim.faults.inject`)."""
        from engine.sim.faults import inject

        return inject(self, spec)

    def revert_fault(self, fault: FaultInstance) -> list[ChangeRecord]:
        """See :meth:`Substrate.revert_fault` (:func:`engine.sim.faults.revert`)."""
        from engine.sim.faults import revert

        return revert(self, fault)

    def finish_revert(self, fault: FaultInstance) -> bool:
        """See :meth:`Substrate.finish_revert` (:func:`engine.sim.faults.finish_revert`)."""
        from engine.sim.faults import finish_revert

        return finish_revert(self, fault)

    def probe(self, probe: ProbeSpec, target: str | None = None) -> ProbeResult:
        """See :meth:`Substrate.probe` (:func:`engine.sim.probes.evaluate_probe`)."""
        from engine.sim.probes import evaluate_probe

        return evaluate_probe(self, probe, target)

    def rollout_status(self, deployment: str) -> ProbeResult:
        """See :meth:`Substrate.rollout_status` (:func:`engine.sim.probes.rollout_status`)."""
        from engine.sim.probes import rollout_status

        return rollout_status(self, deployment)

    def fork(self, *, drop_pending_builds: bool = False) -> Simulator:
        """See :meth:`Substrate.fork` (:func:`engine.sim.fork.fork`)."""
        from engine.sim.fork import fork

        return fork(self, drop_pending_builds=drop_pending_builds)

    # ----------------------------------------------------------------- probes (ground truth)

    def probe_route(self, route: str, attributes: dict[str, str] | None = None,
                    at_service: str | None = None) -> ProbeOutcome:
        """A synthetic user request along an entry route, with optional request attributes.

        Args:
            route: the entry route.
            attributes: request attributes (``{"currency": "JPY"}``).
            at_service: judge the answer where the request reaches this service (the call
                to it along the route, with everything below it), so that a fault on another
                part of the route does not mask this one; None judges the whole route.

        Raises:
            SubstrateError: unknown route.
        """
        names = [r.name for r in self.app.routes]
        if route not in names:
            raise SubstrateError(f"unknown route {route!r}; routes: {', '.join(names)}")
        r = names.index(route)
        root = int(self.traffic.roots[r])
        if at_service is not None and at_service in self.traffic.svc_index:
            f = self.forest
            hits = np.flatnonzero((f.route == r) & (f.svc == self.traffic.svc_index[at_service]))
            if hits.size:
                # The route calls the service at several places (and operations); the
                # request is judged by the worst of them, as any one can fail it.
                outcomes = self._probe(hits, attributes or {})
                return min(outcomes, key=lambda o: (o.success, -o.quantile_ms(0.95)))
        return self._probe(np.asarray([root]), attributes or {})[0]

    def probe_operation(self, service: str, operation: str, attributes: dict[str, str] | None = None) -> ProbeOutcome:
        """A synthetic call to one operation, made as its busiest caller makes it.

        Raises:
            SubstrateError: the operation is unknown or no route reaches it.
        """
        op = self.traffic.op_index.get((service, operation))
        if op is None:
            raise SubstrateError(f"unknown operation {service} {operation!r}")
        f = self.forest
        nodes = np.flatnonzero(f.op == op)
        if nodes.size == 0:
            raise SubstrateError(f"no route reaches {service} {operation!r}")
        busiest = nodes[np.argmax(self.traffic.route_share[f.route[nodes]] * f.weight[nodes])]
        return self._probe(np.asarray([busiest]), attributes or {})[0]

    def _probe(self, roots: IntArray, attributes: dict[str, str]) -> list[ProbeOutcome]:
        if self.cluster.version != self._table_version:
            self._rebuild()
        if self.traffic._probe_inputs is None or self.traffic._flow_t == -math.inf:
            self.traffic._flow(self.t)
        table = self.traffic.table
        assert table is not None
        cls = self._request_class(table, attributes, 1.0) if attributes else None
        return self.traffic.probe_many(roots.astype(np.int64), cls)

    def _request_class(self, table: PodTable, attributes: dict[str, str], share: float) -> RequestClass:
        """Per-slot own behaviour of requests with ``attributes``: matched effects in full."""
        err = table.k_err_base.copy()
        fac = table.k_latfac_base.copy()
        add = table.k_latadd_base.copy()
        for k, effs in enumerate(self._slot_matched):
            for e in effs:
                if e.matches(attributes):
                    err[k] = 1.0 - (1.0 - err[k]) * (1.0 - e.error_rate)
                    fac[k] *= e.latency_factor
                    add[k] += e.latency_add_s
        return RequestClass(share, err, fac, add)

    # ----------------------------------------------------------------- summaries

    def route_health(self, window_s: float = 60.0) -> list[RouteHealth]:
        """User-facing health of each entry route over the last ``window_s`` seconds: requests
        and failures as the load generator counted them; latency quantiles from the model."""
        window = list(self.traffic.route_window)[-int(window_s / self.dt):]
        out = []
        for r, route in enumerate(self.app.routes):
            n = np.asarray([w.route_requests[r] for w in window])
            total = float(n.sum())
            if total <= 0:
                out.append(RouteHealth(route.name, 0.0, 0.0, 0.0, 0.0))
                continue
            err = float(sum(w.route_failed[r] for w in window)) / total
            med = float(sum(w.route_requests[r] * w.route_median_s[r] for w in window)) / total
            q = float(sum(w.route_requests[r] * w.route_timeout_share[r] for w in window)) / total
            tq = float(sum(w.route_requests[r] * w.route_timeout_s[r] for w in window)) / total
            sig = float(sum(w.route_requests[r] * w.route_sigma[r] for w in window)) / total
            out.append(RouteHealth(route.name, total / (len(window) * self.dt), err,
                                   1000.0 * route_quantile(0.5, med, q, tq, sig),
                                   1000.0 * route_quantile(0.95, med, q, tq, sig)))
        return out

    def service_health(self, window_s: float = 60.0) -> list[ServiceHealth]:
        """Per-service health from the recorded series over the last ``window_s`` seconds."""
        scrapes = self.store.scrapes
        end = scrapes[-1] if scrapes else None
        start = None
        for sc in reversed(scrapes):
            if end is not None and end.t - sc.t >= window_s:
                start = sc
                break
        out = []
        info = self.registry.info
        for svc in self.app.services:
            wl = self.cluster.workloads[svc.name]
            pods = [p for p in wl.all_pods() if not p.terminating]
            statuses = [p.status_text() for p in pods] or ["-"]
            worst = next((s for s in statuses if s != "Running"), statuses[0])
            rps = err = 0.0
            p95: float | None = None
            if end is not None and start is not None and svc.operations and svc.role == "app":
                span = end.t - start.t
                req, bad, buckets = self._deltas(start, end, svc.name, info)
                rps = req / span
                err = bad / req if req > 0 else 0.0
                if math.inf in buckets:  # else no latency series yet (PromQL: NaN without +Inf)
                    bounds = sorted(buckets)
                    q95 = bucket_quantiles(0.95, np.asarray(bounds), np.asarray([[buckets[b] for b in bounds]]),
                                           nonmonotonic="scan", divide_first=False)[0]
                    p95 = None if math.isnan(q95) else float(q95)
            out.append(ServiceHealth(svc.name, wl.status_ready, wl.replicas, rps, err,
                                     None if p95 is None else 1000.0 * p95,
                                     sum(p.container.restart_count for p in pods), worst))
        return out

    def _deltas(self, start: Any, end: Any, service: str, info: list[Any]) -> tuple[float, float, dict[float, float]]:
        cache_key = (start.t, end.t)
        if self._route_cache.get("key") != cache_key:
            s_map = dict(zip(start.ids.tolist(), start.values.tolist(), strict=True))
            per: dict[str, list[Any]] = {}
            for sid, v in zip(end.ids.tolist(), end.values.tolist(), strict=True):
                si = info[sid]
                if si.name not in ("http_requests_total", "http_request_duration_seconds_bucket"):
                    continue
                svc = si.label("service") or ""
                d = v - s_map.get(sid, 0.0) if v >= s_map.get(sid, 0.0) else v
                acc = per.setdefault(svc, [0.0, 0.0, {}])
                if si.name == "http_requests_total":
                    acc[0] += d
                    code = si.label("code") or ""
                    if code.startswith("5") or code == "499":  # 499: the client gave up (cancelled)
                        acc[1] += d
                else:
                    le = si.label("le") or "+Inf"
                    bound = math.inf if le == "+Inf" else float(le)
                    acc[2][bound] = acc[2].get(bound, 0.0) + d
            self._route_cache = {"key": cache_key, "per": per}
        acc = self._route_cache["per"].get(service, [0.0, 0.0, {}])
        return acc[0], acc[1], acc[2]


__all__ = ["Simulator", "pod_cpu_cores"]
