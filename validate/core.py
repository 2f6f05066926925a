"""The validator's public API: validate files under a submissions folder, find every submission.

    results = validate_files(paths, allowed_signers=Path("submissions/allowed_signers"),
                             submissions_root=Path("submissions"))
    accepted = [r for r in results if r.accepted]

Reading a file's bytes is the only I/O; nothing is executed, imported or unpickled, nothing written.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

import rfc8785
import sshsig

from ecocompute.schema.models import Measurement, Payload, Submission
from ecocompute.schema.signing import parse_allowed_signers
from ecocompute.validate import checks, windows
from ecocompute.validate.findings import GATE_CODES, Finding, finding
from ecocompute.validate.gpus import GENERIC, GpuBounds, bounds_for
from ecocompute.validate.raw import MAX_FILE_BYTES, check_bytes, check_size

DEFAULT_MAX_CV_PCT = 2.0
IGNORED_FIELDS = ("submission_id", "created_at")


@dataclass(frozen=True)
class FileResult:
    """What the validator found in one file.

    ``submission`` is the parsed document when it follows the schema (even if other checks failed);
    ``content_sha256`` is the SHA-256 of the file's raw bytes when they could be read.
    """

    path: Path
    findings: tuple[Finding, ...]
    submission: Submission | None
    content_sha256: str | None

    @property
    def accepted(self) -> bool:
        """True when no error finding rejects the file: warnings and E-CV (the gate) do not."""
        return not self.rejections

    @property
    def passes_cv_gate(self) -> bool:
        """True when no measurement's CV of J/token is above the gate (no E-CV finding)."""
        return not any(f.code in GATE_CODES for f in self.findings)

    @property
    def tier(self) -> str | None:
        """``"gate"`` (accepted, passes the CV gate), ``"all"`` (accepted, E-CV only) or None (rejected)."""
        if not self.accepted:
            return None
        return "gate" if self.passes_cv_gate else "all"

    def measurement_passes_cv_gate(self, index: int) -> bool:
        """True when measurement ``index`` of the payload has no E-CV finding."""
        prefix = f"payload.measurements[{index}]"
        return not any(
            f.code in GATE_CODES and (f.path == prefix or f.path.startswith((prefix + ".", prefix + "[")))
            for f in self.findings
        )

    @property
    def errors(self) -> tuple[Finding, ...]:
        """Every error finding, E-CV included."""
        return tuple(f for f in self.findings if f.is_error)

    @property
    def rejections(self) -> tuple[Finding, ...]:
        """The error findings that reject the file (every error but E-CV)."""
        return tuple(f for f in self.findings if f.is_error and f.code not in GATE_CODES)


@dataclass(frozen=True)
class Options:
    """Everything a content check needs beside the document."""

    allowed: dict[str, list[sshsig.PublicKey]]
    pr_author: str | None = None
    max_cv_pct: float = DEFAULT_MAX_CV_PCT
    now: datetime = field(default_factory=lambda: datetime.now(UTC))


def discover(submissions_root: Path) -> list[Path]:
    """Every ``*.json`` file under ``submissions_root``, sorted (symlinked folders are not entered)."""
    found: list[Path] = []
    for folder, _dirs, files in os.walk(submissions_root, followlinks=False):
        found.extend(Path(folder) / name for name in files if name.endswith(".json"))
    return sorted(found)


def payload_hash(document: Any) -> str | None:
    """SHA-256 of the RFC 8785 canonical payload without submission_id and created_at (None if unreadable).

    Two submissions with the same hash hold the same measurement, whatever their id or date.
    """
    payload = document.get("payload") if isinstance(document, dict) else None
    if not isinstance(payload, dict):
        return None
    body = {key: value for key, value in payload.items() if key not in IGNORED_FIELDS}
    try:
        return hashlib.sha256(rfc8785.dumps(body)).hexdigest()
    except Exception:  # rfc8785 rejects some numbers; such a file is rejected by other checks
        return None


def submission_id_of(document: Any) -> str | None:
    """The document's payload.submission_id when it is a string."""
    payload = document.get("payload") if isinstance(document, dict) else None
    value = payload.get("submission_id") if isinstance(payload, dict) else None
    return value if isinstance(value, str) else None


# ---- the file system: where the file is, and its bytes -------------------------------------------


def _absolute(path: Path) -> Path:
    """An absolute, normalised path that does not follow symbolic links (unlike ``resolve``)."""
    return Path(os.path.normpath(path.absolute()))


