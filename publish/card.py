"""The dataset card: README.md with YAML front matter (licence, name, tags, size, configs) and the results."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from string import Template
from typing import Any

import polars as pl

from ecocompute.analysis.change import precision_rank
from ecocompute.analysis.crossovers import format_params, format_tokens
from ecocompute.analysis.frames import matching
from ecocompute.analysis.tables import stack_frame, torch_compile_ran
from ecocompute.publish.columns import BY_CONFIG
from ecocompute.publish.figures import FIGURE_KEYS, FigureRef, group_title
from ecocompute.publish.parquet import data_file
from ecocompute.publish.tables import CONFIGS, Tables
from ecocompute.publish.versions import template_text

PRETTY_NAME = "ecocompute: measured LLM-inference GPU energy"
TAGS = ("energy", "gpu", "llm-inference", "quantization", "bitsandbytes", "nvml", "green-ai", "benchmark")
DEFAULT_CONFIG = "measurements"
SIZE_CATEGORIES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
                   (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"))  # fmt: skip


@dataclass(frozen=True)
class BeyondGate:
    """Runs beyond the gate pooled with the dataset's submissions, analysed by the functions of the card's tables.

    ``ids`` are the runs' submission ids, ``folders`` the folders they came from and ``cv_range_pct`` the lowest
    and highest of each run's largest CV of J/token; ``tables`` and the frames hold the dataset's submissions and
    those runs together.
    """

    ids: frozenset[str]
    folders: tuple[str, ...]
    cv_range_pct: tuple[float, float]
    tables: Tables
    jpt: pl.DataFrame
    changes: pl.DataFrame
    crossovers: pl.DataFrame


@dataclass(frozen=True)
class CardInputs:
    """Everything the card shows."""

    version: str
    hf_repo: str
    tables: Tables
    jpt: pl.DataFrame
    changes: pl.DataFrame
    crossovers: pl.DataFrame
    figures: Sequence[FigureRef]
    include_examples: bool
    skipped_examples: int
    n_boot: int
    seed: int
    changelog: str
    beyond: BeyondGate | None = None


def size_category(rows: int) -> str:
    """The Hub's size category for a table of ``rows`` rows."""
    for limit, label in SIZE_CATEGORIES:
        if rows < limit:
            return label
    return "n>1T"


def front_matter(rows: int) -> str:
    """YAML front matter: licence, pretty name, tags, size category and the three configs with their files."""
    quote = json.dumps  # a JSON string is a valid YAML scalar
    lines = ["---", "license: cc-by-4.0", f"pretty_name: {quote(PRETTY_NAME)}", "language:", "- en", "tags:"]
    lines += [f"- {tag}" for tag in TAGS]
    lines += ["size_categories:", f"- {size_category(rows)}", "configs:"]
    for config in sorted(CONFIGS, key=lambda c: c != DEFAULT_CONFIG):
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


def _summary(t: Tables) -> str:
    gpus = sorted(t.submissions["gpu_name"].unique().to_list()) if t.submissions.height else []
    contributors = t.submissions["contributor_github"].n_unique() if t.submissions.height else 0
    warmup = t.windows.filter(pl.col("warmup")).height if t.windows.height else 0
    return (
        f"This version holds **{t.submissions.height} submissions** from {contributors} contributor(s) on "
        f"{len(gpus)} GPU model(s) ({', '.join(gpus) or 'none yet'}): {t.measurements.height} measurements "
        f"and {t.windows.height - warmup} windows (plus {warmup} warm-up windows)."
    )


def _cell_jpt(row: dict[str, Any]) -> str:
    text = f"{row['j_per_token']:.4f}"
    if row["ci95_pct_max"] is not None:
        text += f" ±{row['ci95_pct_max']:.2f}%"
    if isinstance(row["n_submissions"], int) and row["n_submissions"] > 1:
        text += f" (n={row['n_submissions']})"
    return text


def _cell_change(rows: pl.DataFrame) -> str:
    if rows.height == 0:
        return ""
    if rows.height > 1:
        mean = float(rows["change_pct"].mean())  # type: ignore[arg-type]
        return f"{mean:+.1f}% (n={rows.height})"
    row = rows.row(0, named=True)
    text = f"{row['change_pct']:+.1f}%"
    if row["ci95_low_pct"] is not None:
        text += f" [{row['ci95_low_pct']:+.1f}, {row['ci95_high_pct']:+.1f}]"
    return text


