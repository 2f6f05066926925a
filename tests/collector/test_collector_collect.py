"""The whole collection path on CPU: a tiny random-init model through the real transformers generate
path, NVML faked only at its module boundary, a signed submission the schema loads and the validator
accepts; interrupt and resume; a precision that runs out of memory.

Time runs 20x fast (``FastClock``) so that windows are the validator's 10 s without a slow suite.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
import torch
from collector_fakes import FakePynvml, FastClock, make_pretrained

from ecocompute.collector.errors import GpuBusyError, RunStateError
from ecocompute.collector.model.archs import load_arch
from ecocompute.collector.model.corpus import corpus
from ecocompute.collector.model.weights import random_init_source
from ecocompute.collector.run.collect import (
    Backend,
    Destination,
    Environment,
    Result,
    RunConfig,
    RunInterruptedError,
    collect,
    hf_backend,
)
from ecocompute.collector.run.display import SilentView
from ecocompute.collector.run.state import MeasurementState, StateStore
from ecocompute.schema.derive import integral_diff_pct
from ecocompute.schema.errors import UsageError
from ecocompute.schema.io import load_document, load_submission
from ecocompute.schema.models import Precision, Stack, Window
from ecocompute.schema.signing import parse_allowed_signers, verify_document

HAS_BNB = importlib.util.find_spec("bitsandbytes") is not None
QUANTIZED = Precision.NF4 if HAS_BNB else Precision.BF16
FP16, BF16 = Precision.FP16, Precision.BF16


@pytest.fixture
def weights(random_init_weights: Path) -> Path:
    """The session's random-init weights cache (built once for every end-to-end test)."""
    return random_init_weights


@dataclass
class World:
    """A run's surroundings: fast time, a fake NVML, folders, and the keys of the test signer."""

    clock: FastClock
    nvml: FakePynvml
    root: Path
    keys: Any
    weights: Path
    config: RunConfig = field(init=False)

    def __post_init__(self) -> None:
        self.config = RunConfig(
            precisions=(FP16, QUANTIZED), arch="tiny-llama-test", batch_size=1, prompt_tokens=8, new_tokens=8,
            window_s=10.0, warmup_windows=1, min_windows=3, max_windows=3, idle_s=4.0, torch_device="cpu",
            stack=Stack.EAGER,
        )  # fmt: skip

    def dest(self, **changes: Any) -> Destination:
        base = Destination(signer=self.keys.login, key=self.keys.ed25519, out_dir=self.root / "submissions",
                           state_dir=self.root / "state", weights_cache=self.weights)  # fmt: skip
        return replace(base, **changes)

    def env(self, make_backend: Callable[[RunConfig, Destination, str], Backend] = hf_backend,
            view: Any = None) -> Environment:  # fmt: skip
        return Environment(make_backend=make_backend, clock=self.clock, view=view or SilentView())

    def run(self, config: RunConfig | None = None, dest: Destination | None = None, **env: Any) -> Result:
        return collect(config or self.config, dest or self.dest(), self.env(**env))


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, keys: Any, weights: Path) -> World:
    clock = FastClock(speed=20.0)
    nvml = FakePynvml(clock, power_w=150.0)
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    return World(clock, nvml, tmp_path, keys, weights)


def validator_errors(result: Result, world: World) -> list[str]:
    """Error findings of the validator (if it has landed), less those a CPU-only torch explains."""
    core = pytest.importorskip("ecocompute.validate.core")
    (found,) = core.validate_files(
        [result.path], allowed_signers=world.keys.allowed_signers, submissions_root=world.root / "submissions",
        max_cv_pct=1000.0,  # CPU timing noise is not what these tests check
    )  # fmt: skip
    cpu_only = torch.version.cuda is None
    return [
        f"{f.code} {f.path}: {f.message}"
        for f in found.errors
        if not (cpu_only and f.code == "E-FINGERPRINT" and f.path == "payload.software.cuda_runtime")
    ]


