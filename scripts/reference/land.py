"""Land what a sitting on the H200 brought back: sign every submission, and file each where it belongs.

Run here, in the repository root, after a sitting: each ``eco.tgz`` that ``collect.sh`` wrote (later ones
hold everything earlier ones did) is unpacked; every submission in it is signed ``ecocompute-reference`` with
the sitting's key (its public line is appended to ``submissions/allowed_signers`` when missing) and validated
with the default gate. Accepted ones go to ``submissions/``; ones rejected for their spread alone (E-CV) go to
``runs/``, where ``docs/method.md`` reports them; any other rejection is printed and the file left out.
Benchmark results go to ``benchmarks/results/``, worker logs and the GPU tests' output to
``runs/ecocompute-reference/logs/SITTING/``. Nothing already committed is overwritten.

Example: python scripts/reference/land.py /work/.device/4/eco.tgz --key /tmp/refkey --sitting sitting-3
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ecocompute.schema.errors import EcocomputeError
from ecocompute.schema.io import load_submission, write_submission
from ecocompute.schema.paths import submission_relpath
from ecocompute.schema.signing import sign_submission
from ecocompute.validate.core import validate_files

SIGNER = "ecocompute-reference"
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Landed:
    """Where each file went, for the summary."""

    accepted: list[Path] = field(default_factory=list)
    spread_only: list[Path] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    other: list[Path] = field(default_factory=list)


def ensure_signer_line(signers: Path, key: Path, sitting: str) -> None:
    """Append the sitting key's public line to allowed_signers, unless it is there already."""
    public = Path(f"{key}.pub")
    if not public.is_file():
        raise EcocomputeError(f"{public} not found: make the sitting's key with ssh-keygen -t ed25519 -f {key}")
    key_type, blob = public.read_text(encoding="utf-8").split()[:2]
    text = signers.read_text(encoding="utf-8")
    if blob not in text:
        signers.write_text(text.rstrip("\n") + f"\n{SIGNER} {key_type} {blob} H200 {sitting}\n", encoding="utf-8")


def _copy_new(source: Path, target: Path, landed: Landed) -> None:
    if target.exists():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    landed.other.append(target)


def land(archives: list[Path], key: Path, sitting: str, root: Path = ROOT) -> Landed:
    """Unpack, sign, validate and file; see the module's text."""
    missing = [str(a) for a in archives if not a.is_file()]
    if missing:
        raise EcocomputeError(f"no such archive: {', '.join(missing)} (collect.sh writes eco.tgz into $OUT)")
    signers = root / "submissions" / "allowed_signers"
    ensure_signer_line(signers, key, sitting)
    landed = Landed()
    with tempfile.TemporaryDirectory(prefix="ecocompute-land-") as tmp:
        unpacked = Path(tmp)
        for archive in archives:
            with tarfile.open(archive) as tar:
                tar.extractall(unpacked, filter="data")
        found = sorted((unpacked / "out").rglob("*.json")) if (unpacked / "out").is_dir() else []
        for path in found:
            sub = sign_submission(load_submission(path), key, SIGNER)
            relpath = submission_relpath(sub)
            staged = unpacked / "staged" / "submissions" / relpath
            staged.parent.mkdir(parents=True, exist_ok=True)
            write_submission(sub, staged)
            (result,) = validate_files([staged], allowed_signers=signers, submissions_root=staged.parents[2])
            codes = {f.code for f in result.errors}
            if result.accepted:
                target, bucket = root / "submissions" / relpath, landed.accepted
            elif codes == {"E-CV"}:
                target, bucket = root / "runs" / relpath, landed.spread_only
            else:
                landed.refused.append(f"{path.name}: {', '.join(sorted(codes))}")
                continue
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(staged, target)
                bucket.append(target)
        logs = root / "runs" / SIGNER / "logs" / sitting
        for path in sorted((unpacked / "results").glob("*")) if (unpacked / "results").is_dir() else []:
            to_logs = path.name.startswith("pytest")
            _copy_new(path, (logs if to_logs else root / "benchmarks" / "results") / path.name, landed)
        for path in sorted((unpacked / "logs").glob("*.log")) if (unpacked / "logs").is_dir() else []:
            _copy_new(path, logs / path.name, landed)
    return landed


def main(argv: list[str] | None = None) -> int:
    """Land the archives; print where each file went. Exit 1 when a submission was refused or on an error."""
    out = sys.stdout.write
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("archives", nargs="+", type=Path, help="eco.tgz files from collect.sh")
    parser.add_argument("--key", type=Path, required=True, help="the sitting's private key (never committed)")
    parser.add_argument("--sitting", required=True, help="a name for the sitting, e.g. sitting-3")
    args = parser.parse_args(argv)
    try:
        landed = land(args.archives, args.key, args.sitting)
    except (EcocomputeError, OSError, tarfile.TarError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
    for label, paths in (("accepted, in submissions/", landed.accepted), ("E-CV only, in runs/", landed.spread_only),
                         ("results and logs", landed.other)):  # fmt: skip
        out(f"{label}: {len(paths)}\n")
        for path in paths:
            out(f"  {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}\n")
    for line in landed.refused:
        out(f"refused (left out): {line}\n")
    out("next: python scripts/reference/summarize.py, paste into docs/method.md, commit with allowed_signers\n")
    return 1 if landed.refused else 0


if __name__ == "__main__":
    sys.exit(main())
