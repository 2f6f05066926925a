"""The measurement engine: windows of back-to-back generate calls, read against the energy counter.

On a GPU without a (trustworthy) counter (:func:`~ecocompute.collector.device.gpu.energy_method` is
``power_integral``) the counter reads are replaced by two power readings, each window's energy is the sampler's
integral, and the window keeps its power readings and their coverage for the validator; idle power likewise.

Torch-agnostic: it drives :class:`Runner` objects (one per precision) and a
:class:`~ecocompute.collector.device.gpu.GpuMonitor`. A window is a random 0-100 ms delay, a synchronize,
a counter read, back-to-back ``generate_once`` calls until ``window_s`` has passed, a synchronize and a
second counter read. Precisions are interleaved window by window, the order reversed every round
(ABBA) to cancel drift. All precisions stop together, once every one has met the stopping rule
(:func:`ecocompute.schema.derive.stopping_reached`) or reached ``max_windows``, so the interleaving (and
its drift cancellation) lasts to the end; one that reached ``max_windows`` waits out its turns. A runner that fails is
recorded with its error (and, as the contract wants, without windows) and the others go on; a failed
GPU reading stops everything.
"""

from __future__ import annotations

import contextlib
import gc
import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from ecocompute.collector.device.gpu import GpuMonitor, energy_method
from ecocompute.collector.device.sampler import PowerSampler, WindowPower
from ecocompute.collector.errors import NvmlReadError
from ecocompute.collector.host import host
from ecocompute.collector.host.clock import Clock
from ecocompute.collector.host.process import gc_paused
from ecocompute.collector.run.spread import GATE_CV_PCT, OnSpread, SpreadVerdict, spread_verdict
from ecocompute.collector.run.state import MeasurementState
from ecocompute.schema.derive import derive, stopping_reached
from ecocompute.schema.models import Precision, Window
from ecocompute.validate.windows import MIN_WINDOWS_FLOOR

MAX_ERROR_CHARS = 1000
WARMUP_MIN_CALLS = 3  # a compiled stack compiles on call 1 and records CUDA graphs on the next ones
_T = TypeVar("_T")


class Runner(Protocol):
    """One loaded model at one precision, ready to generate."""

    precision: Precision

    def generate_once(self) -> int:
        """Run one ``generate`` call; return the number of tokens it generated."""
        ...

    def synchronize(self) -> None:
        """Wait until the device has finished all queued work."""
        ...

    def compile_events(self) -> int | None:
        """A count of compilations so far (torch._dynamo's), or None where the runner cannot tell."""
        ...

    def close(self) -> None:
        """Free the model and its memory."""
        ...


@dataclass(frozen=True)
class EngineConfig:
    """The knobs of the method (recorded in ``payload.method``)."""

    window_s: float = 10.0
    warmup_windows: int = 1
    min_windows: int = 5
    max_windows: int = 8
    target_ci_pct: float = 0.5
    random_delay_max_s: float = 0.1
    seed: int = 0
    pause_gc: bool = True
    gate_cv_pct: float = GATE_CV_PCT
    on_spread: OnSpread = OnSpread.STOP


@dataclass
class EngineOutcome:
    """What :meth:`Engine.run` found besides the windows: each precision whose spread put the gate out of reach."""

    out_of_reach: dict[Precision, SpreadVerdict] = field(default_factory=dict)
    stopped_early: bool = False


ProgressCallback = Callable[[MeasurementState, Window | None, bool], None]
"""Called after every window (``window``, ``warmup``) and after a failure (``None``, False)."""

SpreadCallback = Callable[[MeasurementState, SpreadVerdict], None]
"""Called once per precision, as soon as its spread puts the CV gate out of reach."""


class RunnerFailedError(Exception):
    """A runner raised: the precision is recorded with its error, the run goes on."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def describe_error(exc: BaseException) -> str:
    """One line for ``Measurement.error``: the exception's type and message, shortened."""
    text = " ".join(str(exc).split()) or "(no message)"
    line = f"{type(exc).__name__}: {text}"
    return line if len(line) <= MAX_ERROR_CHARS else line[: MAX_ERROR_CHARS - 3] + "..."


