"""FP8 on the site: its labels and colours, and the precision order the analysis uses."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import polars as pl
from site_helpers import open_view, show_all

from ecocompute.analysis.defaults import PRECISION_ORDER
from ecocompute.site.render import write_site

APP_JS = Path(__file__).resolve().parents[2] / "site" / "static" / "app.js"
LABELS = {"fp8-wo": "FP8, weight-only", "fp8-dyn": "FP8, dynamic activations"}
RENAMED = {"int8-t0": "fp8-wo", "int8": "fp8-dyn"}  # test data: the site draws whatever precision a row names


def js_object(name: str) -> dict[str, str]:
    """A flat ``const NAME = {...}`` of app.js as a dict (keys bare or quoted, values strings)."""
    body = re.search(rf"const {name} = \{{(.*?)\}};", APP_JS.read_text(encoding="utf-8"), re.S)
    assert body is not None, name
    return dict(re.findall(r'"?([\w-]+)"?: "([^"]*)"', body.group(1)))


def test_the_sites_order_is_the_analysis_order_and_fp8_has_a_label_and_colour() -> None:
    found = re.search(r"const PRECISIONS = (\[.*?\]);", APP_JS.read_text(encoding="utf-8"))
    assert found is not None and tuple(json.loads(found.group(1))) == PRECISION_ORDER
    labels, colours = js_object("PRECISION_LABEL"), js_object("COLOURS")
    assert {p: labels.get(p) for p in LABELS} == LABELS
    assert all(re.fullmatch(r"#[0-9a-f]{6}", colours.get(p, "")) for p in LABELS)
    assert len(set(colours.values())) == len(colours)  # no two precisions share a colour


def test_every_precision_has_a_label_and_a_colour_of_its_own() -> None:
    labels, colours = js_object("PRECISION_LABEL"), js_object("COLOURS")
    assert [p for p in PRECISION_ORDER if not labels.get(p)] == []
    assert [p for p in PRECISION_ORDER if not re.fullmatch(r"#[0-9a-f]{6}", colours.get(p, ""))] == []
    assert "#7f7f7f" not in colours.values()  # the grey of a precision the site does not know


def test_fp8_rows_are_drawn_with_their_label_and_colour(page: Any, built: Path, tmp_path: Path) -> None:
    copy = tmp_path / "dataset"
    shutil.copytree(built, copy, ignore=shutil.ignore_patterns("site"))
    for config in ("measurements", "measurements_all"):
        path = copy / "data" / config / "train-00000-of-00001.parquet"
        if path.is_file():
            frame = pl.read_parquet(path)
            frame.with_columns(pl.col("precision").replace(RENAMED)).write_parquet(path)
    write_site(copy, copy / "site")
    open_view(page, copy / "site", "view=change&tier=all")
    show_all(page)
    colours = js_object("COLOURS")
    for precision, label in LABELS.items():
        key = page.locator(f"section[data-chart^='change-'] g:has(> text:text-is('{label}')) > rect").first
        assert key.get_attribute("fill") == colours[precision]  # the legend's key
        assert page.locator(f"g.point[data-precision='{precision}']").count() > 0
    values = page.locator("fieldset[data-filter='precision'] input").evaluate_all("els => els.map(e => e.value)")
    assert values == sorted(values, key=PRECISION_ORDER.index) and {"fp8-wo", "fp8-dyn"} <= set(values)
