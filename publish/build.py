"""``ecocompute publish build``: accepted submissions -> parquet tables, figures, card and manifest, atomically.

Steps: validate every submission and refuse on any rejection (:mod:`.inputs`); flatten into the three checked
tables (:mod:`.tables`); compute the J/token table, the changes and the crossovers (:mod:`ecocompute.analysis`);
write everything into a staging folder beside ``--out`` and swap it in (:mod:`.atomic`). The same submissions
give byte-identical files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from ecocompute.analysis.change import change_frame
from ecocompute.analysis.crossovers import DEFAULT_N_BOOT, DEFAULT_SEED, crossover_frame
from ecocompute.analysis.tables import jpt_frame
from ecocompute.estimate.publish import write_estimate
from ecocompute.publish.atomic import staged_output
from ecocompute.publish.card import BeyondGate, CardInputs, render_card
from ecocompute.publish.figures import draw_figures
from ecocompute.publish.hub import DEFAULT_HF_REPO
from ecocompute.publish.inputs import Accepted, Gathered, Source, gather
from ecocompute.publish.manifest import MANIFEST, manifest_text
from ecocompute.publish.parquet import data_file, write_parquet
from ecocompute.publish.tables import Tables, build_tables
from ecocompute.publish.versions import changelog_text, resolve_version
from ecocompute.site.render import write_build_site


@dataclass(frozen=True)
class BuildOptions:
    """How to build: which version, whether examples may enter, the repo id the card names, the bootstrap."""

    version: str | None = None
    include_examples: bool = False
    hf_repo: str = DEFAULT_HF_REPO
    n_boot: int = DEFAULT_N_BOOT
    seed: int = DEFAULT_SEED


@dataclass(frozen=True)
class BuildResult:
    """What a build wrote."""

    out: Path
    version: str
    submissions: int
    measurements: int
    windows: int
    skipped_examples: int
    files: tuple[str, ...]
    beyond_gate: int = 0


def beyond_gate(accepted: Sequence[Accepted], runs: Sequence[Accepted], options: BuildOptions) -> BeyondGate | None:
    """The dataset's submissions and the runs beyond the gate, pooled and analysed for the card (None: no runs)."""
    if not runs:
        return None
    pooled = build_tables([*accepted, *runs])
    ids = frozenset(item.submission.payload.submission_id for item in runs)
    worst = (
        pooled.measurements.filter(pl.col("submission_id").is_in(list(ids)))
        .group_by("submission_id")
        .agg(pl.max("cv_pct"))["cv_pct"]
    )  # E-CV means a measured CV above the gate in every run
    return BeyondGate(
        ids=ids,
        folders=tuple(sorted({item.name.split("/", 1)[0] for item in runs})),
        cv_range_pct=(float(worst.min()), float(worst.max())),  # type: ignore[arg-type]
        tables=pooled,
        jpt=jpt_frame(pooled.measurements),
        changes=change_frame(pooled.measurements),
        crossovers=crossover_frame(pooled.measurements, pooled.windows, n_boot=options.n_boot, seed=options.seed),
    )


def write_dataset(folder: Path, gathered: Gathered, tables: Tables, version: str, options: BuildOptions) -> None:
    """Write tables, figures, changelog, card and (last) the manifest into an empty ``folder``."""
    for config, frame in tables.by_config().items():
        write_parquet(frame, folder / data_file(config))
    jpt = jpt_frame(tables.measurements)
    changes = change_frame(tables.measurements)
    crossovers = crossover_frame(tables.measurements, tables.windows, n_boot=options.n_boot, seed=options.seed)
    figures = draw_figures(jpt, changes, crossovers, folder)
    write_estimate(folder, tables, version)  # artifact.json and the estimator page (estimate/)
    changelog = changelog_text()
    (folder / "CHANGELOG.md").write_text(changelog, encoding="utf-8")
    card = CardInputs(
        version=version, hf_repo=options.hf_repo, tables=tables, jpt=jpt, changes=changes, crossovers=crossovers,
        figures=figures, include_examples=options.include_examples,
        skipped_examples=len(gathered.skipped_examples), n_boot=options.n_boot, seed=options.seed,
        changelog=changelog, beyond=beyond_gate(gathered.accepted, gathered.beyond_gate, options),
    )  # fmt: skip
    (folder / "README.md").write_text(render_card(card), encoding="utf-8")
    write_build_site(folder, version, options, crossovers)
    text = manifest_text(folder, version, gathered, options.include_examples)
    (folder / MANIFEST).write_text(text, encoding="utf-8")


def build(
    sources: Sequence[Source], out: Path, options: BuildOptions | None = None, beyond: Sequence[Source] = ()
) -> BuildResult:
    """Validate, then build the dataset folder ``out`` atomically; raise BuildRefusedError on any rejection.

    ``beyond``: folders of runs that fail only the CV gate; the card reports them apart, the tables never hold them.
    """
    options = options or BuildOptions()
    version = resolve_version(options.version)
    gathered = gather(sources, include_examples=options.include_examples, beyond_gate=beyond)
    tables = build_tables(gathered.accepted)
    with staged_output(out) as staging:
        write_dataset(staging, gathered, tables, version, options)
        files = tuple(sorted(p.relative_to(staging).as_posix() for p in staging.rglob("*") if p.is_file()))
    return BuildResult(
        out=out, version=version, submissions=tables.submissions.height, measurements=tables.measurements.height,
        windows=tables.windows.height, skipped_examples=len(gathered.skipped_examples), files=files,
        beyond_gate=len(gathered.beyond_gate),
    )  # fmt: skip
