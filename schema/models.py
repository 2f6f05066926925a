"""Schema 1.2 of a submission: pydantic models of the contract in DESIGN.md, and its one field list.

1.1 names what files labelled 1.0 gained without a version bump (:data:`SCHEMA_CHANGES`); every 1.0 file reads
as it always did (the models accept every version) and keeps its signature. 1.2 adds fields and values that no
earlier file holds (:data:`NEW_IN`): a 1.0 or 1.1 document that uses one is refused, and the JSON Schema of each
earlier version leaves them out.

Units live in field names, and with each field's description (:func:`about`). Windows are the raw truth; nothing
derived is stored in a submission, because readers recompute it with :func:`ecocompute.schema.derive`.
"""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, JsonValue, model_validator

SCHEMA_VERSION = "1.2"
"""The version new documents are written as; ``schema.io.KNOWN_VERSIONS`` reads every one of :data:`SCHEMA_VERSIONS`."""
SCHEMA_VERSIONS = ("1.0", "1.1", "1.2")
"""Every version the models accept, oldest first; each has its JSON Schema, ``submission-<version>.schema.json``."""
SCHEMA_CHANGES = {
    "1.0": "the first published contract",
    "1.1": "names what 1.0 files gained without a version bump: Idle.model_loaded_before/_after, "
    "Method.idle_settle_s/python_gc/cpu_affinity/nice, Window.power_limit_w/recompiles/host_others_busy_cpus "
    "(optional, left out of the JSON when null), Measurement.compiled and the compiled-all stack",
    "1.2": "GPUs without an energy counter and AMD GPUs: Method.energy_source power_integral and "
    "amdsmi_energy_counter, Method.counter_absent_reason, Window.power_trace/power_first_sample_s/"
    "power_last_sample_gap_s/power_max_gap_s, Hardware.vendor; engines other than transformers: "
    "Workload.engine/engine_version/engine_build_flags, Measurement.quantization_type and the GGUF precisions "
    "q8_0 and q4_k_m, and torchao's FP8 precisions fp8-wo and fp8-dyn (all optional, left out of the JSON when null); "
    "null for a sensor the GPU does not report: Window.temp_c_start/temp_c_end/sm_clock_mhz_mean/throttle_reasons "
    "and Hardware.power_limit_w/default_power_limit_w",
}
"""What each schema version added, for the JSON Schema's description and the changelog."""
NAMESPACE = "ecocompute-submission-v1"
ENGINE = "transformers"
"""The inference engine of every file that names none (``generate`` of Hugging Face transformers): all before 1.2."""
VENDOR = "nvidia"
"""The GPU vendor of every file that names none: all before 1.2, when only NVML was read."""

GITHUB_LOGIN_PATTERN = r"^[A-Za-z0-9](?:-?[A-Za-z0-9]){0,38}$"
SUBMISSION_ID_PATTERN = r"^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}$"
SHA256_PATTERN = r"^[0-9a-f]{64}$"

Login = Annotated[str, Field(pattern=GITHUB_LOGIN_PATTERN, description="A GitHub login.")]
NonNegative = Annotated[float, Field(ge=0)]
Positive = Annotated[float, Field(gt=0)]
Text = Annotated[str, Field(min_length=1, max_length=512)]


def about(description: str, unit: str | None = None) -> Any:
    """A field's entry in the one field list: what it holds and, for a quantity, its unit (also in its name).

    Everything that describes a field (the JSON Schema, the pandera table columns, the publisher's column docs
    and the dataset card's column table) reads it from here: :func:`description_of` and :func:`unit_of`.
    """
    return Field(description=description, json_schema_extra={"unit": unit} if unit else None)


def description_of(model: type[BaseModel], name: str) -> str:
    """The description of field ``name`` of ``model``, as :func:`about` gave it."""
    description = model.model_fields[name].description
    if description is None:  # pragma: no cover - a test holds every field to a description
        raise KeyError(f"{model.__name__}.{name} has no description")
    return description


