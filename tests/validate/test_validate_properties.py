"""Property tests: whatever the input, the validator returns findings and never raises.

A valid signed submission is mutated at random (a leaf replaced, a key or item deleted, a type swapped,
a number scaled), re-signed or not. Every result is either accepted, and then the document is still a
valid submission with derivable figures, or rejected with registered findings. Random bytes and random
JSON documents likewise.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import rfc8785
from factories import submission_document
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from make_bad import sign
from validate_helpers import NOW

from ecocompute.schema.derive import derive
from ecocompute.schema.errors import SignatureError
from ecocompute.schema.io import EsNumbers, parse_json
from ecocompute.schema.models import Submission
from ecocompute.schema.signing import canonical_bytes, parse_allowed_signers
from ecocompute.validate.core import Options, check_bytes_and_document, check_document, validate_files
from ecocompute.validate.findings import CODES, Finding

RELPATH = PurePosixPath("example-user/nvidia-h200/x.json")
json_leaf = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=20)
json_values = st.recursive(
    json_leaf,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
PROFILE = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def signed(keys: Any) -> tuple[dict[str, Any], Options, Path]:
    document = sign(submission_document(3, precisions=("fp16", "nf4", "int8")), keys.ed25519)
    return document, Options(parse_allowed_signers(keys.allowed_signers), now=NOW), keys.ed25519


def paths_of(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += paths_of(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += paths_of(value, (*prefix, i))
    return found


def swap_type(value: Any) -> Any:
    swaps: dict[type, Any] = {
        bool: 1,
        int: str(value),
        float: str(value),
        str: [value],
        list: {},
        dict: [],
        type(None): 0,
    }
    return swaps.get(type(value))


def mutate(document: dict[str, Any], path: tuple[Any, ...], kind: str, value: Any) -> dict[str, Any]:
    doc = copy.deepcopy(document)
    if not path:
        return doc
    parent: Any = doc
    for part in path[:-1]:
        parent = parent[part]
    last, old = path[-1], parent[path[-1]]
    if kind == "delete":
        del parent[last]
    elif kind == "swap":
        parent[last] = swap_type(old)
    elif kind == "scale" and isinstance(old, (int, float)) and not isinstance(old, bool):
        parent[last] = type(old)(old * 3) if isinstance(old, int) else old * 1.5
    else:
        parent[last] = value
    return doc


def try_sign(doc: dict[str, Any], key: Path) -> dict[str, Any] | None:
    try:
        return sign(doc, key, "example-user")
    except SignatureError:  # RFC 8785 refuses some numbers: such a document goes in unsigned-as-is
        return None


def assert_sound(findings: list[Finding]) -> None:
    assert all(f.code in CODES for f in findings), findings
    assert not any(f.code == "E-INTERNAL" for f in findings), findings


def assert_accepted_is_valid(document: dict[str, Any]) -> None:
    submission = Submission.model_validate(document)
    for m in submission.payload.measurements:
        if m.windows:
            derived = derive(m.windows, submission.payload.idle.power_w)
            assert math.isfinite(derived.j_per_token_mean)
            assert derived.cv_pct <= 2.0


@PROFILE
@given(
    st.data(),
    st.sampled_from(["replace", "delete", "swap", "scale"]),
    json_values,
    st.booleans(),
)
def test_mutated_submission_is_accepted_and_valid_or_rejected(
    signed: tuple[dict[str, Any], Options, Path], data: st.DataObject, kind: str, value: Any, resign: bool
) -> None:
    original, options, key = signed
    paths = paths_of(original)
    path = paths[data.draw(st.integers(0, len(paths) - 1))]
    doc = mutate(original, path, kind, value)
    if resign and isinstance(doc.get("payload"), dict):
        resigned = try_sign(doc, key)
        resign, doc = resigned is not None, resigned or doc
    _, submission, findings = check_bytes_and_document(json.dumps(doc).encode(), RELPATH, options)
    assert_sound(findings)
    errors = [f for f in findings if f.is_error]
    if not errors:
        assert submission is not None
        assert_accepted_is_valid(doc)
    unchanged = False
    try:
        unchanged = canonical_bytes(doc) == canonical_bytes(original)
    except Exception:
        unchanged = False
    if not resign and not unchanged and "signature" in doc:
        assert errors, f"a change at {path} went unnoticed"


@PROFILE
@given(st.binary(max_size=4096))
def test_random_bytes_never_raise(signed: tuple[dict[str, Any], Options, Path], data: bytes) -> None:
    _, submission, findings = check_bytes_and_document(data, RELPATH, signed[1])
    assert_sound(findings)
    assert submission is None and any(f.is_error for f in findings)


@PROFILE
@given(json_values)
def test_random_json_never_raises(signed: tuple[dict[str, Any], Options, Path], value: Any) -> None:
    submission, findings = check_document(value, RELPATH, signed[1])
    assert_sound(findings)
    assert submission is None and findings


@PROFILE
@given(st.integers(1, 2000), st.sampled_from([b"[", b"{", b'{"a":', b'[{"a":[']))
def test_deep_nesting_is_a_finding(signed: tuple[dict[str, Any], Options, Path], depth: int, opener: bytes) -> None:
    _, _, findings = check_bytes_and_document(opener * depth, RELPATH, signed[1])
    assert_sound(findings)
    assert findings
    if depth > 32:
        assert findings[0].code == "E-NESTING"


def test_very_deep_and_huge_inputs(signed: tuple[dict[str, Any], Options, Path]) -> None:
    options = signed[1]
    for data in (b"[" * 1_000_000, b'"' + b"\\" * 2_000_000, b"1" * 100_000, b"[1e999]", b'{"a": -Infinity}'):
        _, _, findings = check_bytes_and_document(data, RELPATH, options)
        assert_sound(findings)
        assert findings and findings[0].is_error


def test_files_of_random_bytes_in_a_tree(tmp_path: Path, keys: Any) -> None:
    import random

    rng = random.Random(4)
    root = tmp_path / "submissions"
    files = []
    for i in range(40):
        path = root / "someone" / "gpu" / f"{i}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(bytes(rng.randrange(256) for _ in range(rng.randrange(0, 3000))))
        files.append(path)
    results = validate_files(files, allowed_signers=keys.allowed_signers, submissions_root=root, now=NOW)
    assert len(results) == 40
    assert all(not r.accepted for r in results)
    for r in results:
        assert_sound(list(r.findings))


es_special = st.sampled_from([0.0, -0.0, 5e-05, 1e16, 2.0**53, 1e21, 100.0])
es_floats = st.floats(allow_nan=False, allow_infinity=False) | es_special
es_leaf = st.none() | st.booleans() | st.integers(-(2**60), 2**60) | es_floats | st.text(max_size=8)
es_values = st.recursive(
    es_leaf,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=16,
)


@PROFILE
@given(st.dictionaries(st.text(max_size=6), es_values, max_size=5), st.booleans())
def test_canonical_bytes_are_rfc8785s_however_the_document_was_parsed(document: dict[str, Any], indent: bool) -> None:
    """The fast canonical paths (plain parse, es_numbers parse) give the bytes of the reference implementation."""
    text = json.dumps(document, indent=2 if indent else None, ensure_ascii=indent)
    plain, ready = parse_json(text.encode()), parse_json(text.encode(), es_numbers=True)
    assert ready == plain
    unsigned = {k: v for k, v in plain.items() if k != "signature"}
    try:
        expected = rfc8785.dumps(unsigned)
    except (rfc8785.CanonicalizationError, ValueError):
        with pytest.raises(SignatureError):
            canonical_bytes(ready)
        return
    assert canonical_bytes(plain) == expected
    assert canonical_bytes(ready) == expected
    assert type(ready) is EsNumbers or type(plain) is not dict or not _all_plain_numbers(plain)


def _all_plain_numbers(node: Any) -> bool:
    """Every number is one Python writes as ECMAScript does: the es_numbers parse must then mark the document."""
    if isinstance(node, dict):
        return all(_all_plain_numbers(v) for v in node.values())
    if isinstance(node, list):
        return all(_all_plain_numbers(v) for v in node)
    if isinstance(node, float):
        if node == 0:
            return math.copysign(1.0, node) > 0  # -0.0 is kept a float, so not marked
        return 1e-4 <= abs(node) < (2**53 if node.is_integer() else 1e16)
    return not isinstance(node, int) or isinstance(node, bool) or abs(node) <= 2**53 - 1


def test_es_numbers_keep_every_value_and_its_sign() -> None:
    ready = parse_json(b'{"a": -0.0, "b": 0.0, "c": 100.0, "d": 1.5, "e": 5e-05}', es_numbers=True)
    assert type(ready) is not EsNumbers  # -0.0 and 5e-05 take the slower path
    assert math.copysign(1.0, ready["a"]) < 0 and ready["b"] == 0 and type(ready["c"]) is int
    assert canonical_bytes(ready) == b'{"a":0,"b":0,"c":100,"d":1.5,"e":0.00005}'
    assert type(parse_json(b'{"c": 100.0, "d": 1.5}', es_numbers=True)) is EsNumbers
