"""The project's committed H200 runs: valid but for the CV gate, sensor agreement, and docs that follow them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from factories import load_script

from ecocompute.schema.derive import derive, integral_diff_pct
from ecocompute.schema.io import load_submission
from ecocompute.schema.models import Window
from ecocompute.validate.core import discover, validate_files
from ecocompute.validate.windows import INTEGRAL_ERROR_PCT

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "runs"
SIGNERS = ROOT / "submissions" / "allowed_signers"
SUMMARIZE = load_script(ROOT / "scripts" / "reference" / "summarize.py")  # loaded once: its caches serve every test
FINISHED, ACCEPTED, CHECKPOINTS = SUMMARIZE.committed()


def _all_windows() -> list[tuple[str, Window]]:
    found = []
    for path in FINISHED:
        for m in load_submission(path).payload.measurements:
            found += [(f"{path.name}:{m.precision.value}", w) for w in (*m.warmup, *m.windows)]
    for path in CHECKPOINTS:
        found += [(f"{path.name}:{precision}", w) for precision, w in SUMMARIZE.checkpoint_windows(path)]
    return found


def test_there_are_h200_runs() -> None:
    assert len(FINISHED) >= 2
    assert all(load_submission(p).payload.hardware.gpu_name == "NVIDIA H200" for p in FINISHED)


def test_finished_runs_fail_only_the_cv_gate() -> None:
    results = validate_files(FINISHED, allowed_signers=SIGNERS, submissions_root=RUNS)
    for result in results:
        assert result.accepted and not result.passes_cv_gate  # the all tier (contract 1)
        assert {f.code for f in result.errors} == {"E-CV"}, result.path
    relaxed = validate_files(FINISHED, allowed_signers=SIGNERS, submissions_root=RUNS, max_cv_pct=100.0)
    assert all(r.accepted for r in relaxed)


def test_counter_and_integrated_power_agree_within_the_validators_bound_in_every_window() -> None:
    """Checkpoints included, which the validator never sees; docs/method.md states the worst figure (summarize.py)."""
    windows = _all_windows()
    assert len(windows) >= 104
    worst = max(windows, key=lambda item: integral_diff_pct(item[1]))
    assert integral_diff_pct(worst[1]) <= INTEGRAL_ERROR_PCT, worst[0]


def test_submissions_folder_holds_no_run_that_fails_the_gate() -> None:
    paths = discover(ROOT / "submissions")
    results = validate_files(paths, allowed_signers=SIGNERS, submissions_root=ROOT / "submissions")
    assert all(r.accepted for r in results), [(r.path, [f.code for f in r.errors]) for r in results]


def test_reproducibility_result_is_what_its_committed_runs_give() -> None:
    """benchmarks/results/reproducibility-*.json names its runs; they are committed (in submissions/, or in runs/
    where one fails the CV gate) and give its figures."""
    results = sorted((ROOT / "benchmarks" / "results").glob("reproducibility-*.json"))
    assert results
    paths = discover(ROOT / "submissions") + discover(ROOT / "runs" / "ecocompute-reference" / "nvidia-h200")
    by_id = {load_submission(p).payload.submission_id: load_submission(p) for p in paths}
    for path in results:
        result = json.loads(path.read_text())
        subs = [by_id[i] for i in result["submission_ids"]]
        assert len(subs) == result["processes"] >= 3
        for row in result["table"]:
            means = [
                derive(m.windows, s.payload.idle.power_w).j_per_token_mean
                for s in subs for m in s.payload.measurements if m.precision.value == row["precision"]
            ]  # fmt: skip
            assert means == pytest.approx(row["j_per_token_means"], rel=1e-9)
            spread = 100 * (max(means) - min(means)) / (sum(means) / len(means))
            assert spread == pytest.approx(row["spread_pct"], rel=1e-9)
            assert row["within"] == (spread <= row["tolerance_pct"])


@pytest.mark.parametrize("doc", ["docs/method.md"])
def test_docs_figures_are_recomputed_from_the_committed_windows(doc: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts/reference/summarize.py"), "--check", str(ROOT / doc)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr


def test_summary_shows_a_failed_precision_instead_of_crashing(tmp_path: Path) -> None:
    """A sweep run where a precision failed (e.g. out of memory at 32B) gets an error row and an error cell."""
    doc = json.loads(FINISHED[0].read_text())
    failed = doc["payload"]["measurements"][0]  # fp16: the baseline, so the others compare with bf16
    failed.update(windows=[], warmup=[], error="OutOfMemoryError: CUDA out of memory")
    path = tmp_path / FINISHED[0].name
    path.write_text(json.dumps(doc))
    section = SUMMARIZE.submission_section(path)
    assert "| fp16 | 0 | error: OutOfMemoryError: CUDA out of memory |" in section
    assert "| bf16 |" in section and "baseline |" in section and "vs bf16 (" in section
    arch = doc["payload"]["workload"]["architecture"]
    sweep = SUMMARIZE.sweep_section([path])
    row = next(line for line in sweep.splitlines() if line.startswith(f"| {arch} | eager | 1 |"))
    assert "error: OutOfMemoryError" in row.split("|")[4]  # the fp16 cell
    assert "4 of 104 cells measured" in sweep  # bf16, nf4, int8 and int8-t0; not the failed fp16


def test_the_sweep_names_how_far_a_cut_run_got_where_no_finished_run_measured_the_cell(tmp_path: Path) -> None:
    """A checkpoint shows in the cells it had windows for, is not counted as measured, and gives way to a run."""
    state = json.loads(CHECKPOINTS[0].read_text())
    state["config"].update(arch="Qwen2.5-3B", stack="eager", batch_size=8)
    for m, n in zip(state["measurements"], (3, 0, 2), strict=False):
        m["windows"] = m["windows"][:1] * n
    cut = tmp_path / "20261130T000000Z-0000c0de.qwen2.5-3b-eager.partial.json"
    cut.write_text(json.dumps(state))
    sweep = SUMMARIZE.sweep_section([], [cut])
    row = next(line for line in sweep.splitlines() if line.startswith("| Qwen2.5-3B | eager | 8 |")).split("|")
    precisions = [m["precision"] for m in state["measurements"]]
    cells = dict(zip(["", "shape", "stack", "batch", *SUMMARIZE.SWEEP_PRECISIONS], row, strict=False))
    assert cells[precisions[0]].strip() == "not yet measured; cut at 3 windows (`0000c0de`)"
    assert cells[precisions[1]].strip() == "not yet measured"
    assert "cut at 2 windows (`0000c0de`)" in cells[precisions[2]]
    assert "0 of 104 cells measured" in sweep
    # a finished run of the same cell replaces the note
    finished = next(p for p in FINISHED if load_submission(p).payload.workload.architecture == "Qwen2.5-3B"
                    and load_submission(p).payload.workload.stack.value == "eager")  # fmt: skip
    state["config"]["batch_size"] = 1
    cut.write_text(json.dumps(state))
    row = next(line for line in SUMMARIZE.sweep_section([finished], [cut]).splitlines()
               if line.startswith("| Qwen2.5-3B | eager | 1 |"))  # fmt: skip
    assert "cut at" not in row and "% (runs)" in row


def test_cards_table_compares_one_shape_across_gpus_and_leaves_single_card_shapes_out(tmp_path: Path) -> None:
    """A copy of a compiled run on another GPU drawing 10% more energy per window shows as +10.0% on that card."""
    compiled = next(p for p in FINISHED if json.loads(p.read_text())["payload"]["workload"]["stack"] == "compiled")
    doc = json.loads(compiled.read_text())
    payload = doc["payload"]
    payload["hardware"]["gpu_uuid_sha256"] = "f" * 64
    payload["submission_id"] = payload["submission_id"][:-8] + "0000beef"
    for m in payload["measurements"]:
        for w in m["windows"]:
            w["energy_j"] *= 1.1
    copy = tmp_path / "copy.json"
    copy.write_text(json.dumps(doc))
    assert SUMMARIZE.cards_section([compiled]).count("\n") == 1  # header only: one card measured the shape
    rows = [line for line in SUMMARIZE.cards_section([compiled, copy]).splitlines() if line.startswith("| ")][1:]
    assert len(rows) == 2
    theirs = next(r for r in rows if "`ffffffff`" in r)
    ours = next(r for r in rows if "`ffffffff`" not in r)
    assert "`0000beef`" in theirs and theirs.endswith("| +10.0% |") and ours.endswith("| +0.0% |")


PROSE = ["docs/method.md", "README.md", "runs/README.md", "scripts/reference/README.md"]


def test_every_run_the_prose_cites_is_committed() -> None:
    """A backticked 8-hex id in the hand-written docs is a committed run, a checkpoint or a GPU's UUID hash."""
    run_id = SUMMARIZE._short  # as the docs cite it (`639a6f0d`)
    runs = {run_id(p) for p in (*FINISHED, *ACCEPTED, *CHECKPOINTS)}
    gpus = {load_submission(p).payload.hardware.gpu_uuid_sha256[:8] for p in (*FINISHED, *ACCEPTED)}
    assert len(runs) == len(FINISHED) + len(ACCEPTED) + len(CHECKPOINTS)
    total = 0
    for doc in PROSE:
        text = (ROOT / doc).read_text(encoding="utf-8")
        if "<!-- BEGIN" in text:  # the generated block is checked against the windows by another test
            text = text[: text.index("<!-- BEGIN")] + text[text.index("<!-- END") :]
        cited = set(re.findall(r"`(?:\.\.\.\d{6}Z-)?([0-9a-f]{8})`", text))
        assert cited - runs - gpus == set(), doc
        total += len(cited)
    assert total >= 20  # the docs do cite runs this way


