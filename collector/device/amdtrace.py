"""Recorded amdsmi traces: what an AMD GPU's counters said, in amdsmi's own units, for replay tests.

An AMD trace is a small JSON document like the NVML traces of :mod:`~ecocompute.collector.device.trace`, with
amdsmi's units and names kept (energy in uJ = accumulator x resolution, power in W, the GFX clock and
activity, the violation flags). :func:`load_amd_trace` converts it once into a :class:`~.trace.Trace`, so
:class:`~ecocompute.collector.device.replay.ReplayGpu` plays it through the engine exactly like an NVML one. A
reading amdsmi reported as N/A is ``null`` in the file and stays missing (``None``), never 0.

Record one on an AMD GPU with ``record_trace(AmdSmiGpu(...), ...)`` and :func:`amd_trace_from` (the
recorder reads the GPU through the seam, so it is the same code as on NVIDIA).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ecocompute.collector.device.trace import COLUMNS, Phase, Trace, read_trace_document
from ecocompute.collector.device.trace import _check as check_trace
from ecocompute.collector.errors import TraceError
from ecocompute.schema.io import write_text_atomic

AMD_TRACE_FORMAT = "ecocompute-amdsmi-trace"
AMD_TRACE_VERSION = 1
AMD_COLUMNS = (
    "t_s", "energy_uj", "socket_power_w", "average_socket_power_w", "hotspot_c", "gfx_clock_mhz",
    "gfx_activity_pct", "violations",
)  # fmt: skip


def _scaled(value: Any, factor: float) -> int | None:
    return None if value is None else round(value * factor)


def trace_from_amd(doc: dict[str, Any], origin: str = "<amd trace>") -> Trace:
    """The NVML-unit :class:`Trace` of an AMD trace document (uJ -> mJ, W -> mW); TraceError says what is wrong."""
    if doc.get("format") != AMD_TRACE_FORMAT or doc.get("version") != AMD_TRACE_VERSION:
        raise TraceError(f"{origin} is not an {AMD_TRACE_FORMAT} version {AMD_TRACE_VERSION} file")
    if doc.get("columns") != list(AMD_COLUMNS):
        raise TraceError(f"AMD trace {origin} has columns {doc.get('columns')}, expected {list(AMD_COLUMNS)}")
    rows = []
    for raw in doc["rows"]:
        if len(raw) != len(AMD_COLUMNS):
            raise TraceError(f"AMD trace {origin} has a row without {len(AMD_COLUMNS)} values")
        t, energy_uj, power, average, temp, clock, activity, violations = raw
        if energy_uj is None or power is None:
            raise TraceError(f"AMD trace {origin}: the energy counter and socket power must be read at every row")
        rows.append([
            t, round(energy_uj / 1000), _scaled(power, 1000), _scaled(power, 1000), _scaled(average, 1000),
            temp, clock, activity, violations,  # null (not reported) stays None, never "none seen"
        ])  # fmt: skip
    trace = Trace(
        rows=rows, gpu={**doc["gpu"], "vendor": "amd"}, period_s=float(doc["period_s"]),
        synthetic=bool(doc.get("synthetic")),
        phases=[Phase(p["name"], float(p["start_s"]), float(p["end_s"])) for p in doc["phases"]], note=doc.get("note"),
    )  # fmt: skip
    check_trace(trace, Path(origin))  # the NVML traces' checks: two rows at least, time rising, counter not falling
    return trace


def load_amd_trace(path: Path) -> Trace:
    """Read an AMD trace file as a replayable :class:`Trace`."""
    doc = read_trace_document(path, "AMD trace")
    if not isinstance(doc, dict):
        raise TraceError(f"{path} is not an {AMD_TRACE_FORMAT} file")
    return trace_from_amd(doc, str(path))


def amd_trace_from(trace: Trace, extra_gpu: dict[str, Any] | None = None) -> dict[str, Any]:
    """The AMD trace document of a trace recorded through the seam from an AMD GPU (mJ -> uJ, mW -> W)."""
    i = {name: k for k, name in enumerate(COLUMNS)}

    def watts(value: Any) -> float | None:
        return None if value is None else value / 1000

    rows = [[
        r[i["t_s"]], r[i["energy_mj"]] * 1000, watts(r[i["power_instant_mw"]] if r[i["power_instant_mw"]] is not None
        else r[i["power_mw"]]), watts(r[i["power_average_mw"]]), r[i["temp_c"]], r[i["sm_clock_mhz"]],
        r[i["util_pct"]], r[i["throttle"]],
    ] for r in trace.rows]  # fmt: skip
    return {
        "format": AMD_TRACE_FORMAT, "version": AMD_TRACE_VERSION, "synthetic": trace.synthetic, "note": trace.note,
        "period_s": trace.period_s, "gpu": {**trace.gpu, **(extra_gpu or {})},
        "phases": [{"name": p.name, "start_s": p.start_s, "end_s": p.end_s} for p in trace.phases],
        "columns": list(AMD_COLUMNS), "rows": rows,
    }  # fmt: skip


def dumps_amd_trace(doc: dict[str, Any]) -> str:
    """Compact JSON with one row per line."""
    head = {k: v for k, v in doc.items() if k != "rows"}
    text = json.dumps(head, indent=1, allow_nan=False)[:-2]
    rows = ",\n".join(json.dumps(r, separators=(",", ":"), allow_nan=False) for r in doc["rows"])
    return text + ',\n "rows": [\n' + rows + "\n ]\n}\n"


def write_amd_trace(doc: dict[str, Any], path: Path) -> None:
    """Write an AMD trace document atomically."""
    write_text_atomic(path, dumps_amd_trace(doc))
