"""The estimator's answer for people (a rich table) and questions from command-line options."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError
from rich.table import Table

from ecocompute.estimate.models import Answer, Question
from ecocompute.schema.errors import UsageError


def validation_lines(exc: ValidationError) -> str:
    """One line per invalid field: its name and what pydantic says (the valid values for a choice)."""
    parts = []
    for error in exc.errors():
        field = ".".join(str(p) for p in error["loc"]) or "question"
        parts.append(f"{field}: {error['msg']}")
    return "; ".join(parts)


def question_from(**fields: Any) -> Question:
    """A Question from options, or UsageError naming each bad field and its valid values."""
    try:
        return Question.model_validate({k: v for k, v in fields.items() if v is not None})
    except ValidationError as exc:
        raise UsageError(validation_lines(exc)) from exc


def _pct(value: float) -> str:
    return f"{value:+.1f}%"


def answer_table(answer: Answer) -> Table:
    """The answer as a two-column table."""
    q = answer.question
    title = f"{q.precision} vs fp16 on {answer.gpu_resolved.name or answer.gpu_resolved.arch}, {answer.params_b:.3g}B"
    table = Table(title=f"{title}, {q.engine}, {q.stack}, batch {q.batch_size}", show_header=False)
    if answer.change_pct is None or answer.change_ci95 is None:
        table.add_row("change in J/token", "not measured yet: no estimate")
    else:
        low, high = answer.change_ci95
        table.add_row("change in J/token", f"{_pct(answer.change_pct)} (95% interval {_pct(low)} to {_pct(high)})")
    if answer.j_per_token is not None and answer.wh_per_1k_tokens is not None:
        table.add_row("energy", f"{answer.j_per_token:.4g} J/token, {answer.wh_per_1k_tokens:.4g} Wh per 1k tokens")
    table.add_row("basis", f"{answer.basis} ({answer.source}, tier {answer.tier}); confidence {answer.confidence}")
    table.add_row("recommendation", answer.recommendation.text)
    if answer.crossover is not None:
        table.add_row("crossover", answer.crossover.message)
    if answer.published is not None:
        p = answer.published
        table.add_row("published (apart)", f"{_pct(p.change_pct)} (95% {_pct(p.change_ci95[0])} to "
                      f"{_pct(p.change_ci95[1])}), {', '.join(p.sessions)}; doi {', '.join(p.dois)}")  # fmt: skip
    for r in answer.reasons:
        table.add_row(f"[dim]{r.code}[/]", f"[dim]{r.text}[/]")
    table.add_row("dataset", f"v{answer.dataset_version}, doi {answer.doi or 'none yet'}, "
                  f"{len(answer.submission_ids)} submission(s), newest {answer.newest_submission_at}")  # fmt: skip
    if answer.dois:
        table.add_row("published DOIs", ", ".join(answer.dois))
    return table
