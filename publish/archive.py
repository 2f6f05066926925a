"""A zip of a build folder whose bytes depend on the files only (fixed dates, order, permissions, compression)."""

from __future__ import annotations

import zipfile
from pathlib import Path

EPOCH = (1980, 1, 1, 0, 0, 0)
ARCHIVE_NAME = "ecocompute-dataset.zip"


def write_archive(folder: Path, target: Path, prefix: str = "ecocompute-dataset") -> Path:
    """Zip every file of ``folder`` under ``prefix/`` into ``target``, deterministically."""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    with zipfile.ZipFile(target, "w") as archive:
        for path in files:
            info = zipfile.ZipInfo(f"{prefix}/{path.relative_to(folder).as_posix()}", date_time=EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3
            archive.writestr(info, path.read_bytes(), compresslevel=9)
    return target
