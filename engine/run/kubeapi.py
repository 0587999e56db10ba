"""The operator's Kubernetes API for a run in progress (``--kube-api``): every write is one act call.

``marathon run``, ``watch``, ``play`` and ``serve`` with ``--kube-api [PORT]`` serve the run's
cluster through :class:`engine.kube.apiserver.KubeAPIServer` on loopback and write an operator
kubeconfig next to the run (``<run dir>.kubeconfig``, user ``operator``: beside the run
directory, not in it, so the token never enters the sealed bundle; removed when the run ends).
Reads are what the cluster shows (the same objects the typed read tools print). Writes go to
:class:`OperatorMutator`, an admission step in front of the run's one policy layer:

**One write, one typed act.** The API server parses a request into what it changes
(:class:`engine.kube.protocol.DeploymentChange` ...); the mutator maps it onto the typed act
tool that does exactly that and calls it through the run's :class:`engine.operate.tools.ToolBox`
-- the same arguments, target set, policy decision, modeled run time, ``tool.call`` and
``action.executed`` events as the typed call, plus the raw request (``request``: user, method,
path, content type, bounded body) on the ``tool.call``. So a kubectl-only operator is recorded,
replayed (``marathon verify --replay``) and scored exactly like one using the typed tools:

============================================  ===================================================
the write                                     the typed act
============================================  ===================================================
``kubectl scale`` (``deployments/scale``,      ``scale_deployment(deployment, replicas)``
``spec.replicas``; StatefulSets too)
``kubectl delete pod``                         ``restart_pod(pod)``
``kubectl rollout undo`` (the template of an   ``rollback(deployment, revision)``
older revision's ReplicaSet)
``kubectl set image``                          ``set_image(deployment, image)``
``kubectl rollout restart`` (``restartedAt``)  ``rollout_restart(deployment)``
``kubectl set resources``                      ``set_resources(deployment, resources)``
a readiness or liveness probe                  ``set_probe(deployment, probe, spec)`` (null: removed)
``kubectl set env`` of one variable            ``set_config(service, key, value)`` (``-``: unset)
Service ``spec.selector`` / ``targetPort``     ``patch_service(service, selector, target_port)``
============================================  ===================================================

Refused before admission, as an RBAC rule would refuse them (``403 Forbidden``, not recorded:
no typed act exists for them): Node writes (cordon, taints: the cluster's infrastructure), and
the environment of flagd (its configuration is its flag file: ``set_config`` on flagd sets a
flag). A patch that changes two things at once (image and env, two env vars, both probes) is
``422 Invalid``: one write is one act. Custom objects (``chaos-mesh.org``) are not served on the
operator's API (``404``), and writes outside the application's namespace are ``403``.

**Naming the incident.** Every act names an open incident the operator reported
(``report_incident``). A write names it, in this order of precedence (the API server reads it,
:class:`engine.kube.protocol.Requester`): ``kubectl --as=INC-0001`` (the ``Impersonate-User``
header), the ``fieldManager`` query parameter (``kubectl ... --field-manager=INC-0001``), or the
annotation ``sre-marathon.io/incident: INC-0001`` in the request body (kubectl's own default
field managers, ``kubectl-set``, ``kubectl-rollout``..., name none). A write that names none is
recorded like a typed call without ``incident`` (``invalid arguments``) and answered
``403 Forbidden`` with a message saying how, listing the open incidents; one naming an incident
that is not open is denied by the policy and answered ``403`` with the policy's reason, as is
every other denial (harness objects, targets outside the application, the rate limits).

**When writes are accepted** follows who operates the run (:class:`WriteMode`):

* ``marathon play``: whenever the player likes, like the terminal's own tool calls (``always``);
* ``marathon serve``: while an invocation of the external agent is open, like its MCP and HTTP
  tool calls (``invocation``; otherwise ``409 Conflict``, as the tool server answers 409);
* ``marathon run`` and ``watch``: never -- the run's operator is a built-in agent and a second
  actor would be recorded as it (``read-only``: ``403 Forbidden``, not recorded).

Departures from a real API server: the admission denial is a ``403`` whose message carries the
policy's reason (a real admission webhook's denial is a ``403`` too, worded by the webhook);
an allowed write costs the modeled run time of an act (10 s) before it is answered.

Reads cost what typed reads cost: on ``play`` and ``serve`` every resource read the server
answers from the cluster (``get``, ``list``, ``watch``, ``pods/log``, ``metrics.k8s.io``; not
discovery, ``/version`` or access reviews) is one ``kube_read`` tool call
(:data:`engine.operate.tools.API_TOOLS`), recorded with its raw request and charged a read's
5 s of modeled run time, and on ``serve`` refused with 409 outside the agent's invocation, as
the tool server refuses its calls -- so information is not cheaper through kubectl. kubectl
sends more requests than a typed tool makes calls (``describe pod`` is a GET of the pod and a
list of its events: 10 s where ``kubectl_describe`` costs 5 s; ``set image`` reads the
Deployment before it patches), so the API is never the cheaper way. A watch or ``logs -f``
streams until the run ends and, on ``serve``, until the invocation it was paid in closes
(:meth:`OperatorReads.streaming`): never a free live feed through the gap to the next one.
On ``run`` and ``watch``
the API is a watcher's (the operator is a built-in agent): reads are free and unrecorded, and
they leave the run exactly as it is (a seeded run with any number of them replays unchanged:
:meth:`engine.sim.simulator.Simulator.scrape` folds no traffic for a reader). On ``serve`` the
``agent.end`` event's ``tool_calls`` counts the tool server's calls only.
"""

