"""The one ``ecocompute`` command: help with examples everywhere, one-line errors, exit codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from ecocompute.cli import app, main

EXAMPLE = Path(__file__).parents[1] / "data" / "example"


def _commands(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found = [(path, command)]
    if hasattr(command, "commands"):
        for name, sub in sorted(command.commands.items()):
            found += _commands(sub, (*path, name))
    return found


ALL = _commands(typer.main.get_command(app))


def test_every_stage_contributes_commands() -> None:
    names = {path[0] for path, _ in ALL if path}
    assert {"sign", "verify", "show", "schema"} <= names


@pytest.mark.parametrize("path", [p for p, _ in ALL], ids=lambda p: " ".join(p) or "ecocompute")
def test_every_command_has_help_with_an_example(path: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*path, "--help"]) == 0
    text = capsys.readouterr().out
    assert "Example:" in text
    assert "ecocompute " + " ".join(path) in " ".join(text.split())


def test_verify_example_ok(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["verify", str(EXAMPLE / "submission.json"), "--allowed-signers", str(EXAMPLE / "allowed_signers")])
    assert code == 0
    assert "OK" in capsys.readouterr().out


def _error_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return [line for line in err.splitlines() if line.strip()]


def test_verify_tampered_fails_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tampered = tmp_path / "s.json"
    text = (EXAMPLE / "submission.json").read_text()
    tampered.write_text(text.replace('"temp_c_end": 42.0', '"temp_c_end": 43.0', 1))
    code = main(["verify", str(tampered), "--allowed-signers", str(EXAMPLE / "allowed_signers")])
    assert code == 1
    lines = _error_lines(capsys)
    assert len(lines) == 1
    assert "does not match" in lines[0]


def test_verify_non_json_fails_clearly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "s.json"
    bad.write_bytes(b"\x00\x01binary")
    assert main(["verify", str(bad), "--allowed-signers", str(EXAMPLE / "allowed_signers")]) == 1
    assert "not a JSON text file" in _error_lines(capsys)[0]


def test_verify_missing_file_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(tmp_path / "nope.json"), "--allowed-signers", str(EXAMPLE / "allowed_signers")]) == 2
    assert "does not exist" in _error_lines(capsys)[0]


def test_usage_error_is_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_sign_then_verify_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str], keys: object) -> None:
    from factories import Keys

    assert isinstance(keys, Keys)
    target = tmp_path / "s.json"
    target.write_bytes((EXAMPLE / "submission.json").read_bytes())
    assert main(["sign", str(target), "--key", str(keys.rsa), "--signer", "example-user"]) == 0
    assert main(["verify", str(target), "--allowed-signers", str(keys.allowed_signers)]) == 0
    assert main(["verify", str(target), "--allowed-signers", str(EXAMPLE / "allowed_signers")]) == 1
    assert "does not match" in capsys.readouterr().err


def test_show_prints_the_derived_table(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["show", str(EXAMPLE / "submission.json"), "--allowed-signers", str(EXAMPLE / "allowed_signers")])
    assert code == 0
    out = capsys.readouterr().out
    assert "EXAMPLE" in out
    assert "signature OK" in out
    for precision in ("fp16", "nf4", "int8"):
        assert precision in out


def test_installed_console_script_runs() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "ecocompute", "--version"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0
    assert proc.stdout.startswith("ecocompute ")


def test_core_stages_do_not_import_torch() -> None:
    code = (
        "import sys, ecocompute.schema, ecocompute.validate, ecocompute.analysis, ecocompute.cli;"
        "heavy = [m for m in ('torch', 'transformers', 'bitsandbytes', 'pynvml') if m in sys.modules];"
        "print(','.join(heavy)); sys.exit(1 if heavy else 0)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"imported: {proc.stdout} {proc.stderr}"


def test_show_and_verify_print_paths_and_errors_literally(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bracketed = tmp_path / "run[collect].json"  # rich markup would read [collect] as a style and drop it
    bracketed.write_bytes((EXAMPLE / "submission.json").read_bytes())
    missing = tmp_path / "gone[publish].json"
    assert main(["show", str(bracketed), str(missing)]) == 1
    out = capsys.readouterr().out
    assert f"{bracketed} (EXAMPLE" in out
    assert f"{missing}: {missing} does not exist" in out
    assert main(["verify", str(bracketed), "--allowed-signers", str(EXAMPLE / "allowed_signers")]) == 0
    assert f"OK {bracketed}: signed by" in capsys.readouterr().out


LIGHT = {  # a module each light extra exists for, and the extra
    "ecocompute.analysis": "analysis", "ecocompute.estimate.server": "serve",
    "ecocompute.estimate.imports": "literature", "ecocompute.mcp_server.server": "mcp",
    "ecocompute.site.render": "core", "ecocompute.lint": "core",
}  # fmt: skip


def test_the_light_extras_import_without_torch_the_hub_or_zenodo() -> None:
    code = (
        "import importlib, json, sys\n"
        f"missing = {{}}\nfor name in {sorted(LIGHT)!r}:\n"
        "    try:\n        importlib.import_module(name)\n"
        "    except ImportError as exc:\n        missing[name] = exc.name or getattr(exc.__cause__, 'name', None)\n"
        "heavy = [m for m in ('torch', 'transformers', 'bitsandbytes', 'huggingface_hub', 'datasets', 'zenodo_client')"
        " if m in sys.modules]\n"
        "print(json.dumps({'missing': missing, 'heavy': heavy}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    import json

    result = json.loads(proc.stdout)
    assert result["heavy"] == []
    from ecocompute.runner import EXTRA_MODULES

    for name, dependency in result["missing"].items():  # only an extra's own dependency may be absent
        assert (dependency or "").split(".")[0] in EXTRA_MODULES.get(LIGHT[name], ()), (name, dependency)
