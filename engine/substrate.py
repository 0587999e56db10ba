"""The one interface to a running application: :class:`Substrate`.

Two implementations: the embedded simulated cluster (:class:`engine.sim.simulator.Simulator`,
the default) and, later, a real Kubernetes cluster with Prometheus. Everything above it --
the run loop, faults, alerts, tools, health sampling, the terminal app -- goes through this
interface, and exactly one factory chooses the implementation
(:func:`engine.run.substrates.open_substrate`).

Objects are returned as Kubernetes API dicts (camelCase, the shape ``kubectl get -o json``
prints), so tools format simulated and real clusters with the same code; the run loop's own
reads (a workload's spec, the pods of a service, health) come as the typed, read-only views
below (:class:`WorkloadView`, :class:`PodView`, :class:`HealthWindow`).

Ground truth has a door here too, for the run loop, qualification and the oracle only:
injecting and reverting a catalog fault (:meth:`Substrate.apply_fault`), judging its symptom
probe (:meth:`Substrate.probe`), forking the cluster to try a restart
(:meth:`Substrate.fork`). Operators reach the cluster through the tools, never through these.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from engine.apps.model import AppModel, Probe, Resources

if TYPE_CHECKING:
    from alerts.series import SeriesStore
    from faults.noise import BackgroundNoise
    from faults.spec import FaultSpec, ProbeSpec

OBJECT_KINDS = ("Node", "Deployment", "StatefulSet", "ReplicaSet", "Pod", "Service", "Event", "Endpoints",
                "EndpointSlice", "ConfigMap", "Secret")


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
            ``scale``, ``rollback``, ``service`` or ``restart`` (a rollout restart).
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


@dataclass(frozen=True)
class WorkloadView:
    """One workload (Deployment or StatefulSet) as its API object holds it: the spec's replica
    count and pod template, and the rollout status. A snapshot taken at the call; it does not
    follow later changes.

    Attributes:
        name: the workload's name (the service's).
        kind: ``Deployment`` or ``StatefulSet``.
        replicas: ``spec.replicas``.
        revision: ``deployment.kubernetes.io/revision`` (a StatefulSet's: its generation).
        generation: ``metadata.generation``.
        observed_generation: ``status.observedGeneration``.
        ready_replicas: ``status.readyReplicas``.
        image: the pod template's (only) container image.
        env: the container's environment, name -> value (values only: the simulator has no
            ``valueFrom``).
        resources: the container's requests and limits.
        readiness_probe: the container's readiness probe, or None.
        liveness_probe: the container's liveness probe, or None.
    """

    name: str
    kind: str
    replicas: int
    revision: int
    generation: int
    observed_generation: int
    ready_replicas: int
    image: str
    env: dict[str, str]
    resources: Resources
    readiness_probe: Probe | None
    liveness_probe: Probe | None


@dataclass(frozen=True)
class PodView:
    """One pod as ``kubectl get pod -o wide`` shows it. A snapshot taken at the call.

    Attributes:
        name: the pod's name.
        uid: ``metadata.uid``, unique over the run (a StatefulSet's replacement pod has the
            same name, not the same uid).
        service: the workload that owns it (its ``app`` label).
        node: the node it is bound to, or None while unscheduled.
        zone: that node's ``topology.kubernetes.io/zone``, or None.
        ready: the pod's ``Ready`` condition is true.
        terminating: it has a deletion timestamp (still listed until it is gone).
        status: the STATUS column (``Running``, ``CrashLoopBackOff``, ``Terminating``, ...).
        restarts: the container's restart count.
    """

    name: str
    uid: str
    service: str
    node: str | None
    zone: str | None
    ready: bool
    terminating: bool
    status: str
    restarts: int


@dataclass(frozen=True)
class ServiceHealth:
    """Health of one service over a window.

    Attributes:
        service: name.
        ready: ready pods.
        desired: spec replicas.
        rps: requests per second served (0 for stores and non-app workloads).
        error_share: share of served requests answered 5xx.
        p95_ms: 95th percentile latency from the histogram (linear interpolation within a
            bucket, as ``histogram_quantile``), or None without requests.
        restarts: container restarts summed over current pods.
        status: worst pod status (``Running``, ``CrashLoopBackOff``, ...).
    """

    service: str
    ready: int
    desired: int
    rps: float
    error_share: float
    p95_ms: float | None
    restarts: int
    status: str


@dataclass(frozen=True)
class RouteHealth:
    """User-facing health of one entry route over a window (rates per second, ms)."""

    route: str
    rps: float
    error_share: float
    p50_ms: float
    p95_ms: float


@dataclass(frozen=True)
class ServiceWindow:
    """One service's counters over a :class:`HealthWindow`, and its pods at the window's end.

    Attributes:
        service: name.
        ready: ready pods (the workload's ``status.readyReplicas``).
        desired: ``spec.replicas``.
        requests: increase of ``http_requests_total`` (every code) over the window, requests.
        errors: of which answered 5xx, requests.
        latency_buckets: increase of ``http_request_duration_seconds_bucket`` per bound of
            :attr:`HealthWindow.le`, cumulative (as the ``le`` series are), requests.
        restarts: container restarts summed over its pods not terminating.
        status: the first pod STATUS that is not ``Running`` (else ``Running``; ``-`` without
            pods), in the workload's pod order.
    """

    service: str
    ready: int
    desired: int
    requests: float
    errors: float
    latency_buckets: tuple[float, ...]
    restarts: int
    status: str


@dataclass(frozen=True)
class HealthWindow:
    """Service, route and store health between two calls of :meth:`Substrate.health_window`.

    Counter increases are taken as PromQL's ``increase()`` takes them over the window's two
    ends: per series, a decrease is a counter reset (the new process counted from zero), and
    a series gone by the end counts nothing.

    Attributes:
        t: run time of the window's end, seconds.
        span_s: the window's length, seconds (0 for the first window, which counts from zero:
            its increases are everything counted so far).
        le: the latency histogram's bucket upper bounds, seconds, ascending, last ``inf``.
        services: one entry per service of the app model, in its order.
        routes: the load generator's view of each entry route over the window (over one tick
            for the first window).
        stores: per stateful store, its data generation (the times it lost its data).
        mark: pass it back as ``since`` to get the next window; opaque.
    """

    t: float
    span_s: float
    le: tuple[float, ...]
    services: tuple[ServiceWindow, ...]
    routes: tuple[RouteHealth, ...]
    stores: dict[str, int]
    mark: object = field(repr=False)


@dataclass(frozen=True)
class ProbeResult:
    """One symptom probe sample (ground truth: to the bundle and the scorer, never to an operator).

    Attributes:
        ok: the answer is correct (and, with ``rollout``, the Deployment fully rolled out).
        success: success probability of the probe request, 0..1.
        p95_ms: p95 latency of the probe request, ms.
        detail: a short human explanation.
    """

    ok: bool
    success: float
    p95_ms: float
    detail: str


@dataclass
class FaultInstance:
    """A catalog fault as injected into one run: the handle :meth:`Substrate.apply_fault`
    returns and :meth:`Substrate.revert_fault` and :meth:`Substrate.finish_revert` take.

    Attributes:
        spec: the catalog entry.
        t_inject: run time of injection, seconds.
        changes: change records the injection shipped (code, config, flag, scale).
        revision_before: the target Deployment's revision before injection.
        original: values the injection replaced (env, replicas, image, resources, flag,
            readiness probe; the nodes taken down; the store pods restarted).
        effect_ids: the substrate's own handles on behaviour it keeps in place for the fault
            (the simulator's behaviour effects); empty once the fault has ended for good.
        t_revert: run time the orchestrator reverted it, or None while active.
        revert_changes: change records of the revert.
    """

    spec: FaultSpec
    t_inject: float
    changes: list[ChangeRecord] = field(default_factory=list)
    revision_before: int | None = None
    original: dict[str, Any] = field(default_factory=dict)
    effect_ids: list[str] = field(default_factory=list)
    t_revert: float | None = None
    revert_changes: list[ChangeRecord] = field(default_factory=list)

    @property
    def active(self) -> bool:
        return self.t_revert is None

    @property
    def change_ids(self) -> list[str]:
        return [c.id for c in self.changes]

    def artifact_refs(self) -> list[str]:
        """Every string an RCA may name as the artifact: change ids, commits, the spec's ref."""
        refs = [self.spec.artifact.ref]
        for c in self.changes:
            refs.append(c.id)
            if c.commit:
                refs.extend([c.commit, c.commit[:7]])
            if c.image:
                refs.append(c.image)
        return refs


class SubstrateError(Exception):
    """A mutation or query the substrate refuses (unknown object, invalid change)."""


class FaultSkipped(SubstrateError):
    """A catalog fault this substrate cannot inject (no API expression for its mechanism here,
    e.g. a kubelet stop on a real cluster, or chaos faults without Chaos Mesh): the run records
    it as skipped -- it is neither scored as missed nor counted as failed -- and the run's
    summary counts it."""


class Substrate(ABC):
    """A running application under load (see module docstring).

    Attributes:
        kind: the substrate kind :func:`engine.run.substrates.open_substrate` opens it by
            (``sim``, ``kube``); ``run.start`` records it.
        app: the application model it runs.
        seed: the run's seed (the simulator's randomness; a real cluster's load generator).
        dt: the granularity of :meth:`advance`, seconds: run time moves in whole multiples
            of it (the simulator's tick, 1 s).
        store: the scraped series the embedded alert evaluator reads
            (:class:`alerts.series.SeriesStore`), or None where alerts come from a real
            Prometheus instead.
    """

    kind: ClassVar[str] = "sim"
    app: AppModel
    seed: int
    dt: float
    store: SeriesStore | None

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
    def logs(self, pod: str, *, tail: int | None = None, previous: bool = False,
             since: float | None = None, timestamps: bool = False) -> list[str]:
        """Log lines of a pod's application container, oldest first (only those written at
        or after run time ``since``, when given: ``kubectl logs --since``); with
        ``timestamps``, each prefixed with the time the runtime wrote it and a space, as the
        kubelet prefixes them (RFC 3339 with nanoseconds, trailing zeros dropped:
        ``2026-01-05T09:00:59.977Z``; ``kubectl logs --timestamps``).

        Raises:
            SubstrateError: unknown pod, no previous container when ``previous``, or a
                container that has not started (the kubelet's "is waiting to start" text).
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

    @abstractmethod
    def commits_ahead(self, service: str) -> int:
        """How many commits the repository head of ``service`` is ahead of the deployed revision
        (0 when the pods run the head; after a rollback, the commits rolled back over).

        Raises:
            SubstrateError: unknown service.
        """

    # mutations
    @abstractmethod
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
            resources: new container requests and limits; rolls out without a build.
            readiness_probe: a new readiness probe (None removes it; ``"keep"``, the default,
                leaves it); rolls out without a build.
            liveness_probe: the same for the liveness probe.
            build: whether ``files`` need a CI build (default: yes when any changed file is
                source code; config files such as a flag file roll out as a ConfigMap change).
                With ``files``, the env, resource and probe edits ride with the commit.
            summary: one-line description (commit subject).
            author: who ships it.

        Raises:
            SubstrateError: unknown service, nothing to change, or ``image`` together with
                files that need a build (the build makes the image).
        """

    @abstractmethod
    def restart_pod(self, pod: str) -> None:
        """Delete a pod; its controller creates a replacement."""

    @abstractmethod
    def scale(self, service: str, replicas: int, *, summary: str | None = None, author: str = "operator") -> None:
        """Set a workload's replica count; the pipeline's log records it as a ``scale`` change
        with ``summary`` (default ``scale to N replicas``) by ``author``.

        Raises:
            SubstrateError: unknown service, or ``replicas`` not a non-negative integer.
        """

    @abstractmethod
    def rollback(self, service: str, revision: int | None = None) -> ChangeRecord:
        """Roll a Deployment back to ``revision`` (default: the previous one): its pod
        template is restored, as ``kubectl rollout undo`` does; the repository head is
        unchanged, so a build that lands later deploys the head again."""

    def patch_service(self, service: str, *, selector: dict[str, str] | None = None,
                      target_port: int | str | None = None, summary: str | None = None,
                      author: str = "operator") -> ChangeRecord:
        """Set a Service's selector and/or targetPort (``kubectl patch service``); the change is
        logged in the deploy history (kind ``service``).

        Raises:
            SubstrateError: no such Service, nothing to change, or a substrate without it.
        """
        raise SubstrateError(f"{type(self).__name__} cannot patch Services")

    def rollout_restart(self, service: str, *, summary: str | None = None, author: str = "operator") -> ChangeRecord:
        """Roll every pod of a workload without changing what it runs (``kubectl rollout restart``:
        a new ``kubectl.kubernetes.io/restartedAt`` on the pod template); logged in the deploy
        history (kind ``restart``, ``summary`` default ``rollout restart``).

        Raises:
            SubstrateError: unknown service, or a substrate without it.
        """
        raise SubstrateError(f"{type(self).__name__} cannot restart rollouts")

    @abstractmethod
    def tag_image(self, service: str, tag: str) -> str:
        """Push the image ``service``'s pod template runs under ``tag`` too (``docker tag`` and
        push: the same build); returns the new image reference, which pulls from now on.

        Raises:
            SubstrateError: unknown service, or a malformed tag.
        """

    @abstractmethod
    def set_load_factor(self, factor: float) -> None:
        """Scale the load generator's request rate (1 = nominal; a burst is e.g. 2.5).

        Raises:
            SubstrateError: ``factor`` not > 0.
        """

    def set_background_noise(self, noise: BackgroundNoise | None) -> None:
        """Produce the schedule's background alert noise (:mod:`faults.noise`) as series,
        from now on (None: none). A real cluster has noise of its own: the default does nothing."""
        return None

    # reads for the run loop (typed views; the tools read :meth:`objects`)
    @abstractmethod
    def workload(self, name: str) -> WorkloadView:
        """The workload ``name`` (a Deployment or StatefulSet of the app), as it is now.

        Raises:
            SubstrateError: no such workload.
        """

    @abstractmethod
    def pods(self, service: str | None = None) -> list[PodView]:
        """The pods of workload ``service`` (every pod of the app when None), terminating ones
        included (flagged), as ``kubectl get pods -l app=<service> -o wide`` lists them.

        Raises:
            SubstrateError: unknown workload.
        """

    @abstractmethod
    def zone_nodes(self, zone: str) -> list[str]:
        """Names of the nodes in ``zone`` (``topology.kubernetes.io/zone``), ready or not;
        empty for an unknown zone."""

    @abstractmethod
    def load_rate(self) -> float:
        """The load generator's mean entry request rate now, requests per second (0 while it
        is down): the simulator's from its load model, a real load generator's as configured."""

    @abstractmethod
    def exposition(self) -> str:
        """Every series of :meth:`scrape`, in the Prometheus text format (what ``/metrics``
        serves to a real Prometheus)."""

    @abstractmethod
    def service_health(self, window_s: float = 60.0) -> list[ServiceHealth]:
        """Per-service health over the last ``window_s`` seconds of scrapes (the app model's
        order): what ``marathon sim`` prints."""

    @abstractmethod
    def route_health(self, window_s: float = 60.0) -> list[RouteHealth]:
        """User-facing health of each entry route over the last ``window_s`` seconds, as the
        load generator saw it (the app model's order).

        The simulator's latency quantiles come from its model of the route, not from a
        histogram; a real cluster's would come from the load generator's own histogram.
        """

    @abstractmethod
    def health_window(self, since: object | None = None) -> HealthWindow:
        """Service, route and store health since the window that returned ``since`` as its
        :attr:`HealthWindow.mark` (None: count from zero); see :class:`HealthWindow`.

        Calls do not disturb each other: each reader keeps its own mark.

        Raises:
            SubstrateError: ``since`` is not a mark of this substrate (or of the one it forked from).
        """

    # ground truth: faults, probes, forks (the run loop, qualification and the oracle only)
    @abstractmethod
    def apply_fault(self, spec: FaultSpec) -> FaultInstance:
        """Inject catalog fault ``spec`` now, as a person or an outage would: a commit through
        the build pipeline, an env, resource, probe, image or flag change rolled out, a scale,
        a runaway process, a network delay, a store restarted, a zone lost.

        Returns:
            What was done (change ids, the revision before, the values replaced), to revert.

        Raises:
            SubstrateError: the change does not apply to the repository head or the current
                state.
            KeyError: the spec names a workload the app does not have.

        The simulator models a defect's behaviour as effects conditioned on the defect being
        deployed (its marker line in the running source, its env value or flag variant in
        place), so an operator's rollback or patch repairs it by construction; a real cluster
        would ship the defect itself (a real faulty build or chaos tooling).
        """

    @abstractmethod
    def revert_fault(self, fault: FaultInstance) -> list[ChangeRecord]:
        """Undo what the injection of ``fault`` still has in place (its end of life): ship the
        inverse change of a code, config or flag change -- only where the head or the template
        still has the fault's value, so an operator's repair is never undone -- end runtime
        faults, bring nodes back. Sets ``fault.t_revert``.

        Returns:
            The changes shipped (none when an operator already fixed everything).
        """

    @abstractmethod
    def finish_revert(self, fault: FaultInstance) -> bool:
        """Finish a reverted fault once its inverse change is deployed (the simulator drops the
        fault's behaviour then); True when nothing of it remains. Call it every evaluation
        interval after :meth:`revert_fault` until it returns True."""

    @abstractmethod
    def probe(self, probe: ProbeSpec, target: str | None = None) -> ProbeResult:
        """Judge a fault's symptom probe now (:class:`faults.spec.ProbeSpec`): a user request
        along an entry route (judged where it reaches ``target``, the call to it and everything
        below, so that faults elsewhere on the route neither mask nor fake this one; the whole
        route when None) or a direct call to one operation, correct when it succeeds with
        probability at least ``1 - max_error`` within its p95 latency limit; with ``rollout``,
        the named Deployment must also be fully rolled out (:meth:`rollout_status`).

        The simulator computes the request's success probability and latency distribution from
        its model, with no request sent; a real cluster would send probe requests over HTTP
        and estimate both from their outcomes.

        Raises:
            SubstrateError: an unknown route or operation.
            KeyError: ``probe.rollout`` names no workload.
        """

    @abstractmethod
    def rollout_status(self, deployment: str) -> ProbeResult:
        """Whether ``deployment`` is fully rolled out, as ``kubectl rollout status`` judges it:
        generation observed, as many pods as requested, all of the current template and
        ready, none waiting (other than being created). ``success`` is 1 or 0 and ``p95_ms``
        0 (no request is made); true at 0/0 replicas, so never a symptom probe by itself.

        Raises:
            KeyError: no such workload.
        """

    def close(self) -> None:
        """Release what the substrate holds open (a real cluster's connections); the run loop
        calls it when it closes. It may be used again afterwards (connections reopen). The
        default does nothing."""
        return None

    def fault_in_template(self, fault: FaultInstance) -> list[str]:
        """What of the injection of ``fault`` the target's pod template (or Service) still
        carries -- the fault's image, env values, resources, probes, replicas -- as short
        descriptions; empty when none of it is left. The restart gate's judgement on a
        substrate that cannot :meth:`fork`: a restart only masks a defect that is still
        deployed, so a repair with nothing of the fault left in the template survives one.

        Raises:
            SubstrateError: a substrate without it (the simulator forks instead).
        """
        raise SubstrateError(f"{type(self).__name__} judges restarts by forking")

    @abstractmethod
    def fork(self, *, drop_pending_builds: bool = False) -> Substrate:
        """An independent copy of the cluster at its current time, to try something on (the
        restart gate of :mod:`scoring.gates`); the original is untouched.

        Args:
            drop_pending_builds: drop builds still in the pipeline in the copy, so that only
                what is done to the copy changes it.

        The copy's series store starts empty and its container logs are empty. The simulator
        deep-copies itself; a real cluster cannot be forked (its substrate would raise
        SubstrateError, or answer from a model of itself).
        """
