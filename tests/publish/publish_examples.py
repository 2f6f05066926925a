"""Synthetic, signed EXAMPLE submissions across model sizes, for the publisher's tests, the demo and benchmarks.

Nothing here is a measurement: every document says ``example: true`` and its notes say so. J/token follows a
made-up curve in the shape of the reference runs: FP16 grows with model size; NF4 costs energy on small models and
saves it on large ones on the eager stack (crossover near 4B), and never crosses up to 14.7B on the compiled stack;
INT8 costs more everywhere. ``PYTHONPATH=tests python tests/publish/publish_examples.py DIR`` writes the committed
demo set into DIR.
"""

from __future__ import annotations

import hashlib
import math
import random
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from factories import BNB, allowed_signers_line, make_key, submission_document, window_record

from ecocompute.schema.io import write_submission
from ecocompute.schema.models import Submission
from ecocompute.schema.paths import submission_relpath
from ecocompute.schema.signing import sign_submission

LOGIN = "example-user"
CREATED = datetime(2026, 10, 1, 12, 0, 0, tzinfo=UTC)
# (architecture, params_total) of the random-init shapes of the reference sweep
SHAPES = (
    ("Qwen2.5-0.5B", 494_032_768),
    ("TinyLlama-1.1B", 1_100_048_384),
    ("Qwen2.5-1.5B", 1_543_714_304),
    ("Qwen2.5-3B", 3_085_938_688),
    ("Qwen2.5-7B", 7_615_616_512),
    ("Qwen2.5-14B", 14_770_033_664),
)
# change of J/token against fp16 in %: A - S * x / (1 + x), x = params / N0 (billions), per stack and precision
CHANGE_CURVES = {
    ("eager", "nf4"): (45.0, 110.0, 6.0),
    ("eager", "int8"): (160.0, 90.0, 5.0),
    ("eager", "int8-t0"): (90.0, 60.0, 5.0),
    ("eager", "bf16"): (1.0, 0.0, 1.0),
    ("compiled", "nf4"): (120.0, 150.0, 10.0),
    ("compiled", "bf16"): (0.5, 0.0, 1.0),
}


# made-up average power of a window: eager decode is host-bound (~90% of it idle power), compiled is GPU-bound
POWER_W = {"eager": 135.0, "compiled": 200.0}


@dataclass(frozen=True)
class Spec:
    """One example submission: a model shape on a stack at a batch size, with its precisions."""

    architecture: str
    params_total: int
    stack: str
    batch: int
    precisions: tuple[str, ...]


def fp16_jpt(params_total: int, stack: str, batch: int) -> float:
    """Made-up FP16 J/token: grows with size, lower on the compiled stack and at larger batch."""
    jpt = 1.58 + 0.442 * params_total / 1e9
    if stack == "compiled":
        jpt *= 0.25
    return jpt / (1 + 0.7 * (batch - 1))


def example_jpt(spec: Spec, precision: str) -> float:
    """Made-up J/token of ``precision`` for ``spec``, following :data:`CHANGE_CURVES`."""
    base = fp16_jpt(spec.params_total, spec.stack, spec.batch)
    if precision == "fp16":
        return base
    a, s, n0 = CHANGE_CURVES[(spec.stack, precision)]
    x = spec.params_total / 1e9 / n0
    return base * (1 + (a - s * x / (1 + x)) / 100)


def example_window(index: int, start: datetime, jpt: float, rng: random.Random, cv: float, *, batch: int,
                   power_w: float, new_tokens: int = 256) -> dict[str, Any]:  # fmt: skip
    """One window of at least 10.5 s at about ``power_w``: enough generate calls, energy with relative noise ``cv``."""
    per_call = batch * new_tokens
    calls = max(1, math.ceil(10.5 * power_w / (per_call * jpt)))
    tokens = per_call * calls
    energy = tokens * jpt * (1 + rng.gauss(0, cv))
    duration = tokens * jpt / power_w * (1 + rng.gauss(0, cv / 4))
    return window_record(
        index, start, duration, energy, tokens, calls, rng, gpu_util_pct=21.0 if power_w < 150 else 80.0
    )


EXAMPLE_GPU = "Synthetic example GPU"


def example_document(spec: Spec, seed: int, *, login: str = LOGIN, n_windows: int = 8, cv: float = 0.004,
                     created: datetime | None = None) -> dict[str, Any]:  # fmt: skip
    """A complete, unsigned example document for ``spec`` (windows drawn from a seeded RNG)."""
    created = created or CREATED + timedelta(minutes=seed)
    document = submission_document(
        seed, login=login, precisions=spec.precisions, n_windows=n_windows, cv=cv, params_total=spec.params_total,
        architecture=spec.architecture, stack=spec.stack, batch=spec.batch, example=True, created=created,
    )  # fmt: skip
    rng = random.Random(seed)
    start = created - timedelta(hours=3)
    power = POWER_W[spec.stack]
    for p, measurement in enumerate(document["payload"]["measurements"]):
        jpt = example_jpt(spec, measurement["precision"])
        measurement["quantization"] = BNB.get(measurement["precision"])
        measurement["windows"] = [
            example_window(i, start + timedelta(seconds=120 * (i * len(spec.precisions) + p)), jpt, rng, cv,
                           batch=spec.batch, power_w=power)
            for i in range(n_windows)
        ]  # fmt: skip
        measurement["warmup"] = [example_window(0, start - timedelta(seconds=1200 - 120 * p), jpt * 1.02, rng, cv,
                                                batch=spec.batch, power_w=power)]  # fmt: skip
    document["payload"]["workload"]["prompt_sha256"] = hashlib.sha256(b"example prompt").hexdigest()
    document["payload"]["hardware"]["gpu_name"] = EXAMPLE_GPU  # never mistaken for a measured card
    return document


def demo_specs() -> list[Spec]:
    """The committed demo set: every shape on eager (batch 1 and 8) and compiled (batch 1)."""
    specs = []
    for architecture, params in SHAPES:
        specs.append(Spec(architecture, params, "eager", 1, ("fp16", "bf16", "nf4", "int8", "int8-t0")))
        specs.append(Spec(architecture, params, "eager", 8, ("fp16", "nf4", "int8")))
        specs.append(Spec(architecture, params, "compiled", 1, ("fp16", "bf16", "nf4")))
    return specs


def write_signed(root: Path, key: Path, documents: Iterable[dict[str, Any]], *, login: str = LOGIN) -> list[Path]:
    """Sign each document with ``key`` as ``login`` and write it where its content says, under ``root``."""
    paths = []
    for document in documents:
        submission = sign_submission(Submission.model_validate(document), key, login)
        path = root / Path(str(submission_relpath(submission)))
        write_submission(submission, path)
        paths.append(path)
    return paths


def write_allowed_signers(root: Path, key: Path, login: str = LOGIN) -> Path:
    """An allowed_signers file at ``root`` naming ``login``'s public key."""
    path = root / "allowed_signers"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# EXAMPLE key for the example submissions only\n" + allowed_signers_line(login, key))
    return path


def write_demo_set(root: Path) -> list[Path]:
    """Write the demo set, signed with a fresh throwaway key (its private half is deleted)."""
    with tempfile.TemporaryDirectory() as keys:
        key = make_key(Path(keys), "example_ed25519")
        write_allowed_signers(root, key)
        return write_signed(root, key, (example_document(s, seed) for seed, s in enumerate(demo_specs())))


if __name__ == "__main__":
    written = write_demo_set(Path(sys.argv[1]))
    sys.stdout.write(f"wrote {len(written)} example submissions under {sys.argv[1]}\n")
