"""The NVML seam: unit conversion, decoding, fingerprint, and one clear error per failure.

Each test runs twice: with a fake module in place of ``pynvml``, and with the real ``pynvml``'s functions
patched autospec'd (so a wrong call signature in nvml.py fails here, not on the GPU).
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator

import pytest
from collector_fakes import (
    DRIVER_NOT_LOADED,
    GPU_IS_LOST,
    LIBRARY_NOT_FOUND,
    NO_PERMISSION,
    NOT_SUPPORTED,
    FakePynvml,
    VirtualClock,
    autospec_pynvml,
)

from ecocompute.collector.device.nvml import (
    NvmlGpu,
    arch_from_compute_capability,
    decode_throttle_reasons,
    load_pynvml,
)
from ecocompute.collector.errors import MigEnabledError, NoEnergyCounterError, NoGpuError, NvmlReadError

MODES = ["module", "autospec"]


@pytest.fixture(params=MODES)
def nvml(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, clock: VirtualClock) -> Iterator[FakePynvml]:
    """A FakePynvml, installed as the module or behind the real module's autospec'd functions."""
    fake = FakePynvml(clock)
    if request.param == "module":
        monkeypatch.setitem(sys.modules, "pynvml", fake)
        yield fake
        return
    pytest.importorskip("pynvml")
    with autospec_pynvml(fake):
        yield fake


def test_energy_is_converted_from_mj_to_j_once(nvml: FakePynvml, clock: VirtualClock) -> None:
    with NvmlGpu(0) as gpu:
        e0 = gpu.energy_j()
        clock.advance(10.0)
        assert gpu.energy_j() - e0 == pytest.approx(150.0 * 10.0, abs=0.002)
        assert gpu.power_w() == 150.0


def test_power_fields_are_read_in_watts(nvml: FakePynvml) -> None:
    nvml.power_w = 432.1
    with NvmlGpu(0) as gpu:
        fields = gpu.power_w_fields()
    assert fields.instant_w == pytest.approx(432.1, abs=0.001)
    assert fields.average_w == pytest.approx(432.1, abs=0.001)


def test_unsupported_power_fields_read_as_none(nvml: FakePynvml) -> None:
    nvml.fields_supported = False
    with NvmlGpu(0) as gpu:
        assert gpu.power_w_fields().instant_w is None
        assert gpu.power_w_fields().average_w is None


def test_other_readings(nvml: FakePynvml) -> None:
    nvml.throttle_mask = 0x4 | 0x1
    nvml.processes = [11, 12]
    with NvmlGpu(0) as gpu:
        assert gpu.temperature_c() == 41.0
        assert gpu.sm_clock_mhz() == 1980.0
        assert gpu.utilization_pct() == 21.0
        assert gpu.throttle_reasons() == ["sw_power_cap"]  # gpu_idle is not a throttle
        assert gpu.compute_processes() == [11, 12]


def test_fingerprint_hashes_the_uuid(nvml: FakePynvml) -> None:
    with NvmlGpu(0) as gpu:
        info = gpu.fingerprint()
    assert info.gpu_uuid_sha256 == hashlib.sha256(b"GPU-fake-0000-0000").hexdigest()
    assert "fake" not in str(info.to_dict())
    assert (info.gpu_name, info.gpu_arch, info.compute_capability) == ("NVIDIA H200", "hopper", "9.0")
    assert (info.power_limit_w, info.default_power_limit_w, info.memory_total_mib) == (700.0, 700.0, 143771)
    assert info.nvml_version == "13.580.159.04"
    assert info.persistence_mode and not info.mig_mode and not info.clocks_locked


def test_application_clocks_setting_counts_as_locked(nvml: FakePynvml) -> None:
    nvml.throttle_mask = 0x2
    with NvmlGpu(0) as gpu:
        assert gpu.fingerprint().clocks_locked


def test_close_shuts_nvml_down(nvml: FakePynvml) -> None:
    gpu = NvmlGpu(0)
    assert nvml.inits == 1
    gpu.close()
    assert nvml.inits == 0
    with pytest.raises(NvmlReadError, match="closed"):
        gpu.energy_j()


@pytest.mark.parametrize("code", [LIBRARY_NOT_FOUND, DRIVER_NOT_LOADED])
def test_no_driver_is_a_clear_error(nvml: FakePynvml, code: int) -> None:
    nvml.init_error = code
    with pytest.raises(NoGpuError, match=r"no NVIDIA GPU or driver found: .*run on a machine with an NVIDIA GPU"):
        NvmlGpu(0)


def test_missing_index_names_the_valid_ones(nvml: FakePynvml) -> None:
    with pytest.raises(NoGpuError, match=r"there is no GPU 3: this machine has 1 .*--device-index 0\.\.0"):
        NvmlGpu(3)


def test_no_energy_counter_is_a_clear_error(nvml: FakePynvml) -> None:
    nvml.energy_supported = False
    with pytest.raises(NoEnergyCounterError, match="no total-energy counter \\(needs Volta or newer\\)"):
        NvmlGpu(0)
    assert nvml.inits == 0  # a failed open releases NVML


def test_mig_is_refused(nvml: FakePynvml) -> None:
    nvml.mig = True
    with pytest.raises(MigEnabledError, match=r"MIG is enabled on GPU 0: disable it \(sudo nvidia-smi -i 0 -mig 0"):
        NvmlGpu(0)


@pytest.mark.parametrize(
    ("code", "message"),
    [(GPU_IS_LOST, "GPU 0 is lost"), (NO_PERMISSION, "no permission"), (999, "could not read the energy counter")],
)
def test_a_failed_reading_raises(nvml: FakePynvml, code: int, message: str) -> None:
    with NvmlGpu(0) as gpu:
        nvml.fail["nvmlDeviceGetTotalEnergyConsumption"] = code
        with pytest.raises(NvmlReadError, match=message):
            gpu.energy_j()


def test_a_field_that_stops_working_raises(nvml: FakePynvml) -> None:
    with NvmlGpu(0) as gpu:
        nvml.fields_supported = False
        with pytest.raises(NvmlReadError, match="after working before"):
            gpu.power_w_fields()


def test_processes_unsupported_reads_as_unknown(nvml: FakePynvml) -> None:
    with NvmlGpu(0) as gpu:
        nvml.fail["nvmlDeviceGetComputeRunningProcesses"] = NOT_SUPPORTED
        assert gpu.compute_processes() is None


def test_missing_nvidia_ml_py_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)
    with pytest.raises(NoGpuError, match=r"pip install 'ecocompute\[collect\]'"):
        load_pynvml()


def test_decode_throttle_reasons_names_unknown_bits() -> None:
    assert decode_throttle_reasons(0) == []
    assert decode_throttle_reasons(0x40 | 0x800) == ["hw_thermal_slowdown", "bit_0x800"]


@pytest.mark.parametrize(
    ("cc", "arch"), [("7.0", "volta"), ("7.5", "turing"), ("8.6", "ampere"), ("8.9", "ada"), ("9.0", "hopper"),
                     ("12.0", "blackwell"), ("6.1", "sm_61")],
)  # fmt: skip
def test_arch_from_compute_capability(cc: str, arch: str) -> None:
    assert arch_from_compute_capability(cc) == arch
