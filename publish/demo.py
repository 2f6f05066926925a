"""The demo: build the dataset from ``submissions/`` plus the example set, then show what a researcher sees.

``ecocompute publish demo --out DIR`` (or :func:`main`) builds with examples included, loads the result back
through ``datasets.load_dataset(DIR, "measurements")`` (and ``"windows"``) exactly as a researcher would, and
prints the J/token table and the crossover table computed on what was loaded.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import polars as pl

from ecocompute.analysis.crossovers import crossover_frame
from ecocompute.analysis.j_per_token import j_per_token_frame
from ecocompute.analysis.render import crossover_rich_table, j_per_token_rich_table
from ecocompute.console import out
from ecocompute.publish.build import BuildOptions, BuildResult, build
from ecocompute.publish.inputs import Source
from ecocompute.schema.errors import UsageError

SUBMISSIONS = Path("submissions")
EXAMPLES = Path("tests/publish/data/examples")


def load_like_a_researcher(folder: Path, config: str, cache_dir: Path) -> pl.DataFrame:
    """``datasets.load_dataset(folder, config, split="train")`` as a polars DataFrame."""
    try:
        import datasets
    except ImportError:
        raise UsageError("the demo needs the `datasets` package: pip install 'ecocompute[publish]'") from None
    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()
    loaded = datasets.load_dataset(str(folder.resolve()), config, split="train", cache_dir=str(cache_dir))
    frame = loaded.to_polars()
    if not isinstance(frame, pl.DataFrame):  # pragma: no cover - datasets returns a DataFrame here
        raise UsageError(f"{folder} ({config}) did not load as a table")
    return frame


def demo_sources(submissions: Path, examples: Path) -> list[Source]:
    """The real submissions folder (when present) and the example set."""
    if not examples.is_dir():
        raise UsageError(f"example set {examples} not found: run the demo from the repository root")
    sources = [Source.at(submissions)] if submissions.is_dir() else []
    return [*sources, Source.at(examples)]


def main(out_dir: Path, submissions: Path = SUBMISSIONS, examples: Path = EXAMPLES) -> BuildResult:
    """Build into ``out_dir`` (examples included), load it with ``datasets`` and print both tables."""
    result = build(demo_sources(submissions, examples), out_dir, BuildOptions(include_examples=True))
    out.print(
        f"built {out_dir}: {result.submissions} submissions pass the gate, {result.submissions_all} in all, "
        f"{result.measurements} measurements, {result.windows} windows (version {result.version}, EXAMPLES INCLUDED)"
    )
    out.print(f'loading it back: datasets.load_dataset("{out_dir}", "measurements_all", split="train")')
    with tempfile.TemporaryDirectory(prefix="ecocompute-demo-cache-") as cache:
        measurements = load_like_a_researcher(out_dir, "measurements_all", Path(cache))
        windows = load_like_a_researcher(out_dir, "windows_all", Path(cache))
        loaded_subs = load_like_a_researcher(out_dir, "submissions_all", Path(cache))
    examples_ids = loaded_subs.filter(pl.col("is_example"))["submission_id"]
    for is_example, heading in ((False, "MEASURED submissions"), (True, EXAMPLE_HEADING)):
        keep = pl.col("submission_id").is_in(examples_ids.implode())
        part_m = measurements.filter(keep if is_example else ~keep)
        part_w = windows.filter(keep if is_example else ~keep)
        out.rule(f"[bold]{heading}[/] ({part_m['submission_id'].n_unique()} submissions)")
        if part_m.is_empty():
            out.print("none yet: submissions/ holds no accepted measurement")
            continue
        out.print(j_per_token_rich_table(j_per_token_frame(part_m)))
        out.print(crossover_rich_table(crossover_frame(part_m, part_w)))
    return result


EXAMPLE_HEADING = "SYNTHETIC EXAMPLES, not measurements (is_example = true; they show the pipeline, not a GPU)"
