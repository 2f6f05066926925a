"""Smoke tests on a real NVIDIA GPU (``pytest -m gpu tests/collector``; deselected by default).

Run them on the accelerator machine before long collections: real NVML readings, the CUDA device found
by UUID, a 4 s trace, and a short collection (tiny model, 10 s windows, ~3 minutes) that the
validator accepts (its CV gate relaxed: a tiny model's decode is host-bound). ECOCOMPUTE_TEST_GPU picks the
GPU's NVML index (default 0; with CUDA_VISIBLE_DEVICES set to that one GPU). Where ssh-keygen is missing (the
lent H200 machine), the collection is written unsigned and checked without its signature.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from ecocompute.collector.host.clock import SystemClock
from ecocompute.collector.run.collect import Destination, RunConfig, collect
from ecocompute.schema.derive import integral_diff_pct
from ecocompute.schema.models import Precision, Stack

pytestmark = pytest.mark.gpu
GPU = int(os.environ.get("ECOCOMPUTE_TEST_GPU", "0"))


def test_real_nvml_readings() -> None:
    from ecocompute.collector.device.nvml import NvmlGpu

    with NvmlGpu(GPU) as gpu:
        e0 = gpu.energy_j()
        time.sleep(0.5)
        assert gpu.energy_j() > e0
        assert 0 < gpu.power_w() < 2000
        fields = gpu.power_w_fields()
        assert fields.instant_w is None or 0 < fields.instant_w < 2000
        assert 0 < gpu.temperature_c() < 110 and gpu.sm_clock_mhz() > 0
        assert 0 <= gpu.utilization_pct() <= 100
        assert isinstance(gpu.throttle_reasons(), list)
        info = gpu.fingerprint()
        assert len(info.gpu_uuid_sha256) == 64 and info.gpu_name.startswith("NVIDIA")
        assert info.power_limit_w > 0 and info.memory_total_mib > 0


def test_cuda_device_is_found_by_uuid() -> None:
    from ecocompute.collector.device.nvml import NvmlGpu
    from ecocompute.collector.model import hf

    with NvmlGpu(GPU) as gpu:
        assert hf.cuda_device(gpu.uuid(), GPU).startswith("cuda:")


def test_record_a_short_trace(tmp_path: Path) -> None:
    from ecocompute.collector.device.nvml import NvmlGpu
    from ecocompute.collector.device.trace import load_trace, record_trace, write_trace
    from ecocompute.collector.model import hf

    with NvmlGpu(GPU) as gpu:
        device = hf.cuda_device(gpu.uuid(), GPU)
        trace = record_trace(gpu, SystemClock(), 4.0, lambda s: hf.matmul_load(device, s, 4096))
    write_trace(trace, tmp_path / "t.json")
    loaded = load_trace(tmp_path / "t.json")
    assert len(loaded.rows) > 100
    energy = loaded.column("energy_mj")
    assert energy[-1] > energy[0]


@pytest.mark.parametrize(
    ("stack", "precisions"),
    [(Stack.EAGER, (Precision.FP16, Precision.NF4, Precision.INT8)), (Stack.COMPILED, (Precision.FP16,)),
     (Stack.COMPILED_ALL, (Precision.FP16, Precision.NF4))],
)  # fmt: skip
def test_a_short_collection_on_the_gpu(tmp_path: Path, request: pytest.FixtureRequest, stack: Stack,
                                       precisions: tuple[Precision, ...]) -> None:  # fmt: skip
    signing = shutil.which("ssh-keygen") is not None
    keys: Any = request.getfixturevalue("keys") if signing else None
    config = RunConfig(precisions=precisions, arch="tiny-llama-test", prompt_tokens=32, new_tokens=32,
                       window_s=10.0, min_windows=3, max_windows=3, idle_s=3.0, stack=stack,
                       device_index=GPU)  # fmt: skip
    dest = Destination(signer=keys.login if signing else "gpu-test", key=keys.ed25519 if signing else None,
                       out_dir=tmp_path / "submissions",
                       state_dir=tmp_path / "state", weights_cache=tmp_path / "weights")  # fmt: skip
    result = collect(config, dest)
    p = result.submission.payload
    assert not p.example and p.software.cuda_runtime
    for m in p.measurements:
        assert m.error is None, m.error
        assert len(m.windows) == 3
        assert all(integral_diff_pct(w) < 5.0 for w in m.windows)
        assert m.compiled is (None if stack is Stack.EAGER else True), m.precision  # compiled-all compiles NF4 too
    if not signing:
        return
    core = pytest.importorskip("ecocompute.validate.core")
    (found,) = core.validate_files([result.path], allowed_signers=keys.allowed_signers,
                                   submissions_root=tmp_path / "submissions", max_cv_pct=1000.0)  # fmt: skip
    assert [f"{f.code} {f.path}" for f in found.errors] == []
