"""Reference data the physics checks read, shipped as CSV package data.

``data/gpus.csv``: per GPU model the power-limit range, memory range, memory bandwidth, idle floor and
maximum SM clock, each row with its source. A row applies to a GPU whose slug equals the row's ``match``
or starts with ``match`` followed by a hyphen ("nvidia-h100-80gb-hbm3" matches "nvidia-h100"); the longest
match wins. A GPU no row matches is an error (E-GPU-UNKNOWN): its bounds are added to the table in the same
pull request. ``data/architectures.csv``: the parameter count of each architecture the collector knows.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from ecocompute.validate.paths import gpu_slug


@dataclass(frozen=True)
class GpuBounds:
    """What a plausible measurement on one GPU model looks like (power in W, memory in MiB, bandwidth in GB/s)."""

    match: str
    name: str
    power_limit_min_w: float
    power_limit_max_w: float
    memory_mib_min: int
    memory_mib_max: int
    idle_floor_w: float
    sm_clock_max_mhz: float
    memory_bandwidth_gbps: float = 10_000.0

    @property
    def power_floor_w(self) -> float:
        """The lowest plausible average power of a window: half the GPU's idle floor."""
        return 0.5 * self.idle_floor_w


# Only for submissions marked ``example: true`` (never published): a GPU the table does not know.
GENERIC = GpuBounds("", "unknown GPU", 10.0, 1500.0, 1, 10**9, 40.0, 3500.0, 10_000.0)


def _row(record: dict[str, str]) -> GpuBounds:
    return GpuBounds(
        match=record["match"],
        name=record["name"],
        power_limit_min_w=float(record["power_limit_min_w"]),
        power_limit_max_w=float(record["power_limit_max_w"]),
        memory_mib_min=int(record["memory_mib_min"]),
        memory_mib_max=int(record["memory_mib_max"]),
        idle_floor_w=float(record["idle_floor_w"]),
        sm_clock_max_mhz=float(record["sm_clock_max_mhz"]),
        memory_bandwidth_gbps=float(record["memory_bandwidth_gbps"]),
    )


def _csv(name: str) -> list[dict[str, str]]:
    text = resources.files("ecocompute.validate").joinpath(f"data/{name}").read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


@lru_cache(maxsize=1)
def gpu_table() -> tuple[GpuBounds, ...]:
    """Every row of the shipped GPU table."""
    return tuple(_row(record) for record in _csv("gpus.csv"))


def bounds_for(gpu_name: str) -> GpuBounds | None:
    """The bounds of ``gpu_name``, or None when the table does not know it."""
    slug = gpu_slug(gpu_name)
    matches = [row for row in gpu_table() if slug == row.match or slug.startswith(row.match + "-")]
    return max(matches, key=lambda row: len(row.match)) if matches else None


@lru_cache(maxsize=1)
def architecture_params() -> dict[str, int]:
    """Architecture name -> its parameter count (embeddings and the LM head included)."""
    return {record["architecture"]: int(record["params_total"]) for record in _csv("architectures.csv")}
