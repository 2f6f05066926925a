"""``pip install "ecocompute[analysis]"`` is all a researcher needs: the API pulls in no torch and no Hub client."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

HEAVY = ("torch", "huggingface_hub", "zenodo_client", "transformers", "datasets")


def test_importing_the_analysis_and_calling_it_loads_no_heavy_package() -> None:
    code = (
        "import sys, polars as pl\n"
        "import ecocompute.analysis as a\n"
        "from ecocompute.analysis import select, change_table, crossover, j_per_token_table\n"
        "from ecocompute.analysis.results import analyse\n"
        f"print(','.join(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""


def test_the_analysis_extra_names_no_heavy_dependency() -> None:
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]
    extra = " ".join(project["optional-dependencies"]["analysis"]).lower()
    assert extra and not any(name.replace("_", "-") in extra or name in extra for name in HEAVY)
