"""``ecocompute import``: reports of the seed's measurement container (``ecocompute-energy/1.x``) -> literature runs.

A report is checked against the seed's own schema (``data/mlcube_energy.schema.json``), must say it measured
(``results.basis: measured``) and carry its FP16 baseline from the same run; it becomes one run of the literature
tier (``source: published``), never a measurement: the validator did not recompute it and it has no windows.
"""

from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path
from typing import Any

from ecocompute.schema.errors import UsageError

Run = dict[str, Any]
ILLUSTRATIVE_MARKERS = ("illustrative", "synthetic")


def report_schema() -> dict[str, Any]:
    """The seed's report schema, as shipped."""
    text = resources.files("ecocompute.estimate").joinpath("data", "mlcube_energy.schema.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def check_report(report: Any, where: str) -> None:
    """UsageError listing every schema violation of ``report`` (and a schema version other than 1.x)."""
    try:
        from jsonschema import Draft7Validator  # type: ignore[import-untyped]
    except ImportError as exc:  # pragma: no cover - jsonschema ships with the [literature] and [dev] extras
        raise UsageError("ecocompute import needs jsonschema: pip install 'ecocompute[literature]'") from exc
    errors = sorted(Draft7Validator(report_schema()).iter_errors(report), key=lambda e: list(e.absolute_path))
    if errors:
        lines = "; ".join(f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}" for e in errors[:5])
        raise UsageError(f"{where} is not an ecocompute-energy report: {lines}")
    if not str(report["schema_version"]).startswith("ecocompute-energy/1."):
        raise UsageError(f"{where} has schema_version {report['schema_version']!r}; ecocompute-energy/1.x is read")


def report_run(report: dict[str, Any], where: str, *, allow_illustrative: bool = False) -> Run:
    """One checked report as a literature run; UsageError saying what it lacks."""
    check_report(report, where)
    results, workload, sut = report["results"], report["workload"], report["system_under_test"]
    marked = " ".join(str(x) for x in (report.get("measurement_source"), results.get("note"))).lower()
    if not allow_illustrative and any(m in marked for m in ILLUSTRATIVE_MARKERS):
        raise UsageError(f"{where} says it is illustrative (synthetic) values, not a measurement: not imported")
    if results["basis"] != "measured":
        raise UsageError(f"{where}: results.basis is {results['basis']!r}; only measured reports are imported")
    if workload["precision"] == "FP16":
        raise UsageError(f"{where} is an FP16 run: import the quantized run, which carries its FP16 baseline")
    quant, fp16 = results.get("energy_per_token_mj"), results.get("fp16_energy_per_token_mj")
    if fp16 is None and quant is not None and results.get("vs_fp16_energy_pct") is not None:
        fp16 = quant / (1 + results["vs_fp16_energy_pct"] / 100)
    if quant is None or fp16 is None or workload.get("params_b") is None:
        raise UsageError(f"{where} lacks energy_per_token_mj, its FP16 baseline or workload.params_b: not imported")
    quality = report.get("quality") or {}
    return {
        "source": "published", "gpu": sut["gpu"], "arch": sut["gpu_arch"].lower(), "engine": "transformers",
        "stack": "eager", "batch_size": workload["batch_size"], "prompt_tokens": None,
        "new_tokens": report["measurement"].get("tokens_per_run"), "precision": workload["precision"].lower(),
        "weights": "pretrained", "session": f"import:{sut['gpu']}:{str(report.get('timestamp_utc', ''))[:10]}",
        "params_b": float(workload["params_b"]), "model": workload["model_name"], "y": math.log(quant / fp16),
        "w": 0.0, "j_q": quant / 1000, "j_b": fp16 / 1000, "passes_cv_gate": None, "submission_id": None,
        "created_at": None, "doi": None, "quality_pct": quality.get("delta_vs_fp16_pct"),
        "source_file": Path(where).name, "replicate": "",
    }  # fmt: skip


def import_reports(artifact: dict[str, Any], paths: list[Path], *, allow_illustrative: bool = False) -> dict[str, Any]:
    """A new artifact: ``artifact``'s runs plus one literature run per report (every report checked first)."""
    from ecocompute.estimate.build import artifact_from_runs

    new = []
    for path in paths:
        try:
            report = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise UsageError(f"cannot read {path}: {exc}") from exc
        new.append(report_run(report, str(path), allow_illustrative=allow_illustrative))
    dataset = {**artifact["dataset"], "imported": [*artifact["dataset"].get("imported", []),
                                                   *(p.name for p in paths)]}  # fmt: skip
    return artifact_from_runs([*artifact["runs"], *new], dataset)