def test_whole_path_writes_a_signed_submission_the_validator_accepts(world: World) -> None:
    result = world.run()
    p = result.submission.payload
    assert result.path == world.root / "submissions" / "example-user" / "nvidia-h200" / f"{p.submission_id}.json"
    loaded = load_submission(result.path)
    assert loaded == result.submission
    assert verify_document(load_document(result.path), parse_allowed_signers(world.keys.allowed_signers)).signer
    assert p.example and p.notes is not None and p.notes.startswith("TEST RUN on cpu")
    assert [m.precision for m in p.measurements] == [FP16, QUANTIZED]
    assert [m.compiled for m in p.measurements] == [None, None]  # eager stack: nothing to compile
    for m in p.measurements:
        assert m.error is None and len(m.windows) == 3 and len(m.warmup) == 1
        for w in m.windows:
            assert w.duration_s >= 10.0
            assert w.tokens == 8 * w.generate_calls
            assert integral_diff_pct(w) < 2.0
            assert w.energy_j / w.duration_s == pytest.approx(150.0, rel=0.02)
            assert w.power_samples and w.power_samples >= 10  # ~100 unless the test machine is very busy
    if HAS_BNB:
        nf4 = p.measurements[1].quantization
        assert nf4 is not None and nf4["bnb_4bit_quant_type"] == "nf4" and nf4["load_in_4bit"] is True
    assert p.measurements[0].quantization is None
    assert p.idle.power_w_before == pytest.approx(150.0, rel=0.05)  # the counter moves in 100 ms steps
    assert p.idle.duration_s == 4.0
    assert (p.method.order, p.method.window_min_s, p.method.power_sampling_hz) == ("interleaved", 10.0, 10.0)
    assert (p.method.python_gc, p.method.cpu_affinity, p.method.nice) == ("paused-in-windows", None, os.nice(0))
    assert p.workload.params_total == 139_584 and p.workload.weights == "random-init"
    assert p.hardware.gpu_uuid_sha256 == hashlib.sha256(b"GPU-fake-0000-0000").hexdigest()
    assert p.software.transformers and p.software.nvml == "13.580.159.04"
    assert not list((world.root / "state").glob("*.json")), "the state file goes once the submission is written"
    assert validator_errors(result, world) == []


class Counter:
    """Windows finished so far (the view hears of each one after its checkpoint)."""

    def __init__(self) -> None:
        self.windows = 0
        self.by_precision: dict[Precision, int] = {}

    def start(self, *args: Any) -> None: ...

    def note(self, text: str) -> None: ...

    def checklist(self, items: Any) -> None: ...

    def stop(self) -> None: ...

    def update(self, state: MeasurementState, window: Window | None, warmup: bool, idle_power_w: float) -> None:
        if window is not None and not warmup:
            self.windows += 1
            self.by_precision[state.precision] = self.by_precision.get(state.precision, 0) + 1


class WrappedBackend:
    """The real transformers backend, with a hook on loading and on every generate call."""

    def __init__(self, inner: Backend, on_load: Callable[[Precision], None] | None = None,
                 on_generate: Callable[[Precision, int], None] | None = None) -> None:  # fmt: skip
        self.inner, self.on_load, self.on_generate = inner, on_load, on_generate
        self.source, self.prompt_sha256 = inner.source, inner.prompt_sha256

    def load(self, precision: Precision) -> Any:
        if self.on_load:
            self.on_load(precision)
        return HookedRunner(self.inner.load(precision), self.on_generate)

    def fits_together(self, precisions: list[Precision]) -> bool:
        return self.inner.fits_together(precisions)

    def perplexity(self, runner: Any, text: str) -> tuple[float, int]:
        return self.inner.perplexity(runner.inner, text)


class HookedRunner:
    def __init__(self, inner: Any, on_generate: Callable[[Precision, int], None] | None) -> None:
        self.inner, self.on_generate, self.calls = inner, on_generate, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def generate_once(self) -> int:
        self.calls += 1
        if self.on_generate:
            self.on_generate(self.inner.precision, self.calls)
        return int(self.inner.generate_once())


def interrupted_after(counter: Counter, windows: int) -> Callable[[RunConfig, Destination, str], Backend]:
    """A make_backend whose generate raises KeyboardInterrupt (Ctrl-C) once ``counter`` has seen ``windows``."""

    def kill(precision: Precision, call: int) -> None:
        if counter.windows >= windows:
            raise KeyboardInterrupt

    def interrupting(config: RunConfig, dest: Destination, device: str) -> Backend:
        return WrappedBackend(hf_backend(config, dest, device), on_generate=kill)

    return interrupting


