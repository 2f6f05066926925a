"""Write the static site: ``index.html`` with the data embedded, the app, and the vendored chart library.

Every file is written from the package (``static/``, ``templates/``) and the payload alone, with no timestamp,
so the same build gives the same bytes. The page works opened from a folder (``file://``) or served as static
files (GitHub Pages, a Hugging Face static Space): nothing is fetched after it loads.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

import polars as pl

from ecocompute.site.payload import SiteOptions, build_payload

STATIC = ("app.js", "app.css", "vendor/d3.min.js", "vendor/d3.LICENSE", "vendor/README.md")
VENDOR = {"d3": "7.9.2"}  # npm package -> the version vendored in static/vendor (see its README.md)
INDEX = "index.html"
README = "README.md"  # front matter that makes the folder a static Hugging Face Space
SITE_DIR = "site"  # where ``publish build`` writes the site inside the dataset folder


class BuildSettings(Protocol):
    """What the site takes from ``publish build``'s options."""

    @property
    def hf_repo(self) -> str:
        """The dataset id the page's snippets load."""

    @property
    def n_boot(self) -> int:
        """Bootstrap resamples of the crossover CI."""

    @property
    def seed(self) -> int:
        """Seed of the bootstrap."""

    @property
    def doi(self) -> str | None:
        """The dataset's DOI, when known."""


@dataclass(frozen=True)
class SiteResult:
    """What was written: the folder, its files (relative paths) and their total size."""

    out: Path
    files: tuple[str, ...]
    bytes: int


def embed_json(payload: dict[str, Any]) -> str:
    """The payload as compact JSON safe inside ``<script type="application/json">`` (every ``<`` escaped)."""
    text = json.dumps(payload, separators=(",", ":"), sort_keys=True, allow_nan=False, ensure_ascii=False)
    return text.replace("<", "\\u003c")


def index_html(payload: dict[str, Any]) -> str:
    """The page: the template with the dataset's name, version and link filled in and the data embedded."""
    meta = payload["meta"]
    template = resources.files("ecocompute.site").joinpath("templates/index.html").read_text(encoding="utf-8")
    values = {
        "title": html.escape(meta["title"]),
        "version": html.escape(meta["version"]),
        "url": html.escape(meta["url"], quote=True),
        "link_text": html.escape(f"doi:{meta['doi']}" if meta["doi"] else meta["url"]),
        "data": embed_json(payload),
    }
    for key, value in values.items():
        template = template.replace("{{" + key + "}}", value)
    return template


def readme(payload: dict[str, Any]) -> str:
    """The folder's README.md: a Hugging Face static-Space front matter and what the folder is."""
    meta = payload["meta"]
    text = resources.files("ecocompute.site").joinpath("templates/README.md").read_text(encoding="utf-8")
    for key in ("title", "version", "url"):
        text = text.replace("{{" + key + "}}", meta[key])
    return text


def write_site(
    source: str | Path, out: Path, options: SiteOptions | None = None, known: Mapping[str, pl.DataFrame] | None = None
) -> SiteResult:
    """Build the site of the dataset at ``source`` (a build folder or Hub id) into ``out``.

    ``known``: tier (``gate``, ``all``) -> the crossovers the caller computed already (``publish build`` does).
    """
    payload = build_payload(source, options or SiteOptions(), known)
    out.mkdir(parents=True, exist_ok=True)
    package = resources.files("ecocompute.site").joinpath("static")
    written: list[Path] = []
    for name in STATIC:
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(package.joinpath(name).read_bytes())
        written.append(target)
    (out / INDEX).write_text(index_html(payload), encoding="utf-8")
    (out / README).write_text(readme(payload), encoding="utf-8")
    written += [out / INDEX, out / README]
    files = tuple(sorted(p.relative_to(out).as_posix() for p in written))
    return SiteResult(out, files, sum(p.stat().st_size for p in written))


def write_build_site(
    folder: Path,
    version: str,
    options: BuildSettings,
    gated: pl.DataFrame | None,
    everything: pl.DataFrame | None = None,
) -> SiteResult:
    """``publish build``'s call: the site of the build being written in ``folder``, into ``folder/site``.

    ``gated`` and ``everything``: the crossovers the build computed for its card, of the gate tier and of every
    accepted row, so the site runs no bootstrap of its own.
    """
    settings = SiteOptions(version, options.hf_repo, options.doi, options.n_boot, options.seed)
    known = {tier: frame for tier, frame in (("gate", gated), ("all", everything)) if frame is not None}
    return write_site(folder, folder / SITE_DIR, settings, known)
