"""Runs, scores and replays from the command line, as a user gives them: runs stopped early,
the same run given twice, per-app leaderboards, damaged bundles, bad flags, signals."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.bundle.format import verify
from engine.cli import main
from engine.operate.operators import make_operator
from engine.run.orchestrator import Orchestrator
from engine.run.sealinputs import seal_run
from faults.generator import generate


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A complete runbook run, and the same schedule stopped at 6 minutes (sealed incomplete)."""
    root = tmp_path_factory.mktemp("runs")
    complete = root / "complete"
    assert main(["run", "--app", "online-boutique", "--seed", "1", "--regime", "short-5", "--agent", "runbook",
                 "--run-dir", str(complete)]) == 0
    stopped = root / "stopped"
    run = Orchestrator(generate("online-boutique", 1, "short-5"), seed=1, operator=make_operator("runbook"),
                       run_dir=str(stopped))
    run.advance_to(360.0)
    run.close()
    seal_run(stopped, recover=True)
    return {"complete": Path(f"{complete}.marathon"), "complete_dir": complete,
            "stopped": Path(f"{stopped}.marathon")}


def _score_json(capsys: pytest.CaptureFixture[str], *argv: str, err: list[str] | None = None) -> dict:  # type: ignore[type-arg]
    assert main(["score", "--json", "--no-degradation", *argv]) == 0
    captured = capsys.readouterr()
    if err is not None:
        err.append(captured.err)
    return json.loads(captured.out)  # type: ignore[no-any-return]


def test_a_run_stopped_early_is_listed_but_not_ranked(runs: dict[str, Path],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert not verify(runs["stopped"]).complete
    doc = _score_json(capsys, str(runs["complete"]), str(runs["stopped"]))
    assert [r["runs"] for r in doc["leaderboard"]] == [1]
    by_integrity = sorted(r["integrity"].split(":")[0] for r in doc["runs"])
    assert by_integrity == ["INCOMPLETE", "sealed"]
    complete_score = next(r["score"] for r in doc["runs"] if r["integrity"] == "sealed")
    assert doc["leaderboard"][0]["score"] == complete_score

    assert main(["score", "--no-degradation", str(runs["stopped"])]) == 0
    out = capsys.readouterr().out
    assert "no complete runs to rank" in out and "INCOMPLETE" in out and "--include-incomplete" in out

    doc = _score_json(capsys, "--include-incomplete", str(runs["complete"]), str(runs["stopped"]))
    assert doc["leaderboard"][0]["runs"] == 2


def test_a_still_live_fault_of_a_stopped_run_is_open_not_missed(runs: dict[str, Path],
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    doc = _score_json(capsys, "--include-incomplete", str(runs["stopped"]))
    outcomes = {f["fault"]: f["outcome"] for f in doc["runs"][0]["faults"]}
    live = [f for f in doc["runs"][0]["faults"] if f["t_revert"] is None]
    assert live, "the stopped run should hold faults that were still live"
    assert all(outcomes[f["fault"]] in ("open", "correlated only", "located", "acted on", "handled",
                                        "repaired") for f in live)
    assert "missed" not in {outcomes[f["fault"]] for f in live}


def test_the_same_run_given_twice_counts_once(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    err: list[str] = []
    doc = _score_json(capsys, str(runs["complete_dir"]), str(runs["complete"]), err=err)
    assert doc["leaderboard"][0]["runs"] == 1
    assert "counted once" in err[0]


def test_per_app_rows(runs: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "--per-app", "--no-degradation", str(runs["complete"])]) == 0
    head, row = capsys.readouterr().out.splitlines()[:2]
    assert head.split()[:2] == ["APP", "OPERATOR"]
    assert row.split()[:3] == ["online-boutique", "runbook", "1"]


def test_report_refuses_an_output_that_is_a_file(runs: dict[str, Path], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "report.html"
    target.write_text("not a directory")
    assert main(["report", str(runs["complete"]), "-o", str(target)]) == 2
    assert "not a directory" in capsys.readouterr().err
    assert target.read_text() == "not a directory"


@pytest.mark.parametrize("damage", ["empty", "random", "truncated", "flipped"])
def test_replay_of_a_damaged_bundle_fails_before_the_app_starts(runs: dict[str, Path], tmp_path: Path,
                                                                damage: str) -> None:
    from tui.cli import add_replay_arguments, build_replay

    data = runs["complete"].read_bytes()
    bad = tmp_path / f"{damage}.marathon"
    if damage == "empty":
        bad.write_bytes(b"")
    elif damage == "random":
        bad.write_bytes(os.urandom(4096))
    elif damage == "truncated":
        bad.write_bytes(data[: len(data) // 3])
    else:
        flipped = bytearray(data)
        flipped[len(data) // 4] ^= 0x20
        bad.write_bytes(bytes(flipped))
    parser = argparse.ArgumentParser()
    add_replay_arguments(parser)
    try:
        build_replay(parser.parse_args([str(bad)]))
    except ValueError as exc:
        assert "cannot replay" in str(exc) and str(bad) in str(exc)
    else:
        # A flipped byte inside a JSON string can leave every line readable: the replay then
        # opens, with the verification failure as its notice (tested in test_tui_replay).
        assert damage == "flipped"
        assert not verify(bad).ok


def test_replay_of_a_stopped_run_ends_at_its_last_event(runs: dict[str, Path]) -> None:
    from tui.seek import ReplayIndex
    from tui.session import load_bundle

    stopped = ReplayIndex(load_bundle(runs["stopped"]).events)
    assert not stopped.complete
    assert stopped.end_t == pytest.approx(stopped.times[-1]) and stopped.end_t < 400
    complete = ReplayIndex(load_bundle(runs["complete"]).events)
    assert complete.complete and complete.end_t >= 20 * 60


@pytest.mark.parametrize("speed", ["nan", "inf", "-1", "quick"])
def test_run_rejects_a_bad_speed(speed: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["run", "--speed", speed, "--no-record"])
    assert exc.value.code == 2
    assert "invalid speed" in capsys.readouterr().err


def test_run_names_the_apps_when_the_app_is_unknown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--app", "no-such-app", "--no-record"]) == 2
    err = capsys.readouterr().err
    assert "no-such-app" in err and "online-boutique" in err and "train-ticket" in err


def test_run_fails_early_when_prometheus_does_not_answer(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--speed", "1", "--alerts", "prometheus=http://127.0.0.1:9", "--no-record"]) == 2
    assert "no Prometheus answers" in capsys.readouterr().err


def test_sigterm_seals_the_run_as_incomplete(tmp_path: Path) -> None:
    run_dir = tmp_path / "term"
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "run", "--app", "train-ticket", "--regime",
                             "marathon", "--speed", "60", "--run-dir", str(run_dir)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (run_dir / "events.jsonl").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "sealed the incomplete run" in err
    report = verify(Path(f"{run_dir}.marathon"))
    assert report.ok and report.sealed and not report.complete
