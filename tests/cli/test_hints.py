"""Install hints keep their extras wherever printed: ``pip install 'ecocompute[collect]'``, never ``'ecocompute'``.

rich reads ``[collect]`` as a style tag and drops it from any string printed with markup on.
"""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from ecocompute.collector.run.display import LineView
from ecocompute.collector.run.state import MeasurementState
from ecocompute.schema.cli import summary_table
from ecocompute.schema.io import load_submission
from ecocompute.schema.models import Precision

HINT = "bitsandbytes is not installed: pip install 'ecocompute[collect]'"
EXAMPLE = Path(__file__).parents[1] / "data" / "example" / "submission.json"


def _printed(renderable: object) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=300).print(renderable)
    return buffer.getvalue()


def test_a_failed_precision_s_hint_keeps_its_extra_in_the_summary_table() -> None:
    submission = load_submission(EXAMPLE)
    measurements = list(submission.payload.measurements)
    measurements[-1] = measurements[-1].model_copy(update={"windows": [], "error": HINT})
    payload = submission.payload.model_copy(update={"measurements": measurements})
    text = _printed(summary_table(submission.model_copy(update={"payload": payload}), "a run"))
    assert "'ecocompute[collect]'" in text


def test_a_failed_precision_s_hint_keeps_its_extra_in_the_log() -> None:
    failed = MeasurementState(Precision.NF4, error=HINT, finished=True)
    buffer = io.StringIO()
    view = LineView(Console(file=buffer, width=300))
    view.start([failed], 8)
    view.update(failed, None, False, 10.0)
    assert buffer.getvalue().strip().endswith(f"nf4: failed: {HINT}")
