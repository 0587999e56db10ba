"""argparse types shared by the command lines (``marathon``, ``marathon serve``, the terminal app)."""

from __future__ import annotations

import argparse
import math


def seed_arg(text: str) -> int:
    """argparse type for seeds: a non-negative integer."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid seed {text!r}: expected a non-negative integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"invalid seed {value}: seeds are non-negative integers")
    return value


FASTEST_SPEED_WORDS = ("max", "fast", "full")
"""Words ``--speed`` takes for "as fast as possible" (like 0), in any case."""


def speed_arg(text: str) -> float | None:
    """argparse type for every ``--speed``: run-time seconds per wall second.

    Args:
        text: a positive finite number (the wall clock paced at that many run-time seconds
            per wall second), or 0 or one of :data:`FASTEST_SPEED_WORDS` (as fast as
            possible: the virtual clock for a run, no pacing for a replay).

    Returns:
        The speed, or None for as fast as possible.

    Raises:
        argparse.ArgumentTypeError: anything else (negative, NaN, infinite, other words).
    """
    if text.strip().lower() in FASTEST_SPEED_WORDS:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"invalid speed {text!r}: expected a positive number, or 0 or max "
                                         "for as fast as possible")
    return value or None


def add_rules_argument(p: argparse.ArgumentParser) -> None:
    """``--rules``: the alert rule pack of a run (recorded in its bundle)."""
    p.add_argument("--rules", default="paper", metavar="PACK|FILE",
                   help="alert rule pack: paper (default: SRE-Marathon's Tables 4 and 6, the frozen pack every "
                        "leaderboard uses), extended (paper plus per-service error-rate, starvation and "
                        "store-silence rules and kube-prometheus' noise, crash-loop, throttling and node CPU rules; "
                        "not comparable with the paper's numbers), or a Prometheus rule file")


def port_arg(text: str) -> int:
    """argparse type for a TCP port: 0 (any free port) to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid port {text!r}: expected an integer 0-65535") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"invalid port {value}: ports are 0-65535 (0: any free port)")
    return value


def add_kube_api_argument(p: argparse.ArgumentParser, writes: str) -> None:
    """``--kube-api [PORT]``: serve the run's cluster as the operator's Kubernetes API
    (:mod:`engine.run.kubeapi`); ``writes`` says in the help when writes are accepted."""
    p.add_argument("--kube-api", nargs="?", const=0, default=None, type=port_arg, metavar="PORT",
                   help="serve the run's cluster as a Kubernetes API on loopback (HTTPS, bearer token; default "
                        f"port: any free one) and write an operator kubeconfig beside the run directory; {writes}")


APP_HELP = ("the app: a shipped app's name, an app model file, or an app directory holding app.yaml (the model) "
            "and catalog.yaml (its fault catalog)")
CATALOG_HELP = ("the fault catalog file of the app (default: a shipped app's catalog, or an app directory's "
                "catalog.yaml; `marathon faults generate` writes a generic one for any app model)")


def add_app_arguments(p: argparse.ArgumentParser, default: str | None, *, catalog: bool = True,
                      repeatable: bool = False) -> None:
    """``--app APP|FILE|DIR`` and, with ``catalog``, ``--catalog FILE``: the app a command runs
    and its fault catalog, from the installed package or from the user's files
    (:func:`engine.apps.model.load_app`, :func:`faults.spec.app_catalog`)."""
    if repeatable:
        p.add_argument("--app", action="append", default=None, metavar="APP|FILE|DIR",
                       help=f"{APP_HELP} (repeatable; default: every shipped app)")
    else:
        p.add_argument("--app", default=default, metavar="APP|FILE|DIR",
                       help=f"{APP_HELP}{f' (default {default})' if default else ''}")
    if catalog:
        p.add_argument("--catalog", default=None, metavar="FILE", help=CATALOG_HELP)
