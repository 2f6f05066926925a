"""The one ``ecocompute`` command; each stage contributes its subcommands through ``register(app)``.

Nothing heavy is imported here: the collector loads torch only when a measurement starts.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer

from ecocompute import __version__
from ecocompute.console import err, fail_line
from ecocompute.schema.errors import EcocomputeError

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
    from ecocompute.publish import cli as publish_cli
    from ecocompute.schema import cli as schema_cli
    from ecocompute.validate import cli as validate_cli

    for stage in (schema_cli, collector_cli, validate_cli, publish_cli, analysis_cli):
        stage.register(app)


_register_stages()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code; project errors become one red line, never a traceback."""
    try:
        result = app(args=list(argv) if argv is not None else None, standalone_mode=False, prog_name="ecocompute")
    except EcocomputeError as exc:
        fail_line(str(exc))
        return exc.exit_code
    except typer.Exit as exc:
        return int(exc.exit_code)
    except typer.Abort:
        fail_line("aborted")
        return 130
    except typer.TyperException as exc:  # usage errors: typer prints them with the command's usage line
        exc.show()  # type: ignore[attr-defined]
        return int(getattr(exc, "exit_code", 2))
    except KeyboardInterrupt:
        fail_line("interrupted")
        return 130
    except Exception as exc:  # a bug of ours: still one line, and how to report it
        fail_line(f"internal error ({type(exc).__name__}: {exc}); please report it with the command you ran")
        err.print("set ECOCOMPUTE_DEBUG=1 to see the traceback", style="dim")
        import os

        if os.environ.get("ECOCOMPUTE_DEBUG"):
            raise
        return 3
    return result if isinstance(result, int) else 0


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
