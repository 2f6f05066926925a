"""What goes into a build: every submission the validator accepts, or nothing at all.

The publisher validates first (:func:`ecocompute.validate.core.validate_files`) and refuses to build when
any file is rejected. Submissions marked ``example: true`` are left out unless examples are asked for.

A build may also be given folders of runs *beyond the gate* (:func:`_gather_beyond_gate`, e.g. the repository's
``runs/``): signed submissions the validator rejects for their spread between windows (E-CV) and for nothing else.
They never become rows of the dataset; the card reports what they show in a section of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ecocompute.schema.errors import EcocomputeError, UsageError
from ecocompute.schema.models import Submission
from ecocompute.validate.core import FileResult, discover, validate_files

MAX_LISTED = 10
CHECKPOINT_SUFFIX = ".partial.json"


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
    beyond_gate: tuple[Accepted, ...] = ()


def _name(source: Source, path: Path) -> str:
    """Folder name + path inside it (``.`` is named by the folder it stands for)."""
    return (Path(source.root.name or source.root.resolve().name) / path.relative_to(source.root)).as_posix()


def _listed(lines: Sequence[str]) -> str:
    """The first MAX_LISTED lines joined by "; ", and how many more there are."""
    more = [f"... and {len(lines) - MAX_LISTED} more files"] if len(lines) > MAX_LISTED else []
    return "; ".join([*lines[:MAX_LISTED], *more])


def _refusal(rejected: list[tuple[str, FileResult]], total: int) -> BuildRefusedError:
    lines = []
    for name, result in rejected:
        first = result.errors[0]
        more = f" (+{len(result.errors) - 1} more)" if len(result.errors) > 1 else ""
        lines.append(f"{name}: {first.code} {first.message}{more}")
    return BuildRefusedError(
        f"{len(rejected)} of {total} submissions are rejected by the validator, so nothing was built: "
        + _listed(lines)
        + ". Run `ecocompute validate` on them for the full report, fix or remove them, and build again."
    )


def _validate(source: Source, *, beyond_gate: bool = False) -> list[tuple[str, FileResult]]:
    if not source.root.is_dir():
        what, option = ("runs folder", "--beyond-gate") if beyond_gate else ("submissions folder", "--submissions")
        problem = "is not a folder" if source.root.exists() else "does not exist"
        raise UsageError(f"{what} {source.root} {problem}: pass {option} DIR")
    paths = discover(source.root)
    if beyond_gate:  # a collector checkpoint of an unfinished run (runs/*/checkpoints/) is not a run
        paths = [p for p in paths if not p.name.endswith(CHECKPOINT_SUFFIX)]
    if not paths:
        return []
    if not source.allowed_signers.is_file():
        raise UsageError(f"allowed signers file {source.allowed_signers} does not exist: pass --allowed-signers FILE")
    results = validate_files(paths, allowed_signers=source.allowed_signers, submissions_root=source.root)
    return [(_name(source, r.path), r) for r in results]


def _check_unique_ids(accepted: Sequence[Accepted]) -> None:
    """Refuse a build where one submission id is in two files (of the dataset or beyond the gate)."""
    seen: dict[str, str] = {}
    for item in accepted:
        sub_id = item.submission.payload.submission_id
        if sub_id in seen:
            raise BuildRefusedError(f"submission id {sub_id} is in both {seen[sub_id]} and {item.name}: keep one")
        seen[sub_id] = item.name


def gather(
    sources: Sequence[Source], *, include_examples: bool = False, beyond_gate: Sequence[Source] = ()
) -> Gathered:
    """Validate every submission of every source; refuse on any rejection; return the accepted ones.

    ``beyond_gate``: folders of runs that fail only the CV gate (:func:`_gather_beyond_gate`), returned apart.
    """
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
    beyond = _gather_beyond_gate(beyond_gate)
    _check_unique_ids([*accepted, *beyond])
    return Gathered(tuple(accepted), tuple(skipped), beyond)


def _gather_beyond_gate(sources: Sequence[Source]) -> tuple[Accepted, ...]:
    """Validate runs beyond the gate: each must fail the CV gate (E-CV) and nothing else; refuse on any other.

    Checkpoints of unfinished runs (``*.partial.json``) in those folders are left out: they are not runs. A run that
    passes the gate belongs in a submissions folder; one with any other error (a bad signature, a window whose
    counter and power integral disagree) or marked as an example is not evidence the card can show.
    """
    roots = [source.root.resolve() for source in sources]
    twice = sorted({str(root) for root in roots if roots.count(root) > 1})
    if twice:
        raise UsageError(f"--beyond-gate {', '.join(twice)} is given more than once: give each folder once")
    results = [pair for source in sources for pair in _validate(source, beyond_gate=True)]
    refused, taken = [], []
    for name, result in sorted(results, key=lambda pair: pair[0]):
        codes = {f.code for f in result.errors}
        if not codes:
            refused.append(f"{name}: passes the CV gate, so it belongs in a submissions folder, not beyond the gate")
        elif codes != {"E-CV"}:
            first = next(f for f in result.errors if f.code != "E-CV")
            refused.append(f"{name}: {first.code} {first.message}")
        elif result.submission is None or result.content_sha256 is None:  # pragma: no cover - E-CV implies both
            refused.append(
                f"{name}: rejected for its spread, but the validator returned no submission; please report it"
            )
        elif result.submission.payload.example:
            refused.append(f"{name}: is marked example: true; runs beyond the gate must be measurements")
        else:
            taken.append(Accepted(name, result.submission, result.content_sha256))
    if refused:
        raise BuildRefusedError(
            f"{len(refused)} of {len(results)} runs beyond the gate are not measurements rejected for their spread "
            f"(E-CV) alone, so nothing was built: {_listed(refused)}. Run `ecocompute validate` on them, then move "
            "or remove them, and build again."
        )
    return tuple(taken)
