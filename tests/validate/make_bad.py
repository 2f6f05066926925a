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
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from factories import allowed_signers_line, make_key, submission_document

from ecocompute.schema.models import NAMESPACE
from ecocompute.schema.paths import gpu_slug
from ecocompute.schema.signing import canonical_bytes, sign_bytes, signature_fingerprint

BAD = Path(__file__).resolve().parents[1] / "data" / "bad"
LOGIN, OTHER, STRANGER = "bad-user", "other-user", "stranger-user"
SEED = 7
Doc = dict[str, Any]


def base(**kwargs: Any) -> Doc:
    """The valid document every case starts from."""
    return submission_document(SEED, login=kwargs.pop("login", LOGIN), example=False, **kwargs)


def sign(doc: Doc, key: Path, signer: str | None = None) -> Doc:
    """Sign any dict (valid or not) as ``signer`` (default: its contributor)."""
    doc = {k: v for k, v in doc.items() if k != "signature"}
    armored = sign_bytes(canonical_bytes(doc), key)
    fingerprint = signature_fingerprint(armored)
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


def mutated_counterless(change: Callable[[Doc], None]) -> Doc:
    """The base document as a power_integral file, readings kept in window 1 only (small files), after ``change``."""
    doc = counterless(base(), keep_trace=False)
    window, traced = windows(doc)[1], windows(counterless(base()))[1]
    window["power_trace"] = traced["power_trace"]
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
    """80 x the tokens in every fp16 window (6,000 tokens/s) of an example on a GPU the table does not know,
    whose generic bounds leave the 0.2 ms decode-step floor as the check that catches it."""
    doc["payload"].update(example=True)
    doc["payload"]["hardware"]["gpu_name"] = "Imaginary GPU 9000"
    for w in windows(doc):
        w.update(generate_calls=w["generate_calls"] * 80, tokens=w["tokens"] * 80)


def _short(doc: Doc) -> None:
    """Window 3 cut to 9 s, centred where it ran (the gaps either side stay under the timeline's bound)."""
    w = windows(doc)[3]
    cut = w["duration_s"] - 9.0
    w["started_at"] = (
        (datetime.fromisoformat(w["started_at"]) + timedelta(seconds=cut / 2)).isoformat().replace("+00:00", "Z")
    )
    w["duration_s"] = 9.0


def _scaled(doc: Doc, factor: int, m: int = 0, i: int = 2) -> None:
    """Window ``i`` of measurement ``m`` generating ``factor`` times the calls, tokens and energy (same J/token)."""
    w = doc["payload"]["measurements"][m]["windows"][i]
    w["generate_calls"] *= factor
    w["tokens"] *= factor
    w["energy_j"] *= factor
    w["energy_j_power_integrated"] *= factor


def _power(doc: Doc) -> None:
    _scaled(doc, 5)  # 5 x 162 W: above the H200's 700 W limit


def _bandwidth(doc: Doc) -> None:
    doc["payload"]["workload"].update(architecture="Qwen2.5-32B", params_total=32_763_876_352)
    _scaled(doc, 4)  # ~310 tokens/s of a 32B fp16 model at batch 1: bandwidth allows ~73 (x1.5 slack)


def _every_window(doc: Doc) -> list[Doc]:
    return [w for m in doc["payload"]["measurements"] for w in (*m["windows"], *m["warmup"])]


def _shift_days(days: int) -> Callable[[Doc], None]:
    def change(doc: Doc) -> None:
        for w in _every_window(doc):
            moved = datetime.fromisoformat(w["started_at"]) - timedelta(days=days)
            w["started_at"] = moved.isoformat().replace("+00:00", "Z")

    return change


def _cherry_picked(doc: Doc) -> None:
    """Round 2 deleted from every precision, the rest renumbered, the method lowered to match."""
    for m in doc["payload"]["measurements"]:
        del m["windows"][2]
        for i, w in enumerate(m["windows"]):
            w["index"] = i
    doc["payload"]["method"].update(min_windows=5, max_windows=5)


def _overlap(doc: Doc) -> None:
    w = doc["payload"]["measurements"][1]["windows"][3]
    w["started_at"] = (
        (datetime.fromisoformat(w["started_at"]) - timedelta(seconds=2)).isoformat().replace("+00:00", "Z")
    )


