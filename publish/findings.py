"""The findings a build publishes (``findings.json``) and the check that hand-written docs cite them unchanged.

A finding is a named figure computed from one config of the build: ``name -> {text, value, config, rows,
selection}``, ``rows`` being the submission ids it rests on. Docs cite one only inside
``<!-- finding:NAME -->text<!-- /finding -->``; :func:`check_docs` fails when a span's text is not the build's.
Every finding is computed from the ``_all`` configs, so the gate's failures count too (their rows say so).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from ecocompute.analysis.defaults import STACK
from ecocompute.analysis.frames import engine_is_in
from ecocompute.analysis.results import Results
from ecocompute.analysis.sections import crossover_text
from ecocompute.analysis.selection import match_gpus
from ecocompute.schema.errors import EcocomputeError, UsageError
from ecocompute.schema.models import ENGINE

FINDINGS_FILE = "findings.json"
SPAN = re.compile(r"<!--\s*finding:([A-Za-z0-9_.-]+)\s*-->(.*?)<!--\s*/finding\s*-->", re.DOTALL)


class DocsDriftError(EcocomputeError):
    """A doc cites a finding with other text than the build gives, or a finding the build does not have."""


@dataclass(frozen=True)
class Spec:
    """One finding: what it computes (``kind``) over which rows (of one engine: its FP16 is its own)."""

    name: str
    kind: str  # "crossover", "change_range" or "stack_vs_precision"
    gpu: str
    stack: str
    batch: int
    precision: str
    engine: str = ENGINE


SPECS = (
    Spec("h200_nf4_crossover_compiled_all_b1", "crossover", "h200", "compiled-all", 1, "nf4"),
    Spec("h200_int8_t0_crossover_compiled_all_b1", "crossover", "h200", "compiled-all", 1, "int8-t0"),
    Spec("h200_nf4_change_eager_b1_range", "change_range", "h200", "eager", 1, "nf4"),
    Spec("h200_int8_change_eager_b1_range", "change_range", "h200", "eager", 1, "int8"),
    Spec("h200_stack_vs_precision", "stack_vs_precision", "h200", "compiled-all", 1, "fp16"),
)


def _rows(frame: pl.DataFrame, spec: Spec, *, stack: bool = True, precision: bool = True) -> pl.DataFrame:
    if frame.height == 0 or "gpu_name" not in frame.columns:
        return frame.clear()
    try:
        gpus = match_gpus(spec.gpu, frame["gpu_name"].unique().to_list()) or []
    except UsageError:
        return frame.clear()
    conditions = [pl.col("gpu_name").is_in(gpus), pl.col("batch_size") == spec.batch]
    conditions.append(engine_is_in(frame, [spec.engine]))
    if stack:
        conditions.append(pl.col(STACK) == spec.stack)
    if precision:
        conditions.append(pl.col("precision") == spec.precision)
    return frame.filter(*conditions)


def _ids(frame: pl.DataFrame, column: str = "submission_id") -> list[str]:
    values = frame[column].to_list() if frame.height else []
    return sorted({i for v in values for i in str(v).split(",") if i})


def _crossover(results: Results, spec: Spec) -> dict[str, Any]:
    rows = _rows(results.crossovers, spec).sort("n_sizes", descending=True)
    if rows.height == 0:
        return {"text": "not measured", "value": None, "rows": []}
    row = rows.row(0, named=True)
    ids = _ids(_rows(results.changes, spec).filter(pl.col("weights") == row["weights"]))
    value = {k: row[k] for k in ("status", "crossover_params", "ci95_low_params", "ci95_high_params", "params_min",
                                 "params_max", "n_sizes")}  # fmt: skip
    return {"text": crossover_text(row), "value": value, "rows": ids}


def _range_text(low: float, high: float) -> str:
    return f"{low:+.1f}% to {high:+.1f}%"


def _change_range(results: Results, spec: Spec) -> dict[str, Any]:
    rows = _rows(results.pooled, spec)
    if rows.height == 0:
        return {"text": "not measured", "value": None, "rows": []}
    low, high = float(rows["change_pct"].min()), float(rows["change_pct"].max())  # type: ignore[arg-type]
    sizes = rows["params_total"].unique().sort().to_list()
    value = {"change_min_pct": low, "change_max_pct": high, "params_min": sizes[0], "params_max": sizes[-1]}
    return {"text": _range_text(low, high), "value": value, "rows": _ids(rows, "submission_ids")}


def _stack_vs_precision(results: Results, spec: Spec) -> dict[str, Any]:
    """How much compiling cuts FP16's J/token against eager, beside the best precision change on that stack."""
    stack = _rows(results.stack, spec, stack=False).filter(pl.col("compiled_stack") == spec.stack)
    pooled = _rows(results.pooled, spec, precision=False)
    if stack.height == 0 or pooled.height == 0:
        return {"text": "not measured", "value": None, "rows": []}
    cut_low, cut_high = -float(stack["change_pct"].max()), -float(stack["change_pct"].min())  # type: ignore[arg-type]
    best = pooled.sort("change_pct").row(0, named=True)
    value = {"stack_cut_min_pct": cut_low, "stack_cut_max_pct": cut_high, "best_precision": best["precision"],
             "best_precision_change_pct": best["change_pct"],
             "best_precision_params": best["params_total"]}  # fmt: skip
    text = f"{cut_low:.0f}-{cut_high:.0f}% against {best['change_pct']:+.1f}%"
    eager = _rows(results.measurements, spec, stack=False).filter(pl.col(STACK).is_in(["eager", spec.stack]))
    return {"text": text, "value": value, "rows": _ids(eager)}


