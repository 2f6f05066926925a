"""What the site shows, computed once from a dataset build and embedded in the page as columnar JSON.

The tables come from the build's parquet (the ``*_all`` configs when the build has them, so the reader can
choose the tier; else the default configs, whose rows all pass the CV gate). The changes against FP16 and the
crossovers come from :mod:`ecocompute.analysis`, the functions the dataset card uses, per tier. Every table the
page gets names its engine (transformers for a table from before engines), so the page keeps engines apart.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import polars as pl

from ecocompute.analysis.change import change_frame
from ecocompute.analysis.crossovers import crossover_frame
from ecocompute.analysis.defaults import DEFAULT_N_BOOT, DEFAULT_SEED
from ecocompute.analysis.frames import with_engine
from ecocompute.analysis.load import load_table
from ecocompute.publish.hub import DEFAULT_HF_REPO
from ecocompute.schema.errors import UsageError
from ecocompute.site import columns

REJECTIONS = "rejections.json"
MANIFEST = "MANIFEST.json"
CARD = "README.md"
HUB_URL = "https://huggingface.co/datasets/{repo}"
DOI_URL = "https://doi.org/{doi}"


@dataclass(frozen=True)
class SiteOptions:
    """What the page names: the dataset's version, Hub id and DOI; and the crossover bootstrap."""

    version: str | None = None
    hf_repo: str = DEFAULT_HF_REPO
    doi: str | None = None
    n_boot: int = DEFAULT_N_BOOT
    seed: int = DEFAULT_SEED


@dataclass(frozen=True)
class Tables:
    """The three tables the site reads and the config names they came from."""

    measurements: pl.DataFrame
    windows: pl.DataFrame
    submissions: pl.DataFrame
    configs: dict[str, str]


def _table(source: str | Path, config: str) -> pl.DataFrame | None:
    try:
        return load_table(source, config)
    except UsageError:
        return None


TIER = "in_gate_tier"  # the site's own column: the row is in the default (gate) configs


def read_tables(source: str | Path) -> Tables:
    """The ``*_all`` tables of a build when it has them, else the default ones, with the tier of every row.

    A measurement is in the gate tier when the default ``measurements`` config holds it (its submission passes
    the CV gate); ``passes_cv_gate`` stays the row's own verdict, as the dataset gives it.
    """
    configs: dict[str, str] = {}
    frames: dict[str, pl.DataFrame] = {}
    for base in ("measurements", "windows", "submissions"):
        frame = _table(source, f"{base}_all")
        configs[base] = f"{base}_all" if frame is not None else base
        frames[base] = frame if frame is not None else load_table(source, base)
    measurements = frames["measurements"]
    if configs["measurements"] == "measurements":
        measurements = measurements.with_columns(pl.lit(True).alias(TIER))
    else:
        default = load_table(source, "measurements").select("submission_id", "precision", pl.lit(True).alias(TIER))
        measurements = measurements.join(default, on=["submission_id", "precision"], how="left", maintain_order="left")
        measurements = measurements.with_columns(pl.col(TIER).fill_null(False))
    if "passes_cv_gate" not in measurements.columns:
        measurements = measurements.with_columns(pl.col(TIER).alias("passes_cv_gate"))
    return Tables(measurements, frames["windows"], frames["submissions"], configs)


def columnar(frame: pl.DataFrame) -> dict[str, Any]:
    """A frame as ``{"n": rows, "columns": {name: values}}``; text columns as ``{"levels", "codes"}`` (-1 null)."""
    out: dict[str, Any] = {}
    for name in frame.columns:
        series = frame[name]
        if series.dtype == pl.String:
            levels = sorted(v for v in series.unique().to_list() if v is not None)
            index = {v: i for i, v in enumerate(levels)}
            out[name] = {"levels": levels, "codes": [-1 if v is None else index[v] for v in series.to_list()]}
        elif series.dtype.is_float():
            out[name] = series.fill_nan(None).to_list()
        else:
            out[name] = series.to_list()
    return {"n": frame.height, "columns": out}


def crossovers(tables: Tables, options: SiteOptions, known: Mapping[str, pl.DataFrame] | None = None) -> pl.DataFrame:
    """The crossover table of each tier (``tier`` = ``gate`` or ``all``), computed once when both hold the same rows.

    ``known``: tier -> crossovers the caller computed already with the same function, rows, bootstrap size and
    seed (``publish build`` does, for the card); a tier it lacks is computed here.
    """
    m, w = tables.measurements, tables.windows
    known = dict(known or {})
    gated = m.filter(pl.col(TIER))
    if gated.height == m.height:  # one set of rows: one table serves both tiers
        shared = next((known[tier] for tier in ("all", "gate") if tier in known), None)
        if shared is None:
            shared = crossover_frame(m, w, n_boot=options.n_boot, seed=options.seed)
        known = {"gate": shared, "all": shared}
    for tier in ("gate", "all"):
        if tier not in known:
            rows = gated if tier == "gate" else m
            ids = rows["submission_id"].unique().implode()
            windows = w.filter(pl.col("submission_id").is_in(ids))
            known[tier] = crossover_frame(rows, windows, n_boot=options.n_boot, seed=options.seed)
    return pl.concat([known[tier].with_columns(tier=pl.lit(tier)) for tier in ("gate", "all")], how="diagonal_relaxed")