def _repeated(doc: Doc) -> None:
    ws = windows(doc)
    for field in ("energy_j", "energy_j_power_integrated", "duration_s", "tokens", "generate_calls"):
        ws[2][field] = ws[1][field]


def _created_before_last_window(doc: Doc) -> None:
    last = max(datetime.fromisoformat(w["started_at"]) for w in _every_window(doc))
    doc["payload"]["created_at"] = (last - timedelta(seconds=1)).isoformat().replace("+00:00", "Z")


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


def _errored_with_windows(doc: Doc) -> None:
    doc["payload"]["measurements"][1]["error"] = "CUDA out of memory"


COUNTERLESS_PERIOD_S = 0.1


def counterless(doc: Doc, *, keep_trace: bool = True) -> Doc:
    """``doc`` as a 1.2 power_integral file: each window's power constant, read every 0.1 s and at both ends."""
    doc = copy.deepcopy(doc)
    doc["schema_version"] = "1.2"
    doc["payload"]["method"].update(energy_source="power_integral", counter_absent_reason="NVML: NOT_SUPPORTED")
    for m in doc["payload"]["measurements"]:
        for w in (*m["windows"], *m["warmup"]):
            power_w = w["energy_j"] / w["duration_s"]
            steps = int(w["duration_s"] / COUNTERLESS_PERIOD_S)
            times = [round(k * COUNTERLESS_PERIOD_S, 4) for k in range(steps + 1)] + [w["duration_s"]]
            w.update(energy_j_power_integrated=w["energy_j"], power_samples=len(times), power_first_sample_s=0.0,
                     power_last_sample_gap_s=0.0, power_max_gap_s=COUNTERLESS_PERIOD_S)  # fmt: skip
            if keep_trace:
                w["power_trace"] = [[t, power_w] for t in times]
    return doc


def _trace_gap(doc: Doc) -> None:
    w = windows(doc)[1]
    w["power_trace"] = [p for p in w["power_trace"] if not 3.0 < p[0] < 3.7]


def _trace_scaled(doc: Doc) -> None:
    w = windows(doc)[1]
    w["power_trace"] = [[t, round(watts * 1.03, 6)] for t, watts in w["power_trace"]]


def _unrecorded(doc: Doc) -> None:
    w = windows(doc)[1]
    del w["power_trace"], w["power_max_gap_s"]


def _sensorless(doc: Doc) -> None:
    """A 1.2 file from a GPU without an SM clock reading: null in every window (warm-ups too)."""
    doc["schema_version"] = "1.2"
    for m in doc["payload"]["measurements"]:
        for w in (*m["windows"], *m["warmup"]):
            w["sm_clock_mhz_mean"] = None


