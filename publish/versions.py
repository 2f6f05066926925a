"""Dataset versions: semantic versions, each with an entry in the dataset changelog."""

from __future__ import annotations

import re
from importlib import resources

from ecocompute.schema.errors import UsageError

VERSION_PATTERN = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")
_HEADING = re.compile(r"^## +v?([0-9]+\.[0-9]+\.[0-9]+)\s*$", re.MULTILINE)


def template_text(name: str) -> str:
    """The text of a file in ``ecocompute/publish/templates``."""
    return resources.files("ecocompute.publish").joinpath("templates", name).read_text(encoding="utf-8")


def changelog_text() -> str:
    """The dataset changelog (newest version first)."""
    return template_text("CHANGELOG.md")


def changelog_versions(text: str) -> list[str]:
    """Versions with an entry in the changelog, in the order they appear (newest first)."""
    return _HEADING.findall(text)


def resolve_version(requested: str | None, changelog: str | None = None) -> str:
    """``requested`` (checked) or the newest changelog version; every version needs a changelog entry."""
    text = changelog if changelog is not None else changelog_text()
    versions = changelog_versions(text)
    if not versions:
        raise UsageError("the dataset changelog has no '## X.Y.Z' entry: add one saying what the version adds")
    if requested is None:
        return versions[0]
    version = requested.removeprefix("v")
    if not VERSION_PATTERN.match(version):
        raise UsageError(f"--version {requested!r} is not a version like 1.2.3")
    if version not in versions:
        raise UsageError(
            f"version {version} has no entry in publish/templates/CHANGELOG.md (newest: {versions[0]}): "
            f"add a '## {version}' entry saying what it adds"
        )
    return version
