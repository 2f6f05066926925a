"""The crossover per GPU x stack x batch x precision x weights, from the dataset and from published means."""

from __future__ import annotations

import math

import pandas as pd
import polars as pl
import pytest
from analysis_frames import ADA, RTX5090, T4, frames, sweep

from ecocompute.analysis import crossover
from ecocompute.schema.errors import UsageError

B = 10**9
NF4 = {494_000_000: 36.0, 1_100_000_000: 28.0, 3_090_000_000: 7.5, 7_620_000_000: -16.5, 14_800_000_000: -33.0}


def _expected_loglinear(left: int, right: int, c_left: float, c_right: float) -> float:
    fraction = c_left / (c_left - c_right)
    return 10 ** (math.log10(left) + fraction * (math.log10(right) - math.log10(left)))


def test_crossover_from_the_dataset_with_a_bootstrap_ci() -> None:
    measurements, windows = frames(sweep(NF4))
    (row,) = crossover(measurements, windows, n_boot=400).iter_rows(named=True)
    expected = _expected_loglinear(3_090_000_000, 7_620_000_000, 7.5, -16.5)
    assert row["status"] == "crossover"
    assert row["crossover_params"] == pytest.approx(expected, rel=1e-9)
    assert row["ci95_low_params"] < row["crossover_params"] < row["ci95_high_params"]
    assert row["ci95_high_params"] / row["ci95_low_params"] < 1.1
    assert row["boot_fraction"] == 1.0
    assert (row["gpu_name"], row["software_stack"], row["batch_size"], row["prompt_tokens"], row["new_tokens"],
            row["precision"], row["weights"], row["baseline"]) == (
        "NVIDIA H200", "eager", 1, 128, 256, "nf4", "random-init", "fp16",
    )  # fmt: skip
    assert (row["n_sizes"], row["seed"], row["n_boot"], row["method"]) == (5, 20261130, 400, "loglinear")
    assert row["message"].startswith("crosses zero at 4.")


def test_the_seed_makes_the_ci_reproducible() -> None:
    measurements, windows = frames(sweep(NF4, spread=0.02))
    first = crossover(measurements, windows, n_boot=300, seed=1)
    again = crossover(measurements, windows, n_boot=300, seed=1)
    other = crossover(measurements, windows, n_boot=300, seed=2)
    assert first.equals(again)
    assert first["ci95_low_params"][0] != other["ci95_low_params"][0]
    assert first["crossover_params"][0] == other["crossover_params"][0]


def test_noisier_windows_give_a_wider_interval() -> None:
    tight = crossover(*frames(sweep(NF4, spread=0.002)), n_boot=300).row(0, named=True)
    loose = crossover(*frames(sweep(NF4, spread=0.05)), n_boot=300).row(0, named=True)
    width = lambda r: r["ci95_high_params"] / r["ci95_low_params"]  # noqa: E731
    assert width(loose) > width(tight)


def test_no_crossover_says_between_which_sizes_and_which_sign() -> None:
    costs = sweep({B: 150.0, 3 * B: 120.0, 7 * B: 100.0}, precision="int8")
    saves = sweep({B: -5.0, 3 * B: -10.0}, prefix="t", stack="compiled")
    rows = {
        r["precision"] + r["software_stack"]: r
        for r in crossover(*frames(costs + saves), n_boot=50).iter_rows(named=True)
    }
    assert rows["int8eager"]["status"] == "no crossover" and rows["int8eager"]["holds"] == "costs more"
    assert rows["int8eager"]["crossover_params"] is None and rows["int8eager"]["ci95_low_params"] is None
    assert rows["int8eager"]["message"] == (
        "no crossover between 1B and 7B: int8 costs more energy per token than the baseline at every size"
    )
    assert rows["nf4compiled"]["holds"] == "saves"
    assert "nf4 saves energy per token at every size" in rows["nf4compiled"]["message"]


def test_a_sign_change_only_the_other_way_is_no_crossover() -> None:
    (row,) = crossover(*frames(sweep({7 * B: -4.0, 9 * B: -1.5, 14 * B: 2.5})), n_boot=0).iter_rows(named=True)
    assert row["status"] == "no crossover" and row["holds"] == "mixed"
    assert "never goes from costing more to saving" in row["message"]


