"""The load generator and the request flow through the call trees, one tick at a time.

Each tick (1 s by default):

1. The load generator is closed-loop, as Locust runs the demos' load: a pool of virtual
   users, each sending one request, waiting for its answer, then thinking for a time drawn
   from ``between(think_min, think_max)`` (``wait_time = between(1, 10)`` in the Online
   Boutique and OpenTelemetry demo locustfiles). The entry rate is therefore
   ``users / (think + response)`` (the interactive response-time law): slow answers lower
   the request rate everywhere. ``users`` follows the slow sine swing and ``load_factor``;
   its base value is sized so that the healthy app sends ``base_rps`` (see
   :meth:`TrafficModel.users`). Each tick's route counts are Poisson around that rate.
2. Pods decide what they can do: a pod receives a share of its service's calls only while
   it is a ready endpoint; of those, it answers only once its application has started
   (else the caller gets *connection refused*), and not at all when its node is gone or
   its process hangs (the caller waits for its deadline).
3. CPU saturation is latency, not errors (see :meth:`TrafficModel._queues`): a pod's
   CPU limit is a CFS quota of ``limit x 100 ms`` per ``cpu.cfs_period_us`` = 100000 us
   period (the kernel's and the kubelet's default period). Below the quota, queueing
   multiplies own latency by ``1 + u^2 / (1 - u)`` (M/M/1-like, ``u`` the CPU utilisation,
   capped at 0.95). At the quota, the pod is throttled for the rest of each period and the
   requests it cannot serve queue. With closed-loop users the queue settles where it holds
   the users the pod cannot serve (the asymptotic bound of a closed queueing network: the
   throughput is capped by the bottleneck, ``X = capacity / demand per request``, and the
   response time becomes ``users / X - think``), so latency rises by orders of magnitude
   while every request still succeeds. Nothing is shed: errors come only from the callers'
   deadlines (the fold below), from a pod starved outright (runaway work above its whole
   quota: the queue grows until deadlines expire) and from a full queue (a bounded server
   queue, :func:`queue_limit`), whose overflow is refused.
4. Call trees are folded bottom-up (deepest level first) with the rules in
   :mod:`engine.sim.calltree`; each node keeps the median latency of its normal path
   (log-normal, carried as mean and variance so that sums of calls narrow as they should),
   the probability that a timeout occurred below it and how long that took, and its
   success probability. A call times out when its latency exceeds the caller's deadline
   (the log-normal tail of the call's own distribution).
5. Client deadlines cancel server work: a request whose server-side time (its own latency,
   plus the network delay already spent on the way in) passes the caller's deadline is
   cancelled; the server records it with the cancellation status of its protocol
   (:func:`cancel_code`) and its duration up to the cancellation.
6. Served calls flow top-down (an unreachable service's downstream sees nothing), are
   attributed to operations and pods, and increment the standard HTTP server series:
   ``http_requests_total{handler, method, code}`` and the
   ``http_request_duration_seconds`` histogram (bucket bounds: :data:`BUCKETS`, of which
   each runtime exposes those of its instrumentation, :func:`histogram_top_s`), plus
   cAdvisor's ``container_cpu_usage_seconds_total`` (capped at the limit),
   ``container_cpu_cfs_periods_total`` and ``container_cpu_cfs_throttled_periods_total``
   (pods with a CPU limit) and ``container_memory_working_set_bytes``.

Background errors: every operation fails with probability :data:`BACKGROUND_ERROR`
(0.002 %), the residual error rate of a healthy service.

Departures from reality: the load generator's users are a fluid (their count is not
drawn, and a user's next request follows the mean response time of the last flow, at
most :data:`FLOW_EVERY_S` old); the queue is the steady state of the closed loop (it
appears at once rather than building up over a few think times); a cancelled request's
CPU work is still done (as a handler that does not check its context does); the queue is
per pod, not per operation.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from alerts.series import SeriesRegistry
from engine.apps.model import AppModel
from engine.sim.calltree import CallForest

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

DEFAULT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""The Prometheus client libraries' default histogram buckets, seconds (client_golang
``prometheus.DefBuckets``, client_python ``Histogram.DEFAULT_BUCKETS``). OpenTelemetry's
default explicit bucket boundaries (0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500,
5000, 7500, 10000 ms) end at the same 10 s."""
BUCKETS = (*DEFAULT_BUCKETS, 30.0, 60.0)
"""Every histogram bucket bound the simulator can expose, seconds: the default buckets plus
30 s and 60 s, the next bounds of Envoy's default histogram buckets (``..., 10000, 30000,
60000, 300000, ...`` ms, ``Stats::HistogramSettingsImpl::defaultBuckets``); 30 s is also the
top of a Spring Boot (Micrometer) timer's percentile histogram, whose default maximum
expected value is 30 s. Each pod exposes the bounds up to :func:`histogram_top_s` (its
other bucket columns write to a dead series)."""
CFS_PERIOD_S = 0.1
"""CFS bandwidth period, seconds: ``cpu.cfs_period_us`` = 100000, the kernel default and
the period the kubelet sets for every container with a CPU limit (``quota = limit x period``)."""
BACKGROUND_ERROR = 2e-5
"""Residual 5xx probability of every healthy operation (0.002 %): a route whose request
makes ``n`` calls fails with probability about ``n * 2e-5`` when everything is healthy."""
MIN_SIGMA = 0.05
"""Smallest log-normal shape a latency distribution is given (numerical floor)."""
COMMON_SIGMA = 0.25
"""Log-normal shape of the latency variation shared by all calls of one request (GC
pauses, noisy neighbours, network jitter). Without it, sums of independent calls would be
unrealistically tight: real p95/p50 ratios of deep requests are 1.5x or more."""
IDLE_CPU = 0.002
"""CPU cores an idle container uses (runtime housekeeping)."""
RHO_CAP = 0.95
"""The stationary queueing multiplier ``1 + u^2 / (1 - u)`` is evaluated at most at this
``u`` (x19); beyond it the closed-loop queue carries the delay."""
LOAD_SMOOTH_S = 20.0
"""Time constant of the per-pod demand and visit estimates behind the queues, seconds."""
STARVED_WAIT_S = 600.0
"""Queue wait of a pod whose runaway work takes its whole quota (no steady state: the
queue grows until every caller's deadline has expired; any value past the deadlines)."""
FAST_FAIL_S = 0.002
"""Latency of a call refused at connect time."""
_EXP_HALF_COMMON_VAR = np.exp(0.5 * COMMON_SIGMA * COMMON_SIGMA)
"""``exp(COMMON_SIGMA^2 / 2)``: a log-normal's mean over its median."""

FLOW_EVERY_S = 5.0
"""Per-request probabilities and latencies are rechecked this often, seconds (and
recomputed at once when pods, effects or edges change): load-driven latency follows
utilisation with at most this lag."""
UTIL_TOLERANCE = 0.05
"""A periodic recomputation is skipped while no pod's CPU utilisation moved by more than
this (absolute, 5 points; 1 point for pods above 0.9, near the quota): below 0.5 the latency
multiplier ``1 + u^2 / (1 - u)`` then moves by under 5 %, less than the run-to-run noise of the
latency itself."""
SPRING_QUEUE = 300
"""Requests a Spring Boot (embedded Tomcat) pod holds before it refuses connections:
``server.tomcat.threads.max`` 200 plus ``server.tomcat.accept-count`` 100 (Spring Boot's defaults)."""
SOMAXCONN_QUEUE = 4096
"""Requests any other server holds before the kernel refuses connections: the listen
backlog ``net.core.somaxconn`` default of 4096 (Linux 5.4 and later). Assumption: the
runtimes' own request queues (goroutines, the event loop, gRPC streams) are unbounded, so
the accept backlog is the bound."""


def histogram_top_s(language: str) -> float:
    """Highest finite bucket bound a runtime's request-duration histogram has, seconds.

    Envoy exposes its default buckets up to 60 s here (its defaults go on to 3600 s; 60 s is
    the load generator's timeout, beyond which no request lasts); Spring Boot services
    (Java) the Micrometer percentile histogram up to 30 s; every other runtime the client
    libraries' (and OpenTelemetry's) defaults, up to 10 s. Departure: Java services that are
    not Spring Boot (grpc-java with the OpenTelemetry agent) also get 30 s.
    """
    if language == "envoy":
        return 60.0
    if language in ("java", "kotlin"):
        return 30.0
    return DEFAULT_BUCKETS[-1]


