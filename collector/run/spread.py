"""The CV gate, tracked as windows arrive: can this measurement still pass the validator's spread gate.

The validator accepts a measurement into the dataset's gated tier only when the CV of its J/token windows is at
most the gate (:data:`ecocompute.validate.core.DEFAULT_MAX_CV_PCT`); one that fails only the gate goes to the
*all* tier. After each window this module answers one question: with ``max_windows`` windows at most, is the
gate still within reach?

- ``cannot``: even if every window still to come landed exactly on the current mean, the final CV would stay
  above the gate (adding points at the mean keeps the sum of squares and only adds degrees of freedom, which is
  the most the remaining windows can do).
- ``unlikely``: the one-sided 99% lower confidence bound of the true CV (chi-square, n - 1 degrees of freedom)
  is above the gate: the spread is real, not bad luck in a few windows.
- ``open``: neither; keep measuring.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass

from ecocompute.schema.derive import mean_std
from ecocompute.validate.core import DEFAULT_MAX_CV_PCT

GATE_CV_PCT = DEFAULT_MAX_CV_PCT
UNLIKELY_CONFIDENCE = 0.99
MIN_WINDOWS_FOR_VERDICT = 3


class OnSpread(enum.StrEnum):
    """What the collector does once the gate is out of reach (``--on-spread``)."""

    STOP = "stop"
    CONTINUE = "continue"


class Reach(enum.StrEnum):
    """Whether the gate can still be met."""

    OPEN = "open"
    UNLIKELY = "unlikely"
    CANNOT = "cannot"


@dataclass(frozen=True)
class SpreadVerdict:
    """A measurement's spread so far, against the gate."""

    reach: Reach
    cv_pct: float
    n_windows: int
    best_final_cv_pct: float
    cv_low_pct: float | None

    @property
    def out_of_reach(self) -> bool:
        """True once the gate is out of reach (``cannot`` or ``unlikely``)."""
        return self.reach is not Reach.OPEN


def _chi2_upper(q: float, dof: int) -> float:
    from scipy.stats import chi2

    return float(chi2.ppf(q, dof))


def spread_verdict(j_per_token: Sequence[float], max_windows: int, gate_pct: float = GATE_CV_PCT) -> SpreadVerdict:
    """How the CV of ``j_per_token`` stands against ``gate_pct`` with ``max_windows`` windows at most."""
    n = len(j_per_token)
    if n < 2:
        return SpreadVerdict(Reach.OPEN, 0.0, n, 0.0, None)
    mean, std = mean_std(j_per_token)
    cv = 100.0 * std / mean if mean > 0 else math.inf
    sum_sq = std**2 * (n - 1)
    best_final = 100.0 * math.sqrt(sum_sq / (max(n, max_windows) - 1)) / mean if mean > 0 else math.inf
    cv_low = cv * math.sqrt((n - 1) / _chi2_upper(UNLIKELY_CONFIDENCE, n - 1)) if n >= 2 else None
    if n >= MIN_WINDOWS_FOR_VERDICT and best_final > gate_pct:
        reach = Reach.CANNOT
    elif n >= MIN_WINDOWS_FOR_VERDICT and cv_low is not None and cv_low > gate_pct:
        reach = Reach.UNLIKELY
    else:
        reach = Reach.OPEN
    return SpreadVerdict(reach, cv, n, best_final, cv_low)


def passes_gate(j_per_token: Sequence[float], gate_pct: float = GATE_CV_PCT) -> bool:
    """Whether these windows pass the gate as the validator computes it (CV of J/token at most the gate)."""
    if len(j_per_token) < 2:
        return False
    mean, std = mean_std(j_per_token)
    return mean > 0 and 100.0 * std / mean <= gate_pct


def advice(precision: str, verdict: SpreadVerdict, gate_pct: float = GATE_CV_PCT) -> str:
    """One line for the user: where the spread stands and what to change."""
    why = (
        f"even perfect windows from here leave it at {verdict.best_final_cv_pct:.2f}%"
        if verdict.reach is Reach.CANNOT
        else f"the true CV is above {verdict.cv_low_pct or 0:.2f}% at 99% confidence"
    )
    return (
        f"{precision}: CV {verdict.cv_pct:.2f}% after {verdict.n_windows} windows, above the {gate_pct:g}% gate "
        f"({why}): this run cannot enter the dataset's gated tier. Make the GPU-bound part larger (a larger "
        "--batch-size, --stack compiled-all), keep the host quiet, or accept the all tier"
    )
