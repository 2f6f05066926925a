"""One collection run, end to end: checks, models, idle power, windows, submission.

:func:`collect` opens the GPU, refuses a shared one (unless allowed), loads each precision (a failure is
recorded and the rest go on), measures idle power with the models loaded, runs the engine interleaved
(or blocked with a cooldown when the precisions do not fit in memory together), checkpoints after
every window, and writes the signed submission to ``<out>/<login>/<gpu>/<id>.json``.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from ecocompute import __version__
from ecocompute.collector import fingerprint
from ecocompute.collector.archs import load_arch
from ecocompute.collector.clock import Clock, SystemClock
from ecocompute.collector.corpus import corpus
from ecocompute.collector.display import SilentView, View
from ecocompute.collector.engine import Engine, EngineConfig, Runner, describe_error, other_processes
from ecocompute.collector.errors import GpuBusyError, RunStateError
from ecocompute.collector.gpu import GpuInfo, GpuMonitor
from ecocompute.collector.precisions import SPECS
from ecocompute.collector.sampler import PowerSampler
from ecocompute.collector.state import MeasurementState, RunState, StateStore, default_state_dir, new_submission_id
from ecocompute.schema.errors import EcocomputeError, UsageError
from ecocompute.schema.io import write_submission
from ecocompute.schema.models import (
    GITHUB_LOGIN_PATTERN,
    SCHEMA_VERSION,
    CollectorInfo,
    Contributor,
    Idle,
    Measurement,
    Method,
    Payload,
    Precision,
    Quality,
    Stack,
    Submission,
    Workload,
)
from ecocompute.schema.paths import submission_relpath
from ecocompute.schema.signing import sign_submission

Order = Literal["auto", "interleaved", "blocked"]
TEST_RUN_NOTE = "TEST RUN on {device}: the model did not run on the measured GPU; not a measurement."


@dataclass(frozen=True)
class RunConfig:
    """What to measure and how; everything here names the run's state file (see :meth:`identity`)."""

    precisions: tuple[Precision, ...]
    arch: str | None = None
    model: str | None = None
    batch_size: int = 1
    prompt_tokens: int = 128
    new_tokens: int = 256
    window_s: float = 10.0
    warmup_windows: int = 1
    min_windows: int = 5
    max_windows: int = 30
    target_ci_pct: float = 0.5
    stack: Stack = Stack.EAGER
    order: Order = "auto"
    cooldown_s: float = 30.0
    idle_s: float = 10.0
    seed: int = 0
    device_index: int = 0
    allow_shared: bool = False
    perplexity: bool = False
    torch_device: str | None = None

    def check(self) -> None:
        """Raise UsageError on settings that cannot make a valid submission."""
        problems = []
        if (self.arch is None) == (self.model is None):
            problems.append("pass exactly one of --arch NAME or --model HF_ID_OR_PATH")
        for name in ("batch_size", "prompt_tokens", "new_tokens", "min_windows", "max_windows"):
            if getattr(self, name) < 1:
                problems.append(f"--{name.replace('_', '-')} must be at least 1")
        for name in ("window_s", "idle_s", "target_ci_pct"):
            if not getattr(self, name) > 0:
                problems.append(f"--{name.replace('_', '-')} must be positive")
        if self.warmup_windows < 0 or self.cooldown_s < 0:
            problems.append("--warmup-windows and --cooldown-s cannot be negative")
        if self.min_windows > self.max_windows:
            problems.append(f"--min-windows {self.min_windows} is above --max-windows {self.max_windows}")
        if self.arch is not None:
            load_arch(self.arch)  # ModelError listing the shipped architectures
        if self.perplexity and self.arch is not None:
            problems.append("--perplexity needs pretrained weights (--model): random-init weights have none to test")
        if problems:
            raise UsageError("; ".join(problems))

    def identity(self) -> dict[str, Any]:
        """The settings as JSON values (the state file's key is their hash)."""
        values = asdict(self)
        values["precisions"] = [p.value for p in self.precisions]
        values["stack"] = self.stack.value
        return values

    def engine_config(self) -> EngineConfig:
        """The engine's share of the settings."""
        return EngineConfig(
            window_s=self.window_s, warmup_windows=self.warmup_windows, min_windows=self.min_windows,
            max_windows=self.max_windows, target_ci_pct=self.target_ci_pct, seed=self.seed,
        )  # fmt: skip