def test_one_size_is_insufficient() -> None:
    (row,) = crossover(*frames(sweep({B: 20.0})), n_boot=10).iter_rows(named=True)
    assert row["status"] == "insufficient data" and "only one model size (1B)" in row["message"]


def test_groups_never_mix_gpu_stack_batch_or_weights() -> None:
    subs = (sweep(NF4) + sweep(NF4, prefix="g", gpu="NVIDIA A100") + sweep(NF4, prefix="k", stack="compiled")
            + sweep(NF4, prefix="b", batch=8) + sweep(NF4, prefix="w", weights="pretrained"))  # fmt: skip
    table = crossover(*frames(subs), n_boot=20)
    assert table.height == 5
    assert table.select("gpu_name", "software_stack", "batch_size", "weights").unique().height == 5


@pytest.mark.parametrize("length", [{"new_tokens": 64}, {"prompt_tokens": 512}])
def test_groups_never_mix_workload_lengths(length: dict[str, int]) -> None:
    """The prefill is spread over the new tokens: another length is another curve, with its own crossing."""
    other = {B: 40.0, 10 * B: -20.0}
    table = crossover(*frames(sweep(NF4) + sweep(other, prefix="l", **length)), n_boot=0)
    assert table.height == 2
    default = table.filter((pl.col("prompt_tokens") == 128) & (pl.col("new_tokens") == 256)).row(0, named=True)
    changed = table.filter(pl.col(next(iter(length))) == next(iter(length.values()))).row(0, named=True)
    assert default["n_sizes"] == 5 and changed["n_sizes"] == 2
    alone = crossover(*frames(sweep(NF4)), n_boot=0)["crossover_params"][0]
    assert default["crossover_params"] == pytest.approx(alone, rel=1e-12)
    assert changed["crossover_params"] == pytest.approx(_expected_loglinear(B, 10 * B, 40.0, -20.0), rel=1e-9)


def test_a_measurements_table_without_prompt_tokens_groups_it_as_unknown() -> None:
    measurements, windows = frames(sweep(NF4) + sweep({B: 10.0, 2 * B: 5.0}, prefix="n", new_tokens=64))
    table = crossover(measurements.drop("prompt_tokens"), windows, n_boot=20)
    assert table.select("prompt_tokens", "new_tokens", "n_sizes").rows() == [(None, 64, 2), (None, 256, 5)]
    expected = _expected_loglinear(3_090_000_000, 7_620_000_000, 7.5, -16.5)
    assert table["crossover_params"][1] == pytest.approx(expected, rel=1e-9)
    assert crossover(measurements.drop("prompt_tokens").to_pandas(), n_boot=0)["prompt_tokens"].isna().all()


def test_sizes_with_several_submissions_are_averaged_and_precision_filters() -> None:
    subs = sweep({B: 10.0, 4 * B: -10.0}) + sweep({B: 30.0, 4 * B: -30.0}, prefix="r")
    subs += sweep({B: 50.0, 4 * B: 40.0}, prefix="i", precision="int8")
    table = crossover(*frames(subs), precision="nf4", n_boot=0)
    assert table["precision"].to_list() == ["nf4"]
    assert table["crossover_params"][0] == pytest.approx(2 * B)
    assert table["n_points"][0] == 4


def test_without_windows_there_is_no_ci_and_it_says_so() -> None:
    measurements, _ = frames(sweep(NF4))
    row = crossover(measurements).row(0, named=True)
    assert row["crossover_params"] is not None and row["ci95_low_params"] is None
    assert "no confidence interval" in row["message"]


def _published(rows: list[tuple[float, float, float]], gpu: str, std: bool = False) -> list[dict[str, object]]:
    return [{"gpu_name": gpu, "params": p * 1e9, "j_per_token_baseline": b, "j_per_token_quantized": q,
             "quantized_std": 0.01 * q if std else None, "n": 10} for p, b, q in rows]  # fmt: skip


def test_published_means_reproduce_the_published_crossovers_with_the_saturating_method() -> None:
    means = pl.DataFrame(_published(T4, "T4") + _published(RTX5090, "RTX 5090") + _published(ADA, "RTX 4090"))
    table = crossover(means, method="saturating", n_boot=0)
    found = dict(zip(table["gpu_name"], table["crossover_params"], strict=True))
    assert found["T4"] / 1e9 == pytest.approx(2.126, abs=0.005)
    assert found["RTX 4090"] / 1e9 == pytest.approx(3.728, abs=0.005)
    assert found["RTX 5090"] / 1e9 == pytest.approx(4.751, abs=0.005)