from __future__ import annotations

import os
import re
import secrets
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from engine.kube.protocol import KEEP, ApiError, DeploymentChange, NodeChange, Requester
from engine.operate.tools import TOOLS, ToolResult

if TYPE_CHECKING:
    from engine.run.orchestrator import Orchestrator

WriteMode = Literal["always", "invocation", "read-only"]
"""When :class:`OperatorMutator` accepts writes (module docstring)."""
INCIDENT_ANNOTATION = "sre-marathon.io/incident"
"""The annotation that names a write's incident (the third way, after ``--as`` and ``fieldManager``)."""
HARNESS_NAMESPACES = ("monitoring", "kube-system", "kube-public", "kube-node-lease", "sre-marathon", "chaos-mesh")
"""Namespaces of the benchmark's harness and the cluster's own machinery: readable where the
cluster has objects there, never writable by the operator."""
ACT_TOOLS = tuple(name for name, spec in TOOLS.items() if spec.tier == "act")
_NAMESPACE_RE = re.compile(r"/namespaces/([^/?]+)")


def request_record(req: Requester) -> dict[str, str]:
    """The raw request as :meth:`engine.operate.tools.ToolBox.call` records it (``request``)."""
    return {"user": req.user, "method": req.method, "path": req.path, "content_type": req.content_type,
            "body": req.body}


@dataclass(frozen=True)
class _Target:
    """The object a write is for, as the API names it in messages (``deployments.apps "x"``)."""

    resource: str
    group: str
    name: str

    @property
    def named(self) -> str:
        return f'{self.resource}{"." + self.group if self.group else ""} "{self.name}"'

    def details(self) -> dict[str, str]:
        return {"name": self.name, "group": self.group, "kind": self.resource}

    def forbidden(self, why: str) -> ApiError:
        return ApiError(403, "Forbidden", f"{self.named} is forbidden: {why}", self.details())

    def invalid(self, why: str) -> ApiError:
        kind = {"deployments": "Deployment", "statefulsets": "StatefulSet", "pods": "Pod",
                "services": "Service", "nodes": "Node"}.get(self.resource, self.resource)
        # kubectl prints an Invalid Status's causes (not its message): one cause carries the reason
        return ApiError(422, "Invalid", f'{kind}{"." + self.group if self.group else ""} "{self.name}" is invalid: '
                                        f"{why}", {"name": self.name, "group": self.group, "kind": kind,
                                                   "causes": [{"reason": "FieldValueInvalid", "message": why,
                                                               "field": "spec"}]})

    def conflict(self, why: str) -> ApiError:
        return ApiError(409, "Conflict", f"Operation cannot be fulfilled on {self.named}: {why}", self.details())


