"""The shipped artifact is the build of this checkout's data; imports enter the literature tier only."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from ecocompute.cli import main
from ecocompute.estimate import Question, estimate, load_artifact
from ecocompute.estimate.build import artifact_text
from ecocompute.estimate.imports import import_reports
from ecocompute.estimate.repo import SHIPPED, repo_artifact
from ecocompute.schema.errors import UsageError

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "tests" / "estimate" / "data" / "mlcube_energy.example.json"


def test_the_shipped_artifact_is_not_stale() -> None:
    # builds submissions/ and runs/ through the validator (a few seconds: it checks every signature)
    fresh = artifact_text(repo_artifact(ROOT))
    assert fresh == SHIPPED.read_text(encoding="utf-8"), (
        "estimate/data/artifact.json is stale: run `python -m ecocompute.estimate.repo` and commit it"
    )


def test_the_artifact_is_versioned_and_cites_its_data() -> None:
    artifact = load_artifact()
    assert artifact["schema_version"].startswith("1.")
    dataset = artifact["dataset"]
    assert {"version", "doi", "newest_submission_at", "citation"} <= set(dataset)
    ids = {i for g in artifact["groups"] for c in g["cells"] for i in c["submission_ids"]}
    assert len(ids) == dataset["submissions"]
    published = [g for g in artifact["groups"] if g["source"] == "published"]
    assert published and all(g["doi"].startswith("10.5281/zenodo.") for g in published)
    assert all(not c["submission_ids"] for g in published for c in g["cells"])


def report(**results: object) -> dict:
    data = json.loads(EXAMPLE.read_text())
    data["measurement_source"] = "direct-nvml"
    data["results"] = {**data["results"], "note": "measured", **results}
    data["system_under_test"]["gpu"] = "RTX 3090"
    data["system_under_test"]["gpu_arch"] = "ampere"
    return data


def test_an_imported_report_is_published_evidence_never_a_measurement(tmp_path: Path) -> None:
    path = tmp_path / "energy.json"
    path.write_text(json.dumps(report()))
    before = load_artifact()
    after = import_reports(copy.deepcopy(before), [path])
    new = [g for g in after["groups"] if g["gpu"] == "RTX 3090"]
    assert [g["source"] for g in new] == ["published"] and new[0]["tier"] == "published"

    def measured_cells(artifact: dict) -> list[tuple[str, int]]:
        return [(g["id"], len(g["cells"])) for g in artifact["groups"] if g["source"] == "measured"]

    assert measured_cells(after) == measured_cells(before)
    answer = estimate(Question(gpu="RTX 3090", params_b=3.0, precision="nf4"), after)
    assert answer.source == "published" and answer.basis == "measured" and answer.submission_ids == []


def test_import_refuses_illustrative_bad_and_fp16_reports(tmp_path: Path) -> None:
    artifact = load_artifact()
    with pytest.raises(UsageError, match="illustrative"):
        import_reports(artifact, [EXAMPLE])
    bad = tmp_path / "bad.json"
    data = report()
    data["workload"]["precision"] = "FP8"
    bad.write_text(json.dumps(data))
    with pytest.raises(UsageError, match="workload/precision"):
        import_reports(artifact, [bad])


def test_cli_estimate_json_and_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["estimate", "--gpu", "H200", "--params-b", "7.6", "--precision", "nf4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["basis"] == "measured"
    assert main(["estimate", "--gpu", "H200", "--params-b", "7.6", "--precision", "fp8"]) == 2
    assert "precision" in capsys.readouterr().err
    path = tmp_path / "energy.json"
    path.write_text(json.dumps(report()))
    assert main(["import", str(path), "--out", str(tmp_path / "a.json")]) == 0
    capsys.readouterr()
    args = ["estimate", "--gpu", "RTX 3090", "--params-b", "3", "--precision", "nf4", "--artifact", str(tmp_path)]
    assert main([*args[:-1], str(tmp_path / "a.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["source"] == "published"


@pytest.mark.parametrize("command", ["estimate", "import", "serve"])
def test_help_ends_with_an_example(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "--help"]) == 0
    assert "Example: ecocompute " + command in capsys.readouterr().out
