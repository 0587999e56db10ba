"""Prometheus' own PromQL test files (v2.42 ``promql/testdata``) run through the embedded evaluator.

One pytest case per ``eval`` command. Cases using something the evaluator does not
support are skipped with the reason; the last test prints the table of skips per file
and reason, and the pass share.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from alerts.promql.testlang import Case, Skip, cases_of, run_case
from tests.conftest import SHARED_DATA

TESTDATA = SHARED_DATA / "prometheus-testdata" / "promql"


def _cases() -> list[Case]:
    if not TESTDATA.is_dir():
        return []
    out: list[Case] = []
    for path in sorted(TESTDATA.glob("*.test")):
        out.extend(cases_of(path))
    return out


CASES = _cases()
RESULTS: Counter[str] = Counter()
SKIPS: Counter[tuple[str, str]] = Counter()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_promql_case(case: Case) -> None:
    try:
        run_case(case)
    except Skip as exc:
        RESULTS["skipped"] += 1
        SKIPS[(case.file, str(exc))] += 1
        pytest.skip(f"{case.id}: {exc}")
    except AssertionError:
        RESULTS["failed"] += 1
        raise
    RESULTS["passed"] += 1


def test_testdata_present() -> None:
    if not TESTDATA.is_dir():
        pytest.skip(f"Prometheus test data not found at {TESTDATA}")
    assert len(CASES) > 500, f"expected the 2.42 PromQL test files, found {len(CASES)} eval commands"


def test_zz_print_skip_table(capsys: pytest.CaptureFixture[str]) -> None:
    """Print which cases were skipped and why (runs last in this module)."""
    total = sum(RESULTS.values())
    if total == 0:
        pytest.skip("no PromQL conformance case ran (data missing or deselected)")
    with capsys.disabled():
        print(f"\nPromQL conformance (Prometheus 2.42 test files): {RESULTS['passed']} passed, "
              f"{RESULTS['failed']} failed, {RESULTS['skipped']} skipped of {total} eval commands")
        for (file, reason), n in sorted(SKIPS.items()):
            print(f"  skipped {n:3d} in {file}: {reason}")
    assert RESULTS["passed"] >= 0.95 * total, f"pass share too low: {RESULTS}"


def test_parse_values_notation() -> None:
    from alerts.promql.testlang import parse_values

    assert parse_values("1+2x3") == [1.0, 3.0, 5.0, 7.0]
    assert parse_values("0x2 _x2 stale 5") == [0.0, 0.0, 0.0, None, None, "stale", 5.0]
    assert parse_values("-1-1x2") == [-1.0, -2.0, -3.0]
    with pytest.raises(ValueError):
        parse_values("1+")


def test_file_parse_errors_name_the_line(tmp_path: Path) -> None:
    from alerts.promql.testlang import parse_test_file

    with pytest.raises(ValueError, match="line 2"):
        parse_test_file("load 5m\nbogus command here\n")
