"""Fixtures of the collector's tests: NVML faked at its module boundary, clocks, traces."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from collector_fakes import FakePynvml, FastClock, VirtualClock

TRACES = Path(__file__).parents[1] / "data" / "traces"


@pytest.fixture(scope="session")
def random_init_weights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One weights cache for the whole session, holding the tiny test architecture built once (seed 0, on CPU).

    Every end-to-end test that runs the real transformers path loads its weights from here instead of building
    its own: same architecture and seed give the same folder name, so the build happens once.
    """
    from ecocompute.collector.model import weights
    from ecocompute.collector.model.archs import load_arch

    folder = tmp_path_factory.mktemp("random-init-weights")
    weights.random_init_source(load_arch("tiny-llama-test"), 0, folder, "cpu")
    return folder


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


@pytest.fixture
def nvml(monkeypatch: pytest.MonkeyPatch) -> FakePynvml:
    """A fake pynvml on a fast clock that ``ecocompute collect`` (the CLI) measures through."""
    from ecocompute.collector import cli as collector_cli
    from ecocompute.collector.run.collect import Environment

    clock = FastClock(20.0)
    fake = FakePynvml(clock)
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    monkeypatch.setattr(collector_cli, "Environment", lambda **kw: Environment(clock=clock, **kw))
    return fake
