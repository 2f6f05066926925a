"""FakeAuthenticator: a software stand-in for a FIDO security key, for tests only.

``ssh-keygen -t ed25519-sk`` needs a hardware authenticator, so the tests build ``sk-ssh-ed25519@openssh.com`` and
``sk-ecdsa-sha2-nistp256@openssh.com`` keys and their SSHSIG signatures themselves, in the wire format of
OpenSSH's PROTOCOL.u2f and PROTOCOL.sshsig, with ``cryptography``'s Ed25519 and ECDSA primitives. Nothing here
is used outside tests.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

from ecocompute.schema.signing import SK_ECDSA, SK_ED25519, armor, ssh_string


def _mpint(value: int) -> bytes:
    raw = value.to_bytes((value.bit_length() + 8) // 8, "big") if value else b""
    return ssh_string(raw)


@dataclass
class FakeAuthenticator:
    """A FIDO key in software: ``kind`` is "ed25519" or "ecdsa"; ``flags`` 0x01 is user presence."""

    kind: str = "ed25519"
    application: bytes = b"ssh:"
    flags: int = 0x01
    counter: int = 7
    _ed: ed25519.Ed25519PrivateKey = field(default_factory=ed25519.Ed25519PrivateKey.generate)
    _ec: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))

    @property
    def key_type(self) -> str:
        return SK_ED25519 if self.kind == "ed25519" else SK_ECDSA

    @property
    def blob(self) -> bytes:
        """The public key's wire blob."""
        if self.kind == "ed25519":
            raw = self._ed.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
            return ssh_string(SK_ED25519.encode()) + ssh_string(raw) + ssh_string(self.application)
        point = self._ec.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return (
            ssh_string(SK_ECDSA.encode()) + ssh_string(b"nistp256") + ssh_string(point) + ssh_string(self.application)
        )

    @property
    def public_line(self) -> str:
        """``keytype base64``, as GitHub's ``.keys`` and allowed_signers hold it."""
        return f"{self.key_type} {base64.b64encode(self.blob).decode()}"

    def _assertion(self, data: bytes) -> bytes:
        """The signature field of an SSH sk signature over ``data`` (PROTOCOL.u2f)."""
        signed = (
            hashlib.sha256(self.application).digest()
            + bytes([self.flags])
            + self.counter.to_bytes(4, "big")
            + hashlib.sha256(data).digest()
        )
        if self.kind == "ed25519":
            inner = ssh_string(self._ed.sign(signed))
        else:
            r, s = decode_dss_signature(self._ec.sign(signed, ec.ECDSA(hashes.SHA256())))
            inner = ssh_string(_mpint(r) + _mpint(s))
        return ssh_string(self.key_type.encode()) + inner + bytes([self.flags]) + self.counter.to_bytes(4, "big")

    def sign(self, message: bytes, namespace: str) -> str:
        """An armored SSHSIG signature of ``message`` in ``namespace`` (hash sha512, as ssh-keygen uses)."""
        digest = hashlib.sha512(message).digest()
        to_sign = (
            b"SSHSIG" + ssh_string(namespace.encode()) + ssh_string(b"") + ssh_string(b"sha512") + ssh_string(digest)
        )
        blob = (
            b"SSHSIG"
            + (1).to_bytes(4, "big")
            + ssh_string(self.blob)
            + ssh_string(namespace.encode())
            + ssh_string(b"")
            + ssh_string(b"sha512")
            + ssh_string(self._assertion(to_sign))
        )
        return armor(blob)
