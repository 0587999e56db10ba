"""``marathon serve``: an external agent drives a marathon over the HTTP JSON API and over MCP.

The reference is the built-in oracle on the same short schedule. An external client
replays exactly the oracle's tool calls, invocation by invocation, through the server;
the bundle it produces must score exactly like the oracle's, and its recorded tool calls
must be the oracle's (same tools, arguments, policy decisions, results and run times).
The server runs as a real subprocess (``python -m engine.serve``) on loopback.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from engine.bundle.format import open_bundle
from engine.operate.operators import make_operator
from engine.run.orchestrator import Orchestrator
from faults.generator import generate
from scoring.cli import load_score

APP, SEED, REGIME = "online-boutique", 1, "short-5"
TOKEN = "test-token-123"
SCORE_FIELDS = ("score", "corr", "loc", "rep", "mttd", "mttl", "mttr", "risk", "actions", "risky_actions",
                "false_declarations", "category_accuracy", "artifact_accuracy", "degradation", "violation_s",
                "outcomes")


@dataclass
class Reference:
    bundle: Path
    calls: dict[int, list[tuple[str, dict[str, Any]]]]
    score: dict[str, Any]
    tool_events: list[tuple[Any, ...]]


def _tool_events(bundle: Path) -> list[tuple[Any, ...]]:
    return [(e.t, e.payload["invocation"], e.payload["tool"], json.dumps(e.payload["args"], sort_keys=True),
             e.payload["allowed"], e.payload["ok"], e.payload["reason"], e.payload["result"])
            for e in open_bundle(bundle).events if e.kind == "tool.call"]


def _score(bundle: Path) -> dict[str, Any]:
    s, _ = load_score(str(bundle))
    return {k: getattr(s, k) for k in SCORE_FIELDS}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    from engine.run.sealinputs import seal_run

    run_dir = tmp_path_factory.mktemp("ref") / "oracle"
    run = Orchestrator(generate(APP, SEED, REGIME), operator=make_operator("oracle"), run_dir=run_dir)
    run.run()
    bundle = seal_run(run_dir)
    calls: dict[int, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for e in open_bundle(bundle).events:
        if e.kind == "tool.call":
            calls[e.payload["invocation"]].append((e.payload["tool"], e.payload["args"]))
    score = _score(bundle)
    assert score["score"] > 50 and score["actions"] > 0, "the reference must act and score"
    return Reference(bundle, dict(calls), score, _tool_events(bundle))


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Any]:
    """Start ``python -m engine.serve`` with extra flags; yields a starter returning (process, ready, run_dir)."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(*flags: str) -> tuple[subprocess.Popen[bytes], dict[str, Any], Path]:
        run_dir = tmp_path / f"ext{len(procs)}"
        ready_file = tmp_path / f"ready{len(procs)}.json"
        proc = subprocess.Popen([sys.executable, "-m", "engine.serve", "--app", APP, "--seed", str(SEED),
                                 "--regime", REGIME, "--run-dir", str(run_dir), "--ready-file", str(ready_file),
                                 "--token", TOKEN, "--port", "0", "--mcp-port", "0", "--linger", "3", *flags],
                                stderr=subprocess.PIPE)
        procs.append(proc)
        deadline = time.monotonic() + 60
        while not ready_file.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"server did not start: {proc.stderr.read().decode() if proc.stderr else ''}")
            time.sleep(0.05)
        return proc, json.loads(ready_file.read_text()), run_dir

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(30)


