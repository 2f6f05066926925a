"""Rules of their own for windows measured without an energy counter (``method.energy_source: power_integral``).

Such a window's energy is the integral of the power the sampling thread read, so what the counter's
difference guaranteed must be checked on the readings instead (docs/counterless.md):

- **sampling rate**: at least :data:`MIN_SAMPLES_PER_S` readings per second of window (the collector samples
  at 10 Hz), and the method's own rate no lower (``E-SAMPLING``);
- **coverage**: the first reading at most :data:`MAX_EDGE_GAP_S` after the window's start, the last at most as
  long before its end, and no two readings more than :data:`MAX_GAP_S` apart (``E-COVERAGE``);
- **the integral**: recomputed from ``power_trace`` (trapezoids, the end readings held to the edges) when the
  file holds the readings, and ``energy_j`` equal to ``energy_j_power_integrated`` (``E-INTEGRAL-RECOMPUTED``);
  without readings, the recorded coverage and sample count are judged instead; a window that has neither
  fails (``E-COUNTERLESS-RECORD``).

Files that read an energy counter are not touched here. The checks are plain functions returning findings.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

from ecocompute.schema.models import Measurement, Payload, Window
from ecocompute.validate.findings import Finding, finding

ENERGY_SOURCE = "power_integral"
MIN_SAMPLES_PER_S = 5.0  # half the collector's 10 Hz: a thread that lost every other tick still counts
MAX_EDGE_GAP_S = 0.25  # the collector reads power at both ends itself; 2.5 periods leaves room for a late tick
MAX_GAP_S = 0.5  # five missed periods in a row: a stalled sampler, whose integral guessed a line across the gap
INTEGRAL_TOLERANCE_PCT = 1.0  # the end readings are held, not interpolated from outside the window as sampled
RECORDED_TOLERANCE_PCT = 1e-6  # energy_j is the integral itself: the two fields hold the same number


def _w(m_index: int, w_index: int, field: str = "") -> str:
    base = f"payload.measurements[{m_index}].windows[{w_index}]"
    return f"{base}.{field}" if field else base


def trace_integral_j(trace: Sequence[tuple[float, float]], duration_s: float) -> float:
    """Trapezoid integral over ``[0, duration_s]`` of ``(seconds since start, W)`` readings, ends held, in J."""
    if not trace:
        raise ValueError("no power readings to integrate")
    knots = [(0.0, trace[0][1]), *((t, w) for t, w in trace if 0.0 < t < duration_s), (duration_s, trace[-1][1])]
    return math.fsum((tb - ta) * (pa + pb) / 2 for (ta, pa), (tb, pb) in itertools.pairwise(knots))


def _coverage_of(trace: Sequence[tuple[float, float]], duration_s: float) -> tuple[float, float, float]:
    times = [t for t, _ in trace]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    return times[0], duration_s - times[-1], max(gaps, default=0.0)


def _recorded_coverage(w: Window) -> tuple[float, float, float] | None:
    values = (w.power_first_sample_s, w.power_last_sample_gap_s, w.power_max_gap_s)
    if any(v is None for v in values):
        return None
    first, last, gap = values
    assert first is not None and last is not None and gap is not None  # noqa: S101 - checked just above
    return first, last, gap


def check_window(w: Window, m_index: int, w_index: int) -> list[Finding]:
    """The counterless rules for one window (see the module's docstring)."""
    trace = w.power_trace
    coverage = _coverage_of(trace, w.duration_s) if trace else _recorded_coverage(w)
    samples = len(trace) if trace else w.power_samples
    if coverage is None or samples is None:
        missing = "power_trace, or power_samples and the three power_*_s coverage fields"
        return [finding("E-COUNTERLESS-RECORD", _w(m_index, w_index), f"a power_integral window needs {missing}")]
    found = []
    rate = samples / w.duration_s
    if rate < MIN_SAMPLES_PER_S:
        found.append(finding("E-SAMPLING", _w(m_index, w_index, "power_trace" if trace else "power_samples"),
                             f"{samples} power readings in {w.duration_s:g} s ({rate:.2f}/s), fewer than "
                             f"{MIN_SAMPLES_PER_S:g}/s"))  # fmt: skip
    first, last, gap = coverage
    where = _w(m_index, w_index, "power_trace" if trace else "power_max_gap_s")
    if first > MAX_EDGE_GAP_S or last > MAX_EDGE_GAP_S:
        found.append(finding("E-COVERAGE", where, f"the readings start {first:.3f} s after the window's start and "
                             f"end {last:.3f} s before its end; at most {MAX_EDGE_GAP_S:g} s each"))  # fmt: skip
    if gap > MAX_GAP_S:
        found.append(finding("E-COVERAGE", where, f"{gap:.3f} s without a power reading, over {MAX_GAP_S:g} s"))
    found += _check_integral(w, m_index, w_index)
    return found


def _check_integral(w: Window, m_index: int, w_index: int) -> list[Finding]:
    found = []
    scale = max(w.energy_j, w.energy_j_power_integrated, 1e-9)
    if abs(w.energy_j - w.energy_j_power_integrated) / scale * 100 > RECORDED_TOLERANCE_PCT:
        found.append(finding("E-INTEGRAL-RECOMPUTED", _w(m_index, w_index, "energy_j"),
                             f"{w.energy_j:g} J, but energy_j_power_integrated is {w.energy_j_power_integrated:g} J: "
                             "without a counter both are the integral"))  # fmt: skip
    if w.power_trace:
        recomputed = trace_integral_j(w.power_trace, w.duration_s)
        diff_pct = abs(recomputed - w.energy_j) / max(recomputed, 1e-9) * 100
        if diff_pct > INTEGRAL_TOLERANCE_PCT:
            found.append(finding("E-INTEGRAL-RECOMPUTED", _w(m_index, w_index, "energy_j"),
                                 f"{w.energy_j:g} J, but the window's power_trace integrates to {recomputed:.3f} J "
                                 f"({diff_pct:.2f}% apart, over {INTEGRAL_TOLERANCE_PCT:g}%)"))  # fmt: skip
    return found


def check_counterless(payload: Payload) -> list[Finding]:
    """Every rule of this module over every window of a power_integral submission; nothing for other files."""
    if payload.method.energy_source != ENERGY_SOURCE:
        return []
    found = []
    if payload.method.power_sampling_hz < MIN_SAMPLES_PER_S:
        found.append(finding("E-SAMPLING", "payload.method.power_sampling_hz",
                             f"{payload.method.power_sampling_hz:g} Hz, below {MIN_SAMPLES_PER_S:g} Hz"))  # fmt: skip
    for m_index, m in enumerate(payload.measurements):
        found += check_measurement(m, m_index)
    return found


def check_measurement(measurement: Measurement, m_index: int) -> list[Finding]:
    """The rules over one measurement's measured windows (warm-ups are left out of every figure)."""
    return [f for w_index, w in enumerate(measurement.windows) for f in check_window(w, m_index, w_index)]
