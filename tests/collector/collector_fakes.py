# ruff: noqa: N802 - the fake keeps pynvml's function names
"""Test doubles of the collector: NVML faked at its module boundary, clocks, and runners.

Nothing here is a measurement. ``FakePynvml`` stands in for the ``pynvml`` module (put it in
``sys.modules`` or patch the real module's functions with it, autospec'd); its energy counter advances
with the clock's time x a power, updating every 100 ms like NVML's. ``VirtualClock`` moves only when
told to (deterministic), ``FastClock`` is real time run faster (so the validator's 10 s windows take
half a second of a test).
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest.mock import patch

from ecocompute.collector.host.clock import SystemClock, Timer
from ecocompute.collector.model.corpus import corpus
from ecocompute.schema.models import Precision

NOT_SUPPORTED = 3
NO_PERMISSION = 4
DRIVER_NOT_LOADED = 9
LIBRARY_NOT_FOUND = 12
GPU_IS_LOST = 15

MIB = 1024 * 1024


class BlockedImports:
    """A meta path finder that refuses to import ``names`` (and their submodules) with ImportError.

    Unlike a None entry in ``sys.modules``, it leaves ``sys.modules`` clean, so libraries that look a module up
    there (scipy looks for torch) work as in a process without it.
    """

    def __init__(self, *names: str) -> None:
        self.names = frozenset(names)

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name.split(".")[0] in self.names:
            raise ImportError(f"{name} is blocked here")


def block_imports(*names: str) -> None:
    """From now on, any import of ``names`` in this process raises ImportError (for subprocess checks)."""
    import sys

    sys.meta_path.insert(0, BlockedImports(*names))


class FakeNVMLError(Exception):
    """pynvml.NVMLError's shape: an error with an NVML return code in ``value``."""

    def __init__(self, value: int) -> None:
        super().__init__(f"NVML error {value}")
        self.value = value


class VirtualClock:
    """A clock that moves only through sleep()/advance(); periodic calls fire at their virtual times."""

    def __init__(self, start_s: float = 1000.0) -> None:
        self.now = start_s
        self._start_s = start_s
        self._utc0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
        self._timers: list[_VirtualTimer] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.advance(max(0.0, seconds))

    def utc_now(self) -> datetime:
        return self._utc0 + timedelta(seconds=self.now - self._start_s)

    def call_every(self, period_s: float, fn: Callable[[], None]) -> Timer:
        timer = _VirtualTimer(period_s, fn, self.now)
        self._timers.append(timer)
        timer.fire()
        return timer

    def advance(self, seconds: float) -> None:
        target = self.now + seconds
        while True:
            due = [t for t in self._timers if t.active and t.next_s <= target]
            if not due:
                break
            timer = min(due, key=lambda t: t.next_s)
            self.now = timer.next_s
            timer.fire()
        self.now = target


class _VirtualTimer:
    def __init__(self, period_s: float, fn: Callable[[], None], now_s: float) -> None:
        self.period_s, self.fn, self.next_s, self.active = period_s, fn, now_s, True

    def fire(self) -> None:
        self.fn()
        self.next_s += self.period_s

    def cancel(self) -> None:
        self.active = False


class FastClock:
    """Real time, ``speed`` times faster: sleeps are shorter, periodic calls come more often."""

    def __init__(self, speed: float = 20.0) -> None:
        self.speed = speed
        self._t0 = time.monotonic()
        self._utc0 = datetime.now(UTC)

    def monotonic(self) -> float:
        return (time.monotonic() - self._t0) * self.speed

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds / self.speed)

    def utc_now(self) -> datetime:
        return self._utc0 + timedelta(seconds=self.monotonic())

    def call_every(self, period_s: float, fn: Callable[[], None]) -> Timer:
        return SystemClock().call_every(period_s / self.speed, fn)


