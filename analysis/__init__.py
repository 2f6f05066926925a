"""Analysis on the published dataset: J/token tables, changes against the baseline, crossovers.

Import these on the loaded dataset (polars or pandas DataFrames, or a ``datasets.Dataset``)::

    from datasets import load_dataset
    from ecocompute.analysis import change_vs_baseline, crossover, jpt_table

    m = load_dataset("ORG/NAME", "measurements", split="train")
    w = load_dataset("ORG/NAME", "windows", split="train")
    crossover(m, w, precision="nf4")
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "change_vs_baseline": "ecocompute.analysis.change",
    "crossover": "ecocompute.analysis.crossovers",
    "jpt_table": "ecocompute.analysis.tables",
    "stack_table": "ecocompute.analysis.tables",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import the analysis functions on first use, so the CLI and the collector's machine need no polars."""
    if name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
        globals()[name] = value  # the function, not the submodule of the same name
        return value
    raise AttributeError(f"module 'ecocompute.analysis' has no attribute {name!r}")
