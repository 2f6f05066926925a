"""FP8 through torchao: the two precisions, what the preflight refuses, and the real load on CPU (fp8-wo) and GPU.

On this CPU the weight-only path runs for real (torchao quantizes, transformers generates); fp8-dyn needs FP8
tensor cores, so its load is ``@pytest.mark.gpu`` (run on the H200 by campaigns/fp8/tools/smoke.sh).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from collector_fakes import FakePynvml
from pydantic import ValidationError

from ecocompute.cli import main
from ecocompute.collector.device.gpu import GpuInfo
from ecocompute.collector.errors import ModelError
from ecocompute.collector.model import hf, torchao_fp8, weights
from ecocompute.collector.model.archs import load_arch
from ecocompute.collector.model.precisions import SPECS, check_engine, parse_precisions
from ecocompute.collector.model.torchao_fp8 import NoFp8Error, fp8_problems
from ecocompute.collector.run.preflight import refuse_without_fp8
from ecocompute.schema.errors import UsageError
from ecocompute.schema.io import load_submission
from ecocompute.schema.models import Precision, Stack, Submission, newer_than
from ecocompute.validate.core import validate_files

HAS_TORCHAO = importlib.util.find_spec("torchao") is not None
CI_INSTALLS_IT = "fp8" in (Path(__file__).parents[2] / "Makefile").read_text(encoding="utf-8")
REQUIRED = bool(os.environ.get("CI")) and CI_INSTALLS_IT
"""Under CI with the extra in the Makefile's install line, a missing torchao fails the tests instead."""
needs_torchao = pytest.mark.skipif(
    not HAS_TORCHAO and not REQUIRED, reason="torchao is not installed (pip install 'ecocompute[fp8]', docs/fp8.md)"
)
FP8 = (Precision.FP8_WO, Precision.FP8_DYN)


def gpu(cc: str = "9.0", vendor: str = "nvidia", name: str = "NVIDIA H200") -> GpuInfo:
    return GpuInfo(
        index=0, gpu_name=name, gpu_arch="hopper", compute_capability=cc, memory_total_mib=143771,
        power_limit_w=700.0, default_power_limit_w=700.0, driver_version="580.159.04", vbios_version="96.00",
        gpu_uuid_sha256="0" * 64, persistence_mode=True, mig_mode=False, clocks_locked=False,
        nvml_version="13.580", vendor=vendor,  # type: ignore[arg-type]
    )  # fmt: skip


def installed(monkeypatch: pytest.MonkeyPatch, **versions: str | None) -> None:
    """Pretend these distributions are installed at these versions (None: not installed)."""
    real = torchao_fp8._installed
    monkeypatch.setattr(torchao_fp8, "_installed", lambda name: versions[name] if name in versions else real(name))


# --- the precisions -------------------------------------------------------------------------------


def test_the_two_precisions_are_their_own_values_with_their_own_configs() -> None:
    assert parse_precisions("fp16,bf16,FP8-WO,fp8-dyn") == [Precision.FP16, Precision.BF16, *FP8]
    assert SPECS[Precision.FP8_WO].torchao == {
        "config": "Float8WeightOnlyConfig", "granularity": "PerRow", "set_inductor_config": False,
    }  # fmt: skip
    assert SPECS[Precision.FP8_DYN].torchao == {
        "config": "Float8DynamicActivationFloat8WeightConfig", "granularity": "PerRow", "set_inductor_config": False,
    }  # fmt: skip
    # weight-only runs on the sweep's fp16 model; row-wise FP8 products return bf16, so fp8-dyn's model is bf16
    assert (SPECS[Precision.FP8_WO].dtype, SPECS[Precision.FP8_DYN].dtype) == ("float16", "bfloat16")
    assert all(SPECS[p].weight_bytes == 1.0 and SPECS[p].bnb is None for p in FP8)
    assert torchao_fp8.FP8_PRECISIONS == FP8
    with pytest.raises(UsageError, match=r"unknown precision 'fp8': choose from .*fp8-wo, fp8-dyn"):
        parse_precisions("fp8")