SIGNED_CASES: dict[str, Callable[[], Doc]] = {
    "E-VERSION": lambda: mutated(_set("schema_version", "2.0")),
    "E-SCHEMA": lambda: mutated(lambda d: d["payload"]["hardware"].pop("gpu_arch")),
    "E-MEASUREMENT": lambda: mutated(_errored_with_windows),
    "E-PRECISION-REPEATED": lambda: base(precisions=("fp16", "nf4", "nf4")),
    "E-QUANTIZATION": lambda: mutated(_set("payload.measurements.1.quantization", None)),
    "E-BASELINE": lambda: base(precisions=("nf4",)),
    "E-WINDOW-COUNT": lambda: base(n_windows=2),
    "E-WINDOW-SHORT": lambda: mutated(_short),
    "E-WINDOW-INDEX": lambda: mutated(_windows_swap("index")),
    "E-CV": lambda: base(cv=0.05),
    "E-POWER": lambda: mutated(_power),
    "E-INTEGRAL": lambda: mutated(_integral(1.1)),
    "E-TOKENS": lambda: mutated(lambda d: windows(d)[1].update(tokens=windows(d)[1]["tokens"] + 1)),
    "E-THROUGHPUT": lambda: mutated(_throughput),
    "E-TEMPERATURE": lambda: mutated(_set("payload.measurements.0.windows.0.temp_c_end", 130.0)),
    "E-CLOCK": lambda: mutated(_set("payload.measurements.0.windows.0.sm_clock_mhz_mean", 5000.0)),
    "E-TIME-ORDER": lambda: mutated(_windows_swap("started_at")),
    "E-TIME-RANGE": lambda: mutated(_created_before_last_window),
    "E-IDLE": lambda: mutated(_set("payload.idle.power_w_before", 5.0)),
    "E-HARDWARE": lambda: mutated(_set("payload.hardware.memory_total_mib", 80000)),
    "E-FINGERPRINT": lambda: mutated(_set("payload.software.cuda_runtime", None)),
    "E-GPU-UNKNOWN": lambda: mutated(_set("payload.hardware.gpu_name", "Imaginary GPU 9000")),
    "W-GPU-UNKNOWN": lambda: mutated(
        lambda d: (_set("payload.hardware.gpu_name", "Imaginary GPU 9000")(d), d["payload"].update(example=True))
    ),
    "E-STOPPING-RULE": lambda: mutated(
        lambda d: d["payload"]["method"].update(min_windows=6, max_windows=30, target_ci_pct=0.0001)
    ),
    "E-WINDOW-GAP": lambda: mutated(_cherry_picked),
    "E-WINDOW-OVERLAP": lambda: mutated(_overlap),
    "E-WINDOW-REPEATED": lambda: mutated(_repeated),
    "E-IDLE-ABOVE-LOAD": lambda: mutated(
        lambda d: d["payload"]["idle"].update(power_w_before=170.0, power_w_after=171.0)
    ),
    "E-BANDWIDTH": lambda: mutated(_bandwidth),
    "E-SESSION-SPAN": lambda: mutated(_shift_days(4)),
    "E-PARAMS": lambda: mutated(_set("payload.workload.params_total", 1_210_048_384)),
    "W-ARCH-UNKNOWN": lambda: mutated(_set("payload.workload.architecture", "Mystery-7B")),
    "W-POWER-LIMIT": lambda: mutated(_set("payload.hardware.power_limit_w", 600.0)),
    "W-INTEGRAL": lambda: mutated(_integral(1.03)),
    "W-WARMUP": lambda: mutated(_set("payload.measurements.0.warmup", [])),
    "W-THROTTLE": lambda: mutated(_set("payload.measurements.0.windows.0.throttle_reasons", ["sw_thermal_slowdown"])),
    "W-SHARED": lambda: mutated(_set("payload.measurements.0.windows.0.other_gpu_processes", 1)),
    "W-SENSOR-MISSING": lambda: mutated(_sensorless),
    "W-EXAMPLE": lambda: base() | {"payload": submission_document(SEED, login=LOGIN)["payload"]},
    # power_integral files (validate/counterless.py)
    "E-SAMPLING": lambda: counterless(mutated(_set("payload.method.power_sampling_hz", 2.0)), keep_trace=False),
    "E-COVERAGE": lambda: mutated_counterless(_trace_gap),
    "E-INTEGRAL-RECOMPUTED": lambda: mutated_counterless(_trace_scaled),
    "E-COUNTERLESS-RECORD": lambda: mutated_counterless(_unrecorded),
}  # fmt: skip


# Warnings a case cannot help carrying (an example is what lets a GPU the table does not know through).
ALSO = {"E-THROUGHPUT": ["W-EXAMPLE", "W-GPU-UNKNOWN"], "W-GPU-UNKNOWN": ["W-EXAMPLE"]}


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
        case(code, sign(build(), key), also=ALSO.get(code, []))
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
    same_id = submission_document(SEED + 1, login=OTHER, example=False)
    same_id["payload"]["submission_id"] = valid["payload"]["submission_id"]
    case("E-DUPLICATE-ID", sign(same_id, key))
    write("E-DUPLICATE-PAYLOAD", relpath(valid), text(valid))
    replayed = copy.deepcopy(valid)  # another login re-files it with a new id and note, signed with its own key
    replayed["payload"]["contributor"]["github"] = OTHER
    replayed["payload"]["submission_id"] = replayed["payload"]["submission_id"][:-8] + "0badc0de"
    replayed["payload"]["notes"] = "measured on my own H200"
    case("E-DUPLICATE-PAYLOAD", sign(replayed, key))
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
