"""The push, end to end against local HTTP fakes of the Hub and Zenodo: the exact calls, the resulting state."""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest
from fakes import FakeHub, FakeZenodo, HubRepo

from ecocompute.cli import main
from ecocompute.publish.build import BuildResult
from ecocompute.publish.hub import HubError
from ecocompute.publish.push import PushRequest, push
from ecocompute.publish.zenodo import ZenodoError, ZenodoTarget
from ecocompute.schema.errors import UsageError

HF = "hf_test_token"
ZEN = "zenodo_test_token"
REPO = "ecocompute-test/energy"


@pytest.fixture
def folder(example_build: BuildResult, tmp_path: Path) -> Path:
    copy = tmp_path / "dataset"
    shutil.copytree(example_build.out, copy)
    return copy


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_dry_run_is_the_default_and_sends_nothing(folder: Path) -> None:
    with FakeHub(HF) as hub, FakeZenodo(ZEN) as zen:
        outcome = push(
            PushRequest(folder, REPO, ZenodoTarget("100", base_url=zen.url)),
            environ={"HF_ENDPOINT": hub.url},
        )
        assert hub.calls == [] and zen.calls == []
    assert outcome.hub is None and outcome.zenodo is None and outcome.version == "0.1.0"
    text = "\n".join(outcome.plan)
    assert "HF_TOKEN NOT SET" in text and "ZENODO_API_TOKEN NOT SET" in text
    assert f"create the dataset repository {REPO}" in text and "tag that commit v0.1.0" in text
    assert "open a new version of deposition 100" in text


@pytest.mark.parametrize("variable", ["HF_TOKEN", "ZENODO_API_TOKEN"])
def test_a_missing_token_names_its_variable(folder: Path, variable: str) -> None:
    env = {"HF_TOKEN": HF, "ZENODO_API_TOKEN": ZEN}
    del env[variable]
    with pytest.raises(UsageError, match=f"{variable} is not set"):
        push(PushRequest(folder, REPO, ZenodoTarget("100")), dry_run=False, environ=env)


def test_hub_push_creates_uploads_with_deletions_and_tags(folder: Path) -> None:
    with FakeHub(HF) as hub:
        hub.repos[REPO] = HubRepo(files={".gitattributes": b"*", "data/windows/old-shard.parquet": b"old",
                                         "figures/gone.png": b"old", "notes.txt": b"kept"})  # fmt: skip
        outcome = push(PushRequest(folder, REPO), dry_run=False, environ={"HF_TOKEN": HF, "HF_ENDPOINT": hub.url})
        repo = hub.repos[REPO]
        assert hub.calls == [
            ("POST", "/api/repos/create"),
            ("GET", f"/api/datasets/{REPO}/tree/main"),
            ("POST", "/api/validate-yaml"),
            ("POST", f"/api/datasets/{REPO}/preupload/main"),
            ("POST", f"/api/datasets/{REPO}/commit/main"),
            ("POST", f"/api/datasets/{REPO}/tag/{repo.commits[0]['oid']}"),
        ]
        assert all(r.headers.get("authorization") == f"Bearer {HF}" for r in hub.requests[1:] if "tree" not in r.path)
    assert {k: v for k, v in repo.files.items() if k not in (".gitattributes", "notes.txt")} == _files(folder)
    assert repo.files["notes.txt"] == b"kept"
    assert repo.tags == {"v0.1.0": repo.commits[0]["oid"]}
    assert outcome.hub is not None and outcome.hub.tag == "v0.1.0"
    assert hub.validated[0]["license"] == "cc-by-4.0"


def test_hub_refusal_is_one_clear_error(folder: Path) -> None:
    with FakeHub(HF) as hub:
        hub.fail[("POST", "/api/repos/create")] = 403
        with pytest.raises(HubError, match=r"refused to create the repository for .* \(HTTP 403\)"):
            push(PushRequest(folder, REPO), dry_run=False, environ={"HF_TOKEN": HF, "HF_ENDPOINT": hub.url})


