"""LLM endpoint configuration: a file, environment variables and flags, in that order.

A configuration names an OpenAI-compatible endpoint (``base_url``, which serves
``POST {base_url}/chat/completions``), a ``model``, the *name* of the environment variable
holding the API key (the key itself never appears in a file, a flag or a bundle), a price
table in US dollars per million prompt/completion tokens, retry and timeout settings, and
budgets per invocation and per run.

File (TOML, or YAML with the same keys; every key optional)::

    base_url = "http://127.0.0.1:11434/v1"     # Ollama; vLLM/llama.cpp: http://HOST:PORT/v1
    model = "qwen2.5:7b-instruct"
    api_key_env = "OPENAI_API_KEY"              # variable to read the key from
    label = "qwen7b"                            # operator name becomes react-qwen7b
    timeout_s = 120                             # per request, seconds
    max_retries = 4                             # on 429, 5xx, timeouts and connection errors
    retry_backoff_s = 1.0                       # first back-off; doubles, capped at retry_backoff_max_s
    retry_backoff_max_s = 30.0
    temperature = 0.0
    max_completion_tokens = 1024
    max_tool_output_chars = 6000                # tool output shown to the model, characters

    [prices]                                    # USD per 1M tokens, by model name
    "gpt-4o-mini" = { prompt = 0.15, completion = 0.60 }

    [budget.invocation]                         # ends one invocation cleanly when spent
    steps = 12                                  # model calls
    tokens = 60000
    usd = 0.05

    [budget.run]                                # ends every later invocation at once
    usd = 2.0

Precedence: built-in defaults < the file (``--llm-config`` or ``$MARATHON_LLM_CONFIG``) <
environment (``MARATHON_LLM_BASE_URL``, ``MARATHON_LLM_MODEL``, ``MARATHON_LLM_API_KEY_ENV``;
``OPENAI_BASE_URL`` when no base URL is set anywhere else) < flags (:func:`add_llm_arguments`).

Errors: :class:`LLMConfigError`, whose message names the file, the field and what to set.
"""

from __future__ import annotations

import argparse
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from engine.inputs.safeyaml import YamlInputError, parse_yaml, read_text

ENV_CONFIG = "MARATHON_LLM_CONFIG"
ENV_BASE_URL = "MARATHON_LLM_BASE_URL"
ENV_MODEL = "MARATHON_LLM_MODEL"
ENV_API_KEY_ENV = "MARATHON_LLM_API_KEY_ENV"
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
PER_TOKENS = 1_000_000
"""Prices are quoted per this many tokens (the providers' convention)."""


class LLMConfigError(ValueError):
    """A configuration that cannot be used; the message says what to set."""


class Price(BaseModel):
    """US dollars per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)
    prompt: float = Field(default=0.0, ge=0)
    completion: float = Field(default=0.0, ge=0)

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        """Dollars for one call's tokens."""
        return (prompt_tokens * self.prompt + completion_tokens * self.completion) / PER_TOKENS