def test_a_kill_loses_at_most_the_window_in_flight_and_resume_keeps_the_id(world: World) -> None:
    counter = Counter()
    with pytest.raises(RunInterruptedError, match=r"3 finished windows are saved in .*--resume"):
        world.run(make_backend=interrupted_after(counter, 3), view=counter)
    (state_file,) = (world.root / "state").glob("run-*.json")
    saved = json.loads(state_file.read_text())
    saved_windows = {m["precision"]: m["windows"] for m in saved["measurements"]}
    assert sum(len(w) for w in saved_windows.values()) == 3
    assert not list((world.root / "submissions").rglob("*.json"))

    with pytest.raises(RunStateError, match="pass --resume to continue it"):
        world.run()
    result = world.run(dest=world.dest(resume=True))
    p = result.submission.payload
    assert p.submission_id == saved["submission_id"]
    for m in p.measurements:
        assert len(m.windows) == 3
        kept = [w.model_dump(mode="json") for w in m.windows[: len(saved_windows[m.precision.value])]]
        assert kept == saved_windows[m.precision.value]
        assert len(m.warmup) == 2  # warm-up again after the reload
    assert p.notes is not None and "measured in 2 sessions" in p.notes
    assert validator_errors(result, world) == []


def test_resume_without_a_saved_run_starts_one(world: World) -> None:
    notes: list[str] = []
    view = Counter()
    view.note = notes.append  # type: ignore[method-assign]
    result = world.run(replace(world.config, precisions=(FP16,)), world.dest(resume=True), view=view)
    assert notes[0].startswith("no unfinished run with these settings in ") and "starting a new one" in notes[0]
    assert result.submission.payload.notes is not None and "sessions" not in result.submission.payload.notes


def test_out_of_memory_is_recorded_and_the_other_precisions_go_on(world: World) -> None:
    def oom_on_load(precision: Precision) -> None:
        if precision is BF16:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")

    counter = Counter()

    def oom_in_second_window(precision: Precision, call: int) -> None:
        if precision is QUANTIZED and counter.by_precision.get(precision, 0) >= 1:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 1.00 GiB")

    def flaky(config: RunConfig, dest: Destination, device: str) -> Backend:
        return WrappedBackend(hf_backend(config, dest, device), oom_on_load, oom_in_second_window)

    config = replace(world.config, precisions=(FP16, BF16, QUANTIZED))
    if QUANTIZED is BF16:
        config = replace(config, precisions=(FP16, BF16))
    result = world.run(config, make_backend=flaky, view=counter)
    by_precision = {m.precision: m for m in result.submission.payload.measurements}
    assert len(by_precision[FP16].windows) == 3 and by_precision[FP16].error is None
    bf16 = by_precision[BF16]
    assert bf16.windows == [] and bf16.error == "OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB"
    if QUANTIZED is not BF16:
        nf4 = by_precision[QUANTIZED]
        assert nf4.windows == [] and nf4.error is not None and nf4.error.startswith("OutOfMemoryError")
        assert nf4.error.endswith("(after 1 windows, dropped)")
        assert nf4.quantization is not None
    assert validator_errors(result, world) == []


def test_process_knobs_are_applied_and_recorded(world: World) -> None:
    cpus = tuple(sorted(os.sched_getaffinity(0)))
    config = replace(world.config, precisions=(FP16,), pause_gc=False, cpu_affinity=cpus, nice=0)
    method = world.run(config, world.dest(key=None)).submission.payload.method
    assert (method.python_gc, method.cpu_affinity, method.nice) == ("running", list(cpus), os.nice(0))


def test_blocked_order_with_a_shared_gpu_allowed(world: World) -> None:
    world.nvml.processes = [4242]
    with pytest.raises(GpuBusyError, match=r"1 other process.*PIDs 4242.*--allow-shared"):
        world.run()
    config = replace(world.config, order="blocked", cooldown_s=4.0, allow_shared=True, precisions=(FP16,))
    result = world.run(config)
    p = result.submission.payload
    assert (p.method.order, p.method.cooldown_s, p.method.allow_shared) == ("blocked", 4.0, True)
    assert all(w.other_gpu_processes == 1 for w in p.measurements[0].windows)


