"""The LLM client and its configuration, against a scripted OpenAI-compatible server on loopback."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scripted_llm import Reply, ScriptedLLM, completion, error, tool_call

from engine.operate.llm.client import BudgetSpent, LLMClient, LLMUnavailable, Transcript
from engine.operate.llm.config import LLMConfig, LLMConfigError, add_llm_arguments, config_from_args, load_llm_config

MESSAGES = [{"role": "system", "content": "you are a test"}, {"role": "user", "content": "hello"}]
TOOLS = [{"type": "function", "function": {"name": "get_alerts", "parameters": {"type": "object"}}}]


def _config(url: str, **kw: Any) -> LLMConfig:
    base: dict[str, Any] = {"base_url": url, "model": "scripted", "retry_backoff_s": 0.01,
                            "price": {"prompt": 3.0, "completion": 15.0}}
    base.update(kw)
    return load_llm_config(None, base, env={})


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.sleeps: list[float] = []

    def emit(self, kind: str, payload: dict[str, Any]) -> None:
        self.events.append((kind, payload))


def _client(url: str, rec: Recorder, tmp_path: Path | None = None, **kw: Any) -> LLMClient:
    client = LLMClient(_config(url, **kw), sleep=rec.sleeps.append)
    client.begin(1, operator="react", emit=rec.emit,
                 transcript=Transcript(tmp_path / "t.jsonl") if tmp_path is not None else None)
    return client


# --------------------------------------------------------------------- configuration


def test_no_endpoint_says_what_to_set() -> None:
    cfg = load_llm_config(None, env={})
    with pytest.raises(LLMConfigError) as exc:
        LLMClient(cfg)
    msg = str(exc.value)
    for needle in ("--llm-base-url", "MARATHON_LLM_BASE_URL", "OPENAI_BASE_URL", "--llm-model", "MARATHON_LLM_MODEL",
                   "OPENAI_API_KEY", "--llm-api-key-env"):
        assert needle in msg


def test_marathon_run_with_an_unconfigured_llm_agent_exits_with_the_message(tmp_path: Path) -> None:
    env = {k: v for k, v in __import__("os").environ.items()
           if not k.startswith(("MARATHON_LLM", "OPENAI_"))}
    out = subprocess.run([sys.executable, "-m", "engine.cli", "run", "--agent", "react", "--no-record"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert out.returncode == 2
    assert "needs an endpoint and a model" in out.stderr and "--llm-base-url" in out.stderr
    assert "Traceback" not in out.stderr


def test_file_then_environment_then_flags(tmp_path: Path) -> None:
    cfg_file = tmp_path / "llm.toml"
    cfg_file.write_text('base_url = "http://127.0.0.1:9/v1"\nmodel = "file-model"\napi_key_env = "MY_KEY"\n'
                        'label = "lab"\n[prices]\n"env-model" = { prompt = 1.0, completion = 2.0 }\n'
                        '[budget.invocation]\nsteps = 5\ntokens = 1000\n[budget.run]\nusd = 0.5\n')
    cfg = load_llm_config(cfg_file, env={"MARATHON_LLM_MODEL": "env-model"})
    assert (cfg.base_url, cfg.model, cfg.api_key_env, cfg.label) == ("http://127.0.0.1:9/v1", "env-model", "MY_KEY",
                                                                     "lab")
    assert cfg.price is not None and cfg.price.cost(1_000_000, 500_000) == pytest.approx(2.0)
    assert (cfg.budget.invocation.steps, cfg.budget.invocation.tokens, cfg.budget.run.usd) == (5, 1000, 0.5)

    parser = argparse.ArgumentParser()
    add_llm_arguments(parser)
    args = parser.parse_args(["--llm-config", str(cfg_file), "--llm-model", "flag-model", "--llm-price-prompt", "4",
                              "--llm-price-completion", "8", "--llm-budget-invocation", "steps=3",
                              "--llm-budget-run", "tokens=99,usd=1.5"])
    flagged = config_from_args(args)
    assert flagged.model == "flag-model"
    assert flagged.price is not None and (flagged.price.prompt, flagged.price.completion) == (4.0, 8.0)
    # A flag changes only the key it names: the file's invocation token budget stays.
    assert (flagged.budget.invocation.steps, flagged.budget.invocation.tokens) == (3, 1000)
    assert (flagged.budget.run.tokens, flagged.budget.run.usd) == (99, 1.5)
    assert "MY_KEY" not in str(flagged.public().get("api_key", ""))


def test_yaml_file_and_errors_name_file_and_field(tmp_path: Path) -> None:
    good = tmp_path / "llm.yaml"
    good.write_text("base_url: http://127.0.0.1:9/v1\nmodel: m\nprices:\n  m: {prompt: 0.5, completion: 1.5}\n")
    assert load_llm_config(good, env={}).price is not None
    bad = tmp_path / "bad.yaml"
    bad.write_text("base_url: http://127.0.0.1:9/v1\nmodel: m\nmax_retries: -1\ncolour: blue\n")
    with pytest.raises(LLMConfigError) as exc:
        load_llm_config(bad, env={})
    assert str(bad) in str(exc.value) and "max_retries" in str(exc.value) and "colour" in str(exc.value)
    with pytest.raises(argparse.ArgumentTypeError):
        parser = argparse.ArgumentParser()
        add_llm_arguments(parser)
        from engine.operate.llm.config import parse_budget

        parse_budget("steps=many")


def test_base_url_credentials_are_not_recorded() -> None:
    cfg = load_llm_config(None, {"base_url": "https://user:secret@llm.example/v1", "model": "m"}, env={})
    assert cfg.public()["base_url"] == "https://llm.example/v1"


# --------------------------------------------------------------------- calls


def test_a_call_records_tokens_cost_and_transcript(tmp_path: Path) -> None:
    with ScriptedLLM(lambda body, srv: completion(body, calls=[tool_call("get_alerts", {"state": "firing"})],
                                                  completion_tokens=40)) as srv:
        rec = Recorder()
        client = _client(srv.url, rec, tmp_path)
        reply = client.chat(MESSAGES, TOOLS)
    assert [c.name for c in reply.tool_calls] == ["get_alerts"]
    assert srv.requests[0]["tools"][0]["function"]["name"] == "get_alerts"
    kind, payload = rec.events[0]
    assert kind == "llm.call"
    assert payload["prompt_tokens"] == srv.prompt_tokens and payload["completion_tokens"] == 40
    assert payload["tokens"] == srv.tokens
    assert payload["cost_usd"] == pytest.approx((srv.prompt_tokens * 3.0 + 40 * 15.0) / 1e6)
    assert payload["attempts"] == 1 and payload["error"] is None and payload["estimated"] is False
    lines = (tmp_path / "t.jsonl").read_text().splitlines()
    assert '"type": "request"' in lines[0] and '"type": "response"' in lines[1]


def test_429_then_success_is_retried_with_retry_after() -> None:
    def policy(body: dict[str, Any], srv: ScriptedLLM) -> Reply:
        if len(srv.requests) == 1:
            return error(429, "rate limited", retry_after="0.25")
        return completion(body, text="ok")

    with ScriptedLLM(policy) as srv:
        rec = Recorder()
        reply = _client(srv.url, rec).chat(MESSAGES)
    assert reply.content == "ok"
    assert len(srv.requests) == 2
    assert rec.sleeps == [0.25]
    (_, payload), = rec.events
    assert payload["attempts"] == 2 and payload["retried"] == ["HTTP 429"] and payload["tokens"] == srv.tokens


def test_server_errors_are_retried_a_bounded_number_of_times() -> None:
    with ScriptedLLM(lambda body, srv: error(503, "overloaded")) as srv:
        rec = Recorder()
        client = _client(srv.url, rec, max_retries=2, retry_backoff_s=1.0, retry_backoff_max_s=1.5)
        with pytest.raises(LLMUnavailable) as exc:
            client.chat(MESSAGES)
    assert len(srv.requests) == 3
    assert not exc.value.fatal and "503" in exc.value.reason
    assert len(rec.sleeps) == 2 and 0.5 <= rec.sleeps[0] <= 1.0 and 1.0 <= rec.sleeps[1] <= 1.5
    (_, payload), = rec.events
    assert payload["error"] and payload["tokens"] == 0 and payload["attempts"] == 3


def test_a_timeout_is_retried() -> None:
    def policy(body: dict[str, Any], srv: ScriptedLLM) -> Reply:
        reply = completion(body, text="late" if len(srv.requests) == 1 else "on time")
        reply.delay_s = 2.0 if len(srv.requests) == 1 else 0.0
        return reply

    with ScriptedLLM(policy) as srv:
        rec = Recorder()
        reply = _client(srv.url, rec, timeout_s=0.5).chat(MESSAGES)
    assert reply.content == "on time"
    assert rec.events[0][1]["retried"] == ["timeout"]


def test_an_authentication_error_disables_the_client_for_the_run() -> None:
    with ScriptedLLM(lambda body, srv: error(401, "invalid api key")) as srv:
        rec = Recorder()
        client = _client(srv.url, rec)
        with pytest.raises(LLMUnavailable) as exc:
            client.chat(MESSAGES)
        assert exc.value.fatal and "OPENAI_API_KEY" in exc.value.reason
        with pytest.raises(LLMUnavailable):
            client.chat(MESSAGES)
    assert len(srv.requests) == 1


def test_budgets_are_checked_before_each_call() -> None:
    with ScriptedLLM(lambda body, srv: completion(body, text="x")) as srv:
        rec = Recorder()
        client = _client(srv.url, rec, budget_invocation={"steps": 2}, budget_run={"steps": 3})
        client.chat(MESSAGES)
        client.chat(MESSAGES)
        with pytest.raises(BudgetSpent, match="invocation step budget"):
            client.chat(MESSAGES)
        client.begin(2, operator="react", emit=rec.emit)
        client.chat(MESSAGES)
        with pytest.raises(BudgetSpent, match="run step budget"):
            client.chat(MESSAGES)
    assert len(srv.requests) == 3


def test_token_and_dollar_budgets() -> None:
    with ScriptedLLM(lambda body, srv: completion(body, text="x", completion_tokens=1000)) as srv:
        rec = Recorder()
        client = _client(srv.url, rec, budget_invocation={"tokens": 500})
        client.chat(MESSAGES)
        with pytest.raises(BudgetSpent, match="invocation token budget"):
            client.chat(MESSAGES)
        client = _client(srv.url, rec, budget_run={"usd": 0.01})  # 1000 completion tokens at $15/1M = $0.015
        client.chat(MESSAGES)
        with pytest.raises(BudgetSpent, match="run dollar budget"):
            client.chat(MESSAGES)
    assert len(srv.requests) == 2


def test_missing_usage_is_estimated() -> None:
    with ScriptedLLM(lambda body, srv: completion(body, text="no usage here", usage=False)) as srv:
        rec = Recorder()
        _client(srv.url, rec).chat(MESSAGES)
    payload = rec.events[0][1]
    assert payload["estimated"] is True and payload["prompt_tokens"] > 0 and payload["completion_tokens"] > 0


@pytest.mark.parametrize("module", ["engine.operate.llm.client", "engine.operate.agents.react",
                                    "engine.operate.agents.rag", "engine.operate.agents.orbit", "engine.serve.cli",
                                    "engine.serve.mcp_server", "engine.serve.http_api"])
def test_llm_and_serve_modules_stay_headless(module: str) -> None:
    code = (f"import importlib, sys\nimportlib.import_module({module!r})\n"
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