def unit_of(model: type[BaseModel], name: str) -> str | None:
    """The unit of field ``name`` of ``model`` (None for a field that is not a quantity)."""
    extra = model.model_fields[name].json_schema_extra
    unit = extra.get("unit") if isinstance(extra, dict) else None
    return unit if isinstance(unit, str) else None


def _is_none(value: object) -> bool:
    return value is None


since_1_1: Any = Field(default=None, exclude_if=_is_none)
"""The default of a field new in schema 1.1 (1.0 files gained it without a version bump): null, and left out of
the written JSON when null, so a file written before the field existed round-trips byte for byte and its signature
still verifies."""
since_1_2: Any = Field(default=None, exclude_if=_is_none)
"""The default of a field new in schema 1.2 (listed in :data:`NEW_IN`): null, and left out of the JSON when null."""

NEW_IN: dict[str, dict[str, tuple[str, ...]]] = {
    "1.2": {
        "Hardware": ("vendor",),
        "Workload": ("engine", "engine_version", "engine_build_flags"),
        "Method": ("counter_absent_reason",),
        "Window": ("power_trace", "power_first_sample_s", "power_last_sample_gap_s", "power_max_gap_s"),
        "Measurement": ("quantization_type",),
    },
}
"""Version -> model -> the fields it added that no earlier file holds (each defaults to null)."""
NEW_VALUES_IN: dict[str, dict[str, tuple[str, ...]]] = {
    "1.2": {
        "Method.energy_source": ("amdsmi_energy_counter", "power_integral"),
        "Precision": ("q8_0", "q4_k_m", "fp8-wo", "fp8-dyn"),
    },
}
"""Version -> ``Model.field`` (or an enum's name) -> the values it added to that field's choices."""
NULL_NEW_IN: dict[str, dict[str, tuple[str, ...]]] = {
    "1.2": {
        "Window": ("temp_c_start", "temp_c_end", "sm_clock_mhz_mean", "throttle_reasons"),
        "Hardware": ("power_limit_w", "default_power_limit_w"),
    },
}
"""Version -> model -> the required fields that may be null from that version on (a sensor the GPU lacks).

Earlier files always hold a value there; one that holds null is refused, and the earlier JSON Schemas keep the
field non-null."""
NOT_RECORDED = "null, from schema 1.2: this GPU does not report it; never 0"


class Precision(enum.StrEnum):
    """How a model's weights are held and multiplied.

    ``q8_0`` and ``q4_k_m`` are llama.cpp's GGUF quantization types (new in 1.2); ``fp8-wo`` (FP8 weights, 16-bit
    matmul) and ``fp8-dyn`` (FP8 weights and dynamically quantized FP8 activations) are torchao's (new in 1.2); the
    rest are transformers' bitsandbytes precisions and the 16-bit baselines.
    """

    FP16 = "fp16"
    BF16 = "bf16"
    INT8 = "int8"
    INT8_T0 = "int8-t0"
    NF4 = "nf4"
    NF4_DQ = "nf4-dq"
    FP4 = "fp4"
    Q8_0 = "q8_0"
    Q4_K_M = "q4_k_m"
    FP8_WO = "fp8-wo"
    FP8_DYN = "fp8-dyn"

    @property
    def is_baseline(self) -> bool:
        """True for the unquantized precisions that quantized ones are compared against."""
        return self in (Precision.FP16, Precision.BF16)

    @property
    def uses_bitsandbytes(self) -> bool:
        """True for the precisions bitsandbytes quantizes (a run of one must record its version)."""
        return self in (Precision.INT8, Precision.INT8_T0, Precision.NF4, Precision.NF4_DQ, Precision.FP4)


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

    github: Annotated[Login, about("GitHub login of the person who measured; the signature must be theirs")]
    name: Annotated[Text | None, about("their name, if they want it published")] = None
    affiliation: Annotated[Text | None, about("their institution or company, if they want it published")] = None


