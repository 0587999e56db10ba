"""Bounded memory of the embedded evaluator (issue 17): a storage that drops what no read needs
answers every read inside its window exactly as one that keeps everything, the evaluator's window
is the rules' reach, and queries reaching further back are refused."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alerts.evaluator import QUERY_RETENTION_S, AlertEvaluator, AlertTransition
from alerts.promql.budget import reach
from alerts.promql.engine import compile_query
from alerts.promql.storage import Storage
from alerts.rules import load_pack, load_rule_text
from alerts.series import SeriesRegistry, SeriesStore

STEP = 15_000
KEEP = 20 * STEP


def _scrapes(draw_cols: list[list[int]]) -> list[tuple[int, list[int]]]:
    return [(k * STEP, cols) for k, cols in enumerate(draw_cols)]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 11), max_size=8, unique=True), min_size=30, max_size=90),
       st.integers(1, 8))
def test_retained_storage_reads_as_the_full_one(scrapes: list[list[int]], min_drop: int) -> None:
    """Series come and go (staleness markers, gaps, returns after being dropped); after every
    scrape both storages answer instant and range reads reaching back at most KEEP the same,
    columns and their order included."""
    full, kept = Storage(rows=8, cols=4), Storage(rows=8, cols=4)  # small: growth is exercised too
    lids = [full.labels.intern((("__name__", "x"), ("i", str(i)))) for i in range(12)]
    for s in (full, kept):
        assert s.labels.intern((("__name__", "x"), ("i", "0"))) == lids[0] or s is kept
    kept_lids = [kept.labels.intern((("__name__", "x"), ("i", str(i)))) for i in range(12)]
    for t, present in _scrapes(scrapes):
        vals = np.asarray([float(t + i) for i in present])
        full.append_scrape(t, np.asarray(full.columns([lids[i] for i in present]), dtype=np.int64), vals)
        kept.append_scrape(t, np.asarray(kept.columns([kept_lids[i] for i in present]), dtype=np.int64), vals)
        kept.retain(t - KEEP, min_drop_rows=min_drop)
        all_full = np.arange(full.n_cols, dtype=np.int64)
        all_kept = np.arange(kept.n_cols, dtype=np.int64)
        for back in (0, STEP, 5 * STEP):
            a, b = full.instant(all_full, t - back, KEEP - back), kept.instant(all_kept, t - back, KEEP - back)
            assert [full.col_lid[c] for c in a[0]] == [kept.col_lid[c] for c in b[0]]
            assert np.array_equal(a[1], b[1]) and np.array_equal(a[2], b[2])
        for width in (STEP, 7 * STEP, KEEP):
            a4, b4 = full.window(all_full, t - width, t), kept.window(all_kept, t - width, t)
            assert [full.col_lid[c] for c in a4[0]] == [kept.col_lid[c] for c in b4[0]]
            assert np.array_equal(a4[1], b4[1]) and np.array_equal(a4[3], b4[3])
            assert np.array_equal(np.where(a4[3], a4[2], 0.0), np.where(b4[3], b4[2], 0.0))
    if len(scrapes) > 2 * KEEP // STEP:
        assert kept.n_rows < full.n_rows  # it did drop rows
        assert kept.retained_from_ms is not None and kept.retained_from_ms <= (len(scrapes) - 1) * STEP - KEEP
        assert kept.retained_from_ms == int(kept.ts[0]) - STEP + 1  # just after the newest row dropped


def test_dropped_series_keeps_its_place() -> None:
    """A series dropped for its absence and written again keeps the column it had, so results list
    it where the full storage does (the order rule evaluation and templates see)."""
    st_ = Storage()
    a, b = st_.columns([st_.labels.intern((("__name__", "x"), ("i", "a"))),
                        st_.labels.intern((("__name__", "x"), ("i", "b")))])
    st_.append_scrape(0, np.asarray([a, b]), np.asarray([1.0, 2.0]))
    for k in range(1, 60):
        st_.append_scrape(k * STEP, np.asarray([b]), np.asarray([2.0]))
        st_.retain(k * STEP - KEEP, min_drop_rows=4)
    assert st_.slot[a] < 0 and st_.n_slots == 1  # a's samples and marker are gone
    st_.append_scrape(60 * STEP, np.asarray([a, b]), np.asarray([3.0, 4.0]))
    cols, vals, _ = st_.instant(np.asarray([a, b]), 60 * STEP, 300_000)
    assert cols.tolist() == [a, b] and vals.tolist() == [3.0, 4.0]


def test_reach_of_selectors_offsets_and_subqueries() -> None:
    five = 300_000
    assert reach(compile_query("up"), five) == (five, None)
    assert reach(compile_query("rate(x[1h] offset 10m)"), five) == (4_200_000, None)
    assert reach(compile_query("max_over_time(rate(x[5m])[30m:1m] offset 1m)"), five) == (2_160_000, None)
    assert reach(compile_query("x offset -10m"), five) == (five - 600_000, None)
    assert reach(compile_query("x @ 1000 + rate(y[2m])"), five) == (120_000, 1_000_000 - five)
    assert reach(compile_query("vector(1)"), five) == (None, None)


def test_evaluator_keeps_the_rules_reach() -> None:
    assert AlertEvaluator(load_pack()).keep_ms == 3_600_000  # the paper pack's [1h]
    short = load_rule_text("groups: [{name: g, rules: [{alert: A, expr: 'rate(x[2m]) > 0'}]}]\n", "t.yaml")
    assert AlertEvaluator(short, retention_s=60).keep_ms == 120_000
    assert AlertEvaluator(short).keep_ms == round(QUERY_RETENTION_S * 1000)
    assert AlertEvaluator(short, retention_s=None).keep_ms is None
    pinned = load_rule_text("groups: [{name: g, rules: [{alert: A, expr: 'x @ 100 > 0'}]}]\n", "t.yaml")
    assert AlertEvaluator(pinned).keep_ms is None


RULES = """
groups:
  - name: g
    rules:
      - alert: Rising
        expr: rate(x[3m]) > 0.05
        for: 1m
        labels: {severity: page}
        annotations: {summary: "{{ $labels.i }} at {{ $value }}"}
      - record: i:x:max5m
        expr: max_over_time(x[5m])
      - alert: Absent
        expr: absent(x{i="0"})
      - alert: Recorded
        expr: i:x:max5m > 40
        keep_firing_for: 2m
