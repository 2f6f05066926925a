"""Where a submission lives: its path follows from its content.

``submissions/<github-login>/<gpu-slug>/<submission-id>.json``
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from ecocompute.schema.models import Submission

_NON_SLUG = re.compile(r"[^a-z0-9]+")


def gpu_slug(gpu_name: str) -> str:
    """A path-safe slug of a GPU name: "NVIDIA H200" -> "nvidia-h200", "NVIDIA GeForce RTX 4090" -> ...-rtx-4090."""
    slug = _NON_SLUG.sub("-", gpu_name.lower()).strip("-")
    return slug or "unknown-gpu"


def submission_relpath(submission: Submission) -> PurePosixPath:
    """The path of ``submission`` relative to the submissions folder."""
    p = submission.payload
    return PurePosixPath(p.contributor.github, gpu_slug(p.hardware.gpu_name), f"{p.submission_id}.json")
