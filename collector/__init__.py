"""The collector: measures a GPU (NVML) while a model generates, and writes a signed submission.

Its modules are grouped by what they are: ``device`` (the GPU: the monitor seam, NVML, traces, the power
sampler), ``model`` (architectures, precisions, weights, the transformers runner), ``run`` (settings, preflight,
the engine, the spread gate, checkpoints, display, the submission) and ``host`` (CPU time, process knobs,
clocks); ``cli`` and ``errors`` stay at the top. The flat module paths of 0.1.0 (``ecocompute.collector.state``,
``...hf``, ...) still import, as the same module objects, for one release.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from types import ModuleType
from typing import Any

MOVED = {
    **{m: f"device.{m}" for m in ("gpu", "nvml", "replay", "trace", "sampler")},
    **{m: f"model.{m}" for m in ("archs", "precisions", "hf", "weights", "backend", "corpus")},
    **{m: f"run.{m}" for m in ("config", "engine", "state", "spread", "preflight", "submission", "display")},
    "fingerprint": "run.fingerprint",
    **{m: f"host.{m}" for m in ("host", "process", "clock")},
}
"""Old flat module name -> its place now (``run.py`` became ``run/collect.py``; ``run`` is the package)."""
EXPORTS = {
    **{name: "run.state" for name in ("MeasurementState", "RunState", "read_state")},
    "is_fp8": "model.torchao_fp8",
}
"""Public names of the package (a run's checkpoint and its reader; which precisions are torchao's FP8), imported on
first use: no torch, no NVML."""
__all__ = sorted(EXPORTS)


def __getattr__(name: str) -> Any:
    """A public name from its module, on first use."""
    if name in EXPORTS:
        value = getattr(importlib.import_module(f"{__name__}.{EXPORTS[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Answers ``ecocompute.collector.<old name>`` with the module at its new place (deprecated paths)."""

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        prefix, _, name = fullname.rpartition(".")
        if prefix != __name__ or name not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(f"{__name__}.{MOVED[spec.name.rpartition('.')[2]]}")

    def exec_module(self, module: ModuleType) -> None:
        """The module was executed at its new place."""


if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
    sys.meta_path.append(_MovedModules())
