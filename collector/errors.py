"""The collector's exceptions: each says what went wrong and what to do about it.

The ``ecocompute`` CLI turns every :class:`~ecocompute.schema.errors.EcocomputeError` into one red line.
"""

from __future__ import annotations

from ecocompute.schema.errors import EcocomputeError, UsageError


class GpuError(EcocomputeError):
    """The GPU or its management library cannot be used for a measurement."""


class NoGpuError(GpuError):
    """No NVIDIA GPU, driver or NVML library on this machine (or no GPU at the requested index)."""


class NoEnergyCounterError(GpuError):
    """The GPU's NVML has no total-energy counter (GPUs before Volta)."""


class MigEnabledError(GpuError):
    """The GPU is partitioned into MIG instances, which have no energy counter of their own."""


class NvmlReadError(GpuError):
    """A reading from NVML failed; the measurement stops rather than keep a hole."""


class GpuBusyError(GpuError):
    """Other processes use the GPU, which would add their energy to ours."""


class TraceError(GpuError):
    """A recorded NVML trace cannot be read or has been played to its end."""


class ModelError(EcocomputeError):
    """A model or architecture cannot be found, built or loaded."""


class RunStateError(UsageError):
    """A checkpointed run cannot be resumed, or an unfinished one is in the way."""
