"""Two engines on one GPU and one shape: the build keeps them apart, and the card names each crossover's engine.

Signed submissions of transformers (fp16, nf4) and of llama.cpp (fp16, q8_0, q4_k_m) at the same sizes, stack,
batch and length, built by ``publish build`` as a contributor's would be. llama.cpp's FP16 is made half as costly
as transformers', so a change taken against the other engine's baseline, or pooled with it, would show.
"""

from __future__ import annotations

import random
import shutil
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from factories import interleave
from publish_examples import Spec, example_document, example_jpt, example_window, write_signed

from ecocompute.analysis.crossovers import crossover_frame
from ecocompute.publish.build import BuildOptions, BuildResult, build
from ecocompute.publish.inputs import Source

SIZES = (("Qwen2.5-0.5B", 494_032_768), ("Qwen2.5-3B", 3_085_938_688), ("Qwen2.5-7B", 7_615_616_512))
LLAMACPP_FP16_SHARE = 0.5  # llama.cpp's FP16 J/token against transformers' at the same shape
# llama.cpp's change against its own FP16, in % per size: q8_0 crosses between 3B and 7.6B, q4_k_m saves everywhere
LLAMACPP_CHANGE = {"q8_0": (12.0, 4.0, -6.0), "q4_k_m": (-20.0, -30.0, -40.0)}
GGUF_TYPES = {"fp16": "F16", "q8_0": "Q8_0", "q4_k_m": "Q4_K_M"}
N_BOOT = 50


def _measured(document: dict[str, Any]) -> dict[str, Any]:
    """An example document made a measurement's: a GPU the validator knows, no example flag."""
    payload = document["payload"]
    payload.update(example=False, notes="synthetic test data")
    payload["hardware"]["gpu_name"] = "NVIDIA H200"
    return document


def _transformers(seed: int, architecture: str, params: int) -> dict[str, Any]:
    return _measured(example_document(Spec(architecture, params, "eager", 1, ("fp16", "nf4")), seed, n_windows=6))


def _llamacpp(seed: int, size: int) -> dict[str, Any]:
    """A llama.cpp submission of SIZES[size]: fp16, q8_0 and q4_k_m, windows at LLAMACPP_CHANGE against its fp16."""
    architecture, params = SIZES[size]
    spec = Spec(architecture, params, "eager", 1, ("fp16", "nf4", "int8"))  # three measurements to rewrite
    document = _measured(example_document(spec, seed, n_windows=6))
    payload = document["payload"]
    document["schema_version"] = "1.2"
    payload["workload"].update(engine="llama.cpp", engine_version="b6000",
                               engine_build_flags={"GGML_CUDA": "ON", "CMAKE_CUDA_ARCHITECTURES": "90"})  # fmt: skip
    fp16 = example_jpt(spec, "fp16") * LLAMACPP_FP16_SHARE
    rng = random.Random(seed)
    first = min(datetime.fromisoformat(m["warmup"][0]["started_at"]) for m in payload["measurements"])
    for measurement, precision in zip(payload["measurements"], GGUF_TYPES, strict=True):
        jpt = fp16 * (1 + LLAMACPP_CHANGE[precision][size] / 100) if precision != "fp16" else fp16
        gguf = None if precision == "fp16" else {"quant_method": "gguf", "file_type": GGUF_TYPES[precision]}
        measurement.update(precision=precision, quantization=gguf, quantization_type=GGUF_TYPES[precision])
        for window in (*measurement["windows"], *measurement["warmup"]):
            window.update(example_window(window["index"], first, jpt, rng, 0.004, batch=1, power_w=135.0))
    interleave(payload["measurements"], first)  # the new windows' lengths, back to back as one GPU runs them
    return document


@pytest.fixture(scope="module")
def two_engines(tmp_path_factory: pytest.TempPathFactory, keys: Any) -> BuildResult:
    """One build of three transformers and three llama.cpp submissions, signed and validated, for every test here."""
    documents = [_transformers(700 + i, a, p) for i, (a, p) in enumerate(SIZES)]
    documents += [_llamacpp(710 + i, i) for i in range(len(SIZES))]
    folder = tmp_path_factory.mktemp("two-engines")
    root = folder / "submissions"
    root.mkdir()
    shutil.copy(keys.allowed_signers, root / "allowed_signers")
    write_signed(root, keys.ed25519, documents, login=keys.login)
    result = build([Source.at(root)], folder / "out", BuildOptions(n_boot=N_BOOT))
    assert (result.submissions, result.rejected) == (6, 0)
    return result


