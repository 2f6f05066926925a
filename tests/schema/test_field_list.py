"""One field list: every field is described once, on its model, and everything else reads it from there."""

from __future__ import annotations

import json
import typing
from dataclasses import fields

import pytest
from factories import make_submission
from pydantic import BaseModel

from ecocompute.publish.columns import BY_CONFIG
from ecocompute.schema import models
from ecocompute.schema.derive import Derived, WindowFigures, derive, window_figures
from ecocompute.schema.export import SCHEMA_FILE
from ecocompute.schema.tables import MeasurementsTable, SubmissionsTable, WindowsTable, window_rows

TABLES = {"windows": WindowsTable, "measurements": MeasurementsTable, "submissions": SubmissionsTable}


def _contract_models(root: type[BaseModel] = models.Submission) -> set[type[BaseModel]]:
    """Every model reachable from ``root`` through its fields' annotations."""
    found = {root}
    for info in root.model_fields.values():
        for arg in _leaves(info.annotation):
            if isinstance(arg, type) and issubclass(arg, BaseModel) and arg not in found:
                found |= _contract_models(arg)
    return found


def _leaves(annotation: object) -> list[object]:
    args = typing.get_args(annotation)
    return [annotation] if not args else [leaf for arg in args for leaf in _leaves(arg)]


def test_every_field_of_the_contract_has_a_description() -> None:
    contract = _contract_models()
    assert {models.Payload, models.Window, models.Quality, models.Signature} <= contract
    missing = [f"{m.__name__}.{n}" for m in contract for n, info in m.model_fields.items() if not info.description]
    assert missing == []


def test_committed_json_schema_describes_every_property() -> None:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    objects = {"Submission": schema, **schema["$defs"]}
    properties = [(name, p, v) for name, obj in objects.items() for p, v in obj.get("properties", {}).items()]
    assert len(properties) > 100
    assert [f"{name}.{p}" for name, p, v in properties if not v.get("description")] == []
    assert objects["Window"]["properties"]["duration_s"]["unit"] == "s"


def test_every_table_column_takes_its_text_from_a_model_field_or_a_figure() -> None:
    """A recorded column's description starts with its field's; a derived one is its figure's; the docs say so."""
    for config, table in TABLES.items():
        for name, column in table.to_schema().columns.items():
            meta = column.metadata
            assert meta is not None and meta["basis"] in {"recorded", "derived"}, (config, name)
            if meta["source"] is None:  # a flag or hash only the table has
                continue
            owner, field = meta["source"].split(".")
            if owner in {"Derived", "WindowFigures"}:
                figures = Derived if owner == "Derived" else WindowFigures
                doc = next(f for f in fields(figures) if f.name == field).metadata
                assert (column.description, meta["unit"]) == (doc["description"], doc["unit"]), (config, name)
            else:
                model = getattr(models, owner)
                assert column.description.startswith(models.description_of(model, field)), (config, name)
                assert meta["unit"] == models.unit_of(model, field), (config, name)
            unit = f", {meta['unit']}" if meta["unit"] else ""
            assert BY_CONFIG[config][name] == f"{meta['basis']}{unit}: {column.description}"


def test_units_sit_where_the_names_say() -> None:
    assert models.unit_of(models.Window, "energy_j") == "J"
    assert models.unit_of(models.Hardware, "memory_total_mib") == "MiB"
    assert models.unit_of(models.Window, "tokens") is None
    assert BY_CONFIG["measurements"]["wh_per_1k_tokens"].startswith("derived, Wh: ")


@pytest.mark.parametrize("idle_w", [0.0, 122.5])
def test_window_figures_are_the_per_window_part_of_derive(idle_w: float) -> None:
    sub = make_submission(21, precisions=("fp16",), n_windows=5)
    windows = sub.payload.measurements[0].windows
    per_window = [window_figures(w, idle_w) for w in windows]
    d = derive(windows, idle_w)
    assert d.j_per_token == tuple(f.j_per_token for f in per_window)
    assert d.static_j_per_token_mean == pytest.approx(sum(f.static_j_per_token or 0 for f in per_window) / 5)
    assert d.integral_diff_pct_max == max(f.integral_diff_pct for f in per_window)
    for f, w in zip(per_window, windows, strict=True):
        assert f.dynamic_j_per_token == pytest.approx(w.energy_j / w.tokens - idle_w * w.duration_s / w.tokens)
        assert f.power_w_mean == w.energy_j / w.duration_s


def test_window_without_tokens_has_no_j_per_token_but_a_power() -> None:
    sub = make_submission(22, precisions=("fp16",), n_windows=2)
    empty = sub.payload.measurements[0].windows[0].model_copy(update={"tokens": 0})
    f = window_figures(empty, 120.0)
    assert (f.j_per_token, f.static_j_per_token, f.dynamic_j_per_token) == (None, None, None)
    assert f.power_w_mean == empty.energy_j / empty.duration_s


def test_windows_table_rows_hold_the_window_figures() -> None:
    sub = make_submission(23, precisions=("fp16", "nf4"), n_windows=3)
    idle_w = sub.payload.idle.power_w
    measured = [(m, w) for m in sub.payload.measurements for w in [*m.warmup, *m.windows]]
    for row, (_, w) in zip(window_rows(sub), measured, strict=True):
        f = window_figures(w, idle_w)
        assert (row["j_per_token"], row["dynamic_j_per_token"], row["power_w_mean"]) == (
            f.j_per_token, f.dynamic_j_per_token, f.power_w_mean,
        )  # fmt: skip
