"""Markdown sections over :class:`ecocompute.analysis.results.Results`, for the dataset card and reports alike.

They render frames and compute nothing; the words around them live in the templates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from ecocompute.analysis.crossovers import format_params, format_tokens
from ecocompute.analysis.defaults import STACK, precision_rank
from ecocompute.analysis.frames import matching
from ecocompute.analysis.j_per_token import torch_compile_ran
from ecocompute.analysis.results import Results
from ecocompute.schema.models import ENGINE

# one table and one figure per GPU x engine x stack x batch x workload length x weights: J/token depends on the
# length (the prefill is spread over the new tokens) and on the engine (its own FP16 kernels), so no table or
# figure mixes two lengths or two engines
GROUP_KEYS = ("gpu_name", "engine", STACK, "batch_size", "prompt_tokens", "new_tokens", "weights")


def names_engine(engine: object) -> bool:
    """Whether titles and file names name ``engine``: not transformers, the engine of every table before engines."""
    return engine not in (None, ENGINE)


def engine_words(engine: object) -> str:
    """The engine as a title names it: nothing for transformers."""
    return f"{engine} · " if names_engine(engine) else ""


def group_title(key: Sequence[object], sep: str = " · ") -> str:
    """A group of GROUP_KEYS for people (a figure passes a newline as ``sep``, so its title fits)."""
    gpu, engine, stack, batch, prompt, new, weights = key
    return (
        f"{gpu}{sep}{engine_words(engine)}{stack} stack · batch {batch} · {format_tokens(prompt, new)} tokens · "
        f"{weights} weights"
    )


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub markdown table ('|' in a cell becomes '/')."""

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "/") for cell in cells) + " |"

    return "\n".join([line(header), line(["---"] * len(header)), *(line(r) for r in rows)])


def change_text(row: dict[str, Any]) -> str:
    """A pooled change for people: +12.3% [+10.1, +14.5] (n=3)."""
    text = f"{row['change_pct']:+.1f}%"
    if row["ci95_low_pct"] is not None and row["ci95_high_pct"] is not None:
        text += f" [{row['ci95_low_pct']:+.1f}, {row['ci95_high_pct']:+.1f}]"
    if row["n_submissions"] > 1:
        text += f" (n={row['n_submissions']})"
    return text


def _cell_j_per_token(row: dict[str, Any]) -> str:
    text = f"{row['j_per_token']:.4f}"
    if row["ci95_pct_max"] is not None:
        text += f" ±{row['ci95_pct_max']:.2f}%"
    if isinstance(row["n_submissions"], int) and row["n_submissions"] > 1:
        text += f" (n={row['n_submissions']})"
    return text


def _cell_split(row: dict[str, Any]) -> str:
    if row["dynamic_j_per_token"] is None or row["static_share_pct"] is None:
        return "not recorded"
    return f"{row['dynamic_j_per_token']:.4f} ({row['static_share_pct']:.0f}% static)"


def _precisions(rows: pl.DataFrame) -> list[str]:
    return sorted(rows["precision"].unique().to_list(), key=precision_rank)


def _model_rows(rows: pl.DataFrame, precisions: Sequence[str], cell: Callable[[dict[str, Any]], str],
                more: Callable[[str, int], list[str]] | None = None) -> list[list[str]]:  # fmt: skip
    """Per model (smallest first): name, size, ``cell`` of each precision and ``more`` (from the model's name, size)."""
    out = []
    models = rows.select("architecture", "params_total").unique().sort("params_total", "architecture").iter_rows()
    for architecture, params in models:
        mine = rows.filter((pl.col("architecture") == architecture) & (pl.col("params_total") == params))
        by_precision = {r["precision"]: cell(r) for r in mine.iter_rows(named=True)}
        extra = more(architecture, params) if more is not None else []
        out.append([architecture, format_params(float(params)), *[by_precision.get(p, "") for p in precisions],
                    *extra])  # fmt: skip
    return out


def per_group(rows: pl.DataFrame, render: Callable[[tuple[object, ...], pl.DataFrame], str]) -> str:
    """``render`` of each group of GROUP_KEYS (its key and rows), in key order."""
    if rows.height == 0:
        return "No measurements yet."
    keys = rows.select(GROUP_KEYS).unique().sort(list(GROUP_KEYS), nulls_last=True).iter_rows()
    return "\n\n".join(render(key, rows.filter(matching(GROUP_KEYS, key))) for key in keys)


def j_per_token_sections(results: Results, heading: str = "###") -> str:
    """One table per group: J/token of each precision and its pooled change against FP16 (else BF16)."""

    def group(key: tuple[object, ...], rows: pl.DataFrame) -> str:
        precisions = _precisions(rows)
        quantized = [p for p in precisions if p not in ("fp16",)]
        pooled = results.pooled.filter(matching(GROUP_KEYS, key)) if results.pooled.height else results.pooled

        def changes(architecture: str, params: int) -> list[str]:
            mine = pooled.filter((pl.col("architecture") == architecture) & (pl.col("params_total") == params))
            by_precision = {r["precision"]: change_text(r) for r in mine.iter_rows(named=True)}
            return [by_precision.get(p, "") for p in quantized]

        header = ["model", "params", *[f"{p} J/token" for p in precisions], *[f"{p} change" for p in quantized]]
        table = markdown_table(header, _model_rows(rows, precisions, _cell_j_per_token, changes))
        return f"{heading} {group_title(key)}\n\n{table}"

    return per_group(results.j_per_token, group)


