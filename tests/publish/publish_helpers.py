"""Shared constants of the publisher's tests: the committed example set and a small signed sweep."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from publish_examples import Spec

EXAMPLES = Path(__file__).parent / "data" / "examples"
SMALL = (
    Spec("Qwen2.5-0.5B", 494_032_768, "eager", 1, ("fp16", "nf4")),
    Spec("Qwen2.5-3B", 3_085_938_688, "eager", 1, ("fp16", "nf4")),
    Spec("Qwen2.5-7B", 7_615_616_512, "eager", 1, ("fp16", "nf4", "int8")),
)

TreeMaker = Callable[..., Path]
