"""The contract between :class:`engine.kube.apiserver.KubeAPIServer` and what executes its writes.

The API server parses a request (path, verb, patch type, body) into one typed write -- a
:class:`DeploymentChange`, a scale, a pod deletion, a Service or Node patch, a custom object
-- and hands it to a :class:`Mutator` with the :class:`Requester` that sent it. Two
Mutators exist:

* the cluster administrator's (:class:`engine.kube.admin.AdminMutator`, ``marathon cluster``):
  every write is executed on the substrate, as ``kubectl`` with a cluster-admin kubeconfig;
* the operator's (``--kube-api`` on a run, :mod:`engine.serve.kubeapi`): every write is an act
  call through the run's policy (an admission step), recorded as a tool call with its raw
  request and, when allowed, executed as an action.

A Mutator refuses a write by raising :class:`ApiError`, which the server returns as a
Kubernetes ``Status`` with that code and reason (``403 Forbidden``, ``404 NotFound``,
``409 Conflict``, ``422 Invalid``), as the real API server words them
(``k8s.io/apimachinery/pkg/api/errors``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from engine.apps.model import Probe, Resources

KEEP: Literal["keep"] = "keep"
"""A probe field of :class:`DeploymentChange` that the write does not touch."""


class ApiError(Exception):
    """A write (or read) the API refuses, returned as a ``Status`` object.

    Args:
        code: the HTTP status (403, 404, 409, 422, 400...).
        reason: the ``StatusReason`` (``Forbidden``, ``NotFound``, ``Conflict``, ``Invalid``,
            ``BadRequest``...).
        message: the human-readable message kubectl prints after ``Error from server (<reason>):``.
        details: the ``StatusDetails`` (``name``, ``group``, ``kind``, ``causes``), if any.
    """

    def __init__(self, code: int, reason: str, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = dict(details or {})

    def status(self) -> dict[str, Any]:
        """The ``Status`` body (``kind: Status, apiVersion: v1``) the server returns."""
        body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                "message": self.message, "reason": self.reason, "code": self.code}
        if self.details:
            body["details"] = self.details
        return body


@dataclass(frozen=True)
class Requester:
    """Who sent a write, and the raw request (recorded with the operator's tool call).

    Attributes:
        user: the authenticated user (from the bearer token), e.g. ``operator`` or ``admin``.
        incident: the incident the write is for, when the request names one: the
            impersonated user (``kubectl --as=INC-1``, header ``Impersonate-User``), the
            ``fieldManager`` query parameter, or the ``sre-marathon.io/incident`` annotation
            in the request body -- in that order; None when it names none.
        method: HTTP method (``PATCH``, ``PUT``, ``POST``, ``DELETE``).
        path: the request path with its query string.
        content_type: the request's Content-Type (the patch type for PATCH).
        body: the request body as text (at most 64 KiB kept; longer bodies are refused with 413).
    """

    user: str
    incident: str | None
    method: str
    path: str
    content_type: str = ""
    body: str = ""


@dataclass(frozen=True)
class DeploymentChange:
    """One write to a Deployment's spec, as what it changes (not as the patch that said it).

    Exactly what differs between the Deployment before and after the patch, in the app
    container (the first container of the pod template):

    Attributes:
        deployment: the Deployment's name.
        image: the new image, or None when unchanged (``kubectl set image``).
        env: env vars set (value) or removed (None) (``kubectl set env``); empty when unchanged.
        resources: the new requests and limits, or None when unchanged.
        readiness_probe: the new readiness probe, None when removed, :data:`KEEP` when unchanged.
        liveness_probe: the same for the liveness probe.
        replicas: the new ``spec.replicas``, or None when unchanged.
        restart: the template's ``kubectl.kubernetes.io/restartedAt`` annotation changed
            (``kubectl rollout restart``).
        rollback_to: the template now equals the template of this revision's ReplicaSet
            (``kubectl rollout undo``), or None.
        other: paths of anything else the patch changed (refused by both Mutators with
            ``422 Invalid``: the simulated cluster does not model it), empty otherwise.
    """

    deployment: str
    image: str | None = None
    env: Mapping[str, str | None] = field(default_factory=dict)
    resources: Resources | None = None
    readiness_probe: Probe | Literal["keep"] | None = KEEP
    liveness_probe: Probe | Literal["keep"] | None = KEEP
    replicas: int | None = None
    restart: bool = False
    rollback_to: int | None = None
    other: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """True when the patch changes nothing (the server answers 200 with the object unchanged)."""
        return (self.image is None and not self.env and self.resources is None and self.readiness_probe == KEEP
                and self.liveness_probe == KEEP and self.replicas is None and not self.restart
                and self.rollback_to is None and not self.other)


@dataclass(frozen=True)
class NodeChange:
    """A write to a Node: ``kubectl cordon``/``uncordon`` (``spec.unschedulable``) and taints.

    Attributes:
        node: the Node's name.
        unschedulable: the new ``spec.unschedulable``, or None when unchanged.
        taints: the new ``spec.taints`` (``key``, ``value``, ``effect`` dicts), or None when unchanged.
    """

    node: str
    unschedulable: bool | None = None
    taints: tuple[Mapping[str, str], ...] | None = None


class ReadAudit(Protocol):
    """Told of every resource read before it is answered (``get``, ``list``, ``watch``, ``log``,
    ``metrics``; discovery, ``/version`` and access reviews are not reads of the cluster).

    The operator's API records each as a tool call and charges it a read's modeled run time,
    so information costs the same through kubectl as through the typed tools; it refuses a
    read (for example outside an external agent's invocation) by raising :class:`ApiError`.
    Called holding no lock, from a worker thread.
    """

    def __call__(self, verb: str, resource: str, req: Requester) -> None:
        """``verb``: ``get``, ``list``, ``watch``, ``log`` or ``metrics``; ``resource``: the
        plural, with its group when not core (``deployments.apps``), and ``/name`` for one object."""
        ...

    def streaming(self) -> bool:
        """Whether open streams (watches, ``logs -f``) may go on now; the server ends them when
        not (a watch paid for inside one invocation must not stream through the next gap).
        Called from the server's event loop: quick, taking no lock."""
        ...


class Mutator(Protocol):
    """Executes (or refuses, with :class:`ApiError`) the writes the API server parsed.

    Each method is called holding the server's lock on the substrate; it returns nothing and
    the server answers with the object as it is after the write (re-read from the substrate).
    """

    def change_deployment(self, change: DeploymentChange, req: Requester) -> None:
        """A patch or update of a Deployment (or ``deployments/scale``, as ``replicas`` only)."""
        ...

    def scale_statefulset(self, name: str, replicas: int, req: Requester) -> None:
        """``statefulsets/scale`` or a patch of a StatefulSet's ``spec.replicas``."""
        ...

    def delete_pod(self, name: str, req: Requester) -> None:
        """``kubectl delete pod``: the pod goes, its controller makes a replacement."""
        ...

    def patch_service(self, name: str, selector: Mapping[str, str] | None, target_port: int | str | None,
                      req: Requester) -> None:
        """A Service's new ``spec.selector`` and/or its port's ``targetPort`` (None: unchanged)."""
        ...

    def change_node(self, change: NodeChange, req: Requester) -> None:
        """A Node's cordon state or taints."""
        ...

    def create_custom(self, group: str, version: str, plural: str, namespace: str, obj: Mapping[str, Any],
                      req: Requester) -> dict[str, Any]:
        """Create a custom object (the administrator's Chaos Mesh ``StressChaos``/``NetworkChaos``);
        returns it as stored."""
        ...

    def delete_custom(self, group: str, version: str, plural: str, namespace: str, name: str,
                      req: Requester) -> None:
        """Delete a custom object created with :meth:`create_custom`."""
        ...
