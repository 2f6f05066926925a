"""Commands of the publisher: ``ecocompute publish build | push | demo``."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from ecocompute.console import out
from ecocompute.publish.hub import DEFAULT_HF_REPO
from ecocompute.site.cli import site_command

publish_app = typer.Typer(
    name="publish",
    help="Build the dataset from accepted submissions and push it to the Hugging Face Hub and Zenodo.\n\n"
    "Example: ecocompute publish build --submissions submissions --out out",
    no_args_is_help=True,
)


@publish_app.command("build")
def build_command(
    out_dir: Path = typer.Option(..., "--out", help="Folder to build into (replaced atomically).", show_default=False),
    submissions: list[Path] = typer.Option(
        [Path("submissions")], "--submissions", help="Submissions folder (repeat for several)."
    ),
    allowed_signers: Path | None = typer.Option(
        None, "--allowed-signers", help="allowed_signers file; default: <submissions>/allowed_signers."
    ),
    include_examples: bool = typer.Option(
        False, "--include-examples", help="Let submissions marked example: true in (demonstrations only)."
    ),
    version: str | None = typer.Option(
        None, "--version", help="Dataset version X.Y.Z; default: the newest in the dataset changelog."
    ),
    hf_repo: str = typer.Option(DEFAULT_HF_REPO, "--hf-repo", help="Dataset id the card's examples load."),
    doi: str | None = typer.Option(None, "--doi", help="The Zenodo concept DOI, once minted, for the citation."),
    cache: Path | None = typer.Option(
        None, "--cache", help="Cache of verdicts and rows by content hash; default: ~/.cache/ecocompute/publish."
    ),
    strict: bool = typer.Option(False, "--strict", help="Refuse to build when the validator rejects any file."),
) -> None:
    """Validate every submission (from the cache where unchanged) and write the dataset folder.

    Writes data/{measurements,windows,submissions}[_all]/*.parquet (the plain configs hold what passes the CV
    gate, the _all ones every accepted row, marked passes_cv_gate), findings.json, rejections.json, figures/,
    README.md (the dataset card), CHANGELOG.md and MANIFEST.json. The same submissions give byte-identical files.

    Example: ecocompute publish build --submissions submissions --out out
    """
    from ecocompute.publish.build import BuildOptions, build
    from ecocompute.publish.cache import default_cache_dir
    from ecocompute.publish.inputs import Source

    sources = [Source.at(root, allowed_signers) for root in submissions]
    options = BuildOptions(version=version, include_examples=include_examples, hf_repo=hf_repo, doi=doi,
                           cache=cache or default_cache_dir(), strict=strict)  # fmt: skip
    result = build(sources, out_dir, options)
    skipped = f", {result.skipped_examples} example(s) left out" if result.skipped_examples else ""
    rejected = f"; {result.rejected} file(s) rejected (rejections.json)" if result.rejected else ""
    cached = result.submissions_all + result.rejected + result.skipped_examples - result.validated
    out.print(
        f"[green]built[/] {result.out} (version {result.version}): {result.submissions} submissions pass the gate, "
        f"{result.submissions_all} in all, {result.measurements} measurements, {result.windows} windows{skipped}"
        f"{rejected}; {result.validated} file(s) validated, {cached} from the cache; {len(result.files)} files"
    )


@publish_app.command("check-docs")
def check_docs_command(
    dataset: Path = typer.Option(..., "--dataset", help="A folder built by `ecocompute publish build`."),
    files: list[Path] = typer.Argument(..., help="Markdown files whose <!-- finding:NAME --> spans to check."),
) -> None:
    """Fail when a doc's <!-- finding:NAME -->text<!-- /finding --> span differs from the build's findings.json.

    Example: ecocompute publish check-docs --dataset out README.md docs/method.md
    """
    from ecocompute.publish.findings import check_docs

    agreed = check_docs(dataset, files)
    out.print(f"[green]ok[/] {agreed} finding span(s) in {len(files)} file(s) agree with {dataset}/findings.json")


@publish_app.command("push")
def push_command(
    dataset: Path = typer.Option(Path("out"), "--dataset", help="The build folder to push."),
    hf_repo: str | None = typer.Option(None, "--hf-repo", help="Hugging Face dataset id ORG/NAME."),
    zenodo_deposition: str | None = typer.Option(
        None, "--zenodo-deposition", help="Publish a new version of this Zenodo deposition (any version's id)."
    ),
    zenodo_new: bool = typer.Option(False, "--zenodo-new", help="Create a first Zenodo record instead."),
    sandbox: bool = typer.Option(False, "--sandbox", help="Use sandbox.zenodo.org."),
    dry_run: bool = typer.Option(True, "--dry-run/--no-dry-run", help="Only print what would happen (default)."),
) -> None:
    """Push a build to the Hugging Face Hub and/or Zenodo (a dry run unless --no-dry-run).

    Tokens come from the environment only: HF_TOKEN and ZENODO_API_TOKEN.

    Example: ecocompute publish push --dataset out --hf-repo ecocompute/llm-inference-energy --no-dry-run
    """
    from ecocompute.publish.push import PushRequest, push
    from ecocompute.publish.zenodo import ZenodoTarget

    zenodo = None
    if zenodo_deposition is not None or zenodo_new:
        zenodo = ZenodoTarget(zenodo_deposition, zenodo_new, sandbox, os.environ.get("ZENODO_BASE_URL") or None)
    outcome = push(PushRequest(dataset, hf_repo, zenodo), dry_run=dry_run)
    heading = "dry run, nothing sent; pass --no-dry-run to" if dry_run else "pushed; the steps were to"
    out.print(f"{dataset} (version {outcome.version}): {heading}:")
    for step in outcome.plan:
        out.print(f"  {step}")
    if outcome.hub is not None:
        out.print(f"[green]Hub[/] {outcome.hub.commit_url} tagged {outcome.hub.tag}")
    if outcome.zenodo is not None:
        out.print(f"[green]Zenodo[/] deposition {outcome.zenodo.deposition}, DOI {outcome.zenodo.doi}")


@publish_app.command("demo")
def demo_command(
    out_dir: Path = typer.Option(Path("demo-out"), "--out", help="Folder to build the demo dataset into."),
    submissions: Path = typer.Option(Path("submissions"), "--submissions", help="Real submissions folder."),
    examples: Path = typer.Option(
        Path("tests/publish/data/examples"), "--examples", help="Folder of example submissions."
    ),
) -> None:
    """Build from submissions/ plus the example set, load it with datasets.load_dataset, print the tables.

    Example: ecocompute publish demo --out demo-out
    """
    from ecocompute.publish.demo import main

    main(out_dir, submissions, examples)


publish_app.command("site")(site_command)


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the ``ecocompute`` app."""
    app.add_typer(publish_app, name="publish")
