"""What goes into a build: every submission the validator accepts, or nothing at all.

The publisher validates first (:func:`ecocompute.validate.core.validate_files`) and refuses to build when
any file is rejected. Submissions marked ``example: true`` are left out unless examples are asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ecocompute.schema.errors import EcocomputeError, UsageError
from ecocompute.schema.models import Submission
from ecocompute.validate.core import FileResult, discover, validate_files

MAX_LISTED = 10


class BuildRefusedError(EcocomputeError):
    """The validator rejected at least one submission, so nothing was built."""


@dataclass(frozen=True)
class Source:
    """A submissions folder and the allowed_signers file its signatures are checked against."""

    root: Path
    allowed_signers: Path

    @classmethod
    def at(cls, root: Path, allowed_signers: Path | None = None) -> Source:
        """A source whose allowed_signers file defaults to ``<root>/allowed_signers``."""
        return cls(root, allowed_signers if allowed_signers is not None else root / "allowed_signers")


@dataclass(frozen=True)
class Accepted:
    """One accepted submission: where it was (``name``: folder name + path inside it) and its raw-bytes hash."""

    name: str
    submission: Submission
    content_sha256: str


@dataclass(frozen=True)
class Gathered:
    """The accepted submissions of a build, in name order, and the examples it left out."""

    accepted: tuple[Accepted, ...]
    skipped_examples: tuple[str, ...]


def _name(source: Source, path: Path) -> str:
    return (Path(source.root.name) / path.relative_to(source.root)).as_posix()


def _refusal(rejected: list[tuple[str, FileResult]], total: int) -> BuildRefusedError:
    lines = []
    for name, result in rejected[:MAX_LISTED]:
        first = result.errors[0]
        more = f" (+{len(result.errors) - 1} more)" if len(result.errors) > 1 else ""
        lines.append(f"{name}: {first.code} {first.message}{more}")
    if len(rejected) > MAX_LISTED:
        lines.append(f"... and {len(rejected) - MAX_LISTED} more files")
    return BuildRefusedError(
        f"{len(rejected)} of {total} submissions are rejected by the validator, so nothing was built: "
        + "; ".join(lines)
        + ". Run `ecocompute validate` on them for the full report, fix or remove them, and build again."
    )


def _validate(source: Source) -> list[tuple[str, FileResult]]:
    if not source.root.is_dir():
        raise UsageError(f"submissions folder {source.root} does not exist: pass --submissions DIR")
    paths = discover(source.root)
    if not paths:
        return []
    if not source.allowed_signers.is_file():
        raise UsageError(f"allowed signers file {source.allowed_signers} does not exist: pass --allowed-signers FILE")
    results = validate_files(paths, allowed_signers=source.allowed_signers, submissions_root=source.root)
    return [(_name(source, r.path), r) for r in results]


def _check_unique_ids(accepted: Sequence[Accepted]) -> None:
    seen: dict[str, str] = {}
    for item in accepted:
        sub_id = item.submission.payload.submission_id
        if sub_id in seen:
            raise BuildRefusedError(f"submission id {sub_id} is in both {seen[sub_id]} and {item.name}: keep one")
        seen[sub_id] = item.name


def gather(sources: Sequence[Source], *, include_examples: bool = False) -> Gathered:
    """Validate every submission of every source; refuse on any rejection; return the accepted ones."""
    results = [pair for source in sources for pair in _validate(source)]
    rejected = [(name, r) for name, r in results if not r.accepted]
    if rejected:
        raise _refusal(rejected, len(results))
    accepted, skipped = [], []
    for name, result in sorted(results, key=lambda pair: pair[0]):
        if result.submission is None or result.content_sha256 is None:  # pragma: no cover - accepted implies both
            raise BuildRefusedError(f"{name}: the validator accepted it but returned no submission; please report it")
        if result.submission.payload.example and not include_examples:
            skipped.append(name)
            continue
        accepted.append(Accepted(name, result.submission, result.content_sha256))
    _check_unique_ids(accepted)
    return Gathered(tuple(accepted), tuple(skipped))
