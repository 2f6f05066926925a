"""The one module that talks to AMD SMI (the ``amdsmi`` Python library of ROCm >= 6.3).

:class:`AmdSmiGpu` answers the :class:`~ecocompute.collector.device.gpu.GpuMonitor` seam for one AMD GPU, so the
engine, the sampler and the trace recorder run on it unchanged. Units are converted once, here: the energy
counter is ``energy_accumulator x counter_resolution`` in uJ -> J; amdsmi's power is in W already and its
power cap in uW -> W. Every amdsmi error becomes a :class:`~ecocompute.collector.errors.GpuError`. A sensor
amdsmi cannot read ("N/A") is ``None``, never 0: the energy counter and socket power are checked when the GPU
is opened (a GPU that lacks one is refused); temperature, GFX clock, activity, violation status and power cap
are probed then too, and one the GPU lacks (:attr:`AmdSmiGpu.missing_sensors`) reads as None in every window.
A sensor that worked at opening and then stops answering stops the measurement.

The energy counter is judged twice before it is trusted: by what is known of the part
(``data/amd_energy_counter.csv``, each row with its source; ROCm/amdsmi#38 for MI100) and by comparing it
with the power integral over half a second (as Zeus does). A part with an unreliable counter is refused
unless the caller asks to keep it (``allow_unreliable_counter``); then :attr:`AmdSmiGpu.counter` says so.
``amdsmi`` is imported only here, lazily, so nothing else loads it.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import importlib
import io
import itertools
import math
import re
import threading
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any, Literal

from ecocompute.collector.device.gpu import EnergyMethod, GpuInfo, PowerFields, Sensor
from ecocompute.collector.errors import (
    GpuError,
    MigEnabledError,
    NoEnergyCounterError,
    NoGpuError,
    NvmlReadError,
)
from ecocompute.collector.host.clock import Clock, SystemClock

if TYPE_CHECKING:
    from ecocompute.collector.device.gpu import GpuMonitor

# amdsmi_status_t values (amdsmi.h) that need their own message.
STATUS_NOT_SUPPORTED = 2
STATUS_NOT_YET_IMPLEMENTED = 3
STATUS_FAIL_LOAD_MODULE = 4
STATUS_FAIL_LOAD_SYMBOL = 5
STATUS_NO_PERM = 10
STATUS_INIT_ERROR = 18
STATUS_NOT_INIT = 32
STATUS_DRIVER_NOT_LOADED = 34
_UNSUPPORTED = (STATUS_NOT_SUPPORTED, STATUS_NOT_YET_IMPLEMENTED)
_NO_DRIVER = (STATUS_FAIL_LOAD_MODULE, STATUS_FAIL_LOAD_SYMBOL, STATUS_INIT_ERROR, STATUS_DRIVER_NOT_LOADED)

COUNTER_CHECK_S = 0.5
COUNTER_CHECK_PERIOD_S = 0.02
# The counter is accepted at opening when it reads within this factor of the power integral: this rules out a
# frozen counter or a wrong unit (ROCm/amdsmi#38); agreement window by window is the validator's check.
COUNTER_RATIO_RANGE = (0.5, 2.0)
ENERGY_COUNTER_CSV = "amd_energy_counter.csv"

# amdsmi_get_violation_status() flags, named like the NVML throttle reasons where they mean the same thing.
VIOLATIONS = {
    "active_ppt_pwr": "sw_power_cap",
    "active_socket_thrm": "sw_thermal_slowdown",
    "active_prochot_thrm": "hw_thermal_slowdown",
    "active_vr_thrm": "vr_thermal_slowdown",
    "active_hbm_thrm": "hbm_thermal_slowdown",
    "active_gfx_clk_below_host_limit": "gfx_clock_below_host_limit",
}

# gfx target -> architecture (LLVM AMDGPU processor table).
_ARCH_PREFIXES = (
    ("gfx950", "cdna4"), ("gfx94", "cdna3"), ("gfx90a", "cdna2"), ("gfx908", "cdna1"), ("gfx12", "rdna4"),
    ("gfx11", "rdna3"), ("gfx103", "rdna2"), ("gfx101", "rdna1"), ("gfx906", "gcn5"), ("gfx900", "gcn5"),
)  # fmt: skip

_NO_GPU = "no AMD GPU or amdgpu driver found: amdsmi says {detail!r}; run on a machine with an AMD GPU and ROCm"
CounterVerdict = Literal["reliable", "unreliable", "odd_die_empty", "unknown"]


class AmdSmiReadError(NvmlReadError):
    """A reading from amdsmi failed; the measurement stops rather than keep a hole."""


@dataclass(frozen=True)
class KnownCounter:
    """One row of ``data/amd_energy_counter.csv``."""

    market_name: str
    gfx_target: str
    counter: CounterVerdict
    note: str
    source: str


@dataclass(frozen=True)
class CounterStatus:
    """Whether this GPU's energy counter may be used, and why: what a submission should record."""

    reliable: bool
    reason: str
    source: str | None = None
    ratio: float | None = None  # counter / power integral at opening; None when not checked

    def describe(self) -> str:
        """One sentence for a submission's notes."""
        verdict = "reliable" if self.reliable else "NOT reliable"
        return f"amdsmi energy counter {verdict}: {self.reason}" + (f" ({self.source})" if self.source else "") + "."


