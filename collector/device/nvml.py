"""The one module that talks to NVML (``pynvml``, from the nvidia-ml-py package).

:class:`NvmlGpu` reads one GPU and converts NVML's units once, here: mJ -> J, mW -> W. Every NVML
error becomes a :class:`~ecocompute.collector.errors.GpuError` saying what to do; a failed reading is
never skipped, because a measurement with a hole in it is worse than none. ``pynvml`` is imported
lazily, so ``ecocompute --help`` and the validator never load it.
"""

from __future__ import annotations

import contextlib
import hashlib
from typing import Any

from ecocompute.collector.device.gpu import NVML_COUNTER, EnergyMethod, GpuInfo, PowerFields, Sensor
from ecocompute.collector.errors import (
    GpuError,
    MigEnabledError,
    NoEnergyCounterError,
    NoGpuError,
    NvmlReadError,
)

FI_POWER_AVERAGE = 185  # NVML_FI_DEV_POWER_AVERAGE: power averaged over 1 s, in mW
FI_POWER_INSTANT = 186  # NVML_FI_DEV_POWER_INSTANT: instantaneous power, in mW

# NVML return codes (nvml.h) that need their own message.
_ERROR_NOT_SUPPORTED = 3
_ERROR_NO_PERMISSION = 4
_ERROR_DRIVER_NOT_LOADED = 9
_ERROR_LIBRARY_NOT_FOUND = 12
_ERROR_FUNCTION_NOT_FOUND = 13
_ERROR_GPU_IS_LOST = 15

_GPU_IDLE_BIT = 0x1
# nvmlClocksEventReason* bits (nvml.h), named as nvidia-smi names them.
THROTTLE_REASON_BITS = {
    0x1: "gpu_idle",
    0x2: "applications_clocks_setting",
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x10: "sync_boost",
    0x20: "sw_thermal_slowdown",
    0x40: "hw_thermal_slowdown",
    0x80: "hw_power_brake_slowdown",
    0x100: "display_clock_setting",
}

# nvmlDeviceArchitecture_t values.
ARCHITECTURES = {
    2: "kepler",
    3: "maxwell",
    4: "pascal",
    5: "volta",
    6: "turing",
    7: "ampere",
    8: "ada",
    9: "hopper",
    10: "blackwell",
    13: "rubin",
}

_CLOCK_SM = 1  # NVML_CLOCK_SM
_CLOCK_ID_APP_TARGET = 1  # NVML_CLOCK_ID_APP_CLOCK_TARGET
_CLOCK_ID_APP_DEFAULT = 2  # NVML_CLOCK_ID_APP_CLOCK_DEFAULT
_TEMPERATURE_GPU = 0  # NVML_TEMPERATURE_GPU

_NO_GPU = "no NVIDIA GPU or driver found: NVML says {detail!r}; run on a machine with an NVIDIA GPU and its driver"


def decode_throttle_reasons(mask: int) -> list[str]:
    """Names of the bits set in an NVML clock event reasons mask; unknown bits as ``bit_0x...``.

    ``gpu_idle`` (0x1) is left out: an idle GPU between decode steps is not throttled, and host-bound decode keeps
    the GPU idle most of the time.
    """
    names = [name for bit, name in THROTTLE_REASON_BITS.items() if mask & bit and bit != _GPU_IDLE_BIT]
    unknown = mask & ~sum(THROTTLE_REASON_BITS)
    bit = 1
    while unknown >= bit:
        if unknown & bit:
            names.append(f"bit_{bit:#x}")
        bit <<= 1
    return names


def arch_from_compute_capability(cc: str) -> str:
    """An architecture name from a compute capability, for drivers that cannot name it."""
    major, minor = (int(part) for part in cc.split("."))
    if major == 8 and minor == 9:
        return "ada"
    names = {7: "turing" if minor >= 5 else "volta", 8: "ampere", 9: "hopper", 10: "blackwell", 12: "blackwell"}
    return names.get(major, f"sm_{major}{minor}")


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def load_pynvml() -> Any:
    """Import ``pynvml``, or raise NoGpuError saying how to install it."""
    try:
        import pynvml
    except ImportError:
        raise NoGpuError(
            "the nvidia-ml-py package (module pynvml) is not installed: pip install 'ecocompute[collect]'"
        ) from None
    return pynvml


