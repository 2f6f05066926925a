"""Does the H200 show the RTX 5090's FP8 energy anomaly (pytorch/ao#4094)? A table and a verdict per stack.

The anomaly as reported: with ``Float8WeightOnlyConfig``, J/token above FP16's by 158% at 0.5B, rising to 701% at
7B, power near the card's limit while tokens/s collapsed (10.5 against 70 at 7B). torchao's maintainers traced it
to the weight-only path: every call dequantizes the weights and multiplies at 16 bits (pytorch/ao#3288).

Here, for every submission that measured fp8-wo beside fp16 (and fp8-dyn beside bf16, the dtype of its model), the
change in J/token with its 95% CI (delta method on the log of the ratio of the two means, Welch's degrees of
freedom), tokens/s and mean power of each, and the card's power limit. The verdict for a stack, over the sizes
measured on it:

- ``anomaly``: fp8-wo costs more than fp16 at every size (each CI above 0) and the penalty rises with size (the
  largest size's CI lies above the smallest's), as on the RTX 5090;
- ``fp8-wo costs more, not rising with size``: above 0 everywhere, the rise not shown;
- ``no anomaly``: at some size fp8-wo's CI reaches 0 or below;
- ``not enough sizes``: fewer than three sizes measured.

Usage: ``python campaigns/fp8/tools/anomaly.py DIR ...`` (folders of submission files, searched recursively;
on the H200 ``pack.sh`` runs it on /tmp/eco/out; here on ``submissions/``).
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ecocompute.schema import Derived, EcocomputeError, Submission, derive, load_submission
from ecocompute.schema.derive import t_quantile_975

MIN_SIZES = 3
PAIRS = (("fp8-wo", "fp16"), ("fp8-dyn", "bf16"))


@dataclass(frozen=True)
class Pair:
    """One FP8 precision against its baseline in one submission."""

    submission_id: str
    architecture: str
    params_total: int
    stack: str
    batch: int
    precision: str
    baseline: str
    change_pct: float
    ci_low_pct: float
    ci_high_pct: float
    tokens_per_s: float
    baseline_tokens_per_s: float
    power_w: float
    baseline_power_w: float
    power_limit_w: float | None  # None: the GPU reports no power limit


def change_ci(fp8: Derived, base: Derived) -> tuple[float, float, float]:
    """(change %, CI low %, CI high %) of ``fp8``'s mean J/token against ``base``'s."""
    ratio = fp8.j_per_token_mean / base.j_per_token_mean
    va = (fp8.j_per_token_std / fp8.j_per_token_mean) ** 2 / fp8.n_windows
    vb = (base.j_per_token_std / base.j_per_token_mean) ** 2 / base.n_windows
    se = math.sqrt(va + vb)
    dof_terms = va**2 / max(fp8.n_windows - 1, 1) + vb**2 / max(base.n_windows - 1, 1)
    dof = max(1, round((va + vb) ** 2 / dof_terms)) if dof_terms > 0 else max(fp8.n_windows + base.n_windows - 2, 1)
    half = t_quantile_975(dof) * se
    return (ratio - 1) * 100, (ratio * math.exp(-half) - 1) * 100, (ratio * math.exp(half) - 1) * 100


def pairs_of(submission: Submission) -> list[Pair]:
    """The FP8 pairs one submission measured (both sides with windows)."""
    p = submission.payload
    idle = p.idle.power_w
    derived = {m.precision.value: derive(m.windows, idle) for m in p.measurements if m.windows and not m.error}
    found = []
    for precision, baseline in PAIRS:
        if precision in derived and baseline in derived:
            fp8, base = derived[precision], derived[baseline]
            change, low, high = change_ci(fp8, base)
            found.append(Pair(
                p.submission_id, p.workload.architecture, p.workload.params_total, p.workload.stack.value,
                p.workload.batch_size, precision, baseline, change, low, high, fp8.tokens_per_s, base.tokens_per_s,
                fp8.power_w_mean, base.power_w_mean, p.hardware.power_limit_w,
            ))  # fmt: skip
    return found


def load_pairs(folders: Iterable[Path]) -> list[Pair]:
    """Every FP8 pair in the submission files under ``folders`` (unreadable files are skipped, with a note)."""
    found: list[Pair] = []
    for folder in folders:
        for path in sorted(folder.rglob("*.json")):
            if path.name.endswith(".partial.json"):
                continue
            try:
                found += pairs_of(load_submission(path))
            except EcocomputeError as error:
                sys.stderr.write(f"skipped {path}: {error}\n")
    return found


def verdict(pairs: list[Pair]) -> str:
    """The verdict for fp8-wo against fp16 over one stack's sizes (see the module docstring)."""
    by_size = {}
    for pair in sorted(pairs, key=lambda q: q.params_total):
        if pair.precision == "fp8-wo":
            by_size[pair.params_total] = pair  # the latest submission of a size stands for it
    if len(by_size) < MIN_SIZES:
        return f"not enough sizes ({len(by_size)} of {MIN_SIZES})"
    sizes = [by_size[k] for k in sorted(by_size)]
    if not all(q.ci_low_pct > 0 for q in sizes):
        return "no anomaly"
    if sizes[-1].ci_low_pct > sizes[0].ci_high_pct:
        return "anomaly"
    return "fp8-wo costs more, not rising with size"


def render(pairs: list[Pair]) -> str:
    """The table and the verdict per stack, as markdown."""
    if not pairs:
        return "no submission with fp8-wo beside fp16 or fp8-dyn beside bf16 yet\n"
    out = [
        "| stack | batch | shape | params | precision | vs | J/token change (95% CI) | tokens/s | baseline tokens/s "
        "| power W | baseline power W | power limit W | submission |",
        "|---|---:|---|---:|---|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for q in sorted(pairs, key=lambda q: (q.stack, q.batch, q.precision, q.params_total, q.submission_id)):
        limit = "not reported" if q.power_limit_w is None else f"{q.power_limit_w:.0f}"
        out.append(
            f"| {q.stack} | {q.batch} | {q.architecture} | {q.params_total / 1e9:.2f}B | {q.precision} | "
            f"{q.baseline} | {q.change_pct:+.1f}% ({q.ci_low_pct:+.1f} .. {q.ci_high_pct:+.1f}) | "
            f"{q.tokens_per_s:.1f} | {q.baseline_tokens_per_s:.1f} | {q.power_w:.0f} | {q.baseline_power_w:.0f} | "
            f"{limit} | `{q.submission_id}` |"
        )
    out.append("")
    for stack, batch in sorted({(q.stack, q.batch) for q in pairs}):
        chosen = [q for q in pairs if (q.stack, q.batch) == (stack, batch)]
        out.append(f"- {stack}, batch {batch}: {verdict(chosen)} (pytorch/ao#4094, fp8-wo against fp16)")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Print the table and verdicts for the submission folders given."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path, help="folders of submission files")
    args = parser.parse_args(argv)
    sys.stdout.write(render(load_pairs(f for f in args.folders if f.is_dir())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
