"""The flattened tables the publisher writes, and pandera (polars) models that check them.

``windows``: one row per window (warm-up windows included and flagged);
``measurements``: one row per submission x precision, with the figures of :func:`derive`;
``submissions``: one row per submission: contributor, hardware, software, workload, method, idle.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Optional

import pandera.polars as pa
import polars as pl

from ecocompute.schema.derive import derive, integral_diff_pct
from ecocompute.schema.models import ENGINE, Measurement, Submission, Window


class WindowsTable(pa.DataFrameModel):
    """One row per measured window; ``warmup`` rows were measured and discarded from every figure."""

    submission_id: str
    precision: str
    window_index: int = pa.Field(ge=0)
    warmup: bool
    started_at: Annotated[pl.Datetime, "us", "UTC"]
    duration_s: float = pa.Field(gt=0)
    energy_j: float = pa.Field(ge=0)
    energy_j_power_integrated: float = pa.Field(ge=0)
    integral_diff_pct: float = pa.Field(ge=0)
    tokens: int = pa.Field(ge=0)
    generate_calls: int = pa.Field(ge=1)
    j_per_token: Optional[float] = pa.Field(nullable=True)  # noqa: UP045 - pandera reads Optional
    static_j_per_token: Optional[float] = pa.Field(nullable=True)  # noqa: UP045
    dynamic_j_per_token: Optional[float] = pa.Field(nullable=True)  # noqa: UP045
    power_w_mean: float = pa.Field(ge=0)
    temp_c_start: float
    temp_c_end: float
    sm_clock_mhz_mean: float = pa.Field(ge=0)
    throttle_reasons: str
    gpu_util_pct_mean: Optional[float] = pa.Field(nullable=True, ge=0, le=100)  # noqa: UP045
    process_cpu_s: Optional[float] = pa.Field(nullable=True, ge=0)  # noqa: UP045
    host_steal_s: Optional[float] = pa.Field(nullable=True, ge=0)  # noqa: UP045
    delay_s: Optional[float] = pa.Field(nullable=True, ge=0)  # noqa: UP045
    power_samples: Optional[int] = pa.Field(nullable=True, ge=0)  # noqa: UP045
    other_gpu_processes: Optional[int] = pa.Field(nullable=True, ge=0)  # noqa: UP045
    power_limit_w: Optional[float] = pa.Field(nullable=True, gt=0)  # noqa: UP045
    recompiles: Optional[int] = pa.Field(nullable=True, ge=0)  # noqa: UP045
    host_others_busy_cpus: Optional[float] = pa.Field(nullable=True, ge=0)  # noqa: UP045

    class Config:
        """Reject unknown columns; coerce nothing silently."""

        strict = True
        unique = ["submission_id", "precision", "warmup", "window_index"]  # noqa: RUF012


class MeasurementsTable(pa.DataFrameModel):
    """One row per submission x precision with the derived figures and the keys analysis groups by."""

    submission_id: str
    gpu_name: str
    software_stack: str
    engine: str
    batch_size: int = pa.Field(ge=1)
    model_id: str
    architecture: str
    weights: str = pa.Field(isin=["pretrained", "random-init"])
    params_total: int = pa.Field(gt=0)
    prompt_tokens: int = pa.Field(ge=1)
    new_tokens: int = pa.Field(ge=1)
    precision: str
    quantization_json: Optional[str] = pa.Field(nullable=True)  # noqa: UP045
    error: Optional[str] = pa.Field(nullable=True)  # noqa: UP045
    compiled: Optional[bool] = pa.Field(nullable=True)  # noqa: UP045
    n_windows: int = pa.Field(ge=0)
    j_per_token_mean: Optional[float] = pa.Field(nullable=True, ge=0)  # noqa: UP045
    j_per_token_std: Optional[float] = pa.Field(nullable=True, ge=0)  # noqa: UP045
    cv_pct: Optional[float] = pa.Field(nullable=True, ge=0)  # noqa: UP045
    passes_cv_gate: Optional[bool] = pa.Field(nullable=True)  # noqa: UP045
    j_per_token_ci95_low: Optional[float] = pa.Field(nullable=True)  # noqa: UP045
    j_per_token_ci95_high: Optional[float] = pa.Field(nullable=True)  # noqa: UP045
    ci95_pct: Optional[float] = pa.Field(nullable=True, ge=0)  # noqa: UP045
    wh_per_1k_tokens: Optional[float] = pa.Field(nullable=True, ge=0)  # noqa: UP045
    tokens_per_kwh: Optional[float] = pa.Field(nullable=True, gt=0)  # noqa: UP045
    tokens_per_s: Optional[float] = pa.Field(nullable=True, ge=0)  # noqa: UP045
    power_w_mean: Optional[float] = pa.Field(nullable=True, ge=0)  # noqa: UP045
    gpu_util_pct_mean: Optional[float] = pa.Field(nullable=True, ge=0, le=100)  # noqa: UP045
    cpu_per_wall: Optional[float] = pa.Field(nullable=True, ge=0)  # noqa: UP045
    idle_power_w: float = pa.Field(ge=0)
    static_j_per_token: Optional[float] = pa.Field(nullable=True)  # noqa: UP045
    dynamic_j_per_token: Optional[float] = pa.Field(nullable=True)  # noqa: UP045
    dynamic_cv_pct: Optional[float] = pa.Field(nullable=True, ge=0)  # noqa: UP045
    integral_diff_pct_max: Optional[float] = pa.Field(nullable=True, ge=0)  # noqa: UP045
    perplexity: Optional[float] = pa.Field(nullable=True, gt=0)  # noqa: UP045

    class Config:
        """Reject unknown columns; one row per submission and precision."""

        strict = True
        unique = ["submission_id", "precision"]  # noqa: RUF012


class SubmissionsTable(pa.DataFrameModel):
    """One row per submission: who, on what, with which software, measuring what, and how."""

    submission_id: str = pa.Field(unique=True)
    created_at: Annotated[pl.Datetime, "us", "UTC"]
    content_sha256: str = pa.Field(str_matches=r"^[0-9a-f]{64}$")
    is_example: bool
    contributor_github: str
    signer: Optional[str] = pa.Field(nullable=True)  # noqa: UP045
    key_fingerprint: Optional[str] = pa.Field(nullable=True)  # noqa: UP045
    collector_version: str
    collector_git_sha: Optional[str] = pa.Field(nullable=True)  # noqa: UP045
    gpu_name: str
    gpu_arch: str
    compute_capability: str
    gpu_count: int
    memory_total_mib: int
    power_limit_w: float
    default_power_limit_w: float
    driver_version: str
    vbios_version: str
    gpu_uuid_sha256: str
    persistence_mode: bool
    mig_mode: bool
    clocks_locked: bool
    cpu_model: str
    cpu_count: int
    host_os: str
    software_python: str
    software_torch: str
    software_cuda_runtime: Optional[str] = pa.Field(nullable=True)  # noqa: UP045
    software_transformers: str
    software_bitsandbytes: Optional[str] = pa.Field(nullable=True)  # noqa: UP045
    software_accelerate: Optional[str] = pa.Field(nullable=True)  # noqa: UP045
    software_nvml: str
    model_id: str
    model_revision: Optional[str] = pa.Field(nullable=True)  # noqa: UP045
    weights: str
    architecture: str
    params_total: int
    batch_size: int
    prompt_tokens: int
    new_tokens: int
    decoding: str
    software_stack: str
    method_power_sampling_hz: float
    method_window_min_s: float
    method_warmup_windows: int
    method_min_windows: int
    method_max_windows: int
    method_target_ci_pct: float
    method_order: str
    method_allow_shared: bool
    idle_power_w_before: float
    idle_power_w_after: float
    idle_duration_s: float

    class Config:
        """Reject unknown columns."""

        strict = True


def _window_row(sub_id: str, m: Measurement, w: Window, warmup: bool, idle_w: float) -> dict[str, Any]:
    jpt = w.energy_j / w.tokens if w.tokens else None
    static = idle_w * w.duration_s / w.tokens if w.tokens else None
    return {
        "submission_id": sub_id,
        "precision": m.precision.value,
        "window_index": w.index,
        "warmup": warmup,
        "started_at": w.started_at,
        "duration_s": w.duration_s,
        "energy_j": w.energy_j,
        "energy_j_power_integrated": w.energy_j_power_integrated,
        "integral_diff_pct": integral_diff_pct(w),
        "tokens": w.tokens,
        "generate_calls": w.generate_calls,
        "j_per_token": jpt,
        "static_j_per_token": static,
        "dynamic_j_per_token": None if jpt is None or static is None else jpt - static,
        "power_w_mean": w.energy_j / w.duration_s,
        "temp_c_start": w.temp_c_start,
        "temp_c_end": w.temp_c_end,
        "sm_clock_mhz_mean": w.sm_clock_mhz_mean,
        "throttle_reasons": ",".join(w.throttle_reasons),
        "gpu_util_pct_mean": w.gpu_util_pct_mean,
        "process_cpu_s": w.process_cpu_s,
        "host_steal_s": w.host_steal_s,
        "delay_s": w.delay_s,
        "power_samples": w.power_samples,
        "other_gpu_processes": w.other_gpu_processes,
        "power_limit_w": w.power_limit_w,
        "recompiles": w.recompiles,
        "host_others_busy_cpus": w.host_others_busy_cpus,
    }


def window_rows(sub: Submission) -> list[dict[str, Any]]:
    """Rows of the ``windows`` table for one submission."""
    p = sub.payload
    idle_w = p.idle.power_w
    rows = []
    for m in p.measurements:
        rows += [_window_row(p.submission_id, m, w, True, idle_w) for w in m.warmup]
        rows += [_window_row(p.submission_id, m, w, False, idle_w) for w in m.windows]
    return rows


def measurement_rows(sub: Submission) -> list[dict[str, Any]]:
    """Rows of the ``measurements`` table for one submission."""
    p = sub.payload
    keys = {
        "submission_id": p.submission_id,
        "gpu_name": p.hardware.gpu_name,
        "software_stack": p.workload.stack.value,
        "engine": ENGINE,
        "batch_size": p.workload.batch_size,
        "model_id": p.workload.model_id,
        "architecture": p.workload.architecture,
        "weights": p.workload.weights,
        "params_total": p.workload.params_total,
        "prompt_tokens": p.workload.prompt_tokens,
        "new_tokens": p.workload.new_tokens,
    }
    rows = []
    for m in p.measurements:
        row: dict[str, Any] = {
            **keys,
            "precision": m.precision.value,
            "quantization_json": None if m.quantization is None else json.dumps(m.quantization, sort_keys=True),
            "error": m.error,
            "compiled": m.compiled,
            "n_windows": len(m.windows),
            "idle_power_w": p.idle.power_w,
            "perplexity": m.quality.perplexity if m.quality else None,
        }
        row.update(_derived_columns(m, p.idle.power_w))
        rows.append(row)
    return rows


def _derived_columns(m: Measurement, idle_w: float) -> dict[str, float | None]:
    names = (
        "j_per_token_mean", "j_per_token_std", "cv_pct", "passes_cv_gate", "j_per_token_ci95_low",
        "j_per_token_ci95_high", "ci95_pct", "wh_per_1k_tokens", "tokens_per_kwh", "tokens_per_s", "power_w_mean",
        "gpu_util_pct_mean", "cpu_per_wall", "static_j_per_token", "dynamic_j_per_token", "dynamic_cv_pct",
        "integral_diff_pct_max",
    )  # fmt: skip
    if not m.windows:
        return dict.fromkeys(names)
    d = derive(m.windows, idle_w)
    low, high = d.ci95_j_per_token or (None, None)
    return {
        "j_per_token_mean": d.j_per_token_mean,
        "j_per_token_std": d.j_per_token_std,
        "cv_pct": d.cv_pct,
        "passes_cv_gate": d.passes_cv_gate,
        "j_per_token_ci95_low": low,
        "j_per_token_ci95_high": high,
        "ci95_pct": d.ci95_pct,
        "wh_per_1k_tokens": d.wh_per_1k_tokens,
        "tokens_per_kwh": d.tokens_per_kwh,
        "tokens_per_s": d.tokens_per_s,
        "power_w_mean": d.power_w_mean,
        "gpu_util_pct_mean": d.gpu_util_pct_mean,
        "cpu_per_wall": d.cpu_per_wall,
        "static_j_per_token": d.static_j_per_token_mean,
        "dynamic_j_per_token": d.dynamic_j_per_token_mean,
        "dynamic_cv_pct": d.dynamic_cv_pct,
        "integral_diff_pct_max": d.integral_diff_pct_max,
    }


def submission_row(sub: Submission, content_sha256: str) -> dict[str, Any]:
    """The row of the ``submissions`` table for one submission."""
    p = sub.payload
    hw = p.hardware.model_dump(exclude={"memory_host_mib"})
    wl = p.workload.model_dump(exclude={"prompt_sha256", "attn_implementation"})
    wl["software_stack"] = wl.pop("stack").value
    sw = p.software.model_dump(exclude={"nvidia_ml_py"})
    method = p.method.model_dump(
        include={"power_sampling_hz", "window_min_s", "warmup_windows", "min_windows", "max_windows",
                 "target_ci_pct", "order", "allow_shared"}
    )  # fmt: skip
    return {
        "submission_id": p.submission_id,
        "created_at": p.created_at,
        "content_sha256": content_sha256,
        "is_example": p.example,
        "contributor_github": p.contributor.github,
        "signer": sub.signature.signer if sub.signature else None,
        "key_fingerprint": sub.signature.key_fingerprint if sub.signature else None,
        "collector_version": p.collector.version,
        "collector_git_sha": p.collector.git_sha,
        **hw,
        **{f"software_{k}": v for k, v in sw.items()},
        **wl,
        **{f"method_{k}": v for k, v in method.items()},
        "idle_power_w_before": p.idle.power_w_before,
        "idle_power_w_after": p.idle.power_w_after,
        "idle_duration_s": p.idle.duration_s,
    }


def _frame(rows: list[dict[str, Any]], model: type[pa.DataFrameModel]) -> pl.DataFrame:
    schema = model.to_schema()
    columns = list(schema.columns)
    dtypes = {name: col.dtype.type for name, col in schema.columns.items()}
    frame = pl.DataFrame(rows, schema=dtypes, orient="row") if rows else pl.DataFrame(schema=dtypes)
    return model.validate(frame.select(columns))


def windows_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """A checked ``windows`` table from its rows."""
    return _frame(rows, WindowsTable)


def measurements_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """A checked ``measurements`` table from its rows."""
    return _frame(rows, MeasurementsTable)


def submissions_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """A checked ``submissions`` table from its rows."""
    return _frame(rows, SubmissionsTable)
