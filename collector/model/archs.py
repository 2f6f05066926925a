"""Architecture configs that ship with the package: config.json values of public models, no weights.

``--arch NAME`` builds a randomly initialised model from one of them (``weights: "random-init"``).
Each file in ``collector/archs/`` names the repository whose official config.json it copies.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ecocompute.schema.errors import UsageError

SHAPE_KEYS = (
    "model_type",
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "vocab_size",
)


@dataclass(frozen=True)
class Arch:
    """One shipped architecture: its name, where its values come from, and the config.json values."""

    name: str
    source_repo: str | None
    config: dict[str, Any]

    @property
    def model_type(self) -> str:
        """The transformers model type (``llama``, ``qwen2``, ``mistral``)."""
        return str(self.config["model_type"])


def _files() -> dict[str, Any]:
    folder = resources.files("ecocompute.collector.model").joinpath("archs")
    return {entry.name.removesuffix(".json"): entry for entry in folder.iterdir() if entry.name.endswith(".json")}


def arch_names() -> list[str]:
    """Names of every shipped architecture, sorted."""
    return sorted(_files(), key=str.lower)


def load_arch(name: str) -> Arch:
    """The shipped architecture called ``name`` (case-insensitive); a UsageError listing the names otherwise."""
    files = {key.lower(): value for key, value in _files().items()}
    entry = files.get(name.lower())
    if entry is None:
        raise UsageError(f"unknown architecture {name!r}: choose one of {', '.join(arch_names())}")
    doc = json.loads(entry.read_text(encoding="utf-8"))
    return Arch(name=doc["name"], source_repo=doc.get("source_repo"), config=dict(doc["config"]))


def match_arch(config: dict[str, Any]) -> str | None:
    """The shipped architecture with the same shape as a model's config.json values, if any.

    Lets a pretrained model and a random-init one of the same shape share an ``architecture`` name.
    """
    for name in arch_names():
        arch = load_arch(name)
        if all(arch.config.get(key) == config.get(key) for key in SHAPE_KEYS):
            return arch.name
    return None
