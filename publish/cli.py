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
    beyond_gate: list[Path] = typer.Option(
        [],
        "--beyond-gate",
        help="Folder of signed runs rejected for their spread (E-CV) alone, e.g. runs (repeat for several): the "
        "card's 'Beyond the gate' section pools them with the submissions; they never become rows. Signatures are "
        "checked against --allowed-signers, else the first submissions folder's allowed_signers.",
    ),
) -> None:
    """Validate every submission, refuse on any rejection, and write the dataset folder.

    Writes data/{windows,measurements,submissions}/*.parquet, figures/, README.md (the dataset card),
    CHANGELOG.md and MANIFEST.json. The same submissions give byte-identical files.

    Example: ecocompute publish build --submissions submissions --beyond-gate runs --out out
    """
    from ecocompute.publish.build import BuildOptions, build
    from ecocompute.publish.inputs import Source

    sources = [Source.at(root, allowed_signers) for root in submissions]
    beyond = [Source.at(root, allowed_signers or submissions[0] / "allowed_signers") for root in beyond_gate]
    options = BuildOptions(version=version, include_examples=include_examples, hf_repo=hf_repo)
    result = build(sources, out_dir, options, beyond)
    skipped = f", {result.skipped_examples} example(s) left out" if result.skipped_examples else ""
    runs = f"; {result.beyond_gate} run(s) beyond the gate in the card" if result.beyond_gate else ""
    out.print(
        f"[green]built[/] {result.out} (version {result.version}): {result.submissions} submissions, "
        f"{result.measurements} measurements, {result.windows} windows{skipped}{runs}; {len(result.files)} files"
    )


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
    runs: Path = typer.Option(
        Path("runs"), "--beyond-gate", help="Runs rejected for their spread alone, for the card (when it exists)."
    ),
    gated_only: bool = typer.Option(False, "--gated-only", help="Leave the runs beyond the gate out of the card."),
) -> None:
    """Build from submissions/ plus the example set, load it with datasets.load_dataset, print the tables.

    Example: ecocompute publish demo --out demo-out
    """
    from ecocompute.publish.demo import main

    main(out_dir, submissions, examples, None if gated_only else runs)


publish_app.command("site")(site_command)


def register(app: typer.Typer) -> None:
    """Add this stage's commands to the ``ecocompute`` app."""
    app.add_typer(publish_app, name="publish")
