"""The cluster administrator's Mutator: every write the API server parsed is executed on the substrate.

``marathon cluster`` serves its Kubernetes API with :class:`AdminMutator`, as a cluster with
a cluster-admin kubeconfig: no policy, no incident, every write done. Writes map onto the
:class:`~engine.substrate.Substrate` interface -- ``kubectl set image/env/resources`` and probe
edits are one :meth:`~engine.substrate.Substrate.deploy_change` (a rollout), ``kubectl scale``
is :meth:`~engine.substrate.Substrate.scale`, ``kubectl rollout undo`` is
:meth:`~engine.substrate.Substrate.rollback`, ``kubectl delete pod`` is
:meth:`~engine.substrate.Substrate.restart_pod`, a Service patch is
:meth:`~engine.substrate.Substrate.patch_service` -- and, where a :class:`World` is given (the
simulated cluster's :class:`engine.sim.world.SimWorld`), what a real cluster would make of
images, env values, Chaos Mesh objects and Node taints goes through it.

The pipeline records these writes with ``author`` = the requester: the impersonated user or
the ``fieldManager`` (``kubectl --as=alice``, a client's field manager), else the authenticated
user (``admin``), except kubectl's own default field managers (``kubectl-set``,
``kubectl-patch``...), which name the tool, not the person. The record's summary is the body's
``kubernetes.io/change-cause`` annotation when it sets one (what ``kubectl --record`` wrote),
else a description of the write.

Departures from a real kube-apiserver: ``kubectl rollout restart`` restarts the Deployment's
pods through the substrate (:meth:`~engine.substrate.Substrate.restart_pod`, one by one as the
rollout's surge would, all in the same instant) where the substrate has no rolling restart of
its own; a write that changes several things of a Deployment at once (image and env...) is one
rollout, but a rollback, a scale and a restart in the same patch are executed in that order as
separate steps.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal, Protocol

from engine.apps.model import Probe, Resources
from engine.kube.protocol import KEEP, ApiError, DeploymentChange, NodeChange, Requester
from engine.substrate import ChangeRecord, Substrate, SubstrateError

CHANGE_CAUSE = "kubernetes.io/change-cause"
CHAOS_GROUP = "chaos-mesh.org"
_NOT_FOUND = re.compile(r'^(\S+) "([^"]*)" not found$')


class World(Protocol):
    """What a simulated cluster makes of writes that need more than the substrate interface
    (:class:`engine.sim.world.SimWorld`); a real cluster has no such object: its images, env
    values, chaos tooling and nodes are real."""

    def roll_out(self, deployment: str, *, image: str | None = None, env: Mapping[str, str | None] | None = None,
                 resources: Resources | None = None, readiness_probe: Probe | Literal["keep"] | None = "keep",
                 liveness_probe: Probe | Literal["keep"] | None = "keep", summary: str,
                 author: str) -> ChangeRecord:
        """One rollout of a Deployment's template (image, env, resources, probes)."""
        ...

    def create_chaos(self, plural: str, namespace: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        """A Chaos Mesh object created (``stresschaos``, ``networkchaos``); returns it as stored."""
        ...

    def delete_chaos(self, plural: str, namespace: str, name: str) -> None:
        """A Chaos Mesh object deleted."""
        ...

    def change_node(self, node: str, *, unschedulable: bool | None = None,
                    taints: tuple[Mapping[str, str], ...] | None = None) -> None:
        """A Node's cordon state and taints."""
        ...


def api_error(exc: SubstrateError) -> ApiError:
    """A substrate's refusal as the API's ``Status``: ``404 NotFound`` for ``<resource> "<name>" not
    found``, else ``422 Invalid`` with the substrate's message."""
    message = str(exc)
    m = _NOT_FOUND.match(message)
    if m is not None:
        resource, name = m.groups()
        plural, _, group = resource.partition(".")
        return ApiError(404, "NotFound", message, {"name": name, "kind": plural, **({"group": group} if group else {})})
    return ApiError(422, "Invalid", message)


def author_of(req: Requester) -> str:
    """Who a write is by (module docstring)."""
    named = (req.incident or "").strip()
    if named and not named.startswith("kubectl"):
        return named
    return req.user


def change_cause(req: Requester) -> str | None:
    """The ``kubernetes.io/change-cause`` annotation the request body sets (on the object or on
    its pod template), or None."""
    try:
        doc = json.loads(req.body) if req.body else None
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    for meta in (doc.get("metadata"), ((doc.get("spec") or {}).get("template") or {}).get("metadata")):
        if isinstance(meta, dict):
            cause = (meta.get("annotations") or {}).get(CHANGE_CAUSE)
            if isinstance(cause, str) and cause.strip():
                return cause.strip()
    return None


def describe(change: DeploymentChange) -> str:
    """A one-line description of a Deployment write, as ``kubectl`` words the command."""
    name = change.deployment
    parts = []
    if change.image is not None:
        parts.append(f"kubectl set image deployment/{name} {change.image}")
    if change.env:
        settings = " ".join(f"{k}-" if v is None else f"{k}={v}" for k, v in sorted(change.env.items()))
        parts.append(f"kubectl set env deployment/{name} {settings}")
    if change.resources is not None:
        parts.append(f"kubectl set resources deployment/{name}")
    if change.readiness_probe != KEEP or change.liveness_probe != KEEP:
        parts.append(f"kubectl set probe deployment/{name}")
    return "; ".join(parts) or f"kubectl patch deployment/{name}"


class AdminMutator:
    """Executes every write on ``substrate`` (module docstring); implements
    :class:`engine.kube.protocol.Mutator`.

    Args:
        substrate: the cluster the writes change.
        world: the simulated world's hooks, or None (writes through the substrate only; Chaos
            Mesh objects are then ``404`` and Node writes ``422``).
    """

    def __init__(self, substrate: Substrate, world: World | None = None) -> None:
        self.substrate = substrate
        self.world = world
        self.records: list[ChangeRecord] = []
        """The pipeline records of the writes executed, oldest first."""

    def change_deployment(self, change: DeploymentChange, req: Requester) -> None:
        """Rollback, then the template's image/env/resources/probes as one rollout, then the
        replica count, then a restart.

        Raises:
            ApiError: ``422 Invalid`` for a change the simulated cluster does not model
                (``change.other``) or one the substrate refuses; ``404 NotFound`` for an
                unknown Deployment.
        """
        name = change.deployment
        if change.other:
            causes = [{"reason": "FieldValueForbidden", "message": "Forbidden: the simulated cluster does not model "
                                                                     "this change", "field": p} for p in change.other]
            raise ApiError(422, "Invalid", f'Deployment.apps "{name}" is invalid: {change.other[0]}: Forbidden: the '
                                           "simulated cluster does not model this change",
                           {"name": name, "group": "apps", "kind": "Deployment", "causes": causes})
        author = author_of(req)
        try:
            if change.rollback_to is not None:
                self.records.append(self.substrate.rollback(name, change.rollback_to))
                self.records[-1].author = author
            templated = (change.image is not None or bool(change.env) or change.resources is not None
                         or change.readiness_probe != KEEP or change.liveness_probe != KEEP)
            if templated:
                summary = change_cause(req) or describe(change)
                if self.world is not None:
                    rec = self.world.roll_out(name, image=change.image, env=dict(change.env),
                                              resources=change.resources, readiness_probe=change.readiness_probe,
                                              liveness_probe=change.liveness_probe, summary=summary, author=author)
                else:
                    rec = self.substrate.deploy_change(name, image=change.image, env=dict(change.env) or None,
                                                       resources=change.resources,
                                                       readiness_probe=change.readiness_probe,
                                                       liveness_probe=change.liveness_probe, summary=summary,
                                                       author=author)
                self.records.append(rec)
            if change.replicas is not None:
                self.substrate.scale(name, change.replicas, summary=change_cause(req), author=author)
                self.records.append(self.substrate.deploy_history(name)[-1])
            if change.restart:
                self._restart(name, change_cause(req), author)
        except SubstrateError as exc:
            raise api_error(exc) from None

    def _restart(self, name: str, summary: str | None, author: str) -> None:
        if type(self.substrate).rollout_restart is not Substrate.rollout_restart:
            # a substrate with a rolling restart of its own (a new template)
            self.records.append(self.substrate.rollout_restart(name, summary=summary, author=author))
            return
        for pod in self.substrate.pods(name):
            if not pod.terminating:
                self.substrate.restart_pod(pod.name)

    def scale_statefulset(self, name: str, replicas: int, req: Requester) -> None:
        """``statefulsets/scale``.

        Raises:
            ApiError: ``404`` unknown StatefulSet, ``422`` refused.
        """
        try:
            self.substrate.scale(name, replicas, summary=change_cause(req), author=author_of(req))
        except SubstrateError as exc:
            raise api_error(exc) from None
        self.records.append(self.substrate.deploy_history(name)[-1])

    def delete_pod(self, name: str, req: Requester) -> None:
        """``kubectl delete pod``: the controller replaces it.

        Raises:
            ApiError: ``404`` unknown pod.
        """
        try:
            self.substrate.restart_pod(name)
        except SubstrateError as exc:
            raise api_error(exc) from None

    def patch_service(self, name: str, selector: Mapping[str, str] | None, target_port: int | str | None,
                      req: Requester) -> None:
        """A Service's selector and/or targetPort.

        Raises:
            ApiError: ``404`` unknown Service, ``422`` refused.
        """
        try:
            self.records.append(self.substrate.patch_service(
                name, selector=None if selector is None else dict(selector), target_port=target_port,
                summary=change_cause(req), author=author_of(req)))
        except SubstrateError as exc:
            raise api_error(exc) from None

    def change_node(self, change: NodeChange, req: Requester) -> None:
        """Cordon, uncordon, taints (through the world).

        Raises:
            ApiError: ``422`` without a world or for a taint it refuses, ``404`` unknown node.
        """
        if self.world is None:
            raise ApiError(422, "Invalid", f'Node "{change.node}" is invalid: spec: Forbidden: this cluster does not '
                                           "model node writes")
        try:
            self.world.change_node(change.node, unschedulable=change.unschedulable, taints=change.taints)
        except SubstrateError as exc:
            raise api_error(exc) from None

    def create_custom(self, group: str, version: str, plural: str, namespace: str, obj: Mapping[str, Any],
                      req: Requester) -> dict[str, Any]:
        """A Chaos Mesh object created (through the world).

        Raises:
            ApiError: ``404`` for a group other than ``chaos-mesh.org`` or without a world,
                ``422 Invalid`` for an object the world refuses.
        """
        if self.world is None or group != CHAOS_GROUP:
            raise ApiError(404, "NotFound", f"the server could not find the requested resource ({plural}.{group})")
        try:
            return self.world.create_chaos(plural, namespace, obj)
        except SubstrateError as exc:
            kind = {"stresschaos": "StressChaos", "networkchaos": "NetworkChaos", "podchaos": "PodChaos"}.get(plural,
                                                                                                            plural)
            name = str((obj.get("metadata") or {}).get("name") or "")
            raise ApiError(422, "Invalid", f'{kind}.{group} "{name}" is invalid: {exc}',
                           {"name": name, "group": group, "kind": kind}) from None

    def delete_custom(self, group: str, version: str, plural: str, namespace: str, name: str,
                      req: Requester) -> None:
        """A Chaos Mesh object deleted: its effect ends.

        Raises:
            ApiError: ``404`` for a group other than ``chaos-mesh.org`` or without a world.
        """
        if self.world is None or group != CHAOS_GROUP:
            raise ApiError(404, "NotFound", f"the server could not find the requested resource ({plural}.{group})")
        self.world.delete_chaos(plural, namespace, name)
