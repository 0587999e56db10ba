"""The embedded alert evaluator: Prometheus 2.42 rule evaluation on the virtual clock.

:class:`AlertEvaluator` holds a :class:`~alerts.promql.storage.Storage` fed with scrapes
(:meth:`~AlertEvaluator.ingest` takes the simulator's
:class:`~alerts.series.Scrape` objects, :meth:`~AlertEvaluator.ingest_samples` any
``(labels, value)`` source) and evaluates rule groups at run times the caller chooses --
every ``interval_s`` (15 s, Prometheus' default evaluation interval) through
:meth:`~AlertEvaluator.step`. Each evaluation returns the :class:`AlertTransition` list
of that time.

Alerting semantics are those of ``rules/alerting.go`` (v2.42.0): an alert becomes
``pending`` when its expression returns the label set, ``firing`` once it has been
active for ``for``, stays firing ``keep_firing_for`` after the expression stops
returning it, and is then ``resolved``; a pending alert that disappears goes back to
``inactive`` without ever firing. Alert labels are the expression's labels (without
``__name__``) plus the templated rule labels plus ``alertname``; templates see the
sample's labels with ``__name__`` where the expression keeps it (``up == 0``); annotations
are re-templated at every evaluation. Like a running Prometheus (and ``promtool test
rules``), every evaluation writes ``ALERTS{alertstate=...}`` and ``ALERTS_FOR_STATE``
samples, and recording rules write their series, so later rules can read them.

Transitions: ``inactive -> pending`` for a new alert, ``pending -> firing``,
``pending -> inactive`` (cleared before ``for``), ``firing -> resolved``. An alert
with ``for: 0`` reports ``inactive -> pending`` and ``pending -> firing`` at the same
time, so every firing is preceded by a pending event.

Rule health: like Prometheus' ``SetHealth``/``SetLastError``, every evaluation of every rule
records whether it worked (:mod:`alerts.health`); a rule whose query fails (a PromQL runtime
error such as ``found duplicate series for the match group``, or output label sets that
collide) leaves its alerts as they were and writes nothing. A rule over its group's ``limit``
fails with Prometheus' error (``exceeded limit of N with M alerts`` / ``... series``) and
writes nothing; an alerting rule also drops its alerts (:meth:`AlertEvaluator._drop_alerts`).
:meth:`AlertEvaluator.rule_health` is the rules page;
:meth:`AlertEvaluator.take_rule_health_changes` the changes (to ``err``, back to ``ok``, a new
error text) since it was last called.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from alerts.health import RuleHealth, RuleHealthChange, RuleHealthTracker
from alerts.history import AlertHistory
from alerts.promql.budget import check_budget, earliest_read_ms, reach
from alerts.promql.engine import EvalContext, compile_query
from alerts.promql.labels import METRIC_NAME, LabelTable, fingerprint, has_duplicates
from alerts.promql.storage import FloatArray, IntArray, Storage, to_ms
from alerts.promql.values import PromQLError, QueryError, Vector
from alerts.rules import Rule, RuleSet, load_pack, load_rule_file
from alerts.templates import QueryFunc, TemplateData

if TYPE_CHECKING:
    from alerts.series import Scrape, SeriesInfo, SeriesStore

_Fresh = dict[str, tuple[dict[str, str], dict[str, str], float]]
"""Alerts of one query result by fingerprint: (alert labels, annotations, value)."""

_MEMO_LIMIT = 4096
"""Entries kept per rule in each template/series memo before it is cleared."""

QUERY_RETENTION_S = 3600.0
"""History kept behind the latest evaluation for queries the rules do not make themselves
(``query_metrics``, templates' ``query``), seconds: one hour, the longest window the paper
pack's rules read (``[1h]``). A Prometheus keeps its ``--storage.tsdb.retention.time`` (15 days
by default), so it would hold a whole run; a run keeps this much so that its memory does not grow
with its length (issue 17). A query reaching a sample time that was dropped is refused with a message
naming the oldest time kept (:meth:`AlertEvaluator.retained_from`)."""

RESOLVED_RETENTION_S = 900.0
"""alerting.go ``resolvedRetention``: a resolved alert is kept 15 minutes."""

MAX_TEMPLATE_CHARS = 4096
"""Longest expanded label or annotation a run keeps, characters. Prometheus sets no bound; an
alert's text reaches every event, bundle and agent prompt, so a run cuts a longer one (a real
Alertmanager receiver cuts too: Slack at 3,000 characters of a field, PagerDuty at 1,024 of a
summary). Real rule packs stay far below: the longest annotation template of the shipped packs is 374
characters."""


def _setdiff(a: IntArray, b: IntArray) -> IntArray:
    """``np.setdiff1d(a, b)`` (sorted unique values of ``a`` not in ``b``) by sorting, which
    is faster than ``np.unique``'s hashing for these small arrays."""
    if a.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    sa = np.sort(a)
    sa = sa[np.concatenate(([True], sa[1:] != sa[:-1]))]
    if b.shape[0] == 0:
        return sa
    sb = np.sort(b)
    pos = np.minimum(np.searchsorted(sb, sa), sb.shape[0] - 1)
    out: IntArray = sa[sb[pos] != sa]
    return out


