"""A contributor's first run, repeated: CONTRIBUTING.md's measuring commands in fresh processes, then validate.

Reads the shell block between ``<!-- first-run:begin -->`` and ``<!-- first-run:end -->`` in CONTRIBUTING.md and
runs it word for word (``YOUR_GITHUB_LOGIN`` replaced by ``--login``) in a fresh folder per run, holding a copy of
``submissions/allowed_signers``; each line is a new process. A run counts as *accepted* when ``ecocompute
validate`` exits 0, and as *gated* when, besides, every precision's CV is within the validator's 2% gate (the
dataset's main tier). ``collect_s`` is the wall time of the ``ecocompute collect`` process: the time it held the
GPU. The results are rewritten after every run (a lease may end mid-way) and a run is started only when the time
left (``--budget-s``) holds the longest run so far.

    python benchmarks/first_run.py --runs 10 --budget-s 1500 --out benchmarks/results/first_run_h200.json

Results of several sittings add up with ``--tally``: it counts the runs of the result files given, each file's
commands and workload (stack, batch size, model) shown, so that a claim such as "9 of 10" is read off files that ran
the same block with the same defaults:

    python benchmarks/first_run.py --tally benchmarks/results/first_run_h200_batch128_[bcd].json \
        --out benchmarks/results/first_run_h200_batch128_tally.txt

It needs the collector installed (``ecocompute`` on PATH), an NVIDIA GPU, and an SSH key at ``~/.ssh/id_ed25519``
(made without a passphrase when missing, as the first-time setup; that is not timed).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"<!-- first-run:begin -->\s*```sh\n(.*?)```\s*<!-- first-run:end -->", re.S)
GATE_SOURCE = ROOT / "schema" / "derive.py"  # the gate's one home, read as text when the package is not importable


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="JSON file for the results (a .txt beside it)")
    parser.add_argument("--tally", type=Path, nargs="+", default=None, metavar="RESULT",
                        help="add up these result files into --out (text) instead of running")  # fmt: skip
    parser.add_argument("--runs", type=int, default=10, help="fresh processes to run at most")
    parser.add_argument("--budget-s", type=float, default=1e9, help="start no run that would end after this")
    parser.add_argument("--login", default="first-run-user", help="the GitHub login the block is run as")
    parser.add_argument("--contributing", type=Path, default=ROOT / "CONTRIBUTING.md")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/first-run"))  # noqa: S108 - a scratch folder of its own
    return parser.parse_args(argv)


def block_lines(contributing: Path, login: str) -> list[str]:
    """The measuring commands of CONTRIBUTING.md, one per line, as a contributor named ``login`` types them."""
    match = BLOCK.search(contributing.read_text(encoding="utf-8"))
    if match is None:
        raise SystemExit(f"{contributing} has no first-run block")
    text = match.group(1).replace("YOUR_GITHUB_LOGIN", login)
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def ensure_key() -> None:
    key = Path.home() / ".ssh" / "id_ed25519"
    if not key.exists():
        key.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)


def gate_pct() -> float:
    """The validator's CV gate, in percent: ``ecocompute.schema.derive.CV_GATE_PCT``."""
    try:
        from ecocompute.schema.derive import CV_GATE_PCT
    except ImportError:
        found = re.search(r"^CV_GATE_PCT = ([0-9.]+)$", GATE_SOURCE.read_text(encoding="utf-8"), re.M)
        if found is None:
            raise SystemExit(f"{GATE_SOURCE} defines no CV_GATE_PCT") from None
        return float(found.group(1))
    return float(CV_GATE_PCT)


def submission_payload(folder: Path) -> dict[str, Any] | None:
    files = sorted((folder / "submissions").glob("*/*/*.json"))
    return json.loads(files[-1].read_text(encoding="utf-8"))["payload"] if files else None


