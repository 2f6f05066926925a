"""The build: validate first, exactly once, byte-identical, atomic, examples only when asked."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pandera.polars as pa
import polars as pl
import pytest
from publish_examples import example_document
from publish_helpers import EXAMPLES, SMALL, TreeMaker

from ecocompute.publish.build import BuildOptions, BuildResult, build
from ecocompute.publish.inputs import BuildRefusedError, Source
from ecocompute.publish.manifest import read_manifest
from ecocompute.schema.errors import UsageError
from ecocompute.schema.io import load_submission
from ecocompute.schema.tables import MeasurementsTable, SubmissionsTable, WindowsTable
from ecocompute.validate.core import discover


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _read(folder: Path, config: str) -> pl.DataFrame:
    return pl.read_parquet(folder / "data" / config / "train-00000-of-00001.parquet")


def test_two_builds_are_byte_identical(tmp_path: Path, example_build: BuildResult) -> None:
    again = build([Source.at(EXAMPLES)], tmp_path / "again", BuildOptions(include_examples=True))
    first, second = _snapshot(example_build.out), _snapshot(again.out)
    assert sorted(first) == sorted(second)
    different = [name for name in first if first[name] != second[name]]
    assert different == []
    assert any(name.endswith(".png") for name in first) and any(name.endswith(".parquet") for name in first)


def test_every_window_appears_exactly_once(example_build: BuildResult) -> None:
    expected = []
    for path in discover(EXAMPLES):
        p = load_submission(path).payload
        for m in p.measurements:
            expected += [(p.submission_id, m.precision.value, False, w.index) for w in m.windows]
            expected += [(p.submission_id, m.precision.value, True, w.index) for w in m.warmup]
    table = _read(example_build.out, "windows")
    got = list(table.select("submission_id", "precision", "warmup", "window_index").iter_rows())
    assert len(got) == len(set(got)) == len(expected)
    assert sorted(got) == sorted(expected)


def test_manifest_records_each_submission_hash_and_each_file(example_build: BuildResult) -> None:
    manifest = read_manifest(example_build.out)
    by_path = {entry["path"]: entry for entry in manifest["submissions"]}
    files = discover(EXAMPLES)
    assert len(by_path) == len(files)
    for path in files:
        entry = by_path[f"examples/{path.relative_to(EXAMPLES).as_posix()}"]
        assert entry["content_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
        p = load_submission(path).payload
        assert entry["windows"] == sum(len(m.windows) for m in p.measurements)
    assert manifest["counts"]["windows"] == sum(e["windows"] for e in manifest["submissions"])
    listed = {entry["path"]: entry["sha256"] for entry in manifest["files"]}
    on_disk = {name: hashlib.sha256(data).hexdigest() for name, data in _snapshot(example_build.out).items()}
    on_disk.pop("MANIFEST.json")
    assert listed == on_disk


def _checked(frame: pl.DataFrame, model: type[pa.DataFrameModel]) -> pl.DataFrame:
    """``frame`` checked by ``model`` (with ``passes_cv_gate``, which the build adds where the model lacks it)."""
    assert frame["passes_cv_gate"].dtype == pl.Boolean
    if "passes_cv_gate" not in model.to_schema().columns:
        frame = frame.drop("passes_cv_gate")
    return model.validate(frame)


@pytest.mark.parametrize("suffix", ["", "_all"])
def test_tables_pass_their_pandera_models_and_are_sorted(example_build: BuildResult, suffix: str) -> None:
    windows = _checked(_read(example_build.out, "windows" + suffix), WindowsTable)
    measurements = _checked(_read(example_build.out, "measurements" + suffix), MeasurementsTable)
    submissions = _checked(_read(example_build.out, "submissions" + suffix), SubmissionsTable)
    assert windows.equals(windows.sort("submission_id", "precision", "warmup", "window_index"))
    assert measurements.equals(measurements.sort("submission_id", "precision"))
    assert submissions["submission_id"].to_list() == sorted(submissions["submission_id"].to_list())
    assert submissions["is_example"].all()


def test_measurements_name_their_workload_length(example_build: BuildResult) -> None:
    """prompt_tokens sits beside new_tokens and both are the submission's, as J/token depends on both."""
    measurements = _read(example_build.out, "measurements")
    assert measurements.columns.index("prompt_tokens") + 1 == measurements.columns.index("new_tokens")
    submissions = _read(example_build.out, "submissions").select("submission_id", "prompt_tokens", "new_tokens")
    joined = measurements.join(submissions, on="submission_id", suffix="_submission")
    assert joined.height == measurements.height
    assert (joined["prompt_tokens"] == joined["prompt_tokens_submission"]).all()
    assert (joined["new_tokens"] == joined["new_tokens_submission"]).all()
    assert joined["prompt_tokens"].unique().to_list() == [128]


