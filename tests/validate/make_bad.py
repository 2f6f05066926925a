"""Regenerate tests/data/bad/: one small case per finding code, signed with a throwaway key.

Run ``PYTHONPATH=tests python tests/validate/make_bad.py``. Each case is a folder ``tests/data/bad/<CODE>/`` holding a
``submissions/`` tree; ``manifest.json`` names, per code, the file to validate, the root and the
pull-request author. The key is made in a temporary folder and thrown away; only its
``allowed_signers`` line is committed. Cases that need the file system (E-READ, E-SYMLINK) and
E-INTERNAL (a validator bug) are made in the tests instead.
"""

from __future__ import annotations

import copy
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from factories import allowed_signers_line, make_key, submission_document

from ecocompute.schema.models import NAMESPACE
from ecocompute.schema.paths import gpu_slug
from ecocompute.schema.signing import _parse_armored, canonical_bytes, sign_bytes

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
LOGIN, OTHER, STRANGER = "bad-user", "other-user", "stranger-user"
SEED = 7
Doc = dict[str, Any]


def base(**kwargs: Any) -> Doc:
    """The valid document every case starts from."""
    return submission_document(SEED, login=kwargs.pop("login", LOGIN), example=False, **kwargs)


def sign(doc: Doc, key: Path, signer: str | None = None) -> Doc:
    """Sign any dict (valid or not) as ``signer`` (default: its contributor)."""
    import sshsig

    doc = {k: v for k, v in doc.items() if k != "signature"}
    armored = sign_bytes(canonical_bytes(doc), key)
    fingerprint = sshsig.PublicKey.from_ssh_encoding(_parse_armored(armored).public_key).sha256_str()
    signer = signer or doc["payload"]["contributor"]["github"]
    doc["signature"] = {
        "format": "sshsig",
        "namespace": NAMESPACE,
        "signer": signer,
        "key_fingerprint": fingerprint,
        "armored": armored,
    }
    return doc


def relpath(doc: Doc) -> str:
    """Where a document belongs under submissions/."""
    p = doc["payload"]
    return f"submissions/{p['contributor']['github']}/{gpu_slug(p['hardware']['gpu_name'])}/{p['submission_id']}.json"


