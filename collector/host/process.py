"""The generating process's own settings: CPU affinity, priority, and Python's garbage collector.

Each is a knob of the method (issue 6: host-bound decode follows the host's single-thread speed), applied
only when asked and recorded in ``payload.method`` (``cpu_affinity``, ``nice``, ``python_gc``).
"""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Iterator
from pathlib import Path

from ecocompute.schema.errors import UsageError

TASKS = Path("/proc/self/task")


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """``"3"``, ``"2,3"`` or ``"0-3,8"`` -> the sorted CPU numbers; UsageError on anything else."""
    cpus: set[int] = set()
    try:
        for part in text.split(","):
            low, _, high = part.strip().partition("-")
            cpus.update(range(int(low), int(high or low) + 1))
    except ValueError:
        raise UsageError(f"--cpu-affinity {text!r} is not a CPU list: write e.g. 3, 2,3 or 0-3") from None
    if not cpus or min(cpus) < 0:
        raise UsageError(f"--cpu-affinity {text!r} is not a CPU list: write e.g. 3, 2,3 or 0-3")
    return tuple(sorted(cpus))


def apply_cpu_affinity(cpus: tuple[int, ...]) -> list[int]:
    """Pin this process (every thread it has now; later ones inherit) to ``cpus``; return its affinity."""
    allowed = sorted(os.sched_getaffinity(0))
    missing = sorted(set(cpus) - set(allowed))
    if missing:
        raise UsageError(
            f"--cpu-affinity: CPU {', '.join(map(str, missing))} is not available to this process "
            f"(it may use {', '.join(map(str, allowed))})"
        )
    tids = [int(t.name) for t in TASKS.iterdir()] if TASKS.is_dir() else [0]
    for tid in tids:
        with contextlib.suppress(ProcessLookupError):  # a thread that ended meanwhile
            os.sched_setaffinity(tid, cpus)
    return sorted(os.sched_getaffinity(0))


def apply_nice(increment: int) -> int:
    """``os.nice(increment)``; return the new niceness. A negative one needs root (or CAP_SYS_NICE)."""
    try:
        return os.nice(increment)
    except PermissionError:
        raise UsageError(
            f"--nice {increment}: raising the priority needs root (or CAP_SYS_NICE); run as root, or pass a "
            "niceness >= 0"
        ) from None


def current_nice() -> int:
    """The niceness of the current process."""
    return os.nice(0)


@contextlib.contextmanager
def gc_paused(pause: bool) -> Iterator[None]:
    """With ``pause``: Python's garbage collector off inside the block (back on after, if it was on)."""
    was_enabled = gc.isenabled()
    if pause:
        gc.disable()
    try:
        yield
    finally:
        if pause and was_enabled:
            gc.enable()
