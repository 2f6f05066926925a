"""The basis of every column of the three tables: its unit and where its value comes from.

"Recorded" columns are copied from the signed submission; "derived" ones are computed by the publisher with
:func:`ecocompute.schema.derive.derive` (the one derivation the collector and the validator use too). The text is
generated from the one field list (the submission's pydantic models and the figures of
:mod:`ecocompute.schema.derive`) through the pandera models of :mod:`ecocompute.schema.tables`.
"""

from __future__ import annotations

from ecocompute.schema.tables import TABLE_MODELS, column_docs

BY_CONFIG: dict[str, dict[str, str]] = {name: column_docs(model) for name, model in TABLE_MODELS.items()}
WINDOWS, MEASUREMENTS, SUBMISSIONS = BY_CONFIG["windows"], BY_CONFIG["measurements"], BY_CONFIG["submissions"]
