"""``marathon seal`` and ``marathon verify``: close a run into a bundle, and check one.

:func:`add_seal_arguments` and :func:`add_verify_arguments` declare each command's arguments
on an ``argparse`` sub-parser and set ``func``; :func:`cmd_seal` and :func:`cmd_verify` run
them and return the process exit code. Both print a clear message naming the file and what
is wrong for bad input (a random file, a truncated bundle, a directory that is not a run),
never a traceback.

Exit codes of ``marathon seal RUN_DIR [--recover] [-o BUNDLE]``:

* 0 -- sealed; the bundle path, status, events and head hash are printed;
* 1 -- refused: already sealed, a broken event chain, an incomplete or killed run without
  ``--recover``, the bundle file exists, or a write failed;
* 2 -- not a run directory (no such directory, no ``events.jsonl``, no ``run.start``).

Exit codes of ``marathon verify BUNDLE [--json] [--replay] [--trust KEY]`` (a bundle file
or a run directory):

* 0 -- intact (for an unsealed directory: the chain holds so far); with ``--replay``, also
  re-executed clean (the run side's replay, ``engine/run/replay.py``); with ``--trust``, also
  signed by KEY;
* 1 -- not intact: every problem is printed with its place, or the file is not a bundle, or
  the replay differs (the first differing event is printed), or it is not signed by KEY;
* 2 -- no such path, or a malformed ``--trust`` key.

``marathon keys init [--force]`` makes the sealing key (:mod:`engine.bundle.keys`) and prints its
public key; ``marathon keys show`` prints it.

This module reads and writes bundles only. What needs a run -- the inputs the seal adds
(:data:`engine.bundle.format.SealInputs`) and the re-execution behind ``--replay``
(:data:`Replayer`) -- is handed in by the command layer (``engine/cli.py``) when it declares
the sub-commands.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from typing import Any, Protocol

from engine.bundle.format import BundleError, NotARunError, SealInputs, seal, verify

EXIT_OK = 0
EXIT_PROBLEM = 1
EXIT_BAD_INPUT = 2


class ReplayResult(Protocol):
    """What ``--replay`` prints: a replay's verdict (the run side's ``ReplayReport``)."""

    @property
    def ok(self) -> bool: ...

    def format(self) -> str: ...

    def to_dict(self) -> dict[str, Any]: ...


Replayer = Callable[[str], ReplayResult]
"""Re-executes a bundle (its path) and says whether it replays; behind ``marathon verify --replay``."""


def add_seal_arguments(parser: argparse.ArgumentParser, *, inputs: SealInputs | None = None) -> None:
    """Declare the arguments of ``marathon seal`` on ``parser`` and set ``func``.

    Args:
        parser: the ``seal`` sub-parser.
        inputs: the hook the seal calls to add the inputs a score depends on
            (:func:`engine.bundle.format.seal`); None: seal the directory as it is.
    """
    parser.add_argument("run_dir", metavar="RUN_DIR", help="the run directory to close into one bundle file")
    parser.add_argument("--recover", action="store_true",
                        help="seal a run that was killed or stopped before run.end: drop a torn last line, keep "
                             "every complete event, mark the bundle incomplete (never repairs a broken chain)")
    parser.add_argument("-o", "--output", metavar="BUNDLE", default=None,
                        help="bundle path (default: RUN_DIR.marathon beside the directory)")
    parser.set_defaults(func=cmd_seal, seal_inputs=inputs)


def add_verify_arguments(parser: argparse.ArgumentParser, *, replay: Replayer | None = None) -> None:
    """Declare the arguments of ``marathon verify`` on ``parser`` and set ``func``.

    Args:
        parser: the ``verify`` sub-parser.
        replay: what ``--replay`` runs (None: ``--replay`` is refused as unavailable).
    """
    parser.add_argument("bundle", metavar="BUNDLE", help="a bundle file (*.marathon) or a run directory")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--replay", action="store_true",
                        help="re-execute the recorded schedule and tool calls on the simulator and check that every "
                             "event and the chain head are reproduced (about the run's own time)")
    parser.add_argument("--trust", metavar="KEY", default=None,
                        help="require a valid seal signature by this Ed25519 public key (64 hex characters, or a "
                             "file holding them; `marathon keys show` prints yours)")
    parser.set_defaults(func=cmd_verify, replayer=replay)


def add_keys_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare ``marathon keys init|show`` on ``parser`` and set ``func``."""
    parser.add_argument("action", choices=("init", "show"), help="init: make the sealing key; show: print its "
                                                                  "public key")
    parser.add_argument("--force", action="store_true", help="with init: replace an existing key")
    parser.set_defaults(func=cmd_keys)


