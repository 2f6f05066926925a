"""A FAKE of the ``amdsmi`` library (ROCm >= 6.3), for the AMD tests: nothing here is a measurement.

``FakeAmdsmi`` stands in for the module (put it in ``sys.modules["amdsmi"]``). It models one or more AMD
Instinct GPUs on a clock: the energy accumulator advances with time x power in ticks of
``counter_resolution`` uJ (15.3 uJ, as real parts report), updated every 1 ms; ``counter_rate`` scales it
(0 freezes it, as MI100s do in ROCm/amdsmi#38). Set ``na`` to make a power-info key, a sensor or a whole
function answer "N/A" / NOT_SUPPORTED, and ``fail[name] = code`` to make ``name`` raise from then on.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Any

NOT_SUPPORTED = 2
NO_PERM = 10
DRIVER_NOT_LOADED = 34
RESOLUTION_UJ = 15.300000190734863
GIB = 1024**3


class AmdSmiException(Exception):  # noqa: N818 - amdsmi's name
    """amdsmi's base exception."""


class AmdSmiLibraryException(AmdSmiException):
    """amdsmi's library error: ``err_code`` is an amdsmi_status_t."""

    def __init__(self, err_code: int) -> None:
        super().__init__(f"Error code:\n\t{err_code}")
        self.err_code = err_code
        self.err_info = f"AMDSMI_STATUS {err_code}"


class AmdSmiInitFlags(enum.IntEnum):
    INIT_AMD_GPUS = 2


class AmdSmiTemperatureType(enum.IntEnum):
    EDGE = 0
    HOTSPOT = 1


class AmdSmiTemperatureMetric(enum.IntEnum):
    CURRENT = 0


class AmdSmiClkType(enum.IntEnum):
    GFX = 1


class AmdSmiMemoryType(enum.IntEnum):
    VRAM = 0


@dataclass
class FakeDevice:
    """One fake GPU."""

    market_name: str = "AMD Instinct MI300X"
    gfx_target: str = "gfx942"
    power_w: float = 150.0
    counter_rate: float = 1.0  # counted energy / drawn energy
    partition: str = "SPX"
    uuid: str = "f5ff74a1-0000-1000-80f8-b0e9b4d3c1a2"
    processes: list[int] = field(default_factory=list)
    violations: dict[str, bool] = field(default_factory=dict)
    acc_j: float = 20_000.0
    since_s: float = 0.0


