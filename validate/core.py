"""The validator's public API: validate files under a submissions folder, find every submission.

    results = validate_files(paths, allowed_signers=Path("submissions/allowed_signers"),
                             submissions_root=Path("submissions"))
    accepted = [r for r in results if r.accepted]

Reading a file's bytes is the only I/O; nothing is executed, imported or unpickled, nothing written (but the
identity cache, when asked for, outside the submissions folder). Each file is checked on its own (in worker
processes when there are many), then copies are looked for across the batch and the tree, in one linear pass over
an index of measured windows (:mod:`ecocompute.validate.identity`); with ``identity_cache``, the files already in
the tree whose bytes were seen before are hashed, not parsed (:mod:`ecocompute.validate.idcache`).
"""

from __future__ import annotations

import gc
import hashlib
import json
import multiprocessing
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from ecocompute.schema.derive import CV_GATE_PCT, Derived, t_quantile_975
from ecocompute.schema.models import Measurement, Payload, Submission
from ecocompute.schema.signing import AllowedSigners, parse_allowed_signers
from ecocompute.validate import checks, counterless, physics, windows
from ecocompute.validate.findings import GATE_CODES, Finding, finding
from ecocompute.validate.gpus import GENERIC, GpuBounds, bounds_for
from ecocompute.validate.identity import Identity, Index, document_keys, submission_id_of, submission_keys
from ecocompute.validate.raw import MAX_FILE_BYTES, check_bytes, check_size

if TYPE_CHECKING:
    from ecocompute.validate.idcache import IdentityCache

DEFAULT_MAX_CV_PCT = CV_GATE_PCT
PARALLEL_FROM = 64  # files; below this one process is faster than starting workers
MAX_WORKERS = 8

__all__ = [
    "DEFAULT_MAX_CV_PCT",
    "FileResult",
    "Options",
    "Summary",
    "accepted_paths",
    "discover",
    "submission_id_of",
    "validate_files",
]


def _restore(cls: type, names: tuple[str, ...], values: Sequence[Any]) -> Any:
    """An instance of dataclass ``cls`` with these field values, restored as unpickling does (no __init__)."""
    instance: Any = object.__new__(cls)
    instance.__dict__.update(zip(names, values, strict=True))
    return instance


def _summary(values: tuple[Any, ...], rows: tuple[tuple[Any, ...], ...]) -> Any:
    measurements = tuple(
        _restore(MeasurementSummary, _ROW_FIELDS, (p, n, None if d is None else _restore(Derived, _DERIVED, d), e))
        for p, n, d, e in rows
    )
    return _restore(Summary, _SUMMARY_FIELDS, (*values, measurements))


@dataclass(frozen=True)
class MeasurementSummary:
    """What the reports show of one measurement: its precision, window count, derived figures or error."""

    precision: str
    windows: int
    derived: Derived | None
    error: str | None


