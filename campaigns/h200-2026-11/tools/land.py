"""Land what a sitting on the H200 brought back: sign every submission, and file each where it belongs.

Run here, in the repository root, after a sitting, on the ``eco.tgz`` files that ``collect.sh`` wrote (in the
order they were written). Every submission in them is signed ``ecocompute-reference`` with the sitting's key and
validated: accepted ones go to ``submissions/``, those that fail the CV gate alone (E-CV, the dataset's all tier)
as well; any other rejection is printed with its findings and the file left out. The key's public line (from
``ssh-keygen -y``) is appended to ``submissions/allowed_signers`` when something signed with it lands. Benchmark
results go to the campaign's ``results/``, worker logs and the GPU tests' output to its ``logs/SITTING/``. The
checkpoint of a run that the end of the lease cut (``state/``), when it holds a measured window, goes to the
campaign's ``checkpoints/`` as ``ID.ARCH-STACK.partial.json``: it cannot be resumed on another machine, so it is
kept as the raw record it is (``REPORT.md`` reports it).

Everything is checked before anything is written, and every file is written whole (a temporary file and a
rename). Nothing committed is replaced: a submission already in the tree with the same payload is reported as
present, one with another payload under the same id is refused; a result whose name is taken by other content
lands under a name with the sitting in it.

Example: python campaigns/h200-2026-11/tools/land.py /work/.device/3/eco.tgz /work/.device/4/eco.tgz --key /tmp/refkey
--sitting sitting-3
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ecocompute.collector import read_state
from ecocompute.collector.errors import RunStateError
from ecocompute.schema.errors import EcocomputeError
from ecocompute.schema.io import load_submission, write_bytes_atomic, write_submission
from ecocompute.schema.models import Submission
from ecocompute.schema.paths import submission_relpath
from ecocompute.schema.signing import sign_submission
from ecocompute.validate.core import discover, validate_files

SIGNER = "ecocompute-reference"
HOME = Path(__file__).resolve().parents[1]  # the campaign's folder
ROOT = HOME.parents[1]  # the repository
CAMPAIGN = HOME.relative_to(ROOT)


@dataclass
class Landed:
    """What happened to each file, for the summary."""

    accepted: list[Path] = field(default_factory=list)
    spread_only: list[Path] = field(default_factory=list)
    checkpoints: list[Path] = field(default_factory=list)
    other: list[Path] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


@dataclass
class _Found:
    origin: str  # archive name and the path inside it, for messages
    path: Path


def public_line(key: Path, sitting: str) -> str:
    """The allowed_signers line of the sitting's key, derived from the private key itself."""
    if not key.is_file():
        raise EcocomputeError(f"{key} not found: make the sitting's key with ssh-keygen -t ed25519 -f {key}")
    ssh_keygen = shutil.which("ssh-keygen")
    if ssh_keygen is None:
        raise EcocomputeError("ssh-keygen is not installed: install OpenSSH (signing needs it too)")
    proc = subprocess.run([ssh_keygen, "-y", "-f", str(key)], capture_output=True, text=True, check=False)  # noqa: S603
    parts = proc.stdout.split()
    if proc.returncode != 0 or len(parts) < 2:
        raise EcocomputeError(f"{key} is not a usable private key: {proc.stderr.strip() or 'no public key'}")
    return f"{SIGNER} {parts[0]} {parts[1]} H200 {sitting}\n"


def _unpack(archives: list[Path], into: Path) -> list[Path]:
    """Each archive into its own folder (members that would leave it, or links, are refused)."""
    folders = []
    for i, archive in enumerate(archives):
        folder = into / f"archive-{i}"
        folder.mkdir()
        with tarfile.open(archive) as tar:
            if hasattr(tarfile, "data_filter"):
                tar.extractall(folder, filter="data")
            else:  # Python < 3.11.4: check by hand what the data filter would
                for member in tar.getmembers():
                    name = PurePosixPath(member.name)
                    if name.is_absolute() or ".." in name.parts or not (member.isfile() or member.isdir()):
                        raise EcocomputeError(f"{archive}: refusing member {member.name!r}")
                tar.extractall(folder)  # noqa: S202 - every member checked above
        folders.append(folder)
    return folders


def _committed(root: Path) -> dict[str, Path]:
    """Submission id -> committed file, over submissions/."""
    found: dict[str, Path] = {}
    for path in discover(root / "submissions"):
        try:
            found[load_submission(path).payload.submission_id] = path
        except EcocomputeError:
            continue  # not a submission: nothing to compare with
    return found


def _same_payload(a: Submission, b: Submission) -> bool:
    return a.payload.model_dump(mode="json") == b.payload.model_dump(mode="json")


