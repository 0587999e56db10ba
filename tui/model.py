"""The view model of a run: one pure reducer from events to what the panes show.

Watch (an in-process engine), follow (another process's ``events.jsonl``) and replay (a
sealed bundle) all feed the same :class:`RunModel` with the same events, so the three are
one code path (DESIGN section 3: one event stream). The module imports neither
``textual`` nor ``rich``: it is unit-tested and benchmarked on its own.

Design choices:

* **Records are immutable** (frozen, slotted dataclasses replaced on change), so
  :meth:`RunModel.snapshot` is a handful of shallow container copies. Replay keeps such
  snapshots as keyframes and seeks by restoring the nearest one and applying the rest
  (:mod:`tui.seek`).
* **Per-pane revisions**: every change bumps the revision of the panes it affects
  (:data:`PANES`), so a widget re-renders only when its revision moved.
* **Health is folded, not rebuilt**: a ``health.sample`` updates one small mutable
  accumulator per service (latest values, sparkline rings, last change per metric), and
  the immutable :class:`ServiceView` / :class:`RouteView` records are built only when
  :attr:`RunModel.services` / :attr:`RunModel.routes` are read, once per service that moved
  since the last read. A Train Ticket marathon emits ~28 samples of 65 services per wall
  second; the panes read once per refresh, so building records per sample was most of the
  reducer's time (``benchmarks/bench_tui.py``). What the two properties return is exactly
  what applying the samples one by one would give (``tests/test_tui_incremental.py``).
* **Ground truth** (``fault.inject``, ``fault.revert``, ``probe.result``) is reduced like
  anything else; hiding it from a player is the screen's job (the play screen mounts no
  ground-truth pane until the run has ended). ``rule.health`` is not ground truth: like
  Prometheus' rules page it is shown to everyone (the header's ``rules: N failing``).
* **Service state** (:func:`service_state`) and **what just changed**
  (:func:`changed_metrics`) follow what a dashboard would flag: a deployment with no ready
  pod or a 5xx share of 10 % or more is failing; fewer ready pods than desired, a 5xx share
  of 1 % or more, a p95 over 1 s or a pod not ``Running`` is degraded. A metric "changed"
  when it moved by more than a dashboard's noise: half its previous value (and 1 req/s) for
  the request rate, 2 percentage points for the 5xx share, half its previous value (and
  50 ms) for p95, any change of ready pods, status or restarts.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from engine.bundle.events import Event
from scoring.attribution import workload_of
from scoring.clock import fmt_clock as fmt_clock  # re-exported: the panes import it from here

SPARK_SAMPLES = 48
"""Health samples kept per service for sparklines: 12 minutes at the 15 s evaluation interval."""
FRESH_SAMPLES = 2
"""A change stays highlighted for this many health samples (30 s of run time)."""
RECENT_INCIDENT_S = 300.0
"""Resolved incidents stay listed for 5 minutes of run time."""
PANES = ("header", "faults", "alerts", "actions", "health", "timeline", "deploys")
"""Pane names whose revisions :class:`RunModel` tracks."""

FAILING_ERROR_SHARE = 0.10
DEGRADED_ERROR_SHARE = 0.01
DEGRADED_P95_MS = 1000.0
METRICS = ("ready", "rps", "error_share", "p95_ms", "restarts", "status")


@dataclass(frozen=True, slots=True)
class FaultView:
    """One injected fault (ground truth). Times in seconds of run time."""

    fault: str
    title: str
    category: str
    subtype: str
    mechanism: str
    target: str
    scope: tuple[str, ...]
    t_inject: float
    lifetime_s: float | None
    changes: tuple[str, ...] = ()
    artifact_refs: tuple[str, ...] = ()
    error: str | None = None
    t_revert: float | None = None
    probe_ok: bool | None = None
    probe_detail: str = ""
    probes: int = 0
    probe_failures: int = 0

    def active(self, t: float) -> bool:
        """Whether the fault is live at run time ``t`` (injected, not reverted, injected without error)."""
        return self.error is None and self.t_inject <= t and (self.t_revert is None or t < self.t_revert)


@dataclass(frozen=True, slots=True)
class AlertView:
    """One alert instance as the alert history shows it (``A-12``)."""

    id: str
    rule: str
    labels: Mapping[str, str]
    fingerprint: str
    state: str
    active_at: float
    summary: str
    severity: str
    workload: str | None
    fired_at: float | None = None
    ended_at: float | None = None
    incidents: tuple[str, ...] = ()
    changed_t: float = 0.0

    @property
    def active(self) -> bool:
        return self.state in ("pending", "firing")


@dataclass(frozen=True, slots=True)
class RuleHealthView:
    """One alert or recording rule whose evaluation failed at some point (``rule.health``).

    ``health`` is ``err`` or ``ok``; ``error`` the latest error text; ``since`` the run time
    of the latest change, seconds.
    """

    rule: str
    group: str
    index: int
    health: str
    error: str
    since: float

    @property
    def failing(self) -> bool:
        return self.health == "err"


@dataclass(frozen=True, slots=True)
class IncidentView:
    """An incident the operator reported, with its root-cause report and resolution."""

    id: str
    title: str
    alerts: tuple[str, ...]
    t: float
    operator: str
    rca: Mapping[str, str] | None = None
    t_rca: float | None = None
    resolved_at: float | None = None


@dataclass(frozen=True, slots=True)
class CallView:
    """One tool call with its policy decision (``tool.call``), and whether it was executed."""

    seq: int
    t: float
    tool: str
    tier: str
    args: Mapping[str, Any]
    targets: tuple[str, ...]
    allowed: bool
    reason: str
    ok: bool
    result: str
    operator: str
    invocation: int
    executed: bool = False
    change: str | None = None


@dataclass(frozen=True, slots=True)
class DeployView:
    """A change the build pipeline deployed (``change.deploy``)."""

    t: float
    change: str
    service: str
    kind: str
    summary: str
    author: str
    revision: int | None


@dataclass(frozen=True, slots=True)
class ServiceView:
    """One service's latest health sample, short history and what just changed.

    ``*_hist`` hold the last :data:`SPARK_SAMPLES` values (None for p95 without requests);
    ``changed`` maps a metric of :data:`METRICS` to the health-sample index of its last change.
    """

    service: str
    ready: int
    desired: int
    rps: float
    error_share: float
    p95_ms: float | None
    restarts: int
    status: str
    state: str
    rps_hist: tuple[float, ...] = ()
    err_hist: tuple[float, ...] = ()
    p95_hist: tuple[float | None, ...] = ()
    changed: Mapping[str, int] = field(default_factory=dict)

    def fresh(self, metric: str, sample: int) -> bool:
        """Whether ``metric`` changed within the last :data:`FRESH_SAMPLES` samples before ``sample``."""
        at = self.changed.get(metric)
        return at is not None and sample - at < FRESH_SAMPLES


@dataclass(frozen=True, slots=True)
class RouteView:
    """An entry route as the load generator sees it."""

    route: str
    rps: float
    error_share: float
    p50_ms: float
    p95_ms: float


def service_state(ready: int, desired: int, rps: float, error_share: float, p95_ms: float | None,
                  status: str) -> str:
    """``ok``, ``degraded`` or ``failing`` (module docstring: thresholds)."""
    if (desired > 0 and ready == 0) or (rps > 0 and error_share >= FAILING_ERROR_SHARE):
        return "failing"
    if status in ("CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "OOMKilled", "Error", "Failed"):
        return "failing"
    if desired == 0 or ready < desired or (rps > 0 and error_share >= DEGRADED_ERROR_SHARE):
        return "degraded"
    if (p95_ms is not None and p95_ms > DEGRADED_P95_MS) or status not in ("Running", "-"):
        return "degraded"
    return "ok"


class _Latest(Protocol):
    """The latest values of a service, as :func:`changed_metrics` compares them (a :class:`ServiceView`)."""

    @property
    def ready(self) -> int: ...
    @property
    def desired(self) -> int: ...
    @property
    def rps(self) -> float: ...
    @property
    def error_share(self) -> float: ...
    @property
    def p95_ms(self) -> float | None: ...
    @property
    def restarts(self) -> int: ...
    @property
    def status(self) -> str: ...


def changed_metrics(prev: _Latest, cur: Mapping[str, Any]) -> list[str]:
    """The metrics of :data:`METRICS` that moved between ``prev`` and sample row ``cur`` (module docstring)."""
    out = []
    if cur["ready"] != prev.ready or cur["desired"] != prev.desired:
        out.append("ready")
    rps = float(cur.get("rps") or 0.0)
    if abs(rps - prev.rps) > max(1.0, 0.5 * prev.rps):
        out.append("rps")
    if abs(float(cur.get("error_share") or 0.0) - prev.error_share) >= 0.02:
        out.append("error_share")
    p95 = cur.get("p95_ms")
    if (p95 is None) != (prev.p95_ms is None) or (
            p95 is not None and prev.p95_ms is not None and abs(p95 - prev.p95_ms) > max(50.0, 0.5 * prev.p95_ms)):
        out.append("p95_ms")
    if int(cur.get("restarts") or 0) != prev.restarts:
        out.append("restarts")
    if str(cur.get("status", "-")) != prev.status:
        out.append("status")
    return out


class _ServiceFold:
    """One service's health folded sample by sample (mutable; the model's own, never handed out).

    Holds the latest values (the attributes :func:`changed_metrics` compares against), the
    last :data:`SPARK_SAMPLES` values of the sparkline metrics, the health-sample index of
    each metric's last change, and the :class:`ServiceView` built from all of it (None
    while a sample arrived since it was built).
    """

    __slots__ = ("changed", "desired", "err_hist", "error_share", "p95_hist", "p95_ms", "ready", "restarts",
                 "rps", "rps_hist", "status", "view")

    def __init__(self) -> None:
        self.ready = 0
        self.desired = 0
        self.rps = 0.0
        self.error_share = 0.0
        self.p95_ms: float | None = None
        self.restarts = 0
        self.status = "-"
        self.rps_hist: deque[float] = deque(maxlen=SPARK_SAMPLES)
        self.err_hist: deque[float] = deque(maxlen=SPARK_SAMPLES)
        self.p95_hist: deque[float | None] = deque(maxlen=SPARK_SAMPLES)
        self.changed: Mapping[str, int] = {}
        self.view: ServiceView | None = None

    def copy(self) -> _ServiceFold:
        other = _ServiceFold.__new__(_ServiceFold)
        other.ready, other.desired, other.rps, other.error_share = self.ready, self.desired, self.rps, self.error_share
        other.p95_ms, other.restarts, other.status = self.p95_ms, self.restarts, self.status
        other.rps_hist, other.err_hist, other.p95_hist = (self.rps_hist.copy(), self.err_hist.copy(),
                                                          self.p95_hist.copy())
        other.changed, other.view = self.changed, self.view  # both immutable once built
        return other

    def build(self, name: str) -> ServiceView:
        return ServiceView(
            service=name, ready=self.ready, desired=self.desired, rps=self.rps, error_share=self.error_share,
            p95_ms=self.p95_ms, restarts=self.restarts, status=self.status,
            state=service_state(self.ready, self.desired, self.rps, self.error_share, self.p95_ms, self.status),
            rps_hist=tuple(self.rps_hist), err_hist=tuple(self.err_hist), p95_hist=tuple(self.p95_hist),
            changed=self.changed)


def _route_view(name: str, row: Mapping[str, Any]) -> RouteView:
    return RouteView(name, float(row.get("rps") or 0.0), float(row.get("error_share") or 0.0),
                     float(row.get("p50_ms") or 0.0), float(row.get("p95_ms") or 0.0))


class RunModel:
    """Everything the panes show about one run, built by applying its events in order.

    Attributes:
        meta: the ``run.start`` payload (run_id, app, seed, regime, operator, duration_s...).
        t: run time of the last event applied, seconds; ``seq``: its sequence number (-1: none).
        ended: ``run.end`` seen (``end_reason`` why); ``sealed``: ``seal`` seen.
        faults, alerts, incidents, services, routes: by id / name, in first-seen order.
        calls: every ``tool.call``, oldest first; deploys: every ``change.deploy``.
        rules: every rule that reported a health change, by (group, index in group).
        firing_series: ``(t, firing alerts, pending alerts)`` at every change.
        samples: health samples seen; invocations: operator invocations; load_factor: the
            load generator's current multiplier.
        revisions: pane name -> revision, bumped whenever what the pane shows changed.
    """

    def __init__(self) -> None:
        self.meta: dict[str, Any] = {}
        self.t = 0.0
        self.seq = -1
        self.events = 0
        self.ended = False
        self.end_reason = ""
        self.sealed = False
        self.faults: dict[str, FaultView] = {}
        self.alerts: dict[str, AlertView] = {}
        self.active_alerts: set[str] = set()
        self.incidents: dict[str, IncidentView] = {}
        self.calls: list[CallView] = []
        self.deploys: list[DeployView] = []
        self._services: dict[str, ServiceView] = {}
        self._folds: dict[str, _ServiceFold] = {}
        self._stale: set[str] = set()
        self._routes: dict[str, RouteView] = {}
        self._route_rows: dict[str, Mapping[str, Any]] = {}
        self.rules: dict[tuple[str, int], RuleHealthView] = {}
        self.firing_series: list[tuple[float, int, int]] = []
        self.samples = 0
        self.invocations = 0
        self.load_factor = 1.0
        self.service_names: set[str] = set()
        self.revisions: dict[str, int] = dict.fromkeys(PANES, 0)
        self._fp_index: dict[str, str] = {}
        self._firing: set[str] = set()

    # ------------------------------------------------------------------ copying

    def snapshot(self) -> RunModel:
        """An independent copy (records are immutable, so containers are copied shallowly)."""
        other = RunModel.__new__(RunModel)
        other.meta = self.meta
        other.t, other.seq, other.events = self.t, self.seq, self.events
        other.ended, other.end_reason, other.sealed = self.ended, self.end_reason, self.sealed
        other.faults = dict(self.faults)
        other.alerts = dict(self.alerts)
        other.active_alerts = set(self.active_alerts)
        other.incidents = dict(self.incidents)
        other.calls = list(self.calls)
        other.deploys = list(self.deploys)
        other._services = dict(self._services)
        other._folds = {name: fold.copy() for name, fold in self._folds.items()}
        other._stale = set(self._stale)
        other._routes = dict(self._routes)
        other._route_rows = dict(self._route_rows)
        other.rules = dict(self.rules)
        other.firing_series = list(self.firing_series)
        other.samples, other.invocations, other.load_factor = self.samples, self.invocations, self.load_factor
        other.service_names = set(self.service_names)
        other.revisions = dict(self.revisions)
        other._fp_index = dict(self._fp_index)
        other._firing = set(self._firing)
        return other

    # ------------------------------------------------------------------ queries

    @property
    def services(self) -> dict[str, ServiceView]:
        """Service name -> its latest health (first-seen order); records are rebuilt only for services
        sampled since the last read. The dict is the model's own: read it, do not change it."""
        if self._stale:
            folds, services = self._folds, self._services
            for name in self._stale:
                fold = folds[name]
                if fold.view is None:
                    fold.view = fold.build(name)
                services[name] = fold.view
            self._stale.clear()
        return self._services

    @property
    def routes(self) -> dict[str, RouteView]:
        """Entry route -> the load generator's latest view of it (first-seen order); read-only like
        :attr:`services`."""
        if self._route_rows:
            for name, row in self._route_rows.items():
                self._routes[name] = _route_view(name, row)
            self._route_rows.clear()
        return self._routes

    @property
    def duration_s(self) -> float:
        """The run's scheduled length (schedule plus tail), seconds; 0 before ``run.start``."""
        return float(self.meta.get("duration_s") or 0.0)

    @property
    def run_id(self) -> str:
        return str(self.meta.get("run_id", ""))

    def active_faults(self) -> list[FaultView]:
        return [f for f in self.faults.values() if f.active(self.t)]

    def firing(self) -> int:
        """Alerts firing now."""
        return len(self._firing)

    def failing_rules(self) -> list[RuleHealthView]:
        """Rules whose latest evaluation failed (they raise no new alert meanwhile)."""
        return [r for r in self.rules.values() if r.failing]

    def open_incidents(self) -> list[IncidentView]:
        return [i for i in self.incidents.values() if i.resolved_at is None]

    def executed_actions(self) -> list[CallView]:
        return [c for c in self.calls if c.executed]

    # ------------------------------------------------------------------ reducing

    def apply_many(self, events: Iterable[Event]) -> None:
        """Apply events in order."""
        apply = self.apply
        for ev in events:
            apply(ev)

    def apply(self, ev: Event) -> None:
        """Apply one event (unknown kinds only advance the clock)."""
        self.t = ev.t
        self.seq = ev.seq
        self.events += 1
        handler = _HANDLERS.get(ev.kind)
        if handler is not None:
            handler(self, ev)
        self.revisions["header"] += 1

    def advance_clock(self, t: float) -> None:
        """Move the run clock to ``t`` between events (a live clock, a replay playhead); never backwards."""
        if t > self.t:
            self.t = t
            self.revisions["header"] += 1
            self.revisions["faults"] += 1
            self.revisions["timeline"] += 1

    def _bump(self, *panes: str) -> None:
        for p in panes:
            self.revisions[p] += 1

    def _run_start(self, ev: Event) -> None:
        self.meta = dict(ev.payload)
        for edge in ev.payload.get("edges", []):
            self.service_names.update(str(x) for x in edge)
        self._bump(*PANES)

    def _fault_inject(self, ev: Event) -> None:
        p = ev.payload
        lifetime = p.get("lifetime_s")
        self.faults[p["fault"]] = FaultView(
            fault=str(p["fault"]), title=str(p.get("title", "")), category=str(p.get("category", "")),
            subtype=str(p.get("subtype", "")), mechanism=str(p.get("mechanism", "")), target=str(p.get("target", "")),
            scope=tuple(p.get("scope", ())), t_inject=ev.t, lifetime_s=float(lifetime) if lifetime else None,
            changes=tuple(p.get("changes", ())), artifact_refs=tuple(str(x) for x in p.get("artifact_refs", ())),
            error=p.get("error"))
        self._bump("faults", "timeline")

    def _fault_revert(self, ev: Event) -> None:
        f = self.faults.get(ev.payload["fault"])
        if f is not None:
            self.faults[f.fault] = replace(f, t_revert=ev.t)
            self._bump("faults", "timeline")

    def _probe(self, ev: Event) -> None:
        p = ev.payload
        f = self.faults.get(p["fault"])
        if f is None:
            return
        ok = bool(p["ok"])
        if ok != f.probe_ok:
            self._bump("faults")
        self.faults[f.fault] = replace(f, probe_ok=ok, probe_detail=str(p.get("detail", "")), probes=f.probes + 1,
                                       probe_failures=f.probe_failures + (not ok))

    def _alert(self, ev: Event) -> None:
        p = ev.payload
        aid = p.get("id") or self._fp_index.get(p["fingerprint"]) or f"fp:{p['fingerprint']}:{p.get('active_at')}"
        state = str(p.get("state", ev.kind.split(".")[1]))
        cur = self.alerts.get(aid)
        if cur is None:
            labels = dict(p.get("labels", {}))
            cur = AlertView(id=aid, rule=str(p["alert"]), labels=labels, fingerprint=str(p["fingerprint"]),
                            state=state, active_at=float(p.get("active_at", ev.t)), summary=str(p.get("summary", "")),
                            severity=str(labels.get("severity", "")), workload=workload_of(labels, self.service_names),
                            changed_t=ev.t)
            self._fp_index[cur.fingerprint] = aid
        else:
            cur = replace(cur, state=state, summary=str(p.get("summary", cur.summary)), changed_t=ev.t)
        if state == "firing" and cur.fired_at is None:
            cur = replace(cur, fired_at=ev.t)
        if state == "firing":
            self._firing.add(aid)
        else:
            self._firing.discard(aid)
        if state in ("resolved", "inactive"):
            cur = replace(cur, ended_at=ev.t)
            self.active_alerts.discard(aid)
            if self._fp_index.get(cur.fingerprint) == aid:
                del self._fp_index[cur.fingerprint]
        else:
            self.active_alerts.add(aid)
        self.alerts[aid] = cur
        firing = self.firing()
        self.firing_series.append((ev.t, firing, len(self.active_alerts) - firing))
        self._bump("alerts", "timeline")

    def _rule_health(self, ev: Event) -> None:
        p = ev.payload
        view = RuleHealthView(rule=str(p["rule"]), group=str(p["group"]), index=int(p.get("index") or 0),
                              health=str(p["health"]), error=str(p.get("error") or ""), since=ev.t)
        self.rules[(view.group, view.index)] = view
        self._bump("header")

    def _health(self, ev: Event) -> None:
        self.samples += 1
        n = self.samples
        folds, services, stale = self._folds, self._services, self._stale
        for row in ev.payload.get("services", ()):
            name = str(row["service"])
            fold = folds.get(name)
            rps = float(row.get("rps") or 0.0)
            err = float(row.get("error_share") or 0.0)
            p95 = row.get("p95_ms")
            p95 = float(p95) if p95 is not None else None
            restarts = int(row.get("restarts") or 0)
            status = str(row.get("status", "-"))
            if fold is None:
                self.service_names.add(name)
                fold = folds[name] = _ServiceFold()
                services[name] = _PLACEHOLDER  # keeps first-seen order; replaced on the next read
            else:
                # changed_metrics(fold, row), inlined: this loop runs for every service of every sample
                moved = []
                if row["ready"] != fold.ready or row["desired"] != fold.desired:
                    moved.append("ready")
                prev = fold.rps
                if abs(rps - prev) > max(1.0, 0.5 * prev):
                    moved.append("rps")
                if abs(err - fold.error_share) >= 0.02:
                    moved.append("error_share")
                prev_p95 = fold.p95_ms
                if (p95 is None) != (prev_p95 is None) or (
                        p95 is not None and prev_p95 is not None and abs(p95 - prev_p95) > max(50.0, 0.5 * prev_p95)):
                    moved.append("p95_ms")
                if restarts != fold.restarts:
                    moved.append("restarts")
                if status != fold.status:
                    moved.append("status")
                if moved:
                    fold.changed = {**fold.changed, **dict.fromkeys(moved, n)}
            fold.ready, fold.desired = int(row.get("ready", 0)), int(row.get("desired", 0))
            fold.rps, fold.error_share, fold.p95_ms, fold.restarts, fold.status = rps, err, p95, restarts, status
            fold.rps_hist.append(rps)
            fold.err_hist.append(err)
            fold.p95_hist.append(p95)
            fold.view = None
            stale.add(name)
        route_rows = self._route_rows
        for row in ev.payload.get("routes", ()):
            name = str(row["route"])
            if name not in self._routes:
                self._routes[name] = _PLACEHOLDER_ROUTE  # first-seen order, as for services
            route_rows[name] = row
        self._bump("health", "faults")

    def _invoke(self, ev: Event) -> None:
        self.invocations = int(ev.payload.get("invocation", self.invocations + 1))

    def _tool_call(self, ev: Event) -> None:
        p = ev.payload
        self.calls.append(CallView(
            seq=ev.seq, t=ev.t, tool=str(p["tool"]), tier=str(p.get("tier", "")), args=p.get("args") or {},
            targets=tuple(str(x) for x in p.get("targets", ())), allowed=bool(p.get("allowed")),
            reason=str(p.get("reason", "")), ok=bool(p.get("ok", p.get("allowed"))), result=str(p.get("result", "")),
            operator=str(p.get("operator", "")), invocation=int(p.get("invocation") or 0)))
        self._bump("actions")

    def _action(self, ev: Event) -> None:
        p = ev.payload
        # action.executed follows the tool.call it executed (tools.py records the call first)
        for i in range(len(self.calls) - 1, max(-1, len(self.calls) - 6), -1):
            c = self.calls[i]
            if c.tool == p.get("tool") and not c.executed and c.tier == "act":
                self.calls[i] = replace(c, executed=True, change=p.get("change"))
                break
        self._bump("actions", "timeline")

    def _incident(self, ev: Event) -> None:
        p = ev.payload
        inc = IncidentView(id=str(p["incident"]), title=str(p.get("title", "")),
                           alerts=tuple(str(a) for a in p.get("alerts", ())), t=ev.t,
                           operator=str(p.get("operator", "")))
        self.incidents[inc.id] = inc
        for aid in inc.alerts:
            a = self.alerts.get(aid)
            if a is not None and inc.id not in a.incidents:
                self.alerts[aid] = replace(a, incidents=(*a.incidents, inc.id))
        self._bump("alerts", "timeline")

    def _rca(self, ev: Event) -> None:
        p = ev.payload
        inc = self.incidents.get(str(p["incident"]))
        if inc is not None:
            self.incidents[inc.id] = replace(inc, rca={k: str(p.get(k, "")) for k in
                                                       ("service", "category", "artifact", "summary")}, t_rca=ev.t)
            self._bump("alerts", "timeline")

    def _resolved(self, ev: Event) -> None:
        inc = self.incidents.get(str(ev.payload["incident"]))
        if inc is not None:
            self.incidents[inc.id] = replace(inc, resolved_at=ev.t)
            self._bump("alerts", "timeline")

    def _deploy(self, ev: Event) -> None:
        p = ev.payload
        rev = p.get("revision")
        self.deploys.append(DeployView(ev.t, str(p["change"]), str(p["service"]), str(p.get("kind", "")),
                                       str(p.get("summary", "")), str(p.get("author", "")),
                                       int(rev) if rev is not None else None))
        self._bump("deploys", "timeline")

    def _load(self, ev: Event) -> None:
        self.load_factor = float(ev.payload.get("factor", 1.0))

    def _end(self, ev: Event) -> None:
        self.ended = True
        self.end_reason = str(ev.payload.get("reason", ""))
        self._bump(*PANES)

    def _seal(self, ev: Event) -> None:
        self.sealed = True


