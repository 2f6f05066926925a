"""Typed results of the tools: each becomes the tool's output schema."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from ecocompute.estimate.models import Crossover
from ecocompute.mcp_server.provenance import Provenance


class GpuRange(BaseModel):
    """A card x engine x stack x batch size with measurements, and what was measured there."""

    gpu: str
    arch: str
    engine: str = Field(description="The inference engine (transformers, llama.cpp).")
    stack: str
    batch_size: int
    params_b_min: float = Field(description="Smallest model measured, billions of parameters.")
    params_b_max: float = Field(description="Largest model measured, billions of parameters.")
    sizes_b: list[float]
    precisions: list[str]
    sources: list[str] = Field(description="measured (this dataset) and/or published (the literature tier).")
    submissions: int


class CrossoverResult(BaseModel):
    """Where a precision's change against the engine's FP16 crosses zero on a card, engine, stack and batch size."""

    gpu: str
    engine: str
    stack: str
    batch_size: int
    precision: str
    crossover: Crossover | None = Field(description="None when no group of evidence covers the question.")
    basis: str = Field(description="Where the evidence came from: measured on this card, another card, ...")
    submission_ids: list[str]
    provenance: Provenance


class MeasurementRow(BaseModel):
    """One run: a submission (or a published session) measured at one precision, against its own FP16."""

    submission_id: str | None = Field(description="The submission's id; None for a published (literature) row.")
    tier: Literal["gate", "all", "published"] = Field(
        description="gate: passes the 2% CV gate; all: accepted but for its spread; published: literature."
    )
    source: str
    gpu: str
    arch: str
    engine: str = Field(description="The inference engine; the change is against this engine's own FP16.")
    stack: str
    batch_size: int
    model: str | None
    params_b: float
    precision: str
    weights: str
    change_pct: float = Field(description="J/token change against FP16 of the same run, percent.")
    j_per_token: float | None = Field(description="Joules per generated token at this precision.")
    j_per_token_fp16: float | None = Field(description="Joules per generated token at FP16 in the same run.")
    perplexity_change_pct: float | None
    doi: str | None = Field(description="DOI of the publication, for a published row.")
    created_at: str | None


class Measurements(BaseModel):
    """The runs matching the filters, newest first, with the provenance of exactly these rows."""

    count: int = Field(description="Rows matching the filters (before the limit).")
    rows: list[MeasurementRow]
    provenance: Provenance


class Candidate(BaseModel):
    """One configuration on the card: engine, precision, stack and batch size, with its estimated cost and speed."""

    engine: str
    precision: str
    stack: str
    batch_size: int
    j_per_token: float = Field(description="Joules per generated token, interpolated in log size from runs.")
    change_pct: float | None = Field(description="Change against FP16 of the same engine, stack and batch, percent.")
    change_ci95: tuple[float, float] | None
    tokens_per_s: float | None = Field(description="Generated tokens per second, all sequences together.")
    ms_per_token: float | None = Field(description="Latency of one token of one sequence, milliseconds.")
    weights_gb: float = Field(description="Weight memory computed from the size and the precision's bytes/param.")
    basis: Literal["measured", "interpolated"]
    submission_ids: list[str]


class Recommendation(BaseModel):
    """The best configuration for the objective within the limits, the others, and the energy-latency front."""

    objective: str
    params_b: float
    gpu: str
    choice: Candidate | None
    alternatives: list[Candidate]
    pareto_front: list[Candidate] = Field(description="Candidates no other beats on both J/token and latency.")
    excluded: list[str] = Field(description="Why configurations were left out (limits, no evidence at this size).")
    provenance: Provenance


class CodeFinding(BaseModel):
    """One finding of the energy linter on the snippet."""

    rule: str = Field(description="Stable rule id, e.g. ECO101 (docs/lint/ has a page per rule).")
    name: str
    severity: str
    line: int
    column: int
    message: str = Field(description="What was found, and the measured change with its interval that it cites.")


class CodeCheck(BaseModel):
    """The linter's findings on a snippet, for the target card and stack."""

    gpu: str
    stack: str | None
    findings: list[CodeFinding]
    error: str | None = Field(description="Why the snippet could not be linted (e.g. a syntax error), else null.")
    provenance: Provenance
