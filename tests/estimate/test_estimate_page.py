"""The static estimator page in real headless Chromium, from file:// with every network request refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from browser import shoot

from ecocompute.estimate import Question, estimate, load_artifact
from ecocompute.estimate.publish import write_web


def pct(value: float) -> str:
    return f"{'+' if value >= 0 else '-'}{abs(value):.1f}%"


def open_page(page: Any, folder: Path) -> list[str]:
    index = write_web(folder, load_artifact())
    refused: list[str] = []

    def route(r: Any) -> None:
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.goto(index.as_uri())
    return refused


def test_the_page_answers_as_the_python_engine(page: Any, tmp_path: Path, screenshots: Path) -> None:
    refused = open_page(page, tmp_path / "estimate")
    first = estimate(Question(gpu="H200", params_b=7.6, precision="nf4"))
    assert page.get_by_test_id("change").inner_text() == f"{pct(first.change_pct)} energy per token"
    page.fill("#gpu", "RTX 4090")
    page.fill("#params_b", "3")
    page.select_option("#precision", "int8")
    page.click("button[type=submit]")
    second = estimate(Question(gpu="RTX 4090", params_b=3, precision="int8"))
    low, high = second.change_ci95
    assert page.get_by_test_id("change").inner_text() == f"{pct(second.change_pct)} energy per token"
    assert page.get_by_test_id("interval").inner_text() == f"95% interval {pct(low)} to {pct(high)}"
    assert page.get_by_test_id("recommendation").inner_text() == second.recommendation.text
    page.fill("#gpu", "H200")
    page.fill("#params_b", "20")
    page.select_option("#precision", "nf4")
    page.click("button[type=submit]")
    third = estimate(Question(gpu="H200", params_b=20, precision="nf4"))
    assert page.get_by_test_id("change").inner_text() == f"{pct(third.change_pct)} energy per token"
    assert third.published is None or "basis: published" in page.get_by_test_id("published").inner_text()
    shoot(page, screenshots, "estimate")
    assert refused == []


def test_a_bad_question_shows_the_valid_values(page: Any, tmp_path: Path) -> None:
    open_page(page, tmp_path / "estimate")
    page.fill("#gpu", "Z80")
    page.click("button[type=submit]")
    assert "unknown card 'Z80'" in page.get_by_test_id("error").inner_text()
    assert "NVIDIA H200" in page.get_by_test_id("error").inner_text()


def test_an_unmeasured_precision_shows_no_figure(page: Any, tmp_path: Path) -> None:
    artifact = load_artifact()
    artifact = {**artifact, "groups": [g for g in artifact["groups"] if not g["precision"].startswith("fp8")]}
    page.goto(write_web(tmp_path / "estimate", artifact).as_uri())
    page.select_option("#precision", "fp8-dyn")
    page.click("button[type=submit]")
    expected = estimate(Question(gpu="H200", params_b=7.6, precision="fp8-dyn"), artifact)
    assert page.get_by_test_id("change").inner_text() == "Not measured yet: no estimate"
    assert page.get_by_test_id("interval").count() == 0 and page.get_by_test_id("bar").count() == 0
    assert page.get_by_test_id("recommendation").inner_text() == expected.recommendation.text
    assert "not-measured" in page.locator(".reasons").inner_text()


def test_the_engine_picks_its_own_runs(page: Any, tmp_path: Path) -> None:
    open_page(page, tmp_path / "estimate")
    page.fill("#params_b", "1.54")
    page.select_option("#precision", "q4_k_m")
    page.click("button[type=submit]")
    assert page.get_by_test_id("change").inner_text() == "Not measured yet: no estimate"
    assert "engine-not-measured" in page.locator(".reasons").inner_text()
    page.select_option("#engine", "llama.cpp")
    page.click("button[type=submit]")
    llama = estimate(Question(gpu="H200", params_b=1.54, precision="q4_k_m", engine="llama.cpp"))
    assert llama.change_pct is not None
    assert page.get_by_test_id("change").inner_text() == f"{pct(llama.change_pct)} energy per token"
    assert page.get_by_test_id("recommendation").inner_text() == llama.recommendation.text
