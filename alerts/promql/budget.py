"""An estimate of a query's work, made before evaluating it, and the budget both query paths use.

Prometheus bounds every query by ``--query.max-samples`` (samples loaded at once, default
50,000,000) and a timeout. The embedded evaluator has no timeout that a replay could reproduce,
so it bounds queries it did not write itself -- the operator's ``query_metrics``
(:mod:`engine.operate.promquery`) and the ``query`` function of alert templates
(:mod:`alerts.evaluator`) -- by a deterministic estimate instead: :func:`estimate` walks the
compiled expression and counts the samples its selectors read and the evaluations its
subqueries multiply, and :func:`check_budget` refuses a query over :data:`MAX_SAMPLES` or
:data:`MAX_EVALUATIONS` with Prometheus' max-samples wording. The same query is refused the same
way on every run and every replay.
"""

from __future__ import annotations

import numpy as np

from alerts.promql.engine import AggregateNode, CallNode, MatrixSelectorNode, Node, SelectorNode, SubqueryNode
from alerts.promql.storage import Storage

Reach = tuple[int | None, int | None]
"""What a query reads back to: (ms before its evaluation time, the earliest pinned time in ms)."""

MAX_SAMPLES = 20_000_000
"""Samples a query may read (estimated). Below Prometheus' default ``--query.max-samples``
(50 M): measured on a Train Ticket run, a plain selector's 820,000 samples evaluate in 0.13 s,
so a query at this bound takes about 0.6 s on the 2-core reference machine."""
MAX_EVALUATIONS = 20_000
"""Evaluations of (sub)expressions a query may make: range steps x subquery steps."""
LABEL_WORK = 80
"""Weight of a sample under ``label_replace``, ``label_join`` or ``count_values``: they build
label sets in Python at every step (measured on a Train Ticket run: 470,000 samples through
``count_values`` took 1.4-2.3 s, against 0.1-0.25 s for a plain selector's 820,000, so at
this weight a label-building query at :data:`MAX_SAMPLES` takes about 1-2 s)."""
LABEL_FUNCTIONS = frozenset({"label_replace", "label_join"})
"""Functions whose samples weigh :data:`LABEL_WORK`."""


class BudgetExceeded(ValueError):
    """A query over the budget; the message says which bound and by how much."""


def rows_in(storage: Storage, range_ms: int) -> int:
    """An upper bound on the samples one series has in any window of ``range_ms``."""
    n = storage.n_rows
    if n <= 1:
        return n
    gap = int(np.min(np.diff(storage.ts[:n])))
    return min(n, range_ms // max(gap, 1) + 1)


def estimate(node: Node, storage: Storage, evaluations: int, default_step_ms: int) -> tuple[int, int]:
    """(samples read, expression evaluations) of evaluating ``node`` ``evaluations`` times.

    Selectors count their matching series (x the samples in their range for range
    selectors); a subquery multiplies the evaluations of its expression by its steps (its own
    step, else ``default_step_ms``, the evaluation interval); samples under a label-building
    function weigh :data:`LABEL_WORK` each. Shared subexpressions are counted at each occurrence
    (an over-estimate).
    """
    samples = 0
    evals = 0
    stack: list[tuple[Node, int, int]] = [(node, evaluations, 1)]
    while stack:
        n, k, weight = stack.pop()
        evals += k
        if isinstance(n, MatrixSelectorNode):
            samples += weight * k * int(n.selector.cols(storage).shape[0]) * rows_in(storage, n.range_ms)
            continue
        if isinstance(n, SelectorNode):
            samples += weight * k * int(n.cols(storage).shape[0])
            continue
        if isinstance(n, SubqueryNode):
            step = n.step_ms or default_step_ms
            stack.append((n.expr, k * (n.range_ms // max(step, 1) + 1), weight))
            continue
        if (isinstance(n, CallNode) and n.name in LABEL_FUNCTIONS) or \
                (isinstance(n, AggregateNode) and n.op == "count_values"):
            weight *= LABEL_WORK
        stack.extend((c, k, weight) for c in n.children())
    return samples, evals


def reach(node: Node, lookback_ms: int) -> Reach:
    """How far back evaluating ``node`` reads samples: ``(relative_ms, pinned_ms)``.

    ``relative_ms``: the most milliseconds before the evaluation time any read starts (an
    instant selector's offset plus the lookback, a range selector's offset plus its range, a
    subquery's offset plus its range plus what its expression reaches; negative for reads that
    only look ahead), or None when no read is relative to the evaluation time. For a range
    query, "the evaluation time" is its start (``@ start()`` and ``@ end()`` read at or after
    it). ``pinned_ms``: the earliest sample time read by selectors or subqueries pinned with
    ``@ <time>``, or None when there are none. A subquery's first step is aligned at or after
    its range's start, so the bound may be a step early, never late.

    Args:
        node: a compiled expression.
        lookback_ms: the instant-vector lookback, ms.
    """
    rel: int | None = None
    pinned: int | None = None

    def add(r: int | None, p: int | None) -> None:
        nonlocal rel, pinned
        if r is not None:
            rel = r if rel is None else max(rel, r)
        if p is not None:
            pinned = p if pinned is None else min(pinned, p)

    if isinstance(node, (SelectorNode, MatrixSelectorNode)):
        sel = node.selector if isinstance(node, MatrixSelectorNode) else node
        width = node.range_ms if isinstance(node, MatrixSelectorNode) else lookback_ms
        if sel.at is not None and sel.at[0] == "at":
            return None, sel.at[1] - sel.offset_ms - width
        return sel.offset_ms + width, None
    if isinstance(node, SubqueryNode):
        inner_rel, inner_pinned = reach(node.expr, lookback_ms)
        if node.at is not None and node.at[0] == "at":
            start = node.at[1] - node.offset_ms - node.range_ms
            add(None, None if inner_rel is None else start - inner_rel)
        else:
            add(None if inner_rel is None else node.offset_ms + node.range_ms + inner_rel, None)
        add(None, inner_pinned)
        return rel, pinned
    for child in node.children():
        add(*reach(child, lookback_ms))
    return rel, pinned


def earliest_read_ms(node: Node, start_ms: int, lookback_ms: int) -> int | None:
    """The earliest sample time (ms) evaluating ``node`` from ``start_ms`` on can read
    (:func:`reach`), or None when it reads no sample."""
    rel, pinned = reach(node, lookback_ms)
    times = [t for t in (None if rel is None else start_ms - rel, pinned) if t is not None]
    return min(times) if times else None


def check_budget(node: Node, storage: Storage, evaluations: int, default_step_ms: int, *, who: str) -> None:
    """Refuse ``node`` if its :func:`estimate` is over :data:`MAX_SAMPLES` or :data:`MAX_EVALUATIONS`.

    Args:
        who: the name the message gives the bound's owner (``query_metrics``, ``an alert template``).

    Raises:
        BudgetExceeded: over a bound; the message starts with Prometheus' ``query processing
            would load too many samples into memory in query execution``.
    """
    samples, evals = estimate(node, storage, evaluations, default_step_ms)
    if samples > MAX_SAMPLES:
        raise BudgetExceeded(f"query processing would load too many samples into memory in query execution "
                             f"(an estimated {samples:,}; {who} allows {MAX_SAMPLES:,}): narrow the selector, "
                             "the range or the subquery")
    if evals > MAX_EVALUATIONS:
        raise BudgetExceeded(f"query processing would take too many steps (an estimated {evals:,} evaluations "
                             f"including subquery steps; {who} allows {MAX_EVALUATIONS:,}): raise the step or the "
                             "subquery resolution, or shorten the range")
