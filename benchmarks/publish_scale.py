"""Build the dataset from 10,000 generated, signed submissions; print wall time and peak memory of the build.

Setup (not timed): write N synthetic EXAMPLE submissions (6 model shapes x 2 stacks x 2 batch sizes, fp16 + nf4,
6 windows each) signed with a throwaway ed25519 key into a temporary submissions folder. Then a fresh Python
process runs the build stage by stage (validate, tables, analysis + files, swap) and reports its own wall time and
peak RSS (``resource.getrusage``), so setup memory does not count. Targets: <= 60 s and <= 2 GB on 2 cores.

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


def build_stages(root: Path, out: Path) -> None:
    """The child process: run the build's stages with timers, then report wall time and peak RSS."""
    start = time.perf_counter()
    from ecocompute.publish.atomic import staged_output
    from ecocompute.publish.build import BuildOptions, write_dataset
    from ecocompute.publish.inputs import Source, gather
    from ecocompute.publish.tables import build_tables

    imported = time.perf_counter()
    gathered = gather([Source.at(root)], include_examples=True)
    validated = time.perf_counter()
    tables = build_tables(gathered.accepted)
    tabled = time.perf_counter()
    with staged_output(out) as staging:
        write_dataset(staging, gathered, tables, "0.1.0", BuildOptions(include_examples=True))
        written = time.perf_counter()
    end = time.perf_counter()
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"submissions          {len(gathered.accepted)}")
    print(f"windows (rows)       {tables.windows.height}")
    print(f"measurements (rows)  {tables.measurements.height}")
    print(f"import               {imported - start:6.1f} s")
    print(f"validate (all files) {validated - imported:6.1f} s")
    print(f"tables (pandera)     {tabled - validated:6.1f} s")
    print(f"analysis + files     {written - tabled:6.1f} s")
    print(f"swap                 {end - written:6.1f} s")
    print(f"build wall time      {end - start:6.1f} s  (target <= {TARGET_S:.0f} s)")
    print(f"build peak RSS       {peak_mb:6.0f} MB (target <= {TARGET_MB:.0f} MB)")
    ok = end - start <= TARGET_S and peak_mb <= TARGET_MB
    print(f"verdict              {'within targets' if ok else 'OVER TARGET'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--child", nargs=2, metavar=("ROOT", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        build_stages(Path(args.child[0]), Path(args.child[1]))
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
        subprocess.run([sys.executable, __file__, "--child", str(root), str(Path(tmp) / "out")], check=True)


if __name__ == "__main__":
    main()
