"""The one derivation: a measurement's windows -> J/token and every figure built on it.

The collector, the validator and the publisher all call :func:`derive`; nothing derived is
ever read back from a submission.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ecocompute.schema.errors import DerivationError
from ecocompute.schema.models import Window

CV_GATE_PCT = 2.0
"""The CV gate: a measurement whose CV of J/token is above it (E-CV) is published only in the ``*_all`` tier."""
J_PER_WH = 3600.0


def passes_cv_gate(cv_pct: float, gate_pct: float = CV_GATE_PCT) -> bool:
    """Whether a measurement's CV of J/token is within the gate (the validator's E-CV is its negation)."""
    return cv_pct <= gate_pct


@lru_cache(maxsize=256)
def t_quantile_975(dof: int) -> float:
    """Two-sided 95% Student t quantile for ``dof`` degrees of freedom."""
    from scipy.stats import t

    return float(t.ppf(0.975, dof))


@dataclass(frozen=True)
class Derived:
    """Figures derived from one measurement's windows. J/token figures are per generated token."""

    n_windows: int
    j_per_token: tuple[float, ...]
    j_per_token_mean: float
    j_per_token_std: float
    cv_pct: float
    ci95_half_j: float | None
    ci95_pct: float | None
    tokens_per_s: float
    power_w_mean: float
    idle_power_w: float
    static_j_per_token_mean: float
    dynamic_j_per_token_mean: float
    dynamic_cv_pct: float
    integral_diff_pct_max: float
    duration_s_total: float
    energy_j_total: float
    tokens_total: int
    gpu_util_pct_mean: float | None = None
    cpu_per_wall: float | None = None

    @property
    def ci95_j_per_token(self) -> tuple[float, float] | None:
        """The 95% CI of the mean J/token as (low, high); None with fewer than 2 windows."""
        if self.ci95_half_j is None:
            return None
        return self.j_per_token_mean - self.ci95_half_j, self.j_per_token_mean + self.ci95_half_j

    @property
    def wh_per_1k_tokens(self) -> float:
        """Mean energy of 1,000 generated tokens, in Wh."""
        return self.j_per_token_mean * 1000.0 / J_PER_WH

    @property
    def tokens_per_kwh(self) -> float | None:
        """Tokens generated per kWh at the mean J/token (None when the mean is not positive)."""
        return 1000.0 * J_PER_WH / self.j_per_token_mean if self.j_per_token_mean > 0 else None

    @property
    def passes_cv_gate(self) -> bool:
        """Whether the CV of J/token is within :data:`CV_GATE_PCT`."""
        return passes_cv_gate(self.cv_pct)


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0 for a single value)."""
    n = len(values)
    mean = math.fsum(values) / n
    if n < 2:
        return mean, 0.0
    var = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(var)


def ci95_half_width(std: float, n: int) -> float | None:
    """Half width of the Student t 95% confidence interval of a mean of ``n`` samples (None for n < 2)."""
    if n < 2:
        return None
    return t_quantile_975(n - 1) * std / math.sqrt(n)


def _pct(part: float, whole: float) -> float:
    return 100.0 * part / whole if whole else 0.0


def _check_window(window: Window) -> None:
    if not window.duration_s > 0:
        raise DerivationError(f"window {window.index} has duration {window.duration_s} s: it must be positive")
    if window.tokens <= 0:
        raise DerivationError(f"window {window.index} generated no tokens: J/token is undefined")


def derive(windows: Sequence[Window], idle_power_w: float) -> Derived:
    """Derive J/token per window, mean, std, CV, 95% CI, tokens/s, power, and its static/dynamic split.

    ``idle_power_w`` is the GPU's power with the model loaded and idle (:attr:`Idle.power_w`);
    the static part of a window's J/token is idle power x duration / tokens, the dynamic part the rest.
    """
    if not windows:
        raise DerivationError("a measurement without windows has no J/token")
    for window in windows:
        _check_window(window)
    jpt = tuple(w.energy_j / w.tokens for w in windows)
    static = [idle_power_w * w.duration_s / w.tokens for w in windows]
    dynamic = [j - s for j, s in zip(jpt, static, strict=True)]
    mean, std = mean_std(jpt)
    dyn_mean, dyn_std = mean_std(dynamic)
    half = ci95_half_width(std, len(jpt))
    duration = math.fsum(w.duration_s for w in windows)
    energy = math.fsum(w.energy_j for w in windows)
    tokens = sum(w.tokens for w in windows)
    return Derived(
        n_windows=len(jpt),
        j_per_token=jpt,
        j_per_token_mean=mean,
        j_per_token_std=std,
        cv_pct=_pct(std, mean),
        ci95_half_j=half,
        ci95_pct=None if half is None else _pct(half, mean),
        tokens_per_s=tokens / duration,
        power_w_mean=energy / duration,
        idle_power_w=idle_power_w,
        static_j_per_token_mean=math.fsum(static) / len(static),
        dynamic_j_per_token_mean=dyn_mean,
        dynamic_cv_pct=_pct(dyn_std, abs(dyn_mean)),
        integral_diff_pct_max=max(integral_diff_pct(w) for w in windows),
        duration_s_total=duration,
        energy_j_total=energy,
        tokens_total=tokens,
        gpu_util_pct_mean=_mean_recorded([w.gpu_util_pct_mean for w in windows]),
        cpu_per_wall=_mean_recorded([_cpu_per_wall(w) for w in windows]),
    )


def _cpu_per_wall(window: Window) -> float | None:
    """The generating process's CPU seconds per wall second of a window (None when not recorded)."""
    return None if window.process_cpu_s is None else window.process_cpu_s / window.duration_s


def _mean_recorded(values: Sequence[float | None]) -> float | None:
    """Mean of the values that were recorded (not None); None when none was."""
    known = [v for v in values if v is not None]
    return math.fsum(known) / len(known) if known else None


def integral_diff_pct(window: Window) -> float:
    """How far the integrated-power energy is from the counter energy, in % of the counter."""
    if window.energy_j == 0:
        return 0.0 if window.energy_j_power_integrated == 0 else math.inf
    return 100.0 * abs(window.energy_j_power_integrated - window.energy_j) / window.energy_j


def stopping_reached(j_per_token: Sequence[float], min_windows: int, target_ci_pct: float) -> bool:
    """The sequential stopping rule: at least ``min_windows`` and a 95% CI within ``target_ci_pct`` of the mean."""
    if len(j_per_token) < max(min_windows, 2):
        return False
    mean, std = mean_std(j_per_token)
    half = ci95_half_width(std, len(j_per_token))
    return half is not None and mean > 0 and _pct(half, mean) <= target_ci_pct