def _submissions(folders: list[Path], archives: list[Path], landed: Landed) -> dict[str, tuple[_Found, Submission]]:
    """Every submission of the archives by id; the same id with two payloads is refused."""
    by_id: dict[str, tuple[_Found, Submission]] = {}
    conflicts: set[str] = set()
    for folder, archive in zip(folders, archives, strict=True):
        for path in sorted((folder / "out").rglob("*.json")) if (folder / "out").is_dir() else []:
            found = _Found(f"{archive.name}:{path.relative_to(folder)}", path)
            try:
                sub = load_submission(path)
            except EcocomputeError as exc:
                landed.refused.append(f"{found.origin}: {exc}")
                continue
            sub_id = sub.payload.submission_id
            if sub_id in by_id and not _same_payload(by_id[sub_id][1], sub):
                landed.refused.append(f"{found.origin}: {sub_id} is also in {by_id[sub_id][0].origin} with "
                                      "other windows; neither is landed")  # fmt: skip
                conflicts.add(sub_id)
            by_id.setdefault(sub_id, (found, sub))
    return {k: v for k, v in by_id.items() if k not in conflicts}


def _stage_submissions(
    found: dict[str, tuple[_Found, Submission]],
    committed: dict[str, Path],
    key: Path,
    signers: Path,
    root: Path,
    staging: Path,
    landed: Landed,
) -> list[tuple[Path, Path, list[Path]]]:
    """Sign and validate each new submission; return (staged file, target, summary list) for those that land."""
    plan = []
    for sub_id, (origin, sub) in sorted(found.items()):
        if sub_id in committed:
            if _same_payload(load_submission(committed[sub_id]), sub):
                landed.present.append(f"{origin.origin}: already at {committed[sub_id].relative_to(root)}")
            else:
                landed.refused.append(f"{origin.origin}: {sub_id} is committed at "
                                      f"{committed[sub_id].relative_to(root)} with other windows")  # fmt: skip
            continue
        try:
            signed = sign_submission(sub, key, SIGNER)
        except EcocomputeError as exc:
            landed.refused.append(f"{origin.origin}: {exc}")
            continue
        relpath = submission_relpath(signed)
        staged = staging / "submissions" / relpath
        write_submission(signed, staged)
        (result,) = validate_files([staged], allowed_signers=signers, submissions_root=staging / "submissions")
        if result.accepted:
            bucket = landed.accepted if result.passes_cv_gate else landed.spread_only
            plan.append((staged, root / "submissions" / relpath, bucket))
        else:
            details = "; ".join(f"{f.code} {f.message}" for f in result.errors)
            landed.refused.append(f"{origin.origin}: {details}")
    return plan


def _stage_others(folders: list[Path], root: Path, sitting: str, landed: Landed,
                  campaign: Path = CAMPAIGN) -> list[tuple[Path, Path]]:  # fmt: skip
    """Results and logs: a later archive's copy of a file wins (it grew); a taken name gets the sitting's.

    A benchmark's results are NAME.json and its output NAME.txt; output without its .json (a benchmark cut by the
    lease) is filed with the sitting's logs, so the campaign's ``results/`` holds finished results only.
    """
    chosen: dict[Path, Path] = {}
    logs = root / campaign / "logs" / sitting
    for folder in folders:
        results = sorted((folder / "results").glob("*")) if (folder / "results").is_dir() else []
        worker_logs = sorted((folder / "logs").glob("*.log")) if (folder / "logs").is_dir() else []
        for path in results + worker_logs:
            # a benchmark writes NAME.json when it finishes; a NAME.txt alone is the output of one the lease cut
            cut = path.suffix == ".txt" and not path.with_suffix(".json").exists()
            in_logs = path.parent.name == "logs" or path.name.startswith("pytest") or cut
            chosen[(logs if in_logs else root / campaign / "results") / path.name] = path
    plan = []
    for target, source in sorted(chosen.items()):
        if target.exists():
            if target.read_bytes() == source.read_bytes():
                landed.present.append(f"{source.name}: already at {target.relative_to(root)}")
                continue
            target = target.with_name(f"{target.stem}-{sitting}{target.suffix}")
            if target.exists():
                landed.refused.append(f"{source.name}: {target.relative_to(root)} exists with other content")
                continue
        plan.append((source, target))
    return plan