def test_published_means_with_the_default_loglinear_method() -> None:
    table = crossover(pl.DataFrame(_published(T4, "T4") + _published(RTX5090, "RTX 5090")), n_boot=0)
    found = dict(zip(table["gpu_name"], table["crossover_params"], strict=True))
    t4 = [100 * (q / b - 1) for _, b, q in T4]
    assert found["T4"] == pytest.approx(_expected_loglinear(int(1.5e9), int(3e9), t4[1], t4[2]))
    rtx5090 = [100 * (q / b - 1) for _, b, q in RTX5090]  # costs more up to 3B, saves at 7B
    assert found["RTX 5090"] == pytest.approx(_expected_loglinear(int(3e9), int(7e9), rtx5090[2], rtx5090[3]))


def test_published_means_group_by_workload_length_where_they_give_it() -> None:
    rows = [{**r, "prompt_tokens": 512, "new_tokens": 64} for r in _published(RTX5090, "T4")]
    rows += [{**r, "prompt_tokens": 128, "new_tokens": 256} for r in _published(T4, "T4")]
    table = crossover(pl.DataFrame(rows), n_boot=0)
    assert table.select("gpu_name", "prompt_tokens", "new_tokens").rows() == [("T4", 128, 256), ("T4", 512, 64)]
    alone = crossover(pl.DataFrame(_published(T4, "T4")), n_boot=0)
    assert table["crossover_params"][0] == pytest.approx(alone["crossover_params"][0], rel=1e-12)
    assert alone.select("prompt_tokens", "new_tokens").rows() == [(None, None)]


def test_published_means_with_std_and_n_get_a_parametric_ci() -> None:
    means = pd.DataFrame(_published(RTX5090, "RTX 5090", std=True))
    table = crossover(means, n_boot=500, seed=3)
    assert isinstance(table, pd.DataFrame)
    row = table.iloc[0]
    assert row["ci95_low_params"] < row["crossover_params"] < row["ci95_high_params"]
    assert pd.isna(row["baseline"]) and row["seed"] == 3


def test_bad_arguments() -> None:
    measurements, windows = frames(sweep(NF4))
    with pytest.raises(UsageError, match="method 'spline'"):
        crossover(measurements, windows, method="spline")
    with pytest.raises(UsageError, match="n_boot"):
        crossover(measurements, windows, n_boot=-1)
    bad = pl.DataFrame({"params": [0.0, 1e9], "j_per_token_baseline": [1.0, 1.0], "j_per_token_quantized": [1.0, 1.0]})
    with pytest.raises(UsageError, match="must be positive"):
        crossover(bad)


def test_the_exported_function_is_not_shadowed_by_a_submodule() -> None:
    import importlib

    import ecocompute.analysis as package

    pairs = (
        ("crossover", "crossovers"),
        ("change_vs_baseline", "change"),
        ("change_table", "change"),
        ("j_per_token_table", "j_per_token"),
        ("stack_table", "j_per_token"),
        ("select", "selection"),
    )
    for name, module in pairs:
        importlib.import_module(f"ecocompute.analysis.{module}")
        assert callable(getattr(package, name)), name


def test_a_size_with_many_submissions_draws_its_mean_from_a_normal_with_the_same_spread() -> None:
    """Above RESAMPLE_LIMIT submissions of a size, the CI comes from the normal approximation: close to resampling."""
    from ecocompute.analysis import crossovers as module
    from ecocompute.analysis.crossovers import crossover_frame

    subs = [s for k in range(60) for s in sweep({10**9: 20.0 + k % 5, 7 * 10**9: -10.0 - k % 3}, prefix=f"k{k}-")]
    measurements, windows = frames(subs)
    fast = crossover_frame(measurements, windows, n_boot=400).row(0, named=True)
    limit = module.RESAMPLE_LIMIT
    try:
        module.RESAMPLE_LIMIT = 10**9
        slow = crossover_frame(measurements, windows, n_boot=400).row(0, named=True)
    finally:
        module.RESAMPLE_LIMIT = limit
    assert fast["crossover_params"] == pytest.approx(slow["crossover_params"])
    for end in ("ci95_low_params", "ci95_high_params"):
        assert fast[end] == pytest.approx(slow[end], rel=0.02), end
