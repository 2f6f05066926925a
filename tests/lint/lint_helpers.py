"""Helpers of the linter's tests: snippets, and running code in another folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CORPUS = Path(__file__).parent / "corpus"
SARIF_SCHEMA = Path(__file__).parent / "sarif" / "sarif-schema-2.1.0.json"
INT8_7B = (
    "from transformers import AutoModelForCausalLM\n"
    'model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-7B", load_in_8bit=True)\n'
)
NF4_1B = (
    "from transformers import AutoModelForCausalLM, BitsAndBytesConfig\n"
    'cfg = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4")\n'
    'model = AutoModelForCausalLM.from_pretrained("TinyLlama/TinyLlama-1.1B-Chat-v1.0", quantization_config=cfg)\n'
)


@contextmanager
def chdir(path: Path) -> Iterator[None]:
    """Run the block with ``path`` as the current folder."""
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)
