"""Summarise the project's H200 reference runs from their committed windows, as markdown for docs/method.md.

Every figure comes from ``ecocompute.schema.derive.derive`` and ``ecocompute.analysis.change_vs_baseline`` on the
committed files; nothing is typed in by hand. ``python scripts/reference/summarize.py`` prints the tables;
``--check docs/method.md`` fails if the block between the markers in that file differs (a test runs it).
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from ecocompute.analysis import change_vs_baseline, crossover
from ecocompute.analysis.crossovers import DEFAULT_N_BOOT, DEFAULT_SEED, format_params
from ecocompute.analysis.j_per_token import j_per_token_frame, stack_frame, torch_compile_ran
from ecocompute.collector.state import read_state
from ecocompute.schema.derive import Derived, derive, integral_diff_pct, mean_std
from ecocompute.schema.io import load_submission
from ecocompute.schema.models import Method, Submission, Window
from ecocompute.schema.tables import measurement_rows, measurements_frame, window_rows, windows_frame
from ecocompute.validate.windows import INTEGRAL_WARN_PCT

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from reproducibility import table as reproducibility_table  # the benchmark's own means, spread and target

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "runs" / "ecocompute-reference"
ACCEPTED = ROOT / "submissions" / "ecocompute-reference"
BEGIN, END = "<!-- BEGIN reference-runs (scripts/reference/summarize.py) -->", "<!-- END reference-runs -->"
# every section reads the same committed files: each is parsed and validated once (a Submission is frozen)
_load = functools.cache(load_submission)
_state = functools.cache(read_state)  # a checkpoint, read once for every section that shows it
HEADER = (
    "| precision | windows | J/token | 95% CI | CV % | dynamic CV % | tokens/s | GPU util % | static % "
    "| counter vs integral, max % | change vs baseline (95% CI) |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
)


def _row(precision: str, windows: list[Window], idle_w: float, change: str, error: str | None = None) -> str:
    if not windows:
        return f"| {precision} | 0 | error: {error or 'no windows'} | | | | | | | | |"
    d = derive(windows, idle_w)
    known = [w.gpu_util_pct_mean for w in windows if w.gpu_util_pct_mean is not None]
    util = f"{sum(known) / len(known):.0f}" if known else "-"
    ci = "n/a" if d.ci95_pct is None else f"±{d.ci95_pct:.1f}%"
    return (
        f"| {precision} | {d.n_windows} | {d.j_per_token_mean:.3f} | {ci} | {d.cv_pct:.2f} | {d.dynamic_cv_pct:.2f} "
        f"| {d.tokens_per_s:.1f} | {util} | {_static_pct(d):.0f} | {d.integral_diff_pct_max:.2f} | {change} |"
    )


def _static_pct(d: Derived) -> float:
    """The share of J/token that is idle power x time, in %."""
    return 100 * d.static_j_per_token_mean / d.j_per_token_mean


def _changes(frame: pl.DataFrame) -> dict[str, str]:
    """Each precision's change against its submission's baseline (FP16, else BF16), naming that baseline."""
    changes = change_vs_baseline(frame)
    found = {
        r["precision"]: f"{r['change_pct']:+.1f}% vs {r['baseline_precision']} "
        f"({r['ci95_low_pct']:+.1f} .. {r['ci95_high_pct']:+.1f})"
        for r in changes.iter_rows(named=True)
    }
    found.update({r["baseline_precision"]: "baseline" for r in changes.iter_rows(named=True)})
    return found


def submission_section(path: Path) -> str:
    """A table for one signed reference submission."""
    sub = _load(path)
    p = sub.payload
    changes = _changes(measurements_frame(measurement_rows(sub)))
    lines = [
        f"#### {p.workload.architecture} · {p.workload.stack.value} · batch {p.workload.batch_size} · `{_shown(path)}`",
        "",
        f"Idle {p.idle.power_w_before:.1f} W before, {p.idle.power_w_after:.1f} W after; "
        f"{p.workload.prompt_tokens} prompt + {p.workload.new_tokens} new tokens; order {p.method.order}; "
        f"windows of at least {p.method.window_min_s:g} s; {_knobs(sub)}.",
        "",
        HEADER,
    ]
    for m in p.measurements:
        lines.append(_row(m.precision.value, m.windows, p.idle.power_w, changes.get(m.precision.value, "-"), m.error))
    return "\n".join(lines)


def _shown(path: Path) -> str:
    """A path as the page shows it: relative to the repository when inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _knobs(sub: Submission) -> str:
    """The process knobs a submission's method records (None: an older collector that did not record them)."""
    m = sub.payload.method
    cpus = "not recorded" if m.cpu_affinity is None else _cpus(m.cpu_affinity)
    gc = {None: "not recorded", "paused-in-windows": "paused in windows", "running": "running"}[m.python_gc]
    nice = "not recorded" if m.nice is None else str(m.nice)
    return f"CPUs {cpus}; niceness {nice}; Python GC {gc}"


