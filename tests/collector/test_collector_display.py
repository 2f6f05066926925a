"""The progress display: a live table on a terminal, one line per window in a log, nothing with --quiet."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from rich.console import Console

from ecocompute.collector.run.display import LineView, LiveView, SilentView, figures, make_view
from ecocompute.collector.run.state import MeasurementState
from ecocompute.schema.models import Precision, Window


def window(index: int, energy_j: float) -> Window:
    return Window(index=index, started_at=datetime(2026, 6, 1, tzinfo=UTC), duration_s=10.0, energy_j=energy_j,
                  energy_j_power_integrated=energy_j, tokens=100, generate_calls=1, temp_c_start=40.0,
                  temp_c_end=41.0, sm_clock_mhz_mean=1980.0, throttle_reasons=[], gpu_util_pct_mean=20.0)  # fmt: skip


def states() -> list[MeasurementState]:
    fp16 = MeasurementState(Precision.FP16, windows=[window(0, 200.0), window(1, 210.0)], warmup=[window(0, 250.0)])
    nf4 = MeasurementState(Precision.NF4, error="OutOfMemoryError: CUDA out of memory", finished=True)
    return [fp16, nf4]


def console(terminal: bool) -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=terminal, width=140), buffer


def test_figures_come_from_derive() -> None:
    f = figures(states()[0], idle_power_w=10.0)
    assert f["J/token"] == "2.0500" and f["tokens/s"] == "10.0" and f["util %"] == "20"
    assert figures(states()[1], 10.0)["J/token"] == ""


def test_live_view_draws_a_table() -> None:
    c, buffer = console(terminal=True)
    view = make_view(c, quiet=False)
    assert isinstance(view, LiveView)
    s = states()
    view.start(s, 30)
    view.note("loading fp16")
    view.update(s[0], s[0].windows[-1], False, 10.0)
    view.stop()
    text = buffer.getvalue()
    assert "2/30 (+1 warm-up)" in text and "2.0500" in text and "failed: OutOfMemoryError" in text


def test_line_view_prints_one_line_per_window() -> None:
    c, buffer = console(terminal=False)
    view = make_view(c, quiet=False)
    assert isinstance(view, LineView)
    s = states()
    view.start(s, 30)
    view.update(s[0], s[0].warmup[0], True, 10.0)
    view.update(s[0], s[0].windows[-1], False, 10.0)
    view.update(s[1], None, False, 10.0)
    lines = buffer.getvalue().splitlines()
    assert [line.split(" [run ")[0] for line in lines] == [
        "fp16 warm-up 1: 10.0 s, 2.5000 J/token",
        "fp16 2/30: 2.1000 J/token; mean 2.0500 ±30.99% CV 3.45%",
        "nf4: failed: OutOfMemoryError: CUDA out of memory",
    ]


def test_quiet_is_silent() -> None:
    c, buffer = console(terminal=True)
    view = make_view(c, quiet=True)
    assert isinstance(view, SilentView)
    fp16, nf4 = states()
    view.start([fp16, nf4], 5)
    view.note("loading fp16")
    view.update(fp16, fp16.windows[-1], False, 10.0)
    view.update(nf4, None, False, 10.0)
    view.stop()
    assert buffer.getvalue() == ""


def test_the_live_view_has_a_bar_with_elapsed_and_time_left_per_precision_and_for_the_run() -> None:
    c, buffer = console(terminal=True)
    view = make_view(c, quiet=False)
    s = states()
    view.start(s, 8, 1)
    view.update(s[0], s[0].windows[-1], False, 10.0)
    view.stop()
    lines = buffer.getvalue().splitlines()
    for name in ("fp16", "nf4", "run"):
        bar = [line for line in lines if line.lstrip("\x1b[2K").startswith(name) and "windows" in line]
        assert bar and "left" in bar[-1], name


def test_the_line_view_says_elapsed_and_time_left_for_the_run() -> None:
    c, buffer = console(terminal=False)
    now = [0.0]
    view = LineView(c, clock=lambda: now[0])
    fp16 = MeasurementState(Precision.FP16)
    view.start([fp16], 4, 1)
    fp16.warmup.append(window(0, 250.0))
    now[0] = 20.0
    view.update(fp16, fp16.warmup[0], True, 10.0)
    fp16.windows.append(window(0, 200.0))
    now[0] = 40.0
    view.update(fp16, fp16.windows[0], False, 10.0)
    lines = buffer.getvalue().splitlines()
    assert lines[0].endswith("[run 1/5 windows, elapsed 0:20, about 1:20 left]")
    assert lines[1].endswith("[run 2/5 windows, elapsed 0:40, about 1:00 left]")
