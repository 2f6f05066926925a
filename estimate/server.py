"""``ecocompute serve``: the estimator over HTTP (FastAPI), on the same engine and artifact as every other caller.

``GET|POST /v1/estimate``, ``GET /v1/gpus``, ``GET /v1/crossovers``, ``GET /v1/noop`` (nothing: the floor the speed
benchmark divides by), ``/openapi.json`` and ``/docs``. A bad question gets a 422 that names the field and its valid
values.
"""

from pathlib import Path
from typing import Annotated, Any

try:
    from fastapi import FastAPI, Query, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse, Response
except ImportError as exc:  # pragma: no cover - the [serve] extra
    raise ImportError("ecocompute serve needs FastAPI and uvicorn: pip install 'ecocompute[serve]'") from exc

from pydantic import ValidationError

from ecocompute.estimate.api import EstimateError, estimate
from ecocompute.estimate.artifact import load_artifact
from ecocompute.estimate.engine import engine_of
from ecocompute.estimate.models import Answer, Engine, Precision, Question, Stack, Tier
from ecocompute.schema.errors import UsageError


def create_app(artifact_path: Path | str | None = None) -> FastAPI:
    """The FastAPI application over the artifact at ``artifact_path`` (the shipped one when None)."""
    artifact = load_artifact(artifact_path)
    app = FastAPI(
        title="ecocompute estimator",
        version=str(artifact["dataset"]["version"]),
        description="What a precision costs against FP16 on a GPU, from measurements, with a 95% interval.",
    )

    def unprocessable(detail: list[dict[str, Any]]) -> JSONResponse:
        return JSONResponse(status_code=422, content={"detail": detail})

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        detail = []
        for error in exc.errors():
            loc = [str(p) for p in error.get("loc", ()) if p not in ("body", "query")]
            item = {"field": ".".join(loc) or "question", "msg": error.get("msg", ""), "type": error.get("type")}
            expected = (error.get("ctx") or {}).get("expected")
            if expected:
                item["valid"] = expected
            detail.append(item)
        return unprocessable(detail)

    def answer(question: Question) -> Response:
        try:  # serialised once here: returning a Response skips FastAPI's second validation of the Answer
            return Response(estimate(question, artifact).model_dump_json(), media_type="application/json")
        except EstimateError as exc:
            field, _, msg = str(exc).partition(": ")
            return unprocessable([{"field": field, "msg": msg, "type": "value_error"}])
        except UsageError as exc:  # a model id not in the local cache
            return unprocessable([{"field": "model", "msg": str(exc), "type": "value_error"}])

    # async: an estimate takes well under a millisecond, cheaper on the event loop than a hop to the thread pool
    @app.post("/v1/estimate", response_model=Answer)
    async def estimate_post(question: Question) -> Any:
        """Estimate from a JSON question."""
        return answer(question)

    @app.get("/v1/estimate", response_model=Answer)
    async def estimate_get(
        gpu: str,
        precision: Precision,
        params_b: Annotated[float | None, Query(gt=0, le=2000)] = None,
        model: str | None = None,
        engine: Engine = "transformers",
        stack: Stack = "eager",
        batch_size: Annotated[int, Query(ge=1, le=4096)] = 1,
        prompt_tokens: Annotated[int, Query(ge=1)] = 128,
        new_tokens: Annotated[int, Query(ge=1)] = 256,
        tier: Tier = "all",
    ) -> Any:
        """Estimate from query parameters."""
        fields = {
            "gpu": gpu,
            "precision": precision,
            "params_b": params_b,
            "model": model,
            "engine": engine,
            "stack": stack,
            "batch_size": batch_size,
            "prompt_tokens": prompt_tokens,
            "new_tokens": new_tokens,
            "tier": tier,
        }
        try:
            question = Question.model_validate(fields)
        except ValidationError as exc:
            msgs = "; ".join(str(e["msg"]) for e in exc.errors())
            detail = {"field": "params_b", "msg": msgs, "type": "value_error", "valid": "params_b or model"}
            return unprocessable([detail])
        return answer(question)

    @app.get("/v1/gpus")
    async def gpus() -> dict[str, Any]:
        """The cards the estimator knows, and which of them were measured (and how)."""
        measured: dict[str, set[str]] = {}
        for group in artifact["groups"]:
            measured.setdefault(group["gpu"], set()).add(group["source"])
        rows = [{**g, "evidence": sorted(measured.get(g["name"], set()))} for g in artifact["gpus"]]
        return {"gpus": rows, "dataset": artifact["dataset"]}

    @app.get("/v1/crossovers")
    async def crossovers(
        gpu: str | None = None, precision: Precision | None = None, engine: Engine | None = None
    ) -> dict[str, Any]:
        """Every group's crossover (card, engine, stack, batch, precision, source), with its interval and range."""
        rows = []
        for g in artifact["groups"]:
            if gpu is not None and g["gpu"].lower() != gpu.lower():
                continue
            if precision is not None and g["precision"] != precision:
                continue
            if engine is not None and engine_of(g) != engine:
                continue
            keys = ("id", "source", "tier", "gpu", "arch", "stack", "batch_size", "precision", "session", "doi")
            rows.append({k: g[k] for k in keys} | {"engine": engine_of(g), "crossover": g["crossover"]})
        return {"crossovers": rows, "dataset": artifact["dataset"]}

    @app.get("/v1/noop", include_in_schema=False)
    async def noop() -> dict[str, bool]:
        """Nothing: the floor of a request, for the speed benchmark's ratio."""
        return {"ok": True}

    return app


def serve(host: str, port: int, artifact_path: Path | str | None = None) -> None:
    """Run the app with uvicorn until interrupted."""
    try:
        import uvicorn
    except ImportError as exc:
        raise UsageError("ecocompute serve needs FastAPI and uvicorn: pip install 'ecocompute[serve]'") from exc
    uvicorn.run(create_app(artifact_path), host=host, port=port, log_level="warning")
