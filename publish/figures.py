"""Which figures a build draws: for each GPU x stack x batch x workload length x weights, J/token and the change."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ecocompute.analysis.crossovers import format_tokens
from ecocompute.analysis.frames import matching
from ecocompute.analysis.plots import plot_change, plot_jpt
from ecocompute.schema.paths import gpu_slug

# prompt_tokens and new_tokens: J/token depends on the length (the prefill is spread over the new tokens), so one
# figure never draws two lengths on one curve
FIGURE_KEYS = ("gpu_name", "software_stack", "batch_size", "prompt_tokens", "new_tokens", "weights")


@dataclass(frozen=True)
class FigureRef:
    """One figure of the card: its path inside the dataset folder and its caption."""

    path: str
    caption: str


def _slug(key: tuple[object, ...]) -> str:
    gpu, stack, batch, prompt, new, weights = key
    return f"{gpu_slug(str(gpu))}-{stack}-b{batch}-p{'na' if prompt is None else prompt}-n{new}-{weights}"


def group_title(key: tuple[object, ...], sep: str = " · ") -> str:
    """A group of FIGURE_KEYS for people; the plots pass a newline as ``sep``, so a title fits the figure's width."""
    gpu, stack, batch, prompt, new, weights = key
    return f"{gpu}{sep}{stack} stack · batch {batch} · {format_tokens(prompt, new)} tokens · {weights} weights"


def draw_figures(jpt: pl.DataFrame, changes: pl.DataFrame, crossovers: pl.DataFrame, folder: Path) -> list[FigureRef]:
    """Draw every figure into ``folder/figures``; return them in a stable order."""
    refs = []
    for key, rows in jpt.group_by(list(FIGURE_KEYS), maintain_order=False):
        pass_key = tuple(key)
        name = f"figures/jpt-{_slug(pass_key)}.png"
        plot_jpt(rows, "J/token · " + group_title(pass_key, sep="\n"), folder / name)
        refs.append(FigureRef(name, f"Energy per token against model size, {group_title(pass_key)}."))
    for key, rows in changes.group_by(list(FIGURE_KEYS), maintain_order=False):
        pass_key = tuple(key)
        selected = crossovers.filter(matching(FIGURE_KEYS, pass_key))
        name = f"figures/change-{_slug(pass_key)}.png"
        plot_change(rows, selected, "Change vs FP16/BF16 · " + group_title(pass_key, sep="\n"), folder / name)
        refs.append(
            FigureRef(name, f"Change in J/token against FP16 (else BF16), crossovers marked, {group_title(pass_key)}.")
        )
    return sorted(refs, key=lambda ref: ref.path)