def _http(base: str, method: str, path: str, body: dict[str, Any] | None = None,
          token: str | None = TOKEN) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    req = urllib.request.Request(base + path, data=json.dumps(body).encode() if body is not None else None,
                                 headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def _bundle_of(run_dir: Path) -> Path:
    return run_dir.with_name(run_dir.name + ".marathon")


def test_http_api_replay_scores_like_the_builtin_operator(server: Any, reference: Reference) -> None:
    proc, ready, run_dir = server("--mcp", "none")
    base = ready["http"]
    assert ready["mcp"] is None and base.startswith("http://127.0.0.1:")
    status, body = _http(base, "GET", "/run", token=None)
    assert status == 401 and "bearer token" in body["error"]
    status, body = _http(base, "GET", "/run", token="wrong")
    assert status == 401
    status, body = _http(base, "GET", "/tools")
    assert status == 200 and {t["function"]["name"] for t in body["tools"]} >= {"get_alerts", "rollback"}
    status, body = _http(base, "POST", "/invocations/1/tools/get_alerts", {"args": {}})
    assert status == 409 and "no invocation is open" in body["error"]

    finished: dict[str, Any] = {}
    while not finished:
        status, nxt = _http(base, "POST", "/invocations/next", {"timeout_s": 30})
        assert status == 200
        if nxt["finished"]:
            finished = nxt
            break
        inv = nxt["invocation"]
        if inv is None:
            continue
        n = inv["number"]
        assert {"t", "alerts", "new_alerts", "incidents", "workspace_files"} <= set(inv)
        status, body = _http(base, "POST", f"/invocations/{n + 1}/tools/get_alerts", {"args": {}})
        assert status == 409, "a call must name the open invocation"
        for tool, args in reference.calls.get(n, []):
            status, res = _http(base, "POST", f"/invocations/{n}/tools/{tool}", {"args": args})
            assert status == 200 and "ok" in res and "text" in res
        status, body = _http(base, "POST", f"/invocations/{n}/done", {"note": "replayed"})
        assert status == 200 and body["ok"]
    assert proc.wait(60) == 0
    assert finished["complete"] and finished["bundle"] == str(_bundle_of(run_dir))
    bundle = _bundle_of(run_dir)
    assert _tool_events(bundle) == reference.tool_events
    assert _score(bundle) == reference.score
    start = next(e for e in open_bundle(bundle).events if e.kind == "run.start")
    assert start.payload["operator"] == "external"


def test_http_malformed_calls_are_recorded_like_a_builtin_operators(server: Any) -> None:
    proc, ready, run_dir = server("--mcp", "none")
    base = ready["http"]
    status, nxt = _http(base, "POST", "/invocations/next", {"timeout_s": 30})
    n = nxt["invocation"]["number"]
    status, res = _http(base, "POST", f"/invocations/{n}/tools/get_alert", {"args": {}})
    assert status == 200 and not res["ok"] and "unknown tool" in res["error"]
    status, res = _http(base, "POST", f"/invocations/{n}/tools/scale_deployment",
                        {"args": {"deployment": "loadgenerator", "replicas": 0, "incident": "INC-0001"}})
    assert status == 200 and res["denied"] and "outside the application" in res["error"]
    status, res = _http(base, "POST", f"/invocations/{n}/tools/kubectl_get", {"args": {"kind": "pods", "bogus": 1}})
    assert status == 200 and not res["ok"] and "invalid arguments" in res["error"]
    for bad in ({"prompt_tokens": -5}, {"cost_usd": "lots"}, {"latency_s": "inf"}, {"completion_tokens": float("inf")}):
        status, res = _http(base, "POST", f"/invocations/{n}/usage", bad)
        assert status == 400 and "usage fields" in res["error"], (bad, status, res)
    for bad in ({"prompt_tokens": 10**300}, {"cost_usd": 1e308}, {"latency_s": 1e9}):  # sums must stay finite
        status, res = _http(base, "POST", f"/invocations/{n}/usage", bad)
        assert status == 400 and "over the limits" in res["error"], (bad, status, res)
    status, res = _http(base, "POST", f"/invocations/{n}/usage",
                        {"model": "my-model", "prompt_tokens": 1200, "completion_tokens": 300, "cost_usd": 0.0125})
    assert status == 200 and res["tokens"] == 1500
    _http(base, "POST", f"/invocations/{n}/done", {})
    while not (nxt := _http(base, "POST", "/invocations/next", {"timeout_s": 30})[1])["finished"]:
        if nxt["invocation"]:
            _http(base, "POST", f"/invocations/{nxt['invocation']['number']}/done", {})
    assert proc.wait(60) == 0
    events = open_bundle(_bundle_of(run_dir)).events
    reasons = [e.payload["reason"] for e in events if e.kind == "tool.call"]
    assert reasons[:3] == ["unknown tool", "service 'loadgenerator' is outside the application (role "
                                           "loadgenerator): not permitted", "invalid arguments"]
    s, _ = load_score(str(_bundle_of(run_dir)), degradation=False)
    assert s.tokens == 1500 and s.cost_usd == pytest.approx(0.0125)


def test_an_unresponsive_agent_is_timed_out(server: Any) -> None:
    proc, ready, run_dir = server("--mcp", "none", "--invocation-timeout", "0.5")
    base = ready["http"]
    _, first = _http(base, "POST", "/invocations/next", {"timeout_s": 30})
    n = first["invocation"]["number"]
    time.sleep(1.0)  # never answer invocation n
    assert _http(base, "POST", f"/invocations/{n}/tools/get_alerts", {"args": {}})[0] == 409
    while True:
        _, nxt = _http(base, "POST", "/invocations/next", {"timeout_s": 30})
        if nxt["finished"]:
            break
        if nxt["invocation"]:
            _http(base, "POST", f"/invocations/{nxt['invocation']['number']}/done", {})
    assert proc.wait(60) == 0
    ends = [e.payload for e in open_bundle(_bundle_of(run_dir)).events if e.kind == "agent.end"]
    assert ends[0]["invocation"] == n and ends[0]["reason"].startswith("timeout")
    assert all(e["reason"] == "done" for e in ends[1:])


async def _drive_mcp(client: Any, calls: dict[int, list[tuple[str, dict[str, Any]]]]) -> dict[str, Any]:
    listed = await client.list_tools()
    names = {t.name for t in listed.tools}
    from engine.operate.tools import TOOLS

    assert names >= set(TOOLS) | {"next_invocation", "end_invocation", "report_usage"}
    early = await client.call_tool("get_alerts", {})
    assert early.is_error and "no invocation is open" in early.content[0].text
    while True:
        res = await client.call_tool("next_invocation", {"timeout_s": 30})
        data = res.structured_content
        if data["finished"]:
            return dict(data)
        inv = data["invocation"]
        if inv is None:
            continue
        for tool, args in calls.get(inv["number"], []):
            out = await client.call_tool(tool, args)
            assert out.content and isinstance(out.structured_content, dict)
        done = await client.call_tool("end_invocation", {"note": "replayed"})
        assert not done.is_error


def test_mcp_streamable_http_replay_scores_like_the_builtin_operator(server: Any, reference: Reference) -> None:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    proc, ready, run_dir = server("--no-http", "--mcp", "http")
    url = ready["mcp"]
    assert ready["http"] is None and url.endswith("/mcp")
    anon = httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=10)
    assert anon.status_code == 401

    async def main() -> dict[str, Any]:
        timeout = httpx2.Timeout(60.0, read=300.0)
        async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=timeout) as http,
                    Client(streamable_http_client(url, http_client=http), cache=None) as client):
            return await _drive_mcp(client, reference.calls)

    finished = asyncio.run(main())
    assert finished["complete"]
    assert proc.wait(60) == 0
    bundle = _bundle_of(run_dir)
    assert _tool_events(bundle) == reference.tool_events
    assert _score(bundle) == reference.score


