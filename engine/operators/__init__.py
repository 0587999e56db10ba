"""Built-in operators: ``noop``, ``runbook`` (SRE-Marathon's Table 6) and ``oracle``.

Every operator implements :class:`engine.orchestrator.Operator`: ``invoke(inv)`` is
called every cadence with the cumulative alert history, the workspace and the tool box;
everything it does goes through the tools and the policy layer. LLM agents and external
harnesses plug in the same way.
"""

from __future__ import annotations

from engine.orchestrator import NoopOperator, Operator

BUILTIN = ("noop", "runbook", "oracle")
LLM_AGENTS = ("react", "rag", "orbit")
"""LLM agents (:mod:`engine.agents`), configured from ``$MARATHON_LLM_CONFIG`` and the environment here;
:func:`engine.agents.operator_from_args` also takes the ``--llm-*`` flags."""


def make_operator(name: str) -> Operator:
    """The built-in operator, or LLM agent, called ``name``.

    Raises:
        ValueError: unknown operator; for an LLM agent, no endpoint configured
            (:class:`engine.llm.config.LLMConfigError`, whose message says what to set).
    """
    if name in LLM_AGENTS:
        from engine.agents import make_agent

        return make_agent(name)
    if name == "noop":
        return NoopOperator()
    if name == "runbook":
        from engine.operators.runbook import RunbookOperator

        return RunbookOperator()
    if name == "oracle":
        from engine.operators.oracle import OracleOperator

        return OracleOperator()
    raise ValueError(f"unknown agent {name!r}; built-in agents: {', '.join(BUILTIN)}; LLM agents: "
                     f"{', '.join(LLM_AGENTS)}")
