"""The one interface to a running application: :class:`Substrate`.

Two implementations: the embedded simulated cluster (:class:`engine.sim.Simulator`, the
default) and, later, a real Kubernetes cluster with Prometheus. Everything above it --
faults, alerts, tools, scoring, the terminal app -- goes through this interface.

Objects are returned as Kubernetes API dicts (camelCase, the shape ``kubectl get -o json``
prints), so tools format simulated and real clusters with the same code.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from engine.apps.model import AppModel

OBJECT_KINDS = ("Node", "Deployment", "StatefulSet", "ReplicaSet", "Pod", "Service", "Event")


@dataclass(frozen=True)
class EdgeStats:
    """One edge of the call graph from traces, over a window.

    Attributes:
        caller: calling service (the load generator for entry calls).
        callee: called service.
        rps: calls per second.
        error_share: share of calls that failed (0..1).
        mean_latency_ms: mean latency seen by the caller, milliseconds.
    """

    caller: str
    callee: str
    rps: float
    error_share: float
    mean_latency_ms: float


@dataclass(frozen=True)
class Sample:
    """One sample of one series: metric name, labels, value."""

    name: str
    labels: dict[str, str]
    value: float


@dataclass
class ChangeRecord:
    """One change through the build pipeline, as its log shows it.

    Attributes:
        id: change id (``chg-0007``).
        service: target service.
        kind: ``code`` (a commit), ``config`` (env), ``image``, ``resources``, ``probe``,
            ``scale`` or ``rollback``.
        summary: one line, like a commit subject.
        author: who shipped it (``ci-bot``, ``alice``, ``operator``).
        t_submitted: run time of submission, seconds.
        t_deployed: run time the new template reached the Deployment, or None while building.
        commit: source commit id for code changes.
        image: the image the change deploys, when it changes one.
        revision: the Deployment revision it produced.
        status: ``building``, ``deployed``, ``failed``.
        detail: build output or failure message.
    """

    id: str
    service: str
    kind: str
    summary: str
    author: str
    t_submitted: float
    t_deployed: float | None = None
    commit: str | None = None
    image: str | None = None
    revision: int | None = None
    status: str = "building"
    detail: str = ""
    diff: str = field(default="", repr=False)


class SubstrateError(Exception):
    """A mutation or query the substrate refuses (unknown object, invalid change)."""


class Substrate(ABC):
    """A running application under load (see module docstring)."""

    app: AppModel

    @property
    @abstractmethod
    def now(self) -> float:
        """Run time, seconds since the run started."""

    @abstractmethod
    def advance(self, until: float) -> None:
        """Let the application run until run time ``until`` (seconds)."""

    # state
    @abstractmethod
    def objects(self, kind: str) -> list[dict[str, Any]]:
        """Objects of one kind (see :data:`OBJECT_KINDS`) in the app's namespace, as API dicts.

        Raises:
            SubstrateError: unknown kind.
        """

    @abstractmethod
    def events(self, since: float | None = None) -> list[dict[str, Any]]:
        """Events (API dicts), oldest first, optionally only those last seen after ``since``."""

    # observability
    @abstractmethod
    def scrape(self) -> list[Sample]:
        """Every series a Prometheus scrape would collect now."""

    @abstractmethod
    def logs(self, pod: str, *, tail: int | None = None, previous: bool = False) -> list[str]:
        """Log lines of a pod's application container, oldest first.

        Raises:
            SubstrateError: unknown pod, or no previous container when ``previous``.
        """

    @abstractmethod
    def topology(self, window_s: float = 300.0) -> list[EdgeStats]:
        """The call graph from traces over the last ``window_s`` seconds."""

    # source and the build pipeline
    @abstractmethod
    def source_files(self, service: str) -> dict[str, str]:
        """The source files of the revision the pods of ``service`` run (path -> text): what
        ``code_search`` shows; behind the repository head while a commit builds or after a
        rollback."""

    @abstractmethod
    def head_files(self, service: str) -> dict[str, str]:
        """The source files of the repository head of ``service`` (path -> text): the tip of
        the branch that the next commit is based on.

        Raises:
            SubstrateError: unknown service.
        """

    @abstractmethod
    def deploy_history(self, service: str | None = None) -> list[ChangeRecord]:
        """The build pipeline's log, oldest first, optionally for one service."""

    # mutations
    @abstractmethod
    def deploy_change(
        self,
        service: str,
        *,
        files: dict[str, str] | None = None,
        env: dict[str, str | None] | None = None,
        image: str | None = None,
        summary: str,
        author: str,
    ) -> ChangeRecord:
        """Ship a change through the build pipeline.

        The pipeline, as a CI/CD system runs it:

        * a commit is based on the repository head (:meth:`head_files`): ``files`` are
          full new texts merged into the head's files, so commits compose whatever the
          pods run now;
        * builds of one service are serialized: a build starts when the previous one of
          that service has finished (FIFO; a queued change's detail says what it waits
          behind), so commits land in commit order; a commit that needs no build (a
          config file) also waits behind the service's builds in flight;
        * a landing build moves only the pod template's commit and image on the template
          current then; env, resources, probes and replicas changed while it built stay
          (the image rule is in the implementation's docstring);
        * env, image, resource and probe changes without files roll out at once.

        Args:
            service: target service.
            files: changed source files (path -> new text; empty text deletes); triggers
                a build, then a rollout of the new image.
            env: env vars to set (None value unsets); rolls out without a build.
            image: image to roll out directly (no build).
            summary: one-line description (commit subject).
            author: who ships it.

        Raises:
            SubstrateError: unknown service, or nothing to change.
        """

    @abstractmethod
    def restart_pod(self, pod: str) -> None:
        """Delete a pod; its controller creates a replacement."""

    @abstractmethod
    def scale(self, service: str, replicas: int) -> None:
        """Set a workload's replica count."""

    @abstractmethod
    def rollback(self, service: str, revision: int | None = None) -> ChangeRecord:
        """Roll a Deployment back to ``revision`` (default: the previous one): its pod
        template is restored, as ``kubectl rollout undo`` does; the repository head is
        unchanged, so a build that lands later deploys the head again."""
