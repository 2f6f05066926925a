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


def test_periods_take_turns_over_the_pairs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                           random_init_weights: Path) -> None:  # fmt: skip
    monkeypatch.setitem(sys.modules, "pynvml", FakePynvml(SystemClock()))
    out = tmp_path / "overhead.json"
    args = ["--out", str(out), "--arch", "tiny-llama-test", "--windows", "8", "--window-s", "0.3",
            "--new-tokens", "4", "--periods-ms", "100,5", "--weights-cache", str(random_init_weights),
            "--torch-device", "cpu"]  # fmt: skip
    assert load_script(SCRIPT).main(args) == 0
    result = json.loads(out.read_text())
    assert [w["period_ms"] for w in result["windows"]] == [100.0, None, None, 5.0, 100.0, None, None, 5.0]
    periods = result["summary"]["periods"]
    assert [(p["period_ms"], p["pairs"]) for p in periods] == [(100.0, 2), (5.0, 2)]
    assert periods[1]["extra_samples_per_s"] > periods[0]["extra_samples_per_s"]  # the 5 ms thread samples more
    assert "overhead_pct_at_default" in result["summary"]


def test_the_dose_fit_recovers_a_known_cost_per_sample() -> None:
    bench = load_script(SCRIPT)

    def pair(hz: float, cost_pct: float, noise: float) -> tuple[dict[str, object], dict[str, object]]:
        off = {"arm": "off", "tokens_per_s": 1000.0, "power_samples": 2, "duration_s": 1.0}
        on = {"arm": "on", "period_ms": 1000.0 / hz, "power_samples": 2 + hz, "duration_s": 1.0,
              "tokens_per_s": 1000.0 * (1 - (cost_pct * hz + noise) / 100)}  # fmt: skip
        return on, off

    pairs = [pair(hz, 0.002, noise) for hz in (10.0, 500.0) for noise in (-0.3, 0.3, 0.1, -0.1)]
    s = bench.dose_summary(pairs)
    assert [p["period_ms"] for p in s["periods"]] == [100.0, 2.0]
    assert s["overhead_pct_per_sample_hz"] == pytest.approx(0.002, rel=1e-6)  # the noise cancels by design
    assert s["overhead_pct_at_default"] == pytest.approx(0.02, rel=1e-6)
    assert 0 < s["overhead_pct_at_default_ci95_half"] < 0.05
    with pytest.raises(SystemExit):
        bench.parse_args(["--out", "x.json", "--periods-ms", "100,0"])


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


def test_first_run_tally_adds_sittings_of_one_block(tmp_path: Path) -> None:
    first_run = load_script(FIRST_RUN)

    def sitting(name: str, commands: list[str], verdicts: list[bool]) -> Path:
        load = {"stack": "compiled-all", "batch_size": 128}
        runs = [{"accepted": ok, "gated": ok, "collect_s": 250.0 + i, "run": i, "measurements": [], "workload": load}
                for i, ok in enumerate(verdicts)]  # fmt: skip
        path = tmp_path / name
        result = {"started_at": "2026-12-01T14:00:00+00:00", "gpu": "NVIDIA H200", "gate_cv_pct": 2.0,
                  "commands": commands, "runs": runs, "summary": first_run.summary(runs)}  # fmt: skip
        path.write_text(json.dumps(result))
        return path

    a, b = (
        sitting("a.json", ["ecocompute collect"], [True, True, True]),
        sitting("b.json", ["ecocompute collect"], [True, False]),
    )
    text = first_run.tally([a, b])
    assert "4 of 5 fresh processes accepted by validate, 4 of 5 within the 2% CV gate" in text
    assert "'batch_size': 128" not in text and '"batch_size": 128' in text
    other = sitting("c.json", ["ecocompute collect --stack eager"], [True])
    with pytest.raises(SystemExit, match="different commands"):
        first_run.tally([a, other])
