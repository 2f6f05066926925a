"""llama.cpp, the second engine, for real on this CPU: the tiny random-init architecture written as GGUF,
quantized to Q8_0 and Q4_K_M by llama.cpp's own quantizer, loaded by llama.cpp, and measured through the
collector's whole path with NVML faked at its module boundary (the GPU is the only thing not real here).

Skipped only when llama-cpp-python is not installed and it need not be: under ``CI``, once the Makefile's install
line has the ``llamacpp`` extra, a missing engine fails instead (:data:`REQUIRED`). The extra is left out of CI's
install while its build from source takes half an hour (docs/llamacpp.md). The GGUF files are built once per
session (:func:`gguf_root`).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import itertools
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from collector_fakes import FakePynvml, FastClock

from ecocompute.collector.errors import ModelError
from ecocompute.collector.model.archs import Arch, load_arch
from ecocompute.collector.model.gguf_weights import (
    FILE_TYPES,
    build_gguf_set,
    gguf_set,
    llama3_rope_factors,
    write_gguf,
)
from ecocompute.collector.model.precisions import check_engine
from ecocompute.collector.run.collect import Destination, Environment, Result, RunConfig, collect
from ecocompute.collector.run.display import SilentView
from ecocompute.schema.errors import UsageError
from ecocompute.schema.models import Precision, Stack

HAS_LLAMA_CPP = importlib.util.find_spec("llama_cpp") is not None
HAS_GGUF = importlib.util.find_spec("gguf") is not None
CI_INSTALLS_IT = "llamacpp" in (Path(__file__).parents[2] / "Makefile").read_text(encoding="utf-8")
REQUIRED = bool(os.environ.get("CI")) and CI_INSTALLS_IT
"""Under CI with the extra in the Makefile's install line, a missing llama-cpp-python or gguf fails the tests."""
needs_llama_cpp = pytest.mark.skipif(
    not HAS_LLAMA_CPP and not REQUIRED,
    reason="llama-cpp-python is not installed (pip install 'ecocompute[llamacpp]', docs/llamacpp.md)",
)
needs_gguf = pytest.mark.skipif(not HAS_GGUF and not REQUIRED, reason="gguf is not installed (the llamacpp extra)")
ARCH = "tiny-llama-test"
GGUF_PRECISIONS = (Precision.FP16, Precision.Q8_0, Precision.Q4_K_M)
BATCH, PROMPT, NEW = 2, 8, 6


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="session")
def gguf_root(random_init_weights: Path) -> Path:
    """The session's weights cache with the tiny architecture's F16, Q8_0 and Q4_K_M GGUF files in it."""
    if not HAS_LLAMA_CPP and not REQUIRED:
        pytest.skip("llama-cpp-python is not installed")
    build_gguf_set(load_arch(ARCH), 0, random_init_weights, list(FILE_TYPES))
    return random_init_weights


def checkpoint(root: Path, arch: Arch) -> Path:
    from ecocompute.collector.model.weights import random_init_source

    return Path(random_init_source(arch, 0, root, "cpu").path)


# --- conversion, without llama.cpp -----------------------------------------------------------------


