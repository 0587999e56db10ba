"""An embedded PromQL evaluator with Prometheus 2.42 semantics over a time-grid storage.

Parsing is ``promql-parser``'s; :mod:`alerts.promql.engine` compiles its AST into nodes
and evaluates them over :class:`~alerts.promql.storage.Storage`.
"""

from __future__ import annotations

from alerts.promql.engine import DEFAULT_LOOKBACK_MS, CompileOptions, EvalContext, Node, compile_query, instant_query
from alerts.promql.labels import LabelTable, fingerprint, format_labels
from alerts.promql.storage import Storage, to_ms
from alerts.promql.values import Matrix, PromQLError, QueryError, UnsupportedError, Vector

__all__ = [
    "DEFAULT_LOOKBACK_MS",
    "CompileOptions",
    "EvalContext",
    "LabelTable",
    "Matrix",
    "Node",
    "PromQLError",
    "QueryError",
    "Storage",
    "UnsupportedError",
    "Vector",
    "compile_query",
    "fingerprint",
    "format_labels",
    "instant_query",
    "to_ms",
]
