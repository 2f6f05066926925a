"""Analysis on the published dataset: J/token tables, changes against the baseline, crossovers.

Import these on the loaded dataset (polars or pandas DataFrames, or a ``datasets.Dataset``)::

    from datasets import load_dataset
    from ecocompute.analysis import change_vs_baseline, crossover, jpt_table

    m = load_dataset("ORG/NAME", "measurements", split="train")
    w = load_dataset("ORG/NAME", "windows", split="train")
    crossover(m, w, precision="nf4")
"""

from ecocompute.analysis.change import change_vs_baseline
from ecocompute.analysis.crossover import crossover
from ecocompute.analysis.tables import jpt_table

__all__ = ["change_vs_baseline", "crossover", "jpt_table"]