class CollectorInfo(_Model):
    """The program that wrote the submission."""

    version: Annotated[Text, about("version of the ecocompute collector")]
    git_sha: Annotated[
        Annotated[str, Field(pattern=r"^[0-9a-f]{7,40}$")] | None, about("git commit of the collector, when known")
    ] = None


class Hardware(_Model):
    """The GPU and host the measurement ran on. The GPU UUID is stored only as a hash."""

    gpu_name: Annotated[Text, about("NVML device name, e.g. NVIDIA H200")]
    gpu_arch: Annotated[Text, about("GPU architecture, e.g. hopper")]
    compute_capability: Annotated[str, Field(pattern=r"^[0-9]+\.[0-9]+$"), about("CUDA compute capability")]
    gpu_count: Annotated[int, Field(ge=1), about("GPUs used")]
    memory_total_mib: Annotated[int, Field(gt=0), about("memory of the GPU", "MiB")]
    power_limit_w: Annotated[Positive | None, about(f"power limit of the GPU during the run ({NOT_RECORDED})", "W")]
    default_power_limit_w: Annotated[Positive | None, about(f"the card's default power limit ({NOT_RECORDED})", "W")]
    driver_version: Annotated[Text, about("GPU driver version (NVIDIA's, or amdgpu's on AMD)")]
    vbios_version: Annotated[Text, about("VBIOS version")]
    gpu_uuid_sha256: Annotated[
        str, Field(pattern=SHA256_PATTERN), about("SHA-256 of the GPU UUID (tells cards apart without naming them)")
    ]
    persistence_mode: Annotated[bool, about("NVML persistence mode")]
    mig_mode: Annotated[bool, about("MIG enabled")]
    clocks_locked: Annotated[bool, about("clocks locked by the operator")]
    cpu_model: Annotated[Text, about("host CPU model")]
    cpu_count: Annotated[int, Field(ge=1), about("host logical CPUs")]
    host_os: Annotated[Text, about("host operating system")]
    memory_host_mib: Annotated[Annotated[int, Field(gt=0)] | None, about("host memory", "MiB")] = None
    vendor: Annotated[
        Literal["nvidia", "amd"] | None,
        about("GPU vendor: nvidia (read through NVML) or amd (through amdsmi); null: before 1.2, always nvidia"),
    ] = since_1_2


class Software(_Model):
    """Versions of everything on the inference path; a crossover belongs to this stack."""

    python: Annotated[Text, about("Python version")]
    torch: Annotated[Text, about("torch version")]
    cuda_runtime: Annotated[Text | None, about("CUDA runtime version (null: no CUDA)")]
    transformers: Annotated[Text, about("transformers version")]
    bitsandbytes: Annotated[Text | None, about("bitsandbytes version (null: not installed)")]
    accelerate: Annotated[Text | None, about("accelerate version (null: not installed)")]
    nvml: Annotated[Text, about("NVML version (on AMD: amdsmi <version>)")]
    nvidia_ml_py: Annotated[Text | None, about("nvidia-ml-py (pynvml) version")] = None