def workload(payload: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the defaults measured: the run's model, stack, batch size and tokens."""
    if payload is None:
        return None
    keys = ("architecture", "stack", "batch_size", "prompt_tokens", "new_tokens")
    return {key: payload["workload"].get(key) for key in keys}


def measurements(payload: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Per precision of the run's submission: windows, CV of J/token, tokens/s."""
    if payload is None:
        return []
    rows = []
    for m in payload["measurements"]:
        jpt = [w["energy_j"] / w["tokens"] for w in m["windows"]]
        if len(jpt) < 2:
            rows.append({"precision": m["precision"], "windows": len(jpt), "cv_pct": None, "error": m["error"]})
            continue
        mean, std = statistics.fmean(jpt), statistics.stdev(jpt)
        tps = sum(w["tokens"] for w in m["windows"]) / sum(w["duration_s"] for w in m["windows"])
        rows.append({"precision": m["precision"], "windows": len(jpt), "cv_pct": 100 * std / mean,
                     "j_per_token": mean, "tokens_per_s": tps, "error": m["error"]})  # fmt: skip
    return rows


def one_run(i: int, lines: list[str], args: argparse.Namespace) -> dict[str, Any]:
    folder = args.workdir / f"run-{i:02d}"
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "submissions").mkdir(parents=True)
    shutil.copy(ROOT / "submissions" / "allowed_signers", folder / "submissions" / "allowed_signers")
    steps: list[dict[str, Any]] = []
    for line in lines:
        t0 = time.monotonic()
        proc = subprocess.run(["bash", "-c", line], cwd=folder, capture_output=True, text=True, check=False)
        steps.append({"command": line, "rc": proc.returncode, "wall_s": round(time.monotonic() - t0, 2),
                      "tail": (proc.stdout + proc.stderr)[-3000:]})  # fmt: skip
        (folder / f"step-{len(steps)}.log").write_text(proc.stdout + proc.stderr, encoding="utf-8")
    collect = next((s for s in steps if s["command"].startswith("ecocompute collect")), None)
    validate = next((s for s in steps if s["command"].startswith("ecocompute validate")), None)
    payload = submission_payload(folder)
    rows = measurements(payload)
    gate = gate_pct()
    accepted = validate is not None and validate["rc"] == 0
    gated = accepted and bool(rows) and all(r["cv_pct"] is not None and r["cv_pct"] <= gate for r in rows)
    return {"run": i, "accepted": accepted, "gated": gated, "collect_s": collect and collect["wall_s"],
            "workload": workload(payload), "measurements": rows, "steps": steps}  # fmt: skip


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    times = [r["collect_s"] for r in runs if r["collect_s"] is not None]
    return {
        "runs": len(runs),
        "accepted": sum(r["accepted"] for r in runs),
        "gated": sum(r["gated"] for r in runs),
        "collect_s_max": max(times, default=None),
        "collect_s_median": statistics.median(times) if times else None,
        "collect_s_first": times[0] if times else None,
    }


def render(result: dict[str, Any]) -> str:
    lines = ["run  validate  gate  collect_s  " + "  ".join(["precision windows CV%  tokens/s"] * 2)]
    for r in result["runs"]:
        cells = [f"{m['precision']:>6} {m['windows']:>2} {m['cv_pct'] or 0:5.2f} {m.get('tokens_per_s') or 0:8.0f}"
                 for m in r["measurements"]]  # fmt: skip
        verdict = "accepted" if r["accepted"] else "rejected"
        lines.append(f"{r['run']:>3}  {verdict:>8}  {'yes' if r['gated'] else 'no':>4}  {r['collect_s'] or 0:9.1f}  "
                     + "  ".join(cells))  # fmt: skip
    s = result["summary"]
    lines.append(
        f"{s['accepted']} of {s['runs']} fresh processes accepted by validate, {s['gated']} of {s['runs']} within the "
        f"{result['gate_cv_pct']:g}% CV gate; collect took {s['collect_s_first']} s the first time, at most "
        f"{s['collect_s_max']} s, median {s['collect_s_median']} s (GPU held for the whole collect process)"
    )
    return "\n".join(lines) + "\n"


def write(result: dict[str, Any], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    out.with_suffix(".txt").write_text(render(result), encoding="utf-8")


def tally(files: list[Path]) -> str:
    """The runs of several result files added up; refuses files whose commands differ."""
    results = [(path, json.loads(path.read_text(encoding="utf-8"))) for path in files]
    commands = {json.dumps(result["commands"]) for _, result in results}
    if len(commands) != 1:
        raise SystemExit("the result files ran different commands: tally files of one CONTRIBUTING block only")
    runs = [run for _, result in results for run in result["runs"]]
    seen = {json.dumps(run.get("workload"), sort_keys=True) for run in runs if run.get("workload")}
    s = summary(runs)
    lines = [f"# {len(files)} sittings, {s['runs']} fresh processes, each running:"]
    lines += [f"#   {line}" for line in results[0][1]["commands"]]
    lines += [f"# workload recorded by the runs: {w}" for w in sorted(seen)] or ["# workload: not recorded"]
    for path, result in results:
        r = result["summary"]
        lines.append(f"{path.name}: {result['started_at'][:19]}Z, {result['gpu']}: {r['accepted']} of {r['runs']} "
                     f"accepted, {r['gated']} of {r['runs']} gated, "
                     f"collect median {r['collect_s_median']:.1f} s")  # fmt: skip
    lines.append(f"{s['accepted']} of {s['runs']} fresh processes accepted by validate, {s['gated']} of {s['runs']} "
                 f"within the {results[0][1]['gate_cv_pct']:g}% CV gate; collect took at most {s['collect_s_max']} s, "
                 f"median {s['collect_s_median']:.1f} s")  # fmt: skip
    return "\n".join(lines) + "\n"


def gpu_line() -> str:
    if shutil.which("nvidia-smi") is None:
        return "no nvidia-smi"
    proc = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,power.limit,persistence_mode",
                           "--format=csv,noheader"], capture_output=True, text=True, check=False)  # fmt: skip
    return proc.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.tally:
        text = tally(args.tally)
        args.out.write_text(text, encoding="utf-8")
        print(text, end="")
        return 0
    lines = block_lines(args.contributing, args.login)
    ensure_key()
    started = time.monotonic()
    result: dict[str, Any] = {"started_at": datetime.now(UTC).isoformat(), "gpu": gpu_line(), "commands": lines,
                              "gate_cv_pct": gate_pct(), "runs": []}  # fmt: skip
    longest = 0.0
    for i in range(args.runs):
        left = args.budget_s - (time.monotonic() - started)
        if i and left < longest * 1.1:
            print(f"stopping after {i} runs: {left:.0f} s left, the longest run took {longest:.0f} s", flush=True)
            break
        t0 = time.monotonic()
        run = one_run(i, lines, args)
        longest = max(longest, time.monotonic() - t0)
        result["runs"].append(run)
        result["summary"] = summary(result["runs"])
        write(result, args.out)
        print(render(result).splitlines()[-2], flush=True)
        if not run["accepted"]:
            print("\n".join(s["tail"][-1500:] for s in run["steps"]), flush=True)
    print(render(result), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