def _cpus(cpus: list[int]) -> str:
    """A CPU list as the collector's option takes it: 3, 0-15 or 2,5."""
    if len(cpus) > 1 and cpus == list(range(cpus[0], cpus[-1] + 1)):
        return f"{cpus[0]}-{cpus[-1]}"
    return ",".join(map(str, cpus))


def _cv(values: list[float]) -> float:
    mean, std = mean_std(values)
    return 100 * std / mean


def _cell(sub: Submission, precision: str) -> str:
    """CV of J/token, of time per token (the host's speed) and of the dynamic part, for one precision."""
    m = next((x for x in sub.payload.measurements if x.precision.value == precision and x.windows), None)
    if m is None:
        return "-"
    d = derive(m.windows, sub.payload.idle.power_w)
    s_per_token = _cv([w.duration_s / w.tokens for w in m.windows])
    return f"{d.cv_pct:.2f} / {s_per_token:.2f} / {d.dynamic_cv_pct:.2f}"


def _others_busy(sub: Submission) -> str:
    """The range over windows of the CPUs other processes kept busy (``-``: an older collector)."""
    values = [w.host_others_busy_cpus for m in sub.payload.measurements for w in m.windows]
    known = [v for v in values if v is not None]
    if not known:
        return "-"
    return f"{min(known):.1f}-{max(known):.1f}"


KNOB_HEADER = (
    "| run | shape | stack | batch | window | windows | warm-up | order | CPUs | nice | GC | other CPUs busy "
    "| fp16 CV: J/t / s/t / dyn % | nf4 CV: J/t / s/t / dyn % | nf4 vs baseline (95% CI) |\n"
    "|---|---|---|---:|---:|---:|---:|---|---|---:|---|---|---|---|---|"
)


def _order(m: Method) -> str:
    """Interleaved, or blocked with its cooldown between precisions."""
    return m.order if m.order == "interleaved" else f"{m.order}, {m.cooldown_s:g} s cooldown"


def knob_section(paths: list[Path]) -> str:
    """One row per run: its knobs, and the spread of fp16 and nf4 split into host speed and GPU energy."""
    lines = [KNOB_HEADER]
    for path in paths:
        sub = _load(path)
        p, m = sub.payload, sub.payload.method
        change = _changes(measurements_frame(measurement_rows(sub))).get("nf4", "-")
        n = max(len(x.windows) for x in p.measurements)
        lines.append(
            f"| `{path.stem[-8:]}` | {p.workload.architecture} | {p.workload.stack.value} | {p.workload.batch_size} "
            f"| {m.window_min_s:g} s | {n} | {m.warmup_windows} | {_order(m)} "
            f"| {'-' if m.cpu_affinity is None else _cpus(m.cpu_affinity)} "
            f"| {'-' if m.nice is None else m.nice} | {'-' if m.python_gc is None else m.python_gc} "
            f"| {_others_busy(sub)} | {_cell(sub, 'fp16')} | {_cell(sub, 'nf4')} | {change} |"
        )
    return "\n".join(lines)


