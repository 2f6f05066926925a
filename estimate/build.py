"""Build the estimator's artifact: the dataset's tables (and the literature tier) -> one versioned JSON file.

The artifact holds the evidence as *runs* (one quantized-vs-FP16 pair of one submission, or one published row),
grouped by card x engine x stack x batch x workload length x precision x weights (x session for published rows),
each group's cells (one per model size) and fits, the variance terms every answer uses (estimated here, from the
data), and each group's crossover. :func:`artifact_from_runs` is the one place all of it is computed; the engine
only reads. A run's change is against its own submission's FP16, so of its own inference engine; no variance term
pairs groups of two engines, and rows from tables before engines (and the literature tier) are transformers'.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from ecocompute.analysis.frames import with_engine
from ecocompute.estimate.artifact import SCHEMA_VERSION, gpu_table
from ecocompute.estimate.engine import Z95, group_predict, nearest
from ecocompute.estimate.fits import group_fits
from ecocompute.estimate.literature import literature_runs
from ecocompute.estimate.models import ENGINE
from ecocompute.schema.derive import CV_GATE_PCT

Run = dict[str, Any]
SIZE_TOL_LN = 0.05  # sizes within 5% are one cell: a 7.62B question is the 7.62B cell, 7B is not
GATE_CV_PCT = CV_GATE_PCT  # the validator's gate, until the tables carry passes_cv_gate
GRID = 241
FLOOR_VAR = 1e-8
GROUP_KEYS = ("source", "gpu", "arch", "engine", "stack", "batch_size", "prompt_tokens", "new_tokens", "precision",
              "weights", "session")  # fmt: skip


def _stack_column(frame: pl.DataFrame) -> str:
    return "software_stack" if "software_stack" in frame.columns else "stack"


def _canonical_gpu(name: str) -> str:
    wanted = " ".join(name.lower().split())
    for gpu in gpu_table():
        if wanted == gpu["name"].lower() or wanted in gpu["aliases"]:
            return str(gpu["name"])
    return name


def measured_runs(measurements: pl.DataFrame, submissions: pl.DataFrame) -> list[Run]:
    """One run per submission x non-FP16 precision: the log ratio to the same submission's FP16 and its variance."""
    stack = _stack_column(measurements)
    usable = measurements.filter(
        pl.col("error").is_null() & (pl.col("n_windows") > 0) & pl.col("j_per_token_mean").is_not_null()
    )
    usable = with_engine(usable)
    if "passes_cv_gate" not in usable.columns:
        usable = usable.with_columns((pl.col("cv_pct") < GATE_CV_PCT).alias("passes_cv_gate"))
    archs = dict(submissions.select("submission_id", "gpu_arch").iter_rows())
    created = {sid: at.isoformat() if hasattr(at, "isoformat") else str(at)
               for sid, at in submissions.select("submission_id", "created_at").iter_rows()}  # fmt: skip
    base = usable.filter(pl.col("precision") == "fp16")
    by_id = {(row["submission_id"], row["engine"]): row for row in base.iter_rows(named=True)}
    runs = []
    for row in usable.filter(pl.col("precision") != "fp16").sort("submission_id", "precision").iter_rows(named=True):
        fp16 = by_id.get((row["submission_id"], row["engine"]))
        if fp16 is None:
            continue
        jq, jb = row["j_per_token_mean"], fp16["j_per_token_mean"]
        w = sum(((r["j_per_token_std"] or 0.0) / r["j_per_token_mean"]) ** 2 / r["n_windows"] for r in (row, fp16))
        runs.append({
            "source": "measured", "gpu": _canonical_gpu(row["gpu_name"]), "arch": archs[row["submission_id"]],
            "engine": row["engine"], "stack": row[stack], "batch_size": row["batch_size"],
            "prompt_tokens": row["prompt_tokens"], "new_tokens": row["new_tokens"], "precision": row["precision"],
            "weights": row["weights"],
            "session": None, "params_b": row["params_total"] / 1e9, "model": row["model_id"],
            "y": math.log(jq / jb), "w": w, "j_q": jq, "j_b": jb,
            "tps_q": row.get("tokens_per_s"), "tps_b": fp16.get("tokens_per_s"),
            "passes_cv_gate": bool(row["passes_cv_gate"] and fp16["passes_cv_gate"]),
            "submission_id": row["submission_id"], "created_at": created.get(row["submission_id"]),
            "doi": None, "quality_pct": _quality(row, fp16),
        })  # fmt: skip
    return runs


