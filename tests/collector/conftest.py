"""Fixtures of the collector's tests: NVML faked at its module boundary, clocks, traces."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from collector_fakes import FakePynvml, VirtualClock

TRACES = Path(__file__).parents[1] / "data" / "traces"


@pytest.fixture
def clock() -> VirtualClock:
    """A deterministic clock."""
    return VirtualClock()


@pytest.fixture
def fake_nvml(monkeypatch: pytest.MonkeyPatch, clock: VirtualClock) -> FakePynvml:
    """A fake pynvml module in sys.modules, on the virtual clock."""
    fake = FakePynvml(clock)
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    return fake