def test_fp8_is_the_transformers_engines_only() -> None:
    check_engine(FP8, "transformers")
    with pytest.raises(UsageError, match=r"fp8-wo, fp8-dyn: not a precision of the llama.cpp engine"):
        check_engine(FP8, "llama.cpp")


@pytest.mark.parametrize("precision", FP8, ids=[p.value for p in FP8])
def test_a_file_labelled_before_1_2_cannot_hold_fp8(precision: Precision) -> None:
    from factories import submission_document

    document = submission_document(precisions=("fp16", "nf4"))
    document["payload"]["measurements"][1]["precision"] = precision.value
    with pytest.raises(
        ValidationError, match=f"schema 1.0 has no Precision={precision.value}: write schema_version 1.2"
    ):
        Submission.model_validate(document)
    document["schema_version"] = "1.2"
    payload = Submission.model_validate(document).payload
    assert newer_than(payload, "1.1") == [f"Precision={precision.value}"]
    assert newer_than(payload, "1.2") == []


def test_fp8_rows_reach_the_dataset_tables_and_the_change_table() -> None:
    """The tables keep FP8 rows with their config, and the analysis sorts them after the 16-bit baselines."""
    from factories import submission_document

    from ecocompute.analysis import change_table
    from ecocompute.analysis.defaults import precision_rank
    from ecocompute.schema.tables import measurement_rows, measurements_frame

    document = submission_document(precisions=("fp16", "nf4", "bf16", "nf4-dq"))
    document["schema_version"] = "1.2"
    measured = document["payload"]["measurements"]
    measured[1].update(precision="fp8-wo", quantization={"quant_method": "torchao"})
    measured[3].update(precision="fp8-dyn", quantization={"quant_method": "torchao"})
    frame = measurements_frame(measurement_rows(Submission.model_validate(document)))
    assert frame["precision"].to_list() == ["fp16", "fp8-wo", "bf16", "fp8-dyn"]
    assert json.loads(frame["quantization_json"][1]) == {"quant_method": "torchao"}
    assert sorted(frame["precision"], key=precision_rank) == ["fp16", "bf16", "fp8-wo", "fp8-dyn"]
    changes = change_table(frame, precision="fp8-wo")
    assert changes.height == 1 and changes["precision"].to_list() == ["fp8-wo"]


# --- what the preflight refuses --------------------------------------------------------------------


@pytest.mark.parametrize("cc", ["8.9", "9.0", "10.0", "12.0"])
def test_ada_hopper_and_blackwell_pass(cc: str, monkeypatch: pytest.MonkeyPatch) -> None:
    installed(monkeypatch, torchao="0.18.0", torch="2.11.0+cu130")
    info = gpu(cc)
    assert fp8_problems(FP8, vendor="nvidia", compute_capability=cc, gpu_name="GPU 0") == []
    refuse_without_fp8(info, [Precision.FP16, *FP8])


