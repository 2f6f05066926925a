"""ecocompute.lint: energy-waste rules on the Python syntax tree, each finding citing the measurement behind it.

``ecocompute lint PATH...`` (the CLI), the pre-commit hook and the GitHub Action all call :func:`lint_paths`::

    from pathlib import Path
    from ecocompute.lint import LintConfig, lint_paths

    result = lint_paths([Path("src")], LintConfig())
    for finding in result.findings:
        print(finding.where, finding.rule, finding.message)
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "LintResult": "ecocompute.lint.api",
    "lint_paths": "ecocompute.lint.api",
    "LintConfig": "ecocompute.lint.config",
    "RULES": "ecocompute.lint.findings",
    "Finding": "ecocompute.lint.findings",
    "Rule": "ecocompute.lint.findings",
    "Severity": "ecocompute.lint.findings",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import on first use, so registering ``ecocompute lint`` costs ``--help`` nothing."""
    if name in _EXPORTS:
        value = getattr(import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ecocompute.lint' has no attribute {name!r}")
