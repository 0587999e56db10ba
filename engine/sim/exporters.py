"""Exporter series beside cAdvisor and kube-state-metrics: node-exporter's CPU counters and
the stores' own operation counters, advanced at each scrape (:meth:`ExporterSeries.update`).

They are what the extended rule pack's NodeCPUHighUsage and DatabaseOperationsStopped read
(``alerts/pack/extended.rules.yaml``); no rule of the paper pack selects them.

* ``node_cpu_seconds_total{job="node-exporter", instance=<node>, cpu, mode}`` -- node-exporter
  as kube-prometheus deploys it (a DaemonSet in ``monitoring``; its ServiceMonitor relabels
  ``instance`` to the node name, ``manifests/nodeExporter-serviceMonitor.yaml``), one series
  per logical CPU and mode (the eight modes of the Linux ``/proc/stat`` collector). A node's
  busy time is the CPU its pods use (their ``container_cpu_usage_seconds_total``), plus
  :data:`SYSTEM_CORES` for what runs outside the app's namespace, plus any host load set with
  :meth:`ExporterSeries.set_host_load` (a noisy neighbour: a batch job, a runaway host
  process), capped at the node's cores and split into modes by :data:`BUSY_MODES`.
* Per store pod, the counter its engine's usual Prometheus exporter exposes for client
  operations (one store operation of the model is one command, operation or transaction):

  - redis / valkey: ``redis_commands_total{cmd}`` (oliver006/redis_exporter, from ``INFO
    commandstats``; ``cmd`` is the lower-cased command), plus ``cmd="info"``, the exporter's
    own ``INFO`` of each scrape;
  - mongodb: ``mongodb_op_counters_total{type}`` (percona/mongodb_exporter in compatible mode,
    from ``serverStatus.opcounters``; ``find`` -> ``query``, ``insert``/``save`` ->
    ``insert``, ``update`` -> ``update``, ``remove``/``delete`` -> ``delete``, anything else ->
    ``command``), plus ``type="command"``, the exporter's own ``serverStatus`` of each scrape;
  - mysql: ``mysql_global_status_innodb_row_ops_total{operation}`` (prometheus/mysqld_exporter,
    ``Innodb_rows_*``; ``SELECT`` -> ``read``, ``INSERT`` -> ``inserted``, ``UPDATE`` ->
    ``updated``, ``DELETE`` -> ``deleted``, one row per statement); the exporter's own queries
    read information_schema, not InnoDB rows;
  - postgresql: ``pg_stat_database_xact_commit{datname}`` (prometheus-community/
    postgres_exporter) for the app's database (``POSTGRES_DB``), plus ``datname="postgres"``,
    the exporter's own transaction of each scrape;
  - kafka: none (kafka_exporter's offsets are per topic partition; not modelled).

  Labels are those of a ServiceMonitor on the store's Service: ``job`` (the exporter),
  ``namespace``, ``service``, ``pod``. The counters restart from 0 when the store's container
  restarts (the server's statistics are in memory) and go stale while it is not running.

Departures from reality (simulator): none of the three shipped apps' manifests deploys a
database exporter (the Astronomy Shop's OpenTelemetry collector scrapes valkey-cart and
postgresql with its redis and postgresql receivers instead): the exporters are assumed, as an
SRE team running these stores would add them. An operation is counted at the store pods that
were running at the scrape, evenly (stores have one replica in the shipped models). Host load
does not slow the node's pods (CPU contention between cgroups is not modelled).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from alerts.series import SeriesRegistry
from faults.noise import MONITORING_NAMESPACE

if TYPE_CHECKING:
    from engine.apps.model import AppModel, Service
    from engine.sim.calltree import CallForest
    from engine.sim.cluster import Cluster
    from engine.sim.traffic import TrafficModel

CPU_MODES = ("idle", "iowait", "irq", "nice", "softirq", "steal", "system", "user")
"""node-exporter's ``mode`` values on Linux (``collector/cpu_linux.go``), in label order."""
BUSY_MODES = {"user": 0.72, "system": 0.24, "softirq": 0.03, "irq": 0.01, "nice": 0.0, "steal": 0.0}
"""Shares of a node's busy time per mode (assumption: a container host's usual mix, mostly
user time; no steal on dedicated nodes). ``iowait`` is fixed at :data:`IOWAIT_SHARE` of the
idle time."""
IOWAIT_SHARE = 0.005
"""Share of a node's idle time counted as iowait (assumption: stores on local disks, no I/O
pressure)."""
SYSTEM_CORES = 0.35
"""Cores each node spends outside the app's namespace: kubelet, container runtime, kube-proxy,
CNI, node-exporter and the monitoring agents (assumption, a small cluster's steady state)."""
NODE_EXPORTER = {"job": "node-exporter", "namespace": MONITORING_NAMESPACE, "service": "node-exporter",
                 "container": "kube-rbac-proxy", "endpoint": "https"}
