"""Behaviour effects: how faults (and benign changes) change what a service does.

An :class:`Effect` says what happens (errors on some operations, added latency, CPU
burn, a memory leak, a crash at start, a failing health check) and when it is active.
Effects tied to a *revision* (``when`` is a :class:`SourceContains` or :class:`EnvEquals`
condition on the same service) are evaluated per pod template: during a rollout the old
pods keep behaving as before and only the new revision's pods misbehave, and a rollback
or a patch that removes the defective line repairs it. Effects with ``when=None`` are
*runtime* effects: active on every pod of the service (or one pod, or one node) from
injection until reverted.

The sim never looks at a fault's ground truth beyond these effects; everything an
operator sees (metrics, logs, events) is produced from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SourceContains:
    """Active while the deployed source of ``service`` has ``text`` in file ``path``.

    When ``service`` is None the effect's own service is meant, and the condition is
    evaluated per revision (pods of other revisions are unaffected).
    """

    path: str
    text: str
    service: str | None = None


@dataclass(frozen=True)
class EnvEquals:
    """Active while env var ``key`` of ``service`` (None: the effect's own) equals ``value``.

    ``value`` None means "is set to anything other than the model's value".
    """

    key: str
    value: str | None
    service: str | None = None


@dataclass(frozen=True)
class FlagEquals:
    """Active while feature flag ``flag`` in the flagd flag file ``path`` of ``service``
    has ``defaultVariant`` equal to ``variant`` (Astronomy Shop's demo.flagd.json)."""

    service: str
    path: str
    flag: str
    variant: str


Condition = SourceContains | EnvEquals | FlagEquals


@dataclass(frozen=True)
class LogHint:
    """What the failing code logs: exception, message, file and function for stack traces."""

    message: str
    exception: str = ""
    file: str = ""
    function: str = ""
    line: int = 0
    where: str = "self"
    """Whose log shows the failure: ``self``, ``caller`` or ``none`` (see faults.spec.LogSpec)."""


@dataclass(frozen=True)
class Effect:
    """A change in behaviour of one service (see module docstring).

    Attributes:
        id: unique id (the fault or change that owns it).
        service: the affected service.
        operations: operation names affected; empty means every operation.
        error_rate: share (0..1) of affected requests that fail with HTTP 500 / gRPC error.
        latency_add_s: seconds added to the own processing time of affected requests.
        latency_factor: multiplier on own processing time.
        cpu_cores: extra CPU burned per pod, cores.
        memory_leak_bps: working-set growth per pod, bytes per second since container start.
        memory_bytes: extra constant working set per pod, bytes.
        crash_on_start: the container exits shortly after start (exit code ``exit_code``).
        readiness_fails: the health check reports unhealthy (pods never become Ready).
        liveness_fails: the process hangs: requests time out and liveness probes fail.
        pod: restrict to one pod (runtime effects only).
        node: restrict to pods on one node (runtime effects only).
        started_before: restrict to containers started before this run time (runtime
            effects only): state that lives in a process -- a runaway thread, a stale
            cache, a tc rule -- and is cleared by restarting the container.
        match: request attributes the effect applies to (e.g. ``{"currency": "JPY"}``);
            empty means every request. A probe request carrying these attributes sees the
            full ``error_rate`` and latency; live traffic sees them on ``share`` of requests.
        share: the share of live requests that carry ``match`` (ignored without match).
        when: activation condition; None for a runtime effect.
        log: what the code logs when the effect bites.
    """

    id: str
    service: str
    operations: tuple[str, ...] = ()
    error_rate: float = 0.0
    latency_add_s: float = 0.0
    latency_factor: float = 1.0
    cpu_cores: float = 0.0
    memory_leak_bps: float = 0.0
    memory_bytes: float = 0.0
    crash_on_start: bool = False
    exit_code: int = 1
    readiness_fails: bool = False
    liveness_fails: bool = False
    pod: str | None = None
    node: str | None = None
    started_before: float | None = None
    match: tuple[tuple[str, str], ...] = ()
    share: float = 1.0
    when: Condition | None = None
    log: LogHint = field(default_factory=lambda: LogHint(message="internal error"))

    def __post_init__(self) -> None:
        if not 0.0 <= self.error_rate <= 1.0:
            raise ValueError(f"effect {self.id}: error_rate must be in [0, 1], got {self.error_rate}")
        if self.latency_factor <= 0:
            raise ValueError(f"effect {self.id}: latency_factor must be > 0")
        if self.when is not None and (self.pod is not None or self.node is not None or self.started_before is not None):
            raise ValueError(f"effect {self.id}: pod/node/age scoping is only for runtime effects (when=None)")
        if not 0.0 < self.share <= 1.0:
            raise ValueError(f"effect {self.id}: share must be in (0, 1], got {self.share}")

    @property
    def live_share(self) -> float:
        """Share of live requests the effect applies to."""
        return self.share if self.match else 1.0

    def matches(self, attributes: dict[str, str]) -> bool:
        """True when a request with ``attributes`` is one the effect applies to."""
        return all(attributes.get(k) == v for k, v in self.match)

    @property
    def per_revision(self) -> bool:
        """True when the condition is checked per pod template of the effect's own service."""
        if self.when is None or isinstance(self.when, FlagEquals):
            return False
        return self.when.service is None or self.when.service == self.service


@dataclass(frozen=True)
class EdgeEffect:
    """A network fault on calls from ``caller`` to ``callee``.

    Attributes:
        delay_s: one-way added latency per call, seconds.
        drop: share of calls that are lost and time out at the caller's deadline.
    """

    id: str
    caller: str
    callee: str
    delay_s: float = 0.0
    drop: float = 0.0
    started_before: float | None = None
    """Only callee containers started before this run time are affected (the rule lives
    in their network namespace; a restarted pod comes up clean). None: all of them."""
