"""Trim llama-cpp-python's sdist to what a CUDA build on the H200 needs, so that it travels in the 64 MiB.

The sdist (76 MB packed, 180 MB unpacked) carries llama.cpp whole: its docs, the vocabulary files of
``models/``, the web UI, tests, examples and every GPU backend. A build with ``-DGGML_CUDA=on`` and
llama-cpp-python's own settings (LLAMA_BUILD_COMMON forced on, tools, tests and examples off, LLAVA_BUILD
off) reads only the paths in :data:`KEEP`; the ggml backends other than the CPU and CUDA ones are dropped.
Deterministic: the same sdist gives the same bytes (sorted members, fixed times and owners).

Usage (here, in the repository root): ``python campaigns/llamacpp/tools/trim_sdist.py SDIST.tar.gz OUT.tar.gz``
"""

from __future__ import annotations

import argparse
import gzip
import io
import sys
import tarfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

KEEP_TOP = ("llama_cpp/", "CMakeLists.txt", "pyproject.toml", "PKG-INFO", "README.md", "LICENSE.md")
"""llama-cpp-python's own files the build reads (the package, its CMake and metadata)."""
KEEP = (
    "CMakeLists.txt", "LICENSE", "cmake/", "include/", "src/", "common/", "vendor/", "licenses/",
    "ggml/CMakeLists.txt", "ggml/cmake/", "ggml/include/", "ggml/src/",
)  # fmt: skip
"""Paths under ``vendor/llama.cpp/`` the build reads."""
GGML_BACKENDS_KEPT = ("ggml-cpu", "ggml-cuda")
"""ggml's backend folders that stay: the CPU one (always built) and CUDA."""
LIMIT_BYTES = 64 << 20


def keep(relative: str) -> bool:
    """Whether the sdist member at ``relative`` (below its top folder) is needed for the CUDA build."""
    if not relative.startswith("vendor/llama.cpp/"):
        return relative.startswith(KEEP_TOP) or relative in KEEP_TOP
    inner = relative.removeprefix("vendor/llama.cpp/")
    if not (inner in KEEP or inner.startswith(tuple(k for k in KEEP if k.endswith("/")))):
        return False
    parts = PurePosixPath(inner).parts
    in_backend = len(parts) >= 4 and parts[:2] == ("ggml", "src") and parts[2].startswith("ggml-")
    return not in_backend or parts[2] in GGML_BACKENDS_KEPT


def trim(sdist: Path, out: Path) -> tuple[int, int, int]:
    """Write the trimmed sdist to ``out``; (members kept, members dropped, bytes of ``out``)."""
    kept = dropped = 0
    buffer = io.BytesIO()
    with (
        tarfile.open(sdist, "r:gz") as source,
        tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        members = sorted(source.getmembers(), key=lambda m: m.name)
        for member in members:
            _top, _, relative = member.name.partition("/")
            if relative and not keep(relative):
                dropped += 1
                continue
            if not (member.isfile() or member.isdir()):
                dropped += 1
                continue
            info = tarfile.TarInfo(member.name)
            info.size, info.mode, info.type = member.size, member.mode, member.type
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            data = source.extractfile(member) if member.isfile() else None
            tar.addfile(info, data)
            kept += 1
    with out.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as packed:
        packed.write(buffer.getvalue())
    return kept, dropped, out.stat().st_size


def main(argv: Sequence[str] | None = None) -> int:
    """Trim one sdist; exit 1 when the result would not travel (over 64 MiB)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sdist", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    kept, dropped, size = trim(args.sdist, args.out)
    sys.stdout.write(f"{args.out}: {size / 2**20:.1f} MiB, {kept} members kept, {dropped} dropped\n")
    return 0 if size < LIMIT_BYTES else 1


if __name__ == "__main__":
    raise SystemExit(main())
