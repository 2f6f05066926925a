"""A model's size in billions of parameters, from its id or from a config.json already on disk (never the network).

``Qwen/Qwen2.5-7B-Instruct`` -> 7.0, ``TinyLlama/TinyLlama-1.1B-Chat-v1.0`` -> 1.1, ``facebook/opt-350m`` -> 0.35.
A name without one size in it (``gpt2``, ``Mixtral-8x7B``: experts share layers) is looked up as a local folder or
in the Hugging Face cache (``HF_HUB_CACHE``, ``HF_HOME``/hub, ``~/.cache/huggingface/hub``), and its parameters are
counted from the config's shapes. None when neither says.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

_SIZE = re.compile(r"^(\d+(?:\.\d+)?)([bm])$", re.IGNORECASE)
_SPLIT_SIZE = re.compile(r"^(\d+)b(\d+)$", re.IGNORECASE)  # bloom-1b7, 7b1: 1.7B, 7.1B
_SPLIT = re.compile(r"[-_/ ]+")


def size_from_name(model_id: str) -> float | None:
    """The size a model id spells (``-1.1B``, ``7b``, ``350m``, ``1b7``), in billions; None unless just one is."""
    name = model_id.rstrip("/").rsplit("/", 1)[-1]
    sizes = []
    for token in _SPLIT.split(name):
        match, split = _SIZE.match(token), _SPLIT_SIZE.match(token)
        if match:
            value = float(match.group(1))
            sizes.append(value if match.group(2).lower() == "b" else value / 1000)
        elif split:
            sizes.append(float(f"{split.group(1)}.{split.group(2)}"))
    return sizes[0] if len(set(sizes)) == 1 and sizes[0] > 0 else None


def _hub_caches() -> list[Path]:
    caches = []
    if os.environ.get("HF_HUB_CACHE"):
        caches.append(Path(os.environ["HF_HUB_CACHE"]))
    if os.environ.get("HF_HOME"):
        caches.append(Path(os.environ["HF_HOME"]) / "hub")
    caches.append(Path.home() / ".cache" / "huggingface" / "hub")
    return caches


def cached_config(model_id: str) -> dict[str, Any] | None:
    """The config.json of a local model folder or of a cached Hub snapshot; None when there is none on disk."""
    candidates = [Path(model_id) / "config.json"]
    if "/" in model_id and not model_id.startswith((".", "/")):
        folder = "models--" + model_id.replace("/", "--")
        for cache in _hub_caches():
            snapshots = cache / folder / "snapshots"
            ref = cache / folder / "refs" / "main"
            if ref.is_file():
                candidates.append(snapshots / ref.read_text(encoding="utf-8").strip() / "config.json")
            if snapshots.is_dir():
                candidates += sorted(snapshots.glob("*/config.json"))
    for path in candidates:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            return data
    return None


def _int(config: dict[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = config.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def params_from_config(config: dict[str, Any]) -> float | None:
    """Parameters (billions) of a decoder-only transformer, counted from its config.

    Embeddings, attention (with grouped
    key/value heads) and the MLP (gated for llama-style models, two matrices for GPT-2-style); norms and biases are
    left out (under 0.1%). None when a shape is missing or the model mixes experts.
    """
    text = config.get("text_config")
    if isinstance(text, dict):
        config = {**config, **text}
    if any(k in config for k in ("num_local_experts", "num_experts", "n_routed_experts")):
        return None
    hidden = _int(config, "hidden_size", "n_embd", "d_model")
    layers = _int(config, "num_hidden_layers", "n_layer", "num_layers")
    vocab = _int(config, "vocab_size")
    heads = _int(config, "num_attention_heads", "n_head")
    if hidden is None or layers is None or vocab is None or heads is None:
        return None
    gated = "intermediate_size" in config
    inner = _int(config, "intermediate_size", "n_inner", "ffn_dim") or 4 * hidden
    kv_heads = _int(config, "num_key_value_heads") or heads
    head_dim = _int(config, "head_dim") or hidden // heads
    attention = 2 * hidden * heads * head_dim + 2 * hidden * kv_heads * head_dim
    mlp = (3 if gated else 2) * hidden * inner
    tied = config.get("tie_word_embeddings", not gated)
    embeddings = vocab * hidden * (1 if tied else 2)
    return (embeddings + layers * (attention + mlp)) / 1e9


@lru_cache(maxsize=4096)
def params_b(model_id: str) -> float | None:
    """The size of ``model_id`` in billions of parameters: from its name, else from a config.json on disk."""
    named = size_from_name(model_id)
    if named is not None:
        return named
    config = cached_config(model_id)
    return None if config is None else params_from_config(config)
