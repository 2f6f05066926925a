"""A researcher's mistyped argument gets one clear error; case and comma lists behave as in ``collect``."""

from __future__ import annotations

import pytest
from analysis_frames import frames, sweep

from ecocompute.analysis import crossover, select
from ecocompute.schema.errors import UsageError

NF4 = {int(p * 1e9): c for p, c in ((0.5, 30.0), (1.5, 10.0), (3.0, -5.0), (7.0, -15.0))}
INT8 = {int(p * 1e9): c for p, c in ((0.5, 60.0), (1.5, 40.0), (3.0, 20.0), (7.0, 5.0))}


def _tables():  # type: ignore[no-untyped-def]
    subs = sweep(NF4, precision="nf4") + sweep(INT8, precision="int8-t0", prefix="t")
    return frames(subs)


@pytest.mark.parametrize("spelling", ["NF4", " nf4 ", ["Nf4"]])
def test_crossover_reads_a_precision_in_any_case(spelling: object) -> None:
    m, w = _tables()
    plain = crossover(m, w, precision="nf4", n_boot=50)
    spelt = crossover(m, w, precision=spelling, n_boot=50)  # type: ignore[arg-type]
    assert plain.height == 1 and spelt.equals(plain)
    assert plain["status"][0] == "crossover"


def test_crossover_reads_a_comma_list_and_refuses_an_unknown_precision() -> None:
    m, w = _tables()
    both = crossover(m, w, precision="nf4,INT8-T0", n_boot=50)
    assert sorted(both["precision"].to_list()) == ["int8-t0", "nf4"]
    with pytest.raises(UsageError, match=r"unknown precision 'nf5': choose from fp16, .*nf4"):
        crossover(m, w, precision="nf5")


def test_select_refuses_a_batch_size_the_table_does_not_hold() -> None:
    m, _ = _tables()
    assert select(m, batch=1).height == m.height
    with pytest.raises(UsageError, match=r"no rows at batch size 3: this table holds 1$"):
        select(m, batch="1,3")
    assert select(m.clear(), batch=3).height == 0  # an empty table has nothing to hold


@pytest.mark.parametrize("batch", ["one", "0", "1,x"])
def test_a_batch_size_that_is_no_number_names_the_ones_the_table_holds(batch: str) -> None:
    m, _ = _tables()
    with pytest.raises(UsageError, match=r"is not a positive whole number: this table holds 1$"):
        select(m, batch=batch)
