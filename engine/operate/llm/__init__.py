"""LLM access for the agents: an OpenAI-compatible chat-completions client with tool calling.

* :mod:`engine.operate.llm.config` -- endpoint, model, API-key variable, price table, budgets and
  retry policy, from a TOML/YAML file, environment variables and command-line flags;
* :mod:`engine.operate.llm.client` -- the client: retries with back-off, per-invocation and per-run
  budgets, every call recorded as an ``llm.call`` event and into the run's transcript.

The same client talks to hosted APIs and local servers (vLLM, Ollama, llama.cpp): all it
needs is a base URL that serves ``POST {base_url}/chat/completions``.
"""

from __future__ import annotations
