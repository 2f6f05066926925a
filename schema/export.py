"""The JSON Schema of each schema version, generated from the pydantic models and committed beside them.

The models read every version of :data:`SCHEMA_VERSIONS`; the JSON Schema of one version is theirs with
``schema_version`` fixed to it. 1.0 and 1.1 hold the same fields because files labelled 1.0 gained the fields 1.1
names (:data:`SCHEMA_CHANGES`), and a 1.0 JSON Schema that refused them would refuse real 1.0 files. What a later
version added that no earlier file holds (:data:`NEW_IN`, :data:`NEW_VALUES_IN`) is left out of each earlier one,
and a field that may be null only from a later version (:data:`NULL_NEW_IN`) stays non-null in the earlier ones.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ecocompute.schema.models import (
    NEW_IN,
    NEW_VALUES_IN,
    NULL_NEW_IN,
    SCHEMA_CHANGES,
    SCHEMA_VERSION,
    SCHEMA_VERSIONS,
    Submission,
)

SCHEMA_DIR = Path(__file__).resolve().parent


def schema_file(version: str = SCHEMA_VERSION, folder: Path = SCHEMA_DIR) -> Path:
    """Where the JSON Schema of ``version`` is committed: ``submission-<version>.schema.json``."""
    return folder / f"submission-{version}.schema.json"


SCHEMA_FILE = schema_file()
"""The JSON Schema of the version new documents are written as."""


def json_schema_text(version: str = SCHEMA_VERSION) -> str:
    """The JSON Schema (draft 2020-12) of schema version ``version``, as committed."""
    if version not in SCHEMA_VERSIONS:
        raise ValueError(f"no schema version {version!r}; known: {', '.join(SCHEMA_VERSIONS)}")
    schema = Submission.model_json_schema(mode="validation")
    field = schema["properties"]["schema_version"]
    field.pop("enum", None)
    field["const"] = version
    schema["description"] = f"{schema['description']}\n\nSchema {version}: {SCHEMA_CHANGES[version]}."
    for later in SCHEMA_VERSIONS[SCHEMA_VERSIONS.index(version) + 1 :]:
        _drop_added(schema["$defs"], later)
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://github.com/ecocompute/ecocompute/schema/submission-{version}.schema.json",
        **schema,
    }
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def _drop_added(defs: dict[str, Any], version: str) -> None:
    """Remove from ``defs`` the fields and choice values that ``version`` added."""
    for model, names in NEW_IN.get(version, {}).items():
        for name in names:
            del defs[model]["properties"][name]
    for model, names in NULL_NEW_IN.get(version, {}).items():
        for name in names:
            node = defs[model]["properties"][name]
            kept = [branch for branch in node.pop("anyOf") if branch != {"type": "null"}]
            if len(kept) != 1:  # pragma: no cover - each such field is one type or null
                raise ValueError(f"{model}.{name}: expected one non-null type, found {kept}")
            node.update(kept[0])
    for where, values in NEW_VALUES_IN.get(version, {}).items():
        model, _, name = where.partition(".")
        node = defs[model]["properties"][name] if name else defs[model]
        kept = [v for v in node.pop("enum") if v not in values]
        if len(kept) == 1 and name:  # pydantic writes a one-value Literal as a const
            node["const"] = kept[0]
        else:
            node["enum"] = kept
