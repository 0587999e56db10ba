"""The one place that chooses a :class:`~engine.substrate.Substrate` implementation.

Everything that needs a cluster -- the run loop, qualification, ``marathon sim``, the live
``/metrics`` mode -- opens it here by kind, as harlequin looks its database adapters up in
one registry; nothing else imports an implementation. Two kinds:

* ``sim`` -- the embedded simulated cluster (:class:`engine.sim.simulator.Simulator`);
* ``kube`` -- an app deployed on a Kubernetes cluster, through the official client
  (:class:`engine.kube.substrate.KubeSubstrate`): ``marathon cluster`` or a real kind/k3s one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.apps.model import AppModel
    from engine.substrate import Substrate

SUBSTRATES = ("sim", "kube")
"""The substrate kinds :func:`open_substrate` knows."""


def open_substrate(app: str | AppModel, *, seed: int, kind: str = "sim", **options: Any) -> Substrate:
    """Bring up application ``app`` on a substrate of ``kind``, at run time 0.

    Args:
        app: a shipped app's name, an app model file's path, or a loaded model.
        seed: the run's seed (a non-negative integer).
        kind: one of :data:`SUBSTRATES`.
        **options: the implementation's own keywords (for ``sim``: ``dt``,
            ``scrape_interval_s``, ``record_warmup``, ``retention_s``; see
            :class:`engine.sim.simulator.Simulator`; for ``kube``: ``kubeconfig`` (required),
            ``context``, ``namespace``, ``prometheus``, ``image_repository``, ``probe_samples``;
            see :class:`engine.kube.substrate.KubeSubstrate`).

    Raises:
        ValueError: an unknown kind, or a negative or non-integer seed.
        KeyError: no shipped app of that name and no such file.
        engine.apps.model.AppModelError: the app model file does not load.
        TypeError: an option the implementation does not take.
        engine.substrate.SubstrateError: the cluster (``kube``) does not answer or does not
            run the app.
    """
    if kind == "sim":
        from engine.sim.simulator import Simulator

        return Simulator(app, seed=seed, **options)
    if kind == "kube":
        from engine.kube.substrate import KubeSubstrate

        return KubeSubstrate(app, seed=seed, **options)
    raise ValueError(f"unknown substrate {kind!r}; substrates: {', '.join(SUBSTRATES)}")
