"""The dataset card: README.md with YAML front matter (licence, name, tags, size, configs) and the results.

The words live in ``templates/card.md``; the tables come from :mod:`ecocompute.analysis.sections` over the
analysis computed once per tier (:class:`ecocompute.analysis.results.Results`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from string import Template
from typing import Any

import polars as pl

from ecocompute.analysis.defaults import ALL_CONFIGS, ALL_SUFFIX, CONFIGS
from ecocompute.analysis.results import Results
from ecocompute.analysis.sections import (
    crossover_section,
    j_per_token_sections,
    markdown_table,
    sensor_section,
    stack_section,
)
from ecocompute.publish.columns import BY_CONFIG
from ecocompute.publish.figures import FigureRef
from ecocompute.publish.parquet import data_file
from ecocompute.publish.versions import template_text

PRETTY_NAME = "ecocompute: measured LLM-inference GPU energy"
TAGS = ("energy", "gpu", "llm-inference", "quantization", "bitsandbytes", "nvml", "green-ai", "benchmark")
DEFAULT_CONFIG = "measurements"
REPOSITORY_URL = "https://github.com/ecocompute/ecocompute"
GATE_DOCS = {
    "windows": "derived: its measurement's CV of J/token is below the 2% gate",
    "measurements": "derived: the CV of J/token is below the 2% gate",
    "submissions": "derived: every measurement passes the CV gate (the plain configs hold only these submissions)",
}
SIZE_CATEGORIES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
                   (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"))  # fmt: skip


@dataclass(frozen=True)
class Counts:
    """Rows and submissions of each tier, for the summary."""

    submissions: int
    submissions_all: int
    measurements: int
    measurements_all: int
    windows: int
    windows_all: int
    warmup_windows: int
    contributors: int
    gpus: tuple[str, ...]
    rejected: int


@dataclass(frozen=True)
class CardInputs:
    """Everything the card shows."""

    version: str
    hf_repo: str
    gated: Results
    everything: Results
    findings: dict[str, dict[str, Any]]
    counts: Counts
    figures: Sequence[FigureRef]
    include_examples: bool
    skipped_examples: int
    changelog: str
    doi: str | None = None


def dataset_url(hf_repo: str) -> str:
    """The dataset's page on the Hugging Face Hub."""
    return f"https://huggingface.co/datasets/{hf_repo}"


def size_category(rows: int) -> str:
    """The Hub's size category for a table of ``rows`` rows."""
    for limit, label in SIZE_CATEGORIES:
        if rows < limit:
            return label
    return "n>1T"


def front_matter(rows: int) -> str:
    """YAML front matter: licence, pretty name, tags, size category and the six configs with their files."""
    quote = json.dumps  # a JSON string is a valid YAML scalar
    lines = ["---", "license: cc-by-4.0", f"pretty_name: {quote(PRETTY_NAME)}", "language:", "- en", "tags:"]
    lines += [f"- {tag}" for tag in TAGS]
    lines += ["size_categories:", f"- {size_category(rows)}", "configs:"]
    for config in sorted(ALL_CONFIGS, key=lambda c: c != DEFAULT_CONFIG):
        lines += [f"- config_name: {config}", "  data_files:", "  - split: train",
                  f"    path: {quote(data_file(config).rsplit('/', 1)[0] + '/*.parquet')}"]  # fmt: skip
        if config == DEFAULT_CONFIG:
            lines.append("  default: true")
    return "\n".join([*lines, "---"])


def _banner(inputs: CardInputs) -> str:
    if inputs.include_examples:
        return (
            "> **WARNING: this build includes EXAMPLE submissions** (`is_example = true`): synthetic data for "
            "demonstrations and tests, not measurements. Published versions are built without them."
        )
    note = "Submissions marked as examples are never part of a published version"
    if inputs.skipped_examples:
        note += f" ({inputs.skipped_examples} example submission(s) were left out of this build)"
    return f"> {note}."


def _summary(c: Counts) -> str:
    rejected = f" The validator rejected {c.rejected} other file(s) (`rejections.json`)." if c.rejected else ""
    return (
        f"This version holds **{c.submissions} submissions** that pass the CV gate ({c.measurements} measurements, "
        f"{c.windows} windows) and **{c.submissions_all} in all** ({c.measurements_all} measurements, "
        f"{c.windows_all} windows, plus {c.warmup_windows} warm-up windows) from {c.contributors} contributor(s) on "
        f"{len(c.gpus)} GPU model(s) ({', '.join(c.gpus) or 'none yet'}).{rejected}"
    )