def text(doc: Doc) -> bytes:
    """The document as a submission file."""
    return (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode()


def windows(doc: Doc, m: int = 0) -> list[Doc]:
    """The windows of measurement ``m``."""
    return list(doc["payload"]["measurements"][m]["windows"])


def mutated(change: Callable[[Doc], None], **kwargs: Any) -> Doc:
    """The base document after ``change``."""
    doc = base(**kwargs)
    change(doc)
    return doc


def _set(path: str, value: Any) -> Callable[[Doc], None]:
    def change(doc: Doc) -> None:
        target: Any = doc
        parts = path.split(".")
        for part in parts[:-1]:
            target = target[int(part)] if isinstance(target, list) else target[part]
        last = parts[-1]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return change


def _throughput(doc: Doc) -> None:
    for w in windows(doc):
        w.update(generate_calls=250, tokens=250 * 256, duration_s=10.5, energy_j=3150.0)
        w["energy_j_power_integrated"] = 3150.0


def _power(doc: Doc) -> None:
    w = windows(doc)[2]
    w["duration_s"] = w["energy_j"] / 15.0


def _windows_swap(field: str) -> Callable[[Doc], None]:
    def change(doc: Doc) -> None:
        ws = windows(doc)
        ws[1][field], ws[2][field] = ws[2][field], ws[1][field]

    return change


def _integral(factor: float) -> Callable[[Doc], None]:
    def change(doc: Doc) -> None:
        w = windows(doc)[1]
        w["energy_j_power_integrated"] = w["energy_j"] * factor

    return change


def _late_window(doc: Doc) -> None:
    windows(doc)[-1]["started_at"] = "2026-11-30T12:08:00Z"


def _errored_with_windows(doc: Doc) -> None:
    doc["payload"]["measurements"][1]["error"] = "CUDA out of memory"


SIGNED_CASES: dict[str, Callable[[], Doc]] = {
    "E-VERSION": lambda: mutated(_set("schema_version", "2.0")),
    "E-SCHEMA": lambda: mutated(lambda d: d["payload"]["hardware"].pop("gpu_arch")),
    "E-MEASUREMENT": lambda: mutated(_errored_with_windows),
    "E-PRECISION-REPEATED": lambda: base(precisions=("fp16", "nf4", "nf4")),
    "E-QUANTIZATION": lambda: mutated(_set("payload.measurements.1.quantization", None)),
    "E-BASELINE": lambda: base(precisions=("nf4",)),
    "E-WINDOW-COUNT": lambda: base(n_windows=2),
    "E-WINDOW-SHORT": lambda: mutated(_set("payload.measurements.0.windows.3.duration_s", 9.0)),
    "E-WINDOW-INDEX": lambda: mutated(_windows_swap("index")),
    "E-CV": lambda: base(cv=0.05),
    "E-POWER": lambda: mutated(_power),
    "E-INTEGRAL": lambda: mutated(_integral(1.1)),
    "E-TOKENS": lambda: mutated(lambda d: windows(d)[1].update(tokens=windows(d)[1]["tokens"] + 1)),
    "E-THROUGHPUT": lambda: mutated(_throughput),
    "E-TEMPERATURE": lambda: mutated(_set("payload.measurements.0.windows.0.temp_c_end", 130.0)),
    "E-CLOCK": lambda: mutated(_set("payload.measurements.0.windows.0.sm_clock_mhz_mean", 5000.0)),
    "E-TIME-ORDER": lambda: mutated(_windows_swap("started_at")),
    "E-TIME-RANGE": lambda: mutated(_late_window),
    "E-IDLE": lambda: mutated(_set("payload.idle.power_w_before", 5.0)),
    "E-HARDWARE": lambda: mutated(_set("payload.hardware.memory_total_mib", 80000)),
    "E-FINGERPRINT": lambda: mutated(_set("payload.software.cuda_runtime", None)),
    "W-GPU-UNKNOWN": lambda: mutated(_set("payload.hardware.gpu_name", "Imaginary GPU 9000")),
    "W-POWER-LIMIT": lambda: mutated(_set("payload.hardware.power_limit_w", 600.0)),
    "W-INTEGRAL": lambda: mutated(_integral(1.03)),
    "W-WARMUP": lambda: mutated(_set("payload.measurements.0.warmup", [])),
    "W-THROTTLE": lambda: mutated(_set("payload.measurements.0.windows.0.throttle_reasons", ["sw_thermal_slowdown"])),
    "W-SHARED": lambda: mutated(_set("payload.measurements.0.windows.0.other_gpu_processes", 1)),
    "W-EXAMPLE": lambda: base() | {"payload": submission_document(SEED, login=LOGIN)["payload"]},
}  # fmt: skip


def byte_cases(valid: bytes) -> dict[str, bytes]:
    """Cases that are about the bytes, not the content."""
    return {
        "E-SIZE": b"",
        "E-NESTING": b'{"schema_version": "1.0", "payload": ' + b"[" * 40 + b"]" * 40 + b"}\n",
        "E-BINARY": valid[:200] + b"\x00\x00\x00" + valid[200:],
        "E-ENCODING": '{"schema_version": "1.0", "notes": "café"}\n'.encode("latin-1"),
        "E-JSON": valid[: len(valid) // 2],
        "E-NAN": valid.replace(b'"power_w_before": 122.0', b'"power_w_before": NaN', 1),
        "E-DUPKEY": b'{"schema_version": "1.0", "schema_version": "1.0", "payload": {}}\n',
    }


def write(case: str, rel: str, data: bytes) -> None:
    """Write one file of a case."""
    target = BAD / case / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)


def generate(key: Path) -> dict[str, dict[str, Any]]:
    """Write every case; return the manifest."""
    manifest: dict[str, dict[str, Any]] = {}

    def case(code: str, doc_or_bytes: Doc | bytes, rel: str | None = None, **extra: Any) -> None:
        if isinstance(doc_or_bytes, bytes):
            rel = rel or relpath(base())
            write(code, rel, doc_or_bytes)
        else:
            rel = rel or relpath(doc_or_bytes)
            write(code, rel, text(doc_or_bytes))
        manifest[code] = {"file": rel, "root": "submissions", "pr_author": None, **extra}

    valid = sign(base(), key)
    for code, build in SIGNED_CASES.items():
        case(code, sign(build(), key))
    for code, data in byte_cases(text(valid)).items():
        case(code, data)
    case("E-UNSIGNED", base())
    case("E-SIGNER-UNKNOWN", sign(base(login=STRANGER), key))
    tampered = copy.deepcopy(valid)
    tampered["payload"]["collector"]["version"] = "0.1.1"
    case("E-SIGNATURE", tampered)
    case("E-SIGNER", sign(base(), key, signer=OTHER))
    case("E-PR-AUTHOR", valid, pr_author="someone-else")
    case("E-PATH", valid, rel=relpath(valid).replace("nvidia-h200", "nvidia-a100"))
    case("E-OUTSIDE", valid, rel="elsewhere/" + relpath(valid).split("/", 1)[1])
    write("E-DUPLICATE-ID", relpath(valid), text(valid))
    same_id = sign(base(login=OTHER), key)
    case("E-DUPLICATE-ID", same_id)
    write("E-DUPLICATE-PAYLOAD", relpath(valid), text(valid))
    copied = copy.deepcopy(valid)
    copied["payload"]["submission_id"] = copied["payload"]["submission_id"][:-8] + "0badc0de"
    case("E-DUPLICATE-PAYLOAD", sign(copied, key))
    return dict(sorted(manifest.items()))


def main() -> None:
    """Regenerate tests/data/bad/ from scratch."""
    if BAD.exists():
        shutil.rmtree(BAD)
    BAD.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        key = make_key(Path(tmp), "throwaway")
        line = allowed_signers_line(f"{LOGIN},{OTHER}", key)
        (BAD / "allowed_signers").write_text("# throwaway key of tests/data/bad only (private key discarded)\n" + line)
        manifest = generate(key)
    (BAD / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


if __name__ == "__main__":
    main()
