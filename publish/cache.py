"""The build cache: each file's verdict and rows, kept by the file's cache key, so a rebuild redoes only what changed.

Layout under the cache folder (``--cache DIR``; default ``$XDG_CACHE_HOME/ecocompute/publish``)::

    v1/chunks/<id>/verdicts.parquet       one row per file: its Verdict
    v1/chunks/<id>/{windows,measurements,submissions}.parquet
                                          the checked rows of the files of that chunk that enter the dataset,
                                          with their key in ``_key`` and their file's tier in ``_gate``
    v1/figures/<digest>/figure.{svg,pdf,png}
                                          a figure, by the digest of the rows it plots and the plotting code
    v1/derived/<name>-<digest>/...        an analysis, the estimator's files, the site: by the digest of the
                                          configs they are computed from and the code (:mod:`.memo`)

A chunk is written once, into a temporary folder renamed into place, so a killed build leaves no half chunk.
A build adds one chunk for the files it validated; when there are more than MAX_CHUNKS, the live rows are
streamed into one chunk and the rest deleted. The tables of a build are read from the chunks lazily
(:meth:`RowCache.scan`) and streamed to parquet, never held whole.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl

from ecocompute.analysis.defaults import CONFIGS
from ecocompute.publish.inputs import InputFile, Verdict, parsed_submission, verdict_of
from ecocompute.schema.models import Submission
from ecocompute.schema.tables import (
    measurement_rows,
    measurements_frame,
    submission_row,
    submissions_frame,
    window_rows,
    windows_frame,
)
from ecocompute.validate.core import FileResult

CACHE_FORMAT = "v1"
MAX_CHUNKS = 16
KEY = "_key"
GATE = "_gate"
TABLES = CONFIGS
VERDICT_SCHEMA: dict[str, pl.DataType | type[pl.DataType]] = {
    "key": pl.String, "name": pl.String, "content_sha256": pl.String, "submission_id": pl.String,
    "in_dataset": pl.Boolean, "passes_cv_gate": pl.Boolean, "example": pl.Boolean, "windows": pl.Int64,
    "warmup_windows": pl.Int64, "codes": pl.List(pl.String), "messages": pl.List(pl.String),
}  # fmt: skip


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/ecocompute/publish``, else ``~/.cache/ecocompute/publish``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ecocompute" / "publish"


def _verdict_row(v: Verdict) -> dict[str, object]:
    return {"key": v.key, "name": v.name, "content_sha256": v.content_sha256, "submission_id": v.submission_id,
            "in_dataset": v.in_dataset, "passes_cv_gate": v.passes_cv_gate, "example": v.example,
            "windows": v.windows, "warmup_windows": v.warmup_windows, "codes": list(v.codes),
            "messages": list(v.messages)}  # fmt: skip


def _verdict(row: dict[str, object]) -> Verdict:
    return Verdict(
        key=str(row["key"]), name=str(row["name"]), content_sha256=str(row["content_sha256"]),
        submission_id=None if row["submission_id"] is None else str(row["submission_id"]),
        in_dataset=bool(row["in_dataset"]), passes_cv_gate=bool(row["passes_cv_gate"]), example=bool(row["example"]),
        windows=int(row["windows"]), warmup_windows=int(row["warmup_windows"]),  # type: ignore[call-overload]
        codes=tuple(row["codes"]), messages=tuple(row["messages"]),  # type: ignore[arg-type]
    )  # fmt: skip


def rows_frames(results: Sequence[tuple[Verdict, Submission | None]]) -> dict[str, pl.DataFrame]:
    """The checked rows of the files that enter the dataset, each with its file's key and tier.

    ``passes_cv_gate``: on a measurement, whether its CV is below the gate (the measurements table's own column);
    on a window, its measurement's; on a submission, whether every measurement passes. ``_gate`` is the file's
    verdict, which decides the plain configs (a file that fails the gate leaves them whole).
    """
    rows: dict[str, list[dict[str, object]]] = {name: [] for name in TABLES}
    keys: dict[str, list[str]] = {name: [] for name in TABLES}
    gates: dict[str, list[bool]] = {name: [] for name in TABLES}
    for verdict, sub in results:
        if not verdict.in_dataset or sub is None:
            continue
        made = {"windows": window_rows(sub), "measurements": measurement_rows(sub),
                "submissions": [submission_row(sub, verdict.content_sha256)]}  # fmt: skip
        for name, some in made.items():
            rows[name] += some
            keys[name] += [verdict.key] * len(some)
            gates[name] += [verdict.passes_cv_gate] * len(some)
    measurements = measurements_frame(rows["measurements"])
    if "passes_cv_gate" not in measurements.columns:  # a schema before the column: the file's verdict stands in
        measurements = measurements.with_columns(pl.Series("passes_cv_gate", gates["measurements"], pl.Boolean))
    per_measurement = measurements.select("submission_id", "precision", "passes_cv_gate")
    windows = windows_frame(rows["windows"])
    if "passes_cv_gate" not in windows.columns:
        windows = windows.join(per_measurement, on=["submission_id", "precision"], how="left", maintain_order="left")
    submissions = submissions_frame(rows["submissions"])
    if "passes_cv_gate" not in submissions.columns:
        submissions = submissions.with_columns(pl.Series("passes_cv_gate", gates["submissions"], pl.Boolean))
    checked = {"windows": windows, "measurements": measurements, "submissions": submissions}
    return {
        name: frame.with_columns(pl.Series(GATE, gates[name], pl.Boolean), pl.Series(KEY, keys[name], pl.String))
        for name, frame in checked.items()
    }


def _chunk_id(keys: Sequence[str]) -> str:
    """A chunk is named by the keys it holds."""
    return hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()[:20]


class FileHashes:
    """Content hashes of an earlier build by path, size and mtime, so unchanged files are not read again.

    A file whose size or modification time (in ns) differs is hashed afresh; the hash, not the stat, is the key of
    every verdict and row.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.known: dict[str, tuple[int, int, str]] = {}
        if path.is_file():
            frame = pl.read_parquet(path)
            self.known = {p: (s, m, h) for p, s, m, h in frame.iter_rows()}

    def lookup(self, path: str, stat: os.stat_result) -> str | None:
        """The earlier hash of ``path`` when its size and mtime are those of then."""
        found = self.known.get(path)
        if found is None or found[0] != stat.st_size or found[1] != stat.st_mtime_ns:
            return None
        return found[2]

    def save(self, files: Sequence[InputFile]) -> None:
        """Record the hash, size and mtime of ``files`` for the next build (atomically)."""
        rows = []
        for f in files:
            stat = os.stat(f.path)  # noqa: PTH116 - str paths, 100,000 of them
            rows.append((f.path, stat.st_size, stat.st_mtime_ns, f.content_sha256))
        schema = {"path": pl.String, "size": pl.Int64, "mtime_ns": pl.Int64, "sha256": pl.String}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        staging = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        pl.DataFrame(rows, schema=schema, orient="row").write_parquet(staging)
        staging.replace(self.path)


class RowCache:
    """Verdicts and rows by cache key, in chunks of parquet files under ``folder``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.root = folder / CACHE_FORMAT / "chunks"
        self.figures = folder / CACHE_FORMAT / "figures"
        self.derived = folder / CACHE_FORMAT / "derived"
        self.hashes = folder / CACHE_FORMAT / "file-hashes.parquet"

    def file_hashes(self) -> FileHashes:
        """The content hashes of the files of the last build, by path, size and mtime."""
        return FileHashes(self.hashes)

    def chunks(self) -> list[Path]:
        """The complete chunks, in name order."""
        if not self.root.is_dir():
            return []
        return sorted(p for p in self.root.iterdir() if p.is_dir() and (p / "verdicts.parquet").is_file())

    def verdicts(self, keys: Sequence[str]) -> dict[str, Verdict]:
        """The cached verdict of each of ``keys`` that has one."""
        chunks = self.chunks()
        if not chunks or not keys:
            return {}
        wanted = pl.DataFrame({"key": list(keys)}, schema={"key": pl.String})
        frame = (
            pl.scan_parquet([c / "verdicts.parquet" for c in chunks])
            .join(wanted.lazy(), on="key", how="semi")
            .unique("key", keep="first")
            .collect()
        )
        return {row["key"]: _verdict(row) for row in frame.iter_rows(named=True)}

    def add(self, validated: Sequence[tuple[InputFile, FileResult]]) -> list[Verdict]:
        """Verdicts of freshly validated files; their verdicts and rows are written as one new chunk."""
        pairs = []
        for item, result in validated:
            sub = parsed_submission(item, result)
            pairs.append((verdict_of(item, result, sub), sub))
        verdicts = [v for v, _ in pairs]
        if not pairs:
            return verdicts
        frames = rows_frames(pairs)
        frames["verdicts"] = pl.DataFrame([_verdict_row(v) for v in verdicts], schema=VERDICT_SCHEMA, orient="row")
        self._write_chunk(frames, _chunk_id(frames["verdicts"]["key"].to_list()))
        return verdicts

    def _write_chunk(self, frames: Mapping[str, pl.DataFrame | pl.LazyFrame], chunk_id: str) -> None:
        """Write ``frames`` (a lazy one streamed) as the chunk ``chunk_id``, atomically; a chunk there stays."""
        self.root.mkdir(parents=True, exist_ok=True)
        final = self.root / chunk_id
        if final.is_dir():
            return  # the same files again: the chunk is already there
        staging = Path(tempfile.mkdtemp(prefix=".chunk-", dir=self.root))
        for name, frame in frames.items():
            target = staging / f"{name}.parquet"
            if isinstance(frame, pl.LazyFrame):
                frame.sink_parquet(target, compression="zstd", compression_level=3)
            else:
                frame.write_parquet(target, compression="zstd", compression_level=3)
        try:
            staging.rename(final)
        except OSError:  # another build wrote the same chunk meanwhile
            shutil.rmtree(staging, ignore_errors=True)

    def scan(self, table: str, keys: Sequence[str], *, with_key: bool = False) -> pl.LazyFrame:
        """The cached rows of ``table`` for ``keys`` (one copy per key), with the file's ``_gate``; the key if asked."""
        files = [c / f"{table}.parquet" for c in self.chunks() if (c / f"{table}.parquet").is_file()]
        wanted = pl.DataFrame({KEY: list(keys)}, schema={KEY: pl.String}).lazy()
        if not files or not keys:
            empty = rows_frames([])[table].lazy()
            return empty if with_key else empty.drop(KEY)
        # a key lives in one chunk, except after a crash between a chunk and a compaction: keep the newest chunk's
        chosen = (
            pl.concat(
                [
                    pl.scan_parquet(f).select(KEY).unique().with_columns(pl.lit(i).alias("_chunk"))
                    for i, f in enumerate(files)
                ]
            )
            .join(wanted, on=KEY, how="semi")
            .group_by(KEY)
            .agg(pl.col("_chunk").max())
            .collect()
        )
        used = sorted(set(chosen["_chunk"].to_list()))  # chunks of other keys (another validator, say) are not read
        if not used:
            empty = rows_frames([])[table].lazy()
            return empty if with_key else empty.drop(KEY)
        parts = [pl.scan_parquet(files[i]).join(chosen.lazy().filter(pl.col("_chunk") == i).select(KEY), on=KEY,
                                                how="semi") for i in used]  # fmt: skip
        rows = pl.concat(parts, how="vertical")
        return rows if with_key else rows.drop(KEY)

    def compact(self, live: Sequence[str]) -> None:
        """When there are more than MAX_CHUNKS chunks, stream the ``live`` keys' verdicts and rows into one.

        Every table is streamed from the old chunks into the new one (``sink_parquet``), so memory does not grow
        with the number of files; the old chunks are deleted once the new one is in place.
        """
        chunks = self.chunks()
        if len(chunks) <= MAX_CHUNKS:
            return
        wanted = pl.DataFrame({"key": list(live)}, schema={"key": pl.String}).lazy()
        verdicts = pl.scan_parquet([c / "verdicts.parquet" for c in chunks]).join(wanted, on="key", how="semi")
        kept = verdicts.select("key").unique().collect()["key"].to_list()
        frames: dict[str, pl.LazyFrame] = {"verdicts": verdicts.unique("key", keep="first")}
        for table in TABLES:
            frames[table] = self.scan(table, live, with_key=True)
        newest = self.root / _chunk_id(kept)
        self._write_chunk(frames, newest.name)
        for chunk in chunks:
            if chunk != newest:
                shutil.rmtree(chunk, ignore_errors=True)
