"""The change in energy per token of each precision against the same submission's baseline.

The baseline of a submission is its FP16 measurement, else its BF16 one; submissions with neither have no
change. Change is ``100 * (J/token / baseline J/token - 1)``: positive means the precision costs more energy.

Its 95% confidence interval comes from the delta method on the log of the ratio of the two means:
``se = sqrt(cv_q^2 / n_q + cv_b^2 / n_b)`` (cv = std / mean of the per-window J/token of each measurement, as
:func:`ecocompute.schema.derive.derive` computed them), with a Student t quantile at the Welch-Satterthwaite
degrees of freedom, so the interval is ``100 * (ratio * exp(+-t * se) - 1)``.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from ecocompute.analysis.defaults import PRECISION_ORDER, STACK
from ecocompute.analysis.frames import as_polars, like_input, require_columns, with_engine, with_null_columns
from ecocompute.schema.derive import t_quantile_975

BASELINES = ("fp16", "bf16")
MEASUREMENT_COLUMNS = (
    "submission_id", "gpu_name", "software_stack", "batch_size", "weights", "model_id", "architecture",
    "params_total", "new_tokens", "precision", "error", "n_windows", "j_per_token_mean", "j_per_token_std",
)  # fmt: skip
# The workload length: prefill energy is spread over the generated tokens, so J/token depends on both lengths and
# measurements of different lengths are never pooled. Older measurements tables lack prompt_tokens (read as null).
WORKLOAD_KEYS = ("prompt_tokens", "new_tokens")
KEY_COLUMNS = (
    "submission_id",
    "gpu_name",
    "engine",  # llama.cpp's fp16 is never transformers' baseline, nor pooled with it
    "software_stack",
    "batch_size",
    *WORKLOAD_KEYS,
    "weights",
    "model_id",
    "architecture",
    "params_total",
)


def precision_order() -> pl.Expr:
    """A sort key of the ``precision`` column in :data:`~ecocompute.analysis.defaults.PRECISION_ORDER`."""
    ranks = {p: i for i, p in enumerate(PRECISION_ORDER)}
    return pl.col("precision").replace_strict(ranks, default=len(ranks), return_dtype=pl.Int64)


def usable_measurements(measurements: pl.DataFrame) -> pl.DataFrame:
    """Measurements that have windows, no error and a J/token mean; ``prompt_tokens`` null where not recorded.

    An older measurements table has no ``prompt_tokens``: its rows group together as one unknown prompt length
    rather than failing, and every result still names ``new_tokens``.
    """
    require_columns(measurements, MEASUREMENT_COLUMNS, "measurements")
    measurements = with_engine(with_null_columns(measurements, {"prompt_tokens": pl.Int64}))
    return measurements.filter(
        pl.col("error").is_null() & (pl.col("n_windows") > 0) & pl.col("j_per_token_mean").is_not_null()
    )


# a baseline pairs within one submission and one engine: an engine is the workload's, so a submission has one, and
# the engine in the key says so where a frame is joined on it
BASELINE_KEYS = ("submission_id", "engine")


def baselines(measurements: pl.DataFrame) -> pl.DataFrame:
    """One row per submission x engine: its baseline precision (fp16, else bf16) and that measurement's figures.

    ``measurements`` comes from :func:`usable_measurements` (so it has an ``engine`` column).
    """
    ranked = measurements.filter(pl.col("precision").is_in(BASELINES)).with_columns(
        pl.col("precision").replace_strict({p: i for i, p in enumerate(BASELINES)}, return_dtype=pl.Int8).alias("_rank")
    )
    first = ranked.sort(*BASELINE_KEYS, "_rank").unique(list(BASELINE_KEYS), keep="first", maintain_order=True)
    return first.select(
        *BASELINE_KEYS,
        pl.col("precision").alias("baseline_precision"),
        pl.col("j_per_token_mean").alias("j_per_token_baseline"),
        pl.col("j_per_token_std").alias("j_per_token_std_baseline"),
        pl.col("n_windows").alias("n_windows_baseline"),
    )


def ratio_ci95(
    mean_q: float, std_q: float, n_q: int, mean_b: float, std_b: float, n_b: int
) -> tuple[float | None, float | None]:
    """95% CI of ``100 * (mean_q / mean_b - 1)`` by the delta method on the log ratio (None when n < 2)."""
    if n_q < 2 or n_b < 2 or mean_q <= 0 or mean_b <= 0:
        return None, None
    ratio = mean_q / mean_b
    a = (std_q / mean_q) ** 2 / n_q
    b = (std_b / mean_b) ** 2 / n_b
    if a + b == 0:
        return 100.0 * (ratio - 1), 100.0 * (ratio - 1)
    dof = (a + b) ** 2 / (a**2 / (n_q - 1) + b**2 / (n_b - 1))
    half = t_quantile_975(max(1, math.floor(dof))) * math.sqrt(a + b)
    return 100.0 * (ratio * math.exp(-half) - 1), 100.0 * (ratio * math.exp(half) - 1)


def ratio_ci95_columns(joined: pl.DataFrame) -> tuple[pl.Series, pl.Series]:
    """:func:`ratio_ci95` of every row of ``joined`` (a measurement beside its baseline), computed by column."""
    f = joined.select(
        q=pl.col("j_per_token_mean"), sq=pl.col("j_per_token_std").fill_null(0.0), nq=pl.col("n_windows"),
        b=pl.col("j_per_token_baseline"), sb=pl.col("j_per_token_std_baseline").fill_null(0.0),
        nb=pl.col("n_windows_baseline"),
    ).with_columns(
        ok=(pl.col("nq") >= 2) & (pl.col("nb") >= 2) & (pl.col("q") > 0) & (pl.col("b") > 0),
        a=(pl.col("sq") / pl.col("q")) ** 2 / pl.col("nq"),
        c=(pl.col("sb") / pl.col("b")) ** 2 / pl.col("nb"),
        ratio=pl.col("q") / pl.col("b"),
    )  # fmt: skip
    spread = pl.col("a") + pl.col("c")
    dof = spread**2 / (pl.col("a") ** 2 / (pl.col("nq") - 1) + pl.col("c") ** 2 / (pl.col("nb") - 1))
    f = f.with_columns(dof=pl.when(pl.col("ok") & (spread > 0)).then(dof.floor().clip(lower_bound=1)).cast(pl.Int64))
    quantiles = {int(d): t_quantile_975(int(d)) for d in f["dof"].drop_nulls().unique().to_list()}
    half = pl.col("dof").replace_strict(quantiles, default=None, return_dtype=pl.Float64) * spread.sqrt()
    point = 100.0 * (pl.col("ratio") - 1)
    start = pl.when(~pl.col("ok")).then(None).when(spread == 0).then(point)
    high = start.otherwise(100.0 * (pl.col("ratio") * half.exp() - 1))
    low = start.otherwise(100.0 * (pl.col("ratio") * (-half).exp() - 1))
    out = f.select(low.cast(pl.Float64).alias("low"), high.cast(pl.Float64).alias("high"))
    return out["low"], out["high"]


def change_frame(measurements: pl.DataFrame) -> pl.DataFrame:
    """The change of every non-baseline measurement against its submission's baseline, with the delta-method CI."""
    usable = usable_measurements(measurements)
    joined = usable.join(baselines(usable), on=list(BASELINE_KEYS), how="inner").filter(
        pl.col("precision") != pl.col("baseline_precision")
    )
    lows, highs = ratio_ci95_columns(joined)
    result = joined.select(
        *KEY_COLUMNS,
        "precision",
        "baseline_precision",
        pl.col("j_per_token_mean").alias("j_per_token"),
        "j_per_token_baseline",
        (100.0 * (pl.col("j_per_token_mean") / pl.col("j_per_token_baseline") - 1)).alias("change_pct"),
        lows.alias("ci95_low_pct"),
        highs.alias("ci95_high_pct"),
        "n_windows",
        "n_windows_baseline",
    )
    return result.sort(
        "gpu_name",
        "engine",
        "software_stack",
        "batch_size",
        *WORKLOAD_KEYS,
        "weights",
        precision_order(),
        "precision",
        "params_total",
        "submission_id",
    )