class Workload(_Model):
    """What was generated, by which model, through which stack."""

    model_id: Annotated[Text, about("model id (random-init/<architecture> for random weights)")]
    model_revision: Annotated[Text | None, about("model revision (commit), when pretrained")]
    weights: Annotated[Literal["pretrained", "random-init"], about("pretrained or random-init; never pool the two")]
    architecture: Annotated[Text, about("the model's architecture/shape name")]
    params_total: Annotated[int, Field(gt=0), about("total parameters of the model")]
    batch_size: Annotated[int, Field(ge=1), about("sequences generated per generate() call")]
    prompt_tokens: Annotated[
        int, Field(ge=1), about("prompt tokens per sequence (J/token depends on it and new_tokens: never pool lengths)")
    ]
    new_tokens: Annotated[
        int, Field(ge=1), about("new tokens per sequence per generate() call (min_new_tokens == max_new_tokens)")
    ]
    decoding: Annotated[Literal["greedy"], about("decoding strategy: greedy")]
    prompt_sha256: Annotated[str, Field(pattern=SHA256_PATTERN), about("SHA-256 of the prompt text")]
    stack: Annotated[
        Stack,
        about(
            "eager (plain generate), compiled (static KV cache + torch.compile; transformers leaves "
            "bitsandbytes models uncompiled) or compiled-all (the same, bitsandbytes models compiled too)"
        ),
    ]
    attn_implementation: Annotated[Text | None, about("attention implementation transformers used, e.g. sdpa")] = None
    engine: Annotated[
        Text | None,
        about(f"the inference engine, by its registry name, e.g. {ENGINE} or llama.cpp (null: before 1.2, {ENGINE})"),
    ] = since_1_2
    engine_version: Annotated[
        Text | None, about("the engine's own version, e.g. a llama.cpp release tag or commit (null: not recorded)")
    ] = since_1_2
    engine_build_flags: Annotated[
        dict[Annotated[str, Field(min_length=1, max_length=64)], Text] | None,
        about(
            "how the engine was built, as name -> value: for a compiled engine its commit and the build flags that "
            "matter (e.g. GGML_CUDA=ON, CMAKE_CUDA_ARCHITECTURES=90); for transformers the torch and CUDA it runs "
            "on (null: not recorded)"
        ),
    ] = since_1_2


class Method(_Model):
    """How the energy was measured: the knobs a reader needs to judge the numbers."""

    energy_source: Annotated[
        Literal["nvml_total_energy_counter", "amdsmi_energy_counter", "power_integral"],
        about(
            "where each window's energy_j comes from: nvml_total_energy_counter (NVML's total-energy counter), "
            "amdsmi_energy_counter (amdsmi's energy accumulator; 1.2) or power_integral (1.2: the GPU has no "
            "energy counter, or one known to be unreliable, so energy_j is the trapezoid integral of the sampled "
            "power, the same as energy_j_power_integrated, and idle power is integrated likewise; judged by "
            "rules of its own, see docs/counterless.md)"
        ),
    ]
    power_sampling_hz: Annotated[Positive, about("power sampling rate of the sampling thread", "Hz")]
    window_min_s: Annotated[Positive, about("minimum window length", "s")]
    warmup_windows: Annotated[int, Field(ge=0), about("warm-up windows per precision, measured and discarded")]
    min_windows: Annotated[int, Field(ge=1), about("minimum windows per precision")]
    max_windows: Annotated[int, Field(ge=1), about("maximum windows per precision")]
    target_ci_pct: Annotated[Positive, about("the stopping rule's target 95% CI half width, relative to the mean", "%")]
    order: Annotated[
        Literal["interleaved", "blocked"],
        about("interleaved (precisions alternate window by window) or blocked (one precision's windows in a row)"),
    ]
    random_delay_max_s: Annotated[NonNegative, about("largest random delay before a window", "s")]
    cooldown_s: Annotated[NonNegative, about("pause between precisions", "s")] = 0.0
    allow_shared: Annotated[bool, about("whether other processes were allowed on the GPU")] = False
    seed: Annotated[int | None, about("seed of the random delays and the order")] = None
    idle_settle_s: Annotated[
        NonNegative | None, about("wait after a synchronize before each idle reading (null: not recorded)", "s")
    ] = since_1_1
    python_gc: Annotated[
        Literal["paused-in-windows", "running"] | None,
        about("whether Python's garbage collector was paused in windows and run between them (null: not recorded)"),
    ] = since_1_1
    cpu_affinity: Annotated[
        list[Annotated[int, Field(ge=0)]] | None,
        about("CPUs the generating process was pinned to (null: not pinned by the collector, or not recorded)"),
    ] = since_1_1
    nice: Annotated[int | None, about("niceness of the generating process (null: not recorded)")] = since_1_1
    counter_absent_reason: Annotated[
        Text | None,
        about("with power_integral, why no energy counter was read, e.g. NVML NOT_SUPPORTED (null: a counter was)"),
    ] = since_1_2