def _read(out: Path, config: str) -> pl.DataFrame:
    return pl.read_parquet(out / "data" / config / "*.parquet")


def test_each_engine_is_measured_against_its_own_fp16(two_engines: BuildResult) -> None:
    from ecocompute.analysis.change import change_frame

    measurements = _read(two_engines.out, "measurements_all")
    assert sorted(measurements["engine"].unique().to_list()) == ["llama.cpp", "transformers"]
    fp16 = measurements.filter(pl.col("precision") == "fp16").select("submission_id", "engine", "j_per_token_mean")
    changes = change_frame(measurements).join(fp16, on=["submission_id", "engine"], how="left")
    assert changes.height == 3 + 2 * 3 and changes["j_per_token_mean"].null_count() == 0
    assert (changes["j_per_token_baseline"] == changes["j_per_token_mean"]).all()
    by_engine = dict(changes.group_by("engine").agg(pl.col("precision").unique().sort()).iter_rows())
    assert {k: list(v) for k, v in by_engine.items()} == {"llama.cpp": ["q4_k_m", "q8_0"], "transformers": ["nf4"]}


def test_crossovers_come_out_per_engine_as_each_engine_alone_gives_them(two_engines: BuildResult) -> None:
    measurements = _read(two_engines.out, "measurements_all")
    windows = _read(two_engines.out, "windows_all")
    both = crossover_frame(measurements, windows, n_boot=N_BOOT, seed=7)
    assert both.select("engine", "precision").rows() == [
        ("llama.cpp", "q8_0"), ("llama.cpp", "q4_k_m"), ("transformers", "nf4")
    ]  # fmt: skip
    for engine in ("llama.cpp", "transformers"):
        alone = crossover_frame(measurements.filter(pl.col("engine") == engine), windows, n_boot=N_BOOT, seed=7)
        assert both.filter(pl.col("engine") == engine).equals(alone)
    q8 = both.filter(pl.col("precision") == "q8_0").row(0, named=True)
    assert q8["status"] == "crossover" and SIZES[1][1] < q8["crossover_params"] < SIZES[2][1]
    assert both.filter(pl.col("precision") == "q4_k_m")["holds"].to_list() == ["saves"]


def test_the_card_names_the_engine_of_each_crossover_and_each_table(two_engines: BuildResult) -> None:
    card = (two_engines.out / "README.md").read_text(encoding="utf-8")
    crossover = card.split("## Crossover", 1)[1].split("## Beyond the gate", 1)[0]
    assert "| GPU | engine | stack | batch | tokens | precision | weights | sizes measured |" in crossover
    for engine, precision in (("llama.cpp", "q8_0"), ("llama.cpp", "q4_k_m"), ("transformers", "nf4")):
        assert f"| NVIDIA H200 | {engine} | eager | 1 | 128+256 | {precision} | random-init | 494M-7.62B (3) |" in (
            crossover
        )
    # one J/token table per engine, each with its own fp16 column; transformers' title as before engines
    assert "### NVIDIA H200 · llama.cpp · eager stack · batch 1 · 128+256 tokens · random-init weights" in card
    assert "### NVIDIA H200 · eager stack · batch 1 · 128+256 tokens · random-init weights" in card
    figures = sorted(p.name for p in (two_engines.out / "figures").glob("*.png"))
    assert figures == ["change-nvidia-h200-eager-b1-p128-n256-random-init.png",
                       "change-nvidia-h200-llamacpp-eager-b1-p128-n256-random-init.png"]  # fmt: skip


def test_the_analysis_commands_filter_by_engine(two_engines: BuildResult, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    from ecocompute.cli import main

    monkeypatch.setenv("COLUMNS", "200")
    dataset = str(two_engines.out)
    assert main(["crossover", "--dataset", dataset, "--engine", "llama.cpp", "--n-boot", "0"]) == 0
    out = capsys.readouterr().out
    assert "Crossover · NVIDIA H200 · llama.cpp · 128+256 tokens · random-init" in out
    assert "q8_0" in out and "q4_k_m" in out and "nf4" not in out
    assert main(["j-per-token", "--dataset", dataset, "--engine", "transformers", "--precision", "fp16,nf4"]) == 0
    out = capsys.readouterr().out
    assert "J/token · NVIDIA H200 · eager · batch 1 · 128+256 tokens · random-init" in out and "llama.cpp" not in out
    assert main(["crossover", "--dataset", dataset, "--engine", "vllm"]) == 2
    assert "unknown engine 'vllm': choose from transformers, llama.cpp" in capsys.readouterr().err
