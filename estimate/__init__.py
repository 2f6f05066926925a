"""The estimator: what a precision costs against FP16 on a card, from measurements, with a calibrated interval.

One engine (:func:`estimate`) over one versioned artifact (:func:`load_artifact`; the shipped one is built from
this repository's data, ``publish build`` writes another beside each dataset). The CLI, the HTTP API, the web
page, the MCP server and the linter all call it::

    from ecocompute.estimate import Question, estimate
    estimate(Question(gpu="H200", params_b=7.6, precision="nf4", stack="compiled-all", batch_size=1))
"""

from __future__ import annotations

from ecocompute.estimate.api import EstimateError, estimate
from ecocompute.estimate.artifact import load_artifact
from ecocompute.estimate.models import Answer, Question

__all__ = ["Answer", "EstimateError", "Question", "estimate", "load_artifact"]
