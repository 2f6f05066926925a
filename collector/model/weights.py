"""Where a model's weights come from: a shipped architecture built once with random weights, or a checkpoint.

A random-init model is built once in fp16 (seeded), saved to a cache folder (``/dev/shm/ecocompute`` when it has
room) and loaded back per precision; a pretrained one is read from a local folder or the Hugging Face cache.
Either way the result is a :class:`ModelSource` that :class:`ecocompute.collector.model.hf.HfBackend` loads.
torch and transformers come through :mod:`ecocompute.collector.model.hf`, imported inside the functions that need them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from ecocompute.collector.errors import ModelError
from ecocompute.collector.model.archs import Arch, match_arch
from ecocompute.collector.model.hf import _free_memory, _torch, _transformers

COMPLETE_MARKER = ".ecocompute-complete"


@dataclass(frozen=True)
class ModelSource:
    """A model ready for ``from_pretrained``: its path, identity and size."""

    model_id: str
    path: str
    revision: str | None
    weights: Literal["pretrained", "random-init"]
    architecture: str
    params_total: int
    unquantized_params: int
    kv_bytes_per_token: int
    vocab_size: int
    max_positions: int
    local_files_only: bool = True


def weights_cache_candidates() -> list[Path]:
    """Where random-init weights may go: ``/dev/shm/ecocompute`` (RAM, fast to load), then the temp dir."""
    shm = Path("/dev/shm")  # noqa: S108 - a folder of our own inside it, named by architecture and seed
    candidates = [shm / "ecocompute"] if shm.is_dir() and os.access(shm, os.W_OK) else []
    return [*candidates, Path(tempfile.gettempdir()) / "ecocompute"]


def default_weights_cache(needed_bytes: int = 0, name: str | None = None) -> Path:
    """The first candidate that already holds ``name`` complete, else the first with ``needed_bytes`` free.

    A container's /dev/shm is often 64 MB: it is skipped when the weights would not fit.
    """
    candidates = weights_cache_candidates()
    if name is not None:
        for folder in candidates:
            if (folder / name / COMPLETE_MARKER).exists():
                return folder
    for folder in candidates:
        probe = folder if folder.exists() else folder.parent
        if shutil.disk_usage(probe).free >= needed_bytes:
            return folder
    return candidates[-1]


def _config_from_arch(arch: Arch) -> Any:
    values = dict(arch.config)
    model_type = values.pop("model_type")
    values.pop("architectures", None)
    return _transformers().AutoConfig.for_model(model_type, **values)


def _sizes(config: Any) -> tuple[int, int, int]:
    """(parameters, parameters kept 16-bit by bitsandbytes, KV-cache bytes per token at 16 bit)."""
    torch, transformers = _torch(), _transformers()
    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config)
    total = sum(p.numel() for p in model.parameters())
    unquantized = model.get_input_embeddings().weight.numel()
    output = model.get_output_embeddings()
    if output is not None and output.weight is not model.get_input_embeddings().weight:
        unquantized += output.weight.numel()
    heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    kv_bytes = 2 * config.num_hidden_layers * kv_heads * head_dim * 2
    return int(total), int(unquantized), int(kv_bytes)


def _source(config: Any, **identity: Any) -> ModelSource:
    total, unquantized, kv_bytes = _sizes(config)
    return ModelSource(
        **identity,
        params_total=total,
        unquantized_params=unquantized,
        kv_bytes_per_token=kv_bytes,
        vocab_size=int(config.vocab_size),
        max_positions=int(getattr(config, "max_position_embeddings", 2048) or 2048),
    )


def random_init_source(arch: Arch, seed: int, cache_root: Path | None, device: str) -> ModelSource:
    """Build ``arch`` with random weights (seeded, fp16, on ``device``) once and save it under ``cache_root``.

    Without ``cache_root``, :func:`default_weights_cache` picks a folder with room for the weights.
    """
    config = _config_from_arch(arch)
    shape = hashlib.sha256(json.dumps(arch.config, sort_keys=True).encode("utf-8")).hexdigest()[:8]
    name = f"{arch.name}-seed{seed}-{shape}"
    source = _source(
        config, model_id=f"random-init/{arch.name}", path="", revision=None,
        weights="random-init", architecture=arch.name,
    )  # fmt: skip
    needed_bytes = int(source.params_total * 2 * 1.05) + (64 << 20)
    directory = (cache_root or default_weights_cache(needed_bytes, name)) / name
    if not (directory / COMPLETE_MARKER).exists():
        _build_random_init(config, seed, directory, device)
    return replace(source, path=str(directory))


def _build_random_init(config: Any, seed: int, directory: Path, device: str) -> None:
    torch, transformers = _torch(), _transformers()
    partial = directory.with_name(f"{directory.name}.partial-{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        torch.manual_seed(seed)
        with torch.device(device):
            model = transformers.AutoModelForCausalLM.from_config(config, dtype=torch.float16)
        model.save_pretrained(partial)
        del model
        (partial / COMPLETE_MARKER).write_text("ok\n", encoding="utf-8")
        _move_into_place(partial, directory)
    except OSError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise ModelError(
            f"cannot save the random-init weights to {directory.parent}: {exc.strerror or exc}; "
            "pass --weights-cache DIR with enough free space"
        ) from None
    finally:
        _free_memory()


def _move_into_place(partial: Path, directory: Path) -> None:
    """Rename ``partial`` to ``directory``, or keep the folder another process finished first.

    Same architecture and seed give the same weights, and a process may be loading from that folder.
    """
    try:
        partial.rename(directory)
        return
    except OSError:
        if (directory / COMPLETE_MARKER).exists():
            shutil.rmtree(partial, ignore_errors=True)
            return
    shutil.rmtree(directory, ignore_errors=True)  # an incomplete folder left by a killed build
    partial.rename(directory)


def pretrained_source(model_id: str) -> ModelSource:
    """A pretrained model from a local path or the Hugging Face cache (offline when HF_HUB_OFFLINE=1)."""
    offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes") or Path(model_id).is_dir()
    try:
        config = _transformers().AutoConfig.from_pretrained(model_id, local_files_only=offline)
    except (OSError, ValueError) as exc:
        raise ModelError(
            f"cannot load {model_id!r} ({' '.join(str(exc).split())[:200]}): download it first where there is "
            f"network (hf download {model_id}), then run with HF_HUB_OFFLINE=1, or pass a local directory"
        ) from None
    shape = {"model_type": config.model_type, **config.to_dict()}
    local = Path(model_id).is_dir()
    name = Path(model_id).resolve().name if local else model_id  # a local path would leak the user's folders
    return _source(
        config, model_id=name, path=model_id, revision=None if local else getattr(config, "_commit_hash", None),
        weights="pretrained", architecture=match_arch(shape) or name.rstrip("/").split("/")[-1],
        local_files_only=offline,
    )  # fmt: skip
