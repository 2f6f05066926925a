"""Small pieces of the publisher: the archive, the manifest check, versions, the atomic swap, the workflow."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
import yaml

from ecocompute.publish.archive import write_archive
from ecocompute.publish.atomic import staged_output, swap_in
from ecocompute.publish.build import BuildResult
from ecocompute.publish.card import size_category
from ecocompute.publish.manifest import verify_folder
from ecocompute.publish.versions import changelog_text, changelog_versions, resolve_version
from ecocompute.schema.errors import UsageError

WORKFLOW = Path(__file__).parents[2] / ".github" / "workflows" / "publish.yml"


def test_archive_is_deterministic_and_complete(example_build: BuildResult, tmp_path: Path) -> None:
    first = write_archive(example_build.out, tmp_path / "a.zip").read_bytes()
    second = write_archive(example_build.out, tmp_path / "b.zip").read_bytes()
    assert first == second
    with zipfile.ZipFile(tmp_path / "a.zip") as z:
        names = z.namelist()
        assert all(info.date_time == (1980, 1, 1, 0, 0, 0) for info in z.infolist())
    expected = sorted(f"ecocompute-dataset/{p.relative_to(example_build.out).as_posix()}"
                      for p in example_build.out.rglob("*") if p.is_file())  # fmt: skip
    assert names == expected


def test_verify_folder_catches_added_and_missing_files(example_build: BuildResult, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(example_build.out, copy)
    assert verify_folder(copy)["version"] == "0.1.0"
    (copy / "extra.txt").write_text("x")
    with pytest.raises(UsageError, match=r"extra\.txt"):
        verify_folder(copy)
    (copy / "extra.txt").unlink()
    (copy / "CHANGELOG.md").unlink()
    with pytest.raises(UsageError, match=r"CHANGELOG\.md"):
        verify_folder(copy)
    with pytest.raises(UsageError, match=r"has no MANIFEST\.json"):
        verify_folder(tmp_path)


def test_changelog_lists_versions_newest_first() -> None:
    text = changelog_text()
    versions = changelog_versions(text)
    assert versions and versions[0] == resolve_version(None)
    assert resolve_version("v" + versions[0]) == versions[0]
    with pytest.raises(UsageError, match=r"has no '## X\.Y\.Z' entry"):
        resolve_version(None, "# nothing\n")


def test_swap_replaces_and_staging_is_removed_on_error(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with staged_output(out) as staging:
        (staging / "MANIFEST.json").write_text("1")
    assert (out / "MANIFEST.json").read_text() == "1"
    with pytest.raises(KeyError), staged_output(out) as staging:
        (staging / "MANIFEST.json").write_text("2")
        raise KeyError("boom")
    assert (out / "MANIFEST.json").read_text() == "1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    new = tmp_path / "new"
    new.mkdir()
    (new / "MANIFEST.json").write_text("3")
    swap_in(new, out)
    assert (out / "MANIFEST.json").read_text() == "3" and not new.exists()


def test_zenodo_target_names_the_service() -> None:
    from ecocompute.publish.zenodo import ZenodoTarget, client

    assert ZenodoTarget("1").where == "https://zenodo.org"
    assert ZenodoTarget("1", sandbox=True).where == "https://sandbox.zenodo.org"
    sandbox = client("token", ZenodoTarget("1", sandbox=True))
    assert sandbox.depositions_base == "https://sandbox.zenodo.org/api/deposit/depositions"
    local = client("token", ZenodoTarget("1", base_url="http://127.0.0.1:9/"))
    assert local.depositions_base == "http://127.0.0.1:9/api/deposit/depositions"
    assert local.access_token == "token"  # noqa: S105 - a test value


def test_size_categories() -> None:
    assert [size_category(n) for n in (0, 999, 1000, 54_321, 2_000_000)] == [
        "n<1K", "n<1K", "1K<n<10K", "10K<n<100K", "1M<n<10M",
    ]  # fmt: skip


def test_publish_workflow_triggers_environment_and_pins() -> None:
    text = WORKFLOW.read_text()
    workflow = yaml.safe_load(text)
    triggers = workflow[True]  # YAML 1.1 reads the key `on` as True
    assert triggers["push"]["branches"] == ["main"] and triggers["push"]["tags"] == ["v*"]
    jobs = workflow["jobs"]  # build, then push in jobs of their own (the only ones with tokens)
    assert jobs["push-hub"]["environment"] == jobs["release-zenodo"]["environment"] == "publish"
    assert "environment" not in jobs["build"]
    assert workflow["permissions"] == {"contents": "read"}
    uses = re.findall(r"uses:\s*(\S+)", text)
    assert uses and all(re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", u) for u in uses)
    hub = {step.get("name", ""): step for step in jobs["push-hub"]["steps"]}["Push to the Hugging Face Hub"]
    zenodo = {step.get("name", ""): step for step in jobs["release-zenodo"]["steps"]}["Release on Zenodo"]
    assert jobs["push-hub"]["if"] == "github.ref == 'refs/heads/main'"
    assert jobs["release-zenodo"]["if"].startswith("startsWith(github.ref, 'refs/tags/v')")
    assert hub["env"]["HF_TOKEN"] == "${{ secrets.HF_TOKEN }}"  # noqa: S105 - a reference to a secret
    assert zenodo["env"]["ZENODO_API_TOKEN"] == "${{ secrets.ZENODO_API_TOKEN }}"  # noqa: S105
    assert "--no-dry-run" in hub["run"] and "--no-dry-run" in zenodo["run"]
    build_steps = {step.get("name", ""): step for step in jobs["build"]["steps"]}
    assert "secrets." not in build_steps["Build (validates every submission first and refuses on any rejection)"]["run"]
