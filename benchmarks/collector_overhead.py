"""What the power-sampling thread costs, and how well its integral agrees with the energy counter.

On a GPU: one random-init model (TinyLlama-1.1B shape, fp16, the collector's default GPU-bound configuration:
compiled-all at batch 128) generates in windows measured by the collector's own engine, with the sampling thread
on (A) or off (B) in ABBA order (A B B A A B B A ...), so that drift cancels. The overhead is estimated from
adjacent pairs (A B, B A, ...): each pair's relative tokens/s difference, their mean and a paired t interval.

The thread's cost at the collector's 10 Hz is small against the window-to-window spread, so ``--periods-ms``
can give the "on" windows several sampling periods in turn (pair j samples every ``periods[j % n]``), for
example ``100,2``: the 2 ms windows take 50 times the samples. A line through the origin fitted over all pairs,
overhead against the extra samples per second that the thread took, gives the cost of one sample per second;
times 10 it is the cost at the default period, with a t interval. It assumes each sample costs the same, which the
per-period means show. For each window: tokens/s, J/token, and how far the integrated power is from the counter
(instant power field, and nvmlDeviceGetPowerUsage). Prints a table and writes everything as JSON to --out. On a
machine without an NVIDIA GPU it stops with one line.

    python benchmarks/collector_overhead.py --out benchmarks/results/collector_overhead_h200.json
    python benchmarks/collector_overhead.py --window-s 0.1 --new-tokens 64 --windows 300 --periods-ms 100,2 \
        --out benchmarks/results/collector_overhead_h200_dose.json
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ecocompute.collector.device.nvml import NvmlGpu
from ecocompute.collector.device.sampler import DEFAULT_PERIOD_S, PowerSampler, WindowPower
from ecocompute.collector.host.clock import SystemClock
from ecocompute.collector.model import hf, weights
from ecocompute.collector.model.archs import load_arch
from ecocompute.collector.run.engine import Engine, EngineConfig
from ecocompute.schema.derive import ci95_half_width, mean_std, t_quantile_975, window_j_per_token, window_tokens_per_s
from ecocompute.schema.errors import EcocomputeError
from ecocompute.schema.io import write_text_atomic
from ecocompute.schema.models import Precision, Stack, Window


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="JSON file for the results")
    parser.add_argument("--arch", default="TinyLlama-1.1B")
    parser.add_argument("--stack", default="compiled-all", choices=[s.value for s in Stack])
    parser.add_argument("--windows", type=int, default=40, help="measured windows, half with the thread on")
    parser.add_argument("--window-s", type=float, default=6.0)
    parser.add_argument("--new-tokens", type=int, default=256)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument(
        "--periods-ms",
        type=periods_ms,
        default=[DEFAULT_PERIOD_S * 1000.0],
        help="the thread's sampling periods, in turn over the pairs [default: the collector's]",
    )
    parser.add_argument("--device-index", type=int, default=0)
    parser.add_argument("--weights-cache", type=Path, default=None, help="random-init weights [default: /dev/shm]")
    parser.add_argument("--torch-device", default=None, help=argparse.SUPPRESS)  # tests only: cpu
    return parser.parse_args(argv)


def periods_ms(text: str) -> list[float]:
    """``100,2`` -> [100.0, 2.0]: positive periods in milliseconds."""
    try:
        values = [float(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give periods in ms separated by commas, e.g. 100,2") from None
    if not values or any(not v > 0 for v in values):
        raise argparse.ArgumentTypeError(f"{text!r}: every period must be above 0 ms")
    return values


def pct_diff(value: float, reference: float) -> float | None:
    return None if reference <= 0 else 100.0 * (value - reference) / reference


def arm_of(i: int) -> str:
    """ABBA: on, off, off, on, on, off, off, on, ..."""
    return "on" if i % 4 in (0, 3) else "off"


def period_of(i: int, periods: list[float]) -> float | None:
    """The sampling period (ms) of window ``i``: None when the thread is off; pair j takes ``periods[j % n]``."""
    return periods[(i // 2) % len(periods)] if arm_of(i) == "on" else None


def on_off(a: dict[str, Any], b: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A pair's window with the thread on, and its neighbour with it off."""
    return (a, b) if a["arm"] == "on" else (b, a)


