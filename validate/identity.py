"""A measurement's identity is what was measured: the GPU and each window's start, duration, energy and tokens.

Who signed it, its ids, notes and number formats (``1.5`` or ``1.50``, ``Z`` or ``+00:00``) do not enter it,
so a measurement re-filed under another login, a new id or a changed note is the same measurement. Each
window (warm-ups included) has a key; a file holding a window key that an earlier file holds is a copy of
that file. The index maps each key to the one file that first held it, so finding copies is linear in the
number of windows, and each copy is named with the one file it copies.
"""

from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ecocompute.validate.findings import Finding, finding

WindowKey = bytes


def _instant(value: Any) -> int | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return round(moment.timestamp() * 1_000_000)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


_PACK = struct.Struct("<qddd").pack  # start (microseconds since the epoch), duration, energy, tokens: exact values


def _keys(start: int | None, duration: float, energy: float, tokens: float) -> list[WindowKey]:
    """The window's key: its start instant (microseconds), duration, energy and tokens (none without a start)."""
    if start is None:
        return []
    return [hashlib.blake2b(_PACK(start, duration, energy, tokens), digest_size=16).digest()]


def window_keys(window: Any) -> list[WindowKey]:
    """The keys of one window dict (none when it lacks a duration, energy or tokens).

    Read leniently (a number written as a string counts as that number), so no format change hides a copy.
    """
    if not isinstance(window, dict):
        return []
    duration, energy, tokens = (_number(window.get(k)) for k in ("duration_s", "energy_j", "tokens"))
    if duration is None or energy is None or tokens is None:
        return []
    return _keys(_instant(window.get("started_at")), duration, energy, tokens)


def submission_keys(submission: Any) -> list[tuple[str, WindowKey]]:
    """(where, key) of every window of a validated Submission: the same keys :func:`document_keys` gives."""
    found: list[tuple[str, WindowKey]] = []
    blake2b, pack = hashlib.blake2b, _PACK
    for m_index, m in enumerate(submission.payload.measurements):
        for kind, windows in (("windows", m.windows), ("warmup", m.warmup)):
            prefix = f"payload.measurements[{m_index}].{kind}["
            for i, w in enumerate(windows):
                start = round(w.started_at.timestamp() * 1_000_000)  # as _keys packs it, inlined: it runs per window
                packed = pack(start, float(w.duration_s), float(w.energy_j), float(w.tokens))
                found.append((f"{prefix}{i}]", blake2b(packed, digest_size=16).digest()))
    return found


def _windows(document: Any) -> Iterator[tuple[str, Any]]:
    payload = document.get("payload") if isinstance(document, dict) else None
    measurements = payload.get("measurements") if isinstance(payload, dict) else None
    if not isinstance(measurements, list):
        return
    for m_index, m in enumerate(measurements):
        if not isinstance(m, dict):
            continue
        for kind in ("windows", "warmup"):
            windows = m.get(kind)
            if isinstance(windows, list):
                for i, w in enumerate(windows):
                    yield f"payload.measurements[{m_index}].{kind}[{i}]", w


def document_keys(document: Any) -> list[tuple[str, WindowKey]]:
    """(where, key) of every window of a parsed document.

    The GPU's uuid hash is left out of the key on purpose: two honest windows never share a start to the
    microsecond together with their energy, so a copy whose uuid hash was edited is still a copy.
    """
    return [(where, key) for where, w in _windows(document) for key in window_keys(w)]


def submission_id_of(document: Any) -> str | None:
    """The document's payload.submission_id when it is a string."""
    payload = document.get("payload") if isinstance(document, dict) else None
    value = payload.get("submission_id") if isinstance(payload, dict) else None
    return value if isinstance(value, str) else None


KEY_BYTES = 16  # each window key is a 16-byte BLAKE2b digest


@dataclass
class Identity:
    """What the index needs of one file: its name, submission id and window keys.

    ``keys`` is the window keys, :data:`KEY_BYTES` each, concatenated; ``wheres`` where each is in the document,
    one per line (compact, so a worker process hands them back cheaply). :meth:`of` makes one from (where, key)
    pairs.
    """

    name: str
    submission_id: str | None
    keys: bytes = b""
    wheres: str = ""

    @classmethod
    def of(cls, name: str, submission_id: str | None, pairs: list[tuple[str, WindowKey]]) -> Identity:
        """An identity from the (where, key) pairs :func:`document_keys` and :func:`submission_keys` give."""
        return cls(name, submission_id, b"".join(key for _w, key in pairs), "\n".join(w for w, _k in pairs))

    def window_keys(self) -> list[WindowKey]:
        """Each window key, in document order."""
        keys = self.keys
        return [keys[i : i + KEY_BYTES] for i in range(0, len(keys), KEY_BYTES)]

    def pairs(self) -> list[tuple[str, WindowKey]]:
        """(where, key) of each window, as :func:`document_keys` gives them."""
        wheres = self.wheres.split("\n") if self.wheres else [""] * (len(self.keys) // KEY_BYTES)
        return list(zip(wheres, self.window_keys(), strict=True))


@dataclass
class Index:
    """Submission ids and window keys, each mapped to the first file that held it."""

    ids: dict[str, str] = field(default_factory=dict)
    windows: dict[WindowKey, str] = field(default_factory=dict)

    def add(self, identity: Identity) -> None:
        """Record a file; keys already held stay with the file that held them first."""
        if identity.submission_id is not None:
            self.ids.setdefault(identity.submission_id, identity.name)
        setdefault, name = self.windows.setdefault, identity.name
        for key in identity.window_keys():
            setdefault(key, name)

    def findings(self, identity: Identity) -> list[Finding]:
        """E-DUPLICATE-ID / E-DUPLICATE-PAYLOAD when an earlier file holds this id or one of these windows."""
        found = []
        sub_id = identity.submission_id
        owner = self.ids.get(sub_id) if sub_id is not None else None
        if owner is not None and owner != identity.name:
            found.append(finding("E-DUPLICATE-ID", "payload.submission_id", f"{sub_id} is also in {owner}"))
        get, name = self.windows.get, identity.name
        if all(get(key, name) == name for key in identity.window_keys()):
            return found
        pairs = identity.pairs()
        copied: dict[str, str] = {}
        for where, key in pairs:
            owner = get(key)
            if owner is not None and owner != name:
                copied.setdefault(where, owner)
        where, original = next(iter(copied.items()))
        n_windows = len({w for w, _key in pairs})
        more = f" ({len(copied)} of its {n_windows} windows)" if len(copied) > 1 else ""
        found.append(
            finding(
                "E-DUPLICATE-PAYLOAD",
                where,
                f"a copy of {original}: the same measured window{more} (start, duration, energy, tokens); "
                "a measurement is submitted once, whoever signs it",
            )
        )
        return found
