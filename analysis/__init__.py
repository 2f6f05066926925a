"""Analysis on the published dataset: select rows, J/token tables, changes against the baseline, crossovers.

Import these on the loaded dataset (a ``datasets.Dataset``, or polars or pandas DataFrames)::

    from datasets import load_dataset
    from ecocompute.analysis import change_table, crossover, select

    m = load_dataset("ORG/NAME", "measurements_all", split="train")
    w = load_dataset("ORG/NAME", "windows_all", split="train")
    crossover(select(m, gpu="h200", stack="compiled-all", batch=1), w, precision="nf4")
    change_table(select(m, gpu="h200", stack="eager", batch=1), precision="int8", pooled=True)

``pip install "ecocompute[analysis]"`` is all it needs (no torch, no Hub or Zenodo client).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "Results": "ecocompute.analysis.results",
    "analyse": "ecocompute.analysis.results",
    **{name: "ecocompute.analysis.sections" for name in ("crossover_section", "split_sections", "stack_section")},
    "change_table": "ecocompute.analysis.change",
    "change_vs_baseline": "ecocompute.analysis.change",
    "crossover": "ecocompute.analysis.crossovers",
    "j_per_token_table": "ecocompute.analysis.j_per_token",
    "jpt_table": "ecocompute.analysis.j_per_token",  # deprecated spelling, removed in the next release
    "select": "ecocompute.analysis.selection",
    "stack_table": "ecocompute.analysis.j_per_token",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import the analysis functions on first use, so the CLI and the collector's machine need no polars."""
    if name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
        globals()[name] = value  # the function, not the submodule of the same name
        return value
    raise AttributeError(f"module 'ecocompute.analysis' has no attribute {name!r}")