def findings_section(findings: dict[str, dict[str, Any]]) -> str:
    """Each finding of the build: its name, text and config."""
    if not findings:
        return "No findings yet."
    rows = [[f"`{name}`", f["text"], f"`{f['config']}`", str(len(f["rows"]))] for name, f in sorted(findings.items())]
    return markdown_table(["finding", "value", "config", "submissions"], rows)


def beyond_gate_section(inputs: CardInputs) -> str:
    """What the ``_all`` rows add: how many fail the gate, their spread, and the crossovers over every row."""
    m = inputs.everything.measurements
    failing = m.filter(~pl.col("passes_cv_gate")) if "passes_cv_gate" in m.columns else m.clear()
    if failing.height == 0:
        return "Every accepted measurement of this version passes the CV gate: the `_all` configs equal the others."
    worst = failing.group_by("submission_id").agg(pl.max("cv_pct"))["cv_pct"].to_list()
    n = failing["submission_id"].n_unique()
    return (
        f"{n} submission(s) failed the CV gate alone (E-CV: their most spread measurement has a CV of J/token of "
        f"{min(worst):.2f}-{max(worst):.2f}% against the gate's 2%); every other check passed. Their rows are in "
        f"the `_all` configs (`passes_cv_gate = false`), which reach stacks, batch sizes and sizes the gated rows do "
        f"not. The crossover over `measurements_all`:\n\n{crossover_section(inputs.everything)}"
    )


def figures_section(figures: Sequence[FigureRef]) -> str:
    """Each figure (PNG shown, SVG and PDF linked) with its caption."""
    if not figures:
        return "No group has been measured at two sizes yet, so there is no figure."
    return "\n\n".join(
        f"![{f.caption}]({f.stem}.png)\n\n*{f.caption}* ([SVG]({f.stem}.svg), [PDF]({f.stem}.pdf))" for f in figures
    )


def columns_section() -> str:
    """The basis of every column, table by table."""
    parts = []
    for config in CONFIGS:
        columns = {**BY_CONFIG[config]}
        columns.setdefault("passes_cv_gate", GATE_DOCS[config])
        rows = [[f"`{name}`", basis] for name, basis in columns.items()]
        parts.append(f"### `{config}` and `{config}{ALL_SUFFIX}`\n\n{markdown_table(['column', 'basis (unit)'], rows)}")
    return "\n\n".join(parts)


def citation(inputs: CardInputs) -> tuple[str, str]:
    """The citation line and the BibTeX entry (URL, version, DOI once minted)."""
    url = dataset_url(inputs.hf_repo)
    doi = f", doi:{inputs.doi}" if inputs.doi else ""
    title = "*ecocompute: measured LLM-inference GPU energy*"
    line = f"ecocompute contributors. {title}, version {inputs.version}, 2026. {url}{doi}"
    fields = [("title", "ecocompute: an open dataset of measured LLM-inference GPU energy"),
              ("author", "{ecocompute contributors}"), ("year", "2026"), ("version", inputs.version), ("url", url),
              *([("doi", inputs.doi)] if inputs.doi else []), ("note", "Licensed CC BY 4.0")]  # fmt: skip
    body = ",\n".join(f"  {name:<8} = {{{value}}}" for name, value in fields)
    return line, f"@misc{{ecocompute_dataset,\n{body}\n}}"


def render_card(inputs: CardInputs) -> str:
    """The whole README.md."""
    changelog = inputs.changelog.split("\n", 1)[1].lstrip("\n") if "\n" in inputs.changelog else inputs.changelog
    line, bibtex = citation(inputs)
    return Template(template_text("card.md")).substitute(
        front_matter=front_matter(inputs.counts.windows_all),
        version=inputs.version,
        banner=_banner(inputs),
        summary=_summary(inputs.counts),
        hf_repo=inputs.hf_repo,
        n_boot=inputs.gated.n_boot,
        seed=inputs.gated.seed,
        findings=findings_section(inputs.findings),
        j_per_token_tables=j_per_token_sections(inputs.gated),
        crossover_table=crossover_section(inputs.gated),
        beyond_gate=beyond_gate_section(inputs),
        stack_table=stack_section(inputs.everything),
        sensor=sensor_section(inputs.everything),
        figures=figures_section(inputs.figures),
        citation=line,
        bibtex=bibtex,
        columns=columns_section(),
        changelog=changelog.replace("## ", "### "),
    )