"""Target labels of kube-prometheus' node-exporter ServiceMonitor (``instance`` is the node name)."""

_MONGO_TYPES = (("find", "query"), ("insert", "insert"), ("save", "insert"), ("update", "update"),
                ("remove", "delete"), ("delete", "delete"))
_MYSQL_OPS = {"SELECT": "read", "INSERT": "inserted", "UPDATE": "updated", "DELETE": "deleted"}


@dataclass(frozen=True)
class StoreCounter:
    """Where one store operation is counted: the family, its exporter job and its label."""

    family: str
    job: str
    label: str
    value: str


def store_counter(svc: Service, operation: str) -> StoreCounter | None:
    """The exporter counter that counts ``operation`` of store ``svc`` (module docstring), or
    None for an engine without one (kafka) or a service that is not a store."""
    if svc.store is None:
        return None
    engine = svc.store.engine
    word = operation.split()[0] if operation.split() else operation
    if engine in ("redis", "valkey"):
        return StoreCounter("redis_commands_total", "redis-exporter", "cmd", word.lower())
    if engine == "mongodb":
        kind = next((t for prefix, t in _MONGO_TYPES if word.lower().startswith(prefix)), "command")
        return StoreCounter("mongodb_op_counters_total", "mongodb-exporter", "type", kind)
    if engine == "mysql":
        return StoreCounter("mysql_global_status_innodb_row_ops_total", "mysqld-exporter", "operation",
                            _MYSQL_OPS.get(word.upper(), "read"))
    if engine == "postgresql":
        return StoreCounter("pg_stat_database_xact_commit", "postgres-exporter", "datname",
                            svc.env.get("POSTGRES_DB", "postgres"))
    return None


def exporter_overhead(svc: Service) -> StoreCounter | None:
    """The counter the exporter's own scrape of ``svc`` increments by one (module docstring)."""
    if svc.store is None:
        return None
    engine = svc.store.engine
    if engine in ("redis", "valkey"):
        return StoreCounter("redis_commands_total", "redis-exporter", "cmd", "info")
    if engine == "mongodb":
        return StoreCounter("mongodb_op_counters_total", "mongodb-exporter", "type", "command")
    if engine == "postgresql":
        return StoreCounter("pg_stat_database_xact_commit", "postgres-exporter", "datname", "postgres")
    return None


