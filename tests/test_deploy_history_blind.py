"""The build pipeline's log does not tell a fault's change from a benign one (issue 12).

For 3 apps x 5 seeds of the marathon, the no-op run's pipeline log (the rows
``get_deploy_history`` shows) is labelled from ground truth -- a fault's change or its
revert vs. a benign change or a benign revert -- and a logistic regression on what an
operator sees (author one-hot, summary bag of words, time of day, lines changed) is trained
on seeds 1..3 and scored on seeds 4 and 5. Its held-out ROC AUC must stay at most 0.65
(it is 1.0 when faults come from their own authors, or all reverts from one author). The
features and the model are ``benchmarks/bench_deploy_blind.py``'s.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from faults.generator import generate

_BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_deploy_blind.py"
SEEDS_TRAIN = (1, 2, 3)
SEEDS_TEST = (4, 5)
HIDDEN = re.compile(r"\b(bug|fault|inject\w*|defect\w*|chaos|game ?day)\b|sre-marathon|orchestrator", re.I)


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_deploy_blind", _BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return _bench()


@pytest.fixture(scope="module")
def rows(bench: ModuleType) -> dict[tuple[str, int], list]:
    return {(app, seed): bench.history(app, seed) for app in bench.APPS for seed in SEEDS_TRAIN + SEEDS_TEST}


def test_held_out_auc_of_a_fault_classifier_on_the_pipeline_log(bench: ModuleType, rows: dict) -> None:
    train = [r for (_, seed), rs in rows.items() if seed in SEEDS_TRAIN for r in rs]
    test = [r for (_, seed), rs in rows.items() if seed in SEEDS_TEST for r in rs]
    assert sum(r.fault for r in test) > 100 and sum(not r.fault for r in test) > 100
    auc = bench.held_out_auc(train, test)
    print(f"held-out ROC AUC: {auc:.3f} ({len(train)} training rows, {len(test)} held-out rows)")
    assert auc <= bench.AUC_MAX, f"the pipeline log gives faults away: held-out ROC AUC {auc:.3f}"


def test_no_row_names_the_orchestrator_or_a_fault(rows: dict) -> None:
    bad = [f"{app} seed {seed} {r.change}: {r.author} | {r.summary}" for (app, seed), rs in rows.items() for r in rs
           if HIDDEN.search(r.author) or HIDDEN.search(r.summary)]
    assert not bad, "\n".join(bad[:20])


@pytest.mark.parametrize("app", ["online-boutique", "astronomy-shop", "train-ticket"])
def test_benign_code_changes_add_only_comment_lines(app: str) -> None:
    sched = generate(app, 1, "marathon")
    code = [c for c in sched.changes if c.kind == "code" and c.find is not None]
    assert code
    for c in code:
        assert c.replace is not None and c.file is not None
        small, big = sorted((c.find, c.replace), key=len)
        assert big.startswith(small[:small.index("\n", 1) + 1])
        added = big[small.index("\n", 1) + 1:len(big) - (len(small) - small.index("\n", 1) - 1)]
        prefix = "#" if c.file.endswith((".py", ".rb")) else "//"
        assert added and all(line.strip().startswith(prefix) for line in added.splitlines()), (c.file, added)
        assert not HIDDEN.search(added)
