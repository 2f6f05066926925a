"""Every setting the validator (or the run) would refuse, ``collect`` refuses at once: one line, the fix, no model.

One fresh interpreter runs every case through the real ``ecocompute`` command in turn, so that "before any
model loads" is checked as it is: torch, transformers, bitsandbytes and NVML are never imported. Timing is
not asserted here: a shared CI machine says nothing about it, and a process's start is most of it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

BASE = ["collect", "--arch", "TinyLlama-1.1B", "--signer", "alice"]
CASES: list[tuple[str, list[str], list[str]]] = [  # (name, extra arguments, what the one line must say)
    ("no baseline", ["--precisions", "nf4"], ["E-BASELINE", "pass --precisions fp16,nf4"]),
    ("short window", ["--window-s", "5"], ["E-WINDOW-SHORT", "pass --window-s 10 or more"]),
    ("two windows", ["--min-windows", "2", "--max-windows", "2"],
     ["E-WINDOW-COUNT", "pass --min-windows 3 or more", "pass --max-windows 3 or more"]),
    ("max below the floor", ["--max-windows", "2"], ["E-WINDOW-COUNT", "pass --max-windows 3 or more"]),
    ("min above max", ["--min-windows", "9", "--max-windows", "8"], ["--min-windows 9 is above --max-windows 8"]),
    ("precision twice", ["--precisions", "fp16,fp16"], ["fp16 is listed twice"]),
    ("unknown precision", ["--precisions", "fp16,q3"], ["unknown precision 'q3'", "fp16, bf16"]),
    ("compiled without warm-up", ["--warmup-windows", "0"], ["needs --warmup-windows >= 1"]),
    ("no target", ["--target-ci", "0"], ["--target-ci must be positive"]),
    ("batch zero", ["--batch-size", "0"], ["--batch-size must be at least 1"]),
    ("arch and model", ["--model", "Qwen/Qwen2.5-1.5B"], ["pass exactly one of --arch NAME or --model"]),
    ("perplexity of random weights", ["--perplexity"], ["--perplexity needs pretrained weights (--model)"]),
    ("engine without the precision", ["--engine", "llama.cpp"], ["not a precision of the llama.cpp engine"]),
    ("bad login", ["--signer", "-alice-"], ["is not a GitHub login"]),
    ("missing key", ["--key", "{tmp}/id_missing"], ["does not exist"]),
    ("not a key", ["--key", "{tmp}/id_junk"], ["is not a private key ssh-keygen can read"]),
    ("passphrase key, no agent", ["--key", "{tmp}/id_locked"],
     ["has a passphrase and no ssh-agent holds it", "ssh-add", "ecocompute sign"]),
    ("passphrase key, no .pub", ["--key", "{tmp}/id_bare"], ["has a passphrase and no ssh-agent holds it (an agent's "
     "key is matched by", "id_bare.pub, which is missing"]),
]  # fmt: skip
HEAVY = ("torch", "transformers", "bitsandbytes", "accelerate", "pynvml", "amdsmi", "llama_cpp")
PROBE = """
import contextlib, io, json, sys, time
from ecocompute.cli import main
lazy = [m for m in ("typer.rich_utils",) if m in sys.modules]
cases, heavy, results = json.loads(sys.argv[1]), sys.argv[2].split(","), {}
for name, args in cases:
    err = io.StringIO()
    started = time.perf_counter()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(args)
    results[name] = {"code": code, "err": err.getvalue(), "s": time.perf_counter() - started,
                     "heavy": [m for m in heavy if m in sys.modules]}
print(json.dumps({"results": results, "loaded_at_start": lazy}))
"""


@pytest.fixture(scope="module")
def refusals(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    tmp = tmp_path_factory.mktemp("keys")
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "a long passphrase", "-f", str(tmp / "id_locked")],
                   check=True)  # fmt: skip
    (tmp / "id_bare").write_bytes((tmp / "id_locked").read_bytes())  # the private half alone
    (tmp / "id_bare").chmod(0o600)
    junk = tmp / "id_junk"
    junk.write_text("not a key\n")
    junk.chmod(0o600)
    cases = [(name, [*BASE, *(a.replace("{tmp}", str(tmp)) for a in extra)]) for name, extra, _ in CASES]
    env = {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK", "COLUMNS")}
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(cases), ",".join(HEAVY)], cwd=tmp, env=env,
                          capture_output=True, text=True, check=False, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize(("name", "says"), [(name, says) for name, _, says in CASES], ids=[c[0] for c in CASES])
def test_collect_refuses_at_once_with_the_fix(refusals: dict[str, object], name: str, says: list[str]) -> None:
    result = refusals["results"][name]  # type: ignore[index]
    lines = [line for line in result["err"].splitlines() if line.strip()]
    assert result["code"] == 2, result["err"]
    assert len(lines) == 1 and lines[0].startswith("error: "), result["err"]
    assert [s for s in says if s not in lines[0]] == [], lines[0]
    assert "no GPU found" not in lines[0]  # refused before the GPU is looked for
    assert result["heavy"] == []  # before any model (or NVML) loads


def test_every_case_is_listed_once() -> None:
    assert len({name for name, _, _ in CASES}) == len(CASES)
    assert {"no baseline", "short window", "two windows", "passphrase key, no agent"} <= {n for n, _, _ in CASES}


def test_the_command_starts_without_typer_s_help_module(refusals: dict[str, object]) -> None:
    assert refusals["loaded_at_start"] == []


def test_the_refusals_name_flags_that_exist(refusals: dict[str, object]) -> None:
    import typer

    from ecocompute.cli import app

    collect = typer.main.get_command(app).commands["collect"]  # type: ignore[attr-defined]
    flags = {opt for param in collect.params for opt in (*param.opts, *param.secondary_opts)}
    said = " ".join(r["err"] for r in refusals["results"].values())  # type: ignore[attr-defined]
    assert set(re.findall(r"(?<![\w-])--[a-z][a-z-]*[a-z]", said)) - flags == set()


def test_a_passphrase_key_an_agent_holds_signs_the_test_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ecocompute.collector.run.preflight import try_key

    key, words = tmp_path / "id_agent", "a long passphrase"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", words, "-f", str(key)], check=True)
    askpass = tmp_path / "askpass.sh"
    askpass.write_text(f"#!/bin/sh\necho '{words}'\n")
    askpass.chmod(0o700)
    started = subprocess.run(["ssh-agent", "-s", "-a", str(tmp_path / "agent.sock")], capture_output=True, text=True,
                             check=True, timeout=10)  # fmt: skip
    pid = int(re.search(r"SSH_AGENT_PID=(\d+)", started.stdout).group(1))  # type: ignore[union-attr]
    try:
        env = {**os.environ, "SSH_AUTH_SOCK": str(tmp_path / "agent.sock"), "SSH_ASKPASS": str(askpass),
               "SSH_ASKPASS_REQUIRE": "force", "DISPLAY": ":0"}  # fmt: skip
        subprocess.run(["ssh-add", str(key)], env=env, stdin=subprocess.DEVNULL, capture_output=True, check=True,
                       timeout=10)  # fmt: skip
        monkeypatch.setenv("SSH_AUTH_SOCK", str(tmp_path / "agent.sock"))
        try_key(key)  # no passphrase typed: the agent signs
    finally:
        os.kill(pid, signal.SIGTERM)
