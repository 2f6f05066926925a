"""``ecocompute publish build``: submissions -> six parquet configs, findings, figures, card and manifest, atomically.

Steps: give every file of the submissions folders the validator's verdict, from the cache where its content is
unchanged (:mod:`.inputs`, :mod:`.cache`); stream the accepted rows into the configs (:mod:`.configs`); analyse
each tier once (:func:`ecocompute.analysis.results.analyse`); write findings, rejections, figures, the card and
(last) the manifest into a staging folder beside ``--out`` and swap it in (:mod:`.atomic`). The same submissions
give byte-identical files.
"""

from __future__ import annotations

import json
import multiprocessing
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path

import polars as pl

from ecocompute.analysis.defaults import ALL_SUFFIX, DEFAULT_N_BOOT, DEFAULT_SEED
from ecocompute.analysis.results import Results, analyse
from ecocompute.estimate.artifact import ARTIFACT
from ecocompute.estimate.publish import WEB_FOLDER, write_estimate
from ecocompute.publish.atomic import staged_output
from ecocompute.publish.cache import RowCache
from ecocompute.publish.card import CardInputs, Counts, render_card
from ecocompute.publish.configs import Tables, write_configs
from ecocompute.publish.figures import draw_figures
from ecocompute.publish.findings import FINDINGS_FILE, compute_findings, findings_text
from ecocompute.publish.hub import DEFAULT_HF_REPO
from ecocompute.publish.inputs import (
    BuildRefusedError,
    Gathered,
    InputFile,
    Source,
    Verdict,
    check_unique_ids,
    input_files,
    refusal,
)
from ecocompute.publish.manifest import MANIFEST, manifest_text
from ecocompute.publish.memo import Derived, code_digest, file_digest, keys_digest, tree_files
from ecocompute.publish.parquet import data_file
from ecocompute.publish.versions import changelog_text, resolve_version
from ecocompute.site.render import SITE_DIR, write_build_site
from ecocompute.validate.core import validate_files

REJECTIONS_FILE = "rejections.json"
# files whose rows are made and cached per chunk; the validator sees every changed file in one call (it reads the
# rest of the folder once per call, to find copies) and keeps none of the parsed submissions, so memory stays small
ROWS_BATCH = 1_000
# from this many changed files of a source on, validation runs in a child process (a cold build, a big change)
APART_FROM = 2_000


@dataclass(frozen=True)
class BuildOptions:
    """How to build: version, examples, the repo id and DOI the card names, the bootstrap, the cache, strictness.

    ``cache``: the cache folder (None: a temporary one, gone after the build); ``strict``: refuse to build when
    the validator rejects any file (else rejected files are left out and listed in ``rejections.json``).
    """

    version: str | None = None
    include_examples: bool = False
    hf_repo: str = DEFAULT_HF_REPO
    n_boot: int = DEFAULT_N_BOOT
    seed: int = DEFAULT_SEED
    cache: Path | None = None
    strict: bool = False
    doi: str | None = None


@dataclass(frozen=True)
class BuildResult:
    """What a build wrote."""

    out: Path
    version: str
    submissions: int
    submissions_all: int
    measurements: int
    windows: int
    skipped_examples: int
    rejected: int
    validated: int
    files: tuple[str, ...]


@contextmanager
def _cache(folder: Path | None) -> Iterator[RowCache]:
    if folder is not None:
        yield RowCache(folder)
        return
    with tempfile.TemporaryDirectory(prefix="ecocompute-build-cache-") as tmp:
        yield RowCache(Path(tmp))


def validate_into(cache: RowCache, source: Source, mine: Sequence[InputFile], rows_batch: int) -> list[Verdict]:
    """Validate ``mine`` (files of ``source`` with no cached verdict) in one call; cache their verdicts and rows."""
    fresh: list[Verdict] = []
    # the copy check's identities of the files already there, by content hash: <cache>/v1/identities.sqlite
    results = validate_files([Path(f.path) for f in mine], allowed_signers=source.allowed_signers,
                             submissions_root=source.root, keep_submissions=False,
                             identity_cache=cache.root.parent)  # fmt: skip
    pending = list(zip(mine, results, strict=True))
    del results
    while pending:  # a batch's results and parsed submissions are freed before the next batch is made
        batch = pending[:rows_batch]
        del pending[:rows_batch]
        fresh += cache.add(batch)
        del batch
    return fresh


