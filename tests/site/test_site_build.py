"""The site's files: written by `publish build` and `publish site`, deterministic, data embedded, nothing remote."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
from site_helpers import all_tier, column, table

from ecocompute.analysis.crossovers import crossover_frame
from ecocompute.cli import main
from ecocompute.site import columns
from ecocompute.site.payload import TIER, SiteOptions, columnar, crossovers, defaults, read_tables, rejections
from ecocompute.site.render import embed_json, write_site


def embedded(site: Path) -> dict:
    text = (site / "index.html").read_text(encoding="utf-8")
    match = re.search(r'<script id="ecocompute-data" type="application/json">(.*?)</script>', text, re.DOTALL)
    assert match, "the page embeds no data"
    return json.loads(match.group(1))


def test_build_writes_the_site_into_the_dataset_and_its_manifest(built: Path) -> None:
    site = built / "site"
    assert {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()} >= {
        "index.html", "app.js", "app.css", "vendor/d3.min.js", "vendor/d3.LICENSE", "README.md",
    }  # fmt: skip
    assert "sdk: static" in (site / "README.md").read_text(encoding="utf-8")
    manifest = json.loads((built / "MANIFEST.json").read_text(encoding="utf-8"))
    assert "site/index.html" in {f["path"] for f in manifest.get("files", [])}


def test_page_loads_nothing_remote(built: Path) -> None:
    for name in ("index.html", "app.js", "app.css"):
        text = (built / "site" / name).read_text(encoding="utf-8")
        assert not re.search(r"""src=["']?(https?:)?//|<link[^>]*href=["']?(https?:)?//""", text), name
        assert "fetch(" not in text and "XMLHttpRequest" not in text


def test_embedded_measurements_are_the_datasets_rows(built: Path) -> None:
    data = embedded(built / "site")
    m = all_tier(built, "measurements")
    cols = data["measurements"]["columns"]
    assert data["measurements"]["n"] == m.height
    assert cols["j_per_token"] == m["j_per_token_mean"].to_list()
    stack = cols["stack"]
    assert [stack["levels"][c] for c in stack["codes"]] == m[column(m, "software_stack", "stack")].to_list()
    assert data["meta"]["version"] == json.loads((built / "MANIFEST.json").read_text())["version"]


def test_publish_site_is_deterministic(built: Path, tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    write_site(built, first)
    write_site(built, second)
    for path in first.rglob("*"):
        if path.is_file():
            assert path.read_bytes() == (second / path.relative_to(first)).read_bytes(), path.name
    assert (first / "index.html").read_bytes() == (built / "site" / "index.html").read_bytes()


def test_publish_site_command(built: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["publish", "site", "--dataset", str(built), "--out", str(tmp_path / "s")]) == 0
    assert (tmp_path / "s" / "index.html").is_file()
    assert main(["publish", "site", "--help"]) == 0
    assert "Example: ecocompute publish site" in capsys.readouterr().out


def test_publish_site_without_a_dataset_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["publish", "site", "--dataset", str(tmp_path), "--out", str(tmp_path / "s")]) != 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    assert len(captured.err.strip().splitlines()) == 1


def test_columnar_encodes_text_as_levels_and_keeps_nulls() -> None:
    frame = pl.DataFrame({"s": ["b", None, "a", "b"], "x": [1.5, None, float("nan"), 2.0], "n": [1, 2, None, 4]})
    encoded = columnar(frame)
    assert encoded["n"] == 4
    assert encoded["columns"]["s"] == {"levels": ["a", "b"], "codes": [1, -1, 0, 1]}
    assert encoded["columns"]["x"] == [1.5, None, None, 2.0]
    assert encoded["columns"]["n"] == [1, 2, None, 4]


def test_columns_read_old_and_new_names() -> None:
    old = pl.DataFrame({"stack": ["eager"], "ci95_low_j": [1.0]})
    new = pl.DataFrame({"software_stack": ["eager"], "j_per_token_ci95_low": [1.0], "stack": ["x"]})
    assert columns.resolve(old, columns.MEASUREMENTS) == {"stack": "stack", "ci_low": "ci95_low_j"}
    assert columns.resolve(new, columns.MEASUREMENTS) == {"stack": "software_stack", "ci_low": "j_per_token_ci95_low"}


def test_embedded_json_cannot_close_its_script() -> None:
    text = embed_json({"message": "</script><script>alert(1)</script><!--"})
    assert "<" not in text
    assert json.loads(text) == {"message": "</script><script>alert(1)</script><!--"}


def test_defaults_cite_a_named_dated_source() -> None:
    values = defaults()
    for key in ("grid_g_per_kwh", "pue"):
        assert values[key]["value"] > 0
        assert values[key]["source"] and re.search(r"\b20\d\d\b", values[key]["source"]), key
        assert values[key]["url"].startswith("https://")


def test_rejections_read_the_builds_form_a_list_or_a_mapping(tmp_path: Path) -> None:
    assert rejections(tmp_path) is None
    path = tmp_path / "rejections.json"
    path.write_text(
        json.dumps(
            [
                {
                    "file": "a/b/c.json",
                    "submission_id": "20261130T000000Z-00000000",
                    "codes": ["E-SIG", "E-PATH"],
                    "messages": ["signature does not verify", "moved"],
                }
            ]
        )
    )
    assert rejections(tmp_path) == [
        {"submission": "a/b/c.json", "submission_id": "20261130T000000Z-00000000",
         "findings": [{"code": "E-SIG", "message": "signature does not verify", "where": None},
                      {"code": "E-PATH", "message": "moved", "where": None}]}
    ]  # fmt: skip
    finding = {"code": "E-SIG", "message": "signature does not verify", "path": "signature"}
    path.write_text(json.dumps([{"path": "a/b/c.json", "findings": [finding]}]))
    assert rejections(tmp_path)[0]["findings"] == [
        {"code": "E-SIG", "message": "signature does not verify", "where": "signature"}
    ]
    path.write_text(json.dumps({"a/b/c.json": [finding]}))
    assert rejections(tmp_path)[0]["findings"][0]["code"] == "E-SIG"


def test_crossovers_per_tier_reuse_what_the_build_computed(built: Path) -> None:
    tables = read_tables(built)
    options = SiteOptions(n_boot=20)
    known = crossover_frame(tables.measurements, tables.windows, n_boot=20, seed=options.seed)
    one_tier = replace(tables, measurements=tables.measurements.with_columns(pl.lit(True).alias(TIER)))
    reused = crossovers(one_tier, options, {"gate": known})
    assert reused.filter(pl.col("tier") == "all").drop("tier").equals(known)
    first = tables.measurements["submission_id"].sort()[0]
    split = replace(
        tables, measurements=tables.measurements.with_columns((pl.col("submission_id") != first).alias(TIER))
    )
    both = crossovers(split, options)
    kept = split.measurements.filter(pl.col(TIER))
    expected = crossover_frame(kept, split.windows.filter(pl.col("submission_id") != first), n_boot=20)
    assert both.filter(pl.col("tier") == "gate").drop("tier").equals(expected)
    assert (
        both.filter(pl.col("tier") == "all")
        .drop("tier")
        .equals(crossover_frame(split.measurements, split.windows, n_boot=20))
    )


def test_gate_tier_is_the_default_config(built: Path) -> None:
    tables = read_tables(built)
    default = table(built, "measurements")
    assert tables.measurements.filter(pl.col(TIER)).height == default.height
    assert set(tables.measurements.filter(pl.col(TIER))["submission_id"]) == set(default["submission_id"])