def pair_overhead_pct(a: dict[str, Any], b: dict[str, Any]) -> float:
    """How much slower the window with the thread on ran than its neighbour with it off, in % of the latter."""
    on, off = on_off(a, b)
    return float(100.0 * (off["tokens_per_s"] - on["tokens_per_s"]) / off["tokens_per_s"])


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    rates = {arm: [r["tokens_per_s"] for r in rows if r["arm"] == arm] for arm in ("on", "off")}
    (on_mean, on_std), (off_mean, off_std) = mean_std(rates["on"]), mean_std(rates["off"])
    se = math.sqrt(on_std**2 / len(rates["on"]) + off_std**2 / len(rates["off"]))
    dof = max(1, len(rates["on"]) + len(rates["off"]) - 2)
    integral = [abs(r["integral_vs_counter_pct"]) for r in rows if r["arm"] == "on" and r["integral_vs_counter_pct"]]
    usage = [abs(r["usage_integral_vs_counter_pct"]) for r in rows if r["arm"] == "on"]
    pairs = [(rows[i], rows[i + 1]) for i in range(0, len(rows) - 1, 2)]
    diffs = [pair_overhead_pct(a, b) for a, b in pairs]
    pair_mean, pair_half = mean_ci(diffs) if diffs else (math.nan, math.nan)
    return {
        **dose_summary(pairs),
        "paired_overhead_pct": pair_mean,
        "paired_overhead_pct_ci95_half": pair_half,
        "pairs": len(diffs),
        "tokens_per_s_on": on_mean,
        "tokens_per_s_off": off_mean,
        "overhead_pct": 100.0 * (off_mean - on_mean) / off_mean,
        "overhead_pct_ci95_half": 100.0 * t_quantile_975(dof) * se / off_mean,
        "integral_vs_counter_pct_abs_max": max(integral) if integral else None,
        "usage_integral_vs_counter_pct_abs_max": max((u for u in usage if u is not None), default=None),
    }


def extra_hz(a: dict[str, Any], b: dict[str, Any]) -> float:
    """Samples per second that the thread added in a pair: the on window's rate less the off window's."""
    on, off = on_off(a, b)
    return float(on["power_samples"] / on["duration_s"] - off["power_samples"] / off["duration_s"])


def mean_ci(values: list[float]) -> tuple[float, float]:
    """Mean and half-width of its 95% t interval (NaN for one value)."""
    mean, std = mean_std(values)
    half = ci95_half_width(std, len(values))
    return mean, math.nan if half is None else half