@needs_gguf
def test_the_f16_gguf_holds_the_checkpoint_tensors_in_llama_cpp_order(random_init_weights: Path,
                                                                       tmp_path: Path) -> None:  # fmt: skip
    import gguf
    from safetensors.numpy import load_file

    arch = load_arch(ARCH)
    hf = load_file(str(next(checkpoint(random_init_weights, arch).glob("*.safetensors"))))
    out = tmp_path / "tiny-F16.gguf"
    write_gguf(checkpoint(random_init_weights, arch), arch, out)
    reader = gguf.GGUFReader(str(out))
    tensors = {t.name: t for t in reader.tensors}
    layers = arch.config["num_hidden_layers"]
    assert len(tensors) == 2 + 1 + 9 * layers  # embeddings, output, output norm; 9 per block
    assert reader.fields["general.architecture"].contents() == "llama"
    assert reader.fields["general.file_type"].contents() == FILE_TYPES["F16"]
    assert reader.fields["llama.vocab_size"].contents() == arch.config["vocab_size"]
    assert reader.fields["tokenizer.ggml.model"].contents() == "none"
    assert tensors["blk.0.attn_norm.weight"].tensor_type.name == "F32"
    assert tensors["token_embd.weight"].tensor_type.name == "F16"
    embed = hf["model.embed_tokens.weight"]
    assert (tensors["token_embd.weight"].data.reshape(embed.shape) == embed).all()
    v = hf["model.layers.1.self_attn.v_proj.weight"]
    assert (tensors["blk.1.attn_v.weight"].data.reshape(v.shape) == v).all()  # V is not permuted
    q = hf["model.layers.1.self_attn.q_proj.weight"]
    heads, rows = arch.config["num_attention_heads"], q.shape[0]
    got = tensors["blk.1.attn_q.weight"].data.reshape(q.shape)
    head_dim = rows // heads
    # llama.cpp's row order within a head: the two rotate-half halves interleaved (convert_hf_to_gguf's permute)
    assert (got[0] == q[0]).all() and (got[1] == q[head_dim // 2]).all() and (got[2] == q[1]).all()
    assert not (got == q).all()


@needs_gguf
def test_conversion_is_deterministic_and_refuses_unknown_shapes(random_init_weights: Path, tmp_path: Path) -> None:
    arch = load_arch(ARCH)
    first, second = tmp_path / "a.gguf", tmp_path / "b.gguf"
    write_gguf(checkpoint(random_init_weights, arch), arch, first)
    write_gguf(checkpoint(random_init_weights, arch), arch, second)
    assert sha256(first) == sha256(second)
    strange = Arch("strange", None, {**arch.config, "model_type": "gpt2"})
    with pytest.raises(ModelError, match="not gpt2"):
        write_gguf(checkpoint(random_init_weights, arch), strange, tmp_path / "c.gguf")


def test_llama3_rope_factors_follow_the_scaling_rule() -> None:
    config = load_arch("Llama-3.2-1B").config
    factors = llama3_rope_factors(config)
    assert factors is not None and len(factors) == config["head_dim"] // 2
    factor = config["rope_scaling"]["factor"]
    assert factors[0] == 1.0 and factors[-1] == factor  # high frequencies kept, low ones scaled by the factor
    assert all(a <= b for a, b in itertools.pairwise(factors))
    assert llama3_rope_factors(load_arch("Qwen2.5-0.5B").config) is None


def test_llama_cpp_runs_the_eager_stack_only() -> None:
    from ecocompute.collector.model.engines import ENGINES

    assert ENGINES["llama.cpp"].stacks == (Stack.EAGER,) and ENGINES["transformers"].stacks == tuple(Stack)


def test_each_engine_refuses_the_other_engines_precisions() -> None:
    check_engine([Precision.FP16, Precision.NF4], "transformers")
    check_engine([Precision.FP16, Precision.Q8_0, Precision.Q4_K_M], "llama.cpp")
    with pytest.raises(UsageError, match="q4_k_m: not a precision of the transformers engine"):
        check_engine([Precision.FP16, Precision.Q4_K_M], "transformers")
    with pytest.raises(UsageError, match=r"nf4: not a precision of the llama\.cpp engine, which has fp16, q8_0"):
        check_engine([Precision.NF4], "llama.cpp")


# --- llama.cpp itself ----------------------------------------------------------------------------


@needs_llama_cpp
def test_quantized_files_are_deterministic_and_of_their_type(gguf_root: Path, tmp_path: Path) -> None:
    import gguf

    from ecocompute.collector.model.llamacpp import tensor_types

    arch = load_arch(ARCH)
    files = gguf_set(arch, 0, gguf_root)
    again = build_gguf_set(arch, 0, tmp_path, ["Q8_0"], checkpoint=checkpoint(gguf_root, arch))
    assert sha256(again.path("Q8_0")) == sha256(files.path("Q8_0"))
    for file_type in ("Q8_0", "Q4_K_M"):
        reader = gguf.GGUFReader(str(files.path(file_type)))
        assert reader.fields["general.file_type"].contents() == FILE_TYPES[file_type]
        assert files.path(file_type).stat().st_size < files.path("F16").stat().st_size
    assert tensor_types(files.path("F16")) == {"f16": 16, "f32": 5}  # 2-D tensors F16, norms F32
    q8 = tensor_types(files.path("Q8_0"))
    assert set(q8) == {"f32", "q8_0"} and q8["f32"] == 5
    # 64-wide rows cannot hold Q4_K's 256-weight super-blocks: llama.cpp falls back, and the record says so
    assert "f32" in tensor_types(files.path("Q4_K_M"))


@needs_llama_cpp
def test_llama_cpp_generates_exactly_the_tokens_asked_for_greedily(gguf_root: Path) -> None:
    from ecocompute.collector.model.llamacpp import llamacpp_backend

    config = RunConfig(precisions=GGUF_PRECISIONS, arch=ARCH, batch_size=BATCH, prompt_tokens=PROMPT,
                       new_tokens=NEW, seed=0, torch_device="cpu", stack=Stack.EAGER)  # fmt: skip
    backend = llamacpp_backend(config, Destination(signer="octocat", weights_cache=gguf_root), "cpu")
    assert backend.source.model_id == f"random-init/{ARCH}" and backend.source.params_total == 139_584
    for precision in GGUF_PRECISIONS:
        runner = backend.load(precision)
        try:
            first, second = runner.new_token_ids(), runner.new_token_ids()
            assert first == second and [len(row) for row in first] == [NEW] * BATCH
            assert all(0 <= t < 512 for row in first for t in row)
            assert runner.generate_once() == BATCH * NEW
            assert runner.memory_mib > 0
        finally:
            runner.close()
        with pytest.raises(RuntimeError, match="closed"):
            runner.generate_once()
    assert backend.load(Precision.FP16).quantization is None
    q4 = backend.load(Precision.Q4_K_M).quantization
    assert q4 is not None and q4["file_type"] == "Q4_K_M" and q4["quant_method"] == "gguf"
    assert backend.prompt_sha256 == transformers_prompt_sha256()  # the same prompt as the transformers engine's


@needs_llama_cpp
def test_a_pretrained_f16_gguf_file_is_quantized_beside_the_cache(gguf_root: Path, tmp_path: Path) -> None:
    from ecocompute.collector.model.llamacpp import llamacpp_backend

    f16 = gguf_set(load_arch(ARCH), 0, gguf_root).path("F16")
    config = RunConfig(precisions=(Precision.FP16, Precision.Q8_0), model=str(f16), batch_size=1, prompt_tokens=4,
                       new_tokens=3, stack=Stack.EAGER)  # fmt: skip
    backend = llamacpp_backend(config, Destination(signer="octocat", weights_cache=tmp_path), "cpu")
    source = backend.source
    assert (source.model_id, source.weights, source.params_total) == (f16.name, "pretrained", 139_584)
    assert source.files["Q8_0"].parent.parent == tmp_path and source.files["F16"] == f16
    runner = backend.load(Precision.Q8_0)
    try:
        assert runner.generate_once() == 3
    finally:
        runner.close()


TINY = load_arch(ARCH).config
SHAPES = {
    # Qwen2: biases on Q, K and V, tied embeddings (no output.weight), no Q/K permutation
    "tiny-qwen2-test": {**TINY, "model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"],
                        "tie_word_embeddings": True},
    # Llama 3: llama3 rope scaling (a rope_freqs tensor), tied embeddings, an explicit head_dim
    "tiny-llama3-test": {**TINY, "tie_word_embeddings": True, "head_dim": 16, "rope_theta": 500000.0,
                         "rope_scaling": {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0,
                                          "high_freq_factor": 4.0, "original_max_position_embeddings": 64}},
}  # fmt: skip


@needs_llama_cpp
@pytest.mark.parametrize("name", sorted(SHAPES))
def test_qwen2_and_llama3_shapes_convert_and_run(name: str, tmp_path: Path) -> None:
    """The shipped families beyond plain Llama, as test-only tiny shapes: converted, quantized, loaded, run."""
    import gguf

    from ecocompute.collector.model.hf import prompt_ids
    from ecocompute.collector.model.llamacpp import LlamaCppRunner

    arch = Arch(name, None, SHAPES[name])
    files = build_gguf_set(arch, 0, tmp_path, ["F16", "Q8_0"])
    names = {t.name for t in gguf.GGUFReader(str(files.path("F16"))).tensors}
    assert "output.weight" not in names  # tied: llama.cpp reads the embeddings for the output
    assert ("blk.0.attn_q.bias" in names) == (name == "tiny-qwen2-test")
    assert ("rope_freqs.weight" in names) == (name == "tiny-llama3-test")
    for file_type, precision in (("F16", Precision.FP16), ("Q8_0", Precision.Q8_0)):
        runner = LlamaCppRunner(files.path(file_type), precision, file_type, "cpu", prompt_ids(2, 5, 512, 0), 4, None)
        try:
            tokens = runner.new_token_ids()
            assert [len(row) for row in tokens] == [4, 4] and tokens == runner.new_token_ids()
        finally:
            runner.close()


@needs_llama_cpp
def test_engine_info_reports_the_installed_build() -> None:
    from ecocompute.collector.model.llamacpp import build_flags, llamacpp_info, system_info

    info = llamacpp_info()
    assert info.name == "llama.cpp" and info.version == importlib.metadata.version("llama-cpp-python")
    assert info.build["gpu_offload"] in ("yes", "no")
    assert any(key.startswith("CPU.") for key in info.build), system_info()
    assert build_flags("CPU : SSE3 = 1 | AVX = 1 | CUDA : ARCHS = 900 | USE_GRAPHS = 1 | ") == {
        "CPU.SSE3": "1", "CPU.AVX": "1", "CUDA.ARCHS": "900", "CUDA.USE_GRAPHS": "1",
    }  # fmt: skip


@needs_llama_cpp
def test_a_missing_gguf_file_and_a_foreign_precision_are_refused(tmp_path: Path) -> None:
    from ecocompute.collector.model.llamacpp import llamacpp_backend

    dest = Destination(signer="octocat", weights_cache=tmp_path)
    missing = RunConfig(precisions=(Precision.FP16,), model=str(tmp_path / "absent-F16.gguf"), stack=Stack.EAGER)
    with pytest.raises(ModelError, match=r"cannot load 'absent-F16.gguf'"):
        llamacpp_backend(missing, dest, "cpu")
    nf4 = RunConfig(precisions=(Precision.FP16, Precision.NF4), arch=ARCH, stack=Stack.EAGER)
    with pytest.raises(UsageError, match=r"nf4 is not a llama\.cpp precision"):
        llamacpp_backend(nf4, dest, "cpu")
    with pytest.raises(UsageError, match="pass --stack eager"):
        llamacpp_backend(RunConfig(precisions=(Precision.FP16,), arch=ARCH), dest, "cpu")


@dataclass(frozen=True)
class Collected:
    """One whole collection run through llama.cpp, and where it wrote."""

    result: Result
    root: Path


@pytest.fixture(scope="module")
def collected(gguf_root: Path, tmp_path_factory: pytest.TempPathFactory, keys: Any) -> Iterator[Collected]:
    """``collect`` with llama.cpp as the engine: FP16, Q8_0, Q4_K_M interleaved, 10 s windows at 40x time."""

    root = tmp_path_factory.mktemp("llamacpp-collect")
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(sys.modules, "pynvml", FakePynvml(clock := FastClock(speed=40.0), power_w=150.0))
        config = RunConfig(
            precisions=GGUF_PRECISIONS, arch=ARCH, batch_size=BATCH, prompt_tokens=PROMPT, new_tokens=NEW,
            window_s=10.0, warmup_windows=1, min_windows=3, max_windows=3, idle_s=4.0, idle_settle_s=0.0,
            torch_device="cpu", stack=Stack.EAGER, pause_gc=False,  # gc.collect() before each window is slow here
            engine="llama.cpp",
        )  # fmt: skip
        dest = Destination(signer=keys.login, key=keys.ed25519, out_dir=root / "submissions",
                           state_dir=root / "state", weights_cache=gguf_root)  # fmt: skip
        env = Environment(clock=clock, view=SilentView())  # the backend: the registry's, for config.engine
        yield Collected(collect(config, dest, env), root)


@needs_llama_cpp
def test_collect_measures_f16_against_q8_0_and_q4_k_m_through_llama_cpp(collected: Collected) -> None:
    """The whole path (idle, warm-up, ABBA-interleaved windows) with llama.cpp as the engine."""
    p = collected.result.submission.payload
    assert [m.precision for m in p.measurements] == list(GGUF_PRECISIONS)
    assert p.method.order == "interleaved"
    for m in p.measurements:
        assert m.error is None and len(m.windows) == 3 and len(m.warmup) == 1
        assert m.warmup[0].generate_calls >= 3
        for w in m.windows:
            assert w.tokens == BATCH * NEW * w.generate_calls and w.duration_s >= 10.0
            assert w.energy_j / w.duration_s == pytest.approx(150.0, rel=0.03)
    # ABBA: round 0 runs fp16 first and q4_k_m last, round 1 the other way round
    starts = {m.precision: [w.started_at for w in m.windows] for m in p.measurements}
    assert starts[Precision.FP16][0] < starts[Precision.Q4_K_M][0]
    assert starts[Precision.Q4_K_M][1] < starts[Precision.FP16][1]
    fp16, q8, q4 = p.measurements
    assert fp16.quantization is None
    assert q8.quantization is not None and q8.quantization["file_type"] == "Q8_0"
    assert q4.quantization is not None and q4.quantization["file_type"] == "Q4_K_M"
    assert p.workload.attn_implementation == "llama.cpp flash_attn=auto"
    assert p.workload.prompt_sha256 == transformers_prompt_sha256()  # the same prompt as the transformers engine's
    assert p.idle.power_w_before == pytest.approx(150.0, rel=0.05)
    assert p.idle.model_loaded_before is True


@needs_llama_cpp
def test_the_validator_accepts_the_llama_cpp_submission(collected: Collected, keys: Any) -> None:
    core = pytest.importorskip("ecocompute.validate.core")
    (found,) = core.validate_files([collected.result.path], allowed_signers=keys.allowed_signers,
                                   submissions_root=collected.root / "submissions", max_cv_pct=1000.0)  # fmt: skip
    cpu_only = _torch_cuda() is None
    errors = [
        f"{f.code} {f.path}: {f.message}"
        for f in found.errors
        if not (cpu_only and f.code == "E-FINGERPRINT" and f.path == "payload.software.cuda_runtime")
    ]
    assert errors == []


def transformers_prompt_sha256() -> str:
    from ecocompute.collector.model.hf import prompt_ids, prompt_sha256

    return prompt_sha256(prompt_ids(BATCH, PROMPT, 512, 0))


def _torch_cuda() -> str | None:
    import torch

    return torch.version.cuda


NO_TORCH_RUN = """
import sys
sys.path.insert(0, sys.argv[1])
from collector_fakes import FakePynvml, FastClock, block_imports
block_imports("torch")  # any import of torch in this process now raises ImportError
from pathlib import Path
sys.modules["pynvml"] = FakePynvml(clock := FastClock(speed=40.0), power_w=150.0)
from ecocompute.collector.run.collect import Destination, Environment, RunConfig, collect
from ecocompute.collector.run.display import SilentView
from ecocompute.schema.models import Precision, Stack

root = Path(sys.argv[2])
config = RunConfig(precisions=(Precision.FP16, Precision.Q4_K_M), arch="tiny-llama-test", batch_size=2,
                   prompt_tokens=8, new_tokens=6, window_s=10.0, warmup_windows=1, min_windows=3, max_windows=3,
                   idle_s=4.0, idle_settle_s=0.0, torch_device="cpu", stack=Stack.EAGER, pause_gc=False,
                   engine="llama.cpp")
dest = Destination(signer="octocat", out_dir=root / "submissions", state_dir=root / "state",
                   weights_cache=root / "weights")
result = collect(config, dest, Environment(clock=clock, view=SilentView()))
p = result.submission.payload
assert [len(m.windows) for m in p.measurements] == [3, 3], p.measurements
assert p.workload.params_total > 0 and p.software.torch
print("torch imported:", sorted(m for m in sys.modules if m.split(".")[0] == "torch"))
"""


@needs_llama_cpp
@needs_gguf
def test_collect_through_llama_cpp_never_imports_torch(tmp_path: Path) -> None:
    """llama.cpp crashes beside torch (docs/llamacpp.md): the whole llama.cpp run, GGUF files made by a child
    process, with torch made unimportable in the measuring process."""
    import subprocess

    done = subprocess.run([sys.executable, "-c", NO_TORCH_RUN, str(Path(__file__).parent), str(tmp_path)],
                          capture_output=True, text=True, check=False, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("torch imported: []")
    (sizes,) = (tmp_path / "weights").glob("*-gguf/*-sizes.json")  # written by the child, read by the run
    assert '"params_total"' in sizes.read_text(encoding="utf-8")
