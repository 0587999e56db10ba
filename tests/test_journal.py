"""Truth stays hidden until the seal (issue 12 part 1): the encrypted journal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.bundle.format import BundleError, open_bundle, verify
from engine.bundle.journal import JOURNAL_FILE, JOURNAL_HEADER, state_dir
from engine.run.orchestrator import Orchestrator
from engine.run.sealinputs import seal_run
from faults.generator import generate
from faults.spec import load_catalog

MARATHON = [sys.executable, "-m", "engine.cli"]


def _secrets(app: str) -> list[str]:
    """Strings that would give the answers away: every catalog fault id of the app."""
    return [f.id for f in load_catalog(app).faults]


def _mentions(run_dir: Path, words: list[str]) -> list[str]:
    hits = []
    for path in run_dir.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            hits += [f"{path.relative_to(run_dir)}: {w}" for w in words if w.encode() in data]
    return hits


def test_live_run_directory_holds_no_ground_truth(tmp_path: Path) -> None:
    sched = generate("online-boutique", 1, "short-5")
    run_dir = tmp_path / "run"
    # keys other runs left in this worker's state dir (a sweep test kills a worker mid-run)
    others = set((state_dir() / "keys").glob("journal-*.key"))
    run = Orchestrator(sched, run_dir=run_dir)
    run.advance_to(sched.duration_s / 2)
    assert run.faults, "the run is past its first injection"
    run.recorder.flush()  # type: ignore[union-attr]
    names = {p.name for p in run_dir.iterdir()}
    assert "schedule.yaml" not in names and "events.jsonl" not in names
    assert {JOURNAL_FILE, JOURNAL_HEADER, "run.json", "app.yaml", "rules"} <= names
    assert _mentions(run_dir, _secrets("online-boutique")) == []
    # the same user's tools can still read it: the journal decrypts with the key in the state dir
    live = open_bundle(run_dir)
    assert any(e.kind == "fault.inject" for e in live.events)
    run.run()
    bundle = seal_run(run_dir)
    assert verify(bundle).ok
    sealed = {p.name for p in run_dir.iterdir()}
    assert JOURNAL_FILE not in sealed and {"schedule.yaml", "events.jsonl", "catalog.yaml",
                                           "counterfactual.json"} <= sealed
    assert set((state_dir() / "keys").glob("journal-*.key")) <= others  # the key is gone with the journal


def test_kill_minus_nine_then_seal_recover(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    proc = subprocess.Popen([*MARATHON, "run", "--app", "online-boutique", "--regime", "short-10", "--seed", "1",
                             "--speed", "30", "--run-dir", str(run_dir)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            journal = run_dir / JOURNAL_FILE
            if journal.is_file() and journal.stat().st_size > 0:
                time.sleep(8)  # about 240 s of run time at 30x, flushed every 2 s
                break
            time.sleep(0.2)
        else:
            pytest.fail("the run never wrote its journal")
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert _mentions(run_dir, _secrets("online-boutique")) == []
    refused = subprocess.run([*MARATHON, "seal", str(run_dir)], capture_output=True, text=True)
    assert refused.returncode == 1 and "--recover" in refused.stderr
    done = subprocess.run([*MARATHON, "seal", "--recover", str(run_dir)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    report = verify(Path(f"{run_dir}.marathon"))
    assert report.ok and not report.complete and report.events > 20


def test_a_changed_journal_is_refused(tmp_path: Path) -> None:
    sched = generate("online-boutique", 1, "short-5")
    run_dir = tmp_path / "run"
    run = Orchestrator(sched, run_dir=run_dir)
    run.advance_to(300)
    run.close()
    data = bytearray((run_dir / JOURNAL_FILE).read_bytes())
    data[100] ^= 0x01
    (run_dir / JOURNAL_FILE).write_bytes(bytes(data))
    with pytest.raises(BundleError, match=r"record 1 .* authentication tag"):
        seal_run(run_dir, recover=True)


def test_missing_key_names_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_dir = tmp_path / "run"
    run = Orchestrator(generate("online-boutique", 1, "short-5"), run_dir=run_dir)
    run.advance_to(120)
    run.close()
    monkeypatch.setenv("SRE_MARATHON_STATE", str(tmp_path / "elsewhere"))
    with pytest.raises(BundleError, match=r"journal-[0-9a-f]+\.key is not on this machine"):
        seal_run(run_dir, recover=True)


def test_record_sizes_do_not_count_the_live_faults(tmp_path: Path) -> None:
    """Found by review: unpadded record sizes gave away how many probe results (live faults)
    each 15 s record held. Every record is now a whole number of padded blocks, all equal here."""
    import struct

    from engine.bundle.journal import PAD_BYTES

    sched = generate("online-boutique", 1, "short-5")
    run = Orchestrator(sched, run_dir=tmp_path / "run", clock="wall", speed=1e6)
    sizes = []
    run.start()
    while not run.finished:
        run.advance_to(run.now + 15)
        run.recorder.flush()  # type: ignore[union-attr]  # a 1x run flushes once per evaluation
    run.close()
    blob = (tmp_path / "run" / JOURNAL_FILE).read_bytes()
    pos = 0
    while pos < len(blob):
        (size,) = struct.unpack_from(">I", blob, pos)
        sizes.append(size - 12 - 16)  # nonce, tag
        pos += 4 + size
    assert len(sizes) > 50 and all(s % PAD_BYTES == 0 for s in sizes)
    assert len(set(sizes[1:])) == 1  # the schedule first, then one block per evaluation
