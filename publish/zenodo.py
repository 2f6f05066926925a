"""Releasing a build on Zenodo through zenodo-client: a new version of the concept record, or a first record.

zenodo-client (``zenodo_client.Zenodo``) talks to ``<base>/api/deposit/depositions`` with ``requests`` and the
token as the ``access_token`` query parameter. A new version (``--zenodo-deposition ID``, any published version of
the record) goes: read the deposition, ``actions/newversion``, read the new draft, put back the same metadata with
our version and today's date, delete the files the draft copied from the previous version, upload ours into the
draft's bucket, ``actions/publish``. zenodo-client has no call for the metadata update and the file deletion, so
those two go through ``requests`` with the client's own base URL, token and headers. A first record
(``--zenodo-new``) is ``Zenodo.create`` with the metadata of ``templates/zenodo.json``.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ecocompute.publish.archive import ARCHIVE_NAME, write_archive
from ecocompute.publish.versions import template_text
from ecocompute.schema.errors import EcocomputeError

TOKEN_VARIABLE = "ZENODO_API_TOKEN"  # noqa: S105 - the name of the variable, not a token
LOOSE_FILES = ("README.md", "CHANGELOG.md", "MANIFEST.json")
TIMEOUT_S = 300


class ZenodoError(EcocomputeError):
    """Zenodo refused a step of the release."""


@dataclass(frozen=True)
class ZenodoTarget:
    """Which record: a new version of ``deposition`` or a new record; the sandbox; a base URL (tests, mirrors)."""

    deposition: str | None
    new: bool = False
    sandbox: bool = False
    base_url: str | None = None

    @property
    def where(self) -> str:
        """The service in words."""
        return self.base_url or ("https://sandbox.zenodo.org" if self.sandbox else "https://zenodo.org")


@dataclass(frozen=True)
class ZenodoResult:
    """The published deposition."""

    deposition: str
    doi: str | None
    url: str | None


def zenodo_plan(folder: Path, version: str, target: ZenodoTarget) -> list[str]:
    """What :func:`release_on_zenodo` will do, in words (the dry run prints it)."""
    files = f"{ARCHIVE_NAME} (the whole folder) and {', '.join(LOOSE_FILES)}"
    if target.new:
        return [f"create a new record on {target.where} with the metadata of templates/zenodo.json, version {version}",
                f"upload {files}", "publish it"]  # fmt: skip
    return [
        f"open a new version of deposition {target.deposition} on {target.where} (same metadata, version {version})",
        "delete the files the new draft copied from the previous version",
        f"upload {files}",
        "publish the new version",
    ]


def staged_files(folder: Path, into: Path) -> list[Path]:
    """The files to upload: the deterministic zip of the folder, then the card, changelog and manifest."""
    paths = [write_archive(folder, into / ARCHIVE_NAME)]
    return paths + [folder / name for name in LOOSE_FILES]


def new_record_metadata(version: str) -> dict[str, Any]:
    """The metadata of a first record: templates/zenodo.json with the version and today's date."""
    document = json.loads(template_text("zenodo.json"))
    metadata: dict[str, Any] = document["metadata"]
    return {**metadata, "version": version, "publication_date": datetime.now(UTC).date().isoformat()}


def client(token: str, target: ZenodoTarget) -> Any:
    """A zenodo_client.Zenodo for ``target``, pointed at ``target.base_url`` when one is given."""
    from zenodo_client import Zenodo

    zenodo = Zenodo(access_token=token, sandbox=target.sandbox)
    if target.base_url is not None:
        zenodo.base = target.base_url.rstrip("/")
        zenodo.api_base = zenodo.base + "/api"
        zenodo.depositions_base = zenodo.api_base + "/deposit/depositions"
    return zenodo


