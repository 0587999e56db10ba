"""The one place that chooses a :class:`~engine.substrate.Substrate` implementation.

Everything that needs a cluster -- the run loop, qualification, ``marathon sim``, the live
``/metrics`` mode -- opens it here by kind, as harlequin looks its database adapters up in
one registry; nothing else imports an implementation. One kind exists today:

* ``sim`` -- the embedded simulated cluster (:class:`engine.sim.simulator.Simulator`).

A real-cluster substrate (``kube``, DESIGN section 4) plugs in as a second kind here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.apps.model import AppModel
    from engine.substrate import Substrate

SUBSTRATES = ("sim",)
"""The substrate kinds :func:`open_substrate` knows."""


def open_substrate(app: str | AppModel, *, seed: int, kind: str = "sim", **options: Any) -> Substrate:
    """Bring up application ``app`` on a substrate of ``kind``, at run time 0.

    Args:
        app: a shipped app's name, an app model file's path, or a loaded model.
        seed: the run's seed (a non-negative integer).
        kind: one of :data:`SUBSTRATES`.
        **options: the implementation's own keywords (for ``sim``: ``dt``,
            ``scrape_interval_s``, ``record_warmup``, ``retention_s``; see
            :class:`engine.sim.simulator.Simulator`).

    Raises:
        ValueError: an unknown kind, or a negative or non-integer seed.
        KeyError: no shipped app of that name and no such file.
        engine.apps.model.AppModelError: the app model file does not load.
        TypeError: an option the implementation does not take.
    """
    if kind == "sim":
        from engine.sim.simulator import Simulator

        return Simulator(app, seed=seed, **options)
    raise ValueError(f"unknown substrate {kind!r}; substrates: {', '.join(SUBSTRATES)}")
