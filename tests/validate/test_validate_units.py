"""Unit tests of the validator's pieces: codes and docs, raw-byte checks, GPU table, paths, checks, report."""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from factories import make_submission, submission_document
from validate_helpers import NOW, Tree

from ecocompute.schema.models import Precision, Submission
from ecocompute.validate import checks, windows
from ecocompute.validate.core import FileResult, validate_files
from ecocompute.validate.findings import CODES, Finding, Severity, finding, severity_of
from ecocompute.validate.gitdiff import is_submission_candidate
from ecocompute.validate.gpus import bounds_for, gpu_table
from ecocompute.validate.identity import document_keys, submission_keys
from ecocompute.validate.paths import gpu_slug
from ecocompute.validate.raw import check_bytes, json_depth
from ecocompute.validate.report import annotation_lines, clean, markdown_report, md
from ecocompute.validate.signers import signer_problems

DOCS = Path(__file__).parents[2] / "docs" / "validator.md"


def test_docs_document_exactly_the_registered_codes() -> None:
    documented = re.findall(r"^\| ([EW]-[A-Z0-9-]+) \|", DOCS.read_text(), flags=re.MULTILINE)
    assert sorted(documented) == sorted(CODES)
    assert len(documented) == len(set(documented))


def test_codes_have_a_severity_by_prefix() -> None:
    assert all(code.startswith(("E-", "W-")) for code in CODES)
    assert severity_of("W-EXAMPLE") is Severity.WARNING and severity_of("E-CV") is Severity.ERROR
    with pytest.raises(KeyError):
        finding("E-NOT-A-CODE", "", "")


@pytest.mark.parametrize(
    ("data", "depth"),
    [(b"{}", 1), (b'[[{"a": [1]}]]', 4), (b'["[[[[", "\\"[[["]', 1), (b'"\\\\"[[', 2), (b"[" * 50, 33)],
)
def test_json_depth_ignores_brackets_in_strings(data: bytes, depth: int) -> None:
    assert json_depth(data) == depth


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"\xef\xbb\xbf{}", "E-ENCODING"),
        (b'{"a": "\xff"}', "E-ENCODING"),
        (b"{\x00}", "E-BINARY"),
        (b'{"a": 1e400}', "E-NAN"),
        (b'{"a": Infinity}', "E-NAN"),
        (b'{"a": 1, "a": 2}', "E-DUPKEY"),
        (b"1" * 5000, "E-JSON"),
        (b"", "E-JSON"),
        (b"[" * 33 + b"]" * 33, "E-NESTING"),
    ],
)
def test_byte_checks(data: bytes, code: str) -> None:
    document, found = check_bytes(data)
    assert document is None
    assert [f.code for f in found] == [code]


@pytest.mark.parametrize(
    ("name", "slug", "row"),
    [
        ("NVIDIA H200", "nvidia-h200", "nvidia-h200"),
        ("NVIDIA H100 80GB HBM3", "nvidia-h100-80gb-hbm3", "nvidia-h100"),
        ("NVIDIA A100-SXM4-80GB", "nvidia-a100-sxm4-80gb", "nvidia-a100"),
        ("NVIDIA A10G", "nvidia-a10g", "nvidia-a10g"),
        ("NVIDIA A10", "nvidia-a10", "nvidia-a10"),
        ("Tesla T4", "tesla-t4", "tesla-t4"),
        ("NVIDIA GeForce RTX 4090", "nvidia-geforce-rtx-4090", "nvidia-geforce-rtx-4090"),
        ("NVIDIA GeForce RTX 3090 Ti", "nvidia-geforce-rtx-3090-ti", "nvidia-geforce-rtx-3090-ti"),
        ("  ", "unknown-gpu", None),
        ("Imaginary GPU 9000", "imaginary-gpu-9000", None),
    ],
)
def test_gpu_slug_and_table_lookup(name: str, slug: str, row: str | None) -> None:
    assert gpu_slug(name) == slug
    bounds = bounds_for(name)
    assert (bounds.match if bounds else None) == row


def test_gpu_table_rows_are_consistent() -> None:
    rows = gpu_table()
    assert len(rows) >= 12
    assert len({r.match for r in rows}) == len(rows)
    for r in rows:
        assert gpu_slug(r.name) == r.match
        assert 0 < r.power_limit_min_w <= r.power_limit_max_w
        assert 0 < r.memory_mib_min <= r.memory_mib_max
        assert 0 < r.idle_floor_w < r.power_limit_min_w
        assert 0 < r.sm_clock_max_mhz <= 3500


