"""Shared browser fixtures: Debian's headless Chromium driven by the PyPI ``playwright`` package (contract 6).

Use from a test folder's ``conftest.py``::

    from browser import browser, page, screenshots  # noqa: F401

``page`` fails the test on any console error or uncaught page error; ``shoot`` saves a screenshot. The browser is
``/usr/bin/chromium`` (``apt-get install -y chromium``), never one fetched by ``playwright install``. A test that
needs it skips only when that file is missing and ``CI`` is unset; under ``CI`` it fails instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
SCREENSHOTS_ENV = "ECOCOMPUTE_SCREENSHOTS"  # a folder to keep screenshots in (default: the test's tmp folder)
VIEWPORT = {"width": 1280, "height": 900}


def require_chromium() -> None:
    """Skip without Chromium outside CI; fail without it under CI (``CI`` set to anything)."""
    if CHROMIUM.exists():
        return
    message = f"{CHROMIUM} is missing: apt-get install -y chromium"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium for the test session, launched with the contract's flags."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=list(FLAGS), headless=True)
        yield launched
        launched.close()


def watch_errors(page: Any) -> list[str]:
    """Record every console error and uncaught exception of ``page`` into the list returned."""
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(f"console.{msg.type}: {msg.text}") if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(f"pageerror: {exc}"))
    return errors


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page (own context, downloads accepted); the test fails if the page logged any error."""
    context = browser.new_context(accept_downloads=True, viewport=VIEWPORT)
    new_page = context.new_page()
    errors = watch_errors(new_page)
    new_page.console_errors = errors  # tests may assert on it mid-way
    yield new_page
    context.close()
    if errors:
        pytest.fail("the page logged errors:\n" + "\n".join(errors), pytrace=False)


@pytest.fixture
def screenshots(tmp_path: Path) -> Path:
    """Where ``shoot`` saves: ``$ECOCOMPUTE_SCREENSHOTS`` when set (e.g. docs/screenshots), else a tmp folder."""
    folder = Path(os.environ.get(SCREENSHOTS_ENV) or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def shoot(page: Any, folder: Path, name: str, *, full_page: bool = True) -> Path:
    """Save a PNG screenshot of ``page`` as ``folder/name.png`` and return its path."""
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path
