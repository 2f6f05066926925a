"""The rules: each reads a file's :class:`~ecocompute.lint.scan.Facts`, asks the evidence, and returns findings.

A rule reports only where a measurement covers the case (the cell's card, stack, batch, precision and size), and
its message carries that measurement. Ids and summaries are in :data:`ecocompute.lint.findings.RULES`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ecocompute.lint.evidence import Cell, Evidence, Measured, at_size, size_text
from ecocompute.lint.model_size import params_b
from ecocompute.lint.scan import Facts, Generate, Load

COMPILED_STACK = {"fp16": "compiled", "bf16": "compiled", "int8": "compiled-all", "int8-t0": "compiled-all",
                  "nf4": "compiled-all"}  # fmt: skip


@dataclass(frozen=True)
class Settings:
    """What the evidence is chosen for.

    The target card, the stack (None: read from the file), the batch size a
    batched loop is compared at, and the smallest saving (percent, whole interval) that ECO103/ECO104 report.
    """

    gpu: str = "H200"
    stack: str | None = None
    batch_size: int = 8
    min_saving_pct: float = 10.0


@dataclass(frozen=True)
class Hit:
    """A rule's finding before it is placed in a file: rule id, 1-based line and column, message."""

    rule: str
    line: int
    column: int
    end_line: int
    message: str


@dataclass
class Context:
    """One file's facts with the settings and evidence the rules share."""

    facts: Facts
    settings: Settings
    evidence: Evidence
    line_name: Callable[[int], str] = lambda line: f"line {line}"

    @property
    def stack(self) -> str:
        """The stack the file runs on: ``--stack`` when given, else ``compiled`` where it compiles, else ``eager``."""
        return self.settings.stack or ("compiled" if self.facts.compiles else "eager")

    def cell(self, precision: str, size: float, batch_size: int = 1, stack: str | None = None) -> Cell:
        """The question for this file's card and stack."""
        return Cell(self.settings.gpu, stack or self.stack, batch_size, precision, size)

    def over_range(self, precision: str) -> tuple[Measured, Measured] | None:
        """The change against FP16 at the smallest and largest measured sizes, for a load of unknown size."""
        probe = self.evidence.vs_fp16(self.cell(precision, 1.0))
        if probe is None or probe.measured_range_b is None:
            return None
        low, high = probe.measured_range_b
        first = self.evidence.vs_fp16(at_size(probe.cell, low))
        last = self.evidence.vs_fp16(at_size(probe.cell, high))
        return None if first is None or last is None else (first, last)


def precision_of(load: Load | None) -> str | None:
    """The dataset's name for the precision a load runs at; None when the file does not say."""
    if load is None:
        return None
    if load.quant is not None:
        return load.quant.precision
    return load.dtype if load.quant_known and load.dtype in ("fp16", "bf16") else None


def size_of(load: Load | None) -> float | None:
    """The model size of a load, from its id or a config.json on disk."""
    return None if load is None or load.model_id is None else params_b(load.model_id)


def _hit(rule: str, node: Load | Generate, message: str) -> Hit:
    return Hit(rule, node.line, node.column, node.end_line, message)


def eco101(ctx: Context) -> Iterator[Hit]:
    """8-bit loads with the default outlier threshold, where INT8 measured a cost against FP16."""
    for load in ctx.facts.loads:
        if load.quant is None or load.quant.precision != "int8":
            continue
        size = size_of(load)
        if size is not None:
            measured = ctx.evidence.vs_fp16(ctx.cell("int8", size))
            if measured is None or not measured.costs:
                continue
            alt = ctx.evidence.vs_fp16(ctx.cell("int8-t0", size))
            said = f"measured {measured.text()}"
        else:
            span = ctx.over_range("int8")
            if span is None or not (span[0].costs and span[1].costs):
                continue
            alt_span = ctx.over_range("int8-t0")
            alt = alt_span[0] if alt_span else None
            said = f"model size unknown; at every measured size it cost: {span[0].text()} .. {span[1].text()}"
        tail = f"; llm_int8_threshold=0.0 measured {alt.text()}" if alt is not None else ""
        yield _hit("ECO101", load, f"8-bit load with the default llm_int8_threshold=6.0: {said}{tail}")


def eco102(ctx: Context) -> Iterator[Hit]:
    """4-bit loads of a model smaller than the crossover measured for the card and stack."""
    for load in ctx.facts.loads:
        if load.quant is None or load.quant.bits != 4 or load.quant.precision is None:
            continue
        size = size_of(load)
        if size is None:
            continue
        measured = ctx.evidence.vs_fp16(ctx.cell(load.quant.precision, size))
        if measured is None or not (measured.costs or _below_crossover(measured, size)):
            continue
        yield _hit("ECO102", load, f"{load.quant.precision} load of a {size_text(size)} model {_crossover(measured)}: "
                   f"measured {measured.text()}")  # fmt: skip


