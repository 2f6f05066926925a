"""Static values of expressions: constants, dicts, ``dict(...)``, ``BitsAndBytesConfig(...)`` and names bound earlier.

Nothing is executed. An expression whose value cannot be known from the syntax tree evaluates to
:data:`UNKNOWN`, and every rule treats an unknown value as "cannot tell", never as a default.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class _Unknown:
    """The value of an expression the linter cannot evaluate statically."""

    _instance: _Unknown | None = None

    def __new__(cls) -> _Unknown:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN: Any = _Unknown()
MAX_DEPTH = 12  # names that refer to names: stop following after this many hops (cycles, long chains)

BNB_CONFIG_NAMES = frozenset({"BitsAndBytesConfig"})


@dataclass(frozen=True)
class Kwargs:
    """The keyword arguments of a call, statically evaluated; ``complete`` is False when a ``**x`` was unknown."""

    values: dict[str, Any] = field(default_factory=dict)
    complete: bool = True

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``: ``default`` when absent and the set is complete, :data:`UNKNOWN` when it may hide."""
        if key in self.values:
            return self.values[key]
        return default if self.complete else UNKNOWN


@dataclass(frozen=True)
class BnbConfig:
    """A ``BitsAndBytesConfig(...)`` call, with its keyword arguments."""

    kwargs: Kwargs


def call_name(func: ast.expr) -> str | None:
    """The last name of a called expression: ``transformers.BitsAndBytesConfig`` -> ``BitsAndBytesConfig``."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def dotted(expr: ast.expr) -> str | None:
    """``torch.float16`` -> ``"torch.float16"``; None for anything but names and attributes."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        inner = dotted(expr.value)
        return None if inner is None else f"{inner}.{expr.attr}"
    return None


class Evaluator:
    """Evaluates expressions against the names a scope has bound so far (``env``: name -> expression)."""

    def __init__(self, env: Mapping[str, ast.expr | None]) -> None:
        self.env = env

    def value(self, expr: ast.expr | None, depth: int = 0) -> Any:
        """The static value of ``expr``, or :data:`UNKNOWN`."""
        if expr is None or depth > MAX_DEPTH:
            return UNKNOWN
        if isinstance(expr, ast.Constant):
            return expr.value
        if isinstance(expr, ast.Name):
            bound = self.env.get(expr.id)
            return UNKNOWN if bound is None else self.value(bound, depth + 1)
        if isinstance(expr, ast.Dict):
            return self._dict(expr, depth)
        if isinstance(expr, ast.JoinedStr):
            return self._fstring(expr, depth)
        if isinstance(expr, ast.Call):
            return self._call(expr, depth)
        if isinstance(expr, ast.Attribute):
            return dotted(expr) or UNKNOWN
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
            inner = self.value(expr.operand, depth + 1)
            return -inner if isinstance(inner, int | float) and not isinstance(inner, bool) else UNKNOWN
        return UNKNOWN

    def kwargs(self, keywords: list[ast.keyword], depth: int = 0) -> Kwargs:
        """The keyword arguments of a call, following ``**name`` into dicts bound earlier."""
        values: dict[str, Any] = {}
        complete = True
        for kw in keywords:
            if kw.arg is not None:
                values[kw.arg] = self.value(kw.value, depth + 1)
                continue
            spread = self.value(kw.value, depth + 1)
            if isinstance(spread, Kwargs):
                values.update(spread.values)
                complete = complete and spread.complete
            else:
                complete = False
        return Kwargs(values, complete)

    def _dict(self, node: ast.Dict, depth: int) -> Any:
        values: dict[str, Any] = {}
        complete = True
        for key, val in zip(node.keys, node.values, strict=True):
            if key is None:  # {**other}
                spread = self.value(val, depth + 1)
                if isinstance(spread, Kwargs):
                    values.update(spread.values)
                    complete = complete and spread.complete
                else:
                    complete = False
                continue
            k = self.value(key, depth + 1)
            if isinstance(k, str):
                values[k] = self.value(val, depth + 1)
            else:
                complete = False
        return Kwargs(values, complete)

    def _fstring(self, node: ast.JoinedStr, depth: int) -> Any:
        parts: list[str] = []
        for piece in node.values:
            if isinstance(piece, ast.Constant) and isinstance(piece.value, str):
                parts.append(piece.value)
            elif isinstance(piece, ast.FormattedValue) and piece.format_spec is None and piece.conversion == -1:
                inner = self.value(piece.value, depth + 1)
                if not isinstance(inner, str | int | float) or isinstance(inner, bool):
                    return UNKNOWN
                parts.append(str(inner))
            else:
                return UNKNOWN
        return "".join(parts)

    def _call(self, node: ast.Call, depth: int) -> Any:
        name = call_name(node.func)
        if name == "dict" and not node.args:
            return self.kwargs(node.keywords, depth)
        if name in BNB_CONFIG_NAMES and not node.args:
            return BnbConfig(self.kwargs(node.keywords, depth))
        return UNKNOWN
