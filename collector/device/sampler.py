"""The power sampler: a 10 Hz thread reading power, SM clock, utilisation and throttle reasons.

Its integral of power over a window is the second opinion on the energy counter: a window where the
two differ by more than 2% is flagged by the validator. The integral is a trapezoid over the window's
``[start, end]``, using the samples inside it and interpolating at the ends from the samples that
bracket them (the engine also takes one sample at each end itself).
"""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from ecocompute.collector.device.gpu import GpuMonitor
from ecocompute.collector.host.clock import Clock, Timer

DEFAULT_PERIOD_S = 0.1


@dataclass(frozen=True)
class PowerSample:
    """One reading of the sampler. ``power_w`` is the power that is integrated (see :func:`take_sample`)."""

    t_s: float
    power_w: float
    usage_w: float
    average_w: float | None
    sm_clock_mhz: float | None  # None: a sensor the GPU lacks (never 0)
    util_pct: float | None
    throttle_reasons: tuple[str, ...] | None


@dataclass(frozen=True)
class WindowPower:
    """What the samples say about one window.

    ``energy_j`` integrates the sampled power (instant where available); ``energy_j_usage`` integrates
    ``nvmlDeviceGetPowerUsage`` alone, for comparison (the overhead benchmark reports both).
    """

    energy_j: float
    energy_j_usage: float
    samples: int
    sm_clock_mhz_mean: float | None  # None: the GPU does not report it
    util_pct_mean: float | None
    throttle_reasons: list[str] | None
    points: tuple[tuple[float, float], ...] = ()  # (seconds since the window's start, integrated W), inside it
    coverage: Coverage | None = None


@dataclass(frozen=True)
class Coverage:
    """How well a window's power readings cover it: the gap at each edge and the longest gap between two."""

    first_sample_s: float
    last_sample_gap_s: float
    max_gap_s: float


def coverage(times_s: Sequence[float], t0_s: float, t1_s: float) -> Coverage:
    """The :class:`Coverage` of ``[t0_s, t1_s]`` by readings at ``times_s`` (sorted, inside the window)."""
    if not times_s:
        raise ValueError(f"no power sample between {t0_s:.3f} s and {t1_s:.3f} s")
    gaps = [b - a for a, b in itertools.pairwise(times_s)]
    return Coverage(times_s[0] - t0_s, t1_s - times_s[-1], max(gaps, default=0.0))


def take_sample(gpu: GpuMonitor, t_s: float) -> PowerSample:
    """Read the GPU once.

    The integrated power is NVML's instant power field where the GPU has it, else
    ``nvmlDeviceGetPowerUsage`` (which newer consumer GPUs average over 1 s).
    """
    fields = gpu.power_w_fields()
    usage_w = gpu.power_w()
    return PowerSample(
        t_s=t_s,
        power_w=fields.instant_w if fields.instant_w is not None else usage_w,
        usage_w=usage_w,
        average_w=fields.average_w,
        sm_clock_mhz=gpu.sm_clock_mhz(),
        util_pct=gpu.utilization_pct(),
        throttle_reasons=None if (reasons := gpu.throttle_reasons()) is None else tuple(reasons),
    )


def _interpolate(points: Sequence[tuple[float, float]], t: float) -> float:
    """Piecewise-linear value at ``t``; held constant beyond the first and last points."""
    if t <= points[0][0]:
        return points[0][1]
    for (ta, va), (tb, vb) in itertools.pairwise(points):
        if ta <= t <= tb:
            return va if tb == ta else va + (vb - va) * (t - ta) / (tb - ta)
    return points[-1][1]


def integrate_energy_j(points: Sequence[tuple[float, float]], t0_s: float, t1_s: float) -> float:
    """Trapezoid integral of power (W) over ``[t0_s, t1_s]`` through ``(t_s, power_w)`` points, in J.

    Points must be sorted by time. The ends are interpolated from the points that bracket them.
    """
    if not points:
        raise ValueError("no power samples to integrate")
    if t1_s <= t0_s:
        return 0.0
    knots = [(t0_s, _interpolate(points, t0_s))]
    knots += [(t, p) for t, p in points if t0_s < t < t1_s]
    knots.append((t1_s, _interpolate(points, t1_s)))
    return math.fsum((tb - ta) * (pa + pb) / 2 for (ta, pa), (tb, pb) in itertools.pairwise(knots))


