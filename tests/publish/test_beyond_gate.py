"""Runs beyond the gate (``--beyond-gate``): in the card and the manifest, never in the tables; E-CV alone."""

from __future__ import annotations

import hashlib
import json
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
from ecocompute.validate.core import discover

SEVEN_B = Spec("Qwen2.5-7B", 7_615_616_512, "eager", 1, ("fp16", "nf4", "int8"))


def _run(seed: int, cv: float = 0.10) -> dict[str, Any]:
    """An unsigned 7B document (beside SMALL's sizes) whose J/token spreads by ``cv`` (0.10: far above the gate)."""
    document = example_document(SEVEN_B, seed, n_windows=6, cv=cv)
    document["payload"]["example"] = False
    document["payload"]["notes"] = "synthetic test data"
    return document


def _build(tmp_path: Path, submissions: Path, runs: Path, name: str = "out") -> BuildResult:
    return build([Source.at(submissions)], tmp_path / name, beyond=[Source.at(runs, submissions / "allowed_signers")])


def _section(card: str) -> str:
    return card.split("## Beyond the gate", 1)[1].split("\n## ", 1)[0]


def test_runs_beyond_the_gate_reach_the_card_and_the_manifest_but_not_the_tables(
    tmp_path: Path, make_tree: TreeMaker
) -> None:
    submissions = make_tree(SMALL[:2])  # eager 0.5B and 3B, fp16 and nf4, within the gate
    runs = make_tree((), name="runs", documents=[_run(7)])
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
    assert entry["submission_id"] == run_id
    assert entry["content_sha256"] == hashlib.sha256(run_file.read_bytes()).hexdigest()
    card = (result.out / "README.md").read_text()
    main_part, section = card.split("## Beyond the gate", 1)[0], _section(card)
    assert "1 signed run was rejected" in section and "`runs/`" in section
    assert "Qwen2.5-7B" in section and "Qwen2.5-7B" not in main_part  # the run is pooled in the section only
    assert "494M-7.62B (3)" in section and "494M-3.09B (2)" in main_part  # the crossover's sizes, pooled or not
    int8_change = next(line for line in section.splitlines() if line.startswith("| Qwen2.5-7B | 7.62B |"))
    assert int8_change.count("%") >= 4  # J/token CIs and the nf4 and int8 changes of the 7B run
    low, high = _max_cv(run_file)
    assert f"is {low:.2f}-{high:.2f}% in each run's most spread measurement" in section
    again = _build(tmp_path, submissions, runs, name="again")  # byte-identical with runs beyond the gate too
    for path in sorted(p for p in result.out.rglob("*") if p.is_file()):
        assert path.read_bytes() == (again.out / path.relative_to(result.out)).read_bytes(), path


def _max_cv(path: Path) -> tuple[float, float]:
    """The largest CV of J/token of the run at ``path``, from its windows (one run: low equals high)."""
    from ecocompute.schema.derive import derive
    from ecocompute.schema.io import load_submission

    p = load_submission(path).payload
    worst = max(derive(m.windows, p.idle.power_w).cv_pct for m in p.measurements)
    return worst, worst


def test_a_card_without_runs_beyond_the_gate_says_so(tmp_path: Path, make_tree: TreeMaker) -> None:
    result = build([Source.at(make_tree(SMALL[:1]))], tmp_path / "out")
    assert result.beyond_gate == 0 and read_manifest(result.out)["beyond_gate"] == []
    assert "built from accepted submissions alone" in _section((result.out / "README.md").read_text())


@pytest.mark.parametrize(
    ("cv", "broken", "message"),
    [(0.004, False, "passes the CV gate, so it belongs in a submissions folder"), (0.10, True, "E-INTEGRAL")],
    ids=["passes-the-gate", "another-error"],
)
def test_a_run_beyond_the_gate_must_fail_the_gate_alone(
    tmp_path: Path, make_tree: TreeMaker, cv: float, broken: bool, message: str
) -> None:
    document = _run(8, cv=cv)
    if broken:  # a counter that disagrees with the power integral by far more than 5%
        document["payload"]["measurements"][0]["windows"][0]["energy_j"] *= 1.5
    submissions = make_tree(SMALL[:1])
    runs = make_tree((), name="runs", documents=[document])
    with pytest.raises(BuildRefusedError) as refused:
        _build(tmp_path, submissions, runs)
    assert message in str(refused.value) and "runs beyond the gate" in str(refused.value)
    assert not (tmp_path / "out").exists()


def test_an_id_in_the_dataset_and_beyond_the_gate_is_refused(tmp_path: Path, make_tree: TreeMaker) -> None:
    submissions = make_tree(SMALL[:1], first_seed=100)
    spread = example_document(SMALL[0], 100, n_windows=6, cv=0.10)  # the same id, other windows
    spread["payload"]["example"] = False
    runs = make_tree((), name="runs", documents=[spread])
    with pytest.raises(BuildRefusedError, match=r"submission id \S+ is in both submissions/.* and runs/"):
        _build(tmp_path, submissions, runs)
    assert not (tmp_path / "out").exists()


def test_build_command_takes_runs_beyond_the_gate(
    tmp_path: Path, make_tree: TreeMaker, capsys: pytest.CaptureFixture[str]
) -> None:
    submissions = make_tree(SMALL[:2])
    runs = make_tree((), name="runs", documents=[_run(7)])
    code = main(["publish", "build", "--submissions", str(submissions), "--beyond-gate", str(runs),
                 "--out", str(tmp_path / "out")])  # fmt: skip
    assert code == 0
    assert "2 submissions" in capsys.readouterr().out.replace("\n", " ")
    assert read_manifest(tmp_path / "out")["beyond_gate"][0]["path"].startswith("runs/")
    code = main(["publish", "build", "--submissions", str(submissions), "--beyond-gate", str(tmp_path / "nope"),
                 "--out", str(tmp_path / "out2")])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "runs folder" in err and "--beyond-gate" in err and "Traceback" not in err
