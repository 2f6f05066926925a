"""``[tool.ecocompute.lint]`` in pyproject.toml, merged with the command line (the command line wins).

Keys: ``select`` and ``ignore`` (lists of rule ids or prefixes such as ``"ECO1"``), ``target-gpu``, ``stack``,
``severity`` (the lowest severity that fails: ``note``, ``warning``, ``error``), ``batch-size`` (the batch a
one-prompt loop is compared at) and ``min-saving-pct`` (the smallest saving ECO103/ECO104 report).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ecocompute.lint.findings import RULES, Severity
from ecocompute.lint.rules import Settings
from ecocompute.schema.errors import UsageError

KEYS = ("select", "ignore", "target-gpu", "stack", "severity", "batch-size", "min-saving-pct")
STACKS = ("eager", "compiled", "compiled-all")


@dataclass(frozen=True)
class LintConfig:
    """Everything one run of the linter is told."""

    select: frozenset[str] = field(default_factory=lambda: frozenset(RULES))
    settings: Settings = field(default_factory=Settings)
    fail_at: Severity = Severity.WARNING
    source: Path | None = None


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start``."""
    folder = start.resolve()
    for candidate in (folder, *folder.parents):
        if (candidate / "pyproject.toml").is_file():
            return candidate / "pyproject.toml"
    return None


def read_table(path: Path) -> dict[str, Any]:
    """The ``[tool.ecocompute.lint]`` table of a pyproject.toml ({} when absent); unknown keys are an error."""
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}") from None
    table = doc.get("tool", {}).get("ecocompute", {}).get("lint", {})
    if not isinstance(table, dict):
        raise UsageError(f"{path}: [tool.ecocompute.lint] must be a table")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise UsageError(
            f"{path}: unknown key(s) {', '.join(unknown)} in [tool.ecocompute.lint]; use {', '.join(KEYS)}"
        )
    return table


def expand(codes: list[str] | tuple[str, ...], what: str) -> frozenset[str]:
    """Rule ids and prefixes (``ECO1``, ``ALL``) -> the rule ids they name; an unknown one is a usage error."""
    chosen: set[str] = set()
    for code in codes:
        code = code.strip().upper()
        matching = set(RULES) if code == "ALL" else {r for r in RULES if r.startswith(code)}
        if not code or not matching:
            raise UsageError(f"{what}: {code!r} names no rule; rules are {', '.join(RULES)}")
        chosen |= matching
    return frozenset(chosen)


def _codes(value: Any, key: str) -> list[str]:
    if isinstance(value, str):
        return [v for v in value.split(",") if v.strip()]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    raise UsageError(f'{key} must be a list of rule ids, e.g. ["ECO101"]')


def _number(value: Any, key: str, kind: type) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float) or (kind is int and not isinstance(value, int)):
        raise UsageError(f"{key} must be a {'whole ' if kind is int else ''}number, got {value!r}")
    if value <= 0 and kind is int:
        raise UsageError(f"{key} must be at least 1, got {value!r}")
    return kind(value)


def resolve(table: dict[str, Any], cli: dict[str, Any], source: Path | None = None) -> LintConfig:
    """Merge the pyproject table with command-line values (None where an option was not given)."""
    merged = {**table, **{k: v for k, v in cli.items() if v is not None}}
    select = expand(_codes(merged.get("select", ["ALL"]), "select"), "select")
    select -= expand(_codes(merged["ignore"], "ignore"), "ignore") if merged.get("ignore") else frozenset()
    stack = merged.get("stack")
    if stack is not None and stack not in STACKS:
        raise UsageError(f"stack {stack!r} is not one of {', '.join(STACKS)}")
    try:
        fail_at = Severity.parse(str(merged.get("severity", "warning")))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    defaults = Settings()
    settings = Settings(
        gpu=str(merged.get("target-gpu", defaults.gpu)),
        stack=stack,
        batch_size=_number(merged.get("batch-size", defaults.batch_size), "batch-size", int),
        min_saving_pct=_number(merged.get("min-saving-pct", defaults.min_saving_pct), "min-saving-pct", float),
    )
    return LintConfig(select=select, settings=settings, fail_at=fail_at, source=source)