@dataclass(frozen=True)
class Destination:
    """Who signs, and where the submission, the state file and random-init weights go."""

    signer: str
    key: Path | None = None
    out_dir: Path = Path("submissions")
    state_dir: Path | None = None
    weights_cache: Path | None = None
    resume: bool = False

    def check(self) -> None:
        """Fail now, not after an hour of measuring, on a bad login or key."""
        if not re.fullmatch(GITHUB_LOGIN_PATTERN, self.signer):
            raise UsageError(f"--signer {self.signer!r} is not a GitHub login")
        if self.key is not None:
            if not self.key.is_file():
                raise UsageError(f"SSH key {self.key} does not exist: pass your private key, e.g. ~/.ssh/id_ed25519")
            if shutil.which("ssh-keygen") is None:
                raise UsageError("ssh-keygen is not installed: install OpenSSH, or drop --key and sign later")


class LoadedRunner(Runner, Protocol):
    """A runner as a backend returns it: also its quantization config, memory and attention kernel."""

    @property
    def quantization(self) -> dict[str, Any] | None:
        """The full bitsandbytes config, or None."""
        ...

    @property
    def memory_mib(self) -> float:
        """Memory footprint of the model."""
        ...

    @property
    def attn_implementation(self) -> str | None:
        """The attention implementation in use."""
        ...

    @property
    def compiled(self) -> bool:
        """Whether generate has compiled the model's forward (compiled stack, CUDA, a compilable quantizer)."""
        ...


class ModelInfo(Protocol):
    """Identity and size of the model (``hf.ModelSource``)."""

    @property
    def model_id(self) -> str:
        """Hugging Face id, local path or ``random-init/<arch>``."""
        ...

    @property
    def revision(self) -> str | None:
        """The checkpoint's commit, when known."""
        ...

    @property
    def weights(self) -> Literal["pretrained", "random-init"]:
        """Where the weights come from."""
        ...

    @property
    def architecture(self) -> str:
        """Shipped architecture name, or the model's."""
        ...

    @property
    def params_total(self) -> int:
        """Parameters of the unquantized model."""
        ...


class Backend(Protocol):
    """Loads one model at each precision (``hf.HfBackend``)."""

    @property
    def source(self) -> ModelInfo:
        """The model."""
        ...

    @property
    def prompt_sha256(self) -> str:
        """Hash of the prompt token ids."""
        ...

    def load(self, precision: Precision) -> LoadedRunner:
        """Load ``precision``; raises on any failure."""
        ...

    def fits_together(self, precisions: list[Precision]) -> bool:
        """Whether these precisions fit in GPU memory at once."""
        ...

    def perplexity(self, runner: Any, text: str) -> tuple[float, int]:
        """(perplexity, tokens predicted) of ``text``."""
        ...


def hf_backend(config: RunConfig, dest: Destination, device: str) -> Backend:
    """The transformers backend (imports torch)."""
    from ecocompute.collector import hf

    if config.arch is not None:
        source = hf.random_init_source(load_arch(config.arch), config.seed, dest.weights_cache, device)
    else:
        assert config.model is not None  # noqa: S101 - RunConfig.check
        source = hf.pretrained_source(config.model)
    return hf.HfBackend(source, device=device, batch_size=config.batch_size, prompt_tokens=config.prompt_tokens,
                        new_tokens=config.new_tokens, stack=config.stack, seed=config.seed)  # fmt: skip


def cuda_device_for(gpu: GpuMonitor) -> str:
    """The torch device of the NVML GPU (imports torch)."""
    from ecocompute.collector.hf import cuda_device

    return cuda_device(gpu.uuid(), gpu.index)


def _open_nvml(index: int) -> GpuMonitor:
    from ecocompute.collector.nvml import NvmlGpu

    return NvmlGpu(index)


@dataclass
class Environment:
    """The world a run touches; tests replace parts of it (a fake NVML, a failing backend)."""

    open_gpu: Callable[[int], GpuMonitor] = _open_nvml
    make_backend: Callable[[RunConfig, Destination, str], Backend] = hf_backend
    clock: Clock = field(default_factory=SystemClock)
    view: View = field(default_factory=SilentView)
    software: Callable[[str], Any] = fingerprint.software


class RunInterruptedError(EcocomputeError):
    """Ctrl-C or a kill: finished windows are saved; ``--resume`` continues."""

    exit_code = 130


@dataclass(frozen=True)
class Result:
    """The written submission and where it is."""

    path: Path
    submission: Submission


