"""Running models through Hugging Face transformers: where torch, transformers and bitsandbytes are imported.

Every import happens inside the function that needs it, so ``ecocompute --help`` never loads torch. Where a
model's weights come from (a shipped architecture built once with random weights, or a pretrained checkpoint)
is :mod:`ecocompute.collector.model.weights`; the names it holds are still reachable here. Each precision is loaded
with ``from_pretrained(..., dtype=..., quantization_config=BitsAndBytesConfig(...))`` (FP8: ``TorchAoConfig``, see
:mod:`ecocompute.collector.model.torchao_fp8`) and wrapped in an :class:`HfRunner` that generates exactly
``new_tokens`` per sequence, greedily.
"""

from __future__ import annotations

import gc
import hashlib
import importlib.metadata
import json
import math
import random
from typing import TYPE_CHECKING, Any

from ecocompute.collector.device.cuda import uuid_index
from ecocompute.collector.errors import ModelError, NoGpuError
from ecocompute.collector.model import torchao_fp8
from ecocompute.collector.model.precisions import SPECS, check_engine, estimate_model_bytes
from ecocompute.schema.models import Precision, Stack

PROMPT_ID_LOW = 10
PROMPT_ID_HIGH = 30000
PERPLEXITY_CONTEXT_TOKENS = 1024
MODEL_MARGIN_BYTES = 1 << 30
FIT_FRACTION = 0.85


if TYPE_CHECKING:
    from ecocompute.collector.model.weights import ModelSource

_MOVED_TO_WEIGHTS = (
    "COMPLETE_MARKER", "ModelSource", "weights_cache_candidates", "default_weights_cache", "random_init_source",
    "pretrained_source",
)  # fmt: skip


