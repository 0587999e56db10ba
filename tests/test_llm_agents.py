"""Each LLM agent end to end on a short schedule against a scripted OpenAI-compatible server.

The scripted server (:mod:`scripted_llm`) answers over real HTTP on loopback with canned
replies that call tools. Checked: the agents' tool calls reach the policy layer (allowed
and denied ``tool.call`` events), tokens and cost in ``marathon score`` equal what the
server billed, a 429 is retried, malformed replies are fed back and recovered from, and
budgets end invocations cleanly.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from scripted_llm import Reply, ScriptedLLM, completion, error, sre_policy, tool_call

from engine.bundle.events import Event
from engine.bundle.format import open_bundle
from engine.operate.llm.config import load_llm_config
from engine.operate.operators import make_operator
from engine.run.orchestrator import Orchestrator
from engine.run.sealinputs import seal_run
from faults.generator import generate

PRICE = {"prompt": 2.5, "completion": 10.0}


def _run(agent: str, url: str, run_dir: Path | None, **config: Any) -> tuple[Orchestrator, Any]:
    cfg = load_llm_config(None, {"base_url": url, "model": "scripted-model", "price": PRICE,
                                 "retry_backoff_s": 0.01, **config}, env={})
    op = make_operator(agent, llm_config=cfg)
    run = Orchestrator(generate("online-boutique", 1, "short-5"), operator=op, run_dir=run_dir)
    run.run()
    return run, op


def _events(run: Orchestrator, kind: str) -> list[Event]:
    return [e for e in run.stream.events if e.kind == kind]


def _score_row(capsys: pytest.CaptureFixture[str], bundle: Path, operator: str) -> dict[str, str]:
    from engine.cli import main

    assert main(["score", str(bundle), "--no-degradation"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = lines[0].split()
    row = next(line.split() for line in lines[1:] if line.split() and line.split()[0] == operator)
    return dict(zip(header, row, strict=True))


@pytest.mark.parametrize("agent", ["react", "rag", "orbit"])
def test_agent_end_to_end(agent: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / agent
    with ScriptedLLM(sre_policy) as srv:
        run, _ = _run(agent, srv.url, run_dir)
    assert run.finished
    calls = _events(run, "tool.call")
    llm = _events(run, "llm.call")
    assert len(llm) == len(srv.requests) > 0
    assert sum(e.payload["tokens"] for e in llm) == srv.tokens
    # The agent's calls went through the tool box and the policy layer.
    acts = [e for e in calls if e.payload["tier"] == "act"]
    assert any(e.payload["allowed"] and e.payload["reason"].startswith("allowed:") for e in acts)
    reported = [e for e in calls if e.payload["tool"] == "report_incident" and e.payload["ok"]]
    assert reported and _events(run, "report.rca")
    if agent != "orbit":
        denied = [e for e in acts if not e.payload["allowed"]]
        assert denied and "outside the application" in denied[0].payload["reason"]
    else:
        # orbit publishes deterministically: incidents titled by rule and workload, RCAs from `conclude`.
        assert all(re.fullmatch(r"[A-Za-z, ]+ on [a-z0-9-]+", e.payload["args"]["title"]) for e in reported)
        offered = {t["function"]["name"] for t in srv.requests[0]["tools"]}
        assert "report_incident" not in offered and "conclude" in offered
    ends = _events(run, "agent.end")
    assert len(ends) == len(_events(run, "agent.invoke"))
    assert any(e.payload["reason"] in ("done", "concluded") for e in ends)

    bundle = seal_run(run_dir)
    row = _score_row(capsys, bundle, agent)
    assert int(row["TOKENS"]) == srv.tokens
    cost = (srv.prompt_tokens * PRICE["prompt"] + srv.completion_tokens * PRICE["completion"]) / 1e6
    assert float(row["COST$"]) == pytest.approx(round(cost, 4), abs=1e-9)
    assert cost > 0.001

    b = open_bundle(bundle)
    names = b.names()
    assert f"prompts/{agent}.md" in names and f"transcripts/{agent}.jsonl" in names
    transcript = [json.loads(line) for line in b.read_text(f"transcripts/{agent}.jsonl").splitlines()]
    assert {r["type"] for r in transcript} >= {"config", "invocation", "request", "response", "end"}
    assert transcript[0]["llm"]["model"] == "scripted-model"
    if agent == "rag":
        assert any(n.startswith("prompts/runbooks/") for n in names)
        assert any(n.startswith("workspace/incidents/INC-") for n in names)
        context = srv.requests[0]["messages"][1]["content"]
        assert "Retrieved knowledge" in context and "runbook:" in context
        searches = [m for r in srv.requests for m in r["messages"] if m["role"] == "tool"
                    and m["content"].startswith("### ")]
        assert searches, "search_knowledge results reached the model"
    if agent == "react":
        assert "workspace/notes.md" in names
        later = [r["messages"][1]["content"] for r in srv.requests if "## invocation" in r["messages"][1]["content"]]
        assert later, "the agent's notes come back in later invocations"


def _first_busy_step(body: dict[str, Any]) -> bool:
    """The first request of an invocation (no assistant turn yet)."""
    return not any(m["role"] == "assistant" for m in body["messages"])


def test_malformed_replies_are_fed_back_and_recovered_from(tmp_path: Path) -> None:
    script = ["bad-json", "unknown-tool", "no-tool-call"]

    def policy(body: dict[str, Any], srv: ScriptedLLM) -> Reply:
        last = body["messages"][-1]
        if last["role"] == "user" and last["content"].startswith("ERROR: your reply called no tool"):
            return completion(body, calls=[tool_call("get_alerts", {"state": "firing"})])  # back on track
        context = body["messages"][1]["content"]
        active = context.split("Alerts pending or firing now", 1)[1].split("Your incidents", 1)[0]
        firing = re.search(r"^A-\d+\s+firing", active, re.MULTILINE) is not None
        started = len(script) < 3
        if script and (started or (_first_busy_step(body) and firing)):
            step = script.pop(0)
            if step == "bad-json":
                return completion(body, calls=[tool_call("get_alerts", '{"state": "firing"')])
            if step == "unknown-tool":
                assert last["role"] == "tool" and "not valid JSON" in last["content"]
                return completion(body, calls=[tool_call("get_alert", {"state": "firing"})])
            assert last["role"] == "tool" and "unknown tool 'get_alert'" in last["content"]
            return completion(body, text="I think the frontend is broken.")
        return sre_policy(body, srv)

    with ScriptedLLM(policy) as srv:
        run, _ = _run("react", srv.url, None)
    assert not script
    nudged = [r for r in srv.requests if any(m["role"] == "user" and m["content"].startswith("ERROR: your reply "
                                                                                             "called no tool")
                                             for m in r["messages"])]
    assert nudged
    calls = _events(run, "tool.call")
    i = next(i for i, e in enumerate(calls) if e.payload["reason"] == "invalid arguments")
    assert calls[i].payload["tool"] == "get_alerts" and not calls[i].payload["ok"]
    assert calls[i + 1].payload["tool"] == "get_alert" and calls[i + 1].payload["reason"] == "unknown tool"
    # ... and the same invocation went on to a normal report.
    first = calls[i].payload["invocation"]
    assert any(e.payload["tool"] == "report_incident" and e.payload["ok"] and e.payload["invocation"] == first
               for e in calls)
    end = next(e for e in _events(run, "agent.end") if e.payload["invocation"] == first)
    assert end.payload["reason"] == "done"


def test_a_429_inside_a_run_is_retried(tmp_path: Path) -> None:
    def policy(body: dict[str, Any], srv: ScriptedLLM) -> Reply:
        if len(srv.requests) == 1:
            return error(429, retry_after="0")
        return sre_policy(body, srv)

    with ScriptedLLM(policy) as srv:
        run, _ = _run("react", srv.url, None)
    llm = _events(run, "llm.call")
    assert llm[0].payload["attempts"] == 2 and llm[0].payload["retried"] == ["HTTP 429"]
    assert len(llm) == len(srv.requests) - 1
    assert all(e.payload["reason"] != "LLM call failed" for e in _events(run, "agent.end"))


def test_the_invocation_budget_ends_an_invocation_cleanly() -> None:
    def stubborn(body: dict[str, Any], srv: ScriptedLLM) -> Reply:
        return completion(body, calls=[tool_call("get_alerts", {"state": "firing"})])

    with ScriptedLLM(stubborn) as srv:
        run, _ = _run("react", srv.url, None, budget_invocation={"steps": 2})
    busy = [e for e in _events(run, "agent.end") if not e.payload["reason"].startswith("idle")]
    assert busy and all(e.payload["reason"] == "invocation step budget spent (2 of 2 model calls)"
                        for e in busy if e.payload["reason"] != "run over")
    assert all(e.payload["steps"] <= 2 for e in busy)
    assert len(srv.requests) == sum(e.payload["steps"] for e in busy)
    assert run.finished


def test_the_run_budget_stops_calling_the_model() -> None:
    with ScriptedLLM(sre_policy) as srv:
        run, _ = _run("react", srv.url, None, budget_run={"tokens": 5000})
    reasons = [e.payload["reason"] for e in _events(run, "agent.end")]
    assert any(r.startswith("run token budget spent") for r in reasons)
    spent_at = next(i for i, r in enumerate(reasons) if r.startswith("run token budget spent"))
    assert all(not r.startswith("done") for r in reasons[spent_at:])
    assert sum(e.payload["tokens"] for e in _events(run, "llm.call")) == srv.tokens
    assert srv.tokens < 5000 + max(e.payload["tokens"] for e in _events(run, "llm.call"))


def test_a_rejected_key_does_not_stop_the_run() -> None:
    with ScriptedLLM(lambda body, srv: error(401, "invalid api key")) as srv:
        run, _ = _run("orbit", srv.url, None)
    assert run.finished and len(srv.requests) == 1
    reasons = [e.payload["reason"] for e in _events(run, "agent.end") if not e.payload["reason"].startswith("idle")]
    assert reasons and all("LLM" in r for r in reasons)



def test_llm_rows_sit_beside_the_builtin_operators_on_the_leaderboard(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from engine.cli import main

    bundles = []
    for name in ("noop", "runbook"):
        run = Orchestrator(generate("online-boutique", 1, "short-5"), operator=make_operator(name),
                           run_dir=tmp_path / name)
        run.run()
        bundles.append(seal_run(tmp_path / name))
    with ScriptedLLM(sre_policy) as srv:
        _run("rag", srv.url, tmp_path / "rag")
    bundles.append(seal_run(tmp_path / "rag"))
    assert main(["score", *map(str, bundles), "--no-degradation"]) == 0
    out = capsys.readouterr().out
    lines = out.split("\n\n", 1)[0].splitlines()  # the table; notes follow after a blank line
    header = lines[0].split()
    rows = {r[0]: dict(zip(header, r, strict=True)) for r in (line.split() for line in lines[1:]) if r}
    assert "PROVISIONAL" in out  # scored without the no-op counterfactual, and said so
    assert set(rows) == {"noop", "runbook", "rag"}
    assert rows["noop"]["TOKENS"] == rows["runbook"]["TOKENS"] == "0"
    assert int(rows["rag"]["TOKENS"]) == srv.tokens and float(rows["rag"]["COST$"]) > 0