def test_mcp_stdio_replay_scores_like_the_builtin_operator(tmp_path: Path, reference: Reference) -> None:
    from mcp import Client, StdioServerParameters

    run_dir = tmp_path / "stdio"
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "engine.serve", "--app", APP, "--seed", str(SEED), "--regime", REGIME, "--run-dir", str(run_dir),
        "--no-http", "--mcp", "stdio", "--linger", "3"], env={"PYTHONPATH": os.pathsep.join(sys.path)},
        cwd=str(tmp_path))

    async def main() -> dict[str, Any]:
        async with Client(params, cache=None, read_timeout_seconds=300) as client:
            return await _drive_mcp(client, reference.calls)

    finished = asyncio.run(main())
    assert finished["complete"] and finished["bundle"] == str(_bundle_of(run_dir))
    bundle = _bundle_of(run_dir)
    deadline = time.monotonic() + 30
    while not bundle.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _tool_events(bundle) == reference.tool_events
    assert _score(bundle) == reference.score


def test_sigterm_seals_an_incomplete_bundle(server: Any) -> None:
    import signal

    from engine.bundle.format import verify

    proc, ready, run_dir = server("--mcp", "none", "--no-wait")
    deadline = time.monotonic() + 30
    while _http(ready["http"], "GET", "/run")[1]["invocations"] < 1:  # the run waits in its first invocation
        assert time.monotonic() < deadline
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == 128 + signal.SIGTERM
    report = verify(str(_bundle_of(run_dir)))
    assert report.ok and report.sealed
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["complete"] is False


