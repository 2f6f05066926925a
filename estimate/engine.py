"""The evaluation step of the estimator: pure arithmetic on one artifact, mirrored line by line in ``web/engine.js``.

Everything the answer needs was fitted when the artifact was built (:mod:`.build`); here a question picks the
groups of evidence that answer it and reads their curves at the asked size. All work is on ``y = ln(J_q / J_fp16)``
(the change in percent is ``100 * (exp(y) - 1)``), with these variances (all estimated from the data at build time):

- ``v``: of a cell's mean (window noise of each run plus the spread between runs, ``tau2``),
- fit choice: the spread of the group's fits (interpolation in log size, log-linear, saturating with and without the
  seed's cap) at the asked size,
- distance: ``kappa2 * d^2``, ``d`` the distance in ``ln(size)`` to the nearest measured size (zero on a cell),
- a new run: ``noise2`` of the group (``tau2`` + window noise; for published rows also the spread between sessions),
- borrowing: ``card2`` (another card of the architecture), ``arch2`` (another architecture), ``config2`` per stack
  or batch step that differs.

Evidence never crosses engines: a question names one (``engine``, transformers by default) and only that engine's
groups answer it, since each engine's change is against its own FP16. A group without an engine (an artifact of
schema 1.0) is transformers'.

Kept free of numpy and pydantic so that the JavaScript copy can stay the same shape.
"""

from __future__ import annotations

import math
from typing import Any

Group = dict[str, Any]
Artifact = dict[str, Any]
Z95 = 1.959963984540054
CARD_LEVELS = ("same-card", "same-architecture", "other-architecture")
ENGINE = "transformers"  # the engine of a question or group that names none


def engine_of(item: dict[str, Any]) -> str:
    """The inference engine of a group or question (transformers where it names none)."""
    return str(item.get("engine") or ENGINE)


def interp_predict(cells: list[dict[str, Any]], x: float) -> tuple[float, float]:
    """Piecewise-linear value of the cells' ``y`` at ``x`` (end segments extended) and its propagated variance."""
    if len(cells) == 1:
        return cells[0]["y"], cells[0]["v"]
    i = 0
    while i < len(cells) - 2 and x > cells[i + 1]["x"]:
        i += 1
    left, right = cells[i], cells[i + 1]
    t = (x - left["x"]) / (right["x"] - left["x"])
    y = left["y"] + t * (right["y"] - left["y"])
    return y, (1 - t) ** 2 * left["v"] + t**2 * right["v"]


def fit_predict(fit: dict[str, Any], x: float) -> float:
    """Value of one fitted curve at ``x = ln(params_b)`` in ``y`` units."""
    if fit["kind"] == "loglinear":
        return float(fit["a"] + fit["b"] * x)
    ratio = math.exp(x) / fit["n0"]
    change = fit["a"] - fit["s"] * ratio / (1 + ratio)
    return math.log(max(1 + change / 100, 1e-3))


def nearest(cells: list[dict[str, Any]], x: float) -> tuple[int, float]:
    """Index of the cell nearest to ``x`` and its distance in ln(size)."""
    best, dist = 0, abs(x - cells[0]["x"])
    for i, cell in enumerate(cells):
        if abs(x - cell["x"]) < dist:
            best, dist = i, abs(x - cell["x"])
    return best, dist


def group_predict(group: Group, x: float, constants: dict[str, Any]) -> dict[str, Any]:
    """A group's estimate of ``y`` at ``x``: value, variance of the estimate (no new-run noise), fits, basis."""
    cells = group["cells"]
    i, dist = nearest(cells, x)
    if dist <= constants["size_tol_ln"]:
        return {"y": cells[i]["y"], "var": cells[i]["v"], "basis": "measured", "fits": {}, "cell": i, "d": dist}
    y_interp, v_interp = interp_predict(cells, x)
    values = {"interpolation": y_interp}
    for fit in group["fits"]:
        values[fit["name"]] = fit_predict(fit, x)
    ys = list(values.values())
    mean = sum(ys) / len(ys)
    fit_var = sum((v - mean) ** 2 for v in ys) / len(ys)
    inside = cells[0]["x"] < x < cells[-1]["x"]
    var = v_interp + fit_var + constants["kappa2"][group["source"]] * dist**2
    return {"y": mean, "var": var, "basis": "interpolated" if inside else "extrapolated", "fits": values,
            "cell": None, "d": dist}  # fmt: skip


def card_level(group: Group, gpu: dict[str, Any]) -> int:
    """0: the asked card; 1: another card of its architecture; 2: another architecture."""
    if gpu["name"] is not None and group["gpu"] == gpu["name"]:
        return 0
    return 1 if group["arch"] == gpu["arch"] else 2


