"""The question and the answer of the estimator (pydantic; the HTTP API and the MCP server use them as they are)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Precision = Literal["fp16", "bf16", "fp8-wo", "fp8-dyn", "int8", "int8-t0", "nf4", "q8_0", "q4_k_m"]
Engine = Literal["transformers", "llama.cpp"]
Stack = Literal["eager", "compiled", "compiled-all"]
Tier = Literal["all", "gate", "published"]
PRECISIONS: tuple[str, ...] = ("fp16", "bf16", "fp8-wo", "fp8-dyn", "int8", "int8-t0", "nf4", "q8_0", "q4_k_m")
ENGINES: tuple[str, ...] = ("transformers", "llama.cpp")  # analysis's ENGINES; a group without one is transformers'
ENGINE = ENGINES[0]
STACKS: tuple[str, ...] = ("eager", "compiled", "compiled-all")
TIERS: tuple[str, ...] = ("all", "gate", "published")


class Question(BaseModel):
    """What a precision costs against the same engine's FP16 for a card, engine, model size, stack, batch, workload."""

    model_config = ConfigDict(extra="forbid")

    gpu: str = Field(min_length=1, description="Card name (H200, RTX 4090, ...) or architecture (hopper, ada, ...).")
    params_b: float | None = Field(None, gt=0, le=2000, description="Model size in billions of parameters.")
    model: str | None = Field(
        None, description="Hugging Face model id; its size comes from config.json in the local cache (offline)."
    )
    precision: Precision = Field(
        description="fp16, bf16, fp8-wo (torchao FP8 weights), fp8-dyn (FP8 weights and activations), int8 "
        "(threshold 6.0), int8-t0 (threshold 0.0), nf4, or llama.cpp's q8_0 or q4_k_m."
    )
    engine: Engine = Field(
        "transformers",
        description="transformers or llama.cpp: the inference engine; its FP16 is its own, never the other's.",
    )
    stack: Stack = Field("eager", description="eager, compiled or compiled-all.")
    batch_size: int = Field(1, ge=1, le=4096, description="Sequences per generate() call.")
    prompt_tokens: int = Field(128, ge=1, description="Prompt tokens per sequence.")
    new_tokens: int = Field(256, ge=1, description="New tokens per sequence.")
    tier: Tier = Field(
        "all",
        description="Evidence to use: all (every accepted measurement, each weighted by its spread), gate (only "
        "measurements under the 2% CV gate) or published (the literature tier alone).",
    )

    @model_validator(mode="after")
    def _size_given(self) -> Question:
        if (self.params_b is None) == (self.model is None):
            raise ValueError("give exactly one of params_b (billions of parameters) or model (a Hugging Face id)")
        return self


class Reason(BaseModel):
    """Why the answer is what it is: a stable machine-readable code and a sentence."""

    code: str
    text: str


class Crossover(BaseModel):
    """Where the change crosses zero for the card, engine, stack and batch that answered."""

    status: Literal["crossover", "none-in-measured-range", "insufficient-data"]
    params_b: float | None
    ci95: tuple[float, float] | None
    measured_range_b: tuple[float, float]
    by_fit: dict[str, float | None] = Field(description="The crossover each fit alone gives (None: it has none).")
    message: str
    group: str


class Recommendation(BaseModel):
    """What the interval says."""

    code: Literal["quantize-saves", "keep-fp16", "no-clear-difference", "baseline", "not-measured"]
    text: str


class PublishedView(BaseModel):
    """The literature tier's answer to the same question, shown apart and never pooled with measurements."""

    change_pct: float
    change_ci95: tuple[float, float]
    basis: str
    sessions: list[str]
    dois: list[str]
    groups: list[str]


class GpuResolved(BaseModel):
    """The card (None for an architecture) and architecture the question was read as."""

    name: str | None
    arch: str


class Answer(BaseModel):
    """The estimate: change against FP16 with its 95% interval, where it comes from, and what to do."""

    question: Question
    params_b: float
    gpu_resolved: GpuResolved
    change_pct: float | None = Field(description="None only when basis is not-measured: no figure is made up.")
    change_ci95: tuple[float, float] | None
    j_per_token: float | None
    wh_per_1k_tokens: float | None
    crossover: Crossover | None
    basis: Literal[
        "measured", "interpolated", "extrapolated", "other-card", "other-architecture", "baseline", "not-measured"
    ] = Field(
        description="not-measured: no card has a run of this precision with the asked engine in the asked tier yet."
    )
    source: Literal["measured", "published", "definition", "none"]
    tier: str
    reasons: list[Reason]
    confidence: Literal["high", "medium", "low"]
    recommendation: Recommendation
    quality: float | None = Field(description="Perplexity change in percent where the asked cell recorded it.")
    fits: dict[str, float]
    groups: list[str]
    published: PublishedView | None
    dataset_version: str
    doi: str | None
    dois: list[str] = Field(description="DOIs of the published figures used.")
    submission_ids: list[str]
    newest_submission_at: str | None
    citation: str
