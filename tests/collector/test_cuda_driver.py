"""collector/device/cuda.py: the CUDA driver asked without torch, against a FAKE libcuda (no GPU here).

The fake answers the driver calls the module makes the way libcuda does: it writes through the pointers it is
given and returns a CUresult. A GPU test holds the module to torch's own numbering on a real GPU.
"""

from __future__ import annotations

import ctypes
import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ecocompute.collector.device import cuda
from ecocompute.collector.errors import NoGpuError

ROOT = Path(__file__).parents[2]


def _target(ref: Any) -> Any:
    """The ctypes object behind ``ctypes.byref(x)`` (or ``x`` itself)."""
    return getattr(ref, "_obj", ref)


class FakeLibcuda:
    """A FAKE CUDA driver: devices by UUID, free memory each, a primary-context refcount, failures on demand."""

    def __init__(self, uuids: list[str], free: list[int] | None = None, fail: str | None = None) -> None:
        self.uuids = uuids
        self.free = free or [0] * len(uuids)
        self.fail = fail
        self.calls: list[str] = []
        self.retained: dict[int, int] = {}
        self.current: list[int] = []

    def _call(self, name: str) -> int:
        self.calls.append(name)
        return 999 if name == self.fail else 0

    def cuInit(self, flags: int) -> int:  # noqa: N802 - the driver's names
        return self._call("cuInit")

    def cuDeviceGetCount(self, count: Any) -> int:  # noqa: N802
        _target(count).value = len(self.uuids)
        return self._call("cuDeviceGetCount")

    def cuDeviceGet(self, device: Any, index: int) -> int:  # noqa: N802
        _target(device).value = index
        return self._call("cuDeviceGet")

    def cuDeviceGetUuid_v2(self, raw: Any, device: Any) -> int:  # noqa: N802
        value = bytes.fromhex(self.uuids[_target(device).value].replace("-", ""))
        ctypes.memmove(raw, value, 16)
        return self._call("cuDeviceGetUuid_v2")

    def cuDevicePrimaryCtxRetain(self, ctx: Any, device: Any) -> int:  # noqa: N802
        index = _target(device).value
        self.retained[index] = self.retained.get(index, 0) + 1
        _target(ctx).value = 0x1000 + index
        return self._call("cuDevicePrimaryCtxRetain")

    def cuCtxPushCurrent_v2(self, ctx: Any) -> int:  # noqa: N802
        self.current.append(_target(ctx).value - 0x1000)
        return self._call("cuCtxPushCurrent_v2")

    def cuMemGetInfo_v2(self, free: Any, total: Any) -> int:  # noqa: N802
        _target(free).value = self.free[self.current[-1]]
        _target(total).value = 2 * self.free[self.current[-1]]
        return self._call("cuMemGetInfo_v2")

    def cuCtxPopCurrent_v2(self, ctx: Any) -> int:  # noqa: N802
        self.current.pop()
        return self._call("cuCtxPopCurrent_v2")

    def cuDevicePrimaryCtxRelease_v2(self, device: Any) -> int:  # noqa: N802
        self.retained[_target(device).value] -= 1
        return self._call("cuDevicePrimaryCtxRelease_v2")


A = "5a3b2c1d-0000-1111-2222-333344445555"
B = "deadbeef-aaaa-bbbb-cccc-ddddeeeeffff"


@pytest.fixture
def driver(monkeypatch: pytest.MonkeyPatch) -> FakeLibcuda:
    fake = FakeLibcuda([A, B], free=[7 << 30, 3 << 30])
    monkeypatch.setattr(cuda, "_driver", lambda: fake)
    return fake


def test_the_nvml_uuid_finds_cuda_s_numbering(driver: FakeLibcuda) -> None:
    assert cuda.device_uuids() == [A, B]
    assert cuda.cuda_device(f"GPU-{B.upper()}", nvml_index=0) == "cuda:1"  # NVML's 0 is CUDA's 1 here
    assert cuda.cuda_device(f"GPU-{A}", nvml_index=1) == "cuda:0"


