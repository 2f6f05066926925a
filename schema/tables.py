"""The flattened tables the publisher writes, and pandera (polars) models that check them.

``windows``: one row per window (warm-up windows included and flagged);
``measurements``: one row per submission x precision, with the figures of :func:`derive`;
``submissions``: one row per submission: contributor, hardware, software, workload, method, idle.

Each column names where it comes from: :func:`recorded` (a field of the submission's models, whose description
and unit it takes) or :func:`derived` (a figure of :mod:`ecocompute.schema.derive`, likewise). The publisher's
column docs and the card's column table are :func:`column_docs` of these models.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Optional

import pandera.polars as pa
import polars as pl
from pydantic import BaseModel

from ecocompute.schema.derive import Derived, WindowFigures, derive, figure_doc, window_figures
from ecocompute.schema.models import (
    ENGINE,
    VENDOR,
    CollectorInfo,
    Contributor,
    Hardware,
    Idle,
    Measurement,
    Method,
    Payload,
    Quality,
    Signature,
    Software,
    Submission,
    Window,
    Workload,
    description_of,
    unit_of,
)


def recorded(model: type[BaseModel], name: str, *, note: str = "", **checks: Any) -> Any:
    """A column copied from field ``name`` of ``model``: its description and unit come from the model."""
    meta = {"basis": "recorded", "unit": unit_of(model, name), "source": f"{model.__name__}.{name}"}
    return pa.Field(description=description_of(model, name) + note, metadata=meta, **checks)


def derived(figures: type[WindowFigures | Derived], name: str, **checks: Any) -> Any:
    """A column holding figure ``name`` of :func:`window_figures` or :func:`derive`, described there."""
    description, unit = figure_doc(figures, name)
    meta = {"basis": "derived", "unit": unit, "source": f"{figures.__name__}.{name}"}
    return pa.Field(description=description, metadata=meta, **checks)


def table_only(basis: str, description: str, **checks: Any) -> Any:
    """A column that no model field or figure holds (a flag or hash the publisher adds)."""
    return pa.Field(description=description, metadata={"basis": basis, "unit": None, "source": None}, **checks)


def column_docs(model: type[pa.DataFrameModel]) -> dict[str, str]:
    """``name -> "<basis>[, <unit>]: <description>"`` for every column of a table model, in column order."""
    docs = {}
    for name, column in model.to_schema().columns.items():
        meta = column.metadata or {}
        unit = f", {meta['unit']}" if meta.get("unit") else ""
        docs[name] = f"{meta.get('basis', 'recorded')}{unit}: {column.description}"
    return docs


class WindowsTable(pa.DataFrameModel):
    """One row per measured window; ``warmup`` rows were measured and discarded from every figure."""

    submission_id: str = recorded(Payload, "submission_id")
    precision: str = recorded(Measurement, "precision")
    window_index: int = recorded(Window, "index", ge=0)
    warmup: bool = table_only("recorded", "true for a warm-up window, measured and left out of every figure")
    started_at: Annotated[pl.Datetime, "us", "UTC"] = recorded(Window, "started_at")
    duration_s: float = recorded(Window, "duration_s", gt=0)
    energy_j: float = recorded(Window, "energy_j", ge=0)
    energy_j_power_integrated: float = recorded(Window, "energy_j_power_integrated", ge=0)
    integral_diff_pct: float = derived(WindowFigures, "integral_diff_pct", ge=0)
    tokens: int = recorded(Window, "tokens", ge=0)
    generate_calls: int = recorded(Window, "generate_calls", ge=1)
    j_per_token: Optional[float] = derived(WindowFigures, "j_per_token", nullable=True)  # noqa: UP045 - pandera reads Optional
    static_j_per_token: Optional[float] = derived(WindowFigures, "static_j_per_token", nullable=True)  # noqa: UP045
    dynamic_j_per_token: Optional[float] = derived(WindowFigures, "dynamic_j_per_token", nullable=True)  # noqa: UP045
    power_w_mean: float = derived(WindowFigures, "power_w_mean", ge=0)
    temp_c_start: Optional[float] = recorded(Window, "temp_c_start", nullable=True)  # noqa: UP045
    temp_c_end: Optional[float] = recorded(Window, "temp_c_end", nullable=True)  # noqa: UP045
    sm_clock_mhz_mean: Optional[float] = recorded(Window, "sm_clock_mhz_mean", nullable=True, ge=0)  # noqa: UP045
    throttle_reasons: Optional[str] = recorded(Window, "throttle_reasons", nullable=True, note=", comma-separated")  # noqa: UP045
    gpu_util_pct_mean: Optional[float] = recorded(Window, "gpu_util_pct_mean", nullable=True, ge=0, le=100)  # noqa: UP045
    process_cpu_s: Optional[float] = recorded(Window, "process_cpu_s", nullable=True, ge=0)  # noqa: UP045
    host_steal_s: Optional[float] = recorded(Window, "host_steal_s", nullable=True, ge=0)  # noqa: UP045
    delay_s: Optional[float] = recorded(Window, "delay_s", nullable=True, ge=0)  # noqa: UP045
    power_samples: Optional[int] = recorded(Window, "power_samples", nullable=True, ge=0)  # noqa: UP045
    other_gpu_processes: Optional[int] = recorded(Window, "other_gpu_processes", nullable=True, ge=0)  # noqa: UP045
    power_limit_w: Optional[float] = recorded(Window, "power_limit_w", nullable=True, gt=0)  # noqa: UP045
    recompiles: Optional[int] = recorded(Window, "recompiles", nullable=True, ge=0)  # noqa: UP045
    host_others_busy_cpus: Optional[float] = recorded(Window, "host_others_busy_cpus", nullable=True, ge=0)  # noqa: UP045

    class Config:
        """Reject unknown columns; coerce nothing silently."""

        strict = True
        unique = ["submission_id", "precision", "warmup", "window_index"]  # noqa: RUF012


class MeasurementsTable(pa.DataFrameModel):
    """One row per submission x precision with the derived figures and the keys analysis groups by."""

    submission_id: str = recorded(Payload, "submission_id")
    gpu_name: str = recorded(Hardware, "gpu_name")
    software_stack: str = recorded(Workload, "stack")
    engine: str = recorded(Workload, "engine", note=f"; {ENGINE} where null")
    gpu_vendor: str = recorded(Hardware, "vendor", note=f"; {VENDOR} where null", isin=["nvidia", "amd"])
    energy_source: str = recorded(Method, "energy_source")
    batch_size: int = recorded(Workload, "batch_size", ge=1)
    model_id: str = recorded(Workload, "model_id")
    architecture: str = recorded(Workload, "architecture")
    weights: str = recorded(Workload, "weights", isin=["pretrained", "random-init"])
    params_total: int = recorded(Workload, "params_total", gt=0)
    prompt_tokens: int = recorded(Workload, "prompt_tokens", ge=1)
    new_tokens: int = recorded(Workload, "new_tokens", ge=1)
    precision: str = recorded(Measurement, "precision")
    quantization_json: Optional[str] = recorded(Measurement, "quantization", note=", as JSON", nullable=True)  # noqa: UP045
    error: Optional[str] = recorded(Measurement, "error", nullable=True)  # noqa: UP045
    compiled: Optional[bool] = recorded(Measurement, "compiled", nullable=True)  # noqa: UP045
    quantization_type: Optional[str] = recorded(Measurement, "quantization_type", nullable=True)  # noqa: UP045
    n_windows: int = derived(Derived, "n_windows", ge=0)
    j_per_token_mean: Optional[float] = derived(Derived, "j_per_token_mean", nullable=True, ge=0)  # noqa: UP045
    j_per_token_std: Optional[float] = derived(Derived, "j_per_token_std", nullable=True, ge=0)  # noqa: UP045
    cv_pct: Optional[float] = derived(Derived, "cv_pct", nullable=True, ge=0)  # noqa: UP045
    passes_cv_gate: Optional[bool] = derived(Derived, "passes_cv_gate", nullable=True)  # noqa: UP045
    j_per_token_ci95_low: Optional[float] = derived(Derived, "j_per_token_ci95_low", nullable=True)  # noqa: UP045
    j_per_token_ci95_high: Optional[float] = derived(Derived, "j_per_token_ci95_high", nullable=True)  # noqa: UP045
    ci95_pct: Optional[float] = derived(Derived, "ci95_pct", nullable=True, ge=0)  # noqa: UP045
    wh_per_1k_tokens: Optional[float] = derived(Derived, "wh_per_1k_tokens", nullable=True, ge=0)  # noqa: UP045
    tokens_per_kwh: Optional[float] = derived(Derived, "tokens_per_kwh", nullable=True, gt=0)  # noqa: UP045
    tokens_per_s: Optional[float] = derived(Derived, "tokens_per_s", nullable=True, ge=0)  # noqa: UP045
    power_w_mean: Optional[float] = derived(Derived, "power_w_mean", nullable=True, ge=0)  # noqa: UP045
    gpu_util_pct_mean: Optional[float] = derived(Derived, "gpu_util_pct_mean", nullable=True, ge=0, le=100)  # noqa: UP045
    cpu_per_wall: Optional[float] = derived(Derived, "cpu_per_wall", nullable=True, ge=0)  # noqa: UP045
    idle_power_w: float = derived(Derived, "idle_power_w", ge=0)
    static_j_per_token: Optional[float] = derived(Derived, "static_j_per_token_mean", nullable=True)  # noqa: UP045
    dynamic_j_per_token: Optional[float] = derived(Derived, "dynamic_j_per_token_mean", nullable=True)  # noqa: UP045
    dynamic_cv_pct: Optional[float] = derived(Derived, "dynamic_cv_pct", nullable=True, ge=0)  # noqa: UP045
    integral_diff_pct_max: Optional[float] = derived(Derived, "integral_diff_pct_max", nullable=True, ge=0)  # noqa: UP045
    perplexity: Optional[float] = recorded(Quality, "perplexity", note=" (null: not measured)", nullable=True, gt=0)  # noqa: UP045

    class Config:
        """Reject unknown columns; one row per submission and precision."""

        strict = True
        unique = ["submission_id", "precision"]  # noqa: RUF012


class SubmissionsTable(pa.DataFrameModel):
    """One row per submission: who, on what, with which software, measuring what, and how."""

    submission_id: str = recorded(Payload, "submission_id", note=", unique", unique=True)
    created_at: Annotated[pl.Datetime, "us", "UTC"] = recorded(Payload, "created_at")
    content_sha256: str = table_only(
        "derived", "SHA-256 of the submission file's bytes as committed (see MANIFEST.json)",
        str_matches=r"^[0-9a-f]{64}$",
    )  # fmt: skip
    is_example: bool = recorded(Payload, "example", note=" (only in builds made with --include-examples)")
    contributor_github: str = recorded(Contributor, "github")
    signer: Optional[str] = recorded(Signature, "signer", note=" (verified)", nullable=True)  # noqa: UP045
    key_fingerprint: Optional[str] = recorded(Signature, "key_fingerprint", note=" (verified)", nullable=True)  # noqa: UP045
    collector_version: str = recorded(CollectorInfo, "version")
    collector_git_sha: Optional[str] = recorded(CollectorInfo, "git_sha", nullable=True)  # noqa: UP045
    gpu_name: str = recorded(Hardware, "gpu_name")
    gpu_vendor: str = recorded(Hardware, "vendor", note=f"; {VENDOR} where null", isin=["nvidia", "amd"])
    gpu_arch: str = recorded(Hardware, "gpu_arch")
    compute_capability: str = recorded(Hardware, "compute_capability")
    gpu_count: int = recorded(Hardware, "gpu_count")
    memory_total_mib: int = recorded(Hardware, "memory_total_mib")
    power_limit_w: Optional[float] = recorded(Hardware, "power_limit_w", nullable=True, gt=0)  # noqa: UP045
    default_power_limit_w: Optional[float] = recorded(Hardware, "default_power_limit_w", nullable=True, gt=0)  # noqa: UP045
    driver_version: str = recorded(Hardware, "driver_version")
    vbios_version: str = recorded(Hardware, "vbios_version")
    gpu_uuid_sha256: str = recorded(Hardware, "gpu_uuid_sha256")
    persistence_mode: bool = recorded(Hardware, "persistence_mode")
    mig_mode: bool = recorded(Hardware, "mig_mode")
    clocks_locked: bool = recorded(Hardware, "clocks_locked")
    cpu_model: str = recorded(Hardware, "cpu_model")
    cpu_count: int = recorded(Hardware, "cpu_count")
    host_os: str = recorded(Hardware, "host_os")
    software_python: str = recorded(Software, "python")
    software_torch: str = recorded(Software, "torch")
    software_cuda_runtime: Optional[str] = recorded(Software, "cuda_runtime", nullable=True)  # noqa: UP045
    software_transformers: str = recorded(Software, "transformers")
    software_bitsandbytes: Optional[str] = recorded(Software, "bitsandbytes", nullable=True)  # noqa: UP045
    software_accelerate: Optional[str] = recorded(Software, "accelerate", nullable=True)  # noqa: UP045
    software_nvml: str = recorded(Software, "nvml")
    model_id: str = recorded(Workload, "model_id")
    model_revision: Optional[str] = recorded(Workload, "model_revision", nullable=True)  # noqa: UP045
    weights: str = recorded(Workload, "weights")
    architecture: str = recorded(Workload, "architecture")
    params_total: int = recorded(Workload, "params_total")
    batch_size: int = recorded(Workload, "batch_size")
    prompt_tokens: int = recorded(Workload, "prompt_tokens")
    new_tokens: int = recorded(Workload, "new_tokens")
    decoding: str = recorded(Workload, "decoding")
    software_stack: str = recorded(Workload, "stack")
    engine: str = recorded(Workload, "engine", note=f"; {ENGINE} where null")
    engine_version: Optional[str] = recorded(Workload, "engine_version", nullable=True)  # noqa: UP045
    engine_build_flags_json: Optional[str] = recorded(  # noqa: UP045
        Workload, "engine_build_flags", note=", as JSON", nullable=True
    )
    method_energy_source: str = recorded(Method, "energy_source")
    method_counter_absent_reason: Optional[str] = recorded(Method, "counter_absent_reason", nullable=True)  # noqa: UP045
    method_power_sampling_hz: float = recorded(Method, "power_sampling_hz")
    method_window_min_s: float = recorded(Method, "window_min_s")
    method_warmup_windows: int = recorded(Method, "warmup_windows")
    method_min_windows: int = recorded(Method, "min_windows")
    method_max_windows: int = recorded(Method, "max_windows")
    method_target_ci_pct: float = recorded(Method, "target_ci_pct")
    method_order: str = recorded(Method, "order")
    method_allow_shared: bool = recorded(Method, "allow_shared")
    idle_power_w_before: float = recorded(Idle, "power_w_before")
    idle_power_w_after: float = recorded(Idle, "power_w_after")
    idle_duration_s: float = recorded(Idle, "duration_s")

    class Config:
        """Reject unknown columns."""

        strict = True


TABLE_MODELS: dict[str, type[pa.DataFrameModel]] = {
    "windows": WindowsTable,
    "measurements": MeasurementsTable,
    "submissions": SubmissionsTable,
}
"""The three tables by name (the dataset's default configs), in the order the card lists them."""
TABLES = tuple(TABLE_MODELS)


def _window_row(sub_id: str, m: Measurement, w: Window, warmup: bool, idle_w: float) -> dict[str, Any]:
    figures = window_figures(w, idle_w)
    return {
        "submission_id": sub_id,
        "precision": m.precision.value,
        "window_index": w.index,
        "warmup": warmup,
        "started_at": w.started_at,
        "duration_s": w.duration_s,
        "energy_j": w.energy_j,
        "energy_j_power_integrated": w.energy_j_power_integrated,
        "integral_diff_pct": figures.integral_diff_pct,
        "tokens": w.tokens,
        "generate_calls": w.generate_calls,
        "j_per_token": figures.j_per_token,
        "static_j_per_token": figures.static_j_per_token,
        "dynamic_j_per_token": figures.dynamic_j_per_token,
        "power_w_mean": figures.power_w_mean,
        "temp_c_start": w.temp_c_start,
        "temp_c_end": w.temp_c_end,
        "sm_clock_mhz_mean": w.sm_clock_mhz_mean,
        "throttle_reasons": None if w.throttle_reasons is None else ",".join(w.throttle_reasons),
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


def engine_of(sub: Submission) -> str:
    """The submission's inference engine: its workload's, or :data:`ENGINE` for files that name none."""
    return sub.payload.workload.engine or ENGINE


def vendor_of(sub: Submission) -> str:
    """The submission's GPU vendor: its hardware's, or :data:`VENDOR` for files that name none."""
    return sub.payload.hardware.vendor or VENDOR


def measurement_rows(sub: Submission) -> list[dict[str, Any]]:
    """Rows of the ``measurements`` table for one submission."""
    p = sub.payload
    keys = {
        "submission_id": p.submission_id,
        "gpu_name": p.hardware.gpu_name,
        "software_stack": p.workload.stack.value,
        "engine": engine_of(sub),
        "gpu_vendor": vendor_of(sub),
        "energy_source": p.method.energy_source,
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
            "quantization_type": m.quantization_type,
            "n_windows": len(m.windows),
            "idle_power_w": p.idle.power_w,
            "perplexity": m.quality.perplexity if m.quality else None,
        }
        row.update(_derived_columns(m, p.idle.power_w))
        rows.append(row)
    return rows


def _derived_columns(m: Measurement, idle_w: float) -> dict[str, Any]:
    """The measurement's figures of :func:`derive`, by column (null without windows)."""
    if not m.windows:
        return dict.fromkeys(DERIVED_COLUMNS)
    d = derive(m.windows, idle_w)
    return {column: getattr(d, figure) for column, figure in DERIVED_COLUMNS.items()}


DERIVED_COLUMNS = {
    name: column.metadata["source"].split(".", 1)[1]
    for name, column in MeasurementsTable.to_schema().columns.items()
    if column.metadata
    and (column.metadata["source"] or "").startswith("Derived.")
    and name not in ("n_windows", "idle_power_w")
}
"""``measurements`` column -> the :class:`Derived` figure it holds; ``n_windows`` (0 without windows) and
``idle_power_w`` are set on every row, errored ones too."""


def submission_row(sub: Submission, content_sha256: str) -> dict[str, Any]:
    """The row of the ``submissions`` table for one submission."""
    p = sub.payload
    hw = p.hardware.model_dump(exclude={"memory_host_mib", "vendor"})
    wl = p.workload.model_dump(exclude={"prompt_sha256", "attn_implementation", "engine", "engine_build_flags"})
    wl["software_stack"] = wl.pop("stack").value
    flags = p.workload.engine_build_flags
    wl["engine"] = engine_of(sub)
    wl["engine_build_flags_json"] = None if flags is None else json.dumps(flags, sort_keys=True)
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
        "gpu_vendor": vendor_of(sub),
        **hw,
        **{f"software_{k}": v for k, v in sw.items()},
        **wl,
        **{f"method_{k}": v for k, v in method.items()},
        "method_energy_source": p.method.energy_source,
        "method_counter_absent_reason": p.method.counter_absent_reason,
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
