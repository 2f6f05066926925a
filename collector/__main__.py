"""``python -m ecocompute.collector``: the collector's commands alone, for a GPU machine with only ``[collect]``.

The full ``ecocompute`` command also loads the publisher's and the analysis' dependencies (polars, ...), which a
measuring machine does not need.
"""

import sys

import typer

from ecocompute.collector import cli
from ecocompute.runner import main_for

app = typer.Typer(
    name="ecocompute-collector",
    help="The collector's commands alone: measure a GPU's energy per token and write a signed submission.\n\n"
    "Example: python -m ecocompute.collector collect --arch TinyLlama-1.1B --signer alice --key ~/.ssh/id_ed25519",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode="rich",
)
cli.register(app)
sys.exit(main_for(app, prog_name="python -m ecocompute.collector"))
