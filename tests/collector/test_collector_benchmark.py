"""benchmarks/collector_overhead.py: its bookkeeping on CPU (fake NVML), and its refusal without a GPU."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from collector_fakes import FakePynvml
from factories import load_script

from ecocompute.collector.host.clock import SystemClock

SCRIPT = Path(__file__).parents[2] / "benchmarks" / "collector_overhead.py"


def test_abba_windows_and_summary(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, random_init_weights: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    monkeypatch.setitem(sys.modules, "pynvml", FakePynvml(SystemClock()))
    out = tmp_path / "overhead.json"
    args = ["--out", str(out), "--arch", "tiny-llama-test", "--windows", "4", "--window-s", "0.3",
            "--new-tokens", "4", "--weights-cache", str(random_init_weights), "--torch-device", "cpu"]  # fmt: skip
    assert load_script(SCRIPT).main(args) == 0
    result = json.loads(out.read_text())
    assert [w["arm"] for w in result["windows"]] == ["on", "off", "off", "on"]
    assert all(w["usage_integral_vs_counter_pct"] is None for w in result["windows"] if w["arm"] == "off")
    assert all(w["tokens"] % 4 == 0 and w["tokens_per_s"] > 0 for w in result["windows"])
    assert set(result["summary"]) >= {"tokens_per_s_on", "tokens_per_s_off", "overhead_pct", "overhead_pct_ci95_half"}
    assert "overhead" in capsys.readouterr().out


def test_without_the_gpu_it_stops_with_one_line() -> None:
    proc = subprocess.run([sys.executable, str(SCRIPT), "--out", "/nonexistent/x.json", "--device-index", "99"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1
    assert "Traceback" not in proc.stderr


FIRST_RUN = Path(__file__).parents[2] / "benchmarks" / "first_run.py"


def test_first_run_runs_contributing_word_for_word() -> None:
    first_run = load_script(FIRST_RUN)
    lines = first_run.block_lines(Path(__file__).parents[2] / "CONTRIBUTING.md", "someone")
    assert lines[0].startswith("ecocompute collect --arch TinyLlama-1.1B --signer someone --key ")
    assert lines[-1] == "ecocompute validate submissions/someone --allowed-signers submissions/allowed_signers"
    assert not any("YOUR_GITHUB_LOGIN" in line for line in lines)


def test_first_run_summary_counts_gated_and_accepted_runs() -> None:
    first_run = load_script(FIRST_RUN)
    runs = [{"accepted": True, "gated": True, "collect_s": 300.0, "run": 0, "measurements": []},
            {"accepted": True, "gated": False, "collect_s": 200.0, "run": 1, "measurements": []}]  # fmt: skip
    s = first_run.summary(runs)
    assert (s["runs"], s["accepted"], s["gated"], s["collect_s_max"], s["collect_s_first"]) == (2, 2, 1, 300.0, 300.0)
    assert "2 of 2 fresh processes accepted" in first_run.render({"runs": runs, "summary": s, "gate_cv_pct": 2.0})
