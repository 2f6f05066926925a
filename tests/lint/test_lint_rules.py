"""The rules against the shipped estimator artifact: the figures they cite are the estimator's, and they stay
silent where no measurement on the target card covers the case."""

from __future__ import annotations

import re

import pytest

from ecocompute.estimate import Question, estimate
from ecocompute.lint.config import resolve
from ecocompute.lint.engine import lint_text
from ecocompute.lint.evidence import Cell, Evidence
from ecocompute.lint.findings import RULES, Severity

LOAD = 'from transformers import AutoModelForCausalLM, BitsAndBytesConfig\nm = AutoModelForCausalLM.from_pretrained("{id}", {kw})\n'  # noqa: E501
LOOP = (
    "import torch\nfrom transformers import AutoModelForCausalLM, AutoTokenizer\n"
    'tok = AutoTokenizer.from_pretrained("{id}")\n'
    'model = AutoModelForCausalLM.from_pretrained("{id}", torch_dtype=torch.float16)\n'
    "for p in prompts:\n    model.generate(**tok(p, return_tensors='pt'), max_new_tokens=64)\n"
)


def findings(source: str, **settings: object) -> list[tuple[str, str]]:
    config = resolve({}, dict(settings))
    report = lint_text(source, "x.py", config, Evidence(config.settings.gpu))
    assert report.error is None
    return [(f.rule, f.message) for f in report.findings]


def _fmt(answer_change: float, ci: tuple[float, float]) -> str:
    return f"{answer_change:+.1f}% J/token vs FP16 (95% CI {ci[0]:+.1f}% to {ci[1]:+.1f}%)"


def test_eco101_cites_the_estimators_int8_and_int8_t0_answers() -> None:
    [(rule, message)] = findings(LOAD.format(id="Qwen/Qwen2.5-7B", kw="load_in_8bit=True"))
    assert rule == "ECO101"
    for precision in ("int8", "int8-t0"):
        answer = estimate(Question(gpu="H200", params_b=7.0, precision=precision, stack="eager", batch_size=1))
        assert _fmt(answer.change_pct, answer.change_ci95) in message
        assert answer.change_ci95[0] > 0
    assert f"dataset {answer.dataset_version}" in message and "NVIDIA H200, stack eager, batch 1" in message


def test_eco102_follows_the_stack() -> None:
    nf4 = 'quantization_config=BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4")'
    source = LOAD.format(id="TinyLlama/TinyLlama-1.1B-Chat-v1.0", kw=nf4)
    [(rule, message)] = findings(source)
    eager = estimate(Question(gpu="H200", params_b=1.1, precision="nf4", stack="eager"))
    assert rule == "ECO102" and _fmt(eager.change_pct, eager.change_ci95) in message
    assert "no crossover in the measured range" in message
    compiled_all = estimate(Question(gpu="H200", params_b=1.1, precision="nf4", stack="compiled-all"))
    assert compiled_all.change_ci95[0] <= 0  # the data does not show a cost there, so the rule is silent
    assert findings(source, stack="compiled-all") == []


@pytest.mark.parametrize(
    ("model_id", "kw", "settings"),
    [
        ("Qwen/Qwen2.5-7B", "load_in_8bit=True", {"target-gpu": "H100"}),  # another card: borrowed, not measured
        ("meta-llama/Llama-3.1-405B", "load_in_8bit=True", {}),  # beyond the largest measured size
        ("Qwen/Qwen2.5-7B", "load_in_4bit=True", {}),  # FP4: never measured
        ("Qwen/Qwen2.5-7B", "quantization_config=BitsAndBytesConfig(load_in_8bit=True, llm_int8_threshold=4.0)", {}),
    ],
)
def test_silent_where_no_measurement_covers_the_case(model_id: str, kw: str, settings: dict[str, object]) -> None:
    assert findings(LOAD.format(id=model_id, kw=kw), **settings) == []


