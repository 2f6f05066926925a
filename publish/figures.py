"""Which figures a build draws: the change against FP16 (else BF16) over model size, per group.

One per GPU x stack x batch x workload length x weights measured at two sizes or more, as SVG, PDF and PNG.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ecocompute.analysis.frames import matching
from ecocompute.analysis.plots import FORMATS, plot_change
from ecocompute.analysis.results import Results
from ecocompute.analysis.sections import GROUP_KEYS, group_title
from ecocompute.schema.paths import gpu_slug


@dataclass(frozen=True)
class FigureRef:
    """One figure of the card: its path inside the dataset folder without suffix, and its caption."""

    stem: str
    caption: str

    @property
    def files(self) -> tuple[str, ...]:
        """The figure's files, one per format."""
        return tuple(f"{self.stem}.{fmt}" for fmt in FORMATS)


def _slug(key: tuple[object, ...]) -> str:
    gpu, stack, batch, prompt, new, weights = key
    return f"{gpu_slug(str(gpu))}-{stack}-b{batch}-p{'na' if prompt is None else prompt}-n{new}-{weights}"


def _caption(key: tuple[object, ...], rows: pl.DataFrame, results: Results) -> str:
    ids = sorted({i for v in rows["submission_ids"].to_list() for i in str(v).split(",")})
    measured = results.measurements.filter(pl.col("submission_id").is_in(ids))
    failing = measured.filter(pl.col("passes_cv_gate").not_())["submission_id"].n_unique()
    gated = len(ids) - failing
    return (
        f"Change in J/token of each precision against the same submission's FP16 (else BF16) over model size, "
        f"{group_title(key)}. Points: the geometric mean over a size's submissions; bars: its 95% CI (Student t "
        f"over submissions, else the delta method); dashed lines and bands: each crossover with its 95% bootstrap "
        f"CI. From `{results.config}`: {measured.height} rows of {len(ids)} submissions, {gated} of them passing "
        f"the CV gate."
    )


def draw_figures(results: Results, folder: Path) -> list[FigureRef]:
    """Draw every figure into ``folder/figures``; return them in a stable order (a group of one size has none)."""
    refs: list[FigureRef] = []
    pooled = results.pooled
    if pooled.height == 0:
        return refs
    for key in pooled.select(GROUP_KEYS).unique().sort(list(GROUP_KEYS), nulls_last=True).iter_rows():
        rows = pooled.filter(matching(GROUP_KEYS, key))
        if rows["params_total"].n_unique() < 2:
            continue
        stem = f"figures/change-{_slug(key)}"
        crossings = results.crossovers.filter(matching(GROUP_KEYS, key))
        plot_change(rows, crossings, "Change vs FP16/BF16 · " + group_title(key, sep="\n"), folder / stem)
        refs.append(FigureRef(stem, _caption(key, rows, results)))
    return sorted(refs, key=lambda ref: ref.stem)
