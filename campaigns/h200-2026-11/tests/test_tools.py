"""The campaign's shell tools parse (bash -n), so an edit that breaks one is found here, not on a lent machine.

The queues are all measured; their lines are not tested against the collector any more (see README.md).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1] / "tools"


@pytest.mark.parametrize("script", sorted(TOOLS.glob("*.sh")), ids=lambda p: p.name)
def test_campaign_shell_tools_parse(script: Path) -> None:
    proc = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
