"""tools/land.py: a sitting's archive is signed and filed by the validator's verdict."""

from __future__ import annotations

import io
import json
import random
import tarfile
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

import pytest
from factories import load_script, make_key, submission_document, window

from ecocompute.collector import MeasurementState, RunState, read_state
from ecocompute.schema.errors import EcocomputeError
from ecocompute.schema.io import load_document
from ecocompute.schema.models import Precision, Window
from ecocompute.schema.signing import parse_allowed_signers, verify_document

HOME = Path(__file__).resolve().parents[1]
CAMPAIGN = HOME.relative_to(HOME.parents[1])  # campaigns/NAME, as in the repository


def _land() -> ModuleType:
    return load_script(HOME / "tools" / "land.py")


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
        "results/compile-bnb-y.txt": b"UserWarning: ...\n",  # its .json never came: the lease cut it
        "logs/worker-0.log": b"chain done\n",
    })  # fmt: skip
    landed = land.land([archive], key, "sitting-9", root=repo)
    assert [p.parent.relative_to(repo).as_posix() for p in landed.accepted] == [
        "submissions/ecocompute-reference/nvidia-h200"
    ] * 2
    (spread,) = landed.spread_only
    assert spread.parent.relative_to(repo).as_posix() == "submissions/ecocompute-reference/nvidia-h200"
    (refused,) = landed.refused
    assert refused.startswith("eco.tgz:out/ecocompute-reference/nvidia-h200/d.json: ") and "E-INTEGRAL" in refused
    signers = repo / "submissions" / "allowed_signers"
    assert "ecocompute-reference ssh-ed25519 " in signers.read_text() and "H200 sitting-9" in signers.read_text()
    allowed = parse_allowed_signers(signers)
    for path in [*landed.accepted, spread]:
        assert verify_document(load_document(path), allowed).signer == "ecocompute-reference"
    assert (repo / CAMPAIGN / "results" / "reproducibility-x.json").is_file()
    logs = repo / CAMPAIGN / "logs" / "sitting-9"
    assert (logs / "pytest-gpu.txt").is_file() and (logs / "worker-0.log").is_file()
    assert (logs / "compile-bnb-y.txt").is_file()
    assert not (repo / CAMPAIGN / "results" / "compile-bnb-y.txt").exists()
    # landing the same archive again changes nothing and adds no second key line
    again = land.land([archive], key, "sitting-9", root=repo)
    assert again.accepted == again.spread_only == again.other == []
    assert len(again.present) == 7  # three submissions, four results and logs
    assert signers.read_text().count("ecocompute-reference ") == 1


def test_conflicts_and_bad_files_are_refused_by_name_and_the_rest_lands(tmp_path: Path) -> None:
    land = _land()
    repo = _repo(tmp_path)
    key = make_key(tmp_path, "sitting")
    (repo / CAMPAIGN / "results").mkdir(parents=True)
    (repo / CAMPAIGN / "results" / "overhead.txt").write_text("an earlier sitting's result\n")
    first = _archive(tmp_path / "first.tgz", {
        "out/ecocompute-reference/nvidia-h200/same.json": _doc(1, cv=0.004),
        "out/ecocompute-reference/nvidia-h200/truncated.json": _doc(2, cv=0.004)[:300],
        "logs/worker-0.log": b"chain started\n",
    })  # fmt: skip
    second = _archive(tmp_path / "second.tgz", {
        "out/reproducibility/run-0-same.json": _doc(1, cv=0.005),  # the same id with other windows
        "out/ecocompute-reference/nvidia-h200/fine.json": _doc(3, cv=0.004),
        "results/overhead.json": b"{}\n",
        "results/overhead.txt": b"this sitting's result\n",
        "logs/worker-0.log": b"chain started\nchain done\n",
    })  # fmt: skip
    landed = land.land([first, second], key, "sitting-9", root=repo)
    assert [p.name for p in landed.accepted] == [json.loads(_doc(3, 0.004))["payload"]["submission_id"] + ".json"]
    assert any(r.startswith("first.tgz:out/ecocompute-reference/nvidia-h200/truncated.json: ") for r in landed.refused)
    assert any("second.tgz:out/reproducibility/run-0-same.json" in r and "neither is landed" in r
               for r in landed.refused)  # fmt: skip
    assert (repo / CAMPAIGN / "results" / "overhead.txt").read_text() == "an earlier sitting's result\n"
    assert (repo / CAMPAIGN / "results" / "overhead-sitting-9.txt").read_text() == "this sitting's result\n"
    log = repo / CAMPAIGN / "logs" / "sitting-9" / "worker-0.log"
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


