"""Energy per token by GPU x engine x stack x batch x workload length x weights x model x precision."""

from __future__ import annotations

import warnings
from typing import Any

import polars as pl

from ecocompute.analysis.change import WORKLOAD_KEYS, precision_order, usable_measurements
from ecocompute.analysis.defaults import STACK
from ecocompute.analysis.frames import as_polars, like_input, with_null_columns
from ecocompute.schema.derive import J_PER_WH
from ecocompute.schema.models import Stack

J_PER_TOKEN_KEYS = (
    "gpu_name",
    "engine",  # llama.cpp's fp16 and transformers' are different cells
    STACK,
    "batch_size",
    *WORKLOAD_KEYS,
    "weights",
    "architecture",
    "params_total",
    "precision",
)


def energy_units(column: str) -> list[pl.Expr]:
    """Wh per 1,000 tokens and tokens per kWh from a J/token ``column`` (1 Wh = 3,600 J)."""
    return [
        (pl.col(column) * 1000 / J_PER_WH).alias("wh_per_1k_tokens"),
        (1000 * J_PER_WH / pl.col(column)).alias("tokens_per_kwh"),
    ]


def _sorted_by_precision(frame: pl.DataFrame, *keys: str) -> pl.DataFrame:
    """``frame`` sorted by ``keys``, then precisions in their usual order (fp16, bf16, ...), then by name."""
    return frame.sort(*keys, precision_order(), "precision")


def j_per_token_frame(measurements: pl.DataFrame) -> pl.DataFrame:
    """Polars core of :func:`j_per_token_table`."""
    usable = usable_measurements(measurements)
    optional = dict.fromkeys(
        ("ci95_pct", "cv_pct", "tokens_per_s", "static_j_per_token", "dynamic_j_per_token"), pl.Float64
    )
    usable = with_null_columns(usable, {**optional, "compiled": pl.Boolean})
    grouped = (
        usable.group_by(list(J_PER_TOKEN_KEYS))
        .agg(
            pl.len().alias("n_submissions"),
            pl.col("n_windows").sum().alias("n_windows"),
            pl.col("j_per_token_mean").mean().alias("j_per_token"),
            pl.col("j_per_token_mean").min().alias("j_per_token_min"),
            pl.col("j_per_token_mean").max().alias("j_per_token_max"),
            pl.col("ci95_pct").max().alias("ci95_pct_max"),
            pl.col("cv_pct").max().alias("cv_pct_max"),
            pl.col("tokens_per_s").mean().alias("tokens_per_s"),
            (100 * pl.col("static_j_per_token") / pl.col("j_per_token_mean")).mean().alias("static_share_pct"),
            pl.col("dynamic_j_per_token").mean().alias("dynamic_j_per_token"),
            (pl.col("compiled") == True).sum().alias("n_compiled"),  # noqa: E712 - a null (not recorded) counts in neither
            (pl.col("compiled") == False).sum().alias("n_not_compiled"),  # noqa: E712
        )
        .with_columns(*energy_units("j_per_token"))
    )
    return _sorted_by_precision(
        grouped, "gpu_name", STACK, "batch_size", *WORKLOAD_KEYS, "weights", "params_total", "architecture"
    )


def j_per_token_table(measurements: Any) -> Any:
    """Mean J/token per GPU x engine x stack x batch x length x weights x model x precision, over the submissions.

    The workload length is ``prompt_tokens`` + ``new_tokens``: the prefill is spread over the generated tokens, so
    runs of different lengths are different cells, never averaged (``prompt_tokens`` is null for a table without it).

    Each submission contributes its own mean (from :func:`ecocompute.schema.derive.derive`); the table gives
    their mean, min and max, the widest within-measurement 95% CI (% of the mean) and CV, tokens/s, the mean
    share of J/token that is idle power x time (``static_share_pct``) and the mean dynamic J/token, what the work
    drew above idle (``dynamic_j_per_token``; both over the submissions that recorded them). ``n_compiled`` and
    ``n_not_compiled`` count the submissions whose measurement torch.compile did or did not run (the ``compiled``
    column; on the compiled stack transformers declines bitsandbytes models); one recorded neither counts in
    neither. Failed measurements are left out.

    Example::

        j_per_token_table(load_dataset("ORG/NAME", "measurements", split="train"))
    """
    return like_input(j_per_token_frame(as_polars(measurements, "measurements")), measurements)