def cmd_keys(args: argparse.Namespace) -> int:
    """Make or show the sealing key (:mod:`engine.bundle.keys`); returns the exit code."""
    from engine.bundle.keys import SigningKeyError, init_key, key_path, load_private, public_hex

    try:
        if args.action == "init":
            pub = init_key(force=args.force)
            print(f"sealing key written to {key_path()} (mode 0600); every seal now signs its bundle")
            print(f"public key (publish it; `marathon verify --trust KEY` checks it): {pub}")
            return EXIT_OK
        key = load_private()
    except SigningKeyError as exc:
        print(f"marathon keys: {exc}", file=sys.stderr)
        return EXIT_PROBLEM
    if key is None:
        print(f"marathon keys: no sealing key at {key_path()}; `marathon keys init` makes one", file=sys.stderr)
        return EXIT_PROBLEM
    print(public_hex(key))
    return EXIT_OK


def cmd_seal(args: argparse.Namespace) -> int:
    """Seal a run directory into a bundle and print what was sealed.

    Args:
        args: ``run_dir`` (path), ``recover`` (bool), ``output`` (bundle path or None) and
            ``seal_inputs`` (the seal's inputs hook, or None; absent: None).

    Returns:
        The exit code (module docstring).
    """
    started = time.perf_counter()
    try:
        path = seal(args.run_dir, recover=args.recover, out=getattr(args, "output", None),
                    inputs=getattr(args, "seal_inputs", None))
        report = verify(path)
    except NotARunError as exc:
        print(f"marathon seal: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BundleError as exc:
        print(f"marathon seal: {exc}", file=sys.stderr)
        return EXIT_PROBLEM
    wall = time.perf_counter() - started
    state = "complete" if report.complete else "incomplete"
    print(f"sealed {args.run_dir} -> {path} ({report.size} bytes, {wall:.2f} s)")
    print(f"  {state}: {report.reason}")
    print(f"  events  {report.events}")
    print(f"  head    {report.head}")
    if not report.ok:  # a bundle that fails verification straight after sealing is a bug; say so loudly
        print(report.format(), file=sys.stderr)
        return EXIT_PROBLEM
    return EXIT_OK


def cmd_verify(args: argparse.Namespace) -> int:
    """Verify a bundle or run directory and print a short report.

    Args:
        args: ``bundle`` (path), ``json`` (bool: print the report as JSON), ``replay`` (bool)
            with ``replayer`` (what re-executes it), and ``trust`` (a public key or None).

    Returns:
        The exit code (module docstring).
    """
    from engine.bundle.keys import SigningKeyError, trusted_key

    trust = None
    if getattr(args, "trust", None):
        try:
            trust = trusted_key(args.trust)
        except SigningKeyError as exc:
            print(f"marathon verify: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
    replayer: Replayer | None = getattr(args, "replayer", None)
    if getattr(args, "replay", False) and replayer is None:
        print("marathon verify: --replay is not available: this command was declared without a replayer",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        report = verify(args.bundle)
        replayed = None
        if replayer is not None and getattr(args, "replay", False) and report.ok:
            replayed = replayer(args.bundle)
    except NotARunError as exc:
        print(f"marathon verify: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BundleError as exc:
        print(f"marathon verify: {exc}", file=sys.stderr)
        return EXIT_PROBLEM
    trusted = None
    if trust is not None:
        trusted = report.signer == trust
    ok = report.ok and (replayed is None or replayed.ok) and trusted is not False
    if getattr(args, "json", False):
        doc = report.to_dict()
        if replayed is not None:
            doc["replay"] = replayed.to_dict()
        if trusted is not None:
            doc["trusted"] = trusted
        print(json.dumps(doc, indent=2))
        return EXIT_OK if ok else EXIT_PROBLEM
    print(report.format())
    if replayed is not None:
        print(replayed.format())
    if trusted is False:
        print(f"NOT TRUSTED: {'signed by ' + report.signer if report.signer else 'not signed'}; --trust wants "
              f"{trust}")
    elif trusted:
        print(f"trusted: signed by {trust}")
    return EXIT_OK if ok else EXIT_PROBLEM
