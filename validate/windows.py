"""Checks of the raw windows: counts, durations, the recomputed CV, and physical plausibility.

Every derived figure comes from :func:`ecocompute.schema.derive.derive`; nothing derived is read from
the submission. Bounds that depend on the GPU come from :mod:`ecocompute.validate.gpus`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from datetime import datetime, timedelta

from ecocompute.schema.derive import Derived, derive, integral_diff_pct, window_power_w, window_tokens_per_s
from ecocompute.schema.errors import DerivationError
from ecocompute.schema.models import Hardware, Idle, Measurement, Method, Payload, Window, Workload
from ecocompute.validate.findings import Finding, finding
from ecocompute.validate.gpus import GpuBounds

MIN_WINDOWS_FLOOR = 3  # whatever method.min_windows says, a CV needs a few windows
WINDOW_MIN_S_FLOOR = 10.0  # DESIGN: a window is at least 10 s
INTEGRAL_ERROR_PCT = 5.0
INTEGRAL_WARN_PCT = 2.0
POWER_CEILING_FACTOR = 1.0  # energy <= power limit x duration
MIN_DECODE_STEP_S = 0.0002  # no decode step of generate() is faster than 0.2 ms: 5,000 steps/s per sequence
TEMP_RANGE_C = (0.0, 110.0)
EPOCH = datetime.fromisoformat("2020-01-01T00:00:00+00:00")
FUTURE_ALLOWANCE = timedelta(days=1)  # contributors' clocks drift; a day covers every time zone mistake


def _w(m_index: int, w_index: int, field: str = "") -> str:
    base = f"payload.measurements[{m_index}].windows[{w_index}]"
    return f"{base}.{field}" if field else base


def check_window_count(measurement: Measurement, method: Method, index: int) -> list[Finding]:
    """At least max(method.min_windows, 3) windows and at most method.max_windows."""
    n = len(measurement.windows)
    least = max(method.min_windows, MIN_WINDOWS_FLOOR)
    where = f"payload.measurements[{index}].windows"
    if n < least:
        return [finding("E-WINDOW-COUNT", where, f"{n} windows, fewer than the minimum {least}: measure more")]
    if n > method.max_windows:
        return [finding("E-WINDOW-COUNT", where, f"{n} windows, more than method.max_windows={method.max_windows}")]
    return []


def check_window_durations(measurement: Measurement, method: Method, index: int) -> list[Finding]:
    """Every window lasts at least max(method.window_min_s, 10 s), warm-ups apart."""
    least = max(method.window_min_s, WINDOW_MIN_S_FLOOR)
    return [
        finding("E-WINDOW-SHORT", _w(index, i, "duration_s"), f"{w.duration_s:g} s, shorter than {least:g} s")
        for i, w in enumerate(measurement.windows)
        if w.duration_s < least
    ]


def check_window_indices(measurement: Measurement, index: int) -> list[Finding]:
    """Window indices run 0, 1, 2, ... in the order the windows are listed, warm-ups in their own list.

    The collector numbers every window it measures; a gap in the numbers is a window left out.
    """
    found = []
    for kind, windows in (("windows", measurement.windows), ("warmup", measurement.warmup)):
        indices = [w.index for w in windows]
        if indices != list(range(len(indices))):
            where = f"payload.measurements[{index}].{kind}"
            found.append(
                finding(
                    "E-WINDOW-INDEX",
                    where,
                    f"indices {indices[:20]} are not 0..{len(indices) - 1}: every window the collector measured "
                    "stays in the file, numbered as it ran",
                )
            )
    return found


_MEMO: dict[tuple[int, float], tuple[Sequence[Window], Derived | str]] = {}


def forget_derived() -> None:
    """Drop what :func:`safe_derive` remembers (done before each file)."""
    _MEMO.clear()


def safe_derive(windows: Sequence[Window], idle_power_w: float) -> Derived | str:
    """:func:`derive`, or the reason it could not derive finite figures (remembered for the file being checked)."""
    key = (id(windows), idle_power_w)
    hit = _MEMO.get(key)
    if hit is not None and hit[0] is windows:
        return hit[1]
    result = _safe_derive(windows, idle_power_w)
    _MEMO[key] = (windows, result)
    return result


def _safe_derive(windows: Sequence[Window], idle_power_w: float) -> Derived | str:
    if not windows or any(w.tokens <= 0 for w in windows):
        return "a window without tokens has no J/token"
    try:
        derived = derive(windows, idle_power_w)
    except (DerivationError, OverflowError, ValueError, ZeroDivisionError) as exc:
        return str(exc) or type(exc).__name__
    if not (math.isfinite(derived.cv_pct) and math.isfinite(derived.j_per_token_mean)):
        return "J/token or its CV is not a finite number"
    return derived


def check_cv(derived: Derived | str, max_cv_pct: float, index: int) -> list[Finding]:
    """The recomputed CV of J/token is at most ``max_cv_pct``."""
    where = f"payload.measurements[{index}].windows"
    if isinstance(derived, str):
        return [finding("E-DERIVE", where, f"no CV can be computed: {derived}")]
    if derived.cv_pct > max_cv_pct:
        return [
            finding(
                "E-CV",
                where,
                f"CV of J/token is {derived.cv_pct:.2f}%, above the {max_cv_pct:g}% gate: make the GPU-bound part "
                "larger (batch size, compiled stack) or the host quieter, and measure again",
            )
        ]
    return []


def power_bounds(hardware: Hardware, bounds: GpuBounds, window: Window | None = None) -> tuple[float, float]:
    """Plausible average power of a window, in W: the GPU's floor, and its power limit.

    The limit is the window's own when recorded: one GPU's counter over a window is at most limit x duration.
    """
    window_limit = window.power_limit_w if window is not None else None
    return bounds.power_floor_w, POWER_CEILING_FACTOR * (window_limit or power_ceiling_w(hardware, bounds))


def power_ceiling_w(hardware: Hardware, bounds: GpuBounds) -> float:
    """The submission's power limit; the named GPU's highest settable limit where the GPU reports none (null)."""
    return bounds.power_limit_max_w if hardware.power_limit_w is None else hardware.power_limit_w


def check_power(measurement: Measurement, hardware: Hardware, bounds: GpuBounds, index: int) -> list[Finding]:
    """Each window's average power (counter energy / duration) lies between the floor and the power limit."""
    found = []
    for kind, windows in (("windows", measurement.windows), ("warmup", measurement.warmup)):
        for i, w in enumerate(windows):
            low, high = power_bounds(hardware, bounds, w)
            power = window_power_w(w)
            if not low <= power <= high:
                where = f"payload.measurements[{index}].{kind}[{i}].energy_j"
                message = f"average power {power:.4g} W outside {low:g}..{high:g} W (floor..power limit)"
                found.append(finding("E-POWER", where, message))
    return found


