"""The power sampler: the trapezoid integral, window summaries, and errors met on its thread."""

from __future__ import annotations

import pytest
from collector_fakes import FakePynvml, VirtualClock

from ecocompute.collector.device.nvml import NvmlGpu
from ecocompute.collector.device.sampler import PowerSample, PowerSampler, integrate_energy_j, summarize
from ecocompute.collector.errors import NvmlReadError


def test_integral_of_a_constant_is_power_times_time() -> None:
    points = [(0.0, 100.0), (1.0, 100.0), (2.0, 100.0)]
    assert integrate_energy_j(points, 0.25, 1.75) == pytest.approx(150.0)


def test_integral_interpolates_the_window_ends_from_bracketing_samples() -> None:
    points = [(0.0, 0.0), (10.0, 100.0)]  # a ramp: P(t) = 10 t
    assert integrate_energy_j(points, 2.0, 4.0) == pytest.approx(60.0)  # ∫ 10t dt from 2 to 4


def test_integral_holds_the_last_value_beyond_the_samples() -> None:
    assert integrate_energy_j([(0.0, 50.0)], 1.0, 3.0) == pytest.approx(100.0)
    assert integrate_energy_j([(0.0, 50.0)], 3.0, 3.0) == 0.0
    with pytest.raises(ValueError, match="no power samples"):
        integrate_energy_j([], 0.0, 1.0)


def _sample(t: float, power: float, clock: float = 1980.0, reasons: tuple[str, ...] = ()) -> PowerSample:
    return PowerSample(t, power, power, None, clock, 20.0, reasons)


def test_summary_counts_samples_inside_and_unites_throttle_reasons() -> None:
    samples = [_sample(0.0, 100.0), _sample(1.0, 100.0, 1900.0, ("sw_power_cap",)), _sample(2.0, 100.0, 1800.0),
               _sample(3.0, 100.0)]  # fmt: skip
    summary = summarize(samples, 0.5, 2.5)
    assert summary.samples == 2
    assert summary.energy_j == pytest.approx(200.0)
    assert summary.sm_clock_mhz_mean == pytest.approx(1850.0)
    assert summary.throttle_reasons == ["sw_power_cap"]
    with pytest.raises(ValueError, match="no power sample"):
        summarize(samples, 3.5, 4.0)


def test_sampler_samples_at_its_period_and_forgets_old_samples(fake_nvml: FakePynvml, clock: VirtualClock) -> None:
    with NvmlGpu(0) as gpu:
        sampler = PowerSampler(gpu, clock, period_s=0.125)
        sampler.start()
        t0 = clock.monotonic()
        clock.advance(1.5)
        fake_nvml.set_power(300.0)
        clock.advance(1.5)
        sampler.stop()
        first = sampler.window(t0, t0 + 1.0)
        assert first.samples == 9
        assert first.energy_j == pytest.approx(150.0, rel=1e-9)
        second = sampler.window(t0 + 2.0, t0 + 3.0)
        assert second.energy_j == pytest.approx(300.0, rel=1e-9)
        with pytest.raises(ValueError, match="no power sample"):
            sampler.window(t0, t0 + 1.0)  # forgotten
        assert not sampler.running


def test_sampler_prefers_the_instant_field_and_falls_back_to_power_usage(fake_nvml: FakePynvml,
                                                                         clock: VirtualClock) -> None:  # fmt: skip
    with NvmlGpu(0) as gpu:
        sampler = PowerSampler(gpu, clock)
        assert sampler.sample_now().average_w == 150.0
    fake_nvml.fields_supported = False
    with NvmlGpu(0) as gpu:
        sample = PowerSampler(gpu, clock).sample_now()
        assert (sample.power_w, sample.average_w) == (150.0, None)


def test_a_failed_reading_on_the_thread_is_raised_at_the_window(fake_nvml: FakePynvml, clock: VirtualClock) -> None:
    with NvmlGpu(0) as gpu:
        sampler = PowerSampler(gpu, clock)
        sampler.start()
        fake_nvml.fail["nvmlDeviceGetPowerUsage"] = 999
        clock.advance(0.5)
        sampler.stop()
        with pytest.raises(NvmlReadError, match="could not read the power draw"):
            sampler.window(clock.monotonic() - 0.5, clock.monotonic())
