"""Signatures: RFC 8785 canonical bytes of the document without ``signature``, signed with SSH keys.

Signing calls ``ssh-keygen -Y sign`` with the contributor's own key; verifying happens in
Python (``sshsig``) against an OpenSSH allowed_signers file whose principals are GitHub logins.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import rfc8785
import sshsig
from sshsig.allowed_signers import AllowedSigner
from sshsig.sshsig import SshsigSignature

from ecocompute.schema.errors import SignatureError, UsageError
from ecocompute.schema.models import NAMESPACE, Signature, Submission


def canonical_bytes(document: dict[str, Any]) -> bytes:
    """RFC 8785 canonical bytes of ``document`` without its ``signature`` member."""
    unsigned = {key: value for key, value in document.items() if key != "signature"}
    try:
        return rfc8785.dumps(unsigned)
    except (rfc8785.CanonicalizationError, ValueError, TypeError) as exc:
        raise SignatureError(f"document cannot be canonicalized (RFC 8785): {exc}") from None


@dataclass(frozen=True)
class SignedBy:
    """Who a verified signature belongs to."""

    signer: str
    key_fingerprint: str


def parse_allowed_signers(path: str | os.PathLike[str]) -> dict[str, list[sshsig.PublicKey]]:
    """Map each principal (a GitHub login) of an OpenSSH allowed_signers file to its keys."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UsageError(f"cannot read allowed signers file {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"allowed signers file {path} is not UTF-8 text") from None
    keys: dict[str, list[sshsig.PublicKey]] = {}
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            entry = AllowedSigner.parse(line)
            key = sshsig.PublicKey.from_openssh_str(f"{entry.key_type} {entry.base64_key}")
        except (ValueError, NotImplementedError, IndexError) as exc:
            raise UsageError(f"{path}:{number}: not an allowed_signers line ({exc})") from None
        for principal in entry.principals.split(","):
            keys.setdefault(principal.strip().lower(), []).append(key)
    return keys


def _parse_armored(armored: str) -> SshsigSignature:
    try:
        return SshsigSignature.from_armored(armored)
    except (ValueError, NotImplementedError, IndexError, EOFError) as exc:
        raise SignatureError(f"signature is not a readable SSH signature (truncated or damaged?): {exc}") from None
    except Exception as exc:  # sshsig's reader raises bare errors on short input
        raise SignatureError(f"signature is not a readable SSH signature (truncated or damaged?): {exc}") from None


def verify_document(
    document: dict[str, Any], allowed: dict[str, list[sshsig.PublicKey]], namespace: str = NAMESPACE
) -> SignedBy:
    """Check a parsed submission's signature; return its signer or raise SignatureError saying why."""
    sig = document.get("signature")
    if not isinstance(sig, dict):
        raise SignatureError("submission is not signed: run `ecocompute sign FILE --key PATH --signer LOGIN`")
    signature = Signature.model_validate(sig)
    if signature.namespace != namespace:
        raise SignatureError(f"signature namespace is {signature.namespace!r}, expected {namespace!r}")
    parsed = _parse_armored(signature.armored)
    signed_ns = parsed.namespace.decode("utf-8", "replace")
    if signed_ns != namespace:
        raise SignatureError(f"signature was made for namespace {signed_ns!r}, expected {namespace!r}")
    keys = allowed.get(signature.signer.lower())
    if not keys:
        raise SignatureError(
            f"signer {signature.signer!r} is not in the allowed signers file: add their key line to it"
        )
    try:
        key = sshsig.verify(canonical_bytes(document), signature.armored, keys, namespace=namespace)
    except sshsig.InvalidSignature as exc:
        raise SignatureError(f"signature does not match the content or the signer's keys: {exc}") from None
    except (ValueError, NotImplementedError) as exc:
        raise SignatureError(f"signature cannot be checked: {exc}") from None
    fingerprint = key.sha256_str()
    if fingerprint != signature.key_fingerprint:
        raise SignatureError(
            f"signature.key_fingerprint says {signature.key_fingerprint}, but the signing key is {fingerprint}"
        )
    return SignedBy(signer=signature.signer, key_fingerprint=fingerprint)


def _ssh_keygen() -> str:
    exe = shutil.which("ssh-keygen")
    if exe is None:
        raise UsageError("ssh-keygen is not installed: install OpenSSH (apt-get install openssh-client)")
    return exe


def sign_bytes(message: bytes, key_path: str | os.PathLike[str], namespace: str = NAMESPACE) -> str:
    """Sign ``message`` with the SSH private key at ``key_path`` through ``ssh-keygen -Y sign``."""
    key = Path(key_path)
    if not key.is_file():
        raise UsageError(f"SSH key {key} does not exist: pass the private key, e.g. --key ~/.ssh/id_ed25519")
    proc = subprocess.run(  # noqa: S603 - fixed program, arguments are paths and a constant namespace
        [_ssh_keygen(), "-Y", "sign", "-q", "-f", str(key), "-n", namespace],
        input=message,
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SignatureError(f"ssh-keygen could not sign with {key}: {detail[-1] if detail else 'no reason given'}")
    return proc.stdout.decode("ascii")


def sign_submission(submission: Submission, key_path: str | os.PathLike[str], signer: str) -> Submission:
    """Return ``submission`` signed by ``signer`` with the key at ``key_path``."""
    if signer.lower() != submission.payload.contributor.github.lower():
        raise UsageError(
            f"signer {signer!r} is not the contributor {submission.payload.contributor.github!r}: "
            "sign with the contributor's own login"
        )
    document = submission.unsigned().model_dump(mode="json")
    document.pop("signature", None)
    armored = sign_bytes(canonical_bytes(document), key_path)
    fingerprint = sshsig.PublicKey.from_ssh_encoding(_parse_armored(armored).public_key).sha256_str()
    signature = Signature(
        format="sshsig", namespace=NAMESPACE, signer=signer, key_fingerprint=fingerprint, armored=armored
    )
    return submission.model_copy(update={"signature": signature})
