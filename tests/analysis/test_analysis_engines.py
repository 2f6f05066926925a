"""Engines are kept apart: llama.cpp's fp16 and transformers' fp16 of one model are different cells."""

from __future__ import annotations

import polars as pl
import pytest
from analysis_frames import frames, sweep

from ecocompute.analysis.change import change_frame, pooled_change_frame
from ecocompute.analysis.crossovers import crossover_frame
from ecocompute.analysis.j_per_token import j_per_token_frame
from ecocompute.analysis.selection import select
from ecocompute.schema.errors import UsageError


def _row(submission: str, engine: str | None, j: float) -> dict[str, object]:
    return {
        "submission_id": submission, "gpu_name": "NVIDIA H200", "software_stack": "eager", "batch_size": 1,
        "weights": "random-init", "model_id": "Qwen2.5-1.5B", "architecture": "qwen2", "params_total": 1_500_000_000,
        "prompt_tokens": 128, "new_tokens": 256, "precision": "fp16", "error": None, "n_windows": 5,
        "j_per_token_mean": j, "j_per_token_std": j / 100, "engine": engine,
    }  # fmt: skip


def test_fp16_of_two_engines_is_two_cells_and_a_table_without_engines_reads_as_transformers() -> None:
    rows = [_row("a", "transformers", 0.20), _row("b", None, 0.30), _row("c", "llama.cpp", 0.10)]
    table = j_per_token_frame(pl.DataFrame(rows)).sort("engine")
    assert table.select("engine", "n_submissions", "j_per_token").rows() == [
        ("llama.cpp", 1, 0.10),
        ("transformers", 2, 0.25),
    ]
    older = j_per_token_frame(pl.DataFrame(rows[:2]).drop("engine"))
    assert older["engine"].to_list() == ["transformers"]


def _two_engines() -> tuple[pl.DataFrame, pl.DataFrame]:
    """bf16 against fp16 on both engines at the same sizes: crossing on transformers, saving on llama.cpp."""
    sizes = (500_000_000, 1_500_000_000, 3_000_000_000, 7_000_000_000)
    hf = sweep(dict(zip(sizes, (8.0, 3.0, -2.0, -6.0), strict=True)), precision="bf16", prefix="t")
    gguf = sweep(dict(zip(sizes, (-20.0, -25.0, -30.0, -35.0), strict=True)), precision="bf16", prefix="l", base=1.0)
    measurements, windows = frames([*hf, *gguf])
    engine = pl.when(pl.col("submission_id").str.starts_with("l")).then(pl.lit("llama.cpp")).otherwise(None)
    return measurements.with_columns(engine.alias("engine")), windows  # null: a table before engines, transformers


def test_one_precision_of_two_engines_gives_two_crossovers_each_from_its_own_fp16() -> None:
    measurements, windows = _two_engines()
    changes = change_frame(measurements)
    assert changes.group_by("engine").agg(pl.col("j_per_token_baseline").max()).sort("engine").rows() == [
        ("llama.cpp", pytest.approx(1.0, rel=0.01)), ("transformers", pytest.approx(2.0, rel=0.01))
    ]  # fmt: skip
    pooled = pooled_change_frame(changes)
    assert pooled.height == 8 and (pooled["n_submissions"] == 1).all()
    both = crossover_frame(measurements, windows, n_boot=50, seed=3)
    assert both.select("engine", "precision", "status", "holds").rows() == [
        ("llama.cpp", "bf16", "no crossover", "saves"), ("transformers", "bf16", "crossover", "mixed")
    ]  # fmt: skip
    hf = measurements.filter(pl.col("engine").is_null())
    alone = crossover_frame(hf, windows, n_boot=50, seed=3)
    assert both.filter(pl.col("engine") == "transformers").equals(alone)


def test_select_by_engine_reads_an_older_table_as_transformers() -> None:
    measurements, _ = _two_engines()
    assert select(measurements, engine="LLaMA.cpp")["submission_id"].str.starts_with("l").all()
    older = measurements.filter(pl.col("engine").is_null()).drop("engine")
    assert select(older, engine="transformers").equals(older)
    assert select(older, engine="llama.cpp").height == 0
    with pytest.raises(UsageError, match=r"unknown engine 'vllm': choose from transformers, llama\.cpp"):
        select(measurements, engine="vllm")
