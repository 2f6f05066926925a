"""The engine, on a fake GPU and a virtual clock: windows, interleaving, stopping, failures."""

from __future__ import annotations

import os

import pytest
from collector_fakes import FakePynvml, FakeRunner, VirtualClock

from ecocompute.collector.device.nvml import NvmlGpu
from ecocompute.collector.device.sampler import PowerSampler
from ecocompute.collector.errors import NvmlReadError
from ecocompute.collector.run.engine import (
    Engine,
    EngineConfig,
    Runner,
    SpreadCallback,
    describe_error,
    other_processes,
    round_order,
)
from ecocompute.collector.run.spread import OnSpread
from ecocompute.collector.run.state import MeasurementState
from ecocompute.schema.derive import derive
from ecocompute.schema.models import Precision, Window

FP16, NF4, INT8 = Precision.FP16, Precision.NF4, Precision.INT8


def make_engine(clock: VirtualClock, config: EngineConfig, events: list[tuple[str, bool]] | None = None,
                on_spread: SpreadCallback | None = None) -> Engine:  # fmt: skip
    gpu = NvmlGpu(0)
    sampler = PowerSampler(gpu, clock)
    sampler.start()

    def record(state: MeasurementState, window: Window | None, warmup: bool) -> None:
        if events is not None:
            events.append((state.precision.value if window else f"{state.precision.value}!", warmup))

    return Engine(gpu, sampler, clock, config, on_progress=record, on_spread=on_spread, own_contexts=0)


def test_round_order_alternates() -> None:
    assert [round_order([FP16, NF4, INT8], r) for r in range(3)] == [
        [FP16, NF4, INT8], [INT8, NF4, FP16], [FP16, NF4, INT8]
    ]  # fmt: skip


def test_other_processes_counts_ours_out() -> None:
    assert other_processes(None, 5, 1) is None
    assert other_processes([5, 6], 5, 1) == 1
    assert other_processes([900001], 5, 1) == 0  # inside a container: host PID
    assert other_processes([900001, 900002], 5, 0) == 2


def test_describe_error_is_one_short_line() -> None:
    text = describe_error(RuntimeError("CUDA out of memory.\n  Tried to allocate " + "x" * 5000))
    assert text.startswith("RuntimeError: CUDA out of memory. Tried to allocate")
    assert "\n" not in text
    assert len(text) <= 1000


def test_a_window_reads_the_counter_around_back_to_back_calls(fake_nvml: FakePynvml, clock: VirtualClock) -> None:
    fake_nvml.power_w = 200.0
    engine = make_engine(clock, EngineConfig(window_s=2.0, random_delay_max_s=0.1, seed=3))
    runner = FakeRunner(FP16, clock, call_s=0.3, tokens=128)
    window = engine.measure_window(runner, 0)
    assert window.generate_calls == 7  # 7 x 0.3 s >= 2 s
    assert window.tokens == 7 * 128
    assert window.duration_s == pytest.approx(2.1)
    assert window.energy_j == pytest.approx(200.0 * 2.1, abs=200.0 * 0.1)  # counter updates every 100 ms
    assert window.energy_j_power_integrated == pytest.approx(200.0 * 2.1, rel=1e-6)
    assert 0.0 <= (window.delay_s or 0) <= 0.1
    assert window.power_samples is not None and window.power_samples >= 21
    assert (window.temp_c_start, window.sm_clock_mhz_mean, window.gpu_util_pct_mean) == (41.0, 1980.0, 21.0)
    assert window.other_gpu_processes == 0


def test_other_gpu_processes_are_recorded_per_window(fake_nvml: FakePynvml, clock: VirtualClock) -> None:
    fake_nvml.processes = [os.getpid(), 4242]
    engine = make_engine(clock, EngineConfig(window_s=1.0))
    assert engine.measure_window(FakeRunner(FP16, clock), 0).other_gpu_processes == 1


def test_interleaved_rounds_alternate_and_stop_at_max(fake_nvml: FakePynvml, clock: VirtualClock) -> None:
    events: list[tuple[str, bool]] = []
    config = EngineConfig(window_s=1.0, warmup_windows=1, min_windows=3, max_windows=3)
    engine = make_engine(clock, config, events)
    runners: dict[Precision, Runner] = {FP16: FakeRunner(FP16, clock, 0.25), NF4: FakeRunner(NF4, clock, 0.4)}
    states = {p: MeasurementState(p) for p in runners}
    engine.run(runners, states)
    assert events == [("fp16", True), ("nf4", True), ("fp16", False), ("nf4", False), ("nf4", False),
                      ("fp16", False), ("fp16", False), ("nf4", False)]  # fmt: skip
    for state in states.values():
        assert state.finished and not state.error
        assert [w.index for w in state.windows] == [0, 1, 2]
        assert len(state.warmup) == 1
    starts = [w.started_at for s in states.values() for w in s.windows]
    assert len(set(starts)) == 6


