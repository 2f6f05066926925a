"""Recorded traces played back through the engine (every file in tests/data/traces).

The synthetic trace is there until real H200 traces (``h200-*.json``, from ``ecocompute record-trace``)
join it; every file is picked up. On each, windows measured by the engine must read the counter the
trace holds, and, inside a steady phase, the 10 Hz integral of power must agree with the counter within
the validator's 5% gate.
"""

from __future__ import annotations

import bisect
from pathlib import Path

import pytest
from collector_fakes import FakeRunner, VirtualClock

from ecocompute.collector.device.replay import ReplayGpu
from ecocompute.collector.device.sampler import PowerSampler
from ecocompute.collector.device.trace import Trace, load_trace
from ecocompute.collector.errors import TraceError
from ecocompute.collector.run.engine import Engine, EngineConfig
from ecocompute.schema.derive import integral_diff_pct
from ecocompute.schema.models import Precision, Window

TRACES = sorted((Path(__file__).parents[1] / "data" / "traces").glob("*.json"))
WINDOW_S = 2.0
TRIM_S = 0.5
INTEGRAL_GATE_PCT = 5.0


class RecordingReplay(ReplayGpu):
    """A replay that remembers when the engine read the energy counter."""

    def __init__(self, trace: Trace, clock: VirtualClock) -> None:
        super().__init__(trace, clock)
        self.reads: list[tuple[float, float]] = []

    def energy_j(self) -> float:
        value = super().energy_j()
        self.reads.append((self.now_s(), value))
        return value


def counter_at(trace: Trace, t: float) -> float:
    """The trace's counter at trace time ``t``, in J (sample and hold)."""
    i = bisect.bisect_right(trace.column("t_s"), t) - 1
    return float(trace.rows[max(0, i)][1]) / 1000.0


def replay_windows(trace: Trace) -> tuple[list[Window], RecordingReplay]:
    clock = VirtualClock()
    gpu = RecordingReplay(trace, clock)
    sampler = PowerSampler(gpu, clock)
    sampler.start()
    engine = Engine(gpu, sampler, clock, EngineConfig(window_s=WINDOW_S, seed=1), own_contexts=0)
    runner = FakeRunner(Precision.FP16, clock, call_s=0.25, tokens=256)
    windows = []
    while gpu.now_s() + WINDOW_S + 0.5 < trace.end_s:
        windows.append(engine.measure_window(runner, len(windows)))
    sampler.stop()
    return windows, gpu


@pytest.fixture(params=TRACES, ids=[p.stem for p in TRACES])
def trace(request: pytest.FixtureRequest) -> Trace:
    return load_trace(request.param)


def test_windows_read_the_counter_of_the_trace(trace: Trace) -> None:
    windows, gpu = replay_windows(trace)
    assert len(windows) >= 4
    reads = gpu.reads
    assert len(reads) == 2 * len(windows)
    for window, (start, end) in zip(windows, zip(reads[::2], reads[1::2], strict=True), strict=True):
        expected_j = counter_at(trace, end[0]) - counter_at(trace, start[0])
        assert window.energy_j == pytest.approx(expected_j, abs=1e-6)
        assert window.duration_s == pytest.approx(end[0] - start[0], abs=1e-6)


def test_integral_agrees_with_the_counter_inside_steady_phases(trace: Trace) -> None:
    windows, gpu = replay_windows(trace)
    starts = [t for t, _ in gpu.reads[::2]]
    checked, problems = 0, []
    for window, start in zip(windows, starts, strict=True):
        end = start + window.duration_s
        inside = [p for p in trace.phases if p.start_s + TRIM_S <= start and end <= p.end_s - TRIM_S]
        if not inside:
            continue
        checked += 1
        diff = integral_diff_pct(window)
        if diff > INTEGRAL_GATE_PCT:
            problems.append(f"window at {start:.1f}-{end:.1f} s ({inside[0].name}): {diff:.2f}%")
    assert checked >= 3, "the trace has too few steady stretches to check"
    assert not problems, "counter and integral disagree: " + "; ".join(problems)


def test_load_windows_draw_more_power_than_idle_ones(trace: Trace) -> None:
    windows, gpu = replay_windows(trace)
    starts = [t for t, _ in gpu.reads[::2]]
    load = next(p for p in trace.phases if not p.name.startswith("idle"))
    power: dict[str, list[float]] = {"load": [], "idle": []}
    for window, start in zip(windows, starts, strict=True):
        end = start + window.duration_s
        if load.start_s + TRIM_S <= start and end <= load.end_s - TRIM_S:
            power["load"].append(window.energy_j / window.duration_s)
        elif end <= load.start_s or start >= load.end_s + TRIM_S:
            power["idle"].append(window.energy_j / window.duration_s)
    assert power["load"] and power["idle"]
    assert min(power["load"]) > 1.5 * max(power["idle"])


def test_replay_past_the_end_raises(trace: Trace) -> None:
    clock = VirtualClock()
    gpu = ReplayGpu(trace, clock)
    clock.advance(trace.end_s - trace.start_s + 1.0)
    with pytest.raises(TraceError, match="the trace ended"):
        gpu.energy_j()
    assert gpu.fingerprint().gpu_arch == trace.gpu["gpu_arch"]