class ExporterSeries:
    """node-exporter's and the store exporters' series in ``registry`` (module docstring).

    Args:
        app: the app model.
        registry: the simulator's series registry.
        cluster: the simulated cluster (nodes, pods and their cAdvisor series ids).
        forest: the app's call forest (operation indexes).
        traffic: the traffic model (:attr:`TrafficModel.op_served
            <engine.sim.traffic.TrafficModel.op_served>`).
    """

    def __init__(self, app: AppModel, registry: SeriesRegistry, cluster: Cluster, forest: CallForest,
                 traffic: TrafficModel) -> None:
        self.app = app
        self.registry = registry
        self.cluster = cluster
        self.traffic = traffic
        self.last_t: float | None = None
        self.host_load: dict[str, float] = {}
        """Extra busy cores per node name (:meth:`set_host_load`)."""
        self._node_sids: dict[str, list[list[int]]] = {}
        self._cpu_seen: dict[str, tuple[int, float]] = {}
        """Per pod, (cpu series id, its value at the last update)."""
        svc_model = {s.name: s for s in app.services}
        self._svc = svc_model
        self._ops: list[tuple[int, str, StoreCounter]] = []
        """(forest operation index, store service, counter) of every counted store operation."""
        for i, (service, op) in enumerate(forest.ops):
            svc = svc_model.get(service)
            counter = store_counter(svc, op) if svc is not None else None
            if counter is not None:
                self._ops.append((i, service, counter))
        self._stores = sorted({s for _, s, _ in self._ops})
        self._op_seen = np.zeros(len(forest.ops))
        self._pod_sids: dict[str, tuple[float | None, dict[StoreCounter, int]]] = {}
        """Per store pod, (container start it was created for, series id per counter)."""

    def set_host_load(self, node: str, cores: float) -> None:
        """Keep ``node`` busy with ``cores`` extra cores (0 ends it).

        Raises:
            ValueError: unknown node, or negative or non-finite cores.
        """
        if node not in {n.name for n in self.cluster.nodes}:
            raise ValueError(f"unknown node {node!r} (nodes: {', '.join(n.name for n in self.cluster.nodes)})")
        if not math.isfinite(cores) or cores < 0:
            raise ValueError(f"host load must be a finite number of cores >= 0, got {cores!r}")
        if cores:
            self.host_load[node] = cores
        else:
            self.host_load.pop(node, None)

    def update(self, t: float) -> None:
        """Advance every exporter series to run time ``t`` (seconds; called at each scrape,
        after the traffic model's flush)."""
        last = self.last_t
        self.last_t = t
        dt = t - last if last is not None else 0.0
        self._nodes(dt)
        self._store_ops()

    # ----------------------------------------------------------------- node-exporter

    def _pod_cores(self, dt: float) -> dict[str, float]:
        """CPU cores each node's pods used since the last update (from their cAdvisor counters)."""
        reg = self.registry
        used: dict[str, float] = {}
        for name, pod in self.cluster.pods.items():
            sid = pod.series.get("cpu")
            if sid is None or pod.node is None or not reg.live[sid]:
                continue
            value = float(reg.values[sid])
            seen = self._cpu_seen.get(name)
            delta = value - seen[1] if seen is not None and seen[0] == sid and value >= seen[1] else value
            self._cpu_seen[name] = (sid, value)
            if dt > 0:
                used[pod.node] = used.get(pod.node, 0.0) + delta / dt
        for name in [n for n in self._cpu_seen if n not in self.cluster.pods]:
            del self._cpu_seen[name]
        return used

    def _nodes(self, dt: float) -> None:
        reg = self.registry
        used = self._pod_cores(dt)
        for node in self.cluster.nodes:
            cpus = max(1, round(node.cpu))
            sids = self._node_sids.get(node.name)
            if sids is None:
                base = {**NODE_EXPORTER, "instance": node.name, "pod": f"node-exporter-{node.uid[:5]}"}
                sids = [[reg.add("node_cpu_seconds_total", {**base, "cpu": str(c), "mode": m}, 0.0)
                         for m in CPU_MODES] for c in range(cpus)]
                self._node_sids[node.name] = sids
            live = node.reachable  # an unreachable node's exporter is not scraped
            for row in sids:
                for sid in row:
                    reg.live[sid] = live
            if not live or dt <= 0:
                continue
            busy = min(SYSTEM_CORES + used.get(node.name, 0.0) + self.host_load.get(node.name, 0.0), float(cpus))
            per_cpu_busy = busy / cpus * dt
            per_cpu_idle = dt - per_cpu_busy
            for row in sids:
                for m, sid in zip(CPU_MODES, row, strict=True):
                    if m == "idle":
                        reg.inc(sid, per_cpu_idle * (1.0 - IOWAIT_SHARE))
                    elif m == "iowait":
                        reg.inc(sid, per_cpu_idle * IOWAIT_SHARE)
                    else:
                        reg.inc(sid, per_cpu_busy * BUSY_MODES[m])

    # ----------------------------------------------------------------- store exporters

    def _store_ops(self) -> None:
        reg = self.registry
        served = self.traffic.op_served
        delta = served - self._op_seen if served.shape == self._op_seen.shape else served.copy()
        self._op_seen = served.copy()
        running: dict[str, list[str]] = {s: [] for s in self._stores}
        for name in sorted(self.cluster.pods):
            pod = self.cluster.pods[name]
            if pod.service in running:
                if pod.running and pod.node is not None and self._node_reachable(pod.node):
                    running[pod.service].append(name)
                else:
                    self._kill_pod(name)
        for name in [n for n in self._pod_sids if n not in self.cluster.pods]:
            self._kill_pod(name)
            del self._pod_sids[name]
        for service, pods in running.items():
            for name in pods:
                sids = self._pod_counters(name, self._svc[service])
                over = exporter_overhead(self._svc[service])
                if over is not None:
                    reg.inc(sids[over], 1.0)
        for i, service, counter in self._ops:
            pods = running[service]
            if not pods or delta[i] <= 0:
                continue
            share = float(delta[i]) / len(pods)
            for name in pods:
                reg.inc(self._pod_sids[name][1][counter], share)

    def _node_reachable(self, node: str) -> bool:
        return next((n.reachable for n in self.cluster.nodes if n.name == node), False)

    def _pod_counters(self, pod_name: str, svc: Service) -> dict[StoreCounter, int]:
        """The pod's counter series, created (from 0) for each new start of its container."""
        pod = self.cluster.pods[pod_name]
        started = pod.container.started_t
        have = self._pod_sids.get(pod_name)
        if have is not None and have[0] == started:
            for sid in have[1].values():
                self.registry.live[sid] = True
            return have[1]
        counters = {c for _, s, c in self._ops if s == svc.name}
        over = exporter_overhead(svc)
        if over is not None:
            counters.add(over)
        target = {"namespace": self.app.namespace, "service": svc.name, "pod": pod_name}
        sids = {c: self.registry.add(c.family, {"job": c.job, **target, c.label: c.value}, 0.0, integer=True)
                for c in sorted(counters, key=lambda c: (c.family, c.value))}
        self._pod_sids[pod_name] = (started, sids)
        return sids

    def _kill_pod(self, pod_name: str) -> None:
        have = self._pod_sids.get(pod_name)
        if have is not None:
            self.registry.kill(have[1].values())