_DEPLOYMENT = ("deployments", "apps")


class OperatorMutator:
    """:class:`engine.kube.protocol.Mutator` for a run: each write is one act call (module docstring).

    Args:
        run: the run in progress (its lock, tool box, clock).
        writes: when writes are accepted (:data:`WriteMode`).
        invocation_open: for ``invocation``: whether the external agent's invocation is open now
            (``marathon serve``: its hub has one published), asked holding the run lock.

    Every method raises :class:`engine.kube.protocol.ApiError` for a write it refuses: 403
    Forbidden (no incident, a policy denial, read-only, a harness namespace, a Node, flagd's
    environment), 404 NotFound (no such pod; custom objects), 409 Conflict (no invocation open, the
    run has ended, the substrate refused: no rollout history...), 422 Invalid (two changes in one
    write, arguments the typed tool rejects), 500 InternalError (a defect in the tool layer).
    """

    def __init__(self, run: Orchestrator, *, writes: WriteMode = "always",
                 invocation_open: Callable[[], bool] | None = None) -> None:
        if writes == "invocation" and invocation_open is None:
            raise ValueError("writes during invocations need to know when the agent's invocation is open")
        self.run = run
        self.writes = writes
        self.invocation_open = invocation_open
        self.last_result: ToolResult | None = None
        """What the tool box answered the last write that reached it (for a caller that wants
        the typed result behind a Status)."""

    # ----------------------------------------------------------------- the Mutator protocol

    def change_deployment(self, change: DeploymentChange, req: Requester) -> None:
        """A Deployment patch or update (or ``deployments/scale``), as the typed act it is."""
        target = _Target(*_DEPLOYMENT, change.deployment)
        self._admissible(target, req)
        if change.empty:
            return
        tool, args = self._deployment_act(change, target)
        self._act(tool, args, target, req)

    def scale_statefulset(self, name: str, replicas: int, req: Requester) -> None:
        """``statefulsets/scale``: ``scale_deployment`` (the typed tool scales any workload)."""
        target = _Target("statefulsets", "apps", name)
        self._admissible(target, req)
        self._act("scale_deployment", {"deployment": name, "replicas": replicas}, target, req)

    def delete_pod(self, name: str, req: Requester) -> None:
        """``kubectl delete pod``: ``restart_pod``."""
        target = _Target("pods", "", name)
        self._admissible(target, req)
        self._act("restart_pod", {"pod": name}, target, req)

    def patch_service(self, name: str, selector: Mapping[str, str] | None, target_port: int | str | None,
                      req: Requester) -> None:
        """A Service's selector and/or targetPort: ``patch_service``."""
        target = _Target("services", "", name)
        self._admissible(target, req)
        if isinstance(target_port, str):
            raise target.invalid(f"spec.ports[0].targetPort: Unsupported value: {target_port!r}: the operator's "
                                 "patch_service takes a port number (the container port), not a port name")
        args: dict[str, Any] = {"service": name}
        if selector is not None:
            args["selector"] = dict(selector)
        if target_port is not None:
            args["target_port"] = target_port
        self._act("patch_service", args, target, req)

    def change_node(self, change: NodeChange, req: Requester) -> None:
        """Refused: Nodes are the cluster's infrastructure, outside the application."""
        raise ApiError(403, "Forbidden", f'nodes "{change.node}" is forbidden: User "{req.user}" cannot patch '
                                         'resource "nodes" in API group "" at the cluster scope: nodes are the '
                                         "cluster's infrastructure, outside the application; the operator acts "
                                         f"on the application's workloads ({', '.join(ACT_TOOLS)})",
                       {"name": change.node, "group": "", "kind": "nodes"})

    def create_custom(self, group: str, version: str, plural: str, namespace: str, obj: Mapping[str, Any],
                      req: Requester) -> dict[str, Any]:
        """Refused: the operator's API serves no custom resources (no ``chaos-mesh.org``)."""
        raise _not_served()

    def delete_custom(self, group: str, version: str, plural: str, namespace: str, name: str,
                      req: Requester) -> None:
        """Refused as :meth:`create_custom`."""
        raise _not_served()

    # ----------------------------------------------------------------- mapping

    def _deployment_act(self, change: DeploymentChange, target: _Target) -> tuple[str, dict[str, Any]]:
        """The one typed act a Deployment change is (module docstring's table)."""
        name = change.deployment
        if change.other:
            raise target.invalid(f"{', '.join(change.other)}: Forbidden: not a field the operator's API changes "
                                 "(image, env, replicas, rollout restart and rollout undo are)")
        if change.rollback_to is not None:
            if change.replicas is not None:
                raise target.invalid("spec.replicas: Forbidden: one write is one act: roll back, then scale")
            return "rollback", {"deployment": name, "revision": change.rollback_to}
        parts = [what for what, changed in (
            ("spec.replicas", change.replicas is not None), ("image", change.image is not None),
            ("env", bool(change.env)), ("resources", change.resources is not None),
            ("readinessProbe", change.readiness_probe != KEEP), ("livenessProbe", change.liveness_probe != KEEP),
            ("kubectl.kubernetes.io/restartedAt", change.restart)) if changed]
        if len(parts) > 1 or len(change.env) > 1:
            what = ", ".join(parts) if len(parts) > 1 else f"env {', '.join(sorted(change.env))}"
            raise target.invalid(f"spec.template: Forbidden: one write is one act, and this one changes {what}: "
                                 "send each change as its own request")
        if change.replicas is not None:
            return "scale_deployment", {"deployment": name, "replicas": change.replicas}
        if change.image is not None:
            return "set_image", {"deployment": name, "image": change.image}
        if change.restart:
            return "rollout_restart", {"deployment": name}
        if change.resources is not None:
            return "set_resources", {"deployment": name, "resources": change.resources.model_dump()}
        for probe, spec in (("readiness", change.readiness_probe), ("liveness", change.liveness_probe)):
            if spec != KEEP:
                return "set_probe", {"deployment": name, "probe": probe,
                                     "spec": None if spec is None else spec.model_dump()}
        ((key, value),) = change.env.items()
        if name == "flagd":
            raise target.forbidden("flagd's configuration is its flag file, not its environment: set a flag's "
                                   "variant with the set_config tool (service flagd, key the flag, value the "
                                   "variant)")
        return "set_config", {"service": name, "key": key, "value": value}

    # ----------------------------------------------------------------- admission

    def _admissible(self, target: _Target, req: Requester) -> None:
        """Refuse a write that no act may be: read-only API, another namespace (not recorded)."""
        if self.writes == "read-only":
            raise target.forbidden(f"this run's operator is {self.run.operator.name!r}, a built-in agent: the "
                                   "Kubernetes API of marathon run/watch is read-only; act through kubectl on "
                                   "marathon play --kube-api or marathon serve --kube-api")
        m = _NAMESPACE_RE.search(req.path)
        namespace = self.run.sim.app.namespace
        if m is not None and m.group(1) != namespace:
            ns = m.group(1)
            why = ("is the benchmark's harness or the cluster's own machinery" if ns in HARNESS_NAMESPACES
                   else "is outside the application")
            raise target.forbidden(f'User "{req.user}" cannot {req.method.lower()} in the namespace "{ns}": the '
                                   f'namespace {why}; the application runs in "{namespace}"')

    def _open_incidents(self) -> list[str]:
        book = self.run.tools.incidents
        return [k for k in book.incidents if book.open(k)]

    def _act(self, tool: str, args: dict[str, Any], target: _Target, req: Requester) -> None:
        """Call ``tool`` through the run's tool box (recorded with the raw request); raise the
        Status its result calls for."""
        run = self.run
        with run.lock:
            if run.finished or run.over:
                raise target.conflict("the run has ended; no more writes are accepted")
            if self.writes == "invocation" and not self._invocation_open():
                nxt = run.next_invocation_t
                raise target.conflict(f"no invocation is open: the operator's writes are accepted while an "
                                      f"invocation is open (the tool server answers 409 likewise); the next "
                                      f"starts at run time {int(nxt // 60)}:{int(nxt % 60):02d}")
            incident = named_incident(req)
            call_args = dict(args) if incident is None else {**args, "incident": incident}
            result = run.tools.call(tool, call_args, request=request_record(req))
            self.last_result = result
        if result.ok:
            return
        raise self._status(tool, result, target, incident)

    def _invocation_open(self) -> bool:
        return self.run.in_invocation and self.invocation_open is not None and self.invocation_open()

    def _status(self, tool: str, result: ToolResult, target: _Target, incident: str | None) -> ApiError:
        error = result.error or "refused"
        open_ = ", ".join(self._open_incidents()) or "none (open one with report_incident)"
        how = (f"kubectl --as=<incident> (the Impersonate-User header), --field-manager=<incident> (the "
               f"fieldManager parameter), or the annotation {INCIDENT_ANNOTATION}: <incident> in the request body; "
               f"open incidents: {open_}")
        if incident is None:
            return target.forbidden(f"an operator write must name the open incident it is for: {how}")
        if result.denied:
            reason = error.removeprefix("denied by policy: ")
            if reason.endswith("not found"):
                return ApiError(404, "NotFound", reason, target.details())
            if "open incident" in reason:
                return target.forbidden(f"denied by policy ({tool}): {reason}; name one with {how}")
            return target.forbidden(f"denied by policy ({tool}): {reason}")
        if error.startswith(f"invalid arguments for {tool}"):
            return target.invalid(error)
        if error.startswith("internal error"):
            return ApiError(500, "InternalError", f"Internal error occurred: {error}")
        if error.startswith("the run has ended"):
            return target.conflict(error)
        return target.conflict(f"{tool}: {error}")


