"""The site in headless Chromium, opened from the folder a build of the repository's data wrote.

Every view renders with no console error; the filters change what is drawn and live in the URL; the downloads
hold the dataset's own numbers.
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from browser import shoot
from site_helpers import all_tier, column, download, open_view, read_csv, show_all, table

from ecocompute.analysis.change import change_frame
from ecocompute.site.payload import defaults
from ecocompute.site.render import write_site

VIEWS = ("change", "pareto", "quality", "cost", "table", "rejections", "cite")
STATES = (*(f"view={v}" for v in VIEWS), "view=change&tier=all", "view=pareto&tier=all")


def measured(folder: Path) -> pl.DataFrame:
    """The gate tier's measurements: the build's default config."""
    return table(folder, "measurements")


def gate_changes(folder: Path) -> pl.DataFrame:
    """change_frame of the gate tier, with a change."""
    return change_frame(measured(folder)).filter(pl.col("change_pct").is_not_null())


@pytest.mark.parametrize("state", STATES)
def test_every_view_renders_offline_with_version_and_link(
    page: Any, built: Path, screenshots: Path, state: str
) -> None:
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    open_view(page, built / "site", state)
    view = state.split("&")[0].removeprefix("view=")
    assert page.get_attribute("main", "data-view") == view
    assert page.inner_text("#dataset-version") == json.loads((built / "MANIFEST.json").read_text())["version"]
    assert page.get_attribute("#dataset-link", "href").startswith("https://")
    assert page.locator("#main").inner_text().strip()
    shoot(page, screenshots, "site-" + state.replace("view=", "").replace("&tier=", "-"))
    assert all(url.split(":", 1)[0] in {"file", "blob", "data"} for url in requests), requests


def test_change_view_draws_every_change_with_its_interval(page: Any, built: Path) -> None:
    changes = gate_changes(built)
    open_view(page, built / "site", "view=change")
    show_all(page)
    stack = column(changes, "software_stack", "stack")
    groups = changes.select(
        "gpu_name", "engine", stack, "batch_size", "prompt_tokens", "new_tokens", "weights"
    ).unique()
    assert page.locator("section[data-chart^='change-']").count() == groups.height
    assert page.locator("section[data-chart^='change-'] g.point circle").count() == changes.height
    with_ci = changes.filter(pl.col("ci95_low_pct").is_not_null()).height
    assert page.locator("section[data-chart^='change-'] g.point line").count() == with_ci


def test_precision_filter_changes_the_chart_and_the_link(page: Any, built: Path, browser: Any) -> None:
    changes = gate_changes(built)
    nf4 = changes.filter(pl.col("precision") == "nf4").height
    assert nf4 > 0
    open_view(page, built / "site", "view=change")
    show_all(page)
    page.uncheck("fieldset[data-filter='precision'] input[value='nf4']")
    show_all(page)
    points = page.locator("section[data-chart^='change-'] g.point")
    assert page.locator("g.point[data-precision='nf4']").count() == 0
    assert points.count() == changes.height - nf4
    link = page.evaluate("location.hash")
    assert "precision=" in link and "nf4" not in link.split("precision=")[1].split("&")[0]
    linked = browser.new_page()
    open_view(linked, built / "site", link.lstrip("#"))
    show_all(linked)
    assert not linked.is_checked("fieldset[data-filter='precision'] input[value='nf4']")
    assert linked.locator("section[data-chart^='change-'] g.point").count() == changes.height - nf4
    linked.close()


def test_stack_filter_removes_that_stacks_charts(page: Any, built: Path) -> None:
    changes = gate_changes(built)
    stack = column(changes, "software_stack", "stack")
    first = sorted(changes[stack].unique().to_list())[0]
    left = changes.filter(pl.col(stack) != first)
    open_view(page, built / "site", "view=pareto")
    before = page.locator("#fig-pareto circle.point").count()
    page.uncheck(f"fieldset[data-filter='stack'] input[value='{first}']")
    m = measured(built)
    kept = m.filter((pl.col(stack) != first) & pl.col("j_per_token_mean").is_not_null()).height
    assert page.locator("#fig-pareto circle.point").count() == kept < before
    page.click("nav#views button[data-view='change']")
    show_all(page)
    assert page.locator("section[data-chart^='change-'] g.point").count() == left.height


def test_tier_filter_shows_the_rows_of_each_tier(page: Any, built: Path) -> None:
    everything = all_tier(built, "measurements")
    open_view(page, built / "site", "view=table")
    show_all(page)
    gate_rows = page.locator("table.data tbody tr").count()
    page.check("fieldset[data-filter='tier'] input[value='all']")
    assert "tier=all" in page.evaluate("location.hash")
    show_all(page)
    all_rows = page.locator("table.data tbody tr").count()
    assert (gate_rows, all_rows) == (measured(built).height, everything.height)


def test_measurements_csv_holds_the_datasets_numbers(page: Any, built: Path) -> None:
    m = measured(built)
    open_view(page, built / "site", "view=table")
    rows = read_csv(download(page, "section[data-chart='measurements'] button[data-download='csv']"))
    assert len(rows) == m.height
    by_key = {(r["submission_id"], r["precision"]): r for r in rows}
    low = column(m, "j_per_token_ci95_low", "ci95_low_j")
    extra = [name for name in ("wh_per_1k_tokens", "perplexity") if name in m.columns]
    for row in m.iter_rows(named=True):
        got = by_key[(row["submission_id"], row["precision"])]
        for name in ("j_per_token_mean", "cv_pct", low, "tokens_per_s", *extra):
            expected = row[name]
            assert (float(got[name]) if got[name] else None) == expected, (name, row["submission_id"])


def test_change_csv_and_svg_hold_what_is_drawn(page: Any, built: Path) -> None:
    changes = gate_changes(built)
    open_view(page, built / "site", "view=change")
    show_all(page)
    figure = "section[data-chart='change-1']"
    rows = read_csv(download(page, f"{figure} button[data-download='csv']"))
    expected = {(r["submission_id"], r["precision"]): r for r in changes.iter_rows(named=True)}
    assert rows
    for row in rows:
        want = expected[(row["submission_id"], row["precision"])]
        assert float(row["change_pct"]) == want["change_pct"]
        assert float(row["ci95_low_pct"]) == want["ci95_low_pct"]
    svg = ET.fromstring(download(page, f"{figure} button[data-download='svg']").encode())  # noqa: S314 - our own page's SVG
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    circles = svg.findall(".//{http://www.w3.org/2000/svg}g[@class='point']/{http://www.w3.org/2000/svg}circle")
    assert len(circles) == len(rows) == page.locator(f"{figure} g.point circle").count()
    crossovers = read_csv(download(page, f"{figure} button[data-download='csv-crossovers']"))
    assert {r["precision"] for r in crossovers} == {r["precision"] for r in rows}


def test_cost_and_carbon_follow_the_readers_inputs(page: Any, built: Path) -> None:
    m = measured(built).filter(pl.col("j_per_token_mean").is_not_null())
    values = defaults()
    open_view(page, built / "site", "view=cost")
    assert values["grid_g_per_kwh"]["source"] in page.inner_text("p.defaults")
    rows = read_csv(download(page, "#fig-carbon button[data-download='csv']"))
    grid, pue = values["grid_g_per_kwh"]["value"], values["pue"]["value"]
    first = rows[0]
    same = m.filter((pl.col("model_id") == first["model_id"]) & (pl.col("precision") == first["precision"]))
    stack = column(m, "software_stack", "stack")
    same = same.filter(pl.col(stack) == first[stack])
    assert float(first["gco2e_per_mtok"]) == pytest.approx(same["j_per_token_mean"].mean() / 3.6 * pue * grid)
    page.fill("#usd", "2.5")
    page.dispatch_event("#usd", "change")
    assert "usd=2.5" in page.evaluate("location.hash")
    assert "USD per million tokens" in page.text_content("#fig-cost svg")
    priced = read_csv(download(page, "#fig-cost button[data-download='csv']"))
    assert float(priced[0]["usd_per_mtok"]) == pytest.approx(2.5 * float(priced[0]["gpu_hours_per_mtok"]))


def test_rejections_say_none_or_list_each_finding(page: Any, built: Path, tmp_path: Path) -> None:
    open_view(page, built / "site", "view=rejections")
    if not (built / "rejections.json").exists():
        assert "none" in page.inner_text("#main")
    copy = tmp_path / "dataset"
    shutil.copytree(built, copy, ignore=shutil.ignore_patterns("site"))
    rejected = {"file": "someone/gpu/x.json", "submission_id": "20261130T000000Z-00000000",
                "codes": ["E-SIGNATURE"], "messages": ["the signature does not verify"]}  # fmt: skip
    (copy / "rejections.json").write_text(json.dumps([rejected]))
    write_site(copy, copy / "site")
    open_view(page, copy / "site", "view=rejections")
    text = page.inner_text("#main")
    assert "someone/gpu/x.json" in text and "E-SIGNATURE" in text and "the signature does not verify" in text


def test_pareto_front_per_model_or_across_models(page: Any, built: Path) -> None:
    m = measured(built).filter(pl.col("j_per_token_mean").is_not_null() & pl.col("tokens_per_s").is_not_null())
    open_view(page, built / "site", "view=pareto")
    assert page.locator("#fig-pareto path.pareto-front").count() == m["model_id"].n_unique()
    per_model = read_csv(download(page, "#fig-pareto button[data-download='csv']"))
    page.check("[data-control='front'] input[value='all']")
    assert "front=all" in page.evaluate("location.hash")
    assert page.locator("#fig-pareto path.pareto-front").count() == 1
    across = read_csv(download(page, "#fig-pareto button[data-download='csv']"))
    fastest = max(across, key=lambda r: float(r["tokens_per_s"]))
    assert fastest["on_pareto_front"] == "true"
    on = [r for r in across if r["on_pareto_front"] == "true"]
    assert all(not (float(o["tokens_per_s"]) >= float(r["tokens_per_s"]) and float(o["j_per_token_mean"]) <
                    float(r["j_per_token_mean"])) for r in on for o in across)  # fmt: skip
    assert sum(r["on_pareto_front"] == "true" for r in per_model) >= len(on)


def test_quality_view_draws_perplexity_beside_energy(page: Any, built: Path, tmp_path: Path) -> None:
    copy = tmp_path / "dataset"
    shutil.copytree(built, copy, ignore=shutil.ignore_patterns("site"))
    config = "measurements_all" if (copy / "data" / "measurements_all").is_dir() else "measurements"
    path = copy / "data" / config / "train-00000-of-00001.parquet"
    m = pl.read_parquet(path)
    sizes = m.filter(pl.col("precision") != "fp16").group_by("submission_id").len()
    first = sizes.sort(["len", "submission_id"], descending=[True, False])["submission_id"][0]  # most precisions
    scored = pl.when(pl.col("submission_id") == first).then(pl.col("j_per_token_mean") * 10)  # test data
    m = m.with_columns(perplexity=scored.otherwise(None))
    m.write_parquet(path)
    write_site(copy, copy / "site")
    open_view(page, copy / "site", "view=quality&tier=all")
    mine = m.filter(pl.col("submission_id") == first)
    assert page.locator("#fig-quality circle.point").count() == mine.height
    rows = read_csv(download(page, "#fig-quality button[data-download='csv']"))
    assert len(rows) == mine.height > 2
    base = mine.filter(pl.col("precision") == "fp16")["perplexity"][0]
    for row in rows:
        want = 100 * (float(row["perplexity"]) / base - 1) if row["precision"] != "fp16" else None
        assert (float(row["perplexity_change_pct"]) if row["perplexity_change_pct"] else None) == pytest.approx(want)


def test_each_filter_removes_exactly_its_rows_from_the_table(page: Any, built: Path) -> None:
    m = measured(built)
    stack = column(m, "software_stack", "stack")
    dims = {"gpu": "gpu_name", "stack": stack, "batch": "batch_size", "precision": "precision", "weights": "weights"}
    open_view(page, built / "site", "view=table")
    checked = 0
    for key, name in dims.items():
        values = sorted(str(v) for v in m[name].unique().to_list())
        assert page.locator(f"fieldset[data-filter='{key}'] input").count() >= len(values)
        if len(values) < 2:
            continue
        value = values[0]
        page.uncheck(f"fieldset[data-filter='{key}'] input[value='{value}']")
        show_all(page)
        left = m.filter(pl.col(name).cast(pl.String) != value).height
        assert page.locator("table.data tbody tr").count() == left, key
        page.check(f"fieldset[data-filter='{key}'] input[value='{value}']")
        show_all(page)
        assert page.locator("table.data tbody tr").count() == m.height
        checked += 1
    assert checked >= 2
