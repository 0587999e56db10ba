"""The stored counterfactual is the run's, or it is not used; and reading a bundle once is enough.

Scoring never re-simulates a bundle that carries its no-op counterfactual (``scoring/cli.py``,
trust model). These tests hold the other half of that bargain -- a counterfactual that was
moved from another run, or edited after the seal, never judges a run -- and the shortcuts
that make ``marathon score`` fast: verify and open share one read and one scan of the
events (``verify(keep=True)``, ``open_bundle(report=...)``), payload types are checked by
compiled predicates that agree with the message-building checker, and the digest of the
generated schedule is cached per engine code digest.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.bundle import events as bundle_events
from engine.bundle import format as bundle_format
from engine.bundle.events import PAYLOAD_TYPES, _type_problems, check_payload_types
from engine.bundle.format import open_bundle, verify
from engine.bundle.layout import COUNTERFACTUAL_FILE, schedule_digest
from engine.operate.operators import make_operator
from engine.run.counterfactual import generated_schedule_digest, noop_counterfactual
from engine.run.orchestrator import Orchestrator
from engine.run.sealinputs import seal_run
from faults.generator import generate
from faults.schedule import dump_schedule
from scoring.cli import ScoreError, load_score
from scoring.counterfactual import Counterfactual


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An unsealed runbook run of online-boutique short-5 (copy it before sealing)."""
    run_dir = tmp_path_factory.mktemp("rec") / "run"
    Orchestrator(generate("online-boutique", 5, "short-5"), operator=make_operator("runbook"), run_dir=run_dir,
                 hide_truth=False).run()
    return run_dir


@pytest.fixture(scope="module")
def honest(recorded: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run sealed with its own counterfactual; the sealed run directory sits beside it."""
    run_dir = tmp_path_factory.mktemp("honest") / "run"
    shutil.copytree(recorded, run_dir)
    return seal_run(run_dir)


def _sealed_with(recorded: Path, to: Path, counterfactual: dict[str, Any]) -> Path:
    """The run sealed carrying ``counterfactual`` (the seal adds one only when none is there)."""
    shutil.copytree(recorded, to)
    (to / COUNTERFACTUAL_FILE).write_text(json.dumps(counterfactual, sort_keys=True, indent=1) + "\n",
                                          encoding="utf-8")
    return seal_run(to)


def _lenient(cf: dict[str, Any]) -> dict[str, Any]:
    """A forger's counterfactual: in the no-op run every probe fails throughout and every route
    violates its SLO at every sample, so every gate that compares with it passes."""
    out = dict(cf)
    out["probes"] = {k: [[t, False] for t, _ in v] for k, v in cf["probes"].items()}
    times = sorted({t for v in cf["probes"].values() for t, _ in v})
    out["route_violations"] = {k: times for k in cf["route_violations"]} or {"/": times}
    out["violation_s"] = 1e9
    return out


def test_the_stored_counterfactual_is_used_as_it_is_and_never_re_simulated(honest: Path) -> None:
    def never(app: str, seed: int, text: str) -> Counterfactual:
        raise AssertionError("scoring re-simulated a bundle that carries its counterfactual")

    score, _ = load_score(str(honest), noop=never)
    carried = Counterfactual.from_dict(open_bundle(honest).read_json(COUNTERFACTUAL_FILE))
    assert not score.provisional and score.noop_reference == carried.reference
    assert score.noop_violation_s == carried.violation_s


def test_a_counterfactual_moved_from_another_run_is_refused(recorded: Path, honest: Path, tmp_path: Path) -> None:
    """Resealing another schedule's (or another seed's) no-op run into a bundle -- each file's
    digest then verifies -- does not make it this run's: its schedule digest and its reference
    must be the run's."""
    other_text = dump_schedule(generate("online-boutique", 6, "short-5"))
    other = noop_counterfactual("online-boutique", 6, other_text).to_dict()
    moved = _sealed_with(recorded, tmp_path / "moved", other)
    assert verify(moved).ok
    with pytest.raises(ScoreError, match="is not this run's no-op run"):
        load_score(str(moved))

    own = open_bundle(honest).read_json(COUNTERFACTUAL_FILE)
    relabelled = _sealed_with(recorded, tmp_path / "relabelled", {**other, "reference": own["reference"]})
    with pytest.raises(ScoreError, match="is not this run's no-op run"):
        load_score(str(relabelled))
    reseeded = _sealed_with(recorded, tmp_path / "reseeded",
                            {**own, "reference": own["reference"].replace(":seed5:", ":seed6:")})
    with pytest.raises(ScoreError, match="is not this run's no-op run"):
        load_score(str(reseeded))
    renamed = _sealed_with(recorded, tmp_path / "renamed",
                           {**own, "reference": own["reference"].replace("noop:online-boutique:", "noop:shop:")})
    assert not load_score(str(renamed))[0].provisional  # the app is the schedule's: its digest covers it


