"""Random-init weights as GGUF files for llama.cpp: the project's architectures, converted and quantized.

The weights are the transformers backend's own: :func:`ecocompute.collector.model.weights.random_init_source`
builds an architecture with seeded random weights in fp16 and saves it; :func:`write_gguf` streams that
checkpoint's safetensors, tensor by tensor, into an F16 GGUF with the ``gguf`` package (the writer llama.cpp's
own ``convert_hf_to_gguf.py`` uses, with the same tensor names, the same Q/K row permutation for Llama and the
same llama3 ``rope_freqs``), and :func:`quantize` turns it into Q8_0 or Q4_K_M with llama.cpp's quantizer
(``llama_model_quantize``). Everything is deterministic: same architecture and seed, same bytes.

The GGUF carries no tokenizer (``tokenizer.ggml.model = "none"``, llama.cpp's vocabulary of dummy tokens):
the collector feeds token ids, never text. ``gguf`` and numpy are imported inside the functions, llama.cpp
through :mod:`ecocompute.collector.model.llamacpp`.

Run it by hand (the H200 kit does): ``python -m ecocompute.collector.model.gguf_weights --arch Qwen2.5-0.5B
--types F16,Q8_0,Q4_K_M --out DIR``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shutil
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ecocompute.collector.errors import ModelError
from ecocompute.collector.model.archs import Arch, load_arch
from ecocompute.schema.errors import EcocomputeError
from ecocompute.schema.io import write_text_atomic

COMPLETE_SUFFIX = ".complete"
BASELINE = "F16"
FILE_TYPES: dict[str, int] = {"F16": 1, "Q8_0": 7, "Q4_K_M": 15}
"""GGUF file types the collector measures, by llama.cpp's name, with their ``llama_ftype`` number."""
ARCHES = {"llama": "llama", "mistral": "llama", "qwen2": "qwen2"}
"""transformers model type -> llama.cpp architecture (Mistral runs as llama, as llama.cpp converts it)."""
PERMUTED = {"llama"}
"""llama.cpp architectures whose Q and K rows are permuted from transformers' rotate-half order."""


@dataclass(frozen=True)
class GgufSet:
    """The GGUF files of one architecture and seed, by file type."""

    arch: str
    seed: int
    folder: Path
    shape_sha: str

    def path(self, file_type: str) -> Path:
        """Where the file of ``file_type`` (F16, Q8_0, Q4_K_M) lives."""
        return self.folder / f"{self.arch}-seed{self.seed}-{file_type}.gguf"

    def complete(self, file_type: str) -> bool:
        """Whether that file was written to the end."""
        return self.path(file_type).with_suffix(COMPLETE_SUFFIX).exists()

    @property
    def sizes_path(self) -> Path:
        """The JSON file of the model's sizes as transformers counts them (:func:`write_sizes`)."""
        return self.folder / f"{self.arch}-seed{self.seed}-sizes.json"


def shape_sha(arch: Arch) -> str:
    """Eight hex digits of the architecture's config (as the HF cache names it)."""
    return hashlib.sha256(json.dumps(arch.config, sort_keys=True).encode("utf-8")).hexdigest()[:8]


def gguf_set(arch: Arch, seed: int, root: Path) -> GgufSet:
    """The GGUF files of ``arch`` at ``seed`` under ``root`` (written or not)."""
    sha = shape_sha(arch)
    return GgufSet(arch.name, seed, root / f"{arch.name}-seed{seed}-{sha}-gguf", sha)


def _gguf() -> Any:
    try:
        import gguf
    except ImportError:
        raise ModelError("the gguf package is not installed: pip install 'ecocompute[llamacpp]'") from None
    return gguf


def check_file_type(name: str) -> str:
    """``name`` as a known GGUF file type (case-insensitive); ModelError lists the known ones."""
    upper = name.strip().upper()
    if upper not in FILE_TYPES:
        raise ModelError(f"unknown GGUF file type {name!r}: choose one of {', '.join(FILE_TYPES)}")
    return upper


