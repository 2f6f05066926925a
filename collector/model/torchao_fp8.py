"""FP8 through torchao: the configs of ``fp8-wo`` and ``fp8-dyn``, and what they need of the GPU and the software.

Both load through transformers' ``TorchAoConfig``, which quantizes every ``nn.Linear`` but the embeddings and
``lm_head`` as the weights load (docs/fp8.md):

- ``fp8-wo``: ``Float8WeightOnlyConfig(granularity=PerRow())``. ``float8_e4m3fn`` weights with a scale per output
  row; every call dequantizes the weight and multiplies at 16 bits (torchao's reference path, pytorch/ao#3288), on an
  fp16 model, the sweep's baseline. The RTX 5090 energy anomaly (pytorch/ao#4094) is this path's.
- ``fp8-dyn``: ``Float8DynamicActivationFloat8WeightConfig(granularity=PerRow())``. The same weights; activations
  are quantized per row on every call and the product runs on the FP8 tensor cores (``torch._scaled_mm``). Row-wise
  scaled FP8 products return bfloat16, so this model loads in bf16 (torchao refuses PerRow on fp16 weights).

Both set ``set_inductor_config=False``: torchao would otherwise switch on inductor's coordinate-descent tuning for
the whole process, and the run's fp16 model would then compile differently from the sweep's.

torch and torchao are imported inside the functions; :func:`fp8_problems` reads only package metadata.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
import re
from collections.abc import Iterable
from typing import Any

from ecocompute.collector.errors import GpuError, ModelError
from ecocompute.collector.model.precisions import SPECS
from ecocompute.schema.models import Precision

FP8_PRECISIONS = tuple(p for p, spec in SPECS.items() if spec.torchao is not None)
MIN_COMPUTE_CAPABILITY = (8, 9)
"""FP8 tensor cores: Ada (8.9), Hopper (9.0), Blackwell (10.0, 12.0)."""
TORCHAO_MIN = (0, 18, 0)
TORCH_MIN = (2, 11, 0)
"""torchao 0.18 is built against torch 2.11's stable ABI and dropped its code paths for older torch."""
INSTALL = "pip install 'ecocompute[fp8]'"


class NoFp8Error(GpuError):
    """The GPU (or the device the model would run on) has no FP8 matmul, or torchao cannot run here."""


def is_fp8(precision: Precision) -> bool:
    """Whether ``precision`` is one of torchao's FP8 precisions."""
    return precision in FP8_PRECISIONS


def _version_tuple(text: str) -> tuple[int, ...]:
    match = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    if match is None:
        return ()
    return tuple(int(part or 0) for part in match.groups())


def _installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def parse_compute_capability(text: str) -> tuple[int, int] | None:
    """``"9.0"`` -> (9, 0); None when it is not ``major.minor``."""
    match = re.fullmatch(r"(\d+)\.(\d+)", text.strip())
    return None if match is None else (int(match.group(1)), int(match.group(2)))


def software_problem() -> str | None:
    """Why torchao's FP8 cannot run with the installed packages (None: it can), with the fix."""
    torchao, torch = _installed("torchao"), _installed("torch")
    if torchao is None:
        return f"torchao is not installed: {INSTALL}"
    if _version_tuple(torchao) < TORCHAO_MIN:
        need = ".".join(map(str, TORCHAO_MIN))
        return f"torchao {torchao} is older than {need}, which ecocompute's FP8 needs: {INSTALL}"
    if torch is not None and _version_tuple(torch) < TORCH_MIN:
        return (
            f"torchao {torchao} needs torch {'.'.join(map(str, TORCH_MIN))} or newer, and torch {torch} is installed: "
            "upgrade torch"
        )
    return None


def fp8_problems(precisions: Iterable[Precision], *, vendor: str, compute_capability: str, gpu_name: str,
                 model_device: str | None = None) -> list[str]:  # fmt: skip
    """Why the FP8 precisions among ``precisions`` cannot be measured here (empty: they can), each with its fix.

    ``model_device`` is where the model runs when it is not the measured GPU (``--torch-device cpu``, tests only):
    ``fp8-wo`` runs there, ``fp8-dyn`` (an FP8 matmul) does not.
    """
    wanted = [p for p in precisions if is_fp8(p)]
    if not wanted:
        return []
    names = ", ".join(p.value for p in wanted)
    drop = f"drop {names} from --precisions"
    problems = []
    if (software := software_problem()) is not None:
        problems.append(f"{names}: {software}")
    if vendor != "nvidia":
        problems.append(
            f"{names}: FP8 through torchao is measured on NVIDIA GPUs only here ({gpu_name} is {vendor}; torchao's "
            f"AMD FP8, float8_e4m3fnuz on MI300, has not been tried with the collector): {drop}"
        )
    else:
        cc = parse_compute_capability(compute_capability)
        if cc is None or cc < MIN_COMPUTE_CAPABILITY:
            need = ".".join(map(str, MIN_COMPUTE_CAPABILITY))
            problems.append(
                f"{names}: {gpu_name} (compute capability {compute_capability}) has no FP8 tensor cores; FP8 needs "
                f"compute capability {need} or newer (Ada, Hopper, Blackwell): measure on such a GPU, or {drop}"
            )
    if model_device is not None and not model_device.startswith("cuda") and Precision.FP8_DYN in wanted:
        problems.append(
            f"fp8-dyn multiplies in FP8 on the GPU and cannot run on {model_device}: drop it from --precisions "
            "(fp8-wo runs there)"
        )
    return problems


