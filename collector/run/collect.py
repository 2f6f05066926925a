"""One collection run, end to end: checks, models, idle power, windows, submission.

:func:`collect` opens the GPU, refuses a shared one (unless allowed), loads each precision (a failure is
recorded and the rest go on), measures idle power with the models loaded, runs the engine interleaved
(or blocked with a cooldown when the precisions do not fit in memory together), checkpoints after
every window, and writes the signed submission to ``<out>/<login>/<gpu>/<id>.json``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ecocompute import __version__
from ecocompute.collector.device import devices
from ecocompute.collector.device.gpu import EnergyMethod, GpuInfo, GpuMonitor
from ecocompute.collector.device.sampler import PowerSampler
from ecocompute.collector.errors import GpuBusyError, RunStateError
from ecocompute.collector.host import process
from ecocompute.collector.host.clock import Clock, SystemClock
from ecocompute.collector.model.backend import Backend, LoadedRunner, hf_backend
from ecocompute.collector.model.corpus import corpus
from ecocompute.collector.model.engines import engine_spec
from ecocompute.collector.model.precisions import SPECS
from ecocompute.collector.run import fingerprint
from ecocompute.collector.run.config import Destination, RunConfig
from ecocompute.collector.run.display import SilentView, View
from ecocompute.collector.run.engine import Engine, describe_error, other_processes
from ecocompute.collector.run.preflight import gpu_checklist, refuse_unmeasurable, refuse_without_fp8
from ecocompute.collector.run.spread import OnSpread, SpreadVerdict, advice, passes_gate
from ecocompute.collector.run.state import (
    MeasurementState,
    Order,
    RunState,
    StateStore,
    default_state_dir,
    new_submission_id,
    pinned_differences,
)
from ecocompute.collector.run.submission import IdleReadings, RunOutcome, build_submission
from ecocompute.schema.errors import EcocomputeError

if TYPE_CHECKING:
    from ecocompute.collector.model.engines import EngineInfo
from ecocompute.schema.io import write_submission
from ecocompute.schema.models import Precision, Quality, Submission
from ecocompute.schema.paths import submission_relpath
from ecocompute.schema.signing import sign_submission

__all__ = [
    "Backend", "Destination", "Environment", "Result", "RunConfig", "RunInterruptedError", "Session", "collect",
    "hf_backend",
]  # fmt: skip


def open_any_gpu(index: int, vendor: str, clock: Clock) -> GpuMonitor:
    """GPU ``index`` through NVML or amdsmi (``vendor``: auto, nvidia, amd), kept open without a trusted counter.

    Whether and how it can be measured is then the preflight's to say (:func:`refuse_unmeasurable`).
    """
    return devices.open_gpu(index, vendor, clock=clock, allow_counterless=True)


@dataclass
class Environment:
    """The world a run touches; tests replace parts of it (a fake NVML, a failing backend)."""

    open_gpu: Callable[[int, str, Clock], GpuMonitor] = open_any_gpu
    make_backend: Callable[[RunConfig, Destination, str], Backend] | None = None
    """The backend factory (None: the registered one of ``RunConfig.engine``); tests pass their own."""
    clock: Clock = field(default_factory=SystemClock)
    view: View = field(default_factory=SilentView)
    software: Callable[..., Any] = fingerprint.software
    """``payload.software`` from the NVML version (and ``engine_build=``, for an engine that runs without torch)."""
    engine_info: Callable[[str], EngineInfo] | None = None
    """The workload's engine record by engine name (None: the registered engine's ``info()``)."""


class RunInterruptedError(EcocomputeError):
    """Ctrl-C or a kill: finished windows are saved; ``--resume`` continues."""

    exit_code = 130


@dataclass(frozen=True)
class Result:
    """The written submission and where it is."""

    path: Path
    submission: Submission

    @property
    def passes_gate(self) -> bool:
        """Whether every measured precision's CV is within the validator's gate (the dataset's gated tier)."""
        measured = [m for m in self.submission.payload.measurements if m.windows]
        return bool(measured) and all(passes_gate([w.energy_j / w.tokens for w in m.windows]) for m in measured)


def collect(config: RunConfig, dest: Destination, env: Environment | None = None) -> Result:
    """Measure, checkpointing after every window, and write the (signed) submission."""
    config.check()
    dest.check()
    _apply_process_settings(config)
    env = env or Environment()
    gpu = env.open_gpu(config.device_index, config.gpu_vendor, env.clock)
    try:
        info = gpu.fingerprint()
        method = refuse_unmeasurable(info, gpu)
        refuse_without_fp8(info, config.precisions, config.torch_device)
        others = _refuse_shared(gpu, config)
        env.view.checklist(gpu_checklist(info, gpu, others, config.allow_shared))
        software = _software(config, env, info.nvml_version)
        store = StateStore(dest.state_dir or default_state_dir())
        pinned = pinned_versions(info, software, torchao_pin(config, env))
        state = _open_state(store, config, info, dest.resume, env, pinned)
        session = Session(config, dest, env, gpu, store, state, method)
        try:
            outcome = session.run()
        except KeyboardInterrupt:
            done = sum(len(m.windows) for m in state.measurements.values())
            if not done:
                raise RunInterruptedError("interrupted before any window finished: nothing was saved") from None
            raise RunInterruptedError(
                f"interrupted; {done} finished windows are saved in {store.path(state.key)}: "
                "run the same command with --resume to continue"
            ) from None
        submission = build_submission(config, dest, outcome, info, software, env.clock.utc_now())
    finally:
        gpu.close()
    submission = sign_submission(submission, dest.key, dest.signer) if dest.key else submission
    path = dest.out_dir / Path(*submission_relpath(submission).parts)
    write_submission(submission, path)
    store.remove(state.key)
    return Result(path, submission)


def pinned_versions(info: GpuInfo, software: Any, torchao: str | None = None) -> dict[str, Any]:
    """What a resumed run must share with the session that started it, besides its settings and GPU.

    ``torchao``: its version, for a run with an FP8 precision (:func:`torchao_pin`); torchao's kernels are what
    FP8 measures, so windows of two torchao versions never mix in one measurement.
    """
    pinned = {
        "driver_version": info.driver_version, "power_limit_w": info.power_limit_w, "torch": software.torch,
        "transformers": software.transformers, "bitsandbytes": software.bitsandbytes,
        "collector_version": __version__,
    }  # fmt: skip
    if torchao is not None:
        pinned["torchao"] = torchao
    return pinned


def _software(config: RunConfig, env: Environment, nvml_version: str) -> Any:
    """``payload.software``; for an engine that runs without torch, torch is not imported to say it."""
    if engine_spec(config.engine).runs_torch:
        return env.software(nvml_version)
    return env.software(nvml_version, engine_build=engine_record(config, env).build)


def engine_record(config: RunConfig, env: Environment) -> EngineInfo:
    """What the workload records of the run's engine: its name, version and build flags."""
    if env.engine_info is not None:
        return env.engine_info(config.engine)
    return engine_spec(config.engine).info()


def torchao_pin(config: RunConfig, env: Environment) -> str | None:
    """Torchao's version as the workload records it, where the run has an FP8 precision; else None."""
    if not any(SPECS[p].torchao is not None for p in config.precisions):
        return None
    return engine_record(config, env).build.get("torchao", "not installed")


def _apply_process_settings(config: RunConfig) -> None:
    """CPU affinity and niceness of this (the generating) process, before torch starts its threads."""
    if config.cpu_affinity is not None:
        process.apply_cpu_affinity(config.cpu_affinity)
    if config.nice is not None:
        process.apply_nice(config.nice)


def _open_state(store: StateStore, config: RunConfig, info: GpuInfo, resume: bool, env: Environment,
                pinned: dict[str, Any]) -> RunState:  # fmt: skip
    identity = {**config.identity(), "gpu_uuid_sha256": info.gpu_uuid_sha256}
    fresh = RunState(
        config=identity,
        submission_id=new_submission_id(env.clock.utc_now()),
        started_at=env.clock.utc_now(),
        measurements={p: MeasurementState(p) for p in config.precisions},
        pinned_versions=pinned,
    )
    saved = store.load(fresh.key)
    if saved is None and resume:
        env.view.note(f"no unfinished run with these settings in {store.directory}: starting a new one")
    done = 0 if saved is None else sum(len(m.windows) for m in saved.measurements.values())
    if saved is not None and not resume and done > 0:
        raise RunStateError(
            f"an unfinished run with these settings ({done} windows) is saved in {store.path(fresh.key)}: "
            "pass --resume to continue it, or delete that file to start over"
        )
    if saved is not None and resume:
        changed = pinned_differences(saved.pinned_versions, pinned) if done > 0 else []
        if changed:
            raise RunStateError(
                f"the saved run in {store.path(fresh.key)} was measured with another stack or power limit "
                f"({'; '.join(changed)}): a resumed run cannot mix them; restore them, or delete that file "
                "to start over"
            )
        saved.sessions += 1
        saved.pinned_versions = pinned
        return saved
    return fresh


def _refuse_shared(gpu: GpuMonitor, config: RunConfig) -> int | None:
    """Before this process touches the GPU, any compute process on it belongs to someone else: how many."""
    pids = gpu.compute_processes()
    others = other_processes(pids, os.getpid(), own_contexts=0)
    if others and not config.allow_shared:
        listed = ", ".join(str(p) for p in (pids or [])[:8])
        raise GpuBusyError(
            f"{others} other process(es) use GPU {config.device_index} (PIDs {listed}): their energy would be "
            "counted as ours; stop them, or pass --allow-shared (recorded in the submission)"
        )
    return others


class Session:
    """The measuring part of one invocation (a resumed run has several sessions)."""

    def __init__(self, config: RunConfig, dest: Destination, env: Environment, gpu: GpuMonitor,
                 store: StateStore, state: RunState, method: EnergyMethod) -> None:  # fmt: skip
        self.config, self.dest, self.env, self.gpu = config, dest, env, gpu
        self.method = method
        self.store, self.state = store, state
        self.view = env.view
        self.idle_power_w_after: float | None = None
        self.idle_model_loaded_after: bool | None = None
        self.attn_implementation: str | None = None
        self.notes: list[str] = []
        self.compiled: dict[Precision, bool] = {}
        self.spec = engine_spec(config.engine)
        self.device = config.torch_device or self.spec.device_for(gpu)
        self.backend = (env.make_backend or self.spec.make_backend)(config, dest, self.device)
        self.sampler = PowerSampler(gpu, env.clock)
        self.spread: dict[Precision, SpreadVerdict] = {}
        own = 1 if self.device.startswith("cuda") else 0
        self.engine = Engine(gpu, self.sampler, env.clock, config.engine_config(), on_progress=self._progress,
                             on_spread=self._spread, own_contexts=own)  # fmt: skip

    @property
    def idle_power_w(self) -> float:
        """Idle power so far (before, or 0 when not yet measured)."""
        return self.state.idle_power_w_before or 0.0

    def _progress(self, m: MeasurementState, window: Any, warmup: bool) -> None:
        self.store.save(self.state)
        self.view.update(m, window, warmup, self.idle_power_w)

    def _spread(self, m: MeasurementState, verdict: SpreadVerdict) -> None:
        self.spread[m.precision] = verdict
        if self.config.on_spread is OnSpread.STOP:
            then = "stopping once every precision has the windows a valid file needs (--on-spread stop)"
        else:
            then = "measuring on to --max-windows (--on-spread continue)"
        self.view.note(f"{advice(m.precision.value, verdict)}; {then}")

    def pending(self) -> list[Precision]:
        """Precisions with windows (or a perplexity) still to measure."""
        return [p for p, m in self.state.measurements.items() if _needs_work(m, self.config.perplexity)]

    def run(self) -> RunOutcome:
        """Measure every pending precision, then idle power after (always with a model loaded if one loads)."""
        pending = self.pending()
        if self.state.order is None:
            fits = self.config.order == Order.INTERLEAVED or (
                self.config.order == Order.AUTO and self.backend.fits_together(pending)
            )
            self.state.order = Order.INTERLEAVED if fits else Order.BLOCKED
        self.view.start(list(self.state.measurements.values()), self.config.max_windows, self.config.warmup_windows)
        self.sampler.start()
        try:
            if self.state.order is Order.INTERLEAVED:
                self._interleaved(pending)
            else:
                self._blocked(pending)
            if self.state.idle_power_w_before is None or self.idle_power_w_after is None:
                self._idle_reloaded()
        finally:
            self.sampler.stop()
            self.view.stop()
        return self.outcome()

    def outcome(self) -> RunOutcome:
        """What the run hands on to the submission."""
        s = self.state
        idle = IdleReadings(s.idle_power_w_before or 0.0, s.idle_model_loaded_before, self.idle_power_w_after or 0.0,
                            self.idle_model_loaded_after)  # fmt: skip
        return RunOutcome(
            state=s, idle=idle, model=self.backend.source, prompt_sha256=self.backend.prompt_sha256,
            device=self.device, notes=tuple(self.notes), compiled=dict(self.compiled),
            attn_implementation=self.attn_implementation, power_sampling_hz=round(1.0 / self.sampler.period_s, 6),
            random_delay_max_s=self.engine.config.random_delay_max_s, energy=self.method,
            engine=self.engine_record(), quantization_types={p: self.spec.quantization_type(p) for p in s.measurements},
        )  # fmt: skip

    def engine_record(self) -> EngineInfo:
        """What the workload records of the engine: its name, version and build flags."""
        return engine_record(self.config, self.env)

    def _interleaved(self, pending: list[Precision]) -> None:
        runners = {p: r for p in pending if (r := self._load(p)) is not None}
        try:
            self._idle("before", runners)
            self.engine.run(dict(runners), self.state.measurements)
            self.store.save(self.state)
            self._note_compiled(runners)
            self._perplexity(runners)
            self._idle("after", self._alive(runners))
        finally:
            for runner in runners.values():
                runner.close()

    def _blocked(self, pending: list[Precision]) -> None:
        for i, precision in enumerate(pending):
            if i > 0 and self.config.cooldown_s > 0:
                self.view.note(f"cooling down for {self.config.cooldown_s:.0f} s")
                self.env.clock.sleep(self.config.cooldown_s)
            runner = self._load(precision)
            if runner is None:
                continue
            try:
                self._idle("before", {precision: runner})
                self.engine.run({precision: runner}, self.state.measurements)
                self.store.save(self.state)
                self._note_compiled({precision: runner})
                self._perplexity({precision: runner})
                if i == len(pending) - 1:
                    self._idle("after", self._alive({precision: runner}))
            finally:
                runner.close()

    def _alive(self, runners: dict[Precision, LoadedRunner]) -> dict[Precision, LoadedRunner]:
        """The runners that did not fail (a failed runner is closed: its model is gone)."""
        return {p: r for p, r in runners.items() if self.state.measurements[p].error is None}

    def _idle_reloaded(self) -> None:
        """Idle power still missing (all windows done in an earlier session, the last precision failed, ...).

        Reload what the windows ran with (all good precisions when interleaved, the last good one when
        blocked); when none loads, measure without a model and record ``model_loaded_*: false``.
        """
        good = [p for p, m in self.state.measurements.items() if m.error is None]
        wanted = good if self.state.order is Order.INTERLEAVED else good[-1:]
        runners: dict[Precision, LoadedRunner] = {}
        try:
            for precision in wanted:
                self.view.note(f"loading {precision.value} to measure idle power with a model loaded")
                try:
                    runners[precision] = self.backend.load(precision)
                except Exception as exc:  # the measurement stands; the idle reading says it had no model
                    self.notes.append(f"reloading {precision.value} for idle power failed: {describe_error(exc)}")
            self._idle("before", runners, force=True)
            self._idle("after", runners, force=True)
        finally:
            for runner in runners.values():
                runner.close()

    def _load(self, precision: Precision) -> LoadedRunner | None:
        m = self.state.measurements[precision]
        self.view.note(f"loading {precision.value}")
        try:
            runner = self.backend.load(precision)
        except Exception as exc:  # OOM, no bitsandbytes kernel, ...: recorded; the other precisions go on
            m.error, m.finished = describe_error(exc), True
            m.quantization = SPECS[precision].bnb
            self._progress(m, None, False)
            return None
        m.quantization = runner.quantization
        m.memory_allocated_mib = round(runner.memory_mib, 3)
        self.attn_implementation = self.attn_implementation or runner.attn_implementation
        return runner

    def _idle(self, when: Literal["before", "after"], runners: dict[Precision, LoadedRunner],
              force: bool = False) -> None:  # fmt: skip
        """Idle power with ``runners`` loaded; without any, only when ``force`` (the last resort)."""
        done = self.state.idle_power_w_before if when == "before" else self.idle_power_w_after
        if done is not None or (not runners and not force):
            return
        loaded = bool(runners)
        what = "with the model loaded" if loaded else "WITHOUT a model: none could be loaded"
        self.view.note(
            f"measuring idle power ({when}, {what}) for {self.config.idle_s:.0f} s "
            f"after {self.config.idle_settle_s:g} s to settle"
        )
        idle_w = self.engine.measure_idle_w(self.config.idle_s, self.config.idle_settle_s, list(runners.values()))
        power_w = round(idle_w, 3)
        if not loaded:
            self.notes.append(f"idle power {when} was measured without a model loaded (none could be loaded).")
        if when == "before":
            self.state.idle_power_w_before = power_w
            self.state.idle_model_loaded_before = loaded
            self.store.save(self.state)
        else:
            self.idle_power_w_after, self.idle_model_loaded_after = power_w, loaded

    def _note_compiled(self, runners: dict[Precision, LoadedRunner]) -> None:
        """With a compiled stack, remember which models torch.compile actually ran."""
        if self.config.stack.static_cache:
            self.compiled.update({p: r.compiled for p, r in runners.items()})

    def _perplexity(self, runners: dict[Precision, LoadedRunner]) -> None:
        if not self.config.perplexity:
            return
        text, sha = corpus()
        for precision, runner in runners.items():
            m = self.state.measurements[precision]
            if m.error or m.quality is not None:
                continue
            self.view.note(f"perplexity of {precision.value}")
            try:
                value, tokens = self.backend.perplexity(runner, text)
                m.quality = Quality(perplexity=value, corpus_sha256=sha, tokens_evaluated=tokens)
            except Exception as exc:  # the energy windows stand; the note says why quality is missing
                self.notes.append(f"perplexity of {precision.value} failed: {describe_error(exc)}")
            self.store.save(self.state)


def _needs_work(m: MeasurementState, perplexity: bool) -> bool:
    if not m.finished:
        return True
    return perplexity and m.error is None and m.quality is None
