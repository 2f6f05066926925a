"""Linting paths in one call: discover files, lint them, keep findings on changed lines, sort."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ecocompute.lint import diff as gitdiff
from ecocompute.lint.config import LintConfig
from ecocompute.lint.engine import discover, lint_files
from ecocompute.lint.evidence import Evidence
from ecocompute.lint.findings import Finding


@dataclass(frozen=True)
class LintResult:
    """Findings sorted by path and place, and the files that could not be linted (path, reason)."""

    findings: list[Finding]
    errors: list[tuple[str, str]]
    files: int

    def failing(self, config: LintConfig) -> list[Finding]:
        """The findings at or above the severity that fails the run."""
        return [f for f in self.findings if f.severity >= config.fail_at]


def _shown(path: Path) -> Path:
    """A path as the user is shown it: relative to the current folder when it lies inside it."""
    try:
        return Path(os.path.relpath(path)) if path.is_absolute() and path.resolve().is_relative_to(Path.cwd()) else path
    except ValueError:
        return path


def lint_paths(
    paths: list[Path],
    config: LintConfig,
    *,
    diff_base: str | None = None,
    jobs: int | None = None,
    evidence: Evidence | None = None,
) -> LintResult:
    """Lint every Python file and notebook under ``paths``; with ``diff_base``, only findings on changed lines."""
    files = [_shown(p) for p in discover(paths)]
    changed = gitdiff.changed_lines(diff_base) if diff_base else None
    if changed is not None:
        files = [f for f in files if Path(os.path.normpath(f.absolute())) in changed]
    ev = evidence or Evidence(config.settings.gpu)
    findings: list[Finding] = []
    errors: list[tuple[str, str]] = []
    for report in lint_files(files, config, ev, jobs=jobs if evidence is None else 1):
        if report.error:
            errors.append((report.path, report.error))
        lines = changed.get(Path(os.path.normpath(Path(report.path).absolute()))) if changed is not None else None
        findings += [
            f for f in report.findings if changed is None or gitdiff.keeps(lines, f.line, f.end_line or f.line)
        ]
    findings.sort(key=lambda f: (f.path, f.line, f.column, f.rule))
    return LintResult(findings, errors, len(files))