class OperatorReads:
    """:class:`engine.kube.protocol.ReadAudit` for a run: each resource read is one ``kube_read``
    tool call (module docstring), refused with 409 Conflict when no invocation is open on
    ``serve`` or the run has ended.

    Args:
        mutator: the run's :class:`OperatorMutator` (its run, write mode and invocation test).
    """

    def __init__(self, mutator: OperatorMutator) -> None:
        self.mutator = mutator

    def __call__(self, verb: str, resource: str, req: Requester) -> None:
        m = self.mutator
        run = m.run
        with run.lock:
            if run.finished or run.over:
                raise ApiError(409, "Conflict", "the run has ended; the cluster is no longer served")
            if m.writes == "invocation" and not m._invocation_open():
                nxt = run.next_invocation_t
                raise ApiError(409, "Conflict", f"no invocation is open: the operator's reads and writes are "
                                                f"answered while an invocation is open (the tool server answers "
                                                f"409 likewise); the next starts at run time "
                                                f"{int(nxt // 60)}:{int(nxt % 60):02d}")
            result = run.tools.call("kube_read", {"verb": verb, "resource": resource}, request=request_record(req))
        if not result.ok:  # arguments the read cannot be recorded with (a name over 300 characters)
            raise ApiError(400, "BadRequest", result.error or "the read was refused")

    def streaming(self) -> bool:
        """Open watches and follows end with the run, and on ``serve`` when the invocation that
        paid for them closes (read without the lock: a stream ends at most one poll late)."""
        m = self.mutator
        if m.run.finished or m.run.over:
            return False
        return m.writes != "invocation" or m._invocation_open()


