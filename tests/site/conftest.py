"""Fixtures of the site tests: the shared browser (tests/browser.py)."""

from browser import browser, page, screenshots  # noqa: F401