def test_settings_are_checked_before_the_gpu_is_touched(world: World) -> None:
    world.nvml.init_error = 12  # would fail if NVML were opened
    for bad, message in [
        (replace(world.config, arch=None), "exactly one of --arch"),
        (replace(world.config, min_windows=9), "--min-windows 9 is above --max-windows 3"),
        (replace(world.config, window_s=0), "--window-s must be positive"),
        (replace(world.config, perplexity=True), "--perplexity needs pretrained weights"),
    ]:
        with pytest.raises(UsageError, match=message):
            world.run(bad)
    with pytest.raises(UsageError, match="is not a GitHub login"):
        world.run(dest=world.dest(signer="not a login"))
    with pytest.raises(UsageError, match=r"SSH key .* does not exist"):
        world.run(dest=world.dest(key=world.root / "missing"))


def test_an_unsigned_run_of_the_compiled_stack_and_the_state_store(world: World) -> None:
    result = world.run(replace(world.config, precisions=(FP16,), stack=Stack.COMPILED), world.dest(key=None))
    assert result.submission.signature is None
    assert result.path.exists()
    p = result.submission.payload
    assert p.workload.stack is Stack.COMPILED
    assert p.notes is not None and "compiled stack: torch.compile used for none; not for fp16." in p.notes  # CPU
    assert [m.compiled for m in p.measurements] == [False]  # the same fact, per measurement
    assert StateStore(world.root / "state").load("0" * 16) is None
    (world.root / "state" / f"run-{'1' * 16}.json").write_text("{not json")
    with pytest.raises(RunStateError, match="is damaged"):
        StateStore(world.root / "state").load("1" * 16)


@pytest.mark.skipif(not HAS_BNB, reason="bitsandbytes is not installed")
def test_the_compiled_all_stack_is_recorded_as_such(world: World) -> None:
    """A stack of its own in workload.stack; on the CPU nothing compiles, and notes and fields say so."""
    result = world.run(replace(world.config, precisions=(FP16, Precision.NF4), stack=Stack.COMPILED_ALL))
    p = result.submission.payload
    assert p.workload.stack is Stack.COMPILED_ALL
    assert p.notes is not None and "compiled-all stack: torch.compile used for none; not for fp16, nf4." in p.notes
    assert [(m.precision, m.compiled) for m in p.measurements] == [(FP16, False), (Precision.NF4, False)]


def test_a_local_pretrained_model_with_perplexity(world: World) -> None:
    source = random_init_source(load_arch("tiny-llama-test"), 0, world.weights, "cpu")
    local = make_pretrained(world.root / "tiny-pretrained", source)
    config = replace(world.config, arch=None, model=str(local), perplexity=True, precisions=(FP16,))
    result = world.run(config)
    p = result.submission.payload
    assert (p.workload.weights, p.workload.model_id, p.workload.architecture) == (
        "pretrained", "tiny-pretrained", "tiny-llama-test"
    )  # fmt: skip
    quality = p.measurements[0].quality
    assert quality is not None and quality.corpus_sha256 == corpus()[1] and quality.tokens_evaluated > 1000
    assert validator_errors(result, world) == []


def test_blocked_idle_after_reloads_a_model_when_the_last_precision_fails_to_load(world: World) -> None:
    loads: list[Precision] = []

    def last_fails(precision: Precision) -> None:
        loads.append(precision)
        if precision is BF16:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory")

    def flaky(config: RunConfig, dest: Destination, device: str) -> Backend:
        return WrappedBackend(hf_backend(config, dest, device), last_fails)

    config = replace(world.config, order="blocked", cooldown_s=0.0, precisions=(FP16, BF16))
    idle = world.run(config, make_backend=flaky).submission.payload.idle
    assert loads == [FP16, BF16, FP16]  # fp16 again, so idle-after has a model loaded
    assert (idle.model_loaded_before, idle.model_loaded_after) == (True, True)