def known_counters() -> list[KnownCounter]:
    """The rows of ``data/amd_energy_counter.csv``, in file order."""
    text = resources.files("ecocompute.collector.device").joinpath("data", ENERGY_COUNTER_CSV).read_text("utf-8")
    rows = []
    for row in csv.DictReader(io.StringIO(text)):
        verdict = row["counter"]
        if verdict not in ("reliable", "unreliable", "odd_die_empty"):
            raise ValueError(f"{ENERGY_COUNTER_CSV}: unknown counter verdict {verdict!r}")
        rows.append(KnownCounter(row["market_name"], row["gfx_target"], verdict, row["note"], row["source"]))  # type: ignore[arg-type]
    return rows


def known_counter(market_name: str) -> KnownCounter | None:
    """The first row whose market name occurs in ``market_name`` (case-insensitive), or None."""
    name = market_name.lower()
    return next((row for row in known_counters() if row.market_name.lower() in name), None)


def arch_from_gfx(target: str) -> str:
    """An architecture name (``cdna3``) from a gfx target (``gfx942``); the target itself when unknown."""
    return next((arch for prefix, arch in _ARCH_PREFIXES if target.startswith(prefix)), target)


def version_from_gfx(target: str) -> str:
    """The gfx target as ``major.minor`` (``gfx942`` -> ``9.4``, ``gfx1100`` -> ``11.0``, ``gfx90a`` -> ``9.0``).

    The stepping (the last hex digit) does not fit the schema's two-part ``compute_capability``.
    """
    match = re.fullmatch(r"gfx(\d{1,2})([0-9a-f])([0-9a-f])", target.lower())
    if match is None:
        return "0.0"
    return f"{int(match.group(1))}.{int(match.group(2), 16)}"


