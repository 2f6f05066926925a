"""Pushing a build to the Hugging Face Hub: create the dataset repo, upload the folder, tag the version.

One commit replaces the repository's content with the build: ``delete_patterns`` removes remote data files and
figures that the build no longer has. The tag ``vX.Y.Z`` marks the commit of each version (kept when it exists).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ecocompute.schema.errors import EcocomputeError

DEFAULT_HF_REPO = "ecocompute/llm-inference-energy"
DELETE_PATTERNS = ("data/*", "figures/*", "README.md", "CHANGELOG.md", "MANIFEST.json")
TOKEN_VARIABLE = "HF_TOKEN"  # noqa: S105 - the name of the variable, not a token


class HubError(EcocomputeError):
    """The Hub refused a step of the push."""


@dataclass(frozen=True)
class HubResult:
    """Where the push landed."""

    repo: str
    commit_url: str
    tag: str


def hub_plan(folder: Path, repo: str, version: str) -> list[str]:
    """What :func:`push_to_hub` will do, in words (the dry run prints it)."""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    size = sum(p.stat().st_size for p in files)
    return [
        f"create the dataset repository {repo} on the Hub if it does not exist",
        f"upload {len(files)} files ({size / 1e6:.2f} MB) from {folder} in one commit, removing remote files "
        f"matching {', '.join(DELETE_PATTERNS)} that this build does not have",
        f"tag that commit v{version} (kept as it is if the tag already exists)",
    ]


def push_to_hub(folder: Path, repo: str, version: str, token: str, endpoint: str | None = None) -> HubResult:
    """Create the repo (exist_ok), upload ``folder`` with delete_patterns, and tag the version."""
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError

    api = HfApi(endpoint=endpoint, token=token)
    step = "create the repository"
    try:
        api.create_repo(repo, repo_type="dataset", exist_ok=True)
        step = "upload the folder"
        commit = api.upload_folder(
            repo_id=repo,
            repo_type="dataset",
            folder_path=folder,
            commit_message=f"ecocompute dataset {version}",
            delete_patterns=list(DELETE_PATTERNS),
        )
        step = f"tag v{version}"
        api.create_tag(repo, tag=f"v{version}", repo_type="dataset", revision=commit.oid, exist_ok=True)
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "no response"
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise HubError(f"the Hub refused to {step} for {repo} (HTTP {status}): {first}") from None
    return HubResult(repo=repo, commit_url=commit.commit_url, tag=f"v{version}")
