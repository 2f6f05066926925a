"""The one place the linter gets figures: the estimator (``ecocompute.estimate``) and its shipped artifact.

Every rule asks about a :class:`Cell` and gets a :class:`Measured` figure back, or None where no measurement on the
target card covers the cell (another card's data, an extrapolation, another stack or batch borrowed): a rule then
stays silent. Changes against FP16 are the estimator's answers. Changes between two cells of one precision (batch 1
against batch 8, the eager stack against a compiled one), which the estimator does not answer, are taken from the
artifact's runs of one model measured in both cells (see :meth:`Evidence.between`). Nothing here is a figure of its
own; the linter works offline because the artifact ships in the wheel.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from ecocompute.schema.errors import EcocomputeError, UsageError

COVERED_BASES = frozenset({"measured", "interpolated"})
# reasons under which an answer rests on data of another configuration or card: not a measurement of the cell
BORROWED = frozenset({"other-card", "other-architecture", "stack-differs", "batch-differs", "extrapolated"})
SAME_MODEL_LN = 0.15  # a size named in a model id (7B) matches a measured model within 16% (Qwen2.5-7B: 7.6B)
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Cell:
    """One question: a card, a software stack, a batch size, a precision and a model size (billions)."""

    gpu: str
    stack: str
    batch_size: int
    precision: str
    params_b: float


@dataclass(frozen=True)
class Measured:
    """A measured change in J/token of ``cell`` ``against`` a baseline (``FP16``, ``batch 1``, ``the eager stack``).

    ``change_ci95`` is the 95% interval of ``change_pct``; ``perplexity_change_pct`` is the quality side where the
    dataset measured it; the crossover fields come with changes against FP16.
    """

    cell: Cell
    change_pct: float
    change_ci95: tuple[float, float]
    against: str
    basis: str
    dataset_version: str
    gpu_name: str
    model: str | None = None
    perplexity_change_pct: float | None = None
    crossover_b: float | None = None
    crossover_ci95: tuple[float, float] | None = None
    crossover_status: str | None = None
    measured_range_b: tuple[float, float] | None = None
    source: str = "measured"
    runs: tuple[int, int] | None = None

    @property
    def costs(self) -> bool:
        """True when the whole interval lies above zero: the change costs energy."""
        return self.change_ci95[0] > 0

    def saves_at_least(self, pct: float) -> bool:
        """True when the whole interval lies at or below ``-pct``: a saving of at least ``pct`` percent."""
        return self.change_ci95[1] <= -pct

    def text(self) -> str:
        """The figure and where it was measured, in one clause list."""
        low, high = self.change_ci95
        c = self.cell
        at = self.model or size_text(c.params_b)
        parts = [
            f"{self.change_pct:+.1f}% J/token vs {self.against} (95% CI {low:+.1f}% to {high:+.1f}%)",
            f"{self.basis} on {self.gpu_name}, stack {c.stack}, batch {c.batch_size}, {c.precision}, {at}"
            + (f" ({self.runs[0]} and {self.runs[1]} runs)" if self.runs else ""),
        ]
        if self.perplexity_change_pct is not None:
            parts.append(f"perplexity {self.perplexity_change_pct:+.1f}%")
        parts.append(f"{'published figures, ' if self.source == 'published' else ''}dataset {self.dataset_version}")
        return "; ".join(parts)


def size_text(params_b: float) -> str:
    """``0.494`` -> ``494M``, ``7.6`` -> ``7.6B``."""
    return f"{params_b * 1000:.0f}M" if params_b < 1 else f"{params_b:.3g}B"


class Evidence:
    """Figures for one target card from the estimator; answers are cached per cell."""

    def __init__(self, gpu: str, artifact: dict[str, Any] | None = None) -> None:
        self.gpu = gpu
        self._artifact = artifact
        self._answers: dict[Cell, Any | None] = {}
        self._pairs: dict[tuple[Cell, Cell, str], Measured | None] = {}

    @cached_property
    def artifact(self) -> dict[str, Any]:
        """The estimator's artifact: the one given, else the one shipped in the wheel."""
        if self._artifact is not None:
            return self._artifact
        from ecocompute.estimate import load_artifact

        return load_artifact()

    @cached_property
    def card(self) -> dict[str, Any]:
        """The artifact's entry for the target card; a usage error naming the known cards when there is none."""
        from ecocompute.estimate.engine import resolve_gpu

        resolved = resolve_gpu(self.artifact, self.gpu)
        if resolved is not None and resolved["name"] is not None:  # a card, not an architecture
            return resolved
        known = sorted(str(g.get("name")) for g in self.artifact.get("gpus", []))
        raise UsageError(f"--target-gpu {self.gpu!r} is not a card the estimator knows: use one of {', '.join(known)}")

    def answer(self, cell: Cell) -> Any | None:
        """The estimator's answer for ``cell``, or None when it has none."""
        if cell not in self._answers:
            self._answers[cell] = self._ask(cell)
        return self._answers[cell]

    def _ask(self, cell: Cell) -> Any | None:
        from ecocompute.estimate import Question, estimate

        try:
            question = Question(
                gpu=cell.gpu, params_b=cell.params_b, precision=cell.precision, stack=cell.stack,
                batch_size=cell.batch_size,
            )  # fmt: skip
            return estimate(question, artifact=self.artifact)
        except (EcocomputeError, ValueError):
            return None

    def vs_fp16(self, cell: Cell) -> Measured | None:
        """The change of ``cell``'s precision against FP16 of the same card, stack, batch and size, if measured."""
        answer = self.answer(cell)
        if answer is None or answer.basis not in COVERED_BASES or {r.code for r in answer.reasons} & BORROWED:
            return None
        if answer.change_pct is None or answer.change_ci95 is None:  # basis not-measured: never a covered basis
            return None
        cross = answer.crossover
        return Measured(
            cell=replace(cell, params_b=answer.params_b),
            change_pct=answer.change_pct,
            change_ci95=tuple(answer.change_ci95),
            against="FP16",
            basis=answer.basis,
            dataset_version=answer.dataset_version,
            gpu_name=answer.gpu_resolved.name or self.gpu,
            perplexity_change_pct=answer.quality,
            crossover_b=cross.params_b if cross else None,
            crossover_ci95=tuple(cross.ci95) if cross and cross.ci95 else None,
            crossover_status=cross.status if cross else None,
            measured_range_b=tuple(cross.measured_range_b) if cross else None,
            source=answer.source,
        )

    @cached_property
    def _run_logs(self) -> dict[tuple[str, str, int, str, str], list[float]]:
        """(card, stack, batch, precision, model) -> ln J/token of each measured run (FP16 from each run's baseline).

        transformers' runs only: the linter reads transformers code, and another engine's FP16 is not its baseline.
        """
        from ecocompute.estimate.engine import ENGINE, engine_of

        cells: dict[tuple[str, str, int, str, str], dict[str, float]] = defaultdict(dict)
        for run in self.artifact.get("runs", []):
            if run.get("source") != "measured" or not run.get("j_q") or not run.get("j_b"):
                continue
            if engine_of(run) != ENGINE:  # an artifact of schema 1.0 names none: transformers'
                continue
            key = (run["gpu"], run["stack"], int(run["batch_size"]), run["precision"], run["model"])
            cells[key][run["submission_id"]] = math.log(run["j_q"])
            cells[(*key[:3], "fp16", key[4])][run["submission_id"]] = math.log(run["j_b"])
        return {k: list(v.values()) for k, v in cells.items()}

    @cached_property
    def _run_variance(self) -> float | None:
        """Between-run variance of ln J/token, pooled over every cell measured in more than one run."""
        groups = [logs for logs in self._run_logs.values() if len(logs) > 1]
        dof = sum(len(g) - 1 for g in groups)
        return sum(statistics.variance(g) * (len(g) - 1) for g in groups) / dof if dof else None

    @cached_property
    def _model_params(self) -> dict[str, float]:
        return {str(r["model"]): float(r["params_b"]) for r in self.artifact.get("runs", []) if r.get("model")}

    def _params(self, model: str) -> float:
        return self._model_params[model]

    def between(self, base: Cell, alt: Cell, against: str) -> Measured | None:
        """:meth:`compare`, cached per pair of cells."""
        key = (base, alt, against)
        if key not in self._pairs:
            self._pairs[key] = self.compare(base, alt, against)
        return self._pairs[key]

    def compare(self, base: Cell, alt: Cell, against: str) -> Measured | None:
        """The change in J/token from ``base`` to ``alt`` (same precision and size, another batch or stack).

        Both cells must hold runs of one model on the target card within 16% of the asked size; the change is the
        difference of their mean ln J/token, its 95% interval from the between-run variance pooled over every cell
        measured more than once (runs of two cells come from different sittings, so their spread is the noise).
        """
        card = self.card["name"]
        base_key = (card, base.stack, base.batch_size, base.precision)
        alt_key = (card, alt.stack, alt.batch_size, alt.precision)
        models = {k[4] for k in self._run_logs if k[:4] == base_key} & {
            k[4] for k in self._run_logs if k[:4] == alt_key
        }
        near = sorted((abs(math.log(self._params(m) / base.params_b)), m) for m in models)
        var = self._run_variance
        if not near or near[0][0] > SAME_MODEL_LN or var is None:
            return None
        model = near[0][1]
        a, b = self._run_logs[(*base_key, model)], self._run_logs[(*alt_key, model)]
        diff = statistics.fmean(b) - statistics.fmean(a)
        half = Z95 * math.sqrt(var / len(a) + var / len(b))
        return Measured(
            cell=replace(alt, params_b=self._params(model)),
            change_pct=_pct(diff),
            change_ci95=(_pct(diff - half), _pct(diff + half)),
            against=against,
            runs=(len(a), len(b)),
            basis="measured",
            dataset_version=str(self.artifact["dataset"]["version"]),
            gpu_name=card,
            model=model,
        )


def _pct(log_ratio: float) -> float:
    return (math.exp(log_ratio) - 1) * 100


def at_size(cell: Cell, params_b: float) -> Cell:
    """``cell`` at another model size."""
    return replace(cell, params_b=params_b)
