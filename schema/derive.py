"""The one derivation: a measurement's windows -> J/token and every figure built on it.

The collector, the validator and the publisher all call :func:`derive`; nothing derived is
ever read back from a submission.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from functools import lru_cache
from typing import Any

from ecocompute.schema.errors import DerivationError
from ecocompute.schema.models import Window

CV_GATE_PCT = 2.0
"""The CV gate: a measurement whose CV of J/token is above it (E-CV) is published only in the ``*_all`` tier."""
J_PER_WH = 3600.0


def passes_cv_gate(cv_pct: float, gate_pct: float = CV_GATE_PCT) -> bool:
    """Whether a measurement's CV of J/token is within the gate (the validator's E-CV is its negation)."""
    return cv_pct <= gate_pct


ASYMPTOTIC_FROM_DOF = 1000
"""From this many degrees of freedom the t quantile comes from its expansion in 1/dof, not the exact CDF."""
P_975 = 0.975
COVERAGE = 2.0 * P_975 - 1.0  # P(|T| < t) at the 0.975 quantile, exactly as the float 0.975 has it
TAIL = 2.0 - 2.0 * P_975  # P(|T| > t) there


def _normal_quantile_975() -> float:
    """The standard normal's 0.975 quantile: Newton's method on ``erfc(z / sqrt 2) = TAIL`` (the two-sided tail)."""
    z = 2.0
    for _ in range(50):
        step = (math.erfc(z / math.sqrt(2.0)) - TAIL) / (math.sqrt(2.0 / math.pi) * math.exp(-z * z / 2.0))
        z += step
        if abs(step) < 1e-16 * z:
            break
    return z


def _t_central(t: float, dof: int) -> float:
    """P(|T| < t) for Student's t with ``dof`` degrees of freedom, exactly (Abramowitz & Stegun 26.7.3-4).

    With theta = atan(t / sqrt(dof)), c = cos(theta)^2: for even dof, sin(theta) * (1 + c/2 + 1*3/(2*4) c^2 +
    ...), dof/2 terms; for odd dof, 2/pi * (theta + sin(theta) cos(theta) * (1 + 2/3 c + 2*4/(3*5) c^2 + ...)),
    (dof-1)/2 terms. Sums of positive terms: accurate to a few units in the last place.
    """
    theta = math.atan(t / math.sqrt(dof))
    c = math.cos(theta) ** 2
    term, total = 1.0, 1.0
    if dof % 2 == 0:
        for k in range(1, dof // 2):
            term *= c * (2 * k - 1) / (2 * k)
            total += term
        return math.sin(theta) * total
    if dof == 1:
        return 2.0 * theta / math.pi
    for k in range(1, (dof - 1) // 2):
        term *= c * (2 * k) / (2 * k + 1)
        total += term
    return 2.0 / math.pi * (theta + math.sin(theta) * math.cos(theta) * total)


def _t_two_sided_tail(t: float, dof: int) -> float:
    """P(|T| > t) for Student's t with ``dof`` degrees of freedom."""
    return 1.0 - _t_central(t, dof)


def _t_quantile_expansion(dof: int) -> float:
    """The 0.975 quantile from the normal's, by its expansion in 1/dof to the 4th order (A&S 26.7.5)."""
    x = _normal_quantile_975()
    g1 = (x**3 + x) / 4
    g2 = (5 * x**5 + 16 * x**3 + 3 * x) / 96
    g3 = (3 * x**7 + 19 * x**5 + 17 * x**3 - 15 * x) / 384
    g4 = (79 * x**9 + 776 * x**7 + 1482 * x**5 - 1920 * x**3 - 945 * x) / 92160
    return x + g1 / dof + g2 / dof**2 + g3 / dof**3 + g4 / dof**4


