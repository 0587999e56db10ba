"""Built-in operators: ``noop``, ``runbook`` (SRE-Marathon's Table 6) and ``oracle``; scripted adversaries.

Every operator implements :class:`engine.run.orchestrator.Operator`: ``invoke(inv)`` is
called every cadence with the cumulative alert history, the workspace and the tool box;
everything it does goes through the tools and the policy layer. LLM agents and external
harnesses plug in the same way.

The scripted adversaries (:mod:`engine.operate.operators.adversaries`) are the ways a lazy or
adversarial operator would game the score; ``marathon validate`` runs them by name and
checks none earns anything. ``one-per-fault`` is the reference it holds alert-spam to (it
reads ground truth, so, like the oracle, it never belongs on a leaderboard).
"""

from __future__ import annotations

from collections.abc import Callable

from engine.run.orchestrator import NoopOperator, Operator

BUILTIN = ("noop", "runbook", "oracle")
ADVERSARIES = ("alert-spam", "lump-all", "claim-only", "scale-to-zero", "restart-everything",
               "rollback-everything", "random-act")
"""Scripted adversaries (:mod:`engine.operate.operators.adversaries`): none may earn score."""
REFERENCE_OPERATORS = ("one-per-fault",)
"""Reference operators validation compares adversaries with; they read ground truth (so they are in
:data:`engine.run.orchestrator.GROUND_TRUTH_OPERATORS`, never ranked)."""
SCRIPTED_OPERATORS = BUILTIN + ADVERSARIES + REFERENCE_OPERATORS
"""Operators whose decisions are deterministic code: ``marathon verify --replay`` re-executes them
(not their recorded calls), so a run relabelled as another operator's does not replay."""
LLM_AGENTS = ("react", "rag", "orbit")
"""LLM agents (:mod:`engine.operate.agents`), configured from ``$MARATHON_LLM_CONFIG`` and the environment here;
:func:`engine.operate.agents.operator_from_args` also takes the ``--llm-*`` flags."""


def make_operator(name: str) -> Operator:
    """The built-in operator, scripted adversary, reference operator or LLM agent called ``name``.

    Raises:
        ValueError: unknown operator; for an LLM agent, no endpoint configured
            (:class:`engine.operate.llm.config.LLMConfigError`, whose message says what to set).
    """
    if name in LLM_AGENTS:
        from engine.operate.agents import make_agent

        return make_agent(name)
    if name == "noop":
        return NoopOperator()
    if name == "runbook":
        from engine.operate.operators.runbook import RunbookOperator

        return RunbookOperator()
    if name == "oracle":
        from engine.operate.operators.oracle import OracleOperator

        return OracleOperator()
    if name in ADVERSARIES or name in REFERENCE_OPERATORS:
        from engine.operate.operators import adversaries

        factories: dict[str, Callable[[], Operator]] = {
            "alert-spam": adversaries.AlertSpamOperator,
            "lump-all": adversaries.LumpAllOperator,
            "claim-only": adversaries.ClaimOnlyOperator,
            "scale-to-zero": adversaries.ScaleToZeroOperator,
            "restart-everything": adversaries.RestartEverythingOperator,
            "rollback-everything": adversaries.RollbackEverythingOperator,
            "random-act": adversaries.RandomActOperator,
            "one-per-fault": adversaries.OnePerFaultOperator,
        }
        return factories[name]()
    raise ValueError(f"unknown agent {name!r}; built-in agents: {', '.join(BUILTIN)}; adversaries: "
                     f"{', '.join(ADVERSARIES)}; reference operators: {', '.join(REFERENCE_OPERATORS)}; "
                     f"LLM agents: {', '.join(LLM_AGENTS)}")
