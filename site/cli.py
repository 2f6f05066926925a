"""``ecocompute publish site``: a static dashboard from a dataset build."""

from __future__ import annotations

from pathlib import Path

import typer

from ecocompute.console import out
from ecocompute.publish.hub import DEFAULT_HF_REPO


def site_command(
    dataset: str = typer.Option(..., "--dataset", help="Built dataset folder (or Hub id).", show_default=False),
    out_dir: Path = typer.Option(..., "--out", help="Folder to write the site into.", show_default=False),
    version: str | None = typer.Option(None, "--version", help="Dataset version; default: the build's MANIFEST."),
    hf_repo: str = typer.Option(DEFAULT_HF_REPO, "--hf-repo", help="Dataset id the page's snippets load."),
    doi: str | None = typer.Option(None, "--doi", help="The dataset's DOI; default: the MANIFEST's, else a Hub URL."),
) -> None:
    """Write a static dashboard of a built dataset: open OUT/index.html from the folder, or serve it as is.

    Example: ecocompute publish site --dataset out --out site-out
    """
    from ecocompute.site.payload import SiteOptions
    from ecocompute.site.render import write_site

    result = write_site(dataset, out_dir, SiteOptions(version=version, hf_repo=hf_repo, doi=doi))
    out.print(f"[green]site[/] {result.out / 'index.html'}: {len(result.files)} files, {result.bytes / 1e6:.2f} MB")