def change_vs_baseline(measurements: Any, windows: Any = None) -> Any:
    """Percent change in J/token of each precision against the same submission's FP16 (else BF16) baseline.

    ``measurements`` is the dataset's ``measurements`` table (polars, pandas or a ``datasets.Dataset``).
    ``windows`` is accepted for symmetry with :func:`ecocompute.analysis.crossovers` and may be None: the
    delta-method interval needs only each measurement's mean, std and number of windows, which the
    measurements table carries. Returns one row per submission x non-baseline precision with
    ``change_pct`` and its 95% CI (``ci95_low_pct``, ``ci95_high_pct``), in the kind of frame given.

    Example::

        from datasets import load_dataset
        m = load_dataset("ORG/NAME", "measurements", split="train")
        change_vs_baseline(m)
    """
    if windows is not None:
        as_polars(windows, "windows")  # reject a wrong type early, the same way as crossover()
    return like_input(change_frame(as_polars(measurements, "measurements")), measurements)


POOL_KEYS = (
    "gpu_name", "engine", STACK, "batch_size", *WORKLOAD_KEYS, "weights", "architecture", "params_total", "precision"
)  # fmt: skip


def pooled_change_frame(changes: pl.DataFrame) -> pl.DataFrame:
    """The change of each cell pooled across its submissions, from :func:`change_frame`'s rows.

    The pooled change is the geometric mean of the submissions' ratios, ``100 * (exp(mean(log r)) - 1)``. With two
    or more submissions its 95% CI is a Student t interval over their log ratios (so it carries the spread between
    submissions: hosts, hours); with one, it is that submission's delta-method CI.
    """
    logged = changes.with_columns(
        (1 + pl.col("change_pct") / 100).log().alias("_log"),
        (1 + pl.col("ci95_low_pct") / 100).log().alias("_log_low"),
        (1 + pl.col("ci95_high_pct") / 100).log().alias("_log_high"),
    )
    grouped = logged.group_by(list(POOL_KEYS)).agg(
        pl.len().alias("n_submissions"),
        pl.col("_log").mean().alias("_mean"),
        pl.col("_log").std().alias("_std"),
        pl.col("_log_low").first().alias("_low1"),
        pl.col("_log_high").first().alias("_high1"),
        pl.col("change_pct").min().alias("change_min_pct"),
        pl.col("change_pct").max().alias("change_max_pct"),
        pl.col("baseline_precision").unique().sort().str.join("+").alias("baseline_precision"),
        pl.col("submission_id").sort().str.join(",").alias("submission_ids"),
    )
    dofs = sorted({int(k) - 1 for k in grouped["n_submissions"].to_list() if k > 1})
    t = {dof: t_quantile_975(dof) for dof in dofs}
    half = (
        (pl.col("n_submissions") - 1).replace_strict(t, default=None, return_dtype=pl.Float64)
        * pl.col("_std")
        / pl.col("n_submissions").sqrt()
    )
    several = pl.col("n_submissions") > 1
    pooled = grouped.with_columns(
        (100 * (pl.col("_mean").exp() - 1)).alias("change_pct"),
        (100 * (pl.when(several).then(pl.col("_mean") - half).otherwise(pl.col("_low1")).exp() - 1)).alias(
            "ci95_low_pct"
        ),
        (100 * (pl.when(several).then(pl.col("_mean") + half).otherwise(pl.col("_high1")).exp() - 1)).alias(
            "ci95_high_pct"
        ),
    ).drop("_mean", "_std", "_low1", "_high1")
    return pooled.sort(
        "gpu_name", "engine", STACK, "batch_size", *WORKLOAD_KEYS, "weights", precision_order(), "precision",
        "params_total",
    )  # fmt: skip


def change_table(measurements: Any, *, precision: Any = None, pooled: bool = False) -> Any:
    """The change in J/token against the same submission's FP16 (else BF16), per submission or pooled.

    ``precision`` keeps the changes of those precisions (``"int8"``, ``"nf4,int8-t0"``); filter here rather than
    selecting the precision beforehand, which would drop the baseline the change needs. ``pooled=False``: one row
    per submission x precision (:func:`change_vs_baseline`); ``pooled=True``: one row per GPU x engine x stack x
    batch x length x weights x model x precision over its submissions (:func:`pooled_change_frame`), with
    ``n_submissions`` and ``submission_ids``.

    Example::

        change_table(select(m, gpu="h200", stack="eager", batch=1), precision="int8", pooled=True)
    """
    from ecocompute.analysis.selection import parse_precisions

    wanted = parse_precisions(precision)
    per_submission = change_frame(as_polars(measurements, "measurements"))
    if wanted is not None:
        per_submission = per_submission.filter(pl.col("precision").is_in(wanted))
    return like_input(pooled_change_frame(per_submission) if pooled else per_submission, measurements)