def round_order(active: Sequence[Precision], round_index: int) -> list[Precision]:
    """The order of one round: as given on even rounds, reversed on odd ones (A B, B A, A B, ...)."""
    return list(active) if round_index % 2 == 0 else list(reversed(active))


def other_processes(pids: list[int] | None, own_pid: int, own_contexts: int) -> int | None:
    """How many GPU processes are not ours.

    Inside a container NVML reports host PIDs, so when our PID is not in the list, the
    ``own_contexts`` CUDA contexts we hold are assumed to be listed anyway.
    """
    if pids is None:
        return None
    if own_pid in pids:
        return len(pids) - pids.count(own_pid)
    return max(0, len(pids) - own_contexts)


class Engine:
    """Measures windows on one GPU. ``own_contexts`` is 1 when this process holds a CUDA context on it."""

    def __init__(
        self,
        gpu: GpuMonitor,
        sampler: PowerSampler,
        clock: Clock,
        config: EngineConfig,
        *,
        on_progress: ProgressCallback | None = None,
        on_spread: SpreadCallback | None = None,
        own_contexts: int = 1,
    ) -> None:
        self.gpu = gpu
        self.sampler = sampler
        self.clock = clock
        self.config = config
        self.own_contexts = own_contexts
        self._rng = random.Random(config.seed)
        self._on_progress = on_progress
        self._on_spread = on_spread
        self.counter = energy_method(gpu).counter

    # --- one window ------------------------------------------------------------------------

    def read_counter(self) -> tuple[float, float]:
        """(time, energy) of one counter read; the time is the middle of the read (~4 ms on an H200).

        Without a counter: (time, 0) of one power reading kept by the sampler, which the window integrates.
        """
        if not self.counter:
            return self.sampler.sample_now().t_s, 0.0
        before_s = self.clock.monotonic()
        energy_j = self.gpu.energy_j()
        after_s = self.clock.monotonic()
        return (before_s + after_s) / 2, energy_j

    def measure_idle_w(self, duration_s: float, settle_s: float = 0.0, runners: Sequence[Runner] = ()) -> float:
        """Mean power over ``duration_s`` of doing nothing, from the energy counter, in W.

        First every runner is synchronized (no queued work may run into the reading) and the GPU is left
        ``settle_s`` to drop to idle clocks and power.
        """
        for runner in runners:
            runner.synchronize()
        self.clock.sleep(settle_s)
        t0, e0 = self.read_counter()
        self.clock.sleep(duration_s)
        t1, e1 = self.read_counter()
        energy_j = _counter_delta(e0, e1) if self.counter else self.sampler.window(t0, t1).energy_j
        return energy_j / (t1 - t0)

    def other_gpu_processes(self) -> int | None:
        """Processes on the GPU other than this one (None when NVML cannot list them)."""
        return other_processes(self.gpu.compute_processes(), os.getpid(), self.own_contexts)

    def measure_window(self, runner: Runner, index: int, min_calls: int = 1) -> Window:
        """One window of back-to-back generate calls lasting at least ``window_s`` (and ``min_calls`` calls)."""
        if self.config.pause_gc:
            gc.collect()  # between windows, so none falls inside one
        delay_s = round(self._rng.uniform(0.0, self.config.random_delay_max_s), 6)
        self.clock.sleep(delay_s)
        _call(runner.synchronize)
        others = self.other_gpu_processes()
        power_limit_w = self.gpu.power_limit_w()
        temp_start_c = self.gpu.temperature_c()
        cpu0_s, (steal0_s, busy0_s) = host.process_cpu_s(), host.host_cpu_s()
        compiles0 = _call(runner.compile_events)
        started_at = self.clock.utc_now()
        with gc_paused(self.config.pause_gc):
            t0, e0 = self.read_counter()
            self.sampler.sample_now()
            tokens, calls = self._generate_for(runner, t0, min_calls)
            _call(runner.synchronize)
            self.sampler.sample_now()
            t1, e1 = self.read_counter()
        compiles1 = _call(runner.compile_events)
        cpu1_s, (steal1_s, busy1_s) = host.process_cpu_s(), host.host_cpu_s()
        temp_end_c = self.gpu.temperature_c()
        power = self.sampler.window(t0, t1)
        steal_s = None if steal0_s is None or steal1_s is None else max(0.0, steal1_s - steal0_s)
        own_cpu_s = max(0.0, cpu1_s - cpu0_s)
        busy_cpus = host.others_busy_cpus(busy0_s, busy1_s, own_cpu_s, t1 - t0)
        energy_j = _counter_delta(e0, e1) if self.counter else power.energy_j
        return Window(
            index=index,
            started_at=started_at,
            duration_s=round(t1 - t0, 6),
            energy_j=round(energy_j, 6),
            energy_j_power_integrated=round(power.energy_j, 6),
            tokens=tokens,
            generate_calls=calls,
            temp_c_start=temp_start_c,
            temp_c_end=temp_end_c,
            sm_clock_mhz_mean=_rounded(power.sm_clock_mhz_mean, 3),
            throttle_reasons=power.throttle_reasons,
            gpu_util_pct_mean=_rounded(power.util_pct_mean, 3),
            process_cpu_s=round(own_cpu_s, 6),
            host_steal_s=None if steal_s is None else round(steal_s, 6),
            power_samples=power.samples,
            delay_s=delay_s,
            other_gpu_processes=others,
            power_limit_w=power_limit_w,
            recompiles=None if compiles0 is None or compiles1 is None else max(0, compiles1 - compiles0),
            host_others_busy_cpus=None if busy_cpus is None else round(busy_cpus, 3),
            **({} if self.counter else counterless_fields(power)),
        )

    def _generate_for(self, runner: Runner, t0: float, min_calls: int) -> tuple[int, int]:
        tokens = calls = 0
        while calls < min_calls or self.clock.monotonic() - t0 < self.config.window_s:
            generated = _call(runner.generate_once)
            if generated <= 0:
                raise RunnerFailedError(RuntimeError(f"generate produced {generated} tokens"))
            tokens += generated
            calls += 1
        return tokens, calls

    # --- many windows ----------------------------------------------------------------------

    def _step(self, runner: Runner, state: MeasurementState, warmup: bool) -> None:
        """Measure one window into ``state``; on a runner failure record the error and close the runner."""
        windows = state.warmup if warmup else state.windows
        try:
            window = self.measure_window(runner, len(windows), WARMUP_MIN_CALLS if warmup else 1)
        except RunnerFailedError as failure:
            dropped = f" (after {len(state.windows)} windows, dropped)" if state.windows else ""
            state.error = describe_error(failure.cause) + dropped
            state.windows = []  # the contract: a failed measurement has an error and no windows
            state.finished = True
            _close_quietly(runner)
            self._notify(state, None, False)
            return
        windows.append(window)
        self._notify(state, window, warmup)

    def stopped(self, state: MeasurementState) -> bool:
        """True once ``state`` has ``max_windows`` windows or a narrow enough confidence interval."""
        if len(state.windows) >= self.config.max_windows:
            return True
        if not state.windows:
            return False
        j_per_token = derive(state.windows, 0.0).j_per_token
        return stopping_reached(j_per_token, self.config.min_windows, self.config.target_ci_pct)

    def run(self, runners: dict[Precision, Runner], states: dict[Precision, MeasurementState]) -> EngineOutcome:
        """Warm-up rounds, then measured rounds, interleaving ``runners`` until each has stopped.

        One runner is the blocked case. ``states`` may hold windows from an earlier session (resume):
        warm-up is repeated (the model was reloaded) and measurement continues where it stopped. After every
        round each precision's spread is checked against the CV gate; with ``on_spread=stop`` the run ends once
        the gate is out of reach and every precision has the windows a valid submission needs.
        """
        outcome = EngineOutcome()
        active = [p for p in runners if not states[p].finished]
        for round_index in range(self.config.warmup_windows):
            for precision in round_order(active, round_index):
                if not states[precision].finished:
                    self._step(runners[precision], states[precision], warmup=True)
        round_index = 0
        while active := [p for p in active if not states[p].error]:
            self._check_spread(active, states, outcome)
            if all(self.stopped(states[p]) for p in active) or self._stop_for_spread(active, states, outcome):
                break
            for precision in round_order(active, round_index):
                state = states[precision]
                if not state.error and len(state.windows) < self.config.max_windows:
                    self._step(runners[precision], state, warmup=False)
            round_index += 1
        for precision in active:
            states[precision].finished = True
        return outcome

    def _check_spread(self, active: list[Precision], states: dict[Precision, MeasurementState],
                      outcome: EngineOutcome) -> None:  # fmt: skip
        for precision in active:
            if precision in outcome.out_of_reach or not states[precision].windows:
                continue
            jpt = derive(states[precision].windows, 0.0).j_per_token
            verdict = spread_verdict(jpt, self.config.max_windows, self.config.gate_cv_pct)
            if verdict.out_of_reach:
                outcome.out_of_reach[precision] = verdict
                if self._on_spread is not None:
                    self._on_spread(states[precision], verdict)

    def _stop_for_spread(self, active: list[Precision], states: dict[Precision, MeasurementState],
                         outcome: EngineOutcome) -> bool:  # fmt: skip
        """With ``on_spread=stop``: the gate is out of reach and every precision has enough windows to be valid."""
        if self.config.on_spread is not OnSpread.STOP or not outcome.out_of_reach:
            return False
        least = max(self.config.min_windows, MIN_WINDOWS_FLOOR)
        if all(len(states[p].windows) >= min(least, self.config.max_windows) for p in active):
            outcome.stopped_early = any(len(states[p].windows) < self.config.max_windows for p in active)
            return True
        return False

    def _notify(self, state: MeasurementState, window: Window | None, warmup: bool) -> None:
        if self._on_progress is not None:
            self._on_progress(state, window, warmup)