def check_integral(measurement: Measurement, index: int) -> list[Finding]:
    """Counter energy and integrated-power energy agree within 5% (a warning above 2%)."""
    found = []
    for i, w in enumerate(measurement.windows):
        diff = integral_diff_pct(w)
        if diff > INTEGRAL_ERROR_PCT:
            code = "E-INTEGRAL"
        elif diff > INTEGRAL_WARN_PCT:
            code = "W-INTEGRAL"
        else:
            continue
        found.append(finding(code, _w(index, i, "energy_j_power_integrated"), f"differs from energy_j by {diff:.2f}%"))
    return found


def check_tokens(measurement: Measurement, workload: Workload, index: int) -> list[Finding]:
    """Each window's tokens equal batch_size x new_tokens x generate_calls."""
    per_call = workload.batch_size * workload.new_tokens
    return [
        finding(
            "E-TOKENS",
            _w(index, i, "tokens"),
            f"{w.tokens} tokens, but {w.generate_calls} calls x batch {workload.batch_size} x "
            f"{workload.new_tokens} new tokens = {w.generate_calls * per_call}",
        )
        for i, w in enumerate(measurement.windows)
        if w.tokens != w.generate_calls * per_call
    ]


def check_throughput(measurement: Measurement, workload: Workload, index: int) -> list[Finding]:
    """No window decodes faster than one step per 0.2 ms per sequence."""
    found = []
    for i, w in enumerate(measurement.windows):
        ceiling = w.duration_s / MIN_DECODE_STEP_S * workload.batch_size
        if w.tokens > ceiling:
            rate = window_tokens_per_s(w)
            found.append(finding("E-THROUGHPUT", _w(index, i, "tokens"), f"{rate:.4g} tokens/s is not possible"))
    return found


