"""The generating process's settings: CPU list parsing, affinity, niceness, the garbage collector."""

from __future__ import annotations

import gc
import os

import pytest
from collector_fakes import FakePynvml, FakeRunner, VirtualClock

from ecocompute.collector.device.nvml import NvmlGpu
from ecocompute.collector.device.sampler import PowerSampler
from ecocompute.collector.host import process
from ecocompute.collector.run.engine import Engine, EngineConfig
from ecocompute.schema.errors import UsageError
from ecocompute.schema.models import Precision


def test_cpu_lists() -> None:
    assert process.parse_cpu_list("3") == (3,)
    assert process.parse_cpu_list("3,2") == (2, 3)
    assert process.parse_cpu_list("0-2,5") == (0, 1, 2, 5)
    for bad in ("", "a", "1,,2", "-1"):
        with pytest.raises(UsageError, match="is not a CPU list"):
            process.parse_cpu_list(bad)


def test_affinity_is_applied_and_an_unavailable_cpu_refused() -> None:
    allowed = tuple(sorted(os.sched_getaffinity(0)))
    assert process.apply_cpu_affinity(allowed) == list(allowed)
    with pytest.raises(UsageError, match=r"CPU 99999 is not available to this process"):
        process.apply_cpu_affinity((99999,))


def test_a_refused_nice_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(increment: int) -> int:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "nice", refuse)
    with pytest.raises(UsageError, match=r"--nice -5: raising the priority needs root"):
        process.apply_nice(-5)


def test_nice_returns_the_new_niceness(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "nice", lambda increment: 10 + increment)
    assert process.apply_nice(3) == 13
    assert process.current_nice() == 10


class GcWatcher(FakeRunner):
    """Records whether the garbage collector was on during each generate call."""

    seen: list[bool]

    def generate_once(self) -> int:
        self.seen.append(gc.isenabled())
        return super().generate_once()


@pytest.mark.parametrize("pause", [True, False])
def test_gc_is_paused_inside_windows_only(fake_nvml: FakePynvml, clock: VirtualClock, pause: bool) -> None:
    gpu = NvmlGpu(0)
    engine = Engine(gpu, PowerSampler(gpu, clock), clock, EngineConfig(window_s=1.0, pause_gc=pause), own_contexts=0)
    runner = GcWatcher(Precision.FP16, clock)
    runner.seen = []
    assert gc.isenabled()
    engine.measure_window(runner, 0)
    assert runner.seen and set(runner.seen) == {not pause}
    assert gc.isenabled()
