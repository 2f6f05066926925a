"""The basis of every column of the three tables: its unit and where its value comes from.

"Recorded" columns are copied from the signed submission; "derived" ones are computed by the publisher with
:func:`ecocompute.schema.derive.derive` (the one derivation the collector and the validator use too). The text is
generated from the one field list (the submission's pydantic models and the figures of
:mod:`ecocompute.schema.derive`) through the pandera models of :mod:`ecocompute.schema.tables`.
"""

from __future__ import annotations

from ecocompute.schema.tables import MeasurementsTable, SubmissionsTable, WindowsTable, column_docs

WINDOWS: dict[str, str] = column_docs(WindowsTable)
MEASUREMENTS: dict[str, str] = column_docs(MeasurementsTable)
SUBMISSIONS: dict[str, str] = column_docs(SubmissionsTable)

BY_CONFIG: dict[str, dict[str, str]] = {"windows": WINDOWS, "measurements": MEASUREMENTS, "submissions": SUBMISSIONS}
