"""The one ``ecocompute`` command; each stage contributes its subcommands through ``register(app)``.

Nothing heavy is imported here: a command imports only the stage that owns it (:data:`COMMAND_STAGES`), so
``ecocompute validate`` does not pay for the collector's, the publisher's or the estimator's imports; the root
help, an unknown command and :data:`app` (what tests and documentation tools read) have every stage. The
collector loads torch only when a measurement starts.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import Any

import typer

from ecocompute import __version__, metavars
from ecocompute.runner import main_for

metavars.install()

HELP = (
    "Measured LLM-inference GPU energy: collect, sign, validate, publish and analyse.\n\n"
    "Example: ecocompute verify submission.json --allowed-signers submissions/allowed_signers"
)

STAGES = (
    "ecocompute.schema.cli",
    "ecocompute.collector.cli",
    "ecocompute.validate.cli",
    "ecocompute.publish.cli",
    "ecocompute.analysis.cli",
    "ecocompute.estimate.cli",
    "ecocompute.lint.cli",
    "ecocompute.mcp_server.cli",
)
"""Every stage's command module, in the order the root help lists their commands."""

COMMAND_STAGES = {
    **dict.fromkeys(("sign", "verify", "show", "schema"), "ecocompute.schema.cli"),
    **dict.fromkeys(("collect", "record-trace"), "ecocompute.collector.cli"),
    **dict.fromkeys(("validate", "validate-signers", "validate-changes"), "ecocompute.validate.cli"),
    "publish": "ecocompute.publish.cli",
    **dict.fromkeys(("crossover", "j-per-token", "jpt"), "ecocompute.analysis.cli"),
    **dict.fromkeys(("estimate", "import", "serve"), "ecocompute.estimate.cli"),
    "lint": "ecocompute.lint.cli",
    "mcp": "ecocompute.mcp_server.cli",
}
"""The stage whose ``register`` adds each top-level command (tests/cli holds it to what the stages register)."""


def _version(value: bool) -> None:
    if value:
        typer.echo(f"ecocompute {__version__}")
        raise typer.Exit


def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """Measured LLM-inference GPU energy: collect, sign, validate, publish and analyse."""


def make_app(stages: Sequence[str] = STAGES) -> typer.Typer:
    """The ``ecocompute`` app with the commands of ``stages`` (module names of :data:`STAGES`)."""
    new = typer.Typer(
        name="ecocompute",
        help=HELP,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
        rich_markup_mode="rich",
    )
    new.callback()(_root)
    for stage in stages:
        importlib.import_module(stage).register(new)
    return new


def stages_for(argv: Sequence[str]) -> tuple[str, ...]:
    """The stages a command line needs: its command's alone, none for ``--version``, every one otherwise."""
    words = [a for a in argv if not a.startswith("-")]
    if not words:
        return () if "--version" in argv and not {"--help", "-h"} & set(argv) else STAGES
    stage = COMMAND_STAGES.get(words[0])
    return (stage,) if stage is not None and argv[0] == words[0] else STAGES


_FULL: typer.Typer | None = None


def __getattr__(name: str) -> Any:
    """``app``: the app with every stage's commands, made on first use."""
    global _FULL
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _FULL is None:
        _FULL = make_app()
    return _FULL


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code; project errors become one red line, never a traceback."""
    args = list(sys.argv[1:] if argv is None else argv)
    stages = stages_for(args)
    return main_for(__getattr__("app") if stages == STAGES else make_app(stages), args)


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