def check_temperatures(measurement: Measurement, index: int) -> list[Finding]:
    """Temperatures at the start and end of each window lie in 0..110 C (skipped where the GPU has no sensor)."""
    low, high = TEMP_RANGE_C
    skipped = "the temperature range (E-TEMPERATURE)"
    missing = _missing_sensor(measurement, index, "temp_c_start", skipped)
    return (missing or _missing_sensor(measurement, index, "temp_c_end", skipped)) + [
        finding("E-TEMPERATURE", _w(index, i, field), f"{value:g} C outside {low:g}..{high:g} C")
        for i, w in enumerate(measurement.windows)
        for field, value in (("temp_c_start", w.temp_c_start), ("temp_c_end", w.temp_c_end))
        if value is not None and not low <= value <= high
    ]


def _missing_sensor(measurement: Measurement, index: int, field: str, check: str) -> list[Finding]:
    """W-SENSOR-MISSING once per measurement whose windows hold null in ``field``: ``check`` is skipped there."""
    missing = [i for i, w in enumerate(measurement.windows) if getattr(w, field) is None]
    if not missing:
        return []
    where = _w(index, missing[0], field)
    return [
        finding(
            "W-SENSOR-MISSING", where,
            f"{field} is null in {len(missing)} of {len(measurement.windows)} windows (the GPU does not report it): "
            f"{check} is not checked there",
        )
    ]  # fmt: skip


def check_clocks(measurement: Measurement, bounds: GpuBounds, index: int) -> list[Finding]:
    """Each window's mean SM clock is above 0 and at most the GPU's maximum."""
    high = bounds.sm_clock_max_mhz
    return _missing_sensor(measurement, index, "sm_clock_mhz_mean", "the SM clock range (E-CLOCK)") + [
        finding("E-CLOCK", _w(index, i, "sm_clock_mhz_mean"), f"{w.sm_clock_mhz_mean:g} MHz outside 0..{high:g} MHz")
        for i, w in enumerate(measurement.windows)
        if w.sm_clock_mhz_mean is not None and not 0 < w.sm_clock_mhz_mean <= high
    ]


def check_time_order(measurement: Measurement, index: int) -> list[Finding]:
    """Window start times strictly increase."""
    starts = [w.started_at for w in measurement.windows]
    return [
        finding("E-TIME-ORDER", _w(index, i + 1, "started_at"), "starts no later than the window before it")
        for i, (a, b) in enumerate(itertools.pairwise(starts))
        if not a < b
    ]


def check_created_at(payload: Payload, now: datetime) -> list[Finding]:
    """created_at lies between 2020 and now (plus a day for clock error)."""
    created = payload.created_at
    if created < EPOCH or created > now + FUTURE_ALLOWANCE:
        return [finding("E-TIME-RANGE", "payload.created_at", f"{created.isoformat()} is before 2020 or in the future")]
    return []


def check_time_range(measurement: Measurement, created_at: datetime, index: int) -> list[Finding]:
    """Every window (warm-up included) starts after 2020 and no later than created_at."""
    found = []
    for kind, windows in (("windows", measurement.windows), ("warmup", measurement.warmup)):
        for i, w in enumerate(windows):
            if not EPOCH <= w.started_at <= created_at:
                where = f"payload.measurements[{index}].{kind}[{i}].started_at"
                found.append(
                    finding("E-TIME-RANGE", where, f"{w.started_at.isoformat()} is before 2020 or after created_at")
                )
    return found


def check_warmup(measurement: Measurement, method: Method, index: int) -> list[Finding]:
    """A measurement keeps its warm-up windows (method.warmup_windows of them)."""
    if len(measurement.warmup) >= method.warmup_windows:
        return []
    where = f"payload.measurements[{index}].warmup"
    return [
        finding("W-WARMUP", where, f"{len(measurement.warmup)} warm-up windows, method says {method.warmup_windows}")
    ]


def check_throttle(measurement: Measurement, index: int) -> list[Finding]:
    """Throttle reasons are reported: the window ran below the clocks the card can hold."""
    return _missing_sensor(measurement, index, "throttle_reasons", "throttling (W-THROTTLE)") + [
        finding("W-THROTTLE", _w(index, i, "throttle_reasons"), f"throttled: {', '.join(w.throttle_reasons)[:200]}")
        for i, w in enumerate(measurement.windows)
        if w.throttle_reasons
    ]


def check_shared(measurement: Measurement, index: int) -> list[Finding]:
    """Other processes on the GPU during a window are reported."""
    return [
        finding("W-SHARED", _w(index, i, "other_gpu_processes"), f"{w.other_gpu_processes} other processes on the GPU")
        for i, w in enumerate(measurement.windows)
        if w.other_gpu_processes
    ]


