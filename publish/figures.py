"""Which figures a build draws: the change against FP16 (else BF16) over model size, per group.

One per GPU x engine x stack x batch x workload length x weights measured at two sizes or more, as SVG, PDF and PNG.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import polars as pl

from ecocompute.analysis.frames import matching
from ecocompute.analysis.plots import FORMATS, plot_change
from ecocompute.analysis.results import Results
from ecocompute.analysis.sections import GROUP_KEYS, group_title, names_engine
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
    """The figure's file name: transformers' keep the names they had before engines, others name theirs."""
    gpu, engine, stack, batch, prompt, new, weights = key
    engine_part = f"{str(engine).replace('.', '')}-" if names_engine(engine) else ""
    return f"{gpu_slug(str(gpu))}-{engine_part}{stack}-b{batch}-p{'na' if prompt is None else prompt}-n{new}-{weights}"


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


def _plot_version() -> bytes:
    """The plotting code and matplotlib's version: a cached figure is valid for these only."""
    from importlib import metadata  # the version without importing matplotlib, when every figure is cached

    return (
        resources.files("ecocompute.analysis").joinpath("plots.py").read_bytes()
        + metadata.version("matplotlib").encode()
    )


def _draw_cached(rows: pl.DataFrame, crossings: pl.DataFrame, title: str, stem: Path, cache: Path | None) -> None:
    """Draw one figure, or copy it from ``cache`` where the same rows were drawn by the same code before."""
    if cache is None:
        plot_change(rows, crossings, title, stem)
        return
    digest = hashlib.sha256(b"\0".join([rows.write_csv().encode(), crossings.write_csv().encode(), title.encode(),
                                         _plot_version()])).hexdigest()[:24]  # fmt: skip
    kept = cache / digest
    if not all((kept / f"figure.{fmt}").is_file() for fmt in FORMATS):
        staging = Path(tempfile.mkdtemp(prefix=".figure-", dir=cache))
        plot_change(rows, crossings, title, staging / "figure")
        try:
            staging.rename(kept)
        except OSError:  # drawn by another build meanwhile
            shutil.rmtree(staging, ignore_errors=True)
    stem.parent.mkdir(parents=True, exist_ok=True)
    for fmt in FORMATS:
        shutil.copyfile(kept / f"figure.{fmt}", stem.with_suffix(f".{fmt}"))


def draw_figures(results: Results, folder: Path, cache: Path | None = None) -> list[FigureRef]:
    """Draw every figure into ``folder/figures``; return them in a stable order (a group of one size has none).

    ``cache``: a folder of figures drawn before, by the digest of their rows and the plotting code.
    """
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
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
        _draw_cached(rows, crossings, "Change vs FP16/BF16 · " + group_title(key, sep="\n"), folder / stem, cache)
        refs.append(FigureRef(stem, _caption(key, rows, results)))
    return sorted(refs, key=lambda ref: ref.stem)