def named_incident(req: Requester) -> str | None:
    """The incident a write names: :attr:`Requester.incident`, except kubectl's own default field
    managers (``kubectl``, ``kubectl-set``, ``kubectl-rollout``, ``kubectl-client-side-apply``...,
    sent as ``fieldManager`` by every kubectl write that was given no ``--field-manager``), which
    name none."""
    incident = req.incident
    if incident is None or incident == "kubectl" or incident.startswith("kubectl-"):
        return None
    return incident


def _not_served() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource")


# --------------------------------------------------------------------- serving a run's API


def write_modes(command: str) -> WriteMode:
    """The :data:`WriteMode` of a run started by ``marathon <command>`` (module docstring)."""
    return {"play": "always", "serve": "invocation"}.get(command, "read-only")  # type: ignore[return-value]


@dataclass
class RunKubeAPI:
    """A run's operator API, started: its URL, token and kubeconfig.

    Attributes:
        server: the :class:`engine.kube.apiserver.KubeAPIServer`.
        url: ``https://127.0.0.1:PORT``.
        token: the operator's bearer token.
        kubeconfig: where the operator kubeconfig was written.
        mutator: the :class:`OperatorMutator` behind it.
    """

    server: Any
    url: str
    token: str
    kubeconfig: Path
    mutator: OperatorMutator

    def stop(self) -> None:
        """Stop serving and remove the kubeconfig, whose token is dead from now on (idempotent)."""
        self.server.stop()
        self.kubeconfig.unlink(missing_ok=True)


