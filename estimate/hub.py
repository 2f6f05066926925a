"""A Hugging Face model id -> its size in billions, from the ``config.json`` in the local cache (never the network)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ecocompute.schema.errors import UsageError


def params_from_config(config: dict[str, Any]) -> float:
    """Total parameters (billions) of a decoder-only transformer from its config (embeddings, attention, MLP, norms)."""
    cfg = config.get("text_config") or config
    try:
        hidden, layers, vocab = int(cfg["hidden_size"]), int(cfg["num_hidden_layers"]), int(cfg["vocab_size"])
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"config.json lacks {exc}: pass params_b instead") from exc
    heads = int(cfg.get("num_attention_heads") or 1)
    head_dim = int(cfg.get("head_dim") or hidden // heads)
    kv_heads = int(cfg.get("num_key_value_heads") or heads)
    inter = int(cfg.get("intermediate_size") or 4 * hidden)
    experts = int(cfg.get("num_local_experts") or cfg.get("num_experts") or 1)
    attention = hidden * heads * head_dim * 2 + hidden * kv_heads * head_dim * 2
    mlp = 3 * hidden * inter * experts
    embeddings = vocab * hidden * (1 if cfg.get("tie_word_embeddings", config.get("tie_word_embeddings")) else 2)
    return (embeddings + layers * (attention + mlp + 2 * hidden) + hidden) / 1e9


def params_b_for(model_id: str, cache_dir: str | None = None) -> float:
    """Size in billions of ``model_id`` from its cached ``config.json``; UsageError naming the fix when not cached.

    ``cache_dir``: the Hugging Face cache to look in (default: the one huggingface_hub uses, ``HF_HUB_CACHE``).
    """
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError as exc:
        raise UsageError("model: reading a Hugging Face id needs huggingface_hub (pip install 'ecocompute[publish]'); "
                         "or pass params_b") from exc  # fmt: skip
    found = try_to_load_from_cache(model_id, "config.json", cache_dir=cache_dir)
    if not isinstance(found, str):
        raise UsageError(
            f"model: {model_id!r} has no config.json in the local Hugging Face cache (offline only): run "
            f"`huggingface-cli download {model_id} config.json` once, or pass params_b"
        )
    return params_from_config(json.loads(Path(found).read_text(encoding="utf-8")))
