"""Runs beyond the gate (``--beyond-gate``): in the card and the manifest, never in the tables; E-CV alone."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from publish_examples import Spec, example_document
from publish_helpers import SMALL, TreeMaker

from ecocompute.cli import main
from ecocompute.publish.build import BuildResult, build
from ecocompute.publish.inputs import BuildRefusedError, Source
from ecocompute.publish.manifest import read_manifest
from ecocompute.schema.derive import derive
from ecocompute.schema.errors import UsageError
from ecocompute.schema.io import load_submission
from ecocompute.validate.core import discover

ROOT = Path(__file__).resolve().parents[2]
SEVEN_B = Spec("Qwen2.5-7B", 7_615_616_512, "eager", 1, ("fp16", "nf4", "int8"))
FOURTEEN_B = Spec("Qwen2.5-14B", 14_770_033_664, "eager", 1, ("fp16", "nf4"))


def _run(seed: int, cv: float = 0.10, spec: Spec = SEVEN_B, example: bool = False) -> dict[str, Any]:
    """An unsigned document beside SMALL's sizes whose J/token spreads by ``cv`` (0.10: far above the 2% gate)."""
    document = example_document(spec, seed, n_windows=6, cv=cv)
    document["payload"]["example"] = example
    document["payload"]["notes"] = "synthetic test data"
    return document


def _runs(make_tree: TreeMaker, name: str, documents: list[dict[str, Any]]) -> Path:
    """A runs folder without an allowed_signers file of its own: the submissions' file must be the one used."""
    root = make_tree((), name=name, documents=documents)
    (root / "allowed_signers").unlink()
    return root


def _build(tmp_path: Path, submissions: Path, *runs: Path, name: str = "out") -> BuildResult:
    beyond = [Source.at(r, submissions / "allowed_signers") for r in runs]
    return build([Source.at(submissions)], tmp_path / name, beyond=beyond)


def _split(card: str) -> tuple[str, str, str]:
    """The card before the section "Beyond the gate", the section, and the card after it."""
    before, rest = card.split("## Beyond the gate", 1)
    section, after = rest.split("\n## ", 1)
    return before, section, after


def _worst_cv(path: Path) -> float:
    p = load_submission(path).payload
    return max(derive(m.windows, p.idle.power_w).cv_pct for m in p.measurements)