@lru_cache(maxsize=1024)
def t_quantile_975(dof: int) -> float:
    """Two-sided 95% Student t quantile for ``dof`` (a positive integer) degrees of freedom.

    Computed here, so the validator and the collector need no scipy: below :data:`ASYMPTOTIC_FROM_DOF`, the t
    where the exact P(|T| < t) (:func:`_t_central`) reaches :data:`COVERAGE`, found by bisection to the last bit
    between bounds that bracket it; from it, the expansion in 1/dof (relative error below 1e-14 there).
    tests/validate/test_validate_t_quantile.py holds both to scipy's ``stdtrit`` to 1e-12.
    """
    dof = int(dof)
    if dof < 1:
        raise ValueError(f"the t distribution needs at least 1 degree of freedom, not {dof}")
    if dof >= ASYMPTOTIC_FROM_DOF:
        return _t_quantile_expansion(dof)
    if dof == 1:
        return math.tan(math.pi * (P_975 - 0.5))  # the Cauchy distribution's quantile, in closed form
    low, high = _normal_quantile_975(), 2.0 * _t_quantile_expansion(dof) + 2.0  # the quantile is in between
    while _t_central(high, dof) < COVERAGE:  # never taken for dof >= 2, kept as a guard
        high *= 2.0
    for _ in range(200):  # bisection to the last bit: P(|T| < t) increases with t
        middle = (low + high) / 2.0
        if middle in (low, high):
            break
        if _t_central(middle, dof) < COVERAGE:
            low = middle
        else:
            high = middle
    return low if COVERAGE - _t_central(low, dof) <= _t_central(high, dof) - COVERAGE else high


def figure(description: str, unit: str | None = None) -> Any:
    """A derived figure's entry in the field list: what it is and its unit (the table columns read it from here)."""
    return field(metadata={"description": description, "unit": unit})


@dataclass(frozen=True)
class WindowFigures:
    """Figures of one window: the per-window part of the one derivation."""

    j_per_token: float | None = figure("energy_j / tokens, one sample of the measurement (null: no tokens)", "J/token")
    static_j_per_token: float | None = figure(
        "idle power x duration_s / tokens, the part idle power explains (null: no tokens)", "J/token"
    )
    dynamic_j_per_token: float | None = figure(
        "j_per_token - static_j_per_token, the idle-subtracted part (null: no tokens)", "J/token"
    )
    power_w_mean: float = figure("energy_j / duration_s", "W")
    integral_diff_pct: float = figure("|energy_j_power_integrated - energy_j| / energy_j", "%")


def window_j_per_token(window: Window) -> float:
    """Energy per generated token of a window with tokens, in J (the one definition of J/token)."""
    return window.energy_j / window.tokens


def window_static_j_per_token(window: Window, idle_power_w: float) -> float:
    """The part of a window's J/token that idle power explains: idle power x duration / tokens, in J."""
    return idle_power_w * window.duration_s / window.tokens


def window_power_w(window: Window) -> float:
    """A window's average power: counter energy / duration, in W."""
    return window.energy_j / window.duration_s


def window_tokens_per_s(window: Window) -> float:
    """A window's generation speed: tokens / duration."""
    return window.tokens / window.duration_s


def window_s_per_token(window: Window) -> float:
    """A window's time per generated token (the host's speed), in s: duration / tokens."""
    return window.duration_s / window.tokens


def window_cpu_per_wall(window: Window) -> float | None:
    """The generating process's CPU seconds per wall second of a window (None when not recorded)."""
    return None if window.process_cpu_s is None else window.process_cpu_s / window.duration_s


def static_share_pct(derived: Derived) -> float:
    """The share of a measurement's J/token that is idle power x time, in %."""
    return 100 * derived.static_j_per_token_mean / derived.j_per_token_mean


def window_figures(window: Window, idle_power_w: float) -> WindowFigures:
    """J/token of one window, its static (idle power) and dynamic (idle-subtracted) parts, mean power, integral gap.

    ``idle_power_w`` is the GPU's power with the model loaded and idle (:attr:`Idle.power_w`). :func:`derive`
    computes the same per-window figures, through the same two functions, for every window of a measurement.
    """
    jpt = window_j_per_token(window) if window.tokens else None
    static = window_static_j_per_token(window, idle_power_w) if window.tokens else None
    return WindowFigures(
        j_per_token=jpt,
        static_j_per_token=static,
        dynamic_j_per_token=None if jpt is None or static is None else jpt - static,
        power_w_mean=window_power_w(window),
        integral_diff_pct=integral_diff_pct(window),
    )


