"""Replacing a build folder so that a build that dies leaves the previous one untouched.

A build writes into a fresh staging folder beside ``--out`` and, only once every file is written, swaps it
in: with one ``renameat2(RENAME_EXCHANGE)`` on Linux (atomic), else with two renames. A build killed before
the swap leaves ``--out`` as it was, plus a staging folder that the next build removes.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

from ecocompute.schema.errors import UsageError

MARKER = "MANIFEST.json"
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


def _staging_prefix(out: Path) -> str:
    return f".{out.name}.building-"


def check_replaceable(out: Path) -> None:
    """Refuse to replace anything but nothing, an empty folder, or a previous build (it has a MANIFEST.json)."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise UsageError(f"--out {out} exists and is not a folder: pass a new or a previous build folder")
    if out.is_dir() and any(out.iterdir()) and not (out / MARKER).is_file():
        raise UsageError(
            f"--out {out} is a folder with files but no {MARKER}, so it is not a previous build: "
            "pass an empty or new folder"
        )


def remove_stale_staging(out: Path) -> None:
    """Remove staging and previous-build folders that a killed build left beside ``out``."""
    for leftover in out.parent.glob(f".{out.name}.*-*"):
        name = leftover.name
        if leftover.is_dir() and (name.startswith(_staging_prefix(out)) or name.startswith(f".{out.name}.previous-")):
            shutil.rmtree(leftover, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically exchange two paths with renameat2; False when the system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(result == 0)


def swap_in(staging: Path, out: Path) -> None:
    """Put ``staging`` at ``out``; whatever was at ``out`` is removed afterwards."""
    if not out.exists():
        staging.rename(out)
        return
    if _exchange(staging, out):
        shutil.rmtree(staging)
        return
    previous = out.parent / f".{out.name}.previous-{uuid.uuid4().hex[:8]}"
    out.rename(previous)
    staging.rename(out)
    shutil.rmtree(previous)


@contextlib.contextmanager
def staged_output(out: Path) -> Iterator[Path]:
    """Yield an empty staging folder beside ``out``; swap it in when the block succeeds, else delete it."""
    check_replaceable(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_staging(out)
    staging = Path(tempfile.mkdtemp(prefix=_staging_prefix(out), dir=out.parent))
    try:
        yield staging
        staging.chmod(0o755)
        swap_in(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
