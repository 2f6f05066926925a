"""``recommend_config``: the configuration a card runs a model size best in, for energy, latency or throughput.

Candidates are the engine x precision x stack x batch-size configurations measured on the asked card. Each one's J/token
and tokens/s at the asked size are interpolated in log size between measured sizes (never extrapolated); its
change against FP16 and the 95% interval come from the estimator; its weight memory is computed from the size.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from typing import Any, Literal

from ecocompute.estimate import Question, estimate
from ecocompute.estimate.engine import engine_of, resolve_gpu
from ecocompute.mcp_server.models import Candidate, Recommendation
from ecocompute.mcp_server.sources import Sources
from ecocompute.schema.errors import UsageError

Objective = Literal["energy", "latency", "throughput"]
# Bytes per parameter of the weights: bitsandbytes NF4 stores 4 bits plus one fp32 absmax per 64-weight block;
# GGUF's Q8_0 one fp16 scale per 32 int8 weights; Q4_K_M mixes Q4_K (4.5 bits) and Q6_K (6.5625 bits), about 4.85.
BYTES_PER_PARAM = {"fp16": 2.0, "bf16": 2.0, "fp8-wo": 1.0, "fp8-dyn": 1.0, "int8": 1.0, "int8-t0": 1.0,
                   "nf4": 0.5 + 4 / 64, "q8_0": 34 / 32, "q4_k_m": 4.85 / 8}  # fmt: skip
SIZE_TOL_LN = 0.05
ALTERNATIVES = 4
Series = dict[float, list[tuple[float, float | None, str | None]]]


def _series(runs: list[dict[str, Any]]) -> dict[tuple[str, str, int, str], Series]:
    """(engine, stack, batch, precision) -> size -> [(J/token, tokens/s, submission id)], FP16 from each run's base.

    Each engine's FP16 is a series of its own: the two engines' baselines are never pooled.
    """
    out: dict[tuple[str, str, int, str], Series] = defaultdict(lambda: defaultdict(list))
    seen_base: set[tuple[Any, ...]] = set()
    for run in runs:
        key = (engine_of(run), str(run["stack"]), int(run["batch_size"]))
        size = float(run["params_b"])
        sid = run.get("submission_id")
        out[(*key, str(run["precision"]))][size].append((float(run["j_q"]), run.get("tps_q"), sid))
        if (sid, size) not in seen_base:
            seen_base.add((sid, size))
            out[(*key, "fp16")][size].append((float(run["j_b"]), run.get("tps_b"), sid))
    return out


def _log_mean(values: list[float]) -> float:
    return sum(math.log(v) for v in values) / len(values)


def _at(series: Series, params_b: float) -> tuple[float, float | None, str, list[str]] | None:
    """J/token, tokens/s, basis and submission ids at ``params_b``; None outside the measured sizes."""
    x = math.log(params_b)
    points = []
    for size, rows in sorted(series.items()):
        tps = [t for _, t, _ in rows if t]
        ids = sorted({s for _, _, s in rows if s})
        points.append((math.log(size), _log_mean([j for j, _, _ in rows]), _log_mean(tps) if tps else None, ids))
    for px, lj, lt, ids in points:
        if abs(px - x) <= SIZE_TOL_LN:
            return math.exp(lj), math.exp(lt) if lt is not None else None, "measured", ids
    for (x0, j0, t0, i0), (x1, j1, t1, i1) in itertools.pairwise(points):
        if x0 < x < x1:
            w = (x - x0) / (x1 - x0)
            speed = math.exp(t0 + w * (t1 - t0)) if t0 is not None and t1 is not None else None
            return math.exp(j0 + w * (j1 - j0)), speed, "interpolated", sorted({*i0, *i1})
    return None


def _change(gpu: str, params_b: float, config: tuple[str, str, int, str], sources: Sources) -> Any:
    engine, stack, batch, precision = config
    if precision == "fp16":
        return 0.0, (0.0, 0.0)
    question = Question.model_validate(
        {"gpu": gpu, "params_b": params_b, "precision": precision, "engine": engine, "stack": stack,
         "batch_size": batch}
    )  # fmt: skip
    answer = estimate(question, sources.artifact)
    return answer.change_pct, answer.change_ci95


def candidates(sources: Sources, gpu: str, params_b: float) -> tuple[list[Candidate], list[str]]:
    """Every configuration measured on ``gpu`` that covers ``params_b``, and why the others were left out."""
    resolved = resolve_gpu(sources.artifact, gpu)
    runs = [r for r in sources.runs() if r["source"] == "measured"]
    cards = sorted({str(r["gpu"]) for r in runs})
    if resolved is None or resolved["name"] not in cards:
        raise UsageError(f"gpu: no measurements on {gpu!r}; cards with measurements: {', '.join(cards)}")
    runs = [r for r in runs if r["gpu"] == resolved["name"]]
    found, excluded = [], []
    for config, series in sorted(_series(runs).items()):
        engine, stack, batch, precision = config
        at = _at(series, params_b)
        if at is None:
            sizes = sorted(series)
            excluded.append(f"{precision} {engine} {stack} batch {batch}: measured only at "
                            f"{sizes[0]:.2g}-{sizes[-1]:.3g}B")  # fmt: skip
            continue
        jpt, tps, basis, ids = at
        change, ci = _change(str(resolved["name"]), params_b, config, sources)
        found.append(Candidate(
            engine=engine, precision=precision, stack=stack, batch_size=batch, j_per_token=jpt, change_pct=change,
            change_ci95=ci,
            tokens_per_s=tps, ms_per_token=1000 * batch / tps if tps else None,
            weights_gb=params_b * BYTES_PER_PARAM[precision], basis=basis, submission_ids=ids,
        ))  # fmt: skip
    return found, excluded


def _within(c: Candidate, max_vram_gb: float | None, max_latency_ms: float | None) -> str | None:
    name = f"{c.precision} {c.engine} {c.stack} batch {c.batch_size}"
    if max_vram_gb is not None and c.weights_gb > max_vram_gb:
        return f"{name}: weights need {c.weights_gb:.1f} GB, above max_vram_gb {max_vram_gb:g}"
    if max_latency_ms is not None and (c.ms_per_token is None or c.ms_per_token > max_latency_ms):
        latency = "unmeasured" if c.ms_per_token is None else f"{c.ms_per_token:.1f} ms"
        return f"{name}: latency per token {latency}, above max_latency_ms {max_latency_ms:g}"
    return None


def _score(c: Candidate, objective: Objective) -> float:
    if objective == "energy":
        return c.j_per_token
    if objective == "latency":
        return c.ms_per_token if c.ms_per_token is not None else math.inf
    return -(c.tokens_per_s or 0.0)


def pareto_front(found: list[Candidate]) -> list[Candidate]:
    """The candidates that no other beats on both J/token and latency, fastest first."""
    timed = [c for c in found if c.ms_per_token is not None]
    front = [
        c for c in timed
        if not any(o.j_per_token <= c.j_per_token and o.ms_per_token <= c.ms_per_token  # type: ignore[operator]
                   and (o.j_per_token, o.ms_per_token) != (c.j_per_token, c.ms_per_token) for o in timed)
    ]  # fmt: skip
    return sorted(front, key=lambda c: c.ms_per_token or 0.0)


def recommend(
    sources: Sources, gpu: str, params_b: float, objective: Objective,
    max_vram_gb: float | None = None, max_latency_ms: float | None = None,
) -> Recommendation:  # fmt: skip
    """The best configuration for ``objective`` within the limits, the next ones, and the Pareto front."""
    found, excluded = candidates(sources, gpu, params_b)
    allowed = []
    for c in found:
        why = _within(c, max_vram_gb, max_latency_ms)
        if why is None:
            allowed.append(c)
        else:
            excluded.append(why)
    ranked = sorted(allowed, key=lambda c: _score(c, objective))
    ids = {i for c in found for i in c.submission_ids}
    used = [r for r in sources.runs() if r.get("submission_id") in ids]
    return Recommendation(
        objective=objective, params_b=params_b, gpu=gpu, choice=ranked[0] if ranked else None,
        alternatives=ranked[1 : 1 + ALTERNATIVES], pareto_front=pareto_front(allowed), excluded=excluded,
        provenance=sources.provenance(used),
    )  # fmt: skip