def _manifest(folder: Path | None) -> dict[str, Any]:
    path = folder / MANIFEST if folder else None
    return json.loads(path.read_text(encoding="utf-8")) if path and path.is_file() else {}


def card_citation(folder: Path | None) -> tuple[str | None, str | None]:
    """The dataset card's ``pretty_name`` and its BibTeX block, when the folder has a card."""
    path = folder / CARD if folder else None
    if not path or not path.is_file():
        return None, None
    text = path.read_text(encoding="utf-8")
    name = re.search(r'^pretty_name:\s*"?(.*?)"?\s*$', text, re.MULTILINE)
    bibtex = re.search(r"```bibtex\n(.*?)```", text, re.DOTALL)
    return (name.group(1) if name else None), (bibtex.group(1).strip() if bibtex else None)


def rejections(folder: Path | None) -> list[dict[str, Any]] | None:
    """The build's ``rejections.json`` as a list of ``{submission, findings: [{code, message}]}`` (None: no file)."""
    path = folder / REJECTIONS if folder else None
    if not path or not path.is_file():
        return None
    raw = json.loads(path.read_text(encoding="utf-8"))
    items = raw.get("rejections", raw) if isinstance(raw, dict) else raw
    if isinstance(items, dict):  # {submission path or id: [findings]}
        items = [{"submission": key, "findings": value} for key, value in items.items()]
    result = []
    for item in items:
        findings = item.get("findings") or item.get("errors") or []
        if "codes" in item:  # the build's own form: parallel lists of codes and messages
            findings = [
                {"code": c, "message": m} for c, m in zip(item["codes"], item.get("messages", []), strict=False)
            ]
        submission = item.get("submission") or item.get("file") or item.get("path") or item.get("submission_id") or "?"
        result.append(
            {
                "submission": str(submission),
                "submission_id": item.get("submission_id"),
                "findings": [
                    {"code": str(f.get("code", "")), "message": str(f.get("message", "")), "where": f.get("path")}
                    for f in findings
                    if isinstance(f, dict)
                ],
            }
        )
    return result


def defaults() -> dict[str, Any]:
    """The cited defaults for grid intensity, PUE and the GPU-hour price (``site/data/defaults.json``)."""
    text = resources.files("ecocompute.site").joinpath("data/defaults.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def meta(folder: Path | None, tables: Tables, options: SiteOptions) -> dict[str, Any]:
    """Version, DOI or URL, citation and the configs a reader loads, for every page."""
    manifest = _manifest(folder)
    version = options.version or manifest.get("version")
    if version is None:
        raise UsageError("the dataset has no MANIFEST.json with a version: pass --version")
    doi = options.doi or manifest.get("doi")
    title, bibtex = card_citation(folder)
    return {
        "title": title or "ecocompute dataset",
        "version": version,
        "hf_repo": options.hf_repo,
        "doi": doi,
        "url": DOI_URL.format(doi=doi) if doi else HUB_URL.format(repo=options.hf_repo),
        "bibtex": bibtex,
        "configs": tables.configs,
        "tiers": tables.configs["measurements"].endswith("_all"),
    }


def build_payload(
    source: str | Path, options: SiteOptions, known: Mapping[str, pl.DataFrame] | None = None
) -> dict[str, Any]:
    """Everything the page embeds, from a build folder (or a Hub id: then no card, manifest or rejections).

    ``known``: tier -> crossover table the caller computed already (see :func:`crossovers`).
    """
    folder = Path(source) if Path(source).is_dir() else None
    tables = read_tables(source)
    m, m_names = columns.select(tables.measurements, columns.MEASUREMENTS)
    s, s_names = columns.select(tables.submissions, columns.SUBMISSIONS)
    m = m.join(s.select("submission_id", "gpu_count"), on="submission_id", how="left", maintain_order="left")
    tiers = tables.measurements.select("submission_id", "precision", TIER)
    changes = change_frame(tables.measurements).join(tiers, on=["submission_id", "precision"], maintain_order="left")
    c, c_names = columns.select(changes, {**columns.CHANGES, TIER: (TIER,)})
    x, x_names = columns.select(crossovers(tables, options, known), {**columns.CROSSOVERS, "tier": ("tier",)})
    return {
        "meta": meta(folder, tables, options),
        "defaults": defaults(),
        "names": {
            "measurements": {**m_names, "gpu_count": s_names.get("gpu_count", "gpu_count")},
            "changes": c_names,
            "crossovers": x_names,
        },
        "measurements": columnar(with_engine(m)),  # changes and crossovers have the analysis's engine column
        "changes": columnar(c),
        "crossovers": columnar(x),
        "rejections": rejections(folder),
    }
