"""The inference engines the collector can measure, and what each one must say about itself.

An engine is a :class:`~ecocompute.collector.model.backend.Backend` factory plus an :class:`EngineInfo` (name,
version, build flags) for the workload record. :data:`ENGINES` registers them by name: ``transformers`` and
``llama.cpp`` (:mod:`ecocompute.collector.model.llamacpp`, GGUF files through llama-cpp-python). The contract an
engine must meet is written in docs/engines.md and enforced by tests/collector/test_engine_conformance.py, which
runs every registered engine on a CPU against a replayed trace: adding an engine is adding it here and to that
test's parametrization, and passing it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ecocompute.collector.device.gpu import GpuMonitor
from ecocompute.collector.model.backend import Backend, cuda_device_for, driver_device_for, hf_backend
from ecocompute.collector.run.config import Destination, RunConfig
from ecocompute.schema.errors import UsageError
from ecocompute.schema.models import Precision, Stack

BackendFactory = Callable[[RunConfig, Destination, str], Backend]


@dataclass(frozen=True)
class EngineInfo:
    """What the workload record says about the engine: its name, version and how it was built."""

    name: str
    version: str
    build: dict[str, str] = field(default_factory=dict)  # e.g. torch and CUDA versions, or cmake flags


@dataclass(frozen=True)
class EngineSpec:
    """One registered engine: its backend factory and its self-description."""

    name: str
    make_backend: BackendFactory
    info: Callable[[], EngineInfo]
    summary: str
    quantization_type: Callable[[Precision], str | None] = lambda _precision: None
    """The engine's own name of a precision's weight format (``Measurement.quantization_type``), or None."""
    stacks: tuple[Stack, ...] = tuple(Stack)
    """The ``--stack`` values the engine runs (the compiled ones are torch.compile's)."""
    runs_torch: bool = True
    """Whether the engine runs on torch. One that does not never has torch imported in the measuring process
    (llama.cpp crashes beside it): its device comes from the CUDA driver, and its random-init weights are made
    by a child process."""
    device_for: Callable[[GpuMonitor], str] = cuda_device_for
    """The device string (``cuda:N``) of the measured GPU, as the engine's backend wants it."""


def transformers_info() -> EngineInfo:
    """Hugging Face transformers: its version, and the torch, CUDA, bitsandbytes, torchao it runs on (imports torch)."""
    from ecocompute.collector.model.hf import package_version, torch_versions

    torch_version, cuda_runtime = torch_versions()
    build = {"torch": torch_version, "cuda_runtime": cuda_runtime or "none"}
    for name in ("bitsandbytes", "accelerate", "torchao"):
        if (version := package_version(name)) is not None:
            build[name] = version
    return EngineInfo("transformers", package_version("transformers") or "unknown", build)


def llamacpp_backend(config: RunConfig, dest: Destination, device: str) -> Backend:
    """The llama.cpp backend (imports llama_cpp)."""
    from ecocompute.collector.model.llamacpp import llamacpp_backend as make

    return make(config, dest, device)


def llamacpp_quantization_type(precision: Precision) -> str | None:
    """The GGUF file type of a llama.cpp precision (F16, Q8_0, Q4_K_M)."""
    from ecocompute.collector.model.llamacpp import PRECISION_FILE_TYPES

    return PRECISION_FILE_TYPES.get(precision.value)


def llamacpp_info() -> EngineInfo:
    """llama.cpp: llama-cpp-python's version and the build flags of its library (imports llama_cpp)."""
    from ecocompute.collector.model.llamacpp import llamacpp_info as info

    return info()


ENGINES: dict[str, EngineSpec] = {
    "transformers": EngineSpec(
        "transformers", hf_backend, transformers_info,
        "Hugging Face transformers generate(), eager or torch.compile'd, bitsandbytes quantization, torchao FP8",
    ),
    "llama.cpp": EngineSpec(
        "llama.cpp", llamacpp_backend, llamacpp_info,
        "llama.cpp through llama-cpp-python: GGUF F16, Q8_0 and Q4_K_M, every layer on the GPU, batched greedy decode",
        llamacpp_quantization_type, (Stack.EAGER,), runs_torch=False, device_for=driver_device_for,
    ),
}  # fmt: skip


def engine_spec(name: str) -> EngineSpec:
    """The registered engine called ``name``; UsageError lists the registered ones."""
    try:
        return ENGINES[name]
    except KeyError:
        raise UsageError(f"unknown engine {name!r}: choose one of {', '.join(sorted(ENGINES))}") from None
