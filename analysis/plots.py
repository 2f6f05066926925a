"""Figures of the dataset, drawn with matplotlib's Agg canvas (no pyplot, no global backend change).

One figure per GPU x engine x stack x batch x workload length x weights (an engine other than transformers named
in its title, so llama.cpp's FP16 never shares a figure with transformers'): the pooled change in J/token against
FP16 (else BF16) over model size, a log axis with a tick and label at each measured size, 95% CI bars, and each
crossover with its 95% CI band. Each is written as SVG, PDF and a 300 dpi PNG whose bytes are stable: matplotlib's
default style whatever the user's matplotlibrc says, no software or date in any of the three, a fixed SVG id salt.
matplotlib is imported inside the functions, so importing :mod:`ecocompute.analysis` does not need it.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import polars as pl

from ecocompute.analysis.crossovers import format_params
from ecocompute.analysis.defaults import precision_rank

COLORS = {
    "fp16": "#1f77b4", "bf16": "#17becf", "nf4": "#d62728", "nf4-dq": "#ff7f0e", "fp4": "#e377c2",
    "int8": "#2ca02c", "int8-t0": "#9467bd", "q8_0": "#8c564b", "q4_k_m": "#bcbd22",
}  # fmt: skip
SIZE_IN = (7.0, 4.5)
PNG_DPI = 300
FORMATS = ("svg", "pdf", "png")
METADATA = {"svg": {"Date": None, "Creator": None}, "pdf": {"CreationDate": None, "Creator": None, "Producer": None},
            "png": {"Software": None}}  # fmt: skip


def _style() -> Any:
    import matplotlib

    skip = {"backend", "backend_fallback", "interactive"}
    style = {key: value for key, value in matplotlib.rcParamsDefault.items() if key not in skip}
    style["svg.hashsalt"] = "ecocompute"
    return style


def _figure() -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=SIZE_IN, dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save_all(fig: Any, stem: Path) -> list[Path]:
    """Write ``fig`` as ``stem``.svg, .pdf and .png (300 dpi); return the three paths."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in FORMATS:
        path = stem.with_suffix(f".{fmt}")
        fig.savefig(path, format=fmt, dpi=PNG_DPI, metadata=METADATA[fmt])
        paths.append(path)
    return paths


def _tick_labels(sizes: list[float]) -> list[str]:
    """A label per measured size; one within 35% of the size before it drops a line, so the two never overlap."""
    labels, lowered = [], False
    for i, size in enumerate(sizes):
        lowered = i > 0 and size / sizes[i - 1] < 1.35 and not lowered
        labels.append(("\n" if lowered else "") + format_params(size))
    return labels


def _params_axis(ax: Any, sizes: list[float]) -> None:
    from matplotlib.ticker import FixedLocator, NullLocator

    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(sizes))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels(_tick_labels(sizes), fontsize=8)
    low, high = min(sizes), max(sizes)
    ax.set_xlim(low / 1.25, high * 1.25)
    ax.set_xlabel("parameters (log scale; a tick at each measured size)")
    ax.grid(True, which="major", alpha=0.3)


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


def plot_change(pooled: pl.DataFrame, crossovers: pl.DataFrame, title: str, stem: Path) -> list[Path]:
    """The pooled change per precision over model size with 95% CI bars and crossovers; write three formats."""
    import matplotlib

    with matplotlib.rc_context(_style()):
        fig = _figure()
        ax = fig.add_subplot()
        ax.axhline(0.0, color="black", linewidth=0.8)
        for precision in sorted(pooled["precision"].unique().to_list(), key=precision_rank):
            rows = pooled.filter(pl.col("precision") == precision).sort("params_total")
            color = COLORS.get(precision)
            x, y = rows["params_total"].to_list(), rows["change_pct"].to_list()
            low = [c - (lo if lo is not None else c) for c, lo in zip(y, rows["ci95_low_pct"], strict=True)]
            high = [(hi if hi is not None else c) - c for c, hi in zip(y, rows["ci95_high_pct"], strict=True)]
            ax.errorbar(x, y, yerr=[low, high], fmt="o-", capsize=3, color=color, label=precision, linewidth=1)
            for px, py in zip(x, y, strict=True):
                ax.annotate(f"{py:+.0f}%", (px, py), textcoords="offset points", xytext=(4, 4), fontsize=6,
                            color=color)  # fmt: skip
            for row in crossovers.filter(pl.col("precision") == precision).iter_rows(named=True):
                _mark_crossover(ax, row, color)
        _params_axis(ax, sorted({float(s) for s in pooled["params_total"].to_list()}))
        ax.set_ylabel("change in J/token vs FP16/BF16 (%)")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7)
        return save_all(fig, stem)
