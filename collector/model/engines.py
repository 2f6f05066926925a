"""The inference engines the collector can measure, and what each one must say about itself.

An engine is a :class:`~ecocompute.collector.model.backend.Backend` factory plus an :class:`EngineInfo` (name,
version, build flags) for the workload record. :data:`ENGINES` registers them by name; today there is one,
``transformers``. The contract an engine must meet is written in docs/engines.md and enforced by
tests/collector/test_engine_conformance.py, which runs every registered engine on a CPU against a replayed
trace: adding an engine is adding it here and to that test's parametrization, and passing it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ecocompute.collector.model.backend import Backend, hf_backend
from ecocompute.collector.run.config import Destination, RunConfig
from ecocompute.schema.errors import UsageError

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


def transformers_info() -> EngineInfo:
    """Hugging Face transformers: its version, and the torch, CUDA and bitsandbytes it runs on (imports torch)."""
    from ecocompute.collector.model.hf import package_version, torch_versions

    torch_version, cuda_runtime = torch_versions()
    build = {"torch": torch_version, "cuda_runtime": cuda_runtime or "none"}
    for name in ("bitsandbytes", "accelerate"):
        if (version := package_version(name)) is not None:
            build[name] = version
    return EngineInfo("transformers", package_version("transformers") or "unknown", build)


ENGINES: dict[str, EngineSpec] = {
    "transformers": EngineSpec(
        "transformers", hf_backend, transformers_info,
        "Hugging Face transformers generate(), eager or torch.compile'd, bitsandbytes quantization",
    ),
}  # fmt: skip


def engine_spec(name: str) -> EngineSpec:
    """The registered engine called ``name``; UsageError lists the registered ones."""
    try:
        return ENGINES[name]
    except KeyError:
        raise UsageError(f"unknown engine {name!r}: choose one of {', '.join(sorted(ENGINES))}") from None
