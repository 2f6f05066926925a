"""Readable metavars in every command's help: ``PATH``, ``N``, ``TEXT``, ``fp16|nf4``; nothing after a flag.

Typer prints its own type names (``<bool>`` after every flag, ``<list[Path]>``, ``<float range>``, a required
argument as ``{file}``). One place
for every stage: :func:`install` makes typer show these instead, for any option that sets no ``metavar`` itself.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any, get_args, get_origin

from typer.core import TyperArgument, TyperOption

SCALARS = {int: "N", float: "NUMBER", str: "TEXT", Path: "PATH"}


def readable(param: Any) -> str:
    """The metavar of ``param`` from its type: ``PATH``, ``N``, ``NUMBER``, ``TEXT`` or ``a|b|c``; ``...`` if many."""
    annotation = param.type_descriptor.annotation
    many = get_origin(annotation) is list or param.nargs != 1
    if get_origin(annotation) is list:
        (annotation,) = get_args(annotation)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        base = "|".join(str(member.value) for member in annotation)
    else:
        base = SCALARS.get(annotation, "VALUE")
    return base + ("..." if many else "")


def _option_type(self: TyperOption, ctx: Any) -> str | None:
    if self.metavar is not None:
        return self.metavar
    if self.is_flag:
        return None
    return readable(self)


def _argument_type(self: TyperArgument, ctx: Any) -> str | None:
    return readable(self)


def _argument_usage(self: TyperArgument) -> str:
    """``FILE`` for a required argument, ``[PATHS]...`` for optional ones (typer writes ``{file}``)."""
    name = self.display_name_raw.upper()
    return (name if self.required else f"[{name}]") + ("..." if self.nargs != 1 else "")


def install() -> None:
    """Show readable metavars in every command's help (idempotent)."""
    TyperOption.display_type_rich = _option_type  # type: ignore[method-assign]
    TyperArgument.display_type_rich = _argument_type  # type: ignore[method-assign,assignment]
    TyperArgument._usage_display_name = _argument_usage  # type: ignore[method-assign]
