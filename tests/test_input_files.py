"""Every input file fails cleanly (issue 12 part 5): named cases, the CLI, and rule files
against ``promtool check rules`` 2.42.

The promtool test mutates the shipped packs and kube-prometheus rules (as plain rule files:
promtool does not know the ``PrometheusRule`` wrapper, which the loader accepts on purpose)
and requires the loader to reject every file promtool rejects. Without promtool it skips,
except in CI (``CI`` set), where it fails.
"""

from __future__ import annotations

import copy
import json
import random
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from alerts.rules import PACK_DIR, RuleFileError, load_rule_file, load_rule_text
from engine.apps.model import AppModelError, builtin_app_path, load_app_file
from engine.bundle.events import check_payload_types
from engine.bundle.format import BundleError, open_bundle
from engine.cli import main
from engine.operate.llm.config import LLMConfigError, load_llm_config
from engine.run.sealinputs import seal_run
from faults.generator import generate
from faults.schedule import ScheduleError, dump_schedule, load_schedule
from faults.spec import CatalogError, catalog_path, load_catalog
from tests.conftest import SHARED_DATA
from tests.conftest import need_promtool as _need_promtool
from tests.input_fuzz import BOMB, make_run_dir, small_run_events, write_events
from tui.keymap import KeymapError, load_keymap

KUBE_RULES = SHARED_DATA / "prometheus-rules"


@pytest.fixture(scope="module")
def schedule_text() -> str:
    return dump_schedule(generate("online-boutique", 1, "short-5"))


def _write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return p


# ----------------------------------------------------------------------------- schedules


def test_absurd_schedule_duration_is_refused(tmp_path: Path, schedule_text: str) -> None:
    data = yaml.safe_load(schedule_text)
    data["duration_s"] = 10**9
    path = _write(tmp_path, "long.yaml", yaml.safe_dump(data))
    with pytest.raises(ScheduleError) as info:
        load_schedule(path)
    assert str(path) in str(info.value) and "duration_s" in str(info.value)


def test_schedule_problems_are_all_listed_one_per_line(tmp_path: Path, schedule_text: str) -> None:
    data = yaml.safe_load(schedule_text)
    data["faults"][0]["at"] = "3"
    data["faults"][1]["lifetime"] = -5
    data["bursts"] = [{"at": 10, "duration": float("nan"), "factor": 1.5}]
    path = _write(tmp_path, "bad.yaml", yaml.safe_dump(data))
    with pytest.raises(ScheduleError) as info:
        load_schedule(path)
    lines = str(info.value).splitlines()[1:]
    assert len(lines) == 3 and all(str(path) in line for line in lines)
    assert {"faults[0].at", "faults[1].lifetime", "bursts[0].duration"} == {p[0] for p in info.value.problems}


def test_a_fault_scheduled_twice_is_refused(tmp_path: Path, schedule_text: str) -> None:
    data = yaml.safe_load(schedule_text)
    again = dict(data["faults"][0])
    again["at"] = data["duration_s"] - again["lifetime"] - 1
    data["faults"].append(again)
    path = _write(tmp_path, "twice.yaml", yaml.safe_dump(data))
    with pytest.raises(ScheduleError, match=r"already scheduled"):
        load_schedule(path)


@pytest.mark.parametrize("text", [b"\xff\xfeapp: x\n", BOMB.encode(), b"- a\n- b\n", b"app: [\n", b"a: 1\na: 2\n",
                                  b"x: " + b"9" * 5000 + b"\n"])
def test_unreadable_schedules_name_the_file(tmp_path: Path, text: bytes) -> None:
    path = _write(tmp_path, "odd.yaml", text)
    with pytest.raises(ScheduleError) as info:
        load_schedule(path)
    assert str(path) in str(info.value)


# ----------------------------------------------------------------------------- catalogs and apps


def test_duplicate_fault_id_in_a_catalog_is_refused(tmp_path: Path) -> None:
    data = yaml.safe_load(catalog_path("online-boutique").read_text())
    data["faults"].append(copy.deepcopy(data["faults"][0]))
    path = _write(tmp_path, "dup.yaml", yaml.safe_dump(data))
    with pytest.raises(CatalogError, match=r"faults\[\d+\]\.id: duplicate id") as info:
        load_catalog(path)
    assert str(path) in str(info.value)