class FakeAmdsmi:
    """The parts of ``amdsmi`` the collector uses. ``devices`` are the GPUs, in index order."""

    AmdSmiException = AmdSmiException
    AmdSmiLibraryException = AmdSmiLibraryException
    AmdSmiInitFlags = AmdSmiInitFlags
    AmdSmiTemperatureType = AmdSmiTemperatureType
    AmdSmiTemperatureMetric = AmdSmiTemperatureMetric
    AmdSmiClkType = AmdSmiClkType
    AmdSmiMemoryType = AmdSmiMemoryType

    def __init__(self, clock: Any, devices: list[FakeDevice] | None = None) -> None:
        self.clock = clock
        self.devices = devices if devices is not None else [FakeDevice()]
        for device in self.devices:
            device.since_s = clock.monotonic()
        self.init_error: int | None = None
        self.na: set[str] = set()  # power-info keys, "temperature", "clock", "activity", or function names
        self.fail: dict[str, int] = {}
        self.old_energy_key = False  # ROCm < 6.3 called the accumulator "power"
        self.inits = 0
        self.calls: list[str] = []

    # --- control -------------------------------------------------------------------------------

    def set_power(self, index: int, power_w: float) -> None:
        """Change device ``index``'s draw from now on."""
        device = self.devices[index]
        now = self.clock.monotonic()
        device.acc_j += device.power_w * device.counter_rate * (now - device.since_s)
        device.since_s, device.power_w = now, power_w

    def _enter(self, name: str) -> None:
        self.calls.append(name)
        if name in self.fail:
            raise AmdSmiLibraryException(self.fail[name])
        if name in self.na:
            raise AmdSmiLibraryException(NOT_SUPPORTED)
        if self.inits <= 0:
            raise AmdSmiLibraryException(32)  # AMDSMI_STATUS_NOT_INIT

    @staticmethod
    def _device(handle: Any) -> FakeDevice:
        assert isinstance(handle, FakeDevice)
        return handle

    # --- amdsmi API ----------------------------------------------------------------------------

    def amdsmi_init(self, flags: int = AmdSmiInitFlags.INIT_AMD_GPUS) -> None:
        if self.init_error is not None:
            raise AmdSmiLibraryException(self.init_error)
        self.inits += 1

    def amdsmi_shut_down(self) -> None:
        self.inits -= 1

    def amdsmi_get_processor_handles(self) -> list[FakeDevice]:
        self._enter("amdsmi_get_processor_handles")
        return list(self.devices)

    def amdsmi_get_gpu_asic_info(self, handle: Any) -> dict[str, Any]:
        self._enter("amdsmi_get_gpu_asic_info")
        d = self._device(handle)
        return {"market_name": d.market_name, "vendor_id": "0x1002", "device_id": "0x74a1", "rev_id": "0x00",
                "asic_serial": "0xFAKE", "oam_id": 0, "num_compute_units": 304,
                "target_graphics_version": d.gfx_target}  # fmt: skip

    def amdsmi_get_gpu_compute_partition(self, handle: Any) -> str:
        self._enter("amdsmi_get_gpu_compute_partition")
        return self._device(handle).partition

    def amdsmi_get_energy_count(self, handle: Any) -> dict[str, Any]:
        self._enter("amdsmi_get_energy_count")
        d = self._device(handle)
        now = self.clock.monotonic()
        updated = d.since_s + math.floor((now - d.since_s) / 0.001) * 0.001
        joules = d.acc_j + d.power_w * d.counter_rate * (updated - d.since_s)
        ticks = int(joules * 1e6 / RESOLUTION_UJ)
        key = "power" if self.old_energy_key else "energy_accumulator"
        return {key: ticks, "counter_resolution": RESOLUTION_UJ, "timestamp": int(now * 1e9)}

    def amdsmi_get_power_info(self, handle: Any) -> dict[str, Any]:
        self._enter("amdsmi_get_power_info")
        power = round(self._device(handle).power_w)
        info: dict[str, Any] = {"socket_power": power, "current_socket_power": power,
                                "average_socket_power": "N/A", "gfx_voltage": "N/A", "power_limit": 750}  # fmt: skip
        return {k: ("N/A" if k in self.na else v) for k, v in info.items()}

    def amdsmi_get_temp_metric(self, handle: Any, sensor: int, metric: int) -> int | str:
        self._enter("amdsmi_get_temp_metric")
        if "temperature" in self.na:
            raise AmdSmiLibraryException(NOT_SUPPORTED)
        if sensor == AmdSmiTemperatureType.EDGE:  # MI300X has no edge sensor
            raise AmdSmiLibraryException(NOT_SUPPORTED)
        return 44

    def amdsmi_get_clock_info(self, handle: Any, clk_type: int) -> dict[str, Any]:
        self._enter("amdsmi_get_clock_info")
        clk: Any = "N/A" if "clock" in self.na else 2100
        return {"clk": clk, "min_clk": 500, "max_clk": 2100, "clk_locked": False, "clk_deep_sleep": False}

    def amdsmi_get_gpu_activity(self, handle: Any) -> dict[str, Any]:
        self._enter("amdsmi_get_gpu_activity")
        return {"gfx_activity": "N/A" if "activity" in self.na else 37, "umc_activity": 5, "mm_activity": "N/A"}

    def amdsmi_get_violation_status(self, handle: Any) -> dict[str, Any]:
        self._enter("amdsmi_get_violation_status")
        flags = self._device(handle).violations
        return {key: flags.get(key, False) for key in (
            "active_prochot_thrm", "active_ppt_pwr", "active_socket_thrm", "active_vr_thrm", "active_hbm_thrm",
            "active_gfx_clk_below_host_limit",
        )}  # fmt: skip

    def amdsmi_get_power_cap_info(self, handle: Any) -> dict[str, Any]:
        self._enter("amdsmi_get_power_cap_info")
        return {"power_cap": 750_000_000, "default_power_cap": 750_000_000, "dpm_cap": 0,
                "min_power_cap": 0, "max_power_cap": 750_000_000}  # fmt: skip

    def amdsmi_get_gpu_process_list(self, handle: Any) -> list[dict[str, Any]]:
        self._enter("amdsmi_get_gpu_process_list")
        return [{"name": "python", "pid": pid, "mem": GIB} for pid in self._device(handle).processes]

    def amdsmi_get_gpu_device_uuid(self, handle: Any) -> str:
        self._enter("amdsmi_get_gpu_device_uuid")
        return self._device(handle).uuid

    def amdsmi_get_gpu_memory_total(self, handle: Any, mem_type: int) -> int:
        self._enter("amdsmi_get_gpu_memory_total")
        return 192 * GIB

    def amdsmi_get_gpu_driver_info(self, handle: Any) -> dict[str, Any]:
        self._enter("amdsmi_get_gpu_driver_info")
        return {"driver_name": "amdgpu", "driver_version": "6.10.5", "driver_date": "2015/01/01 00:00"}

    def amdsmi_get_gpu_vbios_info(self, handle: Any) -> dict[str, Any]:
        self._enter("amdsmi_get_gpu_vbios_info")
        return {"name": "AMD MI300X", "build_date": "N/A", "part_number": "113-FAKE",
                "version": "022.040.003.043.000001"}  # fmt: skip

    def amdsmi_get_lib_version(self) -> dict[str, Any]:
        self._enter("amdsmi_get_lib_version")
        return {"major": 25, "minor": 3, "release": 0, "build": "fake"}
