"""The state file's key: a run of another engine never resumes into a transformers run's windows."""

from __future__ import annotations

from ecocompute.collector.run.config import RunConfig
from ecocompute.schema.models import Precision, Stack


def test_the_engine_names_the_state_file_and_transformers_keeps_the_old_key() -> None:
    base = dict(precisions=(Precision.FP16,), arch="TinyLlama-1.1B", stack=Stack.EAGER)
    transformers, llama = RunConfig(**base), RunConfig(**base, engine="llama.cpp")  # type: ignore[arg-type]
    assert "engine" not in transformers.identity()  # files written before there were engines keep their names
    assert llama.identity()["engine"] == "llama.cpp"
    assert llama.identity() != transformers.identity()
