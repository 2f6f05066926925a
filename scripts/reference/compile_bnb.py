"""On the H200 machine: can bitsandbytes models be compiled? An experiment for issue 6, not part of the collector.

On the compiled stack transformers compiles FP16/BF16 but not bitsandbytes models (their quantizers are not marked
compileable), so NF4 there runs with the static KV cache alone, stays host-bound and fails the CV gate. bitsandbytes
registers its kernels as PyTorch custom operators with fake implementations, so torch.compile may trace them. For
one shape this times, in one process, after warm-up calls: FP16 compiled as transformers does it; each quantized
precision as transformers does it (static cache, not compiled); and the same precision with its quantizer marked
compileable for that one model, so that ``generate`` compiles it as it compiles FP16. It reports tokens/s, whether
the forward was compiled, dynamo's compiled frames and graph breaks, and how many greedy tokens match the uncompiled
run. Tokens/s only, no energy: if compiling works, it becomes a stack the collector records, not a silent change.

Example: python scripts/reference/compile_bnb.py --arch TinyLlama-1.1B --precisions nf4,int8-t0 --out r.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from ecocompute.collector import hf
from ecocompute.collector.archs import load_arch
from ecocompute.collector.engine import WARMUP_MIN_CALLS, describe_error
from ecocompute.collector.precisions import parse_precisions
from ecocompute.schema.errors import EcocomputeError
from ecocompute.schema.io import write_text_atomic
from ecocompute.schema.models import Precision, Stack


def force_compileable(model: Any) -> bool:
    """Mark this model's quantizer compileable (its class only, swapped for a subclass); False if it has none."""
    quantizer = getattr(model, "hf_quantizer", None)
    if quantizer is None:
        return False
    base = type(quantizer)
    quantizer.__class__ = type(f"Compileable{base.__name__}", (base,), {"is_compileable": property(lambda _: True)})
    return True


def graph_breaks() -> int:
    """Graph breaks torch._dynamo has counted in this process."""
    from torch._dynamo.utils import counters

    return int(sum(counters["graph_break"].values()))


def trial(backend: hf.HfBackend, precision: Precision, force: bool, calls: int) -> dict[str, Any]:
    """Load, warm up (compiling, recording graphs), then time ``calls`` generate calls."""
    row: dict[str, Any] = {"precision": precision.value, "forced_compileable": force}
    runner = None
    try:
        runner = backend.load(precision)
        if force:
            row["quantizer"] = force_compileable(runner.model)
        frames0, breaks0 = hf.dynamo_compiles(), graph_breaks()
        tokens = runner.new_token_ids().tolist()
        for _ in range(WARMUP_MIN_CALLS - 1):
            runner.generate_once()
        runner.synchronize()
        start = time.perf_counter()
        generated = sum(runner.generate_once() for _ in range(calls))
        runner.synchronize()
        row.update(tokens_per_s=generated / (time.perf_counter() - start), compiled=runner.compiled,
                   dynamo_frames=hf.dynamo_compiles() - frames0, graph_breaks=graph_breaks() - breaks0,
                   tokens=tokens)  # fmt: skip
    except Exception as exc:  # an experiment: any failure is its result
        row["error"] = describe_error(exc)
    finally:
        if runner is not None:
            runner.close()
    return row


def run(arch: str, precisions: list[Precision], device: str, calls: int) -> list[dict[str, Any]]:
    """FP16, then each precision uncompiled and forced, on one random-init model of ``arch``."""
    source = hf.random_init_source(load_arch(arch), seed=0, cache_root=None, device=device)
    backend = hf.HfBackend(source, device=device, batch_size=1, prompt_tokens=128, new_tokens=256,
                           stack=Stack.COMPILED, seed=0)  # fmt: skip
    rows = [trial(backend, Precision.FP16, False, calls)]
    for precision in precisions:
        plain = trial(backend, precision, False, calls)
        forced = trial(backend, precision, True, calls)
        if "tokens" in plain and "tokens" in forced:
            pairs = [p for x, y in zip(plain["tokens"], forced["tokens"], strict=True) for p in zip(x, y, strict=True)]
            forced["tokens_matching_uncompiled"] = f"{sum(a == b for a, b in pairs)}/{len(pairs)}"
        rows += [plain, forced]
    for row in rows:
        row.pop("tokens", None)
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run the experiment; one line on stderr and exit 1 where it cannot run."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", default="TinyLlama-1.1B", help="A shipped architecture (random-init weights).")
    parser.add_argument("--precisions", default="nf4", help="Quantized precisions to try, e.g. nf4,int8-t0.")
    parser.add_argument("--calls", type=int, default=5, help="Timed generate calls per trial (default 5).")
    parser.add_argument("--out", type=Path, required=True, help="JSON file for the results.")
    args = parser.parse_args(argv)
    try:
        import torch

        if not torch.cuda.is_available():
            raise EcocomputeError("no CUDA device: this experiment needs the GPU (transformers compiles only on CUDA)")
        rows = run(args.arch, parse_precisions(args.precisions), "cuda:0", args.calls)
    except EcocomputeError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
    write_text_atomic(args.out, json.dumps({"arch": args.arch, "rows": rows}, indent=2) + "\n")
    for row in rows:
        sys.stdout.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