def _validate_child(send: Connection, folder: Path, source: Source, mine: Sequence[InputFile], rows_batch: int) -> None:
    """The child process of :func:`_validate_apart`: validate, cache, and say how it went."""
    try:
        validate_into(RowCache(folder), source, mine, rows_batch)
        send.send(None)
    except BaseException as exc:  # every failure goes back to the build, which raises it
        try:
            send.send(exc)
        except Exception:  # an exception that does not pickle goes back as its text
            send.send(BuildRefusedError(f"validation failed: {exc}"))
    finally:
        send.close()


def _validate_apart(cache: RowCache, source: Source, mine: Sequence[InputFile]) -> list[Verdict]:
    """:func:`validate_into` in a fresh process; the verdicts read back from the cache.

    The validator's results and the row batches are the largest thing a cold build holds; made in a child, their
    memory goes back to the system before the configs, analyses and site are made, so the build's peak does not
    add them to what follows.
    """
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: no polars threads, no inherited memory
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_validate_child, args=(send, cache.folder, source, list(mine), ROWS_BATCH))
    child.start()
    send.close()
    try:
        failure = receive.recv()
    except EOFError:
        failure = BuildRefusedError("the validation process ended without a word: build again")
    finally:
        child.join()
    if failure is not None:
        raise failure
    if child.exitcode != 0:
        raise BuildRefusedError(f"the validation process exited with code {child.exitcode}: build again")
    known = cache.verdicts([f.key for f in mine])
    return [known[f.key] for f in mine]


def gather(sources: Sequence[Source], cache: RowCache, *, include_examples: bool = False) -> tuple[Gathered, int]:
    """Every file's verdict (cached, or validated now and cached); the gathered verdicts and how many were validated.

    From APART_FROM changed files of a source on, they are validated in a child process (:func:`_validate_apart`).
    """
    hashes = cache.file_hashes()
    files = input_files(sources, known_hash=hashes.lookup)
    hashes.save(files)
    known = cache.verdicts([f.key for f in files])
    misses = [f for f in files if f.key not in known]
    fresh = []
    for source in sources:
        mine = [f for f in misses if f.source == source]
        if not mine:
            continue
        if len(mine) >= APART_FROM:
            fresh += _validate_apart(cache, source, mine)
        else:
            fresh += validate_into(cache, source, mine, ROWS_BATCH)
    verdicts = {**known, **{v.key: v for v in fresh}}
    gathered = Gathered(tuple(sorted(verdicts.values(), key=lambda v: v.name)), include_examples)
    check_unique_ids(gathered.kept)
    cache.compact([f.key for f in files])
    return gathered, len(misses)


def rejections_text(gathered: Gathered) -> str:
    """``rejections.json``: each rejected file with its submission id and the validator's error findings."""
    entries = [{"file": v.name, "submission_id": v.submission_id, "codes": list(v.codes), "messages": list(v.messages)}
               for v in gathered.rejected]  # fmt: skip
    return json.dumps(entries, indent=2, ensure_ascii=False) + "\n"


def counts(tables: Tables, gathered: Gathered) -> Counts:
    """The summary counts of a build's configs."""
    subs = tables.read("submissions" + ALL_SUFFIX)
    warmups = tables.scan("windows" + ALL_SUFFIX).filter(pl.col("warmup")).select(pl.len()).collect().item()
    return Counts(
        submissions=tables.height("submissions"), submissions_all=subs.height,
        measurements=tables.height("measurements"), measurements_all=tables.height("measurements" + ALL_SUFFIX),
        windows=tables.scan("windows").filter(~pl.col("warmup")).select(pl.len()).collect().item(),
        windows_all=tables.height("windows" + ALL_SUFFIX) - int(warmups), warmup_windows=int(warmups),
        contributors=subs["contributor_github"].n_unique() if subs.height else 0,
        gpus=tuple(sorted(subs["gpu_name"].unique().to_list())) if subs.height else (),
        rejected=len(gathered.rejected),
    )  # fmt: skip