def queue_limit(language: str, protocol: str) -> float:
    """Requests a pod queues before it refuses more (:data:`SPRING_QUEUE`, :data:`SOMAXCONN_QUEUE`)."""
    return float(SPRING_QUEUE if language in ("java", "kotlin") and protocol == "http" else SOMAXCONN_QUEUE)


def cancel_code(protocol: str) -> str:
    """The status a server records for a request its client cancelled, as an HTTP code.

    gRPC servers see their (propagated) deadline expire and record ``DEADLINE_EXCEEDED``,
    which google.rpc.Code maps to HTTP 504; the simulator's ``http_requests_total`` carries
    gRPC statuses in that mapping (``UNAVAILABLE`` 503, ``INTERNAL``/``UNKNOWN`` 500). HTTP
    servers see the client close the connection: nginx logs that as 499 ("client closed
    request"), the code used here for every HTTP server. A 499 is not a 5xx: error-share
    rules on ``code=~"5.."`` do not count it, as they do not on a real nginx.
    """
    return "504" if protocol == "grpc" else "499"




def _group_heads(parents: IntArray) -> IntArray:
    """Per child (``parents`` grouped: a parent's children are adjacent), the position of its
    parent's first child."""
    first = np.ones(parents.shape[0], dtype=bool)
    first[1:] = parents[1:] != parents[:-1]
    heads: IntArray = np.flatnonzero(first)[np.cumsum(first) - 1]
    return heads