def config_distance(group: Group, question: dict[str, Any]) -> int:
    """How many of stack and batch size differ from the question's."""
    return int(group["stack"] != question["stack"]) + int(group["batch_size"] != question["batch_size"])


def donors(artifact: Artifact, question: dict[str, Any], gpu: dict[str, Any], sources: tuple[str, ...]) -> list[Group]:
    """The groups that answer the question: its engine's, at the best level of card, configuration, source, weights."""
    best: tuple[int, int, int, int] | None = None
    chosen: list[Group] = []
    engine = engine_of(question)
    for group in artifact["groups"]:
        if group["precision"] != question["precision"] or group["source"] not in sources:
            continue
        if engine_of(group) != engine:
            continue
        if group["source"] == "measured" and group["tier"] != question["tier"]:
            continue
        key = (card_level(group, gpu), config_distance(group, question), sources.index(group["source"]),
               int(group["weights"] != "pretrained"))  # fmt: skip
        if best is None or key < best:
            best, chosen = key, [group]
        elif key == best:
            chosen.append(group)
    return chosen


def combine(artifact: Artifact, chosen: list[Group], question: dict[str, Any], gpu: dict[str, Any],
            x: float) -> dict[str, Any]:  # fmt: skip
    """Predict from every chosen group and pool them: mean, and a variance that covers their spread."""
    constants = artifact["constants"]
    parts = [group_predict(g, x, constants) for g in chosen]
    m = len(parts)
    y = sum(p["y"] for p in parts) / m
    spread = sum((p["y"] - y) ** 2 for p in parts) / (m - 1) if m > 1 else 0.0
    level = card_level(chosen[0], gpu)
    distance = config_distance(chosen[0], question)
    cross = [0.0, constants["card2"], constants["arch2"]][level] + distance * constants["config2"]
    var = sum(p["var"] for p in parts) / m + sum(g["noise2"] for g in chosen) / m + cross + spread * (1 + 1 / m)
    return {"y": y, "var": var, "parts": parts, "level": level, "distance": distance, "spread": spread}


def change_pct(y: float) -> float:
    """Percent change from the log ratio."""
    return 100 * (math.exp(y) - 1)


def j_per_token(chosen: list[Group], x: float, key: str, constants: dict[str, Any]) -> float | None:
    """Geometric mean J/token at ``x`` over the chosen groups, inside their measured range only (else None)."""
    logs = []
    for group in chosen:
        cells = group["cells"]
        i, dist = nearest(cells, x)
        if dist <= constants["size_tol_ln"]:
            logs.append(cells[i][key])
        elif cells[0]["x"] < x < cells[-1]["x"]:
            j = 0
            while x > cells[j + 1]["x"]:
                j += 1
            t = (x - cells[j]["x"]) / (cells[j + 1]["x"] - cells[j]["x"])
            logs.append(cells[j][key] + t * (cells[j + 1][key] - cells[j][key]))
    if not logs or len(logs) < len(chosen):
        return None
    return math.exp(sum(logs) / len(logs))


def resolve_gpu(artifact: Artifact, name: str) -> dict[str, Any] | None:
    """``{"name", "arch"}`` for a card name, alias or architecture (name None for an architecture); None if unknown."""
    wanted = " ".join(name.lower().replace("_", " ").split())
    for gpu in artifact["gpus"]:
        if wanted == gpu["name"].lower() or wanted in gpu["aliases"]:
            return {"name": gpu["name"], "arch": gpu["arch"]}
    for gpu in artifact["gpus"]:
        if wanted == gpu["arch"]:
            return {"name": None, "arch": gpu["arch"]}
    return None


def reason(code: str, text: str) -> dict[str, str]:
    """A machine-readable reason: a stable code and a sentence."""
    return {"code": code, "text": text}


def fmt_b(params_b: float) -> str:
    """A size in billions for people: 0.494B, 7.62B, 32.8B."""
    return f"{params_b:.3g}B"


def basis_of(combined: dict[str, Any]) -> str:
    """The answer's basis: the geometric kind on the asked card, else which card it borrows."""
    if combined["level"] == 1:
        return "other-card"
    if combined["level"] == 2:
        return "other-architecture"
    kinds = [p["basis"] for p in combined["parts"]]
    for kind in ("extrapolated", "interpolated"):
        if kind in kinds:
            return kind
    return "measured"


