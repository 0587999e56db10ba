"""Every input file fails cleanly (issue 12 part 5): mutation fuzzing of every loader.

Real files (the shipped app models, fault catalogs and rule packs, a kube-prometheus rule
file, a generated schedule, a keymap, an LLM configuration, a small sealed bundle and its
run directory) are mutated by hypothesis (:mod:`tests.input_fuzz`: deleted keys, changed
types, NaN, huge and negative numbers, bytes that are not UTF-8, truncation, duplicate ids,
alias bombs). Each loader must load the result or raise its documented error type naming
the file, within a few seconds: no other exception, no hang. Deterministic
(``derandomize``); ``benchmarks/bench_input_fuzz.py`` runs more examples.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.input_fuzz import Target, fuzz, targets

EXAMPLES = {"schedule": 45, "catalog": 35, "app": 35, "rules": 60, "keymap": 30, "llm-config": 40,
            "bundle-dir": 45, "bundle": 20}
"""Examples per loader: 310 in all (under a minute on the CI machine)."""


@pytest.fixture(scope="module")
def fuzz_targets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Target]:
    return targets(tmp_path_factory.mktemp("fuzz-seeds"))



@pytest.mark.parametrize("loader", list(EXAMPLES))
def test_every_malformed_file_fails_cleanly(loader: str, fuzz_targets: dict[str, Target], tmp_path: Path) -> None:
    tally = fuzz(fuzz_targets[loader], EXAMPLES[loader], tmp_path)
    print(tally.line(loader))
    assert tally.examples >= EXAMPLES[loader] // 2
    assert tally.rejected > 0, "no mutation was rejected: the fuzzer tests nothing"
    assert not tally.failures, "\n".join(tally.failures[:20])
