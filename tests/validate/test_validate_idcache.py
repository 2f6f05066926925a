"""The identity index kept between runs: files already seen are hashed, not parsed, and nothing it holds can hide
a copy (a changed file, a file gone, an edited, swapped or forged row, a corrupt file, rows of other code)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from test_validate_attacks import ALICE, MALLORY, Signers, codes, measured

from ecocompute.cli import main
from ecocompute.validate import core, idcache
from ecocompute.validate.core import FileResult, validate_files


@pytest.fixture(autouse=True)
def _secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(idcache.KEY_ENV, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # the secret, outside the cache folder


@pytest.fixture
def signers(tmp_path: Path) -> Signers:
    return Signers(tmp_path)


def check(signers: Signers, cache: Path, *paths: Path) -> list[FileResult]:
    return validate_files(list(paths), allowed_signers=signers.file, submissions_root=signers.root,
                          identity_cache=cache, workers=1)  # fmt: skip


def replay(seed: int = 11) -> dict[str, Any]:
    """``measured(seed)`` re-filed by another login with a new id: a copy of it."""
    copy = measured(seed, login=MALLORY)
    copy["payload"]["submission_id"] = copy["payload"]["submission_id"][:-8] + "0badc0de"
    return copy


class Parses:
    """Counts the files the copy check parses (a cache hit parses none)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        original = core.check_bytes

        def counting(data: bytes) -> Any:
            self.count += 1
            return original(data)

        monkeypatch.setattr(core, "check_bytes", counting)


