"""The API resources the simulated cluster serves, and their discovery documents.

One :class:`ServedResource` per resource (``pods``, ``deployments``...): where it lives
(group, version, namespaced), how kubectl names it (short names, categories), which
substrate kind holds its objects, and which verbs are honest for it -- ``get``, ``list``,
``watch`` always; ``patch``/``update``/``delete`` only where the server routes a write to a
:class:`~engine.kube.protocol.Mutator` and one is configured. Discovery documents are the
legacy ones (``APIVersions``, ``APIGroupList``, ``APIResourceList``): a client asking for
aggregated discovery (``apidiscovery.k8s.io/v2``) gets the legacy form, as from a server
without it, and falls back (client-go checks the response's content type).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]

CHAOS_GROUP = "chaos-mesh.org"
"""Chaos Mesh's API group (served only when the server is told to, on the administrator's API)."""
METRICS_GROUP = "metrics.k8s.io"


@dataclass(frozen=True)
class ServedResource:
    """One served API resource.

    Attributes:
        kind: the kind of its objects (``Pod``).
        plural: the resource name in paths (``pods``).
        group: the API group (``""`` for core).
        version: the group version served (``v1``).
        namespaced: objects live in namespaces.
        source: the substrate kind its objects come from (``Event`` for both event resources),
            or ``""`` for resources the server computes (metrics, custom objects).
        short_names: kubectl's short names (``po``).
        categories: discovery categories (``all`` makes ``kubectl get all`` list it).
        writes: verbs the server routes to a Mutator (``patch``, ``update``, ``delete``, ``create``).
        subresources: ``(name, kind, group, version, verbs, needs_mutator_verbs)`` entries for
            ``pods/log``, ``deployments/scale``...
    """

    kind: str
    plural: str
    group: str
    version: str
    namespaced: bool
    source: str
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    subresources: tuple[tuple[str, str, str, str, tuple[str, ...], tuple[str, ...]], ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """``pods``, ``deployments.apps``: how NotFound messages name the resource."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


_SCALE = ("scale", "Scale", "autoscaling", "v1", ("get",), ("patch", "update"))

RESOURCES: tuple[ServedResource, ...] = (
    ServedResource("Namespace", "namespaces", "", "v1", False, "Namespace", ("ns",)),
    ServedResource("Node", "nodes", "", "v1", False, "Node", ("no",), writes=("patch",)),
    ServedResource("Pod", "pods", "", "v1", True, "Pod", ("po",), ("all",), writes=("delete",),
                   subresources=(("log", "Pod", "", "v1", ("get",), ()),)),
    ServedResource("Service", "services", "", "v1", True, "Service", ("svc",), ("all",), writes=("patch",),
                   subresources=(("proxy", "ServiceProxyOptions", "", "v1",
                                  ("create", "delete", "get", "patch", "update"), ()),)),
    ServedResource("Endpoints", "endpoints", "", "v1", True, "Endpoints", ("ep",)),
    ServedResource("Event", "events", "", "v1", True, "Event", ("ev",)),
    ServedResource("ConfigMap", "configmaps", "", "v1", True, "ConfigMap", ("cm",)),
    ServedResource("Secret", "secrets", "", "v1", True, "Secret"),
    ServedResource("Deployment", "deployments", "apps", "v1", True, "Deployment", ("deploy",), ("all",),
                   writes=("patch", "update"), subresources=(_SCALE,)),
    ServedResource("ReplicaSet", "replicasets", "apps", "v1", True, "ReplicaSet", ("rs",), ("all",)),
    ServedResource("StatefulSet", "statefulsets", "apps", "v1", True, "StatefulSet", ("sts",), ("all",),
                   writes=("patch",), subresources=(_SCALE,)),
    ServedResource("Event", "events", "events.k8s.io", "v1", True, "Event"),
    ServedResource("EndpointSlice", "endpointslices", "discovery.k8s.io", "v1", True, "EndpointSlice"),
    # kubectl describe node reads the node's Lease; a substrate has none to serve (404, as
    # kubectl then prints "Error getting lease"), a real cluster's kubelets renew theirs.
    ServedResource("Lease", "leases", "coordination.k8s.io", "v1", True, "Lease"),
    ServedResource("PodMetrics", "pods", METRICS_GROUP, "v1beta1", True, ""),
    ServedResource("NodeMetrics", "nodes", METRICS_GROUP, "v1beta1", False, ""),
)

