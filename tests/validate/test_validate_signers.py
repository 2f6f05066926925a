"""allowed_signers as OpenSSH reads it: every key type GitHub publishes, options honoured, one finding per bad line.

Keys are made here with ssh-keygen (ed25519, RSA, ECDSA P-256/384/521); FIDO keys (sk-) need hardware, so
:class:`FakeAuthenticator` builds them in software. Where ``ssh-keygen -Y verify`` can judge the same line, the
verdicts are compared.
"""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from factories import make_submission
from fake_authenticator import FakeAuthenticator

from ecocompute.cli import main
from ecocompute.schema.io import write_submission
from ecocompute.schema.models import NAMESPACE, Signature, Submission
from ecocompute.schema.paths import submission_relpath
from ecocompute.schema.signing import (
    armor,
    canonical_bytes,
    parse_signers_line,
    parse_signers_text,
    sign_submission,
    signature_fingerprint,
    ssh_string,
)
from ecocompute.validate.core import signer_line_problems, validate_files
from ecocompute.validate.signers import signer_problems

LOGIN = "key-user"
NOW = datetime(2026, 12, 1, tzinfo=UTC)


def ssh_key(folder: Path, key_type: str, bits: int | None = None) -> Path:
    """A passphrase-less key made by ssh-keygen."""
    path = folder / f"id_{key_type}_{bits or ''}"
    args = ["ssh-keygen", "-q", "-t", key_type, "-N", "", "-C", "test", "-f", str(path)]
    if bits:
        args[4:4] = ["-b", str(bits)]
    subprocess.run(args, check=True)
    return path


def public_line(key: Path) -> str:
    kind, b64 = key.with_name(key.name + ".pub").read_text().split()[:2]
    return f"{kind} {b64}"


def fake_signed(auth: FakeAuthenticator, sub: Submission) -> Submission:
    document = sub.unsigned().model_dump(mode="json")
    document.pop("signature", None)
    armored = auth.sign(canonical_bytes(document), NAMESPACE)
    signature = Signature(
        format="sshsig", namespace=NAMESPACE, signer=LOGIN, key_fingerprint=signature_fingerprint(armored),
        armored=armored,
    )  # fmt: skip
    return sub.model_copy(update={"signature": signature})


def write_tree(tmp_path: Path, signed: Submission, signers_text: str) -> tuple[Path, Path, Path]:
    root = tmp_path / "submissions"
    path = root / submission_relpath(signed)
    write_submission(signed, path)
    signers = root / "allowed_signers"
    signers.write_text(signers_text)
    return root, path, signers


def signature_codes(root: Path, path: Path, signers: Path) -> set[str]:
    [result] = validate_files([path], allowed_signers=signers, submissions_root=root, now=NOW)
    return {f.code for f in result.findings if f.code.startswith(("E-SIGN", "E-UNSIGNED"))}


Signer = Callable[[Path, Submission], tuple[Submission, str]]


def _ssh(key_type: str, bits: int | None = None) -> Signer:
    def make(folder: Path, sub: Submission) -> tuple[Submission, str]:
        key = ssh_key(folder, key_type, bits)
        return sign_submission(sub, key, LOGIN), public_line(key)

    return make


def _fido(kind: str) -> Signer:
    def make(_folder: Path, sub: Submission) -> tuple[Submission, str]:
        auth = FakeAuthenticator(kind)
        return fake_signed(auth, sub), auth.public_line

    return make


KEY_TYPES: dict[str, Signer] = {
    "ed25519": _ssh("ed25519"),
    "rsa": _ssh("rsa", 3072),
    "ecdsa-256": _ssh("ecdsa", 256),
    "ecdsa-384": _ssh("ecdsa", 384),
    "ecdsa-521": _ssh("ecdsa", 521),
    "sk-ed25519 (fake authenticator)": _fido("ed25519"),
    "sk-ecdsa (fake authenticator)": _fido("ecdsa"),
}


def _submission() -> Submission:
    return make_submission(3, login=LOGIN, precisions=("fp16",))


@pytest.mark.parametrize("kind", sorted(KEY_TYPES))
def test_every_key_type_github_publishes_verifies_and_a_changed_file_does_not(tmp_path: Path, kind: str) -> None:
    signed, line = KEY_TYPES[kind](tmp_path, _submission())
    root, path, signers = write_tree(tmp_path, signed, f"{LOGIN} {line}\n")
    assert signature_codes(root, path, signers) == set()
    document = json.loads(path.read_text())
    document["payload"]["measurements"][0]["windows"][0]["energy_j"] += 1.0
    path.write_text(json.dumps(document))
    assert signature_codes(root, path, signers) == {"E-SIGNATURE"}


def test_a_fido_signature_from_another_authenticator_fails(tmp_path: Path) -> None:
    signed = fake_signed(FakeAuthenticator("ed25519"), _submission())
    root, path, signers = write_tree(tmp_path, signed, f"{LOGIN} {FakeAuthenticator('ed25519').public_line}\n")
    assert signature_codes(root, path, signers) == {"E-SIGNATURE"}


