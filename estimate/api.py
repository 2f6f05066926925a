"""``estimate(question)``: the public entry point of the engine."""

from __future__ import annotations

from typing import Any

from ecocompute.estimate.artifact import load_artifact
from ecocompute.estimate.engine import evaluate
from ecocompute.estimate.hub import params_b_for
from ecocompute.estimate.models import Answer, Question
from ecocompute.schema.errors import UsageError


class EstimateError(UsageError):
    """A question the artifact cannot answer (an unknown card, a precision with no evidence)."""


def estimate(question: Question, artifact: dict[str, Any] | None = None) -> Answer:
    """Answer ``question`` from ``artifact`` (the shipped one when None).

    Example::

        estimate(Question(gpu="H200", params_b=7.6, precision="nf4", stack="compiled-all", batch_size=1))
    """
    art = artifact if artifact is not None else load_artifact()
    params_b = question.params_b if question.params_b is not None else params_b_for(str(question.model))
    try:
        raw = evaluate(art, question.model_dump(), params_b)
    except ValueError as exc:
        raise EstimateError(str(exc)) from exc
    return answer_from(raw, question, art)


def answer_from(raw: dict[str, Any], question: Question, artifact: dict[str, Any]) -> Answer:
    """The pydantic Answer from the engine's plain data."""
    dataset = artifact["dataset"]
    fields = {k: v for k, v in raw.items() if k != "dataset"}
    return Answer(
        question=question, **fields, dataset_version=dataset["version"], doi=dataset["doi"],
        newest_submission_at=dataset["newest_submission_at"], citation=dataset["citation"],
    )  # fmt: skip
