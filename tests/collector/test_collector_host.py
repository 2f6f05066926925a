"""The host side of a window: steal time per CPU from /proc/stat."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ecocompute.collector.host import host

STAT = """cpu  100 0 50 9000 10 0 5 {steal} 0 0
cpu0 50 0 25 4500 5 0 2 {half} 0 0
cpu1 50 0 25 4500 5 0 3 {half} 0 0
intr 12345
"""


def test_steal_is_the_per_cpu_average(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    ticks = os.sysconf("SC_CLK_TCK")
    stat.write_text(STAT.format(steal=4 * ticks, half=2 * ticks), encoding="ascii")
    assert host.host_cpu_s(stat)[0] == 2.0  # 4 s summed over two CPUs


def test_steal_is_none_without_proc_stat(tmp_path: Path) -> None:
    assert host.host_cpu_s(tmp_path / "missing") == (None, None)
    (tmp_path / "odd").write_text("intr 1\n", encoding="ascii")
    assert host.host_cpu_s(tmp_path / "odd") == (None, None)


def test_busy_time_counts_user_nice_system_irq_softirq(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    ticks = os.sysconf("SC_CLK_TCK")
    stat.write_text(STAT.format(steal=4 * ticks, half=2 * ticks), encoding="ascii")
    # user 100 + nice 0 + system 50 + irq 0 + softirq 5 ticks; idle, iowait and steal are not busy
    assert host.host_cpu_s(stat)[1] == 155 / ticks


def test_others_busy_cpus_is_the_hosts_busy_time_less_our_own() -> None:
    # 10 s window: the host's CPUs were busy 45 s in all, 10 s of it ours, so 3.5 other CPUs on average
    assert host.others_busy_cpus(100.0, 145.0, own_cpu_s=10.0, duration_s=10.0) == 3.5
    assert host.others_busy_cpus(100.0, 105.0, own_cpu_s=5.02, duration_s=10.0) == 0.0  # tick rounding, not < 0
    assert host.others_busy_cpus(None, 105.0, own_cpu_s=1.0, duration_s=10.0) is None


def test_a_busy_neighbour_shows_on_this_host() -> None:
    """The real /proc/stat: a process spinning beside us for a second shows as about one busy CPU."""
    import subprocess
    import sys
    import time

    if host.host_cpu_s()[1] is None:
        pytest.skip("no /proc/stat here: the collector records null")
    child = subprocess.Popen([sys.executable, "-c", "import time\nt = time.time()\nwhile time.time() - t < 3: pass"])
    try:
        time.sleep(0.5)
        b0, c0, t0 = host.host_cpu_s()[1], host.process_cpu_s(), time.monotonic()
        time.sleep(1.5)
        b1, c1, t1 = host.host_cpu_s()[1], host.process_cpu_s(), time.monotonic()
    finally:
        child.wait()
    busy = host.others_busy_cpus(b0, b1, c1 - c0, t1 - t0)
    assert busy is not None and busy >= 0.5  # the spinning child (a CPU-capped runner may give it less than 1)
