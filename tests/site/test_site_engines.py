"""The site keeps engines apart: a build of the repository's submissions, which hold transformers and llama.cpp.

Opened in headless Chromium: each change chart (and its crossovers) is one engine's, the table and the CSVs name
the engine, and the engine filter removes exactly its rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
from factories import committed_ids
from site_helpers import all_tier, column, download, open_view, read_csv, show_all

from ecocompute.analysis.change import change_frame
from ecocompute.analysis.frames import with_engine
from ecocompute.site.payload import SiteOptions, build_payload

LLAMA = "20261201T172632Z-e1072b8d"  # the first llama.cpp submission: Qwen2.5-1.5B, fp16, q8_0 and q4_k_m
LLAMAS = committed_ids("llama.cpp")  # every committed llama.cpp submission, LLAMA among them


def all_changes(folder: Path) -> pl.DataFrame:
    return change_frame(all_tier(folder, "measurements")).filter(pl.col("change_pct").is_not_null())


def test_the_payload_names_each_rows_engine(built: Path) -> None:
    payload = build_payload(built, SiteOptions())
    for kind in ("measurements", "changes", "crossovers"):
        levels = payload[kind]["columns"]["engine"]["levels"]
        assert levels == ["llama.cpp", "transformers"], kind
    old = with_engine(pl.DataFrame({"precision": ["fp16"]}))
    assert old["engine"].to_list() == ["transformers"]


def test_each_change_chart_is_one_engines(page: Any, built: Path) -> None:
    changes = all_changes(built)
    stack = column(changes, "software_stack", "stack")
    keys = ("gpu_name", "engine", stack, "batch_size", "prompt_tokens", "new_tokens", "weights")
    groups = changes.select(keys).unique()
    without_engine = changes.select([k for k in keys if k != "engine"]).unique()
    assert groups.height > without_engine.height  # both engines measured one card, stack, batch and length
    open_view(page, built / "site", "view=change&tier=all")
    show_all(page)
    charts = page.locator("section[data-chart^='change-']")
    assert charts.count() == groups.height
    llama = charts.filter(has_text="llama.cpp")
    assert llama.count() == 1
    title = llama.locator("h2").inner_text()
    assert "NVIDIA H200 · llama.cpp · eager · batch 1" in title
    llama_points = changes.filter(pl.col("engine") == "llama.cpp").height
    assert llama.locator("g.point circle").count() == llama_points
    assert {p.get_attribute("data-precision") for p in llama.locator("g.point").all()} == {"q8_0", "q4_k_m"}
    others = charts.filter(has_not_text="llama.cpp")
    assert others.locator("g.point[data-precision='q8_0']").count() == 0
    rows = read_csv(download(page, f"#{llama.get_attribute('id')} button[data-download='csv']"))
    assert {r["engine"] for r in rows} == {"llama.cpp"} and {r["submission_id"] for r in rows} == LLAMAS
    crossings = read_csv(download(page, f"#{llama.get_attribute('id')} button[data-download='csv-crossovers']"))
    assert crossings and {r["engine"] for r in crossings} == {"llama.cpp"}


def test_the_table_shows_the_engine_and_its_filter_removes_its_rows(page: Any, built: Path) -> None:
    everything = all_tier(built, "measurements")
    llama = everything.filter(pl.col("engine") == "llama.cpp").height
    assert llama > 0
    open_view(page, built / "site", "view=table&tier=all")
    show_all(page)
    headers = page.locator("table.data thead th").all_inner_texts()
    assert any(h.startswith("engine") for h in headers)
    before = page.locator("table.data tbody tr").count()
    assert page.locator("table.data tbody tr", has_text="llama.cpp").count() == llama
    page.uncheck("fieldset[data-filter='engine'] input[value='llama.cpp']")
    show_all(page)
    assert page.locator("table.data tbody tr").count() == before - llama
    assert "engine=" in page.evaluate("location.hash")
    assert page.locator("table.data tbody tr", has_text="llama.cpp").count() == 0


def test_cost_rows_keep_engines_apart(page: Any, built: Path) -> None:
    open_view(page, built / "site", "view=cost&tier=all")
    show_all(page)
    labels = page.locator("svg text").evaluate_all("nodes => nodes.map((n) => n.textContent)")
    assert any("llama.cpp" in t for t in labels) and any("transformers" in t for t in labels)
