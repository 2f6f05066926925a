"""The submission of a finished run: assembled from its settings, the run's :class:`RunOutcome` and the GPU.

Data flows one way: the run hands its outcome over and this module reads nothing else of it.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecocompute import __version__
from ecocompute.collector.device.gpu import NVML_COUNTER, EnergyMethod, EnergySource, GpuInfo
from ecocompute.collector.errors import NoEnergyCounterError
from ecocompute.collector.host import process
from ecocompute.collector.run import fingerprint
from ecocompute.collector.run.config import Destination, RunConfig
from ecocompute.collector.run.spread import GATE_CV_PCT
from ecocompute.collector.run.state import MeasurementState, Order, RunState
from ecocompute.schema.derive import derive
from ecocompute.schema.models import (
    SCHEMA_VERSION,
    CollectorInfo,
    Contributor,
    Idle,
    Measurement,
    Method,
    Payload,
    Precision,
    Software,
    Submission,
    Workload,
)

if TYPE_CHECKING:
    from ecocompute.collector.model.backend import ModelInfo
    from ecocompute.collector.model.engines import EngineInfo

TEST_RUN_NOTE = "TEST RUN on {device}: the model did not run on the measured GPU; not a measurement."


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


@dataclass(frozen=True)
class IdleReadings:
    """Idle power before and after the windows, each with whether a model was loaded while it was read."""

    power_w_before: float
    model_loaded_before: bool | None
    power_w_after: float
    model_loaded_after: bool | None


@dataclass(frozen=True)
class RunOutcome:
    """What a finished run hands on: everything the submission is made of, besides the settings and the GPU."""

    state: RunState
    idle: IdleReadings
    model: ModelInfo
    prompt_sha256: str
    device: str
    notes: tuple[str, ...]
    compiled: dict[Precision, bool]
    attn_implementation: str | None
    power_sampling_hz: float
    random_delay_max_s: float
    energy: EnergyMethod = NVML_COUNTER
    engine: EngineInfo | None = None
    quantization_types: dict[Precision, str | None] = field(default_factory=dict)


def build_submission(config: RunConfig, dest: Destination, outcome: RunOutcome, info: GpuInfo, software: Software,
                     created_at: datetime) -> Submission:  # fmt: skip
    """The unsigned submission of a finished run."""
    state, source = outcome.state, outcome.model
    test_run = not outcome.device.startswith("cuda")
    notes = ([TEST_RUN_NOTE.format(device=outcome.device)] if test_run else []) + list(outcome.notes)
    if outcome.compiled:
        done = [p.value for p, c in outcome.compiled.items() if c]
        skipped = [p.value for p, c in outcome.compiled.items() if not c]
        notes.append(f"{config.stack.value} stack: torch.compile used for {', '.join(done) or 'none'}"
                     + (f"; not for {', '.join(skipped)}" if skipped else "") + ".")  # fmt: skip
    wide = [(m.precision.value, cv) for m in state.measurements.values()
            if m.windows and (cv := _cv_pct(m)) > GATE_CV_PCT]  # fmt: skip
    if wide:
        listed = ", ".join(f"{name} {cv:.2f}%" for name, cv in wide)
        notes.append(f"CV of J/token above the {GATE_CV_PCT:g}% gate ({listed}): for the dataset's all tier.")
    if state.sessions > 1:
        notes.append(f"measured in {state.sessions} sessions (resumed with --resume)")
    interleaved = state.order is Order.INTERLEAVED
    payload = Payload(
        submission_id=state.submission_id,
        created_at=created_at,
        contributor=Contributor(github=dest.signer),
        collector=CollectorInfo(version=__version__, git_sha=git_sha()),
        hardware=fingerprint.hardware(info),
        software=software,
        workload=Workload(
            model_id=source.model_id, model_revision=source.revision, weights=source.weights,
            architecture=source.architecture, params_total=source.params_total, batch_size=config.batch_size,
            prompt_tokens=config.prompt_tokens, new_tokens=config.new_tokens, decoding="greedy",
            prompt_sha256=outcome.prompt_sha256, stack=config.stack,
            attn_implementation=outcome.attn_implementation,
            **_engine_fields(outcome.engine),
        ),
        method=Method(
            energy_source=_energy_source(outcome.energy), counter_absent_reason=outcome.energy.reason,
            power_sampling_hz=outcome.power_sampling_hz,
            window_min_s=config.window_s, warmup_windows=config.warmup_windows, min_windows=config.min_windows,
            max_windows=config.max_windows, target_ci_pct=config.target_ci_pct,
            order="interleaved" if interleaved else "blocked", random_delay_max_s=outcome.random_delay_max_s,
            cooldown_s=0.0 if interleaved else config.cooldown_s,
            allow_shared=config.allow_shared, seed=config.seed, idle_settle_s=config.idle_settle_s,
            python_gc="paused-in-windows" if config.pause_gc else "running",
            cpu_affinity=None if config.cpu_affinity is None else list(config.cpu_affinity),
            nice=process.current_nice(),
        ),
        idle=Idle(
            power_w_before=outcome.idle.power_w_before, power_w_after=outcome.idle.power_w_after,
            duration_s=config.idle_s, model_loaded_before=outcome.idle.model_loaded_before,
            model_loaded_after=outcome.idle.model_loaded_after,
        ),
        measurements=[_measurement(m, outcome.compiled.get(m.precision), outcome.quantization_types.get(m.precision))
                      for m in state.measurements.values()],
        notes=" ".join(notes)[:4000] or None,
        example=test_run,
    )  # fmt: skip
    return Submission(schema_version=SCHEMA_VERSION, payload=payload)


def _energy_source(method: EnergyMethod) -> EnergySource:
    if method.source is None:  # the preflight refuses such a GPU before anything is measured
        raise NoEnergyCounterError(f"no energy source to record: {method.reason}")
    return method.source


def _cv_pct(m: MeasurementState) -> float:
    return derive(m.windows, 0.0).cv_pct


def _engine_fields(engine: EngineInfo | None) -> dict[str, Any]:
    if engine is None:
        return {}
    flags = {k[:64]: v[:512] for k, v in engine.build.items() if k and v}
    return {"engine": engine.name, "engine_version": engine.version[:512] or None, "engine_build_flags": flags or None}


def _measurement(m: MeasurementState, compiled: bool | None, quantization_type: str | None) -> Measurement:
    return Measurement(
        precision=m.precision, quantization=m.quantization, windows=m.windows, warmup=m.warmup,
        quality=m.quality, error=m.error, memory_allocated_mib=m.memory_allocated_mib, compiled=compiled,
        quantization_type=quantization_type,
    )  # fmt: skip
