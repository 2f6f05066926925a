"""The submission of a finished run: payload assembled from the run's state, the session and the GPU."""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from ecocompute import __version__
from ecocompute.collector import fingerprint, process
from ecocompute.collector.config import Destination, RunConfig
from ecocompute.collector.gpu import GpuInfo
from ecocompute.collector.spread import GATE_CV_PCT
from ecocompute.collector.state import MeasurementState
from ecocompute.schema.derive import derive
from ecocompute.schema.models import (
    SCHEMA_VERSION,
    CollectorInfo,
    Contributor,
    Idle,
    Measurement,
    Method,
    Payload,
    Software,
    Submission,
    Workload,
)

if TYPE_CHECKING:
    from ecocompute.collector.run import Environment, Session

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


def build_submission(config: RunConfig, dest: Destination, env: Environment, session: Session,
                     info: GpuInfo, software: Software) -> Submission:  # fmt: skip
    """The unsigned submission of a finished run."""
    state, backend = session.state, session.backend
    source = backend.source
    test_run = not session.device.startswith("cuda")
    notes = ([TEST_RUN_NOTE.format(device=session.device)] if test_run else []) + session.notes
    if session.compiled:
        done = [p.value for p, c in session.compiled.items() if c]
        skipped = [p.value for p, c in session.compiled.items() if not c]
        notes.append(f"{config.stack.value} stack: torch.compile used for {', '.join(done) or 'none'}"
                     + (f"; not for {', '.join(skipped)}" if skipped else "") + ".")  # fmt: skip
    wide = [(m.precision.value, cv) for m in state.measurements.values()
            if m.windows and (cv := _cv_pct(m)) > GATE_CV_PCT]  # fmt: skip
    if wide:
        listed = ", ".join(f"{name} {cv:.2f}%" for name, cv in wide)
        notes.append(f"CV of J/token above the {GATE_CV_PCT:g}% gate ({listed}): for the dataset's all tier.")
    if state.sessions > 1:
        notes.append(f"measured in {state.sessions} sessions (resumed with --resume)")
    payload = Payload(
        submission_id=state.submission_id,
        created_at=env.clock.utc_now(),
        contributor=Contributor(github=dest.signer),
        collector=CollectorInfo(version=__version__, git_sha=git_sha()),
        hardware=fingerprint.hardware(info),
        software=software,
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
            allow_shared=config.allow_shared, seed=config.seed, idle_settle_s=config.idle_settle_s,
            python_gc="paused-in-windows" if config.pause_gc else "running",
            cpu_affinity=None if config.cpu_affinity is None else list(config.cpu_affinity),
            nice=process.current_nice(),
        ),
        idle=Idle(
            power_w_before=state.idle_power_w_before or 0.0,
            power_w_after=session.idle_power_w_after or 0.0,
            duration_s=config.idle_s,
            model_loaded_before=state.idle_model_loaded_before,
            model_loaded_after=session.idle_model_loaded_after,
        ),
        measurements=[_measurement(m, session.compiled.get(m.precision)) for m in state.measurements.values()],
        notes=" ".join(notes)[:4000] or None,
        example=test_run,
    )  # fmt: skip
    return Submission(schema_version=SCHEMA_VERSION, payload=payload)


def _cv_pct(m: MeasurementState) -> float:
    return derive(m.windows, 0.0).cv_pct


def _measurement(m: MeasurementState, compiled: bool | None) -> Measurement:
    return Measurement(
        precision=m.precision, quantization=m.quantization, windows=m.windows, warmup=m.warmup,
        quality=m.quality, error=m.error, memory_allocated_mib=m.memory_allocated_mib, compiled=compiled,
    )  # fmt: skip
