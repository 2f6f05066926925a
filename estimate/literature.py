"""The literature tier: figures other projects published, as runs marked ``source: published``.

``estimate/data/literature.csv`` copies the seed's published tables (CC BY 4.0; see ``data/LITERATURE.md``).
Each row is one run: its change against FP16 in the same row, the published spread where it has one.
"""

from __future__ import annotations

import csv
import math
from importlib import resources
from typing import Any

Run = dict[str, Any]


def _float(text: str) -> float | None:
    return float(text) if text.strip() else None


def literature_row_run(row: dict[str, str]) -> Run:
    """One published row as a run (``y`` the log ratio of its quantized to its FP16 J per 1k tokens)."""
    quant, fp16 = float(row["quant_j_per_1k"]), float(row["fp16_j_per_1k"])
    std, n_runs = _float(row.get("quant_std_j_per_1k", "")), _float(row.get("n_runs", "")) or 1.0
    w = (std / quant) ** 2 / n_runs if std is not None else 0.0  # no spread of its own: tau2 and sessions cover it
    replicate = row.get("replicate") or ""
    return {
        "source": "published", "gpu": row["gpu"], "arch": row["arch"], "engine": "transformers", "stack": "eager",
        "batch_size": int(row.get("batch_size") or 1), "prompt_tokens": None, "new_tokens": 256,
        "precision": row["precision"], "weights": "pretrained", "session": row["session"],
        "params_b": float(row["params_b"]), "model": row["model"], "y": math.log(quant / fp16), "w": w,
        "j_q": quant / 1000, "j_b": fp16 / 1000, "passes_cv_gate": None,
        "submission_id": None, "created_at": None, "doi": row["doi"] or None,
        "quality_pct": _float(row.get("delta_perplexity_pct", "")),
        "source_file": row["source_file"], "replicate": replicate,
    }  # fmt: skip


def literature_runs() -> list[Run]:
    """Every row of the shipped ``literature.csv`` as a run."""
    text = resources.files("ecocompute.estimate").joinpath("data", "literature.csv").read_text(encoding="utf-8")
    return [literature_row_run(row) for row in csv.DictReader(text.splitlines())]