class FakePynvml:
    """The parts of the ``pynvml`` module the collector uses, for one fake NVIDIA H200 drawing ``power_w``.

    Set ``init_error``, ``energy_supported=False``, ``mig=True`` or ``processes`` to reproduce what a
    real machine can do; ``fail[name] = code`` makes the function ``name`` raise from then on.
    """

    def __init__(self, clock: Any, power_w: float = 150.0, *, error_class: type[Exception] = FakeNVMLError) -> None:
        self.NVMLError = error_class
        self.clock = clock
        self.power_w = power_w
        self.counter_period_s = 0.1
        self.init_error: int | None = None
        self.energy_supported = True
        self.fields_supported = True
        self.mig = False
        self.persistence = 1
        self.gpu_count = 1
        self.processes: list[int] = []
        self.throttle_mask = 0
        self.fail: dict[str, int] = {}
        self.inits = 0
        self._lock = threading.Lock()
        self._acc_j = 5_000_000.0
        self._since_s = clock.monotonic()

    # --- control -------------------------------------------------------------------------------

    def set_power(self, power_w: float) -> None:
        """Change the power draw from now on (the counter keeps what was drawn before)."""
        with self._lock:
            now = self.clock.monotonic()
            self._acc_j += self.power_w * (now - self._since_s)
            self._since_s, self.power_w = now, power_w

    def _check(self, name: str) -> None:
        if name in self.fail:
            raise self.NVMLError(self.fail[name])

    # --- pynvml API ----------------------------------------------------------------------------

    def nvmlInit(self) -> None:
        if self.init_error is not None:
            raise self.NVMLError(self.init_error)
        self.inits += 1

    def nvmlShutdown(self) -> None:
        self.inits -= 1

    def nvmlDeviceGetCount(self) -> int:
        return self.gpu_count

    def nvmlDeviceGetHandleByIndex(self, index: int) -> Any:
        return SimpleNamespace(index=index)

    def nvmlDeviceGetMigMode(self, handle: Any) -> list[int]:
        return [int(self.mig), int(self.mig)]

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: Any) -> int:
        self._check("nvmlDeviceGetTotalEnergyConsumption")
        if not self.energy_supported:
            raise self.NVMLError(NOT_SUPPORTED)
        with self._lock:
            now = self.clock.monotonic()
            updated = self._since_s + math.floor((now - self._since_s) / self.counter_period_s) * self.counter_period_s
            return int((self._acc_j + self.power_w * (updated - self._since_s)) * 1000)

    def nvmlDeviceGetPowerUsage(self, handle: Any) -> int:
        self._check("nvmlDeviceGetPowerUsage")
        return int(self.power_w * 1000)

    def nvmlDeviceGetFieldValues(self, handle: Any, field_ids: list[int]) -> list[Any]:
        self._check("nvmlDeviceGetFieldValues")
        ret = 0 if self.fields_supported else NOT_SUPPORTED
        value = SimpleNamespace(uiVal=int(self.power_w * 1000))
        return [SimpleNamespace(fieldId=f, scopeId=0, nvmlReturn=ret, valueType=1, value=value) for f in field_ids]

    def nvmlDeviceGetTemperature(self, handle: Any, sensor: int) -> int:
        self._check("nvmlDeviceGetTemperature")
        return 41

    def nvmlDeviceGetClockInfo(self, handle: Any, clock_type: int) -> int:
        self._check("nvmlDeviceGetClockInfo")
        return 1980

    def nvmlDeviceGetClock(self, handle: Any, clock_type: int, clock_id: int) -> int:
        return 1980

    def nvmlDeviceGetUtilizationRates(self, handle: Any) -> Any:
        self._check("nvmlDeviceGetUtilizationRates")
        return SimpleNamespace(gpu=21, memory=3)

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: Any) -> int:
        self._check("nvmlDeviceGetCurrentClocksEventReasons")
        return self.throttle_mask

    def nvmlDeviceGetComputeRunningProcesses(self, handle: Any) -> list[Any]:
        self._check("nvmlDeviceGetComputeRunningProcesses")
        return [SimpleNamespace(pid=pid, usedGpuMemory=1 << 30) for pid in self.processes]

    def nvmlDeviceGetUUID(self, handle: Any) -> str:
        return "GPU-fake-0000-0000"

    def nvmlDeviceGetName(self, handle: Any) -> str:
        return "NVIDIA H200"

    def nvmlDeviceGetArchitecture(self, handle: Any) -> int:
        return 9

    def nvmlDeviceGetCudaComputeCapability(self, handle: Any) -> tuple[int, int]:
        return (9, 0)

    def nvmlDeviceGetMemoryInfo(self, handle: Any, version: Any = None) -> Any:
        return SimpleNamespace(total=143771 * MIB, free=143000 * MIB, used=771 * MIB)

    def nvmlDeviceGetPowerManagementLimit(self, handle: Any) -> int:
        self._check("nvmlDeviceGetPowerManagementLimit")
        return 700_000

    def nvmlDeviceGetPowerManagementDefaultLimit(self, handle: Any) -> int:
        self._check("nvmlDeviceGetPowerManagementDefaultLimit")
        return 700_000

    def nvmlSystemGetDriverVersion(self) -> str:
        return "580.159.04"

    def nvmlSystemGetNVMLVersion(self) -> bytes:
        return b"13.580.159.04"

    def nvmlDeviceGetVbiosVersion(self, handle: Any) -> str:
        return "96.00.D0.00.03"

    def nvmlDeviceGetPersistenceMode(self, handle: Any) -> int:
        return self.persistence


USED_FUNCTIONS = [name for name in vars(FakePynvml) if name.startswith("nvml")]


@contextlib.contextmanager
def autospec_pynvml(fake: FakePynvml) -> Iterator[Any]:
    """Patch the real pynvml module's functions, autospec'd (so call signatures are checked), with ``fake``."""
    import pynvml

    fake.NVMLError = pynvml.NVMLError
    with contextlib.ExitStack() as stack:
        for name in USED_FUNCTIONS:
            stack.enter_context(patch.object(pynvml, name, autospec=True, side_effect=getattr(fake, name)))
        yield pynvml


class FakeRunner:
    """A runner whose generate calls take ``call_s`` of a virtual clock; optionally raises on call ``fail_at``."""

    def __init__(self, precision: Precision, clock: VirtualClock, call_s: float = 0.5, tokens: int = 256,
                 fail_at: int | None = None, error: BaseException | None = None) -> None:  # fmt: skip
        self.precision = precision
        self.clock = clock
        self.call_s = call_s
        self.tokens = tokens
        self.fail_at = fail_at
        self.error = error or RuntimeError("CUDA error: no kernel image is available")
        self.calls = 0
        self.closed = False
        self.compiles: int | None = None

    def compile_events(self) -> int | None:
        return self.compiles

    def generate_once(self) -> int:
        self.calls += 1
        if self.fail_at is not None and self.calls >= self.fail_at:
            raise self.error
        self.clock.advance(self.call_s)
        return self.tokens

    def synchronize(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True


def make_pretrained(directory: Path, source: Any) -> Path:
    """A local "pretrained" model: the tiny weights and a word-level tokenizer (made offline)."""
    import shutil

    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    shutil.copytree(source.path, directory, dirs_exist_ok=True)
    words = sorted(set(corpus()[0].split()))[:500]
    unknown = "[UNK]"
    vocab = {unknown: 0, **{w: i + 3 for i, w in enumerate(words)}}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token=unknown))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token=unknown).save_pretrained(directory)
    return directory
