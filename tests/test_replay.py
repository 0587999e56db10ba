"""Proof by re-execution (issue 12 part 3): honest bundles replay clean; forged ones do not."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from engine.bundle.format import verify
from engine.bundle.replaystatus import replay_status
from engine.operate.operators import make_operator
from engine.run.orchestrator import Orchestrator
from engine.run.replay import replay
from engine.run.sealinputs import seal_run
from faults.generator import generate
from tests.forgery import flip_first_failing_probe, forge
from tui.human import HumanOperator

MARATHON = [sys.executable, "-m", "engine.cli"]


@pytest.fixture(scope="module")
def runbook_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("replay") / "run"
    Orchestrator(generate("online-boutique", 1, "short-5"), operator=make_operator("runbook"), run_dir=run_dir).run()
    return seal_run(run_dir)


def test_honest_agent_bundle_replays_clean(runbook_bundle: Path) -> None:
    report = replay(runbook_bundle)
    assert report.ok, report.format()
    assert report.reproduced == report.events > 400
    assert report.head_replayed == report.head_recorded == verify(runbook_bundle).head
    assert replay_status(report.head_recorded) == "verified"


def test_player_calls_between_steps_replay_clean(tmp_path: Path) -> None:
    """A player's calls land between steps at arbitrary run times (not in an invocation)."""
    run = Orchestrator(generate("online-boutique", 2, "short-5"), operator=HumanOperator(), clock="wall",
                       run_dir=tmp_path / "run")
    rnd = random.Random(7)
    t = 0.0
    calls = 0
    run.start()
    while not run.finished:
        t += rnd.choice([1, 2, 3, 7, 11])
        run.advance_to(t)
        if run.finished:
            break
        if rnd.random() < 0.3:
            run.tools.call("get_alerts", {"state": "firing"})
            calls += 1
        alerts = run.alert_history.instances if run.alert_history else []
        if alerts and rnd.random() < 0.08:
            run.tools.call("report_incident", {"alerts": [f"A-{alerts[-1].id}"], "title": "checkout errors"})
            calls += 1
        if rnd.random() < 0.05:
            run.tools.call("kubectl_get", {"kind": "pods", "output": "wide"})
            calls += 1
    run.close()
    bundle = seal_run(tmp_path / "run")
    report = replay(bundle)
    assert calls > 50
    assert report.ok, report.format()


def test_rechained_edit_is_caught(runbook_bundle: Path, tmp_path: Path) -> None:
    forged = forge(runbook_bundle, tmp_path / "forged", flip_first_failing_probe, reseal=False)
    assert not verify(forged).ok
    report = replay(forged)
    assert not report.ok and "does not verify" in report.problems[0]


def test_edit_plus_reseal_verifies_but_does_not_replay(runbook_bundle: Path, tmp_path: Path) -> None:
    seen: dict[str, int] = {}

    def edit(dicts: list[dict]) -> None:
        flip_first_failing_probe(dicts)
        seen["seq"] = next(i for i, d in enumerate(dicts) if d["kind"] == "probe.result" and d["payload"]["ok"]
                           and d["payload"]["detail"] == "ok")

    forged = forge(runbook_bundle, tmp_path / "forged", edit)
    assert verify(forged).ok  # the project's own sealer calls it intact
    report = replay(forged)
    assert not report.ok
    assert report.first_difference is not None
    assert f"(seq {seen['seq']})" in report.first_difference and "probe.result" in report.first_difference
    assert report.reproduced == seen["seq"]
    assert replay_status(verify(forged).head) == "diverged"


def test_forged_counterfactual_is_caught(runbook_bundle: Path, tmp_path: Path) -> None:
    from engine.bundle.format import open_bundle

    doc = open_bundle(runbook_bundle).read_json("counterfactual.json")
    doc["probes"] = {k: [[t, True] for t, _ in v] for k, v in doc["probes"].items()}
    forged = forge(runbook_bundle, tmp_path / "forged", lambda d: None,
                   files={"counterfactual.json": json.dumps(doc).encode()})
    report = replay(forged)
    assert report.first_difference is None  # the events are honest
    assert not report.ok and any("counterfactual.json differs" in p for p in report.problems)