"""


def _evaluate(retention_s: float | None, seed: int) -> tuple[AlertEvaluator, list[AlertTransition]]:
    rng = np.random.default_rng(seed)
    ev = AlertEvaluator(load_rule_text(RULES, "t.yaml"), retention_s=retention_s)
    out: list[AlertTransition] = []
    live = {0, 1, 2}
    values = dict.fromkeys(range(30), 0.0)
    for k in range(240):  # an hour of 15 s scrapes: series churn, return, grow
        if rng.random() < 0.15:
            live ^= {int(rng.integers(0, 30))}
        for i in live:
            values[i] += float(rng.integers(0, 3))
        ev.ingest_samples(15.0 * k, [({"__name__": "x", "i": str(i)}, values[i]) for i in sorted(live)])
        out.extend(ev.evaluate(15.0 * k))
    return ev, out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_bounded_evaluator_transitions_equal_the_unbounded_ones(seed: int) -> None:
    bounded, got = _evaluate(60.0, seed)
    full, want = _evaluate(None, seed)
    assert bounded.keep_ms == 300_000 and full.keep_ms is None
    assert [t.to_dict() for t in got] == [t.to_dict() for t in want] and got
    assert bounded.storage.n_rows < 60 < full.storage.n_rows  # 5 minutes plus the drop batch vs an hour
    kept = bounded.retained_from()
    assert kept is not None and 15.0 * 239 - 300.0 - 15.0 * 30 < kept <= 15.0 * 239 - 300.0


def test_template_query_before_the_window_is_refused() -> None:
    rules = load_rule_text("groups: [{name: g, rules: [{alert: A, expr: 'x > 0', annotations: "
                           "{n: '{{ with query \"count_over_time(x[30m])\" }}{{ . | first | value }}{{ end }}'}}]}]\n",
                           "t.yaml")
    ev = AlertEvaluator(rules, retention_s=60)
    notes = []
    for k in range(200):
        ev.ingest_samples(15.0 * k, [({"__name__": "x"}, 1.0)])
        for tr in ev.evaluate(15.0 * k):
            notes.append(tr.annotations["n"])
    assert notes[0] == "1"  # at the start the window holds all of the 30 minutes asked for
    active = ev.active_alerts()[0].annotations["n"]
    assert "before the oldest the embedded evaluator keeps" in active


def test_evaluator_follows_a_store_that_drops_scrapes() -> None:
    """The evaluator counts scrapes from the store's first, so a store with a retention (the run's
    simulator keeps 15 minutes) is followed across its drops, and a gap it cannot bridge is loud."""
    rules = load_rule_text("groups: [{name: g, rules: [{alert: A, expr: 'x > 5'}]}]\n", "t.yaml")

    def run(gap_at: int | None) -> list[AlertTransition]:
        reg = SeriesRegistry()
        store = SeriesStore(reg, retention_s=60.0)
        sid = reg.add("x", {"i": "0"})
        ev = AlertEvaluator(rules)
        out: list[AlertTransition] = []
        for k in range(80):
            reg.set(sid, float(k % 10))
            store.record(15.0 * k)
            if gap_at is None or not gap_at <= k < gap_at + 6:
                out.extend(ev.step(store, 15.0 * k))
        return out

    got = run(None)
    assert [t.to_state for t in got[:2]] == ["pending", "firing"] and len(got) > 10
    with pytest.raises(RuntimeError, match="dropped 2 scrapes before the alert evaluator ingested them"):
        run(40)


def test_query_metrics_inside_the_window_answers_as_full_history_and_refuses_beyond() -> None:
    from engine.operate.promquery import run_query

    rules = load_rule_text("groups: [{name: g, rules: [{record: r, expr: 'sum(rate(x[2m]))'}]}]\n", "t.yaml")
    evs = [AlertEvaluator(rules, retention_s=600), AlertEvaluator(rules, retention_s=None)]
    for k in range(300):
        for ev in evs:
            ev.ingest_samples(15.0 * k, [({"__name__": "x", "i": str(i)}, float(k * (i + 1)))
                                         for i in range(3) if (k // 40) % 3 != i])
            ev.evaluate(15.0 * k)
    bounded, full = (ev.storage for ev in evs)
    now = 15.0 * 299
    assert bounded.retained_from_ms is not None and full.retained_from_ms is None
    for args in ({"query": "rate(x[5m])"}, {"query": "r", "start": now - 200, "step": 15.0},
                 {"query": "max_over_time(x[3m:1m])", "time": now - 60}):
        a, b = run_query(bounded, now=now, **args), run_query(full, now=now, **args)
        assert a.body == b.body and a.body["status"] == "success"
    for args in ({"query": "count_over_time(x[30m])"}, {"query": "x", "time": 60.0},
                 {"query": "x", "start": 0.0, "step": 60.0}):
        refused = run_query(bounded, now=now, **args)
        assert refused.body["status"] == "error" and refused.body["errorType"] == "bad_data"
        assert "before the oldest the run's Prometheus keeps" in refused.body["error"]
        assert run_query(full, now=now, **args).body["status"] == "success"
