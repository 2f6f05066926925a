"""Where a submission must live, and the GPU slug the collector uses to build that path.

``submissions/<login>/<gpu-slug>/<submission-id>.json``; :func:`gpu_slug` lower-cases the GPU name
and turns every run of characters outside ``[a-z0-9]`` into one hyphen ("NVIDIA H200" -> "nvidia-h200",
"NVIDIA GeForce RTX 4090" -> "nvidia-geforce-rtx-4090"). It is defined once, in
:mod:`ecocompute.schema.paths`, and re-exported here; it depends on nothing but ``re``.
"""

from __future__ import annotations

from ecocompute.schema.paths import gpu_slug, submission_relpath

__all__ = ["gpu_slug", "submission_relpath"]