def _below_crossover(m: Measured, size: float) -> bool:
    """True when the size lies below the whole 95% interval of a measured crossover."""
    return m.crossover_status == "crossover" and m.crossover_ci95 is not None and size < m.crossover_ci95[0]


def _crossover(m: Measured) -> str:
    at = m.crossover_b
    if at is not None and m.crossover_status == "crossover":
        ci = m.crossover_ci95
        band = f" (95% CI {size_text(ci[0])} to {size_text(ci[1])})" if ci else ""
        return f"below the measured crossover at {size_text(at)}{band}"
    if m.measured_range_b is not None:
        low, high = m.measured_range_b
        return f"with no crossover in the measured range {size_text(low)}-{size_text(high)}"
    return "where 4-bit costs energy"


def eco103(ctx: Context) -> Iterator[Hit]:
    """generate() fed one prompt per call by a loop, where batching measured a large saving."""
    for gen in ctx.facts.generates:
        precision, size = precision_of(gen.load), size_of(gen.load)
        if gen.loop_line is None or precision is None or size is None:
            continue
        batch = ctx.settings.batch_size
        base, alt = ctx.cell(precision, size, 1), ctx.cell(precision, size, batch)
        measured = ctx.evidence.between(base, alt, "batch 1")
        if measured is None or not measured.saves_at_least(ctx.settings.min_saving_pct):
            continue
        loop = ctx.line_name(gen.loop_line)
        yield _hit("ECO103", gen, f"one prompt per generate() call in the loop at {loop}; batching {batch} prompts "
                   f"measured {measured.text()}")  # fmt: skip


def eco104(ctx: Context) -> Iterator[Hit]:
    """generate() on the eager stack where the compiled stack measured a large saving."""
    if ctx.facts.compiles:
        return
    seen: set[int] = set()  # one finding per model load: its first eager generate() call
    for gen in ctx.facts.generates:
        precision, size = precision_of(gen.load), size_of(gen.load)
        if gen.via_pipeline or gen.static_cache is not False or precision is None or size is None:
            continue
        if id(gen.load) in seen:
            continue
        seen.add(id(gen.load))
        stack = COMPILED_STACK.get(precision)
        if stack is None:
            continue
        base, alt = ctx.cell(precision, size, stack="eager"), ctx.cell(precision, size, stack=stack)
        measured = ctx.evidence.between(base, alt, "the eager stack")
        if measured is None or not measured.saves_at_least(ctx.settings.min_saving_pct):
            continue
        yield _hit("ECO104", gen, f"generate() without a static cache or torch.compile; the {stack} stack "
                   f"measured {measured.text()}")  # fmt: skip


def eco105(ctx: Context) -> Iterator[Hit]:
    """8-bit and 4-bit loads in one file: the second kind's first load, with both measured changes."""
    eights = [ld for ld in ctx.facts.loads if ld.quant is not None and ld.quant.bits == 8]
    fours = [ld for ld in ctx.facts.loads if ld.quant is not None and ld.quant.bits == 4]
    if not eights or not fours:
        return
    later = max(eights[0], fours[0], key=lambda ld: (ld.line, ld.column))
    other = fours[0] if later is eights[0] else eights[0]
    said = []
    for load in (other, later):
        size, precision = size_of(load), load.quant.precision if load.quant else None
        measured = ctx.evidence.vs_fp16(ctx.cell(precision, size)) if size and precision else None
        if measured is not None:
            said.append(f"{precision} ({ctx.line_name(load.line)}) measured {measured.text()}")
    if said:
        where = f"{ctx.line_name(other.line)} and {ctx.line_name(later.line)}"
        yield _hit("ECO105", later, f"8-bit and 4-bit loads in one file ({where}); " + "; ".join(said))


CHECKS: dict[str, Callable[[Context], Iterator[Hit]]] = {
    "ECO101": eco101,
    "ECO102": eco102,
    "ECO103": eco103,
    "ECO104": eco104,
    "ECO105": eco105,
}


def check(
    facts: Facts,
    settings: Settings,
    evidence: Evidence,
    select: frozenset[str],
    line_name: Callable[[int], str] | None = None,
) -> list[Hit]:
    """Every selected rule's findings for one file, sorted by place; ``line_name`` names a line in messages."""
    ctx = Context(facts, settings, evidence, line_name or (lambda line: f"line {line}"))
    hits = [hit for rule in sorted(select) for hit in CHECKS[rule](ctx)]
    return sorted(hits, key=lambda h: (h.line, h.column, h.rule))
