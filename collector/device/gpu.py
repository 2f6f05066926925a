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

    The UUID is only ever kept as its SHA-256 hash.
    """

    index: int
    gpu_name: str
    gpu_arch: str
    compute_capability: str
    memory_total_mib: int
    power_limit_w: float
    default_power_limit_w: float
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


def energy_method(gpu: object) -> EnergyMethod:
    """The GPU's :class:`EnergyMethod`; a monitor that says nothing has NVML's counter (replays of NVML traces)."""
    method = getattr(gpu, "energy_method", None)
    return method if isinstance(method, EnergyMethod) else NVML_COUNTER


class GpuMonitor(Protocol):
    """Readings of one GPU. Every method raises a :class:`~ecocompute.collector.errors.GpuError` on failure."""

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

    def temperature_c(self) -> float:
        """GPU core temperature, in degrees C."""
        ...

    def sm_clock_mhz(self) -> float:
        """Current SM clock, in MHz."""
        ...

    def utilization_pct(self) -> float:
        """GPU utilisation over NVML's last sample period, in %."""
        ...

    def throttle_reasons(self) -> list[str]:
        """Names of the clock event (throttle) reasons active now."""
        ...

    def power_limit_w(self) -> float:
        """The power limit in force now (``nvmlDeviceGetPowerManagementLimit``), in W."""
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
