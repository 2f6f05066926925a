"""The server: five read-only tools and four resources over one :class:`~ecocompute.mcp_server.sources.Sources`."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field, ValidationError

from ecocompute import __version__
from ecocompute.estimate import Answer, Question, estimate
from ecocompute.estimate.engine import engine_of
from ecocompute.estimate.models import PRECISIONS, Engine, Precision
from ecocompute.mcp_server import recommend as rec
from ecocompute.mcp_server.models import (
    CodeCheck,
    CodeFinding,
    CrossoverResult,
    MeasurementRow,
    Measurements,
    Recommendation,
)
from ecocompute.mcp_server.sources import Sources
from ecocompute.schema.errors import EcocomputeError

READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)
INSTRUCTIONS = (
    "Measured LLM-inference GPU energy. Ask `estimate` what a precision costs against FP16 on a card and engine, "
    "`crossover` where quantizing starts to save, `find_measurements` for the rows behind an answer, "
    "`recommend_config` for the best configuration, `check_code` to lint a snippet. Quote the interval and the "
    "basis of every figure, and cite it with its provenance."
)
Gpu = Annotated[str, Field(description="Card name (H200, RTX 4090, ...) or architecture (hopper, ada, ...).")]
PrecisionArg = Annotated[
    Precision,  # the estimator's own choices, so that the tool and `ecocompute estimate` accept the same
    Field(
        description="int8 is bitsandbytes' default threshold 6.0, int8-t0 threshold 0.0; fp8-wo and fp8-dyn "
        "are torchao's FP8 (weights only; weights and activations); q8_0 and q4_k_m are llama.cpp's GGUF types."
    ),
]
EngineArg = Annotated[
    Engine, Field(description="The inference engine: transformers or llama.cpp; each is measured against its own FP16.")
]
StackArg = Annotated[Literal["eager", "compiled", "compiled-all"], Field(description="The software stack.")]
Batch = Annotated[int, Field(ge=1, le=4096, description="Sequences per generate() call.")]
ParamsB = Annotated[float | None, Field(gt=0, le=2000, description="Model size, billions of parameters.")]
DEFAULT = {name: info.default for name, info in Question.model_fields.items()}
Model = Annotated[str | None, Field(description="Hugging Face model id (size from its cached config.json).")]


def _tool_error(exc: Exception) -> ToolError:
    if isinstance(exc, ValidationError):
        parts = [f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()]
        return ToolError("; ".join(parts))
    return ToolError(str(exc))


def _question(**fields: Any) -> Question:
    try:
        return Question(**{k: v for k, v in fields.items() if v is not None})
    except ValidationError as exc:
        raise _tool_error(exc) from exc


def _estimate(sources: Sources, question: Question) -> Answer:
    try:
        return estimate(question, sources.artifact)
    except EcocomputeError as exc:
        raise _tool_error(exc) from exc


def _row(run: dict[str, Any]) -> MeasurementRow:
    tier = "published" if run["source"] == "published" else ("gate" if run.get("passes_cv_gate") else "all")
    return MeasurementRow(
        submission_id=run.get("submission_id"), tier=tier, source=str(run["source"]), gpu=str(run["gpu"]),
        arch=str(run["arch"]), engine=engine_of(run), stack=str(run["stack"]), batch_size=int(run["batch_size"]),
        model=run.get("model"),
        params_b=float(run["params_b"]), precision=str(run["precision"]), weights=str(run["weights"]),
        change_pct=100 * (math.exp(float(run["y"])) - 1), j_per_token=run.get("j_q"), j_per_token_fp16=run.get("j_b"),
        perplexity_change_pct=run.get("quality_pct"), doi=run.get("doi"), created_at=run.get("created_at") or None,
    )  # fmt: skip


def _choices(field: str, value: str, valid: list[str]) -> None:
    if value not in valid:
        raise ToolError(f"{field}: {value!r} is not one of the values in the data: {', '.join(valid)}")


def find(sources: Sources, **filters: Any) -> Measurements:
    """The runs matching ``filters`` (None = any), newest first."""
    limit = filters.pop("limit")
    rows = [_row(run) for run in sources.runs()]
    if filters.get("gpu") is not None:
        from ecocompute.estimate.engine import resolve_gpu

        resolved = resolve_gpu(sources.artifact, filters.pop("gpu"))
        if resolved is None:
            raise ToolError(f"gpu: unknown card; cards in the data: {', '.join(sorted({r.gpu for r in rows}))}")
        rows = [
            r for r in rows if r.gpu == resolved["name"] or (resolved["name"] is None and r.arch == resolved["arch"])
        ]
    for field, value in filters.items():
        if value is not None:
            rows = [r for r in rows if getattr(r, field) == value]
    rows.sort(key=lambda r: (r.created_at or "", r.submission_id or ""), reverse=True)
    ids = {r.submission_id for r in rows}
    used = [run for run in sources.runs() if run.get("submission_id") in ids]
    return Measurements(count=len(rows), rows=rows[:limit], provenance=sources.provenance(used))


def build_server(sources: Sources) -> MCPServer:
    """An MCP server answering from ``sources``; nothing it does writes anything."""
    server: MCPServer = MCPServer(
        "ecocompute", title="ecocompute: measured LLM-inference GPU energy", version=__version__,
        instructions=INSTRUCTIONS, website_url="https://github.com/ecocompute/ecocompute",
    )  # fmt: skip
    _tools(server, sources)
    _code_tool(server, sources)
    _resources(server, sources)
    return server


def _tools(server: MCPServer, sources: Sources) -> None:
    @server.tool(
        name="estimate",
        title="Estimate a precision's energy cost",
        description="What a precision costs in J/token against the same engine's FP16 on a card, with a 95% "
        "interval and its basis.",
        annotations=READ_ONLY,
    )
    def estimate_tool(
        gpu: Gpu, precision: PrecisionArg, params_b: ParamsB = None, model: Model = None,
        engine: EngineArg = DEFAULT["engine"], stack: StackArg = DEFAULT["stack"],
        batch_size: Batch = DEFAULT["batch_size"],
        prompt_tokens: int = DEFAULT["prompt_tokens"], new_tokens: int = DEFAULT["new_tokens"],
    ) -> Answer:  # fmt: skip
        question = _question(gpu=gpu, params_b=params_b, model=model, precision=precision, engine=engine,
                             stack=stack, batch_size=batch_size, prompt_tokens=prompt_tokens,
                             new_tokens=new_tokens)  # fmt: skip
        return _estimate(sources, question)

    @server.tool(
        description="The model size where a precision starts to save energy against FP16 on a card, engine, stack "
        "and batch.",
        annotations=READ_ONLY,
    )
    def crossover(gpu: Gpu, precision: PrecisionArg = "nf4", engine: EngineArg = DEFAULT["engine"],
                  stack: StackArg = DEFAULT["stack"], batch_size: Batch = DEFAULT["batch_size"]
                  ) -> CrossoverResult:  # fmt: skip
        if precision == "fp16":
            raise ToolError(f"precision: fp16 is the baseline; ask for one of {', '.join(PRECISIONS[1:])}")
        sizes = [r["params_b"] for r in sources.runs()
                 if r["precision"] == precision and engine_of(r) == engine] or [1.0]  # fmt: skip
        mid = math.exp((math.log(min(sizes)) + math.log(max(sizes))) / 2)
        answer = _estimate(sources, _question(gpu=gpu, params_b=mid, precision=precision, engine=engine,
                                              stack=stack, batch_size=batch_size))  # fmt: skip
        ids = set(answer.submission_ids)
        used = [r for r in sources.runs() if r.get("submission_id") in ids]
        return CrossoverResult(gpu=gpu, engine=engine, stack=stack, batch_size=batch_size, precision=precision,
                               crossover=answer.crossover, basis=answer.basis, submission_ids=answer.submission_ids,
                               provenance=sources.provenance(used))  # fmt: skip

    @server.tool(
        description="Measured rows (every tier, and the literature) matching filters, with submission ids.",
        annotations=READ_ONLY,
    )
    def find_measurements(
        gpu: Gpu | None = None, precision: PrecisionArg | None = None, engine: EngineArg | None = None,
        stack: StackArg | None = None, batch_size: Batch | None = None,
        tier: Literal["gate", "all", "published"] | None = None,
        weights: Literal["pretrained", "random-init"] | None = None,
        limit: Annotated[int, Field(ge=1, le=500, description="At most this many rows.")] = 50,
    ) -> Measurements:  # fmt: skip
        return find(sources, gpu=gpu, precision=precision, engine=engine, stack=stack, batch_size=batch_size, tier=tier,
                    weights=weights, limit=limit)  # fmt: skip

    @server.tool(
        description="The best precision, stack and batch size for a model on a card, with the energy-latency front.",
        annotations=READ_ONLY,
    )
    def recommend_config(
        gpu: Gpu, params_b: ParamsB = None, model: Model = None,
        objective: Literal["energy", "latency", "throughput"] = "energy",
        max_vram_gb: Annotated[float | None, Field(gt=0, description="Weight memory allowed, GB.")] = None,
        max_latency_ms: Annotated[float | None, Field(gt=0, description="Per-token latency allowed, ms.")] = None,
    ) -> Recommendation:  # fmt: skip
        size = _question(gpu=gpu, params_b=params_b, model=model, precision="nf4")
        try:
            from ecocompute.estimate.hub import params_b_for

            size_b = size.params_b if size.params_b is not None else params_b_for(str(size.model))
            return rec.recommend(sources, gpu, size_b, objective, max_vram_gb, max_latency_ms)
        except EcocomputeError as exc:
            raise _tool_error(exc) from exc


def check(sources: Sources, code: str, filename: str, gpu: str, stack: str | None) -> CodeCheck:
    """The linter on ``code`` as if it were the file ``filename``, with the evidence of ``gpu`` and ``stack``."""
    from ecocompute.lint.config import resolve
    from ecocompute.lint.engine import lint_text
    from ecocompute.lint.evidence import Evidence

    if not filename.endswith((".py", ".ipynb")):
        raise ToolError(f"filename: {filename!r} must end in .py or .ipynb")
    try:
        config = resolve({}, {"target-gpu": gpu, "stack": stack})
        evidence = Evidence(gpu, sources.artifact)
        report = lint_text(code, filename, config, evidence)
    except EcocomputeError as exc:
        raise _tool_error(exc) from exc
    findings = [
        CodeFinding(
            rule=f.rule,
            name=f.rule_name,
            severity=f.severity.name.lower(),
            line=f.line,
            column=f.column,
            message=f.message,
        )
        for f in report.findings
    ]
    return CodeCheck(gpu=gpu, stack=stack, findings=findings, error=report.error, provenance=sources.provenance())


def _code_tool(server: MCPServer, sources: Sources) -> None:
    @server.tool(
        description="Lint a Python snippet for energy waste in LLM inference, each finding citing its measurement.",
        annotations=READ_ONLY,
    )
    def check_code(
        code: Annotated[str, Field(max_length=200_000, description="Python source (or a notebook's JSON).")],
        filename: Annotated[str, Field(description="Name it is linted as; .py or .ipynb.")] = "snippet.py",
        gpu: Gpu = "H200",
        stack: StackArg | None = None,
    ) -> CodeCheck:
        return check(sources, code, filename, gpu, stack)


def _resources(server: MCPServer, sources: Sources) -> None:
    @server.resource("ecocompute://method", name="method", title="How a measurement is taken and checked",
                     mime_type="text/markdown")  # fmt: skip
    def method() -> str:
        return sources.method

    @server.resource("ecocompute://schema/submission", name="submission-schema",
                     title="JSON Schema of a submission", mime_type="application/schema+json")  # fmt: skip
    def schema() -> str:
        return sources.schema_json()

    @server.resource("ecocompute://card", name="dataset-card", title="The dataset card", mime_type="text/markdown")
    def card() -> str:
        return sources.card

    @server.resource("ecocompute://gpus", name="gpus", title="Cards measured and their ranges",
                     mime_type="application/json")  # fmt: skip
    def gpus() -> str:
        return sources.gpus_json()


__all__ = ["build_server", "check", "find"]