def locate(path: Path, root: Path) -> tuple[PurePosixPath | None, list[Finding]]:
    """The path relative to ``root`` (None when outside it), and E-SYMLINK / E-OUTSIDE findings."""
    absolute, root_abs = _absolute(path), _absolute(root)
    if not absolute.is_relative_to(root_abs):
        root_real = Path(os.path.realpath(root))
        parent_real = Path(os.path.realpath(absolute.parent))
        if not parent_real.is_relative_to(root_real):
            found = [finding("E-OUTSIDE", "", f"{path} is outside the submissions folder {root}")]
            if absolute.is_symlink():
                found.append(finding("E-SYMLINK", "", f"{path} is a symbolic link: commit the file itself"))
            return None, found
        absolute, root_abs = parent_real / absolute.name, root_real
    rel = absolute.relative_to(root_abs)
    current = root_abs
    for part in rel.parts:
        current = current / part
        if current.is_symlink():
            return None, [finding("E-SYMLINK", "", f"{current} is a symbolic link: commit the file itself")]
    return PurePosixPath(*rel.parts), []


def read_file(path: Path, limit: int = MAX_FILE_BYTES) -> tuple[bytes | None, list[Finding]]:
    """The bytes of a regular file of at most ``limit`` bytes, or findings saying why not."""
    try:
        info = path.lstat()
    except OSError as exc:
        return None, [finding("E-READ", "", f"cannot read {path}: {exc.strerror or exc}")]
    if stat.S_ISLNK(info.st_mode):
        return None, [finding("E-SYMLINK", "", f"{path} is a symbolic link: commit the file itself")]
    if not stat.S_ISREG(info.st_mode):
        return None, [finding("E-READ", "", f"{path} is not a regular file")]
    too_big = check_size(info.st_size, limit)
    if too_big:
        return None, too_big
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        return None, [finding("E-READ", "", f"cannot read {path}: {exc.strerror or exc}")]
    return data, check_size(len(data), limit)


# ---- the content: pure checks of a parsed document ---------------------------------------------


def _measurement_findings(submission: Submission, options: Options) -> list[Finding]:
    p = submission.payload
    known = bounds_for(p.hardware.gpu_name)
    bounds = known or GENERIC
    found = checks.check_fingerprint(p) + checks.check_example(p)
    found += windows.check_hardware(p.hardware, known) + windows.check_idle(p.idle, p.hardware, bounds)
    found += windows.check_created_at(p, options.now)
    found += checks.check_repeated_precisions(p.measurements) + checks.check_baseline(p.measurements)
    for i, m in enumerate(p.measurements):
        found += checks.check_measurement_state(m, i) + checks.check_quantization(m, i)
        found += windows.check_time_range(m, p.created_at, i)
        if m.error is not None or not m.windows:
            continue
        found += _window_findings(m, p, bounds, options, i)
    return found


def _window_findings(m: Measurement, p: Payload, bounds: GpuBounds, options: Options, i: int) -> list[Finding]:
    tokens = windows.check_tokens(m, p.workload, i)
    found = windows.check_window_count(m, p.method, i) + windows.check_window_durations(m, p.method, i)
    found += windows.check_window_indices(m, i) + windows.check_time_order(m, i)
    found += tokens + windows.check_throughput(m, p.workload, i)
    found += windows.check_power(m, p.hardware, bounds, i) + windows.check_integral(m, i)
    found += windows.check_temperatures(m, i) + windows.check_clocks(m, bounds, i)
    found += windows.check_warmup(m, p.method, i) + windows.check_throttle(m, i) + windows.check_shared(m, i)
    if not tokens:  # J/token of a window whose token count is wrong means nothing
        found += windows.check_cv(windows.safe_derive(m.windows, p.idle.power_w), options.max_cv_pct, i)
    return found


def _guarded(check: Callable[[], list[Finding]]) -> list[Finding]:
    try:
        return check()
    except Exception as exc:  # a bug of ours must reject the file, never crash the run
        return [finding("E-INTERNAL", "", f"{type(exc).__name__}: {str(exc)[:200]}; please report it")]


def check_document(
    document: Any, relpath: PurePosixPath | None, options: Options
) -> tuple[Submission | None, list[Finding]]:
    """Every check of a parsed document (duplicates aside); ``relpath`` is relative to the submissions root."""
    found = checks.check_version(document)
    if found:
        return None, found
    submission, found = checks.check_schema(document)
    if submission is None:
        return None, found
    found += _guarded(lambda: checks.check_signature(document, submission, options.allowed))
    found += _guarded(lambda: checks.check_signer(submission, options.pr_author))
    if relpath is not None:
        found += _guarded(lambda: checks.check_path(relpath, submission))
    found += _guarded(lambda: _measurement_findings(submission, options))
    return submission, found


