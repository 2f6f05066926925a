"""The precisions the collector measures, and what each means for loading a model.

Pure data: :mod:`ecocompute.collector.model.hf` turns a spec into ``dtype`` and a ``BitsAndBytesConfig``, or (FP8)
:mod:`ecocompute.collector.model.torchao_fp8` into a torchao config.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ecocompute.schema.errors import UsageError
from ecocompute.schema.models import Precision


@dataclass(frozen=True)
class PrecisionSpec:
    """How to load one precision: torch dtype name, BitsAndBytesConfig arguments, bytes per quantized weight.

    ``engines`` names the engines that have the precision: fp16 is everyone's baseline; bitsandbytes' precisions
    are transformers', the GGUF types llama.cpp's (its F16 file is fp16). ``torchao`` names torchao's config class,
    its granularity and its inductor switch for the FP8 precisions (transformers', through ``TorchAoConfig``).
    """

    precision: Precision
    dtype: str
    bnb: dict[str, Any] | None = field(default=None)
    weight_bytes: float = 2.0
    engines: tuple[str, ...] = ("transformers",)
    torchao: dict[str, Any] | None = field(default=None)


_NF4 = {"load_in_4bit": True, "bnb_4bit_quant_type": "nf4", "bnb_4bit_compute_dtype": "float16"}

SPECS: dict[Precision, PrecisionSpec] = {
    Precision.FP16: PrecisionSpec(Precision.FP16, "float16", engines=("transformers", "llama.cpp")),
    Precision.BF16: PrecisionSpec(Precision.BF16, "bfloat16"),
    Precision.INT8: PrecisionSpec(Precision.INT8, "float16", {"load_in_8bit": True}, 1.0),
    Precision.INT8_T0: PrecisionSpec(
        Precision.INT8_T0, "float16", {"load_in_8bit": True, "llm_int8_threshold": 0.0}, 1.0
    ),
    Precision.NF4: PrecisionSpec(Precision.NF4, "float16", _NF4, 0.5625),
    Precision.NF4_DQ: PrecisionSpec(Precision.NF4_DQ, "float16", {**_NF4, "bnb_4bit_use_double_quant": True}, 0.52),
    Precision.FP4: PrecisionSpec(Precision.FP4, "float16", {**_NF4, "bnb_4bit_quant_type": "fp4"}, 0.5625),
    # llama.cpp's GGUF types: Q8_0 is 34 bytes per 32 weights; Q4_K_M mixes Q4_K (4.5 bits) and Q6_K (6.56 bits)
    Precision.Q8_0: PrecisionSpec(Precision.Q8_0, "float16", None, 34 / 32, ("llama.cpp",)),
    Precision.Q4_K_M: PrecisionSpec(Precision.Q4_K_M, "float16", None, 0.61, ("llama.cpp",)),
    # torchao's FP8 (docs/fp8.md): float8_e4m3fn weights with a scale per row. Weight-only dequantizes to the fp16
    # model's dtype before each matmul; dynamic quantizes activations too, and row-wise scaled FP8 matmuls return
    # bfloat16, so that model loads in bf16. set_inductor_config False: the process's inductor settings stay the
    # sweep's, for the fp16 model of the same run too.
    Precision.FP8_WO: PrecisionSpec(
        Precision.FP8_WO, "float16", None, 1.0,
        torchao={"config": "Float8WeightOnlyConfig", "granularity": "PerRow", "set_inductor_config": False},
    ),
    Precision.FP8_DYN: PrecisionSpec(
        Precision.FP8_DYN, "bfloat16", None, 1.0,
        torchao={"config": "Float8DynamicActivationFloat8WeightConfig", "granularity": "PerRow",
                 "set_inductor_config": False},
    ),
}  # fmt: skip


def parse_precisions(text: str | Iterable[str]) -> list[Precision]:
    """Parse ``"fp16,nf4"`` (or a list of names) into precisions, in order; UsageError names the valid ones."""
    names = text.split(",") if isinstance(text, str) else list(text)
    valid = ", ".join(p.value for p in Precision)
    result: list[Precision] = []
    for raw in names:
        name = raw.strip().lower()
        if not name:
            continue
        try:
            precision = Precision(name)
        except ValueError:
            raise UsageError(f"unknown precision {raw.strip()!r}: choose from {valid}") from None
        if precision in result:
            raise UsageError(f"precision {name} is listed twice: list each once")
        result.append(precision)
    if not result:
        raise UsageError(f"no precision given: pass e.g. --precisions fp16,nf4 (valid: {valid})")
    return result


def check_engine(precisions: Iterable[Precision], engine: str) -> None:
    """UsageError naming every precision ``engine`` does not have, and the ones it has."""
    foreign = [p.value for p in precisions if engine not in SPECS[p].engines]
    if foreign:
        own = ", ".join(p.value for p, spec in SPECS.items() if engine in spec.engines)
        raise UsageError(f"{', '.join(foreign)}: not a precision of the {engine} engine, which has {own}")


def estimate_model_bytes(params_total: int, unquantized_params: int, spec: PrecisionSpec) -> float:
    """Rough weight memory of a model at ``spec``: embeddings and lm_head stay 16-bit, the rest at ``weight_bytes``."""
    quantized = max(0, params_total - unquantized_params)
    return unquantized_params * 2.0 + quantized * spec.weight_bytes
