"""Which figures a build draws: for each GPU x stack x batch x weights, J/token and the change against FP16."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ecocompute.analysis.plots import plot_change, plot_jpt
from ecocompute.schema.paths import gpu_slug

FIGURE_KEYS = ("gpu_name", "stack", "batch_size", "weights")


@dataclass(frozen=True)
class FigureRef:
    """One figure of the card: its path inside the dataset folder and its caption."""

    path: str
    caption: str


def _slug(key: tuple[object, ...]) -> str:
    gpu, stack, batch, weights = key
    return f"{gpu_slug(str(gpu))}-{stack}-b{batch}-{weights}"


def _title(key: tuple[object, ...]) -> str:
    gpu, stack, batch, weights = key
    return f"{gpu} · {stack} stack · batch {batch} · {weights} weights"


def draw_figures(jpt: pl.DataFrame, changes: pl.DataFrame, crossovers: pl.DataFrame, folder: Path) -> list[FigureRef]:
    """Draw every figure into ``folder/figures``; return them in a stable order."""
    refs = []
    for key, rows in jpt.group_by(list(FIGURE_KEYS), maintain_order=False):
        pass_key = tuple(key)
        name = f"figures/jpt-{_slug(pass_key)}.png"
        plot_jpt(rows, f"J/token · {_title(pass_key)}", folder / name)
        refs.append(FigureRef(name, f"Energy per token against model size, {_title(pass_key)}."))
    for key, rows in changes.group_by(list(FIGURE_KEYS), maintain_order=False):
        pass_key = tuple(key)
        selected = crossovers.filter(
            pl.all_horizontal(pl.col(k) == v for k, v in zip(FIGURE_KEYS, pass_key, strict=True))
        )
        name = f"figures/change-{_slug(pass_key)}.png"
        plot_change(rows, selected, f"Change vs FP16/BF16 · {_title(pass_key)}", folder / name)
        refs.append(
            FigureRef(name, f"Change in J/token against FP16 (else BF16), crossovers marked, {_title(pass_key)}.")
        )
    return sorted(refs, key=lambda ref: ref.path)