def test_resuming_a_run_whose_windows_are_all_done_measures_idle_with_a_model(world: World) -> None:
    class KillAtIdleAfter(Counter):
        def note(self, text: str) -> None:
            if text.startswith("measuring idle power (after"):
                raise KeyboardInterrupt

    config = replace(world.config, precisions=(FP16,))
    with pytest.raises(RunInterruptedError):
        world.run(config, view=KillAtIdleAfter())
    loads: list[Precision] = []

    def counting(config: RunConfig, dest: Destination, device: str) -> Backend:
        return WrappedBackend(hf_backend(config, dest, device), loads.append)

    notes: list[str] = []
    view = Counter()
    view.note = notes.append  # type: ignore[method-assign]
    result = world.run(config, world.dest(resume=True), make_backend=counting, view=view)
    assert loads == [FP16]
    assert any("measuring idle power (after, with the model loaded)" in n for n in notes)
    assert result.submission.payload.idle.model_loaded_after is True


def test_when_no_model_loads_idle_power_says_it_had_none(world: World) -> None:
    def nothing_loads(precision: Precision) -> None:
        raise torch.cuda.OutOfMemoryError("CUDA out of memory")

    def failing(config: RunConfig, dest: Destination, device: str) -> Backend:
        return WrappedBackend(hf_backend(config, dest, device), nothing_loads)

    p = world.run(world.config, world.dest(key=None), make_backend=failing).submission.payload
    assert (p.idle.model_loaded_before, p.idle.model_loaded_after) == (False, False)
    assert p.method.idle_settle_s == 5.0
    assert p.notes is not None and "idle power after was measured without a model loaded" in p.notes


@pytest.mark.skipif(importlib.util.find_spec("torchao") is None, reason="torchao is not installed (the fp8 extra)")
def test_resume_of_an_fp8_run_refuses_another_torchao(world: World) -> None:
    from ecocompute.collector.model.engines import EngineInfo, engine_spec

    config = replace(world.config, precisions=(FP16, Precision.FP8_WO))
    counter = Counter()
    with pytest.raises(RunInterruptedError):
        world.run(config, make_backend=interrupted_after(counter, 2), view=counter)
    real = engine_spec("transformers").info()
    env = world.env()
    env.engine_info = lambda name: EngineInfo(name, real.version, {**real.build, "torchao": "0.99.0"})
    with pytest.raises(RunStateError, match=rf"torchao {re.escape(real.build['torchao'])} -> 0\.99\.0"):
        collect(config, world.dest(resume=True), env)
    result = world.run(config, world.dest(resume=True))  # the torchao it started with: it resumes
    assert [len(m.windows) for m in result.submission.payload.measurements] == [3, 3]


def test_only_a_run_with_fp8_pins_torchao(world: World) -> None:
    from ecocompute.collector.model.engines import EngineInfo
    from ecocompute.collector.run.collect import torchao_pin

    env = world.env()
    env.engine_info = lambda name: pytest.fail("a run without FP8 reads no torchao version")
    assert torchao_pin(world.config, env) is None
    env.engine_info = lambda name: EngineInfo(name, "5.0", {"torch": "2.11.0"})
    assert torchao_pin(replace(world.config, precisions=(FP16, Precision.FP8_DYN)), env) == "not installed"


def test_resume_refuses_another_software_stack_or_power_limit(world: World) -> None:
    counter = Counter()
    with pytest.raises(RunInterruptedError):
        world.run(make_backend=interrupted_after(counter, 2), view=counter)
    real = Environment().software

    def other_torch(nvml_version: str) -> Any:
        return real(nvml_version).model_copy(update={"torch": "9.9.9"})

    env = world.env()
    env.software = other_torch
    with pytest.raises(RunStateError, match=r"torch .* -> 9\.9\.9.*cannot mix them") as caught:
        collect(world.config, world.dest(resume=True), env)
    assert "power_limit_w" not in str(caught.value)
    world.nvml.nvmlDeviceGetPowerManagementLimit = lambda handle: 500_000  # type: ignore[method-assign]
    with pytest.raises(RunStateError, match=r"power_limit_w 700\.0 -> 500\.0"):
        world.run(dest=world.dest(resume=True))
