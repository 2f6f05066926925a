"""The hardware and software fingerprint of a submission: what ran, where, with which versions.

The GPU half comes from :meth:`GpuMonitor.fingerprint` (its UUID only as a SHA-256 hash); the host half
from ``/proc`` and ``platform``; library versions from ``importlib.metadata``, and torch's CUDA
runtime from torch itself (through :mod:`ecocompute.collector.model.hf`, the one module that imports torch), except
for an engine that runs without torch.
"""

from __future__ import annotations

import platform
from collections.abc import Mapping

from ecocompute.collector.device.gpu import GpuInfo
from ecocompute.collector.host import host
from ecocompute.collector.model.hf import package_version, torch_versions
from ecocompute.schema.models import Hardware, Software


def hardware(gpu: GpuInfo) -> Hardware:
    """``payload.hardware``: the GPU used (``gpu_count`` is the GPUs the measurement used: 1) and its host."""
    return Hardware(
        gpu_name=gpu.gpu_name,
        gpu_arch=gpu.gpu_arch,
        compute_capability=gpu.compute_capability,
        gpu_count=1,
        memory_total_mib=gpu.memory_total_mib,
        power_limit_w=gpu.power_limit_w,
        default_power_limit_w=gpu.default_power_limit_w,
        driver_version=gpu.driver_version,
        vbios_version=gpu.vbios_version,
        gpu_uuid_sha256=gpu.gpu_uuid_sha256,
        persistence_mode=gpu.persistence_mode,
        mig_mode=gpu.mig_mode,
        clocks_locked=gpu.clocks_locked,
        cpu_model=host.cpu_model()[:512],
        cpu_count=host.cpu_count(),
        host_os=host.host_os()[:512],
        memory_host_mib=host.host_memory_mib(),
        vendor=gpu.vendor,
    )


def software(nvml_version: str, engine_build: Mapping[str, str] | None = None) -> Software:
    """``payload.software``: Python, torch and its CUDA runtime, transformers, bitsandbytes, accelerate, NVML.

    ``engine_build``: the build record of an engine that runs without torch (llama.cpp). torch is then not
    imported: its installed version is read from the package metadata, and the CUDA runtime is the one the
    engine's library loaded (its ``cuda_runtime``, if any).
    """
    if engine_build is None:
        torch_version, cuda_runtime = torch_versions()
    else:
        torch_version = package_version("torch") or "not installed"
        cuda_runtime = engine_build.get("cuda_runtime")
    return Software(
        python=platform.python_version(),
        torch=torch_version,
        cuda_runtime=cuda_runtime,
        transformers=package_version("transformers") or "unknown",
        bitsandbytes=package_version("bitsandbytes"),
        accelerate=package_version("accelerate"),
        nvml=nvml_version,
        nvidia_ml_py=package_version("nvidia-ml-py"),
    )
