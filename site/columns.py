"""The dataset columns the site reads, through one mapping.

Each site name maps onto the dataset's column names that may carry it, newest first: contract 2 renamed
``stack`` to ``software_stack`` and ``ci95_low_j``/``ci95_high_j`` to ``j_per_token_ci95_low``/``_high``, and the
first name a table has wins, so builds from before and after the rename both read. A table from before engines
has no ``engine`` column; :mod:`.payload` reads its rows as transformers'.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

MEASUREMENTS: dict[str, tuple[str, ...]] = {
    "submission_id": ("submission_id",),
    "gpu": ("gpu_name",),
    "engine": ("engine",),
    "stack": ("software_stack", "stack"),
    "batch": ("batch_size",),
    "prompt_tokens": ("prompt_tokens",),
    "new_tokens": ("new_tokens",),
    "model": ("model_id",),
    "weights": ("weights",),
    "params": ("params_total",),
    "precision": ("precision",),
    "n_windows": ("n_windows",),
    "j_per_token": ("j_per_token_mean",),
    "ci_low": ("j_per_token_ci95_low", "ci95_low_j"),
    "ci_high": ("j_per_token_ci95_high", "ci95_high_j"),
    "cv_pct": ("cv_pct",),
    "tokens_per_s": ("tokens_per_s",),
    "power_w": ("power_w_mean",),
    "wh_per_1k_tokens": ("wh_per_1k_tokens",),
    "perplexity": ("perplexity",),
    "error": ("error",),
    "passes_cv_gate": ("passes_cv_gate",),
    "in_gate_tier": ("in_gate_tier",),  # added by the site: the row is in the default configs
}
CHANGES: dict[str, tuple[str, ...]] = {
    "submission_id": ("submission_id",),
    "gpu": ("gpu_name",),
    "engine": ("engine",),
    "stack": ("software_stack", "stack"),
    "batch": ("batch_size",),
    "prompt_tokens": ("prompt_tokens",),
    "new_tokens": ("new_tokens",),
    "weights": ("weights",),
    "model": ("model_id",),
    "params": ("params_total",),
    "precision": ("precision",),
    "baseline": ("baseline_precision",),
    "change_pct": ("change_pct",),
    "change_low": ("ci95_low_pct", "change_ci95_low_pct"),
    "change_high": ("ci95_high_pct", "change_ci95_high_pct"),
}
CROSSOVERS: dict[str, tuple[str, ...]] = {
    "gpu": ("gpu_name",),
    "engine": ("engine",),
    "stack": ("software_stack", "stack"),
    "batch": ("batch_size",),
    "prompt_tokens": ("prompt_tokens",),
    "new_tokens": ("new_tokens",),
    "precision": ("precision",),
    "weights": ("weights",),
    "status": ("status",),
    "crossover_params": ("crossover_params",),
    "crossover_low": ("ci95_low_params",),
    "crossover_high": ("ci95_high_params",),
    "params_min": ("params_min",),
    "params_max": ("params_max",),
    "message": ("message",),
}
SUBMISSIONS: dict[str, tuple[str, ...]] = {
    "submission_id": ("submission_id",),
    "gpu_count": ("gpu_count",),
    "contributor": ("contributor_github",),
    "created_at": ("created_at",),
}


def resolve(frame: pl.DataFrame, mapping: Mapping[str, tuple[str, ...]]) -> dict[str, str]:
    """Site name -> the dataset column ``frame`` has for it (names the frame has none of are left out)."""
    present = set(frame.columns)
    return {site: next(c for c in names if c in present) for site, names in mapping.items() if present & set(names)}


def select(frame: pl.DataFrame, mapping: Mapping[str, tuple[str, ...]]) -> tuple[pl.DataFrame, dict[str, str]]:
    """``frame``'s mapped columns renamed to their site names, and the site -> dataset name map used."""
    names = resolve(frame, mapping)
    return frame.select([pl.col(column).alias(site) for site, column in names.items()]), names
