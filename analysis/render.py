"""Rich tables of the analysis results, for the CLI and the demo: one narrow table per group."""

from __future__ import annotations

import polars as pl
from rich import box
from rich.console import Group
from rich.table import Table

from ecocompute.analysis.change import POOL_KEYS
from ecocompute.analysis.crossovers import format_params, format_tokens
from ecocompute.analysis.defaults import STACK
from ecocompute.analysis.frames import matching
from ecocompute.analysis.sections import GROUP_KEYS, change_text, engine_words, names_engine

NO_WRAP = ("change vs FP16", "model", "precision", "sizes", "95% CI", "stack", "crossover", "result", "batch")
SHORT_RESULT = {"costs more": "costs more", "saves": "saves", "mixed": "no +/- step"}


def _num(value: float | None, digits: int = 4) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _table(title: str, columns: list[tuple[str, str]]) -> Table:
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for name, justify in columns:
        table.add_column(name, justify="right" if justify == "r" else "left", no_wrap=name in NO_WRAP)
    return table


def _change_cell(pooled: pl.DataFrame | None, row: dict[str, object]) -> str:
    if pooled is None or row["precision"] in ("fp16",):
        return ""
    keys = list(POOL_KEYS)
    mine = pooled.filter(matching(keys, [row[k] for k in keys]))
    return change_text(mine.row(0, named=True)) if mine.height else ""


def j_per_token_rich_table(table: pl.DataFrame, pooled: pl.DataFrame | None = None) -> Group:
    """J/token, Wh per 1,000 tokens and the pooled change per model and precision, a table per group."""
    tables = []
    keys = list(GROUP_KEYS)
    for key in table.select(keys).unique().sort(keys, nulls_last=True).iter_rows():
        gpu, engine, stack, batch, prompt, new, weights = key
        tokens = format_tokens(prompt, new)
        out = _table(
            f"J/token · {gpu} · {engine_words(engine)}{stack} · batch {batch} · {tokens} tokens · {weights}",
            [("model", "l"), ("params", "r"), ("precision", "l"), ("J/token", "r"), ("95% CI", "r"),
             ("Wh/1k tok", "r"), ("tokens/s", "r"), ("static%", "r"), ("change vs FP16", "r"), ("n", "r")],
        )  # fmt: skip
        rows = table.filter(matching(keys, key))
        for row in rows.iter_rows(named=True):
            ci = "" if row["ci95_pct_max"] is None else f"±{row['ci95_pct_max']:.2f}%"
            out.add_row(
                row["architecture"], format_params(row["params_total"]), row["precision"], _num(row["j_per_token"]),
                ci, _num(row["wh_per_1k_tokens"], 4), _num(row["tokens_per_s"], 1), _num(row["static_share_pct"], 1),
                _change_cell(pooled, row), str(row["n_submissions"]),
            )  # fmt: skip
        tables.append(out)
    return Group(*tables)


def _result(row: dict[str, object]) -> str:
    if row["status"] == "crossover":
        return "crosses"
    if row["status"] == "insufficient data":
        return "one size"
    return SHORT_RESULT.get(str(row["holds"]), str(row["holds"]))


def crossover_rich_table(table: pl.DataFrame) -> Group:
    """Crossover and its 95% CI (or which sign holds), a table per GPU x engine x length x weights.

    A row per stack x batch x precision.
    """
    tables = []
    keys = [k for k in ("gpu_name", "engine", "prompt_tokens", "new_tokens", "weights") if k in table.columns]
    groups = table.select(keys).unique().sort(keys, nulls_last=True).iter_rows() if keys else iter([()])
    for key in groups:
        named = dict(zip(keys, key, strict=True))
        parts = [str(named[k]) for k in ("gpu_name",) if k in named]
        if names_engine(named.get("engine")):  # transformers goes unnamed, as in every title
            parts.append(str(named["engine"]))
        if named.get("prompt_tokens") is not None or named.get("new_tokens") is not None:
            parts.append(f"{format_tokens(named.get('prompt_tokens'), named.get('new_tokens'))} tokens")
        parts += [str(named[k]) for k in ("weights",) if k in named]
        out = _table(" · ".join(["Crossover", *parts]), [("stack", "l"), ("batch", "r"), ("precision", "l"),
                     ("sizes", "r"), ("crossover", "r"), ("95% CI", "r"), ("result", "l")])  # fmt: skip
        selected = table.filter(matching(keys, key)) if keys else table
        for row in selected.iter_rows(named=True):
            ci = ""
            if row["ci95_low_params"] is not None and row["ci95_high_params"] is not None:
                ci = f"{format_params(row['ci95_low_params'])}-{format_params(row['ci95_high_params'])}"
            crossing = "none" if row["crossover_params"] is None else format_params(row["crossover_params"])
            sizes = f"{format_params(row['params_min'])}-{format_params(row['params_max'])}"
            out.add_row(str(row.get(STACK) or ""), str(row.get("batch_size") or ""), str(row.get("precision") or ""),
                        sizes, crossing, ci, _result(row))  # fmt: skip
        if selected.height:
            first = selected.row(0, named=True)
            out.caption = f"{first['method']}; bootstrap of windows: {first['n_boot']} resamples, seed {first['seed']}"
        tables.append(out)
    return Group(*tables)
