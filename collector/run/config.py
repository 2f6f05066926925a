"""The settings of a run: what to measure (:class:`RunConfig`) and where results go (:class:`Destination`)."""

from __future__ import annotations

import re
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ecocompute.collector.model.archs import load_arch
from ecocompute.collector.run.engine import EngineConfig
from ecocompute.collector.run.spread import OnSpread
from ecocompute.collector.run.state import Order
from ecocompute.schema.errors import UsageError
from ecocompute.schema.models import GITHUB_LOGIN_PATTERN, Precision, Stack
from ecocompute.validate.windows import MIN_WINDOWS_FLOOR, WINDOW_MIN_S_FLOOR


@dataclass(frozen=True)
class RunConfig:
    """What to measure and how; everything here names the run's state file (see :meth:`identity`).

    The method's defaults are the engine's (:class:`EngineConfig`); the CLI takes its defaults from here.
    """

    precisions: tuple[Precision, ...]
    arch: str | None = None
    model: str | None = None
    batch_size: int = 128
    prompt_tokens: int = 128
    new_tokens: int = 256
    window_s: float = EngineConfig.window_s
    warmup_windows: int = EngineConfig.warmup_windows
    min_windows: int = EngineConfig.min_windows
    max_windows: int = EngineConfig.max_windows
    target_ci_pct: float = EngineConfig.target_ci_pct
    stack: Stack = Stack.COMPILED_ALL
    order: Order = Order.AUTO
    cooldown_s: float = 30.0
    idle_s: float = 10.0
    idle_settle_s: float = 5.0
    seed: int = EngineConfig.seed
    device_index: int = 0
    allow_shared: bool = False
    perplexity: bool = False
    torch_device: str | None = None
    pause_gc: bool = EngineConfig.pause_gc
    cpu_affinity: tuple[int, ...] | None = None
    nice: int | None = None
    on_spread: OnSpread = EngineConfig.on_spread
    gpu_vendor: str = "auto"
    engine: str = "transformers"

    def check(self) -> None:
        """Raise UsageError on settings that cannot make a valid submission."""
        problems = []
        if (self.arch is None) == (self.model is None):
            problems.append("pass exactly one of --arch NAME or --model HF_ID_OR_PATH")
        for name in ("batch_size", "prompt_tokens", "new_tokens", "min_windows", "max_windows"):
            if getattr(self, name) < 1:
                problems.append(f"--{name.replace('_', '-')} must be at least 1")
        for name, flag in (("window_s", "--window-s"), ("idle_s", "--idle-s"), ("target_ci_pct", "--target-ci")):
            if not getattr(self, name) > 0:
                problems.append(f"{flag} must be positive")
        if self.warmup_windows < 0 or self.cooldown_s < 0 or self.idle_settle_s < 0:
            problems.append("--warmup-windows, --cooldown-s and --idle-settle-s cannot be negative")
        if self.stack.static_cache and self.warmup_windows < 1:
            problems.append(f"--stack {self.stack.value} needs --warmup-windows >= 1: compiling must stay out of "
                            "measured windows")  # fmt: skip
        if self.min_windows > self.max_windows:
            problems.append(f"--min-windows {self.min_windows} is above --max-windows {self.max_windows}")
        if self.arch is not None:
            load_arch(self.arch)  # UsageError listing the shipped architectures
        if self.perplexity and self.arch is not None:
            problems.append("--perplexity needs pretrained weights (--model): random-init weights have none to test")
        problems += self.validator_problems()
        if problems:
            raise UsageError("; ".join(problems))

    def validator_problems(self) -> list[str]:
        """Settings whose submission the validator would reject, each with its finding code and the fix."""
        problems = []
        if self.window_s < WINDOW_MIN_S_FLOOR:
            problems.append(f"--window-s {self.window_s:g} is below the validator's {WINDOW_MIN_S_FLOOR:g} s floor "
                            f"(E-WINDOW-SHORT): pass --window-s {WINDOW_MIN_S_FLOOR:g} or more")  # fmt: skip
        for name in ("min_windows", "max_windows"):
            if 1 <= getattr(self, name) < MIN_WINDOWS_FLOOR:
                flag = "--" + name.replace("_", "-")
                problems.append(
                    f"{flag} {getattr(self, name)}: the validator needs at least {MIN_WINDOWS_FLOOR} windows per "
                    f"precision (E-WINDOW-COUNT): pass {flag} {MIN_WINDOWS_FLOOR} or more"
                )
        quantized = [p.value for p in self.precisions if not p.is_baseline]
        if quantized and not any(p.is_baseline for p in self.precisions):
            problems.append(f"{','.join(quantized)} without an fp16 or bf16 baseline (E-BASELINE): pass "
                            f"--precisions fp16,{','.join(quantized)}")  # fmt: skip
        return problems

    def identity(self) -> dict[str, Any]:
        """The settings as JSON values (the state file's key is their hash)."""
        values = asdict(self)
        values["precisions"] = [p.value for p in self.precisions]
        values["stack"] = self.stack.value
        values.pop("on_spread")  # what to do about a wide spread does not change what is measured
        values.pop("gpu_vendor")  # the GPU's UUID hash, in the key, names the GPU already
        if self.engine == "transformers":
            values.pop("engine")  # state files of runs from before there were engines keep their names
        return values

    def engine_config(self) -> EngineConfig:
        """The engine's share of the settings."""
        return EngineConfig(
            window_s=self.window_s, warmup_windows=self.warmup_windows, min_windows=self.min_windows,
            max_windows=self.max_windows, target_ci_pct=self.target_ci_pct, seed=self.seed, pause_gc=self.pause_gc,
            on_spread=self.on_spread,
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
            from ecocompute.collector.run.preflight import try_key

            try_key(self.key)
