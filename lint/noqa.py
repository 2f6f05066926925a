"""``# noqa`` comments: ``# noqa: ECO101`` silences that rule on its line, a bare ``# noqa`` every rule.

A finding on a statement that spans lines is silenced by the comment on its first or its last line.
"""

from __future__ import annotations

import re

_NOQA = re.compile(r"#\s*noqa(?P<codes>:\s*[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*)?", re.IGNORECASE)
ALL = frozenset({"*"})


def suppressions(source: str) -> dict[int, frozenset[str]]:
    """1-based line -> the rule ids its ``# noqa`` names (``{"*"}`` for a bare one)."""
    found: dict[int, frozenset[str]] = {}
    if "noqa" not in source.lower():
        return found
    for number, line in enumerate(source.splitlines(), start=1):
        if "#" not in line:
            continue
        match = _NOQA.search(line)
        if match:
            codes = match.group("codes")
            found[number] = frozenset(re.findall(r"[A-Z]+[0-9]+", codes.upper())) if codes else ALL
    return found


def silenced(rule: str, lines: tuple[int, ...], table: dict[int, frozenset[str]]) -> bool:
    """True when a ``# noqa`` on any of ``lines`` names ``rule`` (or names none)."""
    for line in lines:
        codes = table.get(line)
        if codes is not None and (codes is ALL or rule in codes):
            return True
    return False
