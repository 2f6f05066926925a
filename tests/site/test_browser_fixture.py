"""The shared browser fixture records console errors and page errors, and takes screenshots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from browser import shoot, watch_errors


def test_watch_errors_records_console_and_page_errors(browser: Any) -> None:
    context = browser.new_context()
    page = context.new_page()
    errors = watch_errors(page)
    page.set_content("<script>console.log('fine'); console.error('bad thing')</script>")
    page.set_content("<script>setTimeout(() => { throw new Error('boom') }, 0)</script>")
    page.wait_for_timeout(50)
    context.close()
    assert any("bad thing" in e for e in errors)
    assert any("boom" in e for e in errors)
    assert not any("fine" in e for e in errors)


def test_page_fixture_and_screenshot(page: Any, tmp_path: Path) -> None:
    page.set_content("<h1>ecocompute</h1>")
    path = shoot(page, tmp_path, "fixture-check")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert page.console_errors == []
