"""The host side of a window: steal time per CPU from /proc/stat."""

from __future__ import annotations

import os
from pathlib import Path

from ecocompute.collector import host

STAT = """cpu  100 0 50 9000 10 0 5 {steal} 0 0
cpu0 50 0 25 4500 5 0 2 {half} 0 0
cpu1 50 0 25 4500 5 0 3 {half} 0 0
intr 12345
"""


def test_steal_is_the_per_cpu_average(tmp_path: Path) -> None:
    stat = tmp_path / "stat"
    ticks = os.sysconf("SC_CLK_TCK")
    stat.write_text(STAT.format(steal=4 * ticks, half=2 * ticks), encoding="ascii")
    assert host.host_steal_s(stat) == 2.0  # 4 s summed over two CPUs


def test_steal_is_none_without_proc_stat(tmp_path: Path) -> None:
    assert host.host_steal_s(tmp_path / "missing") is None
    (tmp_path / "odd").write_text("intr 1\n", encoding="ascii")
    assert host.host_steal_s(tmp_path / "odd") is None
