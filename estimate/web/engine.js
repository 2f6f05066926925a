// The estimator's evaluation step in JavaScript: a line-by-line copy of ecocompute/estimate/engine.py.
// It reads the same artifact.json and must give the same answers (tests/estimate/test_estimate_js.py checks a grid).
// No dependencies; works in a browser (window.EcoEstimate) and in node (module.exports).
(function (root) {
  "use strict";
  const Z95 = 1.959963984540054;
  const ENGINE = "transformers";  // the engine of a question or group that names none

  function engineOf(item) {
    return String(item.engine || ENGINE);
  }

  function interpPredict(cells, x) {
    if (cells.length === 1) return [cells[0].y, cells[0].v];
    let i = 0;
    while (i < cells.length - 2 && x > cells[i + 1].x) i += 1;
    const left = cells[i], right = cells[i + 1];
    const t = (x - left.x) / (right.x - left.x);
    const y = left.y + t * (right.y - left.y);
    return [y, (1 - t) ** 2 * left.v + t ** 2 * right.v];
  }

  function fitPredict(fit, x) {
    if (fit.kind === "loglinear") return fit.a + fit.b * x;
    const ratio = Math.exp(x) / fit.n0;
    const change = fit.a - fit.s * ratio / (1 + ratio);
    return Math.log(Math.max(1 + change / 100, 1e-3));
  }

  function nearest(cells, x) {
    let best = 0, dist = Math.abs(x - cells[0].x);
    cells.forEach((cell, i) => {
      if (Math.abs(x - cell.x) < dist) { best = i; dist = Math.abs(x - cell.x); }
    });
    return [best, dist];
  }

  function groupPredict(group, x, constants) {
    const cells = group.cells;
    const [i, dist] = nearest(cells, x);
    if (dist <= constants.size_tol_ln) {
      return { y: cells[i].y, var: cells[i].v, basis: "measured", fits: {}, cell: i, d: dist };
    }
    const [yInterp, vInterp] = interpPredict(cells, x);
    const values = { interpolation: yInterp };
    for (const fit of group.fits) values[fit.name] = fitPredict(fit, x);
    const ys = Object.values(values);
    let sum = 0;
    for (const v of ys) sum += v;
    const mean = sum / ys.length;
    let fv = 0;
    for (const v of ys) fv += (v - mean) ** 2;
    const fitVar = fv / ys.length;
    const inside = cells[0].x < x && x < cells[cells.length - 1].x;
    const variance = vInterp + fitVar + constants.kappa2[group.source] * dist ** 2;
    return { y: mean, var: variance, basis: inside ? "interpolated" : "extrapolated", fits: values, cell: null, d: dist };
  }

  function cardLevel(group, gpu) {
    if (gpu.name !== null && group.gpu === gpu.name) return 0;
    return group.arch === gpu.arch ? 1 : 2;
  }

  function configDistance(group, q) {
    return (group.stack !== q.stack ? 1 : 0) + (group.batch_size !== q.batch_size ? 1 : 0);
  }

  function lessKey(a, b) {
    for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return a[i] < b[i];
    return false;
  }

  function donors(artifact, q, gpu, sources) {
    let best = null, chosen = [];
    const engine = engineOf(q);
    for (const group of artifact.groups) {
      if (group.precision !== q.precision || !sources.includes(group.source)) continue;
      if (engineOf(group) !== engine) continue;
      if (group.source === "measured" && group.tier !== q.tier) continue;
      const key = [cardLevel(group, gpu), configDistance(group, q), sources.indexOf(group.source),
        group.weights !== "pretrained" ? 1 : 0];
      if (best === null || lessKey(key, best)) { best = key; chosen = [group]; }
      else if (!lessKey(best, key)) chosen.push(group);
    }
    return chosen;
  }

  function combine(artifact, chosen, q, gpu, x) {
    const c = artifact.constants;
    const parts = chosen.map((g) => groupPredict(g, x, c));
    const m = parts.length;
    let sy = 0;
    for (const p of parts) sy += p.y;
    const y = sy / m;
    let ss = 0;
    for (const p of parts) ss += (p.y - y) ** 2;
    const spread = m > 1 ? ss / (m - 1) : 0.0;
    const level = cardLevel(chosen[0], gpu);
    const distance = configDistance(chosen[0], q);
    const cross = [0.0, c.card2, c.arch2][level] + distance * c.config2;
    let sv = 0, sn = 0;
    for (const p of parts) sv += p.var;
    for (const g of chosen) sn += g.noise2;
    const variance = sv / m + sn / m + cross + spread * (1 + 1 / m);
    return { y, var: variance, parts, level, distance, spread };
  }

  const changePct = (y) => 100 * (Math.exp(y) - 1);

  function jPerToken(chosen, x, key, constants) {
    const logs = [];
    for (const group of chosen) {
      const cells = group.cells;
      const [i, dist] = nearest(cells, x);
      if (dist <= constants.size_tol_ln) logs.push(cells[i][key]);
      else if (cells[0].x < x && x < cells[cells.length - 1].x) {
        let j = 0;
        while (x > cells[j + 1].x) j += 1;
        const t = (x - cells[j].x) / (cells[j + 1].x - cells[j].x);
        logs.push(cells[j][key] + t * (cells[j + 1][key] - cells[j][key]));
      }
    }
    if (!logs.length || logs.length < chosen.length) return null;
    let s = 0;
    for (const v of logs) s += v;
    return Math.exp(s / logs.length);
  }

  function resolveGpu(artifact, name) {
    const wanted = name.toLowerCase().replace(/_/g, " ").split(/\s+/).filter(Boolean).join(" ");
    for (const gpu of artifact.gpus) {
      if (wanted === gpu.name.toLowerCase() || gpu.aliases.includes(wanted)) return { name: gpu.name, arch: gpu.arch };
    }
    for (const gpu of artifact.gpus) if (wanted === gpu.arch) return { name: null, arch: gpu.arch };
    return null;
  }

  const reason = (code, text) => ({ code, text });

  // Python's format(x, ".3g"): three significant digits, trailing zeros dropped.
  function g3(v) {
    if (v === 0) return "0";
    const exp = Math.floor(Math.log10(Math.abs(Number(v.toPrecision(3)))));
    if (exp < -4 || exp >= 3) {
      const [mant, e] = v.toExponential(2).split("e");
      const n = Number(e);
      return `${String(Number(mant))}e${n < 0 ? "-" : "+"}${String(Math.abs(n)).padStart(2, "0")}`;
    }
    return String(Number(v.toPrecision(3)));
  }
  const fmtB = (b) => `${g3(b)}B`;
  const signed1 = (v) => `${v >= 0 ? "+" : "-"}${Math.abs(v).toFixed(1)}%`;

  function basisOf(combined) {
    if (combined.level === 1) return "other-card";
    if (combined.level === 2) return "other-architecture";
    const kinds = combined.parts.map((p) => p.basis);
    for (const kind of ["extrapolated", "interpolated"]) if (kinds.includes(kind)) return kind;
    return "measured";
  }

  function confidenceOf(basis, low, high) {
    const settled = high < 0 || low > 0;
    const near = basis === "measured" || basis === "interpolated";
    if (near && settled) return "high";
    if (near || (settled && (basis === "extrapolated" || basis === "other-card"))) return "medium";
    return "low";
  }

  function recommendationOf(precision, low, high) {
    const span = `95% interval ${signed1(low)} to ${signed1(high)}`;
    if (high < 0) return { code: "quantize-saves", text: `${precision} saves energy per token here (${span}, wholly below 0)` };
    if (low > 0) {
      return { code: "keep-fp16", text: `stay on FP16: ${precision} costs more energy per token (${span}, wholly above 0)` };
    }
    return { code: "no-clear-difference", text: `no clear energy difference (${span} spans 0): decide on quality, latency or memory` };
  }

  const sortedUnique = (items) => Array.from(new Set(items)).sort();

  function reasons(chosen, combined, q, paramsB, gpu) {
    const first = chosen[0];
    const cells = first.cells;
    const out = [];
    const span = `${fmtB(cells[0].params_b)}-${fmtB(cells[cells.length - 1].params_b)}`;
    const kinds = new Set(combined.parts.map((p) => p.basis));
    if (kinds.has("measured")) out.push(reason("measured-cell", `${fmtB(paramsB)} is a measured size`));
    if (kinds.has("interpolated")) out.push(reason("interpolated", `${fmtB(paramsB)} lies between measured sizes (${span})`));
    if (kinds.has("extrapolated")) out.push(reason("extrapolated", `${fmtB(paramsB)} lies outside the measured sizes (${span})`));
    if (combined.level === 1) {
      out.push(reason("other-card", `${q.gpu} was not measured; borrowed from ${first.gpu} (${first.arch}), widened by the spread between cards of one architecture`));
    }
    if (combined.level === 2) {
      const archs = sortedUnique(chosen.map((g) => g.arch)).join(", ");
      out.push(reason("other-architecture", `no card of architecture ${gpu.arch} was measured; borrowed from ${archs}, widened by the spread between architectures`));
    }
    if (first.stack !== q.stack) {
      out.push(reason("stack-differs", `stack ${q.stack} was not measured here; using ${first.stack}, widened by the spread between configurations`));
    }
    if (first.batch_size !== q.batch_size) {
      out.push(reason("batch-differs", `batch size ${q.batch_size} was not measured here; using ${first.batch_size}, widened by the spread between configurations`));
    }
    const lengths = new Map();
    for (const g of chosen) lengths.set(`(${g.prompt_tokens === null ? "None" : g.prompt_tokens}, ${g.new_tokens})`, g);
    const asked = `(${q.prompt_tokens}, ${q.new_tokens})`;
    if (!lengths.has(asked)) {
      const text = Array.from(lengths.keys()).sort().map((k) => {
        const g = lengths.get(k);
        return `${g.prompt_tokens === null ? "?" : g.prompt_tokens}+${g.new_tokens}`;
      }).join(", ");
      out.push(reason("workload-length-differs", `measured with prompt+new tokens ${text}, not ${q.prompt_tokens}+${q.new_tokens}; the interval does not cover the length`));
    }
    if (chosen.some((g) => g.weights !== "pretrained")) {
      out.push(reason("random-init-weights", "measured on random-init weights of the model's shape (energy follows the shape; quality does not)"));
    }
    if (chosen.some((g) => g.source === "published")) {
      const sessions = sortedUnique(chosen.map((g) => String(g.session))).join(", ");
      out.push(reason("published", `figures published elsewhere (basis: published; sessions ${sessions})`));
    }
    if (chosen.length > 1) out.push(reason("pooled-groups", `${chosen.length} groups pooled; their spread is in the interval`));
    if (chosen.some((g) => g.source === "measured" && !g.cells.every((c) => c.passes_cv_gate))) {
      out.push(reason("beyond-cv-gate", "includes runs above the 2% CV gate (the dataset's all tier), weighted by their own spread"));
    }
    const fits = combined.parts[0].fits;
    if (Object.keys(fits).length > 1) {
      const shown = Object.entries(fits).map(([k, v]) => [k, signed1(changePct(v))]);
      const values = shown.map(([k, v]) => `${k} ${v}`).join(", ");
      if (new Set(shown.map(([, v]) => v)).size === 1) {  // two sizes: every fit passes through both points
        out.push(reason("fit-choice", `the fits agree here (${values})`));
      } else {
        out.push(reason("fit-choice", `the fits disagree (${values}); their spread is in the interval`));
      }
    }
    return out;
  }

  function crossoverOf(chosen) {
    let group = chosen[0];
    for (const g of chosen) {
      if (g.cells.length > group.cells.length || (g.cells.length === group.cells.length && g.id > group.id)) group = g;
    }
    return Object.assign({}, group.crossover, { group: group.id });
  }

  function submissionIds(chosen, combined) {
    const ids = new Set();
    chosen.forEach((group, k) => {
      const part = combined.parts[k];
      const cells = part.cell === null ? group.cells : [group.cells[part.cell]];
      for (const cell of cells) for (const id of cell.submission_ids) ids.add(id);
    });
    return Array.from(ids).sort();
  }

  function quality(chosen, combined) {
    const values = [];
    chosen.forEach((g, k) => { const p = combined.parts[k]; if (p.cell !== null) values.push(g.cells[p.cell].quality_pct); });
    const known = values.filter((v) => v !== null && v !== undefined);
    if (!known.length || known.length !== values.length) return null;
    let s = 0;
    for (const v of known) s += v;
    return s / known.length;
  }

  function publishedView(artifact, q, gpu, x) {
    const chosen = donors(artifact, q, gpu, ["published"]);
    if (!chosen.length || cardLevel(chosen[0], gpu) === 2) return null;
    const combined = combine(artifact, chosen, q, gpu, x);
    const half = Z95 * Math.sqrt(combined.var);
    return {
      change_pct: changePct(combined.y),
      change_ci95: [changePct(combined.y - half), changePct(combined.y + half)],
      basis: basisOf(combined),
      sessions: sortedUnique(chosen.map((g) => String(g.session))),
      dois: sortedUnique(chosen.filter((g) => g.doi).map((g) => g.doi)),
      groups: chosen.map((g) => g.id),
    };
  }

  function pairedPrecision(artifact, q) {
    const engine = engineOf(q);
    const held = sortedUnique(artifact.groups.filter((g) => engineOf(g) === engine).map((g) => g.precision));
    return held.includes("nf4") || !held.length ? "nf4" : held[0];
  }

  function baseline(artifact, q, gpu, x, sources) {
    const asked = Object.assign({}, q, { precision: pairedPrecision(artifact, q) });
    const chosen = donors(artifact, asked, gpu, sources);
    const same = chosen.length > 0 && cardLevel(chosen[0], gpu) === 0 && configDistance(chosen[0], q) === 0;
    const jb = same ? jPerToken(chosen, x, "ln_jb", artifact.constants) : null;
    const ids = new Set();
    if (same) for (const g of chosen) for (const c of g.cells) for (const id of c.submission_ids) ids.add(id);
    return {
      change_pct: 0.0, change_ci95: [0.0, 0.0], j_per_token: jb,
      wh_per_1k_tokens: jb === null ? null : jb * 1000 / 3600,
      crossover: null, basis: jb !== null ? "measured" : "baseline", source: "definition",
      tier: q.tier,
      reasons: [reason("baseline", "FP16 is the baseline every change is measured against")],
      confidence: "high", recommendation: { code: "baseline", text: "FP16 is the baseline" },
      fits: {}, groups: same ? chosen.map((g) => g.id) : [],
      submission_ids: Array.from(ids).sort(),
      dois: [], quality: null, published: null,
    };
  }

  function noFigures(tier, reasonsList, say) {
    return {
      change_pct: null, change_ci95: null, j_per_token: null, wh_per_1k_tokens: null, crossover: null,
      basis: "not-measured", source: "none", tier, reasons: reasonsList,
      confidence: "low", recommendation: { code: "not-measured", text: say }, fits: {}, groups: [],
      submission_ids: [], dois: [], quality: null, published: null,
    };
  }

  function notMeasured(artifact, q, sources) {
    const engine = engineOf(q);
    const inTier = artifact.groups.filter((g) => sources.includes(g.source) &&
      (g.source !== "measured" || g.tier === q.tier));
    const held = sortedUnique(inTier.filter((g) => engineOf(g) === engine).map((g) => g.precision));
    let where = q.tier === "published" ? "the literature tier" : `tier ${q.tier} of dataset v${artifact.dataset.version}`;
    const engines = sortedUnique(inTier.filter((g) => g.precision === q.precision && engineOf(g) !== engine)
      .map((g) => engineOf(g)));
    if (engines.length) {  // another engine measured it: its change is against its own FP16, so it is never borrowed
      const text = `${where} holds no ${q.precision} run with engine ${engine} (it holds ${held.join(", ") || "none"}); ` +
        `engine ${engines.join(", ")} does: ask with that engine for an estimate`;
      const say = `no estimate with engine ${engine}: ask with engine ${engines[0]}`;
      return noFigures(q.tier, [reason("engine-not-measured", text)], say);
    }
    where += engine === ENGINE ? "" : ` with engine ${engine}`;
    const textNone = `${q.precision} has not been measured yet: ${where} holds no ${q.precision} run on any card (it holds ` +
      `${held.join(", ") || "none"}); no figure is given without one`;
    const advice = `no estimate: measure ${q.precision} against fp16 and submit the run (ecocompute collect ` +
      `--precisions fp16,${q.precision})`;
    let text = textNone, say = advice;
    const others = sortedUnique(artifact.groups.filter((g) => g.precision === q.precision && g.tier !== q.tier &&
      engineOf(g) === engine).map((g) => g.tier));
    if (others.length) {  // measured, but not in the tier asked (runs above the CV gate, or no published figure)
      text = `${where} holds no ${q.precision} run on any card; tier ${others.join(", ")} does: ask with that ` +
        "tier for an estimate";
      say = `no estimate in tier ${q.tier}: ask with tier ${others[0]}, or measure ${q.precision} again`;
    }
    return noFigures(q.tier, [reason("not-measured", text)], say);
  }

  function evaluate(artifact, q, paramsB) {
    const gpu = resolveGpu(artifact, q.gpu);
    if (gpu === null) {
      const names = artifact.gpus.map((g) => g.name).join(", ");
      const archs = sortedUnique(artifact.gpus.map((g) => g.arch)).join(", ");
      throw new Error(`gpu: unknown card '${q.gpu}'; valid: ${names}; or an architecture: ${archs}`);
    }
    const x = Math.log(paramsB);
    const sources = q.tier === "published" ? ["published"] : ["measured", "published"];
    const base = { gpu_resolved: gpu, params_b: paramsB, dataset: artifact.dataset };
    if (q.precision === "fp16") return Object.assign(base, baseline(artifact, q, gpu, x, sources));
    const chosen = donors(artifact, q, gpu, sources);
    if (!chosen.length) return Object.assign(base, notMeasured(artifact, q, sources));
    const combined = combine(artifact, chosen, q, gpu, x);
    const half = Z95 * Math.sqrt(combined.var);
    const low = changePct(combined.y - half), high = changePct(combined.y + half);
    const basis = basisOf(combined);
    const sameCard = combined.level === 0 && combined.distance === 0;
    const jq = sameCard ? jPerToken(chosen, x, "ln_jq", artifact.constants) : null;
    const fits = {};
    for (const [k, v] of Object.entries(combined.parts[0].fits)) fits[k] = changePct(v);
    const answer = Object.assign(base, {
      change_pct: changePct(combined.y),
      change_ci95: [low, high],
      j_per_token: jq,
      wh_per_1k_tokens: jq === null ? null : jq * 1000 / 3600,
      crossover: crossoverOf(chosen),
      basis,
      source: chosen[0].source,
      tier: chosen[0].tier,
      reasons: reasons(chosen, combined, q, paramsB, gpu),
      confidence: confidenceOf(basis, low, high),
      recommendation: recommendationOf(q.precision, low, high),
      fits,
      groups: chosen.map((g) => g.id),
      submission_ids: submissionIds(chosen, combined),
      dois: sortedUnique(chosen.filter((g) => g.doi).map((g) => g.doi)),
      quality: quality(chosen, combined),
    });
    answer.published = chosen[0].source === "measured" && sources.includes("published") ? publishedView(artifact, q, gpu, x) : null;
    return answer;
  }

  const api = { evaluate, resolveGpu, groupPredict, changePct, g3 };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.EcoEstimate = api;
})(typeof window !== "undefined" ? window : globalThis);
