"""Running GGUF models through llama.cpp (the ``llama-cpp-python`` bindings): the second engine.

The backend meets the same contract as the transformers one (docs/engines.md): the collector's
:class:`~ecocompute.collector.run.engine.Engine` drives it, so windows, warm-ups, ABBA interleaving and idle
readings are the collector's, never the engine's. Precisions are llama.cpp's own GGUF file types
(:data:`PRECISION_FILE_TYPES`): F16 is the baseline, Q8_0 and Q4_K_M are made from it by llama.cpp's quantizer
(:mod:`ecocompute.collector.model.gguf_weights`). Weights are the project's random-init architectures
(``--arch``), converted once, or an F16 ``.gguf`` file (``--model path/to/model-F16.gguf``).

:meth:`LlamaCppBackend.load` does all the loading (file read, offload of every layer to the GPU, context and
KV cache allocated, batch buffer made). A generate call is the low-level loop: the fixed prompt of every
sequence prefilled in one ``llama_decode`` (each sequence its own ``seq_id``), then ``new_tokens - 1`` decode
steps of one token per sequence; the next token is the argmax of the logits (greedy), with no stop at an
end-of-sequence token, so every call yields exactly ``batch_size x new_tokens`` tokens. ``llama_cpp`` (and
numpy) are imported inside the functions that need them.
"""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ecocompute.collector.device.cuda import loaded_runtime_version
from ecocompute.collector.errors import ModelError
from ecocompute.collector.model.archs import load_arch
from ecocompute.collector.model.gguf_weights import BASELINE, check_file_type, gguf_set, quantize, read_sizes
from ecocompute.collector.model.hf import FIT_FRACTION, MODEL_MARGIN_BYTES, prompt_ids, prompt_sha256
from ecocompute.schema.errors import UsageError
from ecocompute.schema.models import Precision, Stack

if TYPE_CHECKING:
    from ecocompute.collector.model.engines import EngineInfo
    from ecocompute.collector.run.config import Destination, RunConfig

ENGINE_NAME = "llama.cpp"
DISTRIBUTION = "llama-cpp-python"
PRECISION_FILE_TYPES: dict[str, str] = {"fp16": "F16", "q8_0": "Q8_0", "q4_k_m": "Q4_K_M"}
"""llama.cpp's precisions (by the precision's value) and the GGUF file type each one loads."""
ALL_LAYERS = 999  # n_gpu_layers: every layer on the GPU
SPLIT_MODE_NONE = 0  # one GPU
FLASH_ATTN_AUTO = -1
LOAD_MODE_NONE = 0  # read the whole file in load(): no mmap, whose pages would be read inside the first window
LAZY_MODE_OFF = 0  # every tensor read up front
CPU_THREADS = 1  # a CPU run is a test run: one thread keeps it off the other processes' cores


def llama_cpp() -> Any:
    """The ``llama_cpp`` module; ModelError when llama-cpp-python is not installed."""
    try:
        import llama_cpp
        from llama_cpp import _logger
    except ImportError:
        raise ModelError(
            "llama-cpp-python is not installed: pip install 'ecocompute[llamacpp]' (for CUDA, build it with "
            "CMAKE_ARGS='-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=90'; see docs/llamacpp.md)"
        ) from None
    _logger.set_verbose(False)  # llama.cpp's errors only: its load log would run through the progress display
    return llama_cpp


def system_info() -> str:
    """``llama_print_system_info()``: the backends built in and the CPU features they use."""
    return bytes(llama_cpp().llama_print_system_info()).decode("utf-8", "replace").strip()


def build_flags(info: str) -> dict[str, str]:
    """The build as string pairs from :func:`system_info` (``CUDA : ARCHS = 900 | ...`` -> ``CUDA.ARCHS: 900``)."""
    flags: dict[str, str] = {}
    section = ""
    for part in info.split("|"):
        if ":" in part:  # "CPU : SSE3 = 1" opens a section with its first pair
            head, _, part = part.partition(":")
            section = head.strip()
        key, _, value = (x.strip() for x in part.partition("="))
        if key and value:
            flags[f"{section}.{key}" if section else key] = value
    return flags


