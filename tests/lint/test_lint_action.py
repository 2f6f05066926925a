"""The GitHub Action, run as a workflow runs a composite action, and the pre-commit hook's entry.

A small runner reads action.yml, substitutes ``${{ inputs.* }}``, ``${{ github.action_path }}`` and
``${{ steps.*.outputs.* }}``, evaluates each step's ``if:``, runs the ``run:`` steps with
``bash --noprofile --norc -eo pipefail`` (GitHub's ``shell: bash``) in a temporary repository with a fresh
``GITHUB_OUTPUT`` file per step, and records the ``uses:`` steps (not run here: setup-python and upload-sarif).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from lint_helpers import INT8_7B, NF4_1B, SARIF_SCHEMA

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
PINNED = re.compile(r"^[\w.-]+/[\w.-]+(/[\w.-]+)?@[0-9a-f]{40}$")


@dataclass
class Ran:
    name: str
    kind: str  # "run", "uses" or "skipped"
    rc: int = 0
    stdout: str = ""
    uses: str = ""
    with_: dict[str, str] = field(default_factory=dict)


def _lookup(ref: str, ctx: dict[str, Any]) -> str:
    value: Any = ctx
    for part in ref.split("."):
        value = value.get(part, "") if isinstance(value, dict) else ""
    return str(value)


def _substitute(text: str, ctx: dict[str, Any]) -> str:
    return EXPR.sub(lambda m: _lookup(m.group(1), ctx), str(text))


def _condition(expr: str | None, ctx: dict[str, Any], failed: bool) -> bool:
    if expr is None:
        return not failed
    expr = EXPR.sub(lambda m: m.group(1), expr)
    terms = [t.strip() for t in expr.split("&&")]
    result = "always()" in terms or not failed
    for term in terms:
        if term == "always()":
            continue
        left, op, right = re.match(r"^(\S+)\s*(==|!=)\s*'(.*)'$", term).groups()  # type: ignore[union-attr]
        equal = _lookup(left, ctx) == right
        result = result and (equal if op == "==" else not equal)
    return result


def run_action(workspace: Path, inputs: dict[str, str]) -> tuple[list[Ran], dict[str, Any]]:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    given = {k: v.get("default", "") for k, v in action["inputs"].items()}
    assert set(inputs) <= set(given), f"unknown inputs {set(inputs) - set(given)}"
    ctx: dict[str, Any] = {"inputs": {**given, **inputs}, "github": {"action_path": str(ROOT)}, "steps": {}}
    ran: list[Ran] = []
    failed = False
    for index, step in enumerate(action["runs"]["steps"]):
        name = step.get("name", f"step {index}")
        if not _condition(step.get("if"), ctx, failed):
            ran.append(Ran(name, "skipped"))
            continue
        if "uses" in step:
            ran.append(Ran(name, "uses", uses=step["uses"],
                           with_={k: _substitute(v, ctx) for k, v in step.get("with", {}).items()}))  # fmt: skip
            continue
        output = workspace.parent / f"github_output_{index}"
        output.write_text("")
        env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}", "GITHUB_OUTPUT": str(output),
               "GITHUB_ACTION_PATH": str(ROOT), "GITHUB_WORKSPACE": str(workspace), "GITHUB_ACTIONS": "true",
               **{k: _substitute(v, ctx) for k, v in step.get("env", {}).items()}}  # fmt: skip
        script = workspace.parent / f"step_{index}.sh"
        script.write_text(_substitute(step["run"], ctx))
        assert step["shell"] == "bash"
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=workspace,
                              env=env, capture_output=True, text=True, check=False)  # fmt: skip
        ran.append(Ran(name, "run", proc.returncode, proc.stdout + proc.stderr))
        outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
        if "id" in step:
            ctx["steps"][step["id"]] = {"outputs": outputs}
        failed = failed or proc.returncode != 0
    return ran, {k: _substitute(v["value"], ctx) for k, v in action.get("outputs", {}).items()}


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"})  # fmt: skip


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "serve.py").write_text(INT8_7B)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    return repo


def test_action_pins_every_action_by_full_sha() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["runs"]["using"] == "composite"
    uses = [s["uses"] for s in action["runs"]["steps"] if "uses" in s]
    assert {u.split("@")[0] for u in uses} == {"actions/setup-python", "github/codeql-action/upload-sarif"}
    assert all(PINNED.match(u) for u in uses), uses
    assert "security-events: write" in (ROOT / "action.yml").read_text(encoding="utf-8")


def test_action_annotates_uploads_and_fails_on_findings(workspace: Path) -> None:
    ran, outputs = run_action(workspace, {"paths": "serve.py"})
    by_name = {r.name: r for r in ran}
    lint = by_name["Lint"]
    assert lint.kind == "run" and lint.rc == 0, lint.stdout
    assert "::error file=serve.py,line=2,col=9,title=ECO101 int8-default-threshold::" in lint.stdout
    assert outputs == {"findings": "1"}
    upload = by_name["Upload SARIF to code scanning"]
    assert upload.kind == "uses" and upload.with_ == {
        "sarif_file": "ecocompute-lint.sarif",
        "category": "ecocompute-lint",
    }
    log = json.loads((workspace / upload.with_["sarif_file"]).read_text())
    assert not list(jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text())).iter_errors(log))
    assert log["runs"][0]["results"][0]["ruleId"] == "ECO101"
    assert by_name["Fail on findings"].kind == "run" and by_name["Fail on findings"].rc == 1


def test_action_passes_below_the_severity_and_with_diff_base(workspace: Path) -> None:
    (workspace / "small.py").write_text(NF4_1B)  # a new file: its ECO102 is on changed lines; serve.py is not
    ran, outputs = run_action(workspace, {"diff-base": "HEAD", "severity": "error", "upload-sarif": "false"})
    by_name = {r.name: r for r in ran}
    assert "ECO102" in by_name["Lint"].stdout and "ECO101" not in by_name["Lint"].stdout
    assert outputs == {"findings": "1"}
    assert by_name["Upload SARIF to code scanning"].kind == "skipped"
    assert by_name["Fail on findings"].kind == "skipped"  # a warning, below --severity error


def test_action_stops_on_a_usage_error(workspace: Path) -> None:
    ran, outputs = run_action(workspace, {"stack": "turbo"})
    by_name = {r.name: r for r in ran}
    assert by_name["Lint"].rc == 2 and "stack 'turbo' is not one of" in by_name["Lint"].stdout
    assert by_name["Upload SARIF to code scanning"].kind == "skipped"
    assert outputs == {"findings": ""}


def test_pre_commit_hook_runs_the_same_command(workspace: Path) -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    assert [h["id"] for h in hooks] == ["ecocompute-lint"]
    hook = hooks[0]
    assert hook["language"] == "python" and set(hook["types_or"]) == {"python", "jupyter"}
    # pre-commit runs `entry [args] FILENAMES...` with the files staged
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run([*hook["entry"].split(), *hook.get("args", []), "serve.py"], cwd=workspace, env=env,
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert proc.returncode == 1 and "serve.py:2:9: ECO101 [error]" in proc.stdout
