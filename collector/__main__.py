"""``python -m ecocompute.collector``: the collector's commands alone, for a GPU machine with only ``[collect]``.

The full ``ecocompute`` command also loads the publisher's and the analysis' dependencies (polars, ...), which a
measuring machine does not need.
"""

import sys

import typer

from ecocompute.collector import cli
from ecocompute.runner import main_for

app = typer.Typer(name="ecocompute-collector", no_args_is_help=True, pretty_exceptions_enable=False)
cli.register(app)
sys.exit(main_for(app))
