"""The engine contract (docs/engines.md): every registered engine, on a CPU, against a replayed trace GPU.

Adding an engine is adding it to ``ecocompute.collector.model.engines.ENGINES`` and a small model of it to
:data:`CASES` below, then passing this file. Each case is built through the engine's own factory, the one
``collect`` uses. The GPU is :class:`ReplayGpu` over a recorded trace and time is real (generate calls take
what they take) except that sleeps are skipped, so the engine's windows run as on a GPU.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ecocompute.collector.device.replay import ReplayGpu
from ecocompute.collector.device.sampler import PowerSampler
from ecocompute.collector.device.trace import Trace, load_trace
from ecocompute.collector.host.clock import SystemClock, Timer
from ecocompute.collector.model.backend import Backend, LoadedRunner
from ecocompute.collector.model.engines import ENGINES, EngineSpec, engine_spec
from ecocompute.collector.run.config import Destination, RunConfig
from ecocompute.collector.run.engine import WARMUP_MIN_CALLS, Engine, EngineConfig
from ecocompute.collector.run.state import MeasurementState
from ecocompute.schema.errors import EcocomputeError, UsageError
from ecocompute.schema.models import Precision, Stack

TRACE = Path(__file__).parents[1] / "data" / "traces" / "synthetic-steps.json"
BATCH, PROMPT_TOKENS, NEW_TOKENS = 2, 8, 6
WINDOWS = 3


@dataclass(frozen=True)
class Case:
    """A tiny model of one engine that runs on a CPU in a second or two."""

    config: dict[str, Any]
    precision: Precision


CASES: dict[str, Case] = {
    "transformers": Case({"arch": "tiny-llama-test"}, Precision.FP16),
    "llama.cpp": Case({"arch": "tiny-llama-test", "stack": Stack.EAGER}, Precision.FP16),  # the same weights, as GGUF
}
INSTALLED = {"llama.cpp": ("llama_cpp", "llamacpp")}
"""Engines whose package is optional, with its module and extra: a case skips when the module is missing, unless
``CI`` is set and the Makefile's install line has the extra (then it fails)."""


class SkippingClock:
    """Real time, except that :meth:`sleep` jumps ahead instead of waiting (a window's delay, idle, cooldown)."""

    def __init__(self) -> None:
        self._t0 = time.monotonic()
        self._skipped = 0.0
        self._utc0 = datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic() - self._t0 + self._skipped

    def sleep(self, seconds: float) -> None:
        self._skipped += max(0.0, seconds)

    def utc_now(self) -> datetime:
        return self._utc0 + timedelta(seconds=self.monotonic())

    def call_every(self, period_s: float, fn: Callable[[], None]) -> Timer:
        return SystemClock().call_every(period_s, fn)


class WindowWatch(ReplayGpu):
    """A replay GPU that knows when a window is open: the engine reads the counter at each end of a window."""

    def __init__(self, trace: Trace, clock: SkippingClock) -> None:
        super().__init__(trace, clock)
        self.in_window = False
        self.reads = 0

    def energy_j(self) -> float:
        value = super().energy_j()
        self.reads += 1
        self.in_window = not self.in_window
        return value


class OpenedFiles:
    """Files this process opens while ``watch.in_window`` (an audit hook: it stays, so it is gated)."""

    watch: WindowWatch | None = None
    seen: list[str] = []  # noqa: RUF012 - one list for the one hook
    _installed = False
    _lock = threading.Lock()

    @classmethod
    def install(cls) -> None:
        if not cls._installed:
            sys.addaudithook(cls._hook)
            cls._installed = True

    @classmethod
    def _hook(cls, event: str, args: tuple[Any, ...]) -> None:
        watch = cls.watch
        if event != "open" or watch is None or not watch.in_window or not isinstance(args[0], str | Path):
            return
        path = str(args[0])
        if not path.startswith(("/proc/", "/sys/", "/dev/")):
            with cls._lock:
                cls.seen.append(path)


@contextlib.contextmanager
def files_opened_in_windows(watch: WindowWatch) -> Iterator[list[str]]:
    """The files opened while a window of ``watch`` is open, until the block ends."""
    OpenedFiles.install()
    OpenedFiles.watch, OpenedFiles.seen = watch, []
    try:
        yield OpenedFiles.seen
    finally:
        OpenedFiles.watch = None


def run_config(case: Case, **overrides: Any) -> RunConfig:
    return RunConfig(precisions=(case.precision,), batch_size=BATCH, prompt_tokens=PROMPT_TOKENS,
                     new_tokens=NEW_TOKENS, seed=0, torch_device="cpu", **{**case.config, **overrides})  # fmt: skip


@dataclass
class Built:
    spec: EngineSpec
    case: Case
    backend: Backend


@pytest.fixture(scope="module", params=sorted(ENGINES))
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    """The engine's backend for its tiny case, made by the engine's own factory (as ``collect`` makes it).

    torch runs on one thread meanwhile: on a shared CPU its default thread pool makes each tiny generate
    call ten times slower (oversubscription), and nothing here measures speed.
    """
    spec, case = engine_spec(request.param), CASES[request.param]
    module, extra = INSTALLED.get(spec.name, (None, None))
    if module is not None and importlib.util.find_spec(module) is None:
        makefile = (Path(__file__).parents[2] / "Makefile").read_text(encoding="utf-8")
        if not (os.environ.get("CI") and str(extra) in makefile):
            pytest.skip(f"{spec.name}: {module} is not installed (the {extra} extra)")
    dest = Destination(signer="octocat", weights_cache=tmp_path_factory.mktemp(f"weights-{spec.name}"))
    backend = spec.make_backend(run_config(case), dest, "cpu")
    torch = sys.modules.get("torch")
    threads = None if torch is None else torch.get_num_threads()
    if torch is not None:
        torch.set_num_threads(1)
    try:
        yield Built(spec, case, backend)
    finally:
        if torch is not None and threads is not None:
            torch.set_num_threads(threads)


