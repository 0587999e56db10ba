"""The one ``histogram_quantile``: the vectorised twin against the PromQL reference.

:func:`alerts.promql.functions.bucket_quantile` is the reference (``quantile.go``
``bucketQuantile``); :func:`alerts.promql.functions.bucket_quantiles` is its vectorised twin,
used by the alert evaluator, the run's health sampler and the simulator's service health.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alerts.promql.functions import NonMonotonic, bucket_quantile, bucket_quantiles

LE = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, math.inf)
"""The client libraries' default latency buckets (``engine.sim.traffic.DEFAULT_BUCKETS``) and +Inf, seconds."""

QUANTILES = st.one_of(
    st.sampled_from([math.nan, -math.inf, -0.5, -0.0, 0.0, 0.5, 0.95, 0.99, 1.0, 1.5, math.inf]),
    st.floats(0.0, 1.0),
)
COUNTS = st.one_of(
    st.integers(0, 6).map(float),  # many zeros and ties
    st.floats(0.0, 1e6, allow_nan=False, allow_infinity=False),
    st.floats(-10.0, 10.0, allow_nan=False, allow_infinity=False),
)


@st.composite
def histograms(draw: Any, max_rows: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """(bounds (B,), counts (rows, B)): strictly increasing bounds (possibly <= 0) ending in +Inf."""
    finite = draw(st.lists(st.floats(-5.0, 100.0, allow_nan=False), min_size=0, max_size=8, unique=True))
    bounds = np.asarray([*sorted(finite), math.inf])
    rows = draw(st.integers(1, max_rows))
    counts = np.asarray([[draw(COUNTS) for _ in bounds] for _ in range(rows)])
    if draw(st.booleans()):
        counts = np.cumsum(np.abs(counts), axis=1)  # a well-formed cumulative histogram
    return bounds, counts


def reference(q: float, bounds: np.ndarray, counts: np.ndarray) -> np.ndarray:
    return np.asarray([bucket_quantile(q, list(zip(bounds.tolist(), row.tolist(), strict=True))) for row in counts])


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal bit for bit, every NaN equal to every NaN."""
    nan = np.isnan(a) & np.isnan(b)
    return bool(np.all(nan | (a.view(np.int64) == b.view(np.int64))))


@settings(max_examples=400, deadline=None)
@given(histograms(), QUANTILES)
def test_twin_is_the_reference_bit_for_bit(hist: tuple[np.ndarray, np.ndarray], q: float) -> None:
    bounds, counts = hist
    ours = bucket_quantiles(q, bounds, counts, divide_first=False)
    assert same_bits(ours, reference(q, bounds, counts)), (q, bounds, counts, ours)


@settings(max_examples=200, deadline=None)
@given(histograms(), QUANTILES)
def test_per_row_bounds_give_the_same_result(hist: tuple[np.ndarray, np.ndarray], q: float) -> None:
    bounds, counts = hist
    shared = bucket_quantiles(q, bounds, counts)
    per_row = bucket_quantiles(q, np.tile(bounds, (counts.shape[0], 1)), counts)
    assert same_bits(shared, per_row)


@settings(max_examples=400, deadline=None)
@given(histograms(), QUANTILES)
def test_prometheus_rounding_differs_from_the_reference_in_the_last_bits_only(
        hist: tuple[np.ndarray, np.ndarray], q: float) -> None:
    bounds, counts = hist
    ours = bucket_quantiles(q, bounds, counts, divide_first=True)
    ref = reference(q, bounds, counts)
    assert np.array_equal(np.isnan(ours), np.isnan(ref))
    both = ~np.isnan(ref)
    finite = both & np.isfinite(ref)
    assert np.array_equal(ours[both & ~finite], ref[both & ~finite])
    scale = np.abs(ref[finite]) + float(np.max(np.abs(bounds[np.isfinite(bounds)]), initial=1.0))
    assert np.all(np.abs(ours[finite] - ref[finite]) <= 8 * np.finfo(np.float64).eps * scale)


@settings(max_examples=300, deadline=None)
@given(histograms(), QUANTILES, st.sampled_from(["bisect", "scan"]))
def test_every_mode_agrees_on_monotonic_counts(hist: tuple[np.ndarray, np.ndarray], q: float,
                                               mode: NonMonotonic) -> None:
    bounds, counts = hist
    counts = np.maximum.accumulate(counts, axis=1)
    for divide_first in (False, True):
        fixed = bucket_quantiles(q, bounds, counts, divide_first=divide_first)
        assert same_bits(bucket_quantiles(q, bounds, counts, nonmonotonic=mode, divide_first=divide_first), fixed)


@settings(max_examples=300, deadline=None)
@given(histograms(), st.floats(0.01, 1.0))
def test_bisect_interpolates_in_the_bucket_searchsorted_finds(hist: tuple[np.ndarray, np.ndarray], q: float) -> None:
    bounds, counts = hist
    counts = np.abs(counts)
    ours = bucket_quantiles(q, bounds, counts, nonmonotonic="bisect", divide_first=False)
    for row, value in zip(counts, ours, strict=True):
        if row[-1] == 0 or len(bounds) < 2:
            assert math.isnan(value)
            continue
        if q * row[-1] == 0:
            # The rank underflows (a subnormal total): Prometheus' bucketQuantile then divides
            # 0 by the first bucket's count 0, NaN, as ours does; no interpolation to check.
            continue
        b = int(np.searchsorted(row, q * row[-1], side="left"))
        if b >= len(bounds) - 1:
            assert value == bounds[-2]
        elif b == 0 and bounds[0] <= 0:
            assert value == bounds[0]
        else:
            lower = bounds[b - 1] if b else 0.0
            assert min(lower, bounds[b]) - 1e-9 <= value <= max(lower, bounds[b]) + 1e-9


# Bucket increases the health figures saw in the reference runs (floored counters, so not
# always monotonic), with what each caller computed before the twin replaced its copy.
RECORDED = [
    # counts per LE, run health sampler ("bisect"), simulator service health ("scan"), PromQL ("fix")
    ([2, 86, 314, 324, 322, 322, 322, 322, 322, 322, 322, 322],
     0.024467105263157894, 0.024467105263157894, 0.024592105263157894),
    ([0, 0, 0, 6, 16, 18, 16, 16, 17, 17, 17, 17], 1.2249999999999979, 0.1112499999999999, 0.18249999999999983),
    ([0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0], math.nan, math.nan, 0.0975),
    ([0, 0, 0, 6, 20, 22, 20, 20, 20, 20, 20, 20], 0.09642857142857143, 0.09642857142857143, 0.1674999999999999),
    ([55, 58, 57, 57, 57, 57, 57, 57, 57, 57, 57, 57],
     0.004922727272727272, 0.004922727272727272, 0.005166666666666657),
    ([44, 71, 143, 236, 278, 294, 442, 495, 506, 504, 504, 505],
     0.8561320754716981, 0.8561320754716981, 0.8650943396226414),
    ([0, 0, 0, 4, 16, 14, 16, 16, 15, 15, 15, 15], 0.28125, 0.09270833333333334, 0.09666666666666666),
]


@pytest.mark.parametrize("mode, column", [("bisect", 1), ("scan", 2), ("fix", 3)])
def test_recorded_health_figures_are_kept(mode: NonMonotonic, column: int) -> None:
    counts = np.asarray([r[0] for r in RECORDED], dtype=np.float64)
    expected = np.asarray([r[column] for r in RECORDED])
    assert same_bits(bucket_quantiles(0.95, np.asarray(LE), counts, nonmonotonic=mode, divide_first=False), expected)
    if mode == "fix":
        assert same_bits(reference(0.95, np.asarray(LE), counts), expected)


def test_edge_cases_as_promql_defines_them() -> None:
    bounds = np.asarray(LE)
    empty = np.zeros((1, len(LE)))
    assert np.isnan(bucket_quantiles(0.5, bounds, empty)).all()  # no observations
    assert np.isnan(bucket_quantiles(0.5, np.asarray([math.inf]), np.asarray([[5.0]]))).all()  # one bucket
    assert bucket_quantiles(-0.1, bounds, empty)[0] == -math.inf
    assert bucket_quantiles(1.1, bounds, empty)[0] == math.inf
    assert np.isnan(bucket_quantiles(math.nan, bounds, empty)).all()
    top = np.asarray([[0.0] * (len(LE) - 1) + [4.0]])
    assert bucket_quantiles(0.5, bounds, top)[0] == 10.0  # in the +Inf bucket: the highest finite bound
    negative = np.asarray([-1.0, 1.0, math.inf])
    assert bucket_quantiles(0.1, negative, np.asarray([[5.0, 8.0, 10.0]]))[0] == -1.0  # first bound <= 0
    assert bucket_quantiles(0.5, bounds, np.zeros((0, len(LE)))).shape == (0,)


@pytest.mark.parametrize("bounds, counts, match", [
    ([0.1, 1.0], [[1.0, 2.0]], "end in \\+Inf"),
    ([1.0, 0.1, math.inf], [[1.0, 2.0, 3.0]], "increase strictly"),
    ([0.1, 0.1, math.inf], [[1.0, 2.0, 3.0]], "increase strictly"),
    ([0.1, math.inf], [[1.0, math.nan]], "NaN"),
    ([0.1, math.inf], [1.0, 2.0], "shape"),
])
def test_malformed_input_is_refused(bounds: list[float], counts: list[Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        bucket_quantiles(0.5, np.asarray(bounds), np.asarray(counts))
