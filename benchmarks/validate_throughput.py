"""Throughput and memory of the validator.

Run ``PYTHONPATH=tests python benchmarks/validate_throughput.py [--files 1000] [--memory-files 10000]``; its output
is committed to benchmarks/results/validate_throughput.txt.

- Throughput: 1,000 generated submissions (5 precisions x 6 windows), each signed with its own ed25519 signature,
  validated by one ``validate_files`` call (signatures, physics, copies across the tree; one worker process per
  core). Making and signing the files, and importing scipy (once per process, which ``derive`` does lazily; its
  time is printed), are setup and not timed. Target: at most 2 s on this machine's 2 cores.
- Memory: ``ecocompute validate --json`` over 10,000 signed files, run as a child process; its peak resident set
  (with its workers') is the figure reported. Submissions are not kept once checked, so it stays bounded.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from factories import submission_document

from ecocompute.schema.derive import t_quantile_975
from ecocompute.schema.io import dumps, submission_from_document
from ecocompute.schema.models import NAMESPACE
from ecocompute.schema.paths import submission_relpath
from ecocompute.schema.signing import ED25519, armor, canonical_bytes, ssh_string
from ecocompute.validate.core import discover, validate_files

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


def _cpu() -> float:
    """CPU seconds of this process and of its ended children (the workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def throughput(n_files: int) -> list[str]:
    """Time one validate_files call over ``n_files`` signed submissions."""
    with tempfile.TemporaryDirectory() as tmp:
        root, signers = make_tree(Path(tmp), n_files)
        files = discover(root)
        size_kb = sum(f.stat().st_size for f in files) / len(files) / 1024
        start = time.perf_counter()
        t_quantile_975(2)  # the interpreter's libraries loaded once (scipy, which derive imports lazily): setup
        import_s = time.perf_counter() - start
        start, cpu = time.perf_counter(), _cpu()
        results = validate_files(files, allowed_signers=signers, submissions_root=root, keep_submissions=False)
        seconds, cpu_s = time.perf_counter() - start, _cpu() - cpu
        start = time.perf_counter()
        validate_files(files, allowed_signers=signers, submissions_root=root, keep_submissions=False, workers=1)
        one = (time.perf_counter() - start) / len(files) * 1000
    accepted = sum(r.accepted for r in results)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return [
        f"validate_throughput: {len(files)} signed submissions ({size_kb:.1f} kB each, {len(PRECISIONS)} precisions "
        "x 6 windows)",
        f"accepted: {accepted}/{len(results)}",
        f"total: {seconds:.2f} s wall ({len(files) / seconds:.0f} files/s, {cores} worker processes), "
        f"{cpu_s:.2f} s CPU in all processes; load average then {os.getloadavg()[0]:.1f}",
        f"one process: {one:.2f} ms per file; scipy's import, once per run before the first file: {import_s:.2f} s",
        f"target: <= {TARGET_S:g} s on 2 cores -> {'met' if seconds <= TARGET_S else 'NOT met'}",
    ]


def memory(n_files: int) -> list[str]:
    """Peak resident memory of ``ecocompute validate --json`` over ``n_files`` files, its workers included."""
    with tempfile.TemporaryDirectory() as tmp:
        root, signers = make_tree(Path(tmp), n_files)
        command = [sys.executable, "-m", "ecocompute", "validate", "--root", str(root), "--allowed-signers",
                   str(signers), "--json"]  # fmt: skip
        start = time.perf_counter()
        proc = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        seconds = time.perf_counter() - start
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return [
        f"memory: ecocompute validate --json over {n_files} signed files: exit {proc.returncode}, {seconds:.1f} s, "
        f"peak resident set {peak_mib:.0f} MiB (the largest of the command and its workers)",
    ]


def main() -> None:
    """Print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--memory-files", type=int, default=10_000, help="0 to skip the memory run")
    args = parser.parse_args()
    lines = throughput(args.files)
    if args.memory_files:
        lines += memory(args.memory_files)
    cpu = platform.processor() or platform.machine()
    lines.append(f"machine: {os.cpu_count()} cores online, {cpu}, Python {platform.python_version()}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