def test_catalog_and_app_are_strictly_typed(tmp_path: Path) -> None:
    data = yaml.safe_load(catalog_path("online-boutique").read_text())
    data["faults"][0]["intermittent"] = "false"
    path = _write(tmp_path, "cat.yaml", yaml.safe_dump(data))
    with pytest.raises(CatalogError, match="intermittent: Input should be a valid boolean"):
        load_catalog(path)
    app = yaml.safe_load(builtin_app_path("online-boutique").read_text())
    app["services"][1]["replicas"] = "3"
    app["load"]["base_rps"] = float("inf")
    app["routes"].append(copy.deepcopy(app["routes"][0]))
    path = _write(tmp_path, "app.yaml", yaml.safe_dump(app))
    with pytest.raises(AppModelError) as info:
        load_app_file(path)
    msg = str(info.value)
    assert "services[1].replicas: Input should be a valid integer" in msg and "load.base_rps" in msg
    app["services"][1]["replicas"] = 1
    app["load"]["base_rps"] = 10.0
    path = _write(tmp_path, "app2.yaml", yaml.safe_dump(app))
    with pytest.raises(AppModelError, match="duplicate route"):
        load_app_file(path)


# ----------------------------------------------------------------------------- keymap and LLM configuration


def test_keymap_and_llm_config_name_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "keys.toml", b"[keymap]\npause = \xff\n")
    with pytest.raises(KeymapError, match="not UTF-8") as info:
        load_keymap(path)
    assert str(path) in str(info.value)
    path = _write(tmp_path, "llm.yaml", "model: m\nmax_retries: '3'\ntimeout_s: .nan\n")
    with pytest.raises(LLMConfigError) as err:
        load_llm_config(path, env={})
    assert str(path) in str(err.value) and "max_retries" in str(err.value) and "timeout_s" in str(err.value)
    path = _write(tmp_path, "bomb.yaml", BOMB)
    with pytest.raises(LLMConfigError, match="alias"):
        load_llm_config(path, env={})


@pytest.mark.parametrize("text", ["a: &a [*a]\n", "a: &a {b: *a}\n", "app: &x\n  - [*x]\n"])
def test_an_alias_inside_itself_is_refused_not_expanded(tmp_path: Path, text: str) -> None:
    """A self-referencing alias would expand without end (found by a review: 2 GB, then killed)."""
    from faults.schedule import ScheduleError, load_schedule

    path = _write(tmp_path, "selfref.yaml", text)
    started = time.process_time()
    with pytest.raises(ScheduleError, match="alias") as info:
        load_schedule(path)
    assert str(path) in str(info.value) and time.process_time() - started < 2.0


# ----------------------------------------------------------------------------- bundles


def _run_with(tmp_path: Path, kind: str, key: str, value: Any) -> Path:
    run_dir = make_run_dir(tmp_path)
    items = small_run_events()
    for item in items:
        if item["kind"] == kind:
            item["payload"][key] = value
    write_events(run_dir, items)
    return run_dir


def test_a_probe_result_whose_ok_is_a_string_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = _run_with(tmp_path, "probe.result", "ok", "false")
    with pytest.raises(BundleError, match=r"line 6 \(seq 5, probe.result\): payload.ok: expected a boolean") as info:
        _ = open_bundle(run_dir).events
    assert str(run_dir) in str(info.value)
    bundle = seal_run(run_dir)  # sealed: the chain and the manifest hold, the content is still wrong
    assert main(["score", str(bundle), "--no-degradation"]) == 2
    err = capsys.readouterr().err
    assert "payload.ok: expected a boolean" in err and "Traceback" not in err
    good = seal_run(make_run_dir(tmp_path / "good"))
    assert main(["score", str(good), "--no-degradation"]) == 0, capsys.readouterr().err


