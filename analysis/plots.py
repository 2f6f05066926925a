"""Figures of the dataset, drawn with matplotlib's Agg canvas (no pyplot, no global backend change).

PNG bytes are stable: matplotlib's default style is used whatever the user's matplotlibrc says, the
``Software`` text chunk is left out and PNGs carry no date. matplotlib is imported inside the functions, so
importing :mod:`ecocompute.analysis` does not need it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import polars as pl

from ecocompute.analysis.change import precision_rank
from ecocompute.analysis.crossovers import format_params

COLORS = {
    "fp16": "#1f77b4", "bf16": "#17becf", "nf4": "#d62728", "nf4-dq": "#ff7f0e", "fp4": "#e377c2",
    "int8": "#2ca02c", "int8-t0": "#9467bd",
}  # fmt: skip
SIZE_IN = (7.0, 4.5)
DPI = 110


def _style() -> Any:
    import matplotlib

    skip = {"backend", "backend_fallback", "interactive"}
    return {key: value for key, value in matplotlib.rcParamsDefault.items() if key not in skip}


def _figure() -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=SIZE_IN, dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Any, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", dpi=DPI, metadata={"Software": None})


def _params_axis(ax: Any) -> None:
    from matplotlib.ticker import FuncFormatter

    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: format_params(x)))
    ax.xaxis.set_minor_formatter(FuncFormatter(lambda _x, _pos: ""))
    ax.set_xlabel("parameters")
    ax.grid(True, which="major", alpha=0.3)


def plot_jpt(table: pl.DataFrame, title: str, path: Path) -> None:
    """J/token against parameters, one line per precision, for one rows subset of :func:`jpt_table`."""
    import matplotlib

    with matplotlib.rc_context(_style()):
        fig = _figure()
        ax = fig.add_subplot()
        for precision in sorted(table["precision"].unique().to_list(), key=precision_rank):
            rows = table.filter(pl.col("precision") == precision).sort("params_total")
            x = rows["params_total"].to_list()
            y = rows["j_per_token"].to_list()
            err = [j * (c or 0.0) / 100 for j, c in zip(y, rows["ci95_pct_max"].to_list(), strict=True)]
            ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=precision, color=COLORS.get(precision))
        _params_axis(ax)
        ax.set_ylabel("energy per token (J/token, GPU package)")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=8)
        _save(fig, path)


def _mark_crossover(ax: Any, row: dict[str, Any], color: str | None) -> None:
    at = row.get("crossover_params")
    if at is None or not math.isfinite(at):
        return
    low, high = row.get("ci95_low_params"), row.get("ci95_high_params")
    label = f"{row['precision']} crossover {format_params(at)}"
    if low is not None and high is not None:
        ax.axvspan(low, high, color=color, alpha=0.12)
        label += f" (95% CI {format_params(low)}-{format_params(high)})"
    ax.axvline(at, color=color, linestyle="--", linewidth=1, label=label)


def plot_change(changes: pl.DataFrame, crossovers: pl.DataFrame, title: str, path: Path) -> None:
    """Change in J/token against the FP16/BF16 baseline per precision, with each crossover and its CI marked."""
    import matplotlib

    with matplotlib.rc_context(_style()):
        fig = _figure()
        ax = fig.add_subplot()
        ax.axhline(0.0, color="black", linewidth=0.8)
        for precision in sorted(changes["precision"].unique().to_list(), key=precision_rank):
            rows = changes.filter(pl.col("precision") == precision).sort("params_total", "submission_id")
            color = COLORS.get(precision)
            low = [
                c - (lo if lo is not None else c)
                for c, lo in zip(rows["change_pct"], rows["ci95_low_pct"], strict=True)
            ]
            high = [
                (hi if hi is not None else c) - c
                for c, hi in zip(rows["change_pct"], rows["ci95_high_pct"], strict=True)
            ]
            ax.errorbar(rows["params_total"].to_list(), rows["change_pct"].to_list(), yerr=[low, high], fmt="o",
                        capsize=3, color=color, label=precision)  # fmt: skip
            means = rows.group_by("params_total").agg(pl.col("change_pct").mean()).sort("params_total")
            ax.plot(means["params_total"].to_list(), means["change_pct"].to_list(), color=color, linewidth=1)
            for row in crossovers.filter(pl.col("precision") == precision).iter_rows(named=True):
                _mark_crossover(ax, row, color)
        _params_axis(ax)
        ax.set_ylabel("change in J/token vs FP16/BF16 (%)")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7)
        _save(fig, path)
