"""ecocompute.lint: energy-waste rules on the Python syntax tree, each finding citing the measurement behind it.

``ecocompute lint PATH...`` (the CLI), the pre-commit hook and the GitHub Action all call :func:`lint_paths`.
"""

from ecocompute.lint.api import LintResult, lint_paths
from ecocompute.lint.config import LintConfig
from ecocompute.lint.findings import RULES, Finding, Rule, Severity

__all__ = ["RULES", "Finding", "LintConfig", "LintResult", "Rule", "Severity", "lint_paths"]
