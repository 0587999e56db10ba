"""The orchestrator run loop and its event stream (issue 3)."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import pytest

from engine.bundle.events import GROUND_TRUTH_KINDS, EventError, EventStream, verify_chain
from engine.cli import main
from engine.run.orchestrator import Orchestrator
from faults.generator import generate


@pytest.fixture(scope="module")
def short_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Orchestrator, Path]:
    run_dir = tmp_path_factory.mktemp("run")
    run = Orchestrator(generate("online-boutique", 3, "short-5"), run_dir=run_dir)
    run.run()
    return run, run_dir


def test_stream_is_ordered_and_hash_chained(short_run: tuple[Orchestrator, Path]) -> None:
    run, _ = short_run
    events = run.stream.events
    assert events[0].kind == "run.start" and events[-1].kind == "run.end"
    assert [e.seq for e in events] == list(range(len(events)))
    assert all(a.t <= b.t for a, b in itertools.pairwise(events))
    assert verify_chain(events) is None


def test_every_scheduled_fault_is_injected_probed_and_reverted(short_run: tuple[Orchestrator, Path]) -> None:
    run, _ = short_run
    events = run.stream.events
    injected = {e.payload["fault"]: e for e in events if e.kind == "fault.inject"}
    reverted = {e.payload["fault"]: e for e in events if e.kind == "fault.revert"}
    assert set(injected) == {f.fault for f in run.schedule.faults} == set(reverted)
    for sf in run.schedule.faults:
        assert injected[sf.fault].t == sf.at and reverted[sf.fault].t == sf.end
        probes = [e for e in events if e.kind == "probe.result" and e.payload["fault"] == sf.fault]
        assert probes and all(sf.at <= e.t <= sf.end for e in probes)
        assert any(not e.payload["ok"] for e in probes), f"{sf.fault}: the noop run never saw the symptom"
    kinds = Counter(e.kind for e in events)
    assert kinds["health.sample"] == pytest.approx(run.end_t / 15, abs=1)
    assert kinds["agent.invoke"] == int(run.end_t // 60)
    assert kinds["change.deploy"] >= 1


def test_run_directory_holds_the_same_stream(short_run: tuple[Orchestrator, Path]) -> None:
    """While live the stream and schedule are in the encrypted journal; the same user reads
    them back (the seal decrypts them into events.jsonl and schedule.yaml)."""
    from engine.bundle.journal import read_journal

    run, run_dir = short_run
    lines, side, torn = read_journal(run_dir)
    on_disk = [json.loads(line) for line in lines.decode().splitlines()]
    assert [e["hash"] for e in on_disk] == [e.hash for e in run.stream.events] and torn == 0
    assert side["schedule.yaml"].decode() == run.schedule_text
    assert not (run_dir / "schedule.yaml").exists() and not (run_dir / "events.jsonl").exists()
    assert (run_dir / "run.json").is_file()


def test_health_samples_report_the_app(short_run: tuple[Orchestrator, Path]) -> None:
    run, _ = short_run
    samples = [e.payload for e in run.stream.events if e.kind == "health.sample"]
    last = samples[-1]
    names = {s["service"] for s in last["services"]}
    assert {"frontend", "cartservice", "redis-cart"} <= names
    frontend = next(s for s in last["services"] if s["service"] == "frontend")
    assert frontend["rps"] > 10 and frontend["p95_ms"] is not None
    assert {r["route"] for r in last["routes"]} == {r.name for r in run.sim.app.routes}


def test_same_seed_same_events() -> None:
    def digest() -> str:
        run = Orchestrator(generate("astronomy-shop", 2, "short-5"))
        run.run()
        return run.stream.head

    assert digest() == digest()


def test_ground_truth_kinds_are_marked() -> None:
    assert {"fault.inject", "fault.revert", "probe.result", "repair.check"} == set(GROUND_TRUTH_KINDS)
    stream = EventStream()
    with pytest.raises(EventError, match="unknown event kind"):
        stream.emit(0.0, "fault.whatever", {})
    with pytest.raises(EventError, match="lacks"):
        stream.emit(0.0, "report.rca", {"incident": "INC-1"})


def test_a_recorded_run_dir_is_not_overwritten(short_run: tuple[Orchestrator, Path]) -> None:
    _, run_dir = short_run
    with pytest.raises(FileExistsError):
        Orchestrator(generate("online-boutique", 3, "short-5"), run_dir=run_dir)


def test_cli_run_prints_a_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--app", "online-boutique", "--seed", "4", "--regime", "short-5", "--agent", "noop",
                 "--run-dir", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "PROBE FAILING" in out and "min of run time" in out
    assert (tmp_path / "r" / "events.jsonl").stat().st_size > 0
    assert main(["run", "--agent", "nobody"]) == 2
