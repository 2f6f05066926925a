"""scripts/reference/land.py: a sitting's archive is signed and filed by the validator's verdict."""

from __future__ import annotations

import io
import json
import tarfile
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

import pytest
from factories import load_script, make_key, submission_document

from ecocompute.schema.errors import EcocomputeError
from ecocompute.schema.io import load_document
from ecocompute.schema.signing import parse_allowed_signers, verify_document

ROOT = Path(__file__).resolve().parents[2]


def _land() -> ModuleType:
    return load_script(ROOT / "scripts" / "reference" / "land.py")


def _archive(path: Path, files: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _doc(seed: int, cv: float, *, broken: bool = False, minute: int = 0) -> bytes:
    created = datetime(2026, 11, 29, 12, minute, tzinfo=UTC)
    doc = submission_document(seed, login="ecocompute-reference", cv=cv, example=False, created=created)
    if broken:  # a counter that disagrees with the power integral by far more than 5%
        doc["payload"]["measurements"][0]["windows"][0]["energy_j"] *= 1.5
    return json.dumps(doc).encode()


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "submissions").mkdir(parents=True)
    (repo / "submissions" / "allowed_signers").write_text("# allowed signers\n")
    return repo


def test_a_sitting_is_signed_and_filed_by_verdict(tmp_path: Path) -> None:
    land = _land()
    repo = _repo(tmp_path)
    key = make_key(tmp_path, "sitting")
    archive = _archive(tmp_path / "eco.tgz", {
        "out/ecocompute-reference/nvidia-h200/a.json": _doc(1, cv=0.004),
        "out/reproducibility/run-0-b.json": _doc(2, cv=0.004),
        "out/ecocompute-reference/nvidia-h200/c.json": _doc(3, cv=0.10),
        "out/ecocompute-reference/nvidia-h200/d.json": _doc(4, cv=0.004, broken=True),
        "results/reproducibility-x.json": b"{}\n",
        "results/pytest-gpu.txt": b"5 passed\n",
        "logs/worker-0.log": b"chain done\n",
    })  # fmt: skip
    landed = land.land([archive], key, "sitting-9", root=repo)
    assert [p.parent.relative_to(repo).as_posix() for p in landed.accepted] == [
        "submissions/ecocompute-reference/nvidia-h200"
    ] * 2
    (spread,) = landed.spread_only
    assert spread.parent.relative_to(repo).as_posix() == "runs/ecocompute-reference/nvidia-h200"
    (refused,) = landed.refused
    assert refused.startswith("eco.tgz:out/ecocompute-reference/nvidia-h200/d.json: ") and "E-INTEGRAL" in refused
    signers = repo / "submissions" / "allowed_signers"
    assert "ecocompute-reference ssh-ed25519 " in signers.read_text() and "H200 sitting-9" in signers.read_text()
    allowed = parse_allowed_signers(signers)
    for path in [*landed.accepted, spread]:
        assert verify_document(load_document(path), allowed).signer == "ecocompute-reference"
    assert (repo / "benchmarks" / "results" / "reproducibility-x.json").is_file()
    logs = repo / "runs" / "ecocompute-reference" / "logs" / "sitting-9"
    assert (logs / "pytest-gpu.txt").is_file() and (logs / "worker-0.log").is_file()
    # landing the same archive again changes nothing and adds no second key line
    again = land.land([archive], key, "sitting-9", root=repo)
    assert again.accepted == again.spread_only == again.other == []
    assert len(again.present) == 6  # three submissions, three results and logs
    assert signers.read_text().count("ecocompute-reference ") == 1


def test_conflicts_and_bad_files_are_refused_by_name_and_the_rest_lands(tmp_path: Path) -> None:
    land = _land()
    repo = _repo(tmp_path)
    key = make_key(tmp_path, "sitting")
    (repo / "benchmarks" / "results").mkdir(parents=True)
    (repo / "benchmarks" / "results" / "overhead.txt").write_text("an earlier sitting's result\n")
    first = _archive(tmp_path / "first.tgz", {
        "out/ecocompute-reference/nvidia-h200/same.json": _doc(1, cv=0.004),
        "out/ecocompute-reference/nvidia-h200/truncated.json": _doc(2, cv=0.004)[:300],
        "logs/worker-0.log": b"chain started\n",
    })  # fmt: skip
    second = _archive(tmp_path / "second.tgz", {
        "out/reproducibility/run-0-same.json": _doc(1, cv=0.005),  # the same id with other windows
        "out/ecocompute-reference/nvidia-h200/fine.json": _doc(3, cv=0.004),
        "results/overhead.txt": b"this sitting's result\n",
        "logs/worker-0.log": b"chain started\nchain done\n",
    })  # fmt: skip
    landed = land.land([first, second], key, "sitting-9", root=repo)
    assert [p.name for p in landed.accepted] == [json.loads(_doc(3, 0.004))["payload"]["submission_id"] + ".json"]
    assert any(r.startswith("first.tgz:out/ecocompute-reference/nvidia-h200/truncated.json: ") for r in landed.refused)
    assert any("second.tgz:out/reproducibility/run-0-same.json" in r and "neither is landed" in r
               for r in landed.refused)  # fmt: skip
    assert (repo / "benchmarks" / "results" / "overhead.txt").read_text() == "an earlier sitting's result\n"
    assert (repo / "benchmarks" / "results" / "overhead-sitting-9.txt").read_text() == "this sitting's result\n"
    log = repo / "runs" / "ecocompute-reference" / "logs" / "sitting-9" / "worker-0.log"
    assert log.read_text() == "chain started\nchain done\n"  # the later archive's copy
    assert not list(repo.rglob("*.tmp"))


def test_a_wrong_key_or_a_missing_archive_writes_nothing(tmp_path: Path) -> None:
    land = _land()
    repo = _repo(tmp_path)
    (tmp_path / "not-a-key").write_text("garbage\n")
    archive = _archive(tmp_path / "eco.tgz", {"out/x/y/a.json": _doc(1, cv=0.004)})
    for archives, key, message in (([tmp_path / "nope.tgz"], make_key(tmp_path, "k"), "no such archive"),
                                   ([archive], tmp_path / "not-a-key", "not a usable private key")):  # fmt: skip
        with pytest.raises(EcocomputeError, match=message):
            land.land(archives, key, "sitting-9", root=repo)
    assert (repo / "submissions" / "allowed_signers").read_text() == "# allowed signers\n"
    assert sorted(p.name for p in repo.rglob("*")) == ["allowed_signers", "submissions"]