def check_device(precision: Precision, device: str) -> None:
    """Before loading: the device torch runs ``precision`` on can do it (NoFp8Error says why not; imports torch)."""
    if not is_fp8(precision):
        return
    if (software := software_problem()) is not None:
        raise ModelError(f"{precision.value}: {software}")
    if precision is Precision.FP8_WO and not device.startswith("cuda"):
        return  # the weights dequantize before a 16-bit matmul: any device
    if not device.startswith("cuda"):
        raise NoFp8Error(f"{precision.value} multiplies in FP8 on a CUDA GPU and cannot run on {device}")
    import torch

    major, minor = torch.cuda.get_device_capability(device)
    if (major, minor) < MIN_COMPUTE_CAPABILITY:
        raise NoFp8Error(
            f"{precision.value}: {torch.cuda.get_device_name(device)} has compute capability {major}.{minor}; FP8 "
            f"needs {'.'.join(map(str, MIN_COMPUTE_CAPABILITY))} or newer (Ada, Hopper, Blackwell)"
        )


def quiet_extension_warnings() -> None:
    """Keep torchao's import from warning about its CUDA extensions (transformers imports it before any load).

    torchao logs a warning for each extension library that does not load (its mxfp8 one is built for CPython 3.10
    only, and neither loads without CUDA); the two FP8 configs call neither: their matmul is torch's own.
    """
    logging.getLogger("torchao").setLevel(logging.ERROR)


def ao_config(precision: Precision) -> Any:
    """The torchao config object of ``precision`` (imports torchao)."""
    quiet_extension_warnings()
    try:
        from torchao.quantization import (
            Float8DynamicActivationFloat8WeightConfig,
            Float8WeightOnlyConfig,
            PerRow,
        )
    except ImportError:
        raise ModelError(f"torchao is not installed: {INSTALL}") from None
    spec = SPECS[precision].torchao
    if spec is None:
        raise ValueError(f"{precision.value} is not a torchao precision")
    classes = {
        "Float8WeightOnlyConfig": Float8WeightOnlyConfig,
        "Float8DynamicActivationFloat8WeightConfig": Float8DynamicActivationFloat8WeightConfig,
    }
    granularity = {"PerRow": PerRow}[spec["granularity"]]()
    return classes[spec["config"]](granularity=granularity, set_inductor_config=spec["set_inductor_config"])


def torchao_config(precision: Precision, transformers: Any) -> Any:
    """The ``transformers.TorchAoConfig`` of ``precision`` (embeddings and lm_head stay 16-bit)."""
    return transformers.TorchAoConfig(ao_config(precision))


def float8_linears(model: Any) -> tuple[int, int]:
    """(linears whose weight torchao made FP8, all ``nn.Linear`` modules) of a loaded model (imports torch).

    torchao leaves a linear whose dimensions are not multiples of 16 in 16 bits without a word; the record says how
    many it quantized.
    """
    import torch

    linears = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
    float8 = {getattr(torch, name) for name in _FLOAT8_DTYPE_NAMES if hasattr(torch, name)}
    quantized = [m for m in linears if getattr(getattr(m.weight, "qdata", None), "dtype", None) in float8]
    return len(quantized), len(linears)


_FLOAT8_DTYPE_NAMES = ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz")


def footprint_bytes(model: Any) -> int:
    """Bytes of a model's parameters and buffers, a torchao tensor counted by what it holds (FP8 data and scales).

    transformers' ``get_memory_footprint`` counts a torchao weight at its outer 16-bit dtype, twice its size.
    """
    total = 0
    for tensor in (*model.parameters(), *model.buffers()):
        inner = [getattr(tensor, name) for name in getattr(tensor, "tensor_data_names", ())]
        parts = [t for t in inner if t is not None] or [tensor]
        total += sum(int(t.nelement()) * int(t.element_size()) for t in parts)
    return total


def loaded_record(model: Any) -> dict[str, Any]:
    """What the record adds to an FP8 model's TorchAoConfig: torchao's version, the linears it made FP8, the kernels.

    Raises ModelError when torchao quantized no linear at all (the precision would be a 16-bit model by another name).
    """
    quantized, total = float8_linears(model)
    if quantized == 0:
        raise ModelError(
            f"torchao made none of the model's {total} linear layers FP8 (their dimensions must be multiples of 16): "
            "the run would measure a 16-bit model under an FP8 name"
        )
    return {
        "torchao_version": _installed("torchao") or "unknown", "float8_linears": quantized, "linears": total,
        # kernel_preference AUTO takes the mslk package's FP8 kernels where it is installed (sm90 or newer), else
        # torch's own _scaled_mm: which one ran depends on it
        "float8_kernels": "mslk" if importlib.util.find_spec("mslk") is not None else "torch",
    }  # fmt: skip
