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
# The engines a measurement names (the collector's registry, ``collector.model.engines.ENGINES``, which this module
# cannot import: tests/test_constants.py holds the two together); tables before engines read as transformers.
ENGINES = ("transformers", "llama.cpp")
# The order precisions are shown in, everywhere (tables, plots, the site, the estimator's choices): the 16-bit
# baselines, then FP8 (torchao), bitsandbytes' 8-bit and 4-bit, then llama.cpp's GGUF types. Every value of
# ``schema.models.Precision`` appears once (tests/test_constants.py holds them together).
PRECISION_ORDER = ("fp16", "bf16", "fp8-wo", "fp8-dyn", "int8", "int8-t0", "nf4", "nf4-dq", "fp4", "q8_0", "q4_k_m")


def precision_rank(precision: str) -> tuple[int, str]:
    """Sort key of a precision in :data:`PRECISION_ORDER`; unknown ones last, by name."""
    order = PRECISION_ORDER.index(precision) if precision in PRECISION_ORDER else len(PRECISION_ORDER)
    return order, precision
