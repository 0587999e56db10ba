"""A benign change's summary never names a kind of change it is not (issue 16 review).

A generic catalog (:mod:`faults.generic`, ``marathon faults generate``) words every fault of one
template alike: ``release: X v0.10.7`` is always an image row, ``select the X-v2 pods`` always
a service row. A benign change worded from such a template on a row of another kind (a
``LOG_LEVEL`` config change titled ``release: ...``) is told from the faults by the pipeline
log's KIND column alone. For each summary template (the subject's body, the app's service
names replaced by ``X``), the kinds of the schedule's benign rows must be kinds of the catalog
faults using it, and a template no fault uses must say what the benign change does.
"""

from __future__ import annotations

import re
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from engine.apps.builds import CONFIG_SUFFIXES
from engine.apps.model import builtin_app_path, load_app
from engine.cli import main
from faults.generator import generate
from faults.people import row_kind, shows_in_log
from faults.spec import FaultSpec, load_catalog

SEEDS = range(1, 5)
_PREFIX = re.compile(r"^[a-z][a-z0-9-]*(?:\([^)]*\))?!?:\s*")
_OWN = re.compile(r"^(set LOG_LEVEL to \w+|comment \S+|update the \w+)$")
"""Bodies of the subjects a benign change of a user app gets when the catalog has none of
its kind (:meth:`faults.generator._Benign._subject`): they say what it does."""


def _summary(spec: FaultSpec) -> str:
    for part in (spec.change, spec.config, spec.service_change):
        if part is not None and getattr(part, "summary", None):
            return str(part.summary)
    raise AssertionError(f"{spec.id}: a change-driven fault without a summary")


@pytest.fixture(scope="module")
def generic_app(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("decoy")
    model_file = root / "shop.yaml"
    shutil.copy(builtin_app_path("online-boutique"), model_file)
    catalog = root / "catalog.yaml"
    assert main(["faults", "generate", "--app", str(model_file), "-o", str(catalog)]) == 0
    return model_file, catalog


def test_benign_rows_borrow_only_summaries_of_their_own_kind(generic_app: tuple[Path, Path]) -> None:
    model_file, catalog_file = generic_app
    names = sorted((s.name for s in load_app(str(model_file)).services), key=len, reverse=True)
    service = re.compile("|".join(rf"(?<![\w-]){re.escape(n)}(?![\w-])" for n in names))

    def template(summary: str) -> str:
        return service.sub("X", _PREFIX.sub("", summary, count=1))

    cat = load_catalog(catalog_file, load_app(str(model_file)))
    fault_kinds: dict[str, set[str]] = defaultdict(set)
    for spec in cat.faults:
        if shows_in_log(spec):
            fault_kinds[template(_summary(spec))].add(row_kind(spec))
    assert all(len(k) == 1 for k in fault_kinds.values()), fault_kinds
    benign_kinds: dict[str, set[str]] = defaultdict(set)
    rows = 0
    for seed in SEEDS:
        sched = generate(str(model_file), seed, "marathon", catalog_file=str(catalog_file))
        for ch in sched.changes:
            if ch.revert_of is not None or ch.summary.startswith('Revert "'):
                continue
            kind = "config" if ch.kind == "code" and ch.file and ch.file.endswith(CONFIG_SUFFIXES) else ch.kind
            benign_kinds[template(ch.summary)].add(kind)
            rows += 1
    assert rows > 60, rows  # four marathons: about 20 benign changes each
    borrowed = [t for t in benign_kinds if t in fault_kinds]
    assert len(borrowed) >= 5, benign_kinds  # the decoys do borrow the faults' wording
    for tmpl, kinds in benign_kinds.items():
        if tmpl in fault_kinds:
            assert kinds == fault_kinds[tmpl], (tmpl, kinds, fault_kinds[tmpl])
        else:
            assert _OWN.match(tmpl), (tmpl, kinds)
