"""Throughput and memory of ``ecocompute validate``, timed as a user runs it.

Run ``PYTHONPATH=tests python benchmarks/validate_throughput.py [--files 1000] [--repeat 5] [--memory-files 10000]``;
its output is committed to benchmarks/results/validate_throughput.txt.

- Throughput: 1,000 generated submissions (5 precisions x 6 windows), each signed with its own ed25519 signature,
  validated by ``python -m ecocompute validate --submissions DIR --allowed-signers FILE --json`` in a fresh process,
  ``--repeat`` times: wall time from start to exit (interpreter start-up and every import included; one worker
  process per core from 64 files), CPU time of the command and its workers, their peak resident set, and the
  1-minute load average before each run (the machine may be shared: CPU time is the figure load does not
  inflate). Making and signing the files is setup and not timed. Target: a median of at most 2 s on this
  machine's 2 cores.
- One file added: validated alone against the 1,000 already there, without ``--cache``, then with a cold and a
  warm ``--cache`` (the identity index of issue 22 item 7: a build redoes only what changed).
- Memory: the same command over 10,000 signed files, once; its peak resident set (with its workers') is the figure
  reported. Submissions are not kept once checked, so it stays bounded.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from factories import submission_document

from ecocompute.schema.io import dumps, submission_from_document
from ecocompute.schema.models import NAMESPACE
from ecocompute.schema.paths import submission_relpath
from ecocompute.schema.signing import ED25519, armor, canonical_bytes, ssh_string
from ecocompute.validate.core import discover

LOGIN = "bench-user"
PRECISIONS = ("fp16", "bf16", "nf4", "int8", "int8-t0")
TARGET_S = 2.0
FIRST_CREATED = datetime(2026, 10, 1, tzinfo=UTC)


class Signer:
    """An ed25519 key signing SSHSIG signatures in-process: the bytes ``ssh-keygen -Y sign`` writes, made faster."""

    def __init__(self) -> None:
        self.key = ed25519.Ed25519PrivateKey.generate()
        raw = self.key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self.blob = ssh_string(ED25519.encode()) + ssh_string(raw)

    @property
    def allowed_signers_line(self) -> str:
        return f"{LOGIN} {ED25519} {base64.b64encode(self.blob).decode()}\n"

    def sign(self, document: dict[str, Any]) -> dict[str, Any]:
        digest = hashlib.sha512(canonical_bytes(document)).digest()
        signed = b"SSHSIG" + ssh_string(NAMESPACE.encode()) + ssh_string(b"") + ssh_string(b"sha512")
        signature = ssh_string(ED25519.encode()) + ssh_string(self.key.sign(signed + ssh_string(digest)))
        blob = (b"SSHSIG" + (1).to_bytes(4, "big") + ssh_string(self.blob) + ssh_string(NAMESPACE.encode())
                + ssh_string(b"") + ssh_string(b"sha512") + ssh_string(signature))  # fmt: skip
        fingerprint = "SHA256:" + base64.b64encode(hashlib.sha256(self.blob).digest()).decode().rstrip("=")
        document["signature"] = {"format": "sshsig", "namespace": NAMESPACE, "signer": LOGIN,
                                 "key_fingerprint": fingerprint, "armored": armor(blob)}  # fmt: skip
        return document


def make_tree(folder: Path, n_files: int) -> tuple[Path, Path]:
    """A submissions tree of ``n_files`` signed, valid, distinct files and its allowed_signers file."""
    signer = Signer()
    root = folder / "submissions"
    signers = folder / "allowed_signers"
    signers.write_text(signer.allowed_signers_line)
    for seed in range(n_files):
        created = FIRST_CREATED + timedelta(minutes=seed)  # all in the past, whatever the number of files
        unsigned = submission_from_document(
            submission_document(seed, login=LOGIN, precisions=PRECISIONS, example=False, created=created)
        )
        document = signer.sign(json.loads(dumps(unsigned)))  # what the file holds is what is signed
        path = root / submission_relpath(unsigned)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return root, signers


@dataclass(frozen=True)
class Run:
    """One ``ecocompute validate`` process: its exit code, wall and CPU seconds, peak memory, load before it."""

    exit_code: int
    wall_s: float
    cpu_s: float
    peak_mib: float
    load: float
    accepted: int
    files: int


def run_validate(root: Path, signers: Path, *extra: str, env: dict[str, str] | None = None) -> Run:
    """Run ``ecocompute validate --json`` once in a new process, as a user does, and measure it."""
    command = [sys.executable, "-m", "ecocompute", "validate", "--submissions", str(root), "--allowed-signers",
               str(signers), "--json", *extra]  # fmt: skip
    load = os.getloadavg()[0]
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _pid, status, usage = os.wait4(proc.pid, 0)  # the child's usage, its reaped workers' included
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        report = json.loads(out.read() or b"{}")
    files = report.get("files", [])
    return Run(
        exit_code=proc.returncode,
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        peak_mib=usage.ru_maxrss / 1024,  # kilobytes on Linux: the largest of the command and its workers
        load=load,
        accepted=sum(1 for f in files if f.get("accepted")),
        files=len(files),
    )


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def throughput(n_files: int, repeat: int) -> list[str]:
    """Time ``repeat`` runs of ``ecocompute validate`` over ``n_files`` signed submissions."""
    with tempfile.TemporaryDirectory() as tmp:
        root, signers = make_tree(Path(tmp), n_files)
        files = discover(root)
        size_kb = sum(f.stat().st_size for f in files) / len(files) / 1024
        runs = [run_validate(root, signers) for _ in range(repeat)]
        start_up = run_version()
        cache_lines = one_added(Path(tmp), root, signers, len(files))
    walls = [r.wall_s for r in runs]
    median = statistics.median(walls)
    lines = [
        f"validate_throughput: {len(files)} signed submissions ({size_kb:.1f} kB each, {len(PRECISIONS)} precisions "
        f"x 6 windows); command: python -m ecocompute validate --submissions DIR --allowed-signers FILE --json",
    ]
    for i, r in enumerate(runs, 1):
        lines.append(
            f"run {i}: exit {r.exit_code}, accepted {r.accepted}/{r.files}, {r.wall_s:.2f} s wall, {r.cpu_s:.2f} s CPU "
            f"(command and workers), peak {r.peak_mib:.0f} MiB; load average before {r.load:.1f}"
        )
    cpus = [r.cpu_s for r in runs]
    lines += [
        f"wall: median {median:.2f} s, max {max(walls):.2f} s, min {min(walls):.2f} s over {repeat} runs "
        f"({len(files) / median:.0f} files/s at the median; {_cores()} cores, so {_cores()} worker processes)",
        f"CPU: median {statistics.median(cpus):.2f} s, {statistics.median(cpus) / len(files) * 1000:.2f} ms per file "
        f"all included; start-up alone (ecocompute --version): {start_up.wall_s:.2f} s wall, "
        f"{start_up.cpu_s:.2f} s CPU",
        f"target: median <= {TARGET_S:g} s on 2 cores -> {'met' if median <= TARGET_S else 'NOT met'} "
        f"(max {'within' if max(walls) <= TARGET_S else 'over'} it)",
        *cache_lines,
    ]
    return lines


def one_added(folder: Path, root: Path, signers: Path, n_existing: int) -> list[str]:
    """One file added to the tree, validated alone (the copy check reads the rest): no cache, cold, warm.

    ``--cache DIR`` keeps the identities of the files already there by content hash; warm, they are hashed, not
    parsed. The cache's secret goes to a folder of the benchmark's own (``XDG_STATE_HOME``), not the home.
    """
    signer = Signer()
    signers.write_text(signers.read_text() + signer.allowed_signers_line)  # the same login, a second key
    created = FIRST_CREATED + timedelta(minutes=n_existing)
    unsigned = submission_from_document(submission_document(n_existing, login=LOGIN, precisions=PRECISIONS,
                                                            example=False, created=created))  # fmt: skip
    path = root / submission_relpath(unsigned)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(signer.sign(json.loads(dumps(unsigned))), indent=2) + "\n", encoding="utf-8")
    env = {**os.environ, "XDG_STATE_HOME": str(folder / "state")}
    env.pop("ECOCOMPUTE_IDENTITY_KEY", None)
    cache = ["--cache", str(folder / "cache")]
    runs = {"no cache": run_validate(root, signers, str(path), env=env)}
    runs["cold cache"] = run_validate(root, signers, str(path), *cache, env=env)
    runs["warm cache"] = run_validate(root, signers, str(path), *cache, env=env)
    parts = [f"{k}: exit {r.exit_code}, {r.wall_s:.2f} s wall, {r.cpu_s:.2f} s CPU" for k, r in runs.items()]
    ratio = runs["no cache"].cpu_s / runs["warm cache"].cpu_s
    return [
        f"one file added to {n_existing} (validate FILE, the copy check reads the rest): "
        + "; ".join(parts)
        + f"; warm/no cache CPU 1/{ratio:.1f}; load average before {runs['warm cache'].load:.1f}"
    ]


def run_version() -> Run:
    """The interpreter's start-up and the CLI's imports alone: ``python -m ecocompute --version``."""
    load = os.getloadavg()[0]
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "ecocompute", "--version"], stdout=subprocess.DEVNULL)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Run(proc.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, load, 0, 0)


def memory(n_files: int) -> list[str]:
    """Peak resident memory of ``ecocompute validate --json`` over ``n_files`` files, its workers included."""
    with tempfile.TemporaryDirectory() as tmp:
        root, signers = make_tree(Path(tmp), n_files)
        r = run_validate(root, signers)
    return [
        f"memory: ecocompute validate --json over {n_files} signed files: exit {r.exit_code}, accepted "
        f"{r.accepted}/{r.files}, {r.wall_s:.1f} s wall, {r.cpu_s:.1f} s CPU, peak resident set {r.peak_mib:.0f} MiB "
        f"(the largest of the command and its workers); load average before {r.load:.1f}",
    ]


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--memory-files", type=int, default=10_000, help="0 to skip the memory run")
    args = parser.parse_args()
    lines = throughput(args.files, args.repeat)
    if args.memory_files:
        lines += memory(args.memory_files)
    cpu = platform.processor() or platform.machine()
    lines.append(f"machine: {os.cpu_count()} cores online, {cpu}, Python {platform.python_version()}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