def test_a_rejected_file_is_left_out_and_published_in_rejections(tmp_path: Path, make_tree: TreeMaker) -> None:
    root = make_tree()
    victim = discover(root)[1]
    victim.write_text(victim.read_text().replace('"temp_c_end": 42.0', '"temp_c_end": 43.0', 1))
    result = build([Source.at(root)], tmp_path / "out")
    assert (result.submissions, result.rejected) == (2, 1)
    (entry,) = json.loads((result.out / "rejections.json").read_text())
    assert entry["file"] == f"submissions/{victim.relative_to(root)}" and "E-SIGNATURE" in entry["codes"]
    assert entry["submission_id"] == victim.stem and len(entry["messages"]) == len(entry["codes"])
    assert entry["submission_id"] not in _read(result.out, "submissions_all")["submission_id"].to_list()
    out = tmp_path / "strict"
    with pytest.raises(BuildRefusedError) as refused:
        build([Source.at(root)], out, BuildOptions(strict=True))
    assert "1 of 3 submissions are rejected" in str(refused.value)
    assert "E-SIGNATURE" in str(refused.value) and victim.name in str(refused.value)
    assert not out.exists()


def test_e_cv_alone_enters_the_all_tier_only(tmp_path: Path, make_tree: TreeMaker) -> None:
    """A file whose only error is E-CV: rows in the _all configs marked passes_cv_gate = false, not in the others."""
    noisy = example_document(SMALL[0], 300, n_windows=6)
    noisy["payload"].update(example=False, notes="synthetic test data")
    noisy["payload"]["hardware"]["gpu_name"] = "NVIDIA H200"  # a published file must be on a GPU the validator knows
    for i, window in enumerate(noisy["payload"]["measurements"][1]["windows"]):
        window["energy_j"] *= 1.0 + (0.08 if i % 2 else -0.08)
        window["energy_j_power_integrated"] = window["energy_j"]
    root = make_tree(SMALL[1:2], documents=[noisy])
    result = build([Source.at(root)], tmp_path / "out")
    assert (result.submissions, result.submissions_all, result.rejected) == (1, 2, 0)
    noisy_id = noisy["payload"]["submission_id"]
    for config in ("measurements", "windows", "submissions"):
        gated, everything = _read(result.out, config), _read(result.out, config + "_all")
        assert noisy_id not in gated["submission_id"].to_list() and gated["passes_cv_gate"].all()
        marked = everything.filter(pl.col("submission_id") == noisy_id)
        # a measurement (and its windows) is marked by its own CV; the submission fails when one of them does
        expected = {"fp16": True, "nf4": False} if config != "submissions" else {None: False}
        got = {r.get("precision"): r["passes_cv_gate"] for r in marked.iter_rows(named=True)}
        assert marked.height > 0 and got == expected
    manifest = read_manifest(result.out)
    assert manifest["counts"]["submissions"] == 1 and manifest["counts"]["submissions_all"] == 2


