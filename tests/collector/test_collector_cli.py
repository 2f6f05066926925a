"""``ecocompute collect`` and ``record-trace`` from the command line: help, one-line errors, a whole run."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from collector_fakes import DRIVER_NOT_LOADED, LIBRARY_NOT_FOUND, NOT_SUPPORTED, FakePynvml

from ecocompute.cli import main

HEAVY = ("torch", "transformers", "bitsandbytes", "pynvml")


@pytest.mark.parametrize("command", [["collect", "--help"], ["record-trace", "--help"]])
def test_help_has_an_example_and_loads_nothing_heavy(command: list[str]) -> None:
    code = (
        "import sys\n"
        "from ecocompute.cli import main\n"
        f"rc = main({command!r})\n"
        f"loaded = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "assert rc == 0 and not loaded, (rc, loaded)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                          env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "Example: ecocompute " in proc.stdout


def test_list_archs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["collect", "--list-archs"]) == 0
    names = capsys.readouterr().out.split()
    assert "TinyLlama-1.1B" in names and "Qwen2.5-32B" in names


@pytest.fixture
def base(tmp_path: Path, random_init_weights: Path) -> Iterator[list[str]]:
    yield ["collect", "--arch", "tiny-llama-test", "--precisions", "fp16", "--signer", "example-user",
           "--out", str(tmp_path / "submissions"), "--state-dir", str(tmp_path / "state"),
           "--weights-cache", str(random_init_weights), "--torch-device", "cpu", "--quiet",
           "--stack", "eager", "--batch-size", "1"]  # fmt: skip


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        ({"init_error": LIBRARY_NOT_FOUND}, "no NVIDIA GPU or driver found: "),
        ({"init_error": DRIVER_NOT_LOADED}, "run on a machine with an NVIDIA GPU"),
        ({"gpu_count": 0}, "no NVIDIA GPU or driver found"),
        (
            {"energy_supported": False, "fail": {"nvmlDeviceGetPowerUsage": NOT_SUPPORTED}},
            "error: GPU 0 (NVIDIA H200) cannot be measured: NVML: nvmlDeviceGetTotalEnergyConsumption is NOT_SUPPORTED",
        ),
        ({"mig": True}, "error: MIG is enabled on GPU 0: disable it"),
        ({"processes": [4242]}, "pass --allow-shared"),
    ],
)
def test_gpu_problems_are_one_red_line(nvml: FakePynvml, base: list[str], capsys: pytest.CaptureFixture[str],
                                       setup: dict[str, Any], message: str) -> None:  # fmt: skip
    for name, value in setup.items():
        setattr(nvml, name, value)
    assert main(base) == 1
    assert message in one_error_line(capsys)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--precisions", "fp16,fp8"], "unknown precision 'fp8': choose from fp16, bf16, int8, int8-t0, nf4, nf4-dq"),
        (["--arch", "gpt-9"], "unknown architecture 'gpt-9': choose one of"),
        (["--perplexity"], "--perplexity needs pretrained weights"),
    ],
)
def test_usage_problems_are_one_red_line(nvml: FakePynvml, base: list[str], capsys: pytest.CaptureFixture[str],
                                         extra: list[str], message: str) -> None:  # fmt: skip
    assert main(base + extra) == 2  # a usage error, as everywhere in the CLI
    assert message in one_error_line(capsys)


def test_a_whole_run_from_the_command_line(nvml: FakePynvml, base: list[str],
                                           capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    args = [*base, "--prompt-tokens", "8", "--new-tokens", "8", "--min-windows", "3", "--max-windows", "3",
            "--warmup-windows", "0", "--idle-s", "2"]  # fmt: skip
    assert main(args) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "wrote " in out and "nvidia-h200" in out
    assert "unsigned: sign it with `ecocompute sign" in out
    assert "fp16" in out