def _quality(row: dict[str, Any], fp16: dict[str, Any]) -> float | None:
    if row.get("perplexity") is None or fp16.get("perplexity") is None:
        return None
    return float(100 * (row["perplexity"] / fp16["perplexity"] - 1))


def _key(run: Run) -> tuple[Any, ...]:
    return tuple(run[k] for k in GROUP_KEYS)


def pooled_tau2(groups: Iterable[list[list[Run]]]) -> tuple[float, int]:
    """Spread between runs of one cell beyond their window noise, pooled over every cell with two runs or more."""
    excess, dof = 0.0, 0
    for cells in groups:
        for runs in cells:
            if len(runs) < 2:
                continue
            ys = [r["y"] for r in runs]
            mean = sum(ys) / len(ys)
            s2 = sum((y - mean) ** 2 for y in ys) / (len(ys) - 1)
            excess += (len(ys) - 1) * (s2 - sum(r["w"] for r in runs) / len(runs))
            dof += len(ys) - 1
    return (max(0.0, excess / dof) if dof else 0.0), dof


def _cells_of(runs: list[Run]) -> list[list[Run]]:
    by_size: dict[float, list[Run]] = {}
    for run in sorted(runs, key=lambda r: (r["params_b"], str(r["submission_id"]), str(r.get("replicate")))):
        by_size.setdefault(round(run["params_b"], 4), []).append(run)
    return [by_size[size] for size in sorted(by_size)]


def _cell(runs: list[Run], tau2: float) -> dict[str, Any]:
    weights = [1 / max(r["w"] + tau2, FLOOR_VAR) for r in runs]
    total = sum(weights)
    y = sum(w * r["y"] for w, r in zip(weights, runs, strict=True)) / total
    params_b = sum(r["params_b"] for r in runs) / len(runs)
    quality = [r["quality_pct"] for r in runs if r.get("quality_pct") is not None]
    return {
        "params_b": params_b, "x": math.log(params_b), "y": y, "v": 1 / total, "n_runs": len(runs),
        "w_mean": sum(r["w"] for r in runs) / len(runs),
        "ln_jq": sum(math.log(r["j_q"]) for r in runs) / len(runs),
        "ln_jb": sum(math.log(r["j_b"]) for r in runs) / len(runs),
        "passes_cv_gate": all(bool(r.get("passes_cv_gate")) for r in runs),
        "submission_ids": sorted({r["submission_id"] for r in runs if r.get("submission_id")}),
        "models": sorted({str(r["model"]) for r in runs}),
        "quality_pct": sum(quality) / len(quality) if quality else None,
    }  # fmt: skip


def _source_engine_stack(key: tuple[Any, ...]) -> tuple[str, str, str]:
    label = dict(zip(GROUP_KEYS, key, strict=True))
    return label["source"], label["engine"], label["stack"]


def _tau2_by_stack(keyed: dict[tuple[Any, ...], list[list[Run]]]) -> dict[tuple[str, str, str], float]:
    """tau2 per (source, engine, stack), falling back to the source's pool where one has no repeated cell."""
    result: dict[tuple[str, str, str], float] = {}
    for source in ("measured", "published"):
        overall, _ = pooled_tau2(cells for key, cells in keyed.items() if key[0] == source)
        by_where: dict[tuple[str, str, str], list[list[list[Run]]]] = {}
        for key, cells in keyed.items():
            if key[0] == source:
                by_where.setdefault(_source_engine_stack(key), []).append(cells)
        for where in sorted(by_where):
            value, dof = pooled_tau2(by_where[where])
            result[where] = value if dof else overall
    return result


