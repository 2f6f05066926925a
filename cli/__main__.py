"""``python -m ecocompute``."""

from ecocompute.cli import run

run()
