"""Schema 1.0 of a submission: pydantic models of the contract in DESIGN.md.

Units live in field names. Windows are the raw truth; nothing derived is stored
in a submission, because readers recompute it with :func:`ecocompute.schema.derive`.
"""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, JsonValue

SCHEMA_VERSION = "1.0"
NAMESPACE = "ecocompute-submission-v1"
ENGINE = "transformers"
"""The inference engine the collector drives (``generate`` of Hugging Face transformers)."""

GITHUB_LOGIN_PATTERN = r"^[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}$"
SUBMISSION_ID_PATTERN = r"^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}$"
SHA256_PATTERN = r"^[0-9a-f]{64}$"

Login = Annotated[str, Field(pattern=GITHUB_LOGIN_PATTERN, description="A GitHub login.")]
NonNegative = Annotated[float, Field(ge=0)]
Positive = Annotated[float, Field(gt=0)]
Text = Annotated[str, Field(min_length=1, max_length=512)]


def _is_none(value: object) -> bool:
    return value is None


Later = Field(default=None, exclude_if=_is_none)
"""A field added after 1.0 was first published: left out of the written JSON when null, so files written
before it existed still round-trip byte for byte (and their signatures still verify)."""


class Precision(enum.StrEnum):
    """How a model's weights are held and multiplied."""

    FP16 = "fp16"
    BF16 = "bf16"
    INT8 = "int8"
    INT8_T0 = "int8-t0"
    NF4 = "nf4"
    NF4_DQ = "nf4-dq"
    FP4 = "fp4"

    @property
    def is_baseline(self) -> bool:
        """True for the unquantized precisions that quantized ones are compared against."""
        return self in (Precision.FP16, Precision.BF16)


class Stack(enum.StrEnum):
    """The inference software path.

    ``eager``: plain ``generate``. ``compiled``: static KV cache + torch.compile where transformers compiles; it
    declines bitsandbytes models, which then run with the static cache alone. ``compiled-all``: the same, with the
    bitsandbytes models compiled too: the collector marks their quantizer compileable, which transformers does not.
    """

    EAGER = "eager"
    COMPILED = "compiled"
    COMPILED_ALL = "compiled-all"

    @property
    def static_cache(self) -> bool:
        """Whether ``generate`` runs with a static KV cache (and so compiles what transformers lets it)."""
        return self is not Stack.EAGER


class _Model(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        allow_inf_nan=False,
        frozen=True,
        use_enum_values=False,
        validate_default=True,
    )


class Contributor(_Model):
    """Who measured: a GitHub login, which is also the signer."""

    github: Login
    name: Text | None = None
    affiliation: Text | None = None


class CollectorInfo(_Model):
    """The program that wrote the submission."""

    version: Text
    git_sha: Annotated[str, Field(pattern=r"^[0-9a-f]{7,40}$")] | None = None


class Hardware(_Model):
    """The GPU and host the measurement ran on. The GPU UUID is stored only as a hash."""

    gpu_name: Text
    gpu_arch: Text
    compute_capability: Annotated[str, Field(pattern=r"^[0-9]+\.[0-9]+$")]
    gpu_count: Annotated[int, Field(ge=1)]
    memory_total_mib: Annotated[int, Field(gt=0)]
    power_limit_w: Positive
    default_power_limit_w: Positive
    driver_version: Text
    vbios_version: Text
    gpu_uuid_sha256: Annotated[str, Field(pattern=SHA256_PATTERN)]
    persistence_mode: bool
    mig_mode: bool
    clocks_locked: bool
    cpu_model: Text
    cpu_count: Annotated[int, Field(ge=1)]
    host_os: Text
    memory_host_mib: Annotated[int, Field(gt=0)] | None = None


class Software(_Model):
    """Versions of everything on the inference path; a crossover belongs to this stack."""

    python: Text
    torch: Text
    cuda_runtime: Text | None
    transformers: Text
    bitsandbytes: Text | None
    accelerate: Text | None
    nvml: Text
    nvidia_ml_py: Text | None = None


class Workload(_Model):
    """What was generated, by which model, through which stack."""

    model_id: Text
    model_revision: Text | None
    weights: Literal["pretrained", "random-init"]
    architecture: Text
    params_total: Annotated[int, Field(gt=0)]
    batch_size: Annotated[int, Field(ge=1)]
    prompt_tokens: Annotated[int, Field(ge=1)]
    new_tokens: Annotated[int, Field(ge=1)]
    decoding: Literal["greedy"]
    prompt_sha256: Annotated[str, Field(pattern=SHA256_PATTERN)]
    stack: Stack
    attn_implementation: Text | None = None


class Method(_Model):
    """How the energy was measured: the knobs a reader needs to judge the numbers.

    ``idle_settle_s``: seconds waited after a synchronize before each idle reading. ``python_gc``: whether
    Python's garbage collector was paused during measured windows (and run between them). ``cpu_affinity``:
    the CPUs the generating process was pinned to (null: not pinned by the collector). ``nice``: the
    generating process's niceness. Null in all four: not recorded (older collectors).
    """

    energy_source: Literal["nvml_total_energy_counter"]
    power_sampling_hz: Positive
    window_min_s: Positive
    warmup_windows: Annotated[int, Field(ge=0)]
    min_windows: Annotated[int, Field(ge=1)]
    max_windows: Annotated[int, Field(ge=1)]
    target_ci_pct: Positive
    order: Literal["interleaved", "blocked"]
    random_delay_max_s: NonNegative
    cooldown_s: NonNegative = 0.0
    allow_shared: bool = False
    seed: int | None = None
    idle_settle_s: NonNegative | None = Later
    python_gc: Literal["paused-in-windows", "running"] | None = Later
    cpu_affinity: list[Annotated[int, Field(ge=0)]] | None = Later
    nice: int | None = Later