def check_bytes_and_document(
    data: bytes, relpath: PurePosixPath | None, options: Options
) -> tuple[Any, Submission | None, list[Finding]]:
    """Byte checks, the parse and every document check: (document, submission, findings)."""
    document, found = check_bytes(data)
    if found:
        return None, None, found
    submission, found = check_document(document, relpath, options)
    return document, submission, found


# ---- duplicates across the tree and the batch ---------------------------------------------------


@dataclass
class _Identities:
    ids: dict[str, list[str]] = field(default_factory=dict)
    hashes: dict[str, list[str]] = field(default_factory=dict)

    def add(self, name: str, sub_id: str | None, digest: str | None) -> None:
        if sub_id is not None:
            self.ids.setdefault(sub_id, []).append(name)
        if digest is not None:
            self.hashes.setdefault(digest, []).append(name)


def _existing_document(path: Path) -> Any:
    try:
        if path.is_symlink() or path.stat().st_size > MAX_FILE_BYTES:
            return None
        return json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return None


def _index_existing(root: Path, skip: set[str]) -> _Identities:
    index = _Identities()
    for path in discover(root):
        if os.path.realpath(path) not in skip:
            document = _existing_document(path)
            index.add(_display(path, root), submission_id_of(document), payload_hash(document))
    return index


def _display(path: Path, root: Path) -> str:
    try:
        return str(_absolute(path).relative_to(_absolute(root).parent))
    except ValueError:
        return str(path)


def duplicate_findings(name: str, sub_id: str | None, digest: str | None, index: _Identities) -> list[Finding]:
    """E-DUPLICATE-ID / E-DUPLICATE-PAYLOAD when another file than ``name`` holds this id or this payload hash."""
    found = []
    others = [n for n in index.ids.get(sub_id or "", []) if n != name] if sub_id else []
    if others:
        found.append(finding("E-DUPLICATE-ID", "payload.submission_id", f"{sub_id} is also in {', '.join(others)}"))
    others = [n for n in index.hashes.get(digest or "", []) if n != name] if digest else []
    if others:
        where = ", ".join(others)
        found.append(finding("E-DUPLICATE-PAYLOAD", "payload", f"the same measurement is already in {where}"))
    return found


# ---- the whole run ------------------------------------------------------------------------------


@dataclass
class _Pending:
    path: Path
    name: str
    document: Any
    submission: Submission | None
    findings: list[Finding]
    sha256: str | None


def _check_one(path: Path, root: Path, options: Options) -> _Pending:
    name = _display(path, root)
    relpath, found = locate(path, root)
    if any(f.code == "E-SYMLINK" for f in found):
        return _Pending(path, name, None, None, found, None)
    data, read_problems = read_file(path)
    if data is None or read_problems:
        return _Pending(path, name, None, None, found + read_problems, None)
    digest = hashlib.sha256(data).hexdigest()
    document, submission, content = check_bytes_and_document(data, relpath, options)
    return _Pending(path, name, document, submission, found + content, digest)


def validate_files(
    paths: Sequence[Path],
    *,
    allowed_signers: Path,
    submissions_root: Path,
    pr_author: str | None = None,
    max_cv_pct: float = DEFAULT_MAX_CV_PCT,
    now: datetime | None = None,
) -> list[FileResult]:
    """Validate each file of ``paths`` (in order) as a submission under ``submissions_root``.

    ``allowed_signers`` is an OpenSSH allowed_signers file (raises UsageError when unreadable);
    ``pr_author`` the login the signer must equal; ``max_cv_pct`` the CV gate; ``now`` the time that
    "in the future" is measured against (default: the current UTC time). Duplicates are looked for
    among the other files of the batch and every ``*.json`` under ``submissions_root``.
    """
    options = Options(parse_allowed_signers(allowed_signers), pr_author, max_cv_pct, now or datetime.now(UTC))
    pending = [_check_one(Path(path), submissions_root, options) for path in paths]
    batch_paths = {os.path.realpath(item.path) for item in pending}
    index = _index_existing(submissions_root, batch_paths)
    identities = [(submission_id_of(item.document), payload_hash(item.document)) for item in pending]
    for item, (sub_id, digest) in zip(pending, identities, strict=True):
        index.add(item.name, sub_id, digest)
    return [_finish(item, *ids, index) for item, ids in zip(pending, identities, strict=True)]


def _finish(item: _Pending, sub_id: str | None, digest: str | None, index: _Identities) -> FileResult:
    found = list(item.findings)
    if item.document is not None:
        found += _guarded(lambda: duplicate_findings(item.name, sub_id, digest, index))
    return FileResult(item.path, tuple(found), item.submission, item.sha256)


def accepted_paths(results: Iterable[FileResult]) -> list[Path]:
    """The paths of the accepted results."""
    return [r.path for r in results if r.accepted]
