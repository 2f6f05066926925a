"""Inputs and outputs of the analysis: polars or pandas DataFrames, or a ``datasets.Dataset``.

Every public function converts what it is given with :func:`as_polars`, computes in polars, and
hands back the same kind of frame it was given (:func:`like_input`): pandas in, pandas out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

from ecocompute.schema.errors import UsageError
from ecocompute.schema.models import ENGINE


def _is_pandas(data: Any) -> bool:
    return type(data).__module__.split(".")[0] == "pandas"


def as_polars(data: Any, what: str = "table") -> pl.DataFrame:
    """A polars DataFrame from a polars/pandas DataFrame, a polars LazyFrame or a ``datasets.Dataset``."""
    if isinstance(data, pl.DataFrame):
        return data
    if isinstance(data, pl.LazyFrame):
        return data.collect()
    if _is_pandas(data):
        return pl.from_pandas(data)
    to_polars = getattr(data, "to_polars", None)
    if callable(to_polars):
        result = to_polars()
        if isinstance(result, pl.DataFrame):
            return result
    raise UsageError(f"the {what} is a {type(data).__name__}: pass a polars or pandas DataFrame or a datasets.Dataset")


def like_input(result: pl.DataFrame, *inputs: Any) -> Any:
    """``result`` as pandas when the first input was pandas, else as polars."""
    if inputs and _is_pandas(inputs[0]):
        return result.to_pandas()
    return result


def matching(keys: Sequence[str], values: Sequence[Any]) -> pl.Expr:
    """Rows whose ``keys`` equal ``values``, a null matching a null (a group of unknown prompt length)."""
    return pl.all_horizontal(pl.col(k).eq_missing(v) for k, v in zip(keys, values, strict=True))


def with_null_columns(frame: pl.DataFrame, columns: dict[str, type[pl.DataType]]) -> pl.DataFrame:
    """``frame`` with each of ``columns`` it lacks added as nulls of its type (a table from an older version).

    A column it has in another type that holds nothing but nulls is replaced the same way: pandas keeps an all-null
    column as objects, which polars reads as strings.
    """
    untyped = [
        name
        for name, dtype in columns.items()
        if name not in frame.columns or (frame[name].dtype != dtype and frame[name].null_count() == frame.height)
    ]
    return frame.with_columns(pl.lit(None, dtype=columns[n]).alias(n) for n in untyped) if untyped else frame


def with_engine(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with an ``engine`` column in which a missing column and nulls read as transformers'.

    A table from before engines (schema 1.1 and older) has no ``engine``: every row in it is transformers'.
    """
    return with_null_columns(frame, {"engine": pl.String}).with_columns(pl.col("engine").fill_null(ENGINE))


def engine_is_in(frame: pl.DataFrame, engines: Sequence[str]) -> pl.Expr:
    """The condition "the row's engine is one of ``engines``"; a table with no ``engine`` column is transformers'."""
    if "engine" in frame.columns:
        return pl.col("engine").is_in(list(engines))
    return pl.lit(ENGINE in engines)


def require_columns(frame: pl.DataFrame | pl.LazyFrame, columns: tuple[str, ...], what: str) -> None:
    """Raise UsageError naming the columns ``frame`` (or a lazy frame's schema) lacks."""
    names = frame.collect_schema().names() if isinstance(frame, pl.LazyFrame) else frame.columns
    missing = [c for c in columns if c not in names]
    if missing:
        raise UsageError(
            f"the {what} lacks the column(s) {', '.join(missing)}: pass the dataset's {what} table"
            if what in ("measurements", "windows")
            else f"the {what} lacks the column(s) {', '.join(missing)}"
        )