@dataclass(frozen=True)
class AlertTransition:
    """One state change of one alert.

    Attributes:
        rule: alert name; group: its rule group.
        labels: the alert's labels (``alertname`` included).
        fingerprint: Alertmanager fingerprint of ``labels`` (16 hex digits).
        from_state, to_state: ``inactive``, ``pending``, ``firing`` or ``resolved``.
        t: run time of the evaluation, seconds.
        value: the expression's value for this alert at that evaluation (the last one
            seen, for ``resolved``/``inactive``).
        annotations: templated annotations at that evaluation.
        active_at: when the alert became pending, seconds.
    """

    rule: str
    group: str
    labels: dict[str, str]
    fingerprint: str
    from_state: str
    to_state: str
    t: float
    value: float
    annotations: dict[str, str]
    active_at: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (NaN/Inf values become strings, as Prometheus' API writes them)."""
        return {"rule": self.rule, "group": self.group, "labels": dict(self.labels), "fingerprint": self.fingerprint,
                "from_state": self.from_state, "to_state": self.to_state, "t": self.t,
                "value": self.value if math.isfinite(self.value) else str(self.value),
                "annotations": dict(self.annotations), "active_at": self.active_at}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> AlertTransition:
        return cls(str(d["rule"]), str(d.get("group", "")), dict(d["labels"]), str(d["fingerprint"]),
                   str(d["from_state"]), str(d["to_state"]), float(d["t"]), float(d["value"]),
                   dict(d.get("annotations", {})), float(d.get("active_at", d["t"])))


@dataclass
class _Alert:
    labels: dict[str, str]
    fingerprint: str
    annotations: dict[str, str]
    value: float
    active_at_ms: int
    state: str = "pending"
    fired_at_ms: int | None = None
    resolved_at_ms: int | None = None
    keep_firing_since_ms: int | None = None


@dataclass
class _RuleState:
    rule: Rule
    active: dict[str, _Alert] = field(default_factory=dict)
    series: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """Label-set ids this rule wrote at its last evaluation (for staleness markers)."""
    plans: dict[bytes, Any] = field(default_factory=dict)
    """Cached output label sets and storage columns, keyed by input label-set ids."""
    last_error: str | None = None
    last_eval_ms: int | None = None
    label_memo: dict[Any, tuple[dict[str, str], dict[str, str], str]] = field(default_factory=dict)
    """(labels, alert labels, fingerprint) per label-set id (and value, when label templates read it)."""
    annotation_memo: dict[Any, dict[str, str]] = field(default_factory=dict)
    """Expanded annotations per label-set id (and value, when annotation templates read it)."""
    static_annotation_memo: dict[int, dict[str, str]] = field(default_factory=dict)
    """The annotations whose templates do not read the value, per label-set id."""
    series_memo: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    """``ALERTS`` / ``ALERTS_FOR_STATE`` label-set ids per (fingerprint, state)."""
    fresh_key: tuple[bytes, bytes] | None = None
    fresh: _Fresh = field(default_factory=dict)
    """The alerts of the last query result (ids and values as bytes: ``fresh_key``)."""
    labels_use_value: bool = False
    annotations_use_value: bool = False
    uses_query: bool = False
    """Some template calls ``query``: its output depends on the stored series, so nothing is memoised."""

    def __post_init__(self) -> None:
        self.labels_use_value = any(t.uses_value for t in self.rule.label_templates.values())
        self.annotations_use_value = any(t.uses_value for t in self.rule.annotation_templates.values())
        self.uses_query = any(t.uses_query for t in (*self.rule.label_templates.values(),
                                                     *self.rule.annotation_templates.values()))


@dataclass(frozen=True)
class ActiveAlert:
    """A pending or firing alert now (Prometheus ``/api/v1/alerts`` entry)."""

    rule: str
    group: str
    labels: dict[str, str]
    fingerprint: str
    state: str
    active_at: float
    value: float
    annotations: dict[str, str]


class AlertEvaluator:
    """Evaluate a rule set over ingested samples (see module docstring).

    Args:
        rules: a loaded :class:`RuleSet`, a rule-file path, or None for the frozen pack.
        interval_s: evaluation interval used by :meth:`step` and as the default
            subquery resolution, seconds.
        lookback_s: instant-vector lookback, seconds (Prometheus' 5 minutes).
        external_labels: ``$externalLabels`` for templates.
        record_history: keep an :class:`AlertHistory` of every transition.
        max_template_chars: longest expanded label or annotation, characters (None: no
            bound, as Prometheus and promtool; ``marathon rules test`` uses None).
            Longer ones are cut there with a note (:data:`MAX_TEMPLATE_CHARS`).
        retention_s: history kept behind the latest evaluation for queries other than the rules'
            own, seconds (:data:`QUERY_RETENTION_S`); None keeps every sample (``promtool``
            files, rule unit tests). The storage keeps the larger of this and what the rules
            read back (:attr:`keep_ms`).

    Memory: at every evaluation the storage is told it may drop what no later read needs
    (:meth:`alerts.promql.storage.Storage.retain`): samples older than :attr:`keep_ms` before
    the evaluation time -- the rules' reach (longest range or lookback, plus offsets and subquery
    ranges, from :func:`alerts.promql.budget.reach`) or the query retention, whichever is
    longer -- and the series with no sample left in that window (Prometheus' staleness: a series
    not scraped for the lookback is no longer returned). ``for`` and ``keep_firing_for`` need no
    samples: the alerts' own state holds when they became active. So memory follows the live
    series and the window, not the run's length. Evaluations must go forward in time once
    samples have been dropped (a Prometheus server's do).

    Raises:
        RuleFileError: the rule file does not load.
    """

    def __init__(self, rules: RuleSet | str | Path | None = None, *, interval_s: float = 15.0,
                 lookback_s: float = 300.0, external_labels: Mapping[str, str] | None = None,
                 external_url: str = "", record_history: bool = True,
                 max_template_chars: int | None = MAX_TEMPLATE_CHARS,
                 retention_s: float | None = QUERY_RETENTION_S) -> None:
        if rules is None:
            rules = load_pack()
        elif not isinstance(rules, RuleSet):
            rules = load_rule_file(rules)
        self.rules = rules
        self.interval_s = interval_s
        self.lookback_ms = to_ms(lookback_s)
        self.external_labels = dict(external_labels or {})
        self.external_url = external_url
        self.max_template_chars = max_template_chars
        self.storage = Storage(rows=512, cols=32768)  # capacity costs no memory until used
        self.history = AlertHistory() if record_history else None
        self._states = [[_RuleState(r) for r in g.rules] for g in rules.groups]
        self._sim_cols: IntArray = np.zeros(0, dtype=np.int64)
        self._synced = 0
        self._next_eval_ms: int | None = None
        self._template_env: tuple[tuple[tuple[str, str], ...], str] | None = None
        self._health = RuleHealthTracker()
        self.evaluations = 0
        self.keep_ms = self._keep_ms(retention_s)
        """Samples kept behind the latest evaluation, ms; None keeps them all (class docstring)."""

    def _keep_ms(self, retention_s: float | None) -> int | None:
        """The window the storage keeps (class docstring); None when unbounded: no retention, or
        a rule pinned to a fixed time with ``@``."""
        if retention_s is None:
            return None
        keep = to_ms(retention_s)
        for rule in self.rules.rules:
            rel, pinned = reach(rule.node, self.lookback_ms)
            if pinned is not None:
                return None
            if rel is not None:
                keep = max(keep, rel)
        return keep

    def retained_from(self) -> float | None:
        """Run time (seconds) from which every sample is kept, or None while none was dropped:
        queries reading earlier samples are refused (:data:`QUERY_RETENTION_S`). It trails the
        latest evaluation by at least :attr:`keep_ms` (rows are dropped in batches)."""
        st = self.storage.retained_from_ms
        return None if st is None else st / 1000.0

    # ---------------------------------------------------------------- ingestion

    def ingest(self, scrape: Scrape, info: Sequence[SeriesInfo]) -> None:
        """Add one simulator scrape (series that vanished since the last one go stale).

        Args:
            scrape: the scrape (``t`` seconds of run time, series ids, values).
            info: the registry's series identities, indexed by id (``SeriesStore.info``).

        Raises:
            ValueError: a scrape older than the newest sample.
        """
        ids = scrape.ids
        n = len(info)
        known = self._sim_cols.shape[0]
        if n > known:
            grown = np.full(n, -1, dtype=np.int64)
            grown[:known] = self._sim_cols
            self._sim_cols = grown
        cols = self._sim_cols[ids]
        missing = np.flatnonzero(cols < 0)
        if missing.size:
            st = self.storage
            sids = ids[missing].tolist()
            intern = st.labels.intern
            lids = []
            for sid in sids:
                si = info[sid]
                lids.append(intern(tuple(sorted((*si.labels, (METRIC_NAME, si.name))))))
            new_cols = st.columns(lids)
            for sid, col in zip(sids, new_cols, strict=True):
                self._sim_cols[sid] = col
            cols = self._sim_cols[ids]
        self.storage.append_scrape(to_ms(scrape.t), cols, scrape.values)

    def sync(self, store: SeriesStore) -> int:
        """Ingest every scrape of ``store`` not ingested yet; returns how many.

        Raises:
            RuntimeError: the store dropped scrapes (its ``retention_s``) before they were ingested.
        """
        scrapes = store.scrapes
        count = 0
        while self._synced - self._dropped(store) < len(scrapes):
            self.ingest(scrapes[self._synced - self._dropped(store)], store.info)
            self._synced += 1
            count += 1
        return count

    def _dropped(self, store: SeriesStore) -> int:
        """Scrapes ``store`` dropped from its head (retention); the evaluator counts scrapes from the
        store's first, so its position in ``store.scrapes`` is ``_synced`` minus this."""
        dropped = int(getattr(store, "dropped", 0))  # duck-typed stores keep every scrape
        if self._synced < dropped:
            raise RuntimeError(f"the series store dropped {dropped - self._synced} scrapes before the alert evaluator "
                               "ingested them: its retention_s is shorter than the time between evaluations")
        return dropped

    def ingest_samples(self, t: float, samples: Iterable[tuple[Mapping[str, str], float]]) -> None:
        """Add one scrape from any source: ``(labels with __name__, value)`` pairs at ``t`` seconds.

        Series present in the previous scrape and absent here get a staleness marker.
        """
        st = self.storage
        cols: list[int] = []
        vals: list[float] = []
        for labels, value in samples:
            cols.append(st.column_of(labels))
            vals.append(float(value))
        st.append_scrape(to_ms(t), np.asarray(cols, dtype=np.int64), np.asarray(vals, dtype=np.float64))

    # ---------------------------------------------------------------- evaluation

    def step(self, store: SeriesStore | None, until: float) -> list[AlertTransition]:
        """Evaluate at every interval boundary up to ``until`` seconds, ingesting
        scrapes from ``store`` as they become due; returns all transitions, in order.

        The first evaluation is at the first multiple of ``interval_s`` at or after the
        first call's newest sample (or ``until``).
        """
        out: list[AlertTransition] = []
        step_ms = to_ms(self.interval_s)
        if self._next_eval_ms is None:
            first = store.scrapes[0].t if store is not None and store.scrapes else until
            self._next_eval_ms = -(-to_ms(first) // step_ms) * step_ms
        until_ms = to_ms(until)
        while self._next_eval_ms <= until_ms:
            t_ms = self._next_eval_ms
            if store is not None:
                scrapes = store.scrapes
                dropped = self._dropped(store)
                while self._synced - dropped < len(scrapes) and to_ms(scrapes[self._synced - dropped].t) <= t_ms:
                    self.ingest(scrapes[self._synced - dropped], store.info)
                    self._synced += 1
            out.extend(self.evaluate(t_ms / 1000.0))
            self._next_eval_ms = t_ms + step_ms
        return out

    def evaluate(self, t: float) -> list[AlertTransition]:
        """Evaluate every group at run time ``t`` seconds; returns this evaluation's transitions.

        A group with its own ``interval`` is evaluated only at multiples of it.
        """
        t_ms = to_ms(t)
        if self.keep_ms is not None:
            self.storage.retain(t_ms - self.keep_ms)
        # No sample after the evaluation time exists for it (as in Prometheus): a run recorded
        # in full and evaluated afterwards (promtool files, unit tests) reads what a live one reads.
        ctx = EvalContext(self.storage, t_ms, self.lookback_ms, t_ms, t_ms, to_ms(self.interval_s), t_ms)
        template_env = (tuple(sorted(self.external_labels.items())), self.external_url)
        if template_env != self._template_env:  # template memos are only valid for one environment
            self._template_env = template_env
            for group_states in self._states:
                for state in group_states:
                    state.label_memo.clear()
                    state.annotation_memo.clear()
                    state.static_annotation_memo.clear()
                    state.fresh_key = None
        out: list[AlertTransition] = []
        for group, states in zip(self.rules.groups, self._states, strict=True):
            if group.interval_s and t_ms % to_ms(group.interval_s) != 0:
                continue
            for state in states:
                self._eval_rule(state, ctx, out, group.limit)
        self.evaluations += 1
        if self.history is not None:
            self.history.record(out)
            for group_states in self._states:
                for state in group_states:
                    for a in state.active.values():
                        if a.state in ("pending", "firing"):
                            self.history.update(state.rule.group, a.fingerprint, a.value, a.annotations)
        return out

    def _query(self, rule: Rule, ctx: EvalContext) -> Vector:
        res = rule.node.eval(ctx)
        if isinstance(res, float):
            table = ctx.labels
            return Vector(np.asarray([table.intern(())], dtype=np.int64), np.asarray([res]))
        if not isinstance(res, Vector):
            raise QueryError(f"rule result is a {type(res).__name__}, not an instant vector")
        return res

    def _eval_rule(self, state: _RuleState, ctx: EvalContext, out: list[AlertTransition], limit: int = 0) -> None:
        rule = state.rule
        state.last_eval_ms = ctx.t_ms
        try:
            res = self._query(rule, ctx)
        except QueryError as exc:
            state.last_error = str(exc)
        else:
            state.last_error = None
            if rule.kind == "record":
                self._write_record(state, ctx, res, limit)
            else:
                self._eval_alert(state, ctx, res, out, limit)
        self._health.observe(id(state), rule=rule.name, group=rule.group, index=rule.index,
                             type="recording" if rule.kind == "record" else "alerting", t=ctx.t_ms / 1000.0,
                             error=state.last_error)

    def _write_record(self, state: _RuleState, ctx: EvalContext, res: Vector, limit: int = 0) -> None:
        table = ctx.labels
        key = b"r" + res.lids.tobytes()
        lids = state.plans.get(key)
        if lids is None:
            out: list[int] = []
            for lid in res.lids.tolist():
                labels = dict(table.pairs(lid))
                labels[METRIC_NAME] = state.rule.name
                for k, v in state.rule.labels.items():
                    if v:
                        labels[k] = v
                    else:
                        labels.pop(k, None)
                out.append(table.intern_map(labels))
            lids = np.asarray(out, dtype=np.int64)
            if len(state.plans) > 64:
                state.plans.clear()
            state.plans[key] = lids
        if has_duplicates(lids):
            state.last_error = "vector contains metrics with the same labelset after applying rule labels"
            return
        if 0 < limit < lids.shape[0]:  # recording.go: nothing is written, no staleness markers
            state.last_error = f"exceeded limit of {limit} with {lids.shape[0]} series"
            return
        self._write_series(state, ctx.t_ms, lids, res.vals)

    def _write_series(self, state: _RuleState, t_ms: int, lids: IntArray, vals: FloatArray) -> None:
        """Write a rule's output at ``t_ms``; series it wrote last time and not now go stale."""
        if lids.shape[0] == 0 and state.series.shape[0] == 0:
            return
        st = self.storage
        key = b"c" + lids.tobytes()
        cols = state.plans.get(key)
        if cols is None:
            cols = np.asarray([st.column(int(lid)) for lid in lids.tolist()], dtype=np.int64)
            state.plans[key] = cols
        if np.array_equal(state.series, lids):
            gone: IntArray = np.zeros(0, dtype=np.int64)
        else:
            old = _setdiff(state.series, lids)
            gone = np.asarray([st.column(int(lid)) for lid in old.tolist()], dtype=np.int64)
        st.write(t_ms, cols, vals, gone)
        state.series = lids

    def _cap(self, text: str) -> str:
        """``text`` cut at :attr:`max_template_chars` characters, with a note of what was cut."""
        cap = self.max_template_chars
        if cap is None or len(text) <= cap:
            return text
        return f"{text[:cap]}... [{len(text) - cap:,} more characters cut by the embedded evaluator]"

    def _template_query(self, ctx: EvalContext) -> QueryFunc:
        """The templates' ``query``: an instant query at the evaluation time (Prometheus'
        ``EngineQueryFunc``: a vector, or a scalar as one sample without labels), seeing no
        sample after it, and refused (an expansion error) over :mod:`alerts.promql.budget`."""
        def query(text: str) -> list[tuple[dict[str, str], float]]:
            try:
                node = compile_query(text)
                # Prometheus stops a template's query at --query.max-samples; the embedded
                # evaluator refuses one over the deterministic budget before evaluating it
                check_budget(node, self.storage, 1, ctx.subquery_step_ms, who="an alert template's query")
                kept = self.storage.retained_from_ms
                earliest = earliest_read_ms(node, ctx.t_ms, self.lookback_ms)
                if kept is not None and earliest is not None and earliest < kept:
                    raise ValueError(f"the query reads samples from {earliest / 1000:g} s of run time, before the "
                                     f"oldest the embedded evaluator keeps ({kept / 1000:g} s)")
                with np.errstate(all="ignore"):
                    res = node.eval(EvalContext(self.storage, ctx.t_ms, self.lookback_ms, ctx.t_ms, ctx.t_ms,
                                                ctx.subquery_step_ms, ctx.horizon_ms))
            except (ValueError, PromQLError) as exc:
                raise ValueError(str(exc)) from None
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as exc:  # the Rust parser panics (pyo3 PanicException) on some input
                raise ValueError(f"{type(exc).__name__}: {exc}") from None
            if isinstance(res, float):
                return [({}, res)]
            if not isinstance(res, Vector):
                raise ValueError("rule result is not a vector or scalar")
            table = self.storage.labels
            # in storage order, as Prometheus' head block returns series (the order they were first scraped)
            return [(dict(table.pairs(lid)), v) for lid, v in zip(res.lids.tolist(), res.vals.tolist(), strict=True)]
        return query

    def _fresh_alerts(self, state: _RuleState, table: LabelTable, res: Vector,
                      ctx: EvalContext | None = None) -> _Fresh | None:
        """The alerts a query result yields, by fingerprint: (labels, annotations, value);
        None when two elements give the same alert labels."""
        key = (res.lids.tobytes(), res.vals.tobytes())
        query = self._template_query(ctx) if state.uses_query and ctx is not None else None
        if query is not None:  # templates that query read the series: nothing can be reused
            state.fresh_key = None
            state.label_memo.clear()
            state.annotation_memo.clear()
            state.static_annotation_memo.clear()
        elif state.fresh_key == key:  # same result as at the last evaluation
            return state.fresh
        rule = state.rule
        fresh: _Fresh = {}
        # Templates are pure functions of (labels, value, external labels/URL), so their
        # expansions are memoised per label-set id -- and per value (its bit pattern, so
        # -0 and 0 stay apart) for templates that read the value.
        label_memo, ann_memo, static_memo = state.label_memo, state.annotation_memo, state.static_annotation_memo
        for memo in (label_memo, ann_memo, static_memo):
            if len(memo) > _MEMO_LIMIT:
                memo.clear()
        labels_by_value = state.labels_use_value
        ann_by_value = state.annotations_use_value
        vals = res.vals
        for lid, value, bits in zip(res.lids.tolist(), vals.tolist(), vals.view(np.int64).tolist(), strict=True):
            lkey = (lid, bits) if labels_by_value else lid
            ident = label_memo.get(lkey)
            data: TemplateData | None = None
            if ident is None:
                # templates see __name__ where the expression keeps it; the alert's labels never carry it
                labels = dict(table.pairs(lid))
                data = TemplateData(labels, value, self.external_labels, self.external_url, query)
                final = {k: v for k, v in labels.items() if k != METRIC_NAME}
                for name, tmpl in rule.label_templates.items():
                    expanded = self._cap(tmpl.expand(data))
                    if expanded:
                        final[name] = expanded
                    else:
                        final.pop(name, None)
                final["alertname"] = rule.name
                ident = (labels, final, fingerprint(final))
                label_memo[lkey] = ident
            labels, final, fp = ident
            if fp in fresh:
                return None
            akey = (lid, bits) if ann_by_value else lid
            annotations = ann_memo.get(akey)
            if annotations is None:
                if data is None:
                    data = TemplateData(labels, value, self.external_labels, self.external_url, query)
                templates = rule.annotation_templates
                if ann_by_value:
                    static = static_memo.get(lid)
                    if static is None:
                        static = {k: t.expand(data) for k, t in templates.items() if not t.uses_value}
                        static_memo[lid] = static
                    annotations = {k: static[k] if k in static else t.expand(data) for k, t in templates.items()}
                else:
                    annotations = {k: t.expand(data) for k, t in templates.items()}
                if self.max_template_chars is not None:
                    annotations = {k: self._cap(v) for k, v in annotations.items()}
                ann_memo[akey] = annotations
            fresh[fp] = (final, annotations, value)
        state.fresh_key, state.fresh = key, fresh
        return fresh

    def _eval_alert(self, state: _RuleState, ctx: EvalContext, res: Vector, out: list[AlertTransition],
                    limit: int = 0) -> None:
        rule = state.rule
        table = ctx.labels
        t_ms = ctx.t_ms
        fresh = self._fresh_alerts(state, table, res, ctx)
        if fresh is None:
            state.last_error = "vector contains metrics with the same labelset after applying alert labels"
            return
        if limit > 0:
            n_active = self._count_active(state, fresh, t_ms)
            if n_active > limit:
                self._drop_alerts(state, t_ms, out)
                state.last_error = f"exceeded limit of {limit} with {n_active} alerts"
                return
        before = {fp: a.state for fp, a in state.active.items()}
        for fp, (final, ann, value) in fresh.items():
            cur = state.active.get(fp)
            if cur is not None and cur.state != "inactive":
                cur.value = value
                cur.annotations = dict(ann)
                continue
            state.active[fp] = _Alert(dict(final), fp, dict(ann), value, t_ms)
            before[fp] = "inactive"
        keep_ms = to_ms(rule.keep_firing_for_s)
        hold_ms = to_ms(rule.for_s)
        written: list[int] = []
        written_vals: list[float] = []
        series_memo = state.series_memo
        if len(series_memo) > _MEMO_LIMIT:
            series_memo.clear()
        for fp, a in list(state.active.items()):
            prev = before.get(fp, "inactive")
            if fp not in fresh:
                keep = False
                if a.state == "firing" and keep_ms > 0:
                    if a.keep_firing_since_ms is None:
                        a.keep_firing_since_ms = t_ms
                    keep = t_ms - a.keep_firing_since_ms < keep_ms
                if a.state == "pending" or (a.resolved_at_ms is not None
                                            and t_ms - a.resolved_at_ms > to_ms(RESOLVED_RETENTION_S)):
                    del state.active[fp]
                if a.state != "inactive" and not keep:
                    to_state = "resolved" if a.state == "firing" else "inactive"
                    a.state = "inactive"
                    a.resolved_at_ms = t_ms
                    out.append(self._transition(rule, a, prev, to_state, t_ms))
                if not keep:
                    continue
            else:
                a.keep_firing_since_ms = None
            if prev == "inactive" and a.state == "pending":
                out.append(self._transition(rule, a, "inactive", "pending", t_ms))
                prev = "pending"
            if a.state == "pending" and t_ms - a.active_at_ms >= hold_ms:
                a.state = "firing"
                a.fired_at_ms = t_ms
                out.append(self._transition(rule, a, prev, "firing", t_ms))
            skey = (fp, a.state)
            series = series_memo.get(skey)
            if series is None:
                series = []
                for name in ("ALERTS", "ALERTS_FOR_STATE"):
                    labels = dict(a.labels)
                    labels[METRIC_NAME] = name
                    if name == "ALERTS":
                        labels["alertstate"] = a.state
                    series.append(table.intern_map(labels))
                series_memo[skey] = series
            written.extend(series)
            written_vals.append(1.0)
            written_vals.append(a.active_at_ms / 1000.0)
        self._write_series(state, t_ms, np.asarray(written, dtype=np.int64), np.asarray(written_vals))

    def _count_active(self, state: _RuleState, fresh: _Fresh, t_ms: int) -> int:
        """alerting.go ``numActivePending``: the alerts pending or firing after this
        evaluation -- those of the result, plus firing ones held by ``keep_firing_for``."""
        keep_ms = to_ms(state.rule.keep_firing_for_s)
        held = 0
        if keep_ms > 0:
            for fp, a in state.active.items():
                if fp not in fresh and a.state == "firing" and (
                        a.keep_firing_since_ms is None or t_ms - a.keep_firing_since_ms < keep_ms):
                    held += 1
        return len(fresh) + held

    def _drop_alerts(self, state: _RuleState, t_ms: int, out: list[AlertTransition]) -> None:
        """A rule over its group's limit: alerting.go empties ``r.active`` and returns the
        error, writing no ``ALERTS`` sample (its series go stale at the next successful
        evaluation, which re-raises the alerts as new pending ones). Prometheus sends no
        resolution then (Alertmanager resolves the alerts when their ``endsAt`` passes); the
        embedded evaluator reports each pending or firing alert as ending here, so the history
        does not keep an alert Prometheus no longer has."""
        for a in state.active.values():
            if a.state in ("pending", "firing"):
                prev = a.state
                a.state = "inactive"
                a.resolved_at_ms = t_ms
                out.append(self._transition(state.rule, a, prev, "resolved" if prev == "firing" else "inactive", t_ms))
        state.active = {}

    def _transition(self, rule: Rule, a: _Alert, from_state: str, to_state: str, t_ms: int) -> AlertTransition:
        return AlertTransition(rule.name, rule.group, dict(a.labels), a.fingerprint, from_state, to_state,
                               t_ms / 1000.0, a.value, dict(a.annotations), a.active_at_ms / 1000.0)

    # ---------------------------------------------------------------- views

    def active_alerts(self) -> list[ActiveAlert]:
        """Pending and firing alerts after the latest evaluation (as ``/api/v1/alerts``)."""
        out = []
        for states in self._states:
            for state in states:
                for a in state.active.values():
                    if a.state in ("pending", "firing"):
                        out.append(ActiveAlert(state.rule.name, state.rule.group, dict(a.labels), a.fingerprint,
                                               a.state, a.active_at_ms / 1000.0, a.value, dict(a.annotations)))
        return out

    def rule_errors(self) -> dict[str, str]:
        """``{rule name: last evaluation error}`` for rules whose last evaluation failed."""
        return {s.rule.name: s.last_error for g in self._states for s in g if s.last_error}

    def rule_health(self) -> list[RuleHealth]:
        """Every rule's health after the latest evaluation (Prometheus' rules page), in rule-file
        order; rules not evaluated yet are ``unknown``."""
        out = []
        for states in self._states:
            for s in states:
                rule = s.rule
                kind = "recording" if rule.kind == "record" else "alerting"
                out.append(self._health.get(id(s)) or RuleHealth(rule.name, rule.group, rule.index, kind, "unknown",
                                                                 None, None))
        return out

    def take_rule_health_changes(self) -> list[RuleHealthChange]:
        """Rule health changes since the previous call, in evaluation order (:mod:`alerts.health`:
        to ``err``, back to ``ok``, or a new error text; never one per evaluation)."""
        return self._health.take_changes()


__all__ = ["ActiveAlert", "AlertEvaluator", "AlertTransition"]