def reproducibility_section(results: list[Path], paths: list[Path]) -> str:
    """Each reproducibility benchmark result, recomputed from its runs (found among ``paths`` by id).

    Per precision: each process's mean J/token, their spread against the target (both by the benchmark's own
    ``table``), and each process's change against its baseline (the figure a crossover is made of).
    """
    by_id = {sub.payload.submission_id: sub for sub in map(_load, paths)}
    lines = ["| configuration | precision | processes | mean J/token per process | spread (max - min) / mean "
             "| target | met | change vs baseline per process |",
             "|---|---|---:|---|---:|---:|---|---|"]  # fmt: skip
    for result in results:
        ids = json.loads(result.read_text(encoding="utf-8"))["submission_ids"]
        subs = [by_id[i] for i in ids if i in by_id]
        if not subs:
            continue
        w = subs[0].payload.workload
        what = f"{w.architecture} · {w.stack.value} · batch {w.batch_size}"
        changes = [change_vs_baseline(measurements_frame(measurement_rows(s))) for s in subs]
        for row in reproducibility_table(subs):
            means = [v for v in row["j_per_token_means"] if v is not None]
            if not means:
                continue
            spread = "-" if row["spread_pct"] is None else f"{row['spread_pct']:.2f}%"
            moves = [f"{r['change_pct']:+.1f}%" for c in changes
                     for r in c.filter(pl.col("precision") == row["precision"]).iter_rows(named=True)]  # fmt: skip
            lines.append(
                f"| `{result.name}`: {what} | {row['precision']} | {len(means)} | "
                f"{', '.join(f'{v:.4f}' for v in means)} | {spread} | {row['tolerance_pct']:g}% "
                f"| {'yes' if row['within'] else 'no'} | {', '.join(moves) or 'baseline'} |"
            )
    return "\n".join(lines)


