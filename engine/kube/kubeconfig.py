"""A kubeconfig for the simulated cluster's API server (:class:`engine.kube.apiserver.KubeAPIServer`).

One cluster, one user with a bearer token, one context (made current) with a default
namespace. kubectl sends a kubeconfig's credentials only over TLS (client-go's ``clientcmd``
reads the user's auth info only when ``restclient.IsConfigTransportTLS``): against an
``http://`` server the token is silently dropped and every request is ``401``. So the server
speaks HTTPS on loopback (:mod:`engine.kube.tls`) and the kubeconfig carries its certificate as
``certificate-authority-data``.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

import yaml


def kubeconfig_text(server: str, token: str, namespace: str, user: str = "admin",
                    certificate_authority: bytes | None = None, cluster: str = "sre-marathon") -> str:
    """The kubeconfig YAML (``apiVersion: v1, kind: Config``) for ``server`` (``https://127.0.0.1:PORT``).

    Args:
        server: the API server's URL.
        token: the bearer token.
        namespace: the context's default namespace.
        user: the user (and its kubeconfig entry) the token authenticates as.
        certificate_authority: the PEM certificate that verifies the server
            (``certificate-authority-data``); None for an ``https`` server writes
            ``insecure-skip-tls-verify: true``.
        cluster: the cluster's name; the context is ``<user>@<cluster>``.
    """
    context = f"{user}@{cluster}"
    entry: dict[str, object] = {"server": server}
    if certificate_authority is not None:
        entry["certificate-authority-data"] = base64.b64encode(certificate_authority).decode()
    elif server.startswith("https://"):
        entry["insecure-skip-tls-verify"] = True
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster, "cluster": entry}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": context, "context": {"cluster": cluster, "user": user, "namespace": namespace}}],
        "current-context": context,
        "preferences": {},
    }
    return yaml.safe_dump(doc, sort_keys=False)


def write_kubeconfig(path: str | Path, server: str, token: str, namespace: str, user: str = "admin",
                     certificate_authority: bytes | None = None) -> Path:
    """Write :func:`kubeconfig_text` to ``path`` (mode 0600, parents created); returns the path.

    Raises:
        OSError: the file cannot be written.
    """
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(kubeconfig_text(server, token, namespace, user, certificate_authority))
    return out


__all__ = ["kubeconfig_text", "write_kubeconfig"]