# --- F16 from a saved checkpoint ------------------------------------------------------------------


def _permute(weights: Any, n_head: int) -> Any:
    """llama.cpp's row order for Q/K of a rotate-half (transformers) Llama: ``convert_hf_to_gguf``'s permute."""
    rows = weights.shape[0]
    return weights.reshape(n_head, 2, rows // n_head // 2, *weights.shape[1:]).swapaxes(1, 2).reshape(weights.shape)


def llama3_rope_factors(config: dict[str, Any]) -> list[float] | None:
    """The per-frequency factors of llama3 rope scaling (``rope_freqs.weight``), or None without it."""
    scaling = config.get("rope_scaling") or {}
    if str(scaling.get("rope_type", scaling.get("type", ""))).lower() != "llama3":
        return None
    head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    base = float(config.get("rope_theta", 10000.0))
    factor = float(scaling.get("factor", 8.0))
    low, high = float(scaling.get("low_freq_factor", 1.0)), float(scaling.get("high_freq_factor", 4.0))
    old_context = float(scaling.get("original_max_position_embeddings", 8192))
    low_wavelen, high_wavelen = old_context / low, old_context / high
    factors = []
    for i in range(0, head_dim, 2):
        wavelen = 2 * math.pi * base ** (i / head_dim)
        if wavelen < high_wavelen:
            factors.append(1.0)
        elif wavelen > low_wavelen:
            factors.append(factor)
        else:
            smooth = (old_context / wavelen - low) / (high - low)
            factors.append(1 / ((1 - smooth) / factor + smooth))
    return factors


def _safetensors(checkpoint: Path) -> list[Path]:
    files = sorted(checkpoint.glob("*.safetensors"))
    if not files:
        raise ModelError(f"no *.safetensors in {checkpoint}: build the random-init checkpoint first")
    return files


def _hf_tensors(checkpoint: Path) -> Iterator[tuple[str, Any]]:
    """(name, numpy array) of every tensor of the checkpoint, one at a time, in a fixed order."""
    from safetensors import safe_open

    for file in _safetensors(checkpoint):
        with safe_open(str(file), framework="np") as handle:
            for name in sorted(handle.keys()):
                yield name, handle.get_tensor(name)


def _tensor_plan(checkpoint: Path, arch: str, config: dict[str, Any]) -> list[tuple[str, str, tuple[int, ...], str]]:
    """(hf name, gguf name, shape, dtype) of every tensor, without reading the data."""
    from safetensors import safe_open

    gguf = _gguf()
    names = gguf.get_tensor_name_map(getattr(gguf.MODEL_ARCH, arch.upper()), int(config["num_hidden_layers"]))
    plan = []
    for file in _safetensors(checkpoint):
        with safe_open(str(file), framework="np") as handle:
            for name in sorted(handle.keys()):
                if name.endswith("rotary_emb.inv_freq"):
                    continue
                target = names.get_name(name, try_suffixes=(".weight", ".bias"))
                if target is None:
                    raise ModelError(f"{arch}: no GGUF name for tensor {name!r} of {checkpoint}")
                shape = tuple(int(n) for n in handle.get_slice(name).get_shape())
                plan.append((name, target, shape, "float16" if len(shape) > 1 else "float32"))
    return plan


def write_gguf(checkpoint: Path, arch: Arch, out: Path) -> None:
    """Write the F16 GGUF of the saved transformers ``checkpoint`` of ``arch`` to ``out`` (streamed, atomic)."""
    import numpy as np

    gguf = _gguf()
    config = dict(arch.config)
    model_type = str(config["model_type"])
    if model_type not in ARCHES:
        raise ModelError(f"llama.cpp conversion knows {', '.join(sorted(ARCHES))}, not {model_type} ({arch.name})")
    arch_name = ARCHES[model_type]
    n_head = int(config["num_attention_heads"])
    n_head_kv = int(config.get("num_key_value_heads") or n_head)
    head_dim = int(config.get("head_dim") or config["hidden_size"] // n_head)
    plan = _tensor_plan(checkpoint, arch_name, config)
    rope_factors = llama3_rope_factors(config)
    partial = out.with_name(f"{out.name}.partial-{os.getpid()}")
    writer = gguf.GGUFWriter(str(partial), arch_name)
    writer.add_name(f"random-init/{arch.name}")
    writer.add_file_type(FILE_TYPES[BASELINE])
    writer.add_context_length(int(config.get("max_position_embeddings") or 2048))
    writer.add_embedding_length(int(config["hidden_size"]))
    writer.add_block_count(int(config["num_hidden_layers"]))
    writer.add_feed_forward_length(int(config["intermediate_size"]))
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head_kv)
    writer.add_key_length(head_dim)
    writer.add_value_length(head_dim)
    writer.add_rope_dimension_count(head_dim)
    writer.add_rope_freq_base(float(config.get("rope_theta", 10000.0)))
    writer.add_layer_norm_rms_eps(float(config.get("rms_norm_eps", 1e-6)))
    writer.add_vocab_size(int(config["vocab_size"]))
    writer.add_tokenizer_model("none")  # token ids in, token ids out: llama.cpp adds vocab_size dummy tokens
    for _name, target, shape, dtype in plan:
        writer.add_tensor_info(target, shape, np.dtype(dtype), math.prod(shape) * np.dtype(dtype).itemsize)
    if rope_factors is not None:
        writer.add_tensor_info("rope_freqs.weight", (len(rope_factors),), np.dtype("float32"), 4 * len(rope_factors))
    try:
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_ti_data_to_file()
        order = {name: (target, dtype) for name, target, _shape, dtype in plan}
        for name, data in _hf_tensors(checkpoint):
            if name not in order:
                continue
            target, dtype = order[name]
            array = np.ascontiguousarray(data, dtype=dtype)
            if arch_name in PERMUTED and target.endswith("attn_q.weight"):
                array = np.ascontiguousarray(_permute(array, n_head))
            elif arch_name in PERMUTED and target.endswith("attn_k.weight"):
                array = np.ascontiguousarray(_permute(array, n_head_kv))
            writer.write_tensor_data(array)
        if rope_factors is not None:
            writer.write_tensor_data(np.asarray(rope_factors, dtype=np.float32))
        writer.close()
        partial.rename(out)
    except OSError as exc:
        raise ModelError(f"cannot write {out}: {exc.strerror or exc}: pass --weights-cache DIR with room") from None
    finally:
        partial.unlink(missing_ok=True)


# --- quantized, by llama.cpp ------------------------------------------------------------------------


def quantize(source: Path, out: Path, file_type: str, threads: int = 0) -> None:
    """Quantize the F16 GGUF ``source`` to ``file_type`` (Q8_0, Q4_K_M) with llama.cpp; atomic."""
    from ecocompute.collector.model.llamacpp import llama_cpp

    lib = llama_cpp()
    params = lib.llama_model_quantize_default_params()
    params.ftype = FILE_TYPES[check_file_type(file_type)]
    params.nthread = threads
    partial = out.with_name(f"{out.name}.partial-{os.getpid()}")
    try:
        code = lib.llama_model_quantize(str(source).encode(), str(partial).encode(), params)
        if code != 0:
            raise ModelError(f"llama.cpp could not quantize {source.name} to {file_type} (code {code})")
        partial.rename(out)
    finally:
        partial.unlink(missing_ok=True)


def _mark(files: GgufSet, file_type: str) -> None:
    files.path(file_type).with_suffix(COMPLETE_SUFFIX).write_text("ok\n", encoding="utf-8")


def build_gguf_set(arch: Arch, seed: int, root: Path, file_types: Sequence[str], *, checkpoint: Path | None = None,
                   device: str = "cpu") -> GgufSet:  # fmt: skip
    """The GGUF files of ``arch`` at ``seed`` for ``file_types``, each written once (F16 first) under ``root``.

    The F16 file comes from ``checkpoint`` (a saved random-init model); without it the project's random-init
    source builds one under ``root`` (seeded, on ``device``).
    """
    files = gguf_set(arch, seed, root)
    wanted = [check_file_type(t) for t in file_types]
    if all(files.complete(t) for t in wanted):
        return files
    try:
        files.folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelError(f"cannot create {files.folder}: {exc.strerror or exc}") from None
    if not files.complete(BASELINE):
        if checkpoint is None:
            from ecocompute.collector.model.weights import random_init_source

            checkpoint = Path(random_init_source(arch, seed, root, device).path)
        write_gguf(checkpoint, arch, files.path(BASELINE))
        _mark(files, BASELINE)
    for file_type in wanted:
        if not files.complete(file_type):
            quantize(files.path(BASELINE), files.path(file_type), file_type)
            _mark(files, file_type)
    return files


def write_sizes(arch: Arch, files: GgufSet) -> dict[str, Any]:
    """Write the model's identity and sizes as transformers counts them (imports torch: a meta-device model).

    The llama.cpp engine reads them back (:func:`read_sizes`) in a process that must not import torch, so that
    its rows carry the same ``params_total`` as the transformers rows of the same shape.
    """
    from ecocompute.collector.model.weights import _config_from_arch, _source

    source = _source(_config_from_arch(arch), model_id=f"random-init/{arch.name}", path="", revision=None,
                     weights="random-init", architecture=arch.name)  # fmt: skip
    sizes = {"model_id": source.model_id, "params_total": source.params_total, "vocab_size": source.vocab_size,
             "kv_bytes_per_token": source.kv_bytes_per_token}  # fmt: skip
    files.folder.mkdir(parents=True, exist_ok=True)
    write_text_atomic(files.sizes_path, json.dumps(sizes, sort_keys=True) + "\n")
    return sizes


def read_sizes(files: GgufSet) -> dict[str, Any] | None:
    """The sizes :func:`write_sizes` wrote, or None when they are missing or unreadable (then write them again)."""
    try:
        sizes = json.loads(files.sizes_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    keys = ("model_id", "params_total", "vocab_size", "kv_bytes_per_token")
    return sizes if isinstance(sizes, dict) and all(k in sizes for k in keys) else None


def remove_checkpoint(arch: Arch, seed: int, root: Path) -> None:
    """Delete the random-init transformers checkpoint under ``root`` (the GGUF files stay)."""
    shutil.rmtree(root / f"{arch.name}-seed{seed}-{shape_sha(arch)}", ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m ecocompute.collector.model.gguf_weights``: write the GGUF files of one architecture."""
    parser = argparse.ArgumentParser(
        description="Write seeded random-init GGUF files (F16, then llama.cpp-quantized) of a shipped architecture.",
        epilog="Example: python -m ecocompute.collector.model.gguf_weights --arch Qwen2.5-0.5B --out /dev/shm/gguf",
    )
    parser.add_argument("--arch", required=True, help="a shipped architecture, e.g. Qwen2.5-0.5B")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random weights (default 0)")
    parser.add_argument("--types", default=",".join(FILE_TYPES), help="GGUF file types (default F16,Q8_0,Q4_K_M)")
    parser.add_argument("--out", type=Path, required=True, help="folder for the checkpoint and the GGUF files")
    parser.add_argument("--device", default="cpu", help="torch device that builds the random weights (default cpu)")
    parser.add_argument("--drop-checkpoint", action="store_true", help="delete the transformers checkpoint after")
    args = parser.parse_args(argv)
    try:
        arch = load_arch(args.arch)
        files = build_gguf_set(arch, args.seed, args.out, args.types.split(","), device=args.device)
        write_sizes(arch, files)
    except EcocomputeError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return exc.exit_code
    if args.drop_checkpoint:
        remove_checkpoint(arch, args.seed, args.out)
    for file_type in args.types.split(","):
        path = files.path(check_file_type(file_type))
        sys.stdout.write(f"{path}\t{path.stat().st_size}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