class Idle(_Model):
    """GPU power with the model loaded and nothing running, before and after the windows.

    A reading without a model (``model_loaded_*`` false: e.g. every precision failed) is lower than with one.
    """

    power_w_before: Annotated[NonNegative, about("idle GPU power before the windows, model loaded", "W")]
    power_w_after: Annotated[NonNegative, about("idle GPU power after the windows, model loaded", "W")]
    duration_s: Annotated[Positive, about("length of each idle reading", "s")]
    model_loaded_before: Annotated[
        bool | None, about("whether a model was loaded for the reading before (null: not recorded)")
    ] = since_1_1
    model_loaded_after: Annotated[
        bool | None, about("whether a model was loaded for the reading after (null: not recorded)")
    ] = since_1_1

    @property
    def power_w(self) -> float:
        """Idle power used for the static part: the mean of before and after."""
        return (self.power_w_before + self.power_w_after) / 2


class Window(_Model):
    """One window of back-to-back ``generate`` calls: the raw unit of measurement.

    A collector on another GPU of the same host, or a compiler, shows in ``host_others_busy_cpus``.
    """

    index: Annotated[
        int, Field(ge=0), about("position of the window within its measurement (warm-up windows count apart)")
    ]
    started_at: Annotated[AwareDatetime, about("UTC start of the window")]
    duration_s: Annotated[Positive, about("wall time of the window's back-to-back generate() calls", "s")]
    energy_j: Annotated[
        NonNegative,
        about(
            "difference of the GPU's total-energy counter (NVML's; amdsmi's on AMD) over the window; with "
            "energy_source power_integral, the integral of the sampled power (= energy_j_power_integrated)",
            "J",
        ),
    ]
    energy_j_power_integrated: Annotated[
        NonNegative, about("integral of the GPU power (NVML's; amdsmi's on AMD) sampled at ~10 Hz over the window", "J")
    ]
    tokens: Annotated[int, Field(ge=0), about("tokens generated in the window (batch x new tokens x generate calls)")]
    generate_calls: Annotated[int, Field(ge=1), about("generate() calls in the window")]
    temp_c_start: Annotated[float | None, about(f"GPU temperature at the start of the window ({NOT_RECORDED})", "degC")]
    temp_c_end: Annotated[float | None, about(f"GPU temperature at the end of the window ({NOT_RECORDED})", "degC")]
    sm_clock_mhz_mean: Annotated[
        NonNegative | None, about(f"mean SM clock (GFX clock on AMD) over the window ({NOT_RECORDED})", "MHz")
    ]
    throttle_reasons: Annotated[
        list[Annotated[str, Field(max_length=64)]] | None,
        about(
            "clock-throttle reasons seen during the window (NVML's; amdsmi's violation flags on AMD), empty when none "
            f"({NOT_RECORDED})"
        ),
    ]
    gpu_util_pct_mean: Annotated[
        Annotated[float, Field(ge=0, le=100)] | None,
        about("mean GPU utilisation (null: not recorded, or from 1.2 not reported by this GPU)", "%"),
    ] = None
    process_cpu_s: Annotated[
        NonNegative | None,
        about("CPU time (user + system) of the generating process (host-bound when close to duration_s)", "s"),
    ] = None
    host_steal_s: Annotated[
        NonNegative | None,
        about(
            "steal time during the window, summed over the host's CPUs from /proc/stat and divided by their number", "s"
        ),
    ] = None
    power_samples: Annotated[
        Annotated[int, Field(ge=0)] | None, about("power readings the sampling thread took during the window")
    ] = None
    delay_s: Annotated[NonNegative | None, about("the random delay before the window", "s")] = None
    other_gpu_processes: Annotated[
        Annotated[int, Field(ge=0)] | None,
        about(
            "other processes on the GPU at the window's start (above 0: shared, W-SHARED; null: NVML could not "
            "list them)"
        ),
    ] = None
    power_limit_w: Annotated[
        Positive | None,
        about(
            "the GPU's power limit read from NVML at the window's start (null: not recorded, or from 1.2 not "
            "reported by this GPU)",
            "W",
        ),
    ] = since_1_1
    recompiles: Annotated[
        Annotated[int, Field(ge=0)] | None,
        about(
            "torch._dynamo frame compilations inside the window, eager included; above 0: compiling fell inside it "
            "(null: not recorded)"
        ),
    ] = since_1_1
    host_others_busy_cpus: Annotated[
        NonNegative | None,
        about(
            "host CPUs other processes kept busy, mean over the window (busy time of all CPUs from /proc/stat less "
            "the generating process's CPU time, per second; null: not recorded)",
            "CPUs",
        ),
    ] = since_1_1
    power_trace: Annotated[
        list[tuple[NonNegative, NonNegative]] | None,
        about(
            "the power readings of the window as [seconds since the window's start, W] pairs, in time order, "
            "the engine's own readings at both ends included (written with power_integral; null: not written)"
        ),
    ] = since_1_2
    power_first_sample_s: Annotated[
        NonNegative | None,
        about("from the window's start to its first power reading (null: not recorded)", "s"),
    ] = since_1_2
    power_last_sample_gap_s: Annotated[
        NonNegative | None,
        about("from the window's last power reading to its end (null: not recorded)", "s"),
    ] = since_1_2
    power_max_gap_s: Annotated[
        NonNegative | None,
        about("the longest time between two successive power readings in the window (null: not recorded)", "s"),
    ] = since_1_2


