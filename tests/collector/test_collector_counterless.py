"""GPUs without the energy counter, and AMD GPUs, through ``collect`` and the validator.

NVML and amdsmi are FAKES at their module boundary (``collector_fakes.FakePynvml``, ``amdsmi_fake.FakeAmdsmi``);
the model is a FAKE runner on a virtual clock, so a whole run takes a fraction of a second. Nothing here is a
measurement. What a real counterless GPU, Jetson or AMD GPU shows is not tested here (none is reachable).
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from amdsmi_fake import FakeAmdsmi, FakeDevice
from collector_fakes import LIBRARY_NOT_FOUND, NOT_SUPPORTED, FakePynvml, FakeRunner, VirtualClock

from ecocompute.collector.device.gpu import EnergyMethod, GpuInfo
from ecocompute.collector.device.nvml import NvmlGpu
from ecocompute.collector.device.replay import ReplayGpu
from ecocompute.collector.device.sampler import PowerSampler, coverage
from ecocompute.collector.errors import MigEnabledError, NoEnergyCounterError
from ecocompute.collector.model.engines import EngineInfo
from ecocompute.collector.run.collect import Destination, Environment, Result, RunConfig, collect
from ecocompute.collector.run.engine import Engine, EngineConfig
from ecocompute.collector.run.preflight import gpu_checklist, refuse_unmeasurable
from ecocompute.schema.io import load_submission
from ecocompute.schema.models import Precision, Software, Stack
from ecocompute.validate.core import validate_files
from ecocompute.validate.counterless import check_counterless, trace_integral_j

FP16 = Precision.FP16
POWER_W = 150.0


@dataclass(frozen=True)
class FakeSource:
    """What the FAKE backend says of its model: the tiny test architecture."""

    model_id: str = "random-init/tiny-llama-test"
    revision: str | None = None
    weights: str = "random-init"
    architecture: str = "tiny-llama-test"
    params_total: int = 139_584


class FakeLoaded(FakeRunner):
    """A FAKE runner as a backend hands it over: 8 tokens per 0.5 s call of the virtual clock."""

    quantization = None
    memory_mib = 1.0
    attn_implementation = None
    compiled = False

    def generate_once(self) -> int:
        self.call_s = 0.5 + 0.003 * (self.calls % 7)  # windows that differ, as measured ones do
        return super().generate_once()


class FakeBackend:
    """A FAKE engine backend: no model, only time passing on the virtual clock."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock, self.source, self.prompt_sha256 = clock, FakeSource(), hashlib.sha256(b"prompt").hexdigest()
        self.loaded: list[Precision] = []

    def load(self, precision: Precision) -> FakeLoaded:
        self.loaded.append(precision)
        return FakeLoaded(precision, self.clock, call_s=0.5, tokens=8)

    def fits_together(self, precisions: list[Precision]) -> bool:
        return True

    def perplexity(self, runner: Any, text: str) -> tuple[float, int]:
        raise NotImplementedError


def _software(nvml_version: str) -> Software:
    return Software(python="3.11.7", torch="2.11.0+cu130", cuda_runtime="13.0", transformers="5.17.0",
                    bitsandbytes=None, accelerate=None, nvml=nvml_version)  # fmt: skip


@dataclass
class Run:
    """One ``collect`` call's surroundings: the virtual clock, folders, keys and the FAKE backend."""

    clock: VirtualClock
    root: Path
    keys: Any
    backend: FakeBackend

    def __call__(self, **config: Any) -> Result:
        settings: dict[str, Any] = {
            "precisions": (FP16,), "arch": "tiny-llama-test", "batch_size": 1, "prompt_tokens": 8, "new_tokens": 8,
            "window_s": 10.0, "warmup_windows": 1, "min_windows": 3, "max_windows": 3, "idle_s": 4.0,
            "idle_settle_s": 0.0, "torch_device": "cpu", "stack": Stack.EAGER, **config,
        }  # fmt: skip
        dest = Destination(signer=self.keys.login, key=self.keys.ed25519, out_dir=self.root / "submissions",
                           state_dir=self.root / "state")  # fmt: skip
        env = Environment(make_backend=lambda *_: self.backend, clock=self.clock, software=_software,
                          engine_info=lambda name: EngineInfo(name, "5.17.0", {"torch": "2.11.0+cu130"}))  # fmt: skip
        return collect(RunConfig(**settings), dest, env)

    def validator_errors(self, result: Result) -> list[str]:
        (found,) = validate_files([result.path], allowed_signers=self.keys.allowed_signers,
                                  submissions_root=self.root / "submissions", max_cv_pct=1000.0)  # fmt: skip
        return [f"{f.code} {f.path}: {f.message}" for f in found.errors]


