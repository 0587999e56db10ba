"""Sealed run bundles: sealing, verifying, recovering a killed run (issue 5, part 5)."""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from engine.bundle.cli import add_seal_arguments, add_verify_arguments, cmd_seal, cmd_verify
from engine.bundle.events import GROUND_TRUTH_KINDS, Event, EventStream, verify_chain
from engine.bundle.format import (
    BLOCK,
    MANIFEST_FILE,
    BundleError,
    NotARunError,
    VerifyReport,
    bundle_path,
    files_digest,
    open_bundle,
    verify,
)
from engine.bundle.layout import EVENTS_FILE
from engine.run.orchestrator import Orchestrator
from engine.run.recorder import RunRecorder
from engine.run.sealinputs import seal_run
from faults.generator import generate

REPO = Path(__file__).resolve().parents[1]
RUN_FILES = ["app.yaml", "catalog.yaml", "counterfactual.json", EVENTS_FILE, "rules/sre-marathon.rules.yaml",
             "run.json", "schedule.yaml"]
"""What a sealed run of the embedded simulator carries, in bundle order."""
LONG_PATH = "transcripts/" + "a" * 70 + "/" + "b" * 60 + ".jsonl"
"""Over 100 bytes: stored with the ustar prefix field."""


# ----------------------------------------------------------------------------- fixtures and helpers


def record_ob_run(run_dir: Path) -> Path:
    """A real Online Boutique short-5 run (seed 1) recorded into ``run_dir`` in the clear
    (``hide_truth=False``: the stream is read before sealing; tests/test_journal.py covers the
    encrypted journal)."""
    Orchestrator(generate("online-boutique", 1, "short-5"), run_dir=run_dir, hide_truth=False).run()
    return run_dir


def make_tiny_run(run_dir: Path, *, end: bool = True) -> list[Event]:
    """A small run directory written by the real recorder, with a workspace and transcripts."""
    rec = RunRecorder(run_dir)
    schedule = "app: online-boutique\nseed: 7\nregime: short-5\n"
    rec.write_file("schedule.yaml", schedule)
    meta = {"run_id": "tiny-run", "app": "online-boutique", "seed": 7, "regime": "short-5", "operator": "noop",
            "substrate": "sim", "schedule_sha256": hashlib.sha256(schedule.encode()).hexdigest()}
    rec.write_json("run.json", meta)
    stream = EventStream()
    stream.subscribe(rec)
    stream.emit(0, "run.start", meta)
    stream.emit(15, "load.change", {"factor": 2.5})
    stream.emit(30, "alert.firing", {"alert": "HighRequestErrorRate", "labels": {"service": "frontend"},
                                     "fingerprint": "9f1c", "value": 0.25})
    stream.emit(30, "probe.result", {"fault": "ob-x", "ok": False, "success": 0.5, "p95_ms": 120.0,
                                     "detail": "500 from /cart: ünïcode"})
    stream.emit(60, "agent.invoke", {"invocation": 1, "operator": "noop"})
    if end:
        stream.emit(60, "run.end", {"reason": "schedule complete"})
    rec.close()
    (run_dir / "workspace").mkdir()
    (run_dir / "workspace" / "kv.json").write_text('{"note": "cart is slow"}\n', encoding="utf-8")
    (run_dir / Path(LONG_PATH)).parent.mkdir(parents=True)
    (run_dir / LONG_PATH).write_text('{"role": "user", "content": "hi"}\n', encoding="utf-8")
    return stream.events


def layout(blob: bytes) -> list[tuple[str, int, int, int]]:
    """(name, header offset, data start, data end) of every member, read with the stdlib tarfile."""
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:") as tf:
        return [(m.name, m.offset, m.offset_data, m.offset_data + m.size) for m in tf.getmembers()]


def covering(report: VerifyReport, offset: int) -> list[str]:
    """The problems whose byte range holds ``offset``, as text."""
    return [str(p) for p in report.problems if p.start is not None and p.end is not None and p.start <= offset < p.end]