def sshsig_with_rsa(key_path: Path, message: bytes, algorithm: str) -> str:
    """Test helper: an armored SSHSIG signature of ``message`` made with an ssh-keygen RSA key, in ``algorithm``.

    ``ssh-keygen -Y sign`` writes only rsa-sha2-512, so the blob (PROTOCOL.sshsig) is assembled here with the
    ``cryptography`` library: "ssh-rsa" signs with PKCS#1 v1.5 and SHA-1, "rsa-sha2-256"/"rsa-sha2-512" with SHA-2.
    """
    private = serialization.load_ssh_private_key(key_path.read_bytes(), password=None)
    assert isinstance(private, rsa.RSAPrivateKey)
    public = private.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    key_blob = base64.b64decode(public.split()[1])
    digest = hashlib.sha512(message).digest()
    signed = b"SSHSIG" + ssh_string(NAMESPACE.encode()) + ssh_string(b"") + ssh_string(b"sha512") + ssh_string(digest)
    sha1 = hashes.SHA1()  # noqa: S303 - the weak signature the validator must refuse
    hash_of = {"ssh-rsa": sha1, "rsa-sha2-256": hashes.SHA256(), "rsa-sha2-512": hashes.SHA512()}
    raw = private.sign(signed, padding.PKCS1v15(), hash_of[algorithm])
    inner = ssh_string(algorithm.encode()) + ssh_string(raw)
    blob = (b"SSHSIG" + (1).to_bytes(4, "big") + ssh_string(key_blob) + ssh_string(NAMESPACE.encode())
            + ssh_string(b"") + ssh_string(b"sha512") + ssh_string(inner))  # fmt: skip
    return armor(blob)


@pytest.mark.parametrize(("algorithm", "codes"), [("ssh-rsa", {"E-SIGNATURE-SHA1"}), ("rsa-sha2-256", set())])
def test_an_rsa_signature_made_with_sha1_is_refused_as_openssh_refuses_it(
    tmp_path: Path, algorithm: str, codes: set[str]
) -> None:
    key = ssh_key(tmp_path, "rsa", 2048)
    sub = _submission()
    document = sub.unsigned().model_dump(mode="json")
    document.pop("signature", None)
    armored = sshsig_with_rsa(key, canonical_bytes(document), algorithm)
    signature = Signature(format="sshsig", namespace=NAMESPACE, signer=LOGIN,
                          key_fingerprint=signature_fingerprint(armored), armored=armored)  # fmt: skip
    root, path, signers = write_tree(tmp_path, sub.model_copy(update={"signature": signature}),
                                     f"{LOGIN} {public_line(key)}\n")  # fmt: skip
    assert signature_codes(root, path, signers) == codes
    [result] = validate_files([path], allowed_signers=signers, submissions_root=root, now=NOW)
    assert result.accepted is not codes
    if codes:
        assert "SHA-1" in next(f.message for f in result.findings if f.code == "E-SIGNATURE-SHA1")
        sig_file = tmp_path / "sig"
        sig_file.write_text(armored)
        proc = subprocess.run(
            ["ssh-keygen", "-Y", "verify", "-f", str(signers), "-I", LOGIN, "-n", NAMESPACE, "-s", str(sig_file)],
            input=canonical_bytes(document), capture_output=True, check=False,
        )  # fmt: skip
        assert proc.returncode != 0  # OpenSSH refuses it too


@pytest.fixture
def ed25519_tree(tmp_path: Path) -> tuple[Path, Path, Path, str]:
    key = ssh_key(tmp_path, "ed25519")
    root, path, signers = write_tree(tmp_path, sign_submission(_submission(), key, LOGIN), "")
    return root, path, signers, public_line(key)


OPTION_CASES = {
    "no options": ("", set()),
    "our namespace": (f'namespaces="{NAMESPACE}"', set()),
    "a matching pattern": ('namespaces="git,ecocompute-*"', set()),
    "another namespace": ('namespaces="git"', {"E-SIGNER-UNKNOWN"}),
    "a negated pattern": ('namespaces="!ecocompute-*,*"', {"E-SIGNER-UNKNOWN"}),
    "expired": ('valid-before="20261101"', {"E-SIGNER-UNKNOWN"}),
    "not yet valid": ("valid-after=20270101Z", {"E-SIGNER-UNKNOWN"}),
    "within its window": ('valid-after="20260101",valid-before="20270101"', set()),
    "cert-authority": ("cert-authority", {"E-SIGNER-UNKNOWN"}),
    "an unknown option": ("no-touch-required", {"E-SIGNER-UNKNOWN"}),
}


@pytest.mark.parametrize("case", sorted(OPTION_CASES))
def test_options_are_honoured(ed25519_tree: tuple[Path, Path, Path, str], case: str) -> None:
    root, path, signers, line = ed25519_tree
    options, expected = OPTION_CASES[case]
    signers.write_text(f"{LOGIN} {options} {line}\n" if options else f"{LOGIN} {line}\n")
    assert signature_codes(root, path, signers) == expected


