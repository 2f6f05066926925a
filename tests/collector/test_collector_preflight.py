"""Preflight: settings the validator would refuse, the signing key, the GPU checklist, and the spread gate."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from collector_fakes import FakePynvml, VirtualClock

from ecocompute.cli import main
from ecocompute.collector.device.nvml import NvmlGpu
from ecocompute.collector.run.display import LineView, checklist_table
from ecocompute.collector.run.preflight import gpu_checklist, try_key
from ecocompute.collector.run.spread import Reach, advice, passes_gate, spread_verdict
from ecocompute.schema.errors import UsageError
from ecocompute.validate.core import DEFAULT_MAX_CV_PCT

BASE = ["collect", "--arch", "TinyLlama-1.1B", "--signer", "alice"]


@pytest.mark.parametrize(
    ("extra", "code", "fix"),
    [
        (["--precisions", "nf4"], "E-BASELINE", "--precisions fp16,nf4"),
        (["--window-s", "5"], "E-WINDOW-SHORT", "--window-s 10"),
        (["--min-windows", "2", "--max-windows", "2"], "E-WINDOW-COUNT", "--max-windows 3"),
        (["--min-windows", "2"], "E-WINDOW-COUNT", "--min-windows 3"),
    ],
)
def test_settings_the_validator_refuses_are_refused_at_once_with_the_fix(
    extra: list[str], code: str, fix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    assert main([*BASE, *extra]) == 2
    assert time.monotonic() - started < 2.0
    err = capsys.readouterr().err
    assert code in err and fix in err and err.count("\n") == 1


def test_a_working_key_passes_and_a_broken_one_is_refused(keys: object, tmp_path: Path) -> None:
    try_key(keys.ed25519)  # type: ignore[attr-defined]
    broken = tmp_path / "id_broken"
    broken.write_text("not a key\n")
    with pytest.raises(UsageError, match="is not a private key ssh-keygen can read"):
        try_key(broken)


def test_a_passphrase_key_without_an_agent_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = tmp_path / "id_locked"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "secret-words", "-f", str(key)], check=True)
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    with pytest.raises(UsageError, match=r"has a passphrase and no ssh-agent holds it: run `eval"):
        try_key(key)


def test_the_gpu_checklist_says_what_each_item_means(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakePynvml(VirtualClock())
    fake.persistence = 0
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    with NvmlGpu(0) as gpu:
        items = gpu_checklist(gpu.fingerprint(), gpu, others=0, allow_shared=False)
    names = [i.name for i in items]
    assert names[:6] == ["energy counter", "MIG", "persistence mode", "clocks", "power limit", "other processes"]
    persistence = items[2]
    assert not persistence.ok and "nvidia-smi -pm 1" in persistence.meaning
    assert all(i.meaning for i in items)
    lines: list[str] = []
    LineView(type("C", (), {"print": lambda self, text, **kw: lines.append(text)})()).checklist(items)
    assert lines[2].startswith("[!!] persistence mode: off")
    assert checklist_table(items).row_count == len(items)


def test_the_spread_verdict_follows_the_gate() -> None:
    steady = [1.0, 1.005, 0.995, 1.002]
    assert spread_verdict(steady, 8).reach is Reach.OPEN
    wild = [1.0, 1.2, 0.8]
    verdict = spread_verdict(wild, 30)
    assert verdict.reach is Reach.CANNOT and verdict.best_final_cv_pct > DEFAULT_MAX_CV_PCT
    assert "--batch-size" in advice("nf4", verdict)
    # wide but not hopeless with many windows to come: the 99% lower bound decides
    spread = [1.0, 1.06, 0.94, 1.05, 0.95, 1.04]
    assert spread_verdict(spread, 1000).reach is Reach.UNLIKELY
    assert passes_gate(steady) and not passes_gate(wild)
