"""Commands of the analysis: the crossover table and the J/token table of a published dataset."""

from __future__ import annotations

import typer

from ecocompute.console import out

DEFAULT_N_BOOT = 2000  # as ecocompute.analysis.crossovers.DEFAULT_N_BOOT (kept here so --help loads no numpy)
DEFAULT_SEED = 20261130

DATASET_OPT = typer.Option(
    ...,
    "--dataset",
    help="A folder built by `ecocompute publish build`, or a Hugging Face dataset id (ORG/NAME).",
    show_default=False,
)


def crossover_command(
    dataset: str = DATASET_OPT,
    precision: list[str] | None = typer.Option(
        None, "--precision", help="Only this precision (repeat for several); default: every one but the baseline."
    ),
    method: str = typer.Option("loglinear", "--method", help="loglinear (default) or saturating."),
    n_boot: int = typer.Option(DEFAULT_N_BOOT, "--n-boot", help="Bootstrap resamples for the 95% CI (0: none)."),
    seed: int = typer.Option(DEFAULT_SEED, "--seed", help="Seed of the bootstrap."),
) -> None:
    """Print the crossover table: the model size where quantization starts to save energy, with its 95% CI.

    One line per GPU x stack x batch size x workload length (prompt+new tokens) x precision x weights; "no
    crossover between X and Y" when the change in J/token keeps one sign over the measured sizes.

    Example: ecocompute crossover --dataset demo-out --precision nf4
    """
    from ecocompute.analysis.crossovers import crossover_frame
    from ecocompute.analysis.load import load_table
    from ecocompute.analysis.render import crossover_rich_table

    measurements = load_table(dataset, "measurements")
    windows = load_table(dataset, "windows") if n_boot > 0 else None
    table = crossover_frame(measurements, windows, precision=precision, method=method, n_boot=n_boot, seed=seed)
    out.print(crossover_rich_table(table))


def jpt_command(dataset: str = DATASET_OPT) -> None:
    """Print mean energy per token per GPU x stack x batch x workload length x weights x model x precision.

    Example: ecocompute jpt --dataset demo-out
    """
    from ecocompute.analysis.load import load_table
    from ecocompute.analysis.render import jpt_rich_table
    from ecocompute.analysis.tables import jpt_frame

    out.print(jpt_rich_table(jpt_frame(load_table(dataset, "measurements"))))


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the ``ecocompute`` app."""
    app.command("crossover")(crossover_command)
    app.command("jpt")(jpt_command)
