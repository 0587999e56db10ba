"""Call trees compiled into flat arrays, and the static load profile of an app.

Every entry route expands into a tree of (service, operation) nodes by following each
operation's ``calls``. The simulator evaluates all trees at once, level by level, with
numpy: a node's call count is its route's request count times the product of ``times``
along its path; success and latency are folded bottom-up into each parent.

Propagation rules (documented here because every later part relies on them):

* a *required* call that fails fails its caller, which answers 5xx in turn;
* an *optional* call that fails is tolerated: the caller logs it and carries on;
* an *async* call (Kafka) neither delays nor fails its caller;
* calls made by one operation run one after another, so their latencies add up
  (the expected number of calls ``times`` multiplies the child's latency).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from engine.apps.model import AppModel

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class CallForest:
    """All route call trees of an app as parallel arrays indexed by node.

    Attributes:
        services: service names; ``svc`` indexes into it.
        ops: (service, operation) pairs; ``op`` indexes into it.
        route: route index of each node.
        svc: service index of each node.
        op: operation index of each node.
        parent: parent node index, -1 at a route root.
        caller_svc: service index of the parent, -1 at a root (the load generator calls it).
        times: calls per parent invocation.
        weight: calls per route request (product of ``times`` along the path).
        required: the parent fails when this call fails (not optional, not async).
        blocking: the parent waits for this call (not async).
        depth: 0 at the root.
        levels: node indices per depth, deepest level first.
        timeout_s: the caller's deadline for this call, seconds (inf when none); at a route
            root, the load generator's request timeout (``load.request_timeout_s``).
    """

    services: list[str]
    ops: list[tuple[str, str]]
    route: IntArray
    svc: IntArray
    op: IntArray
    parent: IntArray
    caller_svc: IntArray
    times: FloatArray
    weight: FloatArray
    required: BoolArray
    blocking: BoolArray
    depth: IntArray
    levels: list[IntArray]
    timeout_s: FloatArray

    @property
    def size(self) -> int:
        return int(self.svc.shape[0])


def default_timeout(protocol: str) -> float:
    """Client deadline when a call sets none: gRPC and HTTP clients in the demos use ~10 s."""
    return 10.0 if protocol in ("grpc", "http") else 5.0


def compile_forest(app: AppModel) -> CallForest:
    """Expand every route of ``app`` into one flat forest (see :class:`CallForest`)."""
    services = app.service_names()
    svc_index = {name: i for i, name in enumerate(services)}
    ops: list[tuple[str, str]] = [(s.name, o.name) for s in app.services for o in s.operations]
    op_index = {pair: i for i, pair in enumerate(ops)}
    route: list[int] = []
    svc: list[int] = []
    op: list[int] = []
    parent: list[int] = []
    caller: list[int] = []
    times: list[float] = []
    weight: list[float] = []
    required: list[bool] = []
    blocking: list[bool] = []
    depth: list[int] = []
    timeout: list[float] = []
    for r, rt in enumerate(app.routes):
        # (service, operation, parent node, times, weight, required, blocking, depth, timeout)
        stack = [(rt.entry.service, rt.entry.operation, -1, 1.0, 1.0, True, True, 0, app.load.request_timeout_s)]
        while stack:
            s_name, o_name, par, t, w, req, blk, d, to = stack.pop()
            node = len(svc)
            route.append(r)
            svc.append(svc_index[s_name])
            op.append(op_index[(s_name, o_name)])
            parent.append(par)
            caller.append(svc[par] if par >= 0 else -1)
            times.append(t)
            weight.append(w)
            required.append(req)
            blocking.append(blk)
            depth.append(d)
            timeout.append(to)
            callee_op = app.service(s_name).operation(o_name)
            for call in reversed(callee_op.calls):
                callee = app.service(call.service)
                stack.append(
                    (
                        call.service,
                        call.operation,
                        node,
                        call.times,
                        w * call.times,
                        not call.optional and not call.is_async,
                        not call.is_async,
                        d + 1,
                        call.timeout_s if call.timeout_s is not None else default_timeout(callee.protocol),
                    )
                )
    depth_arr = np.asarray(depth, dtype=np.int64)
    max_depth = int(depth_arr.max()) if depth_arr.size else 0
    levels = [np.flatnonzero(depth_arr == d) for d in range(max_depth, -1, -1)]
    return CallForest(
        services=services,
        ops=ops,
        route=np.asarray(route, dtype=np.int64),
        svc=np.asarray(svc, dtype=np.int64),
        op=np.asarray(op, dtype=np.int64),
        parent=np.asarray(parent, dtype=np.int64),
        caller_svc=np.asarray(caller, dtype=np.int64),
        times=np.asarray(times, dtype=np.float64),
        weight=np.asarray(weight, dtype=np.float64),
        required=np.asarray(required, dtype=np.bool_),
        blocking=np.asarray(blocking, dtype=np.bool_),
        depth=depth_arr,
        levels=levels,
        timeout_s=np.asarray(timeout, dtype=np.float64),
    )


@dataclass(frozen=True)
class StaticProfile:
    """Expected steady-state load of an app at a given entry rate, without noise.

    Attributes:
        rps: requests per second served by each service (by name).
        utilisation: CPU used / CPU available (limit, else request, else 1 core) over all replicas.
        route_median_ms: median latency of each route (sum of own medians along blocking calls).
    """

    rps: dict[str, float]
    utilisation: dict[str, float]
    route_median_ms: dict[str, float]


def pod_cpu_cores(app: AppModel, service: str) -> float:
    """CPU one pod can use: its limit, else its request, else one core."""
    res = app.service(service).resources
    return res.limits.cpu_cores() or res.requests.cpu_cores() or 1.0


def static_profile(app: AppModel, entry_rps: float | None = None) -> StaticProfile:
    """Compute the steady-state profile at ``entry_rps`` (default: the app's base rate)."""
    forest = compile_forest(app)
    rate = app.load.base_rps if entry_rps is None else entry_rps
    route_rps = np.asarray([rt.share * rate for rt in app.routes])
    node_rps = route_rps[forest.route] * forest.weight
    svc_rps = np.bincount(forest.svc, weights=node_rps, minlength=len(forest.services))
    cpu_ms = np.asarray([app.service(s).operation(o).cpu_ms for s, o in forest.ops])
    node_cpu = node_rps * cpu_ms[forest.op] / 1000.0
    svc_cpu = np.bincount(forest.svc, weights=node_cpu, minlength=len(forest.services))
    util: dict[str, float] = {}
    for i, name in enumerate(forest.services):
        svc = app.service(name)
        capacity = pod_cpu_cores(app, name) * max(svc.replicas, 1)
        util[name] = float(svc_cpu[i] / capacity)
    own = np.asarray([app.service(s).operation(o).latency_ms for s, o in forest.ops])[forest.op]
    lat = own.copy()
    for level in forest.levels:
        for n in level:
            p = forest.parent[n]
            if p >= 0 and forest.blocking[n]:
                lat[p] += forest.times[n] * lat[n]
    roots = np.flatnonzero(forest.parent == -1)
    route_ms = {app.routes[int(forest.route[n])].name: float(lat[n]) for n in roots}
    return StaticProfile(
        rps={name: float(svc_rps[i]) for i, name in enumerate(forest.services)},
        utilisation=util,
        route_median_ms=route_ms,
    )