def check_hardware(hardware: Hardware, bounds: GpuBounds | None, example: bool = False) -> list[Finding]:
    """One GPU, its power limits and memory within the named GPU's range; an unknown GPU is an error.

    Only a submission marked ``example`` (never published) may name a GPU the table does not know.
    """
    found = []
    if hardware.gpu_count != 1:
        found.append(
            finding(
                "E-HARDWARE",
                "payload.hardware.gpu_count",
                f"{hardware.gpu_count} GPUs, but a submission measures one GPU's energy counter: gpu_count is 1",
            )
        )
    found += _missing_limits(hardware)
    if None not in (hardware.power_limit_w, hardware.default_power_limit_w) and (
        hardware.power_limit_w != hardware.default_power_limit_w
    ):
        found.append(
            finding(
                "W-POWER-LIMIT",
                "payload.hardware.power_limit_w",
                f"{hardware.power_limit_w:g} W, default {hardware.default_power_limit_w:g} W",
            )
        )
    if bounds is None:
        code = "W-GPU-UNKNOWN" if example else "E-GPU-UNKNOWN"
        found.append(
            finding(
                code,
                "payload.hardware.gpu_name",
                f"{hardware.gpu_name[:80]!r} is not in validate/data/gpus.csv: add its row in the same pull request "
                "(match slug, name, power-limit range W, memory range MiB, memory bandwidth GB/s, idle floor W, "
                "maximum SM clock MHz, and the datasheet as source); a maintainer reviews it",
            )
        )
        return found
    for field in ("power_limit_w", "default_power_limit_w"):
        value = getattr(hardware, field)
        if value is not None and not bounds.power_limit_min_w <= value <= bounds.power_limit_max_w:
            rng = f"{bounds.power_limit_min_w:g}..{bounds.power_limit_max_w:g} W"
            found.append(
                finding("E-HARDWARE", f"payload.hardware.{field}", f"{value:g} W outside {bounds.name}'s {rng}")
            )
    if not bounds.memory_mib_min <= hardware.memory_total_mib <= bounds.memory_mib_max:
        rng = f"{bounds.memory_mib_min}..{bounds.memory_mib_max} MiB"
        found.append(
            finding("E-HARDWARE", "payload.hardware.memory_total_mib", f"{hardware.memory_total_mib} outside {rng}")
        )
    return found


def _missing_limits(hardware: Hardware) -> list[Finding]:
    """W-SENSOR-MISSING for a power limit the GPU does not report (null, schema 1.2): the checks it skips."""
    found = []
    if hardware.power_limit_w is None:
        skipped = (
            "whether it is the default (W-POWER-LIMIT) and its range (E-HARDWARE) are not checked; E-POWER and "
            "E-IDLE use the named GPU's highest power limit as the ceiling"
        )
        found.append(_missing_limit("power_limit_w", "power limit", skipped))
    if hardware.default_power_limit_w is None:
        skipped = "whether the power limit is the default (W-POWER-LIMIT) and its range (E-HARDWARE) are not checked"
        found.append(_missing_limit("default_power_limit_w", "default power limit", skipped))
    return found


def _missing_limit(field: str, what: str, skipped: str) -> Finding:
    message = f"{field} is null (the GPU does not report its {what}): {skipped}"
    return finding("W-SENSOR-MISSING", f"payload.hardware.{field}", message)


def check_window_limits(measurement: Measurement, bounds: GpuBounds | None, index: int) -> list[Finding]:
    """A window's recorded power limit lies in the named GPU's power-limit range."""
    if bounds is None:
        return []
    low, high = bounds.power_limit_min_w, bounds.power_limit_max_w
    return [
        finding(
            "E-HARDWARE",
            _w(index, i, "power_limit_w"),
            f"{w.power_limit_w:g} W outside {bounds.name}'s {low:g}..{high:g} W",
        )
        for i, w in enumerate(measurement.windows)
        if w.power_limit_w is not None and not low <= w.power_limit_w <= high
    ]


def check_idle(idle: Idle, hardware: Hardware, bounds: GpuBounds) -> list[Finding]:
    """Idle power before and after lies between the power floor and the power limit."""
    low, high = bounds.power_floor_w, power_ceiling_w(hardware, bounds)
    return [
        finding("E-IDLE", f"payload.idle.{field}", f"{value:g} W outside {low:g}..{high:g} W")
        for field, value in (("power_w_before", idle.power_w_before), ("power_w_after", idle.power_w_after))
        if not low <= value <= high
    ]
