"""The FP8 measurement kit, as far as it runs here: queues, pins, scripts, the timing estimate and the #4094 check."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from factories import collect_options, load_script, submission_document

from ecocompute.schema.models import Submission

KIT = Path(__file__).parents[1]
ROOT = KIT.parents[1]
SWEEP_SHAPES = {"Qwen2.5-0.5B", "TinyLlama-1.1B", "Qwen2.5-1.5B", "Qwen2.5-3B", "Qwen2.5-7B", "Llama-3.1-8B",
                "Qwen2.5-14B", "Qwen2.5-32B"}  # fmt: skip


def tool(name: str) -> Any:
    """A script of tools/ as a module."""
    return load_script(KIT / "tools" / f"{name}.py", f"fp8_{name}")


def queue(name: str) -> list[list[str]]:
    text = (KIT / "queues" / name).read_text(encoding="utf-8")
    return [shlex.split(line) for line in text.splitlines() if line.strip() and not line.startswith("#")]


@pytest.mark.parametrize("stack", ["eager", "compiled-all"])
def test_each_stack_has_a_queue_of_the_sweeps_shapes(stack: str) -> None:
    options = collect_options()
    lines = queue(f"h200-fp8-{stack}-b1.txt")
    assert {line[line.index("--arch") + 1] for line in lines} == SWEEP_SHAPES and len(lines) == len(SWEEP_SHAPES)
    for args in lines:
        assert {a for a in args if a.startswith("--")} <= options, args
        assert args[args.index("--precisions") + 1] == "fp16,bf16,fp8-wo,fp8-dyn"
        assert args[args.index("--stack") + 1] == stack and args[args.index("--batch-size") + 1] == "1"
        assert args[args.index("--window-s") + 1] == "10" and args[args.index("--min-windows") + 1] == "5"


def test_no_queue_line_measures_what_another_measures() -> None:
    """compiled and compiled-all differ for bitsandbytes models only: a pair of them needs a bitsandbytes precision."""
    from ecocompute.collector.model.precisions import SPECS, parse_precisions

    lines: dict[tuple[str, str, str], list[Any]] = {}
    for name in sorted(p.name for p in (KIT / "queues").glob("*.txt")):
        for args in queue(name):
            key = (
                args[args.index("--arch") + 1],
                args[args.index("--batch-size") + 1],
                args[args.index("--stack") + 1],
            )
            assert key not in lines, f"{name}: {key} is queued twice"
            lines[key] = parse_precisions(args[args.index("--precisions") + 1])
    for (arch, batch, stack), precisions in lines.items():
        if stack == "compiled" and (arch, batch, "compiled-all") in lines:
            both = set(precisions) & set(lines[(arch, batch, "compiled-all")])
            assert any(SPECS[p].bnb is not None for p in both), f"{arch} batch {batch}: compiled repeats compiled-all"


def test_the_readme_starts_the_queues_in_the_order_the_timings_list() -> None:
    timings = tool("timings")
    readme = (KIT / "README.md").read_text(encoding="utf-8")
    starts = re.findall(r"bash campaigns/fp8/tools/start\.sh 0 ((?:campaigns/fp8/queues/\S+\.txt ?)+)", readme)
    assert starts and all(line.replace("campaigns/fp8/queues/", "").split() == list(timings.RUN_ORDER)
                          for line in starts)  # fmt: skip
    assert timings.RUN_ORDER[0] == "h200-fp8-eager-b1.txt"  # pytorch/ao#4094's sizes first
    assert sorted(p.name for p in (KIT / "queues").glob("*.txt")) == sorted(timings.RUN_ORDER)


def test_the_eager_queue_starts_with_the_sizes_of_the_rtx_5090_report() -> None:
    first = [line[line.index("--arch") + 1] for line in queue("h200-fp8-eager-b1.txt")[:3]]
    assert first == ["Qwen2.5-0.5B", "Qwen2.5-1.5B", "Qwen2.5-7B"]


def test_the_kit_fetches_the_torchao_the_extra_pins() -> None:
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    (pin,) = extra["fp8"]
    fetched = re.search(r"^TORCHAO=(\S+)", (KIT / "tools" / "fetch.sh").read_text(encoding="utf-8"), re.M)
    assert fetched is not None and pin == f"torchao=={fetched.group(1)}"


def test_the_scripts_parse() -> None:
    scripts = sorted((KIT / "tools").glob("*.sh"))
    assert {s.name for s in scripts} == {"fetch.sh", "install.sh", "pack.sh", "smoke.sh", "start.sh"}
    for script in scripts:
        subprocess.run(["bash", "-n", str(script)], check=True)


def test_the_committed_timings_are_current() -> None:
    timings = tool("timings")
    assert timings.main(["--check"]) == 0
    jobs = timings.campaign_jobs()
    assert len(jobs) >= 40  # nearly every finished job of the campaign is matched to its submission
    for line in queue("h200-fp8-compiled-all-b1.txt"):
        found = timings.estimate(line[line.index("--arch") + 1], "compiled-all", 1, jobs)
        assert found is not None and 0 < found.floor_s <= found.ceiling_s


def fp8_submission(seed: int, arch: str, params: int, wo_factor: float, stack: str = "eager") -> Submission:
    """A synthetic submission of fp16 and fp8-wo whose fp8-wo windows cost ``wo_factor`` times fp16's J/token."""
    document = submission_document(seed, precisions=("fp16", "nf4"), architecture=arch, params_total=params,
                                   stack=stack, n_windows=6)  # fmt: skip
    document["schema_version"] = "1.2"
    fp16, fp8 = document["payload"]["measurements"]
    fp8["precision"], fp8["quantization"] = "fp8-wo", {"quant_method": "torchao"}
    for mine, theirs in zip(fp8["windows"], fp16["windows"], strict=True):
        for key in ("energy_j", "energy_j_power_integrated"):
            mine[key] = theirs[key] * wo_factor
    return Submission.model_validate(document)