def test_queue_lines_marked_measured_name_where_their_run_is() -> None:
    """`# measured in sitting N (runs/, ID): LINE` names a run that is in that folder and measured that line."""
    marks = [m for path in sorted((ROOT / "scripts" / "reference" / "queues").glob("*.txt"))
             for m in re.finditer(r"^# measured in sitting \d+ \((runs|submissions)/, ([0-9a-f]{8})\): (.+)$",
                                  path.read_text(encoding="utf-8"), re.M)]  # fmt: skip
    assert len(marks) >= 10
    run_id = SUMMARIZE._short
    where = {run_id(p): p for p in (*FINISHED, *ACCEPTED)}
    for folder, run, line in (m.groups() for m in marks):
        assert run in where and where[run].is_relative_to(ROOT / folder), (folder, run)
        workload = load_submission(where[run]).payload.workload
        assert f"--arch {workload.architecture} " in line and f"--stack {workload.stack.value} " in line, run


def test_time_table_gives_r2_one_where_energy_follows_time_and_zero_where_it_does_not(tmp_path: Path) -> None:
    """Energy drawn at a constant power gives R^2 1.00; energy per token unrelated to the time per token gives 0.00."""
    eager = next(p for p in FINISHED if json.loads(p.read_text())["payload"]["workload"]["stack"] == "eager")
    doc = json.loads(eager.read_text())
    measurements = doc["payload"]["measurements"]
    for m in measurements:
        for w in m["windows"]:
            w["energy_j"] = 150.0 * w["duration_s"]
    steady = tmp_path / "steady.json"
    steady.write_text(json.dumps(doc))
    n = sum(len(m["windows"]) >= 3 for m in measurements)
    assert f"| eager | 1 | {n} | 1.00 | 1.00 | 1.00 | {n} |" in SUMMARIZE.time_section([steady])
    for m in measurements:  # s/token 0.10, 0.11, 0.10, 0.11 against J/token 2, 2, 3, 3: uncorrelated
        m["windows"] = m["windows"][:4]
        for i, w in enumerate(m["windows"]):
            w["tokens"] = 100
            w["duration_s"] = 10.0 + (i % 2)
            w["energy_j"] = 100.0 * (2.0 + i // 2)
    unrelated = tmp_path / "unrelated.json"
    unrelated.write_text(json.dumps(doc))
    table = SUMMARIZE.time_section([unrelated])
    assert f"| eager | 1 | {len(measurements)} | 0.00 | 0.00 | 0.00 | 0 |" in table
    cpu = [w["process_cpu_s"] / w["duration_s"] for m in measurements for w in m["windows"]]
    assert table.endswith(f"| {min(cpu):.3f}-{max(cpu):.3f} ({len(cpu)} windows) |")
