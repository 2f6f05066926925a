"""Choosing rows of the dataset the way ``ecocompute collect`` reads its options.

Every filter takes one value, a comma list (``"nf4,int8-t0"``) or a list, case-insensitively; a value the
dataset cannot hold raises :class:`ecocompute.schema.errors.UsageError` naming the valid ones. A GPU is matched
against the ``gpu_name`` values of the table, whole (``"NVIDIA H200"``) or by one of its words (``"h200"``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import polars as pl

from ecocompute.analysis.defaults import ENGINES, PRECISION_ORDER, STACK
from ecocompute.analysis.frames import as_polars, engine_is_in, like_input
from ecocompute.schema.errors import UsageError
from ecocompute.schema.models import Stack

TIERS = ("gated", "all")
WEIGHTS = ("pretrained", "random-init")
Choice = str | int | Iterable[str | int] | None


def _names(value: Choice) -> list[str]:
    """The names of a choice: a comma list or a list, stripped and lower-cased, empty ones dropped."""
    if value is None:
        return []
    raw: Iterable[str | int] = (
        value.split(",") if isinstance(value, str) else [value] if isinstance(value, int) else value
    )
    return [str(v).strip().lower() for v in raw if str(v).strip()]


def parse_choice(value: Choice, valid: Sequence[str], what: str) -> list[str] | None:
    """The valid names ``value`` lists (None: no filter); UsageError names the valid ones for an unknown one."""
    names = _names(value)
    if not names:
        return None
    unknown = [n for n in names if n not in valid]
    if unknown:
        raise UsageError(f"unknown {what} {unknown[0]!r}: choose from {', '.join(valid)}")
    return list(dict.fromkeys(names))


def parse_precisions(value: Choice) -> list[str] | None:
    """Precision names (``"NF4"``, ``"nf4,int8-t0"``); ``"nf5"`` raises naming the valid ones."""
    return parse_choice(value, list(PRECISION_ORDER), "precision")


def parse_stacks(value: Choice) -> list[str] | None:
    """Software-stack names: eager, compiled, compiled-all."""
    return parse_choice(value, [s.value for s in Stack], "stack")


def parse_engines(value: Choice) -> list[str] | None:
    """Engine names: transformers, llama.cpp."""
    return parse_choice(value, ENGINES, "engine")


def parse_batches(value: Choice, held: Sequence[int] = ()) -> list[int] | None:
    """Batch sizes (``8``, ``"1,8"``); anything but a positive whole number raises, naming ``held`` if given."""
    names = _names(value)
    if not names:
        return None
    bad = [n for n in names if not n.isdigit() or int(n) < 1]
    if bad:
        valid = f"this table holds {', '.join(map(str, held))}" if held else "pass e.g. 1 or 1,8"
        raise UsageError(f"batch size {bad[0]!r} is not a positive whole number: {valid}")
    return sorted({int(n) for n in names})


def _held_batches(frame: pl.DataFrame) -> list[int]:
    if frame.height == 0 or "batch_size" not in frame.columns:
        return []
    return sorted(frame["batch_size"].drop_nulls().unique().to_list())


def match_gpus(value: Choice, known: Iterable[str]) -> list[str] | None:
    """The ``gpu_name`` values that ``value`` names, whole or by a word of the name, case-insensitively."""
    names = _names(value)
    if not names:
        return None
    gpus = sorted(set(known))
    chosen: list[str] = []
    for name in names:
        hits = [g for g in gpus if g.lower() == name or name in g.lower().replace("-", " ").split()]
        if not hits:
            raise UsageError(f"unknown GPU {name!r}: this table holds {', '.join(gpus) or 'no GPU'}")
        chosen += [g for g in hits if g not in chosen]
    return chosen


def _check_batches(frame: pl.DataFrame, batches: list[int] | None) -> None:
    """A batch size the table does not hold is a mistyped one, like an unknown GPU: say which it holds."""
    held = _held_batches(frame)
    if batches is None or not held:
        return
    missing = [b for b in batches if b not in held]
    if missing:
        raise UsageError(f"no rows at batch size {missing[0]}: this table holds {', '.join(map(str, held))}")


def select_frame(
    frame: pl.DataFrame,
    *,
    gpu: Choice = None,
    engine: Choice = None,
    stack: Choice = None,
    batch: Choice = None,
    precision: Choice = None,
    weights: Choice = None,
    tier: str | None = None,
) -> pl.DataFrame:
    """Polars core of :func:`select`: filter only on the columns ``frame`` has (a windows table has no GPU)."""
    conditions: list[pl.Expr] = []
    chosen: list[tuple[str, list[Any] | None]] = [
        ("precision", parse_precisions(precision)),
        (STACK, parse_stacks(stack)),
        ("batch_size", parse_batches(batch, _held_batches(frame))),
        ("weights", parse_choice(weights, WEIGHTS, "weights")),
    ]
    _check_batches(frame, chosen[2][1])
    engines = parse_engines(engine)
    if gpu is not None:
        if "gpu_name" not in frame.columns:
            raise UsageError("this table has no gpu_name column: select on the measurements table")
        chosen.append(("gpu_name", match_gpus(gpu, frame["gpu_name"].unique().to_list())))
    for column, values in chosen:
        if values is None:
            continue
        if column not in frame.columns:
            raise UsageError(f"this table has no {column} column: select on the measurements table")
        conditions.append(pl.col(column).is_in(values))
    if engines is not None:
        if "engine" not in frame.columns and STACK not in frame.columns:  # no stack: not a measurements table
            raise UsageError("this table has no engine column: select on the measurements table")
        conditions.append(engine_is_in(frame, engines))
    tiers = parse_choice(tier, TIERS, "tier")
    if tiers == ["gated"]:
        if "passes_cv_gate" not in frame.columns:
            raise UsageError("this table has no passes_cv_gate column: load a dataset of version 0.2 or later")
        conditions.append(pl.col("passes_cv_gate"))
    return frame.filter(*conditions) if conditions else frame


def select(
    data: Any,
    *,
    gpu: Choice = None,
    engine: Choice = None,
    stack: Choice = None,
    batch: Choice = None,
    precision: Choice = None,
    weights: Choice = None,
    tier: str | None = None,
) -> Any:
    """Rows of a dataset table by GPU, engine, software stack, batch size, precision, weights and tier.

    Each filter is one value, a comma list or a list, case-insensitive (``precision="NF4"``,
    ``precision="nf4,int8-t0"``); None keeps every row. ``tier="gated"`` keeps rows that pass the CV gate,
    ``"all"`` every row (load an ``_all`` config for those). A table from before engines holds transformers' rows
    only (``engine="llama.cpp"`` keeps none of them). An unknown value raises an error that lists the valid
    ones. Keep the FP16/BF16 rows when a change or a crossover follows: pass ``precision`` to
    :func:`~ecocompute.analysis.change.change_table` or :func:`~ecocompute.analysis.crossovers.crossover` instead.
    Returns the kind of frame given (polars, or pandas for pandas and a ``datasets.Dataset`` gives polars).

    Example::

        m = load_dataset("ORG/NAME", "measurements_all", split="train")
        select(m, gpu="h200", engine="transformers", stack="compiled-all", batch=1, precision="nf4,fp16")
    """
    chosen = select_frame(as_polars(data, "measurements"), gpu=gpu, engine=engine, stack=stack, batch=batch,
                          precision=precision, weights=weights, tier=tier)  # fmt: skip
    return like_input(chosen, data)
