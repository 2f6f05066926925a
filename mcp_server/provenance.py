"""Where an answer comes from: the dataset version, its DOI, the newest submission used and a citation line."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Provenance(BaseModel):
    """What every tool result carries, so an assistant can say how fresh and how citable an answer is."""

    dataset_version: str = Field(description="Version of the dataset build the answer was computed from.")
    doi: str | None = Field(description="Zenodo DOI of that dataset version; null until one is minted.")
    dataset_url: str = Field(description="Where the dataset can be loaded from.")
    newest_submission_at: str | None = Field(
        description="RFC 3339 time of the newest submission behind this answer (its staleness)."
    )
    citation: str = Field(description="One line to cite the data.")