class Idle(_Model):
    """GPU power with the model loaded and nothing running, before and after the windows.

    ``model_loaded_before`` / ``model_loaded_after`` are false when no model could be loaded for that reading
    (e.g. every precision failed), so the idle power is lower than with a model; null: not recorded.
    """

    power_w_before: NonNegative
    power_w_after: NonNegative
    duration_s: Positive
    model_loaded_before: bool | None = Later
    model_loaded_after: bool | None = Later

    @property
    def power_w(self) -> float:
        """Idle power used for the static part: the mean of before and after."""
        return (self.power_w_before + self.power_w_after) / 2


class Window(_Model):
    """One window of back-to-back ``generate`` calls: the raw unit of measurement.

    ``process_cpu_s``: CPU time (user + system) of the generating process during the window.
    ``host_steal_s``: steal time during the window averaged per host CPU (the sum over all CPUs of
    /proc/stat divided by their number), so it compares with ``duration_s``. ``power_limit_w``: the GPU's
    power limit read from NVML at the window's start. ``recompiles``: torch._dynamo frame compilations
    (compiles and recompiles) during the window; anything above 0 means compiling fell inside it.
    ``host_others_busy_cpus``: how many of the host's CPUs other processes kept busy, on average over the
    window (busy time of all CPUs from /proc/stat, less the generating process's CPU time, per second); a
    collector on another GPU of the same host, or a compiler, shows here. Null: not recorded.
    """

    index: Annotated[int, Field(ge=0)]
    started_at: AwareDatetime
    duration_s: Positive
    energy_j: NonNegative
    energy_j_power_integrated: NonNegative
    tokens: Annotated[int, Field(ge=0)]
    generate_calls: Annotated[int, Field(ge=1)]
    temp_c_start: float
    temp_c_end: float
    sm_clock_mhz_mean: NonNegative
    throttle_reasons: list[Annotated[str, Field(max_length=64)]]
    gpu_util_pct_mean: Annotated[float, Field(ge=0, le=100)] | None = None
    process_cpu_s: NonNegative | None = None
    host_steal_s: NonNegative | None = None
    power_samples: Annotated[int, Field(ge=0)] | None = None
    delay_s: NonNegative | None = None
    other_gpu_processes: Annotated[int, Field(ge=0)] | None = None
    power_limit_w: Positive | None = Later
    recompiles: Annotated[int, Field(ge=0)] | None = Later
    host_others_busy_cpus: NonNegative | None = Later


class Quality(_Model):
    """Teacher-forced perplexity on a fixed text, taken after the energy windows."""

    perplexity: Positive
    corpus_sha256: Annotated[str, Field(pattern=SHA256_PATTERN)]
    tokens_evaluated: Annotated[int, Field(ge=1)]


class Measurement(_Model):
    """All windows of one precision of one model; ``error`` says why there are none.

    ``compiled``: on the compiled stacks, whether torch.compile ran this precision's forward; on ``compiled``
    transformers declines to compile some quantized models (bitsandbytes among them), which then run with the
    static KV cache alone. Null on the eager stack, or not recorded.
    """

    precision: Precision
    quantization: dict[str, JsonValue] | None
    windows: list[Window]
    warmup: list[Window] = Field(default_factory=list)
    quality: Quality | None = None
    error: Annotated[str, Field(max_length=4000)] | None = None
    memory_allocated_mib: NonNegative | None = None
    compiled: bool | None = None


class Payload(_Model):
    """Everything that is signed, apart from ``schema_version``, which sits beside it."""

    submission_id: Annotated[str, Field(pattern=SUBMISSION_ID_PATTERN)]
    created_at: AwareDatetime
    contributor: Contributor
    collector: CollectorInfo
    hardware: Hardware
    software: Software
    workload: Workload
    method: Method
    idle: Idle
    measurements: Annotated[list[Measurement], Field(min_length=1)]
    notes: Annotated[str, Field(max_length=4000)] | None = None
    example: bool = False


class Signature(_Model):
    """An SSH signature (``ssh-keygen -Y sign``) over the canonical bytes of the unsigned document."""

    format: Literal["sshsig"]
    namespace: Text
    signer: Login
    key_fingerprint: Annotated[str, Field(pattern=r"^SHA256:[A-Za-z0-9+/]{43}$")]
    armored: Annotated[str, Field(min_length=1, max_length=20000)]


class Submission(_Model):
    """A whole submission document, as written to ``submissions/<login>/<gpu>/<id>.json``."""

    schema_version: Literal["1.0"]
    payload: Payload
    signature: Signature | None = None

    @classmethod
    def from_file(cls, path: Any) -> Submission:
        """Read and validate a submission file; see :func:`ecocompute.schema.io.load_submission`."""
        from ecocompute.schema.io import load_submission

        return load_submission(path)

    def to_file(self, path: Any) -> None:
        """Write the document atomically with stable formatting; see :func:`ecocompute.schema.io.dump`."""
        from ecocompute.schema.io import write_submission

        write_submission(self, path)

    def unsigned(self) -> Submission:
        """The same document without its signature."""
        return self.model_copy(update={"signature": None})


def created_now() -> datetime:
    """The current UTC time, truncated to microseconds (what JSON round-trips)."""
    from datetime import UTC

    return datetime.now(UTC)
