"""Commands of the collector: ``ecocompute collect`` and the hidden ``ecocompute record-trace``.

Parsing and printing only; the work is in :mod:`ecocompute.collector.run.collect` and
:mod:`ecocompute.collector.device.trace`. Nothing here imports torch: that happens when a measurement starts.
"""

from __future__ import annotations

from pathlib import Path

import typer

from ecocompute.collector.device.trace import DEFAULT_PERIOD_S
from ecocompute.collector.errors import GpuError
from ecocompute.collector.host.process import parse_cpu_list
from ecocompute.collector.model.archs import arch_names
from ecocompute.collector.model.precisions import parse_precisions
from ecocompute.collector.run.collect import Environment, Result, collect
from ecocompute.collector.run.config import Destination, RunConfig
from ecocompute.collector.run.display import make_view
from ecocompute.collector.run.spread import GATE_CV_PCT, OnSpread
from ecocompute.collector.run.state import Order
from ecocompute.console import out
from ecocompute.schema.errors import UsageError
from ecocompute.schema.models import Precision, Stack

COLLECT_HELP = """Measure a GPU's energy per generated token at several precisions, and write a signed submission.

By default it measures the compiled-all stack (static KV cache, torch.compile, bitsandbytes models compiled \
too) at batch 128: a GPU-bound setting whose windows pass the validator's 2% CV gate on the project's \
H200, where batch 32 passed in only half of the fresh processes (benchmarks/results/first_run_h200_*.txt); \
about five minutes for a 1.1B model at fp16 and nf4. The batch size moves the answer: on the H200 NF4 costs \
energy against FP16 at large batches and saves a little at batch 1, so a result holds for its batch. \
--stack eager measures plain generate() (host-bound at small batches: its spread rarely passes the gate).

Before any model loads, settings the validator would refuse are refused with the fix, the key signs a test \
message, and the GPU is probed once (a checklist). Then, per precision: the model is loaded, idle power is \
measured with it loaded, and windows of back-to-back greedy generate() calls are read against NVML's energy \
counter, interleaving the precisions, until each one's 95% CI is within --target-ci or --max-windows is \
reached. The CV is tracked as windows arrive: once the gate is out of reach you are told, with what to \
change, and --on-spread says whether to stop or go on; such a file is written for the dataset's all tier. \
Progress is saved after every window: --resume continues a stopped run. Writes \
<out>/<signer>/<gpu>/<submission-id>.json, signed when --key is given. See docs/collecting.md.

Example: ecocompute collect --arch TinyLlama-1.1B --signer alice --key ~/.ssh/id_ed25519

Example: ecocompute collect --model Qwen/Qwen2.5-1.5B --precisions fp16,nf4 --stack eager --batch-size 1 \
--signer alice
"""


TRIM_S = 0.5
VALID_PRECISIONS = ", ".join(p.value for p in Precision)


def _list_archs(value: bool) -> None:
    if value:
        out.print("\n".join(arch_names()))
        raise typer.Exit


