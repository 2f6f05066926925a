"""The seam between the measurement engine and a GPU: what the engine may ask of one.

:class:`~ecocompute.collector.device.nvml.NvmlGpu` answers from NVML on a real GPU;
:class:`~ecocompute.collector.device.replay.ReplayGpu` answers from a recorded trace. The engine sees only
:class:`GpuMonitor`, so everything above this seam runs the same against either. Units are SI
(J, W, degrees C, MHz, %): NVML's mJ and mW are converted once, below the seam.
"""

from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass, fields
from typing import Any, Literal, Protocol

EnergySource = Literal["nvml_total_energy_counter", "amdsmi_energy_counter", "power_integral"]
"""Where a window's energy comes from (``payload.method.energy_source``)."""


@dataclass(frozen=True)
class PowerFields:
    """NVML's power field values: instant and 1 s-averaged power; ``None`` where the GPU lacks the field."""

    instant_w: float | None
    average_w: float | None


@dataclass(frozen=True)
class GpuInfo:
    """What a GPU says about itself: the GPU half of ``payload.hardware``, plus the NVML version.

    The UUID is only ever kept as its SHA-256 hash. A power limit the GPU does not report is None (null in
    ``payload.hardware``, schema 1.2), never 0 and never guessed.
    """

    index: int
    gpu_name: str
    gpu_arch: str
    compute_capability: str
    memory_total_mib: int
    power_limit_w: float | None
    default_power_limit_w: float | None
    driver_version: str
    vbios_version: str
    gpu_uuid_sha256: str
    persistence_mode: bool
    mig_mode: bool
    clocks_locked: bool
    nvml_version: str
    vendor: Literal["nvidia", "amd"] = "nvidia"

    def to_dict(self) -> dict[str, Any]:
        """The fields as a JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GpuInfo:
        """Rebuild from :meth:`to_dict` output (as stored in a trace; one recorded before ``vendor`` is NVIDIA)."""
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data or f.default is MISSING})


@dataclass(frozen=True)
class EnergyMethod:
    """How a GPU's energy can be measured: its counter, or (``power_integral``) the integral of sampled power.

    ``source`` None: the GPU reports neither a counter nor power, and the preflight refuses it with ``reason``.
    ``reason`` says why no counter is used (None when one is).
    """

    source: EnergySource | None
    reason: str | None = None

    @property
    def counter(self) -> bool:
        """True when each window reads the GPU's energy counter."""
        return self.source in ("nvml_total_energy_counter", "amdsmi_energy_counter")


NVML_COUNTER = EnergyMethod("nvml_total_energy_counter")


Sensor = Literal["temperature", "sm_clock", "utilization", "throttle_reasons", "power_limit"]
"""A per-window reading a GPU may lack (older and mobile NVIDIA parts, some AMD ones)."""

SENSORS: dict[Sensor, tuple[str, str]] = {
    "temperature": (
        "temp_c_start/temp_c_end",
        "the validator cannot check the temperature range (E-TEMPERATURE skipped); J/token is unaffected",
    ),
    "sm_clock": (
        "sm_clock_mhz_mean",
        "the clock a window ran at is unknown (E-CLOCK skipped); J/token is unaffected",
    ),
    "utilization": (
        "gpu_util_pct_mean",
        "host-bound decode cannot be told from GPU utilisation; J/token is unaffected",
    ),
    "throttle_reasons": (
        "throttle_reasons",
        "a throttled window is not flagged (W-THROTTLE skipped): check cooling and power yourself",
    ),
    "power_limit": (
        "power_limit_w",
        "a power limit changed during the run is not seen; the power ceiling uses the limit read at the start, or "
        "the GPU's highest one where none is reported (W-SENSOR-MISSING); J/token is unaffected",
    ),
}
"""Each sensor: the Window fields that hold null without it, and what its absence means for the result."""


def missing_sensors(gpu: object) -> dict[Sensor, str]:
    """The sensors ``gpu`` found missing when it opened, each with why; {} for a monitor that says nothing."""
    missing = getattr(gpu, "missing_sensors", None)
    return dict(missing) if isinstance(missing, dict) else {}


def energy_method(gpu: object) -> EnergyMethod:
    """The GPU's :class:`EnergyMethod`; a monitor that says nothing has NVML's counter (replays of NVML traces)."""
    method = getattr(gpu, "energy_method", None)
    return method if isinstance(method, EnergyMethod) else NVML_COUNTER


class GpuMonitor(Protocol):
    """Readings of one GPU. Every method raises a :class:`~ecocompute.collector.errors.GpuError` on failure.

    A sensor the GPU lacks (probed once, when it opens: :func:`missing_sensors`) reads as None in every window, never
    as 0; a sensor that worked at opening and then fails raises, as any failed reading does.
    """

    index: int

    def energy_j(self) -> float:
        """The GPU's total-energy counter, in J since the driver loaded."""
        ...

    def power_w(self) -> float:
        """Power draw as ``nvmlDeviceGetPowerUsage`` reports it, in W."""
        ...

    def power_w_fields(self) -> PowerFields:
        """Instant and averaged power from NVML field values, in W."""
        ...

    def temperature_c(self) -> float | None:
        """GPU core temperature, in degrees C; None when the GPU has no such sensor (found at opening)."""
        ...

    def sm_clock_mhz(self) -> float | None:
        """Current SM clock, in MHz; None when the GPU does not report it (found at opening)."""
        ...

    def utilization_pct(self) -> float | None:
        """GPU utilisation over NVML's last sample period, in %; None when the GPU does not report it."""
        ...

    def throttle_reasons(self) -> list[str] | None:
        """Names of the clock event (throttle) reasons active now ([]: none); None when the GPU does not report them."""
        ...

    def power_limit_w(self) -> float | None:
        """The power limit in force now (``nvmlDeviceGetPowerManagementLimit``), in W; None when not reported."""
        ...

    def compute_processes(self) -> list[int] | None:
        """PIDs of processes with a compute context on the GPU; ``None`` where NVML cannot list them."""
        ...

    def uuid(self) -> str:
        """The GPU's UUID (only used to find the matching CUDA device; never stored)."""
        ...

    def fingerprint(self) -> GpuInfo:
        """The GPU's identity and settings."""
        ...

    def close(self) -> None:
        """Release the management library."""
        ...