def collect(config: RunConfig, dest: Destination, env: Environment | None = None) -> Result:
    """Measure, checkpointing after every window, and write the (signed) submission."""
    config.check()
    dest.check()
    env = env or Environment()
    gpu = env.open_gpu(config.device_index)
    try:
        info = gpu.fingerprint()
        _refuse_shared(gpu, config)
        store = StateStore(dest.state_dir or default_state_dir())
        state = _open_state(store, config, info, dest.resume, env)
        session = Session(config, dest, env, gpu, store, state)
        try:
            session.run()
        except KeyboardInterrupt:
            done = sum(len(m.windows) for m in state.measurements.values())
            if not done:
                raise RunInterruptedError("interrupted before any window finished: nothing was saved") from None
            raise RunInterruptedError(
                f"interrupted; {done} finished windows are saved in {store.path(state.key)}: "
                "run the same command with --resume to continue"
            ) from None
        submission = build_submission(config, dest, env, session, info)
    finally:
        gpu.close()
    submission = sign_submission(submission, dest.key, dest.signer) if dest.key else submission
    path = dest.out_dir / Path(*submission_relpath(submission).parts)
    write_submission(submission, path)
    store.remove(state.key)
    return Result(path, submission)


def _open_state(store: StateStore, config: RunConfig, info: GpuInfo, resume: bool, env: Environment) -> RunState:
    identity = {**config.identity(), "gpu_uuid_sha256": info.gpu_uuid_sha256}
    fresh = RunState(
        config=identity,
        submission_id=new_submission_id(env.clock.utc_now()),
        started_at=env.clock.utc_now(),
        measurements={p: MeasurementState(p) for p in config.precisions},
    )
    saved = store.load(fresh.key)
    if saved is None and resume:
        raise RunStateError(
            f"nothing to resume: no unfinished run with these settings in {store.directory}; "
            "run without --resume to start one"
        )
    done = 0 if saved is None else sum(len(m.windows) for m in saved.measurements.values())
    if saved is not None and not resume and done > 0:
        raise RunStateError(
            f"an unfinished run with these settings ({done} windows) is saved in {store.path(fresh.key)}: "
            "pass --resume to continue it, or delete that file to start over"
        )
    if saved is not None and resume:
        saved.sessions += 1
        return saved
    return fresh


def _refuse_shared(gpu: GpuMonitor, config: RunConfig) -> None:
    """Before this process touches the GPU, any compute process on it belongs to someone else."""
    pids = gpu.compute_processes()
    others = other_processes(pids, os.getpid(), own_contexts=0)
    if others and not config.allow_shared:
        listed = ", ".join(str(p) for p in (pids or [])[:8])
        raise GpuBusyError(
            f"{others} other process(es) use GPU {config.device_index} (PIDs {listed}): their energy would be "
            "counted as ours; stop them, or pass --allow-shared (recorded in the submission)"
        )


class Session:
    """The measuring part of one invocation (a resumed run has several sessions)."""

    def __init__(self, config: RunConfig, dest: Destination, env: Environment, gpu: GpuMonitor,
                 store: StateStore, state: RunState) -> None:  # fmt: skip
        self.config, self.dest, self.env, self.gpu = config, dest, env, gpu
        self.store, self.state = store, state
        self.view = env.view
        self.idle_power_w_after: float | None = None
        self.attn_implementation: str | None = None
        self.notes: list[str] = []
        self.compiled: dict[Precision, bool] = {}
        self.device = config.torch_device or cuda_device_for(gpu)
        self.backend = env.make_backend(config, dest, self.device)
        self.sampler = PowerSampler(gpu, env.clock)
        self.engine = Engine(gpu, self.sampler, env.clock, config.engine_config(), on_progress=self._progress,
                             own_contexts=1 if self.device.startswith("cuda") else 0)  # fmt: skip

    @property
    def idle_power_w(self) -> float:
        """Idle power so far (before, or 0 when not yet measured)."""
        return self.state.idle_power_w_before or 0.0

    def _progress(self, m: MeasurementState, window: Any, warmup: bool) -> None:
        self.store.save(self.state)
        self.view.update(m, window, warmup, self.idle_power_w)

    def pending(self) -> list[Precision]:
        """Precisions with windows (or a perplexity) still to measure."""
        return [p for p, m in self.state.measurements.items() if _needs_work(m, self.config.perplexity)]

    def run(self) -> None:
        """Measure every pending precision, then idle power after."""
        pending = self.pending()
        if self.state.order is None:
            fits = self.config.order == "interleaved" or (
                self.config.order == "auto" and self.backend.fits_together(pending)
            )
            self.state.order = "interleaved" if fits else "blocked"
        self.view.start(list(self.state.measurements.values()), self.config.max_windows)
        self.sampler.start()
        try:
            if self.state.order == "interleaved":
                self._interleaved(pending)
            else:
                self._blocked(pending)
            if self.idle_power_w_after is None:
                self._idle("after")
        finally:
            self.sampler.stop()
            self.view.stop()

    def _interleaved(self, pending: list[Precision]) -> None:
        runners = {p: r for p in pending if (r := self._load(p)) is not None}
        try:
            self._idle("before")
            self.engine.run(dict(runners), self.state.measurements)
            self._note_compiled(runners)
            self._perplexity(runners)
            if runners:
                self._idle("after")
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
                self._idle("before")
                self.engine.run({precision: runner}, self.state.measurements)
                self._note_compiled({precision: runner})
                self._perplexity({precision: runner})
                if i == len(pending) - 1:
                    self._idle("after")
            finally:
                runner.close()
        self._idle("before")  # only when no precision loaded at all

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

    def _idle(self, when: Literal["before", "after"]) -> None:
        if when == "before" and self.state.idle_power_w_before is not None:
            return
        self.view.note(f"measuring idle power ({when}) for {self.config.idle_s:.0f} s")
        power_w = round(self.engine.measure_idle_w(self.config.idle_s), 3)
        if when == "before":
            self.state.idle_power_w_before = power_w
            self.store.save(self.state)
        else:
            self.idle_power_w_after = power_w

    def _note_compiled(self, runners: dict[Precision, LoadedRunner]) -> None:
        """With the compiled stack, remember which models transformers actually compiled."""
        if self.config.stack is Stack.COMPILED:
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


