"""The page's JavaScript engine (web/engine.js, run by node) gives the Python engine's answers on a grid."""

from __future__ import annotations

import itertools
import json
import math
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ecocompute.estimate import load_artifact
from ecocompute.estimate.engine import evaluate

ENGINE_JS = Path(__file__).resolve().parents[2] / "estimate" / "web" / "engine.js"
RUNNER = """
const engine = require(process.argv[2]);
const fs = require("fs");
const artifact = JSON.parse(fs.readFileSync(process.argv[3], "utf8"));
const questions = JSON.parse(fs.readFileSync(process.argv[4], "utf8"));
const ask = ([q, b]) => { try { return engine.evaluate(artifact, q, b); } catch (e) { return {error: e.message}; } };
const out = questions.map(ask);
process.stdout.write(JSON.stringify(out));
"""


def grid() -> list[tuple[dict[str, Any], float]]:
    cards = ("H200", "h100", "RTX 4090", "A100", "T4", "volta", "Z80")
    sizes = (0.3, 0.494032768, 1.1, 2.2, 7.6, 13, 32.76387635, 70)
    precisions = ("fp16", "bf16", "fp8-wo", "fp8-dyn", "int8", "int8-t0", "nf4", "q8_0", "q4_k_m")
    configs = (("eager", 1, "all"), ("compiled-all", 1, "all"), ("eager", 8, "gate"), ("compiled", 4, "published"))
    engines = ("transformers", "llama.cpp")
    questions = []
    for card, size, precision, (stack, batch, tier), engine in itertools.product(
        cards, sizes, precisions, configs, engines
    ):
        q = {
            "gpu": card,
            "precision": precision,
            "engine": engine,
            "stack": stack,
            "batch_size": batch,
            "prompt_tokens": 128,
            "new_tokens": 256 if size < 10 else 512,
            "tier": tier,
        }
        questions.append((q, size))
    return questions


def close(a: Any, b: Any, path: str, errors: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        if sorted(a) != sorted(b):
            errors.append(f"{path}: keys {sorted(a)} != {sorted(b)}")
        for k in a:
            if k in b:
                close(a[k], b[k], f"{path}.{k}", errors)
    elif isinstance(a, list | tuple) and isinstance(b, list | tuple):
        if len(a) != len(b):
            errors.append(f"{path}: {a} != {b}")
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            close(x, y, f"{path}[{i}]", errors)
    elif isinstance(a, float | int) and isinstance(b, float | int) and not isinstance(a, bool):
        if not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12):
            errors.append(f"{path}: {a} != {b}")
    elif a != b:
        errors.append(f"{path}: {a!r} != {b!r}")


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_javascript_and_python_engines_agree_on_a_grid(tmp_path: Path) -> None:
    artifact = load_artifact()
    questions = grid()
    (tmp_path / "artifact.json").write_text(json.dumps(artifact))
    (tmp_path / "questions.json").write_text(json.dumps(questions))
    (tmp_path / "run.js").write_text(RUNNER)
    result = subprocess.run(
        ["node", str(tmp_path / "run.js"), str(ENGINE_JS), str(tmp_path / "artifact.json"),
         str(tmp_path / "questions.json")], capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    from_js = json.loads(result.stdout)
    errors: list[str] = []
    answered = llama = 0
    for (question, size), js in zip(questions, from_js, strict=True):
        try:
            py: dict[str, Any] = json.loads(json.dumps(evaluate(artifact, question, size)))
        except ValueError as exc:
            py = {"error": str(exc)}
        answered += "error" not in py
        llama += question["engine"] == "llama.cpp" and py.get("change_pct") not in (None, 0.0)
        where = f"{question['gpu']}/{size}/{question['precision']}/{question['engine']}/{question['stack']}"
        close(py, js, where, errors)
    assert answered > len(questions) / 2
    assert llama, "no question of engine llama.cpp got a figure: the grid does not reach its groups"
    assert not errors, f"{len(errors)} differences, first: " + "; ".join(errors[:10])
