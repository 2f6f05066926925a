"""Commands of the estimator: ``ecocompute estimate``, ``ecocompute import`` and ``ecocompute serve``."""

from __future__ import annotations

from pathlib import Path

import typer

from ecocompute.console import out
from ecocompute.estimate.models import ENGINES, PRECISIONS
from ecocompute.schema.errors import UsageError

ARTIFACT_OPT = typer.Option(
    None,
    "--artifact",
    "--dataset",
    help="artifact.json, or a folder built by `ecocompute publish build`; default: the shipped one.",
)


def estimate_command(
    gpu: str = typer.Option(..., "--gpu", help="Card (H200, RTX 4090, ...) or architecture (hopper, ada, ...)."),
    precision: str = typer.Option(..., "--precision", help=f"{', '.join(PRECISIONS[:-1])} or {PRECISIONS[-1]}."),
    params_b: float | None = typer.Option(None, "--params-b", help="Model size in billions of parameters."),
    model: str | None = typer.Option(None, "--model", help="Hugging Face model id (size from the local cache)."),
    engine: str = typer.Option(
        ENGINES[0], "--engine", help=f"Inference engine: {' or '.join(ENGINES)}; answered from its own runs only."
    ),
    stack: str = typer.Option("eager", "--stack", help="eager, compiled or compiled-all."),
    batch_size: int = typer.Option(1, "--batch-size", help="Sequences per generate() call."),
    prompt_tokens: int = typer.Option(128, "--prompt-tokens", help="Prompt tokens per sequence."),
    new_tokens: int = typer.Option(256, "--new-tokens", help="New tokens per sequence."),
    tier: str = typer.Option("all", "--tier", help="all, gate (under the 2% CV gate only) or published."),
    artifact: Path | None = ARTIFACT_OPT,
    as_json: bool = typer.Option(False, "--json", help="Print the answer as JSON."),
) -> None:
    """Estimate the change in energy per token of a precision against the engine's FP16, with its 95% interval.

    Example: ecocompute estimate --gpu H200 --params-b 7.6 --precision nf4 --stack compiled-all

    Example: ecocompute estimate --gpu H200 --params-b 1.5 --precision q4_k_m --engine llama.cpp
    """
    from ecocompute.estimate import Question, estimate, load_artifact
    from ecocompute.estimate.render import answer_table, question_from

    question = question_from(
        gpu=gpu, params_b=params_b, model=model, precision=precision, engine=engine, stack=stack,
        batch_size=batch_size,
        prompt_tokens=prompt_tokens, new_tokens=new_tokens, tier=tier,
    )  # fmt: skip
    answer = estimate(Question.model_validate(question), load_artifact(artifact))
    if as_json:
        typer.echo(answer.model_dump_json(indent=1))
    else:
        out.print(answer_table(answer))


def import_command(
    reports: list[Path] = typer.Argument(..., help="ecocompute-energy/1.x report files (energy.json)."),
    out_file: Path = typer.Option(..., "--out", help="Where to write the new artifact.", show_default=False),
    artifact: Path | None = ARTIFACT_OPT,
    allow_illustrative: bool = typer.Option(
        False, "--allow-illustrative", help="Import reports marked illustrative (synthetic); demonstrations only."
    ),
) -> None:
    """Import measurement-container reports into the literature tier (basis: published) of a new artifact.

    Each report is checked against the seed's ecocompute-energy schema; it never becomes a measurement.

    Example: ecocompute import energy.json --out my-artifact.json
    """
    from ecocompute.estimate import load_artifact
    from ecocompute.estimate.build import write_artifact
    from ecocompute.estimate.imports import import_reports

    result = import_reports(load_artifact(artifact), reports, allow_illustrative=allow_illustrative)
    write_artifact(result, out_file)
    out.print(f"[green]imported[/] {len(reports)} report(s) into the literature tier: {out_file}")


def serve_command(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", help="Port to listen on."),
    artifact: Path | None = ARTIFACT_OPT,
) -> None:
    """Serve the estimator over HTTP: /v1/estimate (GET, POST), /v1/gpus, /v1/crossovers, /docs, /openapi.json.

    Example: ecocompute serve --port 8000
    """
    try:
        from ecocompute.estimate.server import serve
    except ImportError as exc:
        raise UsageError(str(exc)) from exc

    serve(host, port, artifact)


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the ``ecocompute`` app."""
    app.command("estimate")(estimate_command)
    app.command("import")(import_command)
    app.command("serve")(serve_command)