class _Release:
    """The steps of one release, each raising ZenodoError with the step's name on an HTTP error."""

    def __init__(self, zenodo: Any) -> None:
        import requests
        from zenodo_client.api import HEADERS

        self.zenodo = zenodo
        self.requests = requests
        self.headers = HEADERS
        self.params = {"access_token": zenodo.access_token}

    def _json(self, response: Any) -> dict[str, Any]:
        data = response.json()
        if not isinstance(data, dict):
            raise ZenodoError(f"Zenodo answered {response.request.method} {response.url} with {type(data).__name__}")
        return data

    def deposition(self, deposition_id: str) -> dict[str, Any]:
        return self._json(self.zenodo._get_deposition(deposition_id))

    def new_version(self, deposition_id: str) -> str:
        links = self._json(self.zenodo.new_version(deposition_id, sleep=False)).get("links", {})
        draft = links.get("latest_draft") if isinstance(links, dict) else None
        if not isinstance(draft, str):
            raise ZenodoError(f"Zenodo's newversion answer for {deposition_id} has no links.latest_draft")
        return draft.rstrip("/").rsplit("/", 1)[-1]

    def put_metadata(self, deposition_id: str, metadata: dict[str, Any]) -> None:
        url = f"{self.zenodo.depositions_base}/{deposition_id}"
        response = self.requests.put(
            url, json={"metadata": metadata}, params=self.params, headers=self.headers, timeout=15
        )
        response.raise_for_status()

    def delete_files(self, deposition_id: str, files: list[dict[str, Any]]) -> None:
        for entry in files:
            url = f"{self.zenodo.depositions_base}/{deposition_id}/files/{entry['id']}"
            response = self.requests.delete(url, params=self.params, headers=self.headers, timeout=15)
            response.raise_for_status()

    def upload(self, bucket: str, paths: list[Path]) -> None:
        self.zenodo._upload_files(bucket=bucket, paths=paths, timeout=TIMEOUT_S)

    def publish(self, deposition_id: str) -> dict[str, Any]:
        return self._json(self.zenodo.publish(deposition_id, sleep=False))


def _result(published: dict[str, Any]) -> ZenodoResult:
    links = published.get("links") if isinstance(published.get("links"), dict) else {}
    return ZenodoResult(str(published.get("id")), published.get("doi"), (links or {}).get("html"))


def _new_version(release: _Release, deposition_id: str, version: str, paths: list[Path]) -> ZenodoResult:
    current = release.deposition(deposition_id)
    draft_id = release.new_version(deposition_id) if current.get("submitted") else str(current["id"])
    draft = release.deposition(draft_id)
    metadata = {**draft["metadata"], "version": version, "publication_date": datetime.now(UTC).date().isoformat()}
    release.put_metadata(draft_id, metadata)
    release.delete_files(draft_id, list(draft.get("files") or []))
    release.upload(draft["links"]["bucket"], paths)
    return _result(release.publish(draft_id))


def release_on_zenodo(folder: Path, version: str, token: str, target: ZenodoTarget) -> ZenodoResult:
    """Publish ``folder`` as a new version of the record (or a first record); raise ZenodoError on refusal."""
    import requests

    zenodo = client(token, target)
    step = "release"
    with tempfile.TemporaryDirectory(prefix="ecocompute-zenodo-") as tmp:
        paths = staged_files(folder, Path(tmp))
        try:
            if target.new:
                step = "create the record"
                response = zenodo.create({"metadata": new_record_metadata(version)}, paths, publish=True)
                return _result(response.json())
            if target.deposition is None:
                raise ZenodoError("pass --zenodo-deposition ID (a version of the record) or --zenodo-new")
            step = f"publish a new version of deposition {target.deposition}"
            return _new_version(_Release(zenodo), target.deposition, version, paths)
        except requests.HTTPError as exc:
            status = exc.response.status_code if exc.response is not None else "no response"
            detail = exc.response.text[:300] if exc.response is not None else str(exc)
            raise ZenodoError(f"Zenodo refused to {step} (HTTP {status}): {detail}") from None
        except requests.RequestException as exc:
            raise ZenodoError(f"cannot reach Zenodo at {target.where} to {step}: {type(exc).__name__}") from None
        except (ValueError, KeyError) as exc:
            raise ZenodoError(f"Zenodo's answer could not be read while trying to {step}: {exc}") from None
