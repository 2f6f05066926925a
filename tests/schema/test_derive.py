"""Property tests pinning the one derivation."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecocompute.schema.derive import derive, stopping_reached
from ecocompute.schema.errors import DerivationError
from ecocompute.schema.models import Window

T0 = datetime(2026, 11, 30, tzinfo=UTC)


def win(i: int, energy: float, tokens: int, duration: float, integrated: float | None = None) -> Window:
    return Window.model_construct(
        index=i, started_at=T0, duration_s=duration, energy_j=energy,
        energy_j_power_integrated=energy if integrated is None else integrated, tokens=tokens, generate_calls=1,
        temp_c_start=40.0, temp_c_end=41.0, sm_clock_mhz_mean=1980.0, throttle_reasons=[],
    )  # fmt: skip


window_triples = st.lists(
    st.tuples(st.floats(1.0, 1e5, allow_nan=False), st.integers(1, 100_000), st.floats(0.01, 1e3, allow_nan=False)),
    min_size=1,
    max_size=40,
)


@given(window_triples, st.floats(0.01, 1000.0), st.floats(0.0, 500.0))
def test_scaling_energy_scales_jpt_and_keeps_cv(triples: list[tuple[float, int, float]], k: float, idle: float) -> None:
    base = derive([win(i, e, t, d) for i, (e, t, d) in enumerate(triples)], idle)
    scaled = derive([win(i, e * k, t, d) for i, (e, t, d) in enumerate(triples)], idle)
    assert math.isclose(scaled.j_per_token_mean, k * base.j_per_token_mean, rel_tol=1e-9)
    assert math.isclose(scaled.j_per_token_std, k * base.j_per_token_std, rel_tol=1e-6, abs_tol=1e-9)
    assert math.isclose(scaled.cv_pct, base.cv_pct, rel_tol=1e-6, abs_tol=1e-7)
    assert math.isclose(scaled.power_w_mean, k * base.power_w_mean, rel_tol=1e-9)
    assert scaled.tokens_per_s == base.tokens_per_s


@given(st.floats(0.1, 1e4), st.integers(1, 10_000), st.floats(0.1, 100.0), st.integers(2, 30), st.floats(0, 300))
def test_constant_windows_have_zero_spread(energy: float, tokens: int, duration: float, n: int, idle: float) -> None:
    d = derive([win(i, energy, tokens, duration) for i in range(n)], idle)
    assert math.isclose(d.j_per_token_mean, energy / tokens, rel_tol=1e-12)
    assert d.j_per_token_std == pytest.approx(0.0, abs=1e-12 * d.j_per_token_mean)
    assert d.cv_pct == pytest.approx(0.0, abs=1e-9)
    assert d.ci95_half_j == pytest.approx(0.0, abs=1e-9 * d.j_per_token_mean)
    assert math.isclose(d.static_j_per_token_mean + d.dynamic_j_per_token_mean, d.j_per_token_mean, rel_tol=1e-9)
    assert math.isclose(d.static_j_per_token_mean, idle * duration / tokens, rel_tol=1e-9, abs_tol=1e-12)


def test_one_window_has_no_confidence_interval() -> None:
    d = derive([win(0, 100.0, 50, 10.0)], 50.0)
    assert d.n_windows == 1
    assert d.j_per_token_mean == 2.0
    assert d.j_per_token_std == 0.0
    assert d.ci95_half_j is None
    assert d.ci95_pct is None
    assert d.static_j_per_token_mean == 10.0
    assert d.dynamic_j_per_token_mean == -8.0


def test_known_values_against_student_t() -> None:
    d = derive([win(0, 10.0, 10, 1.0), win(1, 12.0, 10, 1.0), win(2, 14.0, 10, 1.0)], 0.0)
    assert d.j_per_token_mean == pytest.approx(1.2)
    assert d.j_per_token_std == pytest.approx(0.2)
    assert d.cv_pct == pytest.approx(100 * 0.2 / 1.2)
    assert d.ci95_half_j == pytest.approx(4.302652729749464 * 0.2 / math.sqrt(3))
    assert d.tokens_per_s == pytest.approx(10.0)
    assert d.power_w_mean == pytest.approx(12.0)


@pytest.mark.parametrize("duration", [0.0, -1.0])
def test_zero_duration_window_is_rejected(duration: float) -> None:
    with pytest.raises(DerivationError, match="duration"):
        derive([win(0, 10.0, 10, 1.0), win(1, 10.0, 10, duration)], 10.0)


def test_no_windows_and_no_tokens_are_rejected() -> None:
    with pytest.raises(DerivationError, match="without windows"):
        derive([], 10.0)
    with pytest.raises(DerivationError, match="no tokens"):
        derive([win(0, 10.0, 0, 1.0)], 10.0)


def test_integral_disagreement_is_reported() -> None:
    d = derive([win(0, 100.0, 10, 1.0, integrated=103.0), win(1, 100.0, 10, 1.0, integrated=99.0)], 0.0)
    assert d.integral_diff_pct_max == pytest.approx(3.0)


def test_stopping_rule_needs_min_windows_and_a_tight_interval() -> None:
    tight = [1.0, 1.001, 0.999, 1.0, 1.0005]
    assert stopping_reached(tight, min_windows=5, target_ci_pct=0.5)
    assert not stopping_reached(tight[:4], min_windows=5, target_ci_pct=0.5)
    assert not stopping_reached([1.0, 1.2, 0.8, 1.1, 0.9], min_windows=5, target_ci_pct=0.5)