def test_zenodo_new_version_keeps_metadata_replaces_files_and_publishes(folder: Path) -> None:
    previous = {"title": "ecocompute", "upload_type": "dataset", "creators": [{"name": "x"}], "version": "0.0.9"}
    with FakeZenodo(ZEN) as zen:
        zen.add_published(100, previous, {"ecocompute-dataset.zip": b"old", "stale.csv": b"old"})
        outcome = push(PushRequest(folder, zenodo=ZenodoTarget("100", base_url=zen.url)), dry_run=False,
                       environ={"ZENODO_API_TOKEN": ZEN})  # fmt: skip
        base = "/api/deposit/depositions"
        assert zen.calls == [
            ("GET", f"{base}/100"),
            ("POST", f"{base}/100/actions/newversion"),
            ("GET", f"{base}/200"),
            ("PUT", f"{base}/200"),
            ("DELETE", f"{base}/200/files/file-200-0"),
            ("DELETE", f"{base}/200/files/file-200-1"),
            ("PUT", "/api/files/bucket-200/ecocompute-dataset.zip"),
            ("PUT", "/api/files/bucket-200/README.md"),
            ("PUT", "/api/files/bucket-200/CHANGELOG.md"),
            ("PUT", "/api/files/bucket-200/MANIFEST.json"),
            ("POST", f"{base}/200/actions/publish"),
        ]
        assert all(r.query["access_token"] == [ZEN] for r in zen.requests)
        draft = zen.depositions[200]
    assert draft.submitted and zen.depositions[100].metadata["version"] == "0.0.9"
    assert {k: v for k, v in draft.metadata.items() if k not in ("version", "publication_date")} == {
        k: v for k, v in previous.items() if k != "version"
    }
    assert draft.metadata["version"] == "0.1.0"
    assert sorted(draft.files) == ["CHANGELOG.md", "MANIFEST.json", "README.md", "ecocompute-dataset.zip"]
    assert draft.files["MANIFEST.json"] == (folder / "MANIFEST.json").read_bytes()
    with zipfile.ZipFile(io.BytesIO(draft.files["ecocompute-dataset.zip"])) as z:
        inside = {name.removeprefix("ecocompute-dataset/"): z.read(name) for name in z.namelist()}
    assert inside == _files(folder)
    assert outcome.zenodo is not None and outcome.zenodo.doi == "10.5072/zenodo.200"


def test_zenodo_first_record(folder: Path) -> None:
    with FakeZenodo(ZEN) as zen:
        push(PushRequest(folder, zenodo=ZenodoTarget(None, new=True, base_url=zen.url)), dry_run=False,
             environ={"ZENODO_API_TOKEN": ZEN})  # fmt: skip
        assert [c[0] + " " + c[1].split("/")[-1] for c in zen.calls] == [
            "POST depositions", "PUT ecocompute-dataset.zip", "PUT README.md", "PUT CHANGELOG.md",
            "PUT MANIFEST.json", "POST publish",
        ]  # fmt: skip
        record = zen.depositions[200]
    assert record.submitted and record.metadata["license"] == "cc-by-4.0"
    assert record.metadata["upload_type"] == "dataset" and record.metadata["version"] == "0.1.0"


def test_zenodo_refusal_is_one_clear_error(folder: Path) -> None:
    with FakeZenodo(ZEN) as zen:
        zen.add_published(100, {"title": "t"}, {})
        zen.fail[("POST", "/api/deposit/depositions/100/actions/newversion")] = 403
        with pytest.raises(ZenodoError, match=r"refused to publish a new version of deposition 100 \(HTTP 403\)"):
            push(PushRequest(folder, zenodo=ZenodoTarget("100", base_url=zen.url)), dry_run=False,
                 environ={"ZENODO_API_TOKEN": ZEN})  # fmt: skip


def test_an_edited_build_is_not_pushed(folder: Path) -> None:
    (folder / "README.md").write_text("edited by hand")
    with pytest.raises(UsageError, match=r"differs from its MANIFEST\.json"):
        push(PushRequest(folder, REPO))


def test_request_checks(folder: Path) -> None:
    with pytest.raises(UsageError, match="nothing to push to"):
        push(PushRequest(folder))
    with pytest.raises(UsageError, match="not a dataset id"):
        push(PushRequest(folder, "no-slash"))
    with pytest.raises(UsageError, match="exactly one of"):
        push(PushRequest(folder, zenodo=ZenodoTarget("1", new=True)))


def test_cli_push_both_services(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeHub(HF) as hub, FakeZenodo(ZEN) as zen:
        zen.add_published(7, {"title": "t", "version": "0.0.1"}, {})
        for name, value in {"HF_TOKEN": HF, "HF_ENDPOINT": hub.url, "ZENODO_API_TOKEN": ZEN,
                            "ZENODO_BASE_URL": zen.url}.items():  # fmt: skip
            monkeypatch.setenv(name, value)
        code = main(["publish", "push", "--dataset", str(folder), "--hf-repo", REPO, "--zenodo-deposition", "7",
                     "--no-dry-run"])  # fmt: skip
        assert code == 0
        assert [c[0] for c in hub.calls][-1] == "POST" and zen.calls[-1][1].endswith("/actions/publish")
    out = capsys.readouterr().out
    assert "tagged v0.1.0" in out and "DOI 10.5072/zenodo.200" in out


def test_cli_push_dry_run_prints_the_plan(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["publish", "push", "--dataset", str(folder), "--hf-repo", REPO]) == 0
    out = capsys.readouterr().out
    files = sum(1 for p in folder.rglob("*") if p.is_file())
    assert "dry run, nothing sent" in out and f"upload {files} files" in out


def test_cli_push_without_token_is_one_red_line(
    folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("HF_TOKEN", raising=False)
    assert main(["publish", "push", "--dataset", str(folder), "--hf-repo", REPO, "--no-dry-run"]) == 2
    err = capsys.readouterr().err
    assert "HF_TOKEN is not set" in err and "Traceback" not in err
    assert json.loads((folder / "MANIFEST.json").read_text())["version"] == "0.1.0"