def test_path_login_is_case_insensitive_but_the_rest_is_not() -> None:
    sub = make_submission(1)
    sid = sub.payload.submission_id
    assert checks.check_path(PurePosixPath(f"EXAMPLE-user/nvidia-h200/{sid}.json"), sub) == []
    assert checks.check_path(PurePosixPath(f"example-user/NVIDIA-H200/{sid}.json"), sub)
    assert checks.check_path(PurePosixPath(f"example-user/nvidia-h200/extra/{sid}.json"), sub)


def _sub(**kwargs: Any) -> Submission:
    return Submission.model_validate(submission_document(2, **kwargs))


def test_recorded_failure_without_windows_is_allowed() -> None:
    doc = submission_document(2)
    doc["payload"]["measurements"][0].update(windows=[], warmup=[], error="CUDA out of memory")
    sub = Submission.model_validate(doc)
    m = sub.payload.measurements[0]
    assert checks.check_measurement_state(m, 0) == []
    assert checks.check_baseline(sub.payload.measurements) == []  # a failed fp16 is still the baseline


def test_fingerprint_needs_bitsandbytes_only_when_quantized() -> None:
    doc = submission_document(2, precisions=("fp16",))
    doc["payload"]["software"]["bitsandbytes"] = None
    assert checks.check_fingerprint(Submission.model_validate(doc).payload) == []
    doc = submission_document(2, precisions=("fp16", "nf4"))
    doc["payload"]["software"]["bitsandbytes"] = "unknown"
    [f] = checks.check_fingerprint(Submission.model_validate(doc).payload)
    assert f.path == "payload.software.bitsandbytes"


@pytest.mark.parametrize("names", [("fp16", "q8_0", "q4_k_m"), ("fp16", "fp8-wo"), ("fp16", "int8")])
def test_fingerprint_needs_bitsandbytes_only_for_its_own_precisions(names: tuple[str, ...]) -> None:
    """llama.cpp's and torchao's precisions run without bitsandbytes: its absence is an error only beside int8."""
    doc = submission_document(2, precisions=("fp16",) * len(names))
    doc["payload"]["software"]["bitsandbytes"] = None
    payload = Submission.model_validate(doc).payload
    measurements = [m.model_copy(update={"precision": Precision(n)}) for m, n in zip(payload.measurements, names,
                                                                                    strict=True)]  # fmt: skip
    found = checks.check_fingerprint(payload.model_copy(update={"measurements": measurements}))
    expected = ["payload.software.bitsandbytes"] if "int8" in names else []
    assert [f.path for f in found] == expected


def test_cv_is_recomputed_from_the_windows() -> None:
    sub = _sub(cv=0.03)
    m = sub.payload.measurements[0]
    derived = windows.safe_derive(m.windows, sub.payload.idle.power_w)
    assert not isinstance(derived, str)
    assert [f.code for f in windows.check_cv(derived, 100.0, 0)] == []
    assert [f.code for f in windows.check_cv(derived, derived.cv_pct * 0.99, 0)] == ["E-CV"]


def test_created_at_in_the_future_is_a_finding() -> None:
    sub = _sub()
    assert windows.check_created_at(sub.payload, NOW) == []
    assert [f.code for f in windows.check_created_at(sub.payload, NOW.replace(year=2025))] == ["E-TIME-RANGE"]


def test_window_keys_are_the_measured_content_only() -> None:
    a, b = submission_document(2), submission_document(2)
    p = b["payload"]
    p["submission_id"], p["created_at"], p["notes"], p["contributor"]["github"] = "x", "y", "changed", "someone"
    p["hardware"]["gpu_uuid_sha256"] = "0" * 64
    window = p["measurements"][0]["windows"][0]
    window["started_at"] = window["started_at"].replace("Z", "+00:00")
    window["tokens"] = str(window["tokens"])  # a number format change is still the same window
    assert [k for _w, k in document_keys(a)] == [k for _w, k in document_keys(b)]
    window["energy_j"] += 0.001
    assert [k for _w, k in document_keys(a)] != [k for _w, k in document_keys(b)]
    assert document_keys([]) == [] and document_keys({"payload": 1}) == []


