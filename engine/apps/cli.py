"""``marathon app import``: write an app-model skeleton from Kubernetes manifests.

The command reads the manifests (and an optional docker-compose file) with
:func:`engine.apps.importer.import_manifests` and prints the skeleton as YAML, or writes it to
``-o FILE``. :func:`add_import_arguments` declares the arguments on an ``argparse`` sub-parser;
:func:`cmd_app_import` runs the command and returns the process exit code:

* 0 -- the skeleton was written;
* 1 -- the output file could not be written;
* 2 -- an input could not be imported (the message, naming the file, document and object, goes
  to stderr), the usual exit code for bad command-line input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engine.apps.importer import ManifestImportError, dump_skeleton, import_manifests

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
    parser.add_argument("-o", "--output", metavar="FILE", default=None, help="write the skeleton here, not to stdout")
    parser.add_argument("--name", default=None, help="app name (DNS label); default: the namespace or directory")
    parser.set_defaults(func=cmd_app_import)


def cmd_app_import(args: argparse.Namespace) -> int:
    """Import manifests into an app-model skeleton and print or write it as YAML.

    Args:
        args: ``manifests`` (list of paths), ``compose`` (path or None), ``output`` (path or
            None for stdout) and ``name`` (app name or None).

    Returns:
        The exit code: 0 written, 1 the output file could not be written, 2 an input could not
        be imported (the :class:`ManifestImportError` message is printed to stderr).
    """
    manifests = [Path(p) for p in args.manifests]
    compose = Path(args.compose) if args.compose else None
    try:
        skeleton = import_manifests(manifests, compose=compose, name=args.name)
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
    notes = skeleton.get("notes", {})
    print(
        f"wrote {output}: {len(skeleton['services'])} services, "
        f"{len(notes.get('dangling', []))} dangling reference(s), {len(notes.get('todo', []))} todo item(s)",
        file=sys.stderr,
    )
    return EXIT_OK
