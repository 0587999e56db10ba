"""The policy layer: the only path from any operator to the substrate.

Every mutating tool call (tier ``act``) is checked here before it runs:

1. its **target set** is computed from its typed arguments -- the workload a pod belongs
   to, the deployment scaled or rolled back, the service patched; a flag change in flagd
   also targets every service whose deployed source reads that flag;
2. targets must be **known** names of the application: the load generator, monitoring,
   the orchestrator and anything unknown are denied;
3. the call must name an **open incident** this operator reported;
4. a **rate limit** holds: at most :data:`MAX_ACTS_PER_INVOCATION` act calls per
   invocation and :data:`MAX_ACTS_PER_WINDOW` per :data:`WINDOW_S` seconds of run time.

Every decision, allowed or denied, is returned with its reason; the tool layer records it
in the event stream (``tool.call``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from engine.apps.model import AppModel

MAX_ACTS_PER_INVOCATION = 8
MAX_ACTS_PER_WINDOW = 30
WINDOW_S = 600.0
"""Rate limits: an operator may not act more than 8 times per invocation, nor more than
30 times in any 10 minutes of run time (a change-freeze style guardrail)."""


@dataclass(frozen=True)
class Decision:
    """A policy decision: allowed or not, why, and the target set (service names)."""

    allowed: bool
    reason: str
    targets: tuple[str, ...]


@dataclass
class IncidentBook:
    """Incidents an operator reported: id -> {alerts, title, resolved}."""

    incidents: dict[str, dict[str, object]] = field(default_factory=dict)

    def open(self, incident: str) -> bool:
        rec = self.incidents.get(incident)
        return rec is not None and not rec.get("resolved", False)


class Policy:
    """Checks act calls (module docstring).

    Args:
        app: the application model (which services are part of the application).
        flag_readers: callable giving, for a flag name, the services whose source reads it.
    """

    def __init__(self, app: AppModel, flag_readers: object = None) -> None:
        self.app = app
        self.in_app = {s.name for s in app.services if s.in_application}
        self.outside = {s.name: s.role for s in app.services if not s.in_application}
        self._flag_readers = flag_readers
        self._acts: deque[float] = deque()
        self.acts_this_invocation = 0

    def new_invocation(self) -> None:
        self.acts_this_invocation = 0

    def check_target(self, name: str, what: str) -> str | None:
        """Why ``name`` may not be acted on, or None when it may."""
        if name in self.in_app:
            return None
        if name in self.outside:
            return f"{what} {name!r} is outside the application (role {self.outside[name]}): not permitted"
        if name in ("orchestrator", "sre-marathon", "prometheus", "alertmanager", "kube-system"):
            return f"{what} {name!r} is part of the benchmark's infrastructure: not permitted"
        return f"unknown {what} {name!r}"

    def targets_for_flag(self, flag: str) -> tuple[str, ...]:
        readers: list[str] = []
        if callable(self._flag_readers):
            readers = list(self._flag_readers(flag))
        return tuple(sorted({"flagd", *readers}))

    def decide(self, tool: str, targets: tuple[str, ...], incident: str | None, book: IncidentBook,
               now: float) -> Decision:
        """Decide one act call whose target set is ``targets``."""
        if not targets:
            return Decision(False, "the call names no target", targets)
        for t in targets:
            why = self.check_target(t, "service" if tool != "restart_pod" else "workload")
            if why:
                return Decision(False, why, targets)
        if incident is None or not book.open(incident):
            known = ", ".join(k for k in book.incidents if book.open(k)) or "none"
            return Decision(False, f"act calls must name an open incident you reported (open: {known}); "
                                   f"got {incident!r}", targets)
        while self._acts and now - self._acts[0] > WINDOW_S:
            self._acts.popleft()
        if self.acts_this_invocation >= MAX_ACTS_PER_INVOCATION:
            return Decision(False, f"rate limit: at most {MAX_ACTS_PER_INVOCATION} act calls per invocation",
                            targets)
        if len(self._acts) >= MAX_ACTS_PER_WINDOW:
            return Decision(False, f"rate limit: at most {MAX_ACTS_PER_WINDOW} act calls per "
                                   f"{int(WINDOW_S)} s of run time", targets)
        self._acts.append(now)
        self.acts_this_invocation += 1
        return Decision(True, f"allowed: targets {', '.join(targets)} are in the application; incident "
                              f"{incident} is open", targets)