def git_sha() -> str | None:
    """The commit of the ecocompute source tree, when it runs from a git checkout."""
    git = shutil.which("git")
    if git is None:
        return None
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        proc = subprocess.run(  # noqa: S603 - fixed program and arguments
            [git, "-C", str(Path(__file__).resolve().parent), "rev-parse", "HEAD"],
            capture_output=True, text=True, timeout=5, check=False,
        )  # fmt: skip
        sha = proc.stdout.strip()
        if proc.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}", sha):
            return sha
    return None


def build_submission(config: RunConfig, dest: Destination, env: Environment, session: Session,
                     info: GpuInfo) -> Submission:  # fmt: skip
    """The unsigned submission of a finished run."""
    state, backend = session.state, session.backend
    source = backend.source
    test_run = not session.device.startswith("cuda")
    notes = ([TEST_RUN_NOTE.format(device=session.device)] if test_run else []) + session.notes
    if session.compiled:
        done = [p.value for p, c in session.compiled.items() if c]
        skipped = [p.value for p, c in session.compiled.items() if not c]
        notes.append(f"compiled stack: torch.compile used for {', '.join(done) or 'none'}"
                     + (f"; not for {', '.join(skipped)}" if skipped else "") + ".")  # fmt: skip
    if state.sessions > 1:
        notes.append(f"measured in {state.sessions} sessions (resumed with --resume)")
    payload = Payload(
        submission_id=state.submission_id,
        created_at=env.clock.utc_now(),
        contributor=Contributor(github=dest.signer),
        collector=CollectorInfo(version=__version__, git_sha=git_sha()),
        hardware=fingerprint.hardware(info),
        software=env.software(info.nvml_version),
        workload=Workload(
            model_id=source.model_id, model_revision=source.revision, weights=source.weights,
            architecture=source.architecture, params_total=source.params_total, batch_size=config.batch_size,
            prompt_tokens=config.prompt_tokens, new_tokens=config.new_tokens, decoding="greedy",
            prompt_sha256=backend.prompt_sha256, stack=config.stack,
            attn_implementation=session.attn_implementation,
        ),
        method=Method(
            energy_source="nvml_total_energy_counter", power_sampling_hz=round(1.0 / session.sampler.period_s, 6),
            window_min_s=config.window_s, warmup_windows=config.warmup_windows, min_windows=config.min_windows,
            max_windows=config.max_windows, target_ci_pct=config.target_ci_pct,
            order="interleaved" if state.order == "interleaved" else "blocked",
            random_delay_max_s=session.engine.config.random_delay_max_s,
            cooldown_s=config.cooldown_s if state.order == "blocked" else 0.0,
            allow_shared=config.allow_shared, seed=config.seed,
        ),
        idle=Idle(
            power_w_before=state.idle_power_w_before or 0.0,
            power_w_after=session.idle_power_w_after or 0.0,
            duration_s=config.idle_s,
        ),
        measurements=[_measurement(m) for m in state.measurements.values()],
        notes=" ".join(notes)[:4000] or None,
        example=test_run,
    )  # fmt: skip
    return Submission(schema_version=SCHEMA_VERSION, payload=payload)


def _measurement(m: MeasurementState) -> Measurement:
    return Measurement(
        precision=m.precision, quantization=m.quantization, windows=m.windows, warmup=m.warmup,
        quality=m.quality, error=m.error, memory_allocated_mib=m.memory_allocated_mib,
    )  # fmt: skip
