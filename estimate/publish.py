"""What ``publish build`` writes for the estimator beside the dataset: ``artifact.json`` and the static page."""

from __future__ import annotations

import json
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

from ecocompute.estimate.artifact import ARTIFACT
from ecocompute.estimate.build import artifact_text, build_artifact

WEB_FILES = ("index.html", "engine.js", "app.js", "style.css")
WEB_FOLDER = "estimate"


def write_web(folder: Path, artifact: dict[str, Any]) -> Path:
    """The static estimator page in ``folder``: the vendored scripts and the artifact as a script (works from file://)."""
    folder.mkdir(parents=True, exist_ok=True)
    web = resources.files("ecocompute.estimate").joinpath("web")
    for name in WEB_FILES:
        with resources.as_file(web.joinpath(name)) as source:
            shutil.copyfile(source, folder / name)
    text = json.dumps(json.loads(artifact_text(artifact)), sort_keys=True, separators=(",", ":"))
    (folder / "artifact.js").write_text(f"window.ECOCOMPUTE_ARTIFACT = {text};\n", encoding="utf-8")
    return folder / "index.html"


def write_estimate(folder: Path, tables: Any, version: str) -> Path:
    """Build the artifact from a build's ``measurements_all`` and ``submissions_all`` configs; write it + the page.

    ``tables`` is the build's :class:`ecocompute.publish.configs.Tables` (anything with ``read(config)``).
    """
    artifact = build_artifact(tables.read("measurements_all"), tables.read("submissions_all"), version=version)
    path = folder / ARTIFACT
    path.write_text(artifact_text(artifact), encoding="utf-8")
    write_web(folder / WEB_FOLDER, artifact)
    return path
