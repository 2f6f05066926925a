"""Constants the analysis, the publisher and the CLI share, defined once here (this module imports nothing heavy).

``CONFIGS`` are the tables of the dataset; each has an ``_all`` twin (``ALL_SUFFIX``) holding every accepted row,
the CV gate's failures too, where the plain config holds only rows that pass the gate.
"""

from __future__ import annotations

DEFAULT_N_BOOT = 2000
DEFAULT_SEED = 20261130
CONFIGS = ("windows", "measurements", "submissions")
ALL_SUFFIX = "_all"
ALL_CONFIGS = (*CONFIGS, *(c + ALL_SUFFIX for c in CONFIGS))
STACK = "software_stack"  # the software-stack column of the measurements table
