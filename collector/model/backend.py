"""What a run needs of the model side: the :class:`Backend` protocol, and the transformers one.

``hf_backend`` and ``cuda_device_for`` import torch (through :mod:`ecocompute.collector.model.hf`) only when called;
``driver_device_for`` asks the CUDA driver instead, for engines that must not have torch in their process.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from ecocompute.collector.device.gpu import GpuMonitor
from ecocompute.collector.model.archs import load_arch
from ecocompute.collector.run.config import Destination, RunConfig
from ecocompute.collector.run.engine import Runner
from ecocompute.schema.models import Precision


class LoadedRunner(Runner, Protocol):
    """A runner as a backend returns it: also its quantization config, memory and attention kernel."""

    @property
    def quantization(self) -> dict[str, Any] | None:
        """The full quantization config (bitsandbytes', torchao's, a GGUF file's), or None."""
        ...

    @property
    def memory_mib(self) -> float:
        """Memory footprint of the model."""
        ...

    @property
    def attn_implementation(self) -> str | None:
        """The attention implementation in use."""
        ...

    @property
    def compiled(self) -> bool:
        """Whether generate has compiled the model's forward (compiled stack, CUDA, a compilable quantizer)."""
        ...


class ModelInfo(Protocol):
    """Identity and size of the model (``hf.ModelSource``)."""

    @property
    def model_id(self) -> str:
        """Hugging Face id, local path or ``random-init/<arch>``."""
        ...

    @property
    def revision(self) -> str | None:
        """The checkpoint's commit, when known."""
        ...

    @property
    def weights(self) -> Literal["pretrained", "random-init"]:
        """Where the weights come from."""
        ...

    @property
    def architecture(self) -> str:
        """Shipped architecture name, or the model's."""
        ...

    @property
    def params_total(self) -> int:
        """Parameters of the unquantized model."""
        ...


class Backend(Protocol):
    """Loads one model at each precision (``hf.HfBackend``)."""

    @property
    def source(self) -> ModelInfo:
        """The model."""
        ...

    @property
    def prompt_sha256(self) -> str:
        """Hash of the prompt token ids."""
        ...

    def load(self, precision: Precision) -> LoadedRunner:
        """Load ``precision``; raises on any failure."""
        ...

    def fits_together(self, precisions: list[Precision]) -> bool:
        """Whether these precisions fit in GPU memory at once."""
        ...

    def perplexity(self, runner: Any, text: str) -> tuple[float, int]:
        """(perplexity, tokens predicted) of ``text``."""
        ...


def hf_backend(config: RunConfig, dest: Destination, device: str) -> Backend:
    """The transformers backend (imports torch)."""
    from ecocompute.collector.model import hf, weights
    from ecocompute.collector.model.precisions import check_engine

    check_engine(config.precisions, "transformers")
    if config.arch is not None:
        source = weights.random_init_source(load_arch(config.arch), config.seed, dest.weights_cache, device)
    else:
        assert config.model is not None  # noqa: S101 - RunConfig.check
        source = weights.pretrained_source(config.model)
    return hf.HfBackend(source, device=device, batch_size=config.batch_size, prompt_tokens=config.prompt_tokens,
                        new_tokens=config.new_tokens, stack=config.stack, seed=config.seed)  # fmt: skip


def cuda_device_for(gpu: GpuMonitor) -> str:
    """The torch device of the NVML GPU (imports torch)."""
    from ecocompute.collector.model.hf import cuda_device

    return cuda_device(gpu.uuid(), gpu.index)


def driver_device_for(gpu: GpuMonitor) -> str:
    """The CUDA device of the NVML GPU, asked of the CUDA driver (no torch: for engines that run without it)."""
    from ecocompute.collector.device.cuda import cuda_device

    return cuda_device(gpu.uuid(), gpu.index)