@dataclass(frozen=True)
class Summary:
    """What the reports show of one schema-valid submission (kept when the submission itself is not)."""

    submission_id: str
    gpu_name: str
    architecture: str
    weights: str
    stack: str
    batch_size: int
    signer: str | None
    measurements: tuple[MeasurementSummary, ...]

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as plain values: a worker hands one back per file, and dataclasses unpickle slowly."""
        values = tuple(getattr(self, name) for name in _SUMMARY_FIELDS[:-1])
        rows = tuple(
            (
                m.precision,
                m.windows,
                None if m.derived is None else tuple(getattr(m.derived, f) for f in _DERIVED),
                m.error,
            )
            for m in self.measurements
        )
        return _summary, (values, rows)


_DERIVED = tuple(f.name for f in fields(Derived))
_ROW_FIELDS = tuple(f.name for f in fields(MeasurementSummary))
_SUMMARY_FIELDS = tuple(f.name for f in fields(Summary))


@dataclass(frozen=True)
class FileResult:
    """What the validator found in one file.

    ``submission`` is the parsed document when it follows the schema (even if other checks failed) and the
    caller kept submissions; ``summary`` what the reports need of it; ``content_sha256`` is the SHA-256 of the
    file's raw bytes when they could be read.
    """

    path: Path
    findings: tuple[Finding, ...]
    submission: Submission | None
    content_sha256: str | None
    summary: Summary | None = None

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

    allowed: AllowedSigners
    pr_author: str | None = None
    max_cv_pct: float = DEFAULT_MAX_CV_PCT
    now: datetime = field(default_factory=lambda: datetime.now(UTC))


# ---- the file system: which files, where the file is, and its bytes --------------------------------


def _entries(root: Path) -> Iterator[Path]:
    """Every ``*.json`` file, special file, symlinked folder and unreadable folder under ``root``."""
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError:
            yield folder  # validate_files names why it cannot be listed
            continue
        for entry in entries:
            path = Path(entry.path)
            try:
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                yield path
                continue
            if stat.S_ISDIR(mode):
                stack.append(path)
            elif stat.S_ISLNK(mode):
                if entry.name.endswith(".json") or path.is_dir():
                    yield path
            elif not stat.S_ISREG(mode) or entry.name.endswith(".json"):
                yield path


def discover(submissions_root: Path) -> list[Path]:
    """Every ``*.json`` file under ``submissions_root``, sorted, with every path validation must report.

    Symbolic links (to files or folders), folders that cannot be listed and special files (FIFOs, sockets,
    devices: never opened) are listed too, so each becomes a finding instead of being skipped in silence.
    """
    return sorted(_entries(Path(submissions_root)))


def _absolute(path: Path) -> Path:
    """An absolute, normalised path that does not follow symbolic links (unlike ``resolve``)."""
    return Path(os.path.normpath(path.absolute()))


def _text_absolute(path: Path) -> str:
    """:func:`_absolute` as a string: pathlib's operations cost more than the rest of a file's reading."""
    return os.path.normpath(os.path.abspath(path))  # noqa: PTH100 - not resolve(): links are not followed


def locate(path: Path, root: Path) -> tuple[PurePosixPath | None, list[Finding]]:
    """The path relative to ``root`` (None when outside it), and E-SYMLINK / E-OUTSIDE findings."""
    absolute_text, root_text = _text_absolute(path), _text_absolute(root)
    if absolute_text.startswith(root_text + os.sep) and root_text != os.sep:  # the usual case, on strings
        parts = absolute_text[len(root_text) + 1 :].split(os.sep)  # noqa: PTH206 - str paths, once per file
        current = root_text
        for part in parts:
            current = current + os.sep + part
            if os.path.islink(current):  # noqa: PTH114 - a str path
                return None, [finding("E-SYMLINK", "", f"{current} is a symbolic link: commit the file itself")]
        return PurePosixPath(*parts), []
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
    under = root_abs
    for part in rel.parts:
        under = under / part
        if under.is_symlink():
            return None, [finding("E-SYMLINK", "", f"{under} is a symbolic link: commit the file itself")]
    return PurePosixPath(*rel.parts), []


def _not_a_file(path: Path, mode: int) -> Finding:
    if stat.S_ISDIR(mode):
        try:
            next(iter(path.iterdir()), None)
        except OSError as exc:
            return finding("E-READ", "", f"cannot list the folder {path}: {exc.strerror or exc}")
        return finding("E-READ", "", f"{path} is a folder, not a submission file")
    kind = "named pipe (FIFO)" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode) else "device or special file"
    return finding("E-SPECIAL", "", f"{path} is a {kind}: skipped, never opened; commit regular files only")


def read_file(path: Path, limit: int = MAX_FILE_BYTES) -> tuple[bytes | None, list[Finding]]:
    """The bytes of a regular file of at most ``limit`` bytes, or findings saying why not."""
    try:
        info = path.lstat()
    except OSError as exc:
        return None, [finding("E-READ", "", f"cannot read {path}: {exc.strerror or exc}")]
    if stat.S_ISLNK(info.st_mode):
        return None, [finding("E-SYMLINK", "", f"{path} is a symbolic link: commit the file itself")]
    if not stat.S_ISREG(info.st_mode):
        return None, [_not_a_file(path, info.st_mode)]
    too_big = check_size(info.st_size, limit)
    if too_big:
        return None, too_big
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # swapped after the lstat
                return None, [finding("E-SPECIAL", "", f"{path} is not a regular file: skipped")]
            chunks = [os.read(fd, limit + 1)]
            while chunks[-1] and (size := sum(map(len, chunks))) <= limit:  # a short read: read on to the end
                chunks.append(os.read(fd, limit + 1 - size))
        finally:
            os.close(fd)
    except OSError as exc:
        return None, [finding("E-READ", "", f"cannot read {path}: {exc.strerror or exc}")]
    data = b"".join(chunks) if len(chunks) > 1 else chunks[0]
    return data, check_size(len(data), limit)


# ---- the content: pure checks of a parsed document ---------------------------------------------


def _measurement_findings(submission: Submission, options: Options) -> list[Finding]:
    p = submission.payload
    known = bounds_for(p.hardware.gpu_name)
    bounds = known or GENERIC
    found = checks.check_fingerprint(p) + checks.check_example(p)
    found += windows.check_hardware(p.hardware, known, p.example) + windows.check_idle(p.idle, p.hardware, bounds)
    found += windows.check_created_at(p, options.now) + physics.check_session_span(p) + physics.check_params(p)
    found += checks.check_repeated_precisions(p.measurements) + checks.check_baseline(p.measurements)
    if not p.example:  # synthetic data (never published) need not replay a run's timeline
        found += physics.check_timeline(p) + physics.check_stopping_rule(p)
    found += physics.check_repeated_windows(p)
    found += counterless.check_counterless(p)  # power_integral files: rules of their own
    for i, m in enumerate(p.measurements):
        found += checks.check_measurement_state(m, i) + checks.check_quantization(m, i)
        found += windows.check_time_range(m, p.created_at, i) + windows.check_window_indices(m, i)
        if m.error is not None or not m.windows:
            continue
        found += _window_findings(m, p, bounds, known, options, i)
    return found


def _window_findings(
    m: Measurement, p: Payload, bounds: GpuBounds, known: GpuBounds | None, options: Options, i: int
) -> list[Finding]:
    tokens = windows.check_tokens(m, p.workload, i)
    found = windows.check_window_count(m, p.method, i) + windows.check_window_durations(m, p.method, i)
    found += windows.check_time_order(m, i) + windows.check_window_limits(m, known, i)
    found += tokens + windows.check_throughput(m, p.workload, i) + physics.check_bandwidth(m, p, bounds, i)
    found += windows.check_power(m, p.hardware, bounds, i) + windows.check_integral(m, i)
    found += physics.check_idle_below_load(m, p, i)
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
    document: Any, relpath: PurePosixPath | None, options: Options, data: bytes | None = None
) -> tuple[Submission | None, list[Finding]]:
    """Every check of a parsed document (copies aside); ``relpath`` is relative to the submissions root.

    ``data`` is the file's JSON text the document was parsed from (default: the document written as JSON).
    """
    found = checks.check_version(document)
    if found:
        return None, found
    if data is None:
        data = json.dumps(document, allow_nan=False).encode("utf-8")
    submission, found = checks.check_schema(data)
    if submission is None:
        return None, found
    found += _guarded(lambda: checks.check_signature(document, submission, options.allowed, options.now))
    found += _guarded(lambda: checks.check_signer(submission, options.pr_author))
    if relpath is not None:
        found += _guarded(lambda: checks.check_path(relpath, submission))
    found += _guarded(lambda: _measurement_findings(submission, options))
    return submission, found


def check_bytes_and_document(
    data: bytes, relpath: PurePosixPath | None, options: Options
) -> tuple[Any, Submission | None, list[Finding]]:
    """The strict parse and every document check: (document, submission, findings)."""
    document, found = check_bytes(data)
    if found:
        return None, None, found
    submission, found = check_document(document, relpath, options, data)
    return document, submission, found


def summarize(submission: Submission) -> Summary:
    """What the reports show of a submission."""
    from ecocompute.validate.windows import safe_derive

    p = submission.payload
    rows = []
    for m in p.measurements:
        derived = safe_derive(m.windows, p.idle.power_w) if m.windows else None
        rows.append(
            MeasurementSummary(
                m.precision.value, len(m.windows), None if isinstance(derived, str) else derived, m.error
            )
        )
    signer = submission.signature.signer if submission.signature else None
    w = p.workload
    return Summary(
        p.submission_id,
        p.hardware.gpu_name,
        w.architecture,
        w.weights,
        w.stack.value,
        w.batch_size,
        signer,
        tuple(rows),
    )


# ---- one file, in a worker -------------------------------------------------------------------------


def _examined(path: str, *rest: Any) -> Any:
    return _Examined(Path(path), *rest)


@dataclass
class _Examined:
    """One file checked on its own: what the copy check and the result need."""

    path: Path
    findings: list[Finding]
    identity: Identity
    submission: Submission | None = None
    sha256: str | None = None
    summary: Summary | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as a tuple of its fields (what a worker hands back, once per file)."""
        rest = (self.findings, self.identity, self.submission, self.sha256, self.summary)
        return _examined, (str(self.path), *rest)