def test_eco103_and_eco104_compare_measured_cells() -> None:
    found = dict(findings(LOOP.format(id="Qwen/Qwen2.5-7B-Instruct")))
    assert set(found) == {"ECO103", "ECO104"}
    pattern = r"measured (-\d+\.\d)% J/token vs {} \(95% CI (-\d+\.\d)% to (-\d+\.\d)%\)"
    for rule, against in (("ECO103", "batch 1"), ("ECO104", "the eager stack")):
        match = re.search(pattern.format(re.escape(against)), found[rule])
        assert match, found[rule]
        change, low, high = (float(g) for g in match.groups())
        assert low < change < high <= -10  # the whole interval a saving of at least min-saving-pct
        assert "random-init/Qwen2.5-7B" in found[rule] and "runs)" in found[rule]
    assert "stack eager, batch 8, fp16" in found["ECO103"]
    assert "stack compiled, batch 1, fp16" in found["ECO104"]


def test_eco103_silent_for_an_unmeasured_batch_or_a_small_saving() -> None:
    source = LOOP.format(id="Qwen/Qwen2.5-7B-Instruct")
    assert [r for r, _ in findings(source, **{"batch-size": 3})] == ["ECO104"]
    assert findings(source, **{"min-saving-pct": 99.0}) == []


def test_between_combines_the_cells_runs() -> None:
    ev = Evidence("H200")
    base, alt = Cell("H200", "eager", 1, "fp16", 7.0), Cell("H200", "eager", 8, "fp16", 7.0)
    measured = ev.between(base, alt, "batch 1")
    assert measured is not None and measured.runs is not None and min(measured.runs) >= 1
    low, high = measured.change_ci95
    assert low < measured.change_pct < high
    far = (Cell("H200", "eager", 1, "fp16", 100.0), Cell("H200", "eager", 8, "fp16", 100.0))
    assert ev.between(*far, "batch 1") is None  # no model of that size was measured


def test_eco105_cites_both_loads() -> None:
    source = LOAD.format(id="Qwen/Qwen2.5-7B", kw="load_in_8bit=True") + (
        'n = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-7B", '
        'quantization_config=BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4"))\n'
    )
    found = dict(findings(source))
    assert set(found) == {"ECO101", "ECO102", "ECO105"}
    assert "int8 (line 2) measured" in found["ECO105"] and "nf4 (line 3) measured" in found["ECO105"]


def test_severities_and_names_are_stable() -> None:
    assert {r: (RULES[r].name, RULES[r].severity) for r in RULES} == {
        "ECO101": ("int8-default-threshold", Severity.ERROR),
        "ECO102": ("nf4-below-crossover", Severity.WARNING),
        "ECO103": ("batch1-generate-loop", Severity.WARNING),
        "ECO104": ("generate-without-static-cache", Severity.WARNING),
        "ECO105": ("mixed-8bit-4bit", Severity.NOTE),
    }


def test_perplexity_is_cited_where_the_cell_measured_it() -> None:
    import copy

    from ecocompute.estimate import load_artifact

    artifact = copy.deepcopy(load_artifact())
    for group in artifact["groups"]:  # test data: pretend the 7.6B int8-t0 cell on the eager stack scored quality
        if group["precision"] == "int8-t0" and group["stack"] == "eager" and group["batch_size"] == 1:
            for cell in group["cells"]:
                cell["quality_pct"] = 24.5 if abs(cell["params_b"] - 7.6) < 0.1 else None
    ev = Evidence("H200", artifact)
    measured = ev.vs_fp16(Cell("H200", "eager", 1, "int8-t0", 7.6))
    assert measured is not None and measured.perplexity_change_pct == pytest.approx(24.5)
    assert "perplexity +24.5%" in measured.text()
    report = lint_text(LOAD.format(id="org/model-7.6B", kw="load_in_8bit=True"), "x.py", resolve({}, {}), ev)
    [finding] = report.findings
    assert "llm_int8_threshold=0.0 measured" in finding.message and "perplexity +24.5%" in finding.message