KINDS = {"crossover": _crossover, "change_range": _change_range, "stack_vs_precision": _stack_vs_precision}


def compute_findings(results: Results, specs: Sequence[Spec] = SPECS) -> dict[str, dict[str, Any]]:
    """Every finding of ``specs`` over ``results`` (the analysis of the ``_all`` configs)."""
    found = {}
    for spec in specs:
        computed = KINDS[spec.kind](results, spec)
        selection = {"gpu": spec.gpu, "engine": spec.engine, "stack": spec.stack, "batch": spec.batch,
                     "precision": spec.precision}  # fmt: skip
        found[spec.name] = {**computed, "config": results.config, "kind": spec.kind, "selection": selection}
    return found


def findings_text(found: dict[str, dict[str, Any]]) -> str:
    """``findings.json``'s bytes (sorted keys, so equal inputs give equal bytes)."""
    return json.dumps(found, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def read_findings(dataset: Path) -> dict[str, dict[str, Any]]:
    """The findings of a build folder."""
    path = dataset / FINDINGS_FILE
    if not path.is_file():
        raise UsageError(f"{dataset} has no {FINDINGS_FILE}: pass a folder built by `ecocompute publish build`")
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise UsageError(f"{path} is not a JSON object: build again")
    return data


def doc_spans(text: str) -> list[tuple[int, str, str]]:
    """Each ``<!-- finding:NAME -->text<!-- /finding -->`` of a doc: (line, name, text)."""
    spans = [m for m in SPAN.finditer(text) if text[max(0, m.start() - 1) : m.start()] != "`"]  # `code` shows one
    return [(text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2)) for m in spans]


def check_docs(dataset: Path, files: Sequence[Path]) -> int:
    """Raise DocsDriftError listing every span whose text is not the build's; return how many spans agree."""
    found = read_findings(dataset)
    problems, agreed = [], 0
    for path in files:
        if not path.is_file():
            raise UsageError(f"{path} is not a file: pass the docs to check")
        for line, name, text in doc_spans(path.read_text(encoding="utf-8")):
            if name not in found:
                problems.append(
                    f"{path}:{line}: finding {name!r} is not in the build (it has {', '.join(sorted(found))})"
                )
            elif " ".join(text.split()) != found[name]["text"]:
                problems.append(f"{path}:{line}: {name} says {text.strip()!r}, the build says {found[name]['text']!r}")
            else:
                agreed += 1
    if problems:
        raise DocsDriftError(
            f"{len(problems)} finding(s) differ from {dataset / FINDINGS_FILE}: " + "; ".join(problems)
        )
    return agreed