def split_sections(results: Results, heading: str = "###") -> str:
    """One table per group: each precision's dynamic J/token and the static share of its J/token."""

    def group(key: tuple[object, ...], rows: pl.DataFrame) -> str:
        precisions = _precisions(rows)
        header = ["model", "params", *[f"{p} dynamic J/token (static share)" for p in precisions]]
        return f"{heading} {group_title(key)}\n\n{markdown_table(header, _model_rows(rows, precisions, _cell_split))}"

    return per_group(results.j_per_token, group)


def crossover_text(row: dict[str, Any]) -> str:
    """A crossover for people: 690M (95% CI 538M-2.02B), or the sentence saying there is none."""
    if row["crossover_params"] is None:
        return str(row["message"])
    text = format_params(row["crossover_params"])
    if row["ci95_low_params"] is not None and row["ci95_high_params"] is not None:
        text += f" (95% CI {format_params(row['ci95_low_params'])}-{format_params(row['ci95_high_params'])})"
    return text


def crossover_section(results: Results) -> str:
    """The crossover table with 95% CIs, or a sentence when there is nothing to cross."""
    if results.crossovers.height == 0:
        return "No submission has both a quantized precision and an FP16/BF16 baseline yet."
    rows = []
    for r in results.crossovers.iter_rows(named=True):
        ci = ""
        if r["ci95_low_params"] is not None and r["ci95_high_params"] is not None:
            ci = f"{format_params(r['ci95_low_params'])}-{format_params(r['ci95_high_params'])}"
        at = format_params(r["crossover_params"]) if r["crossover_params"] is not None else "none"
        rows.append([r["gpu_name"], r["engine"], r[STACK], str(r["batch_size"]),
                     format_tokens(r["prompt_tokens"], r["new_tokens"]), r["precision"], r["weights"],
                     f"{format_params(r['params_min'])}-{format_params(r['params_max'])} ({r['n_sizes']})", at, ci,
                     r["message"]])  # fmt: skip
    header = ["GPU", "engine", "stack", "batch", "tokens", "precision", "weights", "sizes measured", "crossover",
              "95% CI", "result"]  # fmt: skip
    return markdown_table(header, rows)


def stack_section(results: Results) -> str:
    """J/token on the eager and the compiled stacks, per model and precision measured on both."""
    if results.stack.height == 0:
        return "No model has been measured on both the eager and a compiled stack yet."
    rows = [[r["gpu_name"], str(r["batch_size"]), format_tokens(r["prompt_tokens"], r["new_tokens"]), r["weights"],
             r["architecture"], format_params(float(r["params_total"])), r["precision"], r["compiled_stack"],
             f"{r['eager_j_per_token']:.4f}", f"{r['compiled_j_per_token']:.4f}", torch_compile_ran(r),
             f"{r['change_pct']:+.1f}%"]
            for r in results.stack.iter_rows(named=True)]  # fmt: skip
    header = ["GPU", "batch", "tokens", "weights", "model", "params", "precision", "compiled stack", "eager J/token",
              "compiled J/token", "torch.compile ran", "compiled vs eager"]  # fmt: skip
    return markdown_table(header, rows)


def sensor_section(results: Results) -> str:
    """How far NVML's energy counter and the 10 Hz power integral were apart, over the measured windows."""
    row = results.sensor.row(0, named=True)
    if not row["measured_windows"]:
        return "No measured windows yet."
    return (
        f"NVML's energy counter and the 10 Hz integral of its power readings agree within "
        f"{row['integral_diff_pct_max']:.2f}% in every one of the {row['measured_windows']} measured windows of "
        f"`{results.config}`'s rows (`integral_diff_pct` in the windows table; the validator rejects a window above "
        f"5%). The largest gap is in submission `{row['submission_id']}`, {row['precision']}, measured window "
        f"{row['window_index']}."
    )


def stack_summary_section(results: Results) -> str:
    """Compiling against eager in one line per GPU x batch x length x weights x precision x compiled stack.

    The range of the change over the sizes measured on both stacks (``stack_table`` has every size).
    """
    if results.stack.height == 0:
        return "No model has been measured on both the eager and a compiled stack yet."
    keys = ["gpu_name", "batch_size", "prompt_tokens", "new_tokens", "weights", "compiled_stack", "precision"]
    summary = (
        results.stack.group_by(keys)
        .agg(
            pl.len().alias("sizes"),
            pl.col("change_pct").min().alias("low"),
            pl.col("change_pct").max().alias("high"),
            pl.col("params_total").min().alias("smallest"),
            pl.col("params_total").max().alias("largest"),
        )
        .with_columns(
            pl.col("precision").map_elements(lambda p: precision_rank(p)[0], return_dtype=pl.Int64).alias("_r")
        )
        .sort([*keys[:-1], "_r"], nulls_last=True)
    )
    rows = [[r["gpu_name"], str(r["batch_size"]), format_tokens(r["prompt_tokens"], r["new_tokens"]), r["weights"],
             r["compiled_stack"], r["precision"],
             f"{format_params(float(r['smallest']))}-{format_params(float(r['largest']))} ({r['sizes']})",
             f"{r['low']:+.1f}% to {r['high']:+.1f}%"] for r in summary.iter_rows(named=True)]  # fmt: skip
    header = ["GPU", "batch", "tokens", "weights", "compiled stack", "precision", "sizes on both", "compiled vs eager"]
    return markdown_table(header, rows)
