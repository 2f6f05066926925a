"""The fixed public-domain text of the optional perplexity check (sources in ``data/SOURCES.md``)."""

from __future__ import annotations

import hashlib
from importlib import resources

CORPUS_FILE = "perplexity.txt"


def corpus() -> tuple[str, str]:
    """The text and the SHA-256 of its bytes (recorded as ``quality.corpus_sha256``)."""
    data = resources.files("ecocompute.collector.model").joinpath("data", CORPUS_FILE).read_bytes()
    return data.decode("utf-8"), hashlib.sha256(data).hexdigest()
