"""Signatures: RFC 8785 canonical bytes of the document without ``signature``, signed with SSH keys.

Signing calls ``ssh-keygen -Y sign`` with the contributor's own key. Verifying happens here, in Python, with
the ``cryptography`` library, against an OpenSSH ``allowed_signers`` file read the way ``ssh-keygen -Y verify``
reads it (``sshsig.c``): ``principals [options] keytype base64 [comment]``, the options ``namespaces="..."``,
``valid-after=...`` and ``valid-before=...`` honoured, ``cert-authority`` refused with its reason (a
submission is signed with a plain key). Every key type GitHub publishes verifies: ``ssh-ed25519``,
``ssh-rsa`` (``rsa-sha2-256``/``-512`` signatures), ``ecdsa-sha2-nistp256/384/521``,
``sk-ssh-ed25519@openssh.com`` and ``sk-ecdsa-sha2-nistp256@openssh.com`` (FIDO keys). A line that cannot be
used is recorded with its reason (:attr:`AllowedSigners.problems`); the others still count.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path
from typing import Any

import rfc8785
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from ecocompute.schema.errors import SignatureError, UsageError
from ecocompute.schema.io import EsNumbers
from ecocompute.schema.models import GITHUB_LOGIN_PATTERN, NAMESPACE, Signature, Submission

MAX_SIGNERS_BYTES = 1024 * 1024
ED25519 = "ssh-ed25519"
RSA = "ssh-rsa"
SK_ED25519 = "sk-ssh-ed25519@openssh.com"
SK_ECDSA = "sk-ecdsa-sha2-nistp256@openssh.com"
ECDSA_CURVES: dict[str, tuple[ec.EllipticCurve, hashes.HashAlgorithm]] = {
    "nistp256": (ec.SECP256R1(), hashes.SHA256()),
    "nistp384": (ec.SECP384R1(), hashes.SHA384()),
    "nistp521": (ec.SECP521R1(), hashes.SHA512()),
}
KEY_TYPES = frozenset({ED25519, RSA, SK_ED25519, SK_ECDSA, *(f"ecdsa-sha2-{c}" for c in ECDSA_CURVES)})
RSA_SIGNATURE_HASHES: dict[str, hashes.HashAlgorithm] = {
    "rsa-sha2-256": hashes.SHA256(),
    "rsa-sha2-512": hashes.SHA512(),
}
SSHSIG_HASHES = {"sha256": hashlib.sha256, "sha512": hashlib.sha512}
_LOGIN = re.compile(GITHUB_LOGIN_PATTERN)


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_MAX_SAFE_INT = 2**53 - 1
_MARK = "\ue000"  # a private-use character: marks where a number ECMAScript writes unlike Python goes


class _NotFastError(Exception):
    """The fast canonical form does not apply; RFC 8785's reference implementation takes over."""


class _Ready:
    """A document made ready for ``json.dumps`` to write it as RFC 8785 does (numbers as ECMAScript writes them).

    Integral floats become ints (100.0 -> 100); a float Python writes with an exponent (below 1e-4 or from
    1e16) becomes a marked placeholder string, replaced after ``json.dumps`` by RFC 8785's own text of it.
    Unsafe integers (beyond 2**53 - 1) and non-JSON types raise _NotFastError.
    """

    def __init__(self) -> None:
        self.numbers: list[str] = []

    def _float(self, value: float) -> Any:
        if 1e-4 <= abs(value) < 1e16 or value == 0:
            return int(value) if value.is_integer() else value
        self.numbers.append(rfc8785.dumps(value).decode("ascii"))
        return f"{_MARK}{len(self.numbers) - 1}{_MARK}"

    def obj(self, value: dict[str, Any]) -> dict[str, Any]:
        out = {}
        for key, item in value.items():
            kind = type(item)
            if kind is float:
                out[key] = self._float(item)
            elif kind is str or kind is bool or item is None:
                out[key] = item
            elif kind is dict:
                out[key] = self.obj(item)
            elif kind is list:
                out[key] = self.arr(item)
            elif kind is int and -_MAX_SAFE_INT <= item <= _MAX_SAFE_INT:
                out[key] = item
            else:
                raise _NotFastError
        return out

    def arr(self, value: list[Any]) -> list[Any]:
        out = []
        for item in value:
            kind = type(item)
            if kind is float:
                out.append(self._float(item))
            elif kind is str or kind is bool or item is None:
                out.append(item)
            elif kind is dict:
                out.append(self.obj(item))
            elif kind is list:
                out.append(self.arr(item))
            elif kind is int and -_MAX_SAFE_INT <= item <= _MAX_SAFE_INT:
                out.append(item)
            else:
                raise _NotFastError
        return out


