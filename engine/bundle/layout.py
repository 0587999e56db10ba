"""The files of a run directory, and so of the bundle sealed from it: one name, one place.

The run side's recorder and orchestrator (``engine/run/``) write these files, the seal
(:mod:`engine.bundle.format`, with the run side's ``engine/run/sealinputs.py``) adds the
hidden inputs, and the verifier, the replay and the scorer read them back. They live here,
with the bundle format, so that a reader of bundles never imports the run that wrote them.
"""

from __future__ import annotations

import hashlib

EVENTS_FILE = "events.jsonl"
"""The hash-chained event stream, one canonical JSON event per line."""
SCHEDULE_FILE = "schedule.yaml"
"""The exact schedule replayed (kept in the encrypted journal while the run is live)."""
RUN_FILE = "run.json"
"""What was run (app, seed, regime, operator, ...)."""
APP_FILE = "app.yaml"
"""The app model a recorded run carries (the file's text, as loaded)."""
RULES_DIR = "rules"
"""Where a recorded run carries its rule pack's files."""
SOURCE_DIR = "src"
"""Where a recorded run of a user's app carries its services' source trees (``src/<service>/...``,
the healthy tree its code changes apply to; shipped apps' trees are in the package)."""
CATALOG_FILE = "catalog.yaml"
"""The catalog entries of the faults the schedule names, added at the seal."""
COUNTERFACTUAL_FILE = "counterfactual.json"
"""The no-op counterfactual of the schedule, added at the seal
(:class:`scoring.counterfactual.Counterfactual` ``to_dict()`` plus ``engine``)."""


def schedule_digest(text: str) -> str:
    """The ``schedule_sha256`` a ``run.start`` event records: SHA-256 (hex) of the schedule's text.

    Args:
        text: the schedule YAML, as written to :data:`SCHEDULE_FILE`.
    """
    return hashlib.sha256(text.encode()).hexdigest()
