"""The JSON Schema of a submission, generated from the pydantic models and committed beside them."""

from __future__ import annotations

import json
from pathlib import Path

from ecocompute.schema.models import SCHEMA_VERSION, Submission

SCHEMA_FILE = Path(__file__).resolve().with_name(f"submission-{SCHEMA_VERSION}.schema.json")


def json_schema_text() -> str:
    """The JSON Schema (draft 2020-12) of schema version ``SCHEMA_VERSION``, as committed."""
    schema = Submission.model_json_schema(mode="validation")
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://github.com/ecocompute/ecocompute/schema/submission-{SCHEMA_VERSION}.schema.json",
        **schema,
    }
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"