def _group(key: tuple[Any, ...], cells_runs: list[list[Run]], tau2: float, tier: str) -> dict[str, Any]:
    label = dict(zip(GROUP_KEYS, key, strict=True))
    cells = [_cell(runs, tau2) for runs in cells_runs]
    doi = next((r["doi"] for runs in cells_runs for r in runs if r.get("doi")), None)
    engine = [] if label["engine"] == ENGINE else [label["engine"]]  # transformers' ids are the ones before engines
    parts = [label["source"], label["gpu"], *engine, label["stack"], f"b{label['batch_size']}", label["precision"]]
    if label["session"]:
        parts.append(str(label["session"]))
    if label["weights"] != "pretrained":
        parts.append(str(label["weights"]))
    if tier == "gate":
        parts.append("gate")
    return {
        "id": "/".join(str(p) for p in parts).replace(" ", "-").lower(), **label, "tier": tier, "doi": doi,
        "tau2": tau2, "cells": cells, "fits": group_fits(cells, label["precision"]),
    }  # fmt: skip


def build_groups(runs: Sequence[Run]) -> list[dict[str, Any]]:
    """Groups of the measured runs (tier ``all`` and tier ``gate``) and of the published ones (tier ``published``)."""
    keyed: dict[tuple[Any, ...], list[Run]] = {}
    for run in runs:
        keyed.setdefault(_key(run), []).append(run)
    cells_by_key = {key: _cells_of(group) for key, group in keyed.items()}
    tau2 = _tau2_by_stack(cells_by_key)
    groups = []
    for key in sorted(cells_by_key, key=lambda k: tuple(str(v) for v in k)):
        where = _source_engine_stack(key)
        if where[0] == "published":
            groups.append(_group(key, cells_by_key[key], tau2[where], "published"))
            continue
        groups.append(_group(key, cells_by_key[key], tau2[where], "all"))
        gated = [r for r in keyed[key] if r["passes_cv_gate"]]
        if gated:
            groups.append(_group(key, _cells_of(gated), tau2[where], "gate"))
    return groups


def _without(group: dict[str, Any], index: int) -> dict[str, Any]:
    cells = [c for i, c in enumerate(group["cells"]) if i != index]
    return {**group, "cells": cells, "fits": group_fits(cells, group["precision"])}


def loo_residuals(groups: Sequence[dict[str, Any]], source: str) -> list[tuple[float, float, float]]:
    """(residual, variance it should have without lack of fit, distance) of each cell held out of its group."""
    constants = {"size_tol_ln": SIZE_TOL_LN, "kappa2": {"measured": 0.0, "published": 0.0}}
    found = []
    for group in groups:
        if group["source"] != source or group["tier"] == "gate" or len(group["cells"]) < 2:
            continue
        for i, cell in enumerate(group["cells"]):
            pred = group_predict(_without(group, i), cell["x"], constants)
            found.append((cell["y"] - pred["y"], pred["var"] + cell["v"], pred["d"]))
    return found


def estimate_kappa2(groups: Sequence[dict[str, Any]], source: str) -> float:
    """Lack of fit per squared unit of ln(size) away from the nearest cell, from held-out cells (moment estimate)."""
    found = loo_residuals(groups, source)
    excess = sum(r * r - v for r, v, _ in found)
    spread = sum(d * d for _, _, d in found)
    return max(0.0, excess / spread) if spread > 0 else 0.0


def _pairs(groups: Sequence[dict[str, Any]], related: Any) -> float | None:
    """Mean of ``(y_a - y_b)^2 - v_a - v_b`` over cells of one size in related groups (None without pairs).

    Only groups of one engine and one precision are related: a change is against the engine's own FP16.
    """
    values = []
    usable = [g for g in groups if g["tier"] != "gate"]
    for i, a in enumerate(usable):
        for b in usable[i + 1 :]:
            if a["precision"] != b["precision"] or a["engine"] != b["engine"] or not related(a, b):
                continue
            for cell in a["cells"]:
                j, dist = nearest(b["cells"], cell["x"])
                if dist <= SIZE_TOL_LN:
                    other = b["cells"][j]
                    values.append((cell["y"] - other["y"]) ** 2 - cell["v"] - other["v"])
    return max(0.0, sum(values) / len(values)) if values else None