def test_a_gpu_cuda_does_not_see_is_refused_with_the_fix(driver: FakeLibcuda) -> None:
    with pytest.raises(NoGpuError, match=r"NVML GPU 2 is not among the CUDA devices.*--device-index"):
        cuda.cuda_device("GPU-00000000-0000-0000-0000-000000000000", nvml_index=2)
    driver.uuids, driver.free = [], []
    with pytest.raises(NoGpuError, match="CUDA sees no device"):
        cuda.cuda_device(f"GPU-{A}", nvml_index=0)


def test_a_failing_driver_call_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cuda, "_driver", lambda: FakeLibcuda([A], fail="cuDeviceGetUuid_v2"))
    with pytest.raises(NoGpuError, match=r"cuDeviceGetUuid_v2 failed \(CUresult 999\)"):
        cuda.device_uuids()


def test_free_memory_reads_the_device_s_primary_context_and_gives_it_back(driver: FakeLibcuda) -> None:
    assert cuda.free_memory_bytes("cuda:1") == 3 << 30
    assert cuda.free_memory_bytes("cuda:0") == 7 << 30
    assert driver.retained == {0: 0, 1: 0} and driver.current == []


def test_free_memory_releases_the_context_when_the_read_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeLibcuda([A], free=[1], fail="cuMemGetInfo_v2")
    monkeypatch.setattr(cuda, "_driver", lambda: fake)
    with pytest.raises(NoGpuError, match="cuMemGetInfo_v2"):
        cuda.free_memory_bytes("cuda:0")
    assert fake.retained == {0: 0} and fake.current == []


def test_no_cuda_runtime_loaded_reads_as_none(tmp_path: Path) -> None:
    maps = tmp_path / "maps"
    maps.write_text("7f00-7f01 r-xp 00000000 08:01 1 /usr/lib/x86_64-linux-gnu/libc.so.6\n", encoding="utf-8")
    assert cuda.loaded_runtime_version(maps) is None
    assert cuda.loaded_runtime_version(tmp_path / "absent") is None


def test_without_a_driver_the_error_names_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_library(name: str) -> Any:
        raise OSError(f"{name}: cannot open shared object file")

    monkeypatch.setattr(cuda, "_CACHE", {})
    monkeypatch.setattr(ctypes, "CDLL", no_library)
    with pytest.raises(NoGpuError, match=r"libcuda\.so\.1\) is not installed: install the NVIDIA driver"):
        cuda.device_uuids()


def test_the_llama_cpp_engine_s_own_parts_never_import_torch() -> None:
    """With torch made unimportable, the llama.cpp engine's device, software record and registry still work."""
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT / "tests" / "collector")!r})
        from collector_fakes import block_imports
        block_imports("torch")  # any import of torch in this process now raises ImportError
        from test_cuda_driver import FakeLibcuda, A
        from ecocompute.collector.device import cuda
        cuda._driver = lambda: FakeLibcuda([A], free=[1 << 30])
        from ecocompute.collector.model.engines import engine_spec
        from ecocompute.collector.run import collect, fingerprint

        class Gpu:
            index = 0
            def uuid(self):
                return "GPU-" + A

        spec = engine_spec("llama.cpp")
        assert not spec.runs_torch
        assert spec.device_for(Gpu()) == "cuda:0"
        software = fingerprint.software("12.0", engine_build={{"cuda_runtime": "13.0"}})
        assert software.cuda_runtime == "13.0" and software.torch
        assert not [m for m in sys.modules if m.split(".")[0] in ("torch", "transformers")]
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


@pytest.mark.gpu
def test_the_driver_numbers_gpus_as_torch_does() -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or importlib.util.find_spec("pynvml") is None:
        pytest.skip("needs an NVIDIA GPU")
    uuids = cuda.device_uuids()
    assert uuids == [str(torch.cuda.get_device_properties(i).uuid) for i in range(torch.cuda.device_count())]
    assert 0 < cuda.free_memory_bytes("cuda:0") <= torch.cuda.mem_get_info(0)[1]
    torch.zeros(1, device="cuda")
    assert cuda.loaded_runtime_version() == torch.version.cuda
