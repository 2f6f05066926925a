"""Model sizes from ids and from config.json files on disk (never the network)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ecocompute.lint import model_size


@pytest.mark.parametrize(
    ("model_id", "size"),
    [
        ("TinyLlama/TinyLlama-1.1B-Chat-v1.0", 1.1),
        ("Qwen/Qwen2.5-0.5B-Instruct", 0.5),
        ("meta-llama/Llama-2-7b-hf", 7.0),
        ("meta-llama/Meta-Llama-3.1-70B-Instruct", 70.0),
        ("facebook/opt-350m", 0.35),
        ("bigscience/bloom-1b7", 1.7),
        ("mistralai/Mistral-7B-v0.1", 7.0),
        ("gpt2", None),
        ("mistralai/Mixtral-8x7B-v0.1", None),
        ("Qwen/Qwen1.5-MoE-A2.7B", None),
        ("org/model-7B-distilled-from-70B", None),
    ],
)
def test_size_from_name(model_id: str, size: float | None) -> None:
    assert model_size.size_from_name(model_id) == size


LLAMA_1B = {  # TinyLlama-1.1B's shapes: 1,100,048,384 parameters
    "architectures": ["LlamaForCausalLM"], "hidden_size": 2048, "intermediate_size": 5632, "num_hidden_layers": 22,
    "num_attention_heads": 32, "num_key_value_heads": 4, "vocab_size": 32000, "tie_word_embeddings": False,
}  # fmt: skip
GPT2 = {"n_embd": 768, "n_layer": 12, "n_head": 12, "vocab_size": 50257, "n_inner": None}  # 124M with tied head


def test_params_from_config_counts_shapes() -> None:
    assert model_size.params_from_config(LLAMA_1B) == pytest.approx(1.100048384, rel=0.001)
    assert model_size.params_from_config(GPT2) == pytest.approx(0.124, rel=0.01)
    assert model_size.params_from_config({**LLAMA_1B, "num_local_experts": 8}) is None
    assert model_size.params_from_config({"hidden_size": 10}) is None


def test_size_from_cached_hub_snapshot_and_local_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    snapshot = tmp_path / "hub" / "models--someone--tiny" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(json.dumps(LLAMA_1B))
    (tmp_path / "hub" / "models--someone--tiny" / "refs").mkdir()
    (tmp_path / "hub" / "models--someone--tiny" / "refs" / "main").write_text("abc123\n")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    model_size.params_b.cache_clear()
    assert model_size.params_b("someone/tiny") == pytest.approx(1.1, rel=0.01)
    assert model_size.params_b("someone/absent") is None
    local = tmp_path / "my-model"
    local.mkdir()
    (local / "config.json").write_text(json.dumps(GPT2))
    assert model_size.params_b(str(local)) == pytest.approx(0.124, rel=0.01)
    (local / "config.json").write_text("{not json")
    model_size.params_b.cache_clear()
    assert model_size.params_b(str(local)) is None
