"""The workflows: pinned actions, least privilege, the base branch's code only, tokens only where they push."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
VALIDATE, COMMENT, PUBLISH = (WORKFLOWS / f"{name}.yml" for name in ("validate-pr", "pr-comment", "publish"))
LOCKS = ROOT / ".github" / "requirements"


def _jobs(text: str) -> dict[str, str]:
    """Each job's text (the lines under ``jobs:`` indented by two spaces start a job)."""
    body = text.split("\njobs:\n", 1)[1]
    parts = re.split(r"^  ([\w-]+):\n", body, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


@pytest.mark.parametrize("workflow", [VALIDATE, COMMENT, PUBLISH], ids=lambda p: p.name)
def test_every_action_is_pinned_to_a_full_sha_with_its_version(workflow: Path) -> None:
    uses = re.findall(r"^\s*(?:- )?uses: (\S+)(.*)$", workflow.read_text(), flags=re.MULTILINE)
    assert uses
    for action, comment in uses:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", action), action
        assert re.fullmatch(r" # v\d+(\.\d+)*", comment), comment


@pytest.mark.parametrize("workflow", [VALIDATE, PUBLISH], ids=lambda p: p.name)
def test_every_install_is_pinned_by_hash(workflow: Path) -> None:
    installs = re.findall(r"pip install [^\n]+", workflow.read_text())
    assert installs
    for install in installs:
        assert "--require-hashes" in install or "--no-deps" in install, install
    locks = re.findall(r"-r (?:base/)?(\.github/requirements/\S+\.lock)", workflow.read_text())
    assert locks
    for lock in locks:
        text = (ROOT / lock).read_text()
        pins = re.findall(
            r"^([A-Za-z0-9_.\[\],-]+)==\S+ \\\n((?:\s+--hash=sha256:[0-9a-f]{64}(?: \\)?\n)+)", text, re.M
        )
        assert pins and len(pins) == len(re.findall(r"^[A-Za-z0-9]", text, re.MULTILINE)), lock


def test_validate_pr_runs_the_base_branchs_code_and_reads_the_pull_request_as_data() -> None:
    text = VALIDATE.read_text()
    assert re.search(r"^on:\n  pull_request_target:\n", text, flags=re.MULTILINE)
    assert not re.search(r"^\s+pull_request:", text, flags=re.MULTILINE)
    assert re.search(r"^permissions:\n  contents: read\n\n", text, flags=re.MULTILINE)
    assert "${{ secrets." not in text
    assert "ref: ${{ github.event.pull_request.base.sha }}\n          path: base" in text
    assert "path: pr" in text and text.count("persist-credentials: false") == 2
    for line in re.findall(r"pip install [^\n]+", text):  # only the base branch is installed
        assert "./base" in line or "base/.github/requirements/" in line, line
    assert "ecocompute validate-changes" in text  # not a data PR when code or workflows change
    assert "https://github.com/${PR_AUTHOR}.keys" in text
    assert "ecocompute validate-signers" in text
    # the signer set is the committed allowed_signers after the pull request, not the base's plus the keys
    assert "--allowed-signers submissions/allowed_signers" in text and "awk" not in text
    assert "ecocompute validate --root submissions" in text  # the whole tree, as the publisher reads it


def test_pr_comment_posts_only_an_artifact_of_the_base_workflow() -> None:
    text = COMMENT.read_text()
    assert "workflow_run:" in text and "types: [completed]" in text
    assert "github.event.workflow_run.event == 'pull_request_target'" in text
    assert "github.event.workflow_run.path == '.github/workflows/validate-pr.yml'" in text
    assert "workflow_id: 'validate-pr.yml'" in text and "run.workflow_id !== workflow.id" in text
    assert "actions/checkout" not in text and "pip install" not in text
    assert re.search(r"^permissions:\n  actions: read\n  pull-requests: write\n\n", text, flags=re.MULTILINE)
    assert "pr.head.sha !== headSha" in text


def test_publish_builds_and_pushes_in_separate_jobs_with_tokens_only_where_it_pushes() -> None:
    jobs = _jobs(PUBLISH.read_text())
    assert set(jobs) == {"build", "push-hub", "release-zenodo"}
    assert "${{ secrets." not in jobs["build"] and "environment:" not in jobs["build"]
    assert "ecocompute publish build" in jobs["build"] and "upload-artifact" in jobs["build"]
    for name in ("push-hub", "release-zenodo"):
        assert "needs: build" in jobs[name] and "environment: publish" in jobs[name]
        assert "publish build" not in jobs[name] and "download-artifact" in jobs[name]
    assert "secrets.HF_TOKEN" in jobs["push-hub"] and "ZENODO" not in jobs["push-hub"]
    assert "secrets.ZENODO_API_TOKEN" in jobs["release-zenodo"] and "HF_TOKEN" not in jobs["release-zenodo"]
    assert "github.ref == 'refs/heads/main'" in jobs["push-hub"]
    assert "startsWith(github.ref, 'refs/tags/v') && needs.build.outputs.on_main == 'true'" in jobs["release-zenodo"]
    assert "git merge-base --is-ancestor" in jobs["build"]


def test_codeowners_guard_everything_but_contributors_data() -> None:
    lines = [line.split() for line in (ROOT / ".github" / "CODEOWNERS").read_text().splitlines()]
    rules = {parts[0]: parts[1:] for parts in lines if parts and not parts[0].startswith("#")}
    assert rules["*"] and rules["/.github/"] and rules["/validate/"] and rules["/schema/"]
    assert rules["/submissions/*/"] == [] and rules["/submissions/allowed_signers"] == []
    assert next(iter(rules)) == "*"  # the last match wins: the unowned data rules come after