def _same_config(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return bool(a["stack"] == b["stack"] and a["batch_size"] == b["batch_size"])


def cross_terms(groups: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Variance of the difference between sessions of one card, cards of one architecture, architectures, configs."""
    found = {
        "session2": _pairs(groups, lambda a, b: a["source"] == b["source"] == "published" and a["gpu"] == b["gpu"]),
        "card2": _pairs(groups, lambda a, b: a["arch"] == b["arch"] and a["gpu"] != b["gpu"] and _same_config(a, b)),
        "arch2": _pairs(groups, lambda a, b: a["arch"] != b["arch"] and _same_config(a, b)),
        "config2": _pairs(groups, lambda a, b: a["gpu"] == b["gpu"] and a["source"] == b["source"]
                          and int(a["stack"] != b["stack"]) + int(a["batch_size"] != b["batch_size"]) == 1),
    }  # fmt: skip
    known = [v for v in found.values() if v is not None]
    fallback = max(known) if known else 0.0
    result: dict[str, Any] = {k: (fallback if v is None else v) for k, v in found.items()}
    result["estimated_from_pairs"] = sorted(k for k, v in found.items() if v is not None)
    by_precision = {}  # sessions of one card disagree more for some kernels (the seed's INT8 differs 2x) than others
    for precision in sorted({g["precision"] for g in groups if g["source"] == "published"}):
        subset = [g for g in groups if g["precision"] == precision]
        value = _pairs(subset, lambda a, b: a["source"] == b["source"] == "published" and a["gpu"] == b["gpu"])
        by_precision[precision] = result["session2"] if value is None else value
    result["session2_by_precision"] = by_precision
    return result


def _zero_crossing(xs: list[float], ys: list[float]) -> float | None:
    """Largest step from positive to zero-or-negative, interpolated (None when there is none)."""
    for i in range(len(xs) - 2, -1, -1):
        if ys[i] > 0 >= ys[i + 1]:
            return xs[i] + (xs[i + 1] - xs[i]) * ys[i] / (ys[i] - ys[i + 1])
    return None


def _fit_crossover(fit: dict[str, Any]) -> float | None:
    if fit["kind"] == "loglinear":
        return math.exp(-fit["a"] / fit["b"]) if fit["b"] < 0 else None
    a, s, n0 = fit["a"], fit["s"], fit["n0"]
    return n0 * a / (s - a) if s > a > 0 else None


def crossover(group: dict[str, Any], constants: dict[str, Any]) -> dict[str, Any]:
    """Where the group's averaged curve crosses zero inside its measured sizes, with the 95% band's crossing range."""
    cells = group["cells"]
    lo, hi = cells[0]["x"], cells[-1]["x"]
    measured = [round(cells[0]["params_b"], 4), round(cells[-1]["params_b"], 4)]
    by_fit = {"interpolation": _zero_crossing([c["x"] for c in cells], [c["y"] for c in cells])}
    by_fit_b: dict[str, float | None] = {k: None if v is None else math.exp(v) for k, v in by_fit.items()}
    for fit in group["fits"]:
        by_fit_b[fit["name"]] = _fit_crossover(fit)
    base = {"measured_range_b": measured, "by_fit": by_fit_b}
    if len(cells) < 2:
        return {**base, "status": "insufficient-data", "params_b": None, "ci95": None,
                "message": f"one measured size ({cells[0]['params_b']:.3g}B): a crossover needs two"}  # fmt: skip
    xs = [lo + (hi - lo) * i / (GRID - 1) for i in range(GRID)]
    preds = [group_predict(group, x, constants) for x in xs]
    ys = [p["y"] for p in preds]
    halves = [Z95 * math.sqrt(p["var"]) for p in preds]
    open_band = [abs(y) <= h for y, h in zip(ys, halves, strict=True)]
    found = _zero_crossing(xs, ys)
    span = f"{measured[0]:.3g}B-{measured[1]:.3g}B"
    if found is None:
        holds = "costs more" if ys[0] > 0 else "saves"
        possible = [x for x, o in zip(xs, open_band, strict=True) if o]
        ci = [math.exp(min(possible)), math.exp(max(possible))] if possible else None
        text = f"none in the measured range ({span}): {group['precision']} {holds} at every measured size"
        if ci:
            text += f"; the 95% band reaches 0 between {ci[0]:.3g}B and {ci[1]:.3g}B"
        return {**base, "status": "none-in-measured-range", "params_b": None, "ci95": ci, "message": text}
    k = min(range(GRID), key=lambda i: abs(xs[i] - found))
    left = right = k
    while left > 0 and open_band[left - 1]:
        left -= 1
    while right < GRID - 1 and open_band[right + 1]:
        right += 1
    ci = [math.exp(xs[left]), math.exp(xs[right])]
    text = f"crosses zero at {math.exp(found):.3g}B (95% {ci[0]:.3g}B-{ci[1]:.3g}B)"
    if left == 0 or right == GRID - 1:
        text += "; the interval reaches the edge of the measured sizes, so it may extend beyond"
    return {**base, "status": "crossover", "params_b": math.exp(found), "ci95": ci, "message": text,
            "ci_open": [left == 0, right == GRID - 1]}  # fmt: skip


def artifact_from_runs(runs: Sequence[Run], dataset: dict[str, Any]) -> dict[str, Any]:
    """The whole artifact from the runs (measured and published) and the dataset's identity.

    A run without an engine (from an artifact of schema 1.0) is transformers'.
    """
    runs = [run if "engine" in run else {**run, "engine": ENGINE} for run in runs]
    groups = build_groups(runs)
    kappa2 = {source: estimate_kappa2(groups, source) for source in ("measured", "published")}
    cross = cross_terms(groups)
    constants = {"size_tol_ln": SIZE_TOL_LN, "z95": Z95, "kappa2": kappa2, **cross}
    for group in groups:
        w_mean = sum(c["w_mean"] for c in group["cells"]) / len(group["cells"])
        session2 = cross["session2_by_precision"].get(group["precision"], cross["session2"])
        group["noise2"] = group["tau2"] + w_mean + (session2 if group["source"] == "published" else 0.0)
        group["crossover"] = crossover(group, constants)
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "ecocompute-estimate-artifact",
        "dataset": dataset,
        "constants": constants,
        "gpus": gpu_table(),
        "groups": groups,
        "runs": list(runs),
    }


def dataset_info(runs: Sequence[Run], version: str, doi: str | None) -> dict[str, Any]:
    """The dataset's identity as the answers cite it: version, DOI, newest submission, count, citation."""
    measured = [r for r in runs if r["source"] == "measured"]
    newest = max((r["created_at"] for r in measured if r["created_at"]), default=None)
    citation = f"ecocompute contributors, ecocompute: an open dataset of measured LLM-inference GPU energy, v{version}"
    citation += f", https://doi.org/{doi}" if doi else " (no DOI minted yet)"
    return {
        "version": version, "doi": doi, "newest_submission_at": newest,
        "submissions": len({r["submission_id"] for r in measured}), "citation": citation,
        "literature": "EcoCompute (H. Zhang), CC BY 4.0, doi:10.5281/zenodo.19647290 and doi:10.5281/zenodo.22037483",
    }  # fmt: skip


def build_artifact(
    measurements: pl.DataFrame,
    submissions: pl.DataFrame,
    *,
    version: str,
    doi: str | None = None,
    literature: Sequence[Run] | None = None,
) -> dict[str, Any]:
    """The artifact from the dataset's ``measurements`` and ``submissions`` tables and the literature tier.

    ``literature`` defaults to the published rows shipped in ``estimate/data/literature.csv``.
    """
    runs = measured_runs(measurements, submissions)
    published = list(literature) if literature is not None else literature_runs()
    all_runs = runs + published
    return artifact_from_runs(all_runs, dataset_info(all_runs, version, doi))


def _rounded(value: Any) -> Any:
    if isinstance(value, float):
        return float(f"{value:.10g}") if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(v) for v in value]
    return value


def artifact_text(artifact: dict[str, Any]) -> str:
    """The artifact as deterministic JSON text (floats to 10 significant digits, keys sorted)."""
    return json.dumps(_rounded(artifact), sort_keys=True, indent=1) + "\n"


def write_artifact(artifact: dict[str, Any], path: Path) -> Path:
    """Write the artifact to ``path`` (its folder made as needed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(artifact_text(artifact), encoding="utf-8")
    return path