class Quality(_Model):
    """Teacher-forced perplexity on a fixed text, taken after the energy windows."""

    perplexity: Annotated[Positive, about("teacher-forced perplexity on a fixed text")]
    corpus_sha256: Annotated[str, Field(pattern=SHA256_PATTERN), about("SHA-256 of the text")]
    tokens_evaluated: Annotated[int, Field(ge=1), about("tokens of the text evaluated")]


class Measurement(_Model):
    """All windows of one precision of one model; ``error`` says why there are none."""

    precision: Annotated[
        Precision,
        about(
            "fp16, bf16, int8 (threshold 6.0), int8-t0 (threshold 0.0), nf4, nf4-dq, fp4, llama.cpp's q8_0 or "
            "q4_k_m, or torchao's fp8-wo (FP8 weights) or fp8-dyn (FP8 weights and activations)"
        ),
    ]
    quantization: Annotated[
        dict[str, JsonValue] | None,
        about(
            "the full quantization config: bitsandbytes', torchao's TorchAoConfig or the GGUF file's (null: fp16/bf16)"
        ),
    ]
    windows: Annotated[list[Window], about("the measured windows, in the order they ran")]
    warmup: Annotated[
        list[Window], Field(default_factory=list), about("warm-up windows, measured and left out of every figure")
    ]
    quality: Annotated[Quality | None, about("perplexity, when measured")] = None
    error: Annotated[
        Annotated[str, Field(max_length=4000)] | None,
        about("why the measurement has no windows (e.g. CUDA out of memory), else null"),
    ] = None
    memory_allocated_mib: Annotated[
        NonNegative | None, about("GPU memory torch had allocated after loading", "MiB")
    ] = None
    compiled: Annotated[
        bool | None,
        about(
            "on the compiled stacks, whether torch.compile ran this precision (on compiled, transformers declines "
            "bitsandbytes models, which then run with the static cache alone); null on the eager stack or not recorded"
        ),
    ] = None
    quantization_type: Annotated[
        Text | None,
        about(
            "the engine's own name of this precision's weight format, e.g. llama.cpp's F16, Q8_0 or Q4_K_M (per "
            "precision, as one submission measures several; null: the engine has none, as transformers, whose "
            "bitsandbytes config is in quantization)"
        ),
    ] = since_1_2


