"""Never crash, never hang: any file name, unreadable paths, special files, many copies; and a data PR's scope."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from validate_helpers import Tree

from ecocompute.cli import main
from ecocompute.validate import core
from ecocompute.validate.core import discover, validate_files
from ecocompute.validate.scope import scope_problems


def _codes(path: Path, tree: Tree) -> list[str]:
    [result] = validate_files([path], allowed_signers=tree.allowed_signers, submissions_root=tree.root)
    return [f.code for f in result.findings]


def test_a_file_name_that_is_not_utf8_is_reported_with_report_md(
    tree: Tree, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    odd = os.fsdecode(bytes(tree.file.parent) + b"/\xff\xfe-\x1b[31m.json")
    Path(odd).write_bytes(b"{}")
    report = tmp_path / "report.md"
    code = main(["validate", "--root", str(tree.root), "--allowed-signers", str(tree.allowed_signers),
                 "--report-md", str(report), "--annotations"])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 1 and "Traceback" not in captured.err
    text = report.read_text(encoding="utf-8")
    assert "xff" in text and "\x1b" not in text and "E-VERSION" in text
    code = main(["validate", "--root", str(tree.root), "--allowed-signers", str(tree.allowed_signers), "--json"])
    files = json.loads(capsys.readouterr().out)["files"]
    assert code == 1 and any("\\xff" in f["path"] for f in files)


def test_an_unreadable_path_argument_is_a_finding(
    tree: Tree, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Tests run as root, whom permissions do not stop: the OS's refusal (a folder on the way without search
    # permission) is what these stand in for.
    for name in ("lstat", "stat", "open"):
        real = getattr(os, name)

        def denied(path: object, *args: object, _real: object = real, **kwargs: object) -> object:
            if os.fspath(path) == str(tree.file):  # type: ignore[call-overload]
                raise PermissionError(13, "Permission denied", str(path))
            return _real(path, *args, **kwargs)  # type: ignore[operator]

        monkeypatch.setattr(os, name, denied)
    code = main(["validate", str(tree.file), "--root", str(tree.root), "--allowed-signers", str(tree.allowed_signers)])
    captured = capsys.readouterr()
    assert code == 1 and "E-READ" in captured.out and "Traceback" not in captured.err


def _without_root_powers() -> list[str]:
    """A command prefix under which permissions stop this process (root's DAC capabilities dropped)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: permissions cannot stop this process")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--"]


@pytest.mark.parametrize("what", ["file", "folder", "submissions folder"])
def test_what_the_os_refuses_to_read_is_an_e_read_finding_not_a_usage_error(tree: Tree, what: str) -> None:
    """Real permissions, not a stand-in: the argument parser must not refuse the path before the validator sees it."""
    locked = tree.file if what == "file" else tree.file.parent
    signers = tree.root.parent / "allowed_signers"
    shutil.copy(tree.allowed_signers, signers)
    args = [] if what == "submissions folder" else [str(locked)]
    root = tree.file.parent if what == "submissions folder" else tree.root
    locked.chmod(0)
    try:
        proc = subprocess.run(
            [*_without_root_powers(), sys.executable, "-m", "ecocompute", "validate", *args, "--submissions",
             str(root), "--allowed-signers", str(signers)],
            capture_output=True, text=True, check=False, timeout=60,
        )  # fmt: skip
    finally:
        locked.chmod(0o755 if locked.is_dir() else 0o644)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "E-READ" in proc.stdout and "Permission denied" in proc.stdout and "Traceback" not in proc.stderr


def test_an_unreadable_folder_is_a_finding(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    locked = tree.file.parent
    real_scandir = os.scandir

    def denied_scandir(path: object) -> object:
        # As above: root lists every folder, so the OS's refusal to list one is stood in for here.
        if Path(os.fspath(path)) == locked:  # type: ignore[call-overload]
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)  # type: ignore[call-overload]

    monkeypatch.setattr(os, "scandir", denied_scandir)
    assert locked in discover(tree.root)
    monkeypatch.setattr(core.Path, "iterdir", lambda self: (_ for _ in ()).throw(PermissionError(13, "denied")))
    [result] = [r for r in validate_files(discover(tree.root), allowed_signers=tree.allowed_signers,
                                          submissions_root=tree.root) if r.path == locked]  # fmt: skip
    assert [f.code for f in result.findings] == ["E-READ"] and "cannot list" in result.findings[0].message


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_fifo_in_the_tree_is_skipped_with_a_finding_and_never_opened(tree: Tree) -> None:
    fifo = tree.root / "some-user" / "pipe"
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    results = validate_files(discover(tree.root), allowed_signers=tree.allowed_signers, submissions_root=tree.root)
    by_path = {r.path: [f.code for f in r.findings] for r in results}
    assert by_path[fifo] == ["E-SPECIAL"]
    assert by_path[tree.file] == ["W-EXAMPLE"]


def test_a_symlinked_folder_in_the_tree_is_a_finding(tree: Tree, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tree.root / "linked-user").symlink_to(elsewhere, target_is_directory=True)
    results = validate_files(discover(tree.root), allowed_signers=tree.allowed_signers, submissions_root=tree.root)
    assert {f.code for r in results for f in r.findings if r.path.name == "linked-user"} == {"E-SYMLINK"}


def test_many_copies_each_name_the_one_file_they_copy_in_linear_time(tree: Tree) -> None:
    copies = []
    for i in range(300):
        copy = tree.root / f"user-{i}" / "x" / f"{i}.json"
        copy.parent.mkdir(parents=True)
        shutil.copyfile(tree.file, copy)
        copies.append(copy)
    results = validate_files(copies, allowed_signers=tree.allowed_signers, submissions_root=tree.root, workers=1)
    original = str(tree.file.relative_to(tree.root.parent))
    messages = [f.message for r in results for f in r.findings if f.code == "E-DUPLICATE-PAYLOAD"]
    assert len(messages) == 300 and all(original in m for m in messages)
    assert max(map(len, messages)) < 400  # one file named, whatever the number of copies


def test_workers_give_the_same_results_as_one_process(tree: Tree) -> None:
    copies = []
    for i in range(8):
        copy = tree.root / f"user-{i}" / f"{i}.json"
        copy.parent.mkdir(parents=True)
        shutil.copyfile(tree.file, copy)
        copies.append(copy)
    paths = [tree.file, *copies]
    one = validate_files(paths, allowed_signers=tree.allowed_signers, submissions_root=tree.root, workers=1)
    two = validate_files(paths, allowed_signers=tree.allowed_signers, submissions_root=tree.root, workers=2)
    assert [r.findings for r in one] == [r.findings for r in two]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "repo"
    for path in ("submissions/alice/gpu/a.json", "submissions/bob/gpu/b.json", "validate/core.py", "runs/r.json"):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(path)
    (repo / "submissions" / "allowed_signers").write_text("# none\n")
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@e")
    git(repo, "config", "user.name", "t")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "branch", "-f", "main")
    monkeypatch.chdir(repo)
    return repo


