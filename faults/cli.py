"""``marathon app catalog``: fault-catalog counts per app, category and code-bug subtype, beside
SRE-Marathon's Table 3 (:mod:`faults.counts`).

:func:`add_catalog_arguments` declares the arguments on an ``argparse`` sub-parser;
:func:`cmd_app_catalog` prints the table and returns the process exit code:

* 0 -- every app shown meets Table 3 in every subtype it lists;
* 1 -- some subtype of some app shown is below Table 3 (the table says which and by how many);
* 2 -- a catalog could not be loaded (the message, naming the file and field, goes to stderr).
"""

from __future__ import annotations

import argparse
import sys

from faults.counts import catalog_counts, format_counts
from faults.spec import CATALOG_DIR, CatalogError, load_catalog


def add_catalog_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the arguments of ``marathon app catalog`` on ``parser`` and set ``func``.

    Args:
        parser: the ``catalog`` sub-parser of the ``app`` command.
    """
    parser.add_argument("--app", action="append", metavar="APP",
                        help="app name or catalog file (repeatable; default: every shipped catalog)")
    parser.set_defaults(func=cmd_app_catalog)


def cmd_app_catalog(args: argparse.Namespace) -> int:
    """Print the counts of the chosen catalogs (module docstring for the exit codes)."""
    apps = args.app or sorted(p.stem for p in CATALOG_DIR.glob("*.yaml"))
    try:
        counts = [catalog_counts(load_catalog(app)) for app in apps]
    except (CatalogError, FileNotFoundError) as exc:
        print(f"marathon app catalog: {exc}", file=sys.stderr)
        return 2
    print(format_counts(counts))
    return 0 if all(c.meets_table3 for c in counts) else 1
