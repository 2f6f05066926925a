"""The transformers backend on CPU: architectures, prompts, random-init weights, every precision's load."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from collector_fakes import make_pretrained

from ecocompute.collector.errors import ModelError
from ecocompute.collector.model import hf, weights
from ecocompute.collector.model.archs import arch_names, load_arch, match_arch
from ecocompute.collector.model.corpus import corpus
from ecocompute.collector.model.precisions import SPECS, estimate_model_bytes, parse_precisions
from ecocompute.schema.errors import UsageError
from ecocompute.schema.models import Precision, Stack

# Totals published with each model (safetensors parameter counts on its Hugging Face page).
PUBLISHED_PARAMS = {
    "Qwen2.5-0.5B": 494_032_768, "Qwen2.5-1.5B": 1_543_714_304, "Qwen2.5-3B": 3_085_938_688,
    "Qwen2.5-7B": 7_615_616_512, "Qwen2.5-14B": 14_770_033_664, "Qwen2.5-32B": 32_763_876_352,
    "TinyLlama-1.1B": 1_100_048_384, "Llama-3.2-1B": 1_235_814_400, "Llama-3.2-3B": 3_212_749_824,
    "Llama-3.1-8B": 8_030_261_248, "Mistral-7B": 7_241_732_096,
}  # fmt: skip
HAS_BNB = importlib.util.find_spec("bitsandbytes") is not None


@pytest.fixture(scope="module")
def tiny_source(random_init_weights: Path) -> weights.ModelSource:
    """The tiny test architecture, random-init, from the session's weights cache."""
    return weights.random_init_source(load_arch("tiny-llama-test"), 0, random_init_weights, "cpu")


def backend(source: weights.ModelSource, stack: Stack = Stack.EAGER, batch: int = 2) -> hf.HfBackend:
    return hf.HfBackend(source, device="cpu", batch_size=batch, prompt_tokens=8, new_tokens=6, stack=stack, seed=0)


def test_every_required_architecture_ships() -> None:
    assert set(PUBLISHED_PARAMS) | {"tiny-llama-test"} == set(arch_names())


@pytest.mark.parametrize("name", sorted(PUBLISHED_PARAMS))
def test_architecture_shapes_give_the_published_parameter_counts(name: str) -> None:
    arch = load_arch(name)
    assert arch.source_repo is not None and name.split("-")[0].lower() in arch.source_repo.lower()
    total, unquantized, kv_bytes = weights._sizes(weights._config_from_arch(arch))
    assert total == PUBLISHED_PARAMS[name]
    assert 0 < unquantized < total and kv_bytes > 0


def test_unknown_architecture_lists_the_shipped_ones() -> None:
    assert load_arch("tinyllama-1.1b").name == "TinyLlama-1.1B"
    with pytest.raises(UsageError, match=r"unknown architecture 'gpt-5': choose one of .*Qwen2\.5-7B"):
        load_arch("gpt-5")


def test_match_arch_finds_a_shape() -> None:
    assert match_arch(load_arch("Qwen2.5-7B").config) == "Qwen2.5-7B"
    assert match_arch({"model_type": "llama", "hidden_size": 1}) is None


def test_parse_precisions() -> None:
    assert parse_precisions("fp16, NF4,int8-t0") == [Precision.FP16, Precision.NF4, Precision.INT8_T0]
    with pytest.raises(UsageError, match="unknown precision 'fp8': choose from fp16, bf16, int8, int8-t0, nf4"):
        parse_precisions("fp16,fp8")
    with pytest.raises(UsageError, match="listed twice"):
        parse_precisions("nf4,nf4")
    with pytest.raises(UsageError, match="no precision given"):
        parse_precisions(" , ")


def test_memory_estimate_keeps_embeddings_at_16_bit() -> None:
    assert estimate_model_bytes(1000, 200, SPECS[Precision.FP16]) == 2000
    assert estimate_model_bytes(1000, 200, SPECS[Precision.INT8]) == 400 + 800


def test_prompt_is_deterministic_and_hashed() -> None:
    a, b = hf.prompt_ids(2, 16, 512, seed=7), hf.prompt_ids(2, 16, 512, seed=7)
    assert a == b and a != hf.prompt_ids(2, 16, 512, seed=8)
    assert all(hf.PROMPT_ID_LOW <= i < 512 for row in a for i in row)
    assert hf.prompt_sha256(a) == hf.prompt_sha256(b) != hf.prompt_sha256(hf.prompt_ids(2, 16, 512, seed=8))


