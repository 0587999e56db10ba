"""An OpenAI-compatible chat-completions client for the agents: retries, budgets, records.

:class:`LLMClient` wraps the official ``openai`` SDK (its own retries off, so every attempt
is counted here) and adds what a benchmark needs:

* **records** -- every logical call becomes one ``llm.call`` event (model, prompt and
  completion tokens, ``tokens`` = their sum, wall latency in seconds, cost in US dollars
  from the price table, attempts, the statuses retried, finish reason, error) and lines in
  the run's transcript (:class:`Transcript`: the messages sent since the last call, the
  reply, the usage). The scorer sums ``tokens`` and ``cost_usd`` of these events;
* **retries** -- 429, 408, 409, 5xx, timeouts and connection errors are retried up to
  ``max_retries`` times, waiting ``Retry-After`` when the server sends seconds, else
  ``retry_backoff_s * 2**n`` with jitter (x0.5..1), never more than ``retry_backoff_max_s``;
* **budgets** -- steps (model calls), tokens and dollars per invocation and per run are
  checked *before* each call; a spent budget raises :class:`BudgetSpent`, which an agent
  turns into a clean end of its invocation (one call can overshoot by its own size);
* **failures** -- a call that still fails raises :class:`LLMUnavailable`; authentication,
  permission and not-found errors (401/403/404) are fatal: the client refuses every later
  call of the run with the same reason rather than paying for errors each cadence.

When the server reports no usage (some local servers), tokens are estimated as characters
/ 4 and the event says ``"estimated": true``. The model's thinking time does not cost run
time: the engine waits on the virtual clock (tool calls cost modeled run time instead).
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import openai

from engine.operate.llm.config import Budget, LLMConfig

Message = dict[str, Any]
"""One chat message in the OpenAI format (``role``, ``content``, ``tool_calls``, ``tool_call_id``)."""
Emit = Callable[[str, dict[str, Any]], object]
"""Records an event: ``emit(kind, payload)`` (the orchestrator's :meth:`emit`)."""

RETRY_STATUSES = frozenset({408, 409, 429})
"""Statuses retried besides 5xx (the SDK's own retry set)."""
FATAL_STATUSES = frozenset({401, 403, 404})
"""Statuses that disable the client for the rest of the run (bad key, no access, no such model)."""
CHARS_PER_TOKEN = 4.0
"""Token estimate when the server reports no usage (OpenAI's rule of thumb for English)."""


class LLMStop(Exception):
    """The invocation must end: :attr:`reason` says why (recorded in ``agent.end``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class BudgetSpent(LLMStop):
    """A step, token or dollar budget (invocation or run) is spent."""


class LLMUnavailable(LLMStop):
    """The endpoint failed after retries, or failed fatally (:attr:`fatal`)."""

    def __init__(self, reason: str, *, fatal: bool = False) -> None:
        super().__init__(reason)
        self.fatal = fatal


@dataclass(frozen=True)
class ToolCallRequest:
    """One tool call the model asked for; ``arguments`` is the raw JSON text it produced."""

    id: str
    name: str
    arguments: str


@dataclass
class ChatReply:
    """A model reply and what it cost.

    Attributes:
        content: the text (empty when the model only called tools).
        tool_calls: the function calls, in order.
        finish_reason: the API's finish reason (``stop``, ``tool_calls``, ``length``, ...).
        message: the assistant message to append to the conversation (OpenAI format).
        prompt_tokens, completion_tokens: usage (estimated when the server sent none).
        cost_usd: dollars, from the price table (0 when the model is not priced).
        latency_s: wall seconds of the successful attempt.
    """

    content: str
    tool_calls: list[ToolCallRequest]
    finish_reason: str
    message: Message
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_s: float


@dataclass
class Spend:
    """What has been spent against a :class:`~engine.operate.llm.config.Budget`."""

    steps: int = 0
    tokens: int = 0
    usd: float = 0.0

    def add(self, tokens: int, usd: float) -> None:
        self.steps += 1
        self.tokens += tokens
        self.usd += usd

    def exhausted(self, budget: Budget, scope: str) -> str | None:
        """Why no further call fits ``budget``, or None."""
        if budget.steps is not None and self.steps >= budget.steps:
            return f"{scope} step budget spent ({self.steps} of {budget.steps} model calls)"
        if budget.tokens is not None and self.tokens >= budget.tokens:
            return f"{scope} token budget spent ({self.tokens} of {budget.tokens} tokens)"
        if budget.usd is not None and self.usd >= budget.usd:
            return f"{scope} dollar budget spent (${self.usd:.4f} of ${budget.usd:.4f})"
        return None


class Transcript:
    """A JSONL transcript (one record per line, appended and flushed as it goes).

    Args:
        path: the file (parents created); None keeps nothing.
    """

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path is not None else None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, record: dict[str, Any]) -> None:
        """Append one record (any JSON-serialisable mapping; other values are written as strings)."""
        if self.path is None:
            return
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, sort_keys=True, ensure_ascii=False, default=str) + "\n")


def _retry_after(exc: openai.APIStatusError) -> float | None:
    """Seconds from a ``Retry-After`` (or ``retry-after-ms``) header, or None."""
    headers = exc.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            continue  # an HTTP date: fall back to the computed back-off
    return None


def _estimate_tokens(obj: Any) -> int:
    text = obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False, default=str)
    return int(len(text) / CHARS_PER_TOKEN) + 1


class LLMClient:
    """Chat completions with tool calling (module docstring).

    Args:
        config: the resolved configuration; must name an endpoint and a model.
        sleep: how back-off waits (tests pass a recorder).
        rng: jitter source (seeded for reproducible waits).

    Raises:
        LLMConfigError: no endpoint or no model configured (the message says what to set).
    """

    def __init__(self, config: LLMConfig, *, sleep: Callable[[float], None] = time.sleep,
                 rng: random.Random | None = None) -> None:
        config.require_endpoint()
        self.config = config
        self._api = openai.OpenAI(base_url=config.base_url, api_key=config.api_key() or "not-needed",
                                  max_retries=0, timeout=config.timeout_s)
        self._sleep = sleep
        self._rng = rng or random.Random(0)
        self.run_spend = Spend()
        self.invocation_spend = Spend()
        self.disabled: str | None = None
        """The fatal error that disabled the client, if any."""
        self._emit: Emit | None = None
        self._transcript = Transcript(None)
        self._operator = ""
        self._invocation = 0
        self._logged = 0

    # ----------------------------------------------------------------- per invocation

    def begin(self, invocation: int, *, operator: str, emit: Emit | None = None,
              transcript: Transcript | None = None) -> None:
        """Start an invocation: reset its spend; record events with ``emit`` and lines in ``transcript``."""
        self._invocation = invocation
        self._operator = operator
        self._emit = emit
        self._transcript = transcript or Transcript(None)
        self.invocation_spend = Spend()
        self._logged = 0

    def stop_reason(self) -> str | None:
        """Why no further call may be made now (a spent budget, a fatal error), or None."""
        if self.disabled is not None:
            return f"LLM disabled for this run: {self.disabled}"
        budget = self.config.budget
        return self.run_spend.exhausted(budget.run, "run") or self.invocation_spend.exhausted(budget.invocation,
                                                                                             "invocation")

    # ----------------------------------------------------------------- the call

    def chat(self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None = None, *,
             tool_choice: str = "auto") -> ChatReply:
        """One model call (with retries) on ``messages`` offering ``tools`` (OpenAI function format).

        Raises:
            BudgetSpent: a budget was already spent (nothing is sent).
            LLMUnavailable: the call failed after retries, or fatally (see module docstring).
        """
        why = self.stop_reason()
        if why is not None:
            raise (LLMUnavailable(why, fatal=True) if self.disabled is not None else BudgetSpent(why))
        step = self.invocation_spend.steps + 1
        self._transcript.write({"type": "request", "invocation": self._invocation, "step": step,
                                "messages": list(messages[self._logged:]), "tools": [t["function"]["name"]
                                                                                     for t in tools or ()]})
        self._logged = len(messages)
        kwargs: dict[str, Any] = {"model": self.config.model, "messages": list(messages)}
        if tools:
            kwargs["tools"] = list(tools)
            kwargs["tool_choice"] = tool_choice
        if self.config.temperature is not None:
            kwargs["temperature"] = self.config.temperature
        if self.config.max_completion_tokens is not None:
            kwargs["max_tokens"] = self.config.max_completion_tokens
        retried: list[str] = []
        attempt = 0
        while True:
            attempt += 1
            started = time.monotonic()
            try:
                resp = self._api.chat.completions.create(**kwargs)
                latency = time.monotonic() - started
                break
            except openai.APIStatusError as exc:
                status = exc.status_code
                retryable = status in RETRY_STATUSES or status >= 500
                error = f"HTTP {status}: {_error_text(exc)}"
                if status in FATAL_STATUSES:
                    self.disabled = error
                    self._record_failure(step, attempt, retried, error, time.monotonic() - started)
                    raise LLMUnavailable(f"LLM endpoint refused the call ({error}); check "
                                         f"${self.config.api_key_env} and the model name", fatal=True) from None
                delay = _retry_after(exc) if retryable else None
            except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                retryable = True
                error = f"{'timeout' if isinstance(exc, openai.APITimeoutError) else 'connection error'}: {exc}"
                delay = None
            except Exception as exc:  # an SDK or decoding defect must end the invocation, not the run
                retryable = False
                error = f"{type(exc).__name__}: {exc}"
                delay = None
            if not retryable or attempt > self.config.max_retries:
                self._record_failure(step, attempt, retried, error, time.monotonic() - started)
                raise LLMUnavailable(f"LLM call failed after {attempt} attempt(s): {error}")
            retried.append(error.split(":", 1)[0])
            if delay is None:
                base = self.config.retry_backoff_s * 2 ** (attempt - 1)
                delay = base * self._rng.uniform(0.5, 1.0)
            self._sleep(min(delay, self.config.retry_backoff_max_s))
        return self._accept(resp, messages, step, attempt, retried, latency)

    def _accept(self, resp: Any, messages: Sequence[Message], step: int, attempt: int, retried: list[str],
                latency: float) -> ChatReply:
        choice = resp.choices[0] if getattr(resp, "choices", None) else None
        msg = choice.message if choice is not None else None
        content = (msg.content or "") if msg is not None else ""
        calls: list[ToolCallRequest] = []
        for i, tc in enumerate((msg.tool_calls or []) if msg is not None else []):
            fn = getattr(tc, "function", None)
            if fn is None:
                continue  # a custom (non-function) tool call: nothing here offers those
            calls.append(ToolCallRequest(tc.id or f"call_{step}_{i}", fn.name or "", fn.arguments or ""))
        message: Message = {"role": "assistant", "content": content or None}
        if calls:
            message["tool_calls"] = [{"id": c.id, "type": "function",
                                      "function": {"name": c.name, "arguments": c.arguments}} for c in calls]
        usage = getattr(resp, "usage", None)
        reported = getattr(usage, "prompt_tokens", None)
        estimated = reported is None
        if estimated:
            prompt_tokens = _estimate_tokens(list(messages))
            completion_tokens = _estimate_tokens(message)
        else:
            prompt_tokens = int(reported or 0)
            completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        price = self.config.price
        cost = price.cost(prompt_tokens, completion_tokens) if price is not None else 0.0
        tokens = prompt_tokens + completion_tokens
        self.invocation_spend.add(tokens, cost)
        self.run_spend.add(tokens, cost)
        finish = str(choice.finish_reason) if choice is not None and choice.finish_reason else "none"
        payload = {"model": self.config.model, "prompt_tokens": prompt_tokens,
                   "completion_tokens": completion_tokens, "tokens": tokens, "latency_s": round(latency, 3),
                   "cost_usd": round(cost, 8), "operator": self._operator, "invocation": self._invocation,
                   "step": step, "attempts": attempt, "retried": retried, "finish_reason": finish,
                   "tool_calls": len(calls), "estimated": estimated, "priced": price is not None, "error": None}
        if self._emit is not None:
            self._emit("llm.call", payload)
        self._transcript.write({"type": "response", "invocation": self._invocation, "step": step,
                                "message": message, "usage": {"prompt_tokens": prompt_tokens,
                                                              "completion_tokens": completion_tokens,
                                                              "estimated": estimated},
                                "cost_usd": payload["cost_usd"], "latency_s": payload["latency_s"],
                                "attempts": attempt, "retried": retried, "finish_reason": finish})
        return ChatReply(content, calls, finish, message, prompt_tokens, completion_tokens, cost, latency)

    def _record_failure(self, step: int, attempt: int, retried: list[str], error: str, latency: float) -> None:
        payload = {"model": self.config.model, "prompt_tokens": 0, "completion_tokens": 0, "tokens": 0,
                   "latency_s": round(latency, 3), "cost_usd": 0.0, "operator": self._operator,
                   "invocation": self._invocation, "step": step, "attempts": attempt, "retried": retried,
                   "finish_reason": "error", "tool_calls": 0, "estimated": False,
                   "priced": self.config.price is not None, "error": error[:500]}
        if self._emit is not None:
            self._emit("llm.call", payload)
        self._transcript.write({"type": "error", "invocation": self._invocation, "step": step, "error": error,
                                "attempts": attempt, "retried": retried})


def _error_text(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:300]
    return str(exc.message)[:300]


def usage_payload(*, model: str, prompt_tokens: int, completion_tokens: int, cost_usd: float, latency_s: float,
                  operator: str, invocation: int, **extra: Any) -> dict[str, Any]:
    """An ``llm.call`` payload for usage reported by an external harness (the tool server)."""
    return {"model": model, "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "tokens": prompt_tokens + completion_tokens, "latency_s": round(latency_s, 3),
            "cost_usd": round(cost_usd, 8), "operator": operator, "invocation": invocation, "reported": True,
            "error": None, **extra}


__all__ = ["BudgetSpent", "ChatReply", "LLMClient", "LLMStop", "LLMUnavailable", "Message", "Spend",
           "ToolCallRequest", "Transcript", "usage_payload"]

