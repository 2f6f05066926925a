"""Where a change in energy crosses zero as model size grows: the numeric core of the crossover.

Two methods, both on per-size changes ``c(N)`` in percent (positive: the quantized precision costs more):

``loglinear`` (the default): sort the sizes, find the LARGEST adjacent pair that goes from positive to
zero-or-negative, and interpolate linearly in ``log10(N)`` between the two:
``log10 N* = x_i + (x_(i+1) - x_i) * c_i / (c_i - c_(i+1))``. It uses only the two measured sizes that bracket
the sign change, so a crossover never lies outside the measured range.

``saturating``: the curve H. Zhang fits in ``quant-energy/build/fit_curves.py`` to publish the T4, RTX 4090 and
RTX 5090 crossovers: ``c(N) = A - S * g(N / N0)`` with ``g(x) = x / (1 + x)``, N in billions, fitted by bounded
least squares (A in [-50, max(c) + 50], S in [0, cap + max(0, max(c))], N0 in [0.1, 200]; cap 75 points for
4-bit, 50 for 8-bit); the crossover is ``N0 * A / (S - A)`` when ``S > A > 0``. It uses every point and may
extrapolate beyond the measured sizes.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
METHODS = ("loglinear", "saturating")


def crossing_log10(log10_params: FloatArray, changes: FloatArray) -> FloatArray:
    """Log10 crossover of each row of ``changes`` (shape (B, k), sizes ascending); NaN where none.

    The crossing is the largest positive -> zero-or-negative step, interpolated linearly in log10(N).
    """
    c = np.atleast_2d(changes)
    x = np.asarray(log10_params, dtype=np.float64)
    result = np.full(c.shape[0], np.nan)
    if c.shape[1] < 2:
        return result
    left, right = c[:, :-1], c[:, 1:]
    steps = (left > 0) & (right <= 0)
    has = steps.any(axis=1)
    last = steps.shape[1] - 1 - np.argmax(steps[:, ::-1], axis=1)
    rows = np.nonzero(has)[0]
    i = last[rows]
    c_left, c_right = c[rows, i], c[rows, i + 1]
    fraction = c_left / (c_left - c_right)
    result[rows] = x[i] + (x[i + 1] - x[i]) * fraction
    return result


def saturating_model(n_b: FloatArray, a: float, s: float, n0: float) -> FloatArray:
    """``A - S * (N / N0) / (1 + N / N0)``: the saturating change-in-energy curve (N in billions)."""
    ratio = n_b / n0
    return a - s * ratio / (1.0 + ratio)


def saturating_crossover_b(params_b: FloatArray, changes: FloatArray, cap: float) -> float | None:
    """Crossover in billions of the saturating fit (see the module docstring), or None when it has none."""
    from scipy.optimize import OptimizeWarning, curve_fit

    n = np.asarray(params_b, dtype=np.float64)
    y = np.asarray(changes, dtype=np.float64)
    if n.size < 2:
        return None
    y_max = float(y.max())
    lo = [-50.0, 0.0, 0.1]
    hi = [y_max + 50.0, cap + max(0.0, y_max), 200.0]
    median = float(np.clip(np.median(n), lo[2], hi[2]))
    p0 = [min(y_max, hi[0]), min(hi[1], 60.0), median]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimizeWarning)
        try:
            if n.size >= 3:
                popt, _ = curve_fit(saturating_model, n, y, p0=p0, bounds=(lo, hi), maxfev=200000)
                a, s, n0 = (float(v) for v in popt)
            else:

                def two(nn: FloatArray, aa: float, ss: float) -> FloatArray:
                    return saturating_model(nn, aa, ss, median)

                popt, _ = curve_fit(two, n, y, p0=p0[:2], bounds=(lo[:2], hi[:2]), maxfev=200000)
                a, s, n0 = float(popt[0]), float(popt[1]), median
        except (RuntimeError, ValueError):
            return None
    if not s > a > 0:
        return None
    crossover = n0 * a / (s - a)
    return crossover if math.isfinite(crossover) and crossover > 0 else None


def cap_for(precision: str) -> float:
    """The saturating fit's bound on savings: 50 points for 8-bit precisions, 75 for the others."""
    return 50.0 if precision.startswith("int8") else 75.0


def percentile_ci(values: FloatArray) -> tuple[float | None, float | None]:
    """2.5th and 97.5th percentiles of the finite ``values`` (None when there are none)."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return None, None
    low, high = np.percentile(finite, [2.5, 97.5])
    return float(low), float(high)