@pytest.fixture
def run(tmp_path: Path, keys: Any, clock: VirtualClock) -> Run:
    return Run(clock, tmp_path, keys, FakeBackend(clock))


# --- NVIDIA without the counter ----------------------------------------------------------------------


def test_a_counterless_gpu_is_measured_by_integrated_power_and_accepted(fake_nvml: FakePynvml, run: Run) -> None:
    fake_nvml.energy_supported = False
    result = run()
    p = load_submission(result.path).payload
    assert p.method.energy_source == "power_integral"
    assert p.method.counter_absent_reason == "NVML: nvmlDeviceGetTotalEnergyConsumption is NOT_SUPPORTED on this GPU"
    assert p.hardware.vendor == "nvidia" and result.submission.schema_version == "1.2"
    (m,) = p.measurements
    assert len(m.windows) == 3
    for w in m.windows:
        assert w.energy_j == w.energy_j_power_integrated
        assert w.energy_j / w.duration_s == pytest.approx(POWER_W, rel=1e-6)
        assert w.power_trace is not None and len(w.power_trace) >= 10 * w.duration_s
        assert trace_integral_j(w.power_trace, w.duration_s) == pytest.approx(w.energy_j, rel=1e-4)
        assert w.power_max_gap_s is not None and w.power_max_gap_s <= 0.1 + 1e-6
        assert w.power_first_sample_s == 0.0 and w.power_last_sample_gap_s == 0.0  # read at both ends
    assert p.idle.power_w_before == pytest.approx(POWER_W, rel=1e-3)  # integrated too, never 0
    assert run.validator_errors(result) == []
    assert check_counterless(p) == []


def test_a_gpu_with_the_counter_is_measured_as_before(fake_nvml: FakePynvml, run: Run) -> None:
    p = run().submission.payload
    assert (p.method.energy_source, p.method.counter_absent_reason) == ("nvml_total_energy_counter", None)
    assert (p.workload.engine, p.workload.engine_version) == ("transformers", "5.17.0")
    assert p.workload.engine_build_flags == {"torch": "2.11.0+cu130"} and p.measurements[0].quantization_type is None
    assert all(w.power_trace is None and w.power_max_gap_s is None for w in p.measurements[0].windows)


def test_a_jetson_like_gpu_reporting_neither_counter_nor_power_is_refused_before_any_model_loads(
    fake_nvml: FakePynvml, run: Run
) -> None:
    fake_nvml.energy_supported = False
    fake_nvml.fail["nvmlDeviceGetPowerUsage"] = NOT_SUPPORTED
    with pytest.raises(NoEnergyCounterError, match=r"cannot be measured: NVML: .*NOT_SUPPORTED.*no power reading"):
        run()
    assert run.backend.loaded == []


def test_a_mig_gpu_is_refused_before_any_model_loads(fake_nvml: FakePynvml, run: Run) -> None:
    fake_nvml.mig = True
    with pytest.raises(MigEnabledError, match="MIG instances have no energy counter"):
        run()
    assert run.backend.loaded == []


def test_the_preflight_refuses_a_partitioned_gpu_whatever_its_library_says(fake_nvml: FakePynvml) -> None:
    with NvmlGpu(0, allow_counterless=True) as gpu:
        info = gpu.fingerprint()
        assert refuse_unmeasurable(info, gpu) == EnergyMethod("nvml_total_energy_counter")
        sliced = GpuInfo(**{**info.to_dict(), "mig_mode": True})
        with pytest.raises(MigEnabledError, match=r"partitioned \(MIG\): a slice has no energy counter or power"):
            refuse_unmeasurable(sliced, gpu)


def test_without_allow_counterless_nvml_refuses_as_before(fake_nvml: FakePynvml) -> None:
    fake_nvml.energy_supported = False
    with pytest.raises(NoEnergyCounterError, match="needs Volta or newer"):
        NvmlGpu(0)


def test_the_checklist_says_the_energy_is_integrated(fake_nvml: FakePynvml) -> None:
    fake_nvml.energy_supported = False
    with NvmlGpu(0, allow_counterless=True) as gpu:
        item = gpu_checklist(gpu.fingerprint(), gpu, 0, False)[0]
        with pytest.raises(NoEnergyCounterError, match="integrated power"):
            gpu.energy_j()
    assert (item.name, item.found, item.ok) == ("energy counter", "absent: power integrated", False)
    assert "power_integral" in item.meaning


def test_coverage_names_the_edges_and_the_longest_gap() -> None:
    cov = coverage([1.05, 1.2, 1.9, 2.0], 1.0, 2.1)
    assert (cov.first_sample_s, cov.last_sample_gap_s, cov.max_gap_s) == pytest.approx((0.05, 0.1, 0.7))
    with pytest.raises(ValueError, match="no power sample"):
        coverage([], 1.0, 2.0)


