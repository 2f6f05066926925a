"""The publisher's commands: build, demo; exit codes and one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from publish_helpers import EXAMPLES, SMALL, TreeMaker

from ecocompute.cli import main
from ecocompute.validate.core import discover


def test_build_command(tmp_path: Path, make_tree: TreeMaker, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_tree(SMALL[:2])
    command = ["publish", "build", "--submissions", str(root), "--cache", str(tmp_path / "cache")]
    assert main([*command, "--out", str(tmp_path / "out")]) == 0
    assert "2 file(s) validated, 0 from the cache" in capsys.readouterr().out
    assert main([*command, "--out", str(tmp_path / "again")]) == 0
    assert "0 file(s) validated, 2 from the cache" in capsys.readouterr().out
    assert (tmp_path / "out" / "MANIFEST.json").is_file()


def test_build_command_refuses_with_one_red_line(
    tmp_path: Path, make_tree: TreeMaker, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_tree(SMALL[:1])
    target = discover(root)[0]
    target.write_text(target.read_text().replace('"batch_size": 1', '"batch_size": 2', 1))
    code = main(["publish", "build", "--submissions", str(root), "--out", str(tmp_path / "out"), "--strict"])
    assert code == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "rejected by the validator" in err
    assert len([line for line in err.splitlines() if line.strip()]) == 1


def test_examples_need_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    common = ["publish", "build", "--submissions", str(EXAMPLES)]
    assert main([*common, "--out", str(tmp_path / "a")]) == 0
    assert "18 example(s) left out" in capsys.readouterr().out
    assert main([*common, "--include-examples", "--out", str(tmp_path / "b")]) == 0
    assert "18 submissions" in capsys.readouterr().out


def test_demo_loads_with_datasets_and_prints_both_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "160")
    empty = tmp_path / "submissions"
    empty.mkdir()
    code = main(["publish", "demo", "--out", str(tmp_path / "demo"), "--submissions", str(empty),
                 "--examples", str(EXAMPLES)])  # fmt: skip
    assert code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "EXAMPLES INCLUDED" in out and 'datasets.load_dataset("' in out
    assert "J/token · Synthetic example GPU · eager · batch 1 · 128+256 tokens · random-init" in out
    assert "Crossover · Synthetic example GPU · 128+256 tokens · random-init" in out
    assert "crosses" in out and "costs more" in out


def test_demo_without_the_example_set_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["publish", "demo", "--out", str(tmp_path / "d"), "--examples", str(tmp_path / "none")]) == 2
    assert "example set" in capsys.readouterr().err
