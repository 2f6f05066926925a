"""Per-test CPU time of the suite, for measuring it on a shared machine (where wall time says little).

A pytest plugin: each test's CPU seconds (this process and the children it waited for; setup, call and teardown)
and wall seconds, written per xdist worker to ``$CPUTIME_OUT.<worker>.json``. Run as a script on that prefix, it
prints the total and the costliest files and tests::

    CPUTIME_OUT=/tmp/cpu PYTHONPATH=benchmarks python -m pytest -n 2 --dist worksteal -p suite_cpu tests campaigns
    python benchmarks/suite_cpu.py /tmp/cpu
"""

from __future__ import annotations

import collections
import json
import os
import resource
import sys
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

_rows: dict[str, tuple[float, float]] = {}


def _cpu_s() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, None]:
    cpu0, wall0 = _cpu_s(), time.monotonic()
    yield
    _rows[item.nodeid] = (_cpu_s() - cpu0, time.monotonic() - wall0)


def pytest_sessionfinish(session: pytest.Session) -> None:
    out = os.environ.get("CPUTIME_OUT")
    if out and _rows:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        Path(f"{out}.{worker}.json").write_text(json.dumps(_rows), encoding="utf-8")


def main(prefix: str, top: int = 25) -> None:
    rows: dict[str, list[float]] = {}
    where = Path(prefix)
    for path in where.parent.glob(f"{where.name}.*.json"):
        rows.update(json.loads(path.read_text(encoding="utf-8")))
    cpu_s, wall_s = sum(c for c, _ in rows.values()), sum(w for _, w in rows.values())
    print(f"{len(rows)} tests, CPU {cpu_s:.1f} s, wall summed {wall_s:.1f} s")
    by_file: collections.Counter[str] = collections.Counter()
    for nodeid, (cpu, _) in rows.items():
        by_file[nodeid.split("::")[0]] += cpu
    for name, cpu in by_file.most_common(top):
        print(f"{cpu:7.1f}  {name}")
    print("CPU s   wall s  test")
    for nodeid, (cpu, wall) in sorted(rows.items(), key=lambda r: -r[1][0])[:top]:
        print(f"{cpu:7.1f} {wall:7.1f}  {nodeid}")


if __name__ == "__main__":
    main(sys.argv[1], *(int(n) for n in sys.argv[2:3]))