def test_stopping_rule_ends_a_steady_measurement_early(fake_nvml: FakePynvml, clock: VirtualClock) -> None:
    config = EngineConfig(window_s=1.0, warmup_windows=0, min_windows=4, max_windows=30, target_ci_pct=5.0)
    engine = make_engine(clock, config)
    state = MeasurementState(FP16)
    engine.run({FP16: FakeRunner(FP16, clock, 0.25)}, {FP16: state})
    assert len(state.windows) == 4
    d = derive(state.windows, 150.0)
    assert d.ci95_pct is not None and d.ci95_pct <= 5.0


def test_a_failing_runner_is_recorded_and_the_others_go_on(fake_nvml: FakePynvml, clock: VirtualClock) -> None:
    events: list[tuple[str, bool]] = []
    config = EngineConfig(window_s=1.0, warmup_windows=1, min_windows=3, max_windows=3)
    engine = make_engine(clock, config, events)
    oom = RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
    failing = FakeRunner(NF4, clock, 0.25, fail_at=10, error=oom)
    runners: dict[Precision, Runner] = {FP16: FakeRunner(FP16, clock, 0.25), NF4: failing}
    states = {p: MeasurementState(p) for p in runners}
    engine.run(runners, states)
    assert len(states[FP16].windows) == 3 and states[FP16].error is None
    assert states[NF4].windows == []  # a failed measurement keeps no windows (E-MEASUREMENT)
    assert states[NF4].error is not None and states[NF4].error.startswith("RuntimeError: CUDA out of memory")
    assert "after 1 windows, dropped" in states[NF4].error
    assert failing.closed
    assert ("nf4!", False) in events


def test_a_runner_that_generates_nothing_fails(fake_nvml: FakePynvml, clock: VirtualClock) -> None:
    engine = make_engine(clock, EngineConfig(window_s=1.0, warmup_windows=0))
    state = MeasurementState(FP16)
    engine.run({FP16: FakeRunner(FP16, clock, tokens=0)}, {FP16: state})
    assert state.error == "RuntimeError: generate produced 0 tokens"


