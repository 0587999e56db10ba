"""``react``: a reason-act loop over the operator tools (Yao et al., "ReAct", ICLR 2023).

Each invocation the model reads the new and the pending/firing alerts, its own incidents
and the tail of its notes file, then calls tools -- read, report, act, workspace -- one
step at a time until it calls ``end_invocation`` (whose note is appended to ``notes.md``),
a budget is spent or the run ends. Everything is :class:`engine.operate.agents.base.LLMAgent`;
this module only names the agent and its prompt (``prompts/react.md``).
"""

from __future__ import annotations

from typing import ClassVar

from engine.operate.agents.base import LLMAgent


class ReactAgent(LLMAgent):
    """See module docstring."""

    agent: ClassVar[str] = "react"
    prompt_file: ClassVar[str] = "react.md"