def _stage_checkpoints(folders: list[Path], finished: set[str], root: Path, landed: Landed,
                       campaign: Path = CAMPAIGN) -> list[tuple[Path, Path]]:  # fmt: skip
    """Checkpoints of cut runs with a measured window; a later archive's copy wins (it has more windows)."""
    chosen: dict[Path, Path] = {}
    for folder in folders:
        for path in sorted((folder / "state").glob("*.json")) if (folder / "state").is_dir() else []:
            try:
                state = read_state(path)
            except RunStateError as exc:
                landed.refused.append(f"{path.relative_to(folder)}: {exc}")
                continue
            if state.submission_id in finished or not any(m.windows for m in state.measurements.values()):
                continue  # the run finished (its submission is here or committed), or measured no window
            name = f"{state.submission_id}.{str(state.config['arch']).lower()}-{state.config['stack']}.partial.json"
            chosen[root / campaign / "checkpoints" / name] = path
    plan = []
    for target, source in sorted(chosen.items()):
        if not target.exists():
            plan.append((source, target))
        elif target.read_bytes() == source.read_bytes():
            landed.present.append(f"{source.name}: already at {target.relative_to(root)}")
        else:
            landed.refused.append(f"{source.name}: {target.relative_to(root)} exists with other windows")
    return plan


def land(archives: list[Path], key: Path, sitting: str, root: Path = ROOT, campaign: Path = CAMPAIGN) -> Landed:
    """Unpack, sign, validate and file; see the module's text."""
    missing = [str(a) for a in archives if not a.is_file()]
    if missing:
        raise EcocomputeError(f"no such archive: {', '.join(missing)} (collect.sh writes eco.tgz into $OUT)")
    signers = root / "submissions" / "allowed_signers"
    line = public_line(key, sitting)
    landed = Landed()
    with tempfile.TemporaryDirectory(prefix="ecocompute-land-") as tmp:
        staging = Path(tmp) / "staging"
        staging.mkdir()
        staged_signers = staging / "allowed_signers"
        current = signers.read_text(encoding="utf-8")
        known = line.split()[2] in current
        staged_signers.write_text(current if known else current.rstrip("\n") + "\n" + line, encoding="utf-8")
        folders = _unpack(archives, Path(tmp))
        found = _submissions(folders, archives, landed)
        committed = _committed(root)
        plan = _stage_submissions(found, committed, key, staged_signers, root, staging, landed)
        others = _stage_others(folders, root, sitting, landed, campaign)
        checkpoints = _stage_checkpoints(folders, set(found) | set(committed), root, landed, campaign)
        # everything is checked: now write, the key line first so that every landed file verifies
        if plan and not known:
            write_bytes_atomic(signers, staged_signers.read_bytes())
        for staged, target, bucket in plan:
            write_bytes_atomic(target, staged.read_bytes())
            bucket.append(target)
        for source, target in others:
            write_bytes_atomic(target, source.read_bytes())
            landed.other.append(target)
        for source, target in checkpoints:
            write_bytes_atomic(target, source.read_bytes())
            landed.checkpoints.append(target)
    return landed


def main(argv: list[str] | None = None) -> int:
    """Land the archives; print where each file went. Exit 1 when something was refused or on an error."""
    out = sys.stdout.write
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("archives", nargs="+", type=Path, help="eco.tgz files from collect.sh, oldest first")
    parser.add_argument("--key", type=Path, required=True, help="the sitting's private key (never committed)")
    parser.add_argument("--sitting", required=True, help="a name for the sitting, e.g. sitting-3")
    parser.add_argument("--campaign", type=Path, default=CAMPAIGN,
                        help=f"the campaign folder for results, logs and checkpoints (default {CAMPAIGN})")  # fmt: skip
    args = parser.parse_args(argv)
    campaign = Path(args.campaign)
    if campaign.is_absolute() or not (ROOT / campaign).is_dir():
        sys.stderr.write(f"error: --campaign {campaign}: give a campaign folder relative to {ROOT}, e.g. {CAMPAIGN}\n")
        return 1
    try:
        landed = land(args.archives, args.key, args.sitting, campaign=campaign)
    except (EcocomputeError, OSError, tarfile.TarError) as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 1
    for label, paths in (("accepted, in submissions/", landed.accepted),
                         ("E-CV only (all tier), in submissions/", landed.spread_only),
                         (f"checkpoints of cut runs, in {campaign}/checkpoints/", landed.checkpoints),
                         ("results and logs", landed.other)):  # fmt: skip
        out(f"{label}: {len(paths)}\n")
        for path in paths:
            out(f"  {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}\n")
    for line in landed.present:
        out(f"already present: {line}\n")
    for line in landed.refused:
        out(f"refused (left out): {line}\n")
    out(f"next: python {campaign}/tools/report.py --write, commit the data, REPORT.md and allowed_signers\n")
    return 1 if landed.refused else 0


if __name__ == "__main__":
    sys.exit(main())