def test_an_interrupt_is_not_swallowed(fake_nvml: FakePynvml, clock: VirtualClock) -> None:
    engine = make_engine(clock, EngineConfig(window_s=1.0, warmup_windows=0))
    runner = FakeRunner(FP16, clock, fail_at=3, error=KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        engine.run({FP16: runner}, {FP16: MeasurementState(FP16)})


def test_a_failed_gpu_reading_stops_the_run(fake_nvml: FakePynvml, clock: VirtualClock) -> None:
    engine = make_engine(clock, EngineConfig(window_s=1.0, warmup_windows=0))
    fake_nvml.fail["nvmlDeviceGetTemperature"] = 999
    state = MeasurementState(FP16)
    with pytest.raises(NvmlReadError, match="could not read the temperature"):
        engine.run({FP16: FakeRunner(FP16, clock)}, {FP16: state})
    assert state.error is None


def test_a_counter_going_backwards_stops_the_run(fake_nvml: FakePynvml, clock: VirtualClock) -> None:
    engine = make_engine(clock, EngineConfig(window_s=1.0))

    class Resetting(FakeRunner):
        def generate_once(self) -> int:
            fake_nvml._acc_j = 0.0  # the driver reloaded mid-window
            return super().generate_once()

    with pytest.raises(NvmlReadError, match="went backwards"):
        engine.measure_window(Resetting(FP16, clock), 0)


def test_idle_power_comes_from_the_counter(fake_nvml: FakePynvml, clock: VirtualClock) -> None:
    fake_nvml.power_w = 122.0
    engine = make_engine(clock, EngineConfig())
    assert engine.measure_idle_w(10.0) == pytest.approx(122.0, rel=0.02)


def test_each_window_records_the_power_limit_at_its_start(fake_nvml: FakePynvml, clock: VirtualClock) -> None:
    engine = make_engine(clock, EngineConfig(window_s=1.0))
    assert engine.measure_window(FakeRunner(FP16, clock), 0).power_limit_w == 700.0
    fake_nvml.nvmlDeviceGetPowerManagementLimit = lambda handle: 450_000  # type: ignore[method-assign]
    assert engine.measure_window(FakeRunner(FP16, clock), 1).power_limit_w == 450.0


def test_each_window_records_what_else_kept_the_host_busy(
    fake_nvml: FakePynvml, clock: VirtualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ecocompute.collector.host import host

    busy = iter([500.0, 530.0])  # the host's busy CPU time at the window's start and end: 30 s
    cpu = iter([1.0, 2.0])  # of which 1 s was this process's
    monkeypatch.setattr(host, "host_cpu_s", lambda: (0.0, next(busy)))
    monkeypatch.setattr(host, "process_cpu_s", lambda: next(cpu))
    window = make_engine(clock, EngineConfig(window_s=1.0)).measure_window(FakeRunner(FP16, clock), 0)
    assert window.process_cpu_s == 1.0
    assert window.host_others_busy_cpus == pytest.approx(29.0 / window.duration_s, abs=1e-3)


def test_idle_power_is_read_after_a_synchronize_and_a_settle(fake_nvml: FakePynvml, clock: VirtualClock) -> None:
    fake_nvml.set_power(300.0)  # the tail of the last window
    start_s = clock.now
    clock.call_every(5.0, lambda: fake_nvml.set_power(100.0) if clock.now >= start_s + 5.0 else None)
    engine = make_engine(clock, EngineConfig())

    class Syncing(FakeRunner):
        syncs = 0

        def synchronize(self) -> None:
            self.syncs += 1

    runner = Syncing(FP16, clock)
    assert engine.measure_idle_w(10.0, settle_s=5.0, runners=[runner]) == pytest.approx(100.0, rel=0.02)
    assert runner.syncs == 1
    assert clock.now - start_s == pytest.approx(15.0, abs=0.1)


class NoisyRunner(FakeRunner):
    """One call per window, alternating 100 and 300 tokens: its J/token never settles."""

    def generate_once(self) -> int:
        super().generate_once()
        return 100 if self.calls % 2 else 300


def test_precisions_stop_together_so_interleaving_lasts_to_the_end(fake_nvml: FakePynvml, clock: VirtualClock) -> None:
    events: list[tuple[str, bool]] = []
    config = EngineConfig(window_s=1.0, warmup_windows=0, min_windows=4, max_windows=8, target_ci_pct=5.0,
                          on_spread=OnSpread.CONTINUE)  # fmt: skip
    engine = make_engine(clock, config, events)
    runners: dict[Precision, Runner] = {FP16: FakeRunner(FP16, clock, 0.25), NF4: NoisyRunner(NF4, clock, 1.0)}
    states = {p: MeasurementState(p) for p in runners}
    engine.run(runners, states)
    assert engine.stopped(states[FP16]) and len(states[NF4].windows) == 8  # fp16 met the rule long before
    assert len(states[FP16].windows) == 8 and all(s.finished for s in states.values())
    assert [e for e, _ in events] == ["fp16", "nf4", "nf4", "fp16"] * 4  # ABBA to the last round


def test_a_spread_out_of_reach_is_told_once_and_stops_the_run_once_the_file_is_valid(
    fake_nvml: FakePynvml, clock: VirtualClock
) -> None:
    told: list[str] = []
    config = EngineConfig(window_s=1.0, warmup_windows=0, min_windows=5, max_windows=30)
    engine = make_engine(clock, config, on_spread=lambda m, v: told.append(f"{m.precision.value} {v.reach.value}"))
    runners: dict[Precision, Runner] = {FP16: FakeRunner(FP16, clock, 0.25), NF4: NoisyRunner(NF4, clock, 1.0)}
    states = {p: MeasurementState(p) for p in runners}
    outcome = engine.run(runners, states)
    assert told == ["nf4 cannot"] and set(outcome.out_of_reach) == {NF4}
    assert outcome.stopped_early
    assert [len(s.windows) for s in states.values()] == [5, 5]  # the validator's minimum, not --max-windows
    assert all(s.finished for s in states.values())


def test_a_recompilation_inside_a_window_is_counted(fake_nvml: FakePynvml, clock: VirtualClock) -> None:
    engine = make_engine(clock, EngineConfig(window_s=1.0))
    assert engine.measure_window(FakeRunner(FP16, clock), 0).recompiles is None  # the runner cannot tell

    class Recompiling(FakeRunner):
        def generate_once(self) -> int:
            self.compiles = (self.compiles or 0) + (1 if self.calls == 1 else 0)
            return super().generate_once()

    runner = Recompiling(FP16, clock, call_s=0.25)
    runner.compiles = 7
    assert engine.measure_window(runner, 1).recompiles == 1
    assert engine.measure_window(runner, 2).recompiles == 0