def number(value: Any) -> float | None:
    """An amdsmi reading as a float; ``None`` for "N/A", None, a string or a non-finite number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return "unknown" if value in (None, "", "N/A") else str(value)


def load_amdsmi() -> Any:
    """Import ``amdsmi``, or raise NoGpuError saying how to get it."""
    try:
        return importlib.import_module("amdsmi")
    except ImportError:
        raise NoGpuError(
            "the amdsmi Python library is not installed: it ships with ROCm >= 6.3 "
            "(pip install /opt/rocm/share/amd_smi, or the amdsmi package matching your ROCm)"
        ) from None


class AmdSmiGpu:
    """One AMD GPU, read through amdsmi. Use as a context manager, or call :meth:`close`.

    Opening checks what a measurement needs: the library and driver, the GPU at ``index``, no compute
    partition (SPX), socket power, and an energy counter that can be trusted (see :attr:`counter`); the other
    sensors a window reads are probed, and :attr:`missing_sensors` names those the GPU lacks. ``clock`` times the
    counter check (tests pass a virtual one).
    """

    def __init__(self, index: int = 0, *, clock: Clock | None = None, allow_unreliable_counter: bool = False,
                 check_counter_s: float = COUNTER_CHECK_S) -> None:  # fmt: skip
        self.index = index
        self._clock = clock or SystemClock()
        self._lock = threading.Lock()  # libamd_smi before ROCm 7.2 is not thread-safe (Zeus's zeusd notes)
        self._smi: Any = load_amdsmi()
        self._call("initialise amdsmi", self._smi.amdsmi_init, *self._init_flags())
        try:
            self._handle = self._open_handle(index)
            asic = self._call("read the ASIC info", self._smi.amdsmi_get_gpu_asic_info, self._handle)
            self.market_name = _text(asic.get("market_name"))
            self.gfx_target = _text(asic.get("target_graphics_version")).lower()
            self._check_partition()
            self._check_energy_counter()
            self._check_sensors()
            self.counter = self._judge_counter(check_counter_s)
            if not self.counter.reliable and not allow_unreliable_counter:
                raise NoEnergyCounterError(
                    f"the energy counter of AMD GPU {index} ({self.market_name}) cannot be trusted: "
                    f"{self.counter.reason}" + (f" (see {self.counter.source})" if self.counter.source else "")
                )
        except BaseException:
            self.close()
            raise

    vendor = "amd"

    @property
    def energy_method(self) -> EnergyMethod:
        """The amdsmi counter where it is reliable; else (kept by ``allow_unreliable_counter``) power integral."""
        if self.counter.reliable:
            return EnergyMethod("amdsmi_energy_counter")
        return EnergyMethod("power_integral", self.counter.describe())

    def __enter__(self) -> AmdSmiGpu:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Shut amdsmi down."""
        smi, self._smi = getattr(self, "_smi", None), None
        if smi is not None:
            with contextlib.suppress(smi.AmdSmiException):
                smi.amdsmi_shut_down()

    # --- errors -------------------------------------------------------------------------------

    def _init_flags(self) -> tuple[Any, ...]:
        flags = getattr(self._smi, "AmdSmiInitFlags", None)
        return (flags.INIT_AMD_GPUS,) if flags is not None else ()

    def _error(self, exc: Exception, what: str) -> GpuError:
        code = getattr(exc, "err_code", None)
        if code in _NO_DRIVER:
            return NoGpuError(_NO_GPU.format(detail=str(exc)))
        if code == STATUS_NO_PERM:
            return AmdSmiReadError(
                f"amdsmi refused to {what} of AMD GPU {self.index} (no permission): run as a user in the "
                "render and video groups (check that amd-smi metric works for you)"
            )
        return AmdSmiReadError(
            f"amdsmi could not {what} of AMD GPU {self.index}: {exc}; the measurement stopped here "
            "rather than keep a hole (re-run with --resume to continue)"
        )

    def _call(self, what: str, fn: Any, *args: Any) -> Any:
        smi = self._smi
        if smi is None:
            raise AmdSmiReadError(f"amdsmi is closed: cannot {what} of AMD GPU {self.index}")
        try:
            with self._lock:  # the sampler's thread and the engine read the GPU at once
                return fn(*args)
        except smi.AmdSmiException as exc:
            raise self._error(exc, what) from None

    def _optional(self, what: str, name: str, *args: Any) -> Any:
        """A call whose "not supported" answer is None (a missing sensor), not an error."""
        smi = self._smi
        if smi is None:
            raise AmdSmiReadError(f"amdsmi is closed: cannot {what} of AMD GPU {self.index}")
        fn = getattr(smi, name, None)
        if fn is None:  # an amdsmi older than the function
            return None
        try:
            with self._lock:
                return fn(*args)
        except smi.AmdSmiException as exc:
            if getattr(exc, "err_code", None) in _UNSUPPORTED:
                return None
            raise self._error(exc, what) from None

    # --- opening ------------------------------------------------------------------------------

    def _open_handle(self, index: int) -> Any:
        handles = list(self._call("list GPUs", self._smi.amdsmi_get_processor_handles))
        if not handles:
            raise NoGpuError(_NO_GPU.format(detail="0 GPUs"))
        if not 0 <= index < len(handles):
            raise NoGpuError(
                f"there is no AMD GPU {index}: this machine has {len(handles)} (amd-smi list shows them); "
                f"pass --device-index 0..{len(handles) - 1}"
            )
        return handles[index]

    def _check_partition(self) -> None:
        mode = self._optional("read the compute partition", "amdsmi_get_gpu_compute_partition", self._handle)
        if mode is not None and _text(mode).upper() not in ("SPX", "UNKNOWN"):
            raise MigEnabledError(
                f"AMD GPU {self.index} is split into {_text(mode)} compute partitions: set it to SPX "
                f"(sudo amd-smi set -g {self.index} -C SPX) or use an unpartitioned GPU; a partition has no "
                "energy counter of its own"
            )

    def _check_energy_counter(self) -> None:
        smi = self._smi
        try:
            with self._lock:
                reading = smi.amdsmi_get_energy_count(self._handle)
        except smi.AmdSmiException as exc:
            if getattr(exc, "err_code", None) in _UNSUPPORTED:
                raise NoEnergyCounterError(
                    f"amdsmi has no energy counter for AMD GPU {self.index} ({self.market_name}); it is not "
                    "available in virtual-machine guests: ecocompute cannot measure it"
                ) from None
            raise self._error(exc, "read the energy counter") from None
        if counter_j(reading) is None:
            raise NoEnergyCounterError(
                f"the energy counter of AMD GPU {self.index} ({self.market_name}) reads N/A: "
                "ecocompute cannot measure it"
            )

    def _check_sensors(self) -> None:
        self.missing_sensors: dict[Sensor, str] = {}
        if self._power_now() is None:
            raise GpuError(
                f"amdsmi cannot read the socket power of AMD GPU {self.index} ({self.market_name}): the counter "
                "is checked against it and a missing reading is never written as 0; update ROCm or use another GPU"
            )
        probes: tuple[tuple[Sensor, str, Any], ...] = (
            ("temperature", "amdsmi_get_temp_metric (hotspot and edge)", self._temperature),
            ("sm_clock", "amdsmi_get_clock_info (GFX clock)", self._gfx_clock),
            ("utilization", "amdsmi_get_gpu_activity (gfx_activity)", self._activity),
            ("throttle_reasons", "amdsmi_get_violation_status", self._violations),
            ("power_limit", "amdsmi_get_power_cap_info (power_cap)", lambda: self._cap_now("power_cap")),
        )
        for sensor, source, read in probes:
            if read() is None:
                self.missing_sensors[sensor] = f"amdsmi: {source} is N/A or not supported on this GPU"

    def _judge_counter(self, check_s: float) -> CounterStatus:
        known = known_counter(self.market_name)
        if known is not None and known.counter == "unreliable":
            return CounterStatus(False, f"known to be unreliable on {known.market_name}: {known.note}", known.source)
        if known is not None and known.counter == "odd_die_empty" and self.index % 2 == 1:
            return CounterStatus(False, f"odd-indexed die of a {known.market_name}: {known.note}", known.source)
        if check_s <= 0:
            return CounterStatus(True, "not checked at opening", known.source if known else None)
        ratio = self._counter_ratio(check_s)
        low, high = COUNTER_RATIO_RANGE
        if ratio is None:
            return CounterStatus(False, "the power read 0 W over the check, so the counter could not be checked")
        if not low <= ratio <= high:
            return CounterStatus(
                False, f"over {check_s:g} s it counted {ratio:.2f} x the integral of socket power",
                "https://github.com/ROCm/amdsmi/issues/38", round(ratio, 4),
            )  # fmt: skip
        why = f"agreed with the power integral at opening (ratio {ratio:.3f})"
        return CounterStatus(True, why, known.source if known else None, round(ratio, 4))

    def _counter_ratio(self, seconds: float) -> float | None:
        """Counter delta / trapezoid integral of socket power over ``seconds``; None when power reads 0."""
        t0, e0 = self._clock.monotonic(), self.energy_j()
        points = [(t0, self.power_w())]
        while self._clock.monotonic() - t0 < seconds:
            self._clock.sleep(COUNTER_CHECK_PERIOD_S)
            points.append((self._clock.monotonic(), self.power_w()))
        e1 = self.energy_j()
        integral = math.fsum((tb - ta) * (pa + pb) / 2 for (ta, pa), (tb, pb) in itertools.pairwise(points))
        return None if integral <= 0 else (e1 - e0) / integral

    # --- raw sensors (None where missing) --------------------------------------------------------

    def _power_info(self) -> dict[str, Any]:
        info = self._call("read the power", self._smi.amdsmi_get_power_info, self._handle)
        return dict(info) if isinstance(info, dict) else {}

    def _power_now(self) -> float | None:
        info = self._power_info()
        for key in ("socket_power", "current_socket_power", "average_socket_power"):
            if (value := number(info.get(key))) is not None:
                return value
        return None

    def _temperature(self) -> float | None:
        smi = self._smi
        kinds, metric = smi.AmdSmiTemperatureType, smi.AmdSmiTemperatureMetric.CURRENT
        for sensor in (kinds.HOTSPOT, kinds.EDGE):  # MI300 has no edge sensor; hotspot is the junction
            reading = self._optional("read the temperature", "amdsmi_get_temp_metric", self._handle, sensor, metric)
            value = number(reading)
            if value is not None:
                return value
        return None

    def _gfx_clock(self) -> float | None:
        info = self._optional("read the GFX clock", "amdsmi_get_clock_info", self._handle, self._smi.AmdSmiClkType.GFX)
        return None if info is None else number(info.get("clk"))

    def _activity(self) -> float | None:
        info = self._optional("read the GFX activity", "amdsmi_get_gpu_activity", self._handle)
        return None if info is None else number(info.get("gfx_activity"))

    def _violations(self) -> dict[str, Any] | None:
        status = self._optional("read the violation status", "amdsmi_get_violation_status", self._handle)
        return status if isinstance(status, dict) else None

    def _cap_now(self, key: str) -> float | None:
        info = self._optional("read the power cap", "amdsmi_get_power_cap_info", self._handle)
        return None if not isinstance(info, dict) else number(info.get(key))

    def _required(self, what: str, value: float | None) -> float:
        if value is None:
            raise AmdSmiReadError(
                f"amdsmi stopped reporting the {what} of AMD GPU {self.index} after it worked at opening: the "
                "measurement stopped here (re-run with --resume to continue)"
            )
        return value

    # --- readings used in every window ---------------------------------------------------------

    def energy_j(self) -> float:
        """The energy counter (energy_accumulator x counter_resolution, in uJ), in J."""
        reading = self._call("read the energy counter", self._smi.amdsmi_get_energy_count, self._handle)
        return self._required("energy counter", counter_j(reading))

    def power_w(self) -> float:
        """Socket power (``socket_power``, else ``current_socket_power``, else ``average_socket_power``), in W."""
        return self._required("socket power", self._power_now())

    def power_w_fields(self) -> PowerFields:
        """Current and averaged socket power, in W; None for the one this GPU reports as N/A."""
        info = self._power_info()
        instant = number(info.get("socket_power"))
        instant = instant if instant is not None else number(info.get("current_socket_power"))
        return PowerFields(instant, number(info.get("average_socket_power")))

    def temperature_c(self) -> float | None:
        """Hotspot (junction) temperature, else edge, in degrees C; None when the GPU lacked both at opening."""
        if "temperature" in self.missing_sensors:
            return None
        return self._required("temperature", self._temperature())

    def sm_clock_mhz(self) -> float | None:
        """Current GFX clock (AMD's counterpart of the SM clock), in MHz; None when N/A at opening."""
        if "sm_clock" in self.missing_sensors:
            return None
        return self._required("GFX clock", self._gfx_clock())

    def utilization_pct(self) -> float | None:
        """GFX activity, in %; None when N/A at opening."""
        if "utilization" in self.missing_sensors:
            return None
        return self._required("GFX activity", self._activity())

    def throttle_reasons(self) -> list[str] | None:
        """The violation flags active now (amdsmi_get_violation_status, ROCm >= 6.4); None where not reported."""
        if "throttle_reasons" in self.missing_sensors:
            return None
        status = self._violations()
        if status is None:
            raise AmdSmiReadError(
                f"amdsmi stopped reporting the violation status of AMD GPU {self.index} after it worked at opening: "
                "the measurement stopped here (re-run with --resume to continue)"
            )
        return [name for key, name in VIOLATIONS.items() if status.get(key) is True]

    def power_limit_w(self) -> float | None:
        """The power cap in force now, in W; None when N/A at opening."""
        if "power_limit" in self.missing_sensors:
            return None
        return self._power_cap("power_cap")

    def _power_cap(self, key: str) -> float:
        info = self._call("read the power cap", self._smi.amdsmi_get_power_cap_info, self._handle)
        return self._required(f"power cap ({key})", number(info.get(key))) / 1e6

    def _cap_w(self, key: str) -> float | None:
        """A power cap of the fingerprint, in W; None where amdsmi reports it N/A (recorded as null, never 0)."""
        cap = self._cap_now(key)
        return None if cap is None else cap / 1e6

    def compute_processes(self) -> list[int] | None:
        """PIDs of the processes on this GPU; None where amdsmi cannot list them."""
        processes = self._optional("list processes", "amdsmi_get_gpu_process_list", self._handle)
        if processes is None:
            return None
        return [int(p["pid"]) if isinstance(p, dict) else int(p) for p in processes]

    def uuid(self) -> str:
        """The GPU's UUID; store only its hash."""
        return _text(self._call("read the UUID", self._smi.amdsmi_get_gpu_device_uuid, self._handle))

    # --- identity ------------------------------------------------------------------------------

    def fingerprint(self) -> GpuInfo:
        """The GPU's identity and settings, in the fields NVIDIA GPUs fill (see docs/amd.md for the mapping)."""
        h, smi = self._handle, self._smi
        memory = self._call("read the memory size", smi.amdsmi_get_gpu_memory_total, h, smi.AmdSmiMemoryType.VRAM)
        driver = self._call("read the driver version", smi.amdsmi_get_gpu_driver_info, h)
        vbios = self._optional("read the VBIOS version", "amdsmi_get_gpu_vbios_info", h) or {}
        clock = self._optional("read the GFX clock", "amdsmi_get_clock_info", h, smi.AmdSmiClkType.GFX) or {}
        return GpuInfo(
            index=self.index,
            gpu_name=self.market_name,
            gpu_arch=arch_from_gfx(self.gfx_target),
            compute_capability=version_from_gfx(self.gfx_target),
            memory_total_mib=int(memory) // (1024 * 1024),
            power_limit_w=self.power_limit_w(),
            default_power_limit_w=self._cap_w("default_power_cap"),
            driver_version=_text(driver.get("driver_version")),
            vbios_version=_text(vbios.get("version")),
            gpu_uuid_sha256=hashlib.sha256(self.uuid().encode("utf-8")).hexdigest(),
            persistence_mode=True,  # amdgpu keeps the GPU initialised while the driver is loaded: nothing to set
            mig_mode=False,  # opening refuses a partitioned GPU
            clocks_locked=clock.get("clk_locked") is True,
            nvml_version=f"amdsmi {self.library_version()}",
            vendor="amd",
        )

    def library_version(self) -> str:
        """The amdsmi library version, as ``major.minor.release``."""
        info = self._call("read the library version", self._smi.amdsmi_get_lib_version)
        if isinstance(info, dict):
            parts = [info.get(k) for k in ("major", "minor", "release") if info.get(k) is not None]
            return ".".join(str(p) for p in parts) or "unknown"
        return _text(info)


def counter_j(reading: Any) -> float | None:
    """J from an ``amdsmi_get_energy_count`` dict: accumulator x resolution (uJ) / 1e6.

    ROCm 6.3 renamed the accumulator from ``power`` to ``energy_accumulator`` (ROCm/amdsmi#38); both are read.
    """
    if not isinstance(reading, dict):
        return None
    ticks = number(reading.get("energy_accumulator", reading.get("power")))
    resolution_uj = number(reading.get("counter_resolution"))
    if ticks is None or resolution_uj is None or resolution_uj <= 0:
        return None
    return ticks * resolution_uj / 1e6


if TYPE_CHECKING:

    def _behind_the_seam(gpu: AmdSmiGpu) -> GpuMonitor:
        """Here mypy checks that AmdSmiGpu is a GpuMonitor."""
        return gpu