def start_kube_api(run: Orchestrator, *, command: str, port: int = 0, invocation_open: Callable[[], bool] | None = None,
                   kubeconfig: str | Path | None = None, token: str | None = None) -> RunKubeAPI:
    """Serve ``run``'s cluster as the operator's Kubernetes API on loopback (module docstring).

    Args:
        run: the run in progress.
        command: ``run``, ``watch``, ``play`` or ``serve`` (chooses :func:`write_modes`).
        port: the TCP port (0: any free one).
        invocation_open: ``serve``: whether the external agent's invocation is open
            (:class:`OperatorMutator`).
        kubeconfig: write the operator kubeconfig here (default ``<run dir>.kubeconfig``, beside
            the run directory; for a run without one, ``marathon-<run id>-<pid>.kubeconfig`` in the
            temporary directory).
        token: the bearer token (default: a fresh random one).

    Raises:
        OSError: the port cannot be bound, or the kubeconfig cannot be written.
    """
    from engine.kube.apiserver import KubeAPIServer
    from engine.kube.kubeconfig import write_kubeconfig
    from engine.sim.k8s import EPOCH

    token = token or secrets.token_urlsafe(24)
    mutator = OperatorMutator(run, writes=write_modes(command), invocation_open=invocation_open)
    reads = OperatorReads(mutator) if mutator.writes != "read-only" else None
    server = KubeAPIServer(run.sim, lock=run.lock, mutator=mutator, token=token, user="operator", epoch=EPOCH,
                           anchor_wall_clock=run.clock == "wall" and run.speed == 1.0, reads=reads)
    url = server.start("127.0.0.1", port)
    if kubeconfig is None:
        kubeconfig = default_kubeconfig_path(run)
    try:
        path = write_kubeconfig(kubeconfig, url, token, run.sim.app.namespace, user="operator",
                                certificate_authority=server.certificate)
    except OSError:
        server.stop()
        raise
    return RunKubeAPI(server, url, token, path, mutator)


def default_kubeconfig_path(run: Orchestrator) -> Path:
    """Where :func:`start_kube_api` writes the operator kubeconfig by default (its docstring)."""
    if run.recorder is not None:
        run_dir = Path(run.recorder.dir)
        return run_dir.with_name(run_dir.name + ".kubeconfig")
    return Path(tempfile.gettempdir()) / f"marathon-{run.run_id}-{os.getpid()}.kubeconfig"
