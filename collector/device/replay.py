"""A GPU monitor that plays back a recorded trace, through the same seam as :class:`~.nvml.NvmlGpu`.

Time comes from a :class:`~ecocompute.collector.host.clock.Clock`: the trace starts when the monitor is
made and each reading returns the last row recorded at or before the current trace time (NVML's
counters are sample-and-hold too). Played past its end, it raises TraceError rather than invent data.
"""

from __future__ import annotations

import bisect

from ecocompute.collector.device.gpu import NVML_COUNTER, EnergyMethod, GpuInfo, PowerFields
from ecocompute.collector.device.trace import COLUMNS, Trace
from ecocompute.collector.errors import TraceError
from ecocompute.collector.host.clock import Clock

_I = {name: i for i, name in enumerate(COLUMNS)}


class ReplayGpu:
    """Readings from ``trace`` at ``clock`` time, offset so that now is ``start_s`` in the trace."""

    def __init__(self, trace: Trace, clock: Clock, start_s: float | None = None, index: int = 0) -> None:
        self.index = index
        self.trace = trace
        self._clock = clock
        self._times = trace.column("t_s")
        self._offset_s = (trace.start_s if start_s is None else start_s) - clock.monotonic()

    @property
    def energy_method(self) -> EnergyMethod:
        """The counter of the vendor the trace was recorded on (amdsmi's for an AMD trace)."""
        return EnergyMethod("amdsmi_energy_counter") if self.trace.gpu.get("vendor") == "amd" else NVML_COUNTER

    def now_s(self) -> float:
        """The current position in the trace, in trace seconds."""
        return self._clock.monotonic() + self._offset_s

    def _row(self) -> list[object]:
        t = self.now_s()
        if t > self.trace.end_s:
            raise TraceError(f"the trace ended at {self.trace.end_s:.2f} s; replay asked for {t:.2f} s")
        return self.trace.rows[max(0, bisect.bisect_right(self._times, t) - 1)]

    def _value(self, column: str) -> float:
        value = self._row()[_I[column]]
        if not isinstance(value, int | float):
            raise TraceError(f"the trace has no {column} reading at {self.now_s():.2f} s")
        return float(value)

    def energy_j(self) -> float:
        """The recorded energy counter, in J."""
        return self._value("energy_mj") / 1000.0

    def power_w(self) -> float:
        """The recorded nvmlDeviceGetPowerUsage, in W."""
        return self._value("power_mw") / 1000.0

    def power_w_fields(self) -> PowerFields:
        """The recorded instant and averaged power fields, in W (None where not recorded)."""
        row = self._row()
        instant, average = row[_I["power_instant_mw"]], row[_I["power_average_mw"]]
        return PowerFields(
            None if not isinstance(instant, int | float) else instant / 1000.0,
            None if not isinstance(average, int | float) else average / 1000.0,
        )

    def _sensor(self, column: str) -> float | None:
        """A sensor's reading; None where the trace holds null (a sensor the GPU lacked)."""
        value = self._row()[_I[column]]
        return None if value is None else self._value(column)

    def temperature_c(self) -> float | None:
        """The recorded temperature (None: the GPU had no such sensor)."""
        return self._sensor("temp_c")

    def sm_clock_mhz(self) -> float | None:
        """The recorded SM clock (None: not reported by the GPU)."""
        return self._sensor("sm_clock_mhz")

    def utilization_pct(self) -> float | None:
        """The recorded utilisation (None: not reported by the GPU)."""
        return self._sensor("util_pct")

    def throttle_reasons(self) -> list[str] | None:
        """The recorded throttle reasons ([]: none; None: not reported by the GPU)."""
        value = self._row()[_I["throttle"]]
        if value is None:
            return None
        return [name for name in str(value).split("|") if name]

    def power_limit_w(self) -> float | None:
        """The power limit of the trace's fingerprint (None: not reported by the GPU)."""
        limit = self.trace.gpu.get("power_limit_w")
        return None if limit is None else float(limit)

    def compute_processes(self) -> list[int] | None:
        """A replay has no processes."""
        return []

    def uuid(self) -> str:
        """A placeholder UUID (a trace stores only the hash)."""
        return "GPU-replay"

    def fingerprint(self) -> GpuInfo:
        """The fingerprint stored in the trace."""
        return GpuInfo.from_dict(self.trace.gpu)

    def close(self) -> None:
        """Nothing to release."""
