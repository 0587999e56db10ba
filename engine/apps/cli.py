"""``marathon app import`` and ``marathon app check``.

``import`` reads the manifests (and an optional docker-compose file and traces file) with
:func:`engine.apps.importer.import_manifests` and prints the app model as YAML, or writes it to
``-o FILE``; the model loads and runs as it is. :func:`cmd_app_import` returns the exit code:

* 0 -- the model was written;
* 1 -- the output file could not be written;
* 2 -- an input could not be imported (the message, naming the file, document and object, goes
  to stderr), the usual exit code for bad command-line input.

``check FILE`` (:func:`cmd_app_check`) loads a model and lists the import's guesses and defaults
still in use (:mod:`engine.apps.check`): exit 0 when it loads, 2 with the file and the field of
each problem when it does not.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engine.apps.check import check_app, render_check
from engine.apps.importer import ManifestImportError, dump_skeleton, import_manifests
from engine.apps.model import AppModelError

EXIT_OK = 0
EXIT_WRITE_FAILED = 1
EXIT_BAD_INPUT = 2


def add_import_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the arguments of ``marathon app import`` on ``parser`` and set ``func``.

    Args:
        parser: the ``import`` sub-parser of the ``app`` command.
    """
    parser.add_argument("manifests", nargs="+", metavar="MANIFEST", help="Kubernetes manifest YAML file(s)")
    parser.add_argument(
        "--compose",
        metavar="FILE",
        default=None,
        help="docker-compose file whose environment and depends_on add edges (${VAR} from .env beside it)",
    )
    parser.add_argument(
        "--traces",
        metavar="FILE",
        default=None,
        help='observed calls, JSON Lines of {"from": CALLER, "to": CALLEE} (engine/apps/FORMAT.md)',
    )
    parser.add_argument(
        "--config",
        metavar="WORKLOAD=FILE",
        action="append",
        default=[],
        help="a config file baked into a workload's image (nginx.conf, application.yml), scanned for addresses; "
        "repeatable",
    )
    parser.add_argument("-o", "--output", metavar="FILE", default=None, help="write the model here, not to stdout")
    parser.add_argument("--name", default=None, help="app name (DNS label); default: the namespace or directory")
    parser.set_defaults(func=cmd_app_import)


def cmd_app_import(args: argparse.Namespace) -> int:
    """Import manifests into an app model and print or write it as YAML.

    Args:
        args: ``manifests`` (list of paths), ``compose`` (path or None), ``traces`` (path or
            None), ``config`` (``WORKLOAD=FILE`` strings), ``output`` (path or None for stdout)
            and ``name`` (app name or None).

    Returns:
        The exit code: 0 written, 1 the output file could not be written, 2 an input could not
        be imported (the :class:`ManifestImportError` message is printed to stderr).
    """
    manifests = [Path(p) for p in args.manifests]
    compose = Path(args.compose) if args.compose else None
    traces = Path(args.traces) if getattr(args, "traces", None) else None
    config_files: dict[str, Path] = {}
    for item in getattr(args, "config", []):
        workload, sep, file = item.partition("=")
        if not sep or not workload or not file:
            print(f"marathon app import: --config expects WORKLOAD=FILE, got {item!r}", file=sys.stderr)
            return EXIT_BAD_INPUT
        config_files[workload] = Path(file)
    try:
        skeleton = import_manifests(manifests, compose=compose, name=args.name, traces=traces,
                                    config_files=config_files)
    except ManifestImportError as exc:
        print(f"marathon app import: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    text = dump_skeleton(skeleton)
    if not args.output:
        sys.stdout.write(text)
        return EXIT_OK
    output = Path(args.output)
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        print(f"marathon app import: cannot write {output}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_WRITE_FAILED
    imported = skeleton["imported"]
    print(
        f"wrote {output}: {len(skeleton['services'])} services, {len(skeleton['routes'])} route(s), "
        f"{len(imported['dangling'])} dangling reference(s), {len(imported['guesses'])} guesses, "
        f"{len(imported['defaults'])} defaults (marathon app check {output} lists them)",
        file=sys.stderr,
    )
    return EXIT_OK


def add_check_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the argument of ``marathon app check`` on ``parser`` and set ``func``."""
    parser.add_argument("file", metavar="FILE", help="app model YAML file")
    parser.set_defaults(func=cmd_app_check)


def cmd_app_check(args: argparse.Namespace) -> int:
    """Load ``args.file`` and print its guesses and defaults still in use.

    Returns:
        0 when the file loads; 2 when it does not (each problem, with the file and the field's
        path in the document, goes to stderr).
    """
    try:
        report = check_app(args.file)
    except AppModelError as exc:
        print(f"marathon app check: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    sys.stdout.write(render_check(args.file, report))
    return EXIT_OK
