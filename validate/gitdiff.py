"""Which submission files a pull request adds or modifies: ``git diff`` against the merge base.

Runs ``git`` with list arguments (no shell). Renames are reported as additions (``--no-renames``) and
type changes (a file turned into a symlink) are included, so no changed file escapes validation.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ecocompute.schema.errors import UsageError

NOT_SUBMISSIONS = frozenset({"allowed_signers", "README.md", ".gitkeep"})


def _git(*args: str) -> str:
    exe = shutil.which("git")
    if exe is None:
        raise UsageError("git is not installed: --changed-since needs it")
    proc = subprocess.run([exe, *args], capture_output=True, check=False)  # noqa: S603 - fixed program, list args
    if proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"git {args[0]} failed: {detail[-1] if detail else 'no reason given'}")
    return proc.stdout.decode("utf-8", "surrogateescape")


def merge_base(ref: str) -> str:
    """The merge base of ``ref`` and HEAD (fetch ``ref`` first in a shallow clone)."""
    if not ref or ref.startswith("-"):
        raise UsageError(f"{ref!r} is not a git ref: pass e.g. origin/main")
    try:
        return _git("merge-base", ref, "HEAD").strip()
    except UsageError as exc:
        raise UsageError(f"no merge base with {ref!r} ({exc}): fetch it, e.g. `git fetch origin main`") from None


def is_submission_candidate(relpath: str) -> bool:
    """False for the few files the submissions folder keeps beside submissions (``relpath`` is inside it)."""
    name = relpath.rsplit("/", 1)[-1]
    return not (name == ".gitkeep" or ("/" not in relpath and name in NOT_SUBMISSIONS))


def changed_files(ref: str, root: Path) -> list[Path]:
    """Files under ``root`` added, modified or changed in type since the merge base with ``ref``.

    Paths are returned relative to the current directory, sorted.
    """
    base = merge_base(ref)
    top = Path(_git("rev-parse", "--show-toplevel").strip())
    listing = _git("diff", "--name-only", "--no-renames", "--diff-filter=AMT", "-z", base, "--", str(root))
    root_rel = Path(os.path.relpath(Path(root).absolute(), top)).as_posix()
    files = []
    for name in filter(None, listing.split("\0")):
        relpath = Path(name).as_posix()
        inside = relpath[len(root_rel) + 1 :] if relpath.startswith(root_rel + "/") else relpath
        if is_submission_candidate(inside):
            files.append(Path(os.path.relpath(top / name)))
    return sorted(files)


def text_at(ref: str, path: Path) -> str:
    """The text of ``path`` (relative to the current directory) at the merge base with ``ref``; "" if absent."""
    base = merge_base(ref)
    top = Path(_git("rev-parse", "--show-toplevel").strip())
    relpath = Path(os.path.relpath(Path(path).absolute(), top)).as_posix()
    if not _git("ls-tree", "--name-only", base, "--", relpath).strip():
        return ""
    return _git("show", f"{base}:{relpath}")


def changes(ref: str) -> list[tuple[str, str, str]]:
    """Every change between the merge base with ``ref`` and HEAD: (status letter, old path, new path).

    Paths are relative to the top of the repository; renames are found (``R``) so that a rename of another
    contributor's file is seen as one, copies (``C``) too; an added file has an empty old path, a deleted one
    an empty new path.
    """
    base = merge_base(ref)
    listing = _git("diff", "--name-status", "-z", "--find-renames", "--find-copies", base, "HEAD").split("\0")
    found: list[tuple[str, str, str]] = []
    items = iter(filter(None, listing))
    for status in items:
        letter = status[:1]
        if letter in ("R", "C"):
            old, new = next(items, ""), next(items, "")
        else:
            path = next(items, "")
            old, new = ("", path) if letter == "A" else (path, "" if letter == "D" else path)
        found.append((letter, old, new))
    return found
