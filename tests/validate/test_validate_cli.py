"""The ``ecocompute validate`` and ``validate-signers`` commands: exit codes, outputs, git selection."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from validate_helpers import EXAMPLE_RELPATH, Tree, example_tree

from ecocompute.cli import main
from ecocompute.validate.report import MARKER


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["validate", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_committed_example_is_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = example_tree(tmp_path)
    code, out, _ = run(capsys, "--root", t.root, "--allowed-signers", t.allowed_signers)
    assert code == 0
    assert "accepted" in out


def test_exit_1_when_a_file_is_rejected(tree: Tree, capsys: pytest.CaptureFixture[str]) -> None:
    tree.file.write_text("{}")
    code, out, _ = run(capsys, tree.file, "--root", tree.root, "--allowed-signers", tree.allowed_signers)
    assert code == 1
    assert "E-VERSION" in out


def test_exit_0_for_a_valid_file_and_1_for_the_wrong_pr_author(tree: Tree, capsys: pytest.CaptureFixture[str]) -> None:
    args = (tree.file, "--root", tree.root, "--allowed-signers", tree.allowed_signers)
    assert run(capsys, *args)[0] == 0
    assert run(capsys, *args, "--pr-author", "EXAMPLE-USER")[0] == 0
    code, out, _ = run(capsys, *args, "--pr-author", "someone-else")
    assert code == 1 and "E-PR-AUTHOR" in out


def test_max_cv_gate_is_an_option_and_e_cv_alone_is_the_all_tier(
    tree: Tree, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report_md = tmp_path / "report.md"
    args = (tree.file, "--root", tree.root, "--allowed-signers", tree.allowed_signers, "--max-cv", "0.01")
    code, out, _ = run(capsys, *args, "--report-md", report_md)
    assert code == 0 and "E-CV" in out and "all tier" in out
    assert "all tier" in report_md.read_text() and "E-CV" in report_md.read_text()
    code, out, _ = run(capsys, *args, "--json")
    [entry] = json.loads(out)["files"]
    assert code == 0 and entry["accepted"] and entry["passes_cv_gate"] is False and entry["tier"] == "all"


@pytest.mark.parametrize(
    "args",
    [
        ("--allowed-signers", "missing_signers"),
        ("nope.json", "--allowed-signers", "{signers}"),
        ("--allowed-signers", "{signers}", "--pr-author", "not a login!"),
        ("--allowed-signers", "{signers}", "--max-cv", "-1"),
        ("--allowed-signers", "{signers}", "--no-such-option"),
        ("--allowed-signers", "{signers}", "--report-md", "{root}/report.md"),
        ("--allowed-signers", "{signers}", "--root", "no_such_root"),
        ("{file}", "--changed-since", "main", "--allowed-signers", "{signers}"),
    ],
)
def test_exit_2_for_usage_and_io_errors(
    tree: Tree, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...]
) -> None:
    monkeypatch.chdir(tree.root.parent)
    values = {"signers": tree.allowed_signers, "root": tree.root, "file": tree.file}
    filled = [a.format(**values) for a in args]
    if "--root" not in filled:
        filled += ["--root", str(tree.root)]
    code, _, err = run(capsys, *filled)
    assert code == 2, err
    assert "Traceback" not in err


def test_report_inside_root_is_refused_and_nothing_written(tree: Tree, capsys: pytest.CaptureFixture[str]) -> None:
    before = sorted(tree.root.rglob("*"))
    code, _, err = run(
        capsys, "--root", tree.root, "--allowed-signers", tree.allowed_signers, "--report-md", tree.root / "r.md"
    )
    assert code == 2 and "never writes" in err
    assert sorted(tree.root.rglob("*")) == before


def test_json_output(tree: Tree, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--json", "--root", tree.root, "--allowed-signers", tree.allowed_signers)
    assert code == 0
    report = json.loads(out)
    assert report["accepted"] is True
    [entry] = report["files"]
    assert entry["submission_id"] == tree.file.stem
    assert [m["precision"] for m in entry["measurements"]] == ["fp16", "nf4"]
    assert entry["measurements"][0]["derived"]["cv_pct"] < 2


def test_markdown_report_and_annotations(tmp_path: Path, tree: Tree, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tree.file.with_name("20261130T120100Z-00000000.json")
    bad.write_bytes(b"\x00")
    report = tmp_path / "report.md"
    code, out, _ = run(
        capsys, "--root", tree.root, "--allowed-signers", tree.allowed_signers, "--report-md", report, "--annotations"
    )
    assert code == 1
    text = report.read_text()
    assert text.startswith(MARKER)
    assert "| precision | J/token | 95% CI (J) | CV % | windows | verdict |" in text
    assert "E-BINARY" in text
    assert "::error file=" in out and "title=E-BINARY::" in out


def test_annotations_on_in_github_actions(
    tree: Tree, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tree.file.write_text("[]")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    code, out, _ = run(capsys, "--root", tree.root, "--allowed-signers", tree.allowed_signers)
    assert code == 1 and "::error file=" in out


def test_folder_argument_is_expanded(tree: Tree, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, tree.root, "--root", tree.root, "--allowed-signers", tree.allowed_signers, "--json")
    assert code == 0 and len(json.loads(out)["files"]) == 1


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.invalid")
    git(repo, "config", "user.name", "t")
    git(repo, "config", "commit.gpgsign", "false")
    (repo / "submissions").mkdir()
    (repo / "submissions" / "allowed_signers").write_text("# keys\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "pr")
    monkeypatch.chdir(repo)
    return repo


def test_changed_since_validates_only_added_files(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    t = example_tree(tmp_path / "ex")
    old = repo / "submissions" / "old.json"
    old.write_text("not json")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "old bad file on base")
    git(repo, "branch", "-f", "main")
    target = repo / "submissions" / EXAMPLE_RELPATH
    target.parent.mkdir(parents=True)
    target.write_bytes(t.file.read_bytes())
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "add a submission")
    code, out, _ = run(capsys, "--changed-since", "main", "--allowed-signers", t.allowed_signers, "--json")
    assert code == 0
    assert [Path(f["path"]) for f in json.loads(out)["files"]] == [Path("submissions") / EXAMPLE_RELPATH]


def test_changed_since_sees_a_renamed_file(repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    t = example_tree(tmp_path / "ex")
    target = repo / "submissions" / EXAMPLE_RELPATH
    target.parent.mkdir(parents=True)
    target.write_bytes(t.file.read_bytes())
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "add")
    git(repo, "branch", "-f", "main")
    git(repo, "mv", str(target), str(target.with_name("renamed.json")))
    git(repo, "commit", "-q", "-m", "rename")
    code, out, _ = run(capsys, "--changed-since", "main", "--allowed-signers", t.allowed_signers, "--json")
    assert code == 1
    [entry] = json.loads(out)["files"]
    assert entry["path"].endswith("renamed.json")
    assert {f["code"] for f in entry["findings"]} == {"E-PATH", "W-EXAMPLE", "W-GPU-UNKNOWN"}  # a synthetic GPU


def test_changed_since_unknown_ref_is_exit_2(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--changed-since", "no-such-ref", "--allowed-signers", "submissions/allowed_signers")
    assert code == 2 and "fetch" in err


def test_changed_since_with_nothing_changed_is_exit_0(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--changed-since", "main", "--allowed-signers", "submissions/allowed_signers")
    assert code == 0 and "no submission files" in out


def signers_run(capsys: pytest.CaptureFixture[str], *args: Any) -> tuple[int, str]:
    code = main(["validate-signers", *map(str, args)])
    return code, capsys.readouterr().out


def test_validate_signers(repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    published = tmp_path / "alice.keys"
    published.write_text("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA9vj8UilgrlPNPlP2f9j2yq78ijNo1Ydvj5JBE81ikV\n")
    signers = repo / "submissions" / "allowed_signers"
    args = ("--changed-since", "main", "--pr-author", "alice", "--published-keys", published)
    assert signers_run(capsys, *args)[0] == 0
    with signers.open("a") as handle:
        handle.write("alice ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA9vj8UilgrlPNPlP2f9j2yq78ijNo1Ydvj5JBE81ikV\n")
    assert signers_run(capsys, *args)[0] == 0
    with signers.open("a") as handle:
        handle.write("mallory ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA9vj8UilgrlPNPlP2f9j2yq78ijNo1Ydvj5JBE81ikV\n")
    code, out = signers_run(capsys, *args)
    assert code == 1 and "mallory" in out


@pytest.mark.parametrize("command", ["validate", "validate-signers"])
def test_help_has_an_example(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "--help"]) == 0
    assert "Example:" in capsys.readouterr().out
