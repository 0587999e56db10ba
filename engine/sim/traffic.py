"""The load generator and the request flow through the call trees, one tick at a time.

Each tick (1 s by default):

1. The load generator draws each route's request count from a Poisson distribution
   around ``base_rps * share * (1 + swing * sin(2 pi t / period)) * load_factor``.
2. Pods decide what they can do: a pod receives a share of its service's calls only while
   it is a ready endpoint; of those, it answers only once its application has started
   (else the caller gets *connection refused*), and not at all when its node is gone or
   its process hangs (the caller waits for its deadline). CPU use from the previous tick
   sets each pod's utilisation ``u``: own latency is multiplied by ``1 + u^2 / (1 - u)``
   (an M/M/1-like queueing delay, capped at u = 0.95) and above ``u = 1`` the excess
   share ``1 - 1/u`` of requests is shed with 503.
3. Call trees are folded bottom-up (deepest level first) with the rules in
   :mod:`engine.sim.calltree`; each node keeps the median latency of its normal path
   (log-normal, carried as mean and variance so that sums of calls narrow as they should),
   the probability that a timeout occurred below it and how long that took, and its
   success probability. A call times out when its latency exceeds the caller's deadline
   (the log-normal tail of the call's own distribution).
4. Served calls flow top-down (an unreachable service's downstream sees nothing), are
   attributed to operations and pods, and increment the standard HTTP server series:
   ``http_requests_total{handler, method, code}`` and the
   ``http_request_duration_seconds`` histogram (Prometheus client default buckets), plus
   cAdvisor's ``container_cpu_usage_seconds_total`` and
   ``container_memory_working_set_bytes``.

Background errors: every operation fails with probability :data:`BACKGROUND_ERROR`
(0.002 %), the residual error rate of a healthy service.
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

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Histogram bucket bounds, seconds: the Prometheus client libraries' default buckets."""
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
MAX_LATENCY_MULT = 20.0
FAST_FAIL_S = 0.002
"""Latency of a call refused at connect time."""
FLOW_EVERY_S = 5.0
"""Per-request probabilities and latencies are rechecked this often, seconds (and
recomputed at once when pods, effects or edges change): load-driven latency follows
utilisation with at most this lag."""
UTIL_TOLERANCE = 0.05
"""A periodic recomputation is skipped while no pod's CPU utilisation moved by more than
this (absolute, 5 points; 1 point for pods above 0.9, where shedding starts): below 0.5 the
latency multiplier ``1 + u^2 / (1 - u)`` then moves by under 5 %, less than the run-to-run
noise of the latency itself."""


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
    """Series ids per slot and code: shape (K, 3) for codes 200, 500, 503."""
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
        slot_fail: failed requests per slot this tick (codes 500 + 503).
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
    wk: FloatArray
    shed_k: FloatArray
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
        self._flow_t = -math.inf
        self._flow_until = math.inf
        self._probe_inputs: ProbeInputs | None = None
        self._flow_util: FloatArray = np.zeros(0)
        self._fold_key = b""
        self._fold_cache: Fold | None = None
        self._pod_context: PodContext | None = None
        self._mem_now: FloatArray = np.zeros(0)
        self._mem_base: FloatArray = np.zeros(0)
        self.util = np.zeros(64)
        self.mem = np.zeros(64)
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
        for attr in ("util", "mem"):
            old = getattr(self, attr)
            new = np.zeros(size)
            new[: old.shape[0]] = old
            setattr(self, attr, new)

    # ----------------------------------------------------------------- the tick

    def rate(self, t: float) -> float:
        """Mean entry request rate at run time ``t``, requests per second."""
        load = self.app.load
        if not self.generator_up:
            return 0.0
        return load.base_rps * (1.0 + load.swing * math.sin(2.0 * math.pi * t / load.period_s)) * self.load_factor

    def invalidate(self) -> None:
        """Force the flow to be recomputed at the next tick (pods or effects changed)."""
        self._flow_t = -math.inf

    def _fold(self, level_info: list[Any], op_err: FloatArray, op_mean: FloatArray, op_var: FloatArray,
              reach_n: FloatArray, slow_n: FloatArray, e_delay: FloatArray) -> Fold:
        """Fold call trees bottom-up over ``level_info`` (all nodes, or one route's or subtree's)."""
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
        for level, children, parents, t_blk, (k_req, f_req), (k_blk, f_blk), logt, deadline, cmask in level_info:
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
            medc = lc / np.sqrt(ratio) / np.exp(0.5 * COMMON_SIGMA * COMMON_SIGMA)
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
                first = np.ones(parents.shape[0], dtype=bool)
                first[1:] = parents[1:] != parents[:-1]
                group = np.cumsum(first) - 1
                reached = np.exp(excl - excl[first][group])
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

    def _subset_levels(self, nodes: IntArray) -> list[Any]:
        """``level_info`` restricted to a set of nodes (closed under children)."""
        keep = np.zeros(self.forest.size, dtype=bool)
        keep[nodes] = True
        out = []
        for level, children, parents, t_blk, (k_req, f_req), (k_blk, f_blk), logt, deadline, cmask in self.level_info:
            lm = keep[level]
            if not lm.any():
                continue
            cm = keep[children]
            sub_level = level[lm]
            sub_cmask = cmask[lm]
            out.append((sub_level, children[cm], parents[cm], t_blk[cm], (k_req[cm], f_req[cm]),
                        (k_blk[cm], f_blk[cm]), logt[lm], deadline[lm], sub_cmask))
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
        if request_class is None:
            inputs = self._op_inputs(tab.k_err_base, tab.k_latfac_base, tab.k_latadd_base)
        else:
            inputs = self._op_inputs(request_class.err, request_class.latfac, request_class.latadd)
        nodes = self.subtree(roots)
        fold = self._fold(self._subset_levels(nodes), inputs.op_err, inputs.op_mean, inputs.op_var, pi.reach_n,
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
        # spread that sums of independent latencies have.
        own_mean_k = lat_k * np.exp(0.5 * sig_k * sig_k)
        own_var_k = (np.exp(sig_k * sig_k) - 1.0) * own_mean_k * own_mean_k
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
        u = np.minimum(util, 0.95)
        latmult = np.minimum(1.0 + u * u / (1.0 - u), MAX_LATENCY_MULT)
        shed = np.where(util > 1.0, 1.0 - 1.0 / np.maximum(util, 1.0), 0.0)
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
        self._pod_context = PodContext(latmult=latmult, wk=wk, shed_k=shed_k,
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
            for weight, inputs in classes:
                fd = self._fold(self.level_info, inputs.op_err, inputs.op_mean, inputs.op_var, reach_n, slow_n,
                                e_delay)
                parts.append((weight, fd))
                slot_parts.append((weight, inputs))
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

        # Slots: outcome shares and latency distribution.
        self._share_k = wk / np.maximum(reach_s[self.op_svc[tab.k_op]], 1e-12)
        sig_k = self.op_sigma[tab.k_op]
        p503 = shed_k
        p500 = (1.0 - shed_k) * (1.0 - (1.0 - err_k) * down_ok_op[tab.k_op])
        self._p_k = np.stack((1.0 - p503 - p500, p500, p503), axis=1)
        self._pfail_k = p500 + p503
        mean_tot = own_mean_k + down_m_op[tab.k_op]
        ratio_k = 1.0 + (own_var_k + down_v_op[tab.k_op]) / np.maximum(mean_tot * mean_tot, 1e-18)
        sig_k = np.sqrt(np.log(ratio_k) + COMMON_SIGMA * COMMON_SIGMA)
        med_k = mean_tot / np.sqrt(ratio_k) / np.exp(0.5 * COMMON_SIGMA * COMMON_SIGMA)
        qk = q_op[tab.k_op]
        tk = t_op[tab.k_op]
        z = (self._bucket_log[None, :] - np.log(np.maximum(med_k, 1e-6))[:, None]) / sig_k[:, None]
        cdf = (1.0 - qk)[:, None] * normal_cdf(z) + (qk[:, None] * (tk[:, None] <= self._buckets[None, :]))
        cdf = (1.0 - p503)[:, None] * cdf + p503[:, None]
        self._cdf_k = np.concatenate((cdf, np.ones((cdf.shape[0], 1))), axis=1)
        self._mean_k = (1.0 - p503) * ((1.0 - qk) * mean_tot + qk * tk) + p503 * FAST_FAIL_S
        self._cpu_per_call_k = self.op_cpu_s[tab.k_op]

        roots = self.roots
        self._route_error = np.clip(1.0 - succ[roots], 0.0, 1.0)
        ratio_r = 1.0 + (V[roots]) / np.maximum(M[roots] * M[roots], 1e-18)
        self._route_median = l_call[roots] / np.sqrt(ratio_r) / np.exp(0.5 * COMMON_SIGMA * COMMON_SIGMA)
        self._route_sigma = s_call[roots]
        self._route_q = q_call[roots]
        self._route_t = t_call[roots]
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
                self._flow_t = t  # load moved too little to change latency or shedding: keep the flow
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
        pod_cpu = np.zeros(P)
        pod_sum = np.zeros(P)
        pod_b = np.zeros((P, len(BUCKETS) + 1))
        if tab.k_starts.size:
            pod_calls[tab.k_owner] = np.add.reduceat(calls_k, tab.k_starts)
            pod_cpu[tab.k_owner] = np.add.reduceat(calls_k * self._cpu_per_call_k, tab.k_starts)
            pod_sum[tab.k_owner] = np.add.reduceat(calls_k * self._mean_k, tab.k_starts)
            pod_b[tab.k_owner] = np.add.reduceat(calls_k[:, None] * self._cdf_k, tab.k_starts, axis=0)
        http = tab.http
        vals[tab.hist_sids[http].ravel()] += pod_b[http].ravel()
        vals[tab.sum_sid[http]] += pod_sum[http]
        vals[tab.count_sid[http]] += pod_calls[http]
        demand = np.where(tab.running, pod_cpu / dt + IDLE_CPU + tab.cpu_extra, 0.0)
        self.util[tab.slot] = demand / tab.cpu_cap
        vals[tab.cpu_sid] += np.minimum(demand, tab.cpu_cap) * dt
        self.mem[tab.slot] = self._mem_now
        vals[tab.mem_sid] = self._mem_now
        self._mem_base = tab.mem_idle * (1.0 + 0.1 * np.minimum(self.util[tab.slot], 1.0)) + tab.mem_extra
        self.flushed_calls_k = calls_k.copy()
        self.svc_served += np.bincount(tab.svc[tab.k_pod], weights=calls_k, minlength=self.S)
        if self.topo_bins:
            _, e_calls, e_err, e_lat = self.topo_bins[-1]
            made = self._acc_routes[f.route] * self._made_per_req
            e_calls += np.bincount(self.node_edge, weights=made, minlength=self.E)
            e_err += np.bincount(self.node_edge, weights=made * self._fail_n, minlength=self.E)
            e_lat += np.bincount(self.node_edge, weights=made * self._l_call, minlength=self.E)
        self._acc_calls = np.zeros_like(calls_k)
        self._acc_routes = np.zeros(self.R)
        self._acc_ticks = 0

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
