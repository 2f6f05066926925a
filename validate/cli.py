"""Commands of the validator: ``ecocompute validate`` and ``ecocompute validate-signers``.

Parse arguments, call :mod:`ecocompute.validate.core`, print; nothing else happens here.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from ecocompute.console import out
from ecocompute.schema.errors import UsageError
from ecocompute.schema.io import write_text_atomic
from ecocompute.schema.models import GITHUB_LOGIN_PATTERN
from ecocompute.schema.signing import read_signers_file
from ecocompute.validate import gitdiff, report
from ecocompute.validate.core import DEFAULT_MAX_CV_PCT, FileResult, discover, signer_line_problems, validate_files
from ecocompute.validate.scope import scope_problems
from ecocompute.validate.signers import signer_problems

PATHS_ARG = typer.Argument(
    None,
    help="Submission files or folders (default: every *.json under --submissions).",
    show_default=False,
    readable=False,  # an unreadable path is the validator's E-READ finding, not a usage error
)
ALLOWED_OPT = typer.Option(
    None,
    "--allowed-signers",
    help="OpenSSH allowed_signers file whose principals are GitHub logins; default: <submissions>/allowed_signers.",
    show_default=False,
)


def _login(value: str | None) -> str | None:
    if value is not None and not re.match(GITHUB_LOGIN_PATTERN, value):
        raise UsageError(f"--pr-author {value!r} is not a GitHub login")
    return value


def _expand(paths: list[Path]) -> list[Path]:
    """Files of the named paths: a folder's files, a file itself.

    A path that cannot be examined is kept as is, so the validator reports it (E-READ) instead of stopping.
    """
    files: list[Path] = []
    for path in paths:
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            raise UsageError(f"{report.clean(path)} does not exist: pass submission files or folders") from None
        except OSError:
            files.append(path)
            continue
        files += discover(path) if stat.S_ISDIR(mode) else [path]
    return files


def select_files(paths: list[Path] | None, changed_since: str | None, root: Path) -> list[Path]:
    """The files to validate: those named, those changed since a ref, or every file under the root."""
    if paths and changed_since:
        raise UsageError("pass files or --changed-since, not both")
    if changed_since:
        return gitdiff.changed_files(changed_since, root)
    if paths:
        return _expand(paths)
    if not Path(root).is_dir():
        raise UsageError(f"{report.clean(root)} is not a folder: pass --submissions or the files to validate")
    return discover(root)


def _write_report(path: Path, text: str, root: Path) -> None:
    if Path(os.path.realpath(path)).is_relative_to(os.path.realpath(root)):
        raise UsageError(
            f"{report.clean(path)} is inside {report.clean(root)}: the validator never writes there; pick another path"
        )
    try:
        write_text_atomic(path, text)
    except OSError as exc:
        raise UsageError(f"cannot write {report.clean(path)}: {exc.strerror or exc}") from None


def _summary_table(results: list[FileResult]) -> Table:
    table = Table(title="ecocompute validate", title_justify="left")
    for name in ("file", "verdict", "errors", "warnings"):
        table.add_column(name, justify="left" if name in ("file", "verdict") else "right")
    for r in results:
        if not r.accepted:
            verdict = "[red]rejected[/]"
        else:
            verdict = "[green]accepted[/]" if r.passes_cv_gate else f"[yellow]{report.ALL_TIER}[/]"
        warnings = len(r.findings) - len(r.errors)
        table.add_row(escape(report.clean(r.path)), verdict, str(len(r.errors)), str(warnings))
    return table


def _print_findings(results: list[FileResult]) -> None:
    for r in results:
        for f in r.findings:
            style = "red" if f.is_error else "yellow"
            where = f" {escape(report.clean(f.path))}" if f.path else ""
            out.print(f"[{style}]{f.code}[/] {escape(report.clean(r.path))}{where}: {escape(report.clean(f.message))}")


def validate(
    paths: list[Path] | None = PATHS_ARG,
    changed_since: str | None = typer.Option(
        None, "--changed-since", help="Validate files added or modified since the merge base with this git ref."
    ),
    allowed_signers: Path | None = ALLOWED_OPT,
    pr_author: str | None = typer.Option(None, "--pr-author", help="The pull request's author; must be the signer."),
    report_md: Path | None = typer.Option(None, "--report-md", help="Write a markdown report to this file."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON report instead of the table."),
    max_cv: float = typer.Option(
        DEFAULT_MAX_CV_PCT, "--max-cv", min=0.0, help="CV gate of J/token per measurement, in percent."
    ),
    root: Path = typer.Option(
        Path("submissions"),
        "--submissions",
        "--root",
        help="The submissions folder (--root: its former name).",
        readable=False,  # an unreadable folder is an E-READ finding
    ),
    annotate: bool | None = typer.Option(
        None, "--annotations/--no-annotations", help="Print ::error annotations (default: on in GitHub Actions)."
    ),
    cache: Path | None = typer.Option(
        None,
        "--cache",
        help="Keep the identities of files already under --submissions in this folder, by content hash, so a "
        "later run hashes them instead of parsing them (default: no cache).",
    ),
) -> None:
    """Validate submissions: schema, signature, path, recomputed figures, plausibility, duplicates.

    A file whose only errors are E-CV (CV of J/token above the gate) is accepted into the dataset's all tier,
    not its gate tier. Exit code 0 when every file is accepted (either tier), 1 when any is rejected, 2 for a
    usage or I/O error.

    Example: ecocompute validate --changed-since origin/main --allowed-signers submissions/allowed_signers
    """
    files = select_files(paths, changed_since, root)
    allowed_signers = allowed_signers or root / "allowed_signers"
    if cache is not None and Path(os.path.realpath(cache)).is_relative_to(os.path.realpath(root)):
        raise UsageError(
            f"--cache {report.clean(cache)} is inside {report.clean(root)}: the validator never writes there"
        )
    results = validate_files(
        files,
        allowed_signers=allowed_signers,
        submissions_root=root,
        pr_author=_login(pr_author),
        max_cv_pct=max_cv,
        keep_submissions=False,
        identity_cache=cache,
    )
    problems = signer_line_problems(allowed_signers)
    if report_md is not None:
        _write_report(report_md, report.markdown_report(results, problems), root)
    if annotate if annotate is not None else os.environ.get("GITHUB_ACTIONS") == "true":
        for line in report.annotation_lines(results, problems):
            typer.echo(line, err=as_json)
    if as_json:
        typer.echo(report.json_report(results, problems))
    else:
        out.print(_summary_table(results))
        for f in problems:
            where = escape(report.clean(allowed_signers))
            out.print(f"[yellow]{f.code}[/] {where} {f.path}: {escape(report.clean(f.message))}")
        _print_findings(results)
        if not results:
            out.print("no submission files to validate")
    if not all(r.accepted for r in results):
        raise typer.Exit(1)


def validate_signers(
    changed_since: str = typer.Option(
        ..., "--changed-since", help="Compare with the file at the merge base with this git ref.", show_default=False
    ),
    pr_author: str = typer.Option(..., "--pr-author", help="The pull request's author.", show_default=False),
    published_keys: Path = typer.Option(
        ...,
        "--published-keys",
        help="The author's keys, as https://github.com/<login>.keys serves them.",
        show_default=False,
    ),
    file: Path = typer.Option(
        Path("submissions/allowed_signers"),
        "--allowed-signers",
        "--file",
        help="The allowed_signers file (--file: its former name).",
    ),
) -> None:
    """Check a pull request's change to allowed_signers: only the author's own, GitHub-published keys added.

    Exit code 0 when the change is acceptable, 1 when not, 2 for a usage or I/O error.

    Example: ecocompute validate-signers --changed-since origin/main --pr-author alice --published-keys alice.keys
    """
    login = _login(pr_author) or ""
    try:
        keys_text = published_keys.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {report.clean(published_keys)}: {exc}") from None
    problems: list[str] = []
    new_text = ""
    if os.path.lexists(file):
        try:
            new_text = read_signers_file(file)
        except UsageError as exc:  # a symlink, a folder, not UTF-8: the change itself is what is wrong
            problems.append(str(exc))
    problems += signer_problems(gitdiff.text_at(changed_since, file), new_text, login, keys_text)
    for problem in problems:
        text = report.clean(problem).replace("`", "'")  # the PR comment shows it inside a code block
        out.print(f"[red]rejected[/] {escape(report.clean(file))}: {escape(text)}")
    if problems:
        raise typer.Exit(1)
    out.print(f"[green]OK[/] {escape(str(file))}: no line added except {escape(login)}'s published keys")


def validate_changes(
    changed_since: str = typer.Option(
        ..., "--changed-since", help="Compare with the merge base with this git ref.", show_default=False
    ),
    pr_author: str = typer.Option(..., "--pr-author", help="The pull request's author.", show_default=False),
    root: Path = typer.Option(
        Path("submissions"),
        "--submissions",
        "--root",
        help="The submissions folder, relative to the repo (--root: its former name).",
    ),
) -> None:
    """Check that a pull request is a data pull request: files under submissions/ only, none of another's.

    A change outside submissions/ (workflows, validator, schema, runs/) needs a maintainer (CODEOWNERS); deleting,
    renaming or changing another contributor's files is refused. Exit code 0 when it is a data pull request, 1
    when not, 2 for a usage or git error.

    Example: ecocompute validate-changes --changed-since origin/main --pr-author alice
    """
    login = _login(pr_author) or ""
    problems = scope_problems(gitdiff.changes(changed_since), login, root.as_posix().strip("/"))
    for problem in problems:
        out.print(f"[red]rejected[/] {escape(report.clean(problem))}")
    if problems:
        raise typer.Exit(1)
    out.print(f"[green]OK[/] a data pull request: only {escape(login)}'s files under {escape(str(root))}/")


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the ``ecocompute`` app."""
    app.command("validate")(validate)
    app.command("validate-signers")(validate_signers)
    app.command("validate-changes")(validate_changes)
