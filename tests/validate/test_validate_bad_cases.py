"""Every finding code has a case that yields exactly that code (tests/data/bad/, made by make_bad.py)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from validate_helpers import Tree

from ecocompute.validate.core import FileResult, validate_files
from ecocompute.validate.findings import CODES, GATE_CODES

BAD = Path(__file__).parents[1] / "data" / "bad"
MANIFEST = json.loads((BAD / "manifest.json").read_text())
MADE_IN_TESTS = {"E-READ", "E-SYMLINK", "E-SPECIAL", "W-SIGNERS-LINE", "E-SIGNATURE-SHA1"}
NOT_PRODUCIBLE = {"E-INTERNAL", "E-DERIVE"}  # guards: a validator bug, windows no schema-valid file has


def run_case(code: str) -> FileResult:
    case = MANIFEST[code]
    folder = BAD / code
    return validate_files(
        [folder / case["file"]],
        allowed_signers=BAD / "allowed_signers",
        submissions_root=folder / case["root"],
        pr_author=case["pr_author"],
    )[0]


def test_every_code_has_a_case() -> None:
    assert set(MANIFEST) | MADE_IN_TESTS | NOT_PRODUCIBLE == set(CODES)


@pytest.mark.parametrize("code", sorted(c for c in MANIFEST if c.startswith("E-") and c not in GATE_CODES))
def test_bad_case_is_rejected_with_exactly_its_code(code: str) -> None:
    result = run_case(code)
    assert not result.accepted
    assert {f.code for f in result.findings} == {code, *MANIFEST[code].get("also", [])}, result.findings


def test_cv_case_is_accepted_into_the_all_tier_with_its_finding() -> None:
    result = run_case("E-CV")
    assert result.accepted and not result.passes_cv_gate and result.tier == "all"
    assert {f.code for f in result.findings} == {"E-CV"} and result.rejections == ()


@pytest.mark.parametrize("code", sorted(c for c in MANIFEST if c.startswith("W-")))
def test_warning_case_is_accepted_with_exactly_its_warning(code: str) -> None:
    result = run_case(code)
    assert result.accepted
    assert {f.code for f in result.findings} == {code, *MANIFEST[code].get("also", [])}, result.findings


def test_directory_named_like_a_submission_is_a_read_finding(tree: Tree) -> None:
    folder = tree.file.with_name("20261130T120100Z-00000000.json")
    folder.mkdir()
    [result] = validate_files([folder], allowed_signers=tree.allowed_signers, submissions_root=tree.root)
    assert [f.code for f in result.findings] == ["E-READ"]


def test_missing_file_is_a_read_finding(tree: Tree) -> None:
    [result] = validate_files(
        [tree.file.with_name("gone.json")], allowed_signers=tree.allowed_signers, submissions_root=tree.root
    )
    assert [f.code for f in result.findings] == ["E-READ"]


def test_symlinked_file_is_rejected(tree: Tree, tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    shutil.move(tree.file, real)
    tree.file.symlink_to(real)
    [result] = validate_files([tree.file], allowed_signers=tree.allowed_signers, submissions_root=tree.root)
    assert [f.code for f in result.findings] == ["E-SYMLINK"]
    assert result.content_sha256 is None


def test_symlinked_folder_in_the_path_is_rejected(tree: Tree, tmp_path: Path) -> None:
    login_dir = tree.file.parents[1]
    real = tmp_path / "elsewhere"
    shutil.move(login_dir, real)
    login_dir.symlink_to(real, target_is_directory=True)
    [result] = validate_files([tree.file], allowed_signers=tree.allowed_signers, submissions_root=tree.root)
    assert [f.code for f in result.findings] == ["E-SYMLINK"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_named_pipe_is_not_read(tree: Tree) -> None:
    fifo = tree.file.with_name("20261130T120100Z-00000000.json")
    os.mkfifo(fifo)
    [result] = validate_files([fifo], allowed_signers=tree.allowed_signers, submissions_root=tree.root)
    assert [f.code for f in result.findings] == ["E-SPECIAL"]


def test_file_over_the_cap_is_not_parsed(tree: Tree) -> None:
    big = tree.file.with_name("20261130T120100Z-00000000.json")
    big.write_bytes(b"[" + b" " * (5 * 1024 * 1024) + b"]")
    [result] = validate_files([big], allowed_signers=tree.allowed_signers, submissions_root=tree.root)
    assert [f.code for f in result.findings] == ["E-SIZE"]