def normal_cdf(x: FloatArray) -> FloatArray:
    """Standard normal CDF, tanh approximation (absolute error below 2e-4)."""
    return 0.5 * (1.0 + np.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


@dataclass
class PodTable:
    """The pods traffic can reach, as arrays (rebuilt when the cluster changes).

    Pod-level arrays are indexed by table position ``p``; slot-level arrays by ``k``, one
    slot per (pod, operation), grouped by pod so ``np.add.reduceat`` sums per pod.
    """

    names: list[str]
    slot: IntArray
    svc: IntArray
    weight: FloatArray
    serving_since: FloatArray
    up: npt.NDArray[np.bool_]
    hung: npt.NDArray[np.bool_]
    running: npt.NDArray[np.bool_]
    cpu_cap: FloatArray
    cpu_extra: FloatArray
    mem_limit: FloatArray
    mem_idle: FloatArray
    mem_extra: FloatArray
    leak_bps: FloatArray
    started: FloatArray
    http: npt.NDArray[np.bool_]
    hist_sids: IntArray
    sum_sid: IntArray
    count_sid: IntArray
    cpu_sid: IntArray
    mem_sid: IntArray
    has_limit: npt.NDArray[np.bool_]
    """Pods whose container has a CPU limit (a CFS quota): they export the CFS counters."""
    queue_max: FloatArray
    """Requests each pod queues before refusing more (:func:`queue_limit`)."""
    cfs_sid: IntArray
    """Series ids of ``container_cpu_cfs_periods_total`` and ``..._throttled_periods_total``, shape (P, 2)."""
    k_pod: IntArray
    k_op: IntArray
    k_err: FloatArray
    k_latfac: FloatArray
    k_latadd: FloatArray
    k_err_base: FloatArray
    """Own error of requests no subset fault matches (live ``k_err`` mixes in the classes)."""
    k_latfac_base: FloatArray
    k_latadd_base: FloatArray
    classes: list[RequestClass]
    k_sid: IntArray
    """Series ids per slot and code: shape (K, 3) for codes 200, 500 and the server's
    cancellation code (:func:`cancel_code`)."""
    k_http: npt.NDArray[np.bool_]
    """Slots that export HTTP series (application pods, not stores)."""
    k_starts: IntArray
    """First slot index of each pod with slots (for reduceat)."""
    k_owner: IntArray
    """Pod index of each entry of ``k_starts``."""


@dataclass
class TickResult:
    """What one tick produced, for probes, logs and health summaries.

    Attributes:
        t: run time, seconds.
        route_requests: requests per route this tick.
        route_failed: of those, how many failed (drawn from the model's error probability).
        route_error: share of each route's requests that failed.
        route_median_s: median latency of each route's normal path, seconds.
        route_sigma: log-normal shape of each route's normal path.
        route_timeout_share: share of each route's requests that waited for a deadline.
        route_timeout_s: how long those waited, seconds.
        slot_fail: requests per slot this tick that the server itself failed (code 500;
            cancelled requests leave no error of the server's own).
        slot_calls: served requests per slot this tick.
        oom: table positions of pods whose working set exceeds their memory limit.
    """

    t: float
    route_requests: FloatArray
    route_failed: FloatArray
    route_error: FloatArray
    route_median_s: FloatArray
    route_sigma: FloatArray
    route_timeout_share: FloatArray
    route_timeout_s: FloatArray
    slot_fail: FloatArray
    slot_calls: FloatArray
    oom: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


@dataclass
class Fold:
    """Per-node results of folding call trees (arrays over all forest nodes)."""

    M: FloatArray
    V: FloatArray
    log_down: FloatArray
    succ: FloatArray
    q_node: FloatArray
    t_node: FloatArray
    l_call: FloatArray
    s_call: FloatArray
    q_call: FloatArray
    t_call: FloatArray
    reached: FloatArray
    """Probability that the parent gets as far as making this call (earlier required calls succeeded)."""

    @property
    def log_down_exp(self) -> FloatArray:
        return np.exp(self.log_down)


@dataclass
class OpInputs:
    """Own error and latency of one request class, per slot and per operation."""

    op_err: FloatArray
    op_mean: FloatArray
    op_var: FloatArray
    err_k: FloatArray
    own_mean_k: FloatArray
    own_var_k: FloatArray


@dataclass
class PodContext:
    """Per-pod load state shared by every request class of one flow computation."""

    latmult: FloatArray
    wait: FloatArray
    """Per pod: seconds a request waits in the pod's queue (closed-loop queue and CFS throttling)."""
    wait_var: FloatArray
    """Per pod: variance of that wait, seconds squared."""
    wk: FloatArray
    shed_k: FloatArray
    """Per slot: share of requests refused because the pod's queue is full."""
    denom_op: FloatArray
    reach_s: FloatArray


@dataclass(frozen=True)
class RequestClass:
    """Requests carrying one attribute set that subset faults match, per slot.

    Attributes:
        share: share of live requests in the class.
        err, latfac, latadd: per-slot own error, latency factor and added seconds for
            requests of the class (the matched effects applied in full).
    """

    share: float
    err: FloatArray
    latfac: FloatArray
    latadd: FloatArray


@dataclass
class ProbeInputs:
    """Per-node reachability and edge delay of the last flow, for re-folding probes."""

    reach_n: FloatArray
    slow_n: FloatArray
    e_delay: FloatArray


@dataclass(frozen=True)
class ProbeOutcome:
    """A synthetic request's success probability and latency distribution."""

    success: float
    median_s: float
    sigma: float
    timeout_share: float
    timeout_s: float

    def quantile_ms(self, q: float) -> float:
        return 1000.0 * route_quantile(q, self.median_s, self.timeout_share, self.timeout_s, self.sigma)


def route_quantile(q: float, median_s: float, timeout_share: float, timeout_s: float, sigma: float = 0.5) -> float:
    """Quantile of the two-part latency distribution of a route, seconds.

    The normal path is log-normal (``median_s``, ``sigma``); a share ``timeout_share``
    of requests instead waits ``timeout_s``.
    """
    from statistics import NormalDist

    if median_s <= 0:
        return 0.0
    if timeout_share >= 1.0 - 1e-9:
        return timeout_s
    target = q / (1.0 - timeout_share)
    normal_q = math.inf if target >= 1.0 else median_s * math.exp(sigma * NormalDist().inv_cdf(target))
    if timeout_share > 0 and timeout_s < normal_q:
        # The timeout mass sits below the normal quantile: shift the target down.
        target = (q - timeout_share) / (1.0 - timeout_share)
        if target <= 0:
            return timeout_s
        return median_s * math.exp(sigma * NormalDist().inv_cdf(min(target, 1 - 1e-12)))
    return timeout_s if math.isinf(normal_q) else normal_q


class TrafficModel:
    """Vectorised request flow for one app (see the module docstring)."""

    def __init__(self, app: AppModel, forest: CallForest, registry: SeriesRegistry, rng: np.random.Generator,
                 dt: float = 1.0) -> None:
        self.app = app
        self.forest = forest
        self.registry = registry
        self.rng = rng
        self.dt = dt
        self.load_factor = 1.0
        self.generator_up = True
        svc_names = forest.services
        self.S = len(svc_names)
        self.O = len(forest.ops)
        self.R = len(app.routes)
        self.svc_index = {n: i for i, n in enumerate(svc_names)}
        self.op_index = {pair: i for i, pair in enumerate(forest.ops)}
        ops = [app.service(s).operation(o) for s, o in forest.ops]
        self.op_svc = np.asarray([self.svc_index[s] for s, _ in forest.ops], dtype=np.int64)
        self.op_cpu_s = np.asarray([o.cpu_ms / 1000.0 for o in ops])
        self.op_lat_s = np.asarray([o.latency_ms / 1000.0 for o in ops])
        self.op_sigma = np.asarray([o.latency_sigma for o in ops])
        self.route_share = np.asarray([r.share for r in app.routes])
        self.roots = np.flatnonzero(forest.parent == -1)
        self.route_of_root = forest.route[self.roots]
        # Edge matrices: row S is the load generator (callers of route roots).
        self.edge_ok = np.ones((self.S + 1, self.S))
        self.edge_delay = np.zeros((self.S + 1, self.S))
        self.edge_drop = np.zeros((self.S + 1, self.S))
        self.node_caller = np.where(forest.caller_svc < 0, self.S, forest.caller_svc)
        self.node_logt = np.log(forest.timeout_s)
        self.parent_safe = np.where(forest.parent < 0, 0, forest.parent)
        self.has_parent = forest.parent >= 0
        # Static per-level slices, so the fold touches only small contiguous arrays.
        self.level_info = []
        for level in forest.levels:
            par = forest.parent[level]
            child_mask = par >= 0
            children = level[child_mask]
            times = forest.times[children]
            whole = np.floor(times)
            self.level_info.append((
                level,
                children,
                par[child_mask],
                np.where(forest.blocking[children], times, 0.0),
                # A fractional ``times`` is a call made on that share of requests: split into
                # whole calls (each must succeed) and one call made with probability ``frac``.
                (np.where(forest.required[children], whole, 0.0), np.where(forest.required[children],
                                                                           times - whole, 0.0)),
                (np.where(forest.blocking[children], whole, 0.0), np.where(forest.blocking[children],
                                                                           times - whole, 0.0)),
                self.node_logt[level],
                forest.timeout_s[level],
                child_mask,
                _group_heads(par[child_mask]),
            ))
        self.levels_top_down = list(reversed(forest.levels))
        edge_keys = sorted({(int(c), int(s)) for c, s in zip(self.node_caller, forest.svc, strict=True)})
        self.edge_keys = edge_keys
        eidx = {k: i for i, k in enumerate(edge_keys)}
        self.node_edge = np.asarray([eidx[(int(c), int(s))] for c, s in zip(self.node_caller, forest.svc,
                                                                              strict=True)], dtype=np.int64)
        self.E = len(edge_keys)
        # Topology window: per-minute bins of calls, errors and latency-weighted calls.
        self.topo_bins: deque[tuple[int, FloatArray, FloatArray, FloatArray]] = deque(maxlen=30)
        self._topo_minute = -1
        self.table: PodTable | None = None
        self._acc_calls = np.zeros(0)
        self._acc_routes = np.zeros(self.R)
        self._acc_ticks = 0
        self.flushed_calls_k = np.zeros(0)
        self.svc_served = np.zeros(self.S)
        """Requests served per service since the start, summed at each flush."""
        self.op_served = np.zeros(len(forest.ops))
        """Requests served per operation (the forest's operation index) since the start,
        summed at each flush (the store exporters' counters, :mod:`engine.sim.exporters`)."""
        self._flow_t = -math.inf
        self._flow_until = math.inf
        self._probe_inputs: ProbeInputs | None = None
        self._flow_util: FloatArray = np.zeros(0)
        self._fold_key = b""
        self._subtree_levels: dict[bytes, list[Any]] = {}
        """:meth:`_subset_levels` of the subtrees of the probes' roots, by the roots' bytes."""
        self._probe_memo: tuple[ProbeInputs, PodContext | None, PodTable, dict[tuple[bytes, bytes | None],
                                                                          list[ProbeOutcome]]] | None = None
        """(flow inputs, pod context, table, outcomes by roots and request class): :meth:`probe_many`."""
        self._fold_cache: Fold | None = None
        self._pod_context: PodContext | None = None
        self._mem_now: FloatArray = np.zeros(0)
        self._mem_base: FloatArray = np.zeros(0)
        self.util = np.zeros(64)
        self.mem = np.zeros(64)
        self.demand_per_req = np.zeros(64)
        """Per slot: CPU-seconds the pod's requests need per entry request (last flush)."""
        self.visits = np.zeros(64)
        """Per slot: calls the pod serves per entry request (last flush)."""
        self.spare = np.zeros(64)
        """Per slot: cores the pod's requests can get (limit less runaway work, last flush)."""
        self.wait = np.zeros(64)
        """Per slot: seconds a request waits for CPU in front of its own work."""
        self.wait_var = np.zeros(64)
        """Per slot: variance of that wait, seconds squared."""
        self.overflow = np.zeros(64)
        """Per slot: share of arriving requests refused by a full queue."""
        self._rec_k: FloatArray = np.zeros(0)
        lo, hi = app.load.think_time_s
        self.think_s = 0.5 * (lo + hi)
        """Mean think time of a virtual user, seconds (uniform ``between(lo, hi)``)."""
        healthy = self._healthy_response_s()
        self._resp_s = healthy
        self._resp_free = healthy
        """Mean response time at the last flow in which no pod's queue held users back, seconds
        (the ``R0`` of :meth:`_queues`)."""
        self._queued = False
        """Mean response time of an entry request at the last flow, seconds."""
        self.base_users = app.load.base_rps * (self.think_s + healthy)
        """Virtual users at the swing's midpoint and load factor 1 (a fluid count)."""
        self.last: TickResult | None = None
        self.route_window: deque[TickResult] = deque(maxlen=300)
        self._bucket_log = np.log(np.asarray(BUCKETS))
        self._buckets = np.asarray(BUCKETS)
        self._sink = registry.add("__sink__", {}, 0.0)
        registry.kill([self._sink])

    @property
    def sink_sid(self) -> int:
        """A dead series id for the pod table's series columns where a pod exports no such
        series (no HTTP histogram, no CPU or memory series yet): what the flush adds there is
        never exposed or scraped."""
        return self._sink

    # ----------------------------------------------------------------- persistent per-slot arrays

    def ensure_capacity(self, slots: int) -> None:
        if slots <= self.util.shape[0]:
            return
        size = max(slots, self.util.shape[0] * 2)
        for attr in ("util", "mem", "demand_per_req", "visits", "spare", "wait", "wait_var", "overflow"):
            old = getattr(self, attr)
            new = np.zeros(size)
            new[: old.shape[0]] = old
            setattr(self, attr, new)

    # ----------------------------------------------------------------- the tick

    def _healthy_response_s(self) -> float:
        """Mean response time of an entry request on the healthy app, seconds: the share-weighted
        sum of own mean latencies along the blocking calls (no queueing, no faults)."""
        f = self.forest
        mean = self.op_lat_s * np.exp(0.5 * self.op_sigma ** 2)
        lat = mean[f.op].copy()
        for level in f.levels:
            par = f.parent[level]
            keep = (par >= 0) & f.blocking[level]
            np.add.at(lat, par[keep], f.times[level[keep]] * lat[level[keep]])
        roots = self.roots
        return float(np.sum(self.route_share[self.route_of_root] * lat[roots]) / max(self.route_share.sum(), 1e-12))

    def users(self, t: float) -> float:
        """Virtual users of the load generator at run time ``t`` (a fluid count).

        ``base_users x (1 + swing x sin(2 pi t / period)) x load_factor``, where
        ``base_users = base_rps x (think + healthy response)``: the app model's ``base_rps`` is
        the healthy request rate, and the number of users that sends it at Locust's
        ``between(1, 10)`` think time (mean 5.5 s) is derived from it. Source of the sizing:
        assumption (the demos' manifests run ``USERS=10`` / ``LOCUST_USERS=10``, too few for
        error-share rules' minimum rates; the benchmark drives a busier shop).
        """
        load = self.app.load
        if not self.generator_up:
            return 0.0
        return self.base_users * (1.0 + load.swing * math.sin(2.0 * math.pi * t / load.period_s)) * self.load_factor

    def rate(self, t: float) -> float:
        """Mean entry request rate at run time ``t``, requests per second:
        ``users / (think + response)`` with the mean response time of the last flow."""
        return self.users(t) / (self.think_s + self._resp_s)

    def invalidate(self) -> None:
        """Force the flow to be recomputed at the next tick (pods or effects changed)."""
        self._flow_t = -math.inf

    def _fold(self, level_info: list[Any], op_err: FloatArray, op_mean: FloatArray, op_var: FloatArray,
              reach_n: FloatArray, slow_n: FloatArray, e_delay: FloatArray) -> Fold:
        """Fold call trees bottom-up over ``level_info`` (all nodes, or one route's or subtree's).

        One request class, on one-dimensional arrays (numpy's fastest indexing); several
        classes at once: :meth:`_fold_many`, whose rows are bit-for-bit this fold's.
        """
        f = self.forest
        N = f.size
        M = op_mean[f.op].copy()
        V = op_var[f.op].copy()
        own_ok = 1.0 - op_err[f.op]
        out = Fold(M=M, V=V, log_down=np.zeros(N), succ=np.zeros(N), q_node=np.zeros(N), t_node=np.zeros(N),
                   l_call=np.zeros(N), s_call=np.zeros(N), q_call=np.zeros(N), t_call=np.zeros(N),
                   reached=np.ones(N))
        log_down = out.log_down
        log_q = np.zeros(N)
        tmax = np.zeros(N)
        for level, children, parents, t_blk, (k_req, f_req), (k_blk, f_blk), logt, deadline, cmask, heads in level_info:
            mn, vn = M[level], V[level]
            qn = 1.0 - np.exp(log_q[level])
            tn = mn + tmax[level]
            fs = 1.0 - own_ok[level] * np.exp(log_down[level])
            d = e_delay[level]
            rn, sn = reach_n[level], slow_n[level]
            # Refused connections fail fast; their share pulls the call's latency down.
            fast = np.maximum(1.0 - rn - sn, 0.0)
            served_share = rn / np.maximum(rn + fast, 1e-12)
            lc = np.where(rn > 0, served_share * (mn + d) + (1.0 - served_share) * FAST_FAIL_S, FAST_FAIL_S)
            vc = served_share * vn
            ratio = 1.0 + vc / np.maximum(lc * lc, 1e-18)
            sigc = np.maximum(np.sqrt(np.log(ratio) + COMMON_SIGMA * COMMON_SIGMA), MIN_SIGMA)
            medc = lc / np.sqrt(ratio) / _EXP_HALF_COMMON_VAR
            p_over = 1.0 - normal_cdf((logt - np.log(np.maximum(medc, 1e-6))) / sigc)
            sub_over = (tn + d > deadline) * qn
            p_over_tot = 1.0 - (1.0 - p_over) * (1.0 - sub_over)
            qc = sn + rn * (1.0 - (1.0 - qn) * (1.0 - p_over))
            tc = np.where(sn + rn * p_over_tot > 1e-9, deadline, np.minimum(tn + d, deadline))
            sc = rn * (1.0 - fs) * (1.0 - p_over_tot)
            out.succ[level], out.q_node[level], out.t_node[level] = sc, qn, tn
            out.l_call[level], out.q_call[level], out.t_call[level], out.s_call[level] = lc, qc, tc, sigc
            if children.size:
                qcc = qc[cmask]
                scc = sc[cmask]
                log_sc = k_req * np.log(np.maximum(scc, 1e-12)) + np.log(np.maximum(1.0 - f_req * (1.0 - scc), 1e-12))
                # A handler returns at the first required call that fails: a call is made only
                # if every required call before it (siblings in call order) succeeded.
                excl = np.cumsum(log_sc) - log_sc
                reached = np.exp(excl - excl[heads])
                out.reached[children] = reached
                M += np.bincount(parents, weights=t_blk * lc[cmask] * reached, minlength=N)
                V += np.bincount(parents, weights=t_blk * vc[cmask] * reached, minlength=N)
                qr = qcc * reached
                log_q += np.bincount(parents, weights=k_blk * np.log(np.maximum(1.0 - qr, 1e-12))
                                     + np.log(np.maximum(1.0 - f_blk * qr, 1e-12)), minlength=N)
                log_down += np.bincount(parents, weights=log_sc, minlength=N)
                if (qcc > 1e-9).any():
                    np.maximum.at(tmax, parents, np.where((k_blk + f_blk > 0) & (qcc > 1e-9), tc[cmask], 0.0))
        return out

    def _fold_many(self, level_info: list[Any], classes: list[tuple[FloatArray, FloatArray, FloatArray]],
                   reach_n: FloatArray, slow_n: FloatArray, e_delay: FloatArray) -> list[Fold]:
        """:meth:`_fold` of several request classes at once.

        ``classes`` holds each class's per-operation (own error, mean, variance); the node
        inputs (``reach_n``, ``slow_n``, ``e_delay``, one value per node) are shared. The
        state is one flat array per quantity, class ``c``'s nodes at ``c x N``, so every
        gather and scatter is numpy's fast one-dimensional fancy indexing, and the arithmetic
        runs on ``C x level`` blocks. Every class is folded with the same element-wise
        arithmetic in the same order as alone (sums over siblings run in sibling order
        within a class: ``cumsum`` along the class's row, ``bincount`` over class-offset
        bins), so each class's result is bit-for-bit its own fold. One class is folded by
        :meth:`_fold` itself.
        """
        if len(classes) == 1:
            return [self._fold(level_info, *classes[0], reach_n, slow_n, e_delay)]
        f = self.forest
        N = f.size
        C = len(classes)
        op = f.op
        M = np.concatenate([op_mean[op] for _, op_mean, _ in classes])
        V = np.concatenate([op_var[op] for _, _, op_var in classes])
        own_ok = 1.0 - np.concatenate([op_err[op] for op_err, _, _ in classes])
        flat = C * N
        succ, q_node, t_node = np.zeros(flat), np.zeros(flat), np.zeros(flat)
        l_call, s_call, q_call, t_call = np.zeros(flat), np.zeros(flat), np.zeros(flat), np.zeros(flat)
        reached_all = np.ones(flat)
        log_down = np.zeros(flat)
        log_q = np.zeros(flat)
        tmax = np.zeros(flat)

        def rows(index: IntArray, width: int) -> IntArray:
            # ``index`` (into one class's ``width`` entries) for every class, class-major.
            return (index[None, :] + (np.arange(C, dtype=np.int64) * width)[:, None]).ravel()

        for level, children, parents, t_blk, (k_req, f_req), (k_blk, f_blk), logt, deadline, cmask, heads in level_info:
            n = level.shape[0]
            at = rows(level, N)
            mn, vn = M[at].reshape(C, n), V[at].reshape(C, n)
            qn = 1.0 - np.exp(log_q[at].reshape(C, n))
            tn = mn + tmax[at].reshape(C, n)
            fs = 1.0 - own_ok[at].reshape(C, n) * np.exp(log_down[at].reshape(C, n))
            d = e_delay[level]
            rn, sn = reach_n[level], slow_n[level]
            # Refused connections fail fast; their share pulls the call's latency down.
            fast = np.maximum(1.0 - rn - sn, 0.0)
            served_share = rn / np.maximum(rn + fast, 1e-12)
            lc = np.where(rn > 0, served_share * (mn + d) + (1.0 - served_share) * FAST_FAIL_S, FAST_FAIL_S)
            vc = served_share * vn
            ratio = 1.0 + vc / np.maximum(lc * lc, 1e-18)
            sigc = np.maximum(np.sqrt(np.log(ratio) + COMMON_SIGMA * COMMON_SIGMA), MIN_SIGMA)
            medc = lc / np.sqrt(ratio) / _EXP_HALF_COMMON_VAR
            p_over = 1.0 - normal_cdf((logt - np.log(np.maximum(medc, 1e-6))) / sigc)
            sub_over = (tn + d > deadline) * qn
            p_over_tot = 1.0 - (1.0 - p_over) * (1.0 - sub_over)
            qc = sn + rn * (1.0 - (1.0 - qn) * (1.0 - p_over))
            tc = np.where(sn + rn * p_over_tot > 1e-9, deadline, np.minimum(tn + d, deadline))
            sc = rn * (1.0 - fs) * (1.0 - p_over_tot)
            succ[at], q_node[at], t_node[at] = sc.ravel(), qn.ravel(), tn.ravel()
            l_call[at], q_call[at], t_call[at], s_call[at] = lc.ravel(), qc.ravel(), tc.ravel(), sigc.ravel()
            if children.size:
                nc = children.shape[0]
                kids = rows(np.flatnonzero(cmask), n)
                qcc = qc.ravel()[kids].reshape(C, nc)
                scc = sc.ravel()[kids].reshape(C, nc)
                log_sc = k_req * np.log(np.maximum(scc, 1e-12)) + np.log(np.maximum(1.0 - f_req * (1.0 - scc), 1e-12))
                # A handler returns at the first required call that fails: a call is made only
                # if every required call before it (siblings in call order) succeeded.
                excl = np.cumsum(log_sc, axis=1) - log_sc
                reached = np.exp(excl - excl.ravel()[rows(heads, nc)].reshape(C, nc))
                reached_all[rows(children, N)] = reached.ravel()
                bins = rows(parents, N)
                M += np.bincount(bins, weights=(t_blk * lc.ravel()[kids].reshape(C, nc) * reached).ravel(),
                                 minlength=flat)
                V += np.bincount(bins, weights=(t_blk * vc.ravel()[kids].reshape(C, nc) * reached).ravel(),
                                 minlength=flat)
                qr = qcc * reached
                log_q += np.bincount(bins, weights=(k_blk * np.log(np.maximum(1.0 - qr, 1e-12))
                                                    + np.log(np.maximum(1.0 - f_blk * qr, 1e-12))).ravel(),
                                     minlength=flat)
                log_down += np.bincount(bins, weights=log_sc.ravel(), minlength=flat)
                if (qcc > 1e-9).any():
                    # Where no call can time out the value is 0 and tmax (>= 0) keeps its own.
                    np.maximum.at(tmax, bins, np.where((k_blk + f_blk > 0) & (qcc > 1e-9),
                                                       tc.ravel()[kids].reshape(C, nc), 0.0).ravel())

        def part(a: FloatArray, c: int) -> FloatArray:
            return a[c * N:(c + 1) * N]

        return [Fold(M=part(M, c), V=part(V, c), log_down=part(log_down, c), succ=part(succ, c),
                     q_node=part(q_node, c), t_node=part(t_node, c), l_call=part(l_call, c), s_call=part(s_call, c),
                     q_call=part(q_call, c), t_call=part(t_call, c), reached=part(reached_all, c))
                for c in range(C)]

    def _subset_levels(self, nodes: IntArray) -> list[Any]:
        """``level_info`` restricted to a set of nodes (closed under children)."""
        keep = np.zeros(self.forest.size, dtype=bool)
        keep[nodes] = True
        out = []
        for level, children, parents, t_blk, (k_req, f_req), (k_blk, f_blk), logt, deadline, cmask, _h in \
                self.level_info:
            lm = keep[level]
            if not lm.any():
                continue
            cm = keep[children]
            sub_level = level[lm]
            sub_cmask = cmask[lm]
            out.append((sub_level, children[cm], parents[cm], t_blk[cm], (k_req[cm], f_req[cm]),
                        (k_blk[cm], f_blk[cm]), logt[lm], deadline[lm], sub_cmask, _group_heads(parents[cm])))
        return out

    def subtree(self, node: int | IntArray) -> IntArray:
        """Node ``node`` (or every node of an array of them) and every node below."""
        parent = self.forest.parent
        inside = np.zeros(self.forest.size, dtype=bool)
        inside[node] = True
        for level in self.levels_top_down:
            has = parent[level] >= 0
            idx = level[has]
            inside[idx] |= inside[parent[idx]]
        return np.flatnonzero(inside)

    def probe(self, root: int, request_class: RequestClass | None) -> ProbeOutcome:
        """Outcome of one synthetic request entering at call-tree node ``root``.

        Args:
            root: a route's root node (a user request) or any node (a direct call to that
                operation, as a synthetic check would make it).
            request_class: per-slot own behaviour for the probe's request attributes (the
                simulator builds it from the attribute-matched effects), or None for a
                request that no subset fault matches.

        Returns:
            The request's success probability and latency distribution, from the state of
            the last flow recomputation.
        """
        return self.probe_many(np.asarray([root], dtype=np.int64), request_class)[0]

    def probe_many(self, roots: IntArray, request_class: RequestClass | None) -> list[ProbeOutcome]:
        """:meth:`probe` at each of ``roots``, folding the union of their subtrees once."""
        pi = self._probe_inputs
        tab = self.table
        assert pi is not None and tab is not None
        # Memoised per flow: the outcome depends only on the flow's inputs (replaced, never
        # mutated, by each :meth:`_flow` and :meth:`reset_table`), the roots and the class.
        memo = self._probe_memo
        if memo is None or memo[0] is not pi or memo[1] is not self._pod_context or memo[2] is not tab:
            memo = self._probe_memo = (pi, self._pod_context, tab, {})
        key = (roots.astype(np.int64).tobytes(), None if request_class is None else
               b"".join((request_class.err.tobytes(), request_class.latfac.tobytes(), request_class.latadd.tobytes())))
        hit = memo[3].get(key)
        if hit is None:
            hit = memo[3][key] = self._probe_uncached(roots.astype(np.int64), request_class)
        return list(hit)

    def _probe_uncached(self, roots: IntArray, request_class: RequestClass | None) -> list[ProbeOutcome]:
        pi = self._probe_inputs
        tab = self.table
        assert pi is not None and tab is not None
        if request_class is None:
            inputs = self._op_inputs(tab.k_err_base, tab.k_latfac_base, tab.k_latadd_base)
        else:
            inputs = self._op_inputs(request_class.err, request_class.latfac, request_class.latadd)
        levels = self._subtree_levels.get(roots.tobytes())
        if levels is None:
            # The forest is fixed: a set of roots always has the same subtree levels.
            levels = self._subtree_levels[roots.tobytes()] = self._subset_levels(self.subtree(roots))
        fold = self._fold(levels, inputs.op_err, inputs.op_mean, inputs.op_var, pi.reach_n,
                          pi.slow_n, pi.e_delay)
        out = []
        for root in roots.tolist():
            ratio = 1.0 + fold.V[root] / max(float(fold.M[root]) ** 2, 1e-18)
            median = float(fold.l_call[root]) / math.sqrt(ratio) / math.exp(0.5 * COMMON_SIGMA * COMMON_SIGMA)
            out.append(ProbeOutcome(
                success=float(np.clip(fold.succ[root], 0.0, 1.0)),
                median_s=median,
                sigma=float(fold.s_call[root]),
                timeout_share=float(fold.q_call[root]),
                timeout_s=float(fold.t_call[root]),
            ))
        return out

    def _op_inputs(self, err: FloatArray, latfac: FloatArray, latadd: FloatArray) -> OpInputs:
        """Per-slot own error/latency and their per-operation means for one request class."""
        pc = self._pod_context
        tab = self.table
        assert tab is not None and pc is not None
        n_ops = self.O
        err_k = 1.0 - (1.0 - err) * (1.0 - BACKGROUND_ERROR)
        lat_k = self.op_lat_s[tab.k_op] * latfac * pc.latmult[tab.k_pod] + latadd
        sig_k = self.op_sigma[tab.k_op]
        wk, denom_op, shed_k = pc.wk, pc.denom_op, pc.shed_k
        op_err = np.bincount(tab.k_op, weights=wk * (1.0 - (1.0 - err_k) * (1.0 - shed_k)), minlength=n_ops) / denom_op
        # Latencies travel as mean and variance (log-normal parts summed by moment matching,
        # the Fenton-Wilkinson approximation), so deep call trees get the narrower relative
        # spread that sums of independent latencies have. The queue wait in front of the
        # request has the pod's wait variance (:meth:`_queues`).
        wait_k = pc.wait[tab.k_pod]
        own_mean_k = lat_k * np.exp(0.5 * sig_k * sig_k)
        own_var_k = (np.exp(sig_k * sig_k) - 1.0) * own_mean_k * own_mean_k + pc.wait_var[tab.k_pod]
        own_mean_k = own_mean_k + wait_k
        op_mean = np.bincount(tab.k_op, weights=wk * own_mean_k, minlength=n_ops) / denom_op
        op_var = np.bincount(tab.k_op, weights=wk * own_var_k, minlength=n_ops) / denom_op
        static_mean = self.op_lat_s * np.exp(0.5 * self.op_sigma ** 2)
        unserved = op_mean <= 0
        op_mean = np.where(unserved, static_mean, op_mean)
        op_var = np.where(unserved, (np.exp(self.op_sigma ** 2) - 1.0) * static_mean ** 2, op_var)
        return OpInputs(op_err, op_mean, op_var, err_k, own_mean_k, own_var_k)

    def _mix(self, parts: list[tuple[float, Fold]]) -> Fold:
        """Mixture of folds of request classes, weighted by their share of requests."""
        if len(parts) == 1:
            return parts[0][1]
        M = sum(w * fd.M for w, fd in parts)
        second = sum(w * (fd.V + fd.M * fd.M) for w, fd in parts)
        assert isinstance(M, np.ndarray) and isinstance(second, np.ndarray)

        def lin(attr: str) -> FloatArray:
            out = sum(w * getattr(fd, attr) for w, fd in parts)
            assert isinstance(out, np.ndarray)
            return out

        down = lin("log_down_exp")
        return Fold(M=M, V=np.maximum(second - M * M, 0.0), log_down=np.log(np.maximum(down, 1e-300)),
                    succ=lin("succ"), q_node=lin("q_node"), t_node=lin("t_node"), l_call=lin("l_call"),
                    s_call=lin("s_call"), q_call=lin("q_call"), t_call=lin("t_call"), reached=lin("reached"))

    def _flow(self, t: float) -> None:
        """Recompute per-request probabilities and latencies of every node, op and slot.

        Depends on pod state, effects and utilisation, not on the tick's request counts,
        so it runs when those change and otherwise every :data:`FLOW_EVERY_S` seconds.
        Requests carrying attributes that a subset fault matches (``Effect.match``) form
        their own class: the trees are folded once per class and mixed by share, so a bug
        that breaks every JPY request fails JPY requests whole, not each call at random.
        """
        self.flush()
        f = self.forest
        tab = self.table
        assert tab is not None
        S = self.S
        util = self.util[tab.slot]
        self._flow_util = util.copy()
        self._queues(t, tab)
        wait = self.wait[tab.slot]
        u = np.minimum(util, RHO_CAP)
        latmult = 1.0 + u * u / (1.0 - u)
        shed = self.overflow[tab.slot]
        answering = (t >= tab.serving_since) & tab.up & ~tab.hung & tab.running
        later = tab.serving_since[tab.serving_since > t]
        self._flow_until = float(later.min()) if later.size else math.inf
        blackhole = (~tab.up | tab.hung) & (tab.weight > 0)
        w = tab.weight
        reach_p = w * answering
        reach_s = np.bincount(tab.svc, weights=reach_p, minlength=S).astype(np.float64)
        slow_s = np.bincount(tab.svc, weights=w * blackhole, minlength=S)
        kp = tab.k_pod
        wk = reach_p[kp]
        shed_k = shed[kp]
        self._pod_context = PodContext(latmult=latmult, wait=wait, wait_var=self.wait_var[tab.slot], wk=wk,
                                       shed_k=shed_k,
                                       denom_op=np.maximum(reach_s[self.op_svc], 1e-12), reach_s=reach_s)

        # Nodes, bottom-up, once per request class.
        caller, svc = self.node_caller, f.svc
        e_ok = self.edge_ok[caller, svc]
        e_delay = self.edge_delay[caller, svc]
        e_drop = self.edge_drop[caller, svc]
        reach_n = e_ok * (1.0 - e_drop) * reach_s[svc]
        slow_n = e_ok * (e_drop + (1.0 - e_drop) * slow_s[svc])
        self._probe_inputs = ProbeInputs(reach_n, slow_n, e_delay)
        base = self._op_inputs(tab.k_err_base, tab.k_latfac_base, tab.k_latadd_base)
        rest = 1.0 - sum(c.share for c in tab.classes)
        parts: list[tuple[float, Fold]] = []
        slot_parts: list[tuple[float, OpInputs]] = []
        classes = [(rest, base)] + [(c.share, self._op_inputs(c.err, c.latfac, c.latadd)) for c in tab.classes]
        # The fold depends only on per-operation and per-node inputs: when a pod change left
        # them bit-for-bit equal (a new pod still pulling its image), reuse the last fold.
        key = b"".join([reach_n.tobytes(), slow_n.tobytes(), e_delay.tobytes()]
                       + [np.float64(w).tobytes() + x.op_err.tobytes() + x.op_mean.tobytes() + x.op_var.tobytes()
                          for w, x in classes])
        if key == self._fold_key and self._fold_cache is not None:
            fold = self._fold_cache
            slot_parts = classes
        else:
            folds = self._fold_many(self.level_info, [(x.op_err, x.op_mean, x.op_var) for _, x in classes],
                                    reach_n, slow_n, e_delay)
            parts = [(weight, fd) for (weight, _), fd in zip(classes, folds, strict=True)]
            slot_parts = classes
            fold = self._mix(parts)
            self._fold_key, self._fold_cache = key, fold
        M, V, log_down = fold.M, fold.V, fold.log_down
        succ, q_node, t_node = fold.succ, fold.q_node, fold.t_node
        l_call, s_call, q_call, t_call = fold.l_call, fold.s_call, fold.q_call, fold.t_call
        err_k = sum(wt * x.err_k for wt, x in slot_parts)
        own_mean_k = sum(wt * x.own_mean_k for wt, x in slot_parts)
        own_var_k = sum(wt * x.own_var_k for wt, x in slot_parts)
        op_mean = sum(wt * x.op_mean for wt, x in slot_parts)
        op_var = sum(wt * x.op_var for wt, x in slot_parts)
        assert isinstance(err_k, np.ndarray) and isinstance(own_mean_k, np.ndarray)
        assert isinstance(own_var_k, np.ndarray) and isinstance(op_mean, np.ndarray) and isinstance(op_var, np.ndarray)
        n_ops = self.O

        # Nodes, top-down: the share of route requests that reach each node.
        N = f.size
        reach_path = np.ones(N)
        made_path = np.ones(N)
        for level in self.levels_top_down:
            above = np.where(self.has_parent[level], reach_path[self.parent_safe[level]], 1.0) * fold.reached[level]
            made_path[level] = above
            reach_path[level] = above * reach_n[level]
        self._served_per_req = f.weight * reach_path
        self._made_per_req = f.weight * made_path
        self._fail_n = 1.0 - succ
        self._l_call = l_call

        # Operations, weighted by expected traffic.
        served = self.route_share[f.route] * self._served_per_req
        served_op = np.bincount(f.op, weights=served, minlength=n_ops)
        safe_op = np.maximum(served_op, 1e-12)
        down_ok_op = np.where(served_op > 0, np.bincount(f.op, weights=served * np.exp(log_down), minlength=n_ops)
                              / safe_op, 1.0)
        down_m_op = np.bincount(f.op, weights=served * (M - op_mean[f.op]), minlength=n_ops) / safe_op
        down_v_op = np.bincount(f.op, weights=served * (V - op_var[f.op]), minlength=n_ops) / safe_op
        q_op = np.bincount(f.op, weights=served * q_node, minlength=n_ops) / safe_op
        t_op = np.bincount(f.op, weights=served * t_node, minlength=n_ops) / safe_op

        # The server-side budget of each call: the caller's deadline less the network delay
        # already spent on the way in (geometric mean over the op's call sites, by traffic).
        budget_n = np.maximum(f.timeout_s - e_delay, 1e-3)
        log_budget_op = np.where(served_op > 0, np.bincount(f.op, weights=served * np.log(budget_n),
                                                             minlength=n_ops) / safe_op, math.log(60.0))

        # Slots: outcome shares and latency distribution.
        self._share_k = wk / np.maximum(reach_s[self.op_svc[tab.k_op]], 1e-12)
        rec = 1.0 - shed_k  # a request refused by a full queue never reaches the handler
        f500 = 1.0 - (1.0 - err_k) * down_ok_op[tab.k_op]
        mean_tot = own_mean_k + down_m_op[tab.k_op]
        ratio_k = 1.0 + (own_var_k + down_v_op[tab.k_op]) / np.maximum(mean_tot * mean_tot, 1e-18)
        sig_k = np.sqrt(np.log(ratio_k) + COMMON_SIGMA * COMMON_SIGMA)
        med_k = mean_tot / np.sqrt(ratio_k) / np.exp(0.5 * COMMON_SIGMA * COMMON_SIGMA)
        log_med = np.log(np.maximum(med_k, 1e-6))
        qk = q_op[tab.k_op]
        tk = t_op[tab.k_op]
        lb_k = log_budget_op[tab.k_op]
        budget_k = np.exp(lb_k)
        # Cancelled: the request's server-side time passes its budget; the server records the
        # cancellation (its third code) with the budget as its duration.
        p_cancel = (1.0 - qk) * (1.0 - normal_cdf((lb_k - log_med) / sig_k)) + qk * (tk > budget_k)
        p500 = (1.0 - p_cancel) * f500
        self._p_k = rec[:, None] * np.stack((1.0 - p_cancel - p500, p500, p_cancel), axis=1)
        self._pfail_k = rec * p500
        self._rec_k = rec
        z = (self._bucket_log[None, :] - log_med[:, None]) / sig_k[:, None]
        cdf = (1.0 - qk)[:, None] * normal_cdf(z) + (qk[:, None] * (tk[:, None] <= self._buckets[None, :]))
        cdf = np.where(self._buckets[None, :] >= budget_k[:, None], 1.0, cdf) * rec[:, None]
        self._cdf_k = np.concatenate((cdf, rec[:, None]), axis=1)
        self._mean_k = rec * ((1.0 - p_cancel) * np.minimum((1.0 - qk) * mean_tot + qk * tk, budget_k)
                              + p_cancel * budget_k)
        self._cpu_per_call_k = self.op_cpu_s[tab.k_op]

        roots = self.roots
        self._route_error = np.clip(1.0 - succ[roots], 0.0, 1.0)
        ratio_r = 1.0 + (V[roots]) / np.maximum(M[roots] * M[roots], 1e-18)
        self._route_median = l_call[roots] / np.sqrt(ratio_r) / np.exp(0.5 * COMMON_SIGMA * COMMON_SIGMA)
        self._route_sigma = s_call[roots]
        self._route_q = q_call[roots]
        self._route_t = t_call[roots]
        # Closed loop: the users' mean wait for an answer (refused requests come back at once,
        # timed-out ones after their deadline).
        resp = (1.0 - self._route_q) * l_call[roots] + self._route_q * self._route_t
        share_r = self.route_share[self.route_of_root]
        self._resp_s = float(np.sum(share_r * resp) / max(float(share_r.sum()), 1e-12))
        if not self._queued:
            self._resp_free = self._resp_s
        self._flow_t = t

    def step(self, t: float) -> TickResult:
        """Advance one tick ending at run time ``t``.

        Per tick only the request counts are drawn and attributed to slots; the counters,
        histograms, CPU and topology bins are folded in by :meth:`flush`, which runs at
        least every flow interval and before any scrape (results are identical to
        folding every tick, because the per-request factors are constant in between).
        """
        f = self.forest
        tab = self.table
        assert tab is not None, "rebuild() before step()"
        if t >= self._flow_until or self._flow_t == -math.inf:
            self._flow(t)
        elif t - self._flow_t >= FLOW_EVERY_S:
            util = self.util[tab.slot]
            if util.shape == self._flow_util.shape and bool(np.all(
                    np.abs(util - self._flow_util) < np.where(util > 0.9, 0.01, UTIL_TOLERANCE))):
                self._flow_t = t  # load moved too little to change latency or queues: keep the flow
            else:
                self._flow(t)
        minute = int(t // 60)
        if minute != self._topo_minute:
            self.flush()
            self.topo_bins.append((minute, np.zeros(self.E), np.zeros(self.E), np.zeros(self.E)))
            self._topo_minute = minute
        n_r = self.rng.poisson(self.rate(t) * self.route_share * self.dt).astype(np.float64)
        failed = self.rng.binomial(n_r.astype(np.int64), self._route_error).astype(np.float64)
        served_op = np.bincount(f.op, weights=n_r[f.route] * self._served_per_req, minlength=self.O)
        calls_k = served_op[tab.k_op] * self._share_k
        self._acc_calls += calls_k
        self._acc_routes += n_r
        self._acc_ticks += 1

        age = np.maximum(t - tab.started, 0.0)
        mem = np.where(tab.running, self._mem_base + tab.leak_bps * age, 0.0)
        oom = np.flatnonzero(tab.running & (mem > tab.mem_limit))
        self._mem_now = mem

        result = TickResult(
            t=t,
            route_requests=n_r,
            route_failed=failed,
            route_error=self._route_error,
            route_median_s=self._route_median,
            route_sigma=self._route_sigma,
            route_timeout_share=self._route_q,
            route_timeout_s=self._route_t,
            slot_fail=calls_k * self._pfail_k,
            slot_calls=calls_k,
            oom=oom,
        )
        self.last = result
        self.route_window.append(result)
        return result

    def flush(self) -> None:
        """Fold the requests accumulated since the last flush into series, CPU and topology."""
        tab = self.table
        if tab is None or self._acc_ticks == 0:
            return
        f = self.forest
        dt = self.dt * self._acc_ticks
        calls_k = self._acc_calls
        vals = self.registry.values
        inc = calls_k[:, None] * self._p_k
        vals[self._k_sid_http] += inc[tab.k_http].ravel()
        P = len(tab.names)
        pod_calls = np.zeros(P)
        pod_count = np.zeros(P)
        pod_cpu = np.zeros(P)
        pod_sum = np.zeros(P)
        pod_b = np.zeros((P, len(BUCKETS) + 1))
        if tab.k_starts.size:
            pod_calls[tab.k_owner] = np.add.reduceat(calls_k, tab.k_starts)
            pod_count[tab.k_owner] = np.add.reduceat(calls_k * self._rec_k, tab.k_starts)
            pod_cpu[tab.k_owner] = np.add.reduceat(calls_k * self._cpu_per_call_k, tab.k_starts)
            pod_sum[tab.k_owner] = np.add.reduceat(calls_k * self._mean_k, tab.k_starts)
            pod_b[tab.k_owner] = np.add.reduceat(calls_k[:, None] * self._cdf_k, tab.k_starts, axis=0)
        http = tab.http
        vals[tab.hist_sids[http].ravel()] += pod_b[http].ravel()
        vals[tab.sum_sid[http]] += pod_sum[http]
        vals[tab.count_sid[http]] += pod_count[http]
        self._saturation(tab, pod_calls / dt, pod_cpu / dt, float(self._acc_routes.sum()) / dt, dt)
        self.mem[tab.slot] = self._mem_now
        vals[tab.mem_sid] = self._mem_now
        self._mem_base = tab.mem_idle * (1.0 + 0.1 * np.minimum(self.util[tab.slot], 1.0)) + tab.mem_extra
        self.flushed_calls_k = calls_k.copy()
        self.svc_served += np.bincount(tab.svc[tab.k_pod], weights=calls_k, minlength=self.S)
        self.op_served += np.bincount(tab.k_op, weights=calls_k, minlength=self.op_served.shape[0])
        if self.topo_bins:
            _, e_calls, e_err, e_lat = self.topo_bins[-1]
            made = self._acc_routes[f.route] * self._made_per_req
            e_calls += np.bincount(self.node_edge, weights=made, minlength=self.E)
            e_err += np.bincount(self.node_edge, weights=made * self._fail_n, minlength=self.E)
            e_lat += np.bincount(self.node_edge, weights=made * self._l_call, minlength=self.E)
        self._acc_calls = np.zeros_like(calls_k)
        self._acc_routes = np.zeros(self.R)
        self._acc_ticks = 0

    def _queues(self, t: float, tab: PodTable) -> None:
        """Set each pod's queue wait and overflow share for the flow at run time ``t``.

        From the last flush, per pod: ``a`` the CPU-seconds its requests need per entry
        request, ``v`` the calls it serves per entry request and ``K`` the cores its requests
        can get (``L - H``: the limit, or 1 core without one (assumption), less housekeeping
        and runaway work). The users alone would send ``r0 = users / (think + R0)`` entry
        requests per second (``R0`` the response time of the last flow in which no queue held
        users back); a pod can
        carry at most ``r_max = 0.95 K / a``. When the tightest pod caps the rate below
        ``r0``, the closed loop settles at ``r = min r_max`` with response time
        ``users / r - think``: the excess ``E = users / r - think - R0`` is spent queued at
        the binding pods, each of whose calls waits ``E / (sum of their v)``. The queue then
        holds ``W v r`` requests; past :attr:`PodTable.queue_max` the wait is capped and the
        rest is refused (``overflow``). A pod with ``K <= 0`` is starved (no steady state):
        its calls wait :data:`STARVED_WAIT_S`, so every caller's deadline expires.
        Every pod at or above its quota also waits on average ``0.5 x period x f^2`` for the
        next CFS period, ``f = 1 - L / demand`` the throttled part of each period.
        """
        slot = tab.slot
        a = self.demand_per_req[slot]
        v = self.visits[slot]
        spare = self.spare[slot]
        run = tab.running
        load = run & (a > 0) & (v > 0)
        starved = load & (spare <= 0)
        users = self.users(t)
        r0_resp = self._resp_free
        r_free = users / (self.think_s + r0_resp) if users > 0 else 0.0
        fits = load & ~starved
        r_max = np.where(fits, RHO_CAP * spare / np.maximum(a, 1e-12), np.inf)
        wait = np.zeros(slot.shape[0])
        queued = np.zeros(slot.shape[0])
        overflow = np.zeros(slot.shape[0])
        r_star = float(r_max.min()) if r_max.size else math.inf
        self._queued = bool(fits.any() and r_star < r_free) or bool(starved.any())
        if fits.any() and r_star < r_free:
            binding = fits & (r_max <= r_star * (1.0 + 1e-6))
            excess = users / max(r_star, 1e-9) - self.think_s - r0_resp
            wait[binding] = max(excess, 0.0) / max(float(v[binding].sum()), 1e-12)
            queued = wait * v * r_star
            over = binding & (queued > tab.queue_max)
            if over.any():
                overflow[over] = 1.0 - tab.queue_max[over] / queued[over]
                wait[over] = tab.queue_max[over] / np.maximum(v[over] * r_star, 1e-12)
                queued[over] = tab.queue_max[over]
        wait[starved] = STARVED_WAIT_S
        demand = self.util[slot] * tab.cpu_cap
        frac = np.maximum(1.0 - tab.cpu_cap / np.maximum(demand, 1e-12), 0.0)
        throttle = 0.5 * CFS_PERIOD_S * frac * frac
        self.wait[slot] = np.where(run, wait + throttle, 0.0)
        # The queue of a saturated closed loop holds about ``queued`` users whose count varies
        # little (relative spread ~ 1/sqrt(queued)); the throttling wait is exponential-like.
        self.wait_var[slot] = np.where(run, wait * wait / np.maximum(queued, 1.0) + throttle * throttle, 0.0)
        self.overflow[slot] = np.where(run, overflow, 0.0)

    def _saturation(self, tab: PodTable, offered_rps: FloatArray, offered_cpu: FloatArray, entry_rps: float,
                    dt: float) -> None:
        """Record each pod's CPU load of the last ``dt`` seconds and export its CPU and CFS counters.

        Args:
            tab: the pod table.
            offered_rps: requests per second offered to each pod (before a full queue refuses any).
            offered_cpu: the CPU those requests need, cores.
            entry_rps: entry requests per second over the same window.
            dt: seconds since the last flush.

        The pod gets ``L`` cores (its limit, a CFS quota of ``L x`` :data:`CFS_PERIOD_S` per
        period; 1 core when it has none, an assumption) and runs ``H`` = housekeeping plus
        any runaway work (a CPU-pressure fault) besides its requests' ``A``.
        ``container_cpu_usage_seconds_total`` grows by ``min(A' + H, L) dt`` (``A'`` the
        admitted work). ``container_cpu_cfs_periods_total`` counts the periods with runnable
        work (every period of a busy pod; for a quiet pod, periods in which a request or a
        housekeeping wake-up arrives, 1 per second assumed), ``..._throttled_periods_total``
        those that ran out of quota: all of them at or above the quota, else the Poisson
        chance that a period's requests need more than its quota.
        """
        slot = tab.slot
        run = tab.running
        L = tab.cpu_cap
        H = np.where(run, IDLE_CPU + tab.cpu_extra, 0.0)
        A = np.where(run, offered_cpu, 0.0)
        D = A + H
        self.util[slot] = D / L
        per_call = offered_cpu / np.maximum(offered_rps, 1e-12)
        if entry_rps > 0:
            # Smoothed over about LOAD_SMOOTH_S: a flush window of a few ticks holds few requests,
            # and the queue's steady state should not follow their Poisson noise.
            keep = math.exp(-dt / LOAD_SMOOTH_S)
            for arr, x in ((self.demand_per_req, A / entry_rps),
                           (self.visits, np.where(run, offered_rps, 0.0) / entry_rps)):
                old = arr[slot]
                arr[slot] = np.where(old > 0, keep * old + (1.0 - keep) * x, x)
        self.spare[slot] = L - H
        vals = self.registry.values
        overflow = self.overflow[slot]
        used = np.minimum(A * (1.0 - overflow) + H, L)
        vals[tab.cpu_sid] += used * dt
        lim = tab.has_limit & run
        if lim.any():
            busy = (D >= L) | (self.wait[slot] > 0.5 * CFS_PERIOD_S) | (tab.cpu_extra > 0)
            m = offered_rps * CFS_PERIOD_S
            active = np.where(busy, 1.0, 1.0 - np.exp(-(offered_rps + 1.0) * CFS_PERIOD_S))
            headroom = (L - H) * CFS_PERIOD_S / np.maximum(per_call, 1e-9)
            tail = 1.0 - normal_cdf((headroom + 0.5 - m) / np.sqrt(np.maximum(m, 1e-9)))
            thr_share = np.where(busy, 1.0, np.where(m > 0, np.minimum(tail, active), 0.0))
            periods = dt / CFS_PERIOD_S
            vals[tab.cfs_sid[lim, 0]] += periods * active[lim]
            vals[tab.cfs_sid[lim, 1]] += periods * thr_share[lim]

    def reset_table(self, table: PodTable) -> None:
        """Install a new pod table (after flushing the old one's accumulators)."""
        self.flush()
        self.table = table
        K = table.k_pod.shape[0]
        self._acc_calls = np.zeros(K)
        self._acc_routes = np.zeros(self.R)
        self._acc_ticks = 0
        self._k_sid_http = table.k_sid[table.k_http].ravel()
        self.flushed_calls_k = np.zeros(K)
        self._mem_now = self.mem[table.slot].copy()
        self._mem_base = table.mem_idle * (1.0 + 0.1 * np.minimum(self.util[table.slot], 1.0)) + table.mem_extra
        self.invalidate()