def flip(path: Path, offset: int, mask: int, out: Path) -> Path:
    data = bytearray(path.read_bytes())
    data[offset] ^= mask
    out.write_bytes(bytes(data))
    return out


@pytest.fixture(scope="module")
def ob_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An unsealed, complete Online Boutique short-5 run directory (copy it before sealing)."""
    return record_ob_run(tmp_path_factory.mktemp("ob") / "run")


@pytest.fixture(scope="module")
def ob_bundle(ob_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sealed bundle of :func:`ob_run` (do not modify)."""
    run_dir = tmp_path_factory.mktemp("obsealed") / "run"
    shutil.copytree(ob_run, run_dir)
    return seal_run(run_dir)


# ----------------------------------------------------------------------------- sealing a real run


def test_a_sealed_real_run_verifies(ob_run: Path, ob_bundle: Path) -> None:
    original = (ob_run / EVENTS_FILE).read_bytes()
    report = verify(ob_bundle)
    assert report.ok, report.format()
    assert report.form == "bundle" and report.sealed and report.complete
    assert report.reason == "run.end: schedule complete"
    assert ob_bundle == bundle_path(ob_bundle.parent / "run") and ob_bundle.name == "run.marathon"
    assert len(ob_bundle.read_bytes()) % 10240 == 0 and report.size == ob_bundle.stat().st_size

    b = open_bundle(ob_bundle)
    events = b.events
    assert report.events == len(events) == original.count(b"\n") + 1
    assert verify_chain(events) is None and report.head == events[-1].hash == b.head
    assert events[-2].kind == "run.end" and events[-1].kind == "seal" and b.sealed and b.complete
    # the recorded stream is kept byte for byte; only the seal line is added
    assert b.read_bytes(EVENTS_FILE) == original + (events[-1].to_json() + "\n").encode()
    seal_ev = events[-1]
    assert seal_ev.t == events[-2].t and seal_ev.prev == events[-2].hash
    assert seal_ev.hash == Event.digest(seal_ev.prev, seal_ev.seq, seal_ev.t, "seal", seal_ev.payload)
    manifest = b.manifest
    assert manifest is not None
    assert seal_ev.payload["events"] == manifest["events"] == len(events)
    assert seal_ev.payload["complete"] is True and manifest["complete"] is True and manifest["head"] == seal_ev.hash
    assert seal_ev.payload["sha256"] == manifest["files_sha256"] == files_digest(manifest["files"])
    assert set(manifest["files"]) == set(RUN_FILES)
    for name, entry in manifest["files"].items():
        data = b.read_bytes(name)
        assert entry == {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    assert b.meta["run_id"] == manifest["run_id"] == "online-boutique-short-5-seed1-noop"
    assert b.schedule_text == (ob_run / "schedule.yaml").read_text(encoding="utf-8")
    # ground truth is in the bundle (a noop run makes no repair to check)
    assert {e.kind for e in events} >= GROUND_TRUTH_KINDS - {"repair.check"}

    # the run directory itself is now a sealed run directory with the same contents
    run_dir = ob_bundle.parent / "run"
    dir_report = verify(run_dir)
    assert dir_report.ok and dir_report.sealed and dir_report.form == "run directory"
    assert dir_report.head == report.head and dir_report.events == report.events
    assert sorted(open_bundle(run_dir).names()) == b.names()
    for name in b.names():
        assert (run_dir / name).read_bytes() == b.read_bytes(name)


def test_bundle_is_a_standard_tar(ob_bundle: Path, tmp_path: Path) -> None:
    """Conformance: Python's tarfile and GNU tar read the bundle; extracted, it verifies as a sealed directory."""
    blob = ob_bundle.read_bytes()
    with tarfile.open(ob_bundle, mode="r:") as tf:
        members = tf.getmembers()
        assert [m.name for m in members] == [MANIFEST_FILE, *RUN_FILES]
        for m in members:
            assert (m.mode, m.uid, m.gid, m.mtime, m.uname, m.gname, m.isreg()) == (0o644, 0, 0, 0, "", "", True)
        tf.extractall(tmp_path / "py", filter="data")
    assert verify(tmp_path / "py").ok
    if shutil.which("tar"):
        listing = subprocess.run(["tar", "-tf", str(ob_bundle)], capture_output=True, text=True, check=True)
        assert listing.stdout.split() == [MANIFEST_FILE, *RUN_FILES]
        (tmp_path / "gnu").mkdir()
        subprocess.run(["tar", "-xf", str(ob_bundle), "-C", str(tmp_path / "gnu")], check=True)
        assert verify(tmp_path / "gnu").ok
    assert blob[-2 * BLOCK:] == bytes(2 * BLOCK)


def test_identical_runs_give_identical_bundle_bytes(tmp_path: Path) -> None:
    first = seal_run(record_ob_run(tmp_path / "a" / "run"))
    second = seal_run(record_ob_run(tmp_path / "b" / "elsewhere"))
    assert first.read_bytes() == second.read_bytes()


def test_sealing_twice_is_refused(ob_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(ob_run, run_dir)
    bundle = seal_run(run_dir)
    before = bundle.read_bytes(), (run_dir / EVENTS_FILE).read_bytes()
    with pytest.raises(BundleError, match="already sealed"):
        seal_run(run_dir)
    with pytest.raises(BundleError, match="already sealed"):
        seal_run(run_dir, recover=True, out=tmp_path / "other.marathon")
    (run_dir / MANIFEST_FILE).unlink()  # a seal event alone also marks the run sealed
    lines = before[1].count(b"\n")
    with pytest.raises(BundleError, match=f"line {lines} is a seal event; its bundle is {bundle}"):
        seal_run(run_dir, out=tmp_path / "other.marathon")
    assert (bundle.read_bytes(), (run_dir / EVENTS_FILE).read_bytes()) == before
    assert not (tmp_path / "other.marathon").exists()
    assert cmd_seal(argparse.Namespace(run_dir=str(run_dir), recover=False, output=None)) == 1
    assert "already sealed" in capsys.readouterr().err


def test_an_existing_bundle_file_is_not_overwritten(ob_run: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(ob_run, run_dir)
    bundle_path(run_dir).write_bytes(b"precious")
    with pytest.raises(BundleError, match="already exists"):
        seal_run(run_dir)
    assert bundle_path(run_dir).read_bytes() == b"precious"
    assert verify(run_dir).sealed is False  # nothing was appended
    with pytest.raises(BundleError, match="inside the run directory"):
        seal_run(run_dir, out=run_dir / "x.marathon")


# ----------------------------------------------------------------------------- every byte counts


def test_every_single_byte_flip_of_a_small_bundle_is_detected_and_located(tmp_path: Path) -> None:
    """Flip each byte of a whole bundle (two ways) and check that verify names that byte's place."""
    make_tiny_run(tmp_path / "run")
    bundle = seal_run(tmp_path / "run")
    assert verify(bundle).ok
    blob = bundle.read_bytes()
    members = layout(blob)
    assert any(name == LONG_PATH for name, *_ in members)
    events_member = next(m for m in members if m[0] == EVENTS_FILE)
    newlines = [events_member[2] + i for i, c in enumerate(blob[events_member[2]:events_member[3]]) if c == 0x0A]
    line_starts = [events_member[2], *(n + 1 for n in newlines[:-1])]
    rng = random.Random(5)
    scratch = tmp_path / "flipped.marathon"
    undetected: list[str] = []
    for offset in range(len(blob)):
        mask = (0x01, 0x80, rng.randrange(1, 256))[offset % 3]  # a low bit, the high bit, any change
        report = verify(flip(bundle, offset, mask, scratch))
        places = covering(report, offset)
        if report.ok or not places:
            undetected.append(f"byte {offset} ^ {mask:#x}: {report.problems}")
            continue
        for name, header, start, end in members:
            if header <= offset < start:
                assert any(f"bundle bytes {header}-{header + BLOCK - 1} (header of member" in p for p in places)
            elif start <= offset < end:
                assert any(p.startswith(name) for p in places), (offset, places)
                if name == EVENTS_FILE and offset < end - 1:
                    line = sum(1 for s in line_starts if s <= offset)
                    assert any(p.startswith(f"{EVENTS_FILE} line {line} (seq {line - 1},") for p in places), (
                        offset, places)
    assert not undetected, f"{len(undetected)} flips not located, e.g. {undetected[:3]}"


def test_byte_flips_across_a_real_bundle_are_located(ob_bundle: Path, tmp_path: Path) -> None:
    """A dense sample over a real bundle: every region's edges, header fields, and random data bytes."""
    blob = ob_bundle.read_bytes()
    members = layout(blob)
    offsets = {len(blob) - 1, len(blob) - 2 * BLOCK, members[-1][3]}
    for _, header, start, end in members:
        offsets |= {header, header + 100, header + 124, header + 135, header + 148, header + 154, header + 155,
                    header + 156, header + 257, header + 345, header + 511, start, end - 1, end}
    rng = random.Random(11)
    offsets |= {rng.randrange(len(blob)) for _ in range(60)}
    events = next(m for m in members if m[0] == EVENTS_FILE)
    offsets |= {rng.randrange(events[2], events[3]) for _ in range(60)}
    scratch = tmp_path / "flipped.marathon"
    for offset in sorted(offsets):
        report = verify(flip(ob_bundle, offset, rng.randrange(1, 256), scratch))
        assert not report.ok and covering(report, offset), (offset, report.format())


def test_an_edited_event_line_is_located(ob_bundle: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(ob_bundle.parent / "run", run_dir)
    lines = (run_dir / EVENTS_FILE).read_bytes().split(b"\n")
    n = next(i for i, ln in enumerate(lines) if b'"kind":"probe.result"' in ln and b'"ok":false' in ln)
    # a naive edit: the ground truth now says the probe passed
    edited = list(lines)
    edited[n] = lines[n].replace(b'"ok":false', b'"ok":true')
    (run_dir / EVENTS_FILE).write_bytes(b"\n".join(edited))
    report = verify(run_dir)
    assert not report.ok
    assert any(p.line == n + 1 and p.seq == n and "hash does not match" in p.what for p in report.problems)
    assert any(p.file == EVENTS_FILE and "differs from the manifest" in p.what for p in report.problems)
    # a careful edit that recomputes the event's own hash breaks the next event's link instead
    ev = Event.from_dict(json.loads(edited[n]))
    rehashed = Event(ev.seq, ev.t, ev.kind, ev.payload, ev.prev, Event.digest(ev.prev, ev.seq, ev.t, ev.kind,
                                                                               ev.payload))
    edited[n] = rehashed.to_json().encode()
    (run_dir / EVENTS_FILE).write_bytes(b"\n".join(edited))
    report = verify(run_dir)
    where = {(p.line, p.seq): p.what for p in report.problems if p.line is not None}
    assert list(where) == [(n + 2, n + 1)] and "prev link" in where[(n + 2, n + 1)]
    # a reformatted (but equal) line is not the sealed byte stream either
    edited = list(lines)
    edited[n] = json.dumps(json.loads(lines[n])).encode()
    (run_dir / EVENTS_FILE).write_bytes(b"\n".join(edited))
    assert any(p.line == n + 1 and "canonical" in p.what for p in verify(run_dir).problems)


def test_deleted_added_and_retabled_files_are_located(ob_bundle: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(ob_bundle.parent / "run", run_dir)
    (run_dir / "run.json").unlink()
    (run_dir / "later").mkdir()
    (run_dir / "later" / "notes.md").write_text("added later\n")
    report = verify(run_dir)
    found = {(p.file, p.what.split(" (")[0]) for p in report.problems}
    assert found == {("run.json", "listed in the manifest but missing"),
                     ("later/notes.md", "not in the manifest")}, report.format()

    # edit a file and update its manifest entry: the manifest no longer matches the seal event
    shutil.rmtree(run_dir)
    shutil.copytree(ob_bundle.parent / "run", run_dir)
    (run_dir / "schedule.yaml").write_text("faults: []\n")
    manifest = json.loads((run_dir / MANIFEST_FILE).read_text())
    data = (run_dir / "schedule.yaml").read_bytes()
    manifest["files"]["schedule.yaml"] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    manifest["files_sha256"] = files_digest(manifest["files"])
    (run_dir / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    whats = [str(p) for p in verify(run_dir).problems]
    assert any(w.startswith("manifest.json") and "files_sha256" in w and "seal event" in w for w in whats), whats
    assert any(w.startswith("schedule.yaml") and "schedule_sha256" in w for w in whats), whats


def test_members_added_to_or_missing_from_a_bundle_are_named(ob_bundle: Path, tmp_path: Path) -> None:
    with tarfile.open(ob_bundle, mode="r:") as tf:
        contents = [(m.name, tf.extractfile(m).read()) for m in tf.getmembers()]  # type: ignore[union-attr]

    def pack(members: list[tuple[str, bytes]], path: Path) -> Path:
        with tarfile.open(path, mode="w", format=tarfile.USTAR_FORMAT) as tf:
            for name, data in members:
                info = tarfile.TarInfo(name)
                info.size, info.mode, info.mtime = len(data), 0o644, 0
                tf.addfile(info, io.BytesIO(data))
        return path

    extra = verify(pack([*contents, ("zz-extra.txt", b"hello\n")], tmp_path / "extra.marathon"))
    assert any(p.file == "zz-extra.txt" and "not in the manifest" in p.what for p in extra.problems)
    missing = verify(pack([c for c in contents if c[0] != "run.json"], tmp_path / "missing.marathon"))
    assert any(p.file == "run.json" and "missing" in p.what for p in missing.problems)
    reordered = verify(pack([contents[0], *reversed(contents[1:])], tmp_path / "order.marathon"))
    assert any("out of order" in p.what for p in reordered.problems)


@pytest.mark.parametrize("where", ["header", "data", "padding", "end", "tail"])
def test_a_truncated_bundle_is_caught(ob_bundle: Path, tmp_path: Path, where: str) -> None:
    blob = ob_bundle.read_bytes()
    _, header, start, end = layout(blob)[1]
    cut = {"header": header + 100, "data": start + 1000, "padding": end + 1, "end": layout(blob)[-1][3] + 700,
           "tail": len(blob) - 1}[where]
    truncated = tmp_path / "cut.marathon"
    truncated.write_bytes(blob[:cut])
    report = verify(truncated)
    assert not report.ok
    assert any("truncated" in p.what and p.start is not None and p.start <= cut for p in report.problems), \
        report.format()
    with pytest.raises(BundleError):
        open_bundle(truncated)


def test_appended_bytes_are_caught(ob_bundle: Path, tmp_path: Path) -> None:
    grown = tmp_path / "grown.marathon"
    grown.write_bytes(ob_bundle.read_bytes() + b"\0" * BLOCK * 20 + b"x")
    report = verify(grown)
    assert [p.what for p in report.problems] == [f"{BLOCK * 20 + 1} bytes after the end of the archive"]


# ----------------------------------------------------------------------------- killed and incomplete runs


def test_a_torn_last_line_is_recovered_only_when_asked(ob_run: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(ob_run, run_dir)
    data = (run_dir / EVENTS_FILE).read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 41  # 40 bytes into a line
    (run_dir / EVENTS_FILE).write_bytes(data[:cut])
    assert open_bundle(run_dir).torn_bytes == 40 and not open_bundle(run_dir).sealed
    unsealed = verify(run_dir)
    assert unsealed.ok and not unsealed.sealed and not unsealed.complete and "torn" in unsealed.notes[0]
    with pytest.raises(BundleError, match=r"torn.*--recover"):
        seal_run(run_dir)
    bundle = seal_run(run_dir, recover=True)
    report = verify(bundle)
    assert report.ok and report.sealed and not report.complete, report.format()
    assert "no run.end" in report.reason and "torn last line of 40 bytes was dropped" in report.reason
    kept = data[:cut - 40]
    b = open_bundle(bundle)
    assert b.read_bytes(EVENTS_FILE).startswith(kept)
    assert len(b.events) == kept.count(b"\n") + 1 and not b.complete
    payload = b.events[-1].payload
    assert (payload["complete"], payload["recovered"], payload["dropped_bytes"]) == (False, True, 40)
    manifest = b.manifest
    assert manifest is not None and manifest["complete"] is False and manifest["reason"] == report.reason


def test_an_incomplete_run_needs_recover(ob_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(ob_run, run_dir)
    data = (run_dir / EVENTS_FILE).read_bytes()
    (run_dir / EVENTS_FILE).write_bytes(data[:data.index(b"\n", len(data) // 3) + 1])  # whole lines, no run.end
    args = argparse.Namespace(run_dir=str(run_dir), recover=False, output=None)
    assert cmd_seal(args) == 1
    assert "not complete" in capsys.readouterr().err and not bundle_path(run_dir).exists()
    args.recover = True
    assert cmd_seal(args) == 0
    out = capsys.readouterr().out
    assert "incomplete: no run.end" in out and str(bundle_path(run_dir)) in out
    assert verify(bundle_path(run_dir)).ok


def test_a_broken_chain_is_never_repaired(ob_run: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(ob_run, run_dir)
    lines = (run_dir / EVENTS_FILE).read_bytes().split(b"\n")
    lines[100] = lines[100].replace(b'"t":', b'"t":1', 1)  # changes the event's run time
    damaged = b"\n".join(lines)[:-25]  # and tear the end, as a kill would
    (run_dir / EVENTS_FILE).write_bytes(damaged)
    for recover in (False, True):
        with pytest.raises(BundleError, match=r"events.jsonl:101: the event chain is broken at seq 100: its hash"):
            seal_run(run_dir, recover=recover)
    assert (run_dir / EVENTS_FILE).read_bytes() == damaged and not bundle_path(run_dir).exists()
    report = verify(run_dir)
    assert [(p.line, p.seq) for p in report.problems] == [(101, 100)]


def test_kill_9_recovers_every_flushed_event(tmp_path: Path) -> None:
    """A wall-clock run killed with SIGKILL seals into a valid, incomplete bundle holding every
    flushed event (the run records into its encrypted journal; :mod:`engine.bundle.journal`)."""
    from engine.bundle.journal import JOURNAL_FILE, read_journal

    run_dir = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-m", "engine.cli", "run", "--app", "online-boutique", "--seed", "1", "--regime", "short-5",
         "--speed", "40", "--run-dir", str(run_dir)],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 6.0
        while time.monotonic() < deadline:
            time.sleep(0.1)
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        before, _, _ = read_journal(run_dir)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert not (run_dir / EVENTS_FILE).exists()
    flushed, side, torn = read_journal(run_dir)
    assert flushed.startswith(before)  # nothing flushed is ever lost or rewritten
    assert before.count(b"\n") >= 10, "the run flushed too little in 6 s to test anything"
    assert "schedule.yaml" in side and flushed.endswith(b"\n")
    journal_bytes = (run_dir / JOURNAL_FILE).stat().st_size

    with pytest.raises(BundleError, match="--recover"):
        seal_run(run_dir)
    bundle = seal_run(run_dir, recover=True)
    report = verify(bundle)
    assert report.ok and report.sealed and not report.complete, report.format()
    b = open_bundle(bundle, check=True)
    stream = b.read_bytes(EVENTS_FILE)
    assert stream == flushed + (b.events[-1].to_json() + "\n").encode()  # every flushed event, then the seal
    assert report.events == flushed.count(b"\n") + 1
    assert "run.end" not in {e.kind for e in b.events}
    assert b.events[-1].payload["dropped_bytes"] == torn < journal_bytes
    assert b.events[0].kind == "run.start" and b.meta["clock"] == "wall" and not b.complete
    assert {"fault.inject", "probe.result"} <= {e.kind for e in b.events}  # ground truth, as designed
    assert b.read_bytes("schedule.yaml") == side["schedule.yaml"]


# ----------------------------------------------------------------------------- bad input and the CLI


def test_bad_input_gets_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    random_file = tmp_path / "random.marathon"
    random_file.write_bytes(random.Random(3).randbytes(30000))
    report = verify(random_file)
    assert not report.ok and "not a marathon bundle" in report.problems[0].what
    with pytest.raises(NotARunError, match=r"random\.marathon: not a marathon bundle"):
        open_bundle(random_file)
    empty = tmp_path / "empty.marathon"
    empty.write_bytes(b"")
    assert "empty" in verify(empty).problems[0].what

    not_a_run = tmp_path / "photos"
    not_a_run.mkdir()
    (not_a_run / "cat.jpg").write_bytes(b"\xff\xd8")
    with pytest.raises(NotARunError, match=r"photos is not a run directory: it has no events\.jsonl"):
        seal_run(not_a_run)
    assert "not a run directory" in str(verify(not_a_run).problems[0])

    seal_args = argparse.Namespace(run_dir=str(not_a_run), recover=False, output=None)
    assert cmd_seal(seal_args) == 2
    assert cmd_seal(argparse.Namespace(run_dir=str(tmp_path / "nope"), recover=True, output=None)) == 2
    assert cmd_verify(argparse.Namespace(bundle=str(random_file), json=False)) == 1
    assert cmd_verify(argparse.Namespace(bundle=str(tmp_path / "nope"), json=False)) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    assert "not a marathon bundle" in captured.out and "no such bundle or run directory" in captured.err

    (tmp_path / "linked").mkdir()
    make_tiny_run(tmp_path / "linked" / "run")
    (tmp_path / "linked" / "run" / "workspace" / "escape").symlink_to("/etc/passwd")
    with pytest.raises(BundleError, match=r"symbolic link|not a regular file"):
        seal_run(tmp_path / "linked" / "run")


def test_cli_functions_report_as_a_user_reads_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="marathon")
    sub = parser.add_subparsers()
    add_seal_arguments(sub.add_parser("seal"))
    add_verify_arguments(sub.add_parser("verify"))
    make_tiny_run(tmp_path / "run")

    args = parser.parse_args(["seal", str(tmp_path / "run")])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    bundle = tmp_path / "run.marathon"
    head = open_bundle(bundle).head
    assert f"-> {bundle}" in out and "complete: run.end: schedule complete" in out and head in out

    args = parser.parse_args(["verify", str(bundle)])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "sealed bundle, complete" in out and "events  7" in out and head in out and "intact" in out

    offset = layout(bundle.read_bytes())[1][2] + 5  # inside line 1 of events.jsonl
    flip(bundle, offset, 0x20, bundle)
    args = parser.parse_args(["verify", str(bundle)])
    assert args.func(args) == 1
    out = capsys.readouterr().out
    assert "NOT INTACT" in out and "events.jsonl line 1 (seq 0, bundle bytes" in out

    args = parser.parse_args(["verify", "--json", str(bundle)])
    assert args.func(args) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False and any(p["line"] == 1 and p["seq"] == 0 for p in data["problems"])


def test_bundle_modules_stay_headless() -> None:
    code = ("import sys, engine.bundle.format, engine.bundle.cli\n"
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == ""
