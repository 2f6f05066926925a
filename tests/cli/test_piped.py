"""Piped output (a CI log, ``tee``, ``| cat``; no COLUMNS, not a terminal) holds whole tables and whole help."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from rich.console import Console
from rich.table import Table

from ecocompute.cli import app, main
from ecocompute.console import RULE_WIDTH, _console
from ecocompute.helpwidth import PIPED_HELP_WIDTH, FoldingTable

EXAMPLE = Path(__file__).parents[1] / "data" / "example"


def _all(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        found += _all(sub, (*path, name))
    return found


@pytest.mark.parametrize("path", _all(typer.main.get_command(app)), ids=lambda p: " ".join(p) or "ecocompute")
def test_piped_help_is_whole(path: tuple[str, ...], capsys: pytest.CaptureFixture[str],
                             monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("TERMINAL_WIDTH", raising=False)
    assert main([*path, "--help"]) == 0
    text = capsys.readouterr().out
    assert "…" not in text
    assert max(len(line) for line in text.splitlines()) == PIPED_HELP_WIDTH


def test_columns_still_sets_the_help_width(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "70")
    assert main(["collect", "--help"]) == 0
    text = capsys.readouterr().out
    assert max(len(line) for line in text.splitlines()) == 70
    assert "…" not in text  # 70 columns are too few for some defaults: they fold onto the next line


def test_a_folding_table_folds_a_long_word_where_a_table_cuts_it() -> None:
    word = "~/.cache/ecocompute/runs/a-long-path-that-does-not-fit"
    rendered = {}
    for kind in (Table, FoldingTable):
        table = kind(show_header=False, box=None)
        table.add_row("--state-dir", word)
        buffer = io.StringIO()
        Console(file=buffer, width=40).print(table)
        rendered[kind] = buffer.getvalue()
    assert "…" in rendered[Table]
    assert "…" not in rendered[FoldingTable] and "".join(rendered[FoldingTable].split()).endswith(word)


def test_the_collector_s_own_command_has_whole_help_too(capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    from ecocompute.collector import cli as collector_cli
    from ecocompute.runner import main_for

    monkeypatch.delenv("COLUMNS", raising=False)
    alone = typer.Typer(name="ecocompute-collector", no_args_is_help=True)  # as python -m ecocompute.collector
    collector_cli.register(alone)
    assert main_for(alone, ["collect", "--help"]) == 0
    text = capsys.readouterr().out
    assert "…" not in text and "Example:" in text
    assert "<bool>" not in text and "PATH" in text  # readable metavars there as well


def test_a_piped_console_prints_a_wide_table_whole_and_a_rule_narrow() -> None:
    console = _console(stderr=False)  # this test's stdout is captured: not a terminal
    buffer = io.StringIO()
    console.file = buffer
    table = Table("precision", "J/token", "95% CI", "change vs FP16 (95% CI)" * 4)
    table.add_row("nf4-dq", "2.7206", "±10.12%", "+31.4% (+30.4 to +32.4)" * 4)
    console.print(table)
    console.rule("J/token · NVIDIA H200")
    lines = buffer.getvalue().splitlines()
    assert "…" not in buffer.getvalue() and "±10.12%" in buffer.getvalue()
    assert max(len(line) for line in lines[:-1]) > 120  # wider than any terminal default: not cut to 80
    assert len(lines[-1]) == RULE_WIDTH and "J/token · NVIDIA H200" in lines[-1]


def test_show_piped_holds_the_whole_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", str(EXAMPLE / "submission.json"), "--allowed-signers", str(EXAMPLE / "allowed_signers")]) == 0
    text = capsys.readouterr().out
    assert "…" not in text and "vs FP16 (95% CI)" in text and "dynamic J/t" in text
    assert max(len(line) for line in text.splitlines()) > 80


def test_the_collector_s_own_entry_point_has_help_with_an_example() -> None:
    proc = subprocess.run([sys.executable, "-m", "ecocompute.collector", "--help"], capture_output=True, text=True,
                          check=False, env={"PATH": "/usr/bin:/bin"})  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "Usage: python -m ecocompute.collector" in proc.stdout
    assert "Example: python -m ecocompute.collector collect" in proc.stdout and "…" not in proc.stdout