class CounterlessReplay(ReplayGpu):
    """A replayed trace played as a GPU without the counter: reading one fails the test."""

    energy_method = EnergyMethod("power_integral", "a test")  # type: ignore[assignment]

    def energy_j(self) -> float:
        raise AssertionError("the engine read an energy counter on a counterless GPU")


def test_an_engine_on_a_counterless_replay_never_reads_a_counter(clock: VirtualClock) -> None:
    """A stalled sampler shows in the window's coverage, which the validator then refuses."""
    from ecocompute.collector.device.trace import load_trace

    trace = load_trace(Path(__file__).parents[1] / "data" / "traces" / "synthetic-steps.json")
    gpu = CounterlessReplay(trace, clock)
    sampler = PowerSampler(gpu, clock, period_s=1.0)  # one reading a second: too slow for the rules
    sampler.start()
    engine = Engine(gpu, sampler, clock, EngineConfig(window_s=10.0, random_delay_max_s=0.0))
    window = engine.measure_window(FakeRunner(FP16, clock, call_s=0.5), 0)
    assert window.power_max_gap_s == pytest.approx(1.0, abs=0.01)
    assert window.power_trace is not None and len(window.power_trace) < 5 * window.duration_s


# --- AMD through collect ------------------------------------------------------------------------------


@pytest.fixture
def no_nvidia(fake_nvml: FakePynvml) -> FakePynvml:
    """A FAKE NVML that finds no NVIDIA driver, so ``--gpu-vendor auto`` moves on to amdsmi."""
    fake_nvml.init_error = LIBRARY_NOT_FOUND
    return fake_nvml


@pytest.fixture
def smi(monkeypatch: pytest.MonkeyPatch, clock: VirtualClock) -> FakeAmdsmi:
    fake = FakeAmdsmi(clock)
    monkeypatch.setitem(sys.modules, "amdsmi", fake)
    return fake


def test_collect_on_an_amd_gpu_reads_amdsmis_counter(no_nvidia: FakePynvml, smi: FakeAmdsmi, run: Run) -> None:
    result = run()
    p = load_submission(result.path).payload
    assert (p.hardware.vendor, p.hardware.gpu_name, p.software.nvml) == ("amd", "AMD Instinct MI300X",
                                                                           "amdsmi 25.3.0")  # fmt: skip
    assert (p.method.energy_source, p.method.counter_absent_reason) == ("amdsmi_energy_counter", None)
    assert result.path.parent.name == "amd-instinct-mi300x"
    for w in p.measurements[0].windows:
        assert w.energy_j / w.duration_s == pytest.approx(POWER_W, rel=0.01)  # the accumulator, in 15.3 uJ ticks
        assert w.power_trace is None
    assert run.validator_errors(result) == []


def test_collect_on_an_amd_gpu_with_a_known_bad_counter_integrates_power(
    no_nvidia: FakePynvml, smi: FakeAmdsmi, run: Run
) -> None:
    smi.devices[0] = FakeDevice(market_name="AMD Instinct MI100", gfx_target="gfx908", counter_rate=0.0)
    result = run(gpu_vendor="amd")
    p = result.submission.payload
    assert p.method.energy_source == "power_integral" and p.hardware.vendor == "amd"
    assert (
        p.method.counter_absent_reason is not None
        and "known to be unreliable on MI100" in p.method.counter_absent_reason
    )
    assert all(w.energy_j / w.duration_s == pytest.approx(POWER_W, rel=1e-6) for w in p.measurements[0].windows)
    errors = run.validator_errors(result)
    assert [e for e in errors if not e.startswith("E-GPU-UNKNOWN")] == []


# --- the engine option ----------------------------------------------------------------------------------


def test_the_engine_option_refuses_another_engines_precisions_and_stacks(
    fake_nvml: FakePynvml, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from ecocompute.cli import main

    base = ["collect", "--arch", "tiny-llama-test", "--signer", "example-user", "--out", str(tmp_path)]
    assert main([*base, "--engine", "llama.cpp", "--precisions", "fp16,nf4", "--stack", "eager"]) == 2
    assert "nf4: not a precision of the llama.cpp engine" in capsys.readouterr().err.replace("\n", " ")
    assert main([*base, "--engine", "llama.cpp", "--precisions", "fp16,q8_0", "--stack", "compiled"]) == 2
    assert "--stack compiled is not one the llama.cpp engine runs: pass --stack eager" in capsys.readouterr().err
    assert main([*base, "--engine", "vllm", "--precisions", "fp16"]) == 2
    assert "unknown engine 'vllm'" in capsys.readouterr().err