def rows(cache: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(cache / idcache.FILE) as connection:
        return connection.execute("SELECT sha256, submission_id, keys, tag, code FROM identities").fetchall()


def test_a_copy_is_found_against_cached_files_which_are_not_parsed_again(
    signers: Signers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    original = signers.write(measured(11))
    others = [signers.write(measured(seed)) for seed in (12, 13)]
    [first] = check(signers, cache, others[0])
    assert first.accepted and len(rows(cache)) == 3  # the batch's file and the two already there
    parses = Parses(monkeypatch)
    copy = signers.write(replay(11))
    [result] = check(signers, cache, copy)
    assert parses.count == 1  # the new file only: the three already there came from the cache
    assert "E-DUPLICATE-PAYLOAD" in codes(result)
    assert original.name in next(f.message for f in result.findings if f.code == "E-DUPLICATE-PAYLOAD")


def test_a_copy_of_a_file_of_the_batch_cached_before_is_found(signers: Signers, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    original = signers.write(measured(11))
    assert check(signers, cache, original)[0].accepted  # cached as a batch file
    [result] = check(signers, cache, signers.write(replay(11)))
    assert "E-DUPLICATE-PAYLOAD" in codes(result)


def test_a_changed_file_is_read_again(signers: Signers, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    changed = signers.write(measured(11))
    check(signers, cache, signers.write(measured(12)))
    doc = measured(13)
    doc["payload"]["submission_id"] = measured(11)["payload"]["submission_id"]
    assert signers.write(doc) == changed  # the same file now holds another measurement
    [result] = check(signers, cache, signers.write(replay(13)))
    assert "E-DUPLICATE-PAYLOAD" in codes(result)
    assert changed.name in next(f.message for f in result.findings if f.code == "E-DUPLICATE-PAYLOAD")


def test_a_file_gone_no_longer_counts(signers: Signers, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    gone = signers.write(measured(11))
    check(signers, cache, signers.write(measured(12)))
    gone.unlink()
    [result] = check(signers, cache, signers.write(replay(11)))
    assert "E-DUPLICATE-PAYLOAD" not in codes(result)


TAMPERS = {
    "keys emptied": "UPDATE identities SET keys = x''",
    "keys replaced by another file's": "UPDATE identities SET keys = (SELECT keys FROM identities WHERE "
    "submission_id = :other)",
    "tag forged with another key": None,
    "rows deleted": "DELETE FROM identities",
    "code changed": "UPDATE identities SET code = x'00'",
}


@pytest.mark.parametrize("how", sorted(TAMPERS))
def test_a_tampered_cache_cannot_hide_a_copy(signers: Signers, tmp_path: Path, how: str) -> None:
    cache = tmp_path / "cache"
    original = signers.write(measured(11))
    check(signers, cache, signers.write(measured(12)))
    ids = {seed: measured(seed)["payload"]["submission_id"] for seed in (11, 12)}
    with sqlite3.connect(cache / idcache.FILE) as connection:
        if TAMPERS[how] is None:  # whoever can write the cache, without the secret: a valid-looking tag
            forged = idcache.tag(b"\0" * 32, idcache.code_digest(), b"", None, b"")
            for sha, sub, _keys, _tag, _code in rows(cache):
                if sub == ids[11]:
                    connection.execute("UPDATE identities SET keys = x'', tag = ? WHERE sha256 = ?", (forged, sha))
        else:
            connection.execute(TAMPERS[how].replace(":other", "?") if ":other" in TAMPERS[how] else TAMPERS[how],
                               (ids[12],) if ":other" in TAMPERS[how] else ())  # fmt: skip
    [result] = check(signers, cache, signers.write(replay(11)))
    assert "E-DUPLICATE-PAYLOAD" in codes(result)
    assert original.name in next(f.message for f in result.findings if f.code == "E-DUPLICATE-PAYLOAD")


def test_a_corrupt_cache_file_is_a_miss_and_is_not_an_error(signers: Signers, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / idcache.FILE).write_bytes(b"not a database" * 100)
    signers.write(measured(11))
    [result] = check(signers, cache, signers.write(replay(11)))
    assert "E-DUPLICATE-PAYLOAD" in codes(result)


def test_the_secret_is_not_in_the_cache_folder(signers: Signers, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    check(signers, cache, signers.write(measured(11)))
    key_file = idcache.secret_path()
    assert key_file.is_file() and not key_file.is_relative_to(cache)
    assert key_file.stat().st_mode & 0o077 == 0
    assert key_file.read_text().strip() not in (cache / idcache.FILE).read_bytes().hex()


def test_the_secret_may_come_from_the_environment(
    signers: Signers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(idcache.KEY_ENV, "a repository secret")
    cache = tmp_path / "cache"
    signers.write(measured(11))
    check(signers, cache, signers.write(measured(12)))
    assert not idcache.secret_path().exists()
    parses = Parses(monkeypatch)
    check(signers, cache, signers.write(measured(13)))
    assert parses.count == 1
    monkeypatch.setenv(idcache.KEY_ENV, "another secret")  # rows tagged under another secret are not used
    parses.count = 0
    check(signers, cache, signers.write(measured(14)))
    assert parses.count == 4


def test_the_command_takes_a_cache_folder(signers: Signers, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = tmp_path / "cache"
    signers.write(measured(11))
    new = signers.write(measured(12, login=ALICE))
    args = ["validate", str(new), "--submissions", str(signers.root), "--allowed-signers", str(signers.file)]
    assert main([*args, "--cache", str(cache)]) == 0
    assert len(rows(cache)) == 2
    copy = signers.write(replay(11))
    assert main(["validate", str(copy), *args[2:], "--cache", str(cache)]) == 1
    assert "E-DUPLICATE-PAYLOAD" in capsys.readouterr().out


def test_the_cache_is_never_inside_the_submissions_folder(signers: Signers, capsys: pytest.CaptureFixture[str]) -> None:
    new = signers.write(measured(11))
    args = ["validate", str(new), "--submissions", str(signers.root), "--allowed-signers", str(signers.file)]
    assert main([*args, "--cache", str(signers.root / "cache")]) == 2
    assert "never writes there" in capsys.readouterr().err
    assert not (signers.root / "cache").exists()


def test_a_publish_build_after_one_file_is_added_parses_that_file_only(
    signers: Signers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ecocompute.publish.build import gather
    from ecocompute.publish.cache import RowCache
    from ecocompute.publish.inputs import Source

    source, cache = Source.at(signers.root, signers.file), RowCache(tmp_path / "build-cache")
    for seed in (11, 12, 13):
        signers.write(measured(seed))
    gathered, validated = gather([source], cache)
    assert validated == 3 and len(gathered.kept) == 3
    assert (tmp_path / "build-cache" / "v1" / idcache.FILE).is_file()
    parses = Parses(monkeypatch)
    signers.write(measured(14))
    gathered, validated = gather([source], cache)
    assert (validated, parses.count, len(gathered.kept)) == (1, 1, 4)
    signers.write(replay(12))  # and a copy is still a copy
    gathered, validated = gather([source], cache)
    assert validated == 1 and len(gathered.kept) == 4
    assert [v.codes for v in gathered.rejected] == [("E-DUPLICATE-PAYLOAD",)]


def test_forked_workers_use_the_cache_the_same_way(signers: Signers, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    original = signers.write(measured(11))
    others = [signers.write(measured(seed)) for seed in (12, 13, 14)]
    run: dict[str, Any] = {
        "allowed_signers": signers.file,
        "submissions_root": signers.root,
        "identity_cache": cache,
        "workers": 2,
    }
    assert all(r.accepted for r in validate_files(others, **run))
    copy = signers.write(replay(11))
    for _ in range(2):  # cold for the original, then warm for every file
        [result] = validate_files([copy], **run)
        assert original.name in next(f.message for f in result.findings if f.code == "E-DUPLICATE-PAYLOAD")
    assert len(rows(cache)) == 5


def test_no_place_for_the_secret_means_no_cache_not_an_error(
    signers: Signers, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))  # the secret's folder cannot be made
    signers.write(measured(11))
    [result] = check(signers, tmp_path / "cache", signers.write(replay(11)))
    assert "E-DUPLICATE-PAYLOAD" in codes(result)
    assert not (tmp_path / "cache").exists()
