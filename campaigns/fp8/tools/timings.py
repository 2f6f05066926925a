"""How long each FP8 queue line should take on the H200, estimated from the H200 campaign's own runs.

Each finished job of that campaign has its wall time in a worker log (``[time] gpu G job N: ARGS`` ... ``exited
0``) and its windows in its submission (matched by shape, stack, batch and the time it was written). A job's time
splits into its windows (warm-ups included) and the rest: loads, compiles, idle readings, delays, cooldowns. An FP8
line measures fp16, bf16, fp8-wo and fp8-dyn at the shape, stack and batch of a campaign job:

- the rest: the job's rest per precision, times four;
- fp16 and bf16: the windows they had;
- fp8-dyn: as bf16 (its matmul runs on the FP8 tensor cores; it is not expected slower than bf16);
- fp8-wo: as fp16 at the floor; at the ceiling as the slowest precision of that job; and in a third column as
  fp16 slowed down as the RTX 5090's 7B was (pytorch/ao#4094: 10.5 against 70 tokens/s; dequantizing every weight
  on every call is that path). A window is whole generate calls, at least ``--window-s`` of them, so a slow
  precision's windows grow past ``--window-s``.

Usage: ``python campaigns/fp8/tools/timings.py [--write | --check]`` (TIMINGS.md beside the README).
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ecocompute.schema import Submission, load_submission

ROOT = Path(__file__).resolve().parents[3]
LOGS = ROOT / "campaigns" / "h200-2026-11" / "logs"
SUBMISSIONS = ROOT / "submissions" / "ecocompute-reference" / "nvidia-h200"
QUEUES = ROOT / "campaigns" / "fp8" / "queues"
RUN_ORDER = ("h200-fp8-eager-b1.txt", "h200-fp8-compiled-all-b1.txt")
"""The queues in the order start.sh runs them: eager first, whose first lines are pytorch/ao#4094's sizes."""
NO_COMPILED_QUEUE = (
    "There is no `compiled` queue: the collector's `compiled` and `compiled-all` differ only in marking bitsandbytes "
    "models compileable (`mark_compileable` in collector/model/hf.py), and transformers compiles fp16, bf16 and "
    "torchao models on both, so a `compiled` line would measure its `compiled-all` line again."
)
OUT = ROOT / "campaigns" / "fp8" / "TIMINGS.md"
COMMAND_LIMIT_S = 600
SESSION_LIMIT_S = 1800
FP8_LINE = ("fp16", "bf16", "fp8-wo", "fp8-dyn")
AO_4094_SLOWDOWN = 70 / 10.5
"""fp16 over fp8-wo tokens/s of Qwen2.5-7B on the RTX 5090 in pytorch/ao#4094 (eager generate)."""
WINDOW_S = 10.0
_START = re.compile(r"^\[(\S+)\] gpu (\d+) job (\d+): (.*)$")
_END = re.compile(r"^\[(\S+)\] gpu (\d+) job (\d+) exited (\d+)$")


@dataclass(frozen=True)
class Job:
    """One finished job of the H200 campaign: its settings, wall time and the submission it wrote."""

    arch: str
    stack: str
    batch: int
    precisions: tuple[str, ...]
    wall_s: float
    windows_s: dict[str, float]  # precision -> its windows' seconds, warm-ups included
    warmup_s: dict[str, float]  # precision -> its warm-up windows' seconds (compiling happens there)
    windows: dict[str, int]  # precision -> its measured windows
    call_s: dict[str, float]  # precision -> the median length of one generate call

    @property
    def rest_per_precision_s(self) -> float:
        """Loads, compiles, idle readings, delays and cooldowns, per precision."""
        return max(0.0, self.wall_s - sum(self.windows_s.values())) / len(self.precisions)


def _time(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)


def _option(args: list[str], name: str, default: str) -> str:
    return args[args.index(name) + 1] if name in args else default


