"""What the server answers from: the estimator's artifact (shipped, or one a dataset build wrote) and the docs.

Everything is read once at start-up; a tool call does arithmetic only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ecocompute.analysis.defaults import precision_rank
from ecocompute.estimate.engine import engine_of
from ecocompute.mcp_server.provenance import Provenance
from ecocompute.schema.errors import UsageError

DATASET_URL = "https://huggingface.co/datasets/ecocompute/llm-inference-energy"


def _package_text(package: str, *parts: str) -> str:
    return resources.files(package).joinpath(*parts).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Sources:
    """The artifact, the dataset card and the reference documents one server answers from."""

    artifact: dict[str, Any]
    card: str
    method: str

    @classmethod
    def load(cls, dataset: Path | None = None) -> Sources:
        """The shipped artifact and card, or those of a folder that ``ecocompute publish build`` wrote."""
        from ecocompute.estimate import load_artifact

        if dataset is None:
            card = _package_text("ecocompute.mcp_server", "data", "card.md")
            return cls(load_artifact(), card, _package_text("ecocompute.mcp_server", "data", "method.md"))
        if not dataset.is_dir():
            raise UsageError(f"--dataset {dataset} is not a folder: pass a folder built by `ecocompute publish build`")
        card_path = dataset / "README.md"
        card = card_path.read_text(encoding="utf-8") if card_path.is_file() else "(this build has no dataset card)"
        return cls(load_artifact(dataset), card, _package_text("ecocompute.mcp_server", "data", "method.md"))

    def provenance(self, runs: list[dict[str, Any]] | None = None) -> Provenance:
        """The dataset's provenance; with ``runs``, dated by the newest submission among them."""
        info = self.artifact["dataset"]
        newest = info.get("newest_submission_at")
        if runs is not None:
            dates = [str(r["created_at"]) for r in runs if r.get("source") == "measured" and r.get("created_at")]
            newest = max(dates, default=None)
        doi = info.get("doi")
        url = f"https://doi.org/{doi}" if doi else DATASET_URL
        return Provenance(
            dataset_version=str(info["version"]), doi=doi, dataset_url=url,
            newest_submission_at=newest, citation=str(info["citation"]),
        )  # fmt: skip

    def runs(self) -> list[dict[str, Any]]:
        """Every run of the artifact: one per submission (or published session) x non-FP16 precision."""
        return list(self.artifact.get("runs", []))

    def schema_json(self) -> str:
        """The JSON Schema of a submission, as the package ships it."""
        names = sorted(
            p.name for p in resources.files("ecocompute.schema").iterdir() if p.name.endswith(".schema.json")
        )
        return _package_text("ecocompute.schema", names[-1])

    def gpus_json(self) -> str:
        """The cards with measurements and their measured ranges, as JSON."""
        return json.dumps([g.model_dump() for g in gpu_ranges(self)], indent=2)


def gpu_ranges(sources: Sources) -> list[Any]:
    """One entry per card x engine x stack x batch measured: the sizes, precisions, tiers and submissions behind it."""
    from ecocompute.mcp_server.models import GpuRange

    cells: dict[tuple[str, str, str, str, int], dict[str, Any]] = {}
    for run in sources.runs():
        key = (str(run["gpu"]), str(run["arch"]), engine_of(run), str(run["stack"]), int(run["batch_size"]))
        cell = cells.setdefault(key, {"sizes": set(), "precisions": set(), "sources": set(), "ids": set()})
        cell["sizes"].add(round(float(run["params_b"]), 3))
        cell["precisions"].add(str(run["precision"]))
        cell["sources"].add(str(run["source"]))
        if run.get("submission_id"):
            cell["ids"].add(str(run["submission_id"]))
    return [
        GpuRange(
            gpu=gpu,
            arch=arch,
            engine=engine,
            stack=stack,
            batch_size=batch,
            params_b_min=min(c["sizes"]),
            params_b_max=max(c["sizes"]),
            sizes_b=sorted(c["sizes"]),
            precisions=sorted(c["precisions"], key=precision_rank),
            sources=sorted(c["sources"]),
            submissions=len(c["ids"]),
        )
        for (gpu, arch, engine, stack, batch), c in sorted(cells.items())
    ]
