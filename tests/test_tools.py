"""Operator tools and the policy layer (issue 5): typed calls, denials, confinement, no ground truth."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.operate.invocation import Invocation
from engine.operate.tools import TOOLS, tool_schemas
from engine.run.orchestrator import Orchestrator
from faults.generator import generate

ACT_CALLS: dict[str, dict[str, Any]] = {
    "restart_pod": {"pod": "POD"},
    "scale_deployment": {"deployment": "adservice", "replicas": 3},
    "rollback": {"deployment": "frontend"},
    "deploy_patch": {"service": "currencyservice", "diff": "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
                     "summary": "fix"},
    "set_config": {"service": "frontend", "key": "LOG_LEVEL", "value": "debug"},
}


@pytest.fixture
def run(tmp_path: Path) -> Orchestrator:
    r = Orchestrator(generate("online-boutique", 3, "short-5"), run_dir=tmp_path / "run")
    r.start()
    r.advance_to(420)
    r.tools.spend_time = False
    return r


def _pod(run: Orchestrator, service: str) -> str:
    return next(p["metadata"]["name"] for p in run.sim.objects("Pod") if p["metadata"]["labels"]["app"] == service)


def _calls(run: Orchestrator) -> list[dict[str, Any]]:
    return [e.payload for e in run.stream.events if e.kind == "tool.call"]


def _incident(run: Orchestrator) -> str:
    alerts = run.alert_history.instances if run.alert_history else []
    assert alerts, "the run raised alerts by now"
    res = run.tools.call("report_incident", {"alerts": [f"A-{alerts[0].id}"], "title": "test incident"})
    assert res.ok, res.error
    return str(res.data["incident"])


def test_every_tool_has_a_json_schema() -> None:
    schemas = {s["function"]["name"]: s["function"] for s in tool_schemas()}
    assert set(schemas) == set(TOOLS)
    for name, fn in schemas.items():
        params = fn["parameters"]
        assert params["type"] == "object" and "properties" in params, name
        json.dumps(params)
    assert "incident" in schemas["restart_pod"]["parameters"]["required"]


@pytest.mark.parametrize("tool", sorted(ACT_CALLS))
def test_act_tools_are_denied_without_an_incident(run: Orchestrator, tool: str) -> None:
    args = dict(ACT_CALLS[tool])
    if "pod" in args:
        args["pod"] = _pod(run, "adservice")
    before = len(run.sim.deploy_history())
    res = run.tools.call(tool, {**args, "incident": "INC-9999"})
    assert not res.ok and res.denied
    assert "open incident" in (res.error or "")
    assert len(run.sim.deploy_history()) == before
    last = _calls(run)[-1]
    assert last["tool"] == tool and last["allowed"] is False and "incident" in last["reason"]
    assert not any(e.kind == "action.executed" for e in run.stream.events)


def test_targets_outside_the_application_are_denied(run: Orchestrator) -> None:
    inc = _incident(run)
    for args in ({"deployment": "loadgenerator", "replicas": 0}, {"deployment": "prometheus", "replicas": 0},
                 {"deployment": "no-such-thing", "replicas": 1}):
        res = run.tools.call("scale_deployment", {**args, "incident": inc})
        assert res.denied, args
    assert "outside the application" in (run.tools.call(
        "restart_pod", {"pod": _pod(run, "loadgenerator"), "incident": inc}).error or "")
    assert run.sim.cluster.workloads["loadgenerator"].replicas == 1


def test_allowed_actions_are_executed_and_recorded(run: Orchestrator) -> None:
    inc = _incident(run)
    res = run.tools.call("scale_deployment", {"deployment": "adservice", "replicas": 3, "incident": inc})
    assert res.ok, res.error
    assert run.sim.cluster.workloads["adservice"].replicas == 3
    executed = [e.payload for e in run.stream.events if e.kind == "action.executed"]
    assert executed[-1]["targets"] == ["adservice"]
    assert _calls(run)[-1]["allowed"] is True


def test_rate_limit_per_invocation(run: Orchestrator) -> None:
    inc = _incident(run)
    results = [run.tools.call("scale_deployment", {"deployment": "adservice", "replicas": 2 + i % 2,
                                                   "incident": inc}) for i in range(12)]
    denied = [r for r in results if r.denied]
    assert denied and "rate limit" in (denied[0].error or "")


def test_workspace_paths_cannot_escape(run: Orchestrator) -> None:
    ws = run.tools
    assert ws.call("workspace_write", {"path": "notes/today.md", "text": "cart looked odd"}).ok
    assert ws.call("workspace_read", {"path": "notes/today.md"}).output == "cart looked odd"
    for bad in ("../events.jsonl", "/etc/passwd", "notes/../../schedule.yaml", "../../run.json"):
        res = ws.call("workspace_read", {"path": bad})
        assert not res.ok, bad
        res = ws.call("workspace_write", {"path": bad, "text": "x"})
        assert not res.ok, bad
    (run.workspace.root / "link").symlink_to(run.workspace.root.parent / "events.jsonl")
    assert not ws.call("workspace_read", {"path": "link"}).ok


def test_read_tools_never_reveal_ground_truth(run: Orchestrator) -> None:
    secrets = {f.fault for f in run.schedule.faults} | {"probe.result", "fault.inject", "schedule.yaml",
                                                          "events.jsonl"}
    injected = [r for r in run.faults.values() if r.instance is not None]
    assert injected
    calls: list[tuple[str, dict[str, Any]]] = [
        ("get_alerts", {}), ("get_topology", {}), ("get_deploy_history", {}),
        ("kubectl_get", {"kind": "events"}), ("kubectl_get", {"kind": "pods", "output": "json"}),
        ("kubectl_describe", {"kind": "deployments", "name": "frontend"}),
        ("query_logs", {"deployment": "frontend", "tail": 1000}),
        ("query_metrics", {"query": '{__name__=~".+"}'}), ("query_metrics", {"query": "ALERTS", "start": 0}),
        ("workspace_list", {}),
    ]
    for svc in ("frontend", "currencyservice", "cartservice"):
        for pattern in ("fault", "probe", "schedule", "inject", "orchestrator", "ground"):
            calls.append(("code_search", {"service": svc, "pattern": pattern}))
    for name, args in calls:
        res = run.tools.call(name, args)
        text = res.text() + json.dumps(res.data)
        for secret in secrets:
            assert secret not in text, (name, args, secret)


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_malformed_arguments_are_errors_not_exceptions(run: Orchestrator, tool: str) -> None:
    for bad in ({"no_such_argument": 1}, "{not json", ["a", "list"], {"incident": 7, "pod": None}):
        res = run.tools.call(tool, bad)  # type: ignore[arg-type]
        assert not res.ok and res.error, (tool, bad)
    assert _calls(run)[-1]["ok"] is False
    assert not run.tools.call("no_such_tool", {}).ok


def test_deploy_patch_compiler_style_errors_and_success(run: Orchestrator) -> None:
    inc = _incident(run)
    res = run.tools.call("deploy_patch", {"service": "currencyservice", "diff": "this is not a diff at all",
                                          "summary": "fix", "incident": inc})
    assert not res.ok and "patch" in (res.error or "")
    files = run.sim.source_files("currencyservice")
    path = sorted(p for p in files if p.endswith(".js"))[0]
    bad = f"--- a/{path}\n+++ b/{path}\n@@ -1,1 +1,1 @@\n-this line is not there\n+x\n"
    res = run.tools.call("deploy_patch", {"service": "currencyservice", "diff": bad, "summary": "fix",
                                          "incident": inc})
    assert not res.ok and "does not apply" in (res.error or "")
    first = files[path].split("\n")[0]
    good = f"--- a/{path}\n+++ b/{path}\n@@ -1,1 +1,2 @@\n {first}\n+// reviewed\n"
    res = run.tools.call("deploy_patch", {"service": "currencyservice", "diff": good, "summary": "docs",
                                          "incident": inc})
    assert res.ok, res.error
    assert run.sim.deploy_history("currencyservice")[-1].status == "building"


def test_invocations_get_cumulative_alerts_and_cost_run_time(tmp_path: Path) -> None:
    seen: list[tuple[float, int, int]] = []

    class Probe:
        name = "probe-operator"

        def invoke(self, inv: Invocation) -> None:
            seen.append((inv.t, len(inv.alerts), len(inv.new_alerts)))
            t0 = inv.now
            inv.call("get_alerts")
            inv.call("kubectl_get", kind="pods")
            assert inv.now == pytest.approx(t0 + 10.0) or inv.over
            inv.workspace.kv_set("invocations", len(seen))

    r = Orchestrator(generate("online-boutique", 3, "short-5"), operator=Probe(), run_dir=tmp_path / "r")
    r.run()
    assert len(seen) >= 15
    counts = [n for _, n, _ in seen]
    assert counts == sorted(counts), "the alert history is cumulative"
    assert r.workspace.kv_get("invocations") == len(seen)


@pytest.mark.parametrize("key", ["LOG=LEVEL", "LOG_LEVEL_é", "A\u00a0B"])
def test_set_config_refuses_env_names_the_api_server_refuses(run: Orchestrator, key: str) -> None:
    """A v1.36 API server refuses an env var name with ``=`` or anything but printable ASCII
    (``IsRelaxedEnvVarName``); nothing is deployed and the refusal is recorded."""
    inc = _incident(run)
    deploys = sum(1 for e in run.stream.events if e.kind == "change.deploy")
    res = run.tools.call("set_config", {"service": "frontend", "key": key, "value": "x", "incident": inc})
    assert not res.ok
    assert "a valid environment variable name must consist only of printable ASCII characters other than '='" \
        in (res.error or "")
    assert sum(1 for e in run.stream.events if e.kind == "change.deploy") == deploys
    ok = run.tools.call("set_config", {"service": "frontend", "key": "my.env-name 2", "value": "x", "incident": inc})
    assert ok.ok, ok.error
