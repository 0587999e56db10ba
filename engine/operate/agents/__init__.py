"""LLM agents over the operator tools (DESIGN section 7).

* ``react`` (:mod:`engine.operate.agents.react`): a reason-act loop with notes in its workspace;
* ``rag`` (:mod:`engine.operate.agents.rag`): the same, plus BM25 retrieval from runbooks and its
  own past incidents;
* ``orbit`` (:mod:`engine.operate.agents.orbit`): incident merging and report publication are
  deterministic code; the model only investigates and concludes.

System prompts are files in ``prompts/``, copied into each run's ``prompts/`` directory.
Agents are built by name through the one operator registry,
:func:`engine.operate.operators.make_operator` (``llm_config=``, ``client=``), or from parsed
``--agent``/``--llm-*`` flags with :func:`engine.operate.operators.operator_from_args`.
"""
