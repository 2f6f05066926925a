"""A run's progress on disk: written after every window, so a kill loses at most the window in flight.

The state file is JSON under ``~/.cache/ecocompute/runs/`` (or ``--state-dir``), named by a hash of the
run's configuration; ``--resume`` finds it by the same hash and keeps its submission id. Windows are
stored exactly as the submission will hold them.
"""

from __future__ import annotations

import enum
import hashlib
import json
import os
import secrets
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import JsonValue, ValidationError

from ecocompute.collector.errors import RunStateError
from ecocompute.schema.errors import SubmissionError
from ecocompute.schema.io import parse_json, write_text_atomic
from ecocompute.schema.models import Precision, Quality, Window

STATE_VERSION = 1


class Order(enum.StrEnum):
    """How precisions share the GPU: ``auto`` (the run picks) resolves to ``interleaved`` or ``blocked``."""

    AUTO = "auto"
    INTERLEAVED = "interleaved"
    BLOCKED = "blocked"


def default_state_dir() -> Path:
    """``$XDG_CACHE_HOME/ecocompute/runs`` (``~/.cache/ecocompute/runs`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ecocompute" / "runs"


def config_key(config: dict[str, Any]) -> str:
    """A stable hash of a run's configuration: the same settings give the same state file."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


def pinned_differences(saved: dict[str, Any], now: dict[str, Any]) -> list[str]:
    """What differs between the pinned versions (and power limit) a run was started with and the current ones."""
    return [
        f"{name} {saved.get(name, 'unrecorded')!s} -> {now.get(name)!s}"
        for name in sorted(set(saved) | set(now))
        if saved.get(name) != now.get(name)
    ]


def new_submission_id(now: datetime) -> str:
    """``YYYYMMDDTHHMMSSZ-xxxxxxxx``: the UTC start time and 32 random bits."""
    return now.strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(4)


@dataclass
class MeasurementState:
    """Everything measured so far for one precision."""

    precision: Precision
    windows: list[Window] = field(default_factory=list)
    warmup: list[Window] = field(default_factory=list)
    quantization: dict[str, JsonValue] | None = None
    quality: Quality | None = None
    error: str | None = None
    memory_allocated_mib: float | None = None
    finished: bool = False

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "precision": self.precision.value,
            "windows": [w.model_dump(mode="json") for w in self.windows],
            "warmup": [w.model_dump(mode="json") for w in self.warmup],
            "quantization": self.quantization,
            "quality": None if self.quality is None else self.quality.model_dump(mode="json"),
            "error": self.error,
            "memory_allocated_mib": self.memory_allocated_mib,
            "finished": self.finished,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MeasurementState:
        """Rebuild from :meth:`to_json` output."""
        return cls(
            precision=Precision(data["precision"]),
            windows=[Window.model_validate(w) for w in data["windows"]],
            warmup=[Window.model_validate(w) for w in data["warmup"]],
            quantization=data["quantization"],
            quality=None if data["quality"] is None else Quality.model_validate(data["quality"]),
            error=data["error"],
            memory_allocated_mib=data["memory_allocated_mib"],
            finished=bool(data["finished"]),
        )


@dataclass
class RunState:
    """A run in progress: its configuration, identity, idle power and measurements."""

    config: dict[str, Any]
    submission_id: str
    started_at: datetime
    measurements: dict[Precision, MeasurementState]
    idle_power_w_before: float | None = None
    idle_model_loaded_before: bool | None = None
    order: Order | None = None
    sessions: int = 1
    pinned_versions: dict[str, Any] = field(default_factory=dict)
    """Driver, power limit, torch, transformers, bitsandbytes and collector versions: a resumed run must match."""

    @property
    def key(self) -> str:
        """The configuration hash that names the state file."""
        return config_key(self.config)

    @property
    def complete(self) -> bool:
        """True when every precision has finished (or failed)."""
        return all(m.finished for m in self.measurements.values())

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "state_version": STATE_VERSION,
            "config": self.config,
            "submission_id": self.submission_id,
            "started_at": self.started_at.isoformat(),
            "idle_power_w_before": self.idle_power_w_before,
            "idle_model_loaded_before": self.idle_model_loaded_before,
            "order": self.order,
            "sessions": self.sessions,
            "pinned_versions": self.pinned_versions,
            "measurements": [m.to_json() for m in self.measurements.values()],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunState:
        """Rebuild from :meth:`to_json` output."""
        if data.get("state_version") != STATE_VERSION:
            raise RunStateError(f"state file version {data.get('state_version')!r} is not {STATE_VERSION}")
        measurements = [MeasurementState.from_json(m) for m in data["measurements"]]
        return cls(
            config=data["config"],
            submission_id=data["submission_id"],
            started_at=datetime.fromisoformat(data["started_at"]),
            measurements={m.precision: m for m in measurements},
            idle_power_w_before=data["idle_power_w_before"],
            idle_model_loaded_before=data.get("idle_model_loaded_before"),
            order=None if data["order"] is None else Order(data["order"]),
            sessions=int(data["sessions"]),
            pinned_versions=dict(data.get("pinned_versions") or data.get("stack") or {}),  # "stack": before 0.1.1
        )


def read_state(path: Path) -> RunState:
    """The run state saved in ``path``; a damaged file raises :class:`RunStateError` naming it."""
    try:
        return RunState.from_json(parse_json(path.read_bytes()))
    except (KeyError, TypeError, ValueError, ValidationError, SubmissionError) as exc:
        raise RunStateError(f"state file {path} is damaged ({exc})") from None


class StateStore:
    """State files of one directory, one per configuration."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def path(self, key: str) -> Path:
        """The state file of the configuration with hash ``key``."""
        return self.directory / f"run-{key}.json"

    def save(self, state: RunState) -> None:
        """Write ``state`` atomically."""
        write_text_atomic(self.path(state.key), json.dumps(state.to_json(), indent=1, allow_nan=False) + "\n")

    def load(self, key: str) -> RunState | None:
        """The saved state of configuration ``key``, or None when there is none."""
        path = self.path(key)
        if not path.exists():
            return None
        try:
            return read_state(path)
        except RunStateError as exc:
            raise RunStateError(f"{exc}: delete it to start over") from None

    def remove(self, key: str) -> None:
        """Delete the state file of configuration ``key`` (once its submission is written)."""
        self.path(key).unlink(missing_ok=True)