def test_verify_replay_cli_exit_codes(runbook_bundle: Path, tmp_path: Path) -> None:
    ok = subprocess.run([*MARATHON, "verify", "--replay", str(runbook_bundle)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "REPLAYS CLEAN" in ok.stdout
    forged = forge(runbook_bundle, tmp_path / "forged", flip_first_failing_probe)
    bad = subprocess.run([*MARATHON, "verify", "--replay", str(forged)], capture_output=True, text=True)
    assert bad.returncode == 1
    assert "intact" in bad.stdout and "FIRST DIFFERENCE" in bad.stdout and "probe.result" in bad.stdout
    board = subprocess.run([*MARATHON, "score", str(forged)], capture_output=True, text=True)
    assert "does not replay" in board.stdout and "no complete runs to rank" in board.stdout


def test_signed_seal_and_trust(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SRE_MARATHON_STATE", str(tmp_path / "state"))
    init = subprocess.run([*MARATHON, "keys", "init"], capture_output=True, text=True)
    assert init.returncode == 0, init.stderr
    pub = init.stdout.strip().split()[-1]
    assert len(pub) == 64
    assert (tmp_path / "state" / "keys" / "seal-ed25519.pem").stat().st_mode & 0o777 == 0o600
    run_dir = tmp_path / "run"
    Orchestrator(generate("online-boutique", 1, "short-5"), run_dir=run_dir).run()
    bundle = seal_run(run_dir)
    report = verify(bundle)
    assert report.ok and report.signer == pub
    trusted = subprocess.run([*MARATHON, "verify", "--trust", pub, str(bundle)], capture_output=True, text=True)
    assert trusted.returncode == 0 and f"trusted: signed by {pub}" in trusted.stdout
    other = "ab" * 32
    untrusted = subprocess.run([*MARATHON, "verify", "--trust", other, str(bundle)], capture_output=True, text=True)
    assert untrusted.returncode == 1 and "NOT TRUSTED" in untrusted.stdout
    # a forger without the key: resealing drops the signature, so --trust refuses it
    forged = forge(bundle, tmp_path / "forged", lambda d: None)
    assert verify(forged).signer is None
    refused = subprocess.run([*MARATHON, "verify", "--trust", pub, str(forged)], capture_output=True, text=True)
    assert refused.returncode == 1 and "not signed" in refused.stdout
    bad_key = subprocess.run([*MARATHON, "verify", "--trust", "nope", str(bundle)], capture_output=True, text=True)
    assert bad_key.returncode == 2 and "64 hex" in bad_key.stderr


def test_score_reads_the_bundle_not_the_installed_package(runbook_bundle: Path, tmp_path: Path) -> None:
    """A bundle of an app this installation does not ship is scored from its own app model and
    counterfactual, with the same result; and scoring never re-simulates when it carries one."""
    from scoring.cli import load_score

    original, _ = load_score(str(runbook_bundle))

    def rename(dicts: list[dict]) -> None:
        dicts[0]["payload"]["app"] = "my-private-shop"

    renamed = forge(runbook_bundle, tmp_path / "renamed", rename)
    cli = subprocess.run([*MARATHON, "score", "--json", str(renamed)], capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    assert "re-simulated" not in cli.stderr and "Traceback" not in cli.stderr
    doc = json.loads(cli.stdout)
    (run,) = doc["runs"]
    assert run["app"] == "my-private-shop" and not run["provisional"]
    assert run["scores"] == original.scores and run["engine"] == original.engine is not None


def test_an_oracle_run_relabelled_as_runbook_does_not_replay(tmp_path: Path) -> None:
    """Found by review: the oracle's calls, relabelled, replayed clean and ranked 100. Scripted
    operators are re-executed themselves, so the runbook's own decisions differ."""
    run_dir = tmp_path / "oracle"
    Orchestrator(generate("online-boutique", 1, "short-5"), operator=make_operator("oracle"), run_dir=run_dir).run()
    bundle = seal_run(run_dir)
    assert replay(bundle).ok

    def relabel(dicts: list[dict]) -> None:
        for d in dicts:
            for key in ("operator",):
                if d["payload"].get(key) == "oracle":
                    d["payload"][key] = "runbook"
            if d["kind"] == "run.start":
                d["payload"]["oracle"] = False
                d["payload"]["run_id"] = d["payload"]["run_id"].replace("oracle", "runbook")

    forged = forge(bundle, tmp_path / "forged", relabel)
    assert verify(forged).ok
    report = replay(forged)
    assert not report.ok and report.first_difference is not None


def test_a_swapped_schedule_is_ranked_apart(runbook_bundle: Path, tmp_path: Path) -> None:
    """Found by review: a run of an easier --schedule under the public seed's label averaged
    into the seeded row."""
    from faults.schedule import dump_schedule
    from scoring.cli import load_score

    sched = generate("online-boutique", 1, "short-5")
    easier = sched.model_copy(update={"faults": sched.faults[:1]})
    path = tmp_path / "easy.yaml"
    path.write_text(dump_schedule(easier), encoding="utf-8")
    out = subprocess.run([*MARATHON, "run", "--schedule", str(path), "--agent", "runbook", "--run-dir",
                          str(tmp_path / "easy")], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    custom, _ = load_score(str(tmp_path / "easy.marathon"))
    seeded, _ = load_score(str(runbook_bundle))
    assert custom.custom_schedule and not seeded.custom_schedule
    board = subprocess.run([*MARATHON, "score", str(runbook_bundle), str(tmp_path / "easy.marathon")],
                           capture_output=True, text=True)
    assert "runbook [custom schedule]" in board.stdout