def confidence_of(basis: str, low: float, high: float) -> str:
    """high: measured or interpolated on the card and the interval keeps one sign; low: borrowed and spans 0."""
    settled = high < 0 or low > 0
    near = basis in ("measured", "interpolated")
    if near and settled:
        return "high"
    if near or (settled and basis in ("extrapolated", "other-card")):
        return "medium"
    return "low"


def recommendation_of(precision: str, low: float, high: float) -> dict[str, str]:
    """What the interval says: saves (wholly below 0), costs more (wholly above 0), or no clear difference."""
    span = f"95% interval {low:+.1f}% to {high:+.1f}%"
    if high < 0:
        return {"code": "quantize-saves", "text": f"{precision} saves energy per token here ({span}, wholly below 0)"}
    if low > 0:
        return {"code": "keep-fp16", "text": f"stay on FP16: {precision} costs more energy per token ({span}, "
                "wholly above 0)"}  # fmt: skip
    return {"code": "no-clear-difference", "text": f"no clear energy difference ({span} spans 0): decide on "
            "quality, latency or memory"}  # fmt: skip


def _reasons(chosen: list[Group], combined: dict[str, Any], question: dict[str, Any], params_b: float,
             gpu: dict[str, Any]) -> list[dict[str, str]]:  # fmt: skip
    first = chosen[0]
    cells = first["cells"]
    out = []
    span = f"{fmt_b(cells[0]['params_b'])}-{fmt_b(cells[-1]['params_b'])}"
    kinds = {p["basis"] for p in combined["parts"]}
    if "measured" in kinds:
        out.append(reason("measured-cell", f"{fmt_b(params_b)} is a measured size"))
    if "interpolated" in kinds:
        out.append(reason("interpolated", f"{fmt_b(params_b)} lies between measured sizes ({span})"))
    if "extrapolated" in kinds:
        out.append(reason("extrapolated", f"{fmt_b(params_b)} lies outside the measured sizes ({span})"))
    if combined["level"] == 1:
        out.append(reason("other-card", f"{question['gpu']} was not measured; borrowed from {first['gpu']} "
                          f"({first['arch']}), widened by the spread between cards of one architecture"))  # fmt: skip
    if combined["level"] == 2:
        archs = ", ".join(sorted({g["arch"] for g in chosen}))
        out.append(reason("other-architecture", f"no card of architecture {gpu['arch']} was measured; borrowed "
                          f"from {archs}, widened by the spread between architectures"))  # fmt: skip
    if first["stack"] != question["stack"]:
        out.append(reason("stack-differs", f"stack {question['stack']} was not measured here; using "
                          f"{first['stack']}, widened by the spread between configurations"))  # fmt: skip
    if first["batch_size"] != question["batch_size"]:
        out.append(reason("batch-differs", f"batch size {question['batch_size']} was not measured here; using "
                          f"{first['batch_size']}, widened by the spread between configurations"))  # fmt: skip
    lengths = {(g["prompt_tokens"], g["new_tokens"]) for g in chosen}
    if (question["prompt_tokens"], question["new_tokens"]) not in lengths:
        text = ", ".join(f"{'?' if p is None else p}+{n}" for p, n in sorted(lengths, key=str))
        out.append(reason("workload-length-differs", f"measured with prompt+new tokens {text}, not "
                          f"{question['prompt_tokens']}+{question['new_tokens']}; the interval does not cover "
                          "the length"))  # fmt: skip
    if any(g["weights"] != "pretrained" for g in chosen):
        out.append(reason("random-init-weights", "measured on random-init weights of the model's shape (energy "
                          "follows the shape; quality does not)"))  # fmt: skip
    if any(g["source"] == "published" for g in chosen):
        sessions = ", ".join(sorted({str(g["session"]) for g in chosen}))
        out.append(reason("published", f"figures published elsewhere (basis: published; sessions {sessions})"))
    if len(chosen) > 1:
        out.append(reason("pooled-groups", f"{len(chosen)} groups pooled; their spread is in the interval"))
    if any(g["source"] == "measured" and not all(c["passes_cv_gate"] for c in g["cells"]) for g in chosen):
        out.append(reason("beyond-cv-gate", "includes runs above the 2% CV gate (the dataset's all tier), "
                          "weighted by their own spread"))  # fmt: skip
    fits = combined["parts"][0]["fits"]
    if len(fits) > 1:
        shown = {k: f"{change_pct(v):+.1f}%" for k, v in fits.items()}
        values = ", ".join(f"{k} {v}" for k, v in shown.items())
        if len(set(shown.values())) == 1:  # two sizes: every fit passes through both points
            out.append(reason("fit-choice", f"the fits agree here ({values})"))
        else:
            out.append(reason("fit-choice", f"the fits disagree ({values}); their spread is in the interval"))
    return out


