"""How long ``ecocompute lint`` takes over 10,000 files (goal: at most 10 s on the 2-core development machine).

The files are written to a temporary folder: half are the linter's corpus snippets (every one of which has a
model load or a generate call, so it is parsed and checked), half are this repository's own Python modules
(most of which are skipped after a text check, as most files of a real project are). Each copy gets a unique first
line. The command is timed end to end as a user runs it (process start, artifact load, workers, SARIF written),
three times; the median is reported with the files/s and the findings count.

Usage: python benchmarks/lint_speed.py [--files 10000] [--jobs N] [--out benchmarks/results/lint_speed]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "lint" / "corpus"
SOURCES = ("cli", "schema", "collector", "validate", "publish", "analysis", "estimate", "lint")


def make_tree(folder: Path, count: int) -> dict[str, int]:
    snippets = sorted(p for p in CORPUS.iterdir() if p.suffix in (".py", ".ipynb"))
    modules = sorted(p for d in SOURCES for p in (ROOT / d).rglob("*.py"))
    kinds = {"corpus": 0, "project": 0}
    for i in range(count):
        source = snippets[i // 2 % len(snippets)] if i % 2 == 0 else modules[i // 2 % len(modules)]
        kinds["corpus" if i % 2 == 0 else "project"] += 1
        target = folder / f"pkg{i // 500:03d}" / f"f{i:05d}{source.suffix}"
        target.parent.mkdir(parents=True, exist_ok=True)
        text = source.read_text(encoding="utf-8")
        target.write_text(text if source.suffix == ".ipynb" else f"# copy {i}\n{text}", encoding="utf-8")
    return kinds


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _load_average() -> float:
    return os.getloadavg()[0]


def time_cli(folder: Path, jobs: int | None) -> tuple[float, float, int]:
    exe = shutil.which("ecocompute", path=str(Path(sys.executable).parent)) or "ecocompute"
    sarif = folder.parent / "out.sarif"
    cmd = [exe, "lint", str(folder), "--format", "json", "--out", str(folder.parent / "out.json"), "--sarif",
           str(sarif), "--severity", "error"]  # fmt: skip
    if jobs:
        cmd += ["--jobs", str(jobs)]
    start, cpu = time.perf_counter(), _children_cpu()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    elapsed, cpu = time.perf_counter() - start, _children_cpu() - cpu
    if proc.returncode not in (0, 1):
        raise SystemExit(f"lint failed ({proc.returncode}): {proc.stderr}")
    doc = json.loads((folder.parent / "out.json").read_text(encoding="utf-8"))
    if doc["errors"]:
        raise SystemExit(f"files not linted: {doc['errors'][:3]}")
    return elapsed, cpu, len(doc["findings"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None, help="write OUT.json and OUT.txt")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "tree"
        kinds = make_tree(folder, args.files)
        load = _load_average()
        runs = [time_cli(folder, args.jobs) for _ in range(args.repeat)]
    times = [t for t, _, _ in runs]
    cpus = [c for _, c, _ in runs]
    median = statistics.median(times)
    result = {
        "files": args.files,
        "files_by_kind": kinds,
        "findings": runs[0][2],
        "seconds": [round(t, 3) for t in times],
        "cpu_seconds": [round(c, 3) for c in cpus],
        "load_average_before": round(load, 2),
        "median_s": round(median, 3),
        "files_per_s": round(args.files / median),
        "goal_s": 10.0,
        "passes": median <= 10.0,
        "jobs": args.jobs or os.cpu_count(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    text = (
        f"ecocompute lint over {args.files} files ({kinds['corpus']} corpus snippets, {kinds['project']} project "
        f"modules), {result['jobs']} workers on {result['cpus']} CPUs: median {median:.2f} s of {len(times)} runs "
        f"({', '.join(f'{t:.2f}' for t in times)}; CPU {', '.join(f'{c:.2f}' for c in cpus)} s), "
        f"{result['files_per_s']} files/s, {result['findings']} findings, load average {load:.1f} before; "
        f"goal <= 10 s: {'met' if result['passes'] else 'NOT met'}\n"
    )
    print(text, end="")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        args.out.with_suffix(".txt").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
