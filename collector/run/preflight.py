"""Before any model loads: the signing key is tried, and the GPU is probed once and shown as one checklist.

A GPU that cannot be measured at all (no energy counter and no power reading: Jetson's NVML, a MIG slice, a
compute partition) is refused here, with the reason (:func:`refuse_unmeasurable`), and so are FP8 precisions a GPU
or the installed torchao cannot run (:func:`refuse_without_fp8`), before any model loads.

The settings the validator would refuse are :meth:`RunConfig.validator_problems`; this module adds what needs
the outside world: ``ssh-keygen`` and the key (:func:`try_key`), and the GPU's state (:func:`gpu_checklist`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ecocompute.collector.device.gpu import (
    SENSORS,
    EnergyMethod,
    GpuInfo,
    GpuMonitor,
    Sensor,
    energy_method,
    missing_sensors,
)
from ecocompute.collector.errors import MigEnabledError, NoEnergyCounterError
from ecocompute.collector.model.torchao_fp8 import NoFp8Error, fp8_problems
from ecocompute.schema.errors import UsageError
from ecocompute.schema.models import Precision

TEST_MESSAGE = b"ecocompute preflight: can this key sign?\n"
PREFLIGHT_NAMESPACE = "ecocompute-preflight"
KEYGEN_TIMEOUT_S = 10


def _keygen(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    exe = shutil.which("ssh-keygen")
    if exe is None:
        raise UsageError("ssh-keygen is not installed: install OpenSSH, or drop --key and sign later")
    return subprocess.run(  # noqa: S603 - fixed program; the arguments are a path and constants
        [exe, *args], input=stdin if stdin is not None else b"", capture_output=True, check=False,
        timeout=KEYGEN_TIMEOUT_S, env={**os.environ, "SSH_ASKPASS_REQUIRE": "never"},
    )  # fmt: skip


def _needs_passphrase(key: Path) -> bool:
    """True when the private key is encrypted; UsageError when ssh-keygen cannot read it as a private key."""
    proc = _keygen("-y", "-P", "", "-f", str(key))
    if proc.returncode == 0:
        return False
    detail = proc.stderr.decode("utf-8", "replace")
    if "passphrase" in detail:
        return True
    last = detail.strip().splitlines()[-1:] or ["no reason given"]
    raise UsageError(f"SSH key {key} is not a private key ssh-keygen can read ({last[0]}): pass your private key, "
                     "e.g. --key ~/.ssh/id_ed25519")  # fmt: skip


def _in_agent(key: Path) -> bool:
    """True when an ssh-agent holds ``key`` (its public half is listed by ``ssh-add -L``)."""
    pub = key.with_name(key.name + ".pub")
    add = shutil.which("ssh-add")
    if add is None or not os.environ.get("SSH_AUTH_SOCK") or not pub.is_file():
        return False
    listed = subprocess.run([add, "-L"], capture_output=True, check=False, timeout=KEYGEN_TIMEOUT_S)  # noqa: S603
    wanted = " ".join(pub.read_text(encoding="utf-8").split()[:2])
    keys = [" ".join(line.split()[:2]) for line in listed.stdout.decode("utf-8", "replace").splitlines()]
    return listed.returncode == 0 and wanted in keys


def try_key(key: Path) -> None:
    """Sign a test message with ``key`` now, so that the run cannot end in a signature that fails.

    A key with a passphrase is used through an ssh-agent that holds it: the signature is made after the last
    window, when nobody may be at the keyboard to type a passphrase.
    """
    if _needs_passphrase(key) and not _in_agent(key):
        pub = key.with_name(key.name + ".pub")
        which = "" if pub.is_file() else f" (an agent's key is matched by {pub}, which is missing: put it back)"
        raise UsageError(
            f'SSH key {key} has a passphrase and no ssh-agent holds it{which}: run `eval "$(ssh-agent -s)" && '
            f"ssh-add {key}` first (the signature at the end of the run then needs nobody at the keyboard), or drop "
            "--key and sign the file afterwards with `ecocompute sign`"
        )
    proc = _keygen("-Y", "sign", "-q", "-f", str(key), "-n", PREFLIGHT_NAMESPACE, stdin=TEST_MESSAGE)
    if proc.returncode != 0 or b"BEGIN SSH SIGNATURE" not in proc.stdout:
        detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"SSH key {key} cannot sign a test message ({detail[-1] if detail else 'no reason given'}): "
                         "pass a working private key, or drop --key and sign later")  # fmt: skip


def refuse_unmeasurable(info: GpuInfo, gpu: GpuMonitor) -> EnergyMethod:
    """How the GPU's energy will be measured; a GPU that reports neither counter nor power is refused, with why."""
    if info.mig_mode:
        raise MigEnabledError(
            f"GPU {info.index} ({info.gpu_name}) is partitioned (MIG): a slice has no energy counter or power "
            "reading of its own; measure the whole GPU with MIG off"
        )
    method = energy_method(gpu)
    if method.source is None:
        raise NoEnergyCounterError(
            f"GPU {info.index} ({info.gpu_name}) cannot be measured: {method.reason}. ecocompute needs an energy "
            "counter or a power reading (Jetson boards report neither through NVML)"
        )
    return method