AUTHORIZATION_GROUP = "authorization.k8s.io"
REVIEWS: tuple[ServedResource, ...] = (
    # kubectl auth can-i and k9s ask before they act; answered from the routes (see
    # KubeAPIServer._access_review), not from RBAC.
    ServedResource("SelfSubjectAccessReview", "selfsubjectaccessreviews", AUTHORIZATION_GROUP, "v1", False, ""),
)

CHAOS_RESOURCES: tuple[ServedResource, ...] = (
    ServedResource("StressChaos", "stresschaos", CHAOS_GROUP, "v1alpha1", True, "", (), ("chaos-mesh",),
                   writes=("create", "delete")),
    ServedResource("NetworkChaos", "networkchaos", CHAOS_GROUP, "v1alpha1", True, "", (), ("chaos-mesh",),
                   writes=("create", "delete")),
    ServedResource("PodChaos", "podchaos", CHAOS_GROUP, "v1alpha1", True, "", (), ("chaos-mesh",),
                   writes=("create", "delete")),
)


def group_versions(resources: Sequence[ServedResource]) -> list[tuple[str, str]]:
    """The (group, version) pairs of ``resources``, named groups only, in first-seen order."""
    out: list[tuple[str, str]] = []
    for r in resources:
        if r.group and (r.group, r.version) not in out:
            out.append((r.group, r.version))
    return out


def group_list(resources: Sequence[ServedResource]) -> Obj:
    """``/apis``: the ``APIGroupList``."""
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
        {"name": g, "versions": [{"groupVersion": f"{g}/{v}", "version": v}],
         "preferredVersion": {"groupVersion": f"{g}/{v}", "version": v}} for g, v in group_versions(resources)]}


def resource_list(group: str, version: str, resources: Sequence[ServedResource], *, writable: bool) -> Obj:
    """``/api/v1`` or ``/apis/<group>/<version>``: the ``APIResourceList``; write verbs only
    when ``writable`` (a Mutator is configured)."""
    items: list[Obj] = []
    for r in resources:
        if r.group != group or r.version != version:
            continue
        verbs = ["get", "list"] if r.group == METRICS_GROUP else ["get", "list", "watch"]
        if r.group == AUTHORIZATION_GROUP:
            verbs = ["create"]
        if writable:
            verbs += list(r.writes)
        if r.group == CHAOS_GROUP:
            verbs = ["create", "delete", "get", "list"]
        entry: Obj = {"name": r.plural, "singularName": r.kind.lower(), "namespaced": r.namespaced,
                      "kind": r.kind, "verbs": sorted(verbs)}
        if r.short_names:
            entry["shortNames"] = list(r.short_names)
        if r.categories:
            entry["categories"] = list(r.categories)
        items.append(entry)
        for name, kind, g, v, verbs_sub, write_sub in r.subresources:
            sub: Obj = {"name": f"{r.plural}/{name}", "singularName": "", "namespaced": r.namespaced,
                        "kind": kind, "verbs": sorted([*verbs_sub, *(write_sub if writable else ())])}
            if g or v != "v1":
                sub["group"], sub["version"] = g, v
            items.append(sub)
    return {"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version, "resources": items}


__all__ = ["AUTHORIZATION_GROUP", "CHAOS_GROUP", "CHAOS_RESOURCES", "METRICS_GROUP", "RESOURCES", "REVIEWS",
           "ServedResource", "group_list", "group_versions", "resource_list"]
