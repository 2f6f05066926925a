"""On the H200 machine: can bitsandbytes models be compiled, and does it change their tokens? An experiment for issue 6.

On the ``compiled`` stack transformers compiles FP16/BF16 but not bitsandbytes models (their quantizers are not
marked compileable), so NF4 there runs with the static KV cache alone, stays host-bound and fails the CV gate. The
``compiled-all`` stack marks the quantizer compileable (``hf.mark_compileable``). For one shape this times, in one
process, after warm-up calls: FP16 with the static cache but not compiled, and compiled as transformers does it
(the control: how many greedy tokens compiling alone changes); each quantized precision as transformers does it
(static cache, not compiled), and with its quantizer marked compileable. It reports tokens/s, whether the forward
was compiled, dynamo's compiled frames and graph breaks, and how many greedy tokens of each compiled trial match
its uncompiled one. Tokens/s only, no energy: the collector measures energy on the ``compiled-all`` stack.

Example: python campaigns/h200-2026-11/tools/compile_bnb.py --arch TinyLlama-1.1B --precisions nf4,int8-t0 --out r.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from ecocompute.collector.model import hf
from ecocompute.collector.model.archs import load_arch
from ecocompute.collector.model.precisions import parse_precisions
from ecocompute.collector.run.engine import WARMUP_MIN_CALLS, describe_error
from ecocompute.schema.errors import EcocomputeError
from ecocompute.schema.io import write_text_atomic
from ecocompute.schema.models import Precision, Stack


def graph_breaks() -> int:
    """Graph breaks torch._dynamo has counted in this process."""
    from torch._dynamo.utils import counters

    return int(sum(counters["graph_break"].values()))


def trial(backend: hf.HfBackend, precision: Precision, force: bool, calls: int, compile_off: bool = False
          ) -> dict[str, Any]:  # fmt: skip
    """Load, warm up (compiling, recording graphs), then time ``calls`` generate calls.

    ``force``: mark the quantizer compileable (as the ``compiled-all`` stack does); ``compile_off``: keep the
    static cache but stop ``generate`` from compiling (transformers' ``disable_compile``), the FP16 control.
    """
    row: dict[str, Any] = {"precision": precision.value, "forced_compileable": force}
    if compile_off:
        row["compile_disabled"] = True
    runner = None
    try:
        runner = backend.load(precision)
        if force:
            row["quantizer"] = hf.mark_compileable(runner.model)
        runner.generation_config.disable_compile = compile_off
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


def _match(uncompiled: dict[str, Any], compiled: dict[str, Any]) -> None:
    """Record on ``compiled`` how many of its greedy tokens equal the uncompiled run's, position by position."""
    if "tokens" in uncompiled and "tokens" in compiled:
        rows = zip(uncompiled["tokens"], compiled["tokens"], strict=True)
        pairs = [pair for x, y in rows for pair in zip(x, y, strict=True)]
        compiled["tokens_matching_uncompiled"] = f"{sum(a == b for a, b in pairs)}/{len(pairs)}"


def run(arch: str, precisions: list[Precision], device: str, calls: int) -> list[dict[str, Any]]:
    """FP16 uncompiled and compiled, then each precision uncompiled and forced, on one random-init model of ``arch``."""
    source = hf.random_init_source(load_arch(arch), seed=0, cache_root=None, device=device)
    backend = hf.HfBackend(source, device=device, batch_size=1, prompt_tokens=128, new_tokens=256,
                           stack=Stack.COMPILED, seed=0)  # fmt: skip
    # the control: how many greedy tokens compiling FP16 itself changes on these random-init weights
    control, fp16 = (
        trial(backend, Precision.FP16, False, calls, compile_off=True),
        trial(backend, Precision.FP16, False, calls),
    )
    _match(control, fp16)
    rows = [control, fp16]
    for precision in precisions:
        plain, forced = trial(backend, precision, False, calls), trial(backend, precision, True, calls)
        _match(plain, forced)
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
