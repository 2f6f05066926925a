"""What goes into a build: every file of the submissions folders, each with the validator's verdict.

The one input of a build is ``submissions/`` (or several such folders). Each ``*.json`` file gets a
:class:`Verdict`: a file whose only error findings are ``E-CV`` (the spread between windows is above the
2% gate) enters the dataset's *all* tier with ``passes_cv_gate = False``; a file with no error finding enters
both tiers; any other error rejects it, and its findings are published beside the build (``rejections.json``).
Submissions marked ``example: true`` are left out unless examples are asked for.

Verdicts and the rows of each file are cached by the file's content hash (:mod:`.cache`), so a rebuild
validates only the files that changed.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ecocompute.schema.errors import EcocomputeError, UsageError
from ecocompute.schema.io import parse_json, read_bytes, submission_from_document
from ecocompute.schema.models import Submission
from ecocompute.validate.core import FileResult

MAX_LISTED = 10
GATE_CODE = "E-CV"


class BuildRefusedError(EcocomputeError):
    """The build cannot go on (a rejection under ``--strict``, or one id in two files)."""


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
class InputFile:
    """One file of a source: where it is, its name in the build (folder name + path) and its cache key."""

    source: Source
    path: str
    name: str
    content_sha256: str
    key: str


@dataclass(frozen=True)
class Verdict:
    """The validator's verdict on one file, as the build uses it (and caches it).

    ``in_dataset``: the file's rows enter the ``_all`` configs (no error finding but ``E-CV``);
    ``passes_cv_gate``: they enter the default configs too. ``codes``/``messages`` are the error findings.
    """

    key: str
    name: str
    content_sha256: str
    submission_id: str | None
    in_dataset: bool
    passes_cv_gate: bool
    example: bool
    windows: int
    warmup_windows: int
    codes: tuple[str, ...]
    messages: tuple[str, ...]


@dataclass(frozen=True)
class Gathered:
    """The verdicts of a build, in name order, split into what enters the dataset and what does not."""

    verdicts: tuple[Verdict, ...]
    include_examples: bool

    @property
    def kept(self) -> tuple[Verdict, ...]:
        """Files whose rows are in the ``_all`` configs."""
        return tuple(v for v in self.verdicts if v.in_dataset and (self.include_examples or not v.example))

    @property
    def gated(self) -> tuple[Verdict, ...]:
        """Files whose rows are in the default configs (they pass the CV gate)."""
        return tuple(v for v in self.kept if v.passes_cv_gate)

    @property
    def skipped_examples(self) -> tuple[str, ...]:
        """Names of accepted example files this build left out."""
        if self.include_examples:
            return ()
        return tuple(v.name for v in self.verdicts if v.in_dataset and v.example)

    @property
    def rejected(self) -> tuple[Verdict, ...]:
        """Files the validator rejected (for more than their spread)."""
        return tuple(v for v in self.verdicts if not v.in_dataset)


def _folder_name(source: Source) -> str:
    """The name a source's files carry in the build (``.`` is named by the folder it stands for)."""
    return source.root.name or source.root.resolve().name


def _sha256(path: str | Path) -> str:
    with open(path, "rb") as handle:  # noqa: PTH123 - a str path; a Path per file costs more than the hash
        return hashlib.sha256(handle.read()).hexdigest()


def walk_json(root: Path) -> list[tuple[str, str]]:
    """Every ``*.json`` file under ``root`` as (path, path inside root), sorted; symlinked folders are not entered.

    The same files as :func:`ecocompute.validate.core.discover`, as strings (a build lists 100,000 of them).
    """
    found = []
    base = os.path.abspath(root)  # noqa: PTH100 - str paths, 100,000 of them
    for folder, _dirs, files in os.walk(base, followlinks=False):
        inside = os.path.relpath(folder, base)
        prefix = "" if inside == "." else inside.replace(os.sep, "/") + "/"
        found += [(os.path.join(folder, name), prefix + name) for name in files if name.endswith(".json")]  # noqa: PTH118
    return sorted(found, key=lambda pair: pair[1])


HashLookup = Callable[[str, os.stat_result], str | None]


# the command-line front ends of these packages print verdicts, they do not make them
FRONT_ENDS = ("cli.py",)


def code_fingerprint() -> str:
    """SHA-256 over the validator's and the schema's code and data: a cached verdict is valid for these only.

    Their ``cli.py`` modules are left out: a change of a command's output (``ecocompute show``) leaves every verdict
    as it was, and would otherwise validate every file of the folder again.
    """
    digest = hashlib.sha256()
    for package in ("ecocompute.validate", "ecocompute.schema"):
        root = resources.files(package)
        names = sorted(str(p.name) for p in root.iterdir()
                       if str(p.name).endswith((".py", ".json")) and str(p.name) not in FRONT_ENDS)  # fmt: skip
        for name in names:
            digest.update(name.encode() + b"\0" + root.joinpath(name).read_bytes())
        data = root.joinpath("data")
        if data.is_dir():
            for item in sorted(data.iterdir(), key=lambda p: str(p.name)):
                digest.update(str(item.name).encode() + b"\0" + item.read_bytes())
    return digest.hexdigest()