class Payload(_Model):
    """Everything that is signed, apart from ``schema_version``, which sits beside it."""

    submission_id: Annotated[
        str, Field(pattern=SUBMISSION_ID_PATTERN), about("id of the submission: <UTC time>-<8 hex>")
    ]
    created_at: Annotated[AwareDatetime, about("UTC time the collector wrote the submission")]
    contributor: Annotated[Contributor, about("who measured")]
    collector: Annotated[CollectorInfo, about("the program that wrote the submission")]
    hardware: Annotated[Hardware, about("the GPU and host")]
    software: Annotated[Software, about("versions on the inference path")]
    workload: Annotated[Workload, about("what was generated, by which model, through which stack")]
    method: Annotated[Method, about("how the energy was measured")]
    idle: Annotated[Idle, about("idle GPU power before and after the windows")]
    measurements: Annotated[list[Measurement], Field(min_length=1), about("one per precision")]
    notes: Annotated[Annotated[str, Field(max_length=4000)] | None, about("free text from the contributor")] = None
    example: Annotated[bool, about("true for synthetic example data, never a measurement")] = False


class Signature(_Model):
    """An SSH signature (``ssh-keygen -Y sign``) over the canonical bytes of the unsigned document."""

    format: Annotated[Literal["sshsig"], about("signature format: sshsig")]
    namespace: Annotated[Text, about(f"signature namespace ({NAMESPACE})")]
    signer: Annotated[Login, about("GitHub login whose SSH key signed the submission")]
    key_fingerprint: Annotated[
        str, Field(pattern=r"^SHA256:[A-Za-z0-9+/]{43}$"), about("SHA-256 fingerprint of the signing key")
    ]
    armored: Annotated[str, Field(min_length=1, max_length=20000), about("the armored SSH signature")]


class Submission(_Model):
    """A whole submission document, as written to ``submissions/<login>/<gpu>/<id>.json``."""

    schema_version: Annotated[Literal["1.0", "1.1", "1.2"], about("version of this contract the document follows")]
    payload: Annotated[Payload, about("everything that is measured and signed")]
    signature: Annotated[Signature | None, about("SSH signature over the document without it")] = None

    @model_validator(mode="after")
    def _only_what_its_version_has(self) -> Submission:
        used = newer_than(self.payload, self.schema_version)
        if used:
            raise ValueError(
                f"schema {self.schema_version} has no {', '.join(used)}: write schema_version "
                f"{SCHEMA_VERSION} (the collector does)"
            )
        return self

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


def _added_after(version: str) -> list[str]:
    return [v for v in SCHEMA_VERSIONS if SCHEMA_VERSIONS.index(v) > SCHEMA_VERSIONS.index(version)]


def newer_than(payload: Payload, version: str) -> list[str]:
    """``Model.field`` (or ``Model.field=value``) of everything in ``payload`` that ``version`` does not have."""
    later = _added_after(version)
    if not later:
        return []
    found: list[str] = []
    nodes: list[BaseModel] = [payload.hardware, payload.workload, payload.method, *payload.measurements]
    nodes += [w for m in payload.measurements for w in (*m.warmup, *m.windows)]
    for node in nodes:
        name = type(node).__name__
        for v in later:
            found += [f"{name}.{f}" for f in NEW_IN.get(v, {}).get(name, ()) if getattr(node, f) is not None]
            found += [f"{name}.{f}=null" for f in NULL_NEW_IN.get(v, {}).get(name, ()) if getattr(node, f) is None]
    for v in later:
        added = NEW_VALUES_IN.get(v, {})
        if payload.method.energy_source in added.get("Method.energy_source", ()):
            found.append(f"Method.energy_source={payload.method.energy_source}")
        found += [
            f"Precision={m.precision.value}"
            for m in payload.measurements
            if m.precision.value in added.get("Precision", ())
        ]
    return list(dict.fromkeys(found))