def counterless_fields(power: WindowPower) -> dict[str, Any]:
    """What a window measured by integrated power keeps for the validator: its readings and their coverage."""
    cov = power.coverage
    if cov is None:  # pragma: no cover - summarize always sets it
        raise ValueError("a window without the coverage of its power readings")
    return {
        "power_trace": [(round(t, 4), round(w, 3)) for t, w in power.points],
        "power_first_sample_s": round(cov.first_sample_s, 6),
        "power_last_sample_gap_s": round(cov.last_sample_gap_s, 6),
        "power_max_gap_s": round(cov.max_gap_s, 6),
    }


def _rounded(value: float | None, digits: int) -> float | None:
    """``value`` rounded; None (a sensor the GPU lacks) stays None, never 0."""
    return None if value is None else round(value, digits)


def _call(fn: Callable[[], _T]) -> _T:
    """Call a runner method; anything it raises (OOM, a missing kernel, ...) becomes RunnerFailedError."""
    try:
        return fn()
    except Exception as exc:
        raise RunnerFailedError(exc) from exc


def _close_quietly(runner: Runner) -> None:
    with contextlib.suppress(Exception):  # the runner already failed; its error is what gets recorded
        runner.close()


def _counter_delta(e0_j: float, e1_j: float) -> float:
    if e1_j < e0_j:
        raise NvmlReadError(
            f"the energy counter went backwards ({e0_j:.3f} J -> {e1_j:.3f} J): the driver was reloaded or the "
            "GPU reset during the window; run again with --resume"
        )
    return e1_j - e0_j
