"""LLM agents over the operator tools (DESIGN section 7).

* ``react`` (:mod:`engine.operate.agents.react`): a reason-act loop with notes in its workspace;
* ``rag`` (:mod:`engine.operate.agents.rag`): the same, plus BM25 retrieval from runbooks and its
  own past incidents;
* ``orbit`` (:mod:`engine.operate.agents.orbit`): incident merging and report publication are
  deterministic code; the model only investigates and concludes.

System prompts are files in ``prompts/``, copied into each run's ``prompts/`` directory.
Build one with :func:`make_agent`, or from parsed ``--agent``/``--llm-*`` flags with
:func:`operator_from_args`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from engine.operate.llm.config import LLMConfig, config_from_args, load_llm_config

if TYPE_CHECKING:
    from engine.operate.agents.base import LLMAgent
    from engine.operate.llm.client import LLMClient
    from engine.run.orchestrator import Operator

AGENTS = ("react", "rag", "orbit")


def make_agent(name: str, config: LLMConfig | None = None, *, client: LLMClient | None = None) -> LLMAgent:
    """The LLM agent called ``name``.

    Args:
        name: one of :data:`AGENTS`.
        config: the LLM configuration (default: from ``$MARATHON_LLM_CONFIG`` and the environment).
        client: a ready client (default: one built from ``config``).

    Raises:
        ValueError: unknown agent.
        LLMConfigError: no endpoint or model configured; the message says what to set.
    """
    if name not in AGENTS:
        raise ValueError(f"unknown LLM agent {name!r}; LLM agents: {', '.join(AGENTS)}")
    config = config or load_llm_config()
    if name == "react":
        from engine.operate.agents.react import ReactAgent

        return ReactAgent(config, client=client)
    if name == "rag":
        from engine.operate.agents.rag import RagAgent

        return RagAgent(config, client=client)
    from engine.operate.agents.orbit import OrbitAgent

    return OrbitAgent(config, client=client)


def operator_from_args(args: argparse.Namespace) -> Operator:
    """The operator ``--agent`` names: an LLM agent configured by the ``--llm-*`` flags
    (:func:`engine.operate.llm.config.add_llm_arguments`), or a built-in operator.

    Raises:
        ValueError: unknown agent, or (LLMConfigError) an unusable LLM configuration.
    """
    name = str(getattr(args, "agent", "noop"))
    if name in AGENTS:
        return make_agent(name, config_from_args(args))
    from engine.operate.operators import make_operator

    return make_operator(name)
