"""Change against the same submission's baseline, its delta-method CI, and the kinds of frame accepted."""

from __future__ import annotations

import math

import datasets
import pandas as pd
import polars as pl
import pytest
from analysis_frames import Sub, frames

from ecocompute.analysis import change_vs_baseline, j_per_token_table, stack_table
from ecocompute.analysis.change import ratio_ci95
from ecocompute.analysis.frames import with_null_columns
from ecocompute.schema.derive import t_quantile_975
from ecocompute.schema.errors import UsageError

SUBS = [
    Sub("a", 10**9, {"fp16": [2.0, 2.02, 1.98, 2.0], "bf16": [2.1, 2.1, 2.1, 2.1], "nf4": [3.0, 3.03, 2.97, 3.0]}),
    Sub("b", 10**9, {"bf16": [4.0, 4.04, 3.96, 4.0], "int8": [8.0, 8.1, 7.9, 8.0]}),
    Sub("c", 10**9, {"nf4": [1.0, 1.0, 1.0]}),
    Sub("d", 10**9, {"fp16": [2.0, 2.0]}, errors={"nf4": "CUDA out of memory"}),
]


def test_baseline_is_the_same_submissions_fp16_else_bf16() -> None:
    measurements, _ = frames(SUBS)
    changes = change_vs_baseline(measurements)
    rows = {(r["submission_id"], r["precision"]): r for r in changes.iter_rows(named=True)}
    assert set(rows) == {("a", "bf16"), ("a", "nf4"), ("b", "int8")}
    assert rows[("a", "nf4")]["baseline_precision"] == "fp16"
    assert rows[("a", "nf4")]["change_pct"] == pytest.approx(50.0)
    assert rows[("a", "bf16")]["change_pct"] == pytest.approx(5.0)
    assert rows[("b", "int8")]["baseline_precision"] == "bf16"
    assert rows[("b", "int8")]["change_pct"] == pytest.approx(100.0)


def test_delta_method_interval() -> None:
    low, high = ratio_ci95(3.0, 0.03, 4, 2.0, 0.02, 4)
    se = math.sqrt(2 * (0.01**2) / 4)
    dof = (2 * 0.01**2 / 4) ** 2 / (2 * (0.01**2 / 4) ** 2 / 3)
    half = t_quantile_975(math.floor(dof)) * se
    assert low == pytest.approx(100 * (1.5 * math.exp(-half) - 1))
    assert high == pytest.approx(100 * (1.5 * math.exp(half) - 1))
    assert low < 50 < high
    assert ratio_ci95(3.0, 0.0, 4, 2.0, 0.0, 4) == (pytest.approx(50.0), pytest.approx(50.0))
    assert ratio_ci95(3.0, 0.1, 1, 2.0, 0.1, 4) == (None, None)


def test_the_interval_narrows_with_more_windows() -> None:
    narrow = ratio_ci95(3.0, 0.03, 40, 2.0, 0.02, 40)
    wide = ratio_ci95(3.0, 0.03, 4, 2.0, 0.02, 4)
    assert narrow[0] is not None and wide[0] is not None and narrow[1] is not None and wide[1] is not None
    assert narrow[1] - narrow[0] < wide[1] - wide[0]


def test_pandas_in_pandas_out_and_datasets_accepted() -> None:
    measurements, windows = frames(SUBS)
    from_pandas = change_vs_baseline(measurements.to_pandas())
    assert isinstance(from_pandas, pd.DataFrame)
    dataset = datasets.Dataset.from_pandas(measurements.to_pandas())
    from_dataset = change_vs_baseline(dataset, datasets.Dataset.from_pandas(windows.to_pandas()))
    assert isinstance(from_dataset, pl.DataFrame)
    assert from_dataset["change_pct"].to_list() == pytest.approx(from_pandas["change_pct"].to_list())


def test_wrong_inputs_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="pass a polars or pandas DataFrame"):
        change_vs_baseline([1, 2, 3])
    with pytest.raises(UsageError, match="lacks the column"):
        change_vs_baseline(pl.DataFrame({"submission_id": ["x"]}))


