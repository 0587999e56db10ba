"""Image references for catalog code changes: one definition for who sets them and who resolves them.

A code fault on a cluster is a rollout of an image that contains the defect. The image a
build of catalog change ``spec`` makes is ``<repository>/<service>:<change id>``
(:func:`change_image`), where the change id is opaque (:func:`change_id`: a digest of the
fault id, the file and the new text) so the tag never names the fault. The kube substrate
sets such references (``--image-repository``, default :func:`default_repository`); the
simulated cluster (``marathon cluster``) resolves them back to the catalog change
(:func:`resolve_image`) and applies it; on a real cluster the user's build system provides
the images.
"""

from __future__ import annotations

import hashlib

from faults.spec import Catalog, FaultSpec

REGISTRY_HOST = "registry.sre-marathon.local"
"""The registry host of the default image repository (it need not exist: the simulated
cluster serves it; a real cluster needs ``--image-repository`` pointing at the user's)."""


def default_repository(app: str) -> str:
    """The default repository of an app's change images: ``registry.sre-marathon.local/<app>``."""
    return f"{REGISTRY_HOST}/{app}"


def change_id(spec: FaultSpec) -> str:
    """The opaque id of a catalog code change: the first 12 hex digits of the SHA-256 of
    ``f"{spec.id}\\n{file}\\n{replace}"``.

    Raises:
        ValueError: ``spec`` is not a code change (it has no ``change`` section).
    """
    if spec.change is None:
        raise ValueError(f"{spec.id} is not a code change")
    text = f"{spec.id}\n{spec.change.file}\n{spec.change.replace}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def change_image(repository: str, service: str, spec: FaultSpec) -> str:
    """``<repository>/<service>:<change id>``: the image a build of catalog change ``spec`` makes.

    Args:
        repository: the registry and path prefix (``registry.sre-marathon.local/online-boutique``);
            a trailing ``/`` is ignored.
        service: the service whose image it is (the change's target).
        spec: a code-change fault.

    Raises:
        ValueError: ``spec`` is not a code change.
    """
    return f"{repository.rstrip('/')}/{service}:{change_id(spec)}"


def split_image(image: str) -> tuple[str, str, str] | None:
    """``(repository, service, tag)`` of ``<repository>/<service>:<tag>``, or None when the
    reference has no repository path or no tag (a digest reference ``@sha256:`` is None too)."""
    if "@" in image:
        return None
    name, sep, tag = image.rpartition(":")
    if not sep or "/" in tag or not tag:
        return None
    repository, slash, service = name.rpartition("/")
    if not slash or not repository or not service:
        return None
    return repository, service, tag


def resolve_image(catalog: Catalog, image: str, repository: str | None = None) -> FaultSpec | None:
    """The catalog code change whose image ``image`` is, or None.

    Args:
        catalog: the app's fault catalog.
        image: an image reference (``<repository>/<service>:<change id>``).
        repository: when given, the reference must be in this repository too.

    Returns:
        The code-change fault whose target is ``<service>`` and whose :func:`change_id` is the
        tag; None for any other reference.
    """
    parts = split_image(image)
    if parts is None:
        return None
    repo, service, tag = parts
    if repository is not None and repo != repository.rstrip("/"):
        return None
    for spec in catalog.faults:
        if spec.change is not None and spec.target == service and change_id(spec) == tag:
            return spec
    return None