def _markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "/") for cell in cells) + " |"

    return "\n".join([line(header), line(["---"] * len(header)), *(line(r) for r in rows)])


def _models(jpt: pl.DataFrame) -> list[tuple[str, int, pl.DataFrame]]:
    """Each model of one group, smallest first, with its rows."""
    models = jpt.select("architecture", "params_total").unique().sort("params_total", "architecture").iter_rows()
    return [(a, n, jpt.filter((pl.col("architecture") == a) & (pl.col("params_total") == n))) for a, n in models]


def _model_rows(
    jpt: pl.DataFrame,
    precisions: Sequence[str],
    cell: Callable[[dict[str, Any]], str],
    more: Callable[[str, int], list[str]] | None = None,
) -> list[list[str]]:
    """Per model of one group (smallest first): its name, size, ``cell`` of each of ``precisions`` and ``more``.

    ``more`` gives the model's trailing cells from its architecture and parameter count.
    """
    rows = []
    for architecture, params, cells in _models(jpt):
        by_precision = {r["precision"]: cell(r) for r in cells.iter_rows(named=True)}
        extra = more(architecture, params) if more is not None else []
        rows.append([architecture, format_params(float(params)), *[by_precision.get(p, "") for p in precisions],
                     *extra])  # fmt: skip
    return rows


def _precisions(jpt: pl.DataFrame) -> list[str]:
    """The precisions of one group, in the order the tables show them."""
    return sorted(jpt["precision"].unique().to_list(), key=precision_rank)


def _jpt_group(key: tuple[object, ...], jpt: pl.DataFrame, changes: pl.DataFrame, heading: str) -> str:
    precisions = _precisions(jpt)
    quantized = [p for p in precisions if p != "fp16"]

    def change_cells(architecture: str, params: int) -> list[str]:
        mine = changes.filter((pl.col("architecture") == architecture) & (pl.col("params_total") == params))
        return [_cell_change(mine.filter(pl.col("precision") == p)) for p in quantized]

    rows = _model_rows(jpt, precisions, _cell_jpt, change_cells)
    header = ["model", "params", *[f"{p} J/token" for p in precisions], *[f"{p} change" for p in quantized]]
    return f"{heading} {group_title(key)}\n\n{_markdown_table(header, rows)}"


def _cell_split(row: dict[str, Any]) -> str:
    if row["dynamic_j_per_token"] is None or row["static_share_pct"] is None:
        return "not recorded"
    return f"{row['dynamic_j_per_token']:.4f} ({row['static_share_pct']:.0f}% static)"


def _split_group(key: tuple[object, ...], jpt: pl.DataFrame, heading: str) -> str:
    precisions = _precisions(jpt)
    rows = _model_rows(jpt, precisions, _cell_split)
    header = ["model", "params", *[f"{p} dynamic J/token (static share)" for p in precisions]]
    return f"{heading} {group_title(key)}\n\n{_markdown_table(header, rows)}"


def _per_group(jpt: pl.DataFrame, render: Callable[[tuple[object, ...], pl.DataFrame], str]) -> str:
    """``render`` of each GPU x stack x batch x workload length x weights group (its key and rows), in order."""
    if jpt.height == 0:
        return "No measurements yet."
    keys = jpt.select(FIGURE_KEYS).unique().sort(list(FIGURE_KEYS)).iter_rows()
    return "\n\n".join(render(key, jpt.filter(matching(FIGURE_KEYS, key))) for key in keys)


def jpt_sections(jpt: pl.DataFrame, changes: pl.DataFrame, heading: str = "###") -> str:
    """One markdown table per GPU x stack x batch x workload length x weights: J/token and change per precision."""

    def group(key: tuple[object, ...], rows: pl.DataFrame) -> str:
        in_group = changes.filter(matching(FIGURE_KEYS, key)) if changes.height else changes
        return _jpt_group(key, rows, in_group, heading)

    return _per_group(jpt, group)


def split_sections(jpt: pl.DataFrame, heading: str = "###") -> str:
    """One markdown table per group: each precision's dynamic J/token and the static share of its J/token."""
    return _per_group(jpt, lambda key, rows: _split_group(key, rows, heading))