def refuse_without_fp8(info: GpuInfo, precisions: Iterable[Precision], torch_device: str | None = None) -> None:
    """Refuse FP8 precisions this GPU, the installed torchao or ``--torch-device`` cannot run, with each fix.

    The GPU needs FP8 tensor cores (NVIDIA, compute capability 8.9 or newer); torchao must be installed and match
    torch; fp8-dyn cannot run on a CPU. Precisions other than FP8 pass.
    """
    problems = fp8_problems(
        precisions, vendor=info.vendor, compute_capability=info.compute_capability,
        gpu_name=f"GPU {info.index} ({info.gpu_name})", model_device=torch_device,
    )  # fmt: skip
    if problems:
        raise NoFp8Error("; ".join(problems))


def _energy_item(method: EnergyMethod) -> CheckItem:
    if method.counter:
        library = (
            "amdsmi's energy accumulator" if method.source == "amdsmi_energy_counter" else "NVML's total-energy counter"
        )
        return CheckItem(
            "energy counter", "present", True, f"every window's energy is read from {library} (no sampling gaps)"
        )
    return CheckItem(
        "energy counter", "absent: power integrated", False,
        f"{method.reason}; each window's energy is the integral of power sampled at 10 Hz, recorded as "
        "power_integral and judged by the validator's counterless rules (docs/counterless.md)",
    )  # fmt: skip


@dataclass(frozen=True)
class CheckItem:
    """One line of the GPU checklist: what was found, whether it is as it should be, and what it means."""

    name: str
    found: str
    ok: bool
    meaning: str


def gpu_checklist(info: GpuInfo, gpu: GpuMonitor, others: int | None, allow_shared: bool) -> list[CheckItem]:
    """The GPU probed once: energy counter, MIG, persistence, clocks, power limit, other processes, sensors."""
    sm_mhz, temp_c, reasons = gpu.sm_clock_mhz(), gpu.temperature_c(), gpu.throttle_reasons()
    sm_text = "SM clock not reported" if sm_mhz is None else f"{sm_mhz:.0f} MHz SM now"
    temp_text = "temperature not reported" if temp_c is None else f"{temp_c:.0f} C"
    reasons_text = "throttling not reported" if reasons is None else ", ".join(reasons) or "none"
    return [
        _energy_item(energy_method(gpu)),
        CheckItem("MIG", "off", not info.mig_mode,
                  "MIG instances have no energy counter of their own; the whole GPU is measured"),
        CheckItem("persistence mode", "on" if info.persistence_mode else "off", info.persistence_mode,
                  "off: the driver may unload between runs and the first readings start from cold clocks "
                  "(sudo nvidia-smi -pm 1 if you can; recorded)"),
        CheckItem("clocks", "locked" if info.clocks_locked else f"free ({sm_text})",
                  not info.clocks_locked,
                  "locked clocks change J/token; recorded, and such rows are kept apart"),
        power_limit_item(info),
        CheckItem("other processes", "unknown" if others is None else str(others), not others or allow_shared,
                  "their energy would be counted as ours; refused unless --allow-shared (recorded)"),
        CheckItem("temperature, throttling", f"{temp_text}, {reasons_text}",
                  not [r for r in reasons or () if r not in ("gpu_idle", "none")],
                  "a GPU throttling before it starts is hot or capped; the windows record it (W-THROTTLE)"),
        *sensor_items(gpu),
    ]  # fmt: skip


def power_limit_item(info: GpuInfo) -> CheckItem:
    """The power limit and its default; one the GPU does not report is recorded as null, never 0 or a guess."""
    limit, default = info.power_limit_w, info.default_power_limit_w
    if limit is None:
        return CheckItem(
            "power limit", "not reported", False,
            "recorded as null (never 0): whether it is the default cannot be told, so the validator warns "
            "(W-SENSOR-MISSING) and takes the GPU's highest power limit as the power ceiling",
        )  # fmt: skip
    if default is None:
        return CheckItem(
            "power limit", f"{limit:g} W (default not reported)", False,
            "the default is recorded as null (never 0): whether this limit is the default cannot be told; "
            "the validator warns (W-SENSOR-MISSING)",
        )  # fmt: skip
    return CheckItem("power limit", f"{limit:g} W (default {default:g} W)", limit == default,
                     "a non-default limit changes J/token; the validator warns (W-POWER-LIMIT)")  # fmt: skip


SENSOR_NAMES: dict[Sensor, str] = {
    "temperature": "temperature", "sm_clock": "SM clock", "utilization": "utilisation",
    "throttle_reasons": "throttle reasons", "power_limit": "power limit",
}  # fmt: skip


def sensor_items(gpu: GpuMonitor) -> list[CheckItem]:
    """One line for the per-window sensors: all present, or each one missing, what is null and what that means."""
    missing = missing_sensors(gpu)
    if not missing:
        meaning = "every window records temperature, SM clock, utilisation, throttling and power limit"
        return [CheckItem("sensors", "all present", True, meaning)]
    return [
        CheckItem(
            f"sensor: {SENSOR_NAMES[sensor]}",
            f"missing ({why})",
            False,
            f"recorded as null in {SENSORS[sensor][0]} (never 0): {SENSORS[sensor][1]}",
        )
        for sensor, why in missing.items()
    ]