def _crossover(chosen: list[Group]) -> dict[str, Any]:
    """The crossover of the group with most cells (the question's card, stack and batch where measured)."""
    group = max(chosen, key=lambda g: (len(g["cells"]), g["id"]))
    return {**group["crossover"], "group": group["id"]}


def _submission_ids(chosen: list[Group], combined: dict[str, Any]) -> list[str]:
    ids: set[str] = set()
    for group, part in zip(chosen, combined["parts"], strict=True):
        cells = group["cells"] if part["cell"] is None else [group["cells"][part["cell"]]]
        for cell in cells:
            ids.update(cell["submission_ids"])
    return sorted(ids)


def evaluate(artifact: Artifact, question: dict[str, Any], params_b: float) -> dict[str, Any]:
    """The answer to ``question`` (the fields of :class:`Question`, ``params_b`` resolved) as plain data.

    Raises ValueError (with the valid values) for an unknown card. A precision no group of the tier holds gets
    basis ``not-measured`` and no figures.
    """
    gpu = resolve_gpu(artifact, question["gpu"])
    if gpu is None:
        names = ", ".join(g["name"] for g in artifact["gpus"])
        archs = ", ".join(sorted({g["arch"] for g in artifact["gpus"]}))
        raise ValueError(f"gpu: unknown card {question['gpu']!r}; valid: {names}; or an architecture: {archs}")
    x = math.log(params_b)
    sources = ("published",) if question["tier"] == "published" else ("measured", "published")
    base = {"gpu_resolved": gpu, "params_b": params_b, "dataset": artifact["dataset"]}
    if question["precision"] == "fp16":
        return {**base, **_baseline(artifact, question, gpu, x, sources)}
    chosen = donors(artifact, question, gpu, sources)
    if not chosen:
        return {**base, **_not_measured(artifact, question, sources)}
    combined = combine(artifact, chosen, question, gpu, x)
    half = Z95 * math.sqrt(combined["var"])
    low, high = change_pct(combined["y"] - half), change_pct(combined["y"] + half)
    basis = basis_of(combined)
    same_card = combined["level"] == 0 and combined["distance"] == 0
    jq = j_per_token(chosen, x, "ln_jq", artifact["constants"]) if same_card else None
    answer = {
        **base,
        "change_pct": change_pct(combined["y"]),
        "change_ci95": [low, high],
        "j_per_token": jq,
        "wh_per_1k_tokens": None if jq is None else jq * 1000 / 3600,
        "crossover": _crossover(chosen),
        "basis": basis,
        "source": chosen[0]["source"],
        "tier": chosen[0]["tier"],
        "reasons": _reasons(chosen, combined, question, params_b, gpu),
        "confidence": confidence_of(basis, low, high),
        "recommendation": recommendation_of(question["precision"], low, high),
        "fits": {k: change_pct(v) for k, v in combined["parts"][0]["fits"].items()},
        "groups": [g["id"] for g in chosen],
        "submission_ids": _submission_ids(chosen, combined),
        "dois": sorted({g["doi"] for g in chosen if g["doi"]}),
        "quality": _quality(chosen, combined),
    }
    if chosen[0]["source"] == "measured" and "published" in sources:
        answer["published"] = _published_view(artifact, question, gpu, x)
    else:
        answer["published"] = None
    return answer


def _not_measured(artifact: Artifact, question: dict[str, Any], sources: tuple[str, ...]) -> dict[str, Any]:
    """No group of the asked engine and tier holds the precision, on any card: every figure None, and why."""
    precision, tier, engine = question["precision"], question["tier"], engine_of(question)
    in_tier = [g for g in artifact["groups"]
               if g["source"] in sources and (g["source"] != "measured" or g["tier"] == tier)]  # fmt: skip
    held = sorted({g["precision"] for g in in_tier if engine_of(g) == engine})
    where = (
        "the literature tier" if tier == "published" else f"tier {tier} of dataset v{artifact['dataset']['version']}"
    )
    engines = sorted({engine_of(g) for g in in_tier if g["precision"] == precision and engine_of(g) != engine})
    if engines:  # another engine measured it: its change is against its own FP16, so it is never borrowed
        text = (f"{where} holds no {precision} run with engine {engine} (it holds {', '.join(held) or 'none'}); "
                f"engine {', '.join(engines)} does: ask with that engine for an estimate")  # fmt: skip
        advice = f"no estimate with engine {engine}: ask with engine {engines[0]}"
        return _no_figures(tier, [reason("engine-not-measured", text)], advice)
    where += "" if engine == ENGINE else f" with engine {engine}"
    text = (f"{precision} has not been measured yet: {where} holds no {precision} run on any card (it holds "
            f"{', '.join(held) or 'none'}); no figure is given without one")  # fmt: skip
    advice = (f"no estimate: measure {precision} against fp16 and submit the run (ecocompute collect "
              f"--precisions fp16,{precision})")  # fmt: skip
    others = sorted({g["tier"] for g in artifact["groups"]
                     if g["precision"] == precision and g["tier"] != tier and engine_of(g) == engine})  # fmt: skip
    if others:  # measured, but not in the tier asked (runs above the CV gate, or no published figure)
        text = (f"{where} holds no {precision} run on any card; tier {', '.join(others)} does: ask with that "
                "tier for an estimate")  # fmt: skip
        advice = f"no estimate in tier {tier}: ask with tier {others[0]}, or measure {precision} again"
    return _no_figures(tier, [reason("not-measured", text)], advice)


