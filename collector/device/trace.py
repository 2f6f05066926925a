"""Recorded NVML traces: what a GPU's counters said, every 20 ms, while it worked and then idled.

``ecocompute record-trace`` (or ``python -m ecocompute.collector record-trace``, or
``python -m ecocompute.collector.device.trace``) records one on a real GPU:
idle, then an fp16 matmul loop, then idle again. Traces are test data: the replay monitor
(:mod:`ecocompute.collector.device.replay`) plays them back through the engine. NVML's own units are kept
(mJ, mW), as a recording of NVML should; the replay converts them like :mod:`~ecocompute.collector.device.nvml`.
A sensor the GPU lacks (temperature, SM clock, utilisation, throttle reasons) is recorded as null in its column,
and the replay reads it back as None.
"""

from __future__ import annotations

import itertools
import json
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ecocompute.collector.device.gpu import GpuMonitor
from ecocompute.collector.errors import TraceError
from ecocompute.collector.host.clock import Clock
from ecocompute.schema.io import parse_json, write_text_atomic

TRACE_FORMAT = "ecocompute-nvml-trace"
TRACE_VERSION = 1
COLUMNS = (
    "t_s", "energy_mj", "power_mw", "power_instant_mw", "power_average_mw",
    "temp_c", "sm_clock_mhz", "util_pct", "throttle",
)  # fmt: skip
DEFAULT_PERIOD_S = 0.02
IDLE_BEFORE_FRACTION = 0.15
LOAD_FRACTION = 0.5


@dataclass(frozen=True)
class Phase:
    """A named stretch of a trace, in trace seconds."""

    name: str
    start_s: float
    end_s: float


@dataclass
class Trace:
    """A recorded trace: rows of readings (see :data:`COLUMNS`), the GPU's fingerprint and its phases."""

    rows: list[list[Any]]
    gpu: dict[str, Any]
    phases: list[Phase]
    period_s: float
    synthetic: bool = False
    note: str | None = None

    def column(self, name: str) -> list[Any]:
        """All values of one column."""
        i = COLUMNS.index(name)
        return [row[i] for row in self.rows]

    @property
    def start_s(self) -> float:
        """Time of the first row."""
        return float(self.rows[0][0])

    @property
    def end_s(self) -> float:
        """Time of the last row."""
        return float(self.rows[-1][0])

    def to_json(self) -> dict[str, Any]:
        """The JSON document of this trace."""
        return {
            "format": TRACE_FORMAT,
            "version": TRACE_VERSION,
            "synthetic": self.synthetic,
            "note": self.note,
            "period_s": self.period_s,
            "gpu": self.gpu,
            "phases": [{"name": p.name, "start_s": p.start_s, "end_s": p.end_s} for p in self.phases],
            "columns": list(COLUMNS),
            "rows": self.rows,
        }


def _row_text(row: list[Any]) -> str:
    return json.dumps(row, separators=(",", ":"), allow_nan=False)


def dumps_trace(trace: Trace) -> str:
    """Compact JSON with one row per line (small, and readable in a diff)."""
    head = trace.to_json()
    rows = head.pop("rows")
    text = json.dumps(head, indent=1, allow_nan=False)[:-2]
    return text + ',\n "rows": [\n' + ",\n".join(_row_text(r) for r in rows) + "\n ]\n}\n"


def write_trace(trace: Trace, path: Path) -> None:
    """Write a trace atomically."""
    write_text_atomic(path, dumps_trace(trace))


def read_trace_document(path: Path, what: str = "trace") -> Any:
    """The parsed JSON of a trace file (``what`` names it in errors); TraceError if unreadable or not JSON."""
    try:
        return parse_json(path.read_bytes())
    except OSError as exc:
        raise TraceError(f"cannot read {what} {path}: {exc.strerror}") from None
    except Exception as exc:
        raise TraceError(f"{what} {path} is not JSON: {exc}") from None


def load_trace(path: Path) -> Trace:
    """Read and check a trace file; TraceError says what is wrong."""
    doc = read_trace_document(path)
    if not isinstance(doc, dict) or doc.get("format") != TRACE_FORMAT or doc.get("version") != TRACE_VERSION:
        raise TraceError(f"{path} is not an {TRACE_FORMAT} version {TRACE_VERSION} file")
    if doc.get("columns") != list(COLUMNS):
        raise TraceError(f"trace {path} has columns {doc.get('columns')}, expected {list(COLUMNS)}")
    trace = Trace(
        rows=doc["rows"], gpu=doc["gpu"], period_s=float(doc["period_s"]), synthetic=bool(doc.get("synthetic")),
        phases=[Phase(p["name"], float(p["start_s"]), float(p["end_s"])) for p in doc["phases"]], note=doc.get("note"),
    )  # fmt: skip
    _check(trace, path)
    return trace


