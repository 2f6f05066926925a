"""Builders of synthetic, schema-valid submissions for tests and benchmarks.

Everything here is test data, labelled ``example`` where it is written to disk; nothing here is a
measurement. Figures follow the shapes seen on the reference H200 so that checks see realistic values.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import os
import pickle
import random
import shutil
import subprocess
import sys
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

from ecocompute.schema.models import Submission
from ecocompute.schema.signing import sign_submission

T = TypeVar("T")


def once_per_run(tmp_path_factory: Any, name: str, make: Callable[[Path], T]) -> T:
    """``make(folder)`` once per test run, its folder and result shared by every pytest-xdist worker.

    For expensive read-only session fixtures (a build of a submissions folder): the first worker to take the lock
    makes it, the others wait and get the same result (pickled beside it). Without xdist: once per session.
    """
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, above each worker's own
    folder, done = base / f"once-{name}", base / f"once-{name}.pickle"
    with (base / f"once-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            result: T = pickle.loads(done.read_bytes())  # noqa: S301 - written just now by this run's own worker
            return result
        shutil.rmtree(folder, ignore_errors=True)  # what a run killed mid-way left
        folder.mkdir()
        result = make(folder)
        done.write_bytes(pickle.dumps(result))
        return result


def load_script(path: Path, name: str | None = None) -> ModuleType:
    """Import a script that is not in a package (benchmarks/, scripts/) as a module named after its file, or
    ``name`` where two folders hold scripts of one name."""
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # a dataclass in it looks its module up by name
    spec.loader.exec_module(module)
    return module


def collect_options() -> set[str]:
    """Every option name ``ecocompute collect`` takes (the campaign kits' queue lines must use only these)."""
    import inspect

    from ecocompute.collector import cli

    names: set[str] = set()
    for parameter in inspect.signature(cli.collect_command).parameters.values():
        for decl in getattr(parameter.default, "param_decls", None) or ():
            names.update(decl.split("/"))
    return names


BASE_JPT = {"fp16": 2.07, "bf16": 2.09, "nf4": 2.72, "nf4-dq": 2.80, "int8": 6.14, "int8-t0": 4.18, "fp4": 2.70}
BNB = {
    "fp16": None,
    "bf16": None,
    "nf4": {"load_in_4bit": True, "bnb_4bit_quant_type": "nf4", "bnb_4bit_compute_dtype": "float16"},
    "nf4-dq": {
        "load_in_4bit": True,
        "bnb_4bit_quant_type": "nf4",
        "bnb_4bit_compute_dtype": "float16",
        "bnb_4bit_use_double_quant": True,
    },
    "fp4": {"load_in_4bit": True, "bnb_4bit_quant_type": "fp4", "bnb_4bit_compute_dtype": "float16"},
    "int8": {"load_in_8bit": True, "llm_int8_threshold": 6.0},
    "int8-t0": {"load_in_8bit": True, "llm_int8_threshold": 0.0},
}


def window(
    index: int,
    start: datetime,
    jpt: float,
    rng: random.Random,
    cv: float,
    *,
    batch: int = 1,
    new_tokens: int = 256,
    idle_w: float = 122.0,
) -> dict[str, Any]:
    """One plausible window dict: ~10.5 s of generate calls at ``jpt`` J/token with relative noise ``cv``."""
    calls = 5
    tokens = batch * new_tokens * calls
    energy = tokens * jpt * (1 + rng.gauss(0, cv))
    duration = max(10.0, energy / (idle_w + 40.0))
    return window_record(index, start, duration, energy, tokens, calls, rng)


def window_record(
    index: int, start: datetime, duration: float, energy: float, tokens: int, calls: int, rng: random.Random,
    *, gpu_util_pct: float = 21.0,
) -> dict[str, Any]:  # fmt: skip
    """A window dict with these figures; the integrated-power energy and the delay are drawn from ``rng``."""
    return {
        "index": index,
        "started_at": start.isoformat().replace("+00:00", "Z"),
        "duration_s": round(duration, 6),
        "energy_j": round(energy, 6),
        "energy_j_power_integrated": round(energy * (1 + rng.uniform(-0.01, 0.01)), 6),
        "tokens": tokens,
        "generate_calls": calls,
        "temp_c_start": 41.0,
        "temp_c_end": 42.0,
        "sm_clock_mhz_mean": 1980.0,
        "throttle_reasons": [],
        "gpu_util_pct_mean": gpu_util_pct,
        "process_cpu_s": round(duration * 0.99, 6),
        "host_steal_s": 0.0,
        "power_samples": int(duration * 10),
        "delay_s": round(rng.uniform(0, 0.1), 6),
        "other_gpu_processes": 0,
    }


def submission_document(
    seed: int = 0,
    *,
    login: str = "example-user",
    precisions: tuple[str, ...] = ("fp16", "nf4"),
    n_windows: int = 6,
    cv: float = 0.004,
    params_total: int = 1_100_048_384,
    architecture: str = "TinyLlama-1.1B",
    stack: str = "eager",
    batch: int = 1,
    example: bool = True,
    created: datetime | None = None,
) -> dict[str, Any]:
    """A complete, unsigned submission document (a dict, as JSON would give it)."""
    rng = random.Random(seed)
    created = created or datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC) + timedelta(minutes=seed)
    sub_id = created.strftime("%Y%m%dT%H%M%SZ") + "-" + hashlib.sha256(str(seed).encode()).hexdigest()[:8]
    start = created - timedelta(hours=1)
    measurements = []
    for p, prec in enumerate(precisions):
        windows = [
            window(i, start + timedelta(seconds=60 * i + p * 11), BASE_JPT[prec], rng, cv, batch=batch)
            for i in range(n_windows)
        ]
        warmup = [window(0, start - timedelta(seconds=30 - p * 11), BASE_JPT[prec] * 1.02, rng, cv, batch=batch)]
        measurements.append(
            {"precision": prec, "quantization": BNB.get(prec), "windows": windows, "warmup": warmup,
             "quality": None, "error": None, "memory_allocated_mib": 2100.0}
        )  # fmt: skip
    interleave(measurements, start - timedelta(minutes=20))
    return {
        "schema_version": "1.0",
        "payload": {
            "submission_id": sub_id,
            "created_at": created.isoformat().replace("+00:00", "Z"),
            "contributor": {"github": login, "name": None, "affiliation": None},
            "collector": {"version": "0.1.0", "git_sha": None},
            "hardware": {
                "gpu_name": "NVIDIA H200",
                "gpu_arch": "hopper",
                "compute_capability": "9.0",
                "gpu_count": 1,
                "memory_total_mib": 143771,
                "power_limit_w": 700.0,
                "default_power_limit_w": 700.0,
                "driver_version": "580.159.04",
                "vbios_version": "96.00.D0.00.03",
                "gpu_uuid_sha256": hashlib.sha256(b"GPU-example").hexdigest(),
                "persistence_mode": True,
                "mig_mode": False,
                "clocks_locked": False,
                "cpu_model": "Example CPU @ 2.0GHz",
                "cpu_count": 16,
                "host_os": "Linux-6.18-x86_64",
                "memory_host_mib": 131072,
            },
            "software": {
                "python": "3.12.3",
                "torch": "2.11.0+cu130",
                "cuda_runtime": "13.0",
                "transformers": "5.17.0",
                "bitsandbytes": "0.50.2",
                "accelerate": "1.13.0",
                "nvml": "13.580",
                "nvidia_ml_py": "13.610",
            },
            "workload": {
                "model_id": f"random-init/{architecture}",
                "model_revision": None,
                "weights": "random-init",
                "architecture": architecture,
                "params_total": params_total,
                "batch_size": batch,
                "prompt_tokens": 128,
                "new_tokens": 256,
                "decoding": "greedy",
                "prompt_sha256": hashlib.sha256(b"prompt").hexdigest(),
                "stack": stack,
                "attn_implementation": "sdpa",
            },
            "method": {
                "energy_source": "nvml_total_energy_counter",
                "power_sampling_hz": 10.0,
                "window_min_s": 10.0,
                "warmup_windows": 1,
                "min_windows": n_windows,
                "max_windows": n_windows,
                "target_ci_pct": 0.5,
                "order": "interleaved",
                "random_delay_max_s": 0.1,
                "cooldown_s": 0.0,
                "allow_shared": False,
                "seed": seed,
            },
            "idle": {"power_w_before": 122.0, "power_w_after": 123.0, "duration_s": 10.0},
            "measurements": measurements,
            "notes": "EXAMPLE: synthetic windows for tests and the demo; not a measurement." if example else None,
            "example": example,
        },
    }