def _fast_canonical(document: dict[str, Any]) -> bytes:
    ready = _Ready()
    text = json.dumps(ready.obj(document), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    if not text.isascii():
        if _ASTRAL.search(text):  # UTF-16 key order can differ from code point order
            raise _NotFastError
        if text.count(_MARK) != 2 * len(ready.numbers):  # the document holds the marker itself
            raise _NotFastError
        for i, number in enumerate(ready.numbers):
            text = text.replace(f'"{_MARK}{i}{_MARK}"', number, 1)
    return text.encode("utf-8")


def canonical_bytes(document: dict[str, Any]) -> bytes:
    """RFC 8785 canonical bytes of ``document`` without its ``signature`` member.

    A fast path (sorted ``json.dumps`` with numbers rewritten as ECMAScript writes them) covers every document
    made of JSON values whose keys are in the Basic Multilingual Plane and whose integers are safe; anything
    else goes through the ``rfc8785`` package. Tests hold both to the same bytes.
    """
    unsigned = {key: value for key, value in document.items() if key != "signature"}
    if type(document) is EsNumbers:  # its numbers are already as RFC 8785 writes them
        text = json.dumps(unsigned, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        if text.isascii() or not _ASTRAL.search(text):
            return text.encode("utf-8")
    try:
        return _fast_canonical(unsigned)
    except (_NotFastError, UnicodeEncodeError, ValueError, TypeError, RecursionError):
        pass
    try:
        return rfc8785.dumps(unsigned)
    except (rfc8785.CanonicalizationError, ValueError, TypeError, RecursionError) as exc:
        raise SignatureError(f"document cannot be canonicalized (RFC 8785): {exc}") from None


# ---- the SSH wire format (RFC 4251 section 5) -----------------------------------------------------


class WireError(ValueError):
    """Bytes that are not the SSH structure they should be."""


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise WireError("truncated")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def uint32(self) -> int:
        return int.from_bytes(self.take(4), "big")

    def byte(self) -> int:
        return self.take(1)[0]

    def string(self) -> bytes:
        return self.take(self.uint32())

    def mpint(self) -> int:
        raw = self.string()
        if raw and raw[0] & 0x80:
            raise WireError("negative mpint")
        return int.from_bytes(raw, "big")

    def done(self) -> None:
        if self.pos != len(self.data):
            raise WireError("trailing bytes")


def ssh_string(data: bytes) -> bytes:
    """``data`` as an SSH ``string``: a 4-byte big-endian length, then the bytes."""
    return len(data).to_bytes(4, "big") + data


# ---- public keys ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PublicKey:
    """An SSH public key: its type name and wire blob (what ``keytype base64`` holds)."""

    key_type: str
    blob: bytes

    @classmethod
    def from_blob(cls, blob: bytes) -> PublicKey:
        """Parse and check a wire blob; raise WireError for a type or shape this module cannot verify."""
        reader = _Reader(blob)
        key_type = reader.string().decode("ascii", "replace")
        if key_type not in KEY_TYPES:
            if key_type.endswith("-cert-v01@openssh.com"):
                raise WireError(f"{key_type} is a certificate: list the plain key, not a certificate")
            raise WireError(f"key type {key_type[:60]!r} is not one GitHub publishes")
        key = cls(key_type, blob)
        key.verifier()  # raises WireError on a malformed key
        return key

    @property
    def fingerprint(self) -> str:
        """``SHA256:...`` as ``ssh-keygen -l`` prints it."""
        digest = base64.b64encode(hashlib.sha256(self.blob).digest()).decode("ascii").rstrip("=")
        return f"SHA256:{digest}"

    @property
    def openssh(self) -> str:
        """``keytype base64``, as in an allowed_signers or ``.keys`` line."""
        return f"{self.key_type} {base64.b64encode(self.blob).decode('ascii')}"

    def verifier(self) -> _Verifier:
        """The object that checks signatures made by this key (made once per key, then reused)."""
        return _cached_verifier(self.key_type, self.blob)

    def verify(self, signature_blob: bytes, data: bytes) -> bool:
        """True when ``signature_blob`` (an SSH signature) signs ``data`` with this key."""
        try:
            return self.verifier().verify(_Reader(signature_blob), data)
        except (WireError, InvalidSignature, ValueError, TypeError):
            return False


class _Verifier:
    def verify(self, sig: _Reader, data: bytes) -> bool:  # pragma: no cover - overridden
        raise NotImplementedError


@dataclass(frozen=True)
class _Ed25519(_Verifier):
    key: ed25519.Ed25519PublicKey
    application: bytes | None = None  # a FIDO key's application ("ssh:"); None for a plain key

    def verify(self, sig: _Reader, data: bytes) -> bool:
        name = sig.string().decode("ascii", "replace")
        raw = sig.string()
        if self.application is None:
            sig.done()
            if name != ED25519:
                return False
            self.key.verify(raw, data)
            return True
        if name != SK_ED25519:
            return False
        self.key.verify(raw, _sk_signed(self.application, sig, data))
        return True


@dataclass(frozen=True)
class _Ecdsa(_Verifier):
    key: ec.EllipticCurvePublicKey
    hash: hashes.HashAlgorithm
    name: str
    application: bytes | None = None

    def verify(self, sig: _Reader, data: bytes) -> bool:
        name = sig.string().decode("ascii", "replace")
        inner = _Reader(sig.string())
        r, s = inner.mpint(), inner.mpint()
        inner.done()
        if name != self.name:
            return False
        signed = data if self.application is None else _sk_signed(self.application, sig, data)
        if self.application is None:
            sig.done()
        self.key.verify(encode_dss_signature(r, s), signed, ec.ECDSA(self.hash))
        return True


@dataclass(frozen=True)
class _Rsa(_Verifier):
    key: rsa.RSAPublicKey

    def verify(self, sig: _Reader, data: bytes) -> bool:
        name = sig.string().decode("ascii", "replace")
        raw = sig.string()
        sig.done()
        algorithm = RSA_SIGNATURE_HASHES.get(name)  # "ssh-rsa" (SHA-1) is refused, as OpenSSH refuses it
        if algorithm is None:
            return False
        self.key.verify(raw, data, padding.PKCS1v15(), algorithm)
        return True


@lru_cache(maxsize=1024)
def _cached_verifier(key_type: str, blob: bytes) -> _Verifier:
    """The ``cryptography`` key object of one key blob, parsed once (a malformed one raises WireError each time)."""
    try:
        return _verifier(key_type, _Reader(blob))
    except (ValueError, TypeError) as exc:
        raise WireError(f"malformed {key_type} key: {exc}") from None


def _sk_signed(application: bytes, sig: _Reader, data: bytes) -> bytes:
    """What a FIDO authenticator signs (PROTOCOL.u2f): SHA-256(application) || flags || counter || SHA-256(data)."""
    flags = sig.byte()
    counter = sig.uint32()
    sig.done()
    return (
        hashlib.sha256(application).digest()
        + bytes([flags])
        + counter.to_bytes(4, "big")
        + hashlib.sha256(data).digest()
    )


def _verifier(key_type: str, reader: _Reader) -> _Verifier:
    reader.string()  # the type name, already read by the caller
    if key_type in (ED25519, SK_ED25519):
        raw = reader.string()
        application = reader.string() if key_type == SK_ED25519 else None
        reader.done()
        return _Ed25519(ed25519.Ed25519PublicKey.from_public_bytes(raw), application)
    if key_type == RSA:
        e, n = reader.mpint(), reader.mpint()
        reader.done()
        if n.bit_length() < 1024:
            raise WireError("RSA keys under 1024 bits are refused, as OpenSSH refuses them")
        return _Rsa(rsa.RSAPublicNumbers(e, n).public_key())
    curve_name = reader.string().decode("ascii", "replace")
    point = reader.string()
    application = reader.string() if key_type == SK_ECDSA else None
    reader.done()
    expected = "nistp256" if key_type == SK_ECDSA else key_type.removeprefix("ecdsa-sha2-")
    if curve_name not in ECDSA_CURVES or curve_name != expected:
        raise WireError(f"curve {curve_name[:20]!r} does not match {key_type}")
    curve, algorithm = ECDSA_CURVES[curve_name]
    key = ec.EllipticCurvePublicKey.from_encoded_point(curve, point)
    return _Ecdsa(key, algorithm, key_type, application)


# ---- SSHSIG ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ParsedSignature:
    """An armored SSHSIG signature, parsed (PROTOCOL.sshsig)."""

    public_key: bytes
    namespace: str
    hash_algorithm: str
    signature: bytes
    reserved: bytes = b""

    def signed_data(self, message: bytes) -> bytes:
        """The bytes the key signed for ``message``."""
        digest = SSHSIG_HASHES[self.hash_algorithm](message).digest()
        return (
            b"SSHSIG"
            + ssh_string(self.namespace.encode("utf-8"))
            + ssh_string(self.reserved)
            + ssh_string(self.hash_algorithm.encode("ascii"))
            + ssh_string(digest)
        )


def parse_armored(armored: str) -> ParsedSignature:
    """Parse ``-----BEGIN SSH SIGNATURE-----`` text; raise SignatureError saying what is wrong."""
    lines = [line.strip() for line in armored.strip().splitlines()]
    if len(lines) < 3 or lines[0] != "-----BEGIN SSH SIGNATURE-----" or lines[-1] != "-----END SSH SIGNATURE-----":
        raise SignatureError("signature is not a readable SSH signature (truncated or damaged?): no armor")
    try:
        blob = base64.b64decode("".join(lines[1:-1]), validate=True)
        reader = _Reader(blob)
        if reader.take(6) != b"SSHSIG" or reader.uint32() != 1:
            raise WireError("not an SSHSIG version 1 blob")
        parsed = ParsedSignature(
            public_key=reader.string(),
            namespace=reader.string().decode("utf-8"),
            reserved=reader.string(),
            hash_algorithm=reader.string().decode("ascii"),
            signature=reader.string(),
        )
        reader.done()
    except (WireError, binascii.Error, UnicodeDecodeError, ValueError) as exc:
        raise SignatureError(f"signature is not a readable SSH signature (truncated or damaged?): {exc}") from None
    if parsed.hash_algorithm not in SSHSIG_HASHES:
        raise SignatureError(f"signature hash {parsed.hash_algorithm[:20]!r} is not sha256 or sha512")
    return parsed


def armor(blob: bytes) -> str:
    """An SSHSIG blob in its armored text form, as ``ssh-keygen -Y sign`` writes it."""
    text = base64.b64encode(blob).decode("ascii")
    body = "\n".join(text[i : i + 70] for i in range(0, len(text), 70))
    return f"-----BEGIN SSH SIGNATURE-----\n{body}\n-----END SSH SIGNATURE-----\n"


# ---- allowed_signers ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SignerLine:
    """One usable allowed_signers line."""

    number: int
    principals: tuple[str, ...]  # lower-cased GitHub logins
    key: PublicKey
    namespaces: tuple[str, ...] | None = None  # patterns; None: every namespace
    valid_after: datetime | None = None
    valid_before: datetime | None = None

    def refusal(self, namespace: str, when: datetime) -> str | None:
        """Why this line's key may not verify a ``namespace`` signature at ``when`` (None: it may)."""
        if self.namespaces is not None and not _match_list(namespace, self.namespaces):
            return f"line {self.number} allows the key only for namespaces {','.join(self.namespaces)}"
        if self.valid_after is not None and when < self.valid_after:
            return f"line {self.number}'s key is not valid before {self.valid_after.isoformat()}"
        if self.valid_before is not None and when > self.valid_before:
            return f"line {self.number}'s key expired at {self.valid_before.isoformat()}"
        return None


@dataclass(frozen=True)
class LineProblem:
    """An allowed_signers line the verifier cannot use, and why."""

    number: int
    reason: str
    principals: tuple[str, ...] = ()


@dataclass
class AllowedSigners:
    """A parsed allowed_signers file: its usable lines, and the lines it cannot use with their reasons."""

    lines: list[SignerLine] = field(default_factory=list)
    problems: list[LineProblem] = field(default_factory=list)
    source: str = "allowed_signers"
    _by_principal: dict[str, list[SignerLine]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for line in self.lines:
            for principal in line.principals:
                self._by_principal.setdefault(principal, []).append(line)

    def __contains__(self, principal: object) -> bool:
        return isinstance(principal, str) and principal.lower() in self._by_principal

    def lines_for(self, principal: str) -> list[SignerLine]:
        """The usable lines naming ``principal`` (case-insensitive)."""
        return self._by_principal.get(principal.lower(), [])

    def problems_for(self, principal: str) -> list[LineProblem]:
        """The unusable lines that name ``principal``."""
        return [p for p in self.problems if principal.lower() in p.principals]


def _match_list(value: str, patterns: tuple[str, ...]) -> bool:
    """OpenSSH's match_pattern_list: a ``!`` pattern that matches refuses; otherwise any pattern that matches."""
    matched = False
    for pattern in patterns:
        if pattern.startswith("!"):
            if fnmatchcase(value, pattern[1:]):
                return False
        elif fnmatchcase(value, pattern):
            matched = True
    return matched


def _token(text: str, pos: int) -> tuple[str, int]:
    """The whitespace-delimited token at ``pos`` (double quotes keep spaces inside), and the position after it."""
    start, quoted = pos, False
    while pos < len(text) and (quoted or text[pos] not in " \t"):
        if text[pos] == '"':
            quoted = not quoted
        pos += 1
    if quoted:
        raise ValueError("unterminated quote")
    return text[start:pos], pos


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    return pos


def _parse_time(value: str) -> datetime:
    """OpenSSH's absolute time: YYYYMMDD, YYYYMMDDHHMM or YYYYMMDDHHMMSS, optionally ending in Z (read as UTC)."""
    text = value[:-1] if value.endswith(("Z", "z")) else value
    formats = {8: "%Y%m%d", 12: "%Y%m%d%H%M", 14: "%Y%m%d%H%M%S"}
    if not text.isdigit() or len(text) not in formats:
        raise ValueError(f"invalid time {value[:30]!r}: write YYYYMMDD[HHMM[SS]][Z]")
    return datetime.strptime(text, formats[len(text)]).replace(tzinfo=UTC)


def _split_options(text: str) -> list[str]:
    options, current, quoted = [], "", False
    for char in text:
        if char == '"':
            quoted = not quoted
        if char == "," and not quoted:
            options.append(current)
            current = ""
        else:
            current += char
    if quoted:
        raise ValueError("unterminated quote in options")
    options.append(current)
    return options


def _dequote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1]
    if '"' in value:
        raise ValueError("misplaced quote in an option value")
    return value


def _options(text: str) -> dict[str, Any]:
    """The sshsig options of a line; raise ValueError for one OpenSSH does not know or this project refuses."""
    result: dict[str, Any] = {}
    for option in _split_options(text):
        name, equals, value = option.partition("=")
        name = name.lower()
        if name == "cert-authority" and not equals:
            raise ValueError("cert-authority: submissions are signed with a plain key, not a certificate; list the key")
        if name not in ("namespaces", "valid-after", "valid-before") or not equals:
            raise ValueError(f"unknown key option {option[:40]!r}")
        if name in result:
            raise ValueError(f'multiple "{name}" clauses')
        value = _dequote(value)
        result[name] = tuple(value.split(",")) if name == "namespaces" else _parse_time(value)
    after, before = result.get("valid-after"), result.get("valid-before")
    if after is not None and before is not None and before <= after:
        raise ValueError('"valid-before" time is before "valid-after"')
    return result


def _read_key(text: str, pos: int) -> tuple[PublicKey, int] | None:
    """A ``keytype base64`` key at ``pos`` (None when no key type stands there)."""
    key_type, after = _token(text, pos)
    if key_type not in KEY_TYPES and not key_type.endswith("-cert-v01@openssh.com"):
        return None
    encoded, end = _token(text, _skip_space(text, after))
    try:
        blob = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"the {key_type} key is not base64") from None
    key = PublicKey.from_blob(blob)
    if key.key_type != key_type:
        raise ValueError(f"the key says {key_type} but its blob is {key.key_type}")
    return key, end


def parse_key_text(text: str) -> PublicKey | None:
    """The key of a ``keytype base64 [comment]`` line (a ``.keys`` line); None for blanks and comments."""
    stripped = text.strip()
    if not stripped or stripped.startswith("#"):
        return None
    found = _read_key(stripped, 0)
    if found is None:
        raise ValueError("no key: a line is 'keytype base64 [comment]'")
    return found[0]


def parse_signers_line(text: str, number: int = 1) -> SignerLine | LineProblem | None:
    """One allowed_signers line as ``ssh-keygen -Y verify`` reads it (None for blanks and comments).

    ``principals [options] keytype base64 [comment]``. Principals are GitHub logins here: a wildcard or a
    name that is not a login is refused with its reason, because a pattern would vouch for everyone it matches.
    """
    line = text.strip()
    if not line or line.startswith("#"):
        return None
    principals: tuple[str, ...] = ()
    try:
        token, pos = _token(line, 0)
        principals = tuple(p.strip('"').lower() for p in token.split(","))
        pos = _skip_space(line, pos)
        if pos >= len(line):
            raise ValueError("invalid line: no key after the principals")
        options: dict[str, Any] = {}
        found = _read_key(line, pos)
        if found is None:
            option_text, pos = _token(line, pos)
            options = _options(option_text)
            found = _read_key(line, _skip_space(line, pos))
            if found is None:
                raise ValueError("missing key: a line is 'login [options] keytype base64 [comment]'")
        bad = [p for p in principals if not _LOGIN.match(p)]
        if bad:
            raise ValueError(f"principal {bad[0][:40]!r} is not a GitHub login (no wildcards or patterns)")
        return SignerLine(
            number,
            principals,
            found[0],
            options.get("namespaces"),
            options.get("valid-after"),
            options.get("valid-before"),
        )
    except ValueError as exc:
        return LineProblem(number, str(exc)[:200], principals)


def parse_signers_text(text: str, source: str = "allowed_signers") -> AllowedSigners:
    """Every line of an allowed_signers text: the usable ones and, per unusable line, its problem."""
    lines, problems = [], []
    for number, raw in enumerate(text.splitlines(), start=1):
        parsed = parse_signers_line(raw, number)
        if isinstance(parsed, SignerLine):
            lines.append(parsed)
        elif isinstance(parsed, LineProblem):
            problems.append(parsed)
    return AllowedSigners(lines, problems, source)


def read_signers_file(path: str | os.PathLike[str]) -> str:
    """The text of an allowed_signers file, which must be a regular file (not a symbolic link)."""
    p = Path(path)
    try:
        info = p.lstat()
    except OSError as exc:
        raise UsageError(f"cannot read allowed signers file {p}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(info.st_mode):
        raise UsageError(f"allowed signers file {p} is a symbolic link: it must be the committed file itself")
    if not stat.S_ISREG(info.st_mode):
        raise UsageError(f"allowed signers file {p} is not a regular file")
    if info.st_size > MAX_SIGNERS_BYTES:
        raise UsageError(f"allowed signers file {p} is {info.st_size} bytes, over the {MAX_SIGNERS_BYTES}-byte cap")
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            return handle.read(MAX_SIGNERS_BYTES + 1).decode("utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read allowed signers file {p}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"allowed signers file {p} is not UTF-8 text") from None


def parse_allowed_signers(path: str | os.PathLike[str]) -> AllowedSigners:
    """Read an allowed_signers file (a regular file; raise UsageError otherwise) and parse every line."""
    return parse_signers_text(read_signers_file(path), str(path))


# ---- verifying a document -------------------------------------------------------------------------


class UnknownSignerError(SignatureError):
    """The signer has no line in the allowed_signers file that may verify this signature now."""


class Sha1SignatureError(SignatureError):
    """An RSA signature made with SHA-1 (``ssh-rsa``), which OpenSSH refuses (``sshsig.c``) whatever it signs."""


@dataclass(frozen=True)
class SignedBy:
    """Who a verified signature belongs to."""

    signer: str
    key_fingerprint: str


def _parse_armored(armored: str) -> ParsedSignature:
    return parse_armored(armored)


def _candidates(
    allowed: AllowedSigners, signer: str, namespace: str, when: datetime
) -> tuple[list[SignerLine], list[str]]:
    usable, refused = [], []
    for line in allowed.lines_for(signer):
        reason = line.refusal(namespace, when)
        if reason is None:
            usable.append(line)
        else:
            refused.append(reason)
    refused += [f"line {p.number} cannot be used: {p.reason}" for p in allowed.problems_for(signer)]
    return usable, refused


def _signature_type(signature_blob: bytes) -> str | None:
    """The algorithm name an SSH signature blob starts with (None when unreadable)."""
    try:
        return _Reader(signature_blob).string().decode("ascii", "replace")
    except WireError:
        return None


def verify_document(
    document: dict[str, Any],
    allowed: AllowedSigners,
    namespace: str = NAMESPACE,
    now: datetime | None = None,
) -> SignedBy:
    """Check a parsed submission's signature; return its signer or raise SignatureError saying why.

    ``now`` is the verification time the lines' validity is checked at (default: the current time), as
    ``ssh-keygen -Y verify`` checks it.
    """
    sig = document.get("signature")
    if not isinstance(sig, dict):
        raise SignatureError("submission is not signed: run `ecocompute sign FILE --key PATH --signer LOGIN`")
    signature = Signature.model_validate(sig)
    if signature.namespace != namespace:
        raise SignatureError(f"signature namespace is {signature.namespace!r}, expected {namespace!r}")
    parsed = parse_armored(signature.armored)
    if parsed.namespace != namespace:
        raise SignatureError(f"signature was made for namespace {parsed.namespace!r}, expected {namespace!r}")
    when = now or datetime.now(UTC)
    usable, refused = _candidates(allowed, signature.signer, namespace, when)
    if not usable:
        why = f" ({'; '.join(refused)[:300]})" if refused else ""
        raise UnknownSignerError(
            f"signer {signature.signer!r} is not in the allowed signers file with a usable key{why}: "
            "add their key line to it"
        )
    match = next((line for line in usable if line.key.blob == parsed.public_key), None)
    if match is None:
        raise SignatureError("signature does not match the content or the signer's keys: signed by another key")
    if match.key.key_type == RSA and _signature_type(parsed.signature) == RSA:
        raise Sha1SignatureError(
            "the signature is ssh-rsa (RSA with SHA-1), which OpenSSH refuses: sign again with `ecocompute sign` "
            "(ssh-keygen -Y sign writes rsa-sha2-512)"
        )
    if not match.key.verify(parsed.signature, parsed.signed_data(canonical_bytes(document))):
        raise SignatureError("signature does not match the content or the signer's keys: the content changed")
    fingerprint = match.key.fingerprint
    if fingerprint != signature.key_fingerprint:
        raise SignatureError(
            f"signature.key_fingerprint says {signature.key_fingerprint}, but the signing key is {fingerprint}"
        )
    return SignedBy(signer=signature.signer, key_fingerprint=fingerprint)


# ---- signing --------------------------------------------------------------------------------------


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


def signature_fingerprint(armored: str) -> str:
    """The ``SHA256:...`` fingerprint of the key that made an armored signature."""
    blob = parse_armored(armored).public_key
    return PublicKey(_Reader(blob).string().decode("ascii", "replace"), blob).fingerprint


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
    signature = Signature(
        format="sshsig", namespace=NAMESPACE, signer=signer, key_fingerprint=signature_fingerprint(armored),
        armored=armored,
    )  # fmt: skip
    return submission.model_copy(update={"signature": signature})


def iter_keys(text: str) -> Iterator[PublicKey]:
    """Every key of a ``.keys`` text (``https://github.com/<login>.keys``); lines it cannot read are skipped."""
    for line in text.splitlines():
        try:
            key = parse_key_text(line)
        except ValueError:
            continue
        if key is not None:
            yield key