def _checkpoint(submission_id: str, windows: int) -> bytes:
    """A collector state file (``RunState.to_json``) of a cut run with ``windows`` fp16 windows measured."""
    rng = random.Random(7)
    start = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    fp16 = [Window.model_validate(window(i, start, 0.44, rng, 0.02)) for i in range(windows)]
    state = RunState(
        config={"arch": "Qwen2.5-1.5B", "stack": "eager", "batch_size": 8},
        submission_id=submission_id,
        started_at=start,
        measurements={
            Precision.FP16: MeasurementState(Precision.FP16, windows=fp16),
            Precision.NF4: MeasurementState(Precision.NF4),
        },
        idle_power_w_before=124.1,
    )
    return json.dumps(state.to_json()).encode()


def test_a_cut_runs_checkpoint_lands_in_checkpoints_when_it_measured_a_window(tmp_path: Path) -> None:
    land = _land()
    repo = _repo(tmp_path)
    key = make_key(tmp_path, "sitting")
    finished_id = json.loads(_doc(1, cv=0.004))["payload"]["submission_id"]
    first = _archive(tmp_path / "first.tgz", {
        "state/run-aaaa.json": _checkpoint("20261129T120000Z-0000cut1", windows=1),
        "state/run-bbbb.json": _checkpoint("20261129T120000Z-00nowin2", windows=0),  # the lease ended while loading
        "state/run-cccc.json": b'{"state_version": 1}',
    })  # fmt: skip
    second = _archive(tmp_path / "second.tgz", {
        "out/ecocompute-reference/nvidia-h200/a.json": _doc(1, cv=0.004),
        "state/run-aaaa.json": _checkpoint("20261129T120000Z-0000cut1", windows=3),
        "state/run-dddd.json": _checkpoint(finished_id, windows=2),  # its submission is in the archive
    })  # fmt: skip
    landed = land.land([first, second], key, "sitting-9", root=repo)
    (target,) = landed.checkpoints
    name = "20261129T120000Z-0000cut1.qwen2.5-1.5b-eager.partial.json"
    assert target.relative_to(repo) == CAMPAIGN / "checkpoints" / name
    saved = read_state(target)  # the later archive's copy, which has more windows
    assert [len(m.windows) for m in saved.measurements.values()] == [3, 0]
    (refused,) = landed.refused
    assert refused.startswith("state/run-cccc.json: ") and "is damaged" in refused
    again = land.land([second], key, "sitting-9", root=repo)
    assert again.checkpoints == [] and any(f"already at {CAMPAIGN}/checkpoints/" in p for p in again.present)
    # other windows under a committed checkpoint's name are refused, and the committed file is kept
    other = _archive(tmp_path / "other.tgz", {"state/run-aaaa.json": _checkpoint("20261129T120000Z-0000cut1", 2)})
    (clash,) = land.land([other], key, "sitting-9", root=repo).refused
    assert "exists with other windows" in clash
    assert [len(m.windows) for m in read_state(target).measurements.values()] == [3, 0]
    # a checkpoint of a run whose submission is already committed is not landed
    late = _archive(tmp_path / "late.tgz", {"state/run-dddd.json": _checkpoint(finished_id, windows=2)})
    landed = land.land([late], key, "sitting-9", root=repo)
    assert landed.checkpoints == landed.refused == []
    assert len(list((repo / CAMPAIGN / "checkpoints").iterdir())) == 1