def llamacpp_info() -> EngineInfo:
    """llama.cpp's version (the bindings' and the vendored library's build number) and its build flags."""
    from ecocompute.collector.model.engines import EngineInfo

    lib = llama_cpp()
    build = build_flags(system_info())
    build["llama_cpp_python"] = str(getattr(lib, "__version__", "unknown"))
    build["gpu_offload"] = "yes" if lib.llama_supports_gpu_offload() else "no"
    if (runtime := loaded_runtime_version()) is not None:
        build["cuda_runtime"] = runtime  # the libcudart llama.cpp's CUDA backend loaded
    version = importlib.metadata.version(DISTRIBUTION)
    return EngineInfo(ENGINE_NAME, version, build)


def file_type_of(precision: Precision) -> str:
    """The GGUF file type of ``precision``; UsageError for a precision llama.cpp does not have."""
    try:
        return PRECISION_FILE_TYPES[precision.value]
    except KeyError:
        raise UsageError(
            f"precision {precision.value} is not a llama.cpp precision: choose from {', '.join(PRECISION_FILE_TYPES)}"
        ) from None


# --- the model ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GgufSource:
    """A model as GGUF files: identity and size (the ``ModelInfo`` of the contract), and its files by type."""

    model_id: str
    revision: str | None
    weights: Literal["pretrained", "random-init"]
    architecture: str
    params_total: int
    vocab_size: int
    kv_bytes_per_token: int
    files: dict[str, Path]


