"""``--diff BASE``: the lines of each file added or changed since the merge base of ``BASE`` and HEAD.

The working tree is compared, so uncommitted edits count; a file git does not track yet counts whole. Runs ``git``
with list arguments (no shell).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from ecocompute.schema.errors import UsageError

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
WHOLE = frozenset({0})  # marks a file whose every line is new


def _git(cwd: Path, *args: str) -> str:
    exe = shutil.which("git")
    if exe is None:
        raise UsageError("git is not installed: --diff needs it")
    proc = subprocess.run([exe, *args], cwd=cwd, capture_output=True, check=False)  # noqa: S603 - list args
    if proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"git {args[0]} failed: {detail[-1] if detail else 'no reason given'}")
    return proc.stdout.decode("utf-8", "surrogateescape")


def parse_hunks(diff_text: str) -> dict[str, set[int]]:
    """``git diff -U0`` output -> repository-relative path -> the new side's changed line numbers."""
    changed: dict[str, set[int]] = {}
    current: set[int] | None = None
    for line in diff_text.splitlines():
        if line.startswith("+++ "):
            name = line[4:]
            current = (
                None if name == "/dev/null" else changed.setdefault(name[2:] if name.startswith("b/") else name, set())
            )
            continue
        match = _HUNK.match(line)
        if match and current is not None:
            start, count = int(match.group(1)), int(match.group(2) or "1")
            current.update(range(start, start + count))
    return changed


def changed_lines(base: str, cwd: Path | None = None) -> dict[Path, frozenset[int]]:
    """Absolute path -> lines changed since the merge base with ``base`` (:data:`WHOLE` for untracked files)."""
    if not base or base.startswith("-"):
        raise UsageError(f"--diff {base!r} is not a git ref: pass e.g. origin/main")
    here = cwd or Path.cwd()
    top = Path(_git(here, "rev-parse", "--show-toplevel").strip())
    try:
        merge_base = _git(top, "merge-base", base, "HEAD").strip()
    except UsageError as exc:
        raise UsageError(f"no merge base with {base!r} ({exc}): fetch it, e.g. `git fetch origin main`") from None
    text = _git(top, "diff", "-U0", "--no-color", "--no-ext-diff", "--no-renames", merge_base, "--")
    result = {Path(os.path.normpath(top / name)): frozenset(lines) for name, lines in parse_hunks(text).items()}
    for name in filter(None, _git(top, "ls-files", "--others", "--exclude-standard", "-z").split("\0")):
        result[Path(os.path.normpath(top / name))] = WHOLE
    return result


def keeps(lines: frozenset[int] | None, first: int, last: int) -> bool:
    """True when a finding spanning ``first``..``last`` touches a changed line."""
    if lines is None:
        return False
    return lines is WHOLE or any(n in lines for n in range(first, last + 1))