def test_runs_beyond_the_gate_reach_the_card_and_the_manifest_but_not_the_tables(
    tmp_path: Path, make_tree: TreeMaker
) -> None:
    submissions = make_tree(SMALL[:2])  # eager 0.5B and 3B, fp16 and nf4, within the gate
    runs = _runs(make_tree, "runs", [_run(7)])
    (run_file,) = discover(runs)
    checkpoint = runs / "example-user" / "checkpoints" / "20261130T000000Z-00000000.tinyllama-1.1b-eager.partial.json"
    checkpoint.parent.mkdir(parents=True)
    checkpoint.write_text('{"state_version": 1}\n')  # a collector checkpoint: not a run, left out
    result = _build(tmp_path, submissions, runs)
    assert (result.submissions, result.beyond_gate) == (2, 1)
    run_id = json.loads(run_file.read_text())["payload"]["submission_id"]
    for config in ("submissions", "measurements", "windows"):
        table = pl.read_parquet(result.out / "data" / config / "train-00000-of-00001.parquet")
        assert run_id not in table["submission_id"].to_list()
    manifest = read_manifest(result.out)
    assert manifest["counts"]["submissions"] == 2
    (entry,) = manifest["beyond_gate"]
    assert entry["submission_id"] == run_id and entry["path"].startswith("runs/")
    assert entry["content_sha256"] == hashlib.sha256(run_file.read_bytes()).hexdigest()
    card = (result.out / "README.md").read_text()
    before, section, after = _split(card)
    assert f"1 signed run was rejected by the validator for its spread alone: the CV of J/token between windows is " \
           f"{_worst_cv(run_file):.2f}%, against" in section  # fmt: skip
    assert "(`runs/`)" in section and "Pooled with the 2 submissions of this version" in section
    assert "Qwen2.5-7B" in section and "Qwen2.5-7B" not in before + after  # the run is pooled in the section only
    assert "494M-7.62B (3)" in section and "494M-3.09B (2)" in before  # the crossover's sizes, pooled or not
    row = next(line for line in section.splitlines() if line.startswith("| Qwen2.5-7B | 7.62B |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert len(cells) == 2 + 3 + 2 and all(cells[2:])  # J/token of fp16, int8, nf4 and the int8 and nf4 changes
    assert cells[5].startswith("+") and cells[6].startswith("-")  # the examples' curve: int8 costs, nf4 saves at 7B
    kind, named = re.search(r"The largest gap is in (run beyond the gate|submission) `(\S+)`", section).groups()
    assert (kind == "run beyond the gate") == (named == run_id)  # the sensor says which kind of file it names
    without = build([Source.at(submissions)], tmp_path / "without")
    plain_before, plain_section, plain_after = _split((without.out / "README.md").read_text())
    assert (plain_before, plain_after) == (before, after)  # the rest of the card is the gated dataset's alone
    assert "given no runs beyond the gate" in plain_section and read_manifest(without.out)["beyond_gate"] == []
    again = _build(tmp_path, submissions, runs, name="again")  # byte-identical with runs beyond the gate too
    for path in sorted(p for p in result.out.rglob("*") if p.is_file()):
        assert path.read_bytes() == (again.out / path.relative_to(result.out)).read_bytes(), path


def test_runs_of_two_folders_are_counted_and_named_together(tmp_path: Path, make_tree: TreeMaker) -> None:
    submissions = make_tree(SMALL[:2])
    first, second = _runs(make_tree, "runs", [_run(7)]), _runs(make_tree, "more-runs", [_run(8, 0.2, FOURTEEN_B)])
    result = _build(tmp_path, submissions, first, second)
    assert result.beyond_gate == 2
    _, section, _ = _split((result.out / "README.md").read_text())
    low, high = sorted(_worst_cv(p) for p in [*discover(first), *discover(second)])
    assert f"2 signed runs were rejected by the validator for their spread alone: the CV of J/token between windows " \
           f"is {low:.2f}-{high:.2f}% in each run's most spread measurement" in section  # fmt: skip
    assert "(`more-runs/`, `runs/`)" in section and "Qwen2.5-14B" in section
    assert {e["path"].split("/")[0] for e in read_manifest(result.out)["beyond_gate"]} == {"runs", "more-runs"}


@pytest.mark.parametrize(
    ("cv", "broken", "example", "message"),
    [
        (0.004, False, False, "passes the CV gate, so it belongs in a submissions folder"),
        (0.10, True, False, "E-INTEGRAL"),
        (0.10, False, True, "is marked example: true"),
    ],
    ids=["passes-the-gate", "another-error", "an-example"],
)
def test_a_run_beyond_the_gate_must_be_a_measurement_that_fails_the_gate_alone(
    tmp_path: Path, make_tree: TreeMaker, cv: float, broken: bool, example: bool, message: str
) -> None:
    document = _run(8, cv=cv, example=example)
    if broken:  # a counter that disagrees with the power integral by far more than 5%
        document["payload"]["measurements"][0]["windows"][0]["energy_j"] *= 1.5
    submissions = make_tree(SMALL[:1])
    runs = _runs(make_tree, "runs", [document])
    with pytest.raises(BuildRefusedError) as refused:
        _build(tmp_path, submissions, runs)
    assert message in str(refused.value) and "1 of 1 runs beyond the gate" in str(refused.value)
    assert not (tmp_path / "out").exists()


def test_an_id_in_the_dataset_and_beyond_the_gate_is_refused(tmp_path: Path, make_tree: TreeMaker) -> None:
    submissions = make_tree(SMALL[:1], first_seed=100)
    spread = example_document(SMALL[0], 100, n_windows=6, cv=0.10)  # the same id, other windows
    spread["payload"]["example"] = False
    runs = _runs(make_tree, "runs", [spread])
    with pytest.raises(BuildRefusedError, match=r"submission id \S+ is in both submissions/.* and runs/"):
        _build(tmp_path, submissions, runs)
    assert not (tmp_path / "out").exists()


def test_a_folder_given_twice_is_refused(tmp_path: Path, make_tree: TreeMaker) -> None:
    submissions = make_tree(SMALL[:1])
    runs = _runs(make_tree, "runs", [_run(7)])
    with pytest.raises(UsageError, match="is given more than once"):
        _build(tmp_path, submissions, runs, runs.parent / "." / "runs")
    assert not (tmp_path / "out").exists()


def test_build_command_takes_runs_beyond_the_gate(
    tmp_path: Path, make_tree: TreeMaker, capsys: pytest.CaptureFixture[str]
) -> None:
    submissions = make_tree(SMALL[:2])
    runs = _runs(make_tree, "runs", [_run(7)])  # checked against submissions/allowed_signers: it has none
    code = main(["publish", "build", "--submissions", str(submissions), "--beyond-gate", str(runs),
                 "--out", str(tmp_path / "out")])  # fmt: skip
    assert code == 0
    assert "1 run(s) beyond the gate in the card" in capsys.readouterr().out.replace("\n", " ")
    code = main(["publish", "build", "--submissions", str(submissions), "--beyond-gate", str(tmp_path / "nope"),
                 "--out", str(tmp_path / "out2")])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "runs folder" in err and "--beyond-gate" in err and "Traceback" not in err
