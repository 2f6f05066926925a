"""Commands of the contract: sign, verify, show and the JSON Schema export."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ecocompute.console import out
from ecocompute.schema.derive import derive
from ecocompute.schema.errors import EcocomputeError, SignatureError, UsageError
from ecocompute.schema.export import SCHEMA_DIR, json_schema_text, schema_file
from ecocompute.schema.io import dumps as dump_submission
from ecocompute.schema.io import load_document, load_submission, submission_from_document, write_text_atomic
from ecocompute.schema.models import SCHEMA_VERSIONS, Submission
from ecocompute.schema.signing import parse_allowed_signers, sign_submission, verify_document

FILE_ARG = typer.Argument(..., help="A submission JSON file.", show_default=False)
ALLOWED_OPT = typer.Option(
    Path("submissions/allowed_signers"),
    "--allowed-signers",
    help="OpenSSH allowed_signers file whose principals are GitHub logins.",
)


def sign(
    file: Path = FILE_ARG,
    key: Path = typer.Option(..., "--key", help="Your SSH private key (ed25519 or RSA).", show_default=False),
    signer: str = typer.Option(
        ..., "--signer", help="Your GitHub login (the submission's contributor).", show_default=False
    ),
) -> None:
    """Sign a submission in place with your SSH key (ssh-keygen -Y sign).

    Example: ecocompute sign submissions/alice/nvidia-h200/ID.json --key ~/.ssh/id_ed25519 --signer alice
    """
    submission = load_submission(file)
    signed = sign_submission(submission, key, signer)
    write_text_atomic(file, dump_submission(signed))
    assert signed.signature is not None  # noqa: S101 - set by sign_submission
    out.print(f"signed {file} as {signer} ({signed.signature.key_fingerprint})", markup=False)


def verify(file: Path = FILE_ARG, allowed_signers: Path = ALLOWED_OPT) -> None:
    """Check a submission's schema and its signature against an allowed_signers file.

    Exit code 0 when valid, 1 when not, 2 when a file cannot be read.

    Example: ecocompute verify tests/data/example/submission.json --allowed-signers tests/data/example/allowed_signers
    """
    document = load_document(file)
    submission_from_document(document)
    allowed = parse_allowed_signers(allowed_signers)
    if not isinstance(document, dict):  # pragma: no cover - submission_from_document rejects it first
        raise SignatureError("not a JSON object")
    who = verify_document(document, allowed)
    out.print(f"[green]OK[/] {escape(str(file))}: signed by {escape(who.signer)} ({who.key_fingerprint})")


def change_cells(submission: Submission) -> tuple[str | None, dict[str, str]]:
    """The change in J/token of each precision against the submission's FP16 (else BF16), with its 95% CI.

    Computed by the analysis the dataset publishes (:func:`ecocompute.analysis.change.change_frame`, the delta
    method over the windows); returns the baseline precision (None without one) and precision -> cell text.
    """
    from ecocompute.analysis.change import change_frame
    from ecocompute.schema.tables import measurement_rows, measurements_frame

    changes = change_frame(measurements_frame(measurement_rows(submission)))
    if changes.height == 0:
        return None, {}
    cells = {}
    for row in changes.iter_rows(named=True):
        low, high = row["ci95_low_pct"], row["ci95_high_pct"]
        ci = "CI n/a" if low is None or high is None else f"{low:+.1f} to {high:+.1f}"
        cells[row["precision"]] = f"{row['change_pct']:+.1f}% ({ci})"
    baseline = str(changes["baseline_precision"][0])
    return baseline, {baseline: "baseline", **cells}


def summary_table(submission: Submission, title: str) -> Table:
    """A table of the derived figures of every measurement of one submission, with its change against FP16."""
    p = submission.payload
    baseline, changes = change_cells(submission)
    change_column = f"vs {(baseline or 'fp16').upper()} (95% CI)"
    table = Table(title=title, title_justify="left")
    for name in (
        "precision",
        "windows",
        "J/token",
        "95% CI",
        "CV %",
        change_column,
        "tokens/s",
        "power W",
        "static J/t",
        "dynamic J/t",
    ):
        table.add_column(name, justify="left" if name == "precision" else "right")
    for m in p.measurements:
        if m.error or not m.windows:
            table.add_row(m.precision.value, "0", Text(m.error or "no windows", style="red"), *[""] * 7)
            continue
        d = derive(m.windows, p.idle.power_w)
        ci = "n/a" if d.ci95_pct is None else f"±{d.ci95_pct:.2f}%"
        table.add_row(
            m.precision.value, str(d.n_windows), f"{d.j_per_token_mean:.4f}", ci, f"{d.cv_pct:.2f}",
            changes.get(m.precision.value, "n/a"), f"{d.tokens_per_s:.1f}", f"{d.power_w_mean:.1f}",
            f"{d.static_j_per_token_mean:.4f}", f"{d.dynamic_j_per_token_mean:.4f}",
        )  # fmt: skip
    return table


def show(
    files: list[Path] = typer.Argument(..., help="Submission JSON files.", show_default=False),
    allowed_signers: Path | None = typer.Option(
        None, "--allowed-signers", help="Also verify each signature against this allowed_signers file."
    ),
) -> None:
    """Print each submission's derived figures as a table, with each precision's change in J/token against FP16.

    The change and its 95% CI are the dataset's (delta method over the windows); the signature is verified too
    when an allowed_signers file is given.

    Example: ecocompute show tests/data/example/submission.json --allowed-signers tests/data/example/allowed_signers
    """
    allowed = parse_allowed_signers(allowed_signers) if allowed_signers else None
    failed = 0
    for file in files:
        try:
            document = load_document(file)
            submission = submission_from_document(document)
            status = "unverified"
            if allowed is not None:
                who = verify_document(document, allowed)
                status = f"signature OK: {who.signer}"
        except EcocomputeError as exc:
            out.print(f"[red]{escape(str(file))}: {escape(str(exc))}[/]")
            failed += 1
            continue
        p = submission.payload
        label = " [yellow](EXAMPLE, not a measurement)[/]" if p.example else ""
        title = (
            f"{escape(str(file))}{label}\n{escape(p.hardware.gpu_name)} · {p.workload.architecture} "
            f"({p.workload.weights}) · {p.workload.stack.value} · batch {p.workload.batch_size} · {status}"
        )
        out.print(summary_table(submission, title))
    if failed:
        raise typer.Exit(1)


schema_app = typer.Typer(
    help="The submission JSON Schema.\n\nExample: ecocompute schema export --check", no_args_is_help=True
)


@schema_app.command("export")
def export_schema(
    check: bool = typer.Option(False, "--check", help="Fail if a committed schema differs from the models."),
    out_folder: Path | None = typer.Option(
        None,
        "--out",
        help="Folder of the submission-<version>.schema.json files (default: the package's own, which is schema/ "
        "in a source checkout; from an installed package, pass a folder to write).",
        show_default=False,
    ),
) -> None:
    """Write the JSON Schema of every schema version, generated from the models (or, with --check, compare them).

    Example: ecocompute schema export --check
    """
    out_dir = SCHEMA_DIR if out_folder is None else out_folder
    if not check and out_dir == SCHEMA_DIR and not (SCHEMA_DIR.parent / "pyproject.toml").is_file():
        raise UsageError(f"{SCHEMA_DIR} is inside the installed package, not a source checkout: pass --out DIR")
    stale = []
    for version in SCHEMA_VERSIONS:
        target, text = schema_file(version, out_dir), json_schema_text(version)
        if not check:
            write_text_atomic(target, text)
            out.print(f"wrote {target}", markup=False)
        elif (target.read_text(encoding="utf-8") if target.exists() else "") != text:
            stale.append(str(target))
        else:
            out.print(f"{target} is up to date", markup=False)
    if stale:
        raise SignatureError(f"{', '.join(stale)} out of date: run `ecocompute schema export`")


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the ``ecocompute`` app."""
    app.command("sign")(sign)
    app.command("verify")(verify)
    app.command("show")(show)
    app.add_typer(schema_app, name="schema")
