"""Does the same configuration agree with itself across separate collector processes?

Runs ``ecocompute collect`` (as ``python -m ecocompute.collector collect``) N times in a row, each in its
own process with its own --state-dir and --out in a temporary folder, with the arguments given after
``--``; then loads the N submissions and prints, per precision, each process's mean J/token, the spread
(max - min) / mean in %, and whether it is within the target of issue 6: 1% when the workload is
GPU-bound (compiled or compiled-all stack, or batch >= 8), 2% when host-bound. Writes the table as JSON to --out.
On a machine without an NVIDIA GPU it stops with one line (unless --torch-device is passed through).

Example: python benchmarks/reproducibility.py --out benchmarks/results/reproducibility-tinyllama.json -- \\
    --arch TinyLlama-1.1B --precisions fp16,nf4 --signer ecocompute-reference
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from ecocompute.schema.derive import derive
from ecocompute.schema.errors import EcocomputeError
from ecocompute.schema.io import load_submission, write_text_atomic
from ecocompute.schema.models import Measurement, Submission

GPU_BOUND_BATCH = 8
TOLERANCE_PCT = {True: 1.0, False: 2.0}


def parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, list[str]]:
    argv = list(sys.argv[1:] if argv is None else argv)
    split = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True, help="JSON file for the table.")
    parser.add_argument("--processes", type=int, default=3, help="Separate collector processes (default 3).")
    parser.add_argument("--keep", type=Path, default=None,
                        help="Copy each process's submission here (run-N-<id>.json), to commit it.")  # fmt: skip
    return parser.parse_args(argv[:split]), argv[split + 1 :]


def gpu_bound(sub: Submission, m: Measurement) -> bool:
    """GPU-bound by the issue's rule: a compiled stack, or a batch of at least 8. A precision that the compiled
    stack did not compile (``compiled`` false: transformers declines bitsandbytes models) counts as host-bound."""
    w = sub.payload.workload
    return (w.stack.static_cache and m.compiled is not False) or w.batch_size >= GPU_BOUND_BATCH


def table(subs: list[Submission]) -> list[dict[str, Any]]:
    """Per precision: each process's mean J/token, the spread in % of their mean, and the verdict."""
    rows = []
    for precision in [m.precision for m in subs[0].payload.measurements]:
        means: list[float | None] = []
        bound = True
        for sub in subs:
            m = next(x for x in sub.payload.measurements if x.precision is precision)
            bound = bound and gpu_bound(sub, m)
            means.append(derive(m.windows, sub.payload.idle.power_w).j_per_token_mean if m.windows else None)
        known = [v for v in means if v is not None]
        spread = None
        if len(known) == len(means) and known:
            spread = (max(known) - min(known)) / (sum(known) / len(known)) * 100
        tolerance = TOLERANCE_PCT[bound]
        rows.append({
            "precision": precision.value, "j_per_token_means": means, "spread_pct": spread,
            "gpu_bound": bound, "tolerance_pct": tolerance, "within": spread is not None and spread <= tolerance,
        })  # fmt: skip
    return rows


def check_gpu(collect_args: list[str]) -> None:
    """Raise the collector's own error when there is no GPU to measure (skipped for --torch-device)."""
    if "--torch-device" in collect_args:
        return
    from ecocompute.collector.device.nvml import NvmlGpu

    index = int(collect_args[collect_args.index("--device-index") + 1]) if "--device-index" in collect_args else 0
    NvmlGpu(index).close()


def run_once(collect_args: list[str], folder: Path) -> Submission:
    """One collector process; its submission."""
    command = [sys.executable, "-m", "ecocompute.collector", "collect", *collect_args,
               "--state-dir", str(folder / "state"), "--out", str(folder / "out"), "--quiet"]  # fmt: skip
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        last = (proc.stderr.strip() or proc.stdout.strip() or "(no output)").splitlines()[-1]
        raise EcocomputeError(f"collector process failed (exit {proc.returncode}): {last}")
    (path,) = (folder / "out").rglob("*.json")
    return load_submission(path)


def main(argv: list[str] | None = None) -> int:
    args, collect_args = parse_args(argv)
    try:
        check_gpu(collect_args)
        with tempfile.TemporaryDirectory(prefix="ecocompute-repro-") as tmp:
            subs = []
            for i in range(args.processes):
                subs.append(run_once(collect_args, Path(tmp) / str(i)))
                print(f"process {i + 1} of {args.processes} done", flush=True)
                if args.keep is not None:
                    (path,) = (Path(tmp) / str(i) / "out").rglob("*.json")
                    args.keep.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(path, args.keep / f"run-{i}-{path.name}")
    except EcocomputeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    rows = table(subs)
    for r in rows:
        means = ", ".join("failed" if v is None else f"{v:.6f}" for v in r["j_per_token_means"])
        spread = "n/a" if r["spread_pct"] is None else f"{r['spread_pct']:.2f}%"
        verdict = "within" if r["within"] else "NOT within"
        print(f"{r['precision']:>8}: J/token per process {means}; spread {spread} ({verdict} {r['tolerance_pct']:g}%, "
              f"{'GPU' if r['gpu_bound'] else 'host'}-bound)")  # fmt: skip
    result = {"collect_args": collect_args, "processes": args.processes,
              "submission_ids": [s.payload.submission_id for s in subs], "table": rows}  # fmt: skip
    write_text_atomic(args.out, json.dumps(result, indent=1, allow_nan=False) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
