"""AMD GPUs through amdsmi, behind the same seam as NVML: a FAKE amdsmi library, and recorded AMD traces.

What a real AMD GPU would show is not tested here (none is reachable): docs/amd.md says what is left.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from amdsmi_fake import DRIVER_NOT_LOADED, NO_PERM, NOT_SUPPORTED, RESOLUTION_UJ, FakeAmdsmi, FakeDevice
from collector_fakes import FakeRunner, VirtualClock

from ecocompute.collector.device import amd
from ecocompute.collector.device.amd import AmdSmiGpu, AmdSmiReadError, counter_j, known_counter, known_counters
from ecocompute.collector.device.amdtrace import amd_trace_from, load_amd_trace, trace_from_amd
from ecocompute.collector.device.gpu import GpuMonitor
from ecocompute.collector.device.replay import ReplayGpu
from ecocompute.collector.device.sampler import PowerSampler
from ecocompute.collector.device.trace import record_trace
from ecocompute.collector.errors import GpuError, MigEnabledError, NoEnergyCounterError, NoGpuError, TraceError
from ecocompute.collector.run.engine import Engine, EngineConfig
from ecocompute.schema.derive import integral_diff_pct
from ecocompute.schema.errors import EcocomputeError
from ecocompute.schema.models import Precision, Window

AMD_TRACES = sorted((Path(__file__).parents[1] / "data" / "traces-amd").glob("*.json"))
INTEGRAL_GATE_PCT = 5.0


@pytest.fixture
def smi(monkeypatch: pytest.MonkeyPatch, clock: VirtualClock) -> FakeAmdsmi:
    """The fake amdsmi module in sys.modules, on the virtual clock."""
    fake = FakeAmdsmi(clock)
    monkeypatch.setitem(sys.modules, "amdsmi", fake)
    return fake


def open_gpu(clock: VirtualClock, index: int = 0, **kwargs: Any) -> AmdSmiGpu:
    return AmdSmiGpu(index, clock=clock, **kwargs)


# --- the seam -------------------------------------------------------------------------------------


def test_an_mi300x_opens_and_says_who_it_is(smi: FakeAmdsmi, clock: VirtualClock) -> None:
    with open_gpu(clock) as gpu:
        monitor: GpuMonitor = gpu  # the engine's seam (mypy checks it in collector/amd.py)
        info = monitor.fingerprint()
        assert gpu.counter.reliable and gpu.counter.ratio == pytest.approx(1.0, abs=0.01)
        assert "counter reliable: agreed with the power integral at opening (ratio " in gpu.counter.describe()
        assert (info.gpu_name, info.gpu_arch, info.compute_capability) == ("AMD Instinct MI300X", "cdna3", "9.4")
        assert info.memory_total_mib == 192 * 1024
        assert info.power_limit_w == info.default_power_limit_w == 750.0  # amdsmi's uW, converted once
        assert info.nvml_version == "amdsmi 25.3.0" and info.driver_version == "6.10.5"
        assert len(info.gpu_uuid_sha256) == 64 and smi.devices[0].uuid not in info.gpu_uuid_sha256
        assert not info.mig_mode
    assert smi.inits == 0  # shut down on leaving


def test_the_energy_counter_is_accumulator_times_resolution(smi: FakeAmdsmi, clock: VirtualClock) -> None:
    assert counter_j({"energy_accumulator": 1_000_000, "counter_resolution": RESOLUTION_UJ}) == pytest.approx(15.3)
    assert counter_j({"power": 2_000_000, "counter_resolution": RESOLUTION_UJ}) == pytest.approx(30.6)  # ROCm < 6.3
    assert counter_j({"energy_accumulator": "N/A", "counter_resolution": RESOLUTION_UJ}) is None
    smi.devices[0].power_w = 300.0
    with open_gpu(clock) as gpu:
        e0 = gpu.energy_j()
        clock.advance(10.0)
        assert gpu.energy_j() - e0 == pytest.approx(3000.0, abs=0.01)
        smi.old_energy_key = True
        clock.advance(1.0)
        assert gpu.energy_j() - e0 == pytest.approx(3300.0, abs=0.01)


def test_readings_convert_once_and_missing_ones_are_none(smi: FakeAmdsmi, clock: VirtualClock) -> None:
    smi.devices[0].processes = [4242]
    smi.devices[0].violations = {"active_ppt_pwr": True, "active_hbm_thrm": True}
    with open_gpu(clock) as gpu:
        assert gpu.power_w() == 150.0 and gpu.temperature_c() == 44.0  # hotspot: the MI300X has no edge sensor
        assert (gpu.sm_clock_mhz(), gpu.utilization_pct()) == (2100.0, 37.0)
        fields = gpu.power_w_fields()
        assert fields.instant_w == 150.0 and fields.average_w is None  # N/A on Instinct parts: None, not 0
        assert gpu.throttle_reasons() == ["sw_power_cap", "hbm_thermal_slowdown"]
        assert gpu.compute_processes() == [4242]
        smi.na.add("amdsmi_get_gpu_process_list")
        assert gpu.compute_processes() is None
        smi.na.add("amdsmi_get_violation_status")  # worked at opening: its loss stops the run
        with pytest.raises(AmdSmiReadError, match="stopped reporting the violation status"):
            gpu.throttle_reasons()


def test_a_sensor_that_vanishes_mid_run_stops_the_measurement(smi: FakeAmdsmi, clock: VirtualClock) -> None:
    with open_gpu(clock) as gpu:
        smi.na.update({"socket_power", "current_socket_power"})
        with pytest.raises(AmdSmiReadError, match="stopped reporting the socket power"):
            gpu.power_w()
        smi.fail["amdsmi_get_energy_count"] = 7
        with pytest.raises(AmdSmiReadError, match="could not read the energy counter of AMD GPU 0") as caught:
            gpu.energy_j()
        assert isinstance(caught.value, GpuError) and isinstance(caught.value, EcocomputeError)


# --- refusals -------------------------------------------------------------------------------------


def test_a_gpu_without_socket_power_is_refused_before_measuring(smi: FakeAmdsmi, clock: VirtualClock) -> None:
    """Temperature, clock and activity may be missing (tests/collector/test_missing_sensors.py); power may not."""
    smi.na.update({"socket_power", "current_socket_power", "average_socket_power"})
    with pytest.raises(GpuError, match=r"cannot read the socket power of AMD GPU 0.*never written as 0"):
        open_gpu(clock)
    assert smi.inits == 0


def test_no_library_no_driver_no_permission_no_such_gpu(monkeypatch: pytest.MonkeyPatch, smi: FakeAmdsmi,
                                                        clock: VirtualClock) -> None:  # fmt: skip
    smi.init_error = DRIVER_NOT_LOADED
    with pytest.raises(NoGpuError, match="no AMD GPU or amdgpu driver found"):
        open_gpu(clock)
    smi.init_error = None
    with pytest.raises(NoGpuError, match=r"there is no AMD GPU 3: this machine has 1 .*--device-index 0\.\.0"):
        open_gpu(clock, 3)
    smi.fail["amdsmi_get_gpu_asic_info"] = NO_PERM
    with pytest.raises(AmdSmiReadError, match="no permission"):
        open_gpu(clock)
    monkeypatch.setitem(sys.modules, "amdsmi", None)  # an import of amdsmi now fails
    with pytest.raises(NoGpuError, match="amdsmi Python library is not installed"):
        open_gpu(clock)


def test_a_partitioned_gpu_is_refused(smi: FakeAmdsmi, clock: VirtualClock) -> None:
    smi.devices[0].partition = "CPX"
    with pytest.raises(MigEnabledError, match="CPX compute partitions: set it to SPX"):
        open_gpu(clock)


def test_a_gpu_without_an_energy_counter_is_refused(smi: FakeAmdsmi, clock: VirtualClock) -> None:
    smi.na.add("amdsmi_get_energy_count")  # what a virtual-machine guest answers
    with pytest.raises(NoEnergyCounterError, match=r"no energy counter .*virtual-machine guests"):
        open_gpu(clock)


def test_an_mi100_counter_is_known_unreliable(smi: FakeAmdsmi, clock: VirtualClock) -> None:
    smi.devices[0] = FakeDevice(market_name="AMD Instinct MI100", gfx_target="gfx908", counter_rate=0.0)
    with pytest.raises(NoEnergyCounterError, match=r"MI100\) cannot be trusted.*ROCm/amdsmi/issues/38"):
        open_gpu(clock)
    with open_gpu(clock, allow_unreliable_counter=True) as gpu:
        assert not gpu.counter.reliable and gpu.counter.source == "https://github.com/ROCm/amdsmi/issues/38"
        assert gpu.counter.describe().startswith("amdsmi energy counter NOT reliable: known to be unreliable on MI100")
        assert gpu.fingerprint().gpu_arch == "cdna1"


@pytest.mark.parametrize(("rate", "reliable"), [(1.0, True), (1.3, True), (0.1, False), (0.0, False), (9.0, False)])
def test_an_unlisted_part_is_judged_by_its_counter_against_the_power(smi: FakeAmdsmi, clock: VirtualClock,
                                                                     rate: float, reliable: bool) -> None:  # fmt: skip
    smi.devices[0] = FakeDevice(market_name="AMD Radeon PRO W7900", gfx_target="gfx1100", counter_rate=rate)
    with open_gpu(clock, allow_unreliable_counter=True) as gpu:
        assert gpu.counter.reliable is reliable
        assert gpu.counter.ratio == pytest.approx(rate, abs=0.02)
        assert (gpu.fingerprint().gpu_arch, gpu.fingerprint().compute_capability) == ("rdna3", "11.0")
    if not reliable:
        with pytest.raises(NoEnergyCounterError, match="integral of socket power"):
            open_gpu(clock)


def test_the_odd_die_of_an_mi250x_is_refused(smi: FakeAmdsmi, clock: VirtualClock) -> None:
    smi.devices = [FakeDevice(market_name="AMD Instinct MI250X", gfx_target="gfx90a", uuid=f"u{i}") for i in range(2)]
    for device in smi.devices:
        device.since_s = clock.monotonic()
    with open_gpu(clock, 0) as gpu:
        assert gpu.counter.reliable
    with pytest.raises(NoEnergyCounterError, match="odd-indexed die of a MI250X"):
        open_gpu(clock, 1)


def test_the_known_parts_table_has_a_source_for_every_row() -> None:
    rows = known_counters()
    assert {r.counter for r in rows} <= {"reliable", "unreliable", "odd_die_empty"}
    assert all(r.source.startswith("https://github.com/") and r.note for r in rows)
    assert [r.market_name for r in rows if r.counter == "unreliable"] == ["MI100"]
    found = known_counter("AMD Instinct MI250X")
    assert found is not None and found.market_name == "MI250X"  # MI250X is matched before MI250
    assert known_counter("AMD Radeon RX 7900 XTX") is None


def test_gfx_targets_map_to_architectures_and_versions() -> None:
    assert [amd.arch_from_gfx(t) for t in ("gfx942", "gfx90a", "gfx950", "gfx1201", "gfx9999")] == [
        "cdna3", "cdna2", "cdna4", "rdna4", "gfx9999"]  # fmt: skip
    assert [amd.version_from_gfx(t) for t in ("gfx942", "gfx90a", "gfx1100", "bogus")] == ["9.4", "9.0", "11.0", "0.0"]


# --- the engine on an AMD GPU -----------------------------------------------------------------------


def engine_windows(gpu: GpuMonitor, clock: VirtualClock, count: int, on_window: Any = None) -> list[Window]:
    sampler = PowerSampler(gpu, clock)
    sampler.start()
    engine = Engine(gpu, sampler, clock, EngineConfig(window_s=2.0, seed=1), own_contexts=0)
    runner = FakeRunner(Precision.FP16, clock, call_s=0.25, tokens=256)
    windows = []
    for i in range(count):
        if on_window is not None:
            on_window(i)
        windows.append(engine.measure_window(runner, i))
    sampler.stop()
    return windows


def test_engine_windows_on_amdsmi_check_the_counter_against_the_power(smi: FakeAmdsmi, clock: VirtualClock) -> None:
    with open_gpu(clock) as gpu:
        windows = engine_windows(gpu, clock, 4, on_window=lambda i: smi.set_power(0, 150.0 + 150.0 * i))
    for i, window in enumerate(windows):
        assert window.energy_j / window.duration_s == pytest.approx(150.0 + 150.0 * i, rel=0.01)
        assert integral_diff_pct(window) < 1.0
        assert window.temp_c_start == 44.0 and window.tokens == 256 * window.generate_calls


# --- recorded AMD traces ----------------------------------------------------------------------------


@pytest.fixture(params=AMD_TRACES, ids=[p.stem for p in AMD_TRACES])
def amd_trace_path(request: pytest.FixtureRequest) -> Path:
    return Path(request.param)


def test_an_amd_trace_replays_through_the_engine(amd_trace_path: Path) -> None:
    trace = load_amd_trace(amd_trace_path)
    clock = VirtualClock()
    gpu = ReplayGpu(trace, clock)
    assert gpu.power_w_fields().average_w is None  # null in the file: missing, not 0
    windows = engine_windows(gpu, clock, int((trace.end_s - 1.0) // 2.2))
    steady = [p for p in trace.phases if p.end_s - p.start_s >= 3.0]
    checked = 0
    t = trace.start_s
    for window in windows:
        t += window.delay_s
        if any(p.start_s + 0.5 <= t and t + window.duration_s <= p.end_s - 0.5 for p in steady):
            assert integral_diff_pct(window) < INTEGRAL_GATE_PCT
            checked += 1
        t += window.duration_s
    assert checked >= 3
    watts = sorted(w.energy_j / w.duration_s for w in windows)
    assert watts[-1] > 3 * watts[0]  # the load phase is seen


def test_a_trace_recorded_from_amdsmi_round_trips(smi: FakeAmdsmi, clock: VirtualClock) -> None:
    with open_gpu(clock) as gpu:
        trace = record_trace(gpu, clock, 2.0, lambda s: (smi.set_power(0, 500.0), clock.sleep(s)), period_s=0.05)
    doc = amd_trace_from(trace, {"gfx_target": "gfx942"})
    again = trace_from_amd(doc)
    assert again.column("energy_mj") == trace.column("energy_mj")
    assert again.column("power_mw") == trace.column("power_mw")
    assert again.column("power_average_mw") == [None] * len(trace.rows)
    assert doc["gpu"]["gfx_target"] == "gfx942" and doc["rows"][0][3] is None


def test_a_bad_amd_trace_says_what_is_wrong(tmp_path: Path) -> None:
    doc = amd_trace_from(load_amd_trace(AMD_TRACES[0]))
    with pytest.raises(TraceError, match="is not an ecocompute-amdsmi-trace version 1"):
        trace_from_amd({**doc, "format": "ecocompute-nvml-trace"})
    doc["rows"][5][1] = None
    with pytest.raises(TraceError, match="energy counter and socket power must be read"):
        trace_from_amd(doc)
    doc["rows"][5][1] = 0.0
    with pytest.raises(TraceError, match="energy_mj goes backwards"):
        trace_from_amd(doc)
    (tmp_path / "x.json").write_text("{", "utf-8")
    with pytest.raises(TraceError, match="is not JSON"):
        load_amd_trace(tmp_path / "x.json")
    assert NOT_SUPPORTED == amd.STATUS_NOT_SUPPORTED  # the fake and the module agree on amdsmi_status_t
