"""The reference scripts and queues are checked here, before any device time: queue lines and script syntax."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from factories import load_script

from ecocompute.cli import main
from ecocompute.collector import cli as collector_cli
from ecocompute.collector.archs import arch_names
from ecocompute.collector.config import Destination, RunConfig

QUEUES = Path(__file__).parents[2] / "scripts" / "reference" / "queues"
LINES = [
    pytest.param(line, id=f"{path.stem}:{n}")
    for path in sorted(QUEUES.glob("*.txt"))
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
    if line.strip() and not line.startswith("#")
]


def test_there_are_queues() -> None:
    assert len(LINES) >= 10


def _parse(line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[RunConfig, Destination]:
    """Run a queue line through `ecocompute collect` as worker.sh does, up to the point where it would measure."""
    seen: list[tuple[RunConfig, Destination]] = []

    def fake_collect(config: RunConfig, dest: Destination, env: object = None) -> None:  # no GPU here
        config.check()
        dest.check()
        seen.append((config, dest))

    monkeypatch.setattr(collector_cli, "collect", fake_collect)
    monkeypatch.setattr(collector_cli, "_report", lambda *args: None)
    # what worker.sh adds to each line (the pinning only where the line has none)
    pin = [] if "--cpu-affinity" in line else ["--cpu-affinity", "0-1"]
    argv = ["collect", *line.split(), *pin, "--device-index", "1", "--out", str(tmp_path / "out"),
            "--state-dir", str(tmp_path / "state"), "--resume", "--quiet"]  # fmt: skip
    assert main(argv) == 0
    ((config, dest),) = seen
    return config, dest


@pytest.mark.parametrize("line", LINES)
def test_queue_line_parses_and_passes_the_collectors_checks(
    line: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config, dest = _parse(line, tmp_path, monkeypatch)
    assert config.arch in arch_names()
    assert dest.signer == "ecocompute-reference"


def test_every_sweep_cell_not_yet_measured_is_queued(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cell of issue 6's sweep that no committed run measured has a queue line that would measure it."""
    summarize = load_script(QUEUES.parent / "summarize.py")
    finished, accepted, _ = summarize.committed()
    queued = set()
    for n, param in enumerate(LINES):
        config, _ = _parse(param.values[0], tmp_path / str(n), monkeypatch)
        queued |= {(config.arch, config.stack.value, config.batch_size, p.value) for p in config.precisions}
    unqueued = set(summarize.unmeasured_cells(finished + accepted)) - queued
    assert not unqueued, sorted(unqueued)


@pytest.mark.parametrize("script", sorted((QUEUES.parent).glob("*.sh")), ids=lambda p: p.name)
def test_reference_scripts_parse(script: Path) -> None:
    """bash -n: a syntax error in a sitting's script is found here, not on the lent machine."""
    proc = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
