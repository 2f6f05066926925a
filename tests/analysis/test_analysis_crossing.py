"""The numeric core: the log-linear crossing and the saturating fit behind the published crossovers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from analysis_frames import ADA, RTX5090, T4
from hypothesis import given
from hypothesis import strategies as st

from ecocompute.analysis.zero_crossing import cap_for, crossing_log10, percentile_ci, saturating_crossover_b


def _changes(rows: list[tuple[float, float, float]]) -> tuple[np.ndarray, np.ndarray]:
    params = np.array([r[0] for r in rows])
    return params, np.array([100 * (q / b - 1) for _, b, q in rows])


def test_crossing_interpolates_in_log10_between_the_bracketing_sizes() -> None:
    x = np.log10([1e9, 4e9])
    (found,) = crossing_log10(x, np.array([[10.0, -30.0]]))
    assert found == pytest.approx(math.log10(1e9) + 0.25 * math.log10(4))


def test_the_largest_positive_to_negative_step_wins() -> None:
    x = np.log10([1.0, 2.0, 4.0, 8.0, 16.0])
    (found,) = crossing_log10(x, np.array([[5.0, -5.0, 5.0, 5.0, -15.0]]))
    assert 10**found == pytest.approx(8 * 16**0.25 / 8**0.25, rel=1e-12)


def test_an_exact_zero_is_the_crossing_and_no_step_is_nan() -> None:
    x = np.log10([1.0, 2.0, 4.0])
    assert crossing_log10(x, np.array([[3.0, 0.0, -1.0]]))[0] == pytest.approx(math.log10(2.0))
    assert math.isnan(crossing_log10(x, np.array([[3.0, 2.0, 1.0]]))[0])
    assert math.isnan(crossing_log10(x, np.array([[-3.0, -2.0, 1.0]]))[0])
    assert math.isnan(crossing_log10(x[:1], np.array([[3.0]]))[0])


@given(st.lists(st.floats(-50, 50, allow_nan=False), min_size=2, max_size=7), st.integers(1, 5))
def test_rows_are_independent(changes: list[float], copies: int) -> None:
    x = np.log10(np.arange(1, len(changes) + 1, dtype=float))
    matrix = np.array([changes] * copies)
    found = crossing_log10(x, matrix)
    single = crossing_log10(x, np.array([changes]))[0]
    assert np.array_equal(np.isnan(found), np.full(copies, math.isnan(single)))
    if not math.isnan(single):
        assert np.allclose(found, single)
        left = max(i for i in range(len(changes) - 1) if changes[i] > 0 >= changes[i + 1])
        assert x[left] <= single <= x[left + 1]


@pytest.mark.parametrize(("rows", "published_b"), [(T4, 2.126), (RTX5090, 4.751), (ADA, 3.728)])
def test_saturating_fit_reproduces_the_published_crossovers(rows: list[tuple[float, float, float]],
                                                             published_b: float) -> None:  # fmt: skip
    params, changes = _changes(rows)
    found = saturating_crossover_b(params, changes, cap_for("nf4"))
    assert found == pytest.approx(published_b, abs=0.005)


def test_saturating_fit_without_a_crossing_says_none() -> None:
    params = np.array([1.0, 3.0, 7.0, 14.0])
    assert saturating_crossover_b(params, np.array([150.0, 130.0, 110.0, 95.0]), cap_for("int8")) is None
    assert saturating_crossover_b(params[:1], np.array([5.0]), 75.0) is None


def test_percentile_ci_ignores_nan() -> None:
    low, high = percentile_ci(np.array([np.nan, *range(101)], dtype=float))
    assert (low, high) == (pytest.approx(2.5), pytest.approx(97.5))
    assert percentile_ci(np.array([np.nan])) == (None, None)