def interleave(measurements: list[dict[str, Any]], first: datetime, gap_s: float = 0.3) -> None:
    """Start times as one GPU runs them: the warm-ups, then round after round, each window after the last."""
    clock = first
    order = [m["warmup"] for m in measurements] + [
        [m["windows"][i]] for i in range(max(len(m["windows"]) for m in measurements)) for m in measurements
        if i < len(m["windows"])
    ]  # fmt: skip
    for group in order:
        for w in group:
            w["started_at"] = clock.isoformat().replace("+00:00", "Z")
            clock += timedelta(seconds=w["duration_s"] + gap_s)


def make_submission(seed: int = 0, **kwargs: Any) -> Submission:
    """A validated, unsigned Submission."""
    return Submission.model_validate(submission_document(seed, **kwargs))


def make_key(directory: Path, name: str = "id_ed25519", key_type: str = "ed25519") -> Path:
    """Generate a passphrase-less SSH key with ssh-keygen; return the private key's path."""
    path = directory / name
    args = ["ssh-keygen", "-q", "-t", key_type, "-N", "", "-C", name, "-f", str(path)]
    if key_type == "rsa":
        args[4:4] = ["-b", "3072"]
    subprocess.run(args, check=True)
    return path


def allowed_signers_line(login: str, key: Path) -> str:
    """An allowed_signers line giving ``login`` the public key of ``key``."""
    public = key.with_name(key.name + ".pub").read_text(encoding="utf-8").split()
    return f"{login} {public[0]} {public[1]}\n"


@dataclass(frozen=True)
class Keys:
    """A test signer: login, private keys, and an allowed_signers file naming them."""

    login: str
    ed25519: Path
    rsa: Path
    allowed_signers: Path

    def sign(self, submission: Submission, rsa: bool = False) -> Submission:
        """Sign ``submission`` as this signer."""
        return sign_submission(submission, self.rsa if rsa else self.ed25519, self.login)


def run_async(fn: Callable[[], Awaitable[T]]) -> T:
    """``anyio.run(fn)`` in a thread of its own.

    The session's browser (Playwright's sync API, tests/browser.py) keeps an event loop running in the main thread
    of whichever xdist worker opened it; ``anyio.run`` there fails with "Already running asyncio in this thread".
    """
    import anyio

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, fn).result()


def committed_ids(engine: str) -> set[str]:
    """The ids of the repository's committed submissions of one engine (a file naming none is transformers')."""
    from ecocompute.schema.io import load_submission

    ids = set()
    for path in (Path(__file__).parents[1] / "submissions").rglob("*.json"):
        payload = load_submission(path).payload
        if (payload.workload.engine or "transformers") == engine:
            ids.add(payload.submission_id)
    return ids
