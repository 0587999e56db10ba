"""The tool layer never raises and records replayably (issue 12, parts 4 and 6).

Thousands of malformed calls -- every tool x every argument x hostile values (NaN, Inf,
huge integers, lone surrogates, control characters, 10 MB strings, deep nesting, wrong
types, unknown keys, JSON text, non-objects, markers) and hypothesis-generated values --
go to a real :class:`~engine.operate.tools.ToolBox` on a short run. None may raise; each returns an
error or a result and is recorded; the run still emits and seals. Recorded arguments are
bounded, and every recorded call, issued again on an identical run, records the same
``tool.call`` payload (the replay contract ``verify --replay`` relies on).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.bundle.events import canonical
from engine.operate.toolargs import MARKER_KEY, MAX_ARGS_BYTES, bound_arguments, is_marker, marker
from engine.operate.tools import TOOLS, ToolBox
from engine.run.orchestrator import Orchestrator
from faults.generator import generate

SCHEDULE = ("online-boutique", 3, "short-5")
T0 = 420.0
MB10 = "x" * (10 * 1024 * 1024)


def _run(run_dir: Path | None = None) -> Orchestrator:
    r = Orchestrator(generate(*SCHEDULE), run_dir=run_dir)
    r.start()
    r.advance_to(T0)
    return r


def _cycle() -> list[Any]:
    loop: list[Any] = [1]
    loop.append(loop)
    return loop


def _deep(n: int) -> Any:
    v: Any = "leaf"
    for i in range(n):
        v = [v] if i % 2 else {"k": v}
    return v


GOOD_MARKER = marker("\ud800", "lone surrogate U+D800 at character 0")
HOSTILE: list[Any] = [
    math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324, 10**30, -(2**64), 10**5000, 2**63 - 1,
    "\ud800", "a\udfffb", "\x00", "x\x1by", "\u0085", "tab\there", "line\nbreak", "", " ", "A-1", "INC-0001",
    "a" * 70_000, "é" * 40_000, "{not json", '{"kind": "pods"}', "[1, NaN]",
    [], [1, 2], ["A-1", math.nan], [None] * 600, _deep(3), _deep(40), _cycle(),
    {}, {"a": {"b": {"c": 1}}}, {str(i): i for i in range(100)}, {1: "a"}, {(1, 2): "x"}, {"k\ud800": 1},
    {"k" * 300: 1}, {"ctrl\x01key": 1},
    b"bytes", {1, 2}, object(), True, False, None, 3.5, -1, 0, 7,
    GOOD_MARKER, {MARKER_KEY: {"sha256": "zz", "bytes": 1, "preview": "", "problem": "x"}},
    {MARKER_KEY: "not a marker"}, {"$arguments": 5}, {"$arguments": "{oops"},
]
WHOLE: list[Any] = [
    None, "", "   ", "{not json", "[1, 2]", "5", "null", '{"a": NaN}', '{"kind": "pods"}', "9" * 5000,
    "[" * 100_000, "\ud800", '{"x": "\\ud800"}', ["a", "list"], 5, 3.5, math.nan, True, b"{}", (1, 2),
    {1: 2}, GOOD_MARKER, {"$arguments": [1]}, {"$arguments": "{bad"}, {"$arguments": {"a": 1}},
    {f"k{i}": i for i in range(70)}, _deep(60), _cycle(),
]
BASE: dict[str, dict[str, Any]] = {
    "get_alerts": {"state": "firing"}, "get_topology": {}, "kubectl_get": {"kind": "pods"},
    "kubectl_describe": {"kind": "pods", "name": "x"}, "query_logs": {"deployment": "frontend", "grep": "error"},
    "query_metrics": {"query": "sum by (service) (rate(http_requests_total[5m]))", "start": 0},
    "code_search": {"service": "frontend", "pattern": "http", "regex": True},
    "get_deploy_history": {}, "get_time": {},
    "report_incident": {"alerts": ["A-1"], "title": "fuzz incident"},
    "report_rca": {"incident": "INC-9999", "service": "frontend", "category": "runtime", "artifact": "x",
                   "summary": "fuzzed"},
    "resolve_incident": {"incident": "INC-9999"},
    "restart_pod": {"pod": "x", "incident": "INC-9999"},
    "scale_deployment": {"deployment": "adservice", "replicas": 2, "incident": "INC-9999"},
    "rollback": {"deployment": "frontend", "incident": "INC-9999"},
    "deploy_patch": {"service": "frontend", "diff": "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", "summary": "fix",
                     "incident": "INC-9999"},
    "set_config": {"service": "frontend", "key": "LOG_LEVEL", "value": "debug", "incident": "INC-9999"},
    "patch_service": {"service": "frontend", "selector": {"app": "frontend"}, "target_port": 8080,
                      "incident": "INC-9999"},
    "set_image": {"deployment": "frontend", "image": "registry.example/frontend:v1", "incident": "INC-9999"},
    "rollout_restart": {"deployment": "frontend", "incident": "INC-9999"},
    "set_resources": {"deployment": "frontend", "resources": {"limits": {"memory": "128Mi"}}, "incident": "INC-9999"},
    "set_probe": {"deployment": "frontend", "probe": "readiness", "spec": {"type": "tcp", "port": 8080},
                  "incident": "INC-9999"},
    "workspace_list": {}, "workspace_read": {"path": "notes.md"},
    "workspace_write": {"path": "fuzz.md", "text": "hello\n", "append": True},
}


def systematic_calls() -> list[tuple[Any, Any, Any]]:
    """Every tool x every argument (and an unknown one) x every hostile value, whole-argument
    garbage, odd tool names and odd token counts."""
    assert set(BASE) == set(TOOLS)
    calls: list[tuple[Any, Any, Any]] = []
    for tool, spec in TOOLS.items():
        for fld in [*spec.args.model_fields, "bogus"]:
            for value in HOSTILE:
                calls.append((tool, {**BASE[tool], fld: value}, 0))
        for whole in WHOLE:
            calls.append((tool, whole, 0))
    for name in ("no_such_tool", "", "\ud800", "x" * 1000, 5, None, b"get_alerts", "GET_ALERTS", "get_alerts\x00"):
        calls.append((name, {}, 0))
    for tokens in (math.nan, math.inf, -5, 10**40, "lots", 2.5, 3.0, True, None, [1]):
        calls.append(("get_alerts", {}, tokens))
    return calls


def ten_mb_calls() -> list[tuple[str, Any, int]]:
    return [
        ("set_config", {**BASE["set_config"], "value": MB10}, 0),
        ("deploy_patch", {**BASE["deploy_patch"], "diff": MB10}, 0),
        ("workspace_write", {**BASE["workspace_write"], "text": MB10}, 0),
        ("code_search", {**BASE["code_search"], "pattern": MB10}, 0),
        ("query_logs", {**BASE["query_logs"], "grep": MB10}, 0),
        ("report_rca", {**BASE["report_rca"], "summary": MB10}, 0),
        ("get_alerts", '{"alertname": "' + MB10 + '"}', 0),
        ("kubectl_get", {"kind": "pods", MB10: 1}, 0),
    ]


def _issue(box: ToolBox, calls: list[tuple[Any, Any, Any]]) -> tuple[int, int]:
    raised = answered = 0
    for name, args, tokens in calls:
        try:
            res = box.call(name, args, tokens=tokens)
        except Exception:
            raised += 1
            continue
        if res.ok or res.error:
            answered += 1
    return raised, answered


def _tool_payloads(run: Orchestrator, since: int = 0) -> list[dict[str, Any]]:
    return [e.payload for e in run.stream.events[since:] if e.kind == "tool.call"]


def test_thousands_of_malformed_calls_never_raise_and_the_run_still_seals(tmp_path: Path) -> None:
    from engine.bundle.format import verify
    from engine.run.sealinputs import seal_run

    run = _run(tmp_path / "fuzz")
    run.tools.spend_time = False
    calls = systematic_calls() + ten_mb_calls()
    assert len(calls) >= 2000
    before = len(run.stream.events)
    t0 = time.monotonic()
    raised, answered = _issue(run.tools, calls)
    elapsed = time.monotonic() - t0
    print(f"\n{len(calls)} malformed tool calls: {raised} raised, {answered} answered, {elapsed:.1f} s")
    assert raised == 0
    assert answered == len(calls)
    recorded = _tool_payloads(run, before)
    assert len(recorded) == len(calls), "every call is recorded"
    for p in recorded:
        assert isinstance(p["args"], dict) and isinstance(p["tokens"], int)
        assert len(canonical(p).encode()) <= MAX_ARGS_BYTES + 4096
    big = recorded[-len(ten_mb_calls()):]
    assert all(not p["ok"] and len(canonical(p)) < 4096 for p in big), "10 MB arguments are recorded as markers"
    assert "value: 10485760 bytes is over the 65536-byte cap" in big[0]["result"]
    run.tools.spend_time = True
    assert run.tools.call("get_time").ok
    run.advance_to(run.end_t)
    assert run.finished
    run.close()
    bundle = seal_run(tmp_path / "fuzz")
    report = verify(str(bundle))
    assert report.ok and report.sealed


def test_ten_mb_calls_keep_the_bundle_honest_sized(tmp_path: Path) -> None:
    from engine.run.sealinputs import seal_run

    sizes = {}
    for label, hostile in (("honest", False), ("hostile", True)):
        run = _run(tmp_path / label)
        for _ in range(8):
            run.tools.call("get_alerts", {"state": "firing"})
        if hostile:
            for name, args, tokens in ten_mb_calls():
                run.tools.call(name, args, tokens=tokens)
        run.advance_to(run.end_t)
        run.close()
        sizes[label] = seal_run(tmp_path / label).stat().st_size
    assert sizes["hostile"] < 1.2 * sizes["honest"], sizes


@pytest.mark.parametrize("args, error", [
    ({"service": "frontend", "key": "K", "value": "ab\ud800", "incident": "INC-1"},
     "invalid arguments for set_config: value: lone surrogate U+D800 at character 2"),
    ({"service": "frontend", "key": "K\x00", "value": "v", "incident": "INC-1"},
     "invalid arguments for set_config: key: control character U+0000 at character 1 (not allowed here)"),
    ({"service": "frontend", "key": "K", "value": math.nan, "incident": "INC-1"},
     "invalid arguments for set_config: value: non-finite number nan"),
    ({"service": "frontend", "key": "K", "value": "x" * 70_000, "incident": "INC-1"},
     "invalid arguments for set_config: value: 70000 bytes is over the 65536-byte cap"),
    ({1: "a"}, "invalid arguments for set_config: arguments: object key 1 is not a string (int)"),
    ("{oops", "invalid arguments for set_config: arguments: not valid JSON: Expecting property name enclosed in "
              "double quotes: line 1 column 2 (char 1)"),
    ([1], "invalid arguments for set_config: arguments: must be a JSON object, got array"),
])
def test_errors_name_the_argument(args: Any, error: str) -> None:
    run = _run()
    before = {c.id for c in run.sim.deploy_history()}
    res = run.tools.call("set_config", args)
    assert not res.ok and res.error == error
    # nothing was deployed for the call (the schedule's own benign changes may land meanwhile)
    assert not any(e.kind == "action.executed" for e in run.stream.events)
    assert all(c.author != run.tools.operator for c in run.sim.deploy_history() if c.id not in before)


def test_free_text_keeps_newlines_and_tabs() -> None:
    run = _run()
    res = run.tools.call("workspace_write", {"path": "n.md", "text": "a\n\tb\r\n"})
    assert res.ok, res.error
    res = run.tools.call("workspace_write", {"path": "n.md", "text": "a\x07"})
    assert not res.ok and "text: control character U+0007 at character 1" in (res.error or "")


def test_results_carry_run_time_and_get_time_reads_the_clock() -> None:
    run = _run()
    res = run.tools.call("get_alerts", {})
    assert res.t == pytest.approx(T0)
    t = run.now
    res = run.tools.call("get_time")
    assert res.ok and res.t == pytest.approx(t)
    assert res.data["t"] == pytest.approx(t) and res.data["cadence_s"] == run.cadence_s
    assert res.data["next_invocation_t"] > t and res.data["to_next_invocation_s"] <= run.cadence_s
    assert f"run time {int(t // 60)}:{int(t % 60):02d}" in res.output
    assert run.now == pytest.approx(t + 1.0), "get_time costs 1 s of run time"


def test_code_search_regex_is_linear_and_refuses_what_re2_cannot_do() -> None:
    run = _run()
    run.tools.spend_time = False
    t0 = time.monotonic()
    for pattern in ("(a+)+$", "(a|aa)+b", "(.*a){20}", "(x+x+)+y", "^(([a-z])+.)+[A-Z]([a-z])+$"):
        res = run.tools.call("code_search", {"service": "frontend", "pattern": pattern, "regex": True})
        assert res.ok or "regular expression" in (res.error or "")
    assert time.monotonic() - t0 < 5.0
    for pattern, why in ((r"(a)\1", "invalid escape sequence"), ("(?=x)", "invalid perl operator"),
                         ("(?<!x)y", "invalid perl operator"), ("(", "missing )")):
        res = run.tools.call("code_search", {"service": "frontend", "pattern": pattern, "regex": True})
        assert not res.ok and "unsupported regular expression" in (res.error or "") and why in (res.error or "")
    res = run.tools.call("code_search", {"service": "frontend", "pattern": "FUNC ", "regex": False})
    assert res.ok


# ----------------------------------------------------------------- replay contract

def _varied_calls(run: Orchestrator) -> list[tuple[Any, Any, Any]]:
    """Valid and malformed calls, including ones that open incidents and execute acts."""
    alerts = run.alert_history.instances if run.alert_history else []
    assert alerts
    ids = [f"A-{a.id}" for a in alerts[:3]]
    pod = next(p["metadata"]["name"] for p in run.sim.objects("Pod") if p["metadata"]["labels"]["app"] == "adservice")
    valid: list[tuple[Any, Any, Any]] = [
        ("report_incident", {"alerts": ids, "title": "replayed incident"}, 120),
        ("get_alerts", {"state": "firing"}, 7), ("get_topology", {}, 0), ("kubectl_get", {"kind": "pods"}, 0),
        ("kubectl_describe", {"kind": "deployments", "name": "frontend"}, 0),
        ("query_logs", {"deployment": "frontend", "grep": "error", "tail": 5}, 0),
        ("code_search", {"service": "frontend", "pattern": "func [A-Z]", "regex": True}, 0),
        ("get_deploy_history", {}, 0), ("get_time", {}, 0), ("get_time", None, 0),
        ("report_rca", {"incident": "INC-0001", "service": "frontend", "category": "runtime", "artifact": "x",
                        "summary": "because\nreasons"}, 0),
        ("scale_deployment", {"deployment": "adservice", "replicas": 2, "incident": "INC-0001"}, 0),
        ("restart_pod", {"pod": pod, "incident": "INC-0001"}, 0),
        ("set_config", {"service": "frontend", "key": "LOG_LEVEL", "value": "debug", "incident": "INC-0001"}, 0),
        ("scale_deployment", {"deployment": "loadgenerator", "replicas": 0, "incident": "INC-0001"}, 0),
        ("workspace_write", {"path": "n.md", "text": "note\n", "append": True}, 0),
        ("workspace_read", {"path": "n.md"}, 0), ("workspace_list", {}, 0),
        ("kubectl_get", '{"kind": "services"}', 3), ("get_alerts", {"limit": 3.0, "since_s": 10}, 0),
        ("resolve_incident", {"incident": "INC-0001"}, 0),
    ]
    malformed = systematic_calls()[::9] + [c for c in ten_mb_calls()[:3]]
    return valid + malformed


def test_recorded_calls_replay_to_identical_payloads() -> None:
    first = _run()
    before = len(first.stream.events)
    calls = _varied_calls(first)
    assert len(calls) >= 300
    raised, _ = _issue(first.tools, calls)
    assert raised == 0
    recorded = _tool_payloads(first, before)
    assert len(recorded) == len(calls)
    assert any(p["ok"] and p["tier"] == "act" for p in recorded), "some acts executed"
    assert any(is_marker(p["args"]) or any(is_marker(v) for v in p["args"].values()) for p in recorded)

    second = _run()
    assert second.stream.head == first.stream.events[before - 1].hash, "identical runs"
    for p in recorded:
        second.tools.call(p["tool"], p["args"], tokens=p["tokens"])
    again = _tool_payloads(second, before)
    assert len(again) == len(recorded)
    for i, (a, b) in enumerate(zip(recorded, again, strict=True)):
        assert a == b, (i, calls[i][0], a, b)
    # Every other event (incidents, actions, deploys, alerts) replays too: the chains agree.
    assert [e.hash for e in second.stream.events] == [e.hash for e in first.stream.events]


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
    | st.sampled_from(["\ud800", "\x00", "A-1", "INC-0001", "frontend", "pods"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["kind", "name", "service", "pattern", "value", "incident", "alerts", "x"])
        | st.text(max_size=5), inner, max_size=4),
    max_leaves=12)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool=st.sampled_from(sorted(TOOLS)), args=JSONISH)
def test_bounding_is_idempotent_and_canonical(tool: str, args: Any) -> None:
    recorded, problems = bound_arguments(tool, args)
    frozen = json.loads(canonical(recorded))  # never fails: the recorded form is canonical JSON
    assert isinstance(frozen, dict)
    assert bound_arguments(tool, frozen) == (frozen, problems)


_HYPO_RUN: list[Orchestrator] = []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool=st.sampled_from(sorted(TOOLS)), args=JSONISH, tokens=st.integers() | st.floats() | st.none())
def test_generated_calls_never_raise(tool: str, args: Any, tokens: Any) -> None:
    if not _HYPO_RUN:
        run = _run()
        run.tools.spend_time = False
        _HYPO_RUN.append(run)
    run = _HYPO_RUN[0]
    res = run.tools.call(tool, args, tokens=tokens)
    assert res.ok or res.error
    assert run.stream.events[-1].kind in ("tool.call", "action.executed", "change.deploy", "report.incident",
                                          "report.rca", "report.resolved")
