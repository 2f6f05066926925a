"""The curves a group of evidence is fitted with when the artifact is built (the engine only evaluates them).

Each group's cells are (``x = ln(params_b)``, ``y = ln(J_q / J_fp16)``, ``v`` the variance of ``y``). Besides the
interpolation the engine does itself, a group with two sizes or more gets a weighted log-linear line
(``y = a + b x``) and one with three or more gets the seed's saturating curve ``c(N) = A - S (N/N0) / (1 + N/N0)``
(``c`` in percent), once with the seed's cap on savings (75 points for 4-bit, 50 for 8-bit) and once without. The
engine averages every fit it has and counts their spread into the interval, so no single fit (or cap) decides.
"""

from __future__ import annotations

import math
import warnings
from functools import lru_cache
from typing import Any

import numpy as np


def loglinear_fit(xs: tuple[float, ...], ys: tuple[float, ...], vs: tuple[float, ...]) -> dict[str, Any] | None:
    """Weighted least-squares line through the cells (None with fewer than two sizes)."""
    if len(xs) < 2:
        return None
    x, y, w = np.array(xs), np.array(ys), 1 / np.array(vs)
    xm, ym = float((w * x).sum() / w.sum()), float((w * y).sum() / w.sum())
    b = float((w * (x - xm) * (y - ym)).sum() / (w * (x - xm) ** 2).sum())
    return {"name": "loglinear", "kind": "loglinear", "a": ym - b * xm, "b": b}


def seed_cap(precision: str) -> float:
    """The seed's cap on savings: 50 points for 8-bit precisions (INT8 and FP8), 75 for the others."""
    return 50.0 if precision.startswith(("int8", "fp8")) else 75.0


def _saturating(n: np.ndarray, a: float, s: float, n0: float) -> np.ndarray:
    ratio = n / n0
    result: np.ndarray = a - s * ratio / (1 + ratio)
    return result


@lru_cache(maxsize=4096)
def saturating_fit(xs: tuple[float, ...], ys: tuple[float, ...], vs: tuple[float, ...],
                   cap: float | None) -> dict[str, Any] | None:  # fmt: skip
    """The seed's saturating curve fitted in percent, weighted by each cell's spread (None below three sizes)."""
    from scipy.optimize import OptimizeWarning, curve_fit

    if len(xs) < 3:
        return None
    n = np.exp(np.array(xs))
    c = 100 * (np.exp(np.array(ys)) - 1)
    sigma = 100 * np.exp(np.array(ys)) * np.sqrt(np.array(vs))
    c_max = float(c.max())
    s_max = (cap + max(0.0, c_max)) if cap is not None else 10 * (abs(c_max) + abs(float(c.min()))) + 100
    lo, hi = [-100.0, 0.0, 0.05], [c_max + 100.0, s_max, 500.0]
    p0 = [min(c_max, hi[0] - 1), min(s_max / 2, 60.0), float(np.clip(np.median(n), lo[2], hi[2]))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimizeWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            popt, _ = curve_fit(_saturating, n, c, p0=p0, sigma=sigma, bounds=(lo, hi), maxfev=20000)
        except (RuntimeError, ValueError):
            return None
    a, s, n0 = (float(v) for v in popt)
    if not all(math.isfinite(v) for v in (a, s, n0)):
        return None
    name = "saturating-capped" if cap is not None else "saturating-uncapped"
    return {"name": name, "kind": "saturating", "a": a, "s": s, "n0": n0, "cap": cap,
            "at_cap": cap is not None and s >= s_max * 0.999}  # fmt: skip


def group_fits(cells: list[dict[str, Any]], precision: str) -> list[dict[str, Any]]:
    """Every fit the group's cells support, in a fixed order."""
    xs = tuple(round(c["x"], 12) for c in cells)
    ys = tuple(round(c["y"], 12) for c in cells)
    vs = tuple(round(c["v"], 15) for c in cells)
    found = [loglinear_fit(xs, ys, vs), saturating_fit(xs, ys, vs, seed_cap(precision)),
             saturating_fit(xs, ys, vs, None)]  # fmt: skip
    return [f for f in found if f is not None]