def test_a_counterfactual_edited_after_the_seal_never_judges_the_run(honest: Path, capsys: pytest.CaptureFixture[str],
                                                                     ) -> None:
    """Edited in the sealed run directory without resealing: refused, and with
    ``--allow-unverified`` the lenient copy is not read -- the no-op run is re-simulated
    through the injected provider, or the repair credit is provisional -- so the forgery
    never raises the score."""
    run_dir = honest.with_suffix("")
    baseline, _ = load_score(str(run_dir))
    forged_doc = _lenient(json.loads((run_dir / COUNTERFACTUAL_FILE).read_text(encoding="utf-8")))
    original = (run_dir / COUNTERFACTUAL_FILE).read_text(encoding="utf-8")
    (run_dir / COUNTERFACTUAL_FILE).write_text(json.dumps(forged_doc, sort_keys=True, indent=1) + "\n",
                                               encoding="utf-8")
    try:
        with pytest.raises(ScoreError, match="does not verify"):
            load_score(str(run_dir))
        calls: list[int] = []

        def noop(app: str, seed: int, text: str) -> Counterfactual:
            calls.append(seed)
            return Counterfactual.from_dict(json.loads(original))

        flagged, _ = load_score(str(run_dir), allow_unverified=True, noop=noop)
        assert calls == [5]
        assert f"its {COUNTERFACTUAL_FILE} does not verify and is not used" in capsys.readouterr().err
        assert flagged.integrity.startswith("UNVERIFIED")
        assert flagged.scores == baseline.scores and flagged.degradation == baseline.degradation
        provisional, _ = load_score(str(run_dir), allow_unverified=True)
        assert provisional.provisional and provisional.degradation is None
        # had the forgery been read, it would have judged the run differently
        judged = Counterfactual.from_dict(forged_doc)
        from scoring.score import score_events

        events = open_bundle(run_dir).events
        assert score_events(events, counterfactual=judged).degradation != baseline.degradation
    finally:
        (run_dir / COUNTERFACTUAL_FILE).write_text(original, encoding="utf-8")


def test_verify_then_open_reads_and_scans_the_events_once(honest: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = open_bundle(honest).events
    scans: list[int] = []
    real = bundle_format._scan_events

    def counted(*args: Any, **kwargs: Any) -> Any:
        scans.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(bundle_format, "_scan_events", counted)
    report = verify(honest, keep=True)
    bundle = open_bundle(honest, report=report)
    assert bundle.events == fresh and len(scans) == 1
    assert open_bundle(honest, report=verify(honest)).events == fresh and len(scans) == 3  # no keep: read again
    damaged = shutil.copytree(honest.with_suffix(""), tmp_path / "damaged")
    (damaged / "run.json").write_text("{}", encoding="utf-8")
    with pytest.raises(bundle_format.BundleError, match="not intact"):
        open_bundle(damaged, check=True, report=verify(damaged, keep=True))


def test_one_json_encoding_per_line_still_finds_non_canonical_lines(honest: Path) -> None:
    data = open_bundle(honest).read_bytes("events.jsonl")
    line = data.split(b"\n")[3]
    ev, reasons, digest = bundle_format._read_line(line)
    assert ev is not None and not reasons and digest == ev.hash == bundle_events.Event.digest(
        ev.prev, ev.seq, ev.t, ev.kind, ev.payload)
    assert ev.to_json().encode() == line
    obj = json.loads(line)
    for changed in (json.dumps(obj).encode(),  # spaces
                    json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
                    if "\\u" in json.dumps(obj) else line.replace(b'"seq":', b'"seq": '),
                    json.dumps({**obj, "t": int(obj["t"])}, sort_keys=True, separators=(",", ":")).encode()):
        assert bundle_format._read_line(changed)[1] == ["not in canonical JSON form"]


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=True, allow_infinity=True),
                     st.text(max_size=3))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(["service", "ready", "desired", "route", "rps", "kind", "ref", "x"]), inner,
                    max_size=4)), max_leaves=12)