def crossover_section(crossovers: pl.DataFrame, n_boot: int, seed: int) -> str:
    """The crossover table with 95% CIs, or a sentence when there is nothing to cross."""
    if crossovers.height == 0:
        return "No submission has both a quantized precision and an FP16/BF16 baseline yet."
    rows = []
    for r in crossovers.iter_rows(named=True):
        ci = ""
        if r["ci95_low_params"] is not None and r["ci95_high_params"] is not None:
            ci = f"{format_params(r['ci95_low_params'])}-{format_params(r['ci95_high_params'])}"
        at = format_params(r["crossover_params"]) if r["crossover_params"] is not None else "none"
        tokens = format_tokens(r["prompt_tokens"], r["new_tokens"])
        rows.append([r["gpu_name"], r["software_stack"], str(r["batch_size"]), tokens, r["precision"], r["weights"],
                     f"{format_params(r['params_min'])}-{format_params(r['params_max'])} ({r['n_sizes']})", at, ci,
                     r["message"]])  # fmt: skip
    header = ["GPU", "stack", "batch", "tokens", "precision", "weights", "sizes measured", "crossover", "95% CI",
              "result"]  # fmt: skip
    note = (
        f"Crossover of the change in J/token against FP16 (else BF16), log-linear in parameters; 95% CI from "
        f"{n_boot} bootstrap resamples of the windows within each measurement, seed {seed}."
    )
    return f"{note}\n\n{_markdown_table(header, rows)}"


def stack_section(jpt: pl.DataFrame) -> str:
    """J/token on the eager and the compiled stack, per model and precision, beside the precision changes above."""
    both = stack_frame(jpt)
    if both.height == 0:
        return "No model has been measured on both the eager and the compiled stack yet."
    rows = [[r["gpu_name"], str(r["batch_size"]), format_tokens(r["prompt_tokens"], r["new_tokens"]), r["weights"],
             r["architecture"], format_params(float(r["params_total"])), r["precision"], r["compiled_stack"],
             f"{r['eager_j_per_token']:.4f}", f"{r['compiled_j_per_token']:.4f}", torch_compile_ran(r),
             f"{r['change_pct']:+.1f}%"]
            for r in both.iter_rows(named=True)]  # fmt: skip
    header = ["GPU", "batch", "tokens", "weights", "model", "params", "precision", "compiled stack", "eager J/token",
              "compiled J/token", "torch.compile ran", "compiled vs eager"]  # fmt: skip
    note = (
        "The software stack is a lever on energy per token too: plain `generate` (eager) against a static KV cache "
        "with `torch.compile` (compiled stack), for every model and precision measured on both. Each side is the "
        "mean over its submissions, so the two come from different runs; set the change beside the precision "
        "changes in the tables above, which are taken within one submission. On the `compiled` stack transformers "
        "declines to compile some quantized models (bitsandbytes among them): where `torch.compile ran` says no, "
        "the compiled side is the static KV cache alone. The `compiled-all` stack compiles them too."
    )
    return f"{note}\n\n{_markdown_table(header, rows)}"


def sensor_section(windows: pl.DataFrame, beyond_ids: frozenset[str] = frozenset()) -> str:
    """How far NVML's energy counter and the 10 Hz power integral were apart, over the measured windows.

    ``beyond_ids``: runs beyond the gate pooled into ``windows``; the text then says which kind of run the largest
    gap is in, since those runs are not rows of the ``windows`` table.
    """
    measured = windows.filter(~pl.col("warmup"))
    if measured.height == 0:
        return "No measured windows yet."
    order = ["integral_diff_pct", "submission_id", "precision", "window_index"]
    worst = measured.sort(order, descending=[True, False, False, False]).row(0, named=True)
    scope = "this version and the runs beyond the gate" if beyond_ids else "this version"
    kind = "run beyond the gate" if worst["submission_id"] in beyond_ids else "submission"
    return (
        f"NVML's energy counter and the 10 Hz integral of its power readings agree within "
        f"{worst['integral_diff_pct']:.2f}% in every one of the {measured.height} measured windows of {scope} "
        f"(the validator rejects a submission with a window above 5%; `integral_diff_pct` in the `windows` table, "
        f"warm-ups included). The largest gap is in {kind} `{worst['submission_id']}`, {worst['precision']}, "
        f"measured window {worst['window_index']}."
    )


