"""Constants more than one part of the product reads are defined once and imported from their one home."""

from __future__ import annotations

import inspect
from pathlib import Path

from factories import load_script

from ecocompute.analysis import defaults, j_per_token
from ecocompute.collector.device import sampler, trace
from ecocompute.estimate import build
from ecocompute.publish import cache
from ecocompute.schema import io, tables
from ecocompute.schema.derive import CV_GATE_PCT, J_PER_WH
from ecocompute.schema.models import ENGINE, Precision
from ecocompute.validate import core, raw

ROOT = Path(__file__).resolve().parents[1]


def test_the_cv_gate_has_one_home() -> None:
    assert core.DEFAULT_MAX_CV_PCT is CV_GATE_PCT
    assert build.GATE_CV_PCT is CV_GATE_PCT


def test_first_run_reads_the_gate_from_its_home_even_as_text() -> None:
    first_run = load_script(ROOT / "benchmarks" / "first_run.py")
    assert first_run.gate_pct() == CV_GATE_PCT
    assert f"\nCV_GATE_PCT = {CV_GATE_PCT}\n" in first_run.GATE_SOURCE.read_text(encoding="utf-8")


def test_table_names_units_and_limits_are_single_sourced() -> None:
    assert tables.TABLES == defaults.CONFIGS
    assert cache.TABLES is defaults.CONFIGS
    assert j_per_token.J_PER_WH is J_PER_WH
    assert raw.MAX_FILE_BYTES is io.MAX_FILE_BYTES


def test_every_precision_has_one_place_in_the_display_order() -> None:
    order = defaults.PRECISION_ORDER
    assert sorted(order) == sorted(p.value for p in Precision) and len(set(order)) == len(order)
    assert order[:4] == ("fp16", "bf16", "fp8-wo", "fp8-dyn")  # baselines, then FP8, before bitsandbytes and GGUF
    assert order.index("nf4") < order.index("q8_0")
    assert sorted(["q4_k_m", "fp8-dyn", "nf4", "zz", "fp16"], key=defaults.precision_rank) == [
        "fp16", "fp8-dyn", "nf4", "q4_k_m", "zz"
    ]  # fmt: skip


def test_the_trace_recorder_period_is_the_record_trace_default() -> None:
    from make_synthetic_trace import PERIOD_S

    from ecocompute.collector.cli import record_trace_command

    default = inspect.signature(record_trace_command).parameters["period_s"].default.default
    assert default == trace.DEFAULT_PERIOD_S == PERIOD_S
    assert sampler.DEFAULT_PERIOD_S > trace.DEFAULT_PERIOD_S  # the sampler's period is its own, not the trace's


def test_the_engines_the_analysis_filters_on_are_the_collectors() -> None:
    from ecocompute.collector.model.engines import ENGINES

    assert sorted(defaults.ENGINES) == sorted(ENGINES)
    assert defaults.ENGINES[0] == ENGINE  # the engine of every table before engines comes first