def test_a_rebuild_validates_only_what_changed(
    tmp_path: Path, make_tree: TreeMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree()
    cache = tmp_path / "cache"
    monkeypatch.setattr("ecocompute.publish.build.ROWS_BATCH", 2)  # three files: two row batches, two chunks
    first = build([Source.at(root)], tmp_path / "a", BuildOptions(cache=cache))
    assert len(list((cache / "v1" / "chunks").iterdir())) == 2
    again = build([Source.at(root)], tmp_path / "b", BuildOptions(cache=cache))
    assert (first.validated, again.validated) == (3, 0)
    assert _snapshot(first.out) == _snapshot(again.out)
    victim = discover(root)[0]
    victim.write_text(victim.read_text().replace('"temp_c_end": 42.0', '"temp_c_end": 43.0', 1))
    changed = build([Source.at(root)], tmp_path / "c", BuildOptions(cache=cache))
    assert (changed.validated, changed.rejected, changed.submissions) == (1, 1, 2)
    (tmp_path / "cache-signers").write_text((root / "allowed_signers").read_text() + "\n")
    resigned = build([Source.at(root, tmp_path / "cache-signers")], tmp_path / "d", BuildOptions(cache=cache))
    assert resigned.validated == 3  # another allowed_signers file: every verdict is made again


def test_sorting_part_by_part_and_streamed_compaction_change_no_byte(
    tmp_path: Path, example_build: BuildResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tables sorted in parts of a few rows, from chunks of two files compacted into one: the same configs."""
    monkeypatch.setattr("ecocompute.publish.build.ROWS_BATCH", 2)
    monkeypatch.setattr("ecocompute.publish.cache.MAX_CHUNKS", 1)
    monkeypatch.setattr("ecocompute.publish.configs.PART_ROWS", 3)
    cache = tmp_path / "cache"
    parts = build([Source.at(EXAMPLES)], tmp_path / "parts", BuildOptions(include_examples=True, cache=cache))
    assert len(list((cache / "v1" / "chunks").iterdir())) == 1  # the chunks were compacted
    whole, cut = _snapshot(example_build.out / "data"), _snapshot(parts.out / "data")
    assert sorted(whole) == sorted(cut) and len(whole) == 6
    assert [name for name in whole if whole[name] != cut[name]] == []
    assert _read(parts.out, "windows").height > 3 * 4  # more than four parts


def test_validating_in_a_child_process_builds_the_same_bytes(
    tmp_path: Path, example_build: BuildResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold build validates in a child process from APART_FROM files on: same files, verdicts from the cache."""
    monkeypatch.setattr("ecocompute.publish.build.APART_FROM", 1)
    monkeypatch.setattr("ecocompute.publish.build.ROWS_BATCH", 2)  # passed to the child: one chunk per two files
    cache = tmp_path / "cache"
    apart = build([Source.at(EXAMPLES)], tmp_path / "apart", BuildOptions(include_examples=True, cache=cache))
    assert apart.validated == len(discover(EXAMPLES)) > 2
    assert len(list((cache / "v1" / "chunks").iterdir())) == (apart.validated + 1) // 2
    assert _snapshot(apart.out) == _snapshot(example_build.out)


def test_a_failure_in_the_validation_process_is_raised_in_the_build(tmp_path: Path) -> None:
    from ecocompute.publish.build import _validate_apart
    from ecocompute.publish.cache import RowCache
    from ecocompute.publish.inputs import input_files

    bad = Source(EXAMPLES, tmp_path)  # a folder where the allowed_signers file should be
    files = [replace(f, source=bad) for f in input_files([Source.at(EXAMPLES)])[:2]]
    with pytest.raises(UsageError, match="is not a regular file"):
        _validate_apart(RowCache(tmp_path / "cache"), bad, files)


def test_an_unchanged_rebuild_copies_what_it_derived(
    tmp_path: Path, make_tree: TreeMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same configs, same code: the analyses, the estimator's files and the site come from the cache, unchanged."""
    root, cache = make_tree(), tmp_path / "cache"
    first = build([Source.at(root)], tmp_path / "a", BuildOptions(cache=cache))
    kept = sorted(p.name.rsplit("-", 1)[0] for p in (cache / "v1" / "derived").iterdir())
    assert kept == ["analysis-measurements", "analysis-measurements_all", "configs", "estimate", "site"]

    def computed(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("computed again although nothing changed")

    for name in ("write_configs", "analyse", "write_estimate", "write_build_site"):
        monkeypatch.setattr(f"ecocompute.publish.build.{name}", computed)
    again = build([Source.at(root)], tmp_path / "b", BuildOptions(cache=cache))
    assert _snapshot(first.out) == _snapshot(again.out)
    monkeypatch.setattr("ecocompute.publish.build.code_digest", lambda: b"other code")
    with pytest.raises(AssertionError, match="computed again"):  # another code digest: nothing is reused
        build([Source.at(root)], tmp_path / "c", BuildOptions(cache=cache))


def test_kept_analysis_frames_equal_fresh_ones(tmp_path: Path, example_build: BuildResult) -> None:
    from polars.testing import assert_frame_equal

    from ecocompute.analysis.results import analyse
    from ecocompute.publish.memo import FRAMES, Derived

    measurements, windows = _read(example_build.out, "measurements_all"), _read(example_build.out, "windows_all")
    fresh = analyse(measurements, windows, config="measurements_all", n_boot=200)
    derived = Derived(tmp_path / "derived")
    derived.results("analysis", [b"k"], measurements, lambda: fresh)
    kept = derived.results("analysis", [b"k"], measurements, lambda: pytest.fail("not kept"))
    assert (kept.config, kept.n_boot, kept.seed) == (fresh.config, fresh.n_boot, fresh.seed)
    for frame in FRAMES:
        assert_frame_equal(getattr(kept, frame), getattr(fresh, frame))


def test_examples_stay_out_unless_asked(tmp_path: Path, make_tree: TreeMaker) -> None:
    real = make_tree(SMALL[:2])
    demo = make_tree(SMALL[2:], example=True, name="examples", first_seed=200)
    plain = build([Source.at(real), Source.at(demo)], tmp_path / "plain")
    assert plain.submissions == 2 and plain.skipped_examples == 1
    assert not _read(plain.out, "submissions")["is_example"].any()
    card = (plain.out / "README.md").read_text()
    assert "WARNING" not in card and "1 example submission(s) were left out" in card
    assert read_manifest(plain.out)["skipped_examples"] == [f"examples/{discover(demo)[0].relative_to(demo)}"]
    mixed = build([Source.at(real), Source.at(demo)], tmp_path / "mixed", BuildOptions(include_examples=True))
    assert mixed.submissions == 3
    assert _read(mixed.out, "submissions")["is_example"].sum() == 1
    assert "WARNING: this build includes EXAMPLE submissions" in (mixed.out / "README.md").read_text()


def test_a_failing_build_leaves_the_previous_output_untouched(
    tmp_path: Path, make_tree: TreeMaker, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree()
    out = tmp_path / "out"
    build([Source.at(root)], out)
    before = _snapshot(out)

    def broken(*_args: object, **_kwargs: object) -> None:
        raise RuntimeError("disk full while drawing")

    monkeypatch.setattr("ecocompute.publish.build.draw_figures", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        build([Source.at(root)], out, BuildOptions(version="0.1.0"))
    assert _snapshot(out) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.")] == []


KILLER = """
import os, signal, sys
from pathlib import Path
import ecocompute.publish.build as b
from ecocompute.publish.inputs import Source
import ecocompute.publish.configs as c
real = c.sink
def write_then_die(rows, path):
    real(rows, path)
    os.kill(os.getpid(), signal.SIGKILL)
c.sink = write_then_die
b.build([Source.at(Path(sys.argv[1]))], Path(sys.argv[2]))
"""


def test_a_killed_build_leaves_the_previous_output_untouched(tmp_path: Path, make_tree: TreeMaker) -> None:
    root = make_tree()
    out = tmp_path / "out"
    build([Source.at(root)], out)
    before = _snapshot(out)
    killed = subprocess.run([sys.executable, "-c", KILLER, str(root), str(out)], check=False)
    assert killed.returncode == -9
    assert _snapshot(out) == before
    leftovers = [p for p in tmp_path.iterdir() if p.name.startswith(".out.building-")]
    assert len(leftovers) == 1 and any(leftovers[0].rglob("*.parquet"))
    build([Source.at(root)], out)
    assert _snapshot(out) == before
    assert not leftovers[0].exists()


def test_refuses_to_replace_a_folder_that_is_not_a_build(tmp_path: Path, make_tree: TreeMaker) -> None:
    root = make_tree(SMALL[:1])
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("do not lose me")
    with pytest.raises(UsageError, match="not a previous build"):
        build([Source.at(root)], precious)
    assert (precious / "thesis.tex").read_text() == "do not lose me"


def test_version_needs_a_changelog_entry(tmp_path: Path, make_tree: TreeMaker) -> None:
    root = make_tree(SMALL[:1])
    with pytest.raises(UsageError, match=r"no entry in publish/templates/CHANGELOG\.md"):
        build([Source.at(root)], tmp_path / "out", BuildOptions(version="9.9.9"))
    with pytest.raises(UsageError, match="not a version"):
        build([Source.at(root)], tmp_path / "out", BuildOptions(version="latest"))
    assert build([Source.at(root)], tmp_path / "out").version == "0.1.0"


def test_the_same_id_in_two_folders_is_refused(tmp_path: Path, make_tree: TreeMaker) -> None:
    first = make_tree(SMALL[:1])
    second = make_tree(SMALL[:1], name="other")
    with pytest.raises(BuildRefusedError, match="is in both"):
        build([Source.at(first), Source.at(second)], tmp_path / "out")


def test_an_empty_submissions_folder_builds_an_empty_dataset(tmp_path: Path) -> None:
    root = tmp_path / "submissions"
    root.mkdir()
    result = build([Source.at(root)], tmp_path / "out")
    assert (result.submissions, result.windows) == (0, 0)
    assert _read(result.out, "windows").height == 0
    assert "No measurements yet." in (result.out / "README.md").read_text()


def test_missing_folder_and_missing_signers_are_usage_errors(tmp_path: Path, make_tree: TreeMaker) -> None:
    with pytest.raises(UsageError, match="does not exist: pass --submissions"):
        build([Source.at(tmp_path / "nope")], tmp_path / "out")
    (tmp_path / "a-file.json").write_text("{}\n")
    with pytest.raises(UsageError, match="is not a folder: pass --submissions"):
        build([Source.at(tmp_path / "a-file.json")], tmp_path / "out")
    root = make_tree(SMALL[:1])
    (root / "allowed_signers").unlink()
    with pytest.raises(UsageError, match="pass --allowed-signers"):
        build([Source.at(root)], tmp_path / "out")


def test_manifest_is_json_without_timestamps(example_build: BuildResult) -> None:
    text = (example_build.out / "MANIFEST.json").read_text()
    manifest = json.loads(text)
    assert manifest["version"] == "0.1.0" and manifest["schema_version"] == "1.2"
    assert "built_at" not in text and not re.search(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", text)  # no time stamp