def _payloads() -> st.SearchStrategy[tuple[str, Any]]:
    """(kind, payload) pairs: every typed kind, with its fields drawn from anything JSON-like."""
    def fields(kind: str) -> st.SearchStrategy[dict[str, Any]]:
        return st.fixed_dictionaries({}, optional={k: _VALUES for k in PAYLOAD_TYPES[kind]})
    return st.sampled_from(sorted(PAYLOAD_TYPES)).flatmap(lambda k: st.tuples(st.just(k), fields(k)))


@settings(max_examples=300, deadline=None)
@given(_payloads())
def test_the_compiled_type_check_agrees_with_the_message_building_one(case: tuple[str, Any]) -> None:
    kind, payload = case
    slow: list[str] = []
    _type_problems(payload, PAYLOAD_TYPES[kind], "payload", slow)
    assert bundle_events._FAST_CHECKS[kind](payload) == (not slow)
    missing = [f"payload.{k}: missing" for k in bundle_events.EVENT_KINDS.get(kind, ()) if k not in payload]
    assert check_payload_types(kind, payload) == missing + slow


def test_every_event_of_a_real_run_is_well_typed_by_both_checks(honest: Path) -> None:
    for ev in open_bundle(honest).events:
        spec = PAYLOAD_TYPES.get(ev.kind)
        if spec is not None:
            slow: list[str] = []
            _type_problems(ev.payload, spec, "payload", slow)
            assert not slow and bundle_events._FAST_CHECKS[ev.kind](ev.payload)
    bad = {"services": [{"service": "a", "ready": 1.5, "desired": 1}], "routes": []}
    assert check_payload_types("health.sample", bad) == [
        "payload.services[0].ready: expected an integer, got float 1.5"]


def test_the_generated_schedule_digest_is_cached_per_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SRE_MARATHON_CACHE", str(tmp_path))
    want = schedule_digest(dump_schedule(generate("online-boutique", 3, "short-5")))
    assert generated_schedule_digest("online-boutique", 3, "short-5") == want
    import faults.generator

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("generated again although cached")

    monkeypatch.setattr(faults.generator, "generate", refuse)
    assert generated_schedule_digest("online-boutique", 3, "short-5") == want
    (entry,) = (tmp_path / "schedules").iterdir()
    entry.write_text("not a digest\n", encoding="ascii")  # a damaged entry is recomputed
    with pytest.raises(AssertionError, match="generated again"):
        generated_schedule_digest("online-boutique", 3, "short-5")


def test_the_injected_schedule_digest_decides_seeded_or_custom(honest: Path) -> None:
    from scoring.cli import _generated_schedule

    meta = open_bundle(honest).meta
    seen: list[tuple[str, int, str]] = []

    def generated(app: str, seed: int, regime: str) -> str:
        seen.append((app, seed, regime))
        return str(meta["schedule_sha256"])

    assert _generated_schedule(meta, generated=generated)
    assert seen == [("online-boutique", 5, "short-5")]
    assert not _generated_schedule(meta, generated=lambda a, s, r: "0" * 64)
    score, _ = load_score(str(honest), generated=generated)
    assert not score.custom_schedule and len(seen) == 2
