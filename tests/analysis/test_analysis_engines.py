"""Engines are kept apart: llama.cpp's fp16 and transformers' fp16 of one model are different cells."""

from __future__ import annotations

import polars as pl

from ecocompute.analysis.j_per_token import j_per_token_frame


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