class Budget(BaseModel):
    """Limits on model calls (``steps``), tokens (prompt + completion) and dollars; None: unlimited."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)
    steps: int | None = Field(default=None, ge=1)
    tokens: int | None = Field(default=None, ge=1)
    usd: float | None = Field(default=None, gt=0)


class Budgets(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    invocation: Budget = Budget(steps=12)
    run: Budget = Budget()


class LLMConfig(BaseModel):
    """A resolved configuration (module docstring).

    ``base_url`` and ``model`` may be empty here; :meth:`require_endpoint` says what to set.
    """

    # strict: "3" is not an int nor "false" a bool; NaN and infinities are no setting.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)
    base_url: str = ""
    model: str = ""
    api_key_env: str = DEFAULT_API_KEY_ENV
    label: str | None = Field(default=None, pattern=r"^[A-Za-z0-9._-]{1,40}$")
    timeout_s: float = Field(default=120.0, gt=0, le=3600)
    max_retries: int = Field(default=4, ge=0, le=20)
    retry_backoff_s: float = Field(default=1.0, ge=0, le=3600)
    retry_backoff_max_s: float = Field(default=30.0, ge=0, le=3600)
    temperature: float | None = Field(default=0.0, ge=0, le=2)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    max_tool_output_chars: int = Field(default=6000, ge=200)
    prices: dict[str, Price] = Field(default_factory=dict)
    budget: Budgets = Budgets()

    @property
    def price(self) -> Price | None:
        """The configured model's price, or None when the table does not list it."""
        return self.prices.get(self.model)

    def api_key(self) -> str | None:
        """The API key from the environment variable :attr:`api_key_env` (None when unset)."""
        value = os.environ.get(self.api_key_env, "")
        return value or None

    def require_endpoint(self, agent: str = "the LLM agent") -> None:
        """Raise :class:`LLMConfigError` with what to set unless a base URL and a model are configured."""
        missing = [what for what, value in (("an endpoint", self.base_url), ("a model", self.model)) if not value]
        if not missing:
            parts = urlsplit(self.base_url)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise LLMConfigError(f"LLM base URL {self.base_url!r} is not an http(s) URL; set --llm-base-url "
                                     "(or MARATHON_LLM_BASE_URL) to e.g. http://127.0.0.1:11434/v1")
            return
        raise LLMConfigError(
            f"{agent} needs {' and '.join(missing)} of an OpenAI-compatible chat-completions API. Set:\n"
            f"  --llm-base-url URL   (or ${ENV_BASE_URL}, or $OPENAI_BASE_URL, or base_url in --llm-config FILE)\n"
            f"  --llm-model NAME     (or ${ENV_MODEL}, or model in the file)\n"
            f"and put the API key in ${self.api_key_env} (choose the variable with --llm-api-key-env; local "
            "servers need none).\n"
            "Examples: --llm-base-url https://api.openai.com/v1 --llm-model gpt-4o-mini;  "
            "--llm-base-url http://127.0.0.1:11434/v1 --llm-model qwen2.5:7b-instruct (Ollama)")

    def public(self) -> dict[str, Any]:
        """The configuration as recorded in a bundle: no key, and no credentials in the URL."""
        data = self.model_dump(mode="json")
        data["base_url"] = _strip_userinfo(self.base_url)
        return data