def _display(path: Path, root: Path) -> str:
    absolute, base = _text_absolute(path), os.path.dirname(_text_absolute(root))  # noqa: PTH120 - a str path
    if base != os.sep and absolute.startswith(base + os.sep):  # the usual case, on strings
        return absolute[len(base) + 1 :]
    try:
        return str(_absolute(path).relative_to(_absolute(root).parent))
    except ValueError:
        return str(path)


def _examine(path: Path, root: Path, options: Options, keep: bool) -> _Examined:
    name = _display(path, root)
    try:
        relpath, found = locate(path, root)
    except OSError as exc:  # a folder on the way that cannot be searched
        return _Examined(
            path, [finding("E-READ", "", f"cannot read {path}: {exc.strerror or exc}")], Identity(name, None)
        )
    if any(f.code == "E-SYMLINK" for f in found):
        return _Examined(path, found, Identity(name, None))
    data, read_problems = read_file(path)
    if data is None or read_problems:
        return _Examined(path, found + read_problems, Identity(name, None))
    digest = hashlib.sha256(data).hexdigest()
    windows.forget_derived()
    document, submission, content = check_bytes_and_document(data, relpath, options)
    keys = submission_keys(submission) if submission is not None else _guarded_keys(document)
    identity = Identity.of(name, submission_id_of(document), keys)
    summary = summarize(submission) if submission is not None else None
    return _Examined(path, found + content, identity, submission if keep else None, digest, summary)