def collect_command(
    arch: str | None = typer.Option(None, "--arch", help="A shipped architecture, random-init (see --list-archs)."),
    model: str | None = typer.Option(
        None, "--model", help="A pretrained model: Hugging Face id (from the local cache) or a local directory."
    ),
    precisions: str = typer.Option(
        "fp16,nf4", "--precisions", "--precision", help=f"Comma-separated, from: {VALID_PRECISIONS}."
    ),
    batch_size: int = typer.Option(RunConfig.batch_size, "--batch-size", help="Sequences per generate call."),
    prompt_tokens: int = typer.Option(
        RunConfig.prompt_tokens, "--prompt-tokens", help="Prompt length in tokens (fixed, seeded ids)."
    ),
    new_tokens: int = typer.Option(
        RunConfig.new_tokens, "--new-tokens", help="Tokens generated per sequence per call (exactly)."
    ),
    window_s: float = typer.Option(
        RunConfig.window_s, "--window-s", help="Minimum length of a measurement window, in s."
    ),
    warmup_windows: int = typer.Option(
        RunConfig.warmup_windows, "--warmup-windows", help="Windows measured and kept apart per precision."
    ),
    min_windows: int = typer.Option(
        RunConfig.min_windows, "--min-windows", help="Windows before the stopping rule may stop."
    ),
    max_windows: int = typer.Option(RunConfig.max_windows, "--max-windows", help="Windows at most per precision."),
    target_ci: float = typer.Option(
        RunConfig.target_ci_pct, "--target-ci", help="Stop at this 95% CI half width, in % of J/token."
    ),
    stack: Stack = typer.Option(
        RunConfig.stack,
        "--stack",
        help="eager: plain generate; compiled: static KV cache + torch.compile (transformers leaves bitsandbytes "
        "models uncompiled); compiled-all: the same, bitsandbytes models compiled too.",
    ),
    on_spread: OnSpread = typer.Option(
        RunConfig.on_spread,
        "--on-spread",
        help="Once the CV gate is out of reach: stop (as soon as the file is valid, for the all tier) or continue "
        "to --max-windows.",
    ),
    order: Order = typer.Option(
        RunConfig.order, "--order", help="interleaved when all precisions fit in GPU memory (auto), else blocked."
    ),
    cooldown_s: float = typer.Option(
        RunConfig.cooldown_s, "--cooldown-s", help="Pause between precisions when blocked, in s."
    ),
    idle_s: float = typer.Option(RunConfig.idle_s, "--idle-s", help="Idle power measurement, before and after, in s."),
    idle_settle_s: float = typer.Option(
        RunConfig.idle_settle_s,
        "--idle-settle-s",
        help="Wait after a synchronize before each idle reading, in s (recorded).",
    ),
    seed: int = typer.Option(
        RunConfig.seed, "--seed", help="Seed of the weights (random-init), prompt and window delays."
    ),
    device_index: int = typer.Option(
        RunConfig.device_index, "--device-index", help="NVML (or amdsmi) index of the GPU to measure."
    ),
    gpu_vendor: str = typer.Option(
        RunConfig.gpu_vendor, "--gpu-vendor", help="auto (NVML, then amdsmi), nvidia or amd."
    ),
    engine: str = typer.Option(
        RunConfig.engine, "--engine", help="Inference engine: transformers or llama.cpp (recorded in the workload)."
    ),
    allow_shared: bool = typer.Option(False, "--allow-shared", help="Measure even if other processes use the GPU."),
    perplexity: bool = typer.Option(False, "--perplexity", help="Also the perplexity on a fixed text (--model)."),
    gc_knob: bool = typer.Option(
        RunConfig.pause_gc,
        "--gc-pause/--no-gc-pause",
        help="--gc-pause: pause Python's garbage collector during measured windows and collect between them; "
        "--no-gc-pause: leave it running (recorded as method.python_gc).",
    ),
    cpu_affinity: str | None = typer.Option(
        None, "--cpu-affinity", help="Pin the generating process to these CPUs, e.g. 3 or 2,3 (recorded)."
    ),
    nice: int | None = typer.Option(
        None, "--nice", help="Add N to the process's niceness (negative needs root; recorded)."
    ),
    signer: str = typer.Option(..., "--signer", help="Your GitHub login: the contributor and signer."),
    key: Path | None = typer.Option(None, "--key", help="SSH private key to sign with (else written unsigned)."),
    out_dir: Path = typer.Option(Path("submissions"), "--out", help="Folder of the submissions tree."),
    state_dir: Path | None = typer.Option(None, "--state-dir", help="Checkpoints (default: ~/.cache/ecocompute/runs)."),
    weights_cache: Path | None = typer.Option(
        None,
        "--weights-cache",
        help="Where random-init weights are saved (default: /dev/shm/ecocompute if it has room).",
    ),
    resume: bool = typer.Option(
        False, "--resume", help="Continue the unfinished run with the same settings (or start one if there is none)."
    ),
    quiet: bool = typer.Option(False, "--quiet", help="No progress display."),
    torch_device: str | None = typer.Option(
        None,
        "--torch-device",
        hidden=True,
        help="Tests only: run the model here (cpu) instead of the measured GPU; marks the result an example.",
    ),
    list_archs: bool = typer.Option(
        False, "--list-archs", callback=_list_archs, is_eager=True, help="List the shipped architectures and exit."
    ),
) -> None:
    """Measure energy per token on a GPU and write a submission."""
    config = RunConfig(
        precisions=tuple(parse_precisions(precisions)), arch=arch, model=model, batch_size=batch_size,
        prompt_tokens=prompt_tokens, new_tokens=new_tokens, window_s=window_s, warmup_windows=warmup_windows,
        min_windows=min_windows, max_windows=max_windows, target_ci_pct=target_ci, stack=stack,
        order=order, cooldown_s=cooldown_s, idle_s=idle_s, idle_settle_s=idle_settle_s, seed=seed,
        device_index=device_index, allow_shared=allow_shared, perplexity=perplexity, torch_device=torch_device,
        pause_gc=gc_knob, cpu_affinity=None if cpu_affinity is None else parse_cpu_list(cpu_affinity), nice=nice,
        on_spread=on_spread, gpu_vendor=gpu_vendor, engine=engine,
    )  # fmt: skip
    dest = Destination(signer=signer, key=key, out_dir=out_dir, state_dir=state_dir, weights_cache=weights_cache,
                       resume=resume)  # fmt: skip
    _check_engine(config)
    result = collect(config, dest, Environment(view=make_view(out, quiet)))
    _report(result, signer, key)


