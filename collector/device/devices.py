"""Which GPU library to open: NVML for NVIDIA, amdsmi for AMD, or whichever finds a GPU.

:func:`open_gpu` is the one chooser; both libraries are imported only when tried.
"""

from __future__ import annotations

from typing import Literal

from ecocompute.collector.device.gpu import GpuMonitor
from ecocompute.collector.errors import NoGpuError
from ecocompute.collector.host.clock import Clock
from ecocompute.schema.errors import UsageError

Vendor = Literal["auto", "nvidia", "amd"]
VENDORS: tuple[Vendor, ...] = ("auto", "nvidia", "amd")


def _nvidia(index: int, counterless: bool) -> GpuMonitor:
    from ecocompute.collector.device.nvml import NvmlGpu

    return NvmlGpu(index, allow_counterless=counterless)


def _amd(index: int, clock: Clock | None, counterless: bool) -> GpuMonitor:
    from ecocompute.collector.device.amd import AmdSmiGpu

    return AmdSmiGpu(index, clock=clock, allow_unreliable_counter=counterless)


def open_gpu(
    index: int, vendor: str = "auto", *, clock: Clock | None = None, allow_counterless: bool = False
) -> GpuMonitor:
    """Open GPU ``index`` through ``vendor``'s library; ``auto`` tries NVML, then amdsmi.

    ``clock`` times amdsmi's counter check at opening (the system clock when None). ``allow_counterless`` keeps
    a GPU without a (trustworthy) energy counter open, for a measurement by integrated power: its
    :func:`~ecocompute.collector.device.gpu.energy_method` says so, and the preflight judges it.
    With ``auto`` only "no GPU here" (NoGpuError) moves on to the next library; any other refusal (MIG, no
    counter, a busy or lost GPU) is the answer. When neither finds a GPU, the error gives both reasons.
    """
    if vendor == "nvidia":
        return _nvidia(index, allow_counterless)
    if vendor == "amd":
        return _amd(index, clock, allow_counterless)
    if vendor != "auto":
        raise UsageError(f"unknown GPU vendor {vendor!r}: choose one of {', '.join(VENDORS)}")
    try:
        return _nvidia(index, allow_counterless)
    except NoGpuError as nvidia:
        try:
            return _amd(index, clock, allow_counterless)
        except NoGpuError as amd:
            raise NoGpuError(f"no GPU found: NVIDIA: {nvidia}; AMD: {amd}") from None