def _analyse(tables: Tables, derived: Derived, code: bytes, config: str, options: BuildOptions) -> Results:
    """The analysis of one tier, or the one kept for the same config bytes, bootstrap and code."""
    windows = config.replace("measurements", "windows")
    key = [file_digest([tables.folder / data_file(config), tables.folder / data_file(windows)]), code,
           f"{config}\0{options.n_boot}\0{options.seed}".encode()]  # fmt: skip
    measurements = tables.read(config)
    return derived.results(f"analysis-{config}", key, measurements, lambda: analyse(
        measurements, tables.scan(windows), config=config, n_boot=options.n_boot, seed=options.seed))  # fmt: skip


def write_dataset(folder: Path, gathered: Gathered, cache: RowCache, version: str, options: BuildOptions) -> Counts:
    """Write the configs, findings, rejections, figures, changelog, card and (last) the manifest into ``folder``.

    The configs (for the same files' keys), the analyses, the estimator's files and the site are copied from the
    cache where their inputs are unchanged.
    """
    derived, code = Derived(cache.derived), code_digest()
    keys = [v.key for v in gathered.kept]
    derived.files("configs", [keys_digest(keys), code], folder, ("data",), lambda: write_configs(cache, keys, folder))
    tables = Tables(folder)
    gated = _analyse(tables, derived, code, "measurements", options)
    everything = _analyse(tables, derived, code, "measurements" + ALL_SUFFIX, options)
    findings = compute_findings(everything)
    (folder / FINDINGS_FILE).write_text(findings_text(findings), encoding="utf-8")
    (folder / REJECTIONS_FILE).write_text(rejections_text(gathered), encoding="utf-8")
    estimate_inputs = [folder / data_file(c + ALL_SUFFIX) for c in ("measurements", "submissions")]
    derived.files(
        "estimate",
        [file_digest(estimate_inputs), code, version.encode()],
        folder,
        (ARTIFACT, WEB_FOLDER),
        lambda: write_estimate(folder, tables, version),
    )  # artifact.json and the estimator page (estimate/)
    figures = draw_figures(everything, folder, cache.figures)
    changelog = changelog_text()
    (folder / "CHANGELOG.md").write_text(changelog, encoding="utf-8")
    summary = counts(tables, gathered)
    card = CardInputs(
        version=version, hf_repo=options.hf_repo, gated=gated, everything=everything, findings=findings,
        counts=summary, figures=figures, include_examples=options.include_examples,
        skipped_examples=len(gathered.skipped_examples), changelog=changelog, doi=options.doi,
    )  # fmt: skip
    (folder / "README.md").write_text(render_card(card), encoding="utf-8")
    site_key = [file_digest(tree_files(folder)), code, version.encode(),
                repr((options.hf_repo, options.doi, options.n_boot, options.seed)).encode()]  # fmt: skip
    site = (gated.crossovers, everything.crossovers)
    derived.files("site", site_key, folder, (SITE_DIR,), lambda: write_build_site(folder, version, options, *site))
    (folder / MANIFEST).write_text(manifest_text(folder, version, gathered), encoding="utf-8")
    return summary


def build(sources: Sequence[Source], out: Path, options: BuildOptions | None = None) -> BuildResult:
    """Build the dataset folder ``out`` atomically from every file of ``sources``.

    Files the validator rejects (for more than their spread) are left out and listed in ``rejections.json``; under
    ``options.strict`` any rejection refuses the build (BuildRefusedError) instead.
    """
    options = options or BuildOptions()
    version = resolve_version(options.version)
    with _cache(options.cache) as cache:
        gathered, validated = gather(sources, cache, include_examples=options.include_examples)
        if options.strict and gathered.rejected:
            raise refusal(gathered.rejected, len(gathered.verdicts))
        with staged_output(out) as staging:
            summary = write_dataset(staging, gathered, cache, version, options)
            files = tuple(sorted(p.relative_to(staging).as_posix() for p in staging.rglob("*") if p.is_file()))
    return BuildResult(
        out=out, version=version, submissions=summary.submissions, submissions_all=summary.submissions_all,
        measurements=summary.measurements, windows=summary.windows, skipped_examples=len(gathered.skipped_examples),
        rejected=len(gathered.rejected), validated=validated, files=files,
    )  # fmt: skip
