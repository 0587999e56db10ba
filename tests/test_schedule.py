"""Schedules: seeded, exact round trip, exclusive targets, and clear errors for bad files."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.cli import main
from faults.generator import generate
from faults.schedule import ScheduleError, dump_schedule, load_schedule, parse_schedule
from faults.spec import CatalogError, load_catalog, parse_catalog

APPS = ["online-boutique", "astronomy-shop", "train-ticket"]
REGIMES = ["short-5", "short-10", "marathon"]


@pytest.mark.parametrize("app", APPS)
@pytest.mark.parametrize("regime", REGIMES)
def test_same_seed_same_bytes_and_round_trip(app: str, regime: str, tmp_path: Path) -> None:
    a = dump_schedule(generate(app, 42, regime))
    b = dump_schedule(generate(app, 42, regime))
    assert a == b
    path = tmp_path / "s.yaml"
    path.write_text(a)
    assert dump_schedule(load_schedule(path)) == a
    assert dump_schedule(generate(app, 43, regime)) != a


@pytest.mark.parametrize("app", APPS)
def test_a_marathon_has_dozens_of_overlapping_faults(app: str) -> None:
    sched = generate(app, 7, "marathon")
    assert 40 <= len(sched.faults) <= 70
    peak = max(sum(1 for g in sched.faults if g.at <= f.at < g.end) for f in sched.faults)
    assert peak >= 3, "faults overlap"
    # arrivals keep to the regime's 90 minutes; the run lasts until the last revert, plus a minute
    assert max(f.at for f in sched.faults) <= 5400
    assert sched.duration_s == max(5400, max(f.end for f in sched.faults) + 60)


@pytest.mark.parametrize("app", APPS)
@pytest.mark.parametrize("regime", REGIMES)
def test_every_fault_lives_long_enough_to_be_worked_on(app: str, regime: str) -> None:
    """Issue 11: a perfect operator can earn every stage of every fault before its revert."""
    from engine.apps.model import load_app
    from faults.generator import LIFE_MARGIN_S, ZONE_OUTAGE_MAX_LIFE_S
    from faults.timing import work_seconds

    model = load_app(app)
    catalog = {f.id: f for f in load_catalog(app).faults}
    for f in generate(app, 5, regime).faults:
        spec = catalog[f.fault]
        if spec.mechanism in ("zone-outage", "kubelet-stop"):
            assert f.lifetime <= ZONE_OUTAGE_MAX_LIFE_S  # Kubernetes recovers from it by itself after that
        else:
            assert f.lifetime >= work_seconds(model, spec) + LIFE_MARGIN_S, f


@pytest.mark.parametrize("app", APPS)
def test_benign_changes_and_zone_outages_never_undo_or_hide_a_fault(app: str) -> None:
    from engine.apps.model import load_app
    from faults.generator import PROCESS_MECHANISMS
    from faults.timing import onset_seconds

    model = load_app(app)
    catalog = {f.id: f for f in load_catalog(app).faults}
    for seed in (1, 2, 3):
        sched = generate(app, seed, "marathon")
        exclusive = ("zone-outage", "kubelet-stop", "node-network")
        outages = [f for f in sched.faults if catalog[f.fault].mechanism in exclusive]
        for z in outages:
            others = [f for f in sched.faults if f is not z and f.at < z.end and z.at < f.end]
            assert not others, f"zone outage {z.fault} shares its window with {others}"
        for c in sched.changes:
            for f in sched.faults:
                if c.service != f.target:
                    continue
                spec = catalog[f.fault]
                assert not (f.at <= c.at < f.at + onset_seconds(model, spec)), (c, f, "while it bites")
                assert not (spec.mechanism in PROCESS_MECHANISMS and f.at <= c.at < f.end), (c, f, "a rollout")
                assert not (spec.mechanism == "image" and c.kind == "code" and f.at <= c.at < f.end), (c, f)


@pytest.mark.parametrize("app", APPS)
@pytest.mark.parametrize("regime", REGIMES)
def test_targets_never_overlap_and_faults_end_in_time(app: str, regime: str) -> None:
    sched = generate(app, 5, regime)
    for i, a in enumerate(sched.faults):
        assert a.end <= sched.duration_s
        for b in sched.faults[i + 1:]:
            if a.target == b.target:
                assert b.at >= a.end or a.at >= b.end, (a, b)
    catalog = {f.id: f for f in load_catalog(app).faults}
    change_driven = sum(1 for f in sched.faults if catalog[f.fault].category in ("code-bug", "configuration"))
    if regime == "marathon":
        assert change_driven / len(sched.faults) > 0.5, "most faults are changes shipped through the pipeline"


def _valid() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(dump_schedule(generate("online-boutique", 1, "short-5")))
    return data


def _problems(data: Any) -> list[tuple[str, str]]:
    with pytest.raises(ScheduleError) as info:
        parse_schedule(data, "bad-schedule.yaml")
    assert "bad-schedule.yaml" in str(info.value)
    return info.value.problems


def test_missing_field_names_the_entry_and_field() -> None:
    data = _valid()
    del data["faults"][1]["lifetime"]
    assert ("faults[1].lifetime", "Field required") in _problems(data)


def test_unknown_fault_and_bad_times() -> None:
    data = _valid()
    data["faults"][0]["fault"] = "ob-no-such-fault"
    data["faults"][2]["at"] = -5
    where = [w for w, _ in _problems(data)]
    assert "faults[2].at" in where
    data = _valid()
    data["faults"][0]["fault"] = "ob-no-such-fault"
    assert any(w == "faults[0].fault" and "unknown fault" in m for w, m in _problems(data))
    data = _valid()
    data["faults"][0]["lifetime"] = 10_000
    assert any(w == "faults[0].lifetime" and "after the run" in m for w, m in _problems(data))


def test_overlap_on_one_target_is_rejected() -> None:
    data = _valid()
    twin = copy.deepcopy(data["faults"][0])
    other = next(f for f in load_catalog("online-boutique").faults if f.target != twin["target"])
    data["faults"].append({**twin, "fault": other.id, "target": twin["target"]})
    assert any("targets" in m or "overlaps" in m for _, m in _problems(data))


def test_malformed_yaml_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("faults: [\n")
    with pytest.raises(ScheduleError, match=r"broken\.yaml"):
        load_schedule(path)


_SCALARS = st.one_of(st.none(), st.integers(-10_000, 10_000), st.floats(allow_nan=False, width=32),
                     st.text(max_size=8), st.booleans())


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.data())
def test_mutated_schedules_fail_only_with_schedule_error(data: st.DataObject) -> None:
    doc = _valid()
    section = data.draw(st.sampled_from(["faults", "changes", "bursts", "top"]))
    if section == "top" or not doc.get(section):
        key = data.draw(st.sampled_from(["app", "seed", "regime", "duration_s", "generator", "faults", "extra"]))
        doc[key] = data.draw(_SCALARS)
    else:
        entry = data.draw(st.sampled_from(doc[section]))
        key = data.draw(st.sampled_from([*sorted(entry), "unexpected"]))
        if data.draw(st.booleans()):
            entry[key] = data.draw(_SCALARS)
        else:
            entry.pop(key, None)
    try:
        parse_schedule(doc, "fuzzed.yaml")
    except ScheduleError as exc:
        assert "fuzzed.yaml" in str(exc)


def test_malformed_catalog_names_file_fault_and_field(tmp_path: Path) -> None:
    data = yaml.safe_load(Path("faults/catalog/online-boutique.yaml").read_text())
    data["faults"][0]["probe"] = {"route": "no-such-route"}
    data["faults"][1]["target"] = "no-such-service"
    data["faults"][2].pop("remedy")
    with pytest.raises(CatalogError) as info:
        parse_catalog(data, "my-catalog.yaml")
    text = str(info.value)
    first, second, third = (f["id"] for f in data["faults"][:3])
    assert f"my-catalog.yaml: fault {third!r}: remedy" in text
    data["faults"][2]["remedy"] = {"action": "rollback"}
    with pytest.raises(CatalogError) as info:
        parse_catalog(data, "my-catalog.yaml")
    text = str(info.value)
    assert f"fault {first!r}: probe.route" in text and "no-such-route" in text
    assert f"fault {second!r}: target" in text


def test_a_change_that_no_longer_applies_is_caught() -> None:
    data = yaml.safe_load(Path("faults/catalog/online-boutique.yaml").read_text())
    code = next(f for f in data["faults"] if f["mechanism"] == "code-change")
    code["change"]["find"] = "this text is not in the file"
    with pytest.raises(CatalogError, match=r"occurs 0 times"):
        parse_catalog(data, "x.yaml")


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.data())
def test_mutated_catalogs_fail_only_with_catalog_error(data: st.DataObject) -> None:
    doc = yaml.safe_load(Path("faults/catalog/online-boutique.yaml").read_text())
    entry = data.draw(st.sampled_from(doc["faults"]))
    key = data.draw(st.sampled_from([*sorted(entry), "unexpected"]))
    if data.draw(st.booleans()):
        entry[key] = data.draw(_SCALARS)
    else:
        entry.pop(key, None)
    try:
        parse_catalog(doc, "fuzzed.yaml")
    except CatalogError as exc:
        assert "fuzzed.yaml" in str(exc)


def test_cli_schedule_prints_and_writes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schedule", "--app", "train-ticket", "--seed", "9", "--regime", "short-10"]) == 0
    table = capsys.readouterr().out
    assert "train-ticket" in table and "MECHANISM" in table
    out = tmp_path / "s.yaml"
    assert main(["schedule", "--app", "train-ticket", "--seed", "9", "--regime", "short-10", "-o", str(out)]) == 0
    assert out.read_text() == dump_schedule(generate("train-ticket", 9, "short-10"))
    with pytest.raises(SystemExit):
        main(["schedule", "--regime", "weekly"])  # argparse rejects an unknown regime
