"""``ecocompute lint``: parse the options, call :func:`ecocompute.lint.api.lint_paths`, write the findings."""

from __future__ import annotations

from pathlib import Path

import typer

from ecocompute.schema.errors import UsageError

FORMATS = ("text", "json", "github", "sarif")


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def lint_command(
    paths: list[Path] = typer.Argument(..., help="Python files, notebooks (.ipynb) or folders.", show_default=False),
    output_format: str | None = typer.Option(None, "--format", "-f", help="text (default), json, github or sarif."),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    out_file: Path | None = typer.Option(None, "--out", help="Write the report to this file instead of stdout."),
    sarif_file: Path | None = typer.Option(None, "--sarif", help="Also write a SARIF 2.1.0 log to this file."),
    target_gpu: str | None = typer.Option(None, "--target-gpu", "--gpu", help="Card whose measurements apply."),
    stack: str | None = typer.Option(
        None, "--stack", help="eager, compiled or compiled-all (default: read from each file)."
    ),
    batch_size: int | None = typer.Option(None, "--batch-size", help="Batch a one-prompt loop is compared at."),
    select: list[str] | None = typer.Option(None, "--select", help="Only these rules or prefixes (repeatable)."),
    ignore: list[str] | None = typer.Option(None, "--ignore", help="Leave out these rules or prefixes (repeatable)."),
    severity: str | None = typer.Option(None, "--severity", help="Lowest severity that fails: note, warning, error."),
    diff: str | None = typer.Option(None, "--diff", help="Only findings on lines changed since this git ref."),
    config_file: Path | None = typer.Option(None, "--config", help="pyproject.toml to read (default: the nearest)."),
    jobs: int | None = typer.Option(None, "--jobs", min=1, help="Worker processes (default: one per CPU)."),
) -> None:
    """Find energy waste in LLM inference code, citing the measurements that show it.

    Rules ECO101-ECO105 (docs/lint/); settings from [tool.ecocompute.lint] in pyproject.toml. Exit code 0 when no
    finding is at or above --severity (default warning), 1 when one is, 2 for a usage error.

    Example: ecocompute lint src/ --target-gpu H200 --format github --sarif lint.sarif
    """
    from ecocompute.lint import output
    from ecocompute.lint.api import lint_paths
    from ecocompute.lint.config import find_pyproject, read_table, resolve

    fmt = "json" if as_json else (output_format or "text")
    if fmt not in FORMATS:
        raise UsageError(f"--format {fmt!r} is not one of {', '.join(FORMATS)}")
    pyproject = config_file or find_pyproject(Path.cwd())
    if config_file is not None and not config_file.is_file():
        raise UsageError(f"--config {config_file} is not a file")
    table = read_table(pyproject) if pyproject else {}
    cli = {"select": select or None, "ignore": ignore or None, "target-gpu": target_gpu, "stack": stack,
           "severity": severity, "batch-size": batch_size}  # fmt: skip
    config = resolve(table, cli, pyproject)
    result = lint_paths(paths, config, diff_base=diff, jobs=jobs)
    report = output.WRITERS[fmt](result.findings, result.errors)
    if out_file is not None:
        _write(out_file, report)
    else:
        typer.echo(report, nl=False)
    if sarif_file is not None:
        _write(sarif_file, output.sarif(result.findings, result.errors))
    if result.failing(config):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``ecocompute lint`` to the ``ecocompute`` app."""
    app.command("lint")(lint_command)
