"""Write tests/data/traces/synthetic-steps.json: a SYNTHETIC trace, shaped like NVML's, for replay tests.

Not a recording: a model of what NVML shows on an H200-like card (idle ~130 W, an fp16 matmul loop
~690 W, idle again), with a counter and power readings that update every 100 ms and a 1 s average.
Real traces recorded with ``ecocompute record-trace`` sit beside it as ``h200-*.json``.

Run: python tests/collector/make_synthetic_trace.py
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable
from pathlib import Path

from ecocompute.collector.device.trace import DEFAULT_PERIOD_S, Phase, Trace, write_trace

OUT = Path(__file__).parents[1] / "data" / "traces" / "synthetic-steps.json"
PERIOD_S = DEFAULT_PERIOD_S  # the recorder's period, as `ecocompute record-trace` reads by default
UPDATE_S = 0.1
PHASES = [Phase("idle", 0.0, 3.0), Phase("matmul-fp16", 3.0, 13.0), Phase("idle-after", 13.0, 20.0)]


def true_power_w(t: float, rng: random.Random) -> float:
    """Idle ~130 W, load ~690 W with a ripple, idle ~131 W after."""
    if 3.0 <= t < 13.0:
        return 690.0 + 8.0 * math.sin(2 * math.pi * t / 0.7) + rng.gauss(0, 4.0)
    return (130.0 if t < 3.0 else 131.0) + rng.gauss(0, 1.0)


def sensor_updates(
    power_w: Callable[[float, random.Random], float], rng: random.Random, energy_j: float, update_s: float
) -> list[tuple[float, float, float]]:
    """(time, counter J, mean power W since the last update) at each sensor update over 20 s, in 1 ms steps."""
    step_s, updates, window = 0.001, [], []
    for k in range(int(20.0 / step_s) + 1):
        p = power_w(k * step_s, rng)
        energy_j += p * step_s
        window.append(p)
        if k % int(update_s / step_s) == 0:
            updates.append((k * step_s, energy_j, sum(window) / len(window)))
            window = []
    return updates


def build() -> Trace:
    """The synthetic trace."""
    rng = random.Random(0)
    updates = sensor_updates(true_power_w, rng, 3_000_000.0, UPDATE_S)
    rows = []
    for i in range(int(20.0 / PERIOD_S)):
        t = i * PERIOD_S + 0.003
        u = max(j for j, up in enumerate(updates) if up[0] <= t)
        avg = updates[max(0, u - 9) : u + 1]
        load = PHASES[1].start_s <= t < PHASES[1].end_s
        rows.append([
            round(t, 6), round(updates[u][1] * 1000), round(updates[u][2] * 1000), round(updates[u][2] * 1000),
            round(sum(x[2] for x in avg) / len(avg) * 1000), 35.0 + (t - 3.0) * 1.5 if load else 35.0,
            1980.0, 100.0 if load else 0.0, "" if load else "gpu_idle",
        ])  # fmt: skip
    gpu = {
        "index": 0, "gpu_name": "NVIDIA H200 (synthetic)", "gpu_arch": "hopper", "compute_capability": "9.0",
        "memory_total_mib": 143771, "power_limit_w": 700.0, "default_power_limit_w": 700.0,
        "driver_version": "synthetic", "vbios_version": "synthetic",
        "gpu_uuid_sha256": hashlib.sha256(b"synthetic").hexdigest(), "persistence_mode": True, "mig_mode": False,
        "clocks_locked": False, "nvml_version": "synthetic",
    }  # fmt: skip
    note = "SYNTHETIC: written by tests/collector/make_synthetic_trace.py; not a recording of any GPU."
    return Trace(rows=rows, gpu=gpu, phases=PHASES, period_s=PERIOD_S, synthetic=True, note=note)


if __name__ == "__main__":
    write_trace(build(), OUT)