def test_payload_types(tmp_path: Path) -> None:
    assert check_payload_types("probe.result", {"fault": "f", "ok": True, "success": 1.0, "p95_ms": None,
                                                "detail": ""}) == []
    assert check_payload_types("probe.result", {"fault": 3, "ok": 1, "success": 1e400, "p95_ms": None,
                                                "detail": ""}) == [
        "payload.fault: expected a string, got int 3", "payload.ok: expected a boolean (true/false), got int 1",
        "payload.success: expected a finite number or null, got float Infinity"]
    bad = check_payload_types("health.sample", {"services": [{"service": "a", "ready": "1", "desired": 1}],
                                                "routes": {}})
    assert bad == ['payload.services[0].ready: expected an integer, got str "1"',
                   "payload.routes: expected a list of an object, got dict"]
    assert check_payload_types("no.such.kind", {"x": 1}) == []
    for item in small_run_events():
        assert check_payload_types(item["kind"], item["payload"]) == [], item["kind"]


# ----------------------------------------------------------------------------- the command line


def test_cli_refuses_bad_files_with_exit_code_2(tmp_path: Path, schedule_text: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    bad_sched = _write(tmp_path, "s.yaml", schedule_text.replace("duration_s: ", "duration_s: 1") + "\xff")
    bad_app = _write(tmp_path, "a.yaml", "name: x\nname: y\n")
    bad_rules = _write(tmp_path, "r.yaml", "groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up(\n")
    good_sched = _write(tmp_path, "good.yaml", schedule_text)
    for argv, path in ((["run", "--schedule", str(bad_sched), "--no-record"], bad_sched),
                       (["app", "show", str(bad_app)], bad_app),
                       (["run", "--schedule", str(good_sched), "--no-record", "--rules", str(bad_rules)], bad_rules)):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert str(path) in err and "Traceback" not in err


# ----------------------------------------------------------------------------- rule files


def test_every_problem_of_a_rule_file_is_reported() -> None:
    text = ("groups:\n- name: g\n  interval: 1 minute\n  rules:\n  - alert: A\n    expr: up(\n"
            "  - record: 'bad name'\n    expr: up\n    annotations: {a: b}\n  - alert: B\n    expr: up\n"
            "    labels: {__x: y}\n    colour: red\n- name: g\n")
    with pytest.raises(RuleFileError) as info:
        load_rule_text(text, "many.yaml")
    msgs = [p.message for p in info.value.problems]
    assert len(msgs) == 7, msgs  # B's bad label name too, though B also has an unknown key
    assert "invalid label name: '__x'" in msgs
    assert str(info.value).startswith("7 problems:") and all(
        line.strip().startswith("many.yaml:") for line in str(info.value).splitlines()[1:])


def _plain_rule_files() -> list[tuple[str, dict[str, Any]]]:
    """Rule files promtool can check: the packs, and kube-prometheus rules without their wrapper."""
    out = [(p.name, yaml.safe_load(p.read_text())) for p in sorted(PACK_DIR.glob("*.yaml"))]
    for p in sorted(KUBE_RULES.glob("*.yaml")):
        data = yaml.safe_load(p.read_text())
        groups = data["spec"]["groups"]
        if "ControlPlane" in p.name:  # the groups the embedded evaluator loads
            groups = [g for g in groups if g["name"] == "kubernetes-apps"]
        out.append((p.name, {"groups": groups}))
    return out


_BREAK_EXPR = ["sum(rate(x[5m])", "rate(x[5m]) +", "nosuchfn(up)", "up{job=}", "up[5x]", "", "up offset",
               "sum by (a b) (up)", "1 +* 2", "up{a=~\"(\"}"]
_BREAK_TEMPLATE = ["{{ $foo }}", "{{ .Labels.x", "{{ nosuch .Value }}", "{{ end }}", "{{ if }}", "{{ }}",
                   "{{ $labels.job | nofunc }}", "{{ printf \"%s\" }"]


def _mutations(rng: random.Random, data: dict[str, Any]) -> dict[str, Any]:
    d = copy.deepcopy(data)
    g = rng.choice(d["groups"])
    r = rng.choice(g["rules"])
    op = rng.choice(["expr", "template", "delete", "for", "interval", "unknown-key", "record-annotations",
                     "record-name", "label-name", "dup-group", "both", "group-name", "keep-firing", "limit",
                     "annotation-name", "expr-type"])
    if op == "expr":
        r["expr"] = rng.choice(_BREAK_EXPR)
    elif op == "template":
        target = r.setdefault("annotations" if "alert" in r else "labels", {})
        target[rng.choice(["summary", "severity", "x"])] = rng.choice(_BREAK_TEMPLATE)
    elif op == "delete":
        r.pop(rng.choice(["expr", "alert" if "alert" in r else "record"]), None)
    elif op == "for":
        r["for"] = rng.choice(["5 minutes", "5", "-5m", "1.5m", "", "999999999999y", "5M"])
    elif op == "interval":
        g["interval"] = rng.choice(["1 minute", "-1m", "1.5s", "x", "99999999999y"])
    elif op == "unknown-key":
        (r if rng.random() < 0.5 else g)[rng.choice(["colour", "severity", "expression"])] = "x"
    elif op == "record-annotations":
        r.pop("alert", None)
        r["record"] = "job:up:sum"
        r["annotations"] = {"summary": "x"}
    elif op == "record-name":
        r.pop("alert", None)
        r["record"] = rng.choice(["bad name", "1abc", "a-b", "job:up{x}"])
    elif op == "label-name":
        r.setdefault("labels", {})[rng.choice(["bad-name", "1x", "__name__", "a.b", "é"])] = "v"
    elif op == "dup-group":
        d["groups"].append(copy.deepcopy(g))
    elif op == "both":
        r["alert"], r["record"] = "A", "job:up:sum"
    elif op == "group-name":
        g["name"] = ""
    elif op == "keep-firing":
        r["keep_firing_for"] = rng.choice(["5 minutes", "x", "1.5m"])
    elif op == "limit":
        g["limit"] = rng.choice(["3", "x", 1.5])
    elif op == "annotation-name":
        if "alert" in r:
            r.setdefault("annotations", {})[rng.choice(["bad-name", "1x", "a b"])] = "v"
    else:
        r["expr"] = rng.choice([["up"], {"a": 1}, None])
    return d


def _promtool_rejects(exe: str, paths: list[Path]) -> dict[Path, bool]:
    out: dict[Path, bool] = {}
    for p in paths:
        proc = subprocess.run([exe, "check", "rules", str(p)], capture_output=True, text=True, timeout=60)
        out[p] = proc.returncode != 0
    return out


def test_rule_files_promtool_rejects_are_rejected(tmp_path: Path) -> None:
    exe = _need_promtool()
    rng = random.Random(12)
    seeds = _plain_rule_files()
    paths: list[Path] = []
    for name, data in seeds:  # the unmutated files: both accept them
        p = tmp_path / f"seed-{name}"
        p.write_text(yaml.safe_dump(data, sort_keys=False))
        paths.append(p)
    for i in range(90):
        name, data = seeds[i % len(seeds)]
        p = tmp_path / f"m{i:03d}-{name}"
        p.write_text(yaml.safe_dump(_mutations(rng, data), sort_keys=False, allow_unicode=True))
        paths.append(p)
    for i, text in enumerate(["groups:\n- name: a\n  name: b\n", "groups: {a: 1}\n", "hello\n",
                              "groups:\n- name: a\n  rules:\n  - alert: A\n    expr: up\n    labels:\n      x: [1]\n"]):
        p = tmp_path / f"raw{i}.yaml"
        p.write_text(text)
        paths.append(p)
    rejected = _promtool_rejects(exe, paths)
    ours: dict[Path, bool] = {}
    for p in paths:
        try:
            load_rule_file(p)
            ours[p] = False
        except RuleFileError as exc:
            assert str(p) in str(exc)
            ours[p] = True
    missed = [p.name for p in paths if rejected[p] and not ours[p]]
    print(f"rule files: {len(paths)}; promtool rejects {sum(rejected.values())}, the loader rejects "
          f"{sum(ours.values())}; rejected by promtool but loaded: {len(missed)}; stricter than promtool: "
          f"{sum(1 for p in paths if ours[p] and not rejected[p])}")
    assert not any(rejected[p] for p in paths if p.name.startswith("seed-")), "promtool rejects a seed file"
    assert not any(ours[p] for p in paths if p.name.startswith("seed-")), "the loader rejects a seed file"
    assert sum(rejected.values()) >= 60, "the mutations are too mild to test anything"
    assert not missed, missed


def test_bundle_seed_loads(tmp_path: Path) -> None:
    run_dir = make_run_dir(tmp_path)
    assert len(open_bundle(run_dir).events) == len(small_run_events())
    assert json.loads((run_dir / "run.json").read_text()) == {}
