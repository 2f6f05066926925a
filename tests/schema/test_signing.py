"""Signatures: canonical bytes, ssh-keygen signing, Python verification, and every way to fail."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from factories import Keys, allowed_signers_line, make_key, make_submission

from ecocompute.schema.errors import SignatureError, UsageError
from ecocompute.schema.io import load_document, write_submission
from ecocompute.schema.models import NAMESPACE
from ecocompute.schema.signing import canonical_bytes, parse_allowed_signers, sign_bytes, verify_document


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(node, dict):
        return [leaf for key, value in node.items() for leaf in _leaves(value, (*path, key))]
    if isinstance(node, list):
        return [leaf for i, value in enumerate(node) for leaf in _leaves(value, (*path, i))]
    return [path]


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def _put(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    _get(doc, path[:-1])[path[-1]] = value


def _changed(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if value is None:
        return "x"
    return str(value) + "x"


@pytest.mark.parametrize("rsa", [False, True], ids=["ed25519", "rsa"])
def test_signed_submission_verifies_in_python_and_with_ssh_keygen(tmp_path: Path, keys: Keys, rsa: bool) -> None:
    signed = keys.sign(make_submission(3), rsa=rsa)
    path = tmp_path / "s.json"
    write_submission(signed, path)
    document = load_document(path)
    who = verify_document(document, parse_allowed_signers(keys.allowed_signers))
    assert who.signer == "example-user"
    assert signed.signature is not None
    assert who.key_fingerprint == signed.signature.key_fingerprint
    (tmp_path / "sig").write_text(document["signature"]["armored"])
    proc = subprocess.run(
        ["ssh-keygen", "-Y", "verify", "-f", str(keys.allowed_signers), "-I", "example-user", "-n", NAMESPACE,
         "-s", str(tmp_path / "sig")],
        input=canonical_bytes(document), capture_output=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr


def test_every_leaf_change_breaks_the_signature(tmp_path: Path, keys: Keys) -> None:
    signed = keys.sign(make_submission(4, n_windows=2, precisions=("fp16",)))
    path = tmp_path / "s.json"
    write_submission(signed, path)
    original = load_document(path)
    allowed = parse_allowed_signers(keys.allowed_signers)
    unsigned = {k: v for k, v in original.items() if k != "signature"}
    leaves = _leaves(unsigned)
    assert len(leaves) > 100
    for leaf in leaves:
        doc = json.loads(json.dumps(original))
        _put(doc, leaf, _changed(_get(doc, leaf)))
        with pytest.raises(SignatureError, match="does not match"):
            verify_document(doc, allowed)


def test_schema_version_is_covered(keys: Keys) -> None:
    doc = json.loads(json.dumps(keys.sign(make_submission(5)).model_dump(mode="json")))
    doc["schema_version"] = "1.1"
    with pytest.raises(SignatureError, match="does not match"):
        verify_document(doc, parse_allowed_signers(keys.allowed_signers))


def _signed_doc(keys: Keys) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(json.dumps(keys.sign(make_submission(6)).model_dump(mode="json")))
    return doc


def test_wrong_namespace_has_its_own_message(keys: Keys) -> None:
    doc = _signed_doc(keys)
    doc["signature"]["armored"] = sign_bytes(canonical_bytes(doc), keys.ed25519, namespace="git")
    with pytest.raises(SignatureError, match="namespace 'git'"):
        verify_document(doc, parse_allowed_signers(keys.allowed_signers))


def test_unknown_signer_has_its_own_message(tmp_path: Path, keys: Keys) -> None:
    other = make_key(tmp_path, "other")
    signers = tmp_path / "allowed_signers"
    signers.write_text(allowed_signers_line("someone-else", other))
    with pytest.raises(SignatureError, match="not in the allowed signers"):
        verify_document(_signed_doc(keys), parse_allowed_signers(signers))


def test_key_not_registered_for_signer_fails(tmp_path: Path, keys: Keys) -> None:
    other = make_key(tmp_path, "other")
    signers = tmp_path / "allowed_signers"
    signers.write_text(allowed_signers_line("example-user", other))
    with pytest.raises(SignatureError, match="does not match"):
        verify_document(_signed_doc(keys), parse_allowed_signers(signers))


def test_truncated_signature_has_its_own_message(keys: Keys) -> None:
    doc = _signed_doc(keys)
    armored = doc["signature"]["armored"].splitlines()
    doc["signature"]["armored"] = "\n".join(armored[:3] + armored[-1:]) + "\n"
    with pytest.raises(SignatureError, match="not a readable SSH signature"):
        verify_document(doc, parse_allowed_signers(keys.allowed_signers))


def test_unsigned_document_says_how_to_sign(keys: Keys) -> None:
    doc = _signed_doc(keys)
    del doc["signature"]
    with pytest.raises(SignatureError, match="ecocompute sign"):
        verify_document(doc, parse_allowed_signers(keys.allowed_signers))


def test_signing_as_someone_else_is_refused(keys: Keys) -> None:
    with pytest.raises(UsageError, match="not the contributor"):
        make_submission(7).model_copy()
        from ecocompute.schema.signing import sign_submission

        sign_submission(make_submission(7), keys.ed25519, "mallory")


def test_bad_allowed_signers_line_names_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "allowed_signers"
    bad.write_text("# comment\nalice not-a-key\n")
    [problem] = parse_allowed_signers(bad).problems  # one finding for the line, never a broken file
    assert problem.number == 2


def test_missing_key_file_says_what_to_pass(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="--key"):
        sign_bytes(b"x", tmp_path / "missing")


def test_tampered_file_on_disk_fails(signed_file: Path, keys: Keys) -> None:
    text = signed_file.read_text()
    signed_file.write_text(text.replace('"batch_size": 1', '"batch_size": 2'))
    with pytest.raises(SignatureError):
        verify_document(load_document(signed_file), parse_allowed_signers(keys.allowed_signers))


def test_untouched_file_on_disk_verifies(signed_file: Path, keys: Keys) -> None:
    """The control of the tampering test above: the same file, as written, verifies as its signer."""
    signed_by = verify_document(load_document(signed_file), parse_allowed_signers(keys.allowed_signers))
    assert signed_by.signer == keys.login
