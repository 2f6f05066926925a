"""What a build derives from its configs, kept in the build cache by the digest of its inputs and code.

A warm build whose submissions did not change writes byte-identical configs, so the analysis of each tier, the
estimator's artifact and the site come out the same: they are copied from the cache instead of computed again.
Each entry is keyed by the bytes it is computed from (the config files, the version, the options) and the code that
computes it (the package's files), so any change in either computes it afresh. Layout::

    v1/derived/<name>-<digest>/...      the files of one output, or one analysis as parquet frames

An entry is written into a temporary folder renamed into place; only the newest KEEP entries of a name are kept.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import fields
from importlib import metadata, resources
from importlib.resources.abc import Traversable
from pathlib import Path

import polars as pl

from ecocompute.analysis.results import Results

KEEP = 4
CHUNK = 1 << 20
FRAMES = tuple(f.name for f in fields(Results) if f.name not in ("config", "measurements", "n_boot", "seed"))


def _walk(node: Traversable) -> Iterable[tuple[str, Traversable]]:
    """The files of a package and of its data folders (a subpackage, with its own ``__init__.py``, is not entered)."""
    for child in sorted(node.iterdir(), key=lambda c: str(c.name)):
        if child.is_dir():
            if child.name != "__pycache__" and not child.joinpath("__init__.py").is_file():
                yield from ((f"{child.name}/{n}", c) for n, c in _walk(child))
        elif not str(child.name).endswith((".pyc", ".pyo")):
            yield str(child.name), child


# the code whatever a build derives from its configs runs (the card's and manifest's are not cached)
CODE = ("ecocompute", "ecocompute.analysis", "ecocompute.estimate", "ecocompute.publish", "ecocompute.schema",
        "ecocompute.site", "ecocompute.validate")  # fmt: skip


LIBRARIES = ("polars", "numpy", "scipy")


def code_digest(packages: Sequence[str] = CODE) -> bytes:
    """SHA-256 over the files of ``packages`` (code, data, web assets) and the libraries' versions.

    An entry is valid for this code only: the libraries (:data:`LIBRARIES`) compute and write the outputs.
    """
    digest = hashlib.sha256()
    for library in LIBRARIES:
        digest.update(f"{library}=={metadata.version(library)}\0".encode())
    for package in packages:
        for name, item in _walk(resources.files(package)):
            digest.update(f"{package}/{name}".encode() + b"\0" + item.read_bytes() + b"\0")
    return digest.digest()


def keys_digest(keys: Sequence[str]) -> bytes:
    """SHA-256 over cache keys in their order (the rows of a build are those of its files' keys)."""
    return hashlib.sha256("\n".join(keys).encode()).digest()


def file_digest(paths: Iterable[Path]) -> bytes:
    """SHA-256 over the names and bytes of ``paths``, streamed."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode() + b"\0")
        with path.open("rb") as handle:
            while block := handle.read(CHUNK):
                digest.update(block)
        digest.update(b"\0")
    return digest.digest()


def tree_files(folder: Path) -> list[Path]:
    """Every file under ``folder``, sorted by path (what a derived output may have read)."""
    return sorted((p for p in folder.rglob("*") if p.is_file()), key=lambda p: p.relative_to(folder).as_posix())


def _copy(source: Path, target: Path) -> None:
    if source.is_dir():
        shutil.copytree(source, target, dirs_exist_ok=True)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)


class Derived:
    """Derived outputs by the digest of their inputs, under ``root`` (None: nothing kept, everything computed)."""

    def __init__(self, root: Path | None) -> None:
        self.root = root

    def _entry(self, name: str, key: Sequence[bytes]) -> Path | None:
        if self.root is None:
            return None
        digest = hashlib.sha256(b"\0".join([name.encode(), *key])).hexdigest()[:24]
        return self.root / f"{name}-{digest}"

    @staticmethod
    def _keep(name: str, staging: Path, entry: Path) -> None:
        """Rename ``staging`` into place as ``entry``; drop the oldest entries of ``name`` beyond KEEP."""
        try:
            staging.rename(entry)
        except OSError:  # written by another build meanwhile
            shutil.rmtree(staging, ignore_errors=True)
        others = sorted((p for p in entry.parent.glob(f"{name}-*") if p != entry), key=lambda p: p.stat().st_mtime)
        for old in others[: max(0, len(others) - (KEEP - 1))]:
            shutil.rmtree(old, ignore_errors=True)

    @staticmethod
    def _staging(entry: Path) -> Path:
        entry.parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix=".derived-", dir=entry.parent))

    def files(
        self, name: str, key: Sequence[bytes], folder: Path, outputs: Sequence[str], produce: Callable[[], object]
    ) -> None:
        """``produce()`` writes ``outputs`` (files or folders under ``folder``), or they are copied from before."""
        entry = self._entry(name, key)
        if entry is not None and entry.is_dir():
            for output in outputs:
                _copy(entry / output, folder / output)
            return
        produce()
        if entry is None:
            return
        staging = self._staging(entry)
        for output in outputs:
            _copy(folder / output, staging / output)
        self._keep(name, staging, entry)

    def results(
        self, name: str, key: Sequence[bytes], measurements: pl.DataFrame, produce: Callable[[], Results]
    ) -> Results:
        """The analysis ``produce()`` returns, or the one kept from before for the same ``key``."""
        entry = self._entry(name, key)
        if entry is not None and entry.is_dir():
            meta = json.loads((entry / "results.json").read_text(encoding="utf-8"))
            frames = {frame: pl.read_parquet(entry / f"{frame}.parquet") for frame in FRAMES}
            return Results(config=meta["config"], measurements=measurements, n_boot=meta["n_boot"], seed=meta["seed"],
                           **frames)  # fmt: skip
        results = produce()
        if entry is None:
            return results
        staging = self._staging(entry)
        for frame in FRAMES:
            getattr(results, frame).write_parquet(staging / f"{frame}.parquet")
        meta = {"config": results.config, "n_boot": results.n_boot, "seed": results.seed}
        (staging / "results.json").write_text(json.dumps(meta), encoding="utf-8")
        self._keep(name, staging, entry)
        return results