def _check_source(source: Source) -> list[tuple[str, str]]:
    if not source.root.is_dir():
        problem = "is not a folder" if source.root.exists() else "does not exist"
        raise UsageError(f"submissions folder {source.root} {problem}: pass --submissions DIR")
    paths = walk_json(source.root)
    if paths and not source.allowed_signers.is_file():
        raise UsageError(f"allowed signers file {source.allowed_signers} does not exist: pass --allowed-signers FILE")
    return paths


def input_files(
    sources: Sequence[Source], fingerprint: str | None = None, known_hash: HashLookup | None = None
) -> list[InputFile]:
    """Every ``*.json`` file of every source with its content hash and cache key.

    The key covers the file's bytes, its name (the validator checks the path), the allowed_signers file and the
    validator's code (``fingerprint``), so a cached verdict is reused only where a fresh one would be the same.
    ``known_hash(path, stat)`` may give a file's hash from an earlier build when its size and mtime are unchanged.
    """
    roots = [s.root.resolve() for s in sources]
    twice = sorted({str(r) for r in roots if roots.count(r) > 1})
    if twice:
        raise UsageError(f"--submissions {', '.join(twice)} is given more than once: give each folder once")
    code = fingerprint or code_fingerprint()
    files = []
    for source in sources:
        paths = _check_source(source)
        if not paths:
            continue
        signers = _sha256(source.allowed_signers)
        folder = _folder_name(source)
        for path, inside in paths:
            content = known_hash(path, os.stat(path)) if known_hash is not None else None  # noqa: PTH116
            content = content or _sha256(path)
            name = f"{folder}/{inside}"
            key = hashlib.sha256(f"{content}\0{name}\0{signers}\0{code}".encode()).hexdigest()
            files.append(InputFile(source, path, name, content, key))
    return files


def passes_gate(result: FileResult) -> bool:
    """The validator's CV-gate verdict (``FileResult.passes_cv_gate`` once it has one; else: no E-CV finding)."""
    verdict = getattr(result, "passes_cv_gate", None)
    if isinstance(verdict, bool):
        return verdict
    return not any(f.code == GATE_CODE for f in result.findings)


def parsed_submission(item: InputFile, result: FileResult) -> Submission | None:
    """The submission the validator checked: its own, else the file parsed again (it drops them to save memory).

    Parsed again only when the validator found it schema-valid (``summary``); the bytes must still hash to what
    the validator read, else the build stops (the file changed under it).
    """
    if result.submission is not None or result.summary is None:
        return result.submission
    data = read_bytes(item.path)
    if hashlib.sha256(data).hexdigest() != result.content_sha256:
        raise BuildRefusedError(f"{item.name} changed while the build read it: build again")
    return submission_from_document(parse_json(data))


def verdict_of(item: InputFile, result: FileResult, sub: Submission | None = None) -> Verdict:
    """The build's verdict on one validated file: E-CV alone keeps it in the ``_all`` tier.

    ``sub``: the file's submission when the validator did not keep it (:func:`parsed_submission`).
    """
    errors = [f for f in result.errors if f.code != GATE_CODE]
    sub = result.submission if sub is None else sub
    in_dataset = not errors and sub is not None and result.content_sha256 is not None
    shown = list(result.errors) if not in_dataset else []
    payload = sub.payload if sub is not None else None
    return Verdict(
        key=item.key, name=item.name, content_sha256=item.content_sha256,
        submission_id=payload.submission_id if payload is not None else None,
        in_dataset=in_dataset, passes_cv_gate=in_dataset and passes_gate(result),
        example=bool(payload.example) if payload is not None else False,
        windows=sum(len(m.windows) for m in payload.measurements) if payload is not None else 0,
        warmup_windows=sum(len(m.warmup) for m in payload.measurements) if payload is not None else 0,
        codes=tuple(f.code for f in shown), messages=tuple(f.message for f in shown),
    )  # fmt: skip


def check_unique_ids(verdicts: Iterable[Verdict]) -> None:
    """Refuse a build where one submission id is in two files that both enter it."""
    seen: dict[str, str] = {}
    for v in verdicts:
        if v.submission_id is None:
            continue
        if v.submission_id in seen:
            raise BuildRefusedError(
                f"submission id {v.submission_id} is in both {seen[v.submission_id]} and {v.name}: keep one"
            )
        seen[v.submission_id] = v.name


def _listed(lines: Sequence[str]) -> str:
    """The first MAX_LISTED lines joined by "; ", and how many more there are."""
    more = [f"... and {len(lines) - MAX_LISTED} more files"] if len(lines) > MAX_LISTED else []
    return "; ".join([*lines[:MAX_LISTED], *more])


def refusal(rejected: Sequence[Verdict], total: int) -> BuildRefusedError:
    """The one-line error of a ``--strict`` build with rejected files."""
    lines = []
    for v in rejected:
        more = f" (+{len(v.codes) - 1} more)" if len(v.codes) > 1 else ""
        first = f"{v.codes[0]} {v.messages[0]}" if v.codes else "rejected"
        lines.append(f"{v.name}: {first}{more}")
    return BuildRefusedError(
        f"{len(rejected)} of {total} submissions are rejected by the validator, so nothing was built: "
        + _listed(lines)
        + ". Run `ecocompute validate` on them for the full report, fix or remove them, and build again."
    )