def test_jpt_table_pools_submissions_of_one_cell() -> None:
    subs = [Sub("x1", 10**9, {"fp16": [2.0, 2.0]}), Sub("x2", 10**9, {"fp16": [4.0, 4.0]}),
            Sub("x3", 10**9, {"fp16": [9.0, 9.0]}, stack="compiled")]  # fmt: skip
    table = j_per_token_table(frames(subs)[0])
    eager = table.filter(pl.col("software_stack") == "eager").row(0, named=True)
    assert eager["n_submissions"] == 2 and eager["j_per_token"] == pytest.approx(3.0)
    assert (eager["j_per_token_min"], eager["j_per_token_max"]) == (2.0, 4.0)
    assert table.filter(pl.col("software_stack") == "compiled")["j_per_token"].to_list() == [9.0]


def test_stack_table_compares_the_stacks_per_model_and_precision() -> None:
    subs = [Sub("e1", 10**9, {"fp16": [2.0, 2.0], "nf4": [3.0, 3.0]}), Sub("e2", 10**9, {"fp16": [4.0, 4.0]}),
            Sub("c1", 10**9, {"fp16": [0.75, 0.75], "nf4": [6.0, 6.0]}, stack="compiled"),
            Sub("c2", 7 * 10**9, {"fp16": [1.0, 1.0]}, stack="compiled"),  # no eager run of this size: no row
            Sub("c3", 10**9, {"fp16": [1.0, 1.0]}, stack="compiled", batch=8)]  # nor of this batch  # fmt: skip
    table = stack_table(frames(subs)[0])
    assert table.select("precision", "eager_j_per_token", "compiled_j_per_token", "change_pct").rows() == [
        ("fp16", 3.0, 0.75, pytest.approx(-75.0)),  # eager: the mean of e1 and e2
        ("nf4", 3.0, 6.0, pytest.approx(100.0)),
    ]
    assert stack_table(frames(subs[:2])[0]).height == 0  # one stack only


def test_the_tables_say_where_the_compiled_stack_did_not_compile() -> None:
    """transformers declines bitsandbytes models: their compiled side is the static cache alone, and says so."""
    subs = [
        Sub("e1", 10**9, {"fp16": [2.0, 2.0], "nf4": [3.0, 3.0]}),
        Sub(
            "c1",
            10**9,
            {"fp16": [0.7, 0.7], "nf4": [5.0, 5.0]},
            stack="compiled",
            compiled={"fp16": True, "nf4": False},
        ),
        Sub("c2", 10**9, {"fp16": [0.8, 0.8], "nf4": [4.0, 4.0]}, stack="compiled", compiled={"fp16": True}),
    ]
    measurements = frames(subs)[0]
    counts = ("software_stack", "precision", "n_submissions", "n_compiled", "n_not_compiled")
    assert j_per_token_table(measurements).select(counts).rows() == [
        ("compiled", "fp16", 2, 2, 0), ("compiled", "nf4", 2, 0, 1),  # c2's nf4: not recorded
        ("eager", "fp16", 1, 0, 0), ("eager", "nf4", 1, 0, 0),
    ]  # fmt: skip
    sides = ("precision", "compiled_n_submissions", "compiled_n_compiled", "compiled_n_not_compiled")
    assert stack_table(measurements).select(sides).rows() == [("fp16", 2, 2, 0), ("nf4", 2, 0, 1)]
    older = stack_table(measurements.drop("compiled"))  # a table from before the column: nothing recorded
    assert older.select(sides).rows() == [("fp16", 2, 0, 0), ("nf4", 2, 0, 0)]


def test_stack_table_pairs_eager_with_each_compiled_stack_apart() -> None:
    """compiled-all compiles the bitsandbytes models that compiled leaves alone: two pairings, never pooled."""
    subs = [Sub("e1", 10**9, {"fp16": [2.0, 2.0], "nf4": [3.0, 3.0]}),
            Sub("c1", 10**9, {"fp16": [0.7, 0.7], "nf4": [5.0, 5.0]}, stack="compiled",
                compiled={"fp16": True, "nf4": False}),
            Sub("a1", 10**9, {"fp16": [0.7, 0.7], "nf4": [0.6, 0.6]}, stack="compiled-all",
                compiled={"fp16": True, "nf4": True})]  # fmt: skip
    table = stack_table(frames(subs)[0])
    assert table.select("precision", "compiled_stack", "compiled_j_per_token", "compiled_n_compiled").rows() == [
        ("fp16", "compiled", 0.7, 1), ("nf4", "compiled", 5.0, 0),
        ("fp16", "compiled-all", 0.7, 1), ("nf4", "compiled-all", 0.6, 1),
    ]  # fmt: skip
    assert table.filter(pl.col("precision") == "nf4")["change_pct"].to_list() == pytest.approx([66.667, -80.0], 1e-4)