def test_every_registered_engine_has_a_conformance_case() -> None:
    assert set(CASES) == set(ENGINES)
    with pytest.raises(UsageError, match=r"unknown engine 'tensorrt-llm': choose one of llama\.cpp, transformers"):
        engine_spec("tensorrt-llm")


def test_the_model_and_prompt_are_identified(built: Built) -> None:
    source = built.backend.source
    assert source.model_id and source.architecture
    assert source.weights in ("pretrained", "random-init") and source.params_total > 0
    assert re.fullmatch(r"[0-9a-f]{64}", built.backend.prompt_sha256)


def test_load_is_outside_windows_and_windows_count_exact_tokens(built: Built) -> None:
    clock = SkippingClock()
    gpu = WindowWatch(load_trace(TRACE), clock)
    runner: LoadedRunner = built.backend.load(built.case.precision)  # all loading happens here, before any window
    assert runner.precision is built.case.precision
    assert runner.memory_mib > 0 and isinstance(runner.compiled, bool)
    assert runner.quantization is None or isinstance(runner.quantization, dict)
    sampler = PowerSampler(gpu, clock)
    # pause_gc off: the engine's gc.collect() before each window is the engine's, not the backend's, and slow here
    config = EngineConfig(
        window_s=0.2, warmup_windows=1, min_windows=WINDOWS, max_windows=WINDOWS, seed=0, pause_gc=False
    )
    state = MeasurementState(built.case.precision)
    with files_opened_in_windows(gpu) as opened:
        sampler.start()
        try:
            Engine(gpu, sampler, clock, config, own_contexts=0).run({runner.precision: runner},
                                                                     {runner.precision: state})  # fmt: skip
        finally:
            sampler.stop()
            runner.close()
    assert state.error is None, state.error
    assert not opened, f"files opened inside windows (loading must happen in load()): {sorted(set(opened))[:5]}"
    assert gpu.reads == 2 * (len(state.warmup) + len(state.windows)) and not gpu.in_window
    assert len(state.warmup) == 1 and len(state.warmup[0].model_dump()) > 0
    assert state.warmup[0].generate_calls >= WARMUP_MIN_CALLS
    assert len(state.windows) == WINDOWS
    for window in state.warmup + state.windows:
        assert window.tokens == window.generate_calls * BATCH * NEW_TOKENS  # exactly the tokens asked for
        assert window.duration_s >= config.window_s and window.energy_j > 0


def test_greedy_generation_gives_the_same_token_count_every_call(built: Built) -> None:
    counts = []
    for _ in range(2):  # two loads of the same precision
        runner = built.backend.load(built.case.precision)
        try:
            counts.append([runner.generate_once() for _ in range(3)])
        finally:
            runner.close()
    assert counts == [[BATCH * NEW_TOKENS] * 3] * 2


def test_a_failing_runner_is_recorded_and_the_engine_goes_on(built: Built) -> None:
    clock = SkippingClock()
    gpu = WindowWatch(load_trace(TRACE), clock)
    runner = built.backend.load(built.case.precision)
    runner.close()  # a closed runner must raise on generate, not return tokens
    state = MeasurementState(built.case.precision)
    config = EngineConfig(window_s=0.1, max_windows=2, min_windows=1, pause_gc=False)
    Engine(gpu, PowerSampler(gpu, clock), clock, config, own_contexts=0).run({runner.precision: runner},
                                                                              {runner.precision: state})  # fmt: skip
    assert state.error and state.windows == [] and state.finished


def test_versions_and_build_flags_are_reported(built: Built) -> None:
    info = built.spec.info()
    assert info.name == built.spec.name
    assert info.version not in ("", "unknown")
    assert info.build and all(isinstance(k, str) and isinstance(v, str) and v for k, v in info.build.items())
    if built.spec.name == "transformers":
        assert info.version == importlib.metadata.version("transformers")
        assert info.build["torch"].split("+")[0] == importlib.metadata.version("torch").split("+")[0]
    if built.spec.name == "llama.cpp":
        assert info.version == importlib.metadata.version("llama-cpp-python")
        assert any(key.startswith("CPU.") for key in info.build)  # llama_print_system_info's CPU backend


def test_a_model_that_is_not_there_is_a_project_error(built: Built, monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:  # fmt: skip
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    config = run_config(built.case, arch=None, model=str(tmp_path / "no-such-model"))
    dest = Destination(signer="octocat", weights_cache=tmp_path)
    with pytest.raises(EcocomputeError, match="no-such-model"):
        built.spec.make_backend(config, dest, "cpu")


def test_the_window_watch_sees_a_file_opened_inside_a_window(tmp_path: Path) -> None:
    gpu = WindowWatch(load_trace(TRACE), SkippingClock())
    (tmp_path / "weights.bin").write_bytes(b"0")
    with files_opened_in_windows(gpu) as opened:
        (tmp_path / "weights.bin").read_bytes()  # outside a window: not counted
        gpu.energy_j()  # the window opens
        (tmp_path / "weights.bin").read_bytes()
        gpu.energy_j()  # and closes
    assert opened == [str(tmp_path / "weights.bin")]
