"""The analysis of one tier of the dataset, computed once, for the card, the figures, the findings and reports.

:func:`analyse` takes a ``measurements`` table and its ``windows`` (either tier) and returns :class:`Results`:
the J/token table, the per-submission and pooled changes against FP16 (else BF16), the crossovers with their
bootstrap CI, the stack-against-precision pairs and the sensor check. Renderers (:mod:`.sections`, the
publisher's card and figures) read these frames and compute nothing themselves.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ecocompute.analysis.change import change_frame, pooled_change_frame
from ecocompute.analysis.crossovers import crossover_frame
from ecocompute.analysis.defaults import DEFAULT_N_BOOT, DEFAULT_SEED
from ecocompute.analysis.j_per_token import j_per_token_frame, stack_frame

WINDOW_COLUMNS = ("submission_id", "precision", "window_index", "warmup", "j_per_token", "integral_diff_pct")
SENSOR_SCHEMA = {"measured_windows": pl.Int64, "warmup_windows": pl.Int64, "integral_diff_pct_max": pl.Float64,
                 "submission_id": pl.String, "precision": pl.String, "window_index": pl.Int64}  # fmt: skip


@dataclass(frozen=True)
class Results:
    """Every analysis of one tier. ``config`` names the measurements config the rows came from."""

    config: str
    measurements: pl.DataFrame
    j_per_token: pl.DataFrame
    changes: pl.DataFrame
    pooled: pl.DataFrame
    crossovers: pl.DataFrame
    stack: pl.DataFrame
    sensor: pl.DataFrame
    n_boot: int
    seed: int


def sensor_frame(windows: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    """One row: how many windows were measured and the largest counter-vs-integral gap among them, where."""
    lazy = windows.lazy()
    counts = lazy.select(pl.len().alias("all"), (~pl.col("warmup")).sum().alias("measured")).collect()
    total, measured = int(counts["all"][0]), int(counts["measured"][0])
    warmups = total - measured
    if measured == 0:
        return pl.DataFrame([{"measured_windows": 0, "warmup_windows": warmups}], schema=SENSOR_SCHEMA)
    order = ["integral_diff_pct", "submission_id", "precision", "window_index"]
    worst = (
        lazy.filter(~pl.col("warmup")).select(order)
        .sort(order, descending=[True, False, False, False]).head(1).collect().row(0, named=True)
    )  # fmt: skip
    row = {"measured_windows": measured, "warmup_windows": warmups,
           "integral_diff_pct_max": worst["integral_diff_pct"],
           **{k: worst[k] for k in ("submission_id", "precision", "window_index")}}  # fmt: skip
    return pl.DataFrame([row], schema=SENSOR_SCHEMA)


def analyse(
    measurements: pl.DataFrame,
    windows: pl.DataFrame | pl.LazyFrame,
    *,
    config: str = "measurements",
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = DEFAULT_SEED,
) -> Results:
    """Every analysis of ``measurements`` (and the windows behind them: six columns read, never all at once)."""
    samples = windows.lazy().select(WINDOW_COLUMNS)  # read in parts where needed, never held whole
    j_per_token = j_per_token_frame(measurements)
    changes = change_frame(measurements)
    return Results(
        config=config, measurements=measurements, j_per_token=j_per_token, changes=changes,
        pooled=pooled_change_frame(changes),
        crossovers=crossover_frame(measurements, samples, n_boot=n_boot, seed=seed),
        stack=stack_frame(j_per_token), sensor=sensor_frame(samples), n_boot=n_boot, seed=seed,
    )  # fmt: skip