def test_jpt_table_never_pools_workload_lengths() -> None:
    """The prefill is spread over the generated tokens, so the same model at another length is another row."""
    subs = [Sub("l1", 10**9, {"fp16": [2.0, 2.0]}), Sub("l2", 10**9, {"fp16": [4.0, 4.0]}, new_tokens=64),
            Sub("l3", 10**9, {"fp16": [3.0, 3.0]}, prompt_tokens=512)]  # fmt: skip
    table = j_per_token_table(frames(subs)[0])
    assert table.height == 3
    assert table.select("prompt_tokens", "new_tokens", "j_per_token", "n_submissions").rows() == [
        (128, 64, 4.0, 1),
        (128, 256, 2.0, 1),
        (512, 256, 3.0, 1),
    ]


def test_stack_table_pairs_the_stacks_only_at_one_workload_length() -> None:
    subs = [Sub("e1", 10**9, {"fp16": [2.0, 2.0]}),
            Sub("e2", 10**9, {"fp16": [8.0, 8.0]}, prompt_tokens=512, new_tokens=64),  # compiled never ran this
            Sub("c1", 10**9, {"fp16": [1.0, 1.0]}, stack="compiled")]  # fmt: skip
    table = stack_table(frames(subs)[0])
    assert table.select("prompt_tokens", "new_tokens", "eager_j_per_token", "compiled_j_per_token").rows() == [
        (128, 256, 2.0, 1.0)
    ]


def test_a_measurements_table_without_prompt_tokens_is_one_unknown_prompt_length() -> None:
    """Older versions of the table lack prompt_tokens: null, grouped together, still apart by new_tokens."""
    subs = [Sub("o1", 10**9, {"fp16": [2.0, 2.0], "nf4": [3.0, 3.0]}), Sub("o2", 10**9, {"fp16": [4.0, 4.0]}),
            Sub("o3", 10**9, {"fp16": [1.0, 1.0]}, stack="compiled"),
            Sub("o4", 10**9, {"fp16": [6.0, 6.0]}, new_tokens=64)]  # fmt: skip
    older = frames(subs)[0].drop("prompt_tokens")
    columns = ("software_stack", "prompt_tokens", "new_tokens", "precision", "j_per_token", "n_submissions")
    assert j_per_token_table(older).select(columns).rows() == [
        ("compiled", None, 256, "fp16", 1.0, 1),
        ("eager", None, 64, "fp16", 6.0, 1),
        ("eager", None, 256, "fp16", 3.0, 2),
        ("eager", None, 256, "nf4", 3.0, 1),
    ]
    assert j_per_token_table(older.to_pandas())["prompt_tokens"].isna().all()
    both = stack_table(older)
    assert both.select("prompt_tokens", "new_tokens", "eager_j_per_token", "compiled_j_per_token").rows() == [
        (None, 256, 3.0, 1.0)
    ]
    changes = change_vs_baseline(older)
    assert changes.select("prompt_tokens", "new_tokens", "change_pct").rows() == [(None, 256, pytest.approx(50.0))]


def test_missing_and_all_null_columns_get_their_type_and_the_others_are_left_alone() -> None:
    frame = pl.DataFrame({"a": [None, None], "b": [1.0, None], "c": ["x", "y"]}, schema_overrides={"a": pl.String})
    typed = with_null_columns(frame, {"a": pl.Float64, "b": pl.Float64, "c": pl.Float64, "d": pl.Boolean})
    assert typed.schema == pl.Schema({"a": pl.Float64, "b": pl.Float64, "c": pl.String, "d": pl.Boolean})
    assert typed["b"].to_list() == [1.0, None] and typed["c"].to_list() == ["x", "y"]
    assert with_null_columns(frame.clear(), {"a": pl.Float64}).schema["a"] == pl.Float64
    assert with_null_columns(frame, {"b": pl.Float64}) is frame
