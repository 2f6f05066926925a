"""The one ``ecocompute`` command; each stage contributes its subcommands through ``register(app)``.

Nothing heavy is imported here: the collector loads torch only when a measurement starts.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer

from ecocompute import __version__, metavars
from ecocompute.runner import main_for

metavars.install()

app = typer.Typer(
    name="ecocompute",
    help="Measured LLM-inference GPU energy: collect, sign, validate, publish and analyse.\n\n"
    "Example: ecocompute verify submission.json --allowed-signers submissions/allowed_signers",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode="rich",
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ecocompute {__version__}")
        raise typer.Exit


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """Measured LLM-inference GPU energy: collect, sign, validate, publish and analyse."""


def _register_stages() -> None:
    from ecocompute.analysis import cli as analysis_cli
    from ecocompute.collector import cli as collector_cli
    from ecocompute.estimate import cli as estimate_cli
    from ecocompute.lint import cli as lint_cli
    from ecocompute.mcp_server import cli as mcp_cli
    from ecocompute.publish import cli as publish_cli
    from ecocompute.schema import cli as schema_cli
    from ecocompute.validate import cli as validate_cli

    stages = (schema_cli, collector_cli, validate_cli, publish_cli, analysis_cli, estimate_cli, lint_cli, mcp_cli)
    for stage in stages:
        stage.register(app)


_register_stages()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code; project errors become one red line, never a traceback."""
    return main_for(app, argv)


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