def summarize(samples: Sequence[PowerSample], t0_s: float, t1_s: float) -> WindowPower:
    """Integral, sample count, mean SM clock and utilisation, and throttle reasons seen in ``[t0_s, t1_s]``.

    A sensor the GPU lacks gives None (not 0) for its figure.
    """
    inside = sorted((s for s in samples if t0_s <= s.t_s <= t1_s), key=lambda s: s.t_s)
    if not inside:
        raise ValueError(f"no power sample between {t0_s:.3f} s and {t1_s:.3f} s")
    seen = [s.throttle_reasons for s in inside if s.throttle_reasons is not None]
    reasons = sorted({reason for sample in seen for reason in sample}) if seen else None
    return WindowPower(
        energy_j=integrate_energy_j([(s.t_s, s.power_w) for s in samples], t0_s, t1_s),
        energy_j_usage=integrate_energy_j([(s.t_s, s.usage_w) for s in samples], t0_s, t1_s),
        samples=len(inside),
        sm_clock_mhz_mean=_mean([s.sm_clock_mhz for s in inside]),
        util_pct_mean=_mean([s.util_pct for s in inside]),
        throttle_reasons=reasons,
        points=tuple((s.t_s - t0_s, s.power_w) for s in inside),
        coverage=coverage([s.t_s for s in inside], t0_s, t1_s),
    )


def _mean(values: Sequence[float | None]) -> float | None:
    """The mean of the readings taken; None when the GPU gave none (a sensor it lacks)."""
    known = [v for v in values if v is not None]
    return math.fsum(known) / len(known) if known else None


class PowerSampler:
    """Samples a GPU every ``period_s`` on the clock's timer while started; :meth:`sample_now` adds one more.

    A failed reading on the thread is kept and raised by the next :meth:`window` call, so a window
    never silently loses its samples. Without :meth:`start`, only :meth:`sample_now` samples (the
    "sampler off" arm of the overhead benchmark).
    """

    def __init__(self, gpu: GpuMonitor, clock: Clock, period_s: float = DEFAULT_PERIOD_S) -> None:
        self._gpu = gpu
        self._clock = clock
        self.period_s = period_s
        self._samples: list[PowerSample] = []
        self._lock = threading.Lock()
        self._timer: Timer | None = None
        self._error: BaseException | None = None
        self.last: WindowPower | None = None

    def start(self) -> None:
        """Start periodic sampling."""
        if self._timer is None:
            self._timer = self._clock.call_every(self.period_s, self._tick)

    def stop(self) -> None:
        """Stop periodic sampling."""
        timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    @property
    def running(self) -> bool:
        """True while periodic sampling is on."""
        return self._timer is not None

    def _tick(self) -> None:
        if self._error is not None:
            return
        try:
            self.sample_now()
        except Exception as exc:  # kept for the engine: a thread cannot raise into it
            self._error = exc

    def sample_now(self) -> PowerSample:
        """Take one sample now and keep it."""
        sample = take_sample(self._gpu, self._clock.monotonic())
        with self._lock:
            self._samples.append(sample)
        return sample

    def raise_if_failed(self) -> None:
        """Raise the error a sampling thread met, if any."""
        if self._error is not None:
            raise self._error

    def window(self, t0_s: float, t1_s: float) -> WindowPower:
        """Summarise ``[t0_s, t1_s]`` and forget samples older than the one that brackets ``t1_s``."""
        self.raise_if_failed()
        with self._lock:
            samples = sorted(self._samples, key=lambda s: s.t_s)
            keep_from = max((i for i, s in enumerate(samples) if s.t_s <= t1_s), default=0)
            self._samples = samples[keep_from:]
        self.last = summarize(samples, t0_s, t1_s)
        return self.last