def logged_jobs(logs: Path = LOGS) -> list[tuple[datetime, datetime, list[str]]]:
    """(start, end, arguments) of every job that exited 0, from every sitting's worker logs."""
    jobs = []
    for log in sorted(logs.glob("sitting-*/worker-*.log")):
        started: dict[tuple[str, str], tuple[datetime, list[str]]] = {}
        for line in log.read_text(encoding="utf-8").splitlines():
            if match := _START.match(line):
                started[match.group(2), match.group(3)] = (_time(match.group(1)), match.group(4).split())
            elif (match := _END.match(line)) and match.group(4) == "0":
                begun = started.pop((match.group(2), match.group(3)), None)
                if begun is not None:
                    jobs.append((begun[0], _time(match.group(1)), begun[1]))
    return jobs


def _job(arch: str, stack: str, batch: int, precisions: tuple[str, ...], wall_s: float, submission: Submission) -> Job:
    measured = [(m.precision.value, [*m.warmup, *m.windows]) for m in submission.payload.measurements]
    return Job(
        arch, stack, batch, precisions, wall_s,
        windows_s={p: sum(w.duration_s for w in ws) for p, ws in measured},
        warmup_s={m.precision.value: sum(w.duration_s for w in m.warmup) for m in submission.payload.measurements},
        windows={m.precision.value: len(m.windows) for m in submission.payload.measurements},
        call_s={p: statistics.median(w.duration_s / w.generate_calls for w in ws) for p, ws in measured if ws},
    )  # fmt: skip


def campaign_jobs(logs: Path = LOGS, submissions: Path = SUBMISSIONS) -> list[Job]:
    """The logged jobs matched to the submission each wrote (same shape, stack and batch, written in the job)."""
    written = [load_submission(path) for path in sorted(submissions.glob("*.json"))]
    jobs = []
    for start, end, args in logged_jobs(logs):
        arch, stack = _option(args, "--arch", ""), _option(args, "--stack", "compiled-all")
        batch = int(_option(args, "--batch-size", "1"))
        precisions = tuple(_option(args, "--precisions", "").split(","))
        found = [
            s for s in written
            if s.payload.workload.architecture == arch and s.payload.workload.stack.value == stack
            and s.payload.workload.batch_size == batch
            and start <= s.payload.created_at <= end + timedelta(seconds=1)
            and tuple(m.precision.value for m in s.payload.measurements) == precisions
        ]  # fmt: skip
        if len(found) == 1:
            jobs.append(_job(arch, stack, batch, precisions, (end - start).total_seconds(), found[0]))
    return jobs


@dataclass(frozen=True)
class Estimate:
    """The time of one FP8 queue line: a floor and a ceiling, from the campaign jobs of its shape, stack, batch."""

    arch: str
    stack: str
    batch: int
    jobs: int
    floor_s: float
    ceiling_s: float
    like_4094_s: float

    @property
    def fits(self) -> str:
        """Whether the line fits one 10-minute command (it is started in the background either way)."""
        if self.ceiling_s <= COMMAND_LIMIT_S:
            return "yes"
        return "at the floor" if self.floor_s <= COMMAND_LIMIT_S else "no"


def estimate(arch: str, stack: str, batch: int, jobs: list[Job]) -> Estimate | None:
    """The FP8 line at ``arch`` x ``stack`` x ``batch``, from the campaign jobs that measured fp16 and bf16 there."""
    same = [j for j in jobs if (j.arch, j.stack, j.batch) == (arch, stack, batch) and {"fp16", "bf16"} <= set(j.call_s)]
    if not same:
        return None
    rest = statistics.median(j.rest_per_precision_s for j in same) * len(FP8_LINE)
    fp16 = statistics.median(j.windows_s["fp16"] for j in same)
    bf16 = statistics.median(j.windows_s["bf16"] for j in same)
    slowest = statistics.median(max(j.windows_s.values()) for j in same)
    floor = rest + fp16 + bf16 + fp16 + bf16
    call = statistics.median(j.call_s["fp16"] for j in same) * AO_4094_SLOWDOWN
    windows = statistics.median(j.windows["fp16"] for j in same)
    warmup = statistics.median(j.warmup_s["fp16"] for j in same)
    slow = max(warmup, call) + windows * math.ceil(WINDOW_S / call) * call  # compiling stays in the warm-up
    return Estimate(arch, stack, batch, len(same), floor, floor - fp16 + max(slowest, fp16), floor - fp16 + slow)


