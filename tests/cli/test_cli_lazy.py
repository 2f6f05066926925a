"""A command imports only the stage that owns it: ``ecocompute validate`` starts without the other stages."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer

from ecocompute import cli


def _names(app: typer.Typer) -> set[str]:
    return set(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


@pytest.mark.parametrize("stage", cli.STAGES)
def test_the_table_names_every_command_of_each_stage(stage: str) -> None:
    assert _names(cli.make_app([stage])) == {c for c, s in cli.COMMAND_STAGES.items() if s == stage}


def test_the_full_app_has_every_command() -> None:
    assert _names(cli.app) == set(cli.COMMAND_STAGES)


@pytest.mark.parametrize(
    ("argv", "stages"),
    [
        (["validate", "--json"], ("ecocompute.validate.cli",)),
        (["publish", "build", "--help"], ("ecocompute.publish.cli",)),
        (["--version"], ()),
        ([], cli.STAGES),
        (["--help"], cli.STAGES),
        (["no-such-command"], cli.STAGES),
        (["--version", "validate"], cli.STAGES),
    ],
)
def test_stages_for_a_command_line(argv: list[str], stages: tuple[str, ...]) -> None:
    assert cli.stages_for(argv) == stages


def test_validate_imports_no_other_stage() -> None:
    code = (
        "import sys; from ecocompute.cli import main; rc = main(['validate', '--help']); "
        "print(rc, sorted(m for m in sys.modules if m.split('.')[:2] in "
        "[['ecocompute', s] for s in ('collector', 'publish', 'estimate', 'analysis', 'lint', 'mcp_server')]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "0 []"


def test_an_unknown_command_is_a_usage_error() -> None:
    assert cli.main(["no-such-command"]) == 2
