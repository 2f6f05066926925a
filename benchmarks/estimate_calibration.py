"""Calibration of the estimator: hold out each measured cell and each literature row, predict it from the rest.

For every measured cell (a card x stack x batch x precision x size of the shipped artifact's ``all`` tier) and every
published row, the artifact is rebuilt from all the other runs (so the variance terms are re-estimated without it),
the engine answers the held-out question, and the answer is compared with what was measured there: absolute error
of the change against FP16 in percentage points, and whether the 95% interval covers it. Beside it, the seed's
published curve (``curves.json``: dE% = A - S x/(1+x), Hopper borrowing Ampere) on the same points, where it has
a curve for the precision (NF4, INT8). The seed fitted its curves on the published rows, so on those rows its
error is in-sample.

    .venv/bin/python benchmarks/estimate_calibration.py [--curves ../shared/seed-data/curves.json]

Writes benchmarks/results/estimate_calibration.json.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from pathlib import Path
from typing import Any

from ecocompute.estimate import Question, estimate, load_artifact
from ecocompute.estimate.build import artifact_from_runs, dataset_info

ROOT = Path(__file__).resolve().parent.parent
RESULT = ROOT / "benchmarks" / "results" / "estimate_calibration.json"
SEED_ARCH = {"int8": "INT8", "nf4": "NF4"}


def seed_change(curves: dict[str, Any], arch: str, precision: str, params_b: float) -> float | None:
    """The seed's curve at ``params_b`` (None where it has none for the architecture or precision)."""
    name = SEED_ARCH.get(precision)
    arch = curves["borrow"].get(arch, arch)
    curve = curves["curves"].get(arch, {}).get(name or "")
    if curve is None:
        return None
    x = params_b / curve["Nstar"]
    return float(curve["A"] - curve["S"] * x / (1 + x))


def held_out_cases(artifact: dict[str, Any]) -> list[dict[str, Any]]:
    """Every measured cell of the ``all`` tier and every published run, with the runs that make it."""
    runs = artifact["runs"]
    cases = []
    for group in artifact["groups"]:
        if group["source"] != "measured" or group["tier"] != "all":
            continue
        for cell in group["cells"]:
            ids = set(cell["submission_ids"])
            members = [i for i, r in enumerate(runs) if r["source"] == "measured" and r["submission_id"] in ids
                       and r["precision"] == group["precision"]]  # fmt: skip
            cases.append({"group": group, "params_b": cell["params_b"], "observed_y": cell["y"], "members": members})
    for i, run in enumerate(runs):
        if run["source"] == "published":
            group = {"gpu": run["gpu"], "arch": run["arch"], "stack": "eager", "batch_size": run["batch_size"],
                     "precision": run["precision"], "source": "published", "id": f"published row {i}"}  # fmt: skip
            cases.append({"group": group, "params_b": run["params_b"], "observed_y": run["y"], "members": [i]})
    return cases


def run_case(artifact: dict[str, Any], case: dict[str, Any], curves: dict[str, Any]) -> dict[str, Any] | None:
    """Predict one held-out case from an artifact rebuilt without it; None when nothing else answers it."""
    runs = [r for i, r in enumerate(artifact["runs"]) if i not in set(case["members"])]
    rebuilt = artifact_from_runs(runs, dataset_info(runs, artifact["dataset"]["version"], None))
    group = case["group"]
    tier = "all" if group["source"] == "measured" else "published"
    question = Question(gpu=group["gpu"], params_b=case["params_b"], precision=group["precision"],
                        stack=group["stack"], batch_size=group["batch_size"], tier=tier,
                        engine=group.get("engine", "transformers"))  # fmt: skip
    answer = estimate(question, rebuilt)
    if answer.change_pct is None or answer.change_ci95 is None:
        return None  # no evidence is left once the case is held out (one run, one size): nothing to score
    observed = 100 * (math.exp(case["observed_y"]) - 1)
    low, high = answer.change_ci95
    seed = seed_change(curves, group["arch"], group["precision"], case["params_b"])
    return {
        "case": group["id"], "params_b": case["params_b"], "source": group["source"], "observed_pct": observed,
        "predicted_pct": answer.change_pct, "ci95": [low, high], "covered": low <= observed <= high,
        "abs_error_pp": abs(answer.change_pct - observed), "basis": answer.basis,
        "seed_pct": seed, "seed_abs_error_pp": None if seed is None else abs(seed - observed),
    }  # fmt: skip


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Median absolute error and coverage, ours and the seed's on the points it has a curve for."""
    if not rows:
        return {"n": 0}
    both = [r for r in rows if r["seed_abs_error_pp"] is not None]
    summary = {
        "n": len(rows),
        "median_abs_error_pp": statistics.median(r["abs_error_pp"] for r in rows),
        "coverage_95": sum(r["covered"] for r in rows) / len(rows),
        "n_with_seed_curve": len(both),
    }
    if both:
        summary["ours_median_abs_error_pp_on_seed_points"] = statistics.median(r["abs_error_pp"] for r in both)
        summary["seed_median_abs_error_pp"] = statistics.median(r["seed_abs_error_pp"] for r in both)
        summary["ours_coverage_95_on_seed_points"] = sum(r["covered"] for r in both) / len(both)
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--curves", type=Path, default=ROOT.parent.parent / "shared" / "seed-data" / "curves.json")
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args()
    curves = json.loads(args.curves.read_text(encoding="utf-8"))
    artifact = load_artifact()
    started = time.perf_counter()
    cases = held_out_cases(artifact)
    scored = [(case, run_case(artifact, case, curves)) for case in cases]
    rows = [row for _case, row in scored if row is not None]
    unscored = sorted(str(case["group"]["id"]) for case, row in scored if row is None)
    by = {
        "all": summarize(rows),
        "measured": summarize([r for r in rows if r["source"] == "measured"]),
        "published": summarize([r for r in rows if r["source"] == "published"]),
    }
    for basis in sorted({r["basis"] for r in rows}):
        by[f"basis:{basis}"] = summarize([r for r in rows if r["basis"] == basis])
    result = {"artifact_dataset_version": artifact["dataset"]["version"], "seconds": time.perf_counter() - started,
              "summary": by, "rows": rows, "unscored": unscored}  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    for name, s in by.items():
        seed = s.get("seed_median_abs_error_pp")
        extra = ""
        if seed is not None:
            ours = s["ours_median_abs_error_pp_on_seed_points"]
            extra = f"; on {s['n_with_seed_curve']} seed points ours {ours:.1f} vs seed {seed:.1f} pp"
        if s["n"]:
            print(f"{name:26s} n={s['n']:3d} median |error| {s['median_abs_error_pp']:6.1f} pp, "
                  f"coverage {100 * s['coverage_95']:5.1f}%{extra}")  # fmt: skip
    if unscored:
        print(f"not scored: {len(unscored)} case(s) with no other evidence once held out ({', '.join(unscored)})")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