def queue_lines(queues: Path = QUEUES) -> list[tuple[str, str, list[str]]]:
    """(queue file name, line, its arguments) of every line of the FP8 queues, in :data:`RUN_ORDER`."""
    lines = []
    found = sorted(q.name for q in queues.glob("*.txt"))
    if found != sorted(RUN_ORDER):
        raise SystemExit(f"the queues {found} are not RUN_ORDER's {list(RUN_ORDER)}: update timings.py")
    for queue in (queues / name for name in RUN_ORDER):
        for line in queue.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                lines.append((queue.name, line, line.split()))
    return lines


def queue_cell(args: list[str]) -> tuple[str, str, int]:
    """(shape, stack, batch) of a queue line's arguments, with the collector's defaults where one is left out."""
    return (
        _option(args, "--arch", ""),
        _option(args, "--stack", "compiled-all"),
        int(_option(args, "--batch-size", "128")),
    )


def render(jobs: list[Job], queues: Path = QUEUES) -> str:
    """TIMINGS.md: every FP8 queue line with its floor and ceiling."""
    out = [
        "# How long each FP8 queue line should take on the H200",
        "",
        "Generated by `tools/timings.py` from the H200 campaign's worker logs and submissions; do not edit by hand "
        "(`--check` fails on any difference, and a test runs it). How the floor and the ceiling are made: the "
        "tool's docstring. A command may run 10 minutes and a session 30: every line is started in the background "
        "by `tools/start.sh` and resumes where it stopped (`--resume`, `QUEUE.done`). Lines are in the order "
        "start.sh runs them.",
        "",
        NO_COMPILED_QUEUE,
        "",
        "| queue | line | shape | stack | batch | campaign jobs | floor | ceiling | fp8-wo as slow as #4094 | fits one "
        "command |",
        "|---|---:|---|---|---:|---:|---:|---:|---:|---|",
    ]
    total_floor = total_ceiling = total_4094 = 0.0
    for n, (queue, _line, args) in enumerate(queue_lines(queues), start=1):
        arch, stack, batch = queue_cell(args)
        found = estimate(arch, stack, batch, jobs)
        if found is None:
            out.append(f"| `{queue}` | {n} | {arch} | {stack} | {batch} | 0 | - | - | - | not estimated |")
            continue
        total_floor += found.floor_s
        total_ceiling += found.ceiling_s
        total_4094 += found.like_4094_s
        out.append(
            f"| `{queue}` | {n} | {arch} | {stack} | {batch} | {found.jobs} | {found.floor_s / 60:.1f} min | "
            f"{found.ceiling_s / 60:.1f} min | {found.like_4094_s / 60:.1f} min | {found.fits} |"
        )
    out += [
        "",
        f"All lines: {total_floor / 60:.0f} to {total_ceiling / 60:.0f} minutes of GPU time, "
        f"{total_floor / SESSION_LIMIT_S:.1f} to {total_ceiling / SESSION_LIMIT_S:.1f} sessions of 30 minutes (less "
        f"each session's start and smoke test); {total_4094 / 60:.0f} minutes if fp8-wo is everywhere as slow as "
        "the RTX 5090's 7B.",
        "",
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Print TIMINGS.md, write it (--write) or check that the committed one is current (--check)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", action="store_true", help="write campaigns/fp8/TIMINGS.md")
    group.add_argument("--check", action="store_true", help="fail if campaigns/fp8/TIMINGS.md is stale")
    args = parser.parse_args(argv)
    text = render(campaign_jobs())
    if args.write:
        OUT.write_text(text, encoding="utf-8")
    elif args.check:
        if OUT.read_text(encoding="utf-8") != text:
            sys.stderr.write("campaigns/fp8/TIMINGS.md is stale: run python campaigns/fp8/tools/timings.py --write\n")
            return 1
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
