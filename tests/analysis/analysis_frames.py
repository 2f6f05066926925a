"""Hand-made dataset tables for the analysis tests (every window's J/token is chosen, so answers are known),
and per-size means published for other GPUs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from ecocompute.schema.derive import ci95_half_width, mean_std


@dataclass
class Sub:
    """One submission: its keys and, per precision, the J/token of each window (or an error)."""

    submission_id: str
    params: int
    windows: Mapping[str, Sequence[float]]
    gpu: str = "NVIDIA H200"
    stack: str = "eager"
    batch: int = 1
    weights: str = "random-init"
    prompt_tokens: int = 128
    new_tokens: int = 256
    errors: Mapping[str, str] = field(default_factory=dict)
    compiled: Mapping[str, bool] = field(default_factory=dict)  # the rest: null, as on the eager stack


def _measurement(sub: Sub, precision: str, jpt: Sequence[float]) -> dict[str, Any]:
    mean, std = mean_std(jpt) if jpt else (None, None)
    half = ci95_half_width(std, len(jpt)) if jpt and std is not None else None
    return {
        "submission_id": sub.submission_id, "gpu_name": sub.gpu, "software_stack": sub.stack, "batch_size": sub.batch,
        "model_id": f"random-init/m{sub.params}", "architecture": f"m{sub.params}", "weights": sub.weights,
        "params_total": sub.params, "prompt_tokens": sub.prompt_tokens, "new_tokens": sub.new_tokens,
        "precision": precision, "quantization_json": None, "error": sub.errors.get(precision),
        "compiled": sub.compiled.get(precision),
        "n_windows": len(jpt), "j_per_token_mean": mean, "j_per_token_std": std,
        "cv_pct": None if not mean else 100 * (std or 0) / mean,
        "j_per_token_ci95_low": None if half is None or mean is None else mean - half,
        "j_per_token_ci95_high": None if half is None or mean is None else mean + half,
        "ci95_pct": None if half is None or not mean else 100 * half / mean,
        "tokens_per_s": 50.0 if jpt else None, "power_w_mean": 130.0 if jpt else None, "idle_power_w": 122.0,
        "static_j_per_token": None if mean is None else 0.9 * mean, "dynamic_j_per_token": None,
        "dynamic_cv_pct": None, "integral_diff_pct_max": None, "perplexity": None,
    }  # fmt: skip


def frames(subs: Sequence[Sub]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(measurements, windows) tables with the dataset's column names for ``subs``."""
    measurements, windows = [], []
    for sub in subs:
        for precision, jpt in sub.windows.items():
            measurements.append(_measurement(sub, precision, jpt))
            windows += [{"submission_id": sub.submission_id, "precision": precision, "window_index": i,
                         "warmup": False, "j_per_token": v} for i, v in enumerate(jpt)]  # fmt: skip
            windows.append({"submission_id": sub.submission_id, "precision": precision, "window_index": 0,
                            "warmup": True, "j_per_token": 999.0})  # fmt: skip
        for precision in sub.errors:
            measurements.append(_measurement(sub, precision, []))
    return pl.DataFrame(measurements, infer_schema_length=None), pl.DataFrame(windows)


def sweep(changes_pct: Mapping[int, float], *, base: float = 2.0, spread: float = 0.004, n: int = 8,
          precision: str = "nf4", prefix: str = "s", **keys: Any) -> list[Sub]:  # fmt: skip
    """One submission per size whose ``precision`` changes J/token by the given % against fp16."""
    offsets = [spread * ((i % 4) - 1.5) for i in range(n)]
    subs = []
    for i, (params, change) in enumerate(sorted(changes_pct.items())):
        fp16 = [base * (1 + o) for o in offsets]
        quant = [base * (1 + change / 100) * (1 - o) for o in offsets]
        subs.append(Sub(f"{prefix}{i:03d}", params, {"fp16": fp16, precision: quant}, **keys))
    return subs


# Per-size means published by H. Zhang (quant-energy build/measured.csv; J per 1k tokens, NF4 vs FP16, batch 1)
T4 = [(1.1, 4251.21, 4445.26), (1.5, 5731.80, 5744.39), (3.0, 11267.69, 11111.78), (7.0, 21722.65, 18734.94)]
RTX5090 = [(1.1, 1659.00, 2098.44), (1.5, 2411.09, 3120.49), (3.0, 3382.64, 3779.60), (7.0, 5508.56, 4877.88)]
ADA = [(0.5, 1474.16, 2301.07), (1.1, 1600.58, 2134.35), (1.5, 2238.87, 3103.12), (3.0, 2989.22, 3743.12),
       (0.5, 1550.92, 2103.59), (1.1, 1619.68, 1883.91), (1.5, 2200.67, 2533.25), (3.0, 3557.99, 3584.88),
       (7.0, 5467.88, 3911.75)]  # fmt: skip