SIZES = (("Qwen2.5-0.5B", 494_032_768), ("Qwen2.5-1.5B", 1_543_714_304), ("Qwen2.5-7B", 7_615_616_512))


@pytest.mark.parametrize(
    ("factors", "expected"),
    [
        ((2.58, 4.5, 8.01), "anomaly"),  # pytorch/ao#4094's +158% .. +701%
        ((2.0, 2.0, 2.0), "fp8-wo costs more, not rising with size"),
        ((1.0, 1.0, 1.0), "no anomaly"),
        ((2.58, 8.01), "not enough sizes (2 of 3)"),
    ],
)
def test_the_4094_check(factors: tuple[float, ...], expected: str, tmp_path: Path) -> None:
    anomaly = tool("anomaly")
    for seed, ((arch, params), factor) in enumerate(zip(SIZES, factors, strict=False)):
        fp8_submission(seed, arch, params, factor).to_file(tmp_path / f"{seed}.json")
    pairs = anomaly.load_pairs([tmp_path])
    assert len(pairs) == len(factors) and {p.precision for p in pairs} == {"fp8-wo"}
    assert pairs[0].change_pct == pytest.approx((factors[0] - 1) * 100, rel=1e-6)
    assert all(p.ci_low_pct < p.change_pct < p.ci_high_pct for p in pairs)
    assert {p.power_limit_w for p in pairs} == {700.0}
    text = anomaly.render(pairs)
    assert text.count("| eager | 1 |") == len(factors)
    assert f"- eager, batch 1: {expected} (pytorch/ao#4094, fp8-wo against fp16)" in text


def test_every_path_the_scripts_name_is_in_the_tree() -> None:
    path = re.compile(r"\b((?:campaigns|tests)/[\w./-]+\.(?:sh|py|txt))\b")
    named = set()
    for script in sorted((KIT / "tools").glob("*.sh")):
        named |= set(path.findall(script.read_text(encoding="utf-8")))
    assert "tests/collector/test_fp8.py" in named and "campaigns/fp8/tools/anomaly.py" in named
    missing = sorted(name for name in named if not (ROOT / name).is_file())
    assert not missing, missing
    gpu_tests = (ROOT / "tests/collector/test_fp8.py").read_text(encoding="utf-8")
    assert "@pytest.mark.gpu" in gpu_tests  # smoke.sh runs them with -m gpu


def test_the_report_is_what_the_committed_runs_give() -> None:
    """REPORT.md is generated from the committed FP8 runs: a run landed without --write fails here."""
    done = subprocess.run([sys.executable, str(KIT / "tools" / "report.py"), "--check"], capture_output=True,
                          text=True, check=False, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = (KIT / "REPORT.md").read_text(encoding="utf-8")
    runs = [p for p in (ROOT / "submissions" / "ecocompute-reference").rglob("*.json")
            if '"fp8-wo"' in p.read_text(encoding="utf-8")]  # fmt: skip
    assert runs, "no committed FP8 run"
    assert all(f"`{p.stem}`" in text for p in runs)
    lines = sum(len(queue(q.name)) for q in (KIT / "queues").glob("*.txt"))
    assert f"of {lines} queue lines measured." in text


def test_the_h200_campaign_report_leaves_fp8_runs_to_this_one() -> None:
    h200 = load_script(ROOT / "campaigns" / "h200-2026-11" / "tools" / "report.py", "h200_report_for_fp8")
    runs, _checkpoints = h200.committed()
    fp8 = [p for p in h200.reference_runs("transformers") if h200.is_fp8_run(p)]
    assert fp8 and not set(fp8) & set(runs)
    assert all(not h200.is_fp8_run(p) for p in runs)


def test_done_lists_exactly_the_measured_queue_lines(tmp_path: Path) -> None:
    """--done's QUEUE.done holds each measured line word for word (worker.sh matches whole lines), no other."""
    report = tool("report")
    h200 = load_script(ROOT / "campaigns" / "h200-2026-11" / "tools" / "report.py", "h200_report_for_done")
    for q in (KIT / "queues").glob("*.txt"):
        (tmp_path / q.name).write_bytes(q.read_bytes())
    assert report.write_done(h200, tmp_path) == 0
    measured = {(w.architecture, w.stack.value, w.batch_size)
                for w in (h200._load(p).payload.workload for p in report.fp8_runs(h200))}  # fmt: skip
    assert measured
    for q in sorted(tmp_path.glob("*.txt")):
        done = (tmp_path / f"{q.name}.done").read_text(encoding="utf-8").splitlines()
        lines = [line for line in q.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
        cells = {line: (a[a.index("--arch") + 1], a[a.index("--stack") + 1], int(a[a.index("--batch-size") + 1]))
                 for line in lines for a in [shlex.split(line)]}  # fmt: skip
        assert done == [line for line in lines if cells[line] in measured]
    assert sum(len((tmp_path / f"{q.name}.done").read_text().splitlines()) for q in tmp_path.glob("*.txt")) == len(
        measured
    )
