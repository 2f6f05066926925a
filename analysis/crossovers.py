"""The crossover: the model size at which a quantized precision stops costing energy and starts saving it.

A crossover belongs to one GPU, one engine, one software stack, one batch size, one workload length, one precision
and one kind of weights (random-init rows never mix with pretrained ones), so :func:`crossover` answers per
``gpu_name x engine x software_stack x batch_size x prompt_tokens x new_tokens x precision x weights``. The engine
matters because its FP16 is its own (llama.cpp's GGUF F16 kernels are not transformers'): a change is taken against
the same engine's baseline and never pooled across engines. The length matters because the prefill is spread over
the generated tokens: 512+64 tokens and 128+256 tokens are two curves, never one.

From the dataset (``measurements`` + ``windows``): each submission gives the change of the precision against
its own FP16 (else BF16) baseline (:func:`ecocompute.analysis.change.change_frame`); submissions of one size
are averaged; the crossing is found by :mod:`ecocompute.analysis.zero_crossing`. The 95% confidence interval is a
percentile bootstrap: resample the windows of every measurement (with replacement, within the measurement),
recompute every change and the crossing, ``n_boot`` times, from ``numpy.random.default_rng(seed)`` (one
generator per group, so a group's answer depends on its own data and the seed only).

From published per-size means (``params``, ``j_per_token_baseline``, ``j_per_token_quantized``, optional
``baseline_std``, ``quantized_std``, ``baseline_n``, ``quantized_n`` or ``n``): the same crossing; the
bootstrap draws each mean from a normal with its standard error ``std / sqrt(n)`` where both are given.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from ecocompute.analysis.change import WORKLOAD_KEYS, change_frame, precision_order
from ecocompute.analysis.defaults import DEFAULT_N_BOOT, DEFAULT_SEED
from ecocompute.analysis.frames import as_polars, like_input, require_columns
from ecocompute.analysis.zero_crossing import (
    METHODS,
    FloatArray,
    cap_for,
    crossing_log10,
    percentile_ci,
    saturating_crossover_b,
)
from ecocompute.schema.errors import UsageError

GROUP_KEYS = ("gpu_name", "engine", "software_stack", "batch_size", *WORKLOAD_KEYS, "precision", "weights")
# above this many submissions of one size, the loglinear bootstrap draws that size's mean change from a normal
RESAMPLE_LIMIT = 50
MEANS_COLUMNS = ("params", "j_per_token_baseline", "j_per_token_quantized")
RESULT_SCHEMA: dict[str, Any] = {
    "gpu_name": pl.String, "engine": pl.String, "software_stack": pl.String, "batch_size": pl.Int64,
    "prompt_tokens": pl.Int64, "new_tokens": pl.Int64, "precision": pl.String, "weights": pl.String,
    "baseline": pl.String, "status": pl.String, "crossover_params": pl.Float64,
    "ci95_low_params": pl.Float64, "ci95_high_params": pl.Float64, "boot_fraction": pl.Float64,
    "params_min": pl.Float64, "params_max": pl.Float64, "n_sizes": pl.Int64, "n_points": pl.Int64,
    "holds": pl.String, "message": pl.String, "method": pl.String, "n_boot": pl.Int64, "seed": pl.Int64,
}  # fmt: skip


@dataclass(frozen=True)
class Point:
    """One change in J/token at one size, with its bootstrap draws (None when it has no spread to draw from)."""

    params: float
    change_pct: float
    draws: FloatArray | None


def format_params(params: float | None) -> str:
    """A parameter count for people: 494M, 1.1B, 4.12B, 14.8B."""
    if params is None or not math.isfinite(params):
        return "n/a"
    if params >= 1e10:
        return f"{params / 1e9:.1f}B"
    if params >= 1e9:
        return f"{params / 1e9:.3g}B"
    return f"{params / 1e6:.3g}M"


def format_tokens(prompt_tokens: object, new_tokens: object) -> str:
    """A workload length for people, prompt + new tokens: 128+256; ``?`` for a length the table lacks."""
    return "+".join("?" if n is None else str(n) for n in (prompt_tokens, new_tokens))


def _holds(size_means: FloatArray) -> str:
    if bool((size_means > 0).all()):
        return "costs more"
    if bool((size_means <= 0).all()):
        return "saves"
    return "mixed"


def _size_means(points: Sequence[Point], sizes: FloatArray, values: FloatArray) -> FloatArray:
    """Mean over the points of each size; ``values`` has shape (B, n_points), result (B, n_sizes)."""
    params = np.array([p.params for p in points])
    return np.stack([values[:, params == size].mean(axis=1) for size in sizes], axis=1)


def _estimate(points: Sequence[Point], sizes: FloatArray, values: FloatArray, method: str, cap: float) -> FloatArray:
    """Crossover (in parameters; NaN where none) for each row of ``values`` (shape (B, n_points))."""
    if method == "loglinear":
        return np.power(10.0, crossing_log10(np.log10(sizes), _size_means(points, sizes, values)))
    params_b = np.array([p.params for p in points]) / 1e9
    found = [saturating_crossover_b(params_b, row, cap) for row in values]
    return np.array([np.nan if f is None else f * 1e9 for f in found])


def _message(status: str, estimate: float | None, ci: tuple[float | None, float | None], sizes: FloatArray,
             holds: str, boot_fraction: float | None, ci_note: str, label: str) -> str:  # fmt: skip
    span = f"between {format_params(float(sizes[0]))} and {format_params(float(sizes[-1]))}"
    if status == "insufficient data":
        return f"only one model size ({format_params(float(sizes[0]))}): a crossover needs at least two"
    if status == "no crossover":
        if holds == "mixed":
            return f"no crossover {span}: {label} never goes from costing more to saving (it changes the other way)"
        if holds == "costs more":
            return f"no crossover {span}: {label} costs more energy per token than the baseline at every size"
        return f"no crossover {span}: {label} saves energy per token at every size"
    text = f"crosses zero at {format_params(estimate)}"
    if ci[0] is not None and ci[1] is not None:
        text += f" (95% CI {format_params(ci[0])}-{format_params(ci[1])})"
    text += f": {label} costs more below, saves above"
    if boot_fraction is not None and boot_fraction < 0.95:
        text += f"; a crossing in only {100 * boot_fraction:.0f}% of bootstrap resamples"
    return text + ci_note


def evaluate_group(points: Sequence[Point], *, method: str, precision: str, n_boot: int) -> dict[str, Any]:
    """Crossover, CI and the words for one group of points."""
    ordered = sorted(points, key=lambda p: p.params)
    sizes = np.unique(np.array([p.params for p in ordered]))
    base = {"params_min": float(sizes[0]), "params_max": float(sizes[-1]), "n_sizes": int(sizes.size),
            "n_points": len(ordered), "method": method}  # fmt: skip
    point_values = np.array([[p.change_pct for p in ordered]])
    holds = _holds(_size_means(ordered, sizes, point_values)[0])
    if sizes.size < 2:
        message = _message("insufficient data", None, (None, None), sizes, holds, None, "", precision)
        return {**base, "status": "insufficient data", "holds": holds, "message": message}
    estimate_raw = float(_estimate(ordered, sizes, point_values, method, cap_for(precision))[0])
    estimate = estimate_raw if math.isfinite(estimate_raw) else None
    status = "crossover" if estimate is not None else "no crossover"
    ci: tuple[float | None, float | None] = (None, None)
    boot_fraction = None
    ci_note = ""
    if n_boot > 0 and all(p.draws is not None for p in ordered):
        draws = np.stack([p.draws for p in ordered if p.draws is not None], axis=1)
        boot = _estimate(ordered, sizes, draws, method, cap_for(precision))
        boot_fraction = float(np.isfinite(boot).mean())
        if estimate is not None:
            low, high = percentile_ci(np.log10(boot[np.isfinite(boot)]))
            ci = (None if low is None else 10**low, None if high is None else 10**high)
    elif estimate is not None:
        ci_note = "; no confidence interval (no per-window samples or std/n to resample)"
    message = _message(status, estimate, ci, sizes, holds, boot_fraction, ci_note, precision)
    return {**base, "status": status, "crossover_params": estimate, "ci95_low_params": ci[0],
            "ci95_high_params": ci[1], "boot_fraction": boot_fraction, "holds": holds, "message": message}  # fmt: skip


Keys = pl.DataFrame  # (submission_id, precision) of the measurements a step needs


def _measured(windows: pl.LazyFrame, keys: Keys) -> pl.LazyFrame:
    """The measured (not warm-up) windows with a J/token of the measurements ``keys`` names."""
    return windows.filter(~pl.col("warmup") & pl.col("j_per_token").is_not_null()).join(
        keys.lazy(), on=["submission_id", "precision"], how="semi"
    )


def _window_samples(windows: pl.LazyFrame, keys: Keys) -> dict[tuple[str, str], FloatArray]:
    require_columns(windows, ("submission_id", "precision", "window_index", "warmup", "j_per_token"), "windows")
    grouped = (
        _measured(windows, keys).group_by("submission_id", "precision")
        .agg(pl.col("j_per_token").sort_by("window_index")).collect()
    )  # fmt: skip
    return {
        (sid, prec): np.asarray(values, dtype=np.float64)
        for sid, prec, values in grouped.iter_rows()
    }  # fmt: skip


def _resampled_means(samples: FloatArray, n_boot: int, rng: np.random.Generator) -> FloatArray:
    index = rng.integers(0, samples.size, size=(n_boot, samples.size))
    means: FloatArray = samples[index].mean(axis=1)
    return means


Stats = dict[tuple[str, str], tuple[float, float]]


def _window_stats(windows: pl.LazyFrame, keys: Keys) -> Stats:
    """Per measurement: the mean J/token of its windows and the variance of its bootstrap mean (plug-in var / n)."""
    grouped = (
        _measured(windows, keys).group_by("submission_id", "precision")
        .agg(pl.col("j_per_token").mean().alias("m"), (pl.col("j_per_token").var(ddof=0) / pl.len()).alias("v"))
        .collect()
    )  # fmt: skip
    return {(sid, prec): (m, v) for sid, prec, m, v in grouped.iter_rows()}


def _window_keys(changes: pl.DataFrame, method: str) -> tuple[Keys, Keys]:
    """The measurements whose windows are resampled, and those of sizes drawn from a normal (:func:`_collapsed`).

    A size with more than RESAMPLE_LIMIT submissions in its group (loglinear only) needs each measurement's window
    mean and variance; every other size its windows. Both sides of each change count: the precision and its
    baseline. Only those windows are read, so a large table is never held whole.
    """
    size = pl.len().over([*GROUP_KEYS, "params_total"])
    collapsed = (size > RESAMPLE_LIMIT) if method == "loglinear" else pl.lit(False)
    flagged = changes.select("submission_id", "precision", "baseline_precision", collapsed.alias("_collapsed"))

    def keys(rows: pl.DataFrame) -> Keys:
        both = pl.concat([rows.select("submission_id", "precision"),
                          rows.select("submission_id", pl.col("baseline_precision").alias("precision"))])  # fmt: skip
        return both.unique()

    return keys(flagged.filter(~pl.col("_collapsed"))), keys(flagged.filter(pl.col("_collapsed")))


def _collapsed(params: float, rows: list[dict[str, Any]], stats: Stats | None, n_boot: int,
               rng: np.random.Generator) -> Point:  # fmt: skip
    """One point for a size with more than RESAMPLE_LIMIT submissions: the mean change, drawn from a normal.

    With that many submissions the bootstrap mean of their changes is normal to a good approximation (central
    limit), with the variance the delta method gives each change's bootstrap, summed and divided by k squared; this
    keeps the bootstrap's cost flat in the number of submissions.
    """
    mean = sum(float(r["change_pct"]) for r in rows) / len(rows)
    if n_boot == 0 or stats is None:
        return Point(params, mean, None)
    total = 0.0
    for row in rows:
        q = stats.get((row["submission_id"], row["precision"]))
        b = stats.get((row["submission_id"], row["baseline_precision"]))
        if q is None or b is None:
            return Point(params, mean, None)
        total += (100.0 * q[0] / b[0]) ** 2 * (q[1] / q[0] ** 2 + b[1] / b[0] ** 2)
    return Point(params, mean, rng.normal(mean, math.sqrt(total) / len(rows), size=n_boot))


def _measurement_points(rows: list[dict[str, Any]], samples: dict[tuple[str, str], FloatArray] | None, n_boot: int,
                        seed: int, method: str = "loglinear", stats: Stats | None = None) -> list[Point]:  # fmt: skip
    """One point per submission (its windows resampled), or per size where a size has over RESAMPLE_LIMIT."""
    rng = np.random.default_rng(seed)
    points = []
    ordered = sorted(rows, key=lambda r: (r["params_total"], r["submission_id"]))
    by_size: dict[float, list[dict[str, Any]]] = {}
    for row in ordered:
        by_size.setdefault(float(row["params_total"]), []).append(row)
    for params, mine in by_size.items():
        if method == "loglinear" and len(mine) > RESAMPLE_LIMIT:
            points.append(_collapsed(params, mine, stats, n_boot, rng))
            continue
        for row in mine:
            draws = None
            quantized = None if samples is None else samples.get((row["submission_id"], row["precision"]))
            baseline = None if samples is None else samples.get((row["submission_id"], row["baseline_precision"]))
            if n_boot > 0 and quantized is not None and baseline is not None:
                ratio = _resampled_means(quantized, n_boot, rng) / _resampled_means(baseline, n_boot, rng)
                draws = 100.0 * (ratio - 1.0)
            points.append(Point(params, float(row["change_pct"]), draws))
    return points


def _precisions(precision: str | Sequence[str] | None) -> list[str] | None:
    """As ``collect`` reads them: case and comma lists; an unknown name raises naming the valid ones."""
    from ecocompute.analysis.selection import parse_precisions

    return parse_precisions(precision)


def _from_measurements(measurements: pl.DataFrame, windows: pl.DataFrame | pl.LazyFrame | None,
                       precision: list[str] | None, method: str, n_boot: int,
                       seed: int) -> list[dict[str, Any]]:  # fmt: skip
    changes = change_frame(measurements)
    if precision is not None:
        changes = changes.filter(pl.col("precision").is_in(precision))
    samples, stats = None, None
    if windows is not None:
        resampled, collapsed = _window_keys(changes, method)
        samples = _window_samples(windows.lazy(), resampled)
        stats = _window_stats(windows.lazy(), collapsed)
    results = []
    for key, group in changes.group_by(list(GROUP_KEYS), maintain_order=True):
        label = dict(zip(GROUP_KEYS, key, strict=True))
        rows = group.to_dicts()
        points = _measurement_points(rows, samples, n_boot, seed, method, stats)
        found = evaluate_group(points, method=method, precision=str(label["precision"]), n_boot=n_boot)
        baseline = "+".join(sorted({r["baseline_precision"] for r in rows}))
        results.append({**label, "baseline": baseline, **found})
    return results


def _normal_draws(mean: float, std: float | None, n: float | None, n_boot: int, rng: np.random.Generator) -> FloatArray:
    if std is None or n is None or not n >= 1 or not std >= 0:
        return np.full(n_boot, mean)
    return rng.normal(mean, std / math.sqrt(n), size=n_boot)


def _means_points(rows: list[dict[str, Any]], n_boot: int, seed: int) -> list[Point]:
    rng = np.random.default_rng(seed)
    points = []
    for row in sorted(rows, key=lambda r: r["params"]):
        base, quant = float(row["j_per_token_baseline"]), float(row["j_per_token_quantized"])
        n_b = row.get("baseline_n", row.get("n"))
        n_q = row.get("quantized_n", row.get("n"))
        has_spread = any(row.get(k) is not None for k in ("baseline_std", "quantized_std"))
        draws = None
        if n_boot > 0 and has_spread:
            b = _normal_draws(base, row.get("baseline_std"), n_b, n_boot, rng)
            q = _normal_draws(quant, row.get("quantized_std"), n_q, n_boot, rng)
            draws = 100.0 * (q / b - 1.0)
        points.append(Point(float(row["params"]), 100.0 * (quant / base - 1.0), draws))
    return points


def _from_means(means: pl.DataFrame, precision: list[str] | None, method: str, n_boot: int,
                seed: int) -> list[dict[str, Any]]:  # fmt: skip
    if precision is not None and "precision" in means.columns:
        means = means.filter(pl.col("precision").is_in(precision))
    if means.filter(pl.col("params") <= 0).height or means.filter(pl.col("j_per_token_baseline") <= 0).height:
        raise UsageError("params and j_per_token_baseline must be positive in every row")
    keys = [k for k in GROUP_KEYS if k in means.columns]
    groups = means.group_by(keys, maintain_order=True) if keys else [((), means)]
    results = []
    for key, group in groups:
        label = dict(zip(keys, key, strict=True))
        points = _means_points(group.to_dicts(), n_boot, seed)
        prec = str(label.get("precision") or (precision[0] if precision else "the quantized precision"))
        results.append({**label, "baseline": None, **evaluate_group(points, method=method, precision=prec,
                                                                  n_boot=n_boot)})  # fmt: skip
    return results


def crossover_frame(
    data: pl.DataFrame,
    windows: pl.DataFrame | pl.LazyFrame | None = None,
    *,
    precision: str | Sequence[str] | None = None,
    method: str = "loglinear",
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = DEFAULT_SEED,
) -> pl.DataFrame:
    """Polars core of :func:`crossover`."""
    if method not in METHODS:
        raise UsageError(f"method {method!r} is not one of {', '.join(METHODS)}")
    if n_boot < 0:
        raise UsageError("n_boot must be 0 (no confidence interval) or more")
    wanted = _precisions(precision)
    if all(c in data.columns for c in MEANS_COLUMNS):
        rows = _from_means(data, wanted, method, n_boot, seed)
    else:
        rows = _from_measurements(data, windows, wanted, method, n_boot, seed)
    rows = [{**row, "n_boot": n_boot, "seed": seed} for row in rows]
    frame = pl.DataFrame(rows, schema=RESULT_SCHEMA, orient="row") if rows else pl.DataFrame(schema=RESULT_SCHEMA)
    keys = [key for k in GROUP_KEYS for key in ((precision_order(), k) if k == "precision" else (k,))]
    return frame.sort(keys, nulls_last=True)


def crossover(
    data: Any,
    windows: Any = None,
    *,
    precision: str | Sequence[str] | None = None,
    method: str = "loglinear",
    n_boot: int = DEFAULT_N_BOOT,
    seed: int = DEFAULT_SEED,
) -> Any:
    """Model size where quantization stops costing energy, per GPU x engine x stack x batch x length x precision.

    One answer per kind of weights too. ``data`` is either the dataset's ``measurements`` table (then pass its
    ``windows`` table too, for the bootstrap 95% CI) or a table of per-size means with the columns ``params`` (a
    parameter count, e.g. ``3.0e9``), ``j_per_token_baseline``, ``j_per_token_quantized`` and optionally
    ``baseline_std``, ``quantized_std``, ``baseline_n``, ``quantized_n`` (or ``n``) and any of ``gpu_name``,
    ``engine``, ``software_stack``, ``batch_size``, ``prompt_tokens``, ``new_tokens``, ``precision``, ``weights``
    to group by (those it lacks are null in the result). The workload length is ``prompt_tokens`` +
    ``new_tokens``; a measurements table without ``prompt_tokens`` (an older version) groups its rows as one
    unknown prompt length, and one without ``engine`` reads as transformers.

    ``method`` is ``"loglinear"`` (interpolate linearly in log10(params) between the two sizes that bracket the
    largest positive-to-negative sign change) or ``"saturating"`` (the curve fit behind the published T4/RTX
    4090/RTX 5090 crossovers; see :mod:`ecocompute.analysis.zero_crossing`). ``seed`` seeds the bootstrap and is
    reported in the result.

    Returns one row per group: ``status`` ("crossover", "no crossover" or "insufficient data"),
    ``crossover_params`` with ``ci95_low_params``/``ci95_high_params``, ``holds`` (which sign the change
    holds when it does not cross), ``boot_fraction`` (share of resamples that cross) and a ``message``.

    Example::

        crossover(measurements, windows, precision="nf4")
    """
    win = None if windows is None else as_polars(windows, "windows")
    result = crossover_frame(
        as_polars(data, "measurements"), win, precision=precision, method=method, n_boot=n_boot, seed=seed
    )
    return like_input(result, data)
