"""Throughput of the validator: 1,000 generated, signed submissions, signatures checked.

Run ``PYTHONPATH=tests python benchmarks/validate_throughput.py``; its output is committed to
benchmarks/results/validate_throughput.txt. Making and signing the files is setup and is not timed;
the timed part is one ``validate_files`` call over all of them (the duplicate scan of the tree included).
Target: at most 10 s on 2 cores.
"""

from __future__ import annotations

import os
import platform
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from factories import allowed_signers_line, make_key, make_submission

from ecocompute.schema.io import write_submission
from ecocompute.schema.signing import sign_submission
from ecocompute.validate.core import discover, validate_files
from ecocompute.validate.paths import submission_relpath

N_FILES = 1000
LOGIN = "bench-user"
PRECISIONS = ("fp16", "bf16", "nf4", "int8", "int8-t0")


def make_one(seed: int, key: Path, root: Path) -> None:
    """Write one signed submission at its path."""
    sub = sign_submission(make_submission(seed, login=LOGIN, precisions=PRECISIONS), key, LOGIN)
    write_submission(sub, root / submission_relpath(sub))


def setup(folder: Path) -> tuple[Path, Path]:
    """A submissions tree of N_FILES signed files and its allowed_signers file."""
    key = make_key(folder, "bench")
    signers = folder / "allowed_signers"
    signers.write_text(allowed_signers_line(LOGIN, key))
    root = folder / "submissions"
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        list(pool.map(lambda seed: make_one(seed, key, root), range(N_FILES)))
    return root, signers


def main() -> None:
    """Set up, time one validation run, print the figures."""
    with tempfile.TemporaryDirectory() as tmp:
        root, signers = setup(Path(tmp))
        files = discover(root)
        size_kb = sum(f.stat().st_size for f in files) / len(files) / 1024
        start = time.perf_counter()
        results = validate_files(files, allowed_signers=signers, submissions_root=root)
        seconds = time.perf_counter() - start
    accepted = sum(r.accepted for r in results)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    shape = f"{size_kb:.1f} kB each, {len(PRECISIONS)} precisions x 6 windows"
    print(f"validate_throughput: {len(files)} signed submissions ({shape})")
    print(f"accepted: {accepted}/{len(results)}")
    print(f"total: {seconds:.2f} s  ({len(files) / seconds:.0f} files/s, one process)")
    cpu = platform.processor() or platform.machine()
    print(f"machine: {cores} cores usable ({os.cpu_count()} online), {cpu}, Python {platform.python_version()}")
    print(f"target: <= 10 s on 2 cores -> {'met' if seconds <= 10 else 'NOT met'}")


if __name__ == "__main__":
    main()
