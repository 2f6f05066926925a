"""Recording NVML traces (on the fake NVML) and reading them back."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from collector_fakes import FakePynvml, VirtualClock

from ecocompute.cli import main
from ecocompute.collector.device.nvml import NvmlGpu
from ecocompute.collector.device.trace import (
    COLUMNS,
    counter_vs_integral_pct,
    dumps_trace,
    load_trace,
    record_trace,
    write_trace,
)
from ecocompute.collector.errors import TraceError
from ecocompute.collector.host.clock import SystemClock

TRACES = Path(__file__).parents[1] / "data" / "traces"


def test_record_trace_phases_rows_and_roundtrip(fake_nvml: FakePynvml, clock: VirtualClock, tmp_path: Path) -> None:
    fake_nvml.power_w = 130.0

    def load(duration_s: float) -> None:
        fake_nvml.set_power(690.0)
        clock.advance(duration_s)
        fake_nvml.set_power(130.0)

    with NvmlGpu(0) as gpu:
        trace = record_trace(gpu, clock, 20.0, load)
    assert [p.name for p in trace.phases] == ["idle", "matmul-fp16", "idle-after"]
    assert [round(p.end_s - p.start_s, 6) for p in trace.phases] == [3.0, 10.0, 7.0]
    assert 999 <= len(trace.rows) <= 1001
    assert "fake" not in json.dumps(trace.gpu)
    load_phase = trace.phases[1]
    diff = counter_vs_integral_pct(trace, load_phase.start_s + 0.5, load_phase.end_s - 0.5)
    assert diff is not None and abs(diff) < 2.0
    path = tmp_path / "trace.json"
    write_trace(trace, path)
    assert path.stat().st_size < 1_000_000
    again = load_trace(path)
    assert again.rows == trace.rows and again.phases == trace.phases and not again.synthetic


def test_every_committed_trace_is_small_and_readable() -> None:
    files = sorted(TRACES.glob("*.json"))
    assert files, "tests/data/traces holds at least the synthetic trace"
    for path in files:
        assert path.stat().st_size < 1_000_000, f"{path.name} is over 1 MB"
        trace = load_trace(path)
        assert trace.synthetic == path.name.startswith("synthetic"), f"{path.name}: name and 'synthetic' disagree"
        assert trace.end_s - trace.start_s > 5.0


def _document(path: Path) -> dict[str, object]:
    doc: dict[str, object] = json.loads(path.read_text())
    return doc


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format": "other"}, "is not an ecocompute-nvml-trace"),
        ({"columns": ["t_s"]}, "has columns"),
        ({"rows": [[0.0, 5, 1, 1, 1, 30.0, 1980.0, 0.0, ""]]}, "fewer than two rows"),
        ({"rows": [[0.0, 5, 1, 1, 1, 30.0, 1980.0, 0.0, ""], [1.0, 4, 1, 1, 1, 30.0, 1980.0, 0.0, ""]]}, "backwards"),
        ({"rows": [[1.0, 5, 1, 1, 1, 30.0, 1980.0, 0.0, ""], [1.0, 6, 1, 1, 1, 30.0, 1980.0, 0.0, ""]]}, "increasing"),
        ({"rows": [[0.0, 5], [1.0, 6]]}, "without 9 values"),
    ],
)
def test_a_broken_trace_says_what_is_wrong(tmp_path: Path, change: dict[str, object], message: str) -> None:
    doc = _document(TRACES / "synthetic-steps.json")
    doc.update(change)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(TraceError, match=message):
        load_trace(path)
    with pytest.raises(TraceError, match="cannot read"):
        load_trace(tmp_path / "missing.json")


def test_dumps_is_one_row_per_line() -> None:
    trace = load_trace(TRACES / "synthetic-steps.json")
    text = dumps_trace(trace)
    assert json.loads(text)["columns"] == list(COLUMNS)
    assert text.count("\n") > len(trace.rows)


def test_record_trace_command_runs_a_real_matmul_on_cpu(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    monkeypatch.setitem(sys.modules, "pynvml", FakePynvml(SystemClock()))
    out = tmp_path / "t.json"
    code = main(["record-trace", "--seconds", "1", "--out", str(out), "--matmul-size", "64", "--torch-device", "cpu"])
    assert code == 0, capsys.readouterr()
    trace = load_trace(out)
    assert len(trace.rows) > 10
    assert "integral of power_mw vs counter" in capsys.readouterr().out
