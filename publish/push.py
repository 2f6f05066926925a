"""``ecocompute publish push``: a finished build to the Hugging Face Hub and/or Zenodo; a dry run by default.

Tokens come from the environment only (``HF_TOKEN``, ``ZENODO_API_TOKEN``); the Hub endpoint from ``HF_ENDPOINT``
and Zenodo's base URL from ``ZENODO_BASE_URL`` when set (both for mirrors and tests). Before anything is sent the
folder is checked against its MANIFEST.json, so only an unchanged build is pushed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ecocompute.publish.hub import TOKEN_VARIABLE as HF_TOKEN_VARIABLE
from ecocompute.publish.hub import HubResult, hub_plan, push_to_hub
from ecocompute.publish.manifest import verify_folder
from ecocompute.publish.zenodo import TOKEN_VARIABLE as ZENODO_TOKEN_VARIABLE
from ecocompute.publish.zenodo import ZenodoResult, ZenodoTarget, release_on_zenodo, zenodo_plan
from ecocompute.schema.errors import UsageError

HF_REPO_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$"


@dataclass(frozen=True)
class PushRequest:
    """What to push where."""

    folder: Path
    hf_repo: str | None = None
    zenodo: ZenodoTarget | None = None


@dataclass
class PushOutcome:
    """What a push did (empty results in a dry run)."""

    version: str
    plan: list[str] = field(default_factory=list)
    hub: HubResult | None = None
    zenodo: ZenodoResult | None = None


def _check_request(request: PushRequest) -> None:
    import re

    if request.hf_repo is None and request.zenodo is None:
        raise UsageError("nothing to push to: pass --hf-repo ORG/NAME and/or --zenodo-deposition ID or --zenodo-new")
    if request.hf_repo is not None and not re.match(HF_REPO_PATTERN, request.hf_repo):
        raise UsageError(f"--hf-repo {request.hf_repo!r} is not a dataset id like ORG/NAME")
    if request.zenodo is not None and request.zenodo.new == (request.zenodo.deposition is not None):
        raise UsageError("pass exactly one of --zenodo-deposition ID and --zenodo-new")


def token(name: str, environ: Mapping[str, str]) -> str:
    """A token from the environment, or a UsageError naming the variable."""
    value = environ.get(name, "").strip()
    if not value:
        raise UsageError(f"{name} is not set: export {name}=<token> (in CI: a secret of the publish environment)")
    return value


def plan(request: PushRequest, version: str, environ: Mapping[str, str]) -> list[str]:
    """Every step a push would take, in words, with the state of the tokens it needs."""
    steps = []
    if request.hf_repo is not None:
        state = "set" if environ.get(HF_TOKEN_VARIABLE) else "NOT SET"
        endpoint = environ.get("HF_ENDPOINT") or "https://huggingface.co"
        steps.append(f"Hugging Face Hub ({endpoint}, {HF_TOKEN_VARIABLE} {state}):")
        steps += [f"  {s}" for s in hub_plan(request.folder, request.hf_repo, version)]
    if request.zenodo is not None:
        state = "set" if environ.get(ZENODO_TOKEN_VARIABLE) else "NOT SET"
        steps.append(f"Zenodo ({ZENODO_TOKEN_VARIABLE} {state}):")
        steps += [f"  {s}" for s in zenodo_plan(request.folder, version, request.zenodo)]
    return steps


def push(request: PushRequest, *, dry_run: bool = True, environ: Mapping[str, str] | None = None) -> PushOutcome:
    """Check the folder, then (unless ``dry_run``) push it to the Hub and/or Zenodo."""
    env = os.environ if environ is None else environ
    _check_request(request)
    manifest = verify_folder(request.folder)
    version = str(manifest["version"])
    outcome = PushOutcome(version=version, plan=plan(request, version, env))
    if dry_run:
        return outcome
    hf_token = token(HF_TOKEN_VARIABLE, env) if request.hf_repo is not None else None
    zenodo_token = token(ZENODO_TOKEN_VARIABLE, env) if request.zenodo is not None else None
    if request.hf_repo is not None and hf_token is not None:
        outcome.hub = push_to_hub(request.folder, request.hf_repo, version, hf_token, env.get("HF_ENDPOINT") or None)
    if request.zenodo is not None and zenodo_token is not None:
        outcome.zenodo = release_on_zenodo(request.folder, version, zenodo_token, request.zenodo)
    return outcome
