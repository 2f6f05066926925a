"""Checks of what one GPU can physically have measured, and of a run that kept every window.

- the timeline: no two windows of a submission overlap (within or across precisions, warm-ups included), and
  no gap in the measured rounds is wide enough to have held a window that is missing;
- the stopping rule the method records (:func:`ecocompute.schema.derive.stopping_reached`): the number of
  windows is the one the collector would have stopped at;
- memory bandwidth: a decode step reads every weight once, so tokens/s is at most
  batch x bandwidth / (parameters x bytes per parameter), with :data:`BANDWIDTH_SLACK` for what caches save;
- idle power below every window's power (dynamic energy is never negative); no two windows with the same
  measured values; a session of bounded span; parameters that match the named architecture.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from operator import itemgetter
from typing import NamedTuple

from ecocompute.schema.derive import stopping_reached
from ecocompute.schema.models import Measurement, Payload, Precision, Window
from ecocompute.validate.findings import Finding, finding
from ecocompute.validate.gpus import GpuBounds, architecture_params
from ecocompute.validate.windows import safe_derive

BYTES_PER_PARAM = {
    Precision.FP16: 2.0,
    Precision.BF16: 2.0,
    Precision.INT8: 1.0,
    Precision.INT8_T0: 1.0,
    Precision.NF4: 0.5,
    Precision.NF4_DQ: 0.5,
    Precision.FP4: 0.5,
    Precision.Q8_0: 1.0,  # GGUF Q8_0: 8.5 bits a weight; the lower bound keeps the ceiling lenient
    Precision.Q4_K_M: 0.5,  # GGUF Q4_K_M: about 4.8 bits a weight (some tensors at 5 or 6)
    Precision.FP8_WO: 1.0,  # torchao float8_e4m3fn weights, a scale per row
    Precision.FP8_DYN: 1.0,  # the same weights; activations are quantized on the fly
}
BANDWIDTH_SLACK = 1.5  # the best H200 window reads its weights at 0.61 x the bandwidth; 1.5 leaves room for caches
MAX_GAP_S = 5.0  # between two windows of one session (delay, synchronize, counter reads, a GC pass)
MAX_SESSION = timedelta(hours=72)  # first window to created_at
OVERLAP_TOLERANCE_S = 0.001
PARAMS_TOLERANCE = 0.001
IDLE_TOLERANCE = 0.02  # idle is read before and after, with the sensor's noise; the H200's lowest load is 1.009 x idle
_DROPPED = re.compile(r"after (\d+) windows, dropped")


class _Slot(NamedTuple):
    start: datetime
    end: datetime
    kind: str
    position: int
    measurement: int

    @property
    def warmup(self) -> bool:
        return self.kind == "warmup"

    @property
    def where(self) -> str:
        return f"payload.measurements[{self.measurement}].{self.kind}[{self.position}]"


def _slots(payload: Payload) -> list[_Slot]:
    slots = []
    for m_index, m in enumerate(payload.measurements):
        for kind, windows in (("windows", m.windows), ("warmup", m.warmup)):
            for i, w in enumerate(windows):
                slots.append(_Slot(w.started_at, w.started_at + timedelta(seconds=w.duration_s), kind, i, m_index))
    return sorted(slots, key=itemgetter(0))


def _dropped_windows(payload: Payload) -> int:
    """Windows the collector dropped with a precision that failed mid-run (it says so in the error)."""
    return sum(int(match.group(1)) for m in payload.measurements if m.error for match in _DROPPED.finditer(m.error))


def check_timeline(payload: Payload) -> list[Finding]:
    """No two windows overlap; a gap wider than :data:`MAX_GAP_S` opens a session (warm-ups) or a block.

    A gap where a measured window fits, with no warm-up after it, is a window left out of the file.
    """
    slots = _slots(payload)
    found: list[Finding] = []
    allowed_gaps = _dropped_windows(payload)
    blocked = payload.method.order == "blocked"
    max_gap = MAX_GAP_S + min(payload.method.random_delay_max_s, 1.0)
    for before, after in itertools.pairwise(slots):
        gap = (after.start - before.end).total_seconds()
        if gap < -OVERLAP_TOLERANCE_S:
            found.append(
                finding(
                    "E-WINDOW-OVERLAP",
                    f"{after.where}.started_at",
                    f"starts {-gap:.3f} s before {before.where} ends: one GPU measures one window at a time",
                )
            )
        elif gap > max_gap and not after.warmup and not (blocked and after.measurement != before.measurement):
            if allowed_gaps > 0:
                allowed_gaps -= 1
                continue
            found.append(
                finding(
                    "E-WINDOW-GAP",
                    f"{after.where}.started_at",
                    f"{gap:.1f} s after {before.where} ends, with no warm-up between: a window that ran there is "
                    "missing from the file; keep every window the collector measured",
                )
            )
    return found[:20]


def _all_stopped(series: Sequence[Sequence[float]], k: int, payload: Payload) -> bool:
    method = payload.method
    return all(
        k >= method.max_windows or stopping_reached(j[:k], method.min_windows, method.target_ci_pct) for j in series
    )


def check_stopping_rule(payload: Payload) -> list[Finding]:
    """The window count is where the recorded stopping rule stops.

    All precisions of an interleaved run stop together (the engine's rule); each of a blocked run alone.
    """
    measured = [(i, m) for i, m in enumerate(payload.measurements) if m.error is None and m.windows]
    if not measured:
        return []
    groups = [measured] if payload.method.order == "interleaved" else [[pair] for pair in measured]
    found = []
    for group in groups:
        counts = sorted({len(m.windows) for _i, m in group})
        if len(counts) > 1:
            found.append(
                finding(
                    "E-WINDOW-COUNT",
                    "payload.measurements",
                    f"interleaved precisions stop together, but they hold {counts} windows: keep every window",
                )
            )
            continue
        n = counts[0]
        derived = [safe_derive(m.windows, payload.idle.power_w) for _i, m in group]
        if any(isinstance(d, str) for d in derived):
            continue  # E-DERIVE says why
        series = [d.j_per_token for d in derived if not isinstance(d, str)]
        where = f"payload.measurements[{group[0][0]}].windows" if len(group) == 1 else "payload.measurements"
        if n < payload.method.max_windows and not _all_stopped(series, n, payload):
            found.append(
                finding(
                    "E-STOPPING-RULE",
                    where,
                    f"{n} windows, below max_windows={payload.method.max_windows}, yet the 95% CI is not within "
                    f"target_ci_pct={payload.method.target_ci_pct:g}% there: the run cannot have stopped at {n}",
                )
            )
            continue
        early = next((k for k in range(1, n) if _all_stopped(series, k, payload)), None)
        if early is not None:
            found.append(
                finding(
                    "E-STOPPING-RULE",
                    where,
                    f"the stopping rule is met at {early} windows, so the run stopped there, but {n} are recorded",
                )
            )
    return found


def check_bandwidth(measurement: Measurement, payload: Payload, bounds: GpuBounds, index: int) -> list[Finding]:
    """Tokens/s within what memory bandwidth allows: batch x bandwidth / (params x bytes per param) x slack."""
    bytes_per_step = payload.workload.params_total * BYTES_PER_PARAM[measurement.precision]
    ceiling = BANDWIDTH_SLACK * payload.workload.batch_size * bounds.memory_bandwidth_gbps * 1e9 / bytes_per_step
    found = []
    for i, w in enumerate(measurement.windows):
        rate = w.tokens / w.duration_s
        if rate > ceiling:
            found.append(
                finding(
                    "E-BANDWIDTH",
                    f"payload.measurements[{index}].windows[{i}].tokens",
                    f"{rate:.4g} tokens/s, but {bounds.name}'s {bounds.memory_bandwidth_gbps:g} GB/s reads "
                    f"{payload.workload.params_total / 1e9:.3g}B {measurement.precision.value} parameters at most "
                    f"{ceiling / BANDWIDTH_SLACK:.4g} times a second per sequence slot (x{BANDWIDTH_SLACK:g} slack)",
                )
            )
    return found


def check_idle_below_load(measurement: Measurement, payload: Payload, index: int) -> list[Finding]:
    """A measurement draws more than the idle power (model loaded, nothing running) over its windows.

    Its dynamic energy is never negative.
    """
    idle = payload.idle.power_w
    energy = sum(w.energy_j for w in measurement.windows)
    duration = sum(w.duration_s for w in measurement.windows)
    power = energy / duration
    if power >= (1 - IDLE_TOLERANCE) * idle:
        return []
    return [
        finding(
            "E-IDLE-ABOVE-LOAD",
            f"payload.measurements[{index}].windows",
            f"average power {power:.4g} W over the windows is below the idle power {idle:.4g} W: negative dynamic "
            "energy; generating draws more than idling",
        )
    ]


def _values(w: Window) -> tuple[float, float, int]:
    return (w.energy_j, w.duration_s, w.tokens)


def check_repeated_windows(payload: Payload) -> list[Finding]:
    """No two windows of a submission hold the same energy, duration and tokens: sensors are never that steady."""
    seen: dict[tuple[float, float, int], tuple[int, str, int]] = {}
    found = []
    for m_index, m in enumerate(payload.measurements):
        for kind, windows in (("windows", m.windows), ("warmup", m.warmup)):
            for i, w in enumerate(windows):
                here = (m_index, kind, i)
                first = seen.setdefault(_values(w), here)
                if first != here:
                    found.append(
                        finding(
                            "E-WINDOW-REPEATED",
                            _where(*here),
                            f"the same energy, duration and tokens as {_where(*first)}",
                        )
                    )
    return found[:20]


def _where(m_index: int, kind: str, i: int) -> str:
    return f"payload.measurements[{m_index}].{kind}[{i}]"


def check_session_span(payload: Payload) -> list[Finding]:
    """From the first window to created_at, a session lasts at most :data:`MAX_SESSION`."""
    starts = [w.started_at for m in payload.measurements for w in (*m.windows, *m.warmup)]
    if not starts:
        return []
    span = payload.created_at - min(starts)
    if span <= MAX_SESSION:
        return []
    hours = span.total_seconds() / 3600
    return [
        finding(
            "E-SESSION-SPAN",
            "payload.created_at",
            f"the session spans {hours:.1f} h from its first window to created_at, over the "
            f"{MAX_SESSION.total_seconds() / 3600:g} h a run takes at most",
        )
    ]


def check_params(payload: Payload) -> list[Finding]:
    """params_total is the named architecture's parameter count (W-ARCH-UNKNOWN when the table lacks it)."""
    workload = payload.workload
    known = architecture_params().get(workload.architecture)
    if known is None:
        return [
            finding(
                "W-ARCH-UNKNOWN",
                "payload.workload.architecture",
                f"{workload.architecture[:80]!r} is not in validate/data/architectures.csv: params are not checked",
            )
        ]
    if abs(workload.params_total - known) <= PARAMS_TOLERANCE * known:
        return []
    return [
        finding(
            "E-PARAMS",
            "payload.workload.params_total",
            f"{workload.params_total} parameters, but {workload.architecture} has {known}",
        )
    ]