def test_a_validated_submission_has_the_keys_of_its_document() -> None:
    document = submission_document(5, precisions=("fp16", "nf4"))
    document["payload"]["measurements"][0]["windows"][0]["energy_j"] = 812.0  # an integral float
    keys = submission_keys(Submission.model_validate_json(json.dumps(document), strict=True))
    assert len(keys) > 10 and keys == document_keys(document)
    assert keys == document_keys(json.loads(json.dumps(document).replace("812.0", "812")))


def test_a_copy_names_the_file_it_copies_and_the_first_stays(tree: Tree) -> None:
    copy = tree.root / "other-user" / "x.json"
    copy.parent.mkdir()
    copy.write_bytes(tree.file.read_bytes())
    results = validate_files([tree.file, copy], allowed_signers=tree.allowed_signers, submissions_root=tree.root)
    assert not {"E-DUPLICATE-ID", "E-DUPLICATE-PAYLOAD"} & {f.code for f in results[0].findings}
    second = {f.code: f.message for f in results[1].findings}
    assert {"E-DUPLICATE-ID", "E-DUPLICATE-PAYLOAD"} <= set(second)
    assert str(tree.file.relative_to(tree.root.parent)) in second["E-DUPLICATE-PAYLOAD"]


def test_validator_never_writes_into_the_tree(tree: Tree) -> None:
    before = {p: p.stat().st_mtime_ns for p in tree.root.rglob("*")}
    validate_files([tree.file], allowed_signers=tree.allowed_signers, submissions_root=tree.root)
    assert {p: p.stat().st_mtime_ns for p in tree.root.rglob("*")} == before


def test_text_from_a_submission_is_cleaned_for_every_output() -> None:
    nasty = "a\n::error::x|<img src=x>@someone `b` [l](http://x)"
    assert "\n" not in clean(nasty)
    escaped = md(nasty)
    assert "\n" not in escaped and "\\|" in escaped and "\\<img" in escaped and "\\@someone" in escaped
    result = FileResult(Path("sub\nmissions/x.json"), (Finding("E-JSON", "", nasty),), None, None)
    [line] = annotation_lines([result])
    assert line.startswith("::error file=sub?missions/x.json,title=E-JSON::")
    assert line.count("::") == 2 + nasty.count("::")  # the message's "::" cannot start a new command
    assert "\n" not in line
    report = markdown_report([result])
    assert "\\<img" in report and "::error::x\\|" in report


def test_markdown_report_is_capped() -> None:
    results = [
        FileResult(Path(f"f{i}.json"), tuple(Finding("E-JSON", "", "x" * 250) for _ in range(20)), None, None)
        for i in range(100)
    ]
    assert len(markdown_report(results)) < 61_000


def test_submission_candidates() -> None:
    assert not is_submission_candidate("allowed_signers")
    assert not is_submission_candidate("README.md")
    assert not is_submission_candidate("alice/.gitkeep")
    assert is_submission_candidate("alice/allowed_signers")
    assert is_submission_candidate("alice/nvidia-h200/x.json")


KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA9vj8UilgrlPNPlP2f9j2yq78ijNo1Ydvj5JBE81ikV"


def test_signer_problems() -> None:
    old = f"bob {KEY}\n"
    assert signer_problems(old, old + f"alice {KEY}\n", "Alice", KEY + " comment\n") == []
    assert signer_problems(old, old + f"alice {KEY}\n", "alice", "ssh-ed25519 AAAAother\n")
    assert signer_problems(old, "", "alice", KEY)  # a removed line
    assert signer_problems(old, old + f"alice,bob {KEY}\n", "alice", KEY)  # lines for others
    assert signer_problems(old, old + "# a comment\n\n", "alice", "") == []


def test_windows_without_a_derivation_are_e_derive_which_rejects() -> None:
    [f] = windows.check_cv("a window without tokens has no J/token", 2.0, 0)
    assert f.code == "E-DERIVE" and f.is_error


def test_every_precision_has_the_bytes_a_weight_takes() -> None:
    """The bandwidth bound reads every precision's bytes per parameter; one missing would stop the validator."""
    from ecocompute.schema.models import Precision
    from ecocompute.validate.physics import BYTES_PER_PARAM

    assert set(BYTES_PER_PARAM) == set(Precision)
    assert all(0 < b <= 2.0 for b in BYTES_PER_PARAM.values())
