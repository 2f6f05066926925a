"""The CUDA driver, asked directly (``libcuda.so.1`` through ctypes) for engines that do not run on torch.

llama.cpp and torch cannot share a process: with torch imported, llama.cpp 0.3.36 crashes while it loads a model
(on the H200, in CPU and GPU mode alike; docs/llamacpp.md). An engine that runs no torch still needs what
torch tells the transformers engine: which CUDA device is the GPU NVML measures, how much of its memory is free,
and which CUDA runtime it links. The driver answers the first two with no torch; the third comes from the
``libcudart`` the engine's own library has loaded.

The library is reached through :func:`_driver` only, so that tests can put a fake in its place (no GPU there).
"""

from __future__ import annotations

import ctypes
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ecocompute.collector.errors import NoGpuError

_SUCCESS = 0
_CACHE: dict[str, Any] = {}


def _driver() -> Any:
    """The CUDA driver library, initialised once; NoGpuError when there is none."""
    if "lib" not in _CACHE:
        try:
            lib = ctypes.CDLL("libcuda.so.1")
        except OSError:
            raise NoGpuError("the CUDA driver (libcuda.so.1) is not installed: install the NVIDIA driver") from None
        _check(lib, "cuInit", 0)
        _CACHE["lib"] = lib
    return _CACHE["lib"]


def _check(lib: Any, name: str, *args: Any) -> None:
    code = getattr(lib, name)(*args)
    if code != _SUCCESS:
        raise NoGpuError(f"the CUDA driver's {name} failed (CUresult {code}): check the driver and "
                         "CUDA_VISIBLE_DEVICES")  # fmt: skip


def _uuid_text(raw: bytes) -> str:
    """16 UUID bytes as NVML writes them, less its ``GPU-`` prefix: 8-4-4-4-12 hex digits."""
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def device_uuids() -> list[str]:
    """The UUIDs of the CUDA devices this process sees, in CUDA's numbering (CUDA_VISIBLE_DEVICES applied)."""
    lib = _driver()
    count = ctypes.c_int(0)
    _check(lib, "cuDeviceGetCount", ctypes.byref(count))
    get_uuid = "cuDeviceGetUuid_v2" if hasattr(lib, "cuDeviceGetUuid_v2") else "cuDeviceGetUuid"
    uuids = []
    for index in range(count.value):
        device = ctypes.c_int(0)
        _check(lib, "cuDeviceGet", ctypes.byref(device), index)
        raw = (ctypes.c_char * 16)()
        _check(lib, get_uuid, raw, device)
        uuids.append(_uuid_text(bytes(raw)))
    return uuids


def uuid_index(uuid: str, uuids: Sequence[object]) -> int | None:
    """Where NVML's ``uuid`` is among CUDA's device UUIDs (either may carry ``GPU-``, in any case), or None.

    Entries that are None (a torch that exposes no UUID) match nothing.
    """
    want = uuid.lower().removeprefix("gpu-")
    found = (i for i, u in enumerate(uuids) if u is not None and str(u).lower().removeprefix("gpu-") == want)
    return next(found, None)


def cuda_device(uuid: str, nvml_index: int) -> str:
    """The CUDA device (``cuda:N``) of the GPU whose NVML UUID is ``uuid``, without torch."""
    uuids = device_uuids()
    if not uuids:
        raise NoGpuError("CUDA sees no device: check the driver and CUDA_VISIBLE_DEVICES")
    index = uuid_index(uuid, uuids)
    if index is not None:
        return f"cuda:{index}"
    raise NoGpuError(
        f"NVML GPU {nvml_index} is not among the CUDA devices this process sees: pass the --device-index of the "
        "GPU that CUDA_VISIBLE_DEVICES leaves visible"
    )


def free_memory_bytes(device: str) -> int:
    """Free memory of ``cuda:N`` now, in bytes (through the device's primary context, the one engines share)."""
    lib = _driver()
    index = int(device.partition(":")[2] or 0)
    dev, ctx = ctypes.c_int(0), ctypes.c_void_p()
    _check(lib, "cuDeviceGet", ctypes.byref(dev), index)
    _check(lib, "cuDevicePrimaryCtxRetain", ctypes.byref(ctx), dev)
    try:
        _check(lib, "cuCtxPushCurrent_v2", ctx)
        try:
            free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
            _check(lib, "cuMemGetInfo_v2", ctypes.byref(free), ctypes.byref(total))
        finally:
            _check(lib, "cuCtxPopCurrent_v2", ctypes.byref(ctypes.c_void_p()))
    finally:
        _check(lib, "cuDevicePrimaryCtxRelease_v2", dev)
    return int(free.value)


_CUDART = re.compile(r"\s(/\S*libcudart\.so[.\d]*)$")


def loaded_runtime_version(maps: Path = Path("/proc/self/maps")) -> str | None:
    """The version of the CUDA runtime this process has loaded ("13.0"), or None when none is loaded."""
    try:
        lines = maps.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    paths = sorted({m.group(1) for line in lines if (m := _CUDART.search(line))})
    if not paths:
        return None
    version = ctypes.c_int(0)
    try:
        code = ctypes.CDLL(paths[0]).cudaRuntimeGetVersion(ctypes.byref(version))
    except (OSError, AttributeError):
        return None
    if code != _SUCCESS or version.value <= 0:
        return None
    return f"{version.value // 1000}.{version.value % 1000 // 10}"


__all__ = ["cuda_device", "device_uuids", "free_memory_bytes", "loaded_runtime_version", "uuid_index"]
