"""``marathon score`` and ``marathon report`` end to end on a sealed bundle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli import main
from engine.operate.operators import make_operator
from engine.run.orchestrator import Orchestrator
from engine.run.sealinputs import seal_run
from faults.generator import generate


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("r") / "run"
    Orchestrator(generate("online-boutique", 8, "short-5"), operator=make_operator("runbook"), run_dir=run_dir).run()
    return seal_run(run_dir)


def test_score_table_and_json(bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", str(bundle), "--faults", "--no-degradation"]) == 0
    out = capsys.readouterr().out
    assert "OPERATOR" in out and "runbook" in out and "OUTCOME" in out
    assert main(["score", str(bundle), "--json", "--no-degradation"]) == 0
    first = capsys.readouterr().out
    assert main(["score", str(bundle), "--json", "--no-degradation"]) == 0
    assert capsys.readouterr().out == first
    doc = json.loads(first)
    assert doc["leaderboard"][0]["operator"] == "runbook"


def test_report_writes_html_with_four_figures(bundle: Path, tmp_path: Path) -> None:
    assert main(["report", str(bundle), "-o", str(tmp_path / "rep")]) == 0
    html = (tmp_path / "rep" / "index.html").read_text()
    assert html.count("data:image/png;base64,") == 4
    for name in ("timeline.png", "stages.png", "outcomes.png", "actions.png"):
        data = (tmp_path / "rep" / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    assert "Marathon-Score" in html and "marathon-score/2" in html


def test_score_refuses_a_non_bundle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "junk.marathon"
    junk.write_bytes(b"not a tar at all")
    assert main(["score", str(junk)]) == 2
    assert "junk.marathon" in capsys.readouterr().err
