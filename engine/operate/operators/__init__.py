"""The operator registry: every operator a run can be given, by name, in one table.

* built-in: ``noop``, ``runbook`` (SRE-Marathon's Table 6) and ``oracle``;
* scripted adversaries (:mod:`engine.operate.operators.adversaries`): the ways a lazy or
  adversarial operator would game the score; ``marathon validate`` runs them by name and
  checks none earns anything;
* the reference ``one-per-fault``, which validation holds alert-spam to;
* LLM agents (:mod:`engine.operate.agents`): ``react``, ``rag``, ``orbit``.

Every operator implements :class:`engine.operate.invocation.Operator`: ``invoke(inv)`` is
called every cadence with the operator's view of the run; everything it does goes through
the tools and the policy layer. Those marked ``ground truth`` (the oracle and
``one-per-fault``) also receive the run's fault records through
:attr:`engine.operate.invocation.Invocation.truth`; their runs are marked ``"oracle": true``
and never ranked. External harnesses plug in through ``marathon serve``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.operate.invocation import NoopOperator, Operator

if TYPE_CHECKING:
    from engine.operate.llm.client import LLMClient
    from engine.operate.llm.config import LLMConfig


@dataclass(frozen=True)
class OperatorEntry:
    """One registered operator.

    Attributes:
        name: the ``--agent`` name.
        kind: ``builtin``, ``adversary``, ``reference`` or ``llm``.
        summary: one line for ``--help`` and listings.
        ground_truth: receives :attr:`~engine.operate.invocation.Invocation.truth` (never ranked).
    """

    name: str
    kind: str
    summary: str
    ground_truth: bool = False


OPERATORS: dict[str, OperatorEntry] = {e.name: e for e in (
    OperatorEntry("noop", "builtin", "does nothing: the baseline every fault must fail against"),
    OperatorEntry("runbook", "builtin", "SRE-Marathon's Table 6 runbook, as deterministic code"),
    OperatorEntry("oracle", "builtin", "reads ground truth and applies each fault's reference remedy",
                  ground_truth=True),
    OperatorEntry("alert-spam", "adversary", "one incident per alert instance, each with an RCA from its labels"),
    OperatorEntry("lump-all", "adversary", "one incident holding every alert so far; RCAs rotate over workloads"),
    OperatorEntry("claim-only", "adversary", "runbook-style incidents and RCAs, each resolved at once; never acts"),
    OperatorEntry("scale-to-zero", "adversary", "scales every alerting Deployment to zero, resolves a minute later"),
    OperatorEntry("restart-everything", "adversary",
                  "restarts every pod of every Deployment, round-robin, at the policy limit"),
    OperatorEntry("rollback-everything", "adversary",
                  "rolls back every Deployment, round-robin, each at most once per 10 min"),
    OperatorEntry("random-act", "adversary", "runbook-style incidents, then 1-3 seeded random acts per invocation"),
    OperatorEntry("one-per-fault", "reference", "one incident per fault from ground truth (alert-spam's reference)",
                  ground_truth=True),
    OperatorEntry("react", "llm", "LLM: a reason-act loop with notes in its workspace"),
    OperatorEntry("rag", "llm", "LLM: react plus BM25 retrieval from runbooks and past incidents"),
    OperatorEntry("orbit", "llm", "LLM: deterministic incident merging; the model investigates and concludes"),
)}
"""Every operator by name (module docstring)."""


def _names(kind: str) -> tuple[str, ...]:
    return tuple(name for name, entry in OPERATORS.items() if entry.kind == kind)


BUILTIN = _names("builtin")
ADVERSARIES = _names("adversary")
"""Scripted adversaries (:mod:`engine.operate.operators.adversaries`): none may earn score."""
REFERENCE_OPERATORS = _names("reference")
"""Reference operators validation compares adversaries with; they read ground truth, never ranked."""
LLM_AGENTS = _names("llm")
"""LLM agents (:mod:`engine.operate.agents`), configured from ``$MARATHON_LLM_CONFIG`` and the environment,
or from the ``--llm-*`` flags (:func:`operator_from_args`)."""
SCRIPTED_OPERATORS = BUILTIN + ADVERSARIES + REFERENCE_OPERATORS
"""Operators whose decisions are deterministic code: ``marathon verify --replay`` re-executes them
(not their recorded calls), so a run relabelled as another operator's does not replay."""
GROUND_TRUTH_OPERATORS = tuple(name for name, entry in OPERATORS.items() if entry.ground_truth)
"""Operators that receive the run's ground truth: their runs are marked ``"oracle": true``."""


def _scripted(name: str) -> Operator:
    if name == "noop":
        return NoopOperator()
    if name == "runbook":
        from engine.operate.operators.runbook import RunbookOperator

        return RunbookOperator()
    if name == "oracle":
        from engine.operate.operators.oracle import OracleOperator

        return OracleOperator()
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


def _agent(name: str, config: LLMConfig | None, client: LLMClient | None) -> Operator:
    from engine.operate.llm.config import load_llm_config

    config = config or load_llm_config()
    if name == "react":
        from engine.operate.agents.react import ReactAgent

        return ReactAgent(config, client=client)
    if name == "rag":
        from engine.operate.agents.rag import RagAgent

        return RagAgent(config, client=client)
    from engine.operate.agents.orbit import OrbitAgent

    return OrbitAgent(config, client=client)


def make_operator(name: str, *, llm_config: LLMConfig | None = None, client: LLMClient | None = None) -> Operator:
    """The operator registered as ``name`` (:data:`OPERATORS`).

    Args:
        name: a registered name.
        llm_config: for an LLM agent, its configuration (default: from ``$MARATHON_LLM_CONFIG``
            and the environment).
        client: for an LLM agent, a ready client (default: one built from the configuration).

    Raises:
        ValueError: unknown operator; for an LLM agent, no endpoint configured
            (:class:`engine.operate.llm.config.LLMConfigError`, whose message says what to set).
    """
    entry = OPERATORS.get(name)
    if entry is None:
        groups = [("built-in agents", BUILTIN), ("adversaries", ADVERSARIES),
                  ("reference operators", REFERENCE_OPERATORS), ("LLM agents", LLM_AGENTS)]
        raise ValueError(f"unknown agent {name!r}; " + "; ".join(f"{title}: {', '.join(names)}"
                                                                 for title, names in groups))
    if entry.kind == "llm":
        return _agent(name, llm_config, client)
    return _scripted(name)


def operator_from_args(args: argparse.Namespace) -> Operator:
    """The operator ``--agent`` names, an LLM agent configured by the ``--llm-*`` flags
    (:func:`engine.operate.llm.config.add_llm_arguments`).

    Raises:
        ValueError: unknown agent, or (LLMConfigError) an unusable LLM configuration.
    """
    name = str(getattr(args, "agent", "noop"))
    config: Any = None
    if name in LLM_AGENTS:
        from engine.operate.llm.config import config_from_args

        config = config_from_args(args)
    return make_operator(name, llm_config=config)