def _check(trace: Trace, path: Path) -> None:
    if len(trace.rows) < 2:
        raise TraceError(f"trace {path} has fewer than two rows")
    if any(len(row) != len(COLUMNS) for row in trace.rows):
        raise TraceError(f"trace {path} has a row without {len(COLUMNS)} values")
    times, energy = trace.column("t_s"), trace.column("energy_mj")
    if any(b <= a for a, b in itertools.pairwise(times)):
        raise TraceError(f"trace {path}: t_s is not increasing")
    if any(b < a for a, b in itertools.pairwise(energy)):
        raise TraceError(f"trace {path}: energy_mj goes backwards")


# --- recording ----------------------------------------------------------------------------------


def read_row(gpu: GpuMonitor, clock: Clock, t_origin_s: float) -> list[Any]:
    """One row of readings; ``t_s`` is the middle of the energy-counter read."""
    before_s = clock.monotonic()
    energy_j = gpu.energy_j()
    after_s = clock.monotonic()
    fields = gpu.power_w_fields()
    return [
        round((before_s + after_s) / 2 - t_origin_s, 6),
        round(energy_j * 1000),
        round(gpu.power_w() * 1000),
        None if fields.instant_w is None else round(fields.instant_w * 1000),
        None if fields.average_w is None else round(fields.average_w * 1000),
        gpu.temperature_c(),
        gpu.sm_clock_mhz(),
        gpu.utilization_pct(),
        None if (reasons := gpu.throttle_reasons()) is None else "|".join(reasons),
    ]


class _Recorder:
    """Appends a row every tick of the clock's timer; keeps the first error instead of dying silently."""

    def __init__(self, gpu: GpuMonitor, clock: Clock, t_origin_s: float) -> None:
        self.gpu, self.clock, self.t_origin_s = gpu, clock, t_origin_s
        self.rows: list[list[Any]] = []
        self.error: BaseException | None = None
        self._lock = threading.Lock()

    def tick(self) -> None:
        if self.error is not None:
            return
        try:
            row = read_row(self.gpu, self.clock, self.t_origin_s)
        except Exception as exc:
            self.error = exc
            return
        with self._lock:
            self.rows.append(row)


def record_trace(
    gpu: GpuMonitor,
    clock: Clock,
    seconds: float,
    load: Callable[[float], object],
    *,
    load_name: str = "matmul-fp16",
    period_s: float = DEFAULT_PERIOD_S,
) -> Trace:
    """Record ``seconds`` of readings: 15% idle, 50% under ``load(duration_s)``, the rest idle."""
    t_origin_s = clock.monotonic()
    recorder = _Recorder(gpu, clock, t_origin_s)
    timer = clock.call_every(period_s, recorder.tick)
    phases = []
    try:
        for name, duration_s in _plan(seconds, load_name):
            start_s = clock.monotonic() - t_origin_s
            if name == load_name:
                load(duration_s)
            else:
                clock.sleep(duration_s)
            phases.append(Phase(name, round(start_s, 6), round(clock.monotonic() - t_origin_s, 6)))
    finally:
        timer.cancel()
    if recorder.error is not None:
        raise recorder.error
    note = f"{load_name} between the idle phases; recorded by ecocompute record-trace"
    return Trace(rows=recorder.rows, gpu=gpu.fingerprint().to_dict(), phases=phases, period_s=period_s, note=note)


def _plan(seconds: float, load_name: str) -> list[tuple[str, float]]:
    before = seconds * IDLE_BEFORE_FRACTION
    during = seconds * LOAD_FRACTION
    return [("idle", before), (load_name, during), ("idle-after", seconds - before - during)]


def counter_vs_integral_pct(trace: Trace, start_s: float, end_s: float, column: str = "power_mw") -> float | None:
    """How far the trapezoid integral of ``column`` is from the counter over ``[start_s, end_s]``, in %."""
    from ecocompute.collector.device.sampler import integrate_energy_j

    rows = [r for r in trace.rows if start_s <= r[0] <= end_s and r[COLUMNS.index(column)] is not None]
    if len(rows) < 2:
        return None
    points = [(float(r[0]), r[COLUMNS.index(column)] / 1000.0) for r in rows]
    counter_j = (rows[-1][1] - rows[0][1]) / 1000.0
    if counter_j <= 0:
        return None
    integral_j = integrate_energy_j(points, points[0][0], points[-1][0])
    return 100.0 * (integral_j - counter_j) / counter_j if math.isfinite(integral_j) else None


if __name__ == "__main__":  # python -m ecocompute.collector.device.trace --seconds 20 --out trace.json
    import sys

    import typer

    from ecocompute.collector.cli import record_trace_command
    from ecocompute.runner import main_for

    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    app.command()(record_trace_command)
    sys.exit(main_for(app, prog_name="python -m ecocompute.collector.device.trace"))