def _raw_http(base: str, path: str, data: bytes, token: str = TOKEN) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(base + path, data=data, method="POST",
                                 headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_malformed_bodies_get_400_or_413_and_the_server_stays_responsive(server: Any) -> None:
    import threading

    proc, ready, run_dir = server("--mcp", "none")
    base = ready["http"]
    status, nxt = _http(base, "POST", "/invocations/next", {"timeout_s": 30})
    n = nxt["invocation"]["number"]
    assert {"t", "mmss", "cadence_s", "next_invocation_t"} <= set(nxt["invocation"])
    tool = f"/invocations/{n}/tools/get_alerts"
    for data, why in ((b"{not json", "not valid JSON"), (b"[1, 2]", "must be a JSON object"),
                      (b"\xff\xfe", "not UTF-8"), (b"[" * 100_000, "not valid JSON"),
                      (b'{"args": {}, "tokens": "lots"}', "tokens must be an integer"),
                      (b'{"args": {}, "tokens": -3}', "tokens must be an integer"),
                      (b'{"args": {}, "tokens": NaN}', "tokens must be an integer"),
                      (b'{"args": {}, "tokens": true}', "tokens must be an integer")):
        status, res = _raw_http(base, tool, data)
        assert status == 400 and why in res["error"], (data[:20], status, res)
    status, res = _raw_http(base, "/invocations/next", b'{"timeout_s": "soon"}')
    assert status == 400 and "timeout_s" in res["error"]
    status, res = _raw_http(base, tool, b'{"args": "' + b"x" * (3 * 1024 * 1024) + b'"}')
    assert status == 413 and "limit" in res["error"]
    # Wrong argument types are answered (and recorded) like any operator's bad call.
    status, res = _raw_http(base, tool, b'{"args": [1, 2]}')
    assert status == 200 and not res["ok"] and "must be a JSON object" in res["error"]
    status, res = _raw_http(base, f"/invocations/{n}/tools/set_config",
                            b'{"args": {"service": "frontend", "key": "K", "value": "\\ud800", "incident": "I"}}')
    assert status == 200 and "value: lone surrogate U+D800" in res["error"]
    status, res = _http(base, "POST", f"/invocations/{n}/tools/get_time", {"args": {}})
    assert status == 200 and res["ok"] and res["t"] == res["data"]["t"] and res["data"]["invocation"] == n

    # The status endpoint answers while tool calls run on the engine thread.
    stop = threading.Event()

    def busy() -> None:
        while not stop.is_set():
            _http(base, "POST", f"/invocations/{n}/tools/code_search",
                  {"args": {"service": "frontend", "pattern": "(a+)+$", "regex": True}})

    worker = threading.Thread(target=busy, daemon=True)
    worker.start()
    try:
        for _ in range(10):
            t0 = time.monotonic()
            status, _ = _http(base, "GET", "/run")
            assert status == 200 and time.monotonic() - t0 < 2.0
    finally:
        stop.set()
        worker.join(30)
    _http(base, "POST", f"/invocations/{n}/done", {})
    proc.send_signal(__import__("signal").SIGTERM)
    proc.wait(30)
    events = open_bundle(_bundle_of(run_dir)).events
    assert any(e.kind == "tool.call" and e.payload["tool"] == "set_config" and not e.payload["ok"] for e in events)


@pytest.mark.parametrize("signame, flags", [("SIGTERM", ("--speed", "1")), ("SIGINT", ())])
def test_a_signal_seals_the_run_within_seconds(server: Any, signame: str, flags: tuple[str, ...]) -> None:
    """Wall-clock mode (the engine sleeps between slices) and an open invocation both stop promptly."""
    import signal

    from engine.bundle.format import verify

    proc, ready, run_dir = server("--mcp", "none", "--no-wait", *flags)
    base = ready["http"]
    deadline = time.monotonic() + 30
    while _http(base, "GET", "/run")[1]["state"] != "running":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    if not flags:
        _, nxt = _http(base, "POST", "/invocations/next", {"timeout_s": 30})
        assert nxt["invocation"] is not None  # the engine now waits in the open invocation
    t0 = time.monotonic()
    proc.send_signal(getattr(signal, signame))
    bundle = _bundle_of(run_dir)
    while not bundle.exists():
        assert time.monotonic() - t0 < 10.0, "the run was not sealed within 10 s"
        time.sleep(0.05)
    assert proc.wait(10) == 128 + getattr(signal, signame)
    assert time.monotonic() - t0 < 12.0
    report = verify(str(bundle))
    assert report.ok and report.sealed