def test_random_init_weights_are_built_once(tiny_source: weights.ModelSource) -> None:
    path = Path(tiny_source.path)
    assert (path / weights.COMPLETE_MARKER).exists() and (path / "config.json").exists()
    stamp = (path / "config.json").stat().st_mtime_ns
    again = weights.random_init_source(load_arch("tiny-llama-test"), 0, path.parent, "cpu")
    assert (path / "config.json").stat().st_mtime_ns == stamp
    assert again == tiny_source
    assert (tiny_source.model_id, tiny_source.weights, tiny_source.params_total) == (
        "random-init/tiny-llama-test", "random-init", 139_584
    )  # fmt: skip


@pytest.mark.parametrize("precision", [Precision.FP16, Precision.BF16])
def test_unquantized_runner_generates_exactly_new_tokens(
    tiny_source: weights.ModelSource, precision: Precision
) -> None:
    b = backend(tiny_source)
    runner = b.load(precision)
    assert runner.generate_once() == 2 * 6
    runner.synchronize()
    assert runner.quantization is None
    assert runner.memory_mib > 0
    assert runner.attn_implementation
    assert b.fits_together([precision])
    runner.close()
    assert runner.model is None


def test_compiled_stack_uses_a_static_cache(tiny_source: weights.ModelSource) -> None:
    runner = backend(tiny_source, Stack.COMPILED).load(Precision.FP16)
    assert runner.generation_config.cache_implementation == "static"
    assert runner.generate_once() == 12
    assert runner.generate_once() == 12


def test_a_short_generation_is_an_error(tiny_source: weights.ModelSource) -> None:
    runner = backend(tiny_source).load(Precision.FP16)
    runner.generation_config.min_new_tokens = None
    runner.generation_config.max_new_tokens = 3
    with pytest.raises(RuntimeError, match="generate produced 3 new tokens per sequence instead of 6"):
        runner.generate_once()


QUANTIZED: list[tuple[Precision, dict[str, Any]]] = [
    (Precision.INT8, {"load_in_8bit": True, "llm_int8_threshold": 6.0}),
    (Precision.INT8_T0, {"load_in_8bit": True, "llm_int8_threshold": 0.0}),
    (Precision.NF4, {"load_in_4bit": True, "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": False,
                     "bnb_4bit_compute_dtype": "float16"}),
    (Precision.NF4_DQ, {"bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": True}),
    (Precision.FP4, {"bnb_4bit_quant_type": "fp4", "load_in_4bit": True}),
]  # fmt: skip


@pytest.mark.skipif(not HAS_BNB, reason="bitsandbytes is not installed")
@pytest.mark.parametrize(("precision", "expected"), QUANTIZED, ids=[p.value for p, _ in QUANTIZED])
def test_quantized_runner_records_its_full_bnb_config(tiny_source: weights.ModelSource, precision: Precision,
                                                      expected: dict[str, Any]) -> None:  # fmt: skip
    runner = backend(tiny_source, batch=1).load(precision)
    config = runner.quantization
    assert config is not None
    assert config["quant_method"] == "bitsandbytes"
    assert {k: config[k] for k in expected} == expected
    assert "llm_int8_skip_modules" in config  # the whole config, not only what was set
    assert runner.generate_once() == 6


@pytest.mark.skipif(not HAS_BNB, reason="bitsandbytes is not installed")
def test_compiled_all_stack_marks_that_models_quantizer_compileable(tiny_source: weights.ModelSource) -> None:
    """transformers' bitsandbytes quantizer declines compilation; compiled-all overrides it for its own model only."""
    plain = backend(tiny_source, Stack.COMPILED, batch=1).load(Precision.NF4)
    marked = backend(tiny_source, Stack.COMPILED_ALL, batch=1).load(Precision.NF4)
    assert plain.model.hf_quantizer.is_compileable is False
    assert marked.model.hf_quantizer.is_compileable is True
    assert isinstance(marked.model.hf_quantizer, type(plain.model.hf_quantizer))
    assert marked.generation_config.cache_implementation == "static"
    assert marked.generate_once() == 6
    assert hf.mark_compileable(backend(tiny_source, Stack.COMPILED_ALL).load(Precision.FP16).model) is False
    other = SimpleNamespace(hf_quantizer=SimpleNamespace(quantization_config=SimpleNamespace(quant_method="gptq")))
    assert hf.mark_compileable(other) is False  # another method keeps transformers' own answer


