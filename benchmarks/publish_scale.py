"""Build the dataset from N generated, signed submissions, cold and from a warm cache; print time and peak memory.

Setup (not timed): write N synthetic EXAMPLE submissions (6 model shapes x 2 stacks x 2 batch sizes, fp16 + nf4,
6 windows each) signed with a throwaway ed25519 key into a temporary submissions folder. Then a fresh Python
process builds with an empty cache (every file validated), and another fresh process builds again with that cache
(nothing changed: every verdict and row from the cache, the tables streamed from it). Each reports its own wall
time, CPU, peak RSS (``resource.getrusage``) and the 1-minute load average before and after, so setup memory does
not count and a shared machine's queue shows. Targets for the warm build of 100,000
submissions: <= 60 s and <= 2 GB.

    PYTHONPATH=tests:tests/publish python benchmarks/publish_scale.py [--n 10000] > benchmarks/results/publish_scale.txt
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import platform
import resource
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ed25519

TARGET_S = 60.0
TARGET_MB = 2048.0


BLOCK = 500  # seeds generated per task; a finished block is recorded, so an interrupted generation resumes


def _ssh_string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


class FastSigner:
    """``ssh-keygen -Y sign`` for an ed25519 key, in-process: the same armored bytes (ed25519 is deterministic).

    Signing through ssh-keygen forks a process per file (~30 ms here); 100,000 files need the in-process form.
    :func:`check_signer` holds it to ssh-keygen's output on the first document.
    """

    def __init__(self, key: Path) -> None:
        from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat, load_ssh_private_key

        private = load_ssh_private_key(key.read_bytes(), None)
        if not isinstance(private, ed25519.Ed25519PrivateKey):
            raise TypeError(f"{key} is not an ed25519 key")
        self.private = private
        self.blob = base64.b64decode(
            private.public_key().public_bytes(Encoding.OpenSSH, PublicFormat.OpenSSH).split()[1]
        )

    def armored(self, message: bytes) -> str:
        """The armored SSHSIG signature of ``message`` (PROTOCOL.sshsig, sha512, the project's namespace)."""
        from ecocompute.schema.models import NAMESPACE

        head = _ssh_string(NAMESPACE.encode()) + _ssh_string(b"") + _ssh_string(b"sha512")
        signed = b"SSHSIG" + head + _ssh_string(hashlib.sha512(message).digest())
        raw = _ssh_string(b"ssh-ed25519") + _ssh_string(self.private.sign(signed))
        blob = b"SSHSIG" + struct.pack(">I", 1) + _ssh_string(self.blob) + head + _ssh_string(raw)
        text = base64.b64encode(blob).decode("ascii")
        lines = [text[i : i + 70] for i in range(0, len(text), 70)]
        return "-----BEGIN SSH SIGNATURE-----\n" + "\n".join(lines) + "\n-----END SSH SIGNATURE-----\n"

    def sign(self, document: dict[str, Any], login: str) -> Any:
        """``sign_submission`` of ``document`` with this key."""
        from ecocompute.schema.models import NAMESPACE, Signature, Submission
        from ecocompute.schema.signing import canonical_bytes, signature_fingerprint

        submission = Submission.model_validate(document)
        unsigned = submission.unsigned().model_dump(mode="json")
        unsigned.pop("signature", None)
        armored = self.armored(canonical_bytes(unsigned))
        signature = Signature(format="sshsig", namespace=NAMESPACE, signer=login,
                              key_fingerprint=signature_fingerprint(armored), armored=armored)  # fmt: skip
        return submission.model_copy(update={"signature": signature})


def _specs() -> list[Any]:
    from publish_examples import SHAPES, Spec

    return [Spec(a, p, stack, batch, ("fp16", "nf4")) for a, p in SHAPES for stack in ("eager", "compiled")
            for batch in (1, 8)]  # fmt: skip


def check_signer(key: Path) -> None:
    """Refuse to generate when the in-process signature differs from ssh-keygen's on a document."""
    from publish_examples import example_document

    from ecocompute.schema.signing import canonical_bytes, sign_bytes

    message = canonical_bytes(example_document(_specs()[0], 0, n_windows=6))
    if FastSigner(key).armored(message) != sign_bytes(message, key):
        raise SystemExit("the in-process signer differs from ssh-keygen -Y sign: not generating")


_SIGNER: dict[str, Any] = {}


def _write_block(root: Path, key: Path, block: int, n: int) -> int:
    """Write the submissions of seeds [block*BLOCK, min(n, ...)) under ``root``; record the block as done."""
    seeds = range(block * BLOCK, min(n, (block + 1) * BLOCK))
    write_seeds(root, key, seeds)
    (root / "blocks" / f"{block:05d}-{len(seeds)}").touch()
    return len(seeds)


def write_seeds(root: Path, key: Path, seeds: Sequence[int]) -> list[Path]:
    """The signed submission of each seed, under ``root/submissions``."""
    from publish_examples import CREATED, LOGIN, example_document

    from ecocompute.schema.io import write_submission
    from ecocompute.schema.paths import submission_relpath

    signer = _SIGNER.setdefault(str(key), FastSigner(key))
    specs = _specs()
    paths = []
    for seed in seeds:
        # counted back from the example date, so no file of 100,000 is dated in the future
        created = CREATED - timedelta(minutes=seed)
        document = example_document(specs[seed % len(specs)], seed, n_windows=6, created=created)
        submission = signer.sign(document, LOGIN)
        paths.append(root / "submissions" / str(submission_relpath(submission)))
        write_submission(submission, paths[-1])
    return paths


def generate(root: Path, n: int, workers: int = 2) -> int:
    """N signed example submissions under ``root/submissions`` (plus its allowed_signers); resumes by block.

    Seed i gives the same file every time, so a block cut off half-way is simply written again. Returns how many
    files this call wrote.
    """
    from factories import make_key
    from publish_examples import write_allowed_signers

    (root / "blocks").mkdir(parents=True, exist_ok=True)
    key = root / "key" / "bench_ed25519"
    if not key.is_file():
        key.parent.mkdir(parents=True, exist_ok=True)
        make_key(key.parent, key.name)
    write_allowed_signers(root / "submissions", key)
    check_signer(key)
    done = {int(p.name.split("-")[0]) for p in (root / "blocks").iterdir()
            if int(p.name.split("-")[1]) == min(BLOCK, n - int(p.name.split("-")[0]) * BLOCK)}  # fmt: skip
    todo = [b for b in range((n + BLOCK - 1) // BLOCK) if b not in done]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return sum(pool.map(_write_block, [root] * len(todo), [key] * len(todo), todo, [n] * len(todo)))


def build_stages(root: Path, out: Path, cache: Path, label: str) -> None:
    """The child process: one build with ``cache``, then report wall time, CPU and peak RSS (one JSON line too)."""
    start, load_start = time.perf_counter(), os.getloadavg()[0]
    from ecocompute.publish.build import BuildOptions, build
    from ecocompute.publish.inputs import Source

    result = build([Source.at(root)], out, BuildOptions(include_examples=True, cache=cache))
    end = time.perf_counter()
    own, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime  # the validator's workers too
    record = {"label": label, "submissions": result.submissions_all, "validated": result.validated,
              "wall_s": round(end - start, 1), "cpu_s": round(cpu_s, 1), "peak_rss_mb": round(own.ru_maxrss / 1024),
              "worker_peak_rss_mb": round(workers.ru_maxrss / 1024),
              "load_1min": [round(load_start, 1), round(os.getloadavg()[0], 1)]}  # fmt: skip
    print(f"{label:<5} build: {result.submissions_all} submissions, {result.validated} validated, "
          f"wall {record['wall_s']:6.1f} s, CPU {cpu_s:6.1f} s, peak RSS {record['peak_rss_mb']:6} MB, "
          f"load {load_start:.1f} -> {os.getloadavg()[0]:.1f}")  # fmt: skip
    with (cache.parent / "runs.jsonl").open("a", encoding="utf-8") as runs:
        runs.write(json.dumps(record) + "\n")


def run_builds(root: Path, n: int, labels: Sequence[str], json_out: Path | None = None) -> None:
    """Generate (or resume) the N submissions under ``root``; build once per label, each in a fresh process.

    ``json_out``: also write this invocation's builds (each child's record) there as one JSON document.
    """
    t0 = time.perf_counter()
    runs_file = root / "runs.jsonl"
    seen = len(runs_file.read_text(encoding="utf-8").splitlines()) if runs_file.is_file() else 0
    wrote = generate(root, n)
    print(f"# publish_scale: build from {n} generated signed submissions")
    print(f"# host: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}")  # fmt: skip
    print(f"setup (generate+sign {wrote} files) {time.perf_counter() - t0:6.1f} s  (not part of the build)")
    sys.stdout.flush()
    added: list[Path] = []
    for label in labels:
        if label == "add1":  # a pull request adds one submission: it is validated, and the tables computed again
            added += write_seeds(root, root / "key" / "bench_ed25519", [n + len(added)])
        child = [sys.executable, __file__, "--child", str(root / "submissions"), str(root / "out"), str(root / "cache")]
        subprocess.run([*child, label], check=True)
        sys.stdout.flush()
    for path in added:  # the folder holds N submissions again
        path.unlink()
    if json_out is not None:
        runs = [json.loads(line) for line in runs_file.read_text(encoding="utf-8").splitlines()[seen:]]
        document = {"benchmark": "publish_scale", "n": n, "host": f"{platform.machine()}, {os.cpu_count()} CPUs",
                    "python": platform.python_version(), "targets": {"warm_wall_s": TARGET_S,
                    "peak_rss_mb": TARGET_MB}, "runs": runs}  # fmt: skip
        json_out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--root", type=Path, help="a folder kept between runs (submissions, key, cache, output); "
                        "default: a temporary one")  # fmt: skip
    parser.add_argument("--builds", default="cold,warm,warm",
                        help="comma list of builds: cold (empties the cache first), warm, add1 (one file added "
                             "first); '' only generates")  # fmt: skip
    parser.add_argument("--json", type=Path, help="also write the builds of this run to this JSON file")
    parser.add_argument("--child", nargs=4, metavar=("ROOT", "OUT", "CACHE", "LABEL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        build_stages(Path(args.child[0]), Path(args.child[1]), Path(args.child[2]), args.child[3])
        return
    labels = [b for b in args.builds.split(",") if b]
    if args.root is not None:
        if "cold" in labels and (args.root / "cache").exists():
            shutil.rmtree(args.root / "cache")
        run_builds(args.root, args.n, labels, args.json)
        return
    with tempfile.TemporaryDirectory(prefix="publish-scale-") as tmp:
        run_builds(Path(tmp), args.n, labels, args.json)


if __name__ == "__main__":
    main()
