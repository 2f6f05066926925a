"""Commands of the analysis: ``ecocompute j-per-token`` (J/token and change) and ``ecocompute crossover``."""

from __future__ import annotations

from typing import Any

import typer

from ecocompute.analysis.defaults import DEFAULT_N_BOOT, DEFAULT_SEED
from ecocompute.console import err, out

DATASET_OPT = typer.Option(
    ...,
    "--dataset",
    help="A folder built by `ecocompute publish build`, or a Hugging Face dataset id (ORG/NAME).",
    show_default=False,
)
GPU_OPT = typer.Option(None, "--gpu", help="GPU name or a word of it (h200), or a comma list.")
ENGINE_OPT = typer.Option(None, "--engine", help="Inference engine(s): transformers, llama.cpp (comma list).")
STACK_OPT = typer.Option(None, "--stack", help="Software stack(s): eager, compiled, compiled-all (comma list).")
BATCH_OPT = typer.Option(None, "--batch-size", help="Batch size(s), e.g. 1 or 1,8.")
PRECISION_OPT = typer.Option(None, "--precision", help="Precision(s), e.g. nf4 or nf4,int8-t0 (any case).")
TIER_OPT = typer.Option("all", "--tier", help="all (every accepted row, the _all configs) or gated (CV < 2%).")


def _load(dataset: str, table: str, tier: str) -> Any:
    """The table of ``tier`` (``all``: the ``_all`` config; ``gated``: the plain one)."""
    from ecocompute.analysis.defaults import ALL_SUFFIX
    from ecocompute.analysis.load import load_table
    from ecocompute.analysis.selection import TIERS, parse_choice

    chosen = parse_choice(tier, TIERS, "tier") or ["all"]
    return load_table(dataset, table + ALL_SUFFIX if chosen == ["all"] else table)


def _selected(dataset: str, tier: str, **filters: Any) -> Any:
    from ecocompute.analysis.selection import select_frame
    from ecocompute.schema.errors import UsageError

    measurements = select_frame(_load(dataset, "measurements", tier), **filters)
    if measurements.height == 0:
        given = ", ".join(f"{k}={v}" for k, v in filters.items() if v is not None) or "none"
        raise UsageError(f"no measurement of {dataset} matches the filters ({given}): widen them")
    return measurements


def crossover_command(
    dataset: str = DATASET_OPT,
    gpu: str | None = GPU_OPT,
    engine: str | None = ENGINE_OPT,
    stack: str | None = STACK_OPT,
    batch_size: str | None = BATCH_OPT,
    precision: str | None = typer.Option(
        None, "--precision", help="Quantized precision(s), e.g. nf4 or nf4,int8-t0; default: every one measured."
    ),
    tier: str = TIER_OPT,
    method: str = typer.Option("loglinear", "--method", help="loglinear (default) or saturating."),
    n_boot: int = typer.Option(DEFAULT_N_BOOT, "--n-boot", help="Bootstrap resamples for the 95% CI (0: none)."),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Seed of the bootstrap."),
) -> None:
    """Print the crossover table: the model size where quantization starts to save energy, with its 95% CI.

    One line per GPU x engine x stack x batch size x workload length (prompt+new tokens) x precision x weights;
    "no crossover between X and Y" when the change in J/token keeps one sign over the measured sizes. Each engine
    is measured against its own FP16.

    Example: ecocompute crossover --dataset out --gpu h200 --engine transformers --stack compiled-all --precision nf4
    """
    from ecocompute.analysis.crossovers import crossover_frame
    from ecocompute.analysis.render import crossover_rich_table
    from ecocompute.analysis.selection import parse_precisions

    wanted = parse_precisions(precision)
    filters = {"gpu": gpu, "engine": engine, "stack": stack, "batch": batch_size}
    measurements = _selected(dataset, tier, **filters)
    windows = _load(dataset, "windows", tier) if n_boot > 0 else None
    baselines = measurements if wanted is None else measurements.filter(
        measurements["precision"].is_in([*wanted, "fp16", "bf16"])
    )  # fmt: skip
    table = crossover_frame(baselines, windows, precision=wanted, method=method, n_boot=n_boot, seed=seed)
    if table.height == 0:
        from ecocompute.schema.errors import UsageError

        raise UsageError(f"no {', '.join(wanted or ['quantized'])} measurement with an FP16/BF16 baseline matches")
    out.print(crossover_rich_table(table))


def j_per_token_command(
    dataset: str = DATASET_OPT,
    gpu: str | None = GPU_OPT,
    engine: str | None = ENGINE_OPT,
    stack: str | None = STACK_OPT,
    batch_size: str | None = BATCH_OPT,
    precision: str | None = PRECISION_OPT,
    tier: str = TIER_OPT,
) -> None:
    """Print J/token, Wh per 1,000 tokens and the change against FP16 (else BF16) per model and precision.

    One table per GPU x engine x stack x batch x workload length x weights; the change is pooled over submissions.

    Example: ecocompute j-per-token --dataset out --gpu h200 --stack eager --batch-size 1 --precision fp16,nf4
    """
    from ecocompute.analysis.change import change_frame, pooled_change_frame
    from ecocompute.analysis.j_per_token import j_per_token_frame
    from ecocompute.analysis.render import j_per_token_rich_table

    measurements = _selected(dataset, tier, gpu=gpu, engine=engine, stack=stack, batch=batch_size)
    table = j_per_token_frame(measurements)
    pooled = pooled_change_frame(change_frame(measurements))
    if precision is not None:
        from ecocompute.analysis.selection import select_frame

        table = select_frame(table, precision=precision)
        if table.height == 0:
            from ecocompute.schema.errors import UsageError

            raise UsageError(f"no {precision} measurement of {dataset} matches the filters: widen them")
    out.print(j_per_token_rich_table(table, pooled))


def jpt_command(dataset: str = DATASET_OPT) -> None:
    """Deprecated: use `ecocompute j-per-token` (this alias goes in the next release).

    Example: ecocompute jpt --dataset out
    """
    err.print("[yellow]`ecocompute jpt` is deprecated: use `ecocompute j-per-token`[/]")
    j_per_token_command(dataset, None, None, None, None, None, "all")


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the ``ecocompute`` app."""
    app.command("crossover")(crossover_command)
    app.command("j-per-token")(j_per_token_command)
    app.command("jpt", hidden=True)(jpt_command)