class NvmlGpu:
    """One GPU, read through NVML. Use as a context manager, or call :meth:`close`.

    Opening checks what a measurement needs: a driver, the GPU at ``index``, MIG off and a total-energy counter,
    and probes each per-window sensor once (:attr:`missing_sensors`: those NVML answers NOT_SUPPORTED for, read
    as None in every window). Each failure raises a GpuError that says what to do. With ``allow_counterless`` a
    GPU without the counter opens too, and :attr:`energy_method` says how it can be measured: ``power_integral``
    when NVML reports its power, nothing (the preflight refuses it, with the reason) when it reports neither.
    """

    vendor = "nvidia"

    def __init__(self, index: int = 0, *, allow_counterless: bool = False) -> None:
        self.index = index
        self.energy_method: EnergyMethod = NVML_COUNTER
        self._allow_counterless = allow_counterless
        self._nv: Any = load_pynvml()
        self._call("initialise NVML", self._nv.nvmlInit)
        try:
            self._handle = self._open_handle(index)
            self._check_mig()
            self._check_energy_counter()
            self._fields = self._supported_fields()
            self.missing_sensors: dict[Sensor, str] = self._probe_sensors()
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> NvmlGpu:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Shut NVML down (pynvml counts nvmlInit calls, so other users keep theirs)."""
        nv, self._nv = getattr(self, "_nv", None), None
        if nv is not None:
            with contextlib.suppress(nv.NVMLError):
                nv.nvmlShutdown()

    # --- errors -------------------------------------------------------------------------------

    def _error(self, exc: Exception, what: str) -> GpuError:
        code = getattr(exc, "value", None)
        if code in (_ERROR_LIBRARY_NOT_FOUND, _ERROR_DRIVER_NOT_LOADED, _ERROR_FUNCTION_NOT_FOUND):
            return NoGpuError(_NO_GPU.format(detail=str(exc)))
        if code == _ERROR_NO_PERMISSION:
            return NvmlReadError(
                f"NVML refused to {what} of GPU {self.index} (no permission): run as a user "
                "that may read the GPU (check that nvidia-smi -q works for you)"
            )
        if code == _ERROR_GPU_IS_LOST:
            return NvmlReadError(
                f"GPU {self.index} is lost (fell off the bus) while trying to {what}: "
                "reset or reboot the machine, then run again (--resume keeps finished windows)"
            )
        return NvmlReadError(
            f"NVML could not {what} of GPU {self.index}: {exc}; the measurement stopped here "
            "rather than keep a hole (re-run with --resume to continue)"
        )

    def _call(self, what: str, fn: Any, *args: Any) -> Any:
        nv = self._nv
        if nv is None:
            raise NvmlReadError(f"NVML is closed: cannot {what} of GPU {self.index}")
        try:
            return fn(*args)
        except nv.NVMLError as exc:
            raise self._error(exc, what) from None

    def _open_handle(self, index: int) -> Any:
        nv = self._nv
        assert nv is not None  # noqa: S101 - set in __init__
        count = int(self._call("count GPUs", nv.nvmlDeviceGetCount))
        if count == 0:
            raise NoGpuError(_NO_GPU.format(detail="0 GPUs"))
        if not 0 <= index < count:
            raise NoGpuError(
                f"there is no GPU {index}: this machine has {count} (nvidia-smi -L lists them); "
                f"pass --device-index 0..{count - 1}"
            )
        return self._call("open", nv.nvmlDeviceGetHandleByIndex, index)

    def _check_mig(self) -> None:
        nv = self._nv
        assert nv is not None  # noqa: S101
        try:
            current, _pending = nv.nvmlDeviceGetMigMode(self._handle)
        except nv.NVMLError as exc:
            if getattr(exc, "value", None) in (_ERROR_NOT_SUPPORTED, _ERROR_FUNCTION_NOT_FOUND):
                return
            raise self._error(exc, "read the MIG mode") from None
        if current:
            raise MigEnabledError(
                f"MIG is enabled on GPU {self.index}: disable it (sudo nvidia-smi -i {self.index} -mig 0, then reset "
                "the GPU) or use a GPU without MIG; MIG instances have no energy counter of their own"
            )

    def _check_energy_counter(self) -> None:
        nv = self._nv
        assert nv is not None  # noqa: S101
        try:
            nv.nvmlDeviceGetTotalEnergyConsumption(self._handle)
        except nv.NVMLError as exc:
            if getattr(exc, "value", None) != _ERROR_NOT_SUPPORTED:
                raise self._error(exc, "read the energy counter") from None
            if not self._allow_counterless:
                raise NoEnergyCounterError(
                    f"the NVML of GPU {self.index} has no total-energy counter (needs Volta or newer): "
                    "ecocompute cannot measure it"
                ) from None
            self.energy_method = self._counterless_method()

    def _counterless_method(self) -> EnergyMethod:
        """Without the counter: the power integral if NVML reports power, else nothing (with the reason)."""
        nv = self._nv
        assert nv is not None  # noqa: S101
        no_counter = "NVML: nvmlDeviceGetTotalEnergyConsumption is NOT_SUPPORTED on this GPU"
        try:
            nv.nvmlDeviceGetPowerUsage(self._handle)
        except nv.NVMLError as exc:
            if getattr(exc, "value", None) not in (_ERROR_NOT_SUPPORTED, _ERROR_FUNCTION_NOT_FOUND):
                raise self._error(exc, "read the power draw") from None
            return EnergyMethod(None, f"{no_counter}, and so is nvmlDeviceGetPowerUsage (no power reading)")
        return EnergyMethod("power_integral", no_counter)

    def _supported_fields(self) -> tuple[int, ...]:
        nv = self._nv
        assert nv is not None  # noqa: S101
        try:
            values = nv.nvmlDeviceGetFieldValues(self._handle, [FI_POWER_INSTANT, FI_POWER_AVERAGE])
        except nv.NVMLError as exc:
            if getattr(exc, "value", None) in (_ERROR_NOT_SUPPORTED, _ERROR_FUNCTION_NOT_FOUND):
                return ()
            raise self._error(exc, "read power field values") from None
        return tuple(int(v.fieldId) for v in values if int(v.nvmlReturn) == 0)

    def _throttle_function(self) -> str:
        name = "nvmlDeviceGetCurrentClocksEventReasons"
        return name if hasattr(self._nv, name) else "nvmlDeviceGetCurrentClocksThrottleReasons"  # before 12.535

    def _probe_sensors(self) -> dict[Sensor, str]:
        """Each per-window sensor read once: those NVML does not support on this GPU, with NVML's answer."""
        nv = self._nv
        assert nv is not None  # noqa: S101
        probes: tuple[tuple[Sensor, str, str, tuple[Any, ...]], ...] = (
            ("temperature", "read the temperature", "nvmlDeviceGetTemperature", (_TEMPERATURE_GPU,)),
            ("sm_clock", "read the SM clock", "nvmlDeviceGetClockInfo", (_CLOCK_SM,)),
            ("utilization", "read the utilisation", "nvmlDeviceGetUtilizationRates", ()),
            ("throttle_reasons", "read the throttle reasons", self._throttle_function(), ()),
            ("power_limit", "read the power limit", "nvmlDeviceGetPowerManagementLimit", ()),
        )
        missing: dict[Sensor, str] = {}
        for sensor, what, name, args in probes:
            fn = getattr(nv, name, None)
            if fn is None:
                missing[sensor] = f"NVML: {name} is not in this nvidia-ml-py"
                continue
            try:
                fn(self._handle, *args)
            except nv.NVMLError as exc:
                code = getattr(exc, "value", None)
                if code not in (_ERROR_NOT_SUPPORTED, _ERROR_FUNCTION_NOT_FOUND):
                    raise self._error(exc, what) from None
                answer = "NOT_SUPPORTED" if code == _ERROR_NOT_SUPPORTED else "FUNCTION_NOT_FOUND"
                missing[sensor] = f"NVML: {name} is {answer} on this GPU"
        return missing

    # --- readings used in every window ---------------------------------------------------------

    def _read(self, what: str, name: str, *args: Any) -> Any:
        nv = self._nv
        if nv is None:
            raise NvmlReadError(f"NVML is closed: cannot {what} of GPU {self.index}")
        return self._call(what, getattr(nv, name), *args)

    def energy_j(self) -> float:
        """The total-energy counter (nvmlDeviceGetTotalEnergyConsumption), in J."""
        if not self.energy_method.counter:
            raise NoEnergyCounterError(f"GPU {self.index} has no total-energy counter: its energy is integrated power")
        return int(self._read("read the energy counter", "nvmlDeviceGetTotalEnergyConsumption", self._handle)) / 1000.0

    def power_w(self) -> float:
        """nvmlDeviceGetPowerUsage, in W."""
        return int(self._read("read the power draw", "nvmlDeviceGetPowerUsage", self._handle)) / 1000.0

    def power_w_fields(self) -> PowerFields:
        """Instant (field 186) and 1 s-averaged (field 185) power, in W; None for a field this GPU lacks."""
        if not self._fields:
            return PowerFields(None, None)
        values = self._read("read power field values", "nvmlDeviceGetFieldValues", self._handle, list(self._fields))
        watts: dict[int, float] = {}
        for value in values:
            if int(value.nvmlReturn) != 0:
                raise NvmlReadError(
                    f"NVML field {value.fieldId} of GPU {self.index} failed (return code {value.nvmlReturn}) "
                    "after working before: the measurement stopped here (re-run with --resume to continue)"
                )
            watts[int(value.fieldId)] = field_value(value) / 1000.0
        return PowerFields(watts.get(FI_POWER_INSTANT), watts.get(FI_POWER_AVERAGE))

    def temperature_c(self) -> float | None:
        """GPU core temperature, in degrees C; None when NVML did not support it at opening."""
        if "temperature" in self.missing_sensors:
            return None
        return float(self._read("read the temperature", "nvmlDeviceGetTemperature", self._handle, _TEMPERATURE_GPU))

    def sm_clock_mhz(self) -> float | None:
        """Current SM clock, in MHz; None when NVML did not support it at opening."""
        if "sm_clock" in self.missing_sensors:
            return None
        return float(self._read("read the SM clock", "nvmlDeviceGetClockInfo", self._handle, _CLOCK_SM))

    def utilization_pct(self) -> float | None:
        """GPU utilisation (nvmlDeviceGetUtilizationRates().gpu), in %; None when not supported at opening."""
        if "utilization" in self.missing_sensors:
            return None
        return float(self._read("read the utilisation", "nvmlDeviceGetUtilizationRates", self._handle).gpu)

    def throttle_reasons(self) -> list[str] | None:
        """The clock event reasons active now, by name; None when NVML did not support them at opening."""
        if "throttle_reasons" in self.missing_sensors:
            return None
        name = self._throttle_function()
        return decode_throttle_reasons(int(self._read("read the throttle reasons", name, self._handle)))

    def power_limit_w(self) -> float | None:
        """The power limit in force now, in W; None when NVML did not support it at opening."""
        if "power_limit" in self.missing_sensors:
            return None
        return int(self._read("read the power limit", "nvmlDeviceGetPowerManagementLimit", self._handle)) / 1000.0

    def default_power_limit_w(self) -> float | None:
        """The card's default power limit, in W; None where NVML does not support it (recorded as null)."""
        nv = self._nv
        assert nv is not None  # noqa: S101
        fn = getattr(nv, "nvmlDeviceGetPowerManagementDefaultLimit", None)
        if fn is None:
            return None
        try:
            return int(fn(self._handle)) / 1000.0
        except nv.NVMLError as exc:
            if getattr(exc, "value", None) in (_ERROR_NOT_SUPPORTED, _ERROR_FUNCTION_NOT_FOUND):
                return None
            raise self._error(exc, "read the default power limit") from None

    def compute_processes(self) -> list[int] | None:
        """PIDs of the compute processes on this GPU (host PIDs: inside a container, ours may differ)."""
        nv = self._nv
        assert nv is not None  # noqa: S101
        try:
            processes = nv.nvmlDeviceGetComputeRunningProcesses(self._handle)
        except nv.NVMLError as exc:
            if getattr(exc, "value", None) in (_ERROR_NOT_SUPPORTED, _ERROR_FUNCTION_NOT_FOUND):
                return None
            raise self._error(exc, "list compute processes") from None
        return [int(p.pid) for p in processes]

    def uuid(self) -> str:
        """The GPU's UUID ("GPU-..."); store only its hash."""
        return _text(self._read("read the UUID", "nvmlDeviceGetUUID", self._handle))

    # --- identity ------------------------------------------------------------------------------

    def fingerprint(self) -> GpuInfo:
        """The GPU's identity and settings (see docs/collecting.md for how clocks_locked is decided)."""
        h = self._handle
        major, minor = self._read("read the compute capability", "nvmlDeviceGetCudaComputeCapability", h)
        cc = f"{int(major)}.{int(minor)}"
        memory = self._read("read the memory size", "nvmlDeviceGetMemoryInfo", h)
        return GpuInfo(
            index=self.index,
            gpu_name=_text(self._read("read the name", "nvmlDeviceGetName", h)),
            gpu_arch=self._architecture(cc),
            compute_capability=cc,
            memory_total_mib=int(memory.total) // (1024 * 1024),
            power_limit_w=self.power_limit_w(),
            default_power_limit_w=self.default_power_limit_w(),
            driver_version=_text(self._read("read the driver version", "nvmlSystemGetDriverVersion")),
            vbios_version=_text(self._read("read the VBIOS version", "nvmlDeviceGetVbiosVersion", h)),
            gpu_uuid_sha256=hashlib.sha256(self.uuid().encode("utf-8")).hexdigest(),
            persistence_mode=bool(self._read("read the persistence mode", "nvmlDeviceGetPersistenceMode", h)),
            mig_mode=False,  # opening refuses a GPU in MIG mode
            clocks_locked=self._clocks_locked(),
            nvml_version=_text(self._read("read the NVML version", "nvmlSystemGetNVMLVersion")),
        )

    def _architecture(self, cc: str) -> str:
        nv = self._nv
        assert nv is not None  # noqa: S101
        try:
            code = int(nv.nvmlDeviceGetArchitecture(self._handle))
        except nv.NVMLError:
            code = -1
        return ARCHITECTURES.get(code) or arch_from_compute_capability(cc)

    def _clocks_locked(self) -> bool:
        """Best effort: application clocks set away from their default, or limiting the clocks now."""
        nv = self._nv
        assert nv is not None  # noqa: S101
        if "applications_clocks_setting" in (self.throttle_reasons() or ()):
            return True
        try:
            target = nv.nvmlDeviceGetClock(self._handle, _CLOCK_SM, _CLOCK_ID_APP_TARGET)
            default = nv.nvmlDeviceGetClock(self._handle, _CLOCK_SM, _CLOCK_ID_APP_DEFAULT)
        except nv.NVMLError:
            return False  # application clocks not supported: nothing set through them
        return bool(int(target) != int(default))


def field_value(value: Any) -> float:
    """The number held by an nvmlFieldValue_t, read through its valueType."""
    members = ("dVal", "uiVal", "ulVal", "ullVal", "sllVal", "siVal", "usVal")
    kind = int(value.valueType)
    if not 0 <= kind < len(members):
        raise NvmlReadError(f"NVML field {value.fieldId} has an unknown value type {kind}")
    return float(getattr(value.value, members[kind]))