def _strip_userinfo(url: str) -> str:
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The raw mapping of a TOML (``.toml``) or YAML (anything else) configuration file.

    Raises:
        LLMConfigError: missing, unreadable or not a mapping (names the file).
    """
    p = Path(path)
    try:
        text = read_text(p)
    except OSError as exc:
        raise LLMConfigError(f"{p}: cannot read the LLM configuration ({exc.strerror or exc})") from None
    except YamlInputError as exc:
        raise LLMConfigError(f"{p}: {exc.problem}") from None
    try:
        data = tomllib.loads(text) if p.suffix == ".toml" else parse_yaml(text)
    except YamlInputError as exc:
        raise LLMConfigError(f"{p}: {exc.where}: {exc.problem}") from None
    except (tomllib.TOMLDecodeError, RecursionError, ValueError) as exc:
        raise LLMConfigError(f"{p}: not valid TOML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise LLMConfigError(f"{p}: the LLM configuration must be a mapping of keys, not {type(data).__name__}")
    return data


def load_llm_config(path: str | Path | None = None, overrides: Mapping[str, Any] | None = None,
                    env: Mapping[str, str] | None = None) -> LLMConfig:
    """Resolve a configuration from a file, the environment and overrides (module docstring).

    Args:
        path: the file (None: ``$MARATHON_LLM_CONFIG`` when set, else none).
        overrides: keys of :class:`LLMConfig` from flags; None values are ignored. ``price``
            (a :class:`Price` or mapping) sets the price of the resolved model.
        env: the environment (default ``os.environ``).

    Raises:
        LLMConfigError: unreadable file, unknown key, or a value out of range (names the
            file or flag and the field).
    """
    env = os.environ if env is None else env
    source = "configuration"
    data: dict[str, Any] = {}
    path = path or env.get(ENV_CONFIG) or None
    if path is not None:
        data = read_config_file(path)
        source = str(path)
    for key, var in (("base_url", ENV_BASE_URL), ("model", ENV_MODEL), ("api_key_env", ENV_API_KEY_ENV)):
        if env.get(var):
            data[key] = env[var]
    if not data.get("base_url") and env.get("OPENAI_BASE_URL"):
        data["base_url"] = env["OPENAI_BASE_URL"]
    price_override = None
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key == "price":
            price_override = value
        elif key in ("budget_invocation", "budget_run"):
            budget = dict(data.get("budget") or {})
            which = key.split("_", 1)[1]
            budget[which] = {**dict(budget.get(which) or {}), **dict(value)}
            data["budget"] = budget
        else:
            data[key] = value
    try:
        cfg = LLMConfig.model_validate(data)
        if price_override is not None:
            price = price_override if isinstance(price_override, Price) else Price.model_validate(price_override)
            cfg = cfg.model_copy(update={"prices": {**cfg.prices, cfg.model: price}})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'root'}: {e['msg']}" for e in exc.errors())
        raise LLMConfigError(f"{source}: invalid LLM configuration: {problems}") from None
    return cfg


def parse_budget(text: str) -> dict[str, float | int]:
    """argparse type for ``steps=12,tokens=60000,usd=0.05`` (any subset).

    Raises:
        argparse.ArgumentTypeError: an unknown key or a value that is not a number.
    """
    out: dict[str, float | int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in ("steps", "tokens", "usd"):
            raise argparse.ArgumentTypeError(f"invalid budget {part!r}: use steps=N, tokens=N and/or usd=X")
        try:
            out[key] = float(value) if key == "usd" else int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid budget {part!r}: {value!r} is not a number") from None
    return out


def add_llm_arguments(p: argparse.ArgumentParser) -> None:
    """Add the ``--llm-*`` flags (used by ``marathon run``/``watch`` with an LLM agent)."""
    g = p.add_argument_group("LLM agents (react, rag, orbit)")
    g.add_argument("--llm-config", metavar="FILE", help=f"TOML/YAML LLM configuration (default ${ENV_CONFIG})")
    g.add_argument("--llm-base-url", metavar="URL",
                   help="OpenAI-compatible API base, e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1")
    g.add_argument("--llm-model", metavar="NAME", help="model name sent to the API")
    g.add_argument("--llm-api-key-env", metavar="VAR",
                   help=f"environment variable holding the API key (default {DEFAULT_API_KEY_ENV})")
    g.add_argument("--llm-price-prompt", type=float, metavar="USD", help="USD per 1M prompt tokens for the model")
    g.add_argument("--llm-price-completion", type=float, metavar="USD",
                   help="USD per 1M completion tokens for the model")
    g.add_argument("--llm-budget-invocation", type=parse_budget, metavar="SPEC",
                   help="per-invocation budget, e.g. steps=12,tokens=60000,usd=0.05")
    g.add_argument("--llm-budget-run", type=parse_budget, metavar="SPEC", help="per-run budget, e.g. usd=2")
    g.add_argument("--llm-timeout", type=float, metavar="S", help="per-request timeout, seconds")
    g.add_argument("--llm-max-retries", type=int, metavar="N", help="retries on 429, 5xx and timeouts")
    g.add_argument("--llm-label", metavar="TEXT", help="suffix of the operator name (react-TEXT) on the leaderboard")


def config_from_args(args: argparse.Namespace) -> LLMConfig:
    """The configuration the ``--llm-*`` flags (and file, environment) describe.

    Raises:
        LLMConfigError: see :func:`load_llm_config`.
    """
    price = None
    pp, pc = getattr(args, "llm_price_prompt", None), getattr(args, "llm_price_completion", None)
    if pp is not None or pc is not None:
        price = {"prompt": pp or 0.0, "completion": pc or 0.0}
    overrides = {
        "base_url": getattr(args, "llm_base_url", None),
        "model": getattr(args, "llm_model", None),
        "api_key_env": getattr(args, "llm_api_key_env", None),
        "timeout_s": getattr(args, "llm_timeout", None),
        "max_retries": getattr(args, "llm_max_retries", None),
        "label": getattr(args, "llm_label", None),
        "budget_invocation": getattr(args, "llm_budget_invocation", None),
        "budget_run": getattr(args, "llm_budget_run", None),
        "price": price,
    }
    return load_llm_config(getattr(args, "llm_config", None), overrides)
