"""Scoring reads only the bundle, and the bundle format knows nothing of runs (DESIGN sections 2 and 8).

The run side hands in what needs a run: the seal's inputs hook (``seal_run``), the replayer
behind ``marathon verify --replay``, and the no-op re-simulation for bundles sealed without a
counterfactual. These tests hold the layering (by every import statement, lazy ones included)
and the hooks' behaviour.
"""

from __future__ import annotations

import argparse
import ast
import shutil
from pathlib import Path
from typing import Any

import pytest

from engine.bundle.cli import add_seal_arguments, add_verify_arguments
from engine.bundle.format import open_bundle, seal, verify
from engine.bundle.layout import COUNTERFACTUAL_FILE, SCHEDULE_FILE
from engine.bundle.replaystatus import remember, replay_status, status_dir
from engine.operate.operators import make_operator
from engine.run.orchestrator import Orchestrator
from faults.generator import generate
from scoring.cli import load_score
from scoring.counterfactual import Counterfactual

REPO = Path(__file__).resolve().parents[1]


def imported_modules(package: str) -> dict[str, set[str]]:
    """Every module each file of ``package`` imports, at any depth (function bodies included)."""
    out: dict[str, set[str]] = {}
    for path in sorted((REPO / package.replace(".", "/")).rglob("*.py")):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
        out[path.relative_to(REPO).as_posix()] = names
    return out


@pytest.mark.parametrize(("package", "forbidden"), [
    ("scoring", ("engine.run", "engine.sim", "engine.operate")),
    ("engine.bundle", ("engine.run",)),
])
def test_layers_do_not_reach_back_up(package: str, forbidden: tuple[str, ...]) -> None:
    bad = {f"{path}: {name}" for path, names in imported_modules(package).items() for name in names
           if any(name == f or name.startswith(f + ".") for f in forbidden)}
    assert not bad, sorted(bad)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An unsealed runbook run of online-boutique short-5, recorded in the clear so that copies
    of it seal independently (copy it before sealing)."""
    run_dir = tmp_path_factory.mktemp("rec") / "run"
    Orchestrator(generate("online-boutique", 5, "short-5"), operator=make_operator("runbook"), run_dir=run_dir,
                 hide_truth=False).run()
    return run_dir


def copy_of(run_dir: Path, to: Path) -> Path:
    shutil.copytree(run_dir, to)
    return to


def test_a_bundle_without_a_counterfactual_is_provisional_unless_one_is_injected(
        recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = seal(copy_of(recorded, tmp_path / "run"))  # the bare format: no inputs hook, no counterfactual
    assert COUNTERFACTUAL_FILE not in open_bundle(bundle).names()

    bare, _ = load_score(str(bundle))
    assert bare.provisional and bare.degradation is None
    assert "carries no counterfactual and none can be re-simulated here" in capsys.readouterr().err

    calls: list[tuple[str, int, str]] = []

    def noop(app: str, seed: int, schedule_text: str) -> Counterfactual:
        calls.append((app, seed, schedule_text))
        return Counterfactual(reference="noop:injected", violation_s=0.0)

    injected, _ = load_score(str(bundle), noop=noop)
    assert calls == [("online-boutique", 5, open_bundle(bundle).read_text(SCHEDULE_FILE))]
    assert not injected.provisional and injected.noop_reference == "noop:injected"
    assert "re-simulated the no-op run" in capsys.readouterr().err

    def broken(app: str, seed: int, schedule_text: str) -> Counterfactual:
        raise ValueError("this engine cannot replay it")

    failed, _ = load_score(str(bundle), noop=broken)
    assert failed.provisional
    assert "no-op counterfactual unavailable (this engine cannot replay it)" in capsys.readouterr().err


def test_marathon_seal_calls_the_inputs_hook_it_was_declared_with(recorded: Path, tmp_path: Path) -> None:
    seen: list[tuple[Path, int]] = []

    def inputs(run_dir: Path, events: list[Any]) -> None:
        seen.append((run_dir, len(events)))
        (run_dir / "added-at-seal.txt").write_text("carried\n", encoding="utf-8")

    parser = argparse.ArgumentParser(prog="marathon")
    add_seal_arguments(parser.add_subparsers().add_parser("seal"), inputs=inputs)
    run_dir = copy_of(recorded, tmp_path / "run")
    args = parser.parse_args(["seal", str(run_dir)])
    assert args.func(args) == 0
    assert [d for d, _ in seen] == [run_dir] and seen[0][1] > 0
    bundle = open_bundle(tmp_path / "run.marathon")
    assert bundle.read_text("added-at-seal.txt") == "carried\n" and verify(tmp_path / "run.marathon").ok


def test_verify_replay_needs_a_replayer(recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bundle = seal(copy_of(recorded, tmp_path / "run"))
    bare = argparse.ArgumentParser(prog="marathon")
    add_verify_arguments(bare.add_subparsers().add_parser("verify"))
    args = bare.parse_args(["verify", "--replay", str(bundle)])
    assert args.func(args) == 2
    assert "--replay is not available" in capsys.readouterr().err

    class Clean:
        ok = True

        def format(self) -> str:
            return "REPLAYS CLEAN (stub)"

        def to_dict(self) -> dict[str, Any]:
            return {"ok": True}

    replayed: list[str] = []
    wired = argparse.ArgumentParser(prog="marathon")
    add_verify_arguments(wired.add_subparsers().add_parser("verify"),
                         replay=lambda path: replayed.append(path) or Clean())
    args = wired.parse_args(["verify", "--replay", str(bundle)])
    assert args.func(args) == 0
    assert replayed == [str(bundle)] and "REPLAYS CLEAN (stub)" in capsys.readouterr().out


def test_replay_status_is_read_where_replay_writes_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SRE_MARATHON_CACHE", str(tmp_path / "cache"))
    good, bad = "a" * 64, "b" * 64
    assert replay_status(good) is None
    remember(good, ok=True, first_difference=None, problems=[])
    remember(bad, ok=False, first_difference="events.jsonl line 9 (seq 8)", problems=["x"])
    assert (replay_status(good), replay_status(bad)) == ("verified", "diverged")
    assert status_dir() == tmp_path / "cache" / "noop" / "replay"  # where earlier versions kept them
    assert replay_status("not-a-head") is None
