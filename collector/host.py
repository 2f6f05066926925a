"""The host side of a window: this process's CPU time, the host's steal time, and what the CPU is.

Small-batch decode is host-bound (REFERENCE_GPU.md): a window's CPU time tells a reader whether the
generating process kept a core busy, and steal time whether a hypervisor took it away. Read from
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


def host_steal_s(proc_stat: Path = PROC_STAT) -> float | None:
    """Steal time since boot averaged per host CPU, in s; None off Linux.

    The ``cpu`` line of /proc/stat sums all CPUs; it is divided by the number of ``cpuN`` lines, so a
    window's steal compares with its duration (1 s per s would mean every CPU was taken away all along).
    """
    try:
        lines = proc_stat.read_text(encoding="ascii").splitlines()
    except OSError:
        return None
    first = lines[0].split() if lines else []
    if len(first) < 9 or first[0] != "cpu":
        return None
    cpus = sum(1 for line in lines if line.startswith("cpu") and line[3:4].isdigit())
    return int(first[8]) / os.sysconf("SC_CLK_TCK") / max(1, cpus)


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