@pytest.mark.parametrize("case", ["our namespace", "another namespace", "expired", "not yet valid", "cert-authority"])
def test_the_verdict_is_the_one_of_ssh_keygen_verify(ed25519_tree: tuple[Path, Path, Path, str], case: str) -> None:
    root, path, signers, line = ed25519_tree
    options, expected = OPTION_CASES[case]
    signers.write_text(f"{LOGIN} {options} {line}\n")
    document = json.loads(path.read_text())
    sig = path.with_suffix(".sig")
    sig.write_text(document["signature"]["armored"])
    proc = subprocess.run(
        ["ssh-keygen", "-Y", "verify", "-f", str(signers), "-I", LOGIN, "-n", NAMESPACE, "-s", str(sig),
         "-Overify-time=20261201"],
        input=canonical_bytes(document), capture_output=True, check=False,
    )  # fmt: skip
    ours = validate_files([path], allowed_signers=signers, submissions_root=root, now=NOW)[0]
    ours_ok = not any(f.code.startswith("E-SIGN") for f in ours.findings)
    assert ours_ok == (proc.returncode == 0) == (not expected)


def test_a_line_the_verifier_cannot_use_is_one_finding_and_the_others_still_count(
    ed25519_tree: tuple[Path, Path, Path, str],
) -> None:
    root, path, signers, line = ed25519_tree
    signers.write_text(f"# comment\nmallory not-a-key\n{LOGIN} {line}\n*,someone ssh-ed25519 AAAA\n")
    problems = signer_line_problems(signers)
    assert [(f.code, f.path) for f in problems] == [("W-SIGNERS-LINE", "line 2"), ("W-SIGNERS-LINE", "line 4")]
    assert signature_codes(root, path, signers) == set()


def test_a_signature_that_needs_an_unusable_line_names_it(ed25519_tree: tuple[Path, Path, Path, str]) -> None:
    root, path, signers, line = ed25519_tree
    signers.write_text(f"{LOGIN} cert-authority {line}\n")
    [result] = validate_files([path], allowed_signers=signers, submissions_root=root, now=NOW)
    [unknown] = [f for f in result.findings if f.code == "E-SIGNER-UNKNOWN"]
    assert "line 1" in unknown.message and "cert-authority" in unknown.message


def test_allowed_signers_must_be_a_regular_file(
    ed25519_tree: tuple[Path, Path, Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root, path, signers, line = ed25519_tree
    outside = tmp_path / "elsewhere"
    outside.write_text(f"{LOGIN} {line}\n")
    signers.unlink()
    signers.symlink_to(outside)
    assert main(["validate", str(path), "--root", str(root), "--allowed-signers", str(signers)]) == 2
    captured = capsys.readouterr()
    assert "symbolic link" in captured.err and "Traceback" not in captured.err


def _published(*lines: str) -> str:
    return "".join(f"{line}\n" for line in lines)


def test_validate_signers_reads_lines_as_the_verifier_does(tmp_path: Path) -> None:
    published = public_line(ssh_key(tmp_path, "ed25519"))
    other = public_line(ssh_key(tmp_path, "ecdsa", 256))
    fido = FakeAuthenticator("ecdsa").public_line
    keys = _published(published, fido)
    assert signer_problems("", f"{LOGIN} {published}\n", LOGIN, keys) == []
    assert signer_problems("", f"{LOGIN} {fido} my key\n", LOGIN, keys) == []
    smuggled = f'{LOGIN} namespaces="{published}" {other}\n'  # a published key inside a quoted option
    [problem] = signer_problems("", smuggled, LOGIN, keys)
    assert "does not publish" in problem
    [problem] = signer_problems("", f"*,{LOGIN} {published}\n", LOGIN, keys)
    assert "not a GitHub login" in problem
    [problem] = signer_problems("", f"{LOGIN} cert-authority {published}\n", LOGIN, keys)
    assert "cert-authority" in problem
    [problem] = signer_problems(f"someone {other}\n", f"{LOGIN} {published}\n", LOGIN, keys)
    assert "removed" in problem
    assert parse_signers_line(f'{LOGIN} namespaces="a b" {published}') is not None
    assert parse_signers_text(f"{LOGIN} {published}\n").lines[0].key.key_type == "ssh-ed25519"


def test_validate_signers_refuses_a_symlinked_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    repo = tmp_path / "repo"
    (repo / "submissions").mkdir(parents=True)
    for args in (["init", "-q"], ["config", "user.email", "t@e"], ["config", "user.name", "t"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    (repo / "submissions" / "allowed_signers").write_text("# none\n")
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "base"], cwd=repo, check=True)
    subprocess.run(["git", "branch", "-f", "main"], cwd=repo, check=True)
    outside = tmp_path / "outside"
    outside.write_text("")
    (repo / "submissions" / "allowed_signers").unlink()
    (repo / "submissions" / "allowed_signers").symlink_to(outside)
    keys = tmp_path / "keys"
    keys.write_text("")
    monkeypatch.chdir(repo)
    code = main(["validate-signers", "--changed-since", "main", "--pr-author", LOGIN, "--published-keys", str(keys)])
    assert code == 1
    assert "symbolic link" in capsys.readouterr().out