@functools.cache
def _tables(paths: tuple[Path, ...]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The measurements and windows tables of every run in ``paths``, built once for the sections that pool them."""
    subs = [_load(p) for p in paths]
    measurements = measurements_frame([row for s in subs for row in measurement_rows(s)])
    return measurements, windows_frame([row for s in subs for row in window_rows(s)])


def crossover_section(paths: list[Path]) -> str:
    """The crossover of each quantized precision per stack and batch, over every committed run.

    The dataset's own ``crossover`` (log-linear, bootstrap of windows) on ``submissions/`` and ``runs/`` together,
    as the card's section "Beyond the gate" pools them (its "Crossover" table has ``submissions/`` alone).
    """
    result = crossover(*_tables(tuple(paths)), precision=["nf4", "int8", "int8-t0"])
    lines = [f"The dataset's `crossover` (log-linear in log10(params) between the sizes that bracket the sign change; "
             f"95% CI from {DEFAULT_N_BOOT} bootstrap resamples of the windows, seed {DEFAULT_SEED}) on the runs in "
             "`submissions/` and `runs/` together, so on measurements that fail the CV gate as well, as the dataset "
             "card's section \"Beyond the gate\" pools them; its table \"Crossover\" has `submissions/` alone. Each "
             "change is against the same run's baseline.\n",
             "| stack | batch | precision | baseline | sizes | runs | crossover | 95% CI | resamples crossing "
             "| result |",
             "|---|---:|---|---|---|---:|---:|---|---:|---|"]  # fmt: skip
    for r in result.iter_rows(named=True):
        low, high = r["ci95_low_params"], r["ci95_high_params"]
        ci = "" if low is None else f"{format_params(low)}-{format_params(high)}"
        share = "" if r["boot_fraction"] is None else f"{100 * r['boot_fraction']:.0f}%"
        crossing = "none" if r["crossover_params"] is None else format_params(r["crossover_params"])
        sizes = f"{format_params(r['params_min'])}-{format_params(r['params_max'])} ({r['n_sizes']})"
        lines.append(
            f"| {r['software_stack']} | {r['batch_size']} | {r['precision']} | {r['baseline']} | {sizes} "
            f"| {r['n_points']} | {crossing} | {ci} | {share} | {r['message']} |"
        )
    return "\n".join(lines)


def stack_section(paths: list[Path]) -> str:
    """Compiling against the precision as levers, per shape, over every committed run (the card's table, wider).

    The dataset's own ``stack_frame`` on all runs: each side is the mean over the runs that measured it, so the
    two sides come from different runs (and sittings); the static share is idle power x time over J/token.
    """
    measurements, _ = _tables(tuple(paths))
    lines = ["| shape | batch | precision | compiled stack | eager J/token (runs) | compiled J/token (runs) "
             "| torch.compile ran | compiled vs eager | static % eager | static % compiled |",
             "|---|---:|---|---|---:|---:|---|---:|---:|---:|"]  # fmt: skip
    for r in stack_frame(j_per_token_frame(measurements)).iter_rows(named=True):
        lines.append(
            f"| {r['architecture']} | {r['batch_size']} | {r['precision']} | {r['compiled_stack']} "
            f"| {r['eager_j_per_token']:.3f} ({r['eager_n_submissions']}) "
            f"| {r['compiled_j_per_token']:.3f} ({r['compiled_n_submissions']}) | {torch_compile_ran(r)} "
            f"| {r['change_pct']:+.1f}% | {r['eager_static_share_pct']:.0f} | {r['compiled_static_share_pct']:.0f} |"
        )
    return "\n".join(lines)


def time_section(paths: list[Path]) -> str:
    """How much of the spread of J/token between windows the time per token explains, per stack and batch.

    R^2 of the measured windows' J/token against their seconds per token, per measurement (3 windows or more); and
    the generating process's CPU time over the window's wall time (``process_cpu_s``), over every measured window.
    """
    r2: dict[tuple[str, int], list[float]] = {}
    cpu: dict[tuple[str, int], list[float]] = {}
    for path in paths:
        sub = _load(path)
        key = (sub.payload.workload.stack.value, sub.payload.workload.batch_size)
        r2.setdefault(key, [])
        for m in sub.payload.measurements:
            windows = [w for w in m.windows if w.tokens > 0]
            cpu.setdefault(key, []).extend(w.process_cpu_s / w.duration_s for w in windows
                                           if w.process_cpu_s is not None)  # fmt: skip
            jpt = [w.energy_j / w.tokens for w in windows]
            spt = [w.duration_s / w.tokens for w in windows]
            if len(windows) >= 3 and len(set(jpt)) > 1 and len(set(spt)) > 1:
                r2[key].append(statistics.correlation(jpt, spt) ** 2)
    lines = ["| stack | batch | measurements | R^2 of J/token on s/token: median | lowest | highest "
             "| measurements with R^2 >= 0.9 | process CPU time / wall time, measured windows |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]  # fmt: skip
    for key in sorted(r2):
        values, ratios = r2[key], cpu.get(key, [])
        spread = f"{min(ratios):.3f}-{max(ratios):.3f} ({len(ratios)} windows)" if ratios else "not recorded"
        fit = (f"{statistics.median(values):.2f} | {min(values):.2f} | {max(values):.2f}" if values
               else "- | - | -")  # fmt: skip
        lines.append(f"| {key[0]} | {key[1]} | {len(values)} | {fit} | {sum(v >= 0.9 for v in values)} | {spread} |")
    return "\n".join(lines)


def cards_section(paths: list[Path]) -> str:
    """Compiled FP16 of one shape on different H200s (GPU UUIDs, hashed as the submission records them).

    FP16 is compiled alike on both compiled stacks, so their runs are taken as one configuration (the stack is
    shown); a shape, batch size and workload length appears where more than one GPU measured it.
    """
    rows = []
    for path in paths:
        sub = _load(path)
        w = sub.payload.workload
        if w.stack.value == "eager":
            continue
        for m in sub.payload.measurements:
            if m.precision.value == "fp16" and m.windows:
                d = derive(m.windows, sub.payload.idle.power_w)
                shape = (w.architecture, w.batch_size, w.prompt_tokens, w.new_tokens)
                rows.append((shape, sub.payload.hardware.gpu_uuid_sha256[:8], sub.payload.submission_id,
                             w.stack.value, d))  # fmt: skip
    lines = ["| shape | batch | GPU (UUID SHA-256, first 8) | run | stack | J/token | tokens/s | power W | static % "
             "| vs the shape's lowest card |",
             "|---|---:|---|---|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    order = {shape: i for i, shape in enumerate(SWEEP_SHAPES)}  # a shape beyond the sweep goes last
    shapes = sorted({r[0] for r in rows}, key=lambda s: (order.get(s[0], len(order)), *s))
    for shape in shapes:
        mine = [r for r in rows if r[0] == shape]
        cards = {r[1] for r in mine}
        if len(cards) < 2:
            continue
        lowest = min(statistics.mean(r[4].j_per_token_mean for r in mine if r[1] == c) for c in cards)
        for (arch, batch, _, _), card, run, stack, d in sorted(mine, key=lambda r: (r[1], r[2])):
            lines.append(
                f"| {arch} | {batch} | `{card}` | `{run.rsplit('-', 1)[-1]}` | {stack} | {d.j_per_token_mean:.3f} "
                f"| {d.tokens_per_s:.1f} | {d.power_w_mean:.0f} | {_static_pct(d):.0f} "
                f"| {100 * (d.j_per_token_mean / lowest - 1):+.1f}% |"
            )
    both = []
    for shape in shapes:
        for card in sorted({r[1] for r in rows if r[0] == shape}):
            by_stack = {s: [r[4].j_per_token_mean for r in rows if r[0] == shape and r[1] == card and r[3] == s]
                        for s in ("compiled", "compiled-all")}  # fmt: skip
            if all(by_stack.values()):
                one, other = (statistics.mean(v) for v in by_stack.values())
                both.append(f"{shape[0]} on `{card}`: `compiled` {one:.3f} (n={len(by_stack['compiled'])}), "
                            f"`compiled-all` {other:.3f} (n={len(by_stack['compiled-all'])}), "
                            f"{100 * (other / one - 1):+.1f}%")  # fmt: skip
    if both:
        lines += ["", "Both stacks on one GPU: " + "; ".join(both) + "."]
    return "\n".join(lines)


SWEEP_SHAPES = ("Qwen2.5-0.5B", "TinyLlama-1.1B", "Qwen2.5-1.5B", "Qwen2.5-3B", "Qwen2.5-7B", "Llama-3.1-8B",
                "Qwen2.5-14B", "Qwen2.5-32B")  # fmt: skip
SWEEP_PRECISIONS = ("fp16", "bf16", "nf4", "int8", "int8-t0")
SWEEP_CONFIGS = (("eager", 1, SWEEP_PRECISIONS), ("eager", 8, SWEEP_PRECISIONS), ("compiled", 1, SWEEP_PRECISIONS[:3]))
# measured beyond the sweep: shown where a run has measured them, not counted in its cells
EXTRA_CONFIGS = (("compiled-all", 1),)


def _cut_cells(checkpoints: Sequence[Path]) -> dict[tuple[str, str, int, str], list[str]]:
    """Sweep key -> how far each unfinished run's checkpoint got with that precision (those with a window)."""
    cut: dict[tuple[str, str, int, str], list[str]] = {}
    for path in checkpoints:
        state = _state(path)
        config = state.config
        for m in state.measurements.values():
            if m.windows:
                key = (config["arch"], config["stack"], int(config["batch_size"]), m.precision.value)
                cut.setdefault(key, []).append(f"cut at {len(m.windows)} windows (`{_short(path)}`)")
    return cut


def _sweep_found(paths: list[Path]) -> dict[tuple[str, str, int, str], list[str]]:
    """Sweep key -> each run's cell: the CV of J/token and where the run is kept, or the error where it failed."""
    found: dict[tuple[str, str, int, str], list[str]] = {}
    for path in paths:
        sub = _load(path)
        w = sub.payload.workload
        where = "submissions" if path.is_relative_to(ACCEPTED) else "runs"
        for m in sub.payload.measurements:
            key = (w.architecture or "", w.stack.value, w.batch_size, m.precision.value)
            if m.windows:
                cell = f"{derive(m.windows, sub.payload.idle.power_w).cv_pct:.1f}% ({where})"
            else:
                cell = f"error: {m.error}"
            found.setdefault(key, []).append(cell)
    return found


def _unmeasured(found: dict[tuple[str, str, int, str], list[str]]) -> list[tuple[str, str, int, str]]:
    """The sweep's cells that none of ``found`` measured (a cell with only errors is not measured)."""
    return [
        (shape, stack, batch, precision)
        for shape in SWEEP_SHAPES
        for stack, batch, precisions in SWEEP_CONFIGS
        for precision in precisions
        if not any(not cell.startswith("error:") for cell in found.get((shape, stack, batch, precision), []))
    ]


def unmeasured_cells(paths: list[Path]) -> list[tuple[str, str, int, str]]:
    """The sweep's cells (shape, stack, batch, precision) that no finished run measured; a failed one does not count."""
    return _unmeasured(_sweep_found(paths))


def sweep_section(paths: list[Path], checkpoints: Sequence[Path] = ()) -> str:
    """Issue 6's sweep, cell by cell: each run's CV (and where it is kept) or error, else how far a cut run got."""
    cut = _cut_cells(checkpoints)
    found = _sweep_found(paths)
    missing = set(_unmeasured(found))
    lines = ["| shape | stack | batch | " + " | ".join(SWEEP_PRECISIONS) + " |",
             "|---|---|---:|" + "---|" * len(SWEEP_PRECISIONS)]  # fmt: skip
    for shape in SWEEP_SHAPES:
        for stack, batch, precisions in SWEEP_CONFIGS:
            cells = []
            for precision in SWEEP_PRECISIONS:
                if precision not in precisions:
                    cells.append("n/a")
                    continue
                key = (shape, stack, batch, precision)
                got = found.get(key)
                unfinished = cut.get(key, []) if key in missing else []
                cells.append("; ".join((got or ["not yet measured"]) + unfinished))
            lines.append(f"| {shape} | {stack} | {batch} | " + " | ".join(cells) + " |")
        for stack, batch in EXTRA_CONFIGS:
            extra = [found.get((shape, stack, batch, p)) for p in SWEEP_PRECISIONS]
            if any(extra):
                cells = ["; ".join(e) if e else "not measured" for e in extra]
                lines.append(f"| {shape} | {stack} (beyond the sweep) | {batch} | " + " | ".join(cells) + " |")
    cells_total = len(SWEEP_SHAPES) * sum(len(p) for _, _, p in SWEEP_CONFIGS)
    lines.append("")
    lines.append(f"{cells_total - len(missing)} of {cells_total} cells measured; a cell shows the CV of J/token of "
                 "each run that measured it and where the run is kept, or the error of a run where it failed; where no "
                 "finished run measured it, how many windows a run cut by the end of a lease got (its checkpoint, "
                 "not counted as measured).")  # fmt: skip
    return "\n".join(lines)


def checkpoint_section(path: Path) -> str:
    """A table for one unfinished run's checkpoint (idle power after was never measured: before only)."""
    state = _state(path)
    config, idle_w = state.config, state.idle_power_w_before
    if idle_w is None:  # the collector measures idle power before any window; land.py lands only measured ones
        raise SystemExit(f"{path}: a checkpoint without idle power before its windows cannot be summarised")
    lines = [
        f"#### {config['arch']} · {config['stack']} · batch {config['batch_size']} · unfinished · `{_shown(path)}`",
        "",
        f"Stopped by the end of the machine's lease; idle {idle_w:.1f} W before (none after), so the static part "
        "uses the idle power before only. Not a submission: kept as the raw record it is.",
        "",
        HEADER,
    ]
    rows = [(m.precision.value, m.windows) for m in state.measurements.values() if m.windows]
    base = next((w for p, w in rows if p == "fp16"), None)
    for precision, windows in rows:
        change = "baseline"
        if base is not None and precision != "fp16":
            ratio = derive(windows, idle_w).j_per_token_mean / derive(base, idle_w).j_per_token_mean
            change = f"{100 * (ratio - 1):+.1f}% vs fp16 (no CI: unfinished)"
        lines.append(_row(precision, windows, idle_w, change))
    return "\n".join(lines)


def checkpoint_windows(path: Path) -> list[tuple[str, Window]]:
    """The windows of one unfinished run's checkpoint, warm-ups included, each named by its precision."""
    return [(m.precision.value, w) for m in _state(path).measurements.values() for w in (*m.warmup, *m.windows)]


def sensor_section(paths: list[Path], checkpoints: list[Path]) -> str:
    """How far NVML's energy counter and the 10 Hz power integral disagree, over every committed window."""
    lines = ["| windows of | windows | worst difference | in | above the validator's warning level |",
             "|---|---:|---:|---|---:|"]  # fmt: skip
    groups = {
        "finished runs (warm-ups included)": [
            (f"`{_short(p)}` {m.precision.value}", w)
            for p in paths for m in _load(p).payload.measurements for w in (*m.warmup, *m.windows)
        ],
        "checkpoints of unfinished runs": [(f"`{_short(p)}` {name}", w) for p in checkpoints
                                           for name, w in checkpoint_windows(p)],
    }  # fmt: skip
    for what, windows in groups.items():
        if not windows:
            continue
        diffs = [(integral_diff_pct(w), name) for name, w in windows]
        worst, where = max(diffs)
        above = sum(d > INTEGRAL_WARN_PCT for d, _ in diffs)
        lines.append(f"| {what} | {len(windows)} | {worst:.2f}% | {where} | {above} (> {INTEGRAL_WARN_PCT:g}%) |")
    return "\n".join(lines)


def _short(path: Path) -> str:
    """A committed run's id (the tail of its submission id)."""
    return path.name.split(".")[0].split("-")[-1]


def compile_bnb_section(results: list[Path]) -> str:
    """Each compile_bnb.py result: tokens/s of each trial, against the same precision uncompiled and FP16 compiled."""
    lines = ["| shape | precision | quantizer marked compileable | torch.compile ran | graph breaks | tokens/s "
             "| vs same precision uncompiled | vs fp16 compiled | greedy tokens matching uncompiled | result |",
             "|---|---|---|---|---:|---:|---:|---:|---|---|"]  # fmt: skip
    for result in results:
        data = json.loads(result.read_text(encoding="utf-8"))
        rows = data["rows"]
        timed = [r for r in rows if "tokens_per_s" in r]
        fp16 = next((r["tokens_per_s"] for r in timed if r["precision"] == "fp16" and r["compiled"]), None)
        plain = {r["precision"]: r["tokens_per_s"] for r in timed if not r["compiled"]}
        for r in rows:
            trial = f"| {data['arch']} | {r['precision']} | {'yes' if r['forced_compileable'] else 'no'} "
            if "tokens_per_s" not in r:
                lines.append(f"{trial}| error: {r.get('error')} | | | | | | `{result.name}` |")
                continue
            tps = r["tokens_per_s"]
            same = f"{tps / plain[r['precision']]:.2f}x" if r["compiled"] and r["precision"] in plain else ""
            vs_fp16 = f"{tps / fp16:.2f}x" if fp16 and r["precision"] != "fp16" else ""
            lines.append(f"{trial}| {'yes' if r['compiled'] else 'no'} | {r['graph_breaks']} | {tps:.1f} | {same} "
                         f"| {vs_fp16} | {r.get('tokens_matching_uncompiled', '')} | `{result.name}` |")  # fmt: skip
    return "\n".join(lines)


def committed() -> tuple[list[Path], list[Path], list[Path]]:
    """The committed reference runs: finished in runs/, accepted in submissions/, checkpoints of cut runs."""
    return (sorted((RUNS / "nvidia-h200").glob("*.json")), sorted(ACCEPTED.rglob("*.json")),
            sorted((RUNS / "checkpoints").glob("*.json")))  # fmt: skip


def render() -> str:
    """The whole markdown block, between its markers."""
    finished, accepted, checkpoints = committed()
    parts = ["### Spread by run and knob", "CV of J/token, of seconds per token (the host's speed) and of the "
             "dynamic (idle-subtracted) J/token, between measured windows; other CPUs busy: the range over windows of "
             "the host CPUs other processes kept busy (`host_others_busy_cpus`); `-`: not recorded or not measured.",
             knob_section(finished + accepted),
             "### The same configuration in separate collector processes",
             "Recomputed from the runs each `benchmarks/results/reproducibility-*.json` names (kept in `submissions/` "
             "or, where one fails the CV gate, in `runs/`); target: the benchmark's, 1% where it counts the workload "
             "GPU-bound (a compiled stack and a compiled precision, or batch >= 8), 2% where host-bound.",
             reproducibility_section(sorted((ROOT / "benchmarks" / "results").glob("reproducibility-*.json")),
                                     accepted + finished),
             "### The energy counter against the power integral",
             sensor_section(finished + accepted, checkpoints),
             "### Compiling bitsandbytes models (`scripts/reference/compile_bnb.py`)",
             "Tokens/s after warm-up, one process per shape, batch 1, 128 prompt + 256 new tokens, static KV cache; "
             "no energy. From `benchmarks/results/compile-bnb-*.json`.",
             compile_bnb_section(sorted((ROOT / "benchmarks" / "results").glob("compile-bnb-*.json"))),
             "### Crossovers over every committed run",
             crossover_section(finished + accepted),
             "### Compiling against the precision",
             "The dataset's `stack_table` over every committed run: J/token of each precision on the eager stack "
             "against a compiled one, each side the mean over its runs (different runs, often different sittings "
             "and GPUs), beside the share of J/token that is idle power x time on each side. Set the change from "
             "compiling beside the changes between precisions within one run (table \"Crossovers\" above, and each "
             "run's table below).",
             stack_section(finished + accepted),
             "### How much of the spread is time per token",
             "Per measurement with 3 windows or more: the share of the variance of J/token between its windows that "
             "a straight line in seconds per token explains (R^2); a high R^2 means J/token moved with the time a "
             "token took, i.e. with the host's speed where decode is host-bound. The last column is how much of each "
             "window's wall time the generating process spent on a CPU (`process_cpu_s`).",
             time_section(finished + accepted),
             "### The same FP16 measurement on different H200s",
             "Compiled FP16 where more than one GPU measured a shape (at one batch size and length). FP16 is "
             "compiled alike on `compiled` and `compiled-all`, so rows of both stacks are set side by side (below "
             "the table: the two stacks on one GPU, where one ran both). Each sitting got a new machine, so between "
             "sittings the GPU and the host change together. The last column compares each run with the mean of the "
             "GPU that measured the shape lowest.",
             cards_section(finished + accepted),
             "### The sweep of issue 6, cell by cell",
             sweep_section(finished + accepted, checkpoints),
             "### Each run"]  # fmt: skip
    parts += [submission_section(p) for p in finished + accepted]
    parts += [checkpoint_section(p) for p in checkpoints]
    return BEGIN + "\n\n" + "\n\n".join(parts) + "\n\n" + END


def main() -> int:
    """Print the block, or check that a file holds it."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", type=Path, help="fail if this file's block differs from the committed windows")
    args = parser.parse_args()
    block = render()
    if args.check is None:
        sys.stdout.write(block + "\n")
        return 0
    text = args.check.read_text(encoding="utf-8")
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < 0 or text[start : end + len(END)] != block:
        sys.stderr.write(f"{args.check}: the reference-runs block is out of date; paste this script's output\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