@pytest.mark.parametrize(("cc", "name"), [("8.0", "NVIDIA A100-SXM4-80GB"), ("8.6", "NVIDIA GeForce RTX 3090")])
def test_a_gpu_without_fp8_tensor_cores_is_refused_with_the_fix(cc: str, name: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    installed(monkeypatch, torchao="0.18.0", torch="2.11.0")
    with pytest.raises(NoFp8Error) as caught:
        refuse_without_fp8(gpu(cc, name=name), [Precision.FP16, Precision.FP8_WO])
    text = str(caught.value)
    assert f"fp8-wo: GPU 0 ({name}) (compute capability {cc}) has no FP8 tensor cores" in text
    assert "compute capability 8.9 or newer (Ada, Hopper, Blackwell)" in text
    assert "drop fp8-wo from --precisions" in text


def test_precisions_other_than_fp8_pass_on_any_gpu() -> None:
    refuse_without_fp8(gpu("7.0", name="Tesla V100"), [Precision.FP16, Precision.NF4])


def test_amd_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    installed(monkeypatch, torchao="0.18.0", torch="2.11.0")
    with pytest.raises(NoFp8Error, match=r"measured on NVIDIA GPUs only .* is amd; .*drop fp8-dyn"):
        refuse_without_fp8(gpu("9.4", vendor="amd", name="AMD Instinct MI300X"), [Precision.FP8_DYN])


@pytest.mark.parametrize(
    ("versions", "message"),
    [
        ({"torchao": None}, "torchao is not installed: pip install 'ecocompute[fp8]'"),
        ({"torchao": "0.17.0", "torch": "2.11.0"}, "torchao 0.17.0 is older than 0.18.0"),
        ({"torchao": "0.18.0", "torch": "2.10.0+cu128"}, "needs torch 2.11.0 or newer, and torch 2.10.0+cu128"),
    ],
)
def test_software_that_cannot_run_fp8_is_refused(versions: dict[str, Any], message: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    installed(monkeypatch, **versions)
    with pytest.raises(NoFp8Error, match=re.escape(message)):
        refuse_without_fp8(gpu(), [Precision.FP16, Precision.FP8_WO])


def test_fp8_dyn_cannot_run_on_the_cpu_of_a_test_run(monkeypatch: pytest.MonkeyPatch) -> None:
    installed(monkeypatch, torchao="0.18.0", torch="2.13.0+cpu")
    refuse_without_fp8(gpu(), [Precision.FP16, Precision.FP8_WO], torch_device="cpu")
    with pytest.raises(NoFp8Error, match="fp8-dyn multiplies in FP8 on the GPU and cannot run on cpu"):
        refuse_without_fp8(gpu(), [Precision.FP16, Precision.FP8_DYN], torch_device="cpu")


def collect_args(tmp_path: Path, weights_cache: Path, precisions: str, *extra: str) -> list[str]:
    return ["collect", "--arch", "tiny-llama-test", "--precisions", precisions, "--signer", "example-user",
            "--out", str(tmp_path / "submissions"), "--state-dir", str(tmp_path / "state"),
            "--weights-cache", str(weights_cache), "--torch-device", "cpu", "--quiet", "--stack", "eager",
            "--batch-size", "1", *extra]  # fmt: skip


def test_collect_refuses_an_ampere_gpu_in_one_line_before_loading(
    nvml: FakePynvml, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    nvml.nvmlDeviceGetCudaComputeCapability = lambda handle: (8, 0)  # type: ignore[method-assign]
    loads: list[str] = []
    monkeypatch.setattr(hf.HfBackend, "load", lambda self, p: loads.append(p.value))
    assert main(collect_args(tmp_path, tmp_path / "weights", "fp16,fp8-wo")) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err
    assert "error: fp8-wo: GPU 0 (NVIDIA H200) (compute capability 8.0) has no FP8 tensor cores" in err
    assert loads == [] and not (tmp_path / "weights").exists()  # refused before any weight was built


# --- the real load -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny(random_init_weights: Path) -> weights.ModelSource:
    return weights.random_init_source(load_arch("tiny-llama-test"), 0, random_init_weights, "cpu")


def tiny_backend(source: weights.ModelSource, device: str = "cpu", stack: Stack = Stack.EAGER) -> hf.HfBackend:
    return hf.HfBackend(source, device=device, batch_size=2, prompt_tokens=8, new_tokens=6, stack=stack, seed=0)


@needs_torchao
def test_fp8_wo_loads_through_torchao_and_records_its_whole_config(tiny: weights.ModelSource) -> None:
    runner = tiny_backend(tiny).load(Precision.FP8_WO)
    assert runner.generate_once() == 2 * 6
    layer = runner.model.model.layers[0].mlp.up_proj
    assert type(layer.weight).__name__ == "Float8Tensor" and str(layer.weight.qdata.dtype) == "torch.float8_e4m3fn"
    assert str(runner.model.dtype) == "torch.float16"
    config = runner.quantization
    assert config is not None
    json.dumps(config, allow_nan=False)  # JSON-safe, as the submission stores it
    assert config["quant_method"] == "torchao"
    ao = config["quant_type"]["default"]
    assert ao["_type"] == "Float8WeightOnlyConfig"
    assert ao["_data"]["granularity"]["_type"] == "PerRow"
    assert ao["_data"]["weight_dtype"]["_data"] == "float8_e4m3fn"
    assert ao["_data"]["set_inductor_config"] is False
    assert config["torchao_version"] == importlib.metadata.version("torchao")
    # every decoder linear is FP8; lm_head stays 16-bit (transformers leaves it out, as for bitsandbytes)
    assert (config["float8_linears"], config["linears"]) == (2 * 7, 2 * 7 + 1)
    assert config["float8_kernels"] == ("mslk" if importlib.util.find_spec("mslk") else "torch")
    # the memory record counts each FP8 weight at one byte (plus a scale a row), not at its outer fp16
    fp16 = tiny_backend(tiny).load(Precision.FP16)
    linears = [m for m in fp16.model.model.layers.modules() if isinstance(m, type(layer))]
    weights, rows = sum(m.weight.numel() for m in linears), sum(m.out_features for m in linears)
    saved = (fp16.memory_mib - runner.memory_mib) * 1024 * 1024
    assert saved == weights * (2 - 1) - rows * 4  # a byte saved a weight, less a float32 scale a row
    runner.close()


@needs_torchao
def test_fp8_dyn_records_both_granularities_and_its_matmul_config() -> None:
    import transformers

    config = hf._json_safe(hf.quantization_config(Precision.FP8_DYN).to_dict())
    assert isinstance(config, dict) and config["quant_method"] == "torchao"
    ao = config["quant_type"]["default"]
    assert ao["_type"] == "Float8DynamicActivationFloat8WeightConfig"
    assert [g["_type"] for g in ao["_data"]["granularity"]] == ["PerRow", "PerRow"]  # activations, weights
    assert ao["_data"]["activation_dtype"]["_data"] == ao["_data"]["weight_dtype"]["_data"] == "float8_e4m3fn"
    assert ao["_data"]["mm_config"]["_data"]["use_fast_accum"] is True
    assert ao["_data"]["set_inductor_config"] is False
    assert isinstance(hf.quantization_config(Precision.FP8_WO), transformers.TorchAoConfig)


@needs_torchao
@pytest.mark.parametrize("stack", [Stack.COMPILED, Stack.COMPILED_ALL])
def test_transformers_compiles_torchao_models_on_both_compiled_stacks(tiny: weights.ModelSource, stack: Stack) -> None:
    """Unlike bitsandbytes' quantizer, torchao's says it is compileable: compiled and compiled-all run FP8 alike."""
    runner = tiny_backend(tiny, stack=stack).load(Precision.FP8_WO)
    quantizer = runner.model.hf_quantizer
    assert quantizer.is_compileable is True and type(quantizer).__name__ == "TorchAoHfQuantizer"  # not swapped
    assert runner.generation_config.cache_implementation == "static"
    assert runner.generate_once() == 12
    runner.close()


@needs_torchao
def test_fp8_dyn_is_refused_on_cpu_before_its_weights_load(tiny: weights.ModelSource,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    from_pretrained: list[Any] = []
    monkeypatch.setattr(hf, "_transformers", lambda: from_pretrained.append(1))
    with pytest.raises(NoFp8Error, match="fp8-dyn multiplies in FP8 on a CUDA GPU and cannot run on cpu"):
        tiny_backend(tiny).load(Precision.FP8_DYN)
    assert from_pretrained == []


def test_a_model_torchao_left_16_bit_is_refused() -> None:
    torch = pytest.importorskip("torch")
    model = torch.nn.Sequential(torch.nn.Linear(24, 8))  # 24 x 8 is not a multiple of 16 both ways: left alone
    with pytest.raises(ModelError, match=r"torchao made none of the model's 1 linear layers FP8"):
        torchao_fp8.loaded_record(model)


@needs_torchao
def test_a_whole_fp8_wo_run_on_cpu_writes_a_valid_submission(nvml: FakePynvml, tmp_path: Path,
                                                             random_init_weights: Path, keys: Any,
                                                             capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    # idle 10 s: at the fake clock's 20x, a 2 s idle reading lasts 0.1 s of real time, and a few ms of a busy
    # host between its counter and clock reads moved it past the validator's 2% idle tolerance (E-IDLE-ABOVE-LOAD)
    short = ["--prompt-tokens", "8", "--new-tokens", "8", "--min-windows", "3", "--max-windows", "3",
             "--warmup-windows", "0", "--idle-s", "10"]  # fmt: skip
    args = collect_args(tmp_path, random_init_weights, "fp16,fp8-wo", *short, "--key", str(keys.ed25519))
    assert main(args) == 0, capsys.readouterr().err
    (path,) = (tmp_path / "submissions").rglob("*.json")
    submission = load_submission(path)
    payload = submission.payload
    assert submission.schema_version == "1.2"
    fp16, fp8 = payload.measurements
    assert (fp16.precision, fp8.precision) == (Precision.FP16, Precision.FP8_WO)
    assert fp16.quantization is None and len(fp8.windows) == 3 and fp8.error is None
    assert fp8.quantization is not None and fp8.quantization["quant_method"] == "torchao"
    assert fp8.quantization_type is None  # transformers has no weight-format name of its own; the config says it
    flags = payload.workload.engine_build_flags or {}
    assert flags["torchao"] == importlib.metadata.version("torchao")
    (found,) = validate_files([path], allowed_signers=keys.allowed_signers, submissions_root=tmp_path / "submissions",
                              max_cv_pct=1000.0)  # fmt: skip
    # signed, within an H200's physics; the one finding is this CPU torch's missing CUDA runtime
    assert [f"{f.code}: {f.message}" for f in found.errors] == [
        "E-FINGERPRINT: software.cuda_runtime is missing (None): record the real version"
    ]


# --- on the GPU (campaigns/fp8/tools/smoke.sh runs these on the H200) --------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("stack", [Stack.EAGER, Stack.COMPILED_ALL])  # compiled runs these as compiled-all does
@pytest.mark.parametrize("precision", FP8, ids=[p.value for p in FP8])
def test_fp8_runs_on_the_gpu(
    tiny: weights.ModelSource, precision: Precision, stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available() or torch.cuda.get_device_capability(0) < torchao_fp8.MIN_COMPUTE_CAPABILITY:
        pytest.fail("needs an NVIDIA GPU with compute capability 8.9 or newer")
    runner = tiny_backend(tiny, "cuda:0", stack).load(precision)
    for _ in range(3):
        assert runner.generate_once() == 12
    runner.synchronize()
    torch_kernels = runner.quantization is not None and runner.quantization["float8_kernels"] == "torch"
    if stack is Stack.EAGER and torch_kernels:  # what multiplies: fp8-dyn calls torch's FP8 matmul, fp8-wo never
        calls: list[int] = []
        real = torch._scaled_mm
        monkeypatch.setattr(torch, "_scaled_mm", lambda *a, **k: calls.append(1) or real(*a, **k))
        runner.generate_once()
        assert bool(calls) is (precision is Precision.FP8_DYN)
    assert runner.quantization is not None and runner.quantization["float8_linears"] == 14
    assert runner.compiled is (stack is not Stack.EAGER)  # transformers compiles torchao models on its own
    if stack is Stack.COMPILED_ALL:
        assert hf.mark_compileable(runner.model) is False  # not bitsandbytes: nothing for compiled-all to change
    runner.close()