def dose_summary(pairs: list[tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """Per sampling period: the paired overhead; over all pairs: overhead per extra sample per second (a line
    through the origin) and what it predicts at the collector's default period."""
    by_period: dict[float, list[tuple[float, float]]] = {}
    for a, b in pairs:
        by_period.setdefault(on_off(a, b)[0]["period_ms"], []).append((extra_hz(a, b), pair_overhead_pct(a, b)))
    periods = []
    for period, points in sorted(by_period.items(), reverse=True):
        (mean, half), (hz, _) = mean_ci([y for _, y in points]), mean_std([x for x, _ in points])
        periods.append({"period_ms": period, "pairs": len(points), "extra_samples_per_s": hz,
                        "overhead_pct": mean, "overhead_pct_ci95_half": half})  # fmt: skip
    points = [point for group in by_period.values() for point in group]
    sxx = math.fsum(x * x for x, _ in points)
    if len(points) < 2 or sxx <= 0:
        return {"periods": periods}
    slope = math.fsum(x * y for x, y in points) / sxx
    residual = math.fsum((y - slope * x) ** 2 for x, y in points) / (len(points) - 1)
    half = t_quantile_975(len(points) - 1) * math.sqrt(residual / sxx)
    default_hz = 1.0 / DEFAULT_PERIOD_S
    return {
        "periods": periods,
        "overhead_pct_per_sample_hz": slope,
        "overhead_pct_per_sample_hz_ci95_half": half,
        "default_hz": default_hz,
        "overhead_pct_at_default": slope * default_hz,
        "overhead_pct_at_default_ci95_half": half * default_hz,
    }


def window_row(i: int, arm: str, period_ms: float | None, window: Window, power: WindowPower | None) -> dict[str, Any]:
    on = arm == "on" and power is not None
    return {
        "index": i, "arm": arm, "period_ms": period_ms, "duration_s": window.duration_s, "tokens": window.tokens,
        "tokens_per_s": window_tokens_per_s(window), "j_per_token": window_j_per_token(window),
        "energy_j": window.energy_j, "power_samples": window.power_samples,
        "gpu_util_pct_mean": window.gpu_util_pct_mean, "process_cpu_s": window.process_cpu_s,
        "integral_vs_counter_pct": pct_diff(power.energy_j, window.energy_j) if on and power else None,
        "usage_integral_vs_counter_pct": pct_diff(power.energy_j_usage, window.energy_j) if on and power else None,
    }  # fmt: skip


def run(args: argparse.Namespace) -> dict[str, Any]:
    clock = SystemClock()
    with NvmlGpu(args.device_index) as gpu:
        device = args.torch_device or hf.cuda_device(gpu.uuid(), args.device_index)
        source = weights.random_init_source(load_arch(args.arch), 0, args.weights_cache, device)
        backend = hf.HfBackend(source, device=device, batch_size=args.batch_size, prompt_tokens=128,
                               new_tokens=args.new_tokens, stack=Stack(args.stack), seed=0)  # fmt: skip
        runner = backend.load(Precision.FP16)
        sampler = PowerSampler(gpu, clock)
        engine = Engine(gpu, sampler, clock, EngineConfig(window_s=args.window_s), own_contexts=int(device != "cpu"))
        sampler.start()
        engine.measure_window(runner, 0, min_calls=3)  # warm-up (compiles, records graphs), discarded
        sampler.stop()
        rows = []
        print(HEADER)
        for i in range(args.windows):
            arm, period = arm_of(i), period_of(i, args.periods_ms)
            if period is not None:
                sampler.period_s = period / 1000.0
                sampler.start()
            window = engine.measure_window(runner, i)
            sampler.stop()
            rows.append(window_row(i, arm, period, window, sampler.last))
            print_row(rows[-1])
        runner.close()
        info = gpu.fingerprint().to_dict()
    return {
        "benchmark": "collector_overhead", "recorded_at": datetime.now(UTC).isoformat(), "gpu": info,
        "host": {"python": platform.python_version(), "torch": hf.torch_versions()[0], "os": platform.platform()},
        "config": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
        "windows": rows, "summary": summary(rows),
    }  # fmt: skip


HEADER = "  # sampler every_ms  window_s  tokens/s   J/token  int%inst  int%usage samples"


def fmt(value: float | None, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)


def print_row(r: dict[str, Any]) -> None:
    print(
        f"{r['index']:>3} {r['arm']:>4} {fmt(r['period_ms'], 'g'):>11} {r['duration_s']:8.2f} "
        f"{r['tokens_per_s']:9.2f} {r['j_per_token']:9.4f} "
        f"{fmt(r['integral_vs_counter_pct'], '+8.2f'):>9} {fmt(r['usage_integral_vs_counter_pct'], '+8.2f'):>9} "
        f"{r['power_samples']:>7}",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        result = run(args)
    except EcocomputeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    s = result["summary"]
    print(f"tokens/s with the thread on {s['tokens_per_s_on']:.2f}, off {s['tokens_per_s_off']:.2f}: "
          f"overhead {s['overhead_pct']:+.2f}% ± {s['overhead_pct_ci95_half']:.2f}% (95% CI, unpaired)")  # fmt: skip
    print(f"paired over {s['pairs']} adjacent on/off pairs: overhead {s['paired_overhead_pct']:+.3f}% "
          f"± {s['paired_overhead_pct_ci95_half']:.3f}% (95% CI)")  # fmt: skip
    for p in s["periods"]:
        print(f"  thread every {p['period_ms']:g} ms ({p['extra_samples_per_s']:.0f} extra samples/s), {p['pairs']} "
              f"pairs: overhead {p['overhead_pct']:+.3f}% ± {p['overhead_pct_ci95_half']:.3f}% (95% CI)")  # fmt: skip
    if "overhead_pct_at_default" in s:
        print(f"fit through the origin: {s['overhead_pct_per_sample_hz']:+.5f}% per sample/s; at the default "
              f"{s['default_hz']:g} Hz: {s['overhead_pct_at_default']:+.3f}% ± "
              f"{s['overhead_pct_at_default_ci95_half']:.3f}% (95% CI)")  # fmt: skip
    print(f"integral vs counter, |max| over windows with the thread on: instant power "
          f"{fmt(s['integral_vs_counter_pct_abs_max'], '.2f')}%, power usage "
          f"{fmt(s['usage_integral_vs_counter_pct_abs_max'], '.2f')}%")  # fmt: skip
    write_text_atomic(args.out, json.dumps(result, indent=1, allow_nan=False) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