def _scope(repo: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "pr")
    code = main(["validate-changes", "--changed-since", "main", "--pr-author", "alice"])
    return code, capsys.readouterr().out


def test_a_data_pr_adds_and_changes_only_its_authors_files(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "submissions/alice/gpu/c.json").write_text("new")
    (repo / "submissions/alice/gpu/a.json").write_text("changed")
    (repo / "submissions/allowed_signers").write_text("# none\nalice ssh-ed25519 AAAA\n")
    assert _scope(repo, capsys)[0] == 0


@pytest.mark.parametrize(
    ("change", "words"),
    [
        (lambda r: (r / "submissions/bob/gpu/b.json").unlink(), "deletes submissions/bob/gpu/b.json"),
        (lambda r: (r / "submissions/bob/gpu/b.json").rename(r / "submissions/alice/gpu/b.json"), "renames"),
        (lambda r: (r / "submissions/bob/gpu/b.json").write_text("x"), "changes submissions/bob/gpu/b.json"),
        (lambda r: (r / "validate/core.py").write_text("x"), "not a data pull request"),
        (lambda r: (r / "runs/r.json").write_text("x"), "not a data pull request"),
        (lambda r: (r / ".github").mkdir() or (r / ".github/x.yml").write_text("x"), "not a data pull request"),
        (lambda r: (r / "submissions/README.md").write_text("x"), "not a contributor's file"),
    ],
    ids=["delete", "rename", "modify", "validator", "runs", "workflow", "readme"],
)
def test_anything_else_is_not_a_data_pr(repo: Path, capsys: pytest.CaptureFixture[str], change: object,
                                        words: str) -> None:  # fmt: skip
    change(repo)  # type: ignore[operator]
    code, out = _scope(repo, capsys)
    assert code == 1 and words in out


def test_scope_of_a_file_filed_under_someone_else() -> None:
    [problem] = scope_problems([("A", "", "submissions/bob/gpu/new.json")], "alice")
    assert "filed under bob" in problem
