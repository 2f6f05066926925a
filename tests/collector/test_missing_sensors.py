"""Sensors a GPU lacks are recorded as missing (null), never as 0: schema, collector, validator and tables."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import polars as pl
import pytest
from amdsmi_fake import FakeAmdsmi
from collector_fakes import LIBRARY_NOT_FOUND, NOT_SUPPORTED, FakePynvml, FakeRunner, VirtualClock
from factories import submission_document
from test_collector_counterless import FakeBackend, Run

from ecocompute.collector.device.amd import AmdSmiGpu, AmdSmiReadError
from ecocompute.collector.device.amdtrace import trace_from_amd
from ecocompute.collector.device.nvml import NvmlGpu
from ecocompute.collector.device.replay import ReplayGpu
from ecocompute.collector.device.sampler import PowerSampler, take_sample
from ecocompute.collector.device.trace import load_trace, write_trace
from ecocompute.collector.errors import GpuError, NvmlReadError
from ecocompute.collector.run.collect import Result
from ecocompute.collector.run.display import figures
from ecocompute.collector.run.engine import Engine, EngineConfig
from ecocompute.collector.run.preflight import gpu_checklist
from ecocompute.collector.run.state import MeasurementState
from ecocompute.publish.build import BuildOptions, build
from ecocompute.publish.inputs import Source
from ecocompute.schema.derive import derive
from ecocompute.schema.errors import SubmissionError
from ecocompute.schema.export import schema_file
from ecocompute.schema.io import load_submission, submission_from_document
from ecocompute.schema.models import Precision
from ecocompute.schema.tables import measurement_rows, measurements_frame, window_rows, windows_frame
from ecocompute.validate.core import validate_files
from ecocompute.validate.findings import Finding

FP16 = Precision.FP16

SENSOR_FIELDS = ("temp_c_start", "temp_c_end", "sm_clock_mhz_mean", "throttle_reasons")


def _schema(version: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(json.loads(schema_file(version).read_text(encoding="utf-8")))


def _with_null(doc: dict[str, Any], name: str, version: str) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    doc["schema_version"] = version
    doc["payload"]["measurements"][0]["windows"][0][name] = None
    return doc


@pytest.mark.parametrize("name", SENSOR_FIELDS)
def test_a_1_2_window_may_hold_null_for_a_missing_sensor(name: str) -> None:
    doc = _with_null(submission_document(1), name, "1.2")
    sub = submission_from_document(doc)
    assert getattr(sub.payload.measurements[0].windows[0], name) is None
    assert _schema("1.2").is_valid(doc)


@pytest.mark.parametrize("version", ["1.0", "1.1"])
@pytest.mark.parametrize("name", SENSOR_FIELDS)
def test_a_1_0_or_1_1_window_with_a_null_sensor_is_refused(name: str, version: str) -> None:
    doc = _with_null(submission_document(2), name, version)
    with pytest.raises(SubmissionError, match=f"schema {version} has no Window.{name}=null"):
        submission_from_document(doc)
    assert not _schema(version).is_valid(doc)
    assert _schema(version).is_valid({**submission_document(2), "schema_version": version})


# --- the collector: NVML and amdsmi FAKES at their module boundary, a FAKE runner on a virtual clock -------------

NVML_SENSORS = {  # sensor -> (the FAKE pynvml function that answers NOT_SUPPORTED, the Window fields left null)
    "temperature": ("nvmlDeviceGetTemperature", ("temp_c_start", "temp_c_end")),
    "sm_clock": ("nvmlDeviceGetClockInfo", ("sm_clock_mhz_mean",)),
    "utilization": ("nvmlDeviceGetUtilizationRates", ("gpu_util_pct_mean",)),
    "throttle_reasons": ("nvmlDeviceGetCurrentClocksEventReasons", ("throttle_reasons",)),
}
AMD_SENSORS = {  # sensor -> (what the FAKE amdsmi reports as N/A, the Window fields left null)
    "temperature": ("temperature", ("temp_c_start", "temp_c_end")),
    "sm_clock": ("clock", ("sm_clock_mhz_mean",)),
    "utilization": ("activity", ("gpu_util_pct_mean",)),
    "throttle_reasons": ("amdsmi_get_violation_status", ("throttle_reasons",)),
}
WINDOW_SENSOR_FIELDS = ("temp_c_start", "temp_c_end", "sm_clock_mhz_mean", "gpu_util_pct_mean", "throttle_reasons")


@pytest.fixture
def run(tmp_path: Path, keys: Any, clock: VirtualClock) -> Run:
    return Run(clock, tmp_path, keys, FakeBackend(clock))


@pytest.fixture
def smi(monkeypatch: pytest.MonkeyPatch, clock: VirtualClock, fake_nvml: FakePynvml) -> FakeAmdsmi:
    """A FAKE amdsmi, and a FAKE NVML that finds no NVIDIA driver (so collect moves on to amdsmi)."""
    fake_nvml.init_error = LIBRARY_NOT_FOUND
    fake = FakeAmdsmi(clock)
    monkeypatch.setitem(sys.modules, "amdsmi", fake)
    return fake


def _findings(run: Run, result: Result) -> list[Finding]:
    (found,) = validate_files([result.path], allowed_signers=run.keys.allowed_signers,
                              submissions_root=run.root / "submissions", max_cv_pct=1000.0)  # fmt: skip
    return list(found.findings)


def _check_measured_without(run: Run, result: Result, nulls: tuple[str, ...], tmp_path: Path) -> None:
    """Every window (warm-ups too) holds null in ``nulls``, a value elsewhere; the file validates; null in parquet."""
    sub = load_submission(result.path)
    assert sub.schema_version == "1.2"
    (m,) = sub.payload.measurements
    assert len(m.windows) == 3
    for w in (*m.warmup, *m.windows):
        for name in WINDOW_SENSOR_FIELDS:
            assert (getattr(w, name) is None) == (name in nulls), name
    findings = _findings(run, result)
    assert [f for f in findings if f.is_error] == []
    skipped = {f.path.rsplit(".", 1)[-1] for f in findings if f.code == "W-SENSOR-MISSING"}
    assert skipped == set(nulls) - {"temp_c_end", "gpu_util_pct_mean"}  # one per check; utilisation has none
    frame = windows_frame(window_rows(sub))
    frame.write_parquet(tmp_path / "windows.parquet")
    back = pl.read_parquet(tmp_path / "windows.parquet")
    for name in WINDOW_SENSOR_FIELDS:
        assert back[name].null_count() == (len(back) if name in nulls else 0), name
    assert (derive(m.windows, sub.payload.idle.power_w).gpu_util_pct_mean is None) == ("gpu_util_pct_mean" in nulls)
    (row,) = measurements_frame(measurement_rows(sub)).to_dicts()
    assert (row["gpu_util_pct_mean"] is None) == ("gpu_util_pct_mean" in nulls)


@pytest.mark.parametrize("sensor", sorted(NVML_SENSORS))
def test_an_nvidia_gpu_lacking_a_sensor_is_measured_with_null_there(
    fake_nvml: FakePynvml, run: Run, sensor: str, tmp_path: Path
) -> None:
    function, nulls = NVML_SENSORS[sensor]
    fake_nvml.fail[function] = NOT_SUPPORTED
    _check_measured_without(run, run(), nulls, tmp_path)


@pytest.mark.parametrize("sensor", sorted(AMD_SENSORS))
def test_an_amd_gpu_lacking_a_sensor_is_measured_with_null_there(
    smi: FakeAmdsmi, run: Run, sensor: str, tmp_path: Path
) -> None:
    na, nulls = AMD_SENSORS[sensor]
    smi.na.add(na)
    _check_measured_without(run, run(), nulls, tmp_path)


def test_a_gpu_lacking_every_optional_sensor_is_measured(fake_nvml: FakePynvml, run: Run, tmp_path: Path) -> None:
    for function, _ in NVML_SENSORS.values():
        fake_nvml.fail[function] = NOT_SUPPORTED
    _check_measured_without(run, run(), WINDOW_SENSOR_FIELDS, tmp_path)


def test_a_gpu_with_every_sensor_records_them_all(fake_nvml: FakePynvml, run: Run, tmp_path: Path) -> None:
    _check_measured_without(run, run(), (), tmp_path)


def _check_measured_without_a_limit(run: Run, result: Result, tmp_path: Path, *, default_missing: bool) -> None:
    """Null power limit in the hardware record and every window, never 0; validated with W-SENSOR-MISSING; built."""
    sub = load_submission(result.path)
    hardware = sub.payload.hardware
    assert sub.schema_version == "1.2" and hardware.power_limit_w is None
    assert (hardware.default_power_limit_w is None) == default_missing
    written = json.loads(result.path.read_text(encoding="utf-8"))["payload"]["hardware"]
    assert written["power_limit_w"] is None and ("default_power_limit_w" in written)  # null, not left out
    assert all(w.power_limit_w is None for m in sub.payload.measurements for w in (*m.warmup, *m.windows))
    findings = _findings(run, result)
    assert [f for f in findings if f.is_error] == []
    assert "W-POWER-LIMIT" not in {f.code for f in findings}  # neither default nor non-default
    missing = {f.path for f in findings if f.code == "W-SENSOR-MISSING"}
    limits = {"power_limit_w", "default_power_limit_w"} if default_missing else {"power_limit_w"}
    assert missing == {f"payload.hardware.{name}" for name in limits}
    source = Source.at(run.root / "submissions", run.keys.allowed_signers)
    built = build([source], tmp_path / "dataset", BuildOptions(include_examples=True))  # a FAKE run is an example
    assert (built.submissions_all, built.rejected) == (1, 0)
    (row,) = pl.read_parquet(built.out / "data" / "submissions_all" / "train-00000-of-00001.parquet").to_dicts()
    assert row["power_limit_w"] is None and (row["default_power_limit_w"] is None) == default_missing
    windows = pl.read_parquet(built.out / "data" / "windows_all" / "train-00000-of-00001.parquet")
    assert windows["power_limit_w"].null_count() == len(windows) > 0


def test_an_nvidia_gpu_without_a_power_limit_is_measured_with_null_there(
    fake_nvml: FakePynvml, run: Run, tmp_path: Path
) -> None:
    fake_nvml.fail["nvmlDeviceGetPowerManagementLimit"] = NOT_SUPPORTED
    with NvmlGpu(0) as gpu:
        assert gpu.power_limit_w() is None and set(gpu.missing_sensors) == {"power_limit"}
        info = gpu.fingerprint()
        assert (info.power_limit_w, info.default_power_limit_w) == (None, 700.0)
    _check_measured_without_a_limit(run, run(), tmp_path, default_missing=False)


def test_an_nvidia_gpu_without_either_limit_is_measured_with_both_null(
    fake_nvml: FakePynvml, run: Run, tmp_path: Path
) -> None:
    fake_nvml.fail["nvmlDeviceGetPowerManagementLimit"] = NOT_SUPPORTED
    fake_nvml.fail["nvmlDeviceGetPowerManagementDefaultLimit"] = NOT_SUPPORTED
    _check_measured_without_a_limit(run, run(), tmp_path, default_missing=True)


def test_a_default_limit_that_fails_otherwise_still_stops_the_run(fake_nvml: FakePynvml) -> None:
    fake_nvml.fail["nvmlDeviceGetPowerManagementDefaultLimit"] = 999  # NVML_ERROR_UNKNOWN
    with NvmlGpu(0) as gpu, pytest.raises(GpuError):
        gpu.fingerprint()


def test_the_checklist_says_the_power_limit_is_not_reported_and_what_that_means(fake_nvml: FakePynvml) -> None:
    fake_nvml.fail["nvmlDeviceGetPowerManagementLimit"] = NOT_SUPPORTED
    with NvmlGpu(0) as gpu:
        items = {i.name: i for i in gpu_checklist(gpu.fingerprint(), gpu, 0, False)}
    item = items["power limit"]
    assert (item.found, item.ok) == ("not reported", False)
    assert item.meaning.startswith("recorded as null (never 0)") and "W-SENSOR-MISSING" in item.meaning
    fake_nvml.fail.pop("nvmlDeviceGetPowerManagementLimit")
    fake_nvml.fail["nvmlDeviceGetPowerManagementDefaultLimit"] = NOT_SUPPORTED
    with NvmlGpu(0) as gpu:
        items = {i.name: i for i in gpu_checklist(gpu.fingerprint(), gpu, 0, False)}
    assert items["power limit"].found == "700 W (default not reported)" and not items["power limit"].ok


@pytest.mark.parametrize("sensor", sorted(NVML_SENSORS))
def test_a_sensor_that_fails_after_working_stops_the_run_with_the_usual_message(
    fake_nvml: FakePynvml, clock: VirtualClock, sensor: str
) -> None:
    function, _ = NVML_SENSORS[sensor]
    with NvmlGpu(0) as gpu:
        assert gpu.missing_sensors == {}
        sampler = PowerSampler(gpu, clock)
        engine = Engine(gpu, sampler, clock, EngineConfig(window_s=2.0, random_delay_max_s=0.0, pause_gc=False))
        first = engine.measure_window(FakeRunner(FP16, clock, call_s=0.5), 0)
        assert first.temp_c_start == 41.0 and first.sm_clock_mhz_mean == 1980.0 and first.throttle_reasons == []
        fake_nvml.fail[function] = NOT_SUPPORTED
        with pytest.raises(NvmlReadError, match="the measurement stopped here rather than keep a hole"):
            engine.measure_window(FakeRunner(FP16, clock, call_s=0.5), 1)


@pytest.mark.parametrize("na", ["temperature", "clock", "activity", "amdsmi_get_violation_status"])
def test_an_amd_sensor_that_fails_after_working_stops_the_run(smi: FakeAmdsmi, clock: VirtualClock, na: str) -> None:
    with AmdSmiGpu(0, clock=clock) as gpu:
        assert gpu.missing_sensors == {}
        smi.na.add(na)
        with pytest.raises(AmdSmiReadError, match="after it worked at opening: the measurement stopped here"):
            take_sample(gpu, clock.monotonic()) if na != "temperature" else gpu.temperature_c()


def test_the_checklist_names_each_missing_sensor_and_what_it_means(fake_nvml: FakePynvml) -> None:
    with NvmlGpu(0) as gpu:
        (item,) = [i for i in gpu_checklist(gpu.fingerprint(), gpu, 0, False) if i.name == "sensors"]
        assert (item.found, item.ok) == ("all present", True)
    fake_nvml.fail["nvmlDeviceGetTemperature"] = NOT_SUPPORTED
    fake_nvml.fail["nvmlDeviceGetCurrentClocksEventReasons"] = NOT_SUPPORTED
    fake_nvml.fail["nvmlDeviceGetUtilizationRates"] = NOT_SUPPORTED
    with NvmlGpu(0) as gpu:
        items = {i.name: i for i in gpu_checklist(gpu.fingerprint(), gpu, 0, False)}
    assert "sensors" not in items and "sensor: SM clock" not in items
    assert items["sensor: utilisation"].meaning.startswith("recorded as null in gpu_util_pct_mean (never 0)")
    temp, throttle = items["sensor: temperature"], items["sensor: throttle reasons"]
    assert not temp.ok and temp.found == "missing (NVML: nvmlDeviceGetTemperature is NOT_SUPPORTED on this GPU)"
    assert temp.meaning.startswith("recorded as null in temp_c_start/temp_c_end (never 0)")
    assert "W-THROTTLE skipped" in throttle.meaning
    assert items["temperature, throttling"].found == "temperature not reported, throttling not reported"


def test_a_replayed_trace_with_null_sensors_reads_none(clock: VirtualClock, tmp_path: Path) -> None:
    trace = load_trace(Path(__file__).parents[1] / "data" / "traces" / "synthetic-steps.json")
    for row in trace.rows:
        row[5:9] = [None, None, None, None]  # temp_c, sm_clock_mhz, util_pct, throttle
    write_trace(trace, tmp_path / "t.json")
    gpu = ReplayGpu(load_trace(tmp_path / "t.json"), clock)
    assert (gpu.temperature_c(), gpu.sm_clock_mhz(), gpu.utilization_pct(), gpu.throttle_reasons()) == (
        None, None, None, None,
    )  # fmt: skip
    window = Engine(
        gpu, PowerSampler(gpu, clock), clock, EngineConfig(window_s=2.0, random_delay_max_s=0.0)
    ).measure_window(FakeRunner(FP16, clock, call_s=0.5), 0)
    assert (window.sm_clock_mhz_mean, window.gpu_util_pct_mean, window.throttle_reasons) == (None, None, None)


def test_the_display_shows_na_for_a_utilisation_the_gpu_does_not_report(fake_nvml: FakePynvml, run: Run) -> None:
    fake_nvml.fail["nvmlDeviceGetUtilizationRates"] = NOT_SUPPORTED
    m = run().submission.payload.measurements[0]
    state = MeasurementState(precision=FP16, windows=list(m.windows))
    assert figures(state, 100.0)["util %"] == "n/a"


def test_an_amd_trace_with_null_sensors_replays_them_as_none(clock: VirtualClock) -> None:
    doc = json.loads((Path(__file__).parents[1] / "data" / "traces-amd" / "mi300x-synthetic.json").read_text())
    for row in doc["rows"]:
        row[4:8] = [None, None, None, None]  # hotspot_c, gfx_clock_mhz, gfx_activity_pct, violations
    gpu = ReplayGpu(trace_from_amd(doc), clock)
    assert (gpu.temperature_c(), gpu.sm_clock_mhz(), gpu.utilization_pct(), gpu.throttle_reasons()) == (
        None, None, None, None,
    )  # fmt: skip


def test_an_amd_gpu_without_a_power_cap_is_measured_with_null_there(
    smi: FakeAmdsmi, clock: VirtualClock, run: Run, tmp_path: Path
) -> None:
    smi.na.add("amdsmi_get_power_cap_info")
    with AmdSmiGpu(0, clock=clock) as gpu:
        assert gpu.power_limit_w() is None and set(gpu.missing_sensors) == {"power_limit"}
        info = gpu.fingerprint()
        assert (info.power_limit_w, info.default_power_limit_w) == (None, None)
    _check_measured_without_a_limit(run, run(), tmp_path, default_missing=True)
