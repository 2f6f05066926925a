"""``ecocompute lint``: options, the pyproject table, exit codes, --diff, files written, workers."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from lint_helpers import CORPUS, INT8_7B, NF4_1B, chdir

from ecocompute.cli import main
from ecocompute.lint import engine
from ecocompute.lint.api import lint_paths
from ecocompute.lint.config import LintConfig


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "int8.py").write_text(INT8_7B)
    (tmp_path / "nf4.py").write_text(NF4_1B)
    (tmp_path / "clean.py").write_text("print('hello')\n")
    return tmp_path


def lint(project: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with chdir(project):
        code = main(["lint", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_findings_fail_at_the_severity(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = lint(project, ".", capsys=capsys)
    assert code == 1
    assert out.splitlines()[-1] == "2 findings"
    assert "int8.py:2:9: ECO101 [error]" in out and "nf4.py:3:9: ECO102 [warning]" in out
    assert lint(project, "nf4.py", "--severity", "error", capsys=capsys)[0] == 0
    assert lint(project, "clean.py", capsys=capsys)[:2] == (0, "no findings\n")
    assert lint(project, "int8.py", ".", "./int8.py", capsys=capsys)[1].count("ECO101") == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "xml"], "--format 'xml' is not one of text, json, github, sarif"),
        (["--stack", "turbo"], "stack 'turbo' is not one of eager, compiled, compiled-all"),
        (["--select", "ECO9"], "select: 'ECO9' names no rule"),
        (["--severity", "fatal"], "unknown severity 'fatal'"),
        (["--target-gpu", "Voodoo5"], "--target-gpu 'Voodoo5' is not a card the estimator knows"),
        (["--diff", "-x"], "is not a git ref"),
        (["missing.py"], "missing.py does not exist"),
        (["--config", "nope.toml"], "--config nope.toml is not a file"),
    ],
)
def test_usage_errors_exit_2(project: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    paths = [] if any(a.endswith(".py") for a in args) else ["."]
    code, _, err = lint(project, *args, *paths, capsys=capsys)
    assert code == 2 and message in err.replace("\n", " "), err


def test_pyproject_table_and_command_line(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text('[tool.ecocompute.lint]\nignore = ["ECO101"]\nseverity = "error"\n')
    code, out, _ = lint(project, ".", capsys=capsys)
    assert code == 0 and "ECO101" not in out and "ECO102" in out  # ECO102 is a warning, below "error"
    code, out, _ = lint(project, ".", "--severity", "warning", capsys=capsys)
    assert code == 1
    (project / "pyproject.toml").write_text('[tool.ecocompute.lint]\nselect = ["ECO101"]\ntarget-gpu = "H100"\n')
    assert lint(project, ".", capsys=capsys)[:2] == (0, "no findings\n")  # nothing measured on an H100
    assert "ECO101" in lint(project, ".", "--target-gpu", "H200", capsys=capsys)[1]
    (project / "pyproject.toml").write_text("[tool.ecocompute.lint]\ntarget_gpu = 'H200'\n")
    code, _, err = lint(project, ".", capsys=capsys)
    assert code == 2 and "unknown key(s) target_gpu" in err
    (project / "pyproject.toml").write_text("[tool.ecocompute.lint\n")
    assert lint(project, ".", capsys=capsys)[0] == 2


def test_reports_are_written_to_files(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = lint(project, ".", "--json", "--out", "r.json", "--sarif", "r.sarif", capsys=capsys)
    assert code == 1 and out == ""
    doc = json.loads((project / "r.json").read_text())
    assert [f["rule"] for f in doc["findings"]] == ["ECO101", "ECO102"]
    sarif = json.loads((project / "r.sarif").read_text())
    assert len(sarif["runs"][0]["results"]) == 2
    assert lint(project, ".", "--out", "no/such/dir/r.txt", capsys=capsys)[0] == 2


def test_github_format_prints_annotations(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = lint(project, "int8.py", "-f", "github", capsys=capsys)
    assert out.startswith("::error file=int8.py,line=2,col=9,title=ECO101 int8-default-threshold::8-bit load")


def _git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org"}  # fmt: skip
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


def test_diff_keeps_findings_on_changed_lines(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", "int8.py", "clean.py")
    _git(project, "commit", "-q", "-m", "base")
    _git(project, "checkout", "-q", "-b", "feature")
    (project / "clean.py").write_text(INT8_7B.replace("model =", "other ="))  # a changed file, new finding
    code, out, _ = lint(project, ".", "--diff", "main", capsys=capsys)
    assert code == 1
    assert "clean.py:2:9: ECO101" in out and "nf4.py:3:9: ECO102" in out  # nf4.py is untracked: counted whole
    assert "int8.py" not in out  # unchanged since the merge base
    (project / "int8.py").write_text("# a comment on top\n" + INT8_7B)  # shifted, and the load's line unchanged
    assert "int8.py" not in lint(project, ".", "--diff", "main", capsys=capsys)[1]
    code, _, err = lint(project, ".", "--diff", "no-such-branch", capsys=capsys)
    assert code == 2 and "no merge base with 'no-such-branch'" in err


def test_workers_give_the_same_findings(monkeypatch: pytest.MonkeyPatch) -> None:
    serial = lint_paths([CORPUS], LintConfig(), jobs=1)
    monkeypatch.setattr(engine, "PARALLEL_FROM", 2)
    monkeypatch.setattr(engine, "CHUNK", 3)
    parallel = lint_paths([CORPUS], LintConfig(), jobs=2)
    assert parallel.findings == serial.findings and parallel.files == serial.files > 15


def test_help_documents_exit_codes_and_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "Exit code 0 when no finding is at or above --severity" in text
    assert "Example: ecocompute lint" in text