_PLACEHOLDER = ServiceView("", 0, 0, 0.0, 0.0, None, 0, "-", "ok")
_PLACEHOLDER_ROUTE = RouteView("", 0.0, 0.0, 0.0, 0.0)

_HANDLERS = {
    "run.start": RunModel._run_start,
    "fault.inject": RunModel._fault_inject,
    "fault.revert": RunModel._fault_revert,
    "probe.result": RunModel._probe,
    "alert.pending": RunModel._alert,
    "alert.firing": RunModel._alert,
    "alert.resolved": RunModel._alert,
    "rule.health": RunModel._rule_health,
    "health.sample": RunModel._health,
    "agent.invoke": RunModel._invoke,
    "tool.call": RunModel._tool_call,
    "action.executed": RunModel._action,
    "report.incident": RunModel._incident,
    "report.rca": RunModel._rca,
    "report.resolved": RunModel._resolved,
    "change.deploy": RunModel._deploy,
    "load.change": RunModel._load,
    "run.end": RunModel._end,
    "seal": RunModel._seal,
}


def parse_clock(text: str) -> float:
    """Parse ``90``, ``1:30``, ``1:02:03``, ``90s``, ``5m`` into seconds.

    Raises:
        ValueError: not a time.
    """
    raw = text.strip().lower()
    if not raw:
        raise ValueError("empty time")
    if raw.endswith("m") and ":" not in raw:
        return float(raw[:-1]) * 60.0
    if raw.endswith("s") and ":" not in raw:
        raw = raw[:-1]
    parts = raw.split(":")
    if len(parts) > 3:
        raise ValueError(f"not a time: {text!r} (use m:ss, h:mm:ss or seconds)")
    try:
        values = [float(p) for p in parts]
    except ValueError:
        raise ValueError(f"not a time: {text!r} (use m:ss, h:mm:ss or seconds)") from None
    total = 0.0
    for v in values:
        if v < 0:
            raise ValueError(f"not a time: {text!r}")
        total = total * 60.0 + v
    return total