def beyond_gate_section(beyond: BeyondGate | None, submissions: int, n_boot: int, seed: int) -> str:
    """What the runs beyond the gate show, pooled with this version's submissions, or that there are none."""
    if beyond is None:
        return (
            "This build was given no runs beyond the gate (`ecocompute publish build --beyond-gate DIR`), so every "
            "figure on this card rests on measurements that pass the CV gate."
        )
    n = len(beyond.ids)
    low, high = beyond.cv_range_pct
    cv = f"{low:.2f}%" if low == high else f"{low:.2f}-{high:.2f}% in each run's most spread measurement"
    pooled = f"the {submissions} submissions of this version" if submissions else "this version's submissions (none)"
    intro = (
        f"**Not rows of this dataset.** {n} signed run{'s were' if n > 1 else ' was'} rejected by the validator for "
        f"{'their' if n > 1 else 'its'} spread alone: the CV of J/token between windows is {cv}, against the gate's "
        "2% (E-CV), and every other check passes (signature, recomputation, counter against power integral). They "
        f"are kept with every window in the ecocompute repository ({', '.join(f'`{f}/`' for f in beyond.folders)}), "
        "outside the dataset; `MANIFEST.json` lists each file with its SHA-256 (`beyond_gate`), so the tables below "
        f"can be recomputed from exactly those bytes. Pooled with {pooled}, they give the tables below, made by the "
        "same functions as the tables above, so they reach configurations (stacks, batch sizes, precisions, sizes) "
        "the gated rows do not cover yet; their confidence intervals carry the wider spread. Where a figure here and "
        "one above differ, the one above is the dataset's."
    )
    parts = [
        intro,
        f"### Crossover, submissions and runs beyond the gate\n\n{crossover_section(beyond.crossovers, n_boot, seed)}",
        "### Energy per token and change against FP16, submissions and runs beyond the gate\n\n"
        "Every size and precision measured, the two INT8 settings included: `int8` is bitsandbytes LLM.int8() with "
        "its default outlier threshold 6.0, `int8-t0` with threshold 0.0.\n\n"
        f"{jpt_sections(beyond.jpt, beyond.changes, heading='####')}",
        f"### Static and dynamic energy, submissions and runs beyond the gate\n\n"
        f"{split_sections(beyond.jpt, heading='####')}",
        f"### Stack against precision, submissions and runs beyond the gate\n\n{stack_section(beyond.jpt)}",
        f"### The sensor, submissions and runs beyond the gate\n\n{sensor_section(beyond.tables.windows, beyond.ids)}",
    ]
    return "\n\n".join(parts)


def figures_section(figures: Sequence[FigureRef]) -> str:
    """Each figure as a markdown image with its caption."""
    if not figures:
        return "No figures yet."
    return "\n\n".join(f"![{f.caption}]({f.path})\n\n*{f.caption}*" for f in figures)


def columns_section() -> str:
    """The basis of every column, table by table."""
    parts = []
    for config in CONFIGS:
        rows = [[f"`{name}`", basis] for name, basis in BY_CONFIG[config].items()]
        parts.append(f"### `{config}`\n\n{_markdown_table(['column', 'basis (unit)'], rows)}")
    return "\n\n".join(parts)


def render_card(inputs: CardInputs) -> str:
    """The whole README.md."""
    changelog = inputs.changelog.split("\n", 1)[1].lstrip("\n") if "\n" in inputs.changelog else inputs.changelog
    return Template(template_text("card.md")).substitute(
        front_matter=front_matter(inputs.tables.windows.height),
        version=inputs.version,
        banner=_banner(inputs),
        summary=_summary(inputs.tables),
        hf_repo=inputs.hf_repo,
        n_boot=inputs.n_boot,
        seed=inputs.seed,
        jpt_tables=jpt_sections(inputs.jpt, inputs.changes),
        crossover_table=crossover_section(inputs.crossovers, inputs.n_boot, inputs.seed),
        stack_table=stack_section(inputs.jpt),
        split_tables=split_sections(inputs.jpt),
        sensor=sensor_section(inputs.tables.windows),
        beyond_gate=beyond_gate_section(inputs.beyond, inputs.tables.submissions.height, inputs.n_boot, inputs.seed),
        figures=figures_section(inputs.figures),
        columns=columns_section(),
        changelog=changelog.replace("## ", "### "),
    )