def _no_figures(tier: str, reasons: list[dict[str, str]], advice: str) -> dict[str, Any]:
    """An answer with every figure None: the reasons and the advice say why and what to do."""
    return {
        "change_pct": None, "change_ci95": None, "j_per_token": None, "wh_per_1k_tokens": None, "crossover": None,
        "basis": "not-measured", "source": "none", "tier": tier, "reasons": reasons,
        "confidence": "low", "recommendation": {"code": "not-measured", "text": advice}, "fits": {}, "groups": [],
        "submission_ids": [], "dois": [], "quality": None, "published": None,
    }  # fmt: skip


def _quality(chosen: list[Group], combined: dict[str, Any]) -> float | None:
    """Perplexity change (%) of the measured cell asked about, where its rows recorded one."""
    values = [g["cells"][p["cell"]]["quality_pct"] for g, p in zip(chosen, combined["parts"], strict=True)
              if p["cell"] is not None]  # fmt: skip
    known = [v for v in values if v is not None]
    return sum(known) / len(known) if known and len(known) == len(values) else None


def _published_view(
    artifact: Artifact, question: dict[str, Any], gpu: dict[str, Any], x: float
) -> dict[str, Any] | None:
    """The literature tier's answer to the same question, shown apart (None when it has none for this card)."""
    chosen = donors(artifact, question, gpu, ("published",))
    if not chosen or card_level(chosen[0], gpu) == 2:
        return None
    combined = combine(artifact, chosen, question, gpu, x)
    half = Z95 * math.sqrt(combined["var"])
    return {
        "change_pct": change_pct(combined["y"]),
        "change_ci95": [change_pct(combined["y"] - half), change_pct(combined["y"] + half)],
        "basis": basis_of(combined),
        "sessions": sorted({str(g["session"]) for g in chosen}),
        "dois": sorted({g["doi"] for g in chosen if g["doi"]}),
        "groups": [g["id"] for g in chosen],
    }


def _paired_precision(artifact: Artifact, question: dict[str, Any]) -> str:
    """The precision whose groups carry the engine's FP16 J/token: nf4 where the engine has it, else its first."""
    engine = engine_of(question)
    held = sorted({g["precision"] for g in artifact["groups"] if engine_of(g) == engine})
    return "nf4" if "nf4" in held or not held else held[0]


def _baseline(artifact: Artifact, question: dict[str, Any], gpu: dict[str, Any], x: float,
              sources: tuple[str, ...]) -> dict[str, Any]:  # fmt: skip
    """FP16 against itself: no change; J/token of the engine's baseline where this card was measured."""
    asked = {**question, "precision": _paired_precision(artifact, question)}
    chosen = [g for g in donors(artifact, asked, gpu, sources)]
    same = bool(chosen) and card_level(chosen[0], gpu) == 0 and config_distance(chosen[0], question) == 0
    jb = j_per_token(chosen, x, "ln_jb", artifact["constants"]) if same else None
    return {
        "change_pct": 0.0, "change_ci95": [0.0, 0.0], "j_per_token": jb,
        "wh_per_1k_tokens": None if jb is None else jb * 1000 / 3600,
        "crossover": None, "basis": "measured" if jb is not None else "baseline", "source": "definition",
        "tier": question["tier"],
        "reasons": [reason("baseline", "FP16 is the baseline every change is measured against")],
        "confidence": "high", "recommendation": {"code": "baseline", "text": "FP16 is the baseline"},
        "fits": {}, "groups": [g["id"] for g in chosen] if same else [],
        "submission_ids": sorted({i for g in chosen for c in g["cells"] for i in c["submission_ids"]}) if same else [],
        "dois": [], "quality": None, "published": None,
    }  # fmt: skip