def _check_engine(config: RunConfig) -> None:
    """Refuse precisions and a stack that are not the engine's own, before anything is measured."""
    from ecocompute.collector.model.engines import engine_spec
    from ecocompute.collector.model.precisions import check_engine

    spec = engine_spec(config.engine)
    check_engine(config.precisions, spec.name)
    if config.stack not in spec.stacks:
        raise UsageError(f"--stack {config.stack.value} is not one the {spec.name} engine runs: pass --stack "
                         + " or ".join(s.value for s in spec.stacks))  # fmt: skip


def _report(result: Result, signer: str, key: Path | None) -> None:
    from ecocompute.schema.cli import summary_table

    p = result.submission.payload
    title = f"{p.hardware.gpu_name} · {p.workload.architecture} ({p.workload.weights}) · {p.workload.stack.value}"
    out.print(summary_table(result.submission, title))
    out.print(f"wrote {result.path}", markup=False)
    if result.passes_gate:
        out.print(f"every precision's CV is within the {GATE_CV_PCT:g}% gate: the file is for the dataset's gated tier")
    else:
        out.print(f"a CV is above the {GATE_CV_PCT:g}% gate: the validator accepts the file into the dataset's all "
                  "tier only (E-CV); see CONTRIBUTING.md")  # fmt: skip
    if key is None:
        out.print(f"unsigned: sign it with `ecocompute sign {result.path} --key ~/.ssh/id_ed25519 --signer {signer}`")
    if all(m.error for m in p.measurements):
        raise GpuError("no precision produced a measurement: see the errors in the table above")


def record_trace_command(
    seconds: float = typer.Option(20.0, "--seconds", help="Length of the trace, in s (15% idle, 50% load, idle)."),
    out_file: Path = typer.Option(..., "--out", help="Trace file to write (JSON, well under 1 MB)."),
    device_index: int = typer.Option(0, "--device-index", help="NVML (or amdsmi) index of the GPU."),
    gpu_vendor: str = typer.Option("auto", "--gpu-vendor", help="auto (NVML, then amdsmi), nvidia or amd."),
    matmul_size: int = typer.Option(8192, "--matmul-size", help="Side of the fp16 matrices of the load."),
    period_s: float = typer.Option(DEFAULT_PERIOD_S, "--period-s", help="Time between readings, in s."),
    torch_device: str | None = typer.Option(None, "--torch-device", hidden=True, help="Tests only: load device."),
) -> None:
    """Record GPU readings while the GPU idles, runs an fp16 matmul loop, and idles again (test data).

    On an AMD GPU the file is an ecocompute-amdsmi-trace, in amdsmi's units (docs/amd.md).

    Example: ecocompute record-trace --seconds 20 --out tests/data/traces/h200-matmul.json
    """
    from ecocompute.collector.device import amdtrace, devices
    from ecocompute.collector.device.trace import counter_vs_integral_pct, record_trace, write_trace
    from ecocompute.collector.host.clock import SystemClock
    from ecocompute.collector.model import hf

    gpu = devices.open_gpu(device_index, gpu_vendor)
    try:
        device = torch_device or hf.cuda_device(gpu.uuid(), device_index)
        trace = record_trace(gpu, SystemClock(), seconds, lambda s: hf.matmul_load(device, s, matmul_size),
                             period_s=period_s)  # fmt: skip
    finally:
        gpu.close()
    if trace.gpu.get("vendor") == "amd":
        amdtrace.write_amd_trace(amdtrace.amd_trace_from(trace), out_file)
    else:
        write_trace(trace, out_file)
    out.print(f"wrote {out_file}: {len(trace.rows)} rows, {out_file.stat().st_size} bytes")
    for phase in trace.phases:
        start_s, end_s = phase.start_s + TRIM_S, phase.end_s - TRIM_S  # leave out the transitions
        for column in ("power_mw", "power_instant_mw"):
            diff = counter_vs_integral_pct(trace, start_s, end_s, column)
            shown = "n/a" if diff is None else f"{diff:+.2f}%"
            out.print(f"  {phase.name} ({end_s - start_s:.1f} s inside): integral of {column} vs counter {shown}")


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the ``ecocompute`` app."""
    app.command("collect", help=COLLECT_HELP)(collect_command)
    app.command("record-trace", hidden=True)(record_trace_command)