def jpt_table(measurements: Any) -> Any:
    """Deprecated spelling of :func:`j_per_token_table` (removed in the next release)."""
    warnings.warn("jpt_table is deprecated: call j_per_token_table", DeprecationWarning, stacklevel=2)
    return j_per_token_table(measurements)


COMPILED_STACKS = tuple(s.value for s in Stack if s.static_cache)
STACK_KEYS = (
    "gpu_name", "engine", "batch_size", *WORKLOAD_KEYS, "weights", "architecture", "params_total", "precision"
)  # fmt: skip


def _stack_side(stack: str, column: str = "j_per_token", side: str | None = None) -> pl.Expr:
    """``column`` of the row of ``stack`` in a group, named ``<side>_<column>`` (``side`` defaults to ``stack``)."""
    return pl.col(column).filter(pl.col(STACK) == stack).first().alias(f"{side or stack}_{column}")


def stack_frame(jpt: pl.DataFrame) -> pl.DataFrame:
    """Polars core of :func:`stack_table`, on :func:`j_per_token_frame`'s output.

    One pairing per compiled stack (``compiled_stack``), its side named ``compiled_*``. A group_by rather than a
    join, so that an unknown (null) prompt length pairs with itself as it does in :func:`j_per_token_frame`; ``jpt`` has
    one row per ``STACK_KEYS`` and stack, so ``first`` takes that row.
    """
    pairings = [
        jpt.group_by(list(STACK_KEYS))
        .agg(
            *(_stack_side("eager", c) for c in ("j_per_token", "n_submissions", "static_share_pct")),
            *(
                _stack_side(stack, c, "compiled")
                for c in ("j_per_token", "n_submissions", "n_compiled", "n_not_compiled", "static_share_pct")
            ),
        )
        .drop_nulls(["eager_j_per_token", "compiled_j_per_token"])
        .with_columns(pl.lit(stack).alias("compiled_stack"))
        for stack in COMPILED_STACKS
    ]
    both = pl.concat(pairings).with_columns(
        (100.0 * (pl.col("compiled_j_per_token") / pl.col("eager_j_per_token") - 1)).alias("change_pct")
    )
    return _sorted_by_precision(
        both, "gpu_name", "batch_size", *WORKLOAD_KEYS, "weights", "params_total", "architecture", "compiled_stack"
    )


def torch_compile_ran(row: dict[str, Any]) -> str:
    """Whether torch.compile ran in the compiled side's submissions of a :func:`stack_frame` row.

    "yes", "no", "k of n", or "not recorded" (collectors before the ``compiled`` field).
    """
    n, yes, no = row["compiled_n_submissions"], row["compiled_n_compiled"], row["compiled_n_not_compiled"]
    if yes == n:
        return "yes"
    if no == n:
        return "no"
    if yes == 0 and no == 0:
        return "not recorded"
    return f"{yes} of {n}" + (f" ({n - yes - no} not recorded)" if yes + no < n else "")


def stack_table(measurements: Any) -> Any:
    """J/token of each precision on the eager and on a compiled stack, and the change from compiling, in %.

    One row per GPU x batch x workload length x weights x model x precision x compiled stack (``compiled_stack``:
    ``compiled``, or ``compiled-all``, which compiles the bitsandbytes models too) measured on both. Each side is
    the mean over the submissions that measured it (:func:`j_per_token_table`), so the two sides come from different
    submissions (another hour, perhaps another host): set the change from compiling beside the changes between
    precisions, which :func:`change_vs_baseline` takes within one submission. ``eager_n_submissions`` and
    ``compiled_n_submissions`` count each side's submissions, ``compiled_n_compiled`` and
    ``compiled_n_not_compiled`` how many of the compiled side's submissions torch.compile actually ran (a compiled
    side it never ran is the static KV cache alone), and ``eager_static_share_pct`` and
    ``compiled_static_share_pct`` give each side's share of J/token that is idle power x time.

    Example::

        stack_table(load_dataset("ORG/NAME", "measurements", split="train"))
    """
    return like_input(stack_frame(j_per_token_frame(as_polars(measurements, "measurements"))), measurements)
