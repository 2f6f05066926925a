"""Fixtures of the estimator tests: the shared browser (tests/browser.py, contract 6)."""

from __future__ import annotations

from browser import browser, page, screenshots  # noqa: F401
