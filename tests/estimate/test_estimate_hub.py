"""A Hugging Face id's size from its config.json in a local cache (laid out as huggingface_hub lays it out)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ecocompute.estimate.hub import params_b_for
from ecocompute.schema.errors import UsageError

# Qwen2.5-7B's shape: 7.6B parameters by its model card
QWEN7B = {"hidden_size": 3584, "num_hidden_layers": 28, "vocab_size": 152064, "num_attention_heads": 28,
          "num_key_value_heads": 4, "intermediate_size": 18944, "tie_word_embeddings": False}  # fmt: skip


def cache_with(tmp_path: Path, repo: str, config: dict) -> str:
    folder = tmp_path / f"models--{repo.replace('/', '--')}"
    snapshot = folder / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(json.dumps(config))
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text("a" * 40)
    return str(tmp_path)


def test_size_from_a_cached_config(tmp_path: Path) -> None:
    cache = cache_with(tmp_path, "Qwen/Qwen2.5-7B", QWEN7B)
    assert params_b_for("Qwen/Qwen2.5-7B", cache_dir=cache) == pytest.approx(7.6, rel=0.01)


def test_an_uncached_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"no config\.json in the local Hugging Face cache.*pass params_b"):
        params_b_for("nobody/never-downloaded", cache_dir=str(tmp_path))
