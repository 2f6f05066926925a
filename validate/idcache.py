"""The identity index kept between runs: each file's submission id and window keys, by the SHA-256 of its bytes.

The copy check compares every file of a batch with every file already in the submissions folder. Reading the
identity of 100,000 files (parse and key each window) costs minutes; with this cache a file already seen is only
read and hashed, and its identity taken from the row of that hash. So a build after one file is added parses one
file. Nothing is trusted that does not match:

- a row is found by the hash of the file's bytes as they are now: a changed file has another hash, a file gone is
  never looked up, so its windows no longer count;
- each row carries a keyed BLAKE2b tag over the hash, the id, the keys and the code that made them
  (:func:`code_digest`), with a secret kept outside the cache folder (:func:`secret`); a row whose tag does not
  verify is computed again from the file, so editing, swapping or forging rows cannot hide a copy;
- a row made by other code (identity or reader changed) is never used: the whole table is dropped;
- an unreadable, locked or corrupt cache file is a cache miss, never an error of the run.

Layout: ``<folder>/identities.sqlite`` (one table). The secret: ``$ECOCOMPUTE_IDENTITY_KEY`` when set (CI: a
repository secret), else the file ``$XDG_STATE_HOME/ecocompute/identity-cache.key`` (``~/.local/state/...``),
made on first use, readable by its owner only.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ecocompute.validate.identity import Identity

FILE = "identities.sqlite"
KEY_ENV = "ECOCOMPUTE_IDENTITY_KEY"
TAG_BYTES = 32
PRUNE_FACTOR, PRUNE_SLACK = 4, 10_000  # beyond 4x the files a run saw (+ slack), rows it did not see are dropped

Row = tuple[str | None, bytes, bytes]  # submission id, window keys, tag


def secret_path() -> Path:
    """Where the cache's secret is kept when ``$ECOCOMPUTE_IDENTITY_KEY`` is not set (outside every cache folder)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "ecocompute" / "identity-cache.key"


def secret() -> bytes:
    """The key of the rows' tags: ``$ECOCOMPUTE_IDENTITY_KEY``, else the key file (made when missing)."""
    from_env = os.environ.get(KEY_ENV)
    if from_env:
        return hashlib.sha256(from_env.encode("utf-8")).digest()
    path = secret_path()
    try:
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_bytes(32)
    staging = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(staging, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(key.hex() + "\n")
    staging.replace(path)
    return bytes.fromhex(path.read_text(encoding="ascii").strip())  # another run may have made it meanwhile


def code_digest() -> bytes:
    """SHA-256 of the code that makes an identity: the window keys and the one JSON reader."""
    from ecocompute.schema import io as reader
    from ecocompute.validate import identity, raw

    digest = hashlib.sha256()
    for module in (identity, raw, reader):
        digest.update(Path(str(module.__file__)).read_bytes() + b"\0")
    return digest.digest()


def tag(key: bytes, code: bytes, sha256: bytes, submission_id: str | None, keys: bytes) -> bytes:
    """The keyed BLAKE2b tag of one row: its hash, id (length-prefixed) and keys, for this code."""
    sub = b"\xff" if submission_id is None else submission_id.encode("utf-8")
    message = code + sha256 + len(sub).to_bytes(4, "big") + sub + keys
    return hashlib.blake2b(message, key=key, digest_size=TAG_BYTES).digest()


@dataclass
class IdentityCache:
    """Rows of the cache under ``folder`` loaded for one run; :meth:`lookup` checks each row's tag."""

    folder: Path
    key: bytes = field(default_factory=secret)
    code: bytes = field(default_factory=code_digest)
    rows: dict[bytes, Row] = field(default_factory=dict)
    fresh: dict[bytes, Row] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        """The cache file."""
        return self.folder / FILE

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection to the cache file (made with its table if missing), in one transaction, then closed."""
        self.folder.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(self.path, timeout=5.0)) as connection, connection:
            connection.execute(
                "CREATE TABLE IF NOT EXISTS identities (sha256 BLOB PRIMARY KEY, submission_id TEXT,"
                " keys BLOB NOT NULL, tag BLOB NOT NULL, code BLOB NOT NULL)"
            )
            yield connection

    def load(self) -> IdentityCache:
        """Read the rows made by this code (none when the file is missing, unreadable or corrupt)."""
        if not self.path.is_file():
            return self
        try:
            with self._connect() as connection:
                found = connection.execute(
                    "SELECT sha256, submission_id, keys, tag FROM identities WHERE code = ?", (self.code,)
                ).fetchall()
        except (sqlite3.Error, OSError):
            return self
        self.rows = {
            bytes(sha): (sub, bytes(keys), bytes(row_tag))
            for sha, sub, keys, row_tag in found
            if isinstance(sha, bytes) and isinstance(keys, bytes) and isinstance(row_tag, bytes)
            and (sub is None or isinstance(sub, str))
        }  # fmt: skip
        return self

    def lookup(self, sha256: bytes, name: str) -> Identity | None:
        """The identity of the file of these bytes, named ``name``, when a row holds it and its tag verifies."""
        row = self.rows.get(sha256)
        if row is None:
            return None
        submission_id, keys, row_tag = row
        if len(keys) % 16 or not secrets.compare_digest(row_tag, tag(self.key, self.code, sha256, submission_id, keys)):
            return None
        return Identity(name, submission_id, keys)

    def remember(self, sha256: bytes, identity: Identity) -> None:
        """Keep the identity of the file of these bytes, for :meth:`save`."""
        keys = identity.keys
        self.fresh[sha256] = (
            identity.submission_id,
            keys,
            tag(self.key, self.code, sha256, identity.submission_id, keys),
        )

    def save(self, seen: Iterable[bytes]) -> None:
        """Write the rows remembered; drop rows of other code, and rows no file of this run had if there are many.

        A cache that cannot be written is left as it is: the next run computes those identities again.
        """
        seen = set(seen)
        try:
            with self._connect() as connection:
                connection.execute("DELETE FROM identities WHERE code != ?", (self.code,))
                connection.executemany(
                    "INSERT OR REPLACE INTO identities VALUES (?, ?, ?, ?, ?)",
                    [(sha, sub, keys, row_tag, self.code) for sha, (sub, keys, row_tag) in self.fresh.items()],
                )
                stale = [sha for sha in self.rows.keys() - seen if sha not in self.fresh]
                if len(self.rows) + len(self.fresh) > PRUNE_FACTOR * len(seen) + PRUNE_SLACK and stale:
                    connection.executemany("DELETE FROM identities WHERE sha256 = ?", [(sha,) for sha in stale])
        except (sqlite3.Error, OSError):
            return
