"""One case per attack class of issue 21, each with keys made here, each asserting its finding code.

Replays (another login, a new id, a changed note, other number formats), cherry-picked windows, a lax schema,
impossible physics. Every case goes through the command too, so no traceback reaches a user.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from factories import allowed_signers_line, make_key, submission_document

from ecocompute.cli import main
from ecocompute.schema.models import NAMESPACE
from ecocompute.schema.paths import gpu_slug
from ecocompute.schema.signing import canonical_bytes, sign_bytes, signature_fingerprint
from ecocompute.validate.core import FileResult, validate_files

ALICE, MALLORY = "alice-user", "mallory-user"
Doc = dict[str, Any]


class Signers:
    """Two contributors with keys of their own, in one allowed_signers file."""

    def __init__(self, folder: Path) -> None:
        self.keys = {login: make_key(folder, login) for login in (ALICE, MALLORY)}
        self.root = folder / "submissions"
        self.root.mkdir()
        self.file = self.root / "allowed_signers"
        self.file.write_text("".join(allowed_signers_line(login, key) for login, key in self.keys.items()))

    def write(self, doc: Doc, raw: Callable[[str], str] | None = None) -> Path:
        """Sign ``doc`` as its contributor and write it where it belongs; ``raw`` edits the text before signing
        is checked (the signature covers the canonical form, so number formats do not change it)."""
        login = doc["payload"]["contributor"]["github"]
        body = {k: v for k, v in doc.items() if k != "signature"}
        armored = sign_bytes(canonical_bytes(body), self.keys[login])
        body["signature"] = {"format": "sshsig", "namespace": NAMESPACE, "signer": login,
                             "key_fingerprint": signature_fingerprint(armored), "armored": armored}  # fmt: skip
        p = body["payload"]
        path = self.root / login / gpu_slug(p["hardware"]["gpu_name"]) / f"{p['submission_id']}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(body, indent=2)
        path.write_text(raw(text) if raw else text)
        return path

    def check(self, *paths: Path) -> list[FileResult]:
        return validate_files(list(paths), allowed_signers=self.file, submissions_root=self.root)


@pytest.fixture
def signers(tmp_path: Path) -> Signers:
    return Signers(tmp_path)


def measured(seed: int = 11, login: str = ALICE, **kwargs: Any) -> Doc:
    return submission_document(seed, login=login, example=False, **kwargs)


def codes(result: FileResult) -> set[str]:
    return {f.code for f in result.findings if f.is_error}


def no_traceback(signers: Signers, path: Path, capsys: pytest.CaptureFixture[str]) -> int:
    code = main(["validate", str(path), "--root", str(signers.root), "--allowed-signers", str(signers.file)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    return code


def test_a_measurement_is_accepted_and_gate_tier(signers: Signers, capsys: pytest.CaptureFixture[str]) -> None:
    path = signers.write(measured())
    [result] = signers.check(path)
    assert result.accepted and result.tier == "gate", result.findings
    assert no_traceback(signers, path, capsys) == 0


REPLAYS: dict[str, Callable[[Doc], None]] = {
    "another login, new id, own key": lambda p: p["contributor"].update(github=MALLORY),
    "own, with a changed note": lambda p: p.update(notes="re-measured, honest"),
    "own, with a new id": lambda p: p.update(submission_id=p["submission_id"][:-8] + "abcdef01"),
    "another uuid hash": lambda p: p["hardware"].update(gpu_uuid_sha256="1" * 64),
}


@pytest.mark.parametrize("how", sorted(REPLAYS))
def test_a_replayed_measurement_is_refused_naming_the_original(
    signers: Signers, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    original = signers.write(measured())
    copy = measured()
    copy["payload"]["submission_id"] = copy["payload"]["submission_id"][:-8] + "0badc0de"
    REPLAYS[how](copy["payload"])
    path = signers.write(copy)
    [result] = signers.check(path)
    assert "E-DUPLICATE-PAYLOAD" in codes(result)
    [dup] = [f for f in result.findings if f.code == "E-DUPLICATE-PAYLOAD"]
    assert original.name in dup.message
    assert no_traceback(signers, path, capsys) == 1


def test_a_replay_in_other_number_formats_and_time_zones_is_still_a_copy(signers: Signers) -> None:
    signers.write(measured())
    copy = measured(login=MALLORY)
    copy["payload"]["submission_id"] = copy["payload"]["submission_id"][:-8] + "0badc0de"
    for m in copy["payload"]["measurements"]:
        for w in (*m["windows"], *m["warmup"]):  # the same instant, written in another zone
            w["started_at"] = (
                datetime.fromisoformat(w["started_at"]).astimezone(timezone(timedelta(hours=9))).isoformat()
            )
    # 2650.1 written as 2650.100: the same number (the signature covers the canonical form, so it still verifies)
    path = signers.write(copy, raw=lambda text: re.sub(r'("energy_j": [0-9]+\.[0-9]+)', r"\g<1>00", text))
    assert "00,\n" in path.read_text()
    [result] = signers.check(path)
    assert "E-DUPLICATE-PAYLOAD" in codes(result) and "E-SIGNATURE" not in codes(result)


def test_cherry_picked_windows_are_refused(signers: Signers) -> None:
    doc = measured(cv=0.05)
    [full] = signers.check(signers.write(doc))
    assert codes(full) == {"E-CV"}  # the all tier: accepted, out of the gate
    picked = measured(seed=12, cv=0.05)
    for m in picked["payload"]["measurements"]:  # drop the two worst windows, renumber, lower the method
        m["windows"] = sorted(m["windows"], key=lambda w: w["energy_j"] / w["tokens"])[1:-1]
        m["windows"].sort(key=lambda w: w["started_at"])
        for i, w in enumerate(m["windows"]):
            w["index"] = i
    picked["payload"]["method"].update(min_windows=4, max_windows=4)
    [result] = signers.check(signers.write(picked))
    assert "E-WINDOW-GAP" in codes(result) or "E-WINDOW-COUNT" in codes(result), result.findings


def test_deleted_windows_with_the_indices_left_are_refused(signers: Signers) -> None:
    doc = measured()
    del doc["payload"]["measurements"][0]["windows"][2]
    [result] = signers.check(signers.write(doc))
    assert {"E-WINDOW-INDEX", "E-WINDOW-COUNT"} <= codes(result)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("payload.measurements.0.windows.0.tokens", "__str__"),
        ("payload.hardware.mig_mode", "yes"),
        ("payload.hardware.persistence_mode", 1),
        ("payload.created_at", 1764500000),
    ],
    ids=["string-int", "yes-bool", "int-bool", "int-date"],
)
def test_the_schema_is_the_strict_one(signers: Signers, field: str, value: Any) -> None:
    doc = measured()
    *parents, last = field.split(".")
    target: Any = doc
    for part in parents:
        target = target[int(part)] if isinstance(target, list) else target[part]
    target[last] = str(target[last]) if value == "__str__" else value
    [result] = signers.check(signers.write(doc))
    assert codes(result) == {"E-SCHEMA"}


def _gpu_count(doc: Doc) -> None:
    doc["payload"]["hardware"]["gpu_count"] = 64
    for w in doc["payload"]["measurements"][0]["windows"]:
        w["energy_j"] *= 200
        w["energy_j_power_integrated"] *= 200


def _limit_below_drawn(doc: Doc) -> None:
    for w in doc["payload"]["measurements"][0]["windows"]:
        w["power_limit_w"] = 150.0  # drawn: ~162 W


def _identical(doc: Doc) -> None:
    windows = doc["payload"]["measurements"][0]["windows"]
    for w in windows[1:]:
        for field in ("energy_j", "energy_j_power_integrated", "duration_s", "tokens", "generate_calls"):
            w[field] = windows[0][field]


def _six_years(doc: Doc) -> None:
    for m in doc["payload"]["measurements"]:
        for w in m["windows"][:1] + m["warmup"]:
            w["started_at"] = (datetime.fromisoformat(w["started_at"]) - timedelta(days=6 * 365)).isoformat()


def _overlap_across_precisions(doc: Doc) -> None:
    nf4 = doc["payload"]["measurements"][1]["windows"][0]
    nf4["started_at"] = doc["payload"]["measurements"][0]["windows"][0]["started_at"]


PHYSICS: dict[str, tuple[Callable[[Doc], None], str]] = {
    "idle above load": (lambda d: d["payload"]["idle"].update(power_w_before=400.0, power_w_after=400.0),
                        "E-IDLE-ABOVE-LOAD"),
    "32B at 3,000 tokens/s": (lambda d: d["payload"]["workload"].update(architecture="Qwen2.5-32B",
                                                                        params_total=32_763_876_352), "E-BANDWIDTH"),
    "gpu_count 64 and 32 kW": (_gpu_count, "E-HARDWARE"),
    "unknown GPU": (lambda d: d["payload"]["hardware"].update(gpu_name="NVIDIA Quantum 9000"), "E-GPU-UNKNOWN"),
    "relabelled params": (lambda d: d["payload"]["workload"].update(params_total=7_615_616_512), "E-PARAMS"),
    "window limit below the power drawn": (_limit_below_drawn, "E-HARDWARE"),
    "identical windows": (_identical, "E-WINDOW-REPEATED"),
    "a run spanning six years": (_six_years, "E-SESSION-SPAN"),
    "overlapping precisions": (_overlap_across_precisions, "E-WINDOW-OVERLAP"),
}  # fmt: skip


@pytest.mark.parametrize("attack", sorted(PHYSICS))
def test_impossible_physics_is_refused(signers: Signers, capsys: pytest.CaptureFixture[str], attack: str) -> None:
    change, code = PHYSICS[attack]
    doc = measured()
    if attack == "32B at 3,000 tokens/s":
        for w in doc["payload"]["measurements"][0]["windows"]:
            w["generate_calls"] *= 40
            w["tokens"] *= 40
    change(doc)
    path = signers.write(doc)
    [result] = signers.check(path)
    assert code in codes(result), result.findings
    assert no_traceback(signers, path, capsys) == 1


def test_the_unknown_gpu_error_says_how_to_add_its_bounds(signers: Signers) -> None:
    doc = measured()
    doc["payload"]["hardware"]["gpu_name"] = "NVIDIA Quantum 9000"
    [result] = signers.check(signers.write(doc))
    [finding] = [f for f in result.findings if f.code == "E-GPU-UNKNOWN"]
    assert "validate/data/gpus.csv" in finding.message and "same pull request" in finding.message