def __getattr__(name: str) -> Any:
    """The weights-cache names, which moved to :mod:`ecocompute.collector.model.weights` (kept reachable here)."""
    if name in _MOVED_TO_WEIGHTS:
        from ecocompute.collector.model import weights

        return getattr(weights, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise ModelError("torch is not installed: pip install 'ecocompute[collect]' (a CUDA build of torch)") from None
    return torch


def _transformers() -> Any:
    try:
        import transformers
    except ImportError:
        raise ModelError("transformers is not installed: pip install 'ecocompute[collect]'") from None
    transformers.logging.set_verbosity_error()
    torchao_fp8.quiet_extension_warnings()  # transformers imports torchao, where installed, when a model loads
    transformers.utils.logging.disable_progress_bar()
    return transformers


def package_version(name: str) -> str | None:
    """The installed version of distribution ``name``, or None."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def torch_versions() -> tuple[str, str | None]:
    """(torch version, CUDA runtime torch was built with or None)."""
    torch = _torch()
    return str(torch.__version__), torch.version.cuda


def dynamo_compiles() -> int:
    """Frames torch._dynamo has tried to compile in this process (compiles and recompiles); 0 before it loads.

    ``torch._dynamo.utils.counters["frames"]["total"]`` grows on every cache miss of a compiled function, so a
    difference across a window counts the compilations inside it.
    """
    import sys

    utils = sys.modules.get("torch._dynamo.utils")
    if utils is None:
        return 0
    return int(utils.counters["frames"]["total"])


# --- prompt ------------------------------------------------------------------------------------


def prompt_ids(batch_size: int, prompt_tokens: int, vocab_size: int, seed: int) -> list[list[int]]:
    """Deterministic prompt token ids: ``batch_size`` rows of ``prompt_tokens`` ids drawn with ``seed``."""
    rng = random.Random(seed)
    high = min(vocab_size, PROMPT_ID_HIGH)
    return [[rng.randrange(PROMPT_ID_LOW, high) for _ in range(prompt_tokens)] for _ in range(batch_size)]


def prompt_sha256(ids: list[list[int]]) -> str:
    """SHA-256 of the prompt ids as compact JSON (``[[1,2,...],...]``)."""
    return hashlib.sha256(json.dumps(ids, separators=(",", ":")).encode("ascii")).hexdigest()


def cuda_device(uuid: str, nvml_index: int) -> str:
    """The torch device (``cuda:N``) of the GPU whose NVML UUID is ``uuid`` (CUDA may number GPUs otherwise)."""
    torch = _torch()
    if not torch.cuda.is_available():
        raise NoGpuError("torch sees no CUDA device: install a CUDA build of torch and check CUDA_VISIBLE_DEVICES")
    count = torch.cuda.device_count()
    uuids = [getattr(torch.cuda.get_device_properties(i), "uuid", None) for i in range(count)]
    index = uuid_index(uuid, uuids)
    if index is not None:
        return f"cuda:{index}"
    # Only a torch that exposes no UUID at all may fall back on numbering; otherwise the model would run on one
    # GPU while NVML measures another.
    if all(found is None for found in uuids) and (count == 1 or nvml_index < count):
        return f"cuda:{0 if count == 1 else nvml_index}"
    raise NoGpuError(
        f"NVML GPU {nvml_index} is not among the CUDA devices torch sees: pass the --device-index of the GPU "
        "that CUDA_VISIBLE_DEVICES leaves visible"
    )


def _check_dtype(model: Any, precision: Precision, dtype: str) -> None:
    """Refuse a model whose weights are not in the dtype its unquantized precision names.

    An old transformers ignores ``dtype=`` and loads fp32, which would be labelled fp16.
    """
    if precision.is_baseline and str(model.dtype) != f"torch.{dtype}":
        raise ModelError(f"{precision.value} model loaded as {model.dtype}: upgrade transformers (>= 4.56)")


def _free_memory() -> None:
    gc.collect()
    torch = _torch()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _json_safe(value: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(json.dumps(value, default=str, allow_nan=False))
    return result


def quantization_config(precision: Precision) -> Any:
    """A ``BitsAndBytesConfig`` for ``precision``, a ``TorchAoConfig`` for FP8, or None for fp16/bf16."""
    spec = SPECS[precision]
    if spec.torchao is not None:
        return torchao_fp8.torchao_config(precision, _transformers())
    if spec.bnb is None:
        return None
    torch, transformers = _torch(), _transformers()
    kwargs = dict(spec.bnb)
    if "bnb_4bit_compute_dtype" in kwargs:
        kwargs["bnb_4bit_compute_dtype"] = getattr(torch, kwargs["bnb_4bit_compute_dtype"])
    return transformers.BitsAndBytesConfig(**kwargs)


def mark_compileable(model: Any) -> bool:
    """Let ``generate`` compile this bitsandbytes model (the ``compiled-all`` stack); False if it has none.

    transformers compiles a model with a static cache only if its quantizer says ``is_compileable``, which its
    bitsandbytes quantizers do not. This swaps the class of this one model's quantizer for a subclass that says
    so; other models, the quantizer classes themselves, and quantizers of other methods (a pretrained model
    quantized otherwise keeps transformers' own answer) are left as they are.
    """
    quantizer = getattr(model, "hf_quantizer", None)
    config = getattr(quantizer, "quantization_config", None)
    if quantizer is None or getattr(config, "quant_method", None) != "bitsandbytes":
        return False
    base = type(quantizer)
    quantizer.__class__ = type(f"Compileable{base.__name__}", (base,), {"is_compileable": property(lambda _: True)})
    return True


# --- runners ------------------------------------------------------------------------------------


class HfRunner:
    """One loaded model at one precision: generates the fixed prompt, exactly ``new_tokens`` per sequence."""

    def __init__(self, model: Any, precision: Precision, device: str, prompt: list[list[int]], new_tokens: int,
                 stack: Stack, loaded: dict[str, Any] | None = None) -> None:  # fmt: skip
        torch, transformers = _torch(), _transformers()
        self.model = model
        self.loaded = loaded or {}
        self.precision = precision
        self.device = device
        self.new_tokens = new_tokens
        self.input_ids = torch.tensor(prompt, dtype=torch.long, device=device)
        self.attention_mask = torch.ones_like(self.input_ids)
        defaults = model.generation_config
        eos = defaults.eos_token_id
        pad = defaults.pad_token_id if defaults.pad_token_id is not None else (eos[0] if isinstance(eos, list) else eos)
        self.generation_config = transformers.GenerationConfig(
            do_sample=False, num_beams=1, max_new_tokens=new_tokens, min_new_tokens=new_tokens,
            eos_token_id=eos, bos_token_id=defaults.bos_token_id, pad_token_id=0 if pad is None else pad,
            cache_implementation="static" if stack.static_cache else None,
        )  # fmt: skip
        model.generation_config = self.generation_config

    @property
    def quantization(self) -> dict[str, Any] | None:
        """The full quantization config the model was loaded with (JSON-safe), or None.

        bitsandbytes' config, or transformers' ``TorchAoConfig`` with the torchao config it holds, plus what the
        load found (FP8: torchao's version and how many linears it made FP8).
        """
        config = getattr(self.model.config, "quantization_config", None)
        if config is None:
            return None
        return _json_safe({**(config if isinstance(config, dict) else config.to_dict()), **self.loaded})

    @property
    def memory_mib(self) -> float:
        """The model's memory footprint in MiB (an FP8 weight counted at its FP8 size, with its scales)."""
        if SPECS[self.precision].torchao is not None:
            return torchao_fp8.footprint_bytes(self.model) / (1024 * 1024)
        return float(self.model.get_memory_footprint()) / (1024 * 1024)

    @property
    def attn_implementation(self) -> str | None:
        """The attention implementation transformers chose (``sdpa``, ``eager``, ...)."""
        return getattr(self.model.config, "_attn_implementation", None)

    @property
    def compiled(self) -> bool:
        """Whether ``generate`` has compiled the forward (transformers does so with a static cache on CUDA)."""
        return self.model is not None and getattr(self.model, "_compiled_call", None) is not None

    def generate_once(self) -> int:
        """One greedy ``generate`` call; returns the tokens generated (batch x new_tokens), checked."""
        return int(self.new_token_ids().numel())

    def new_token_ids(self) -> Any:
        """The new tokens of one greedy ``generate`` call (a batch x new_tokens tensor), their number checked."""
        out = self.model.generate(
            input_ids=self.input_ids, attention_mask=self.attention_mask, generation_config=self.generation_config
        )
        new = int(out.shape[1]) - int(self.input_ids.shape[1])
        if new != self.new_tokens:
            raise RuntimeError(f"generate produced {new} new tokens per sequence instead of {self.new_tokens}")
        return out[:, self.input_ids.shape[1] :]

    def compile_events(self) -> int | None:
        """The process's torch._dynamo compilations so far (see :func:`dynamo_compiles`)."""
        return dynamo_compiles()

    def synchronize(self) -> None:
        """Wait for the GPU (no-op on CPU)."""
        if self.device.startswith("cuda"):
            _torch().cuda.synchronize(self.device)

    def close(self) -> None:
        """Drop the model and free its GPU memory."""
        self.model = None
        self.input_ids = self.attention_mask = None
        _free_memory()


class HfBackend:
    """Loads a :class:`ModelSource` at each precision on one device and builds its runners."""

    def __init__(self, source: ModelSource, *, device: str, batch_size: int, prompt_tokens: int, new_tokens: int,
                 stack: Stack, seed: int) -> None:  # fmt: skip
        self.source = source
        self.device = device
        self.batch_size = batch_size
        self.new_tokens = new_tokens
        self.stack = stack
        self.prompt = prompt_ids(batch_size, prompt_tokens, source.vocab_size, seed)
        self.prompt_sha256 = prompt_sha256(self.prompt)
        if stack.static_cache:  # one compiled graph per precision's model: room for all of them
            dynamo = _torch()._dynamo.config
            dynamo.cache_size_limit = max(dynamo.cache_size_limit, 64)

    def load(self, precision: Precision) -> HfRunner:
        """Load the model at ``precision``; any failure (OOM, no bitsandbytes kernel) raises."""
        check_engine([precision], "transformers")  # a GGUF type would load as fp16 under its name
        torchao_fp8.check_device(precision, self.device)  # before any weight moves
        torch, transformers = _torch(), _transformers()
        spec = SPECS[precision]
        model = transformers.AutoModelForCausalLM.from_pretrained(
            self.source.path,
            revision=self.source.revision if self.source.weights == "pretrained" else None,
            dtype=getattr(torch, spec.dtype),
            quantization_config=quantization_config(precision),
            device_map={"": self.device},
            local_files_only=self.source.local_files_only,
        )
        model.eval()
        _check_dtype(model, precision, spec.dtype)
        loaded = torchao_fp8.loaded_record(model) if spec.torchao is not None else None
        if self.stack is Stack.COMPILED_ALL:
            mark_compileable(model)  # bitsandbytes only: transformers compiles torchao models on its own
        return HfRunner(model, precision, self.device, self.prompt, self.new_tokens, self.stack, loaded)

    def fits_together(self, precisions: list[Precision]) -> bool:
        """Whether all ``precisions`` fit in free GPU memory at once (estimated; always True on CPU)."""
        if not self.device.startswith("cuda"):
            return True
        free_bytes, _total = _torch().cuda.mem_get_info(self.device)
        tokens = self.batch_size * (len(self.prompt[0]) + self.new_tokens)
        need = sum(
            estimate_model_bytes(self.source.params_total, self.source.unquantized_params, SPECS[p])
            + tokens * self.source.kv_bytes_per_token
            + MODEL_MARGIN_BYTES
            for p in precisions
        )
        return bool(need <= FIT_FRACTION * free_bytes)

    def perplexity(self, runner: HfRunner, text: str) -> tuple[float, int]:
        """Teacher-forced perplexity of ``text`` in chunks of up to 1024 tokens: (perplexity, tokens predicted)."""
        torch, transformers = _torch(), _transformers()
        tokenizer = transformers.AutoTokenizer.from_pretrained(
            self.source.path, revision=self.source.revision, local_files_only=self.source.local_files_only
        )
        ids = tokenizer(text, return_tensors="pt").input_ids.to(runner.device)
        context = min(PERPLEXITY_CONTEXT_TOKENS, self.source.max_positions)
        nll, count = 0.0, 0
        with torch.inference_mode():
            for start in range(0, int(ids.shape[1]), context):
                chunk = ids[:, start : start + context]
                if chunk.shape[1] < 2:
                    continue
                loss = runner.model(input_ids=chunk, labels=chunk, use_cache=False).loss
                nll += float(loss.float().item()) * (int(chunk.shape[1]) - 1)
                count += int(chunk.shape[1]) - 1
        if count == 0:
            raise ModelError("the perplexity text has fewer than two tokens")
        return math.exp(nll / count), count


# --- a plain load for recording traces ----------------------------------------------------------


def matmul_load(device: str, duration_s: float, size: int = 8192) -> int:
    """fp16 matrix products back to back on ``device`` for ``duration_s``; returns how many ran."""
    import time

    torch = _torch()
    generator = torch.Generator(device=device).manual_seed(0)
    a = torch.randn(size, size, device=device, dtype=torch.float16, generator=generator)
    b = torch.randn(size, size, device=device, dtype=torch.float16, generator=generator)
    c = torch.empty_like(a)
    count = 0
    end_s = time.monotonic() + duration_s
    while time.monotonic() < end_s:
        for _ in range(8):
            torch.matmul(a, b, out=c)
        if device.startswith("cuda"):
            torch.cuda.synchronize(device)
        count += 8
    del a, b, c
    _free_memory()
    return count
