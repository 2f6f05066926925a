"""Which CUDA device the model runs on: the one whose UUID NVML measures, never a guess when UUIDs are known."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from ecocompute.collector.errors import NoGpuError
from ecocompute.collector.model import hf


def fake_torch(uuids: list[str | None]) -> Any:
    """A stand-in for ``torch`` exposing only ``torch.cuda`` device enumeration (a fake at the CUDA boundary)."""
    cuda = SimpleNamespace(
        is_available=lambda: True,
        device_count=lambda: len(uuids),
        get_device_properties=lambda i: SimpleNamespace(uuid=uuids[i]) if uuids[i] else SimpleNamespace(),
    )
    return SimpleNamespace(cuda=cuda)


def test_the_device_with_the_measured_uuid_is_chosen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hf, "_torch", lambda: fake_torch(["aaaa", "bbbb"]))
    assert hf.cuda_device("GPU-bbbb", 0) == "cuda:1"


def test_a_visible_gpu_that_nvml_does_not_measure_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hf, "_torch", lambda: fake_torch(["cccc"]))
    with pytest.raises(NoGpuError, match="--device-index"):
        hf.cuda_device("GPU-aaaa", 0)


def test_without_uuids_numbering_is_the_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hf, "_torch", lambda: fake_torch([None, None]))
    assert hf.cuda_device("GPU-aaaa", 1) == "cuda:1"


def test_compiled_stack_needs_a_warmup_window() -> None:
    from ecocompute.collector.run.config import RunConfig
    from ecocompute.schema.errors import UsageError
    from ecocompute.schema.models import Precision, Stack

    config = RunConfig(precisions=(Precision.FP16,), arch="tiny-llama-test", stack=Stack.COMPILED, warmup_windows=0)
    with pytest.raises(UsageError, match="--warmup-windows >= 1"):
        config.check()
