"""Build the dataset from N generated, signed submissions, cold and from a warm cache; print time and peak memory.

Setup (not timed): write N synthetic EXAMPLE submissions (6 model shapes x 2 stacks x 2 batch sizes, fp16 + nf4,
6 windows each) signed with a throwaway ed25519 key into a temporary submissions folder. Then a fresh Python
process builds with an empty cache (every file validated), and another fresh process builds again with that cache
(nothing changed: every verdict and row from the cache, the tables streamed from it). Each reports its own wall
time and peak RSS (``resource.getrusage``), so setup memory does not count. Targets for the warm build of 100,000
submissions: <= 60 s and <= 2 GB.

    PYTHONPATH=tests:tests/publish python benchmarks/publish_scale.py [--n 10000] > benchmarks/results/publish_scale.txt
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

TARGET_S = 60.0
TARGET_MB = 2048.0


def generate(root: Path, n: int) -> None:
    """N signed example submissions under ``root`` (plus its allowed_signers)."""
    from factories import make_key
    from publish_examples import SHAPES, Spec, example_document, write_allowed_signers, write_signed

    specs = [Spec(a, p, stack, batch, ("fp16", "nf4")) for a, p in SHAPES for stack in ("eager", "compiled")
             for batch in (1, 8)]  # fmt: skip
    key = make_key(Path(tempfile.mkdtemp(prefix="bench-key-")), "bench_ed25519")
    write_allowed_signers(root, key)

    def one(seed: int) -> None:
        write_signed(root, key, [example_document(specs[seed % len(specs)], seed, n_windows=6)])

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(one, range(n)))


def build_stages(root: Path, out: Path, cache: Path, label: str) -> None:
    """The child process: one build with ``cache``, then report wall time and peak RSS."""
    start = time.perf_counter()
    from ecocompute.publish.build import BuildOptions, build
    from ecocompute.publish.inputs import Source

    result = build([Source.at(root)], out, BuildOptions(include_examples=True, cache=cache))
    end = time.perf_counter()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{label:<5} build: {result.submissions_all} submissions, {result.validated} validated, "
          f"{end - start:6.1f} s, peak RSS {peak_mb:6.0f} MB")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--child", nargs=4, metavar=("ROOT", "OUT", "CACHE", "LABEL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        build_stages(Path(args.child[0]), Path(args.child[1]), Path(args.child[2]), args.child[3])
        return
    with tempfile.TemporaryDirectory(prefix="publish-scale-") as tmp:
        root = Path(tmp) / "submissions"
        t0 = time.perf_counter()
        generate(root, args.n)
        print(f"# publish_scale: build from {args.n} generated signed submissions")
        print(f"# host: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python "
              f"{platform.python_version()}")  # fmt: skip
        print(f"setup (generate+sign) {time.perf_counter() - t0:6.1f} s  (not part of the build)")
        sys.stdout.flush()
        for label in ("cold", "warm"):
            child = [sys.executable, __file__, "--child", str(root), str(Path(tmp) / "out"), str(Path(tmp) / "cache")]
            subprocess.run([*child, label], check=True)
            sys.stdout.flush()


if __name__ == "__main__":
    main()