def test_quantization_config_is_none_for_baselines() -> None:
    assert hf.quantization_config(Precision.BF16) is None


def test_perplexity_of_a_local_pretrained_model(tiny_source: weights.ModelSource, tmp_path: Path) -> None:
    local = make_pretrained(tmp_path / "model", tiny_source)
    source = weights.pretrained_source(str(local))
    assert (source.weights, source.architecture, source.local_files_only) == ("pretrained", "tiny-llama-test", True)
    assert (source.model_id, source.revision) == ("model", None)  # no local folders in the submission
    b = backend(source, batch=1)
    runner = b.load(Precision.FP16)
    value, tokens = b.perplexity(runner, corpus()[0])
    assert math.isfinite(value) and value > 1.0
    assert tokens > 1000


def test_a_model_missing_from_the_cache_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelError, match="hf download no-such-org/no-such-model"):
        weights.pretrained_source("no-such-org/no-such-model")


def test_matmul_load_runs_on_cpu_for_the_time_asked() -> None:
    ran = hf.matmul_load("cpu", 0.05, size=32)
    assert ran >= 8 and ran % 8 == 0  # in rounds of 8 products
    assert hf.matmul_load("cpu", 0.0, size=32) == 0


def test_weights_cache_default_is_a_folder_of_ours_with_room(monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:  # fmt: skip
    small, large = tmp_path / "shm" / "ecocompute", tmp_path / "tmp" / "ecocompute"
    small.mkdir(parents=True)
    large.mkdir(parents=True)
    monkeypatch.setattr(weights, "weights_cache_candidates", lambda: [small, large])
    assert weights.default_weights_cache() == small  # the first candidate, when it has room
    assert weights.default_weights_cache(needed_bytes=1 << 60) == large  # nothing has room: the last candidate
    (small / "x").mkdir()
    (small / "x" / weights.COMPLETE_MARKER).write_text("ok")
    assert weights.default_weights_cache(needed_bytes=1 << 60, name="x") == small  # already built there


def test_versions_are_read() -> None:
    torch_version, _cuda = hf.torch_versions()
    assert torch_version[0].isdigit()
    assert hf.package_version("transformers") and hf.package_version("no-such-package-xyz") is None


def test_random_init_weights_are_the_same_when_rebuilt(tiny_source: weights.ModelSource, tmp_path: Path) -> None:
    import hashlib

    again = weights.random_init_source(load_arch("tiny-llama-test"), 0, tmp_path, "cpu")
    digests = [
        hashlib.sha256((Path(s.path) / "model.safetensors").read_bytes()).hexdigest() for s in (tiny_source, again)
    ]
    assert digests[0] == digests[1]


def test_a_build_finished_elsewhere_first_is_kept(tmp_path: Path) -> None:
    theirs, ours = tmp_path / "model", tmp_path / "model.partial-1"
    for folder, text in ((theirs, "theirs"), (ours, "ours")):
        folder.mkdir()
        (folder / weights.COMPLETE_MARKER).write_text(text)
    weights._move_into_place(ours, theirs)
    assert (theirs / weights.COMPLETE_MARKER).read_text() == "theirs" and not ours.exists()
    (theirs / weights.COMPLETE_MARKER).unlink()  # now an incomplete leftover of a killed build
    (theirs / "junk").write_text("x")
    ours.mkdir()
    (ours / weights.COMPLETE_MARKER).write_text("ours")
    weights._move_into_place(ours, theirs)
    assert (theirs / weights.COMPLETE_MARKER).read_text() == "ours" and not (theirs / "junk").exists()


def test_dynamo_compiles_counts_a_compilation() -> None:
    import torch

    from ecocompute.collector.model.hf import dynamo_compiles

    def double(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    compiled = torch.compile(double, backend="eager")
    before = dynamo_compiles()
    compiled(torch.ones(3))
    after_first = dynamo_compiles()
    compiled(torch.ones(3))
    assert after_first > before
    assert dynamo_compiles() == after_first  # a cached graph compiles nothing
