"""The pull-request workflows: pinned actions, least privilege, no pull-request code with a write token."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

WORKFLOWS = Path(__file__).parents[2] / ".github" / "workflows"
VALIDATE, COMMENT = WORKFLOWS / "validate-pr.yml", WORKFLOWS / "pr-comment.yml"


@pytest.mark.parametrize("workflow", [VALIDATE, COMMENT], ids=lambda p: p.name)
def test_every_action_is_pinned_to_a_full_sha_with_its_version(workflow: Path) -> None:
    uses = re.findall(r"^\s*(?:- )?uses: (\S+)(.*)$", workflow.read_text(), flags=re.MULTILINE)
    assert uses
    for action, comment in uses:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", action), action
        assert re.fullmatch(r" # v\d+(\.\d+)*", comment), comment


def test_validate_pr_is_read_only_and_runs_on_submissions() -> None:
    text = VALIDATE.read_text()
    assert re.search(r"^permissions:\n  contents: read\n\n", text, flags=re.MULTILINE)
    assert 'pull_request:\n    paths:\n      - "submissions/**"' in text
    assert "pull_request_target" not in text
    assert "https://github.com/${PR_AUTHOR}.keys" in text
    assert 'ecocompute validate --changed-since "origin/${BASE_REF}"' in text
    assert "GITHUB_STEP_SUMMARY" in text and "actions/upload-artifact@" in text


def test_pr_comment_never_checks_out_code() -> None:
    text = COMMENT.read_text()
    assert "workflow_run:" in text and "types: [completed]" in text
    assert "actions/checkout" not in text and "pip install" not in text
    assert re.search(r"^permissions:\n  actions: read\n  pull-requests: write\n\n", text, flags=re.MULTILINE)
    assert "<!-- ecocompute-validate-report -->" in text
