"""Write tests/data/traces-amd/mi300x-synthetic.json: a SYNTHETIC amdsmi trace, for the AMD replay tests.

Not a recording: a model of what amdsmi shows on an MI300X-like part (idle ~140 W, an fp16 matmul loop
~650 W, idle again). The energy accumulator counts 15.3 uJ ticks; socket power is an integer number of W
that updates every 10 ms; ``average_socket_power`` is N/A (null), as on Instinct parts; the edge
temperature does not exist, so the hotspot one is kept. Real traces recorded on an AMD GPU go beside it.

Run: python tests/collector/make_amd_trace.py
"""

from __future__ import annotations

import hashlib
import math
import random
from pathlib import Path

from make_synthetic_trace import PERIOD_S, sensor_updates

from ecocompute.collector.device.amdtrace import AMD_COLUMNS, AMD_TRACE_FORMAT, AMD_TRACE_VERSION, write_amd_trace

OUT = Path(__file__).parents[1] / "data" / "traces-amd" / "mi300x-synthetic.json"
UPDATE_S = 0.01
RESOLUTION_UJ = 15.3
PHASES = [("idle", 0.0, 3.0), ("matmul-fp16", 3.0, 13.0), ("idle-after", 13.0, 20.0)]


def true_power_w(t: float, rng: random.Random) -> float:
    """Idle ~140 W, load ~650 W with a ripple, idle ~142 W after."""
    if 3.0 <= t < 13.0:
        return 650.0 + 10.0 * math.sin(2 * math.pi * t / 0.5) + rng.gauss(0, 5.0)
    return (140.0 if t < 3.0 else 142.0) + rng.gauss(0, 1.0)


def build() -> dict[str, object]:
    """The synthetic trace document."""
    rng = random.Random(0)
    updates = sensor_updates(true_power_w, rng, 40_000.0, UPDATE_S)
    rows = []
    for i in range(int(20.0 / PERIOD_S)):
        t = i * PERIOD_S + 0.002
        u = max(j for j, up in enumerate(updates) if up[0] <= t)
        load = PHASES[1][1] <= t < PHASES[1][2]
        ticks = math.floor(updates[u][1] * 1e6 / RESOLUTION_UJ)
        rows.append([
            round(t, 6), round(ticks * RESOLUTION_UJ, 1), round(updates[u][2]), None,
            45.0 + (t - 3.0) * 1.2 if load else 45.0, 2100.0 if load else 140.0, 100.0 if load else 0.0, "",
        ])  # fmt: skip
    gpu = {
        "index": 0, "gpu_name": "AMD Instinct MI300X (synthetic)", "gpu_arch": "cdna3", "compute_capability": "9.4",
        "memory_total_mib": 196608, "power_limit_w": 750.0, "default_power_limit_w": 750.0,
        "driver_version": "synthetic", "vbios_version": "synthetic",
        "gpu_uuid_sha256": hashlib.sha256(b"synthetic-amd").hexdigest(), "persistence_mode": True, "mig_mode": False,
        "clocks_locked": False, "nvml_version": "amdsmi synthetic", "gfx_target": "gfx942",
    }  # fmt: skip
    return {
        "format": AMD_TRACE_FORMAT, "version": AMD_TRACE_VERSION, "synthetic": True,
        "note": "SYNTHETIC: written by tests/collector/make_amd_trace.py; not a recording of any GPU.",
        "period_s": PERIOD_S, "gpu": gpu,
        "phases": [{"name": n, "start_s": a, "end_s": b} for n, a, b in PHASES],
        "columns": list(AMD_COLUMNS), "rows": rows,
    }  # fmt: skip


if __name__ == "__main__":
    write_amd_trace(build(), OUT)
