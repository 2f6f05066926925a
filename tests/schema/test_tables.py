"""The pandera table models accept the flattened rows of valid submissions and reject bad tables."""

from __future__ import annotations

import pandera.errors
import polars as pl
import pytest
from factories import make_submission

from ecocompute.schema.derive import derive
from ecocompute.schema.tables import (
    measurement_rows,
    measurements_frame,
    submission_row,
    submissions_frame,
    window_rows,
    windows_frame,
)


def test_tables_of_a_submission_validate_and_count_every_window() -> None:
    sub = make_submission(11, precisions=("fp16", "nf4", "int8"), n_windows=4)
    windows = windows_frame(window_rows(sub))
    expected = sum(len(m.windows) + len(m.warmup) for m in sub.payload.measurements)
    assert windows.height == expected
    assert windows.filter(~pl.col("warmup")).height == 12
    measurements = measurements_frame(measurement_rows(sub))
    assert measurements.height == 3
    submissions = submissions_frame([submission_row(sub, "a" * 64)])
    assert submissions["gpu_name"].to_list() == ["NVIDIA H200"]


def test_windows_table_carries_the_newer_per_window_records() -> None:
    """power_limit_w, recompiles and host_others_busy_cpus reach the table; older windows without them give null."""
    sub = make_submission(15, precisions=("fp16",), n_windows=2)
    m = sub.payload.measurements[0]
    newer = m.windows[0].model_copy(update={"power_limit_w": 700.0, "recompiles": 0, "host_others_busy_cpus": 15.2})
    measured = m.model_copy(update={"windows": [newer, *m.windows[1:]]})
    sub = sub.model_copy(update={"payload": sub.payload.model_copy(update={"measurements": [measured]})})
    frame = windows_frame(window_rows(sub)).filter(~pl.col("warmup")).sort("window_index")
    assert frame["power_limit_w"].to_list() == [700.0, None]
    assert frame["recompiles"].to_list() == [0, None]
    assert frame["host_others_busy_cpus"].to_list() == [15.2, None]


def test_measurements_table_says_which_precisions_the_compiled_stack_compiled() -> None:
    """compiled reaches the table as recorded: true, false, or null for an older submission."""
    sub = make_submission(16, precisions=("fp16", "bf16", "nf4"), stack="compiled")
    fp16, bf16, nf4 = sub.payload.measurements
    measured = [fp16.model_copy(update={"compiled": True}), bf16, nf4.model_copy(update={"compiled": False})]
    sub = sub.model_copy(update={"payload": sub.payload.model_copy(update={"measurements": measured})})
    frame = measurements_frame(measurement_rows(sub))
    assert dict(zip(frame["precision"], frame["compiled"], strict=True)) == {"fp16": True, "bf16": None, "nf4": False}


def test_measurement_figures_come_from_derive() -> None:
    sub = make_submission(12)
    row = measurements_frame(measurement_rows(sub)).row(0, named=True)
    d = derive(sub.payload.measurements[0].windows, sub.payload.idle.power_w)
    assert row["j_per_token_mean"] == d.j_per_token_mean
    assert row["cv_pct"] == d.cv_pct
    assert d.ci95_half_j is not None
    assert row["j_per_token_ci95_high"] == pytest.approx(d.j_per_token_mean + d.ci95_half_j)


def test_errored_measurement_has_null_figures() -> None:
    sub = make_submission(13)
    failed = sub.payload.measurements[1].model_copy(update={"windows": [], "warmup": [], "error": "CUDA OOM"})
    payload = sub.payload.model_copy(update={"measurements": [sub.payload.measurements[0], failed]})
    rows = measurement_rows(sub.model_copy(update={"payload": payload}))
    frame = measurements_frame(rows)
    assert frame["j_per_token_mean"].null_count() == 1
    assert frame.filter(pl.col("error").is_not_null())["n_windows"].to_list() == [0]


def test_duplicate_window_rows_are_rejected() -> None:
    rows = window_rows(make_submission(14))
    with pytest.raises(pandera.errors.SchemaError):
        windows_frame([*rows, rows[-1]])


def test_unknown_column_is_rejected() -> None:
    rows = measurement_rows(make_submission(15))
    frame = measurements_frame(rows).with_columns(pl.lit(1).alias("surprise"))
    from ecocompute.schema.tables import MeasurementsTable

    with pytest.raises(pandera.errors.SchemaError):
        MeasurementsTable.validate(frame)


@pytest.mark.parametrize("model_name", ["WindowsTable", "MeasurementsTable", "SubmissionsTable"])
def test_no_column_is_named_like_a_dataframe_attribute(model_name: str) -> None:
    """``frame.<column>`` must reach the column in pandas, and no name may shadow a polars method either."""
    import pandas as pd

    from ecocompute.schema import tables

    model = getattr(tables, model_name)
    taken = set(dir(pd.DataFrame)) | set(dir(pl.DataFrame))
    columns = set(model.to_schema().columns)
    assert columns & taken == set()
    assert {"stack", "index"} <= taken  # the names this guards against are in the lists compared


def test_measurement_columns_a_reader_uses_follow_from_the_windows() -> None:
    """Wh per 1,000 tokens, tokens per kWh, the gate, GPU busy % and CPU per wall second; engine and stack named."""
    steady = make_submission(17, precisions=("fp16", "nf4"), cv=0.004, stack="compiled-all")
    spread = make_submission(17, precisions=("fp16",), cv=0.05, stack="compiled-all")
    for sub, passes in ((steady, True), (spread, False)):
        for row, m in zip(measurement_rows(sub), sub.payload.measurements, strict=True):
            d = derive(m.windows, sub.payload.idle.power_w)
            assert row["passes_cv_gate"] is passes is (d.cv_pct <= 2.0)
            assert row["wh_per_1k_tokens"] == pytest.approx(row["j_per_token_mean"] / 3.6)
            assert row["tokens_per_kwh"] == pytest.approx(3.6e6 / row["j_per_token_mean"])
            assert row["gpu_util_pct_mean"] == pytest.approx(sum(w.gpu_util_pct_mean or 0 for w in m.windows) / 6)
            assert row["cpu_per_wall"] == pytest.approx(0.99, abs=1e-5)
            assert (row["software_stack"], row["engine"]) == ("compiled-all", "transformers")
    assert measurements_frame(measurement_rows(steady)).height == 2


def test_measurement_without_windows_has_no_gate_verdict_and_unrecorded_cpu_is_null() -> None:
    sub = make_submission(18, precisions=("fp16", "nf4"))
    fp16, nf4 = sub.payload.measurements
    unrecorded = fp16.model_copy(
        update={"windows": [w.model_copy(update={"process_cpu_s": None}) for w in fp16.windows]}
    )
    failed = nf4.model_copy(update={"windows": [], "warmup": [], "error": "CUDA OOM"})
    sub = sub.model_copy(update={"payload": sub.payload.model_copy(update={"measurements": [unrecorded, failed]})})
    frame = measurements_frame(measurement_rows(sub))
    assert frame["cpu_per_wall"].to_list() == [None, None]
    assert frame["passes_cv_gate"].to_list() == [True, None]