def _kv_bytes(config: dict[str, Any]) -> int:
    heads = int(config["num_attention_heads"])
    head_dim = int(config.get("head_dim") or int(config["hidden_size"]) // heads)
    kv_heads = int(config.get("num_key_value_heads") or heads)
    return 2 * int(config["num_hidden_layers"]) * kv_heads * head_dim * 2


def random_init_gguf(arch_name: str, seed: int, root: Path, file_types: list[str], device: str) -> GgufSource:
    """The project's random-init ``arch_name`` as GGUF files of ``file_types`` under ``root`` (built once).

    The files and the model's sizes are made by a child process (:func:`make_in_child`): the random weights need
    torch, and llama.cpp crashes in a process that has imported torch (docs/llamacpp.md).
    """
    arch = load_arch(arch_name)
    files = gguf_set(arch, seed, root)
    sizes = read_sizes(files)
    if sizes is None or not all(files.complete(t) for t in file_types):
        make_in_child(arch_name, seed, root, file_types, device)
        sizes = read_sizes(files)
        if sizes is None:
            raise ModelError(f"making the GGUF files of {arch_name} wrote no sizes file ({files.sizes_path})")
    return GgufSource(
        model_id=str(sizes["model_id"]), revision=None, weights="random-init", architecture=arch.name,
        params_total=int(sizes["params_total"]), vocab_size=int(sizes["vocab_size"]),
        kv_bytes_per_token=int(sizes["kv_bytes_per_token"]), files={t: files.path(t) for t in file_types},
    )  # fmt: skip


def make_in_child(arch_name: str, seed: int, root: Path, file_types: list[str], device: str) -> None:
    """Run ``python -m ecocompute.collector.model.gguf_weights`` for these files; ModelError with its last line."""
    command = [sys.executable, "-m", "ecocompute.collector.model.gguf_weights", "--arch", arch_name,
               "--seed", str(seed), "--types", ",".join(file_types), "--out", str(root),
               "--device", device if device.startswith("cuda") else "cpu"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)  # noqa: S603 - our own module
    if done.returncode != 0:
        lines = [line for line in (done.stderr or "").splitlines() if line.strip()]
        last = lines[-1].removeprefix("error: ") if lines else f"exit code {done.returncode}"
        raise ModelError(f"making the GGUF files of {arch_name} failed: {last}")


def gguf_file_source(path: Path, root: Path, file_types: list[str]) -> GgufSource:
    """A pretrained F16 ``.gguf`` file, and its quantized files under ``root`` (made once by llama.cpp)."""
    if not path.is_file():
        raise ModelError(f"cannot load {path.name!r}: no such GGUF file ({path}); pass an F16 .gguf file")
    import gguf

    reader = gguf.GGUFReader(str(path))
    fields = {name: field.contents() for name, field in reader.fields.items() if not name.startswith("tokenizer.")}
    arch = str(fields.get("general.architecture", "unknown"))
    params = sum(int(t.n_elements) for t in reader.tensors)
    config = {
        "num_attention_heads": fields[f"{arch}.attention.head_count"],
        "num_key_value_heads": fields.get(f"{arch}.attention.head_count_kv"),
        "head_dim": fields.get(f"{arch}.attention.key_length"),
        "hidden_size": fields[f"{arch}.embedding_length"],
        "num_hidden_layers": fields[f"{arch}.block_count"],
    }
    vocab = fields.get(f"{arch}.vocab_size") or next(
        int(t.shape[1]) for t in reader.tensors if t.name == "token_embd.weight"
    )
    files = {BASELINE: path}
    folder = root / f"{path.stem}-gguf"
    for file_type in file_types:
        if file_type != BASELINE:
            files[file_type] = folder / f"{path.stem}-{file_type}.gguf"
            if not files[file_type].exists():
                folder.mkdir(parents=True, exist_ok=True)
                quantize(path, files[file_type], file_type)
    name = str(fields.get("general.name") or path.stem)
    return GgufSource(
        model_id=path.name, revision=None, weights="pretrained", architecture=name, params_total=params,
        vocab_size=int(vocab), kv_bytes_per_token=_kv_bytes(config), files=files,
    )  # fmt: skip


def tensor_types(path: Path) -> dict[str, int]:
    """How many tensors of the GGUF file have each ggml type (``{"q4_K": 96, "q6_K": 17, "f32": 49}``)."""
    import gguf

    counts: dict[str, int] = {}
    for tensor in gguf.GGUFReader(str(path)).tensors:
        name = tensor.tensor_type.name
        key = re.sub(r"^([A-Z]+\d*)_([A-Z])$", lambda m: f"{m.group(1).lower()}_{m.group(2)}", name)
        key = key if key != name else name.lower()
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


# --- runners -------------------------------------------------------------------------------------


class LlamaCppRunner:
    """One GGUF model loaded by llama.cpp at one precision: greedy, exactly ``new_tokens`` per sequence."""

    def __init__(self, path: Path, precision: Precision, file_type: str, device: str, prompt: list[list[int]],
                 new_tokens: int, quantization: dict[str, Any] | None) -> None:  # fmt: skip
        import numpy as np

        self._np = np
        self._lib = lib = llama_cpp()
        self.precision = precision
        self.file_type = file_type
        self.device = device
        self.prompt = prompt
        self.new_tokens = new_tokens
        self._quantization = quantization
        lib.llama_backend_init()
        model_params = lib.llama_model_default_params()
        model_params.load_mode, model_params.lazy_mode = LOAD_MODE_NONE, LAZY_MODE_OFF
        if device.startswith("cuda"):
            model_params.n_gpu_layers = ALL_LAYERS
            model_params.split_mode = SPLIT_MODE_NONE
            model_params.main_gpu = int(device.partition(":")[2] or 0)
        else:
            model_params.n_gpu_layers = 0
        self._model = lib.llama_model_load_from_file(str(path).encode(), model_params)
        if not self._model:
            raise ModelError(f"llama.cpp could not load {path.name}")
        self._ctx: Any = None
        self._batch: Any = None
        try:
            self._open_context()
        except BaseException:
            self.close()
            raise

    def _open_context(self) -> None:
        lib = self._lib
        batch, prompt_len = len(self.prompt), len(self.prompt[0])
        self.n_vocab = int(lib.llama_vocab_n_tokens(lib.llama_model_get_vocab(self._model)))
        params = lib.llama_context_default_params()
        params.n_ctx = batch * (prompt_len + self.new_tokens)
        params.n_batch = batch * prompt_len  # the whole prefill in one llama_decode
        params.n_seq_max = batch
        params.flash_attn_type = FLASH_ATTN_AUTO
        params.kv_unified = False  # the sequences share no prefix
        params.no_perf = True
        if not self.device.startswith("cuda"):
            params.n_threads = params.n_threads_batch = CPU_THREADS
        self.context_params = {"n_ctx": int(params.n_ctx), "n_batch": int(params.n_batch),
                               "n_ubatch": int(params.n_ubatch), "n_seq_max": batch, "flash_attn": "auto",
                               "kv_unified": False}  # fmt: skip
        self._ctx = lib.llama_init_from_model(self._model, params)
        if not self._ctx:
            raise ModelError(f"llama.cpp could not make a context of {params.n_ctx} tokens (out of memory?)")
        self._batch = lib.llama_batch_init(batch * prompt_len, 0, 1)

    @property
    def quantization(self) -> dict[str, Any] | None:
        """The GGUF file type and its tensors' ggml types (None for the F16 baseline)."""
        return self._quantization

    @property
    def memory_mib(self) -> float:
        """The model's weights in MiB (``llama_model_size``)."""
        return float(self._lib.llama_model_size(self._model)) / (1024 * 1024) if self._model else 0.0

    @property
    def attn_implementation(self) -> str | None:
        """llama.cpp's attention: flash attention when the backend supports it (``auto``)."""
        return "llama.cpp flash_attn=auto"

    @property
    def compiled(self) -> bool:
        """No torch.compile here (llama.cpp's CUDA graphs are its own, always on)."""
        return False

    def _decode(self, n_tokens: int) -> Any:
        self._batch.n_tokens = n_tokens
        code = self._lib.llama_decode(self._ctx, self._batch)
        if code != 0:
            raise RuntimeError(f"llama_decode returned {code} (1: no KV slot, <0: error)")
        rows = len(self.prompt)
        logits = self._np.ctypeslib.as_array(self._lib.llama_get_logits(self._ctx), shape=(rows, self.n_vocab))
        return logits.argmax(axis=1)

    def new_token_ids(self) -> list[list[int]]:
        """The new tokens of one greedy generation of every sequence (batch x new_tokens)."""
        if self._ctx is None:
            raise RuntimeError("the llama.cpp runner is closed")
        lib, batch = self._lib, self._batch
        lib.llama_memory_clear(lib.llama_get_memory(self._ctx), True)
        prompt_len = len(self.prompt[0])
        i = 0
        for seq, row in enumerate(self.prompt):
            for pos, token in enumerate(row):
                batch.token[i], batch.pos[i], batch.n_seq_id[i] = token, pos, 1
                batch.seq_id[i][0] = seq
                batch.logits[i] = pos == prompt_len - 1
                i += 1
        tokens = self._decode(i)
        out = [[int(t)] for t in tokens]
        for step in range(1, self.new_tokens):
            for seq, token in enumerate(tokens):
                batch.token[seq], batch.pos[seq], batch.n_seq_id[seq] = int(token), prompt_len + step - 1, 1
                batch.seq_id[seq][0] = seq
                batch.logits[seq] = True
            tokens = self._decode(len(self.prompt))
            for seq, token in enumerate(tokens):
                out[seq].append(int(token))
        if any(len(row) != self.new_tokens for row in out):
            raise RuntimeError(f"generation produced other than {self.new_tokens} new tokens per sequence")
        return out

    def generate_once(self) -> int:
        """One greedy generation of the fixed prompt; returns the tokens generated (batch x new_tokens)."""
        return sum(len(row) for row in self.new_token_ids())

    def synchronize(self) -> None:
        """Wait until llama.cpp's queued work on the device is done (``llama_synchronize``)."""
        if self._ctx is not None:
            self._lib.llama_synchronize(self._ctx)

    def compile_events(self) -> int | None:
        """llama.cpp cannot say: None (the warm-up still makes its three calls)."""
        return None

    def close(self) -> None:
        """Free the batch, the context and the model."""
        lib = self._lib
        if self._batch is not None:
            lib.llama_batch_free(self._batch)
        if self._ctx is not None:
            lib.llama_free(self._ctx)
        if self._model:
            lib.llama_model_free(self._model)
        self._batch = self._ctx = self._model = None


class LlamaCppBackend:
    """Loads a :class:`GgufSource` at each of llama.cpp's precisions on one device."""

    def __init__(self, source: GgufSource, *, device: str, batch_size: int, prompt_tokens: int, new_tokens: int,
                 seed: int) -> None:  # fmt: skip
        self.source = source
        self.device = device
        self.batch_size = batch_size
        self.new_tokens = new_tokens
        self.prompt = prompt_ids(batch_size, prompt_tokens, source.vocab_size, seed)
        self.prompt_sha256 = prompt_sha256(self.prompt)

    def path(self, precision: Precision) -> Path:
        """The GGUF file ``precision`` loads."""
        file_type = file_type_of(precision)
        if file_type not in self.source.files:
            raise ModelError(f"no {file_type} file was made for {self.source.model_id}: list {precision.value} "
                             "in --precisions")  # fmt: skip
        return self.source.files[file_type]

    def load(self, precision: Precision) -> LlamaCppRunner:
        """Load ``precision``'s GGUF file (every layer on the GPU); any failure raises."""
        path = self.path(precision)
        file_type = file_type_of(precision)
        quantization = None
        if file_type != BASELINE:
            quantization = {
                "quant_method": "gguf", "file_type": file_type, "tensor_types": tensor_types(path),
                "file_bytes": path.stat().st_size, "quantizer": "llama.cpp llama_model_quantize",
            }  # fmt: skip
        return LlamaCppRunner(path, precision, file_type, self.device, self.prompt, self.new_tokens, quantization)

    def fits_together(self, precisions: list[Precision]) -> bool:
        """Whether the files and their KV caches fit in free GPU memory at once (always True on CPU)."""
        if not self.device.startswith("cuda"):
            return True
        from ecocompute.collector.device.cuda import free_memory_bytes

        free_bytes = free_memory_bytes(self.device)  # the CUDA driver's answer: no torch in this process
        tokens = self.batch_size * (len(self.prompt[0]) + self.new_tokens)
        need = sum(self.path(p).stat().st_size + tokens * self.source.kv_bytes_per_token + MODEL_MARGIN_BYTES
                   for p in precisions)  # fmt: skip
        return bool(need <= FIT_FRACTION * free_bytes)

    def perplexity(self, runner: LlamaCppRunner, text: str) -> tuple[float, int]:
        """Not yet: the GGUF files carry no tokenizer of the text (the run notes it)."""
        raise ModelError("the llama.cpp backend does not score text yet (random-init GGUF files have no tokenizer)")


def llamacpp_backend(config: RunConfig, dest: Destination, device: str) -> LlamaCppBackend:
    """The llama.cpp backend for ``config``: GGUF files made (once) for every precision, nothing loaded yet."""
    from ecocompute.collector.model.weights import default_weights_cache

    if config.stack is not Stack.EAGER:
        raise UsageError(f"--stack {config.stack.value} is transformers' (torch.compile): llama.cpp runs its own "
                         "kernels, so pass --stack eager with --engine llama.cpp")  # fmt: skip
    file_types = [file_type_of(p) for p in config.precisions]
    if BASELINE not in file_types:
        file_types.insert(0, BASELINE)  # the quantized files are made from it
    lib = llama_cpp()
    if device.startswith("cuda") and not lib.llama_supports_gpu_offload():
        raise ModelError("llama-cpp-python was built without GPU support: rebuild it with "
                         "CMAKE_ARGS='-DGGML_CUDA=on' (docs/llamacpp.md)")  # fmt: skip
    root = dest.weights_cache or default_weights_cache()
    if config.arch is not None:
        source = random_init_gguf(config.arch, config.seed, root, file_types, device)
    else:
        assert config.model is not None  # noqa: S101 - RunConfig.check
        source = gguf_file_source(Path(config.model), root, [check_file_type(t) for t in file_types])
    return LlamaCppBackend(source, device=device, batch_size=config.batch_size, prompt_tokens=config.prompt_tokens,
                           new_tokens=config.new_tokens, seed=config.seed)  # fmt: skip


__all__ = ["ENGINE_NAME", "PRECISION_FILE_TYPES", "GgufSource", "LlamaCppBackend", "LlamaCppRunner",
           "build_flags", "llama_cpp", "llamacpp_backend", "llamacpp_info", "system_info"]  # fmt: skip