def _guarded_keys(document: Any) -> list[tuple[str, bytes]]:
    try:
        return document_keys(document)
    except Exception:
        return []


def _identity_only(path: Path, root: Path, cache: IdentityCache | None = None) -> tuple[Identity, bytes | None, bool]:
    """The id and window keys of a file already in the tree (read leniently: it is only compared against).

    With a ``cache``: (identity, the SHA-256 of the file's bytes, whether it was computed now rather than taken
    from the cache's row of that hash); without: (identity, None, True).
    """
    name = _display(path, root)
    data, problems = read_file(path)
    if data is None or problems:
        return Identity(name, None), None, False
    sha = None
    if cache is not None:
        sha = hashlib.sha256(data).digest()
        hit = cache.lookup(sha, name)
        if hit is not None:
            return hit, sha, False
    document, found = check_bytes(data)
    if found:
        return Identity(name, None), sha, True
    return Identity.of(name, submission_id_of(document), _guarded_keys(document)), sha, True


_WORKER: dict[str, Any] = {}


def _work_examine(path: Path) -> _Examined:
    return _examine(path, _WORKER["root"], _WORKER["options"], _WORKER["keep"])


def _work_identity(path: Path) -> tuple[Identity, bytes | None, bool]:
    return _identity_only(path, _WORKER["root"], _WORKER["cache"])


def _workers(n_files: int, requested: int | None) -> int:
    if requested is not None:
        return max(1, requested)
    if n_files < PARALLEL_FROM or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, MAX_WORKERS))


def _warm() -> None:
    """Fill what every file's checks need once (the t quantiles), so forked workers share it."""
    for dof in range(1, 65):
        t_quantile_975(dof)


