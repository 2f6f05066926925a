"""The validator's rules for windows measured without an energy counter (validate/counterless.py), each failing once.

The files are synthetic (``make_bad.counterless``: constant power, read every 0.1 s); tests/data/bad holds one
signed case per code as well.
"""

from __future__ import annotations

from typing import Any

import pytest
from factories import submission_document
from make_bad import counterless as _counterless

from ecocompute.schema.io import submission_from_document
from ecocompute.schema.models import Payload
from ecocompute.validate.counterless import (
    MAX_EDGE_GAP_S,
    MAX_GAP_S,
    check_counterless,
    trace_integral_j,
)


def _payload(doc: dict[str, Any]) -> Payload:
    return submission_from_document(doc).payload


def _codes(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f.code, f.path) for f in check_counterless(_payload(doc))]


def _window(doc: dict[str, Any], m: int = 0, w: int = 0) -> dict[str, Any]:
    window: dict[str, Any] = doc["payload"]["measurements"][m]["windows"][w]
    return window


W0 = "payload.measurements[0].windows[0]"


@pytest.fixture
def doc() -> dict[str, Any]:
    return _counterless(submission_document(5))


def test_a_well_sampled_counterless_file_passes(doc: dict[str, Any]) -> None:
    assert _codes(doc) == []
    assert _codes(_counterless(submission_document(5), keep_trace=False)) == []  # the recorded figures then


def test_files_with_a_counter_are_left_alone() -> None:
    doc = submission_document(6)
    _window(doc)["power_samples"] = 1  # would fail E-SAMPLING, were this file counterless
    assert _codes(doc) == []


def test_too_few_readings_per_second_fail(doc: dict[str, Any]) -> None:
    w = _window(doc)
    w["power_trace"] = w["power_trace"][::20][:-1] + w["power_trace"][-1:]  # one every 2 s
    codes = _codes(doc)
    assert ("E-SAMPLING", f"{W0}.power_trace") in codes


def test_a_slow_method_rate_fails(doc: dict[str, Any]) -> None:
    doc["payload"]["method"]["power_sampling_hz"] = 2.0
    assert _codes(doc) == [("E-SAMPLING", "payload.method.power_sampling_hz")]


def test_recorded_sample_count_is_judged_without_a_trace() -> None:
    doc = _counterless(submission_document(7), keep_trace=False)
    _window(doc)["power_samples"] = 20
    assert _codes(doc) == [("E-SAMPLING", f"{W0}.power_samples")]


def test_a_late_first_reading_fails_coverage(doc: dict[str, Any]) -> None:
    w = _window(doc)
    w["power_trace"] = [p for p in w["power_trace"] if p[0] > MAX_EDGE_GAP_S + 0.05]
    assert ("E-COVERAGE", f"{W0}.power_trace") in _codes(doc)


def test_a_gap_in_the_readings_fails_coverage(doc: dict[str, Any]) -> None:
    w = _window(doc)
    w["power_trace"] = [p for p in w["power_trace"] if not 3.0 < p[0] < 3.0 + MAX_GAP_S + 0.15]
    found = check_counterless(_payload(doc))
    assert [(f.code, f.path) for f in found] == [("E-COVERAGE", f"{W0}.power_trace")]
    assert "without a power reading" in found[0].message


def test_recorded_coverage_is_judged_without_a_trace() -> None:
    doc = _counterless(submission_document(8), keep_trace=False)
    _window(doc)["power_last_sample_gap_s"] = 0.4
    assert _codes(doc) == [("E-COVERAGE", f"{W0}.power_max_gap_s")]


def test_energy_that_is_not_the_integral_of_the_trace_fails(doc: dict[str, Any]) -> None:
    w = _window(doc)
    w["energy_j"] = w["energy_j_power_integrated"] = round(w["energy_j"] * 1.03, 6)
    assert _codes(doc) == [("E-INTEGRAL-RECOMPUTED", f"{W0}.energy_j")]


def test_energy_j_must_equal_the_recorded_integral(doc: dict[str, Any]) -> None:
    w = _window(doc)
    w["energy_j_power_integrated"] = round(w["energy_j"] * 0.99, 6)
    assert ("E-INTEGRAL-RECOMPUTED", f"{W0}.energy_j") in _codes(doc)


def test_a_window_without_readings_or_their_record_fails() -> None:
    doc = _counterless(submission_document(9), keep_trace=False)
    del _window(doc)["power_max_gap_s"]
    assert _codes(doc) == [("E-COUNTERLESS-RECORD", W0)]


def test_the_trace_integral_holds_the_end_readings_to_the_edges() -> None:
    assert trace_integral_j([(0.5, 100.0), (1.5, 200.0)], 2.0) == pytest.approx(50 + 150 + 100)
    with pytest.raises(ValueError, match="no power readings"):
        trace_integral_j([], 1.0)
