"""What a data pull request may change: files under ``submissions/`` only, and of another contributor none.

Anything else (``.github/``, the validator, the signers logic, the schema, the pipeline, ``runs/``) is a code
change a maintainer reviews (``.github/CODEOWNERS``); it is never validated as a data pull request. Deleting,
renaming or changing another contributor's files is refused: ``submissions/<login>/...`` belongs to ``<login>``.
"""

from __future__ import annotations

from collections.abc import Sequence

SIGNERS_FILE = "allowed_signers"


def _owner(path: str, root: str) -> str | None:
    """The login that owns ``path`` (``root/<login>/...``), or None for a path that is not a contributor's file."""
    parts = path.split("/")
    if len(parts) < 3 or parts[0] != root:
        return None
    return parts[1].lower()


def scope_problems(changes: Sequence[tuple[str, str, str]], pr_author: str, root: str = "submissions") -> list[str]:
    """Why the changes are not a data pull request by ``pr_author`` (empty when they are one)."""
    author = pr_author.lower()
    problems = []
    for status, old, new in changes:
        for path in filter(None, {old, new}):
            if path == f"{root}/{SIGNERS_FILE}":
                continue  # checked line by line by validate-signers
            if not path.startswith(root + "/"):
                problems.append(
                    f"{path} is outside {root}/: this is not a data pull request; a maintainer reviews it (CODEOWNERS)"
                )
                continue
            owner = _owner(path, root)
            if owner is None:
                problems.append(f"{path} is not a contributor's file: a maintainer changes it (CODEOWNERS)")
            elif owner != author and (status != "A" or path == old):
                action = {"D": "deletes", "R": "renames", "C": "copies"}.get(status, "changes")
                problems.append(
                    f"the pull request {action} {path}, which belongs to {owner}: change only your own files"
                )
            elif owner != author:
                problems.append(f"{path} is filed under {owner}, not under you ({pr_author}): add files as yourself")
    return sorted(set(problems))