@dataclass(frozen=True)
class Derived:
    """Figures derived from one measurement's windows. J/token figures are per generated token."""

    n_windows: int = figure("number of windows (warm-up windows not counted)")
    j_per_token: tuple[float, ...] = figure("each window's J/token, in window order", "J/token")
    j_per_token_mean: float = figure("mean of the windows' j_per_token (total energy, idle included)", "J/token")
    j_per_token_std: float = figure("sample standard deviation of the windows' j_per_token", "J/token")
    cv_pct: float = figure("j_per_token_std / j_per_token_mean", "%")
    passes_cv_gate: bool = figure(f"cv_pct is within the {CV_GATE_PCT:g}% gate (false: E-CV, the *_all tier only)")
    ci95_half_j: float | None = figure("Student t(0.975, n-1) x std / sqrt(n) (null: one window)", "J/token")
    j_per_token_ci95_low: float | None = figure("mean - Student t(0.975, n-1) x std / sqrt(n)", "J/token")
    j_per_token_ci95_high: float | None = figure("mean + Student t(0.975, n-1) x std / sqrt(n)", "J/token")
    ci95_pct: float | None = figure("half width of the 95% CI relative to the mean", "%")
    wh_per_1k_tokens: float = figure("j_per_token_mean x 1000 / 3600, the energy of 1,000 tokens", "Wh")
    tokens_per_kwh: float | None = figure("3.6e6 / j_per_token_mean (null: mean not positive)", "tokens/kWh")
    tokens_per_s: float = figure("total tokens / total duration", "tokens/s")
    power_w_mean: float = figure("total energy / total duration", "W")
    idle_power_w: float = figure("mean of the idle power before and after, model loaded", "W")
    static_j_per_token_mean: float = figure("mean over windows of idle power x duration / tokens", "J/token")
    dynamic_j_per_token_mean: float = figure("mean over windows of (j_per_token - static part)", "J/token")
    dynamic_cv_pct: float = figure("CV of the dynamic part", "%")
    integral_diff_pct_max: float = figure("largest counter-vs-power-integral disagreement among the windows", "%")
    gpu_util_pct_mean: float | None = figure("mean of the windows' GPU utilisation (null: not recorded)", "%")
    cpu_per_wall: float | None = figure(
        "mean over windows of process_cpu_s / duration_s (near 1: host-bound; null: not recorded)"
    )
    duration_s_total: float = figure("total duration of the windows", "s")
    energy_j_total: float = figure("total energy of the windows", "J")
    tokens_total: int = figure("total tokens of the windows")


def figure_doc(figures: type[WindowFigures | Derived], name: str) -> tuple[str, str | None]:
    """The description and unit of figure ``name`` of ``figures`` (:class:`WindowFigures` or :class:`Derived`)."""
    meta = next(f for f in fields(figures) if f.name == name).metadata
    return meta["description"], meta["unit"]


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
    jpt = tuple(map(window_j_per_token, windows))  # what window_figures gives each window, without the objects
    static = [window_static_j_per_token(w, idle_power_w) for w in windows]
    dynamic = [j - s for j, s in zip(jpt, static, strict=True)]
    mean, std = mean_std(jpt)
    dyn_mean, dyn_std = mean_std(dynamic)
    half = ci95_half_width(std, len(jpt))
    duration = math.fsum(w.duration_s for w in windows)
    energy = math.fsum(w.energy_j for w in windows)
    tokens = sum(w.tokens for w in windows)
    cv = _pct(std, mean)
    return Derived(
        n_windows=len(jpt),
        j_per_token=jpt,
        j_per_token_mean=mean,
        j_per_token_std=std,
        cv_pct=cv,
        passes_cv_gate=passes_cv_gate(cv),
        ci95_half_j=half,
        j_per_token_ci95_low=None if half is None else mean - half,
        j_per_token_ci95_high=None if half is None else mean + half,
        ci95_pct=None if half is None else _pct(half, mean),
        wh_per_1k_tokens=mean * 1000.0 / J_PER_WH,
        tokens_per_kwh=1000.0 * J_PER_WH / mean if mean > 0 else None,
        tokens_per_s=tokens / duration,
        power_w_mean=energy / duration,
        idle_power_w=idle_power_w,
        static_j_per_token_mean=math.fsum(static) / len(static),
        dynamic_j_per_token_mean=dyn_mean,
        dynamic_cv_pct=_pct(dyn_std, abs(dyn_mean)),
        integral_diff_pct_max=max(map(integral_diff_pct, windows)),
        gpu_util_pct_mean=_mean_recorded([w.gpu_util_pct_mean for w in windows]),
        cpu_per_wall=_mean_recorded([window_cpu_per_wall(w) for w in windows]),
        duration_s_total=duration,
        energy_j_total=energy,
        tokens_total=tokens,
    )


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
