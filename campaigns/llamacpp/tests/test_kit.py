"""The llama.cpp measurement kit, as far as it runs here: the sdist trim, its size, the queue and the scripts."""

from __future__ import annotations

import io
import shlex
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
from factories import collect_options, load_script

KIT = Path(__file__).parents[1]
ROOT = KIT.parents[1]
SDIST = ROOT / "build" / "llamacpp-dl" / "llama_cpp_python-0.3.36.tar.gz"


def trim_module() -> Any:
    """campaigns/llamacpp/tools/trim_sdist.py, a script, as a module."""
    return load_script(KIT / "tools" / "trim_sdist.py")


def test_the_trim_keeps_the_cuda_build_and_drops_the_rest() -> None:
    keep = trim_module().keep
    for needed in ("llama_cpp/llama_cpp.py", "CMakeLists.txt", "pyproject.toml", "vendor/llama.cpp/CMakeLists.txt",
                   "vendor/llama.cpp/src/llama.cpp", "vendor/llama.cpp/ggml/src/ggml.c",
                   "vendor/llama.cpp/ggml/src/ggml-backend.cpp", "vendor/llama.cpp/ggml/src/ggml-cuda/fattn.cu",
                   "vendor/llama.cpp/ggml/src/ggml-cpu/ggml-cpu.c", "vendor/llama.cpp/common/common.cpp",
                   "vendor/llama.cpp/cmake/build-info.cmake"):  # fmt: skip
        assert keep(needed), needed
    for dropped in ("docs/index.md", "examples/x.py", "tests/test_llama.py", "vendor/llama.cpp/docs/build.md",
                    "vendor/llama.cpp/models/ggml-vocab-llama-spm.gguf", "vendor/llama.cpp/tools/ui/index.html",
                    "vendor/llama.cpp/ggml/src/ggml-vulkan/ggml-vulkan.cpp",
                    "vendor/llama.cpp/ggml/src/ggml-metal/ggml-metal.m", "vendor/llama.cpp/tests/test-backend-ops.cpp",
                    "vendor/llama.cpp/convert_hf_to_gguf.py"):  # fmt: skip
        assert not keep(dropped), dropped


def _fake_sdist(path: Path) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name, text in (("p-1/pyproject.toml", "x"), ("p-1/docs/a.md", "doc"),
                           ("p-1/vendor/llama.cpp/ggml/src/ggml-sycl/a.cpp", "sycl"),
                           ("p-1/vendor/llama.cpp/ggml/src/ggml-cuda/a.cu", "cuda")):  # fmt: skip
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), 1_700_000_000
            tar.addfile(info, io.BytesIO(data))


def test_the_trim_is_deterministic(tmp_path: Path) -> None:
    trim = trim_module().trim
    _fake_sdist(tmp_path / "p-1.tar.gz")
    first = trim(tmp_path / "p-1.tar.gz", tmp_path / "a.tar.gz")
    trim(tmp_path / "p-1.tar.gz", tmp_path / "b.tar.gz")
    assert first[:2] == (2, 2) and (tmp_path / "a.tar.gz").read_bytes() == (tmp_path / "b.tar.gz").read_bytes()
    with tarfile.open(tmp_path / "a.tar.gz") as tar:
        assert tar.getnames() == ["p-1/pyproject.toml", "p-1/vendor/llama.cpp/ggml/src/ggml-cuda/a.cu"]


@pytest.mark.skipif(not SDIST.is_file(), reason=f"{SDIST.name} not downloaded (campaigns/llamacpp/tools/fetch.sh)")
def test_the_real_sdist_trims_to_well_under_the_carry_limit(tmp_path: Path) -> None:
    module = trim_module()
    kept, dropped, size = module.trim(SDIST, tmp_path / "trimmed.tar.gz")
    assert size < module.LIMIT_BYTES // 8 and kept > 500 and dropped > kept
    with tarfile.open(tmp_path / "trimmed.tar.gz") as tar:
        names = set(tar.getnames())
    top = "llama_cpp_python-0.3.36/"
    assert f"{top}vendor/llama.cpp/ggml/src/ggml-cuda/CMakeLists.txt" in names
    assert f"{top}llama_cpp/llama_cpp.py" in names and not any("/ggml-vulkan/" in n for n in names)


def test_every_queue_line_uses_options_collect_has() -> None:
    options = collect_options()
    lines = [line for q in sorted((KIT / "queues").glob("*.txt")) for line in q.read_text().splitlines()
             if line.strip() and not line.startswith("#")]  # fmt: skip
    assert lines
    for line in lines:
        args = shlex.split(line)
        assert {a for a in args if a.startswith("--")} <= options, line
        precisions = args[args.index("--precisions") + 1].split(",")
        assert precisions[0] == "fp16" and set(precisions) <= {"fp16", "q8_0", "q4_k_m"}
        assert args[args.index("--stack") + 1] == "eager"


def test_the_scripts_parse() -> None:
    for script in sorted((KIT / "tools").glob("*.sh")):
        subprocess.run(["bash", "-n", str(script)], check=True)


def test_the_report_is_what_the_committed_runs_give() -> None:
    """REPORT.md is generated from the committed llama.cpp runs: a run landed without --write fails here."""
    done = subprocess.run([sys.executable, str(KIT / "tools" / "report.py"), "--check"], capture_output=True, text=True,
                          check=False, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = (KIT / "REPORT.md").read_text(encoding="utf-8")
    assert "| llama.cpp | eager |" in text  # the committed H200 run is in it, with its engine
