"""The host side of a window: this process's CPU time, the host's steal and busy time, and what the CPU is.

Small-batch decode is host-bound (REFERENCE_GPU.md): a window's CPU time tells a reader whether the
generating process kept a core busy, steal time whether a hypervisor took it away, and the host's busy
time less this process's how much else ran beside it (another GPU's collector, a compiler). Read from
``/proc`` and the standard library only (psutil is not required).
"""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path

PROC_STAT = Path("/proc/stat")
PROC_CPUINFO = Path("/proc/cpuinfo")
PROC_MEMINFO = Path("/proc/meminfo")


def process_cpu_s() -> float:
    """User + system CPU time of this process (all threads), in s."""
    return time.process_time()


def host_cpu_s(proc_stat: Path = PROC_STAT) -> tuple[float | None, float | None]:
    """``(steal, busy)`` since boot from one read of /proc/stat, in s; ``(None, None)`` off Linux.

    Steal is averaged per host CPU: the ``cpu`` line sums all CPUs, and it is divided by the number of
    ``cpuN`` lines, so a window's steal compares with its duration (1 s per s would mean every CPU was taken
    away all along). Busy is summed over CPUs: user + nice + system + irq + softirq (guest time is already
    inside user); idle, iowait and steal are not. A window's busy difference, less the generating process's
    own CPU time and divided by the window's duration, is the number of CPUs that everything else kept busy.
    """
    try:
        lines = proc_stat.read_text(encoding="ascii").splitlines()
    except OSError:
        return None, None
    first = lines[0].split() if lines else []
    if len(first) < 9 or first[0] != "cpu":
        return None, None
    try:
        user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in first[1:9])
    except ValueError:
        return None, None
    cpus = max(1, sum(1 for line in lines if line.startswith("cpu") and line[3:4].isdigit()))
    tick_s = 1.0 / os.sysconf("SC_CLK_TCK")
    return steal * tick_s / cpus, (user + nice + system + irq + softirq) * tick_s


def others_busy_cpus(busy0_s: float | None, busy1_s: float | None, own_cpu_s: float, duration_s: float) -> float | None:
    """CPUs kept busy by other processes, averaged over a window (never below 0: /proc/stat counts in ticks)."""
    if busy0_s is None or busy1_s is None or duration_s <= 0:
        return None
    return max(0.0, (busy1_s - busy0_s - own_cpu_s) / duration_s)


def cpu_model(cpuinfo: Path = PROC_CPUINFO) -> str:
    """The CPU's model name (/proc/cpuinfo), or what ``platform`` knows."""
    try:
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() in ("model name", "Model", "cpu model") and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def host_memory_mib(meminfo: Path = PROC_MEMINFO) -> int | None:
    """Total host memory in MiB (/proc/meminfo MemTotal); None when unknown."""
    try:
        for line in meminfo.read_text(encoding="ascii").splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def host_os() -> str:
    """Operating system, kernel and machine, e.g. ``Linux-6.8.0-x86_64-with-glibc2.39``."""
    return platform.platform()


def cpu_count() -> int:
    """Logical CPUs of the host."""
    return os.cpu_count() or 1