def _map(function: Callable[[Path], Any], paths: Sequence[Path], workers: int) -> Iterator[Any]:
    """``function`` over ``paths`` in order, in ``workers`` forked processes (or in this one)."""
    if workers <= 1 or len(paths) < 2:
        yield from map(function, paths)
        return
    _warm()
    context = multiprocessing.get_context("fork")
    chunk = max(1, min(16, len(paths) // (workers * 16)))  # small: the last chunks end together
    gc.freeze()  # what the workers inherit is never collected there, so its pages stay shared
    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            yield from pool.map(function, paths, chunksize=chunk)
    finally:
        gc.unfreeze()


def validate_files(
    paths: Sequence[Path],
    *,
    allowed_signers: Path,
    submissions_root: Path,
    pr_author: str | None = None,
    max_cv_pct: float = DEFAULT_MAX_CV_PCT,
    now: datetime | None = None,
    keep_submissions: bool = True,
    workers: int | None = None,
    identity_cache: Path | None = None,
) -> list[FileResult]:
    """Validate each file of ``paths`` (in order) as a submission under ``submissions_root``.

    ``allowed_signers`` is an OpenSSH allowed_signers file (raises UsageError when unreadable or not a
    regular file; a line it cannot use only fails the signatures that need it); ``pr_author`` the login the
    signer must equal; ``max_cv_pct`` the CV gate; ``now`` the time that "in the future" and the keys'
    validity are measured against (default: the current UTC time). Copies are looked for among the other
    files of the batch and every ``*.json`` under ``submissions_root``: files already in the tree hold
    their windows first, then the batch in order. ``keep_submissions=False`` drops each parsed submission
    once checked (the reports need only ``summary``), so memory stays small for any number of files.
    ``workers``: processes to check files in (default: one per core from 64 files). ``identity_cache``: a
    folder keeping the identities of files by content hash (:mod:`ecocompute.validate.idcache`), so a file
    already in the tree whose bytes were seen before is hashed, not parsed (None: every file is parsed).
    """
    options = Options(parse_allowed_signers(allowed_signers), pr_author, max_cv_pct, now or datetime.now(UTC))
    paths = [Path(p) for p in paths]
    batch = {os.path.realpath(p) for p in paths}
    existing = [p for p in discover(submissions_root) if os.path.realpath(p) not in batch]
    n_workers = _workers(len(paths) + len(existing), workers)
    cache = _open_cache(identity_cache)
    _WORKER.update(root=submissions_root, options=options, keep=keep_submissions, cache=cache)
    index = Index()
    seen: list[bytes] = []
    for identity, sha, fresh in _existing_identities(existing, submissions_root, cache, n_workers):
        index.add(identity)
        if cache is not None and sha is not None:
            seen.append(sha)
            if fresh:
                cache.remember(sha, identity)
    results = []
    for item in _map(_work_examine, paths, n_workers):
        item_identity = item.identity
        found = item.findings + _guarded(lambda: index.findings(item_identity))  # noqa: B023 - called at once
        index.add(item_identity)
        if cache is not None and item.sha256 is not None:
            seen.append(bytes.fromhex(item.sha256))
            cache.remember(seen[-1], item_identity)
        results.append(FileResult(item.path, tuple(found), item.submission, item.sha256, item.summary))
    _WORKER.clear()
    if cache is not None:
        cache.save(seen)
    return results


def _existing_identities(
    existing: Sequence[Path], root: Path, cache: IdentityCache | None, workers: int
) -> Iterator[tuple[Identity, bytes | None, bool]]:
    """:func:`_identity_only` of each file, in order; with a cache, only the files it does not hold are parsed.

    Every file is read and hashed here first (cheap), and its identity taken from the cache when a row holds that
    hash with a valid tag; the others (the misses) go to the workers. So the files the cache holds never cross
    between processes.
    """
    if cache is None:
        yield from _map(_work_identity, existing, workers)
        return
    found: list[tuple[bytes, Identity | None] | None] = []  # per file: (hash, the cache's identity), None: unreadable
    for path in existing:
        data, problems = read_file(path)
        if data is None or problems:
            found.append(None)
            continue
        sha = hashlib.sha256(data).digest()
        found.append((sha, cache.lookup(sha, "")))
    misses = [p for p, f in zip(existing, found, strict=True) if f is not None and f[1] is None]
    parsed = _map(_work_identity, misses, workers)
    for path, item in zip(existing, found, strict=True):
        if item is None:
            yield Identity(_display(path, root), None), None, False
        elif item[1] is None:
            yield next(parsed)
        else:
            item[1].name = _display(path, root)
            yield item[1], item[0], False


def _open_cache(folder: Path | None) -> IdentityCache | None:
    """The identity cache under ``folder``, loaded (None: no cache asked for, or no secret can be kept).

    Without a cache every file is parsed: slower, never wrong.
    """
    if folder is None:
        return None
    from ecocompute.validate.idcache import IdentityCache

    try:
        return IdentityCache(Path(folder)).load()
    except OSError:  # the secret's folder cannot be written (a read-only home)
        return None


def signer_line_problems(allowed_signers: Path) -> list[Finding]:
    """One W-SIGNERS-LINE finding per allowed_signers line the verifier cannot use (the others still count)."""
    allowed = parse_allowed_signers(allowed_signers)
    return [
        finding("W-SIGNERS-LINE", f"line {p.number}", f"{p.reason}; the line is not used to verify anything")
        for p in allowed.problems
    ]


def accepted_paths(results: Iterable[FileResult]) -> list[Path]:
    """The paths of the accepted results."""
    return [r.path for r in results if r.accepted]
