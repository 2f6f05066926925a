"""Choosing the GPU library: NVML (faked) for NVIDIA, amdsmi (faked) for AMD, or whichever finds a GPU."""

from __future__ import annotations

import sys

import pytest
from amdsmi_fake import FakeAmdsmi
from collector_fakes import LIBRARY_NOT_FOUND, FakePynvml, VirtualClock

from ecocompute.collector.device.amd import AmdSmiGpu
from ecocompute.collector.device.devices import open_gpu
from ecocompute.collector.device.nvml import NvmlGpu
from ecocompute.collector.errors import MigEnabledError, NoGpuError
from ecocompute.schema.errors import UsageError


@pytest.fixture
def amd_fake(monkeypatch: pytest.MonkeyPatch, clock: VirtualClock) -> FakeAmdsmi:
    fake = FakeAmdsmi(clock)
    monkeypatch.setitem(sys.modules, "amdsmi", fake)
    return fake


def test_auto_opens_nvidia_when_nvml_finds_a_gpu(fake_nvml: FakePynvml, amd_fake: FakeAmdsmi) -> None:
    gpu = open_gpu(0, clock=amd_fake.clock)
    assert isinstance(gpu, NvmlGpu)
    gpu.close()
    assert amd_fake.calls == []  # amdsmi was never asked


def test_auto_falls_back_to_amd_when_nvml_finds_none(fake_nvml: FakePynvml, amd_fake: FakeAmdsmi) -> None:
    fake_nvml.init_error = LIBRARY_NOT_FOUND
    gpu = open_gpu(0, clock=amd_fake.clock)
    assert isinstance(gpu, AmdSmiGpu) and gpu.fingerprint().gpu_arch == "cdna3"
    gpu.close()


def test_neither_library_finding_a_gpu_gives_both_reasons(fake_nvml: FakePynvml, amd_fake: FakeAmdsmi) -> None:
    fake_nvml.init_error = LIBRARY_NOT_FOUND
    amd_fake.devices = []
    with pytest.raises(NoGpuError, match=r"NVIDIA: no NVIDIA GPU .*; AMD: no AMD GPU or amdgpu driver found"):
        open_gpu(0, clock=amd_fake.clock)


def test_a_refusal_other_than_no_gpu_is_the_answer(fake_nvml: FakePynvml, amd_fake: FakeAmdsmi) -> None:
    fake_nvml.mig = True
    with pytest.raises(MigEnabledError):
        open_gpu(0, clock=amd_fake.clock)
    assert amd_fake.calls == []


def test_a_named_vendor_is_used_alone(fake_nvml: FakePynvml, amd_fake: FakeAmdsmi) -> None:
    gpu = open_gpu(0, "amd", clock=amd_fake.clock)
    assert isinstance(gpu, AmdSmiGpu)
    gpu.close()
    fake_nvml.init_error = LIBRARY_NOT_FOUND
    with pytest.raises(NoGpuError, match="no NVIDIA GPU"):
        open_gpu(0, "nvidia", clock=amd_fake.clock)
    with pytest.raises(UsageError, match="unknown GPU vendor 'intel': choose one of auto, nvidia, amd"):
        open_gpu(0, "intel", clock=amd_fake.clock)
